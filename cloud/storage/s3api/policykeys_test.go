package s3api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestPolicyHowSigned: the condition keys that tell how a request was
// made (s3:signatureversion, s3:authType, s3:signatureAge), what it asks
// for (s3:x-amz-acl, s3:x-amz-storage-class) and the version it names
// (s3:VersionId), through the endpoint, as the policies AWS documents
// use them: Signature Version 2 refused, presigned reads refused, ACLs
// and storage classes held to one value, one version kept from readers.
func TestPolicyHowSigned(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "how")
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("how"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	first, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("how"), Key: aws.String("doc"), Body: strings.NewReader("one")})
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("how"), Key: aws.String("doc"), Body: strings.NewReader("two")})
	if err != nil {
		t.Fatal(err)
	}
	policy := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::how/*","Condition":{"StringEquals":{"s3:signatureversion":"AWS"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::how/*","Condition":{"StringEquals":{"s3:authType":"REST-QUERY-STRING"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::how/*","Condition":{"StringEquals":{"s3:x-amz-acl":"public-read"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::how/*","Condition":{"StringNotEquals":{"s3:x-amz-storage-class":"STANDARD"},"Null":{"s3:x-amz-storage-class":"false"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:GetObjectVersion","Resource":"arn:aws:s3:::how/*","Condition":{"StringEquals":{"s3:VersionId":"` + aws.ToString(first.VersionId) + `"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::how/aged/*","Condition":{"NumericGreaterThanEquals":{"s3:signatureAge":"0"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::how/tls/*","Condition":{"Null":{"s3:TlsVersion":"true"}}}]}`
	if err := putPolicy(c, "how", policy); err != nil {
		t.Fatalf("PutBucketPolicy with the request keys: %v", err)
	}

	// Signature Version 2 is denied, Version 4 is not.
	now := time.Now()
	r, _ := http.NewRequest("GET", e.srv.URL+"/how/doc", nil)
	if status, answer := do(t, signV2(r, e.id, e.secret, "", now)); status != http.StatusForbidden || answer.Code != "AccessDenied" {
		t.Errorf("a Signature Version 2 GET: %d %s, want 403 AccessDenied", status, answer.Code)
	}
	get := func(key, version string) error { return getVersion(c, "how", key, version) }
	if err := get("doc", ""); err != nil {
		t.Errorf("a Signature Version 4 GET: %v", err)
	}
	// A presigned URL (REST-QUERY-STRING) is denied reads.
	signed, err := s3.NewPresignClient(c).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("how"), Key: aws.String("doc")})
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := http.NewRequest("GET", signed.URL, nil)
	if status, answer := do(t, pr); status != http.StatusForbidden || answer.Code != "AccessDenied" {
		t.Errorf("a presigned GET: %d %s, want 403 AccessDenied", status, answer.Code)
	}
	// s3:VersionId: the first version is kept from readers, the second is not.
	if err := get("doc", aws.ToString(first.VersionId)); apiCode(err) != "AccessDenied" {
		t.Errorf("GET of the denied version: %v, want AccessDenied", err)
	}
	if err := get("doc", aws.ToString(second.VersionId)); err != nil {
		t.Errorf("GET of another version: %v", err)
	}
	// s3:x-amz-acl and s3:x-amz-storage-class on uploads.
	put := func(key string, edit func(*s3.PutObjectInput)) error {
		in := &s3.PutObjectInput{Bucket: aws.String("how"), Key: aws.String(key), Body: strings.NewReader("x")}
		edit(in)
		_, err := c.PutObject(ctx, in)
		return err
	}
	if err := put("acl", func(in *s3.PutObjectInput) { in.ACL = types.ObjectCannedACLPublicRead }); apiCode(err) != "AccessDenied" {
		t.Errorf("PutObject with x-amz-acl public-read: %v, want AccessDenied", err)
	}
	if err := put("acl", func(in *s3.PutObjectInput) { in.ACL = types.ObjectCannedACLBucketOwnerFullControl }); err != nil {
		t.Errorf("PutObject with x-amz-acl bucket-owner-full-control: %v", err)
	}
	if err := put("class", func(in *s3.PutObjectInput) { in.StorageClass = types.StorageClassReducedRedundancy }); apiCode(err) != "AccessDenied" {
		t.Errorf("PutObject with another storage class: %v, want AccessDenied", err)
	}
	if err := put("class", func(in *s3.PutObjectInput) { in.StorageClass = types.StorageClassStandard }); err != nil {
		t.Errorf("PutObject with STANDARD: %v", err)
	}
	// s3:signatureAge is there for a Version 4 request (a Deny on any age
	// refuses it), s3:TlsVersion only over TLS (this server is plain HTTP).
	for _, key := range []string{"aged/a", "tls/a"} {
		if err := put(key, func(*s3.PutObjectInput) {}); err != nil {
			t.Fatal(err)
		}
		if err := get(key, ""); apiCode(err) != "AccessDenied" {
			t.Errorf("GET of %s: %v, want AccessDenied", key, err)
		}
	}
}

// TestPolicyPayloadHashOfPresigned: s3:x-amz-content-sha256 is the payload
// hash the signature covers. AWS's guard that refuses unsigned bodies
// holds against a presigned PUT whose holder adds an x-amz-content-sha256
// header (which a presigned URL does not sign), while a request that signs
// its body's hash passes it.
func TestPolicyPayloadHashOfPresigned(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "guard")
	if err := putPolicy(c, "guard", `{"Version":"2012-10-17","Statement":{"Effect":"Deny","Principal":"*","Action":"s3:PutObject",
		"Resource":"arn:aws:s3:::guard/*","Condition":{"StringEquals":{"s3:x-amz-content-sha256":"UNSIGNED-PAYLOAD"}}}}`); err != nil {
		t.Fatal(err)
	}
	body := "a body"
	sum := sha256.Sum256([]byte(body))
	hash := hex.EncodeToString(sum[:])
	signed, err := s3.NewPresignClient(c).PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("guard"), Key: aws.String("up")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		header string
	}{{"no header", ""}, {"the body's hash in the header", hash}, {"another hash in the header", strings.Repeat("0", 64)}} {
		r, _ := http.NewRequest("PUT", signed.URL, strings.NewReader(body))
		if tc.header != "" {
			r.Header.Set("X-Amz-Content-Sha256", tc.header)
		}
		if status, answer := do(t, r); status != http.StatusForbidden || answer.Code != "AccessDenied" {
			t.Errorf("a presigned PUT, %s: %d %s, want 403 AccessDenied", tc.name, status, answer.Code)
		}
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("guard"), Key: aws.String("up")}); apiCode(err) != "NotFound" {
		t.Errorf("after the refused PUTs, HEAD: %v, want NotFound", err)
	}
	if status, answer := do(t, e.signed(t, "PUT", "/guard/up", strings.NewReader(body), hash, nil)); status != http.StatusOK {
		t.Errorf("a PUT that signs its body's hash: %d %s", status, answer.Code)
	}
	if status, answer := do(t, e.signed(t, "PUT", "/guard/up", strings.NewReader(body), "", nil)); status != http.StatusForbidden || answer.Code != "AccessDenied" {
		t.Errorf("a PUT signed as UNSIGNED-PAYLOAD: %d %s, want 403 AccessDenied", status, answer.Code)
	}
	// Signature Version 2 signs no payload hash: the key is absent, as in
	// S3, and the guard does not apply.
	r, _ := http.NewRequest("PUT", e.srv.URL+"/guard/v2", strings.NewReader(body))
	if status, answer := do(t, signV2(r, e.id, e.secret, "", time.Now())); status != http.StatusOK {
		t.Errorf("a Signature Version 2 PUT under the guard: %d %s, want 200", status, answer.Code)
	}
}
