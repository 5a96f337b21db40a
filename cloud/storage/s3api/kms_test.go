package s3api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/kms"
	"github.com/latticenet/lattice/cloud/storage/sse"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// kmsARN is the ARN the endpoint answers for alice's key id.
func kmsARN(id string) string { return kms.ARN("us-east-1", "alice", id) }

// TestAWSSDKKMS: SSE-KMS through the AWS SDK for Go: the default key and a
// named one (by name, alias, id and ARN), encryption contexts, range
// reads, the answers' headers, a disabled key refusing reads and writes
// with AWS's code, rotation, and nothing on disk in the clear.
func TestAWSSDKKMS(t *testing.T) {
	e, c, b := newBucket(t, "kms")
	ctx := context.Background()
	logs, err := e.kms.Create(ctx, "alice", "logs", "")
	if err != nil {
		t.Fatal(err)
	}
	body := secretBody(300<<10 + 7)

	// No key named: the account's default key, made on first use.
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("default"), Body: bytes.NewReader(body),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms})
	if err != nil || put.ServerSideEncryption != types.ServerSideEncryptionAwsKms {
		t.Fatalf("an SSE-KMS put: %+v %v", put, err)
	}
	def, err := e.kms.Get(ctx, "alice", "aws/s3")
	if err != nil || aws.ToString(put.SSEKMSKeyId) != kmsARN(def.ID) {
		t.Fatalf("key id %q, want the default key's ARN (%+v, %v)", aws.ToString(put.SSEKMSKeyId), def, err)
	}
	if got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("default")}); err != nil {
		t.Fatal(err)
	} else if got.ServerSideEncryption != types.ServerSideEncryptionAwsKms || aws.ToString(got.SSEKMSKeyId) != kmsARN(def.ID) {
		t.Fatalf("get: %q %q", got.ServerSideEncryption, aws.ToString(got.SSEKMSKeyId))
	} else if data := readAll(t, got, nil); !bytes.Equal(data, body) {
		t.Fatalf("get: %d bytes", len(data))
	}

	// A named key, every way S3 names one; a context and a bucket key.
	encCtx := base64.StdEncoding.EncodeToString([]byte(`{"team":"ops"}`))
	for i, ref := range []string{"logs", "alias/logs", logs.ID, kmsARN(logs.ID), "arn:aws:kms:us-east-1:alice:alias/logs"} {
		key := aws.String("named-" + string(rune('a'+i)))
		put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: key, Body: bytes.NewReader(body),
			ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String(ref),
			SSEKMSEncryptionContext: aws.String(encCtx), BucketKeyEnabled: aws.Bool(true)})
		if err != nil || aws.ToString(put.SSEKMSKeyId) != kmsARN(logs.ID) || !aws.ToBool(put.BucketKeyEnabled) {
			t.Fatalf("put under %q: %+v %v", ref, put, err)
		}
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: key})
		if err != nil || head.ServerSideEncryption != types.ServerSideEncryptionAwsKms || aws.ToString(head.SSEKMSKeyId) != kmsARN(logs.ID) {
			t.Fatalf("head under %q: %+v %v", ref, head, err)
		}
		got := read(t)(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: key, Range: aws.String("bytes=70000-200000")}))
		if !bytes.Equal(got, body[70000:200001]) {
			t.Fatalf("range under %q: %d bytes", ref, len(got))
		}
	}
	if plaintextOnDisk(t, e.dir) {
		t.Fatal("an SSE-KMS body reached the disk in the clear")
	}

	// Refusals, each changing nothing.
	for name, in := range map[string]*s3.PutObjectInput{
		"a key that does not exist": {SSEKMSKeyId: aws.String("alias/nope")},
		"another account's key":     {SSEKMSKeyId: aws.String(mustKey(t, e, "bob", "theirs").ID)},
	} {
		in.Bucket, in.Key, in.Body, in.ServerSideEncryption = b, aws.String("refused"), strings.NewReader("x"), types.ServerSideEncryptionAwsKms
		if _, err := c.PutObject(ctx, in); apiCode(err) != "KMS.NotFoundException" || httpStatus(err) != 400 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("refused")}); httpStatus(err) != 404 {
		t.Fatalf("a refused put left an object: %v", err)
	}
	if status, _ := do(t, e.signed(t, "GET", "/kms/default", nil, "", map[string]string{"X-Amz-Server-Side-Encryption": "aws:kms"})); status != 400 {
		t.Errorf("a read declaring SSE-KMS: %d", status)
	}

	// Disabled: reads and writes refused with AWS's code; enabled, back.
	if _, err := e.kms.SetEnabled(ctx, "alice", "logs", false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("named-a")}); apiCode(err) != "KMS.DisabledException" || httpStatus(err) != 400 {
		t.Fatalf("a read under a disabled key: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("named-a"), Body: strings.NewReader("x"),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String("logs")}); apiCode(err) != "KMS.DisabledException" {
		t.Fatalf("a write under a disabled key: %v", err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copied"), CopySource: aws.String("kms/named-a")}); apiCode(err) != "KMS.DisabledException" {
		t.Fatalf("a copy from under a disabled key: %v", err)
	}
	if _, err := e.kms.SetEnabled(ctx, "alice", "logs", true); err != nil {
		t.Fatal(err)
	}
	if got := read(t)(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("named-a")})); !bytes.Equal(got, body) {
		t.Fatal("the object changed while its key was disabled")
	}

	// Rotated: new objects under the new material, old ones still read.
	if _, err := e.kms.Rotate(ctx, "alice", "logs"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("after"), Body: bytes.NewReader(body),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String("logs")}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"named-a", "after"} {
		if got := read(t)(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(k)})); !bytes.Equal(got, body) {
			t.Fatalf("%s after rotation: %d bytes", k, len(got))
		}
	}
}

// read reads a GetObject's whole body, failing t on an error.
func read(t *testing.T) func(*s3.GetObjectOutput, error) []byte {
	return func(out *s3.GetObjectOutput, err error) []byte { t.Helper(); return readAll(t, out, err) }
}

func mustKey(t *testing.T, e *env, account, name string) kms.Key {
	t.Helper()
	k, err := e.kms.Create(context.Background(), account, name, "")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestAWSSDKKMSMultipartAndDefault: a bucket whose default is SSE-KMS
// under a named key, multipart uploads under it (every answer naming the
// key), and GetBucketEncryption's answer.
func TestAWSSDKKMSMultipartAndDefault(t *testing.T) {
	e, c, b := newBucket(t, "kmsdef")
	ctx := context.Background()
	k := mustKey(t, e, "alice", "bucket-default")
	conf := func(id string) *types.ServerSideEncryptionConfiguration {
		return &types.ServerSideEncryptionConfiguration{Rules: []types.ServerSideEncryptionRule{{BucketKeyEnabled: aws.Bool(true),
			ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAwsKms, KMSMasterKeyID: aws.String(id)}}}}
	}
	if _, err := c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: b, ServerSideEncryptionConfiguration: conf("alias/none")}); apiCode(err) != "KMS.NotFoundException" {
		t.Fatalf("a default under a key that does not exist: %v", err)
	}
	if _, err := c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: b, ServerSideEncryptionConfiguration: conf("bucket-default")}); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: b})
	if err != nil {
		t.Fatal(err)
	}
	rule := got.ServerSideEncryptionConfiguration.Rules[0]
	if rule.ApplyServerSideEncryptionByDefault.SSEAlgorithm != types.ServerSideEncryptionAwsKms ||
		aws.ToString(rule.ApplyServerSideEncryptionByDefault.KMSMasterKeyID) != kmsARN(k.ID) || !aws.ToBool(rule.BucketKeyEnabled) {
		t.Fatalf("GetBucketEncryption: %+v %+v", rule, rule.ApplyServerSideEncryptionByDefault)
	}

	// A put that asks nothing gets the default.
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("plain"), Body: strings.NewReader("hello")})
	if err != nil || put.ServerSideEncryption != types.ServerSideEncryptionAwsKms || aws.ToString(put.SSEKMSKeyId) != kmsARN(k.ID) || !aws.ToBool(put.BucketKeyEnabled) {
		t.Fatalf("a put under the bucket's default: %+v %v", put, err)
	}

	// Multipart under the default: every step answers the key.
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp")})
	if err != nil || cu.ServerSideEncryption != types.ServerSideEncryptionAwsKms || aws.ToString(cu.SSEKMSKeyId) != kmsARN(k.ID) {
		t.Fatalf("CreateMultipartUpload: %+v %v", cu, err)
	}
	parts := [][]byte{secretBody(5 << 20), secretBody(1 << 20)}
	var done []types.CompletedPart
	for i, p := range parts {
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: cu.UploadId, PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
		if err != nil || up.ServerSideEncryption != types.ServerSideEncryptionAwsKms || aws.ToString(up.SSEKMSKeyId) != kmsARN(k.ID) {
			t.Fatalf("UploadPart %d: %+v %v", i+1, up, err)
		}
		done = append(done, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	comp, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil || comp.ServerSideEncryption != types.ServerSideEncryptionAwsKms || aws.ToString(comp.SSEKMSKeyId) != kmsARN(k.ID) {
		t.Fatalf("CompleteMultipartUpload: %+v %v", comp, err)
	}
	want := append(bytes.Clone(parts[0]), parts[1]...)
	if got := read(t)(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("mp"), Range: aws.String("bytes=5242000-5243000")})); !bytes.Equal(got, want[5242000:5243001]) {
		t.Fatalf("a range across the parts: %d bytes", len(got))
	}
	if plaintextOnDisk(t, e.dir) {
		t.Fatal("a body reached the disk in the clear")
	}
}

// TestAWSSDKKMSCopies: CopyObject and UploadPartCopy between SSE-C,
// SSE-S3, SSE-KMS and DSSE-KMS in every direction, each answering the target's
// encryption headers and the source's bytes.
func TestAWSSDKKMSCopies(t *testing.T) {
	e, c, b := newBucket(t, "kmscopy")
	ctx := context.Background()
	k := mustKey(t, e, "alice", "copies")
	ck := newSSECKey(7)
	body := secretBody(200 << 10)
	type mode struct {
		name  string
		put   func(*s3.PutObjectInput)
		copy  func(*s3.CopyObjectInput)
		src   func(*s3.CopyObjectInput)
		read  func(*s3.GetObjectInput)
		check func(types.ServerSideEncryption, *string, *string) bool
	}
	modes := []mode{
		{name: "sse-c",
			put: func(in *s3.PutObjectInput) {
				in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), ck.key, ck.md5
			},
			copy: func(in *s3.CopyObjectInput) {
				in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), ck.key, ck.md5
			},
			src: func(in *s3.CopyObjectInput) {
				in.CopySourceSSECustomerAlgorithm, in.CopySourceSSECustomerKey, in.CopySourceSSECustomerKeyMD5 = aws.String("AES256"), ck.key, ck.md5
			},
			read: func(in *s3.GetObjectInput) {
				in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), ck.key, ck.md5
			},
			check: func(sse types.ServerSideEncryption, kmsID, alg *string) bool {
				return sse == "" && aws.ToString(alg) == "AES256" && kmsID == nil
			}},
		{name: "sse-s3",
			put:  func(in *s3.PutObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 },
			copy: func(in *s3.CopyObjectInput) { in.ServerSideEncryption = types.ServerSideEncryptionAes256 },
			src:  func(*s3.CopyObjectInput) {}, read: func(*s3.GetObjectInput) {},
			check: func(sse types.ServerSideEncryption, kmsID, alg *string) bool {
				return sse == types.ServerSideEncryptionAes256 && kmsID == nil && alg == nil
			}},
		{name: "sse-kms",
			put: func(in *s3.PutObjectInput) {
				in.ServerSideEncryption, in.SSEKMSKeyId = types.ServerSideEncryptionAwsKms, aws.String("copies")
			},
			copy: func(in *s3.CopyObjectInput) {
				in.ServerSideEncryption, in.SSEKMSKeyId = types.ServerSideEncryptionAwsKms, aws.String("copies")
			},
			src: func(*s3.CopyObjectInput) {}, read: func(*s3.GetObjectInput) {},
			check: func(sse types.ServerSideEncryption, kmsID, alg *string) bool {
				return sse == types.ServerSideEncryptionAwsKms && aws.ToString(kmsID) == kmsARN(k.ID) && alg == nil
			}},
		{name: "dsse-kms",
			put: func(in *s3.PutObjectInput) {
				in.ServerSideEncryption, in.SSEKMSKeyId = types.ServerSideEncryptionAwsKmsDsse, aws.String("copies")
			},
			copy: func(in *s3.CopyObjectInput) {
				in.ServerSideEncryption, in.SSEKMSKeyId = types.ServerSideEncryptionAwsKmsDsse, aws.String("copies")
			},
			src: func(*s3.CopyObjectInput) {}, read: func(*s3.GetObjectInput) {},
			check: func(sse types.ServerSideEncryption, kmsID, alg *string) bool {
				return sse == types.ServerSideEncryptionAwsKmsDsse && aws.ToString(kmsID) == kmsARN(k.ID) && alg == nil
			}},
	}
	for _, from := range modes {
		in := &s3.PutObjectInput{Bucket: b, Key: aws.String("src-" + from.name), Body: bytes.NewReader(body)}
		from.put(in)
		if _, err := c.PutObject(ctx, in); err != nil {
			t.Fatalf("put %s: %v", from.name, err)
		}
	}
	for _, from := range modes {
		for _, to := range modes {
			t.Run(from.name+"-to-"+to.name, func(t *testing.T) {
				dst := aws.String("dst-" + from.name + "-" + to.name)
				in := &s3.CopyObjectInput{Bucket: b, Key: dst, CopySource: aws.String("kmscopy/src-" + from.name)}
				from.src(in)
				to.copy(in)
				out, err := c.CopyObject(ctx, in)
				if err != nil {
					t.Fatal(err)
				}
				if !to.check(out.ServerSideEncryption, out.SSEKMSKeyId, out.SSECustomerAlgorithm) {
					t.Errorf("CopyObject answered %q, key %q, customer algorithm %q", out.ServerSideEncryption, aws.ToString(out.SSEKMSKeyId), aws.ToString(out.SSECustomerAlgorithm))
				}
				get := &s3.GetObjectInput{Bucket: b, Key: dst}
				to.read(get)
				if got := read(t)(c.GetObject(ctx, get)); !bytes.Equal(got, body) {
					t.Fatalf("the copy reads %d bytes", len(got))
				}

				// UploadPartCopy into an upload encrypted as to.
				cu := &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp-" + *dst)}
				pin := &s3.PutObjectInput{}
				to.put(pin)
				cu.ServerSideEncryption, cu.SSEKMSKeyId = pin.ServerSideEncryption, pin.SSEKMSKeyId
				cu.SSECustomerAlgorithm, cu.SSECustomerKey, cu.SSECustomerKeyMD5 = pin.SSECustomerAlgorithm, pin.SSECustomerKey, pin.SSECustomerKeyMD5
				up, err := c.CreateMultipartUpload(ctx, cu)
				if err != nil {
					t.Fatal(err)
				}
				if !to.check(up.ServerSideEncryption, up.SSEKMSKeyId, up.SSECustomerAlgorithm) {
					t.Errorf("CreateMultipartUpload answered %q, key %q", up.ServerSideEncryption, aws.ToString(up.SSEKMSKeyId))
				}
				pc := &s3.UploadPartCopyInput{Bucket: b, Key: cu.Key, UploadId: up.UploadId, PartNumber: aws.Int32(1),
					CopySource: aws.String("kmscopy/src-" + from.name), CopySourceRange: aws.String("bytes=0-1023"),
					SSECustomerAlgorithm: pin.SSECustomerAlgorithm, SSECustomerKey: pin.SSECustomerKey, SSECustomerKeyMD5: pin.SSECustomerKeyMD5}
				co := &s3.CopyObjectInput{}
				from.src(co)
				pc.CopySourceSSECustomerAlgorithm, pc.CopySourceSSECustomerKey, pc.CopySourceSSECustomerKeyMD5 = co.CopySourceSSECustomerAlgorithm, co.CopySourceSSECustomerKey, co.CopySourceSSECustomerKeyMD5
				part, err := c.UploadPartCopy(ctx, pc)
				if err != nil {
					t.Fatal(err)
				}
				if !to.check(part.ServerSideEncryption, part.SSEKMSKeyId, part.SSECustomerAlgorithm) {
					t.Errorf("UploadPartCopy answered %q, key %q, customer algorithm %q", part.ServerSideEncryption, aws.ToString(part.SSEKMSKeyId), aws.ToString(part.SSECustomerAlgorithm))
				}
				c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: b, Key: cu.Key, UploadId: up.UploadId})
			})
		}
	}
}

// boto3KMS is boto3 with SSE-KMS: a put under a named key with a context,
// a managed (multipart) upload and a managed (UploadPartCopy) copy under
// another, the answers' headers and the bytes checked; then DSSE-KMS: a
// put, a managed upload and a bucket default.
const boto3KMS = `
import sys, json, base64, boto3
from botocore.config import Config
from botocore.exceptions import ClientError
from boto3.s3.transfer import TransferConfig
url, bucket, arn, arn2 = sys.argv[1:5]
s3 = boto3.client("s3", endpoint_url=url, config=Config(s3={"addressing_style": "path"}))
ctx = base64.b64encode(json.dumps({"app": "boto"}).encode()).decode()
put = s3.put_object(Bucket=bucket, Key="small", Body=b"hello kms", ServerSideEncryption="aws:kms",
                    SSEKMSKeyId="alias/boto", SSEKMSEncryptionContext=ctx)
assert put["ServerSideEncryption"] == "aws:kms" and put["SSEKMSKeyId"] == arn, put
head = s3.head_object(Bucket=bucket, Key="small")
assert head["ServerSideEncryption"] == "aws:kms" and head["SSEKMSKeyId"] == arn, head
assert s3.get_object(Bucket=bucket, Key="small")["Body"].read() == b"hello kms"
big = bytes(range(256)) * (9 * 4096 + 13)
cfg = TransferConfig(multipart_threshold=8 << 20, multipart_chunksize=8 << 20)
import io
s3.upload_fileobj(io.BytesIO(big), bucket, "big", ExtraArgs={"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": arn}, Config=cfg)
head = s3.head_object(Bucket=bucket, Key="big")
assert head["SSEKMSKeyId"] == arn and head["ContentLength"] == len(big), head
s3.copy({"Bucket": bucket, "Key": "big"}, bucket, "big2", ExtraArgs={"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": "boto2"}, Config=cfg)
head = s3.head_object(Bucket=bucket, Key="big2")
assert head["SSEKMSKeyId"] == arn2, head
out = io.BytesIO()
s3.download_fileobj(bucket, "big2", out)
assert out.getvalue() == big
# Dual-layer: a put, a managed upload and the bucket default.
put = s3.put_object(Bucket=bucket, Key="dual", Body=b"two layers", ServerSideEncryption="aws:kms:dsse", SSEKMSKeyId="boto")
assert put["ServerSideEncryption"] == "aws:kms:dsse" and put["SSEKMSKeyId"] == arn, put
got = s3.get_object(Bucket=bucket, Key="dual")
assert got["ServerSideEncryption"] == "aws:kms:dsse" and got["SSEKMSKeyId"] == arn and got["Body"].read() == b"two layers", got
s3.upload_fileobj(io.BytesIO(big), bucket, "dual-big", ExtraArgs={"ServerSideEncryption": "aws:kms:dsse", "SSEKMSKeyId": arn2}, Config=cfg)
out = io.BytesIO()
s3.download_fileobj(bucket, "dual-big", out)
assert out.getvalue() == big
s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [
    {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms:dsse", "KMSMasterKeyID": "alias/boto2"}}]})
rule = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"][0]["ApplyServerSideEncryptionByDefault"]
assert rule == {"SSEAlgorithm": "aws:kms:dsse", "KMSMasterKeyID": arn2}, rule
put = s3.put_object(Bucket=bucket, Key="by-default", Body=b"x")
assert put["ServerSideEncryption"] == "aws:kms:dsse" and put["SSEKMSKeyId"] == arn2, put
print("ok")
`

// TestBoto3KMS: boto3 (and s3transfer's managed transfers) with SSE-KMS.
func TestBoto3KMS(t *testing.T) {
	python := tooltest.Need(t, "python3", "-c", "import boto3")
	e, _, _ := newBucket(t, "boto-kms")
	k, k2 := mustKey(t, e, "alice", "boto"), mustKey(t, e, "alice", "boto2")
	e.run(t, python, "-c", boto3KMS, e.srv.URL, "boto-kms", kmsARN(k.ID), kmsARN(k2.ID))
}

// TestKMSReadsSignedOnly: as in S3, an SSE-KMS object of a public bucket
// is not read anonymously nor with Signature Version 2, while its SSE-S3
// neighbour is; HeadObject under a disabled key is refused too.
func TestKMSReadsSignedOnly(t *testing.T) {
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	ctx := context.Background()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("pub"), ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	for key, sse := range map[string]types.ServerSideEncryption{"kms": types.ServerSideEncryptionAwsKms, "dsse": types.ServerSideEncryptionAwsKmsDsse,
		"s3": types.ServerSideEncryptionAes256} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("pub"), Key: aws.String(key), Body: strings.NewReader("v"), ServerSideEncryption: sse}); err != nil {
			t.Fatal(err)
		}
	}
	if status, _ := e.anonymous(t, "GET", "/pub/s3", nil); status != 200 {
		t.Fatalf("anonymous read of an SSE-S3 object of a public bucket: %d", status)
	}
	for _, key := range []string{"kms", "dsse"} {
		if status, code := e.anonymous(t, "GET", "/pub/"+key, nil); status != 400 || code != "InvalidArgument" {
			t.Errorf("anonymous read of an %s object: %d %s", key, status, code)
		}
	}
	for _, key := range []string{"kms", "dsse"} {
		r, _ := http.NewRequest("GET", e.srv.URL+"/pub/"+key, nil)
		if status, got := do(t, signV2(r, e.id, e.secret, "", time.Now())); status != 400 || got.Code != "InvalidArgument" {
			t.Errorf("a Signature Version 2 read of an %s object: %d %s", key, status, got.Code)
		}
	}
	if got := read(t)(c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("pub"), Key: aws.String("kms")})); string(got) != "v" {
		t.Errorf("a signed read: %q", got)
	}
	// A copy reads its source as GetObject does: not by Signature
	// Version 2.
	r, _ := http.NewRequest("PUT", e.srv.URL+"/pub/copied", nil)
	r.Header.Set("X-Amz-Copy-Source", "pub/kms")
	if status, got := do(t, signV2(r, e.id, e.secret, "", time.Now())); status != 400 || got.Code != "InvalidArgument" {
		t.Errorf("a Signature Version 2 copy of an SSE-KMS object: %d %s", status, got.Code)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("pub"), Key: aws.String("copied")}); apiCode(err) != "NotFound" {
		t.Errorf("the refused copy was made: %v", err)
	}

	def, err := e.kms.Resolve(ctx, "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	k := mustKey(t, e, "alice", "headed")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("pub"), Key: aws.String("h"), Body: strings.NewReader("v"),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String(k.ID)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kms.SetEnabled(ctx, "alice", k.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("pub"), Key: aws.String("h")}); httpStatus(err) != 400 {
		t.Errorf("HeadObject under a disabled key: %v", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("pub"), Key: aws.String("kms")}); err != nil {
		t.Errorf("HeadObject under the default key %s: %v", def.ID, err)
	}
}

// TestPostObjectIgnoresUnsignedEncryptionHeaders: a POST form's upload
// is encrypted as its (signed) fields say, never as the request's own
// headers, which the policy does not cover.
func TestPostObjectIgnoresUnsignedEncryptionHeaders(t *testing.T) {
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "forms")
	now := time.Now().UTC()
	conds := append(v4Conditions(e.id, "us-east-1", now), map[string]string{"bucket": "forms"}, map[string]string{"key": "up"})
	fields := append([]field{{"key", "up"}}, signV4Form(e.id, e.secret, "us-east-1", now, policyDoc(now.Add(time.Hour), conds...))...)
	body, contentType := formBody(fields, "f.txt", []byte("form body"))
	req, _ := http.NewRequest("POST", e.srv.URL+"/forms", body)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Amz-Server-Side-Encryption", "aws:kms")
	req.Header.Set("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", "alias/aws/s3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Fatalf("POST: %d", resp.StatusCode)
	}
	head, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("forms"), Key: aws.String("up")})
	if err != nil || head.ServerSideEncryption != "" {
		t.Fatalf("stored with encryption %q (%v): the unsigned headers were taken", head.ServerSideEncryption, err)
	}
}

// TestPolicyRequiresKMSKey: a bucket policy that denies uploads not
// sealed under one SSE-KMS key, as AWS's examples write it.
func TestPolicyRequiresKMSKey(t *testing.T) {
	e, c, b := newBucket(t, "kms-policy")
	ctx := context.Background()
	k := mustKey(t, e, "alice", "required")
	if err := putPolicy(c, "kms-policy", `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::kms-policy/*",
		 "Condition":{"StringNotEquals":{"s3:x-amz-server-side-encryption-aws-kms-key-id":"`+kmsARN(k.ID)+`"}}}]}`); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]*s3.PutObjectInput{
		"no encryption":   {},
		"SSE-S3":          {ServerSideEncryption: types.ServerSideEncryptionAes256},
		"another key":     {ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String(mustKey(t, e, "alice", "other").ID)},
		"the key by name": {ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String("required")},
	} {
		in.Bucket, in.Key, in.Body = b, aws.String("x"), strings.NewReader("x")
		if _, err := c.PutObject(ctx, in); httpStatus(err) != 403 {
			t.Errorf("%s: %v, want 403", name, err)
		}
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("x"), Body: strings.NewReader("x"),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String(kmsARN(k.ID))}); err != nil {
		t.Errorf("the required key: %v", err)
	}
}

// TestAWSSDKDSSE: dual-layer SSE-KMS (aws:kms:dsse) through the AWS SDK
// for Go: the default key and a named one, a context, the answers'
// headers (no bucket key, as S3 applies none to DSSE-KMS), range reads
// across chunks, multipart under a bucket default, a disabled key
// refusing reads with AWS's code, and bodies on disk in the dual-layer
// format only.
func TestAWSSDKDSSE(t *testing.T) {
	e, c, b := newBucket(t, "dsse")
	ctx := context.Background()
	k := mustKey(t, e, "alice", "dual")
	body := secretBody(300<<10 + 7)

	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("default"), Body: bytes.NewReader(body),
		ServerSideEncryption: types.ServerSideEncryptionAwsKmsDsse})
	def, derr := e.kms.Get(ctx, "alice", "aws/s3")
	if err != nil || derr != nil || put.ServerSideEncryption != types.ServerSideEncryptionAwsKmsDsse || aws.ToString(put.SSEKMSKeyId) != kmsARN(def.ID) {
		t.Fatalf("a DSSE-KMS put under the default key: %+v %v %v", put, err, derr)
	}
	encCtx := base64.StdEncoding.EncodeToString([]byte(`{"team":"ops"}`))
	put, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("named"), Body: bytes.NewReader(body),
		ServerSideEncryption: types.ServerSideEncryptionAwsKmsDsse, SSEKMSKeyId: aws.String("alias/dual"),
		SSEKMSEncryptionContext: aws.String(encCtx), BucketKeyEnabled: aws.Bool(true)})
	if err != nil || put.ServerSideEncryption != types.ServerSideEncryptionAwsKmsDsse || aws.ToString(put.SSEKMSKeyId) != kmsARN(k.ID) || put.BucketKeyEnabled != nil {
		t.Fatalf("a DSSE-KMS put under a named key: %+v %v", put, err)
	}
	for _, key := range []string{"default", "named"} {
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String(key)})
		if err != nil || head.ServerSideEncryption != types.ServerSideEncryptionAwsKmsDsse || head.SSEKMSKeyId == nil {
			t.Fatalf("head of %s: %+v %v", key, head, err)
		}
		if got := read(t)(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(key)})); !bytes.Equal(got, body) {
			t.Fatalf("%s: %d bytes", key, len(got))
		}
		got := read(t)(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(key), Range: aws.String("bytes=65530-131080")}))
		if !bytes.Equal(got, body[65530:131081]) {
			t.Fatalf("%s: a range across chunks: %d bytes", key, len(got))
		}
	}
	// The bodies on disk are dual-layer streams, of their size, and
	// never plaintext.
	if plaintextOnDisk(t, e.dir) {
		t.Fatal("a DSSE-KMS body reached the disk in the clear")
	}
	if n := dualStreamsOnDisk(t, e.dir, int64(len(body))); n != 2 {
		t.Fatalf("%d dual-layer body files of the size a %d-byte body makes, want 2", n, len(body))
	}

	// A bucket default of DSSE-KMS, multipart under it.
	conf := &types.ServerSideEncryptionConfiguration{Rules: []types.ServerSideEncryptionRule{{
		ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAwsKmsDsse, KMSMasterKeyID: aws.String("dual")}}}}
	if _, err := c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: b, ServerSideEncryptionConfiguration: conf}); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: b})
	if rule := got.ServerSideEncryptionConfiguration.Rules[0].ApplyServerSideEncryptionByDefault; err != nil ||
		rule.SSEAlgorithm != types.ServerSideEncryptionAwsKmsDsse || aws.ToString(rule.KMSMasterKeyID) != kmsARN(k.ID) {
		t.Fatalf("GetBucketEncryption: %+v %v", rule, err)
	}
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp")})
	if err != nil || cu.ServerSideEncryption != types.ServerSideEncryptionAwsKmsDsse || aws.ToString(cu.SSEKMSKeyId) != kmsARN(k.ID) {
		t.Fatalf("CreateMultipartUpload under the default: %+v %v", cu, err)
	}
	parts := [][]byte{secretBody(5 << 20), secretBody(70 << 10)}
	var done []types.CompletedPart
	for i, p := range parts {
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: cu.UploadId, PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
		if err != nil || up.ServerSideEncryption != types.ServerSideEncryptionAwsKmsDsse {
			t.Fatalf("UploadPart %d: %+v %v", i+1, up, err)
		}
		done = append(done, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	comp, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil || comp.ServerSideEncryption != types.ServerSideEncryptionAwsKmsDsse || aws.ToString(comp.SSEKMSKeyId) != kmsARN(k.ID) {
		t.Fatalf("CompleteMultipartUpload: %+v %v", comp, err)
	}
	want := append(bytes.Clone(parts[0]), parts[1]...)
	if got := read(t)(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("mp"), Range: aws.String("bytes=5242000-5243000")})); !bytes.Equal(got, want[5242000:5243001]) {
		t.Fatalf("a range across the parts: %d bytes", len(got))
	}

	// Disabled: reads and writes refused with AWS's code.
	if _, err := e.kms.SetEnabled(ctx, "alice", "dual", false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("named")}); apiCode(err) != "KMS.DisabledException" || httpStatus(err) != 400 {
		t.Fatalf("a read under a disabled key: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("refused"), Body: strings.NewReader("x")}); apiCode(err) != "KMS.DisabledException" {
		t.Fatalf("a write under the bucket's disabled default key: %v", err)
	}
	if _, err := e.kms.SetEnabled(ctx, "alice", "dual", true); err != nil {
		t.Fatal(err)
	}
	if got := read(t)(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("named")})); !bytes.Equal(got, body) {
		t.Fatal("the object changed while its key was disabled")
	}
	// A key that does not exist, as for SSE-KMS.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("refused"), Body: strings.NewReader("x"),
		ServerSideEncryption: types.ServerSideEncryptionAwsKmsDsse, SSEKMSKeyId: aws.String("alias/nope")}); apiCode(err) != "KMS.NotFoundException" {
		t.Fatalf("a key that does not exist: %v", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("refused")}); httpStatus(err) != 404 {
		t.Fatalf("a refused put left an object: %v", err)
	}
}

// dualStreamsOnDisk counts the files under dir that hold a dual-layer
// stream (package sse's "LSE2") of a body of n bytes.
func dualStreamsOnDisk(t *testing.T, dir string, n int64) int {
	t.Helper()
	chunks := (n + sse.ChunkSize - 1) / sse.ChunkSize
	want := 20 + n + 32*chunks
	count := 0
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || info.Size() != want {
			return nil
		}
		if data, _ := os.ReadFile(path); bytes.HasPrefix(data, []byte("LSE2")) {
			count++
		}
		return nil
	})
	return count
}
