package s3api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// anonymousSDK is the AWS SDK for Go with anonymous credentials: it
// signs nothing.
func (e *env) anonymousSDK() *s3.Client {
	return e.sdk("", "", func(o *s3.Options) { o.Credentials = aws.AnonymousCredentials{} })
}

// TestAnonymousWrites: a bucket policy that allows everyone to write
// objects under a prefix lets an unsigned client (the AWS SDK for Go with
// anonymous credentials, and an HTML form) upload, copy, tag and delete
// there, the objects being the bucket owner's; everything else stays
// refused with AccessDenied and changes nothing: other prefixes, what
// the policy denies, the bucket's configuration, a copy from a source the
// policy does not open, SSE-KMS, a body that fails its checksum.
func TestAnonymousWrites(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "drop", "private")
	policy := `{"Version":"2012-10-17","Statement":[
	 {"Effect":"Allow","Principal":"*","Action":["s3:PutObject","s3:DeleteObject","s3:PutObjectTagging","s3:GetObject","s3:AbortMultipartUpload"],"Resource":"arn:aws:s3:::drop/in/*"},
	 {"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::drop/src/*"},
	 {"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::drop/tagless/*"},
	 {"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::drop/in/locked/*"}]}`
	if err := putPolicy(c, "drop", policy); err != nil {
		t.Fatalf("PutBucketPolicy granting anonymous writes: %v", err)
	}
	mustPut(t, c, "drop", "src/a", []byte("source"))
	mustPut(t, c, "drop", "other/a", []byte("not open"))
	mustPut(t, c, "private", "a", []byte("private"))
	anon := e.anonymousSDK()

	// Uploads, in one request and in parts (the SDK's upload manager).
	if _, err := anon.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("drop"), Key: aws.String("in/one"),
		Body: strings.NewReader("hello"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32}); err != nil {
		t.Fatalf("anonymous PutObject: %v", err)
	}
	big := randomBytes(11<<20, 7)
	up := manager.NewUploader(anon, func(u *manager.Uploader) { u.PartSize = 5 << 20 })
	if _, err := up.Upload(ctx, &s3.PutObjectInput{Bucket: aws.String("drop"), Key: aws.String("in/big"), Body: bytes.NewReader(big)}); err != nil {
		t.Fatalf("anonymous multipart upload: %v", err)
	}
	if got := ownerRead(t, c, "drop", "in/big"); !bytes.Equal(got, big) {
		t.Errorf("the anonymous multipart upload reads back %d bytes, want %d", len(got), len(big))
	}
	// The objects are the owner's: listed, read and deleted with its key.
	if got := string(ownerRead(t, c, "drop", "in/one")); got != "hello" {
		t.Errorf("the owner reads %q, want hello", got)
	}
	// A copy from a source the policy opens to everyone.
	if _, err := anon.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("drop"), Key: aws.String("in/copy"), CopySource: aws.String("drop/src/a")}); err != nil {
		t.Errorf("anonymous CopyObject from an open source: %v", err)
	} else if got := string(ownerRead(t, c, "drop", "in/copy")); got != "source" {
		t.Errorf("the copy reads %q, want source", got)
	}
	if _, err := anon.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("drop"), Key: aws.String("in/one"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}}); err != nil {
		t.Errorf("anonymous PutObjectTagging: %v", err)
	}
	if _, err := anon.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("drop"), Key: aws.String("in/copy")}); err != nil {
		t.Errorf("anonymous DeleteObject: %v", err)
	}

	// An HTML form without a signature, which the policy admits too.
	body, ct := formBody([]field{{"key", "in/${filename}"}}, "form.txt", []byte("from a form"))
	resp := e.postForm(t, "drop", body, ct)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("anonymous POST form: %s, want 204", resp.Status)
	} else if got := string(ownerRead(t, c, "drop", "in/form.txt")); got != "from a form" {
		t.Errorf("the form's object reads %q", got)
	}

	before := listKeys(t, c, "drop")
	refused := []struct {
		name string
		call func() error
	}{
		{"PutObject outside the prefix", func() error {
			_, err := anon.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("drop"), Key: aws.String("other/b"), Body: strings.NewReader("x")})
			return err
		}},
		{"PutObject the policy denies", func() error {
			_, err := anon.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("drop"), Key: aws.String("in/locked/x"), Body: strings.NewReader("x")})
			return err
		}},
		{"PutObject to a bucket without a policy", func() error {
			_, err := anon.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("private"), Key: aws.String("in/x"), Body: strings.NewReader("x")})
			return err
		}},
		{"DeleteObject outside the prefix", func() error {
			_, err := anon.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("drop"), Key: aws.String("other/a")})
			return err
		}},
		{"CopyObject from a source the policy does not open", func() error {
			_, err := anon.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("drop"), Key: aws.String("in/c2"), CopySource: aws.String("drop/other/a")})
			return err
		}},
		{"CopyObject from another bucket", func() error {
			_, err := anon.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("drop"), Key: aws.String("in/c3"), CopySource: aws.String("private/a")})
			return err
		}},
		{"PutBucketPolicy", func() error { return putPolicy(anon, "drop", policy) }},
		{"DeleteBucketPolicy", func() error {
			_, err := anon.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("drop")})
			return err
		}},
		{"PutBucketTagging", func() error {
			_, err := anon.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String("drop"),
				Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}})
			return err
		}},
	}
	for _, tc := range refused {
		if err := tc.call(); apiCode(err) != "AccessDenied" {
			t.Errorf("anonymous %s: %v, want AccessDenied", tc.name, err)
		}
	}
	// DeleteObjects is judged key by key.
	out, err := anon.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("drop"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("other/a")}, {Key: aws.String("in/nothing-here")}}}})
	if err != nil || len(out.Errors) != 1 || aws.ToString(out.Errors[0].Key) != "other/a" || aws.ToString(out.Errors[0].Code) != "AccessDenied" || len(out.Deleted) != 1 {
		t.Errorf("anonymous DeleteObjects across the prefix: %+v, %v; want other/a refused, in/nothing-here deleted", out, err)
	}
	// A bucket whose policy grants everyone no deletes refuses an
	// anonymous DeleteObjects whole, as a missing bucket does.
	if err := putPolicy(c, "private", `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::private/*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"private", "no-such-bucket"} {
		if _, err := anon.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(b), Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("a")}}}}); apiCode(err) != "AccessDenied" {
			t.Errorf("anonymous DeleteObjects in %s: %v, want AccessDenied", b, err)
		}
	}
	// A form's encryption is its fields': a policy's encryption
	// condition reads them, not the request's headers.
	mustBuckets(t, c, "enc")
	if err := putPolicy(c, "enc", `{"Version":"2012-10-17","Statement":[
	 {"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::enc/*"},
	 {"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::enc/*","Condition":{"StringNotEquals":{"s3:x-amz-server-side-encryption":"AES256"}}}]}`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		fields []field
		want   int
	}{
		{"the header only", []field{{"key", "h"}}, http.StatusForbidden},
		{"the field", []field{{"key", "f"}, {"x-amz-server-side-encryption", "AES256"}}, http.StatusNoContent},
	} {
		body, ct := formBody(tc.fields, "f.txt", []byte("x"))
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/enc", body)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("X-Amz-Server-Side-Encryption", "AES256")
		resp, err := e.loopbackClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("anonymous form under an encryption Deny, %s: %s, want %d", tc.name, resp.Status, tc.want)
		}
	}
	// SSE-KMS needs Signature Version 4, as S3 answers.
	if _, err := anon.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("drop"), Key: aws.String("in/kms"), Body: strings.NewReader("x"),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms}); apiCode(err) != "InvalidArgument" || !strings.Contains(err.Error(), "Signature Version 4") {
		t.Errorf("anonymous SSE-KMS PutObject: %v, want InvalidArgument", err)
	}
	// A body that is not what its Content-MD5 says.
	status, code := e.anonymousBody(t, http.MethodPut, "/drop/in/md5", "body", map[string]string{"Content-MD5": "1B2M2Y8AsgTpgAmY7PhCfg=="})
	if status != http.StatusBadRequest || code != "BadDigest" {
		t.Errorf("anonymous PUT with a wrong Content-MD5: %d %s, want 400 BadDigest", status, code)
	}
	// Signed streaming needs a signature.
	status, code = e.anonymousBody(t, http.MethodPut, "/drop/in/stream", "body", map[string]string{"X-Amz-Content-Sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"})
	if status != http.StatusBadRequest || code != "InvalidRequest" {
		t.Errorf("anonymous PUT claiming a signed stream: %d %s, want 400 InvalidRequest", status, code)
	}
	// Tags need s3:PutObjectTagging too, and a copy that keeps its
	// source's tags s3:GetObjectTagging on the source, which this policy
	// does not grant on src/; an SSE-KMS source is never copied
	// anonymously.
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("drop"), Key: aws.String("src/a"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := anon.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("drop"), Key: aws.String("in/tagged-copy"), CopySource: aws.String("drop/src/a")}); apiCode(err) != "AccessDenied" {
		t.Errorf("anonymous copy keeping tags it may not read: %v, want AccessDenied", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("drop"), Key: aws.String("src/kms"), Body: strings.NewReader("secret"),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms}); err != nil {
		t.Fatal(err)
	}
	if _, err := anon.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("drop"), Key: aws.String("in/kms-copy"), CopySource: aws.String("drop/src/kms")}); apiCode(err) != "InvalidArgument" {
		t.Errorf("anonymous copy of an SSE-KMS source: %v, want InvalidArgument", err)
	}
	before = listKeys(t, c, "drop")
	// Only here does the policy grant tagging: an upload with tags under
	// in/ is allowed, one under tagless/ (PutObject, no PutObjectTagging)
	// is not, with x-amz-tagging or a form's tagging field.
	if _, err := anon.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("drop"), Key: aws.String("in/tagged"), Body: strings.NewReader("x"), Tagging: aws.String("a=b")}); err != nil {
		t.Errorf("anonymous PutObject with tags where tagging is granted: %v", err)
	}
	if _, err := anon.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("drop"), Key: aws.String("tagless/x"), Body: strings.NewReader("x"), Tagging: aws.String("public=true")}); apiCode(err) != "AccessDenied" {
		t.Errorf("anonymous PutObject with tags where only PutObject is granted: %v, want AccessDenied", err)
	}
	body, ct = formBody([]field{{"key", "tagless/form"}, {"tagging", "<Tagging><TagSet><Tag><Key>public</Key><Value>true</Value></Tag></TagSet></Tagging>"}}, "f.txt", []byte("x"))
	if resp := e.postForm(t, "drop", body, ct); resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous form with tags where only PutObject is granted: %s, want 403", resp.Status)
	} else {
		resp.Body.Close()
	}
	body, ct = formBody([]field{{"key", "tagless/plain"}}, "f.txt", []byte("x"))
	if resp := e.postForm(t, "drop", body, ct); resp.StatusCode != http.StatusNoContent {
		t.Errorf("anonymous form without tags where PutObject is granted: %s, want 204", resp.Status)
	} else {
		resp.Body.Close()
	}
	body, ct = formBody(nil, "f.txt", []byte("x"))
	if resp := e.postForm(t, "drop", body, ct); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("anonymous form without a key: %s, want 400", resp.Status)
	} else {
		resp.Body.Close()
	}
	before = append(before, "in/tagged", "tagless/plain")
	slices.Sort(before)

	// Under a bucket default of SSE-KMS, an anonymous write would be
	// sealed with the owner's key, which serves no anonymous request.
	if _, err := c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: aws.String("drop"),
		ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{Rules: []types.ServerSideEncryptionRule{{
			ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAwsKms}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := anon.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("drop"), Key: aws.String("in/kms-default"), Body: strings.NewReader("x")}); apiCode(err) != "InvalidArgument" || !strings.Contains(err.Error(), "Signature Version 4") {
		t.Errorf("anonymous PutObject under an SSE-KMS default: %v, want InvalidArgument", err)
	}

	if after := listKeys(t, c, "drop"); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Errorf("refused anonymous requests changed the bucket:\nbefore %v\nafter  %v", before, after)
	}
}

// anonymousBody sends an unsigned request with a body and returns its
// status and S3 error code.
func (e *env) anonymousBody(t *testing.T, method, path, body string, header map[string]string) (int, string) {
	t.Helper()
	r, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	resp, err := e.loopbackClient().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	code := ""
	if i := strings.Index(string(data), "<Code>"); i >= 0 {
		code, _, _ = strings.Cut(string(data[i+6:]), "<")
	}
	return resp.StatusCode, code
}

// listKeys lists bucket's keys with the owner's client.
func listKeys(t *testing.T, c *s3.Client, bucket string) []string {
	t.Helper()
	out, err := c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

// ownerRead reads bucket/key with the owner's client.
func ownerRead(t *testing.T, c *s3.Client, bucket, key string) []byte {
	t.Helper()
	return read(t)(c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}))
}
