package sigv4

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// forgeries are what a forger tries on a valid hex signature: each must be
// refused. They catch a comparison that looks at less than the whole
// signature, or that ignores case or length.
func forgeries(sig string) []struct{ name, sig string } {
	last := sig[len(sig)-1]
	other := byte('0')
	if last == '0' {
		other = '1'
	}
	return []struct{ name, sig string }{
		{"last hex digit changed", sig[:len(sig)-1] + string(other)},
		{"first hex digit changed", string(other) + sig[1:]},
		{"one character short", sig[:len(sig)-1]},
		{"one character long", sig + "0"},
		{"upper-case hex", strings.ToUpper(sig)},
	}
}

func TestForgedHeaderSignatureRefused(t *testing.T) {
	const good = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
	for _, f := range forgeries(good) {
		t.Run(f.name, func(t *testing.T) {
			r := exampleGet()
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), good, f.sig, 1))
			if _, err := Verify(r, lookup, exampleTime.Add(time.Minute)); code(err) != "SignatureDoesNotMatch" {
				t.Errorf("got %v, want SignatureDoesNotMatch", err)
			}
		})
	}
}

func TestForgedPresignedSignatureRefused(t *testing.T) {
	const good = "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
	const url = "http://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature="
	if _, err := Verify(httptest.NewRequest("GET", url+good, nil), lookup, exampleTime.Add(time.Hour)); err != nil {
		t.Fatalf("the genuine URL: %v", err)
	}
	for _, f := range forgeries(good) {
		t.Run(f.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", url+f.sig, nil)
			if _, err := Verify(r, lookup, exampleTime.Add(time.Hour)); code(err) != "SignatureDoesNotMatch" {
				t.Errorf("got %v, want SignatureDoesNotMatch", err)
			}
		})
	}
}

func TestForgedChunkSignatureRefused(t *testing.T) {
	good := exampleChunkedBody()
	for _, sig := range []string{
		"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648", // the first chunk
		"b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9", // the final, empty chunk
	} {
		for _, f := range forgeries(sig) {
			t.Run(sig[:8]+" "+f.name, func(t *testing.T) {
				// Content-Length is signed: it stays, whatever the
				// forgery does to the body's length.
				if _, err := readSigned(t, exampleChunked(strings.Replace(good, sig, f.sig, 1))); err == nil {
					t.Errorf("the body was read whole, want the chunk refused")
				} else if len(f.sig) == len(sig) && code(err) != "SignatureDoesNotMatch" {
					t.Errorf("got %v, want SignatureDoesNotMatch", err)
				}
			})
		}
	}
}

// signedTrailerRequest builds a PUT of data with a signed, chunked body
// and a signed trailer holding its CRC32 (STREAMING-AWS4-HMAC-SHA256-
// PAYLOAD-TRAILER), signing it as a client would; trailerSig replaces the
// trailer's signature when not empty. It returns the request and the
// genuine trailer signature.
func signedTrailerRequest(t *testing.T, data, trailerSig string) (*http.Request, string) {
	t.Helper()
	r := httptest.NewRequest("PUT", "http://examplebucket.s3.amazonaws.com/k", nil)
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
	r.Header.Set("X-Amz-Decoded-Content-Length", fmt.Sprint(len(data)))
	Sign(r, exampleID, exampleSecret, "us-east-1", StreamingSignedTrailer, exampleTime)
	a, err := Verify(r, lookup, exampleTime)
	if err != nil {
		t.Fatal(err)
	}
	prev := a.signature
	chunkSig := func(payload string) string {
		sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + a.time.UTC().Format(timeFormat) + "\n" + a.scope + "\n" +
			prev + "\n" + EmptySHA256 + "\n" + sha256Hex([]byte(payload))
		prev = hex.EncodeToString(hmacSHA256(a.key, sts))
		return prev
	}
	sum, err := ChecksumValue("crc32", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	fmt.Fprintf(&body, "%x;chunk-signature=%s\r\n%s\r\n", len(data), chunkSig(data), data)
	fmt.Fprintf(&body, "0;chunk-signature=%s\r\n", chunkSig(""))
	trailer := "x-amz-checksum-crc32:" + sum + "\n"
	sts := "AWS4-HMAC-SHA256-TRAILER\n" + a.time.UTC().Format(timeFormat) + "\n" + a.scope + "\n" + prev + "\n" + sha256Hex([]byte(trailer))
	genuine := hex.EncodeToString(hmacSHA256(a.key, sts))
	if trailerSig == "" {
		trailerSig = genuine
	}
	fmt.Fprintf(&body, "x-amz-checksum-crc32:%s\r\nx-amz-trailer-signature:%s\r\n\r\n", sum, trailerSig)
	r.Body = io.NopCloser(strings.NewReader(body.String()))
	r.ContentLength = int64(body.Len())
	return r, genuine
}

func readSigned(t *testing.T, r *http.Request) (string, error) {
	t.Helper()
	a, err := Verify(r, lookup, exampleTime)
	if err != nil {
		t.Fatal(err)
	}
	rd, _, err := a.Body(r, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rd)
	return string(b), err
}

func TestForgedTrailerSignatureRefused(t *testing.T) {
	const data = "a body with a signed trailer"
	r, genuine := signedTrailerRequest(t, data, "")
	if got, err := readSigned(t, r); err != nil || got != data {
		t.Fatalf("the genuine request: got %q, %v; want %q", got, err, data)
	}
	for _, f := range forgeries(genuine) {
		t.Run(f.name, func(t *testing.T) {
			r, _ := signedTrailerRequest(t, data, f.sig)
			if _, err := readSigned(t, r); code(err) != "SignatureDoesNotMatch" {
				t.Errorf("got %v, want SignatureDoesNotMatch", err)
			}
		})
	}
}

// TestForgedPolicySignatureRefused: a browser-form upload's policy
// signature is compared whole, as the request signatures are.
func TestForgedPolicySignatureRefused(t *testing.T) {
	const policy = "eyJleHBpcmF0aW9uIjoiMjAzMC0wMS0wMVQwMDowMDowMFoiLCJjb25kaXRpb25zIjpbXX0="
	cred := exampleID + "/20130524/us-east-1/s3/aws4_request"
	key := SigningKey(exampleSecret, "20130524", "us-east-1", "s3")
	good := hex.EncodeToString(hmacSHA256(key, policy))
	if _, err := VerifyPolicy(policy, cred, "20130524T000000Z", good, lookup); err != nil {
		t.Fatalf("the genuine signature: %v", err)
	}
	for _, f := range forgeries(good) {
		t.Run(f.name, func(t *testing.T) {
			if _, err := VerifyPolicy(policy, cred, "20130524T000000Z", f.sig, lookup); code(err) != "SignatureDoesNotMatch" {
				t.Errorf("got %v, want SignatureDoesNotMatch", err)
			}
		})
	}
}
