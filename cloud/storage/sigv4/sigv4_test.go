package sigv4

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The examples of AWS's "Authenticating Requests (AWS Signature Version
// 4)" pages for S3, with their published signatures.
const (
	exampleID     = "AKIAIOSFODNN7EXAMPLE"
	exampleSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

var exampleTime = time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)

func lookup(id string) (string, error) {
	if id == exampleID {
		return exampleSecret, nil
	}
	return "", ErrUnknownKey
}

func exampleGet() *http.Request {
	r := httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/test.txt", nil)
	r.Header.Set("Range", "bytes=0-9")
	r.Header.Set("X-Amz-Content-Sha256", EmptySHA256)
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
	return r
}

func TestHeaderSignatureVector(t *testing.T) {
	a, err := Verify(exampleGet(), lookup, exampleTime.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if a.AccessKeyID != exampleID || a.Region != "us-east-1" || a.Presigned {
		t.Fatalf("auth = %+v", a)
	}
}

func TestPresignedVector(t *testing.T) {
	r := httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404", nil)
	if _, err := Verify(r, lookup, exampleTime.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(r, lookup, exampleTime.Add(24*time.Hour+time.Second)); code(err) != "AccessDenied" || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("after expiry: %v", err)
	}
}

func code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestVerifyRefuses(t *testing.T) {
	at := exampleTime.Add(time.Minute)
	tests := []struct {
		name string
		edit func(r *http.Request)
		at   time.Time
		want string
	}{
		{"tampered header", func(r *http.Request) { r.Header.Set("Range", "bytes=0-10") }, at, "SignatureDoesNotMatch"},
		{"tampered path", func(r *http.Request) { r.URL.Path = "/test.txu" }, at, "SignatureDoesNotMatch"},
		{"tampered query", func(r *http.Request) { r.URL.RawQuery = "acl" }, at, "SignatureDoesNotMatch"},
		{"other method", func(r *http.Request) { r.Method = "DELETE" }, at, "SignatureDoesNotMatch"},
		{"unknown key", func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), exampleID, "AKIAOTHER", 1))
		}, at, "InvalidAccessKeyId"},
		{"skewed", func(r *http.Request) {}, exampleTime.Add(16 * time.Minute), "RequestTimeTooSkewed"},
		{"no payload hash", func(r *http.Request) { r.Header.Del("X-Amz-Content-Sha256") }, at, "InvalidRequest"},
		{"sigv2", func(r *http.Request) { r.Header.Set("Authorization", "AWS AKID:c2ln") }, at, "AccessDenied"},
		{"garbage", func(r *http.Request) { r.Header.Set("Authorization", "AWS4-HMAC-SHA256 nonsense") }, at, "AuthorizationHeaderMalformed"},
		{"other service", func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/s3/", "/ec2/", 1))
		}, at, "AuthorizationHeaderMalformed"},
		{"host unsigned", func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "host;", "", 1))
		}, at, "AuthorizationHeaderMalformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := exampleGet()
			tt.edit(r)
			if _, err := Verify(r, lookup, tt.at); code(err) != tt.want {
				t.Fatalf("err = %v, want code %s", err, tt.want)
			}
		})
	}
}

// The chunked upload example of "Signature Calculations for the
// Authorization Header: Transferring Payload in Multiple Chunks": 66560
// bytes of 'a' in 64 KiB chunks.
func exampleChunked(body string) *http.Request {
	r := httptest.NewRequest("PUT", "http://s3.amazonaws.com/examplebucket/chunkObject.txt", strings.NewReader(body))
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class,Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9")
	r.Header.Set("X-Amz-Content-Sha256", StreamingSigned)
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", "66560")
	r.Header.Set("Content-Length", "66824")
	r.ContentLength = 66824
	return r
}

func exampleChunkedBody() string {
	a := strings.Repeat("a", 65536)
	return "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n" + a + "\r\n" +
		"400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n" + a[:1024] + "\r\n" +
		"0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n"
}

func TestChunkedVector(t *testing.T) {
	body := exampleChunkedBody()
	if len(body) != 66824 {
		t.Fatalf("example body is %d bytes", len(body))
	}
	r := exampleChunked(body)
	a, err := Verify(r, lookup, exampleTime)
	if err != nil {
		t.Fatal(err)
	}
	rd, size, err := a.Body(r, true)
	if err != nil || size != 66560 {
		t.Fatalf("size %d, err %v", size, err)
	}
	got, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, bytes.Repeat([]byte("a"), 66560)) {
		t.Fatalf("decoded %d bytes", len(got))
	}
}

func TestChunkedRefuses(t *testing.T) {
	good := exampleChunkedBody()
	tests := []struct {
		name, body, want string
	}{
		{"tampered data", strings.Replace(good, "aaaa\r\n400", "aaab\r\n400", 1), "SignatureDoesNotMatch"},
		{"tampered final signature", strings.Replace(good, "b6c6ea8a", "b6c6ea8b", 1), "SignatureDoesNotMatch"},
		{"chunks swapped", "400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n" + strings.Repeat("a", 1024) + "\r\n", "SignatureDoesNotMatch"},
		{"truncated", good[:40000], "IncompleteBody"},
		{"no final chunk", good[:len(good)-90], "IncompleteBody"},
		{"bad size", "zz;chunk-signature=x\r\n", "InvalidRequest"},
		{"unsigned chunk", "10\r\n", "InvalidRequest"},
		{"no CRLF after data", strings.Replace(good, "aaaa\r\n400", "aaaaXX400", 1), "IncompleteBody"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := readSigned(t, exampleChunked(tt.body)); code(err) != tt.want {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestPayloadHashChecked(t *testing.T) {
	r := httptest.NewRequest("PUT", "/b/k", strings.NewReader("hello"))
	a := &Auth{PayloadHash: sha256Hex([]byte("hellO"))}
	rd, _, err := a.Body(r, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(rd); code(err) != "XAmzContentSHA256Mismatch" {
		t.Fatalf("err = %v", err)
	}
	r = httptest.NewRequest("PUT", "/b/k", strings.NewReader("hello"))
	a = &Auth{PayloadHash: sha256Hex([]byte("hello"))}
	rd, _, _ = a.Body(r, true)
	if b, err := io.ReadAll(rd); err != nil || string(b) != "hello" {
		t.Fatalf("%q, %v", b, err)
	}
}

func TestHeaderChecksums(t *testing.T) {
	data := []byte("The quick brown fox jumps over the lazy dog")
	for _, alg := range []string{"crc32", "crc32c", "crc64nvme", "sha1", "sha256"} {
		t.Run(alg, func(t *testing.T) {
			v, err := ChecksumValue(alg, data)
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				body string
				want string
			}{{string(data), ""}, {string(data) + ".", "BadDigest"}} {
				r := httptest.NewRequest("PUT", "/b/k", strings.NewReader(tc.body))
				r.Header.Set("X-Amz-Checksum-"+alg, v)
				rd, _, err := (&Auth{PayloadHash: UnsignedPayload}).Body(r, true)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadAll(rd); code(err) != tc.want {
					t.Fatalf("body %q: err = %v, want %q", tc.body, err, tc.want)
				}
			}
		})
	}
	// Headers that are not checksum values are left alone.
	for _, h := range []string{"X-Amz-Checksum-Mode", "X-Amz-Checksum-Algorithm", "X-Amz-Checksum-Type"} {
		r := httptest.NewRequest("GET", "/b/k", nil)
		r.Header.Set(h, "ENABLED")
		if _, _, err := (&Auth{PayloadHash: UnsignedPayload}).Body(r, true); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	// Known values: CRC-32 of the sentence is 0x414fa339, CRC-64/NVME of
	// "123456789" is 0xae8b14860a799888.
	if v, _ := ChecksumValue("crc32", data); v != "QU+jOQ==" {
		t.Errorf("crc32 = %s", v)
	}
	if v, _ := ChecksumValue("crc64nvme", []byte("123456789")); v != "rosUhgp5mIg=" {
		t.Errorf("crc64nvme = %s", v)
	}
}

func TestUnsignedTrailer(t *testing.T) {
	data := "hello trailer"
	sum, _ := ChecksumValue("crc32", []byte(data))
	for _, tc := range []struct{ name, body, want, msg string }{
		{"crlf", "d\r\n" + data + "\r\n0\r\nx-amz-checksum-crc32:" + sum + "\r\n\r\n", "", ""},
		{"lf then blank lines", "d\r\n" + data + "\r\n0\r\nx-amz-checksum-crc32:" + sum + "\n\r\n\r\n", "", ""},
		{"wrong sum", "d\r\n" + data + "\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n", "BadDigest",
			"The CRC32 you specified did not match the calculated checksum."},
		{"not a crc32", "d\r\n" + data + "\r\n0\r\nx-amz-checksum-crc32:AAAA\r\n\r\n", "InvalidRequest",
			"Value for x-amz-checksum-crc32 trailing header is invalid."},
		{"missing sum", "d\r\n" + data + "\r\n0\r\n\r\n", "InvalidRequest", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("PUT", "/b/k", strings.NewReader(tc.body))
			r.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
			r.Header.Set("X-Amz-Decoded-Content-Length", "13")
			rd, size, err := (&Auth{PayloadHash: StreamingUnsignedTrail}).Body(r, true)
			if err != nil || size != 13 {
				t.Fatal(size, err)
			}
			got, err := io.ReadAll(rd)
			if code(err) != tc.want || tc.want == "" && string(got) != data {
				t.Fatalf("got %q, err %v, want %q", got, err, tc.want)
			}
			var e *Error
			if tc.msg != "" && (!errors.As(err, &e) || e.Message != tc.msg) {
				t.Errorf("message %v, want %q", err, tc.msg)
			}
		})
	}
}

// TestSignVerify signs requests with Sign and checks Verify accepts them
// and refuses them once changed.
func TestSignVerify(t *testing.T) {
	for _, path := range []string{"/b/plain", "/b/a b+c/ü?x", "/b/a//b/../c"} {
		r := httptest.NewRequest("PUT", "http://127.0.0.1:9000/", strings.NewReader("body"))
		r.URL.Path = path
		r.URL.RawQuery = "partNumber=1&uploadId=a%20b"
		r.Header.Set("Content-Type", "text/plain")
		r.Header.Set("X-Amz-Meta-Note", "  two   spaces ")
		Sign(r, exampleID, exampleSecret, "us-east-1", sha256Hex([]byte("body")), exampleTime)
		if _, err := Verify(r, lookup, exampleTime); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		r.Header.Set("Content-Type", "text/html")
		if _, err := Verify(r, lookup, exampleTime); code(err) != "SignatureDoesNotMatch" {
			t.Fatalf("%s changed: %v", path, err)
		}
	}
}

// TestUnsignedAmzHeadersRefused: an x-amz-* header outside SignedHeaders
// is refused, as S3 does, in headers and in presigned URLs alike.
func TestUnsignedAmzHeadersRefused(t *testing.T) {
	r := exampleGet()
	r.Header.Set("X-Amz-Copy-Source", "other/secret")
	if _, err := Verify(r, lookup, exampleTime); code(err) != "AccessDenied" || !strings.Contains(err.Error(), "x-amz-copy-source") {
		t.Fatalf("header-signed: %v", err)
	}
	r = httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404", nil)
	r.Header.Set("X-Amz-Metadata-Directive", "REPLACE")
	if _, err := Verify(r, lookup, exampleTime); code(err) != "AccessDenied" {
		t.Fatalf("presigned: %v", err)
	}
	r.Header.Del("X-Amz-Metadata-Directive")
	r.Header.Set("X-Amz-Content-Sha256", UnsignedPayload) // left unsigned by some clients; harmless
	if _, err := Verify(r, lookup, exampleTime); err != nil {
		t.Fatalf("presigned with x-amz-content-sha256: %v", err)
	}
}

func TestCanonicalQueryOrder(t *testing.T) {
	q := url.Values{"a-b": {"2"}, "a": {"1", "0"}, "b": {""}}
	if got := CanonicalQuery(q); got != "a=0&a=1&a-b=2&b=" {
		t.Fatalf("CanonicalQuery = %s", got)
	}
}

func TestBodyEdges(t *testing.T) {
	// A zero-length read is not the end of the body.
	r := exampleChunked(signedChunks("hello", " world"))
	r.Header.Set("X-Amz-Decoded-Content-Length", "11")
	rd, _, _ := exampleAuth(StreamingSigned).Body(r, true)
	if n, err := rd.Read(nil); n != 0 || err != nil {
		t.Fatalf("Read(nil) = %d, %v", n, err)
	}
	if got, err := io.ReadAll(rd); err != nil || string(got) != "hello world" {
		t.Fatalf("%q, %v", got, err)
	}
	// A trailing checksum that x-amz-trailer does not name is refused.
	r = httptest.NewRequest("PUT", "/b/k", strings.NewReader("5\r\nhello\r\n0\r\nx-amz-checksum-sha1:AAAA\r\n\r\n"))
	r.Header.Set("X-Amz-Decoded-Content-Length", "5")
	rd, _, _ = (&Auth{PayloadHash: StreamingUnsignedTrail}).Body(r, true)
	if _, err := io.ReadAll(rd); code(err) != "InvalidRequest" {
		t.Fatalf("undeclared trailer checksum: %v", err)
	}
	// Without checksums (CompleteMultipartUpload), checksum headers are
	// not checked against the body.
	r = httptest.NewRequest("POST", "/b/k?uploadId=x", strings.NewReader("<CompleteMultipartUpload/>"))
	r.Header.Set("X-Amz-Checksum-Crc32", "AAAAAA==-3")
	rd, _, err := (&Auth{PayloadHash: UnsignedPayload}).Body(r, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(rd); err != nil {
		t.Fatalf("object checksum on a completion: %v", err)
	}
}
