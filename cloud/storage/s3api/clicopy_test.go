package s3api_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// clientEnv is the environment of a real client of e: alice's key, the
// region, and no configuration of the user's.
func (e *env) clientEnv(t *testing.T) []string {
	dir := t.TempDir()
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			out = append(out, kv)
		}
	}
	return append(out, "AWS_ACCESS_KEY_ID="+e.id, "AWS_SECRET_ACCESS_KEY="+e.secret, "AWS_DEFAULT_REGION=us-east-1", "AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE="+filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED=true")
}

// wantCopied checks that bucket/key holds body, copied in the 8 MiB parts
// of the AWS CLI and boto3 (UploadPartCopy, not one CopyObject).
func wantCopied(t *testing.T, c *s3.Client, bucket, key string, body []byte) {
	t.Helper()
	got, etag := mustGet(t, c, bucket, key)
	want := multipartETag(md5Hex(body[:8<<20]), md5Hex(body[8<<20:16<<20]), md5Hex(body[16<<20:]))
	if !bytes.Equal(got, body) || etag != want {
		t.Errorf("%s/%s: %d bytes (MD5 %s), ETag %s; want %d bytes (MD5 %s), ETag %s (three copied parts)",
			bucket, key, len(got), md5Hex(got), etag, len(body), md5Hex(body), want)
	}
}

// run runs a client of e's for at most two minutes, failing the test
// with its output if it fails.
func (e *env) run(t *testing.T, path string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = e.clientEnv(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(path), strings.Join(args, " "), err, out)
	}
}

// TestAWSCLICopiesBetweenBuckets: aws s3 cp, mv and sync of a 20 MiB
// object between buckets, which the CLI does with UploadPartCopy above
// its 8 MiB multipart threshold.
func TestAWSCLICopiesBetweenBuckets(t *testing.T) {
	cli := tooltest.Need(t, "aws", "--version")
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "cli-a", "cli-b")
	body := randomBytes(20<<20, 41)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cli-a"), Key: aws.String("big"), Body: bytes.NewReader(body),
		ContentType: aws.String("video/mp4")}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, c, "cli-a", "dir/moved", body)
	mustPut(t, c, "cli-a", "tree/one", body)
	s3cmd := func(args ...string) { e.run(t, cli, append([]string{"--endpoint-url", e.srv.URL, "s3"}, args...)...) }

	s3cmd("cp", "s3://cli-a/big", "s3://cli-b/big")
	wantCopied(t, c, "cli-b", "big", body)
	// (AWS CLI v1 leaves the content type and metadata behind on a
	// multipart copy, against S3 too; v2 carries them with --copy-props.)
	s3cmd("mv", "s3://cli-a/dir/moved", "s3://cli-b/moved")
	wantCopied(t, c, "cli-b", "moved", body)
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("cli-a"), Key: aws.String("dir/moved")}); httpStatus(err) != 404 {
		t.Errorf("mv left its source: %v", err)
	}
	s3cmd("sync", "s3://cli-a/tree", "s3://cli-b/tree")
	wantCopied(t, c, "cli-b", "tree/one", body)
	wantNoUploads(t, c, "cli-b")
}

// wantNoUploads checks that no multipart upload was left in bucket.
func wantNoUploads(t *testing.T, c *s3.Client, bucket string) {
	t.Helper()
	lu, err := c.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil || len(lu.Uploads) != 0 {
		t.Errorf("uploads left in %s: %+v, %v", bucket, lu, err)
	}
}

// boto3Copy is boto3's managed copy (s3transfer): a HeadObject, then
// UploadPartCopy of 8 MiB ranges above its 8 MiB threshold.
const boto3Copy = `
import sys, boto3
from botocore.config import Config
url, src, dst, key = sys.argv[1:5]
s3 = boto3.client("s3", endpoint_url=url, config=Config(s3={"addressing_style": "path"}))
s3.copy({"Bucket": src, "Key": key}, dst, key)
boto3.resource("s3", endpoint_url=url).Object(dst, key + ".2").copy({"Bucket": src, "Key": key})
`

// TestBoto3ManagedCopy: boto3's copy of a 20 MiB object between buckets,
// with the client and with the resource API.
func TestBoto3ManagedCopy(t *testing.T) {
	python := tooltest.Need(t, "python3", "-c", "import boto3")
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "boto-a", "boto-b")
	body := randomBytes(20<<20, 51)
	mustPut(t, c, "boto-a", "big", body)
	e.run(t, python, "-c", boto3Copy, e.srv.URL, "boto-a", "boto-b", "big")
	wantCopied(t, c, "boto-b", "big", body)
	wantCopied(t, c, "boto-b", "big.2", body)
	wantNoUploads(t, c, "boto-b")
}
