package s3api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestUnkeptWriteHeadersRefused: a write asking for what the endpoint
// does not do, or not in this bucket, and whose loss would go unnoticed,
// is refused and changes nothing: Object Lock retention and legal holds
// in a bucket without Object Lock (400 InvalidRequest, as S3 answers), an
// append (x-amz-write-offset-bytes, which ignored replaced the object
// with the appended bytes), and a website redirect that is neither a path
// nor an http(s) URL (400 InvalidRedirectLocation).
func TestUnkeptWriteHeadersRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "unkept")
	mustPut(t, c, "unkept", "k", []byte("hello "))
	until := aws.Time(time.Now().Add(24 * time.Hour))
	tests := []struct {
		name   string
		call   func() error
		status int
		code   string
	}{
		{"PutObject, retention", func() error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("unkept"), Key: aws.String("k"), Body: strings.NewReader("x"),
				ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: until})
			return err
		}, 400, "InvalidRequest"},
		{"PutObject, legal hold", func() error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("unkept"), Key: aws.String("k"), Body: strings.NewReader("x"),
				ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
			return err
		}, 400, "InvalidRequest"},
		{"PutObject, append", func() error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("unkept"), Key: aws.String("k"), Body: strings.NewReader("world"),
				WriteOffsetBytes: aws.Int64(6)})
			return err
		}, 501, "NotImplemented"},
		{"PutObject, website redirect", func() error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("unkept"), Key: aws.String("k"), Body: strings.NewReader("x"),
				WebsiteRedirectLocation: aws.String("elsewhere.html")})
			return err
		}, 400, "InvalidRedirectLocation"},
		{"CreateMultipartUpload, website redirect", func() error {
			_, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("unkept"), Key: aws.String("k"),
				WebsiteRedirectLocation: aws.String("ftp://example.com/")})
			return err
		}, 400, "InvalidRedirectLocation"},
		{"CopyObject, website redirect", func() error {
			_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("unkept"), Key: aws.String("k"), CopySource: aws.String("unkept/k"),
				WebsiteRedirectLocation: aws.String("javascript:alert(1)")})
			return err
		}, 400, "InvalidRedirectLocation"},
		{"CopyObject, legal hold", func() error {
			_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("unkept"), Key: aws.String("k"), CopySource: aws.String("unkept/k"),
				MetadataDirective: types.MetadataDirectiveReplace, ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
			return err
		}, 400, "InvalidRequest"},
		{"CreateMultipartUpload, retention", func() error {
			_, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("unkept"), Key: aws.String("k"),
				ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: until})
			return err
		}, 400, "InvalidRequest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); httpStatus(err) != tt.status || apiCode(err) != tt.code {
				t.Fatalf("got %v; want %d %s", err, tt.status, tt.code)
			}
		})
	}
	if got, _ := mustGet(t, c, "unkept", "k"); string(got) != "hello " {
		t.Errorf("the object holds %q after refused writes; want %q", got, "hello ")
	}
	wantNoUploads(t, c, "unkept")
}
