package sigv2

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
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
