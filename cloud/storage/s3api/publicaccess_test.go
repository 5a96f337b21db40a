package s3api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// TestPublicAccessBlock: a bucket's Block Public Access settings, put,
// read and deleted through the AWS SDK for Go, each blocking what S3's
// does: BlockPublicPolicy a public policy, RestrictPublicBuckets what a
// public policy grants anonymous requests (reads and writes),
// BlockPublicAcls a public-read ACL, IgnorePublicAcls the public toggle.
// The owner's own access never changes, and deleting the settings
// restores what was blocked.
func TestPublicAccessBlock(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "site")
	mustPut(t, c, "site", "pub/a", []byte("hello"))
	anon := e.anonymousSDK()
	get := func() (*s3.GetPublicAccessBlockOutput, error) {
		return c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String("site")})
	}
	put := func(acls, ignore, policy, restrict bool) {
		t.Helper()
		if _, err := c.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: aws.String("site"),
			PublicAccessBlockConfiguration: &types.PublicAccessBlockConfiguration{BlockPublicAcls: aws.Bool(acls),
				IgnorePublicAcls: aws.Bool(ignore), BlockPublicPolicy: aws.Bool(policy), RestrictPublicBuckets: aws.Bool(restrict)}}); err != nil {
			t.Fatalf("PutPublicAccessBlock: %v", err)
		}
	}
	del := func() {
		t.Helper()
		if _, err := c.DeletePublicAccessBlock(ctx, &s3.DeletePublicAccessBlockInput{Bucket: aws.String("site")}); err != nil {
			t.Fatalf("DeletePublicAccessBlock: %v", err)
		}
	}
	anonGet := func() int {
		status, _ := e.anonymous(t, http.MethodGet, "/site/pub/a", nil)
		return status
	}
	anonPut := func() error {
		_, err := anon.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("site"), Key: aws.String("pub/up"), Body: strings.NewReader("x")})
		return err
	}

	if _, err := get(); apiCode(err) != "NoSuchPublicAccessBlockConfiguration" {
		t.Errorf("GetPublicAccessBlock of a new bucket: %v, want NoSuchPublicAccessBlockConfiguration", err)
	}
	if status, code := e.anonymousBody(t, http.MethodPut, "/site?publicAccessBlock", "<PublicAccessBlockConfiguration/>", nil); status != http.StatusForbidden || code != "AccessDenied" {
		t.Errorf("anonymous PutPublicAccessBlock: %d %s, want 403 AccessDenied", status, code)
	}
	if _, err := c.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: aws.String("nope"),
		PublicAccessBlockConfiguration: &types.PublicAccessBlockConfiguration{BlockPublicAcls: aws.Bool(true)}}); apiCode(err) != "NoSuchBucket" {
		t.Errorf("PutPublicAccessBlock of a missing bucket: %v, want NoSuchBucket", err)
	}

	// BlockPublicPolicy: a public policy is refused, a private one kept.
	put(false, false, true, false)
	if out, err := get(); err != nil || !aws.ToBool(out.PublicAccessBlockConfiguration.BlockPublicPolicy) ||
		aws.ToBool(out.PublicAccessBlockConfiguration.BlockPublicAcls) || aws.ToBool(out.PublicAccessBlockConfiguration.RestrictPublicBuckets) {
		t.Errorf("GetPublicAccessBlock after a put: %+v, %v", out, err)
	}
	public := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::site/pub/*"}]}`
	if err := putPolicy(c, "site", public); apiCode(err) != "AccessDenied" {
		t.Errorf("a public policy under BlockPublicPolicy: %v, want AccessDenied", err)
	}
	if _, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("site")}); apiCode(err) != "NoSuchBucketPolicy" {
		t.Errorf("the refused policy was stored: %v", err)
	}
	private := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::site/keep/*"}]}`
	if err := putPolicy(c, "site", private); err != nil {
		t.Errorf("a policy that is not public under BlockPublicPolicy: %v", err)
	}

	// RestrictPublicBuckets: the public policy grants anonymous requests
	// nothing while it is set.
	del()
	if err := putPolicy(c, "site", public); err != nil {
		t.Fatal(err)
	}
	if got := anonGet(); got != http.StatusOK {
		t.Fatalf("anonymous GET under a public policy: %d", got)
	}
	if err := anonPut(); err != nil {
		t.Fatalf("anonymous PUT under a public policy: %v", err)
	}
	put(false, false, false, true)
	if got := anonGet(); got != http.StatusForbidden {
		t.Errorf("anonymous GET under RestrictPublicBuckets: %d, want 403", got)
	}
	if err := anonPut(); apiCode(err) != "AccessDenied" {
		t.Errorf("anonymous PUT under RestrictPublicBuckets: %v, want AccessDenied", err)
	}
	if got := string(ownerRead(t, c, "site", "pub/a")); got != "hello" {
		t.Errorf("the owner reads %q under RestrictPublicBuckets", got)
	}
	del()
	if got := anonGet(); got != http.StatusOK {
		t.Errorf("anonymous GET after the settings' delete: %d, want 200", got)
	}
	if _, err := c.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("site")}); err != nil {
		t.Fatal(err)
	}

	// BlockPublicAcls: no public-read ACL, on the bucket or an object.
	put(true, false, false, false)
	if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("site"), ACL: types.BucketCannedACLPublicRead}); apiCode(err) != "AccessDenied" {
		t.Errorf("PutBucketAcl public-read under BlockPublicAcls: %v, want AccessDenied", err)
	}
	if got := anonGet(); got != http.StatusForbidden {
		t.Errorf("the refused ACL made the bucket public: anonymous GET %d", got)
	}
	del()
	if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("site"), ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	put(true, false, false, false)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("site"), Key: aws.String("pub/b"), Body: strings.NewReader("x"),
		ACL: types.ObjectCannedACLPublicRead}); apiCode(err) != "AccessDenied" {
		t.Errorf("PutObject with public-read under BlockPublicAcls: %v, want AccessDenied", err)
	}
	// Refused on a bucket public already too, as S3 refuses any public
	// ACL under BlockPublicAcls.
	if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("site"), ACL: types.BucketCannedACLPublicRead}); apiCode(err) != "AccessDenied" {
		t.Errorf("PutBucketAcl public-read on a public bucket under BlockPublicAcls: %v, want AccessDenied", err)
	}
	// A public bucket stays readable: BlockPublicAcls blocks new grants.
	if got := anonGet(); got != http.StatusOK {
		t.Errorf("anonymous GET of a public bucket under BlockPublicAcls alone: %d, want 200", got)
	}

	// IgnorePublicAcls: the public toggle gives nothing.
	put(false, true, false, false)
	if got := anonGet(); got != http.StatusForbidden {
		t.Errorf("anonymous GET of a public bucket under IgnorePublicAcls: %d, want 403", got)
	}
	del()
	if got := anonGet(); got != http.StatusOK {
		t.Errorf("anonymous GET after IgnorePublicAcls is deleted: %d, want 200", got)
	}
	if _, err := get(); apiCode(err) != "NoSuchPublicAccessBlockConfiguration" {
		t.Errorf("GetPublicAccessBlock after the delete: %v, want NoSuchPublicAccessBlockConfiguration", err)
	}
	for _, v := range []string{"maybe", "1", "True"} {
		bad := "<PublicAccessBlockConfiguration><BlockPublicAcls>" + v + "</BlockPublicAcls></PublicAccessBlockConfiguration>"
		if status, se := do(t, e.signed(t, http.MethodPut, "/site?publicAccessBlock", strings.NewReader(bad), "", nil)); status != http.StatusBadRequest || se.Code != "MalformedXML" {
			t.Errorf("PutPublicAccessBlock with %q for a boolean: %d %s, want 400 MalformedXML", v, status, se.Code)
		}
	}
	if _, err := get(); apiCode(err) != "NoSuchPublicAccessBlockConfiguration" {
		t.Errorf("a refused PutPublicAccessBlock stored settings: %v", err)
	}
}

// boto3PublicAccess is boto3 as an owner and as an anonymous client
// (botocore's UNSIGNED): the owner sets a drop-box policy and Block
// Public Access settings, the anonymous client uploads (one request and a
// managed multipart upload) while they allow it and is refused while
// RestrictPublicBuckets holds.
// boto3Clients begins the boto3 scripts of the policy tests: given the
// endpoint and a bucket, a client signing with the test's key (from the
// environment) as s3, an unsigned one as anon, and code(f), the S3 error
// code f raises ("ok" when none).
const boto3Clients = `
import sys, io, json, boto3, botocore
from botocore.config import Config
from botocore.exceptions import ClientError
url, bucket = sys.argv[1:3]
cfg = Config(s3={"addressing_style": "path"})
s3 = boto3.client("s3", endpoint_url=url, config=cfg)
anon = boto3.client("s3", endpoint_url=url, config=cfg.merge(Config(signature_version=botocore.UNSIGNED)))
def code(f):
    try:
        f()
    except ClientError as e:
        return e.response["Error"]["Code"]
    return "ok"
`

const boto3PublicAccess = boto3Clients + `
from boto3.s3.transfer import TransferConfig
assert code(lambda: s3.get_public_access_block(Bucket=bucket)) == "NoSuchPublicAccessBlockConfiguration"
policy = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*",
    "Action": "s3:PutObject", "Resource": "arn:aws:s3:::%s/in/*" % bucket}]})
s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={"BlockPublicPolicy": True})
got = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
assert got == {"BlockPublicAcls": False, "IgnorePublicAcls": False, "BlockPublicPolicy": True, "RestrictPublicBuckets": False}, got
assert code(lambda: s3.put_bucket_policy(Bucket=bucket, Policy=policy)) == "AccessDenied"
s3.delete_public_access_block(Bucket=bucket)
s3.put_bucket_policy(Bucket=bucket, Policy=policy)
assert s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is True
anon.put_object(Bucket=bucket, Key="in/one", Body=b"hello")
big = bytes(range(256)) * (9 * 4096 + 13)
anon.upload_fileobj(io.BytesIO(big), bucket, "in/big", Config=TransferConfig(multipart_threshold=8 << 20, multipart_chunksize=8 << 20))
assert s3.get_object(Bucket=bucket, Key="in/big")["Body"].read() == big
assert code(lambda: anon.put_object(Bucket=bucket, Key="out/x", Body=b"x")) == "AccessDenied"
s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={"RestrictPublicBuckets": True})
assert code(lambda: anon.put_object(Bucket=bucket, Key="in/two", Body=b"x")) == "AccessDenied"
assert code(lambda: s3.head_object(Bucket=bucket, Key="in/two")) == "404"
print("ok")
`

// TestBoto3PublicAccess: boto3, signed and unsigned, with Block Public
// Access and anonymous writes.
func TestBoto3PublicAccess(t *testing.T) {
	python := tooltest.Need(t, "python3", "-c", "import boto3")
	e, _, _ := newBucket(t, "boto-public")
	e.run(t, python, "-c", boto3PublicAccess, e.srv.URL, "boto-public")
}
