package storagenames

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzValidBucketName: every accepted name obeys the S3 rules it claims.
func FuzzValidBucketName(f *testing.F) {
	for _, s := range []string{"photos", "a.b-c", "192.168.1.1", "01.2.3.4", "xn--abc", "ab", "a..b", "-ab", "foo-.bar"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidBucketName(name) != nil {
			return
		}
		if len(name) < 3 || len(name) > 63 || strings.Contains(name, "..") ||
			strings.Contains(name, "-.") || strings.Contains(name, ".-") ||
			strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "" ||
			!isAlnum(name[0]) || !isAlnum(name[len(name)-1]) || looksLikeIPv4(name) {
			t.Fatalf("ValidBucketName accepted %q", name)
		}
	})
}

// FuzzValidObjectKey: every accepted key is 1 to 1024 bytes of UTF-8
// without control characters.
func FuzzValidObjectKey(f *testing.F) {
	for _, s := range []string{"a", "photos/2026/x.jpg", "a//b", "\x00", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if ValidObjectKey(key) != nil {
			return
		}
		if key == "" || len(key) > MaxKeyLen || !utf8.ValidString(key) || strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("ValidObjectKey accepted %q", key)
		}
	})
}
