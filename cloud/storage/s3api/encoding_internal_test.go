package s3api

import (
	"strings"
	"testing"
)

// TestObjectEncoding: an object keeps its Content-Encoding as sent, but
// for aws-chunked, which is the transfer's.
func TestObjectEncoding(t *testing.T) {
	for _, tt := range []struct {
		lines []string
		want  string
	}{
		{nil, ""},
		{[]string{"gzip"}, "gzip"},
		{[]string{"gzip, deflate"}, "gzip, deflate"},
		{[]string{"gzip,  br"}, "gzip,  br"},
		{[]string{"aws-chunked"}, ""},
		{[]string{"aws-chunked,gzip"}, "gzip"},
		{[]string{"aws-chunked, gzip"}, "gzip"},
		{[]string{"gzip, aws-chunked"}, "gzip"},
		{[]string{"gzip, AWS-Chunked, br"}, "gzip, br"},
		{[]string{"gzip", "br"}, "gzip,br"},
		{[]string{"x-custom;q=1"}, "x-custom;q=1"},
	} {
		if got := objectEncoding(tt.lines); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.lines, got, tt.want)
		}
	}
}

// FuzzObjectEncoding: whatever Content-Encoding lines an upload brings,
// what the object keeps names no aws-chunked coding and is kept as it is
// when sent again.
func FuzzObjectEncoding(f *testing.F) {
	for _, s := range []string{"", "gzip", "aws-chunked, gzip", "gzip,  br", " ,aws-chunked,", "AWS-CHUNKED"} {
		f.Add(s, "br")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		kept := objectEncoding([]string{a, b})
		for _, e := range strings.Split(kept, ",") {
			if strings.EqualFold(strings.TrimSpace(e), "aws-chunked") {
				t.Fatalf("objectEncoding(%q, %q) = %q keeps aws-chunked", a, b, kept)
			}
		}
		if again := objectEncoding([]string{kept}); again != kept {
			t.Fatalf("objectEncoding(%q, %q) = %q, and of that %q", a, b, kept, again)
		}
	})
}
