package s3api_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// exists reports whether bucket/key has a current object.
func exists(t *testing.T, c *s3.Client, bucket, key string) bool {
	t.Helper()
	_, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil && httpStatus(err) != 404 {
		t.Fatal(err)
	}
	return err == nil
}

// TestConditionalDelete: DeleteObject with If-Match, S3's conditional
// delete, deletes only the object it names (its ETag, or * for any); a
// mismatch is 412 and a missing object 404, and neither deletes nor
// marks anything.
func TestConditionalDelete(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "cond", "condv")
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("condv"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	const other = `"0123456789abcdef0123456789abcdef"`
	for _, bucket := range []string{"cond", "condv"} {
		t.Run(bucket, func(t *testing.T) {
			etag := mustPut(t, c, bucket, "k", []byte("kept"))
			del := func(key, ifMatch string) error {
				_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), IfMatch: aws.String(ifMatch)})
				return err
			}
			if err := del("k", other); httpStatus(err) != 412 || apiCode(err) != "PreconditionFailed" {
				t.Fatalf("If-Match of another ETag: %v; want 412 PreconditionFailed", err)
			}
			if !exists(t, c, bucket, "k") {
				t.Fatal("a refused conditional delete deleted the object")
			}
			if err := del("missing", "*"); httpStatus(err) != 404 || apiCode(err) != "NoSuchKey" {
				t.Fatalf("If-Match: * of a missing key: %v; want 404 NoSuchKey", err)
			}
			if err := del("missing", other); httpStatus(err) != 404 {
				t.Fatalf("If-Match of a missing key: %v; want 404", err)
			}
			if err := del("k", etag); err != nil {
				t.Fatalf("If-Match of its ETag: %v", err)
			}
			if exists(t, c, bucket, "k") {
				t.Fatal("the conditional delete left the object")
			}
			// A delete marker is no object to match.
			if err := del("k", "*"); httpStatus(err) != 404 {
				t.Fatalf("If-Match: * after the delete: %v; want 404", err)
			}
			mustPut(t, c, bucket, "k", []byte("again"))
			if err := del("k", "*"); err != nil {
				t.Fatalf("If-Match: *: %v", err)
			}
		})
	}
	// Only the current version is matched: with a version id it is refused.
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("condv"), Key: aws.String("v"), Body: nil})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("condv"), Key: aws.String("v"), VersionId: put.VersionId, IfMatch: put.ETag})
	if httpStatus(err) != 501 {
		t.Fatalf("If-Match with versionId: %v; want 501", err)
	}
	// Conditions S3 takes only in directory buckets are refused, not ignored.
	_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("condv"), Key: aws.String("v"), IfMatchSize: aws.Int64(1)})
	if httpStatus(err) != 501 || !exists(t, c, "condv", "v") {
		t.Fatalf("x-amz-if-match-size: %v; want 501 and the object kept", err)
	}
	// An ETag condition tells whether the ETag is right: a key that may
	// only write cannot use it, as S3 asks s3:GetObject of it.
	wid, wsecret := e.key(t, "alice", cloudstore.PermWrite, "*")
	_, err = e.sdk(wid, wsecret).DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("condv"), Key: aws.String("v"), IfMatch: put.ETag})
	if httpStatus(err) != 403 || !exists(t, c, "condv", "v") {
		t.Fatalf("write-only key, If-Match ETag: %v; want 403 and the object kept", err)
	}
}

// TestConditionalDeleteObjects: DeleteObjects takes an ETag per key, as
// S3 does: a key whose ETag does not match is an Error and stays; the
// others are deleted.
func TestConditionalDeleteObjects(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "condm")
	a := mustPut(t, c, "condm", "a", []byte("a"))
	mustPut(t, c, "condm", "b", []byte("b"))
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("condm"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("a"), ETag: aws.String(a)},
		{Key: aws.String("b"), ETag: aws.String(`"0123456789abcdef0123456789abcdef"`)},
		{Key: aws.String("gone"), ETag: aws.String(a)},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]string{}
	for _, d := range out.Deleted {
		codes[aws.ToString(d.Key)] = "deleted"
	}
	for _, f := range out.Errors {
		codes[aws.ToString(f.Key)] = aws.ToString(f.Code)
	}
	want := map[string]string{"a": "deleted", "b": "PreconditionFailed", "gone": "NoSuchKey"}
	for k, v := range want {
		if codes[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, codes[k], v, codes)
		}
	}
	if exists(t, c, "condm", "a") || !exists(t, c, "condm", "b") {
		t.Errorf("afterwards a exists %v, b exists %v; want false, true", exists(t, c, "condm", "a"), exists(t, c, "condm", "b"))
	}
	_, err = c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("condm"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("b"), LastModifiedTime: aws.Time(time.Now())}}}})
	if httpStatus(err) != 501 || !exists(t, c, "condm", "b") {
		t.Fatalf("LastModifiedTime condition: %v; want 501 and b kept", err)
	}
}
