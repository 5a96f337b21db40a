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
