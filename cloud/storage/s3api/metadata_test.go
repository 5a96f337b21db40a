package s3api_test

import (
	"context"
	"mime"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestUnicodeMetadata: user metadata past US-ASCII round-trips as S3
// sends it, RFC 2047 encoded words, whether it came as UTF-8 (the AWS
// SDK for Go), ISO-8859-1 bytes (boto3) or encoded words; ASCII values
// come back as they are.
func TestUnicodeMetadata(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "meta")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("meta"), Key: aws.String("sdk"), Body: strings.NewReader("x"),
		Metadata: map[string]string{"name": "Miniö 中", "plain": "ascii"}}); err != nil {
		t.Fatal(err)
	}
	for key, h := range map[string]string{"latin1": "Hello World\xe9", "words": "=?UTF-8?Q?Hello_World=C3=A9?="} {
		if code, e3 := do(t, e.signed(t, "PUT", "/meta/"+key, strings.NewReader("y"), sha("y"), map[string]string{"X-Amz-Meta-Name": h})); code != 200 {
			t.Fatalf("%s: %d %s", key, code, e3.Code)
		}
	}
	var dec mime.WordDecoder
	for key, want := range map[string]string{"sdk": "Miniö 中", "latin1": "Hello Worldé", "words": "Hello Worldé"} {
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("meta"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		sent := head.Metadata["name"]
		if !strings.HasPrefix(sent, "=?UTF-8?B?") {
			t.Errorf("%s: x-amz-meta-name %q, want RFC 2047 B words", key, sent)
		}
		if got, err := dec.DecodeHeader(sent); err != nil || got != want {
			t.Errorf("%s: x-amz-meta-name %q decodes to %q (%v), want %q", key, sent, got, err, want)
		}
	}
	// GET sends the same; ASCII is untouched.
	r := e.signed(t, "GET", "/meta/sdk", nil, "", nil)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Amz-Meta-Plain"); got != "ascii" {
		t.Errorf("x-amz-meta-plain %q, want ascii", got)
	}
	if got, _ := dec.DecodeHeader(resp.Header.Get("X-Amz-Meta-Name")); got != "Miniö 中" {
		t.Errorf("GET x-amz-meta-name %q", resp.Header.Get("X-Amz-Meta-Name"))
	}
	// The 2 KiB bound counts the stored UTF-8: 1000 "é" sent as words
	// (about 2.8 KB on the wire) fit, 1100 ISO-8859-1 bytes (2200 bytes
	// of UTF-8) do not.
	for _, tc := range []struct {
		name, value string
		code        int
	}{
		{"1000 é as words", mime.BEncoding.Encode("UTF-8", strings.Repeat("é", 1000)), 200},
		{"1100 ISO-8859-1 bytes", strings.Repeat("\xe9", 1100), 400},
	} {
		code, e3 := do(t, e.signed(t, "PUT", "/meta/big", strings.NewReader("z"), sha("z"), map[string]string{"X-Amz-Meta-Big": tc.value}))
		if code != tc.code || code == 400 && e3.Code != "MetadataTooLarge" {
			t.Errorf("%s: %d %s, want %d", tc.name, code, e3.Code, tc.code)
		}
	}
}
