package sigv4

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// The tests below pin the boundaries and branches that mutation testing
// (docs/testing.md) found no test held.

func TestHeaderSkewBoundary(t *testing.T) {
	for _, tt := range []struct {
		now  time.Time
		want string
	}{
		{exampleTime.Add(MaxSkew), ""},
		{exampleTime.Add(MaxSkew + time.Second), "RequestTimeTooSkewed"},
		{exampleTime.Add(-MaxSkew), ""},
		{exampleTime.Add(-MaxSkew - time.Second), "RequestTimeTooSkewed"},
	} {
		if _, err := Verify(exampleGet(), lookup, tt.now); code(err) != tt.want {
			t.Errorf("signed at %s, checked at %s: got %v, want %q", exampleTime, tt.now, err, tt.want)
		}
	}
}

// presign returns a presigned GET URL of /b/k signed at t for expires
// seconds, as SDKs build them.
func presign(t time.Time, expires string) string {
	scope := t.Format(dateFormat) + "/us-east-1/s3/aws4_request"
	q := url.Values{
		"X-Amz-Algorithm":     {algorithm},
		"X-Amz-Credential":    {exampleID + "/" + scope},
		"X-Amz-Date":          {t.Format(timeFormat)},
		"X-Amz-Expires":       {expires},
		"X-Amz-SignedHeaders": {"host"},
	}
	r := httptest.NewRequest("GET", "http://example.com/b/k", nil)
	creq := CanonicalRequest("GET", "/b/k", CanonicalQuery(q), CanonicalHeaders(r, []string{"host"}), "host", UnsignedPayload)
	key := SigningKey(exampleSecret, t.Format(dateFormat), "us-east-1", "s3")
	q.Set("X-Amz-Signature", hex.EncodeToString(hmacSHA256(key, StringToSign(t, scope, creq))))
	return "http://example.com/b/k?" + q.Encode()
}

// TestPresignedBoundaries: X-Amz-Expires from 1 s to 7 days, the URL's
// date at most MaxSkew ahead; a malformed expiry is a 400 in S3's words.
func TestPresignedBoundaries(t *testing.T) {
	signed := exampleTime
	for _, tt := range []struct {
		name    string
		expires string
		now     time.Time
		want    string
	}{
		{"expires 0 s", "0", signed, "AuthorizationQueryParametersError"},
		{"expires 1 s", "1", signed, ""},
		{"expires 7 days", "604800", signed, ""},
		{"expires 7 days and 1 s", "604801", signed, "AuthorizationQueryParametersError"},
		{"expires -1 s", "-1", signed, "AuthorizationQueryParametersError"},
		{"expires not a number", "soon", signed, "AuthorizationQueryParametersError"},
		{"at its last second", "60", signed.Add(60 * time.Second), ""},
		{"a second after", "60", signed.Add(61 * time.Second), "AccessDenied"},
		{"dated MaxSkew ahead", "60", signed.Add(-MaxSkew), ""},
		{"dated further ahead", "60", signed.Add(-MaxSkew - time.Second), "AccessDenied"},
	} {
		r := httptest.NewRequest("GET", presign(signed, tt.expires), nil)
		if _, err := Verify(r, lookup, tt.now); code(err) != tt.want {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
	for expires, msg := range map[string]string{
		"soon":                  "X-Amz-Expires should be a number",
		"-1":                    "X-Amz-Expires must be non-negative",
		"604801":                "X-Amz-Expires must be less than a week (in seconds) that is 604800",
		"99999999999999999999":  "X-Amz-Expires must be less than a week (in seconds) that is 604800",
		"-99999999999999999999": "X-Amz-Expires must be non-negative",
	} {
		_, err := Verify(httptest.NewRequest("GET", presign(signed, expires), nil), lookup, signed)
		var e *Error
		if !errors.As(err, &e) || e.Message != msg {
			t.Errorf("X-Amz-Expires=%s: %v, want %q", expires, err, msg)
		}
	}
}

func TestEncodePath(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "/"},
		{"/", "/"},
		{"/b/k", "/b/k"},
		{"/b/a b", "/b/a%20b"},
		{"/b/a+b", "/b/a%2Bb"},
		{"/b/AZaz09-_.~", "/b/AZaz09-_.~"},
		{"/b/x@y=z", "/b/x%40y%3Dz"},
		{"/b/é", "/b/%C3%A9"},
	} {
		if got := EncodePath(tt.in); got != tt.want {
			t.Errorf("EncodePath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSignSignsWhatItMust: the host, Content-Type, Content-MD5 and every
// x-amz-* header are signed, so that none can be changed in flight; other
// headers are not.
func TestSignSignsWhatItMust(t *testing.T) {
	r := httptest.NewRequest("PUT", "http://example.com/b/k", strings.NewReader("x"))
	r.Host = ""
	r.Header.Set("Content-Type", "text/plain")
	r.Header.Set("Content-MD5", "eKtsx8X3ka4hQqKOrnRaRg==")
	r.Header.Set("X-Amz-Meta-A", "1")
	r.Header.Set("User-Agent", "test")
	Sign(r, exampleID, exampleSecret, "us-east-1", UnsignedPayload, exampleTime)
	if r.Host != "example.com" {
		t.Errorf("Host = %q, want the URL's host", r.Host)
	}
	want := "SignedHeaders=content-md5;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-a,"
	if !strings.Contains(r.Header.Get("Authorization"), want) {
		t.Errorf("Authorization = %q, want it to hold %q", r.Header.Get("Authorization"), want)
	}
}

func TestBodyBranches(t *testing.T) {
	read := func(a *Auth, r *http.Request) (string, error) {
		t.Helper()
		rd, _, err := a.Body(r, true)
		if err != nil {
			return "", err
		}
		b, err := io.ReadAll(rd)
		return string(b), err
	}
	t.Run("wrong Content-MD5", func(t *testing.T) {
		r := httptest.NewRequest("PUT", "/b/k", strings.NewReader("hello"))
		sum := md5.Sum([]byte("hellO"))
		r.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
		if _, err := read(&Auth{PayloadHash: UnsignedPayload}, r); code(err) != "BadDigest" {
			t.Errorf("got %v, want BadDigest", err)
		}
	})
	t.Run("right Content-MD5, body read a byte at a time", func(t *testing.T) {
		r := httptest.NewRequest("PUT", "/b/k", iotest.OneByteReader(strings.NewReader("hello")))
		sum := md5.Sum([]byte("hello"))
		r.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
		if got, err := read(&Auth{PayloadHash: UnsignedPayload}, r); err != nil || got != "hello" {
			t.Errorf("got %q, %v; want hello (the digest is checked at the end, not on every read)", got, err)
		}
	})
	t.Run("signed streaming without its decoded length", func(t *testing.T) {
		r := httptest.NewRequest("PUT", "/b/k", strings.NewReader("0;chunk-signature=x\r\n\r\n"))
		if _, err := read(&Auth{PayloadHash: StreamingSigned}, r); code(err) != "MissingContentLength" {
			t.Errorf("got %v, want MissingContentLength", err)
		}
	})
	const data = "hello trailer"
	sum, _ := ChecksumValue("crc32", []byte(data))
	body := fmt.Sprintf("%x\r\n%s\r\n0\r\nx-amz-checksum-crc32:%s\r\n\r\n", len(data), data, sum)
	t.Run("unsigned trailer without a decoded length", func(t *testing.T) {
		r := httptest.NewRequest("PUT", "/b/k", strings.NewReader(body))
		r.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
		if got, err := read(&Auth{PayloadHash: StreamingUnsignedTrail}, r); err != nil || got != data {
			t.Errorf("got %q, %v; want %q", got, err, data)
		}
	})
	t.Run("declared empty, carrying data", func(t *testing.T) {
		r := httptest.NewRequest("PUT", "/b/k", strings.NewReader(body))
		r.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
		r.Header.Set("X-Amz-Decoded-Content-Length", "0")
		if _, err := read(&Auth{PayloadHash: StreamingUnsignedTrail}, r); code(err) != "IncompleteBody" {
			t.Errorf("got %v, want IncompleteBody", err)
		}
	})
	t.Run("empty object", func(t *testing.T) {
		sum, _ := ChecksumValue("crc32", nil)
		r := httptest.NewRequest("PUT", "/b/k", strings.NewReader("0\r\nx-amz-checksum-crc32:"+sum+"\r\n\r\n"))
		r.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
		r.Header.Set("X-Amz-Decoded-Content-Length", "0")
		if got, err := read(&Auth{PayloadHash: StreamingUnsignedTrail}, r); err != nil || got != "" {
			t.Errorf("got %q, %v; want an empty body", got, err)
		}
	})
}
