package s3api

import (
	"bytes"
	"encoding/base64"
	"io"
	"strings"
	"testing"
	"time"
)

// FuzzParsePostPolicy checks that a POST policy either is refused or
// gives conditions of the two kinds on lower-case field names and a
// sane size range, and that checking a form against it never panics.
func FuzzParsePostPolicy(f *testing.F) {
	for _, doc := range []string{
		`{"expiration":"2030-01-01T00:00:00.000Z","conditions":[{"bucket":"b"},["starts-with","$key","u/"],["content-length-range",1,100]]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[["eq","$Content-Type","text/plain"],["content-length-range","0","5"]]}`,
		`{"expiration":"x","conditions":[]}`,
		`{"conditions":[{"a":"1","b":"2"}]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[["content-length-range",5,1]]} {}`,
	} {
		f.Add(base64.StdEncoding.EncodeToString([]byte(doc)), "key", "u/x")
	}
	f.Fuzz(func(t *testing.T, policy, name, value string) {
		p, err := parsePostPolicy(policy)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Code != "InvalidPolicyDocument" {
				t.Fatalf("parsePostPolicy(%q) failed with %v, want InvalidPolicyDocument", policy, err)
			}
			return
		}
		for _, c := range p.conditions {
			if c.op != "eq" && c.op != "starts-with" || c.field != strings.ToLower(c.field) || c.field == "" {
				t.Fatalf("parsePostPolicy(%q) gave condition %+v", policy, c)
			}
		}
		if p.minSize < 0 || p.maxSize != -1 && p.maxSize < p.minSize {
			t.Fatalf("parsePostPolicy(%q) gave the size range %d-%d", policy, p.minSize, p.maxSize)
		}
		p.check(map[string]string{strings.ToLower(name): value}, "b", time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC))
	})
}

// FuzzReadPostForm feeds arbitrary bodies to the form reader: it must
// never panic, never read more than maxPreData before the file, and
// leave the file readable.
func FuzzReadPostForm(f *testing.F) {
	f.Add([]byte("--B\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nk\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\ndata\r\n--B--\r\n"))
	f.Add([]byte("--B\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nk\r\n--B--\r\n"))
	f.Add([]byte("--B\r\nContent-Disposition: form-data\r\n\r\nk\r\n--B--\r\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := bytes.NewReader(body)
		form, err := readPostForm(r, "multipart/form-data; boundary=B")
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("readPostForm failed with %v, not an S3 error", err)
			}
			return
		}
		n := 0
		for k, v := range form.fields {
			n += len(k) + len(v)
		}
		if n > maxPreData {
			t.Fatalf("read %d bytes of fields, more than %d", n, maxPreData)
		}
		io.Copy(io.Discard, form.file)
	})
}
