package s3api

import "testing"

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
