package s3api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/kms"
	"github.com/latticenet/lattice/cloud/storage/s3api"
	"github.com/latticenet/lattice/cloud/storage/sigv4"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// want checks that err is the S3 error code want ("" for none).
func want(t *testing.T, what string, err error, code string) {
	t.Helper()
	if apiCode(err) != code || code == "" && err != nil {
		t.Errorf("%s: %v, want %q", what, err, code)
	}
}

// crossEnv is alice's server with two more accounts' clients: bob, whom
// grants name, and carol, whom none do.
type crossEnv struct {
	*env
	alice, bob, carol *s3.Client
	bobID, bobSecret  string
}

func newCrossEnv(t *testing.T) crossEnv {
	e := newEnv(t)
	bobID, bobSecret := e.key(t, "bob", cloudstore.PermReadWrite, "*")
	carolID, carolSecret := e.key(t, "carol", cloudstore.PermReadWrite, "*")
	return crossEnv{e, e.sdk(e.id, e.secret), e.sdk(bobID, bobSecret), e.sdk(carolID, carolSecret), bobID, bobSecret}
}

func put(c *s3.Client, bucket, key, body string, edit ...func(*s3.PutObjectInput)) error {
	in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)}
	for _, f := range edit {
		f(in)
	}
	_, err := c.PutObject(context.Background(), in)
	return err
}

func get(c *s3.Client, bucket, key string) (string, error) {
	out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return "", err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return string(b), err
}

func objectACL(t *testing.T, c *s3.Client, bucket, key string) (owner, acl string, err error) {
	t.Helper()
	out, err := c.GetObjectAcl(context.Background(), &s3.GetObjectAclInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.Owner.ID), aclOf(t, out.Grants), nil
}

func list(c *s3.Client, bucket string) ([]string, error) {
	out, err := c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys, nil
}

// TestCrossAccountACLs: in a bucket whose ACLs are enabled (ObjectWriter),
// the bucket ACL grants another account listing (READ) and writing
// (WRITE); the objects it writes are its own, which the bucket's owner
// may delete but reads only by their ACL's grant; a third account gets
// nothing; every refusal changes nothing.
func TestCrossAccountACLs(t *testing.T) {
	e := newCrossEnv(t)
	ctx := context.Background()
	if _, err := e.alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("shared"), ObjectOwnership: types.ObjectOwnershipObjectWriter}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, e.alice, "shared", "alices", []byte("from alice"))

	// Before any grant, bob is refused everything, as carol is.
	for _, c := range []struct {
		name string
		s3   *s3.Client
	}{{"bob", e.bob}, {"carol", e.carol}} {
		_, err := list(c.s3, "shared")
		want(t, c.name+" lists without a grant", err, "AccessDenied")
		want(t, c.name+" writes without a grant", put(c.s3, "shared", "x", "x"), "AccessDenied")
		_, err = get(c.s3, "shared", "alices")
		want(t, c.name+" reads without a grant", err, "AccessDenied")
	}

	if _, err := e.alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"),
		GrantRead: aws.String(`id="bob"`), GrantWrite: aws.String(`id="bob"`)}); err != nil {
		t.Fatal(err)
	}
	if got := bucketACL(t, e.alice, "shared"); got != "owner:FULL_CONTROL,bob:READ,bob:WRITE" {
		t.Fatalf("bucket ACL %s", got)
	}

	// bob lists and writes; his object is his.
	if keys, err := list(e.bob, "shared"); err != nil || strings.Join(keys, ",") != "alices" {
		t.Fatalf("bob's listing: %v, %v", keys, err)
	}
	if _, err := e.bob.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("shared")}); err != nil {
		t.Errorf("bob's HeadBucket: %v", err)
	}
	want(t, "bob writes", put(e.bob, "shared", "bobs", "from bob"), "")
	if owner, acl, err := objectACL(t, e.bob, "shared", "bobs"); err != nil || owner != "bob" || acl != "bob:FULL_CONTROL" {
		t.Errorf("bob's object: owner %q, ACL %s, %v; want bob's, private", owner, acl, err)
	}
	if body, err := get(e.bob, "shared", "bobs"); err != nil || body != "from bob" {
		t.Errorf("bob reads his object: %q, %v", body, err)
	}
	lo, err := e.alice.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String("shared")})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range lo.Contents {
		wantOwner := map[string]string{"alices": "alice", "bobs": "bob"}[aws.ToString(o.Key)]
		if o.Owner == nil || aws.ToString(o.Owner.ID) != wantOwner {
			t.Errorf("ListObjects: %s owned by %v, want %s", aws.ToString(o.Key), o.Owner, wantOwner)
		}
	}

	// Reading needs the object's grant: bob may not read alice's object,
	// nor alice bob's, nor its ACL.
	_, err = get(e.bob, "shared", "alices")
	want(t, "bob reads alice's object", err, "AccessDenied")
	_, err = get(e.alice, "shared", "bobs")
	want(t, "alice reads bob's object", err, "AccessDenied")
	_, _, err = objectACL(t, e.alice, "shared", "bobs")
	want(t, "alice reads the ACL of bob's object", err, "AccessDenied")
	_, err = e.alice.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("shared"), Key: aws.String("bobs"), ACL: types.ObjectCannedACLPublicRead})
	want(t, "alice sets the ACL of bob's object", err, "AccessDenied")
	_, err = get(e.bob, "shared", "missing")
	want(t, "bob reads a missing key he may list", err, "NoSuchKey")
	_, err = get(e.carol, "shared", "missing")
	want(t, "carol reads a missing key", err, "AccessDenied")

	// bob grants the bucket's owner a read; alice grants everyone
	// authenticated a read of hers.
	if _, err := e.bob.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("shared"), Key: aws.String("bobs"), ACL: types.ObjectCannedACLBucketOwnerRead}); err != nil {
		t.Fatal(err)
	}
	if body, err := get(e.alice, "shared", "bobs"); err != nil || body != "from bob" {
		t.Errorf("alice reads bob's object once granted: %q, %v", body, err)
	}
	if _, acl, err := objectACL(t, e.bob, "shared", "bobs"); err != nil || acl != "bob:FULL_CONTROL,owner:READ" {
		t.Errorf("bob's object's ACL %s, %v", acl, err)
	}
	if _, err := e.alice.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("shared"), Key: aws.String("alices"), ACL: types.ObjectCannedACLAuthenticatedRead}); err != nil {
		t.Fatal(err)
	}
	if body, err := get(e.carol, "shared", "alices"); err != nil || body != "from alice" {
		t.Errorf("carol reads an authenticated-read object: %q, %v", body, err)
	}
	if status, code := e.anonymous(t, "GET", "/shared/alices", nil); status != 403 {
		t.Errorf("anonymous read of an authenticated-read object: %d %s", status, code)
	}

	// bob's grants stop at objects: the bucket's ACL and configuration
	// are alice's.
	_, err = e.bob.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String("shared")})
	want(t, "bob reads the bucket ACL", err, "AccessDenied")
	_, err = e.bob.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"), GrantFullControl: aws.String(`id="bob"`)})
	want(t, "bob writes the bucket ACL", err, "AccessDenied")
	_, err = e.bob.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("shared"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}})
	want(t, "bob configures the bucket", err, "AccessDenied")
	_, err = e.bob.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("shared")})
	want(t, "bob deletes the bucket", err, "AccessDenied")
	want(t, "bob's upload with tags (no grant of s3:PutObjectTagging)", put(e.bob, "shared", "tagged", "x", func(in *s3.PutObjectInput) {
		in.Tagging = aws.String("a=b")
	}), "AccessDenied")
	if got := bucketACL(t, e.alice, "shared"); got != "owner:FULL_CONTROL,bob:READ,bob:WRITE" {
		t.Errorf("bucket ACL after refusals: %s", got)
	}

	// A multipart upload by bob completes into his object.
	cu, err := e.bob.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("shared"), Key: aws.String("big")})
	if err != nil {
		t.Fatal(err)
	}
	up, err := e.bob.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("shared"), Key: aws.String("big"), UploadId: cu.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("part one"))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.bob.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("shared"), Key: aws.String("big"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: up.ETag}}}}); err != nil {
		t.Fatal(err)
	}
	if owner, _, err := objectACL(t, e.bob, "shared", "big"); err != nil || owner != "bob" {
		t.Errorf("bob's completed upload: owner %q, %v", owner, err)
	}

	// bob copies within the bucket (the source his to read); not from a
	// bucket of another owner.
	if _, err := e.bob.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("shared"), Key: aws.String("bobs-copy"), CopySource: aws.String("shared/bobs")}); err != nil {
		t.Errorf("bob copies his object: %v", err)
	}
	_, err = e.bob.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("shared"), Key: aws.String("stolen"), CopySource: aws.String("shared/big2")})
	want(t, "bob copies a missing source he may list", err, "NoSuchKey")
	if _, err := e.alice.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("shared"), Key: aws.String("alices"), ACL: types.ObjectCannedACLPrivate}); err != nil {
		t.Fatal(err)
	}
	_, err = e.bob.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("shared"), Key: aws.String("stolen"), CopySource: aws.String("shared/alices")})
	want(t, "bob copies alice's private object", err, "AccessDenied")
	mustBuckets(t, e.bob, "bobs-own")
	mustPut(t, e.bob, "bobs-own", "mine", []byte("bob's own"))
	if _, err := e.bob.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("shared"), Key: aws.String("in"), CopySource: aws.String("bobs-own/mine")}); err != nil {
		t.Errorf("bob copies from his own bucket into alice's: %v", err)
	}
	if body, err := get(e.bob, "shared", "in"); err != nil || body != "bob's own" {
		t.Errorf("bob's copy from his own bucket: %q, %v", body, err)
	}
	if _, err := e.bob.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("shared"), Key: aws.String("in")}); err != nil {
		t.Fatal(err)
	}

	// The bucket's owner deletes what bob wrote; bob deletes hers (WRITE).
	if _, err := e.alice.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("shared"), Key: aws.String("big")}); err != nil {
		t.Errorf("alice deletes bob's object: %v", err)
	}
	if _, err := e.bob.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("shared"), Key: aws.String("alices")}); err != nil {
		t.Errorf("bob deletes alice's object: %v", err)
	}
	mustPut(t, e.alice, "shared", "kept", []byte("k"))
	dout, err := e.bob.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("shared"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("kept"), VersionId: aws.String("null")}}}})
	if err != nil || len(dout.Errors) != 1 || aws.ToString(dout.Errors[0].Code) != "AccessDenied" {
		t.Errorf("bob's DeleteObjects of a version: %+v, %v; want it refused", dout, err)
	}
	_, err = e.bob.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("shared"), Key: aws.String("kept"), VersionId: aws.String("null")})
	want(t, "bob's DeleteObject of a version", err, "AccessDenied")
	dout, err = e.carol.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("shared"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("kept")}}}})
	if err != nil || len(dout.Errors) != 1 || aws.ToString(dout.Errors[0].Code) != "AccessDenied" || len(dout.Deleted) != 0 {
		t.Errorf("carol's DeleteObjects: %+v, %v; want each key refused", dout, err)
	}
	if _, err := e.alice.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("shared"), Key: aws.String("kept")}); err != nil {
		t.Fatal(err)
	}
	if keys, err := list(e.alice, "shared"); err != nil || strings.Join(keys, ",") != "bobs,bobs-copy" {
		t.Errorf("after the deletes: %v, %v", keys, err)
	}

	// A policy granting carol reads speaks for alice's objects only.
	if err := putPolicy(e.alice, "shared", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::carol:root"},
		"Action":"s3:GetObject","Resource":"arn:aws:s3:::shared/*"}]}`); err != nil {
		t.Fatal(err)
	}
	mustPut(t, e.alice, "shared", "alices2", []byte("again"))
	if body, err := get(e.carol, "shared", "alices2"); err != nil || body != "again" {
		t.Errorf("carol reads alice's object by the policy: %q, %v", body, err)
	}
	_, err = get(e.carol, "shared", "bobs")
	want(t, "carol reads bob's object by alice's policy", err, "AccessDenied")
	if _, err := e.alice.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("shared")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.alice.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("shared"), Key: aws.String("alices2")}); err != nil {
		t.Fatal(err)
	}

	// Back to BucketOwnerEnforced (the bucket ACL made private first):
	// alice owns and reads everything; bob is refused again.
	if _, err := e.alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"), ACL: types.BucketCannedACLPrivate}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.alice.PutBucketOwnershipControls(ctx, &s3.PutBucketOwnershipControlsInput{Bucket: aws.String("shared"),
		OwnershipControls: &types.OwnershipControls{Rules: []types.OwnershipControlsRule{{ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced}}}}); err != nil {
		t.Fatal(err)
	}
	if body, err := get(e.alice, "shared", "bobs-copy"); err != nil || body != "from bob" {
		t.Errorf("alice reads bob's copy under BucketOwnerEnforced: %q, %v", body, err)
	}
	if owner, acl, err := objectACL(t, e.alice, "shared", "bobs-copy"); err != nil || owner != "alice" || acl != privateACL {
		t.Errorf("under BucketOwnerEnforced: owner %q, ACL %s, %v", owner, acl, err)
	}
	_, err = get(e.bob, "shared", "bobs")
	want(t, "bob reads under BucketOwnerEnforced", err, "AccessDenied")
}

// TestCrossAccountPublicACLs: object ACLs granting everyone, in a bucket
// whose ACLs are enabled, and the Block Public Access settings that
// ignore or refuse them.
func TestCrossAccountPublicACLs(t *testing.T) {
	e := newCrossEnv(t)
	ctx := context.Background()
	if _, err := e.alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("pub"), ObjectOwnership: types.ObjectOwnershipBucketOwnerPreferred}); err != nil {
		t.Fatal(err)
	}
	want(t, "a public-read upload", put(e.alice, "pub", "open", "hello", func(in *s3.PutObjectInput) { in.ACL = types.ObjectCannedACLPublicRead }), "")
	mustPut(t, e.alice, "pub", "closed", []byte("secret"))
	if status, _ := e.anonymous(t, "GET", "/pub/open", nil); status != 200 {
		t.Errorf("anonymous read of a public-read object: %d", status)
	}
	for _, key := range []string{"closed", "missing"} {
		if status, code := e.anonymous(t, "GET", "/pub/"+key, nil); status != 403 {
			t.Errorf("anonymous read of %s: %d %s, want 403", key, status, code)
		}
	}
	if status, _ := e.anonymous(t, "PUT", "/pub/anon", nil); status != 403 {
		t.Errorf("anonymous write without a grant: %d", status)
	}
	// public-read-write lets everyone write; what they write is the
	// bucket owner's.
	if _, err := e.alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("pub"), GrantWrite: aws.String(`uri="http://acs.amazonaws.com/groups/global/AllUsers"`)}); err != nil {
		t.Fatal(err)
	}
	if status, code := e.anonymous(t, "PUT", "/pub/anon", nil); status != 200 {
		t.Errorf("anonymous write with AllUsers WRITE: %d %s", status, code)
	}
	if owner, _, err := objectACL(t, e.alice, "pub", "anon"); err != nil || owner != "alice" {
		t.Errorf("an anonymous object: owner %q, %v", owner, err)
	}
	// DeleteObjects, key by key: AllUsers WRITE deletes current objects,
	// not versions (S3 leaves those to the bucket's owner).
	mustPut(t, e.alice, "pub", "anon2", []byte("x"))
	out, err := e.anonymousSDK().DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("pub"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("anon")}, {Key: aws.String("anon2"), VersionId: aws.String("null")}}}})
	if err != nil || len(out.Deleted) != 1 || aws.ToString(out.Deleted[0].Key) != "anon" || len(out.Errors) != 1 || aws.ToString(out.Errors[0].Code) != "AccessDenied" {
		t.Errorf("anonymous DeleteObjects under AllUsers WRITE: %+v, %v; want anon deleted, anon2's version refused", out, err)
	}
	if keys, _ := list(e.alice, "pub"); strings.Join(keys, ",") != "anon2,closed,open" {
		t.Errorf("after the anonymous DeleteObjects: %v", keys)
	}

	// BucketOwnerPreferred: bob's object is alice's when he says
	// bucket-owner-full-control, his own otherwise.
	if _, err := e.alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("pub"), GrantWrite: aws.String(`id="bob"`)}); err != nil {
		t.Fatal(err)
	}
	want(t, "bob's upload for the owner", put(e.bob, "pub", "given", "x", func(in *s3.PutObjectInput) { in.ACL = types.ObjectCannedACLBucketOwnerFullControl }), "")
	want(t, "bob's own upload", put(e.bob, "pub", "kept", "x"), "")
	for key, owner := range map[string]string{"given": "alice", "kept": "bob"} {
		c := e.alice
		if owner == "bob" {
			c = e.bob
		}
		if got, _, err := objectACL(t, c, "pub", key); err != nil || got != owner {
			t.Errorf("%s: owner %q, %v; want %s", key, got, err, owner)
		}
	}

	// IgnorePublicAcls: the public grants no longer hold; BlockPublicAcls:
	// no new ones are taken.
	if _, err := e.alice.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: aws.String("pub"),
		PublicAccessBlockConfiguration: &types.PublicAccessBlockConfiguration{IgnorePublicAcls: aws.Bool(true), BlockPublicAcls: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	if status, _ := e.anonymous(t, "GET", "/pub/open", nil); status != 403 {
		t.Errorf("anonymous read under IgnorePublicAcls: %d", status)
	}
	if status, _ := e.anonymous(t, "PUT", "/pub/anon2", nil); status != 403 {
		t.Errorf("anonymous write under IgnorePublicAcls: %d", status)
	}
	_, err = e.alice.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("pub"), Key: aws.String("closed"), ACL: types.ObjectCannedACLPublicRead})
	want(t, "a public object ACL under BlockPublicAcls", err, "AccessDenied")
	want(t, "a public-read upload under BlockPublicAcls", put(e.alice, "pub", "open2", "x", func(in *s3.PutObjectInput) { in.ACL = types.ObjectCannedACLPublicRead }), "AccessDenied")
	_, err = e.alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("pub"), ACL: types.BucketCannedACLAuthenticatedRead})
	want(t, "a public bucket ACL under BlockPublicAcls", err, "AccessDenied")
	if _, acl, err := objectACL(t, e.alice, "pub", "closed"); err != nil || acl != privateACL {
		t.Errorf("refused ACLs changed the object's: %s, %v", acl, err)
	}
}

// TestCrossAccountPolicy: under BucketOwnerEnforced (ACLs disabled) a
// bucket policy naming another account grants it exactly what it says;
// what it writes is the bucket owner's; a Deny holds over the Allow.
func TestCrossAccountPolicy(t *testing.T) {
	e := newCrossEnv(t)
	ctx := context.Background()
	mustBuckets(t, e.alice, "team")
	mustPut(t, e.alice, "team", "docs/a", []byte("doc"))
	mustPut(t, e.alice, "team", "private/p", []byte("p"))
	if err := putPolicy(e.alice, "team", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::bob:root"},"Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::team/*"},
		{"Effect":"Allow","Principal":{"CanonicalUser":"bob"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::team"},
		{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::team/private/*"}]}`); err != nil {
		t.Fatal(err)
	}
	if keys, err := list(e.bob, "team"); err != nil || len(keys) != 2 {
		t.Errorf("bob lists by the policy: %v, %v", keys, err)
	}
	if body, err := get(e.bob, "team", "docs/a"); err != nil || body != "doc" {
		t.Errorf("bob reads by the policy: %q, %v", body, err)
	}
	_, err := get(e.bob, "team", "private/p")
	want(t, "bob reads what the policy denies", err, "AccessDenied")
	want(t, "bob writes by the policy", put(e.bob, "team", "docs/b", "from bob"), "")
	if owner, acl, err := objectACL(t, e.alice, "team", "docs/b"); err != nil || owner != "alice" || acl != privateACL {
		t.Errorf("bob's object under BucketOwnerEnforced: owner %q, ACL %s, %v; want alice's", owner, acl, err)
	}
	want(t, "bob's upload asking for an ACL", put(e.bob, "team", "docs/c", "x", func(in *s3.PutObjectInput) { in.ACL = types.ObjectCannedACLPublicRead }),
		"AccessControlListNotSupported")
	_, err = e.bob.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("team"), Key: aws.String("docs/a")})
	want(t, "bob deletes (not granted)", err, "AccessDenied")
	_, err = e.bob.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("team")})
	want(t, "bob reads the policy", err, "AccessDenied")
	_, err = get(e.carol, "team", "docs/a")
	want(t, "carol, whom the policy does not name", err, "AccessDenied")

	// The bucket owner a request expects is the bucket's, not the
	// requester's account.
	if _, err := e.bob.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("team"), Key: aws.String("docs/a"), ExpectedBucketOwner: aws.String("alice")}); err != nil {
		t.Errorf("bob expecting alice as the owner: %v", err)
	}
	_, err = e.bob.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("team"), Key: aws.String("docs/a"), ExpectedBucketOwner: aws.String("bob")})
	want(t, "bob expecting himself as the owner", err, "AccessDenied")

	// A copy inside the bucket needs the source's read and the
	// destination's write, both granted; from bob's own bucket it is not
	// supported.
	if _, err := e.bob.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("team"), Key: aws.String("docs/copy"), CopySource: aws.String("team/docs/a")}); err != nil {
		t.Errorf("bob copies by the policy: %v", err)
	}
	_, err = e.bob.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("team"), Key: aws.String("docs/copy2"), CopySource: aws.String("team/private/p")})
	want(t, "bob copies what the policy denies him to read", err, "AccessDenied")

	// The owner's buckets and listing are its own.
	lb, err := e.bob.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(lb.Buckets) != 0 {
		t.Errorf("bob's ListBuckets: %v, %v", lb, err)
	}
}

// TestCrossAccountPostObject: a browser form signed by another account's
// key uploads into a bucket whose ACL grants it WRITE, with the form's
// acl field as the object's ACL; without the grant it is refused.
func TestCrossAccountPostObject(t *testing.T) {
	e := newCrossEnv(t)
	ctx := context.Background()
	if _, err := e.alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("forms"), ObjectOwnership: types.ObjectOwnershipObjectWriter}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	post := func() int {
		policy := policyDoc(now.Add(time.Hour), append(v4Conditions(e.bobID, "us-east-1", now), map[string]string{"key": "f"},
			map[string]string{"acl": "public-read"})...)
		body, ct := formBody(append([]field{{"key", "f"}, {"acl", "public-read"}}, signV4Form(e.bobID, e.bobSecret, "us-east-1", now, policy)...), "f", []byte("form"))
		resp := e.postForm(t, "forms", body, ct)
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := post(); status != 403 {
		t.Fatalf("bob's form without a grant: %d, want 403", status)
	}
	if _, err := e.alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("forms"), GrantWrite: aws.String(`id="bob"`)}); err != nil {
		t.Fatal(err)
	}
	if status := post(); status != 204 {
		t.Fatalf("bob's form with WRITE: %d, want 204", status)
	}
	if owner, acl, err := objectACL(t, e.bob, "forms", "f"); err != nil || owner != "bob" || acl != "bob:FULL_CONTROL,http://acs.amazonaws.com/groups/global/AllUsers:READ" {
		t.Errorf("the form's object: owner %q, ACL %s, %v", owner, acl, err)
	}
	if status, _ := e.anonymous(t, "GET", "/forms/f", nil); status != 200 {
		t.Errorf("anonymous read of the form's public-read object: %d", status)
	}
}

// TestBoto3CrossAccount: the same grants through boto3, with a second
// account's credentials.
func TestBoto3CrossAccount(t *testing.T) {
	python := tooltest.Need(t, "python3", "-c", "import boto3")
	e := newCrossEnv(t)
	e.run(t, python, "-c", boto3CrossAccount, e.srv.URL, "boto-shared", e.bobID, e.bobSecret)
}

const boto3CrossAccount = boto3Clients + `
bob = boto3.client("s3", endpoint_url=url, config=cfg, aws_access_key_id=sys.argv[3], aws_secret_access_key=sys.argv[4])
s3.create_bucket(Bucket=bucket, ObjectOwnership="ObjectWriter")
assert code(lambda: bob.put_object(Bucket=bucket, Key="b", Body=b"x")) == "AccessDenied"
s3.put_bucket_acl(Bucket=bucket, GrantRead='id="bob"', GrantWrite='id="bob"')
grants = s3.get_bucket_acl(Bucket=bucket)["Grants"]
assert sorted((g["Grantee"].get("ID"), g["Permission"]) for g in grants) == [("alice", "FULL_CONTROL"), ("bob", "READ"), ("bob", "WRITE")], grants
bob.put_object(Bucket=bucket, Key="b", Body=b"from bob", ACL="bucket-owner-read")
acl = bob.get_object_acl(Bucket=bucket, Key="b")
assert acl["Owner"]["ID"] == "bob", acl
assert s3.get_object(Bucket=bucket, Key="b")["Body"].read() == b"from bob"
assert code(lambda: s3.get_object_acl(Bucket=bucket, Key="b")) == "AccessDenied"
keys = [o["Key"] for o in bob.list_objects_v2(Bucket=bucket)["Contents"]]
assert keys == ["b"], keys
owners = [o["Owner"]["ID"] for o in s3.list_objects_v2(Bucket=bucket, FetchOwner=True)["Contents"]]
assert owners == ["bob"], owners
s3.put_bucket_ownership_controls(Bucket=bucket, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerPreferred"}]})
bob.put_object(Bucket=bucket, Key="given", Body=b"y", ACL="bucket-owner-full-control")
assert s3.get_object_acl(Bucket=bucket, Key="given")["Owner"]["ID"] == "alice"
assert code(lambda: bob.get_bucket_acl(Bucket=bucket)) == "AccessDenied"
assert code(lambda: bob.put_bucket_acl(Bucket=bucket, ACL="public-read")) == "AccessDenied"
assert code(lambda: s3.put_bucket_acl(Bucket=bucket, GrantRead='emailAddress="bob@example.com"')) == "UnresolvableGrantByEmailAddress"
assert code(lambda: s3.put_bucket_ownership_controls(Bucket=bucket,
    OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})) == "InvalidBucketAclWithObjectOwnership"
`

// TestCrossAccountReview: what a review of the cross-account rules found
// missing, each tried: RestrictPublicBuckets holds other accounts to the
// owner's; a bucket's policy is its owner's alone (405 to another account
// granted it, as in S3); a form's key is what the policy judges; tags of
// an object another account owns are its owner's; a deleted key is not
// told apart from a missing one; an ACL is judged on the object it
// changes, not on one replaced while its body was sent.
func TestCrossAccountReview(t *testing.T) {
	e := newCrossEnv(t)
	ctx := context.Background()
	mustBuckets(t, e.alice, "open")
	mustPut(t, e.alice, "open", "k", []byte("v"))
	if err := putPolicy(e.alice, "open", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::open","arn:aws:s3:::open/*"]},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::open/protected/*"}]}`); err != nil {
		t.Fatal(err)
	}
	if _, err := get(e.carol, "open", "k"); err != nil {
		t.Errorf("carol by a public policy: %v", err)
	}
	_, err := e.carol.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("open")})
	want(t, "carol, granted s3:*, reads the policy", err, "MethodNotAllowed")
	_, err = e.carol.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("open")})
	want(t, "carol, granted s3:*, deletes the policy", err, "MethodNotAllowed")

	// A form of alice's own into the denied prefix.
	now := time.Now()
	policy := policyDoc(now.Add(time.Hour), append(v4Conditions(e.id, "us-east-1", now), []any{"starts-with", "$key", ""})...)
	body, ct := formBody(append([]field{{"key", "protected/x"}}, signV4Form(e.id, e.secret, "us-east-1", now, policy)...), "f", []byte("form"))
	resp := e.postForm(t, "open", body, ct)
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("a form into a denied prefix: %d, want 403", resp.StatusCode)
	}

	if _, err := e.alice.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: aws.String("open"),
		PublicAccessBlockConfiguration: &types.PublicAccessBlockConfiguration{RestrictPublicBuckets: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	_, err = get(e.carol, "open", "k")
	want(t, "carol by a public policy under RestrictPublicBuckets", err, "AccessDenied")
	_, err = e.carol.DeletePublicAccessBlock(ctx, &s3.DeletePublicAccessBlockInput{Bucket: aws.String("open")})
	want(t, "carol lifts the settings under RestrictPublicBuckets", err, "AccessDenied")
	if _, err := get(e.alice, "open", "k"); err != nil {
		t.Errorf("alice under RestrictPublicBuckets: %v", err)
	}

	// Tags of bob's object in alice's ObjectWriter bucket are bob's.
	if _, err := e.alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("shared"), ObjectOwnership: types.ObjectOwnershipObjectWriter}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("shared"), GrantWrite: aws.String(`id="bob"`)}); err != nil {
		t.Fatal(err)
	}
	want(t, "bob writes", put(e.bob, "shared", "bobs", "b"), "")
	tagging := &types.Tagging{TagSet: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}
	if _, err := e.bob.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("shared"), Key: aws.String("bobs"), Tagging: tagging}); err != nil {
		t.Errorf("bob tags his object: %v", err)
	}
	_, err = e.alice.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("shared"), Key: aws.String("bobs")})
	want(t, "alice reads the tags of bob's object", err, "AccessDenied")
	_, err = e.alice.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("shared"), Key: aws.String("bobs"), Tagging: tagging})
	want(t, "alice tags bob's object", err, "AccessDenied")
	_, err = e.alice.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String("shared"), Key: aws.String("bobs"),
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectSize}})
	want(t, "alice reads the attributes of bob's object", err, "AccessDenied")

	// A deleted key, to carol who may not list: as a missing one.
	if _, err := e.alice.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("shared"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, e.alice, "shared", "gone", []byte("x"))
	if _, err := e.alice.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("shared"), Key: aws.String("gone")}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"gone", "never"} {
		_, err = get(e.carol, "shared", key)
		want(t, "carol reads "+key, err, "AccessDenied")
	}

	// bob sends an ACL for his object slowly; alice overwrites the key
	// meanwhile: the ACL is judged on alice's object, and refused.
	pr, pw := io.Pipe()
	doc := `<AccessControlPolicy><AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>bob</ID></Grantee><Permission>FULL_CONTROL</Permission></Grant></AccessControlList></AccessControlPolicy>`
	req, err := http.NewRequest("PUT", e.srv.URL+"/shared/bobs?acl", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(doc))
	sigv4.Sign(req, e.bobID, e.bobSecret, "us-east-1", sigv4.UnsignedPayload, time.Now())
	codec := make(chan string, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			codec <- err.Error()
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		_, code, _ := strings.Cut(string(data), "<Code>")
		code, _, _ = strings.Cut(code, "<")
		codec <- fmt.Sprint(resp.StatusCode, " ", code)
	}()
	pw.Write([]byte(doc[:10]))
	time.Sleep(200 * time.Millisecond) // the request is past its admission, reading its body
	mustPut(t, e.alice, "shared", "bobs", []byte("alice's now"))
	pw.Write([]byte(doc[10:]))
	pw.Close()
	if got := <-codec; got != "403 AccessDenied" {
		t.Errorf("bob's slow ACL on the object alice wrote meanwhile: %s, want 403 AccessDenied", got)
	}
	if owner, acl, err := objectACL(t, e.alice, "shared", "bobs"); err != nil || owner != "alice" || acl != privateACL {
		t.Errorf("alice's object after bob's refused ACL: owner %q, ACL %s, %v", owner, acl, err)
	}
}

// TestGrantsToUnknownAccounts: with the platform's account lookup, an
// ACL naming an account that does not exist is refused and changes
// nothing, so that no grant waits for whoever takes the name later.
func TestGrantsToUnknownAccounts(t *testing.T) {
	e := startEnv(t, false, s3api.Options{AccountExists: func(name string) (bool, error) { return name == "alice" || name == "bob", nil }})
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("grants"), ObjectOwnership: types.ObjectOwnershipObjectWriter, GrantRead: aws.String(`id="nobody"`)})
	want(t, "a bucket made granting nobody", err, "InvalidArgument")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("grants"), ObjectOwnership: types.ObjectOwnershipObjectWriter}); err != nil {
		t.Fatal(err)
	}
	_, err = c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("grants"), GrantRead: aws.String(`id="bob", id="nobody"`)})
	want(t, "a bucket ACL granting nobody", err, "InvalidArgument")
	want(t, "an upload granting nobody", put(c, "grants", "k", "v", func(in *s3.PutObjectInput) { in.GrantRead = aws.String(`id="nobody"`) }), "InvalidArgument")
	mustPut(t, c, "grants", "k", []byte("v"))
	_, err = c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("grants"), Key: aws.String("k"), GrantRead: aws.String(`id="nobody"`)})
	want(t, "an object ACL granting nobody", err, "InvalidArgument")
	if _, err := c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String("grants"), Key: aws.String("k"), GrantRead: aws.String(`id="bob"`)}); err != nil {
		t.Errorf("an object ACL granting bob: %v", err)
	}
	if got := bucketACL(t, c, "grants"); got != privateACL {
		t.Errorf("the bucket's ACL after refusals: %s", got)
	}
}

// TestCrossAccountCopies: a copy from another account's bucket into one's
// own (CopyObject and UploadPartCopy) is granted by the source bucket's
// policy, or, with its ACLs enabled, by the object's ACL; its tags need
// their own grant; a Deny holds; nothing is written when refused.
func TestCrossAccountCopies(t *testing.T) {
	e := newCrossEnv(t)
	ctx := context.Background()
	mustBuckets(t, e.bob, "bsrc")
	mustBuckets(t, e.alice, "adst")
	if err := put(e.bob, "bsrc", "b", "bob's data", func(in *s3.PutObjectInput) { in.Tagging = aws.String("t=v") }); err != nil {
		t.Fatal(err)
	}
	mustPut(t, e.bob, "bsrc", "private/p", []byte("p"))
	copyTo := func(c *s3.Client, bucket, key, source string, edit ...func(*s3.CopyObjectInput)) error {
		in := &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), CopySource: aws.String(source)}
		for _, f := range edit {
			f(in)
		}
		_, err := c.CopyObject(ctx, in)
		return err
	}
	replaceTags := func(in *s3.CopyObjectInput) { in.TaggingDirective = types.TaggingDirectiveReplace }
	want(t, "alice copies bob's object, not granted", copyTo(e.alice, "adst", "c", "bsrc/b", replaceTags), "AccessDenied")
	want(t, "alice copies from a missing bucket", copyTo(e.alice, "adst", "c", "nobucket/b"), "NoSuchBucket")

	policy := func(actions string) {
		t.Helper()
		if err := putPolicy(e.bob, "bsrc", `{"Version":"2012-10-17","Statement":[
			{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::alice:root"},"Action":`+actions+`,"Resource":"arn:aws:s3:::bsrc/*"},
			{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bsrc/private/*"}]}`); err != nil {
			t.Fatal(err)
		}
	}
	policy(`"s3:GetObject"`)
	want(t, "alice copies bob's tagged object keeping its tags, without s3:GetObjectTagging", copyTo(e.alice, "adst", "c", "bsrc/b"), "AccessDenied")
	want(t, "alice copies bob's object with her own tags", copyTo(e.alice, "adst", "c", "bsrc/b", replaceTags), "")
	if body, err := get(e.alice, "adst", "c"); err != nil || body != "bob's data" {
		t.Errorf("alice's copy: %q, %v", body, err)
	}
	want(t, "alice copies what bob's policy denies", copyTo(e.alice, "adst", "p", "bsrc/private/p", replaceTags), "AccessDenied")
	want(t, "carol copies bob's object", copyTo(e.carol, "adst", "x", "bsrc/b", replaceTags), "AccessDenied")
	mustBuckets(t, e.carol, "cdst")
	want(t, "carol copies bob's object into her own bucket", copyTo(e.carol, "cdst", "x", "bsrc/b", replaceTags), "AccessDenied")
	policy(`["s3:GetObject","s3:GetObjectTagging"]`)
	want(t, "alice copies bob's object with its tags", copyTo(e.alice, "adst", "tagged", "bsrc/b"), "")
	if out, err := e.alice.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("adst"), Key: aws.String("tagged")}); err != nil || len(out.TagSet) != 1 {
		t.Errorf("the copy's tags: %v, %v", out, err)
	}

	// UploadPartCopy, the same grant.
	cu, err := e.alice.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("adst"), Key: aws.String("m")})
	if err != nil {
		t.Fatal(err)
	}
	part, err := e.alice.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("adst"), Key: aws.String("m"), UploadId: cu.UploadId,
		PartNumber: aws.Int32(1), CopySource: aws.String("bsrc/b")})
	if err != nil {
		t.Fatalf("alice's UploadPartCopy from bob's bucket: %v", err)
	}
	if _, err := e.alice.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("adst"), Key: aws.String("m"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.CopyPartResult.ETag}}}}); err != nil {
		t.Fatal(err)
	}
	if body, err := get(e.alice, "adst", "m"); err != nil || body != "bob's data" {
		t.Errorf("alice's part copy: %q, %v", body, err)
	}
	_, err = e.alice.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("adst"), Key: aws.String("m2"), UploadId: cu.UploadId,
		PartNumber: aws.Int32(1), CopySource: aws.String("bsrc/private/p")})
	want(t, "alice's UploadPartCopy of what bob's policy denies", err, "AccessDenied")

	// With the source bucket's ACLs enabled, the object's own grant.
	if _, err := e.bob.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bacl"), ObjectOwnership: types.ObjectOwnershipObjectWriter}); err != nil {
		t.Fatal(err)
	}
	want(t, "bob's object granting alice", put(e.bob, "bacl", "granted", "g", func(in *s3.PutObjectInput) { in.GrantRead = aws.String(`id="alice"`) }), "")
	mustPut(t, e.bob, "bacl", "kept", []byte("k"))
	want(t, "alice copies an object whose ACL grants her", copyTo(e.alice, "adst", "g", "bacl/granted"), "")
	want(t, "alice copies an object whose ACL does not", copyTo(e.alice, "adst", "k", "bacl/kept"), "AccessDenied")
	want(t, "another object granting alice", put(e.bob, "bacl", "denied", "d", func(in *s3.PutObjectInput) { in.GrantRead = aws.String(`id="alice"`) }), "")
	if err := putPolicy(e.bob, "bacl", `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bacl/denied"}]}`); err != nil {
		t.Fatal(err)
	}
	want(t, "alice copies an object its ACL grants her and the policy denies", copyTo(e.alice, "adst", "d", "bacl/denied"), "AccessDenied")
	if keys, err := list(e.alice, "adst"); err != nil || strings.Join(keys, ",") != "c,g,m,tagged" {
		t.Errorf("alice's bucket after the copies: %v, %v", keys, err)
	}
}

// TestCrossAccountCopyReview: what a review of copies from other
// accounts' buckets found, each tried: the source's expected owner is
// the source bucket's; the policy's s3:VersionId is the copied version's,
// not the request's query; nothing of a source the requester may not read
// is told (its existence, its ETag by a precondition).
func TestCrossAccountCopyReview(t *testing.T) {
	e := newCrossEnv(t)
	ctx := context.Background()
	mustBuckets(t, e.bob, "bsrc")
	mustBuckets(t, e.alice, "adst")
	if _, err := e.bob.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("bsrc"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	putVersion := func(body string) string {
		t.Helper()
		out, err := e.bob.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bsrc"), Key: aws.String("k"), Body: strings.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.VersionId)
	}
	v1, v2 := putVersion("one"), putVersion("two")
	if err := putPolicy(e.bob, "bsrc", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::alice:root"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::bsrc/*"},
		{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::alice:root"},"Action":"s3:GetObjectVersion","Resource":"arn:aws:s3:::bsrc/*",
		 "Condition":{"StringEquals":{"s3:VersionId":"`+v1+`"}}}]}`); err != nil {
		t.Fatal(err)
	}
	copyIn := &s3.CopyObjectInput{Bucket: aws.String("adst"), Key: aws.String("c"), CopySource: aws.String("bsrc/k"), ExpectedSourceBucketOwner: aws.String("bob")}
	if _, err := e.alice.CopyObject(ctx, copyIn); err != nil {
		t.Errorf("a copy expecting the source's owner: %v", err)
	}
	copyIn.ExpectedSourceBucketOwner = aws.String("alice")
	_, err := e.alice.CopyObject(ctx, copyIn)
	want(t, "a copy expecting the target's owner for the source", err, "AccessDenied")
	copyIn.ExpectedSourceBucketOwner = nil
	copyIn.CopySource = aws.String("bsrc/k?versionId=" + v1)
	if _, err := e.alice.CopyObject(ctx, copyIn); err != nil {
		t.Errorf("a copy of the version the policy grants: %v", err)
	}
	copyIn.CopySource = aws.String("bsrc/k?versionId=" + v2)
	_, err = e.alice.CopyObject(ctx, copyIn)
	want(t, "a copy of a version the policy does not grant", err, "AccessDenied")
	// The request's own ?versionId (which a copy ignores) is not the
	// version judged.
	r := e.signed(t, "PUT", "/adst/c?versionId="+v1, nil, "", map[string]string{"X-Amz-Copy-Source": "bsrc/k?versionId=" + v2})
	if status, got := do(t, r); status != 403 {
		t.Errorf("a copy of %s naming %s in its query: %d %s, want 403", v2, v1, status, got.Code)
	}

	// A source bucket whose ACLs are enabled, its objects not granted.
	if _, err := e.bob.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bacl"), ObjectOwnership: types.ObjectOwnershipObjectWriter}); err != nil {
		t.Fatal(err)
	}
	etag := mustPut(t, e.bob, "bacl", "secret", []byte("s"))
	for _, tc := range []struct {
		name, source string
		edit         func(*s3.CopyObjectInput)
	}{
		{"a missing key", "bacl/none", nil},
		{"a wrong ETag", "bacl/secret", func(in *s3.CopyObjectInput) { in.CopySourceIfMatch = aws.String(`"0123"`) }},
		{"the right ETag", "bacl/secret", func(in *s3.CopyObjectInput) { in.CopySourceIfNoneMatch = aws.String(etag) }},
	} {
		in := &s3.CopyObjectInput{Bucket: aws.String("adst"), Key: aws.String("x"), CopySource: aws.String(tc.source)}
		if tc.edit != nil {
			tc.edit(in)
		}
		_, err := e.alice.CopyObject(ctx, in)
		want(t, "alice copies an ungranted source, "+tc.name, err, "AccessDenied")
		_, err = e.alice.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("adst"), Key: aws.String("x"), UploadId: aws.String("0123456789abcdef0123456789abcdef"),
			PartNumber: aws.Int32(1), CopySource: aws.String(tc.source)})
		want(t, "alice's part copy of an ungranted source, "+tc.name, err, "AccessDenied")
	}
}

// TestCrossAccountLocksNeedThePolicy: in a bucket with Object Lock whose
// ACLs are enabled, another account that writes by the bucket ACL's grant
// owns what it writes, but no ACL grants it a lock, on its own objects
// either: without the bucket policy's Allow, PutObjectRetention,
// PutObjectLegalHold and their reads are refused and change nothing, so
// the bucket's owner can still delete the version; with the Allow, they
// work.
func TestCrossAccountLocksNeedThePolicy(t *testing.T) {
	e := newCrossEnv(t)
	ctx := context.Background()
	b := aws.String("vault")
	if _, err := e.alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectOwnership: types.ObjectOwnershipObjectWriter,
		ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantWrite: aws.String(`id="bob"`), GrantRead: aws.String(`id="bob"`)}); err != nil {
		t.Fatal(err)
	}
	lock := func(key string, version *string) (retention, hold error) {
		_, retention = e.bob.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: aws.String(key), VersionId: version,
			Retention:         &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance, RetainUntilDate: aws.Time(time.Now().Add(100 * 365 * 24 * time.Hour))},
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
		_, hold = e.bob.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: b, Key: aws.String(key), VersionId: version,
			LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOn}, ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
		return retention, hold
	}

	out, err := e.bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("junk"), Body: strings.NewReader("x")})
	if err != nil {
		t.Fatal(err)
	}
	if owner, _, err := objectACL(t, e.bob, "vault", "junk"); err != nil || owner != "bob" {
		t.Fatalf("bob's object: owner %q, %v", owner, err)
	}
	retention, hold := lock("junk", out.VersionId)
	want(t, "bob's PutObjectRetention on his object by the ACL's grant", retention, "AccessDenied")
	want(t, "bob's PutObjectLegalHold on his object by the ACL's grant", hold, "AccessDenied")
	_, err = e.bob.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: b, Key: aws.String("junk"), VersionId: out.VersionId})
	want(t, "bob's GetObjectRetention by the ACL's grant", err, "AccessDenied")
	_, err = e.bob.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: b, Key: aws.String("junk"), VersionId: out.VersionId})
	want(t, "bob's GetObjectLegalHold by the ACL's grant", err, "AccessDenied")
	// Nothing was locked: alice deletes the version for good (which a
	// COMPLIANCE retention or a legal hold would refuse).
	if _, err := e.alice.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("junk"), VersionId: out.VersionId}); err != nil {
		t.Fatalf("alice deletes the version bob could not lock: %v", err)
	}

	// The bucket policy's Allow grants bob the locks on what he writes.
	if err := putPolicy(e.alice, "vault", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::bob:root"},
		"Action":["s3:PutObjectRetention","s3:PutObjectLegalHold","s3:GetObjectRetention","s3:GetObjectLegalHold"],"Resource":"arn:aws:s3:::vault/*"}]}`); err != nil {
		t.Fatal(err)
	}
	out, err = e.bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("kept"), Body: strings.NewReader("x")})
	if err != nil {
		t.Fatal(err)
	}
	retention, hold = lock("kept", out.VersionId)
	want(t, "bob's PutObjectRetention allowed by the policy", retention, "")
	want(t, "bob's PutObjectLegalHold allowed by the policy", hold, "")
	if got, err := e.bob.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: b, Key: aws.String("kept"), VersionId: out.VersionId}); err != nil ||
		got.LegalHold.Status != types.ObjectLockLegalHoldStatusOn {
		t.Fatalf("bob's GetObjectLegalHold allowed by the policy: %+v, %v", got, err)
	}
}

// TestCrossAccountKMS: a policy grants bob reading and writing alice's
// bucket. He reads its SSE-S3 objects, but none sealed with her KMS keys
// (her aws/s3 key, a key of her own, dual-layer), whole, by range or by
// HEAD; he copies none; and he writes nothing under her keys, the
// bucket's default or a key he names. Each refusal is 403 AccessDenied
// and changes nothing, as S3 answers a requester whom the key's policy
// does not name (ours name only their own account). Alice reads all.
func TestCrossAccountKMS(t *testing.T) {
	e := newCrossEnv(t)
	ctx := context.Background()
	mustBuckets(t, e.alice, "vault")
	own := mustKey(t, e.env, "alice", "own")
	if err := putPolicy(e.alice, "vault", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::bob:root"},"Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::vault/*"}]}`); err != nil {
		t.Fatal(err)
	}
	// Bob's refused write asks for alice's default key before she has
	// one: it must not make it.
	want(t, "bob writes under alice's default key, before it exists", put(e.bob, "vault", "first", "x", func(in *s3.PutObjectInput) {
		in.ServerSideEncryption = types.ServerSideEncryptionAwsKms
	}), "AccessDenied")
	for _, k := range e.kms.List(ctx, "alice") {
		if k.Name == kms.DefaultKeyName {
			t.Errorf("bob's refused write made alice's default key: %+v", k)
		}
	}
	sealed := map[string]func(*s3.PutObjectInput){
		"kms": func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAwsKms },
		"cmk": func(in *s3.PutObjectInput) {
			in.ServerSideEncryption, in.SSEKMSKeyId = types.ServerSideEncryptionAwsKms, aws.String(own.ID)
		},
		"dsse": func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAwsKmsDsse },
	}
	want(t, "alice's SSE-S3 object", put(e.alice, "vault", "s3", "plain", func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 }), "")
	for key, edit := range sealed {
		want(t, "alice's "+key+" object", put(e.alice, "vault", key, "secret "+key, edit), "")
	}
	absent := func(key string) {
		t.Helper()
		if _, err := e.alice.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("vault"), Key: aws.String(key)}); apiCode(err) != "NotFound" {
			t.Errorf("a refused write made %s: %v", key, err)
		}
	}

	absent("first")
	if body, err := get(e.bob, "vault", "s3"); err != nil || body != "plain" {
		t.Errorf("bob reads the SSE-S3 object by the policy: %q, %v", body, err)
	}
	for key := range sealed {
		_, err := get(e.bob, "vault", key)
		want(t, "bob reads the "+key+" object", err, "AccessDenied")
		_, err = e.bob.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("vault"), Key: aws.String(key), Range: aws.String("bytes=0-2")})
		want(t, "bob reads a range of the "+key+" object", err, "AccessDenied")
		if _, err := e.bob.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("vault"), Key: aws.String(key)}); httpStatus(err) != http.StatusForbidden {
			t.Errorf("bob's HEAD of the %s object: %v, want 403", key, err)
		}
		_, err = e.bob.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("vault"), Key: aws.String("copy-" + key), CopySource: aws.String("vault/" + key),
			ServerSideEncryption: types.ServerSideEncryptionAes256})
		want(t, "bob copies the "+key+" object", err, "AccessDenied")
		absent("copy-" + key)
		want(t, "bob writes under alice's "+key+" key", put(e.bob, "vault", "bob-"+key, "x", sealed[key]), "AccessDenied")
		absent("bob-" + key)
		if body, err := get(e.alice, "vault", key); err != nil || body != "secret "+key {
			t.Errorf("alice reads her %s object: %q, %v", key, body, err)
		}
	}

	// The bucket's default: bob's plain writes would be sealed with
	// alice's key, and are refused, whole and multipart; naming SSE-S3
	// he writes.
	if _, err := e.alice.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: aws.String("vault"),
		ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{Rules: []types.ServerSideEncryptionRule{{
			ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAwsKms, KMSMasterKeyID: aws.String(own.ID)}}}}}); err != nil {
		t.Fatal(err)
	}
	want(t, "bob writes under the bucket's default KMS key", put(e.bob, "vault", "bob-default", "x"), "AccessDenied")
	absent("bob-default")
	_, err := e.bob.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("vault"), Key: aws.String("bob-mp")})
	want(t, "bob starts an upload under the bucket's default KMS key", err, "AccessDenied")
	if ups, err := e.alice.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("vault")}); err != nil || len(ups.Uploads) != 0 {
		t.Errorf("a refused upload was started: %v, %v", ups, err)
	}
	want(t, "bob writes naming SSE-S3", put(e.bob, "vault", "bob-s3", "mine", func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 }), "")
	if body, err := get(e.bob, "vault", "bob-s3"); err != nil || body != "mine" {
		t.Errorf("bob reads back his SSE-S3 object: %q, %v", body, err)
	}
	want(t, "alice writes under her default", put(e.alice, "vault", "alice-default", "hers"), "")
	_, err = get(e.bob, "vault", "alice-default")
	want(t, "bob reads what alice's default sealed", err, "AccessDenied")
}
