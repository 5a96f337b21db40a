package sigv2

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// The credentials of AWS's Signature Version 2 examples.
const (
	exampleID     = "AKIAIOSFODNN7EXAMPLE"
	exampleSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

// exampleTime is the Date of the examples; exampleExpires their presigned
// URLs' expiry.
var (
	exampleTime    = time.Date(2007, 3, 27, 19, 36, 42, 0, time.UTC)
	exampleExpires = time.Unix(1175139620, 0)
)

func lookup(id string) (string, error) {
	if id == exampleID {
		return exampleSecret, nil
	}
	return "", sigv4.ErrUnknownKey
}

// vector is one case of testdata/vectors.json, signed by botocore
// (testdata/gen.py).
type vector struct {
	Name         string     `json:"name"`
	Method       string     `json:"method"`
	URL          string     `json:"url"`
	Bucket       string     `json:"bucket"`
	Headers      [][]string `json:"headers"`
	StringToSign string     `json:"string_to_sign"`
	Signature    string     `json:"signature"`
}

func (v vector) request() *http.Request {
	r := httptest.NewRequest(v.Method, v.URL, nil)
	for _, h := range v.Headers {
		r.Header.Add(h[0], h[1])
	}
	return r
}

func (v vector) presigned() bool { return strings.Contains(v.URL, "AWSAccessKeyId=") }

func vectors(t *testing.T) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

func code(err error) string {
	var e *sigv4.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestVectors(t *testing.T) {
	for _, v := range vectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			r := v.request()
			h, date, now := r.Header, r.Header.Get("Date"), exampleTime
			if r.Header.Get("X-Amz-Date") != "" {
				date = ""
			}
			if v.presigned() {
				h, date, now = queryHeaders(r), r.URL.Query().Get("Expires"), exampleExpires.Add(-time.Hour)
			}
			var got []string
			for _, p := range candidatePaths(r, v.Bucket) {
				got = append(got, StringToSign(v.Method, h, Resource(v.Bucket, p, r.URL.Query()), date))
			}
			if !slices.Contains(got, v.StringToSign) {
				t.Errorf("StringToSign of each candidate path = %q, want one %q", got, v.StringToSign)
			}
			if got := Sign(exampleSecret, v.StringToSign); got != v.Signature {
				t.Errorf("Sign = %q, want %q", got, v.Signature)
			}
			a, err := Verify(r, v.Bucket, lookup, now)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if a.AccessKeyID != exampleID || a.Presigned != v.presigned() {
				t.Fatalf("Verify = %+v, want %s, presigned %v", a, exampleID, v.presigned())
			}
		})
	}
}

// TestRefused changes a signed example in one way each and checks the
// code Verify refuses it with.
func TestRefused(t *testing.T) {
	var header, query vector
	for _, v := range vectors(t) {
		switch v.Name {
		case "md5, acl and repeated metadata":
			header = v
		case "presigned PUT, metadata and type moved to the query":
			query = v
		}
	}
	expires := exampleExpires.Unix()
	tests := []struct {
		name string
		base vector
		edit func(r *http.Request)
		now  time.Time
		want string
	}{
		{"header signature changed", header, func(r *http.Request) {
			r.Header.Set("Authorization", "AWS "+exampleID+":"+Sign(exampleSecret, "x"))
		}, exampleTime, "SignatureDoesNotMatch"},
		{"another secret", header, func(r *http.Request) {
			r.Header.Set("Authorization", "AWS "+exampleID+":"+Sign("other", header.StringToSign))
		}, exampleTime, "SignatureDoesNotMatch"},
		{"x-amz header added", header, func(r *http.Request) { r.Header.Set("X-Amz-Copy-Source", "/b/secret") }, exampleTime, "SignatureDoesNotMatch"},
		{"content type changed", header, func(r *http.Request) { r.Header.Set("Content-Type", "text/html") }, exampleTime, "SignatureDoesNotMatch"},
		{"method changed", header, func(r *http.Request) { r.Method = "DELETE" }, exampleTime, "SignatureDoesNotMatch"},
		{"subresource added", header, func(r *http.Request) { r.URL.RawQuery = "acl" }, exampleTime, "SignatureDoesNotMatch"},
		{"path changed", header, func(r *http.Request) { r.URL.Path, r.URL.RawPath = "/static/other", "" }, exampleTime, "SignatureDoesNotMatch"},
		{"unknown key", header, func(r *http.Request) {
			r.Header.Set("Authorization", "AWS NOBODY:"+Sign(exampleSecret, header.StringToSign))
		}, exampleTime, "InvalidAccessKeyId"},
		{"no colon", header, func(r *http.Request) { r.Header.Set("Authorization", "AWS "+exampleID) }, exampleTime, "InvalidArgument"},
		{"empty signature", header, func(r *http.Request) { r.Header.Set("Authorization", "AWS "+exampleID+":") }, exampleTime, "InvalidArgument"},
		{"empty id", header, func(r *http.Request) { r.Header.Set("Authorization", "AWS :abc") }, exampleTime, "InvalidArgument"},
		{"no date", header, func(r *http.Request) { r.Header.Del("Date") }, exampleTime, "AccessDenied"},
		{"bad date", header, func(r *http.Request) { r.Header.Set("Date", "yesterday") }, exampleTime, "AccessDenied"},
		{"16 minutes late", header, nil, exampleTime.Add(16 * time.Minute), "RequestTimeTooSkewed"},
		{"16 minutes early", header, nil, exampleTime.Add(-16 * time.Minute), "RequestTimeTooSkewed"},
		{"presigned signature changed", query, func(r *http.Request) {
			q := r.URL.Query()
			q.Set("Signature", Sign(exampleSecret, "x"))
			r.URL.RawQuery = q.Encode()
		}, exampleExpires, "SignatureDoesNotMatch"},
		{"presigned metadata changed", query, func(r *http.Request) {
			q := r.URL.Query()
			q.Set("x-amz-meta-color", "red")
			r.URL.RawQuery = q.Encode()
		}, exampleExpires, "SignatureDoesNotMatch"},
		{"presigned metadata added as a header", query, func(r *http.Request) { r.Header.Set("X-Amz-Meta-Size", "1") }, exampleExpires, "SignatureDoesNotMatch"},
		{"presigned expiry moved", query, func(r *http.Request) {
			q := r.URL.Query()
			q.Set("Expires", strconv.FormatInt(expires+1, 10))
			r.URL.RawQuery = q.Encode()
		}, exampleExpires, "SignatureDoesNotMatch"},
		{"expired", query, nil, exampleExpires.Add(time.Second), "AccessDenied"},
		{"expiry too far", query, nil, exampleExpires.Add(-sigv4.MaxExpires - time.Second), "AuthorizationQueryParametersError"},
		// 18 446 744 074 s scaled to ns wraps around int64 to 0.29 s.
		{"expiry centuries ahead", query, nil, time.Unix(expires-18_446_744_074, 0), "AuthorizationQueryParametersError"},
		{"expires not a number", query, func(r *http.Request) {
			q := r.URL.Query()
			q.Set("Expires", "tomorrow")
			r.URL.RawQuery = q.Encode()
		}, exampleExpires, "AccessDenied"},
		{"no signature", query, func(r *http.Request) {
			q := r.URL.Query()
			q.Del("Signature")
			r.URL.RawQuery = q.Encode()
		}, exampleExpires, "AccessDenied"},
		{"no access key id", query, func(r *http.Request) {
			q := r.URL.Query()
			q.Del("AWSAccessKeyId")
			r.URL.RawQuery = q.Encode()
		}, exampleExpires, "AccessDenied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.base.request()
			if tt.edit != nil {
				tt.edit(r)
			}
			_, err := Verify(r, tt.base.Bucket, lookup, tt.now)
			if got := code(err); got != tt.want {
				t.Fatalf("Verify = %v, want code %s", err, tt.want)
			}
		})
	}
}

func TestIsSigned(t *testing.T) {
	tests := []struct {
		auth, query string
		want        bool
	}{
		{"AWS a:b", "", true},
		{"", "AWSAccessKeyId=a&Signature=b&Expires=1", true},
		{"", "Signature=b", true},
		{"AWS4-HMAC-SHA256 Credential=a", "", false},
		{"", "X-Amz-Signature=b&X-Amz-Algorithm=AWS4-HMAC-SHA256", false},
		{"", "", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "http://h/b/k?"+tt.query, nil)
		if tt.auth != "" {
			r.Header.Set("Authorization", tt.auth)
		}
		if got := IsSigned(r); got != tt.want {
			t.Errorf("IsSigned(%q, %q) = %v, want %v", tt.auth, tt.query, got, tt.want)
		}
	}
}

// FuzzVerify feeds arbitrary Authorization headers, dates and queries to
// Verify: it must never panic nor accept what the example key did not
// sign.
func FuzzVerify(f *testing.F) {
	f.Add("AWS "+exampleID+":bWq2s1WEIj+Ydj0vQ697zp+IXMU=", "Tue, 27 Mar 2007 19:36:42 +0000", "")
	f.Add("", "", "AWSAccessKeyId="+exampleID+"&Expires=1175139620&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D")
	f.Add("AWS :", "20070327T193642Z", "acl&versionId=1&response-content-type=a%2Fb")
	f.Fuzz(func(t *testing.T, auth, date, query string) {
		r := httptest.NewRequest("GET", "http://127.0.0.1/johnsmith/photos/puppy.jpg", nil)
		r.URL.RawQuery = query
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		r.Header.Set("Date", date)
		a, err := Verify(r, "", lookup, exampleExpires.Add(-time.Hour))
		if err == nil && a.AccessKeyID != exampleID {
			t.Fatalf("accepted key %q", a.AccessKeyID)
		}
		if err != nil && code(err) == "" {
			t.Fatalf("error without an S3 code: %v", err)
		}
	})
}

func TestVerifyPolicy(t *testing.T) {
	// A policy botocore's generate_presigned_post made, and its signature
	// with the example secret by Python's hmac and hashlib.
	const policy = "eyJleHBpcmF0aW9uIjogIjIwMjYtMTEtMjZUMTY6NDg6NTVaIiwgImNvbmRpdGlvbnMiOiBbeyJidWNrZXQiOiAiYiJ9LCB7ImtleSI6ICJrIn1dfQ=="
	const good = "j06tBG3BPFoJuSqDVjk4MLMycbU="
	tests := []struct{ name, id, signature, want string }{
		{"good", exampleID, good, ""},
		{"wrong signature", exampleID, Sign("other", policy), "SignatureDoesNotMatch"},
		{"unknown key", "NOBODY", good, "InvalidAccessKeyId"},
	}
	for _, tt := range tests {
		if _, err := VerifyPolicy(policy, tt.id, tt.signature, lookup); code(err) != tt.want {
			t.Errorf("%s: VerifyPolicy = %v, want code %q", tt.name, err, tt.want)
		}
	}
}

// TestDateFormats: the dates Version 2 signers send are accepted, each
// read as the same instant; a zone other than GMT, UTC or a numeric
// offset is refused rather than guessed.
func TestDateFormats(t *testing.T) {
	tests := []struct {
		date string
		want string // the error code, "" for accepted
	}{
		{"Tue, 27 Mar 2007 19:36:42 GMT", ""},   // http.TimeFormat: botocore, s3cmd
		{"Tue, 27 Mar 2007 19:36:42 +0000", ""}, // S3's examples
		{"Tue, 27 Mar 2007 19:36:42 UTC", ""},   // time.RFC1123 of a UTC time: rclone --s3-v2-auth
		{"Tuesday, 27-Mar-07 19:36:42 GMT", ""}, // RFC 850
		{"Tue Mar 27 19:36:42 2007", ""},        // ANSI C
		{"Tue, 27 Mar 2007 19:36:42 EST", "AccessDenied"},
		{"Tue, 27 Mar 2007 19:36:42", "AccessDenied"},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "http://127.0.0.1/johnsmith/photos/puppy.jpg", nil)
		r.Header.Set("Date", tt.date)
		sts := StringToSign("GET", r.Header, "/johnsmith/photos/puppy.jpg", tt.date)
		r.Header.Set("Authorization", "AWS "+exampleID+":"+Sign(exampleSecret, sts))
		_, err := Verify(r, "", lookup, exampleTime)
		if got := code(err); got != tt.want {
			t.Errorf("Date %q: Verify = %v, want code %q", tt.date, err, tt.want)
		}
	}
}

// TestDisputedSubresources: botocore signs object-lock but not
// encryption, legal-hold or retention; minio-go the opposite. Either
// signature of such a request verifies; the subresources every signer
// signs must still be signed.
func TestDisputedSubresources(t *testing.T) {
	date := "Tue, 27 Mar 2007 19:36:42 GMT"
	tests := []struct {
		query, signed string
		want          string
	}{
		{"encryption", "/johnsmith?encryption", ""}, // minio-go
		{"encryption", "/johnsmith", ""},            // botocore
		{"object-lock", "/johnsmith?object-lock", ""},
		{"object-lock", "/johnsmith", ""},
		{"retention&versionId=v1", "/johnsmith?retention&versionId=v1", ""},
		{"retention&versionId=v1", "/johnsmith?versionId=v1", ""},
		{"legal-hold", "/johnsmith?legal-hold", ""},
		{"encryption", "/johnsmith?acl", "SignatureDoesNotMatch"},
		{"acl", "/johnsmith", "SignatureDoesNotMatch"},
		{"encryption&acl", "/johnsmith?encryption", "SignatureDoesNotMatch"},
		{"encryption&acl", "/johnsmith?acl", ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "http://127.0.0.1/johnsmith?"+tt.query, nil)
		r.Header.Set("Date", date)
		sts := StringToSign("GET", r.Header, tt.signed, date)
		r.Header.Set("Authorization", "AWS "+exampleID+":"+Sign(exampleSecret, sts))
		_, err := Verify(r, "", lookup, exampleTime)
		if got := code(err); got != tt.want {
			t.Errorf("?%s signed as %s: Verify = %v, want code %q", tt.query, tt.signed, err, tt.want)
		}
	}
}

// botocoreClient is a request botocore's S3 client signed with Signature
// Version 2, and the canonicalized resource it signed.
type botocoreClient struct {
	name, method, url, bucket string
	headers                   map[string]string // nil for a presigned URL
	resource                  string
}

// botocoreClients were signed by botocore's own S3 client, which chooses
// the resource itself, with the example key at exampleTime (presigned:
// expiring at exampleExpires): testdata/gen_client.py, run with botocore
// 1.29.27 (Debian 12's python3-botocore) and 1.43.11. 1.29 signs an
// operation's fixed query in the resource, before the subresources.
var botocoreClients = []botocoreClient{
	{"botocore 1.29.27 list_objects_v2 path", "GET", "http://127.0.0.1:9000/legacy?list-type=2&encoding-type=url", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:y1kGJOqn9ujCC+/J5fpc2wYXcSk="}, "/legacy?list-type=2"},
	{"botocore 1.29.27 list_objects_v2 dir/ path", "GET", "http://127.0.0.1:9000/legacy?list-type=2&prefix=dir%2F&max-keys=5&encoding-type=url", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:y1kGJOqn9ujCC+/J5fpc2wYXcSk="}, "/legacy?list-type=2"},
	{"botocore 1.29.27 list_objects_v2 virtual", "GET", "http://legacy.s3.example.com/?list-type=2&encoding-type=url", "legacy", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:y1kGJOqn9ujCC+/J5fpc2wYXcSk="}, "/legacy?list-type=2"},
	{"botocore 1.29.27 list_objects path", "GET", "http://127.0.0.1:9000/legacy?encoding-type=url", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:JFlKeGEZgnoFxv1U3exy/HBV2T8="}, "/legacy/"},
	{"botocore 1.29.27 get_bucket_acl path", "GET", "http://127.0.0.1:9000/legacy?acl", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:Qj2bXkMsgji1GYmlYl6G9F3fu5Y="}, "/legacy?acl?acl"},
	{"botocore 1.29.27 get_bucket_acl virtual", "GET", "http://legacy.s3.example.com/?acl", "legacy", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:Qj2bXkMsgji1GYmlYl6G9F3fu5Y="}, "/legacy?acl?acl"},
	{"botocore 1.29.27 create_multipart_upload path", "POST", "http://127.0.0.1:9000/legacy/dir/a%20b%2Bc%20%C3%A9.txt?uploads", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:zNcPC3EwH7E4xRUnvCZDxromPe0="}, "/legacy/dir/a%20b%2Bc%20%C3%A9.txt?uploads?uploads"},
	{"botocore 1.29.27 get_object_acl path", "GET", "http://127.0.0.1:9000/legacy/dir/a%20b%2Bc%20%C3%A9.txt?acl&versionId=v1", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:4zDI6fZKuDfrdarQXJKS3WZ5BB4="}, "/legacy/dir/a%20b%2Bc%20%C3%A9.txt?acl?acl&versionId=v1"},
	{"botocore 1.29.27 get_object_retention path", "GET", "http://127.0.0.1:9000/legacy/dir/a%20b%2Bc%20%C3%A9.txt?retention", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:7a8XZXpePJ0YCGPHdjhpsse3lwQ="}, "/legacy/dir/a%20b%2Bc%20%C3%A9.txt?retention"},
	{"botocore 1.29.27 get_bucket_encryption virtual", "GET", "http://legacy.s3.example.com/?encryption", "legacy", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:dfAUs5lJakAZjGNx2PMbf9CtUyA="}, "/legacy?encryption"},
	{"botocore 1.29.27 get_object_lock_configuration path", "GET", "http://127.0.0.1:9000/legacy?object-lock", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:YgFZqhUz4z0sRdR8qu8g4OfoZuE="}, "/legacy?object-lock?object-lock"},
	{"botocore 1.29.27 select_object_content path", "POST", "http://127.0.0.1:9000/legacy/k.csv?select&select-type=2", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:ZL0xTALX4GX+tK+EcbrJSAFdKfk="}, "/legacy/k.csv?select&select-type=2?select&select-type=2"},
	{"botocore 1.29.27 presigned list_objects_v2", "GET", "http://127.0.0.1:9000/legacy?list-type=2&encoding-type=url&AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=kURyvYh%2B5FqhzEJceViPw%2Ffqjl4%3D&Expires=1175139620", "", nil, "/legacy?list-type=2"},
	{"botocore 1.29.27 presigned get_object_acl", "GET", "http://127.0.0.1:9000/legacy/dir/a%20b%2Bc%20%C3%A9.txt?acl&AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=ht9k8zBan1i6UXgp792QPP7XHXo%3D&Expires=1175139620", "", nil, "/legacy/dir/a%20b%2Bc%20%C3%A9.txt?acl?acl"},
	{"botocore 1.43.11 list_objects_v2 path", "GET", "http://127.0.0.1:9000/legacy?list-type=2&encoding-type=url", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:JFlKeGEZgnoFxv1U3exy/HBV2T8="}, "/legacy/"},
	{"botocore 1.43.11 list_objects_v2 dir/ path", "GET", "http://127.0.0.1:9000/legacy?list-type=2&prefix=dir%2F&max-keys=5&encoding-type=url", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:JFlKeGEZgnoFxv1U3exy/HBV2T8="}, "/legacy/"},
	{"botocore 1.43.11 list_objects_v2 virtual", "GET", "http://legacy.s3.example.com/?list-type=2&encoding-type=url", "legacy", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:JFlKeGEZgnoFxv1U3exy/HBV2T8="}, "/legacy/"},
	{"botocore 1.43.11 list_objects path", "GET", "http://127.0.0.1:9000/legacy?encoding-type=url", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:JFlKeGEZgnoFxv1U3exy/HBV2T8="}, "/legacy/"},
	{"botocore 1.43.11 get_bucket_acl path", "GET", "http://127.0.0.1:9000/legacy?acl", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:nd2CchwKMWR05Ws+b5NlfxPGtz0="}, "/legacy/?acl"},
	{"botocore 1.43.11 get_bucket_acl virtual", "GET", "http://legacy.s3.example.com/?acl", "legacy", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:nd2CchwKMWR05Ws+b5NlfxPGtz0="}, "/legacy/?acl"},
	{"botocore 1.43.11 create_multipart_upload path", "POST", "http://127.0.0.1:9000/legacy/dir/a%20b%2Bc%20%C3%A9.txt?uploads", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:BsKPv60b9StarkdDhYFCkSkO1Jk="}, "/legacy/dir/a%20b%2Bc%20%C3%A9.txt?uploads"},
	{"botocore 1.43.11 get_object_acl path", "GET", "http://127.0.0.1:9000/legacy/dir/a%20b%2Bc%20%C3%A9.txt?acl&versionId=v1", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:15Ka8TFAdC9piLbdvE7gaLezIIo="}, "/legacy/dir/a%20b%2Bc%20%C3%A9.txt?acl&versionId=v1"},
	{"botocore 1.43.11 get_object_retention path", "GET", "http://127.0.0.1:9000/legacy/dir/a%20b%2Bc%20%C3%A9.txt?retention", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:2P/XXP1+6VLSPBWx4I6u59v1k+U="}, "/legacy/dir/a%20b%2Bc%20%C3%A9.txt"},
	{"botocore 1.43.11 get_bucket_encryption virtual", "GET", "http://legacy.s3.example.com/?encryption", "legacy", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:JFlKeGEZgnoFxv1U3exy/HBV2T8="}, "/legacy/"},
	{"botocore 1.43.11 get_object_lock_configuration path", "GET", "http://127.0.0.1:9000/legacy?object-lock", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:iOnlP+sG6A0G9p84k3r85KKahsM="}, "/legacy/?object-lock"},
	{"botocore 1.43.11 select_object_content path", "POST", "http://127.0.0.1:9000/legacy/k.csv?select&select-type=2", "", map[string]string{"Date": "Tue, 27 Mar 2007 19:36:42 GMT", "Authorization": "AWS AKIAIOSFODNN7EXAMPLE:unntxFLU+1SyfM9VC6B/qjvdUes="}, "/legacy/k.csv?select&select-type=2"},
	{"botocore 1.43.11 presigned list_objects_v2", "GET", "http://127.0.0.1:9000/legacy?list-type=2&encoding-type=url&AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=1YQLX0jjdjMGVRDyJl2l8DGilbQ%3D&Expires=1175139620", "", nil, "/legacy/"},
	{"botocore 1.43.11 presigned get_object_acl", "GET", "http://127.0.0.1:9000/legacy/dir/a%20b%2Bc%20%C3%A9.txt?acl&AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=L9NIRXzYkE2nLu57Q11NQOR2%2FLQ%3D&Expires=1175139620", "", nil, "/legacy/dir/a%20b%2Bc%20%C3%A9.txt?acl"},
}

// request is c's request; now the time it is verified at.
func (c botocoreClient) request() (r *http.Request, now time.Time) {
	r = httptest.NewRequest(c.method, c.url, nil)
	for k, v := range c.headers {
		r.Header.Set(k, v)
	}
	if c.headers == nil {
		return r, exampleExpires.Add(-time.Hour)
	}
	return r, exampleTime
}

// TestBotocoreClients: what botocore's S3 client signs verifies, 1.29's
// fixed-query resources ("/legacy?list-type=2") included.
func TestBotocoreClients(t *testing.T) {
	for _, c := range botocoreClients {
		t.Run(c.name, func(t *testing.T) {
			r, now := c.request()
			// The recorded resource is what the signature signs.
			date, sig := r.Header.Get("Date"), strings.TrimPrefix(r.Header.Get("Authorization"), "AWS "+exampleID+":")
			if c.headers == nil {
				date, sig = r.URL.Query().Get("Expires"), r.URL.Query().Get("Signature")
			}
			if got := Sign(exampleSecret, StringToSign(c.method, r.Header, c.resource, date)); got != sig {
				t.Fatalf("signature of %q = %s, want the recorded %s", c.resource, got, sig)
			}
			a, err := Verify(r, c.bucket, lookup, now)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if a.AccessKeyID != exampleID || a.Presigned != (c.headers == nil) {
				t.Fatalf("Verify = %+v, want %s, presigned %v", a, exampleID, c.headers == nil)
			}
		})
	}
}

// TestBotocoreFixedQueryRefused: a fixed-query signature covers the
// fixed query as sent, the subresources and the path: a request that
// changes one is refused.
func TestBotocoreFixedQueryRefused(t *testing.T) {
	find := func(name string) botocoreClient {
		for _, c := range botocoreClients {
			if c.name == name {
				return c
			}
		}
		t.Fatalf("no client %q", name)
		return botocoreClient{}
	}
	list := find("botocore 1.29.27 list_objects_v2 path")
	acl := find("botocore 1.29.27 get_object_acl path")
	virtual := find("botocore 1.29.27 list_objects_v2 virtual")
	selectObject := find("botocore 1.29.27 select_object_content path")
	tests := []struct {
		name   string
		base   botocoreClient
		url    string
		bucket string
	}{
		{"fixed query's value changed", list, "http://127.0.0.1:9000/legacy?list-type=1&encoding-type=url", ""},
		{"fixed query not first", list, "http://127.0.0.1:9000/legacy?encoding-type=url&list-type=2", ""},
		{"fixed query dropped", list, "http://127.0.0.1:9000/legacy?encoding-type=url", ""},
		{"another bucket", list, "http://127.0.0.1:9000/other?list-type=2&encoding-type=url", ""},
		{"another bucket, virtual-hosted", virtual, "http://other.s3.example.com/?list-type=2&encoding-type=url", "other"},
		{"subresource's value changed", acl, "http://127.0.0.1:9000/legacy/dir/a%20b%2Bc%20%C3%A9.txt?acl&versionId=v2", ""},
		{"subresource added", acl, "http://127.0.0.1:9000/legacy/dir/a%20b%2Bc%20%C3%A9.txt?acl&versionId=v1&uploads", ""},
		{"another key", acl, "http://127.0.0.1:9000/legacy/other?acl&versionId=v1", ""},
		{"half the fixed query", selectObject, "http://127.0.0.1:9000/legacy/k.csv?select&select-type=3", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.base
			c.url, c.bucket = tt.url, tt.bucket
			r, now := c.request()
			if _, err := Verify(r, c.bucket, lookup, now); code(err) != "SignatureDoesNotMatch" {
				t.Fatalf("Verify = %v, want code SignatureDoesNotMatch", err)
			}
		})
	}
}

// TestUnsignedSubresourceOnlyForReads: a signature that covers a request
// only without a disputed subresource covers the request without it too,
// another operation. It is taken for a read (botocore's GET ?encryption)
// but not for a write: a signed DELETE /site replayed as DELETE
// /site?publicAccessBlock, ?ownershipControls or ?encryption is refused,
// saying why; a write that signs its subresource (minio-go's) is taken.
func TestUnsignedSubresourceOnlyForReads(t *testing.T) {
	date := exampleTime.UTC().Format(http.TimeFormat)
	signed := func(method, target string, signedQuery url.Values) *http.Request {
		r := httptest.NewRequest(method, target, nil)
		r.Header.Set("Date", date)
		sts := StringToSign(method, r.Header, Resource("", "/site", signedQuery), date)
		r.Header.Set("Authorization", "AWS "+exampleID+":"+Sign(exampleSecret, sts))
		return r
	}
	for _, tc := range []struct {
		name, method, target string
		signedQuery          url.Values
		want                 string // code; "" accepted
	}{
		{"DeleteBucket as signed", "DELETE", "/site", nil, ""},
		{"DeleteBucket replayed as DeletePublicAccessBlock", "DELETE", "/site?publicAccessBlock", nil, "AccessDenied"},
		{"DeleteBucket replayed as DeleteBucketOwnershipControls", "DELETE", "/site?ownershipControls", nil, "AccessDenied"},
		{"DeleteBucket replayed as DeleteBucketEncryption", "DELETE", "/site?encryption", nil, "AccessDenied"},
		{"DeleteBucketEncryption signing its subresource", "DELETE", "/site?encryption", url.Values{"encryption": {""}}, ""},
		{"PutObjectRetention without its subresource", "PUT", "/site?retention", nil, "AccessDenied"},
		{"GetBucketEncryption without its subresource, as botocore signs it", "GET", "/site?encryption", nil, ""},
		{"GetPublicAccessBlock without its subresource", "GET", "/site?publicAccessBlock", nil, ""},
		{"HEAD with a disputed subresource unsigned", "HEAD", "/site?legal-hold", nil, ""},
	} {
		r := signed(tc.method, tc.target, tc.signedQuery)
		_, err := Verify(r, "", lookup, exampleTime)
		if got := code(err); got != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if tc.want == "AccessDenied" && err != nil && !strings.Contains(err.Error(), "does not cover ?") {
			t.Errorf("%s: %v does not say what the signature left out", tc.name, err)
		}
	}
}
