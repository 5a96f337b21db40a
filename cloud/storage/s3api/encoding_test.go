package s3api_test

import (
	"context"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestContentEncodingKept: an object's Content-Encoding comes back as it
// was sent, spaces and all, less aws-chunked (the transfer's, not the
// object's), through the AWS SDK for Go and a raw request.
func TestContentEncodingKept(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "enc")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("enc"), Key: aws.String("a"),
		Body: strings.NewReader("x"), ContentEncoding: aws.String("gzip, deflate")}); err != nil {
		t.Fatal(err)
	}
	if code, e3 := do(t, e.signed(t, "PUT", "/enc/b", strings.NewReader("y"), sha("y"), map[string]string{"Content-Encoding": "aws-chunked, br"})); code != 200 {
		t.Fatalf("raw put: %d %s", code, e3.Code)
	}
	for key, want := range map[string]string{"a": "gzip, deflate", "b": "br"} {
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("enc"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(h.ContentEncoding); got != want {
			t.Errorf("%s: Content-Encoding %q, want %q", key, got, want)
		}
	}
}

// TestChunkedUpload: a body sent with HTTP's chunked transfer coding, so
// without a Content-Length (as boto3 sends one when told to), is stored
// whole, as an object and as a part; errors_test has its limit and its
// payload hash.
func TestChunkedUpload(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "chunks")
	body := strings.Repeat("0123456789", 20000)
	stream := func() io.Reader {
		pr, pw := io.Pipe()
		go func() {
			for i := 0; i < len(body); i += 7000 {
				pw.Write([]byte(body[i:min(i+7000, len(body))]))
			}
			pw.Close()
		}()
		return pr
	}
	r := e.signed(t, "PUT", "/chunks/obj", stream(), sha(body), nil)
	if r.ContentLength > 0 {
		t.Fatalf("the request has a length (%d): not a chunked upload", r.ContentLength)
	}
	if code, e3 := do(t, r); code != 200 {
		t.Fatalf("chunked PutObject: %d %s", code, e3.Code)
	}
	if got, _ := mustGet(t, c, "chunks", "obj"); string(got) != body {
		t.Fatalf("stored %d bytes, want %d", len(got), len(body))
	}
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("chunks"), Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	path := "/chunks/mp?partNumber=1&uploadId=" + url.QueryEscape(aws.ToString(up.UploadId))
	if code, e3 := do(t, e.signed(t, "PUT", path, stream(), "", nil)); code != 200 {
		t.Fatalf("chunked UploadPart: %d %s", code, e3.Code)
	}
	parts, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("chunks"), Key: aws.String("mp"), UploadId: up.UploadId})
	if err != nil || len(parts.Parts) != 1 || aws.ToInt64(parts.Parts[0].Size) != int64(len(body)) {
		t.Fatalf("the chunked part: %+v %v; want one of %d bytes", parts, err, len(body))
	}
}
