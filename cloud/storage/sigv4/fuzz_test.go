package sigv4

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzChunked feeds arbitrary bodies to the aws-chunked decoder in each
// of its modes: it must never panic, and whatever it accepts must be
// exactly the declared number of bytes, with every check passed.
func FuzzChunked(f *testing.F) {
	// Seeds stay small: the fuzzer slows to a crawl on 64 KiB inputs.
	f.Add([]byte(signedChunks("hello", " world")), uint8(0))
	f.Add([]byte("d\r\nhello trailer\r\n0\r\nx-amz-checksum-crc32:Z5yjQQ==\r\n\r\n"), uint8(1))
	f.Add([]byte("5\r\nhello\r\n0\r\n\r\n"), uint8(2))
	f.Add([]byte("0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n"), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, mode uint8) {
		var r = exampleChunked(string(body))
		switch mode % 3 {
		case 0:
			r.Header.Set("X-Amz-Decoded-Content-Length", "11")
		case 1:
			r.Header.Set("X-Amz-Content-Sha256", StreamingUnsignedTrail)
			r.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
			r.Header.Set("X-Amz-Decoded-Content-Length", "13")
		case 2:
			r.Header.Set("X-Amz-Content-Sha256", StreamingUnsignedTrail)
			r.Header.Del("X-Amz-Decoded-Content-Length")
		}
		rd, size, err := exampleAuth(r.Header.Get("X-Amz-Content-Sha256")).Body(r, true)
		if err != nil {
			return
		}
		got, err := io.ReadAll(rd)
		if err != nil {
			return
		}
		if size >= 0 && int64(len(got)) != size {
			t.Fatalf("accepted %d bytes, declared %d", len(got), size)
		}
		if int64(len(got)) > int64(len(body)) {
			t.Fatalf("decoded more bytes (%d) than the body holds (%d)", len(got), len(body))
		}
	})
}

// FuzzVerify feeds arbitrary Authorization headers and presigned queries
// to Verify: it must never panic nor accept a request it cannot have
// signed.
func FuzzVerify(f *testing.F) {
	f.Add(exampleGet().Header.Get("Authorization"), "")
	f.Add("", "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
	f.Add("AWS4-HMAC-SHA256 Credential=a/b/c/d/e/aws4_request,SignedHeaders=host,Signature=00", "")
	f.Fuzz(func(t *testing.T, auth, query string) {
		r := httptest.NewRequest("GET", "http://examplebucket.s3.amazonaws.com/test.txt", bytes.NewReader(nil))
		r.URL.RawQuery = query
		r.Header.Set("Range", "bytes=0-9")
		r.Header.Set("X-Amz-Content-Sha256", EmptySHA256)
		r.Header.Set("X-Amz-Date", "20130524T000000Z")
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		a, err := Verify(r, lookup, exampleTime.Add(time.Minute))
		if err != nil {
			return
		}
		known := strings.Contains(auth, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41") ||
			strings.Contains(query, "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
		if !known {
			t.Fatalf("accepted a request without a known signature: %+v", a)
		}
	})
}

// signedChunks frames chunks as a signed aws-chunked body that follows
// the seed signature of exampleChunked.
func signedChunks(chunks ...string) string {
	key := SigningKey(exampleSecret, "20130524", "us-east-1", "s3")
	prev := "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
	var b strings.Builder
	for _, c := range append(chunks, "") {
		sts := "AWS4-HMAC-SHA256-PAYLOAD\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n" + prev + "\n" + EmptySHA256 + "\n" + sha256Hex([]byte(c))
		prev = hex.EncodeToString(hmacSHA256(key, sts))
		fmt.Fprintf(&b, "%x;chunk-signature=%s\r\n%s\r\n", len(c), prev, c)
	}
	return b.String()
}

func TestSignedChunksSeed(t *testing.T) {
	r := exampleChunked(signedChunks("hello", " world"))
	r.Header.Set("X-Amz-Decoded-Content-Length", "11")
	rd, _, _ := exampleAuth(StreamingSigned).Body(r, true)
	if got, err := io.ReadAll(rd); err != nil || string(got) != "hello world" {
		t.Fatalf("%q, %v", got, err)
	}
}

// exampleAuth is what Verify yields for exampleChunked's headers, for
// bodies whose declared length differs from the signed one.
func exampleAuth(payload string) *Auth {
	return &Auth{PayloadHash: payload, time: exampleTime,
		scope: "20130524/us-east-1/s3/aws4_request", key: SigningKey(exampleSecret, "20130524", "us-east-1", "s3"),
		signature: "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"}
}
