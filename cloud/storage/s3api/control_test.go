package s3api_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/sigv4"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

const accountPAB = "/v20180820/configuration/publicAccessBlock"

// control sends an S3 Control request for account's settings, signed with
// the key id/secret, and answers its status, S3 error code and body.
func (e *env) control(t *testing.T, id, secret, method, account, body string) (int, string, string) {
	t.Helper()
	r, err := http.NewRequest(method, e.srv.URL+accountPAB, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("X-Amz-Account-Id", account)
	sigv4.Sign(r, id, secret, "us-east-1", sigv4.UnsignedPayload, time.Now())
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	_, code, _ := strings.Cut(string(data), "<Code>")
	code, _, _ = strings.Cut(code, "<")
	return resp.StatusCode, code, string(data)
}

func settings(acls, ignore, policy, restrict bool) string {
	b := func(v bool) string { return map[bool]string{true: "true", false: "false"}[v] }
	return `<PublicAccessBlockConfiguration xmlns="http://awss3control.amazonaws.com/doc/2018-08-20/"><BlockPublicAcls>` + b(acls) +
		`</BlockPublicAcls><IgnorePublicAcls>` + b(ignore) + `</IgnorePublicAcls><BlockPublicPolicy>` + b(policy) +
		`</BlockPublicPolicy><RestrictPublicBuckets>` + b(restrict) + `</RestrictPublicBuckets></PublicAccessBlockConfiguration>`
}

// TestAccountPublicAccessBlock: an account's own settings (S3 Control)
// hold for every bucket it owns besides the bucket's own, the most
// restrictive of the two; only its whole-account keys read and change
// them; removing them gives back what they blocked.
func TestAccountPublicAccessBlock(t *testing.T) {
	e := newCrossEnv(t)
	ctx := context.Background()
	mustBuckets(t, e.alice, "site", "other")
	mustPut(t, e.alice, "site", "k", []byte("v"))
	if _, err := e.alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("site"), ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	if status, _ := e.anonymous(t, "GET", "/site/k", nil); status != 200 {
		t.Fatalf("anonymous read of a public bucket: %d", status)
	}
	if status, code, body := e.control(t, e.id, e.secret, "GET", "alice", ""); status != 404 || code != "NoSuchPublicAccessBlockConfiguration" ||
		!strings.Contains(body, "<ErrorResponse><Error>") {
		t.Errorf("an account without settings: %d %s", status, body)
	}

	scopedID, scopedSecret := e.key(t, "alice", cloudstore.PermReadWrite, "site")
	readID, readSecret := e.key(t, "alice", cloudstore.PermRead, "*")
	for _, tc := range []struct {
		name, id, secret, account, code string
		status                          int
	}{
		{"another account's id", e.id, e.secret, "bob", "AccessDenied", 403},
		{"bob's key for alice", e.bobID, e.bobSecret, "alice", "AccessDenied", 403},
		{"a key scoped to a bucket", scopedID, scopedSecret, "alice", "AccessDenied", 403},
		{"a read-only key", readID, readSecret, "alice", "AccessDenied", 403},
	} {
		if status, code, _ := e.control(t, tc.id, tc.secret, "PUT", tc.account, settings(false, true, true, false)); status != tc.status || code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, status, code, tc.status, tc.code)
		}
	}
	if status, code, _ := e.control(t, e.id, e.secret, "PUT", "alice", "<PublicAccessBlockConfiguration><BlockPublicAcls>yes</BlockPublicAcls></PublicAccessBlockConfiguration>"); status != 400 || code != "MalformedXML" {
		t.Errorf("settings that do not parse: %d %s", status, code)
	}
	if status, _ := e.anonymous(t, "GET", "/site/k", nil); status != 200 {
		t.Fatalf("refused settings changed what holds: anonymous read %d", status)
	}

	if status, code, _ := e.control(t, e.id, e.secret, "PUT", "alice", settings(true, true, true, false)); status != 200 {
		t.Fatalf("PutPublicAccessBlock for the account: %d %s", status, code)
	}
	if status, _, body := e.control(t, e.id, e.secret, "GET", "alice", ""); status != 200 || !strings.Contains(body, "<IgnorePublicAcls>true</IgnorePublicAcls>") ||
		!strings.Contains(body, "<RestrictPublicBuckets>false</RestrictPublicBuckets>") || !strings.Contains(body, "awss3control") {
		t.Errorf("GetPublicAccessBlock for the account: %d %s", status, body)
	}
	// Every bucket of alice's: the toggle ignored, public ACLs and
	// policies refused; the bucket's own settings are still none.
	if status, _ := e.anonymous(t, "GET", "/site/k", nil); status != 403 {
		t.Errorf("anonymous read under the account's IgnorePublicAcls: %d", status)
	}
	_, err := e.alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("other"), ACL: types.BucketCannedACLPublicRead})
	want(t, "a public ACL under the account's BlockPublicAcls", err, "AccessDenied")
	_, err = e.alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("leak"), ACL: types.BucketCannedACLPublicRead})
	want(t, "a bucket made public-read under the account's BlockPublicAcls", err, "AccessDenied")
	_, err = e.alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("leak"), ObjectOwnership: types.ObjectOwnershipObjectWriter,
		GrantRead: aws.String(`uri="http://acs.amazonaws.com/groups/global/AllUsers"`)})
	want(t, "a bucket made granting everyone under the account's BlockPublicAcls", err, "AccessDenied")
	if _, err := e.st.Bucket("alice", "leak"); err == nil {
		t.Error("a refused CreateBucket made the bucket")
	}
	err = putPolicy(e.alice, "other", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::other/*"}]}`)
	want(t, "a public policy under the account's BlockPublicPolicy", err, "AccessDenied")
	_, err = e.alice.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String("other")})
	want(t, "the bucket's own settings", err, "NoSuchPublicAccessBlockConfiguration")
	if b, err := e.st.PublicAccessBlock("other"); err != nil || b == nil || !b.BlockPublicAcls || b.RestrictPublicBuckets {
		t.Errorf("the settings that hold for a bucket: %+v, %v", b, err)
	}
	// bob's buckets are not alice's account's.
	mustBuckets(t, e.bob, "bobs")
	if _, err := e.bob.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("bobs"), ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Errorf("bob's public ACL under alice's account settings: %v", err)
	}
	// The bucket's own settings add to the account's.
	if _, err := e.alice.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: aws.String("other"),
		PublicAccessBlockConfiguration: &types.PublicAccessBlockConfiguration{RestrictPublicBuckets: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	if b, err := e.st.PublicAccessBlock("other"); err != nil || b == nil || !b.BlockPublicAcls || !b.RestrictPublicBuckets {
		t.Errorf("the bucket's and the account's settings together: %+v, %v", b, err)
	}

	if status, code, _ := e.control(t, e.id, e.secret, "DELETE", "alice", ""); status != 200 {
		t.Fatalf("DeletePublicAccessBlock for the account: %d %s", status, code)
	}
	if status, _ := e.anonymous(t, "GET", "/site/k", nil); status != 200 {
		t.Errorf("anonymous read once the account's settings are gone: %d", status)
	}
	if status, code, _ := e.control(t, e.id, e.secret, "GET", "alice", ""); status != 404 || code != "NoSuchPublicAccessBlockConfiguration" {
		t.Errorf("after the deletion: %d %s", status, code)
	}
	// Anonymous, and other S3 Control operations.
	r, _ := http.NewRequest("GET", e.srv.URL+accountPAB, nil)
	r.Header.Set("X-Amz-Account-Id", "alice")
	if resp, err := http.DefaultClient.Do(r); err != nil || resp.StatusCode != 403 {
		t.Errorf("an anonymous S3 Control request: %v, %v", resp, err)
	} else {
		resp.Body.Close()
	}
	r = e.signed(t, "GET", "/v20180820/accesspoint", nil, "", map[string]string{"X-Amz-Account-Id": "alice"})
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 501 || !strings.Contains(string(data), "<ErrorResponse><Error><Code>NotImplemented</Code>") {
		t.Errorf("another S3 Control operation: %d %s", resp.StatusCode, data)
	}
}

// TestBoto3AccountPublicAccessBlock: boto3's s3control client puts, gets
// and deletes the account's settings.
func TestBoto3AccountPublicAccessBlock(t *testing.T) {
	python := tooltest.Need(t, "python3", "-c", "import boto3")
	e := newEnv(t)
	e.run(t, python, "-c", boto3AccountPAB, e.srv.URL, "boto-pab")
}

const boto3AccountPAB = boto3Clients + `
# S3 Control puts the account id before the endpoint's host (alice.HOST),
# which resolves where the endpoint's domain has a wildcard record, as
# virtual-hosted buckets need; this test's endpoint is an IP address, so
# the request goes to the address itself, signed for the host it names.
ctl = boto3.client("s3control", endpoint_url=url, config=cfg)
def to_endpoint(request, **kwargs):
    scheme, rest = request.url.split("://", 1)
    request.url = scheme + "://" + rest.split(".", 1)[1]
ctl.meta.events.register("before-sign.s3-control.*", to_endpoint)
def ctl_code(f):
    try:
        f()
    except ClientError as e:
        return e.response["Error"]["Code"]
    return "ok"
assert ctl_code(lambda: ctl.get_public_access_block(AccountId="alice")) == "NoSuchPublicAccessBlockConfiguration"
ctl.put_public_access_block(AccountId="alice", PublicAccessBlockConfiguration={"BlockPublicAcls": True, "IgnorePublicAcls": False,
    "BlockPublicPolicy": True, "RestrictPublicBuckets": False})
got = ctl.get_public_access_block(AccountId="alice")["PublicAccessBlockConfiguration"]
assert got == {"BlockPublicAcls": True, "IgnorePublicAcls": False, "BlockPublicPolicy": True, "RestrictPublicBuckets": False}, got
s3.create_bucket(Bucket=bucket)
assert code(lambda: s3.put_bucket_acl(Bucket=bucket, ACL="public-read")) == "AccessDenied"
assert ctl_code(lambda: ctl.put_public_access_block(AccountId="bob", PublicAccessBlockConfiguration={"BlockPublicAcls": True})) == "AccessDenied"
ctl.delete_public_access_block(AccountId="alice")
s3.put_bucket_acl(Bucket=bucket, ACL="public-read")
assert ctl_code(lambda: ctl.get_public_access_block(AccountId="alice")) == "NoSuchPublicAccessBlockConfiguration"
`
