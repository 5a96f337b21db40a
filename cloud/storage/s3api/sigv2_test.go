package s3api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/sigv2"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// output runs a client of e's for at most two minutes and returns its
// standard output, failing the test if it fails.
func (e *env) output(t *testing.T, path string, args ...string) string {
	t.Helper()
	return e.outputEnv(t, e.clientEnv(t), path, args...)
}

// outputEnv is output with the environment env.
func (e *env) outputEnv(t *testing.T, env []string, path string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", path, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

// boto3V2 drives the endpoint with boto3's Signature Version 2 signer
// ("s3"): uploads (one part and multipart), reads with an override,
// lists and deletes; then prints the URLs its default client presigns,
// which against a custom endpoint are Version 2 too.
const boto3V2 = `
import json, sys, boto3
from botocore.config import Config
url, bucket = sys.argv[1], sys.argv[2]
s = boto3.session.Session()
v2 = s.client("s3", endpoint_url=url, config=Config(signature_version="s3", s3={"addressing_style": "path"}))
v2.create_bucket(Bucket=bucket)
key = "dir/a b+c é.txt"
v2.put_object(Bucket=bucket, Key=key, Body=b"hello v2", ContentType="text/plain", Metadata={"color": "blue"})
h = v2.head_object(Bucket=bucket, Key=key)
assert h["Metadata"] == {"color": "blue"} and h["ContentType"] == "text/plain", h
g = v2.get_object(Bucket=bucket, Key=key, ResponseContentType="application/x-test")
assert g["Body"].read() == b"hello v2" and g["ContentType"] == "application/x-test", g
assert [o["Key"] for o in v2.list_objects_v2(Bucket=bucket)["Contents"]] == [key]
up = v2.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
etag = v2.upload_part(Bucket=bucket, Key="mp", UploadId=up, PartNumber=1, Body=b"part one")["ETag"]
v2.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=up, MultipartUpload={"Parts": [{"ETag": etag, "PartNumber": 1}]})
assert v2.get_object(Bucket=bucket, Key="mp")["Body"].read() == b"part one"
v2.delete_object(Bucket=bucket, Key="mp")
d = s.client("s3", endpoint_url=url)
print(json.dumps({
    "get": d.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}),
    "put": d.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "presigned", "ContentType": "text/csv", "Metadata": {"owner": "bob"}}),
}))
`

func TestBoto3SignatureV2(t *testing.T) {
	python := tooltest.Need(t, "python3", "-c", "import boto3")
	e := newEnv(t)
	var urls struct{ Get, Put string }
	if err := json.Unmarshal([]byte(e.output(t, python, "-c", boto3V2, e.srv.URL, "legacy")), &urls); err != nil {
		t.Fatal(err)
	}
	for name, u := range map[string]string{"get": urls.Get, "put": urls.Put} {
		if !strings.Contains(u, "AWSAccessKeyId=") || strings.Contains(u, "X-Amz-Signature") {
			t.Fatalf("boto3 presigned %s as %s; want Signature Version 2", name, u)
		}
	}
	resp, err := http.Get(urls.Get)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(data) != "hello v2" {
		t.Errorf("presigned GET: got %d %q, want 200 %q", resp.StatusCode, data, "hello v2")
	}
	req, _ := http.NewRequest("PUT", urls.Put, strings.NewReader("a,b\n"))
	if code, s3e := do(t, req); code != 200 {
		t.Fatalf("presigned PUT: got %d %+v, want 200", code, s3e)
	}
	head, err := e.sdk(e.id, e.secret).HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("legacy"), Key: aws.String("presigned")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(head.ContentType) != "text/csv" || head.Metadata["owner"] != "bob" || aws.ToInt64(head.ContentLength) != 4 {
		t.Errorf("presigned PUT stored type %q, metadata %v, %d bytes; want text/csv, owner=bob, 4", aws.ToString(head.ContentType), head.Metadata, aws.ToInt64(head.ContentLength))
	}
}

// TestAWSCLIv1Presign: AWS CLI v1 presigns with Signature Version 2.
func TestAWSCLIv1Presign(t *testing.T) {
	cli := tooltest.Need(t, "aws", "--version")
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "cli")
	mustPut(t, c, "cli", "k", []byte("from the cli"))
	u := strings.TrimSpace(e.output(t, cli, "--endpoint-url", e.srv.URL, "s3", "presign", "s3://cli/k", "--expires-in", "300"))
	if !strings.Contains(u, "AWSAccessKeyId=") {
		t.Skipf("this AWS CLI presigns with Signature Version 4 (%s); TestAWSSDKPresigned covers it, and Signature Version 2 presigning is held by TestBoto3Interop (boto3 presigns with V2 against a custom endpoint), which fails rather than skips with CI=true", u)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(data) != "from the cli" {
		t.Errorf("GET %s: got %d %q, want 200 %q", u, resp.StatusCode, data, "from the cli")
	}
}

// signV2 signs r with Signature Version 2 in its Authorization header,
// dated t; bucket is the bucket of a virtual-hosted-style request.
func signV2(r *http.Request, id, secret, bucket string, t time.Time) *http.Request {
	r.Header.Set("Date", t.UTC().Format(http.TimeFormat))
	sts := sigv2.StringToSign(r.Method, r.Header, sigv2.Resource(bucket, r.URL.EscapedPath(), r.URL.Query()), r.Header.Get("Date"))
	r.Header.Set("Authorization", "AWS "+id+":"+sigv2.Sign(secret, sts))
	return r
}

// presignV2 adds a Signature Version 2 to r's query, expiring at exp.
func presignV2(r *http.Request, id, secret string, exp time.Time) *http.Request {
	q := r.URL.Query()
	q.Set("Expires", strconv.FormatInt(exp.Unix(), 10))
	r.URL.RawQuery = q.Encode()
	h := r.Header.Clone()
	for name, vs := range q {
		if l := strings.ToLower(name); strings.HasPrefix(l, "x-amz-") || l == "content-type" {
			h[http.CanonicalHeaderKey(l)] = append(h[http.CanonicalHeaderKey(l)], vs...)
		}
	}
	sts := sigv2.StringToSign(r.Method, h, sigv2.Resource("", r.URL.EscapedPath(), q), q.Get("Expires"))
	q.Set("AWSAccessKeyId", id)
	q.Set("Signature", sigv2.Sign(secret, sts))
	r.URL.RawQuery = q.Encode()
	return r
}

// TestSignatureV2Answers: requests signed with Signature Version 2, well
// and badly, and what each is answered; a refused upload stores nothing.
func TestSignatureV2Answers(t *testing.T) {
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "sigv2")
	mustPut(t, c, "sigv2", "kept", []byte("kept"))
	readID, readSecret := e.key(t, "alice", cloudstore.PermRead, "*")
	now := time.Now()
	req := func(method, path, body string) *http.Request {
		r, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	withHeader := func(r *http.Request, k, v string) *http.Request { r.Header.Set(k, v); return r }
	tests := []struct {
		name   string
		req    func() *http.Request
		status int
		code   string
		stored string // the key "new" holds this afterwards ("" for none)
	}{
		{"header-signed PUT", func() *http.Request { return signV2(req("PUT", "/sigv2/new", "body"), e.id, e.secret, "", now) }, 200, "", "body"},
		{"header-signed PUT, x-amz-date", func() *http.Request {
			r := withHeader(req("PUT", "/sigv2/new", "body"), "X-Amz-Date", now.UTC().Format(http.TimeFormat))
			sts := sigv2.StringToSign("PUT", r.Header, "/sigv2/new", "")
			return withHeader(r, "Authorization", "AWS "+e.id+":"+sigv2.Sign(e.secret, sts))
		}, 200, "", "body"},
		{"header-signed GET", func() *http.Request { return signV2(req("GET", "/sigv2/kept", ""), e.id, e.secret, "", now) }, 200, "", ""},
		{"presigned GET", func() *http.Request {
			return presignV2(req("GET", "/sigv2/kept", ""), e.id, e.secret, now.Add(time.Minute))
		}, 200, "", ""},
		{"presigned PUT with metadata", func() *http.Request {
			r := req("PUT", "/sigv2/new?x-amz-meta-a=1", "body")
			return presignV2(r, e.id, e.secret, now.Add(time.Minute))
		}, 200, "", "body"},
		{"wrong secret", func() *http.Request { return signV2(req("PUT", "/sigv2/new", "body"), e.id, "nope", "", now) }, 403, "SignatureDoesNotMatch", ""},
		{"unknown key", func() *http.Request { return signV2(req("PUT", "/sigv2/new", "body"), "AKNOBODY", e.secret, "", now) }, 403, "InvalidAccessKeyId", ""},
		{"malformed header", func() *http.Request {
			return withHeader(req("PUT", "/sigv2/new", "body"), "Authorization", "AWS "+e.id)
		}, 400, "InvalidArgument", ""},
		{"dated 20 minutes ago", func() *http.Request {
			return signV2(req("PUT", "/sigv2/new", "body"), e.id, e.secret, "", now.Add(-20*time.Minute))
		}, 403, "RequestTimeTooSkewed", ""},
		{"expired URL", func() *http.Request {
			return presignV2(req("PUT", "/sigv2/new", "body"), e.id, e.secret, now.Add(-time.Second))
		}, 403, "AccessDenied", ""},
		{"URL for more than 7 days", func() *http.Request {
			return presignV2(req("PUT", "/sigv2/new", "body"), e.id, e.secret, now.Add(8*24*time.Hour))
		}, 400, "AuthorizationQueryParametersError", ""},
		{"URL and header", func() *http.Request {
			return signV2(presignV2(req("PUT", "/sigv2/new", "body"), e.id, e.secret, now.Add(time.Minute)), e.id, e.secret, "", now)
		}, 400, "InvalidArgument", ""},
		{"unsigned x-amz query parameter", func() *http.Request {
			return signV2(req("PUT", "/sigv2/new?x-amz-tagging=a%3D1", "body"), e.id, e.secret, "", now)
		}, 403, "AccessDenied", ""},
		{"metadata in URL and header, alike", func() *http.Request {
			r := presignV2(req("PUT", "/sigv2/new?x-amz-meta-a=1", "body"), e.id, e.secret, now.Add(time.Minute))
			return withHeader(r, "X-Amz-Meta-A", "1")
		}, 200, "", "body"},
		{"metadata in URL and header, different", func() *http.Request {
			r := presignV2(req("PUT", "/sigv2/new?x-amz-meta-a=1", "body"), e.id, e.secret, now.Add(time.Minute))
			return withHeader(r, "X-Amz-Meta-A", "2")
		}, 403, "SignatureDoesNotMatch", ""},
		// botocore's URL names the Content-Type; S3 signs Version 2 over
		// the headers sent, so clients send it as well.
		{"Content-Type in URL and header, alike", func() *http.Request {
			r := presignV2(req("PUT", "/sigv2/new?Content-Type=text%2Fcsv", "body"), e.id, e.secret, now.Add(time.Minute))
			return withHeader(r, "Content-Type", "text/csv")
		}, 200, "", "body"},
		{"Content-Type in URL and header, different", func() *http.Request {
			r := presignV2(req("PUT", "/sigv2/new?Content-Type=text%2Fcsv", "body"), e.id, e.secret, now.Add(time.Minute))
			return withHeader(r, "Content-Type", "text/html")
		}, 403, "SignatureDoesNotMatch", ""},
		{"wrong Content-MD5", func() *http.Request {
			r := withHeader(req("PUT", "/sigv2/new", "body"), "Content-Md5", "1B2M2Y8AsgTpgAmY7PhCfg==")
			return signV2(r, e.id, e.secret, "", now)
		}, 400, "BadDigest", ""},
		{"read-only key writes", func() *http.Request { return signV2(req("PUT", "/sigv2/new", "body"), readID, readSecret, "", now) }, 403, "AccessDenied", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String("sigv2"), Key: aws.String("new")})
			status, got := do(t, tt.req())
			if status != tt.status || got.Code != tt.code {
				t.Fatalf("got %d %+v, want %d %s", status, got, tt.status, tt.code)
			}
			out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("sigv2"), Key: aws.String("new")})
			stored := ""
			if err == nil {
				b, _ := io.ReadAll(out.Body)
				out.Body.Close()
				stored = string(b)
			}
			if stored != tt.stored {
				t.Errorf("afterwards v2/new holds %q, want %q", stored, tt.stored)
			}
		})
	}
}

// TestSignatureV2VirtualHost: the canonical resource of a
// virtual-hosted-style request names its bucket.
func TestSignatureV2VirtualHost(t *testing.T) {
	e := newEnv(t)
	mustBuckets(t, e.sdk(e.id, e.secret), "vhost")
	u := &url.URL{Scheme: "http", Host: "vhost.localhost:" + e.addr()[strings.LastIndex(e.addr(), ":")+1:], Path: "/x y"}
	r, _ := http.NewRequest("PUT", u.String(), strings.NewReader("v"))
	resp, err := e.loopbackClient().Do(signV2(r, e.id, e.secret, "vhost", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("virtual-hosted PUT: got %d, want 200", resp.StatusCode)
	}
	got, _ := mustGet(t, e.sdk(e.id, e.secret), "vhost", "x y")
	if string(got) != "v" {
		t.Errorf("vh/x y holds %q, want %q", got, "v")
	}
}
