package s3api

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestMetadataEncoding: user metadata values are read from header bytes
// and written back as S3 does (RFC 2047 past US-ASCII).
func TestMetadataEncoding(t *testing.T) {
	for _, tt := range []struct {
		name, in, stored, out string
	}{
		{"ascii", "Hello World", "Hello World", "Hello World"},
		{"ascii that looks like a word", "=?not a word", "=?not a word", "=?not a word"},
		{"ISO-8859-1 byte (boto3)", "Hello World\xe9", "Hello Worldé", "=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?="},
		{"UTF-8 bytes", "Miniö", "Miniö", "=?UTF-8?B?TWluacO2?="},
		{"an RFC 2047 B word", "=?UTF-8?B?TWluacO2?=", "Miniö", "=?UTF-8?B?TWluacO2?="},
		{"an RFC 2047 Q word", "=?UTF-8?Q?Hello_World=C3=A9?=", "Hello Worldé", "=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?="},
		{"an ISO-8859-1 word", "=?ISO-8859-1?Q?caf=E9?=", "café", "=?UTF-8?B?Y2Fmw6k=?="},
		{"an encoded ASCII word", "=?UTF-8?B?cGxhaW4=?=", "plain", "plain"},
		{"a word holding CR LF", "=?UTF-8?Q?a=0D=0Ab?=", "a\r\nb", "=?UTF-8?B?YQ0KYg==?="},
		{"a word holding NUL", "=?UTF-8?Q?a=00b?=", "a\x00b", "=?UTF-8?B?YQBi?="},
		{"a tab", "a\tb", "a\tb", "a\tb"},
		{"long", strings.Repeat("é", 60), strings.Repeat("é", 60), "=?UTF-8?B?" + strings.Repeat("w6nDqcOp", 20) + "?="},
	} {
		stored := metaIn(tt.in)
		if stored != tt.stored {
			t.Errorf("%s: stored %q, want %q", tt.name, stored, tt.stored)
		}
		if out := metaOut(stored); out != tt.out {
			t.Errorf("%s: sent %q, want %q", tt.name, out, tt.out)
		}
	}
}

// FuzzMetadataEncoding: whatever bytes a header brings, the stored value
// is UTF-8, the value sent back is US-ASCII, and reading that back stores
// the same value.
func FuzzMetadataEncoding(f *testing.F) {
	for _, s := range []string{"", "plain", "Hello World\xe9", "Miniö", "=?UTF-8?B?TWluacO2?=", "=?UTF-8?Q?a=FF?=", "=?x?B?", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		stored := metaIn(in)
		if !utf8.ValidString(stored) {
			t.Fatalf("metaIn(%q) = %q, not UTF-8", in, stored)
		}
		out := metaOut(stored)
		if !printable(out) {
			t.Fatalf("metaOut(%q) = %q, not a header value", stored, out)
		}
		if again := metaIn(out); again != stored && !printable(stored) {
			t.Fatalf("round trip of %q: sent %q, read back %q", stored, out, again)
		}
	})
}
