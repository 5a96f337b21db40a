package s3api_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestConditionalCopy: CopyObject takes S3's conditional-write headers
// for its destination: If-None-Match: * copies only onto a free key,
// If-Match only onto the object of that ETag (412 otherwise, 404 when
// there is none); a refused copy leaves the destination as it was.
// Both ways a copy is written are covered: sharing the source's body,
// and encrypting it anew.
func TestConditionalCopy(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "ccopy")
	mustPut(t, c, "ccopy", "src", []byte("source"))
	const other = `"0123456789abcdef0123456789abcdef"`
	for _, sse := range []types.ServerSideEncryption{"", types.ServerSideEncryptionAes256} {
		t.Run("sse="+string(sse), func(t *testing.T) {
			dstETag := mustPut(t, c, "ccopy", "dst", []byte("destination"))
			cp := func(key string, edit func(*s3.CopyObjectInput)) error {
				in := &s3.CopyObjectInput{Bucket: aws.String("ccopy"), Key: aws.String(key), CopySource: aws.String("ccopy/src"), ServerSideEncryption: sse}
				edit(in)
				_, err := c.CopyObject(ctx, in)
				return err
			}
			refused := []struct {
				name   string
				key    string
				edit   func(*s3.CopyObjectInput)
				status int
			}{
				{"If-None-Match: * onto an object", "dst", func(in *s3.CopyObjectInput) { in.IfNoneMatch = aws.String("*") }, 412},
				{"If-Match of another ETag", "dst", func(in *s3.CopyObjectInput) { in.IfMatch = aws.String(other) }, 412},
				{"If-Match onto no object", "free", func(in *s3.CopyObjectInput) { in.IfMatch = aws.String("*") }, 404},
			}
			for _, tt := range refused {
				if err := cp(tt.key, tt.edit); httpStatus(err) != tt.status {
					t.Errorf("%s: %v; want %d", tt.name, err, tt.status)
				}
			}
			if got, etag := mustGet(t, c, "ccopy", "dst"); string(got) != "destination" || etag != dstETag {
				t.Fatalf("after refused copies dst holds %q (%s); want it unchanged", got, etag)
			}
			if exists(t, c, "ccopy", "free") {
				t.Fatal("a refused copy made free")
			}
			if err := cp("dst", func(in *s3.CopyObjectInput) { in.IfMatch = aws.String(dstETag) }); err != nil {
				t.Fatalf("If-Match of its ETag: %v", err)
			}
			if err := cp("free", func(in *s3.CopyObjectInput) { in.IfNoneMatch = aws.String("*") }); err != nil {
				t.Fatalf("If-None-Match: * onto a free key: %v", err)
			}
			for _, k := range []string{"dst", "free"} {
				if got, _ := mustGet(t, c, "ccopy", k); string(got) != "source" {
					t.Errorf("%s holds %q after the copy; want %q", k, got, "source")
				}
			}
			c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("ccopy"), Key: aws.String("free")})
		})
	}
}
