package s3api_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// field is one field of an HTML upload form.
type field struct{ name, value string }

// policyDoc is a POST policy: its expiration and conditions.
func policyDoc(expires time.Time, conditions ...any) string {
	b, _ := json.Marshal(map[string]any{"expiration": expires.UTC().Format("2006-01-02T15:04:05.000Z"), "conditions": conditions})
	return base64.StdEncoding.EncodeToString(b)
}

func hmacSHA256(key []byte, s string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// signV4Form signs a policy the way S3 documents it, independently of
// package sigv4: the hex HMAC-SHA256 of the base64 policy with the day's
// signing key. The conditions must name the three x-amz-* fields it adds.
func signV4Form(id, secret, region string, t time.Time, policy string) []field {
	day := t.UTC().Format("20060102")
	k := hmacSHA256([]byte("AWS4"+secret), day)
	k = hmacSHA256(hmacSHA256(hmacSHA256(k, region), "s3"), "aws4_request")
	return []field{{"policy", policy}, {"x-amz-algorithm", "AWS4-HMAC-SHA256"},
		{"x-amz-credential", id + "/" + day + "/" + region + "/s3/aws4_request"}, {"x-amz-date", t.UTC().Format("20060102T150405Z")},
		{"x-amz-signature", hex.EncodeToString(hmacSHA256(k, policy))}}
}

// signV2Form signs a policy with Signature Version 2: the base64
// HMAC-SHA1 of the base64 policy.
func signV2Form(id, secret, policy string) []field {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(policy))
	return []field{{"policy", policy}, {"AWSAccessKeyId", id}, {"signature", base64.StdEncoding.EncodeToString(m.Sum(nil))}}
}

// v4Conditions are the conditions a Version 4 form must hold for its
// x-amz-* fields.
func v4Conditions(id, region string, t time.Time) []any {
	return []any{map[string]string{"x-amz-algorithm": "AWS4-HMAC-SHA256"},
		map[string]string{"x-amz-credential": id + "/" + t.UTC().Format("20060102") + "/" + region + "/s3/aws4_request"},
		map[string]string{"x-amz-date": t.UTC().Format("20060102T150405Z")}}
}

// formBody encodes fields, then the file (unless file is nil), then the
// fields after it.
func formBody(fields []field, filename string, file []byte, after ...field) (*bytes.Buffer, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, f := range fields {
		w.WriteField(f.name, f.value)
	}
	if file != nil {
		fw, _ := w.CreateFormFile("file", filename)
		fw.Write(file)
	}
	for _, f := range after {
		w.WriteField(f.name, f.value)
	}
	w.Close()
	return &b, w.FormDataContentType()
}

func (e *env) postForm(t *testing.T, bucket string, body *bytes.Buffer, contentType string) *http.Response {
	t.Helper()
	// Not following a success_action_redirect, which the test checks.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Post(e.srv.URL+"/"+bucket, contentType, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestPostObject: HTML form uploads, signed with either version, with
// what each form asks for kept; and every refusal, after which nothing
// is stored.
func TestPostObject(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "forms")
	readID, readSecret := e.key(t, "alice", cloudstore.PermRead, "*")
	scopedID, scopedSecret := e.key(t, "alice", cloudstore.PermReadWrite, "elsewhere")
	now := time.Now()
	later := now.Add(time.Hour)
	file := []byte("a file from a form")
	// base is a Version 4 form of the usual shape: key under uploads/,
	// a content type, metadata, a size range.
	base := func(id, secret string, extra []any, fields ...field) []field {
		conds := append(v4Conditions(id, "us-east-1", now), map[string]string{"bucket": "forms"}, []any{"starts-with", "$key", "uploads/"},
			[]any{"content-length-range", 1, 100}, map[string]string{"Content-Type": "text/plain"}, []any{"starts-with", "$x-amz-meta-color", ""})
		conds = append(conds, extra...)
		return append(append([]field{{"key", "uploads/${filename}"}, {"Content-Type", "text/plain"}, {"x-amz-meta-color", "blue"}},
			signV4Form(id, secret, "us-east-1", now, policyDoc(later, conds...))...), fields...)
	}
	tests := []struct {
		name     string
		fields   []field
		file     []byte
		after    []field
		bucket   string
		status   int
		code     string
		stored   string // the key stored, "" for none
		location string // what the Location header starts with, if checked
	}{
		{"Version 4", base(e.id, e.secret, nil), file, nil, "forms", 204, "", "uploads/report.txt", e.srv.URL + "/forms/uploads/report.txt"},
		{"201 with PostResponse", base(e.id, e.secret, []any{map[string]string{"success_action_status": "201"}}, field{"success_action_status", "201"}),
			file, nil, "forms", 201, "", "uploads/report.txt", ""},
		{"200", base(e.id, e.secret, []any{map[string]string{"success_action_status": "200"}}, field{"success_action_status", "200"}),
			file, nil, "forms", 200, "", "uploads/report.txt", ""},
		{"redirect", base(e.id, e.secret, []any{[]any{"starts-with", "$success_action_redirect", "https://app.example/"}}, field{"success_action_redirect", "https://app.example/done?x=1"}),
			file, nil, "forms", 303, "", "uploads/report.txt", "https://app.example/done?"},
		{"x-ignore- field and fields after the file", base(e.id, e.secret, nil, field{"x-ignore-me", "1"}),
			file, []field{{"x-amz-meta-late", "unsigned"}, {"key", "elsewhere"}}, "forms", 204, "", "uploads/report.txt", ""},
		{"SSE-KMS fields", base(e.id, e.secret, []any{map[string]string{"x-amz-server-side-encryption": "aws:kms"}}, field{"x-amz-server-side-encryption", "aws:kms"}),
			file, nil, "forms", 204, "", "uploads/report.txt", ""},
		{"SSE-KMS under a key that does not exist", base(e.id, e.secret, []any{map[string]string{"x-amz-server-side-encryption": "aws:kms"},
			map[string]string{"x-amz-server-side-encryption-aws-kms-key-id": "alias/none"}},
			field{"x-amz-server-side-encryption", "aws:kms"}, field{"x-amz-server-side-encryption-aws-kms-key-id", "alias/none"}),
			file, nil, "forms", 400, "KMS.NotFoundException", "", ""},
		{"Version 2", append([]field{{"key", "v2/${filename}"}}, signV2Form(e.id, e.secret, policyDoc(later, map[string]string{"bucket": "forms"}, []any{"starts-with", "$key", "v2/"}))...),
			file, nil, "forms", 204, "", "v2/report.txt", ""},

		{"an Object Lock field in a bucket without Object Lock", base(e.id, e.secret, []any{map[string]string{"x-amz-object-lock-legal-hold": "ON"}}, field{"x-amz-object-lock-legal-hold", "ON"}),
			file, nil, "forms", 400, "InvalidRequest", "", ""},
		{"anonymous", []field{{"key", "uploads/x"}, {"policy", policyDoc(later)}}, file, nil, "forms", 403, "AccessDenied", "", ""},
		{"wrong secret", base(e.id, "not the secret", nil), file, nil, "forms", 403, "SignatureDoesNotMatch", "", ""},
		{"unknown key", base("AKNOBODY", e.secret, nil), file, nil, "forms", 403, "InvalidAccessKeyId", "", ""},
		{"read-only key", base(readID, readSecret, nil), file, nil, "forms", 403, "AccessDenied", "", ""},
		{"key scoped to another bucket", base(scopedID, scopedSecret, nil), file, nil, "forms", 403, "AccessDenied", "", ""},
		{"expired policy", append([]field{{"key", "uploads/x"}}, signV4Form(e.id, e.secret, "us-east-1", now, policyDoc(now.Add(-time.Second), v4Conditions(e.id, "us-east-1", now)...))...),
			file, nil, "forms", 403, "AccessDenied", "", ""},
		{"key outside the policy", append(base(e.id, e.secret, nil)[1:], field{"key", "other/x"}), file, nil, "forms", 403, "AccessDenied", "", ""},
		{"content type not the policy's", append(base(e.id, e.secret, nil)[:1], append(base(e.id, e.secret, nil)[2:], field{"Content-Type", "text/html"})...),
			file, nil, "forms", 403, "AccessDenied", "", ""},
		{"field the policy does not name", base(e.id, e.secret, nil, field{"x-amz-meta-size", "9"}), file, nil, "forms", 403, "AccessDenied", "", ""},
		{"another bucket", base(e.id, e.secret, nil), file, nil, "forms2", 403, "AccessDenied", "", ""},
		{"file over the range", base(e.id, e.secret, nil), bytes.Repeat([]byte("x"), 101), nil, "forms", 400, "EntityTooLarge", "", ""},
		{"empty file under the range", base(e.id, e.secret, nil), []byte{}, nil, "forms", 400, "EntityTooSmall", "", ""},
		{"no file", base(e.id, e.secret, nil), nil, nil, "forms", 400, "InvalidArgument", "", ""},
		{"no key", append([]field{}, signV4Form(e.id, e.secret, "us-east-1", now, policyDoc(later, v4Conditions(e.id, "us-east-1", now)...))...),
			file, nil, "forms", 400, "InvalidArgument", "", ""},
		{"policy not base64", append([]field{{"key", "x"}}, signV4Form(e.id, e.secret, "us-east-1", now, "%%%")...), file, nil, "forms", 400, "InvalidPolicyDocument", "", ""},
		{"policy not JSON", append([]field{{"key", "x"}}, signV4Form(e.id, e.secret, "us-east-1", now, base64.StdEncoding.EncodeToString([]byte("[1")))...),
			file, nil, "forms", 400, "InvalidPolicyDocument", "", ""},
		{"policy without expiration", append([]field{{"key", "x"}}, signV4Form(e.id, e.secret, "us-east-1", now, base64.StdEncoding.EncodeToString([]byte(`{"conditions":[]}`)))...),
			file, nil, "forms", 400, "InvalidPolicyDocument", "", ""},
		{"both versions", append(base(e.id, e.secret, nil), field{"signature", "x"}), file, nil, "forms", 400, "InvalidArgument", "", ""},
		{"public-read acl in a BucketOwnerEnforced private bucket", base(e.id, e.secret, []any{map[string]string{"acl": "public-read"}}, field{"acl", "public-read"}), file, nil, "forms", 400, "AccessControlListNotSupported", "", ""},
		{"fields too large", base(e.id, e.secret, []any{[]any{"starts-with", "$x-amz-meta-big", ""}}, field{"x-amz-meta-big", strings.Repeat("x", 70<<10)}),
			file, nil, "forms", 400, "MaxPostPreDataLengthExceededError", "", ""},
		{"another region", append([]field{{"key", "x"}}, signV4Form(e.id, e.secret, "eu-west-1", now, policyDoc(later, v4Conditions(e.id, "eu-west-1", now)...))...),
			file, nil, "forms", 400, "AuthorizationHeaderMalformed", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"uploads/report.txt", "v2/report.txt", "elsewhere", "x", "other/x"} {
				c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("forms"), Key: aws.String(k)})
			}
			body, ct := formBody(tt.fields, "report.txt", tt.file, tt.after...)
			resp := e.postForm(t, tt.bucket, body, ct)
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var got s3Error
			if resp.StatusCode >= 300 && resp.StatusCode != 303 {
				xml.Unmarshal(data, &got)
			}
			if resp.StatusCode != tt.status || tt.code != "" && got.Code != tt.code {
				t.Fatalf("got %d %s, want %d %s", resp.StatusCode, data, tt.status, tt.code)
			}
			if tt.location != "" && !strings.HasPrefix(resp.Header.Get("Location"), tt.location) {
				t.Errorf("Location %q, want it to start with %q", resp.Header.Get("Location"), tt.location)
			}
			list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("forms")})
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, o := range list.Contents {
				keys = append(keys, aws.ToString(o.Key))
			}
			want := []string(nil)
			if tt.stored != "" {
				want = []string{tt.stored}
			}
			if strings.Join(keys, ",") != strings.Join(want, ",") {
				t.Fatalf("afterwards the bucket holds %q, want %q", keys, want)
			}
			if tt.stored == "" {
				return
			}
			got2, etag := mustGet(t, c, "forms", tt.stored)
			if !bytes.Equal(got2, tt.file) {
				t.Errorf("stored %q, want %q", got2, tt.file)
			}
			if resp.Header.Get("ETag") != etag && resp.StatusCode != 303 {
				t.Errorf("ETag %q, want the object's %q", resp.Header.Get("ETag"), etag)
			}
			switch tt.status {
			case 201:
				var pr struct{ Location, Bucket, Key, ETag string }
				if err := xml.Unmarshal(data, &pr); err != nil || pr.Bucket != "forms" || pr.Key != tt.stored || pr.ETag != etag {
					t.Errorf("PostResponse %s (%v), want bucket forms, key %s, ETag %s", data, err, tt.stored, etag)
				}
			case 303:
				u, _ := url.Parse(resp.Header.Get("Location"))
				if q := u.Query(); q.Get("x") != "1" || q.Get("bucket") != "forms" || q.Get("key") != tt.stored || q.Get("etag") != etag {
					t.Errorf("redirected to %s, want x=1, bucket, key and etag", u)
				}
			}
			if !strings.HasPrefix(tt.stored, "uploads/") {
				return
			}
			head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("forms"), Key: aws.String(tt.stored)})
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(tt.name, "SSE-KMS") != (head.ServerSideEncryption == types.ServerSideEncryptionAwsKms) {
				t.Errorf("stored with encryption %q", head.ServerSideEncryption)
			}
			if aws.ToString(head.ContentType) != "text/plain" || head.Metadata["color"] != "blue" || head.Metadata["late"] != "" {
				t.Errorf("stored type %q, metadata %v; want text/plain, color=blue only", aws.ToString(head.ContentType), head.Metadata)
			}
		})
	}
}

// TestPostObjectTagging: a form's tagging field tags the object.
func TestPostObjectTagging(t *testing.T) {
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "tagforms")
	now := time.Now()
	tagging := `<Tagging><TagSet><Tag><Key>team</Key><Value>red</Value></Tag></TagSet></Tagging>`
	policy := policyDoc(now.Add(time.Hour), append(v4Conditions(e.id, "us-east-1", now), map[string]string{"key": "t"}, map[string]string{"tagging": tagging})...)
	for _, tt := range []struct {
		tagging string
		status  int
	}{{tagging, 204}, {"<Tagging>", 403}} {
		body, ct := formBody(append([]field{{"key", "t"}, {"tagging", tt.tagging}}, signV4Form(e.id, e.secret, "us-east-1", now, policy)...), "f", []byte("x"))
		resp := e.postForm(t, "tagforms", body, ct)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Fatalf("tagging %q: got %d, want %d", tt.tagging, resp.StatusCode, tt.status)
		}
	}
	out, err := c.GetObjectTagging(context.Background(), &s3.GetObjectTaggingInput{Bucket: aws.String("tagforms"), Key: aws.String("t")})
	if err != nil || len(out.TagSet) != 1 || aws.ToString(out.TagSet[0].Key) != "team" || aws.ToString(out.TagSet[0].Value) != "red" {
		t.Fatalf("tags %v, %v; want team=red", out, err)
	}
}

// boto3Post uploads with boto3's generate_presigned_post, Version 4 and
// its default (Version 2 against a custom endpoint), through requests,
// and prints each answer's status.
const boto3Post = `
import sys, boto3, requests
from botocore.config import Config
url, bucket = sys.argv[1], sys.argv[2]
s = boto3.session.Session()
out = []
for name, cfg in (("v4", Config(signature_version="s3v4")), ("v2", None)):
    c = s.client("s3", endpoint_url=url, config=cfg)
    p = c.generate_presigned_post(bucket, name + "/${filename}", Fields={"Content-Type": "text/plain", "x-amz-meta-by": "boto3"},
        Conditions=[{"Content-Type": "text/plain"}, {"x-amz-meta-by": "boto3"}, ["content-length-range", 1, 1000]], ExpiresIn=600)
    r = requests.post(p["url"], data=p["fields"], files={"file": ("hello.txt", b"posted by boto3")})
    out.append(str(r.status_code))
    r = requests.post(p["url"], data=p["fields"], files={"file": ("big.txt", b"x" * 1001)})
    out.append(str(r.status_code))
print(" ".join(out))
`

func TestBoto3PresignedPost(t *testing.T) {
	python := tooltest.Need(t, "python3", "-c", "import boto3, requests")
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "boto-forms")
	if got := strings.TrimSpace(e.output(t, python, "-c", boto3Post, e.srv.URL, "boto-forms")); got != "204 400 204 400" {
		t.Fatalf("boto3's posts answered %s, want 204 400 204 400 (the second of each too large)", got)
	}
	for _, key := range []string{"v4/hello.txt", "v2/hello.txt"} {
		head, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("boto-forms"), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if aws.ToString(head.ContentType) != "text/plain" || head.Metadata["by"] != "boto3" || aws.ToInt64(head.ContentLength) != 15 {
			t.Errorf("%s: type %q, metadata %v, %d bytes; want text/plain, by=boto3, 15", key, aws.ToString(head.ContentType), head.Metadata, aws.ToInt64(head.ContentLength))
		}
	}
}
