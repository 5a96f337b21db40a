package s3api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3api"
)

// anonymous sends an unsigned request to the endpoint and returns its
// status and S3 error code.
func (e *env) anonymous(t *testing.T, method, path string, header map[string]string) (int, string) {
	t.Helper()
	return e.anonymousBody(t, method, path, "", header)
}

// getVersion reads key (its version, if not "") in bucket with c and
// returns the error, closing what it read.
func getVersion(c *s3.Client, bucket, key, version string) error {
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if version != "" {
		in.VersionId = aws.String(version)
	}
	out, err := c.GetObject(context.Background(), in)
	if err == nil {
		out.Body.Close()
	}
	return err
}

func putPolicy(c *s3.Client, bucket, policy string) error {
	_, err := c.PutBucketPolicy(context.Background(), &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(policy)})
	return err
}

func wantNoPolicy(t *testing.T, c *s3.Client, bucket, when string) {
	t.Helper()
	if _, err := c.GetBucketPolicy(context.Background(), &s3.GetBucketPolicyInput{Bucket: aws.String(bucket)}); apiCode(err) != "NoSuchBucketPolicy" {
		t.Errorf("%s: GetBucketPolicy: got %v, want NoSuchBucketPolicy", when, err)
	}
}

// TestBucketPolicyRefused: a policy S3 would refuse is 400 MalformedPolicy,
// one needing what is not built is 501, a key without the right is
// refused, and none of them changes anything.
func TestBucketPolicyRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "site", "other")
	readID, readSecret := e.key(t, "alice", cloudstore.PermRead, "*")
	writeID, writeSecret := e.key(t, "alice", cloudstore.PermWrite, "*")
	bobID, bobSecret := e.key(t, "bob", cloudstore.PermReadWrite, "*")
	good := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}]}`
	if _, err := c.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: aws.String("site")}); apiCode(err) != "NoSuchBucketPolicy" {
		t.Errorf("GetBucketPolicyStatus without a policy: got %v, want NoSuchBucketPolicy", err)
	}
	for _, tc := range []struct {
		name, bucket, policy string
		client               *s3.Client
		want                 string
	}{
		{"not JSON", "site", `{"Version":`, c, "MalformedPolicy"},
		{"another bucket's resource", "site", strings.Replace(good, "site/*", "other/*", 1), c, "MalformedPolicy"},
		{"an unknown action", "site", strings.Replace(good, "s3:GetObject", "s3:GetObjects", 1), c, "MalformedPolicy"},
		{"a bad effect", "site", strings.Replace(good, "Allow", "Permit", 1), c, "MalformedPolicy"},
		{"no statement", "site", `{"Version":"2012-10-17","Statement":[]}`, c, "MalformedPolicy"},
		{"over 20 KB", "site", `{"Id":"` + strings.Repeat("x", 21<<10) + `",` + good[1:], c, "MalformedPolicy"},
		{"a federated principal", "site", strings.Replace(good, `"*"`, `{"Federated":"accounts.google.com"}`, 1), c, "NotImplemented"},
		{"a read-only key", "site", good, e.sdk(readID, readSecret), "AccessDenied"},
		{"another account's key", "site", good, e.sdk(bobID, bobSecret), "AccessDenied"},
		{"a missing bucket", "nope", strings.Replace(good, "site/*", "nope/*", 1), c, "NoSuchBucket"},
	} {
		if err := putPolicy(tc.client, tc.bucket, tc.policy); apiCode(err) != tc.want {
			t.Errorf("%s: PutBucketPolicy: got %v, want %s", tc.name, err, tc.want)
		}
		wantNoPolicy(t, c, "site", tc.name)
	}
	if err := putPolicy(c, "site", good); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    *s3.Client
		want string
	}{{"a read-only key", e.sdk(readID, readSecret), "AccessDenied"}, {"another account's key", e.sdk(bobID, bobSecret), "AccessDenied"}} {
		if _, err := tc.c.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("site")}); apiCode(err) != tc.want {
			t.Errorf("%s: DeleteBucketPolicy: got %v, want %s", tc.name, err, tc.want)
		}
		if _, err := tc.c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("site")}); tc.name != "a read-only key" && apiCode(err) != tc.want {
			t.Errorf("%s: GetBucketPolicy: got %v, want %s", tc.name, err, tc.want)
		}
	}
	if _, err := e.sdk(writeID, writeSecret).GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("site")}); apiCode(err) != "AccessDenied" {
		t.Errorf("a write-only key's GetBucketPolicy: got %v, want AccessDenied", err)
	}
	got, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("site")})
	if err != nil || aws.ToString(got.Policy) != good {
		t.Errorf("GetBucketPolicy after refused changes: got %v, %v, want %s", got, err, good)
	}
	// A refused replacement keeps the policy in place.
	if err := putPolicy(c, "site", `{}`); apiCode(err) != "MalformedPolicy" {
		t.Errorf("PutBucketPolicy {}: got %v, want MalformedPolicy", err)
	}
	if got, _ := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("site")}); aws.ToString(got.Policy) != good {
		t.Errorf("a refused replacement changed the policy to %v", aws.ToString(got.Policy))
	}
	if status, code := e.anonymous(t, "PUT", "/site?policy", nil); status != 403 || code != "AccessDenied" {
		t.Errorf("anonymous PutBucketPolicy: got %d %s, want 403 AccessDenied", status, code)
	}
}

// TestBucketPolicyAnonymous: a policy grants anonymous reads of a prefix
// and listings of it, denies what it denies (also on a public bucket),
// and goes with its DeleteBucketPolicy or its bucket.
func TestBucketPolicyAnonymous(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "site")
	for _, k := range []string{"public/a.txt", "public/b.txt", "private/c.txt"} {
		mustPut(t, c, "site", k, []byte(k))
	}
	type check struct {
		method, path string
		want         int
	}
	run := func(when string, checks []check) {
		t.Helper()
		for _, ck := range checks {
			if status, code := e.anonymous(t, ck.method, ck.path, nil); status != ck.want {
				t.Errorf("%s: anonymous %s %s: got %d %s, want %d", when, ck.method, ck.path, status, code, ck.want)
			}
		}
	}
	run("without a policy", []check{{"GET", "/site/public/a.txt", 403}, {"GET", "/site?prefix=public/", 403}})

	policy := `{"Version":"2012-10-17","Statement":[
		{"Sid":"read","Effect":"Allow","Principal":{"AWS":"*"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::site/public/*"},
		{"Sid":"list","Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::site","Condition":{"StringLike":{"s3:prefix":"public/*"}}}]}`
	if err := putPolicy(c, "site", policy); err != nil {
		t.Fatal(err)
	}
	st, err := c.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: aws.String("site")})
	if err != nil || !aws.ToBool(st.PolicyStatus.IsPublic) {
		t.Errorf("GetBucketPolicyStatus: got %+v, %v, want IsPublic", st, err)
	}
	run("with the policy", []check{
		{"GET", "/site/public/a.txt", 200}, {"HEAD", "/site/public/b.txt", 200}, {"GET", "/site/public/missing", 404},
		{"GET", "/site/private/c.txt", 403}, {"GET", "/site?prefix=public/", 200}, {"GET", "/site?list-type=2&prefix=public/x", 200},
		{"GET", "/site", 403}, {"GET", "/site?prefix=private/", 403},
		{"PUT", "/site/public/new", 403}, {"DELETE", "/site/public/a.txt", 403}, {"GET", "/site?policy", 403}, {"GET", "/", 403},
		{"GET", "/nope/public/a.txt", 403},
	})
	// Signed requests are the key's, as before.
	if data, _ := mustGet(t, c, "site", "private/c.txt"); string(data) != "private/c.txt" {
		t.Errorf("the owner's read of private/c.txt: got %q", data)
	}

	// A Deny wins over the public toggle.
	if _, err := e.st.UpdateBucket("alice", "site", time.Now(), func(b *cloudstore.Bucket) { b.Public = true }); err != nil {
		t.Fatal(err)
	}
	run("public, without a Deny", []check{{"GET", "/site/private/c.txt", 200}})
	deny := strings.Replace(policy, `]}`, `,{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/private/*"}]}`, 1)
	if err := putPolicy(c, "site", deny); err != nil {
		t.Fatal(err)
	}
	run("public, with a Deny", []check{{"GET", "/site/private/c.txt", 403}, {"GET", "/site/public/a.txt", 200}})
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("site"), Key: aws.String("private/c.txt")}); apiCode(err) != "AccessDenied" {
		t.Errorf("the owner's read of a denied object: got %v, want AccessDenied", err)
	}

	if _, err := c.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("site")}); err != nil {
		t.Fatal(err)
	}
	wantNoPolicy(t, c, "site", "deleted")
	run("public, the policy deleted", []check{{"GET", "/site/private/c.txt", 200}, {"GET", "/site?prefix=public/", 403}})
	if _, err := c.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("site")}); err != nil {
		t.Errorf("DeleteBucketPolicy without a policy: %v", err)
	}

	// The policy goes with its bucket: a bucket made again under the name
	// has none, and grants nothing.
	if err := putPolicy(c, "site", policy); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"public/a.txt", "public/b.txt", "private/c.txt"} {
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("site"), Key: aws.String(k)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("site")}); err != nil {
		t.Fatal(err)
	}
	mustBuckets(t, c, "site")
	mustPut(t, c, "site", "public/a.txt", []byte("again"))
	wantNoPolicy(t, c, "site", "the bucket made again")
	run("the bucket made again", []check{{"GET", "/site/public/a.txt", 403}})
}

// TestBucketPolicyDeniesKeys: a Deny naming a key (bare id, or as an IAM
// user's ARN) refuses its requests, DeleteObjects key by key, a copy
// from a denied source, and never the owner's management of the policy.
func TestBucketPolicyDeniesKeys(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "logs", "copies")
	for _, k := range []string{"keep/1", "tmp/1", "tmp/2"} {
		mustPut(t, c, "logs", k, []byte(k))
	}
	ciID, ciSecret := e.key(t, "alice", cloudstore.PermReadWrite, "*")
	ci := e.sdk(ciID, ciSecret)
	policy := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","Principal":{"AWS":["` + ciID + `"]},"Action":"s3:DeleteObject","Resource":"arn:aws:s3:::logs/keep/*"},
		{"Effect":"Deny","Principal":{"AWS":"arn:aws:iam::alice:user/` + ciID + `"},"Action":["s3:GetObject","s3:PutBucketTagging"],"NotResource":"arn:aws:s3:::logs/tmp/*"}]}`
	if err := putPolicy(c, "logs", policy); err != nil {
		t.Fatal(err)
	}
	if st, err := c.GetBucketPolicyStatus(ctx, &s3.GetBucketPolicyStatusInput{Bucket: aws.String("logs")}); err != nil || aws.ToBool(st.PolicyStatus.IsPublic) {
		t.Errorf("GetBucketPolicyStatus: got %+v, %v, want not public", st, err)
	}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"DeleteObject keep/1", func() error {
			_, err := ci.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("logs"), Key: aws.String("keep/1")})
			return err
		}, "AccessDenied"},
		{"GetObject keep/1", func() error {
			_, err := ci.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("logs"), Key: aws.String("keep/1")})
			return err
		}, "AccessDenied"},
		{"GetObject tmp/1", func() error {
			_, err := ci.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("logs"), Key: aws.String("tmp/1")})
			return err
		}, ""},
		{"CopyObject from keep/1", func() error {
			_, err := ci.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("copies"), Key: aws.String("k"), CopySource: aws.String("logs/keep/1")})
			return err
		}, "AccessDenied"},
		{"PutBucketTagging", func() error {
			_, err := ci.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String("logs"), Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("a"), Value: aws.String("b")}}}})
			return err
		}, "AccessDenied"},
		{"the owner's GetObject keep/1", func() error {
			_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("logs"), Key: aws.String("keep/1")})
			return err
		}, ""},
		{"PutBucketPolicy, by the key denied", func() error {
			return putPolicy(ci, "logs", strings.Replace(policy, "s3:PutBucketTagging", "s3:PutBucketPolicy", 1))
		}, ""},
	} {
		if err := tc.call(); apiCode(err) != tc.want {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	out, err := ci.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("logs"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("keep/1")}, {Key: aws.String("tmp/1")}}}})
	if err != nil || len(out.Errors) != 1 || aws.ToString(out.Errors[0].Key) != "keep/1" || aws.ToString(out.Errors[0].Code) != "AccessDenied" ||
		len(out.Deleted) != 1 || aws.ToString(out.Deleted[0].Key) != "tmp/1" {
		t.Errorf("DeleteObjects keep/1, tmp/1: got %+v, %v, want keep/1 AccessDenied, tmp/1 deleted", out, err)
	}
	if _, err := e.st.Object("alice", "logs", "keep/1"); err != nil {
		t.Errorf("keep/1 after the denied deletes: %v", err)
	}
	// No policy locks its owner out: a Deny of everything to everyone
	// still lets the owner's keys read, replace and delete it.
	all := `{"Version":"2012-10-17","Statement":{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::logs","arn:aws:s3:::logs/*"]}}`
	if err := putPolicy(ci, "logs", all); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("logs")}); apiCode(err) != "AccessDenied" {
		t.Errorf("ListObjectsV2 under a Deny of everything: got %v, want AccessDenied", err)
	}
	if _, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("logs")}); err != nil {
		t.Errorf("GetBucketPolicy under a Deny of everything: %v", err)
	}
	if _, err := c.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("logs")}); err != nil {
		t.Errorf("DeleteBucketPolicy under a Deny of everything: %v", err)
	}
	if _, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("logs")}); err != nil {
		t.Errorf("ListObjectsV2 once the policy is gone: %v", err)
	}
}

// TestBucketPolicyConditions: aws:SecureTransport and aws:SourceIp, over
// plain HTTP and TLS.
func TestBucketPolicyConditions(t *testing.T) {
	tlsOnly := `{"Version":"2012-10-17","Statement":{"Sid":"tls","Effect":"Deny","Principal":"*","Action":"s3:*",
		"Resource":["arn:aws:s3:::bkt","arn:aws:s3:::bkt/*"],"Condition":{"Bool":{"aws:SecureTransport":"false"}}}}`
	for _, tc := range []struct {
		name string
		tls  bool
		want string
	}{{"plain", false, "AccessDenied"}, {"TLS", true, ""}} {
		e := startEnv(t, tc.tls, s3api.Options{})
		c := e.sdk(e.id, e.secret)
		mustBuckets(t, c, "bkt")
		mustPut(t, c, "bkt", "k", []byte("v"))
		if err := putPolicy(c, "bkt", tlsOnly); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k")}); apiCode(err) != tc.want {
			t.Errorf("%s: GetObject under a TLS-only policy: got %v, want %q", tc.name, err, tc.want)
		}
	}

	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "bkt")
	mustPut(t, c, "bkt", "k", []byte("v"))
	for _, tc := range []struct {
		name, cond string
		want       int
	}{
		{"from loopback", `{"IpAddress":{"aws:SourceIp":["127.0.0.0/8","::1/128"]}}`, 200},
		{"from elsewhere", `{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, 403},
		{"not from elsewhere", `{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`, 200},
		{"a user agent", `{"StringLike":{"aws:UserAgent":"lattice-test/*"}}`, 200},
		{"another user agent", `{"StringEquals":{"aws:UserAgent":"curl"}}`, 403},
	} {
		policy := `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*","Condition":` + tc.cond + `}}`
		if err := putPolicy(c, "bkt", policy); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if status, code := e.anonymous(t, "GET", "/bkt/k", map[string]string{"User-Agent": "lattice-test/1"}); status != tc.want {
			t.Errorf("%s: anonymous GET: got %d %s, want %d", tc.name, status, code, tc.want)
		}
	}
}

// TestPolicyRequestKeys: the condition keys read from a request's
// headers, and the principals that name no S3 key, through the AWS SDK
// for Go: a bucket that takes only SSE-S3 uploads, copies from a locked
// prefix that may not replace metadata, the log delivery service's grant
// AWS documents, and NotPrincipal.
func TestPolicyRequestKeys(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "site")
	policy := `{"Version":"2012-10-17","Statement":[
		{"Sid":"S3ServerAccessLogsPolicy","Effect":"Allow","Principal":{"Service":"logging.s3.amazonaws.com"},"Action":["s3:PutObject"],"Resource":"arn:aws:s3:::site/logs*",
		 "Condition":{"ArnLike":{"aws:SourceArn":"arn:aws:s3:::source-bucket"},"StringEquals":{"aws:SourceAccount":"alice"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/enc/*","Condition":{"StringNotEquals":{"s3:x-amz-server-side-encryption":"AES256"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*",
		 "Condition":{"StringLike":{"s3:x-amz-copy-source":"site/locked/*"},"StringEquals":{"s3:x-amz-metadata-directive":"REPLACE"}}},
		{"Effect":"Deny","NotPrincipal":{"AWS":"arn:aws:iam::alice:root"},"Action":"s3:*","Resource":"arn:aws:s3:::site/*"}]}`
	if err := putPolicy(c, "site", policy); err != nil {
		t.Fatalf("AWS's log delivery policy with NotPrincipal and header keys: %v", err)
	}
	put := func(key string, sse bool) error {
		in := &s3.PutObjectInput{Bucket: aws.String("site"), Key: aws.String(key), Body: strings.NewReader("x")}
		if sse {
			in.ServerSideEncryption = "AES256"
		}
		_, err := c.PutObject(ctx, in)
		return err
	}
	if err := put("enc/a", false); apiCode(err) != "AccessDenied" {
		t.Errorf("an unencrypted upload under enc/: %v, want AccessDenied", err)
	}
	if err := put("enc/a", true); err != nil {
		t.Errorf("an SSE-S3 upload under enc/: %v", err)
	}
	if err := put("locked/a", false); err != nil {
		t.Fatal(err)
	}
	cp := func(src string, replace bool) error {
		in := &s3.CopyObjectInput{Bucket: aws.String("site"), Key: aws.String("copy"), CopySource: aws.String(src)}
		if replace {
			in.MetadataDirective = "REPLACE"
			in.Metadata = map[string]string{"k": "v"}
		}
		_, err := c.CopyObject(ctx, in)
		return err
	}
	if err := cp("site/locked/a", true); apiCode(err) != "AccessDenied" {
		t.Errorf("a copy from locked/ replacing metadata: %v, want AccessDenied", err)
	}
	if err := cp("/site/locked/a", false); err != nil {
		t.Errorf("a copy from locked/ keeping metadata: %v", err)
	}
	if err := cp("site/enc/a", true); err != nil {
		t.Errorf("a copy from elsewhere replacing metadata: %v", err)
	}
	// NotPrincipal: everyone but alice's keys is denied, anonymous
	// requests too, even where the bucket's public-read would let them
	// read.
	if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("site"), ACL: "public-read"}); err != nil {
		t.Fatal(err)
	}
	if status, _ := e.anonymous(t, "GET", "/site/enc/a", nil); status != http.StatusForbidden {
		t.Errorf("anonymous GET of a public-read bucket under NotPrincipal's Deny: %d", status)
	}
	if err := putPolicy(c, "site", strings.Replace(policy, `"NotPrincipal":{"AWS":"arn:aws:iam::alice:root"}`, `"Principal":{"AWS":"arn:aws:iam::bob:root"}`, 1)); err != nil {
		t.Fatal(err)
	}
	if status, _ := e.anonymous(t, "GET", "/site/enc/a", nil); status != http.StatusOK {
		t.Errorf("anonymous GET of a public-read bucket without NotPrincipal's Deny: %d", status)
	}
}

// TestPolicyObjectTags: s3:ExistingObjectTag/KEY reads the tags of the
// object (or version) a request addresses, for the actions S3 has the key
// for: anonymous reads of objects tagged public, reads and tag changes
// refused for objects tagged to be kept (and for a kept older version), a
// copy's source judged by its own tags; and DeleteObjects asks for
// s3:DeleteObjectVersion when it names a version.
func TestPolicyObjectTags(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "site")
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("site"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	policy := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"StringEquals":{"s3:ExistingObjectTag/Classification":"public"}}},
		{"Effect":"Deny","Principal":"*","Action":["s3:GetObject","s3:GetObjectVersion","s3:PutObjectTagging","s3:DeleteObjectTagging"],"Resource":"arn:aws:s3:::site/*",
		 "Condition":{"StringEquals":{"s3:ExistingObjectTag/retain":"true"},"StringLike":{"aws:UserAgent":"*"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObjectVersion","Resource":"arn:aws:s3:::site/*"}]}`
	if err := putPolicy(c, "site", policy); err != nil {
		t.Fatal(err)
	}
	put := func(key, tagging string) string {
		t.Helper()
		in := &s3.PutObjectInput{Bucket: aws.String("site"), Key: aws.String(key), Body: strings.NewReader("x")}
		if tagging != "" {
			in.Tagging = aws.String(tagging)
		}
		out, err := c.PutObject(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.VersionId)
	}
	put("pub", "Classification=public")
	put("plain", "")
	put("kept", "retain=true")
	old := put("history", "retain=true")
	put("history", "")
	if status, _ := e.anonymous(t, "GET", "/site/pub", nil); status != http.StatusOK {
		t.Errorf("anonymous GET of an object tagged public: %d", status)
	}
	if status, _ := e.anonymous(t, "GET", "/site/plain", nil); status != http.StatusForbidden {
		t.Errorf("anonymous GET of an untagged object: %d", status)
	}
	get := func(key, version string) error { return getVersion(c, "site", key, version) }
	if err := get("kept", ""); apiCode(err) != "AccessDenied" {
		t.Errorf("GetObject of an object tagged retain: %v, want AccessDenied", err)
	}
	if err := get("history", ""); err != nil {
		t.Errorf("GetObject of the untagged current version: %v", err)
	}
	if err := get("history", old); apiCode(err) != "AccessDenied" {
		t.Errorf("GetObject of the tagged older version: %v, want AccessDenied", err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("site"), Key: aws.String("copy"), CopySource: aws.String("site/kept")}); apiCode(err) != "AccessDenied" {
		t.Errorf("a copy of an object whose reads are denied: %v, want AccessDenied", err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("site"), Key: aws.String("copy"), CopySource: aws.String("site/plain")}); err != nil {
		t.Errorf("a copy of an untagged object: %v", err)
	}
	if _, err := c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: aws.String("site"), Key: aws.String("kept")}); apiCode(err) != "AccessDenied" {
		t.Errorf("DeleteObjectTagging of an object tagged retain: %v, want AccessDenied", err)
	}
	// DeleteObjects: a version asks for s3:DeleteObjectVersion, denied; a
	// key alone asks for s3:DeleteObject.
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("site"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("history"), VersionId: aws.String(old)}, {Key: aws.String("plain")}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Errors) != 1 || aws.ToString(out.Errors[0].Code) != "AccessDenied" || len(out.Deleted) != 1 || aws.ToString(out.Deleted[0].Key) != "plain" {
		t.Errorf("DeleteObjects: deleted %+v, errors %+v", out.Deleted, out.Errors)
	}
}

// TestPolicyMaxKeys: a Numeric condition on s3:max-keys, through the
// endpoint: anonymous listings of pages up to 100 allowed, bigger ones
// (or none asked for) not; and a Date window on aws:CurrentTime.
func TestPolicyMaxKeys(t *testing.T) {
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "pages")
	mustPut(t, c, "pages", "a", []byte("x"))
	if err := putPolicy(c, "pages", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::pages","Condition":{"NumericLessThanEquals":{"s3:max-keys":"100"}}},
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::pages/*","Condition":{"DateLessThan":{"aws:CurrentTime":"2001-01-01T00:00:00Z"}}}]}`); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		"/pages?list-type=2&max-keys=100":  200,
		"/pages?max-keys=7":                200,
		"/pages?list-type=2&max-keys=101":  403,
		"/pages?list-type=2":               403,
		"/pages?list-type=2&max-keys=lots": 403,
		"/pages/a":                         403, // the window closed in 2001
	} {
		if status, code := e.anonymous(t, "GET", path, nil); status != want {
			t.Errorf("anonymous GET %s: %d %s, want %d", path, status, code, want)
		}
	}
	if err := putPolicy(c, "pages", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::pages","Condition":{"NumericLessThan":{"s3:max-keys":"a lot"}}}}`); apiCode(err) != "MalformedPolicy" {
		t.Errorf("a Numeric condition on a word: %v", err)
	}
}

// TestPolicyKeyWithStar: a key whose name holds a * is under a Resource's
// wildcard as any other, so that a Deny of bucket/* holds for *secret.
func TestPolicyKeyWithStar(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	b := aws.String("vault")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"*secret", "a*b", "plain"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(key), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := putPolicy(c, "vault", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::vault/*"}]}`); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"*secret", "a*b", "plain"} {
		_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(key)})
		if apiCode(err) != "AccessDenied" {
			t.Errorf("GetObject %q under a Deny of vault/*: %v, want AccessDenied", key, err)
		}
	}
}
