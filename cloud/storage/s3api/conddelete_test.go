package s3api_test

import (
	"context"
	"strings"
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
	_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("condv"), Key: aws.String("v"), VersionId: put.VersionId, IfMatchSize: aws.Int64(0)})
	if httpStatus(err) != 501 || !exists(t, c, "condv", "v") {
		t.Fatalf("x-amz-if-match-size with versionId: %v; want 501 and the object kept", err)
	}
	// An ETag condition tells whether the ETag is right: a key that may
	// only write cannot use it, as S3 asks s3:GetObject of it.
	wid, wsecret := e.key(t, "alice", cloudstore.PermWrite, "*")
	w := e.sdk(wid, wsecret)
	_, err = w.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("condv"), Key: aws.String("v"), IfMatch: put.ETag})
	if httpStatus(err) != 403 || !exists(t, c, "condv", "v") {
		t.Fatalf("write-only key, If-Match ETag: %v; want 403 and the object kept", err)
	}
	// The same key deletes with If-Match: *, which tells nothing, or none.
	if _, err := w.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("condv"), Key: aws.String("v"), IfMatch: aws.String("*")}); err != nil || exists(t, c, "condv", "v") {
		t.Fatalf("write-only key, If-Match: *: %v; want the object deleted", err)
	}
}

// outcomes maps each key of a DeleteObjects answer to "deleted" or its
// error's code.
func outcomes(out *s3.DeleteObjectsOutput) map[string]string {
	codes := map[string]string{}
	for _, d := range out.Deleted {
		codes[aws.ToString(d.Key)] = "deleted"
	}
	for _, f := range out.Errors {
		codes[aws.ToString(f.Key)] = aws.ToString(f.Code)
	}
	return codes
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
	codes := outcomes(out)
	want := map[string]string{"a": "deleted", "b": "PreconditionFailed", "gone": "NoSuchKey"}
	for k, v := range want {
		if codes[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, codes[k], v, codes)
		}
	}
	if exists(t, c, "condm", "a") || !exists(t, c, "condm", "b") {
		t.Errorf("afterwards a exists %v, b exists %v; want false, true", exists(t, c, "condm", "a"), exists(t, c, "condm", "b"))
	}
	// Size and LastModifiedTime, alone or with ETag.
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("condm"), Key: aws.String("b")})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, c, "condm", "c", []byte("cc"))
	mustPut(t, c, "condm", "d", []byte("dd"))
	later := head.LastModified.Add(time.Hour)
	out, err = c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("condm"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("b"), Size: aws.Int64(1), LastModifiedTime: head.LastModified, ETag: head.ETag},
		{Key: aws.String("c"), Size: aws.Int64(1)},
		{Key: aws.String("d"), LastModifiedTime: &later},
		{Key: aws.String("gone"), Size: aws.Int64(7)},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	codes = outcomes(out)
	want = map[string]string{"b": "deleted", "c": "PreconditionFailed", "d": "PreconditionFailed", "gone": "deleted"}
	for k, v := range want {
		if codes[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, codes[k], v, codes)
		}
	}
	if exists(t, c, "condm", "b") || !exists(t, c, "condm", "c") || !exists(t, c, "condm", "d") {
		t.Errorf("afterwards b, c, d exist: %v %v %v; want false, true, true", exists(t, c, "condm", "b"), exists(t, c, "condm", "c"), exists(t, c, "condm", "d"))
	}
	// An ISO 8601 time is read too (the SDKs send an HTTP date), in the
	// form listings give: an hour off keeps c, c's own deletes it.
	deleteXML := func(obj string) (int, s3Error) {
		body := "<Delete><Object>" + obj + "</Object></Delete>"
		return do(t, e.signed(t, "POST", "/condm?delete", strings.NewReader(body), sha(body), map[string]string{"Content-MD5": md5b64(body)}))
	}
	const iso = "2006-01-02T15:04:05.000Z"
	if code, e3 := deleteXML("<Key>c</Key><LastModifiedTime>" + later.UTC().Format(iso) + "</LastModifiedTime>"); code != 200 || !exists(t, c, "condm", "c") {
		t.Errorf("an ISO 8601 LastModifiedTime an hour off: %d %s; want 200 and c kept", code, e3.Code)
	}
	hc, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("condm"), Key: aws.String("c")})
	if err != nil {
		t.Fatal(err)
	}
	if code, e3 := deleteXML("<Key>c</Key><LastModifiedTime>" + hc.LastModified.UTC().Format(iso) + "</LastModifiedTime>"); code != 200 || exists(t, c, "condm", "c") {
		t.Errorf("c's own ISO 8601 LastModifiedTime: %d %s; want 200 and c deleted", code, e3.Code)
	}
	mustPut(t, c, "condm", "c", []byte("cc"))
	// A size tells something of the object: a key that may only write
	// gets AccessDenied for that key, and the others go on.
	wid, wsecret := e.key(t, "alice", cloudstore.PermWrite, "*")
	out, err = e.sdk(wid, wsecret).DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("condm"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("c"), Size: aws.Int64(2)}, {Key: aws.String("d")}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Errors) != 1 || aws.ToString(out.Errors[0].Key) != "c" || aws.ToString(out.Errors[0].Code) != "AccessDenied" ||
		len(out.Deleted) != 1 || aws.ToString(out.Deleted[0].Key) != "d" || !exists(t, c, "condm", "c") || exists(t, c, "condm", "d") {
		t.Errorf("write-only key, a Size on c and none on d: deleted %v, errors %v; want c AccessDenied and kept, d deleted", out.Deleted, out.Errors)
	}
	// A value that is no size or no time is malformed, and nothing is deleted.
	for _, obj := range []string{
		"<Object><Key>c</Key><Size>two</Size></Object>",
		"<Object><Key>c</Key><Size>-2</Size></Object>",
		"<Object><Key>c</Key><Size>+2</Size></Object>",
		"<Object><Key>c</Key><LastModifiedTime>yesterday</LastModifiedTime></Object>",
	} {
		body := "<Delete>" + obj + "</Delete>"
		code, e3 := do(t, e.signed(t, "POST", "/condm?delete", strings.NewReader(body), sha(body), map[string]string{"Content-MD5": md5b64(body)}))
		if code != 400 || e3.Code != "MalformedXML" || !exists(t, c, "condm", "c") {
			t.Errorf("%s: %d %s; want 400 MalformedXML and c kept", obj, code, e3.Code)
		}
	}
}

// TestConditionalDeleteSizeAndTime: DeleteObject's x-amz-if-match-size
// and x-amz-if-match-last-modified-time, as S3 documents them: a
// mismatch is 412 and keeps the object, a key without an object is
// deleted (204) whatever they say, and they combine with If-Match.
func TestConditionalDeleteSizeAndTime(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "conds")
	etag := mustPut(t, c, "conds", "k", []byte("four"))
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("conds"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	lm := *head.LastModified
	del := func(key string, size *int64, modified *time.Time, ifMatch *string) error {
		_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("conds"), Key: aws.String(key),
			IfMatchSize: size, IfMatchLastModifiedTime: modified, IfMatch: ifMatch})
		return err
	}
	earlier, later := lm.Add(-time.Second), lm.Add(time.Second)
	for _, tc := range []struct {
		name     string
		size     *int64
		modified *time.Time
		ifMatch  *string
	}{
		{"another size", aws.Int64(5), nil, nil},
		{"an empty object's size", aws.Int64(0), nil, nil},
		{"a second earlier", nil, &earlier, nil},
		{"a second later", nil, &later, nil},
		{"its size, a later time", aws.Int64(4), &later, nil},
		{"its size and time, another ETag", aws.Int64(4), &lm, aws.String(`"0123456789abcdef0123456789abcdef"`)},
	} {
		if err := del("k", tc.size, tc.modified, tc.ifMatch); httpStatus(err) != 412 || apiCode(err) != "PreconditionFailed" {
			t.Errorf("%s: %v; want 412 PreconditionFailed", tc.name, err)
		}
		if !exists(t, c, "conds", "k") {
			t.Fatalf("%s: a refused conditional delete deleted the object", tc.name)
		}
	}
	// No object: nothing to hold the conditions against, and S3 answers 204.
	if err := del("missing", aws.Int64(9), &later, nil); err != nil {
		t.Errorf("conditions on a missing key: %v; want 204", err)
	}
	// Malformed values are 400, and change nothing.
	for _, hv := range [][2]string{{"X-Amz-If-Match-Size", "four"}, {"X-Amz-If-Match-Size", "+4"}, {"X-Amz-If-Match-Size", "-4"},
		{"X-Amz-If-Match-Last-Modified-Time", "yesterday"}} {
		code, e3 := do(t, e.signed(t, "DELETE", "/conds/k", nil, "", map[string]string{hv[0]: hv[1]}))
		if code != 400 || e3.Code != "InvalidArgument" || !exists(t, c, "conds", "k") {
			t.Errorf("%s: %s: %d %s; want 400 InvalidArgument and the object kept", hv[0], hv[1], code, e3.Code)
		}
	}
	// A size tells something of the object: a key that may only write
	// cannot ask, though it may delete.
	wid, wsecret := e.key(t, "alice", cloudstore.PermWrite, "*")
	w := e.sdk(wid, wsecret)
	_, err = w.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("conds"), Key: aws.String("k"), IfMatchSize: aws.Int64(4)})
	if httpStatus(err) != 403 || !exists(t, c, "conds", "k") {
		t.Fatalf("write-only key, x-amz-if-match-size: %v; want 403 and the object kept", err)
	}
	mustPut(t, c, "conds", "w", []byte("w"))
	if _, err := w.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("conds"), Key: aws.String("w")}); err != nil || exists(t, c, "conds", "w") {
		t.Fatalf("write-only key, no condition: %v; want the object deleted", err)
	}
	if err := del("k", aws.Int64(4), &lm, aws.String(etag)); err != nil {
		t.Fatalf("its size, time and ETag: %v", err)
	}
	if exists(t, c, "conds", "k") {
		t.Fatal("the conditional delete left the object")
	}
}
