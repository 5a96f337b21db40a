package s3api_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// sseCKey is an SSE-C key as the SDK takes it: the key in base64, and
// the base64 of its MD5.
type sseCKey struct{ key, md5 *string }

func newSSECKey(b byte) sseCKey {
	raw := bytes.Repeat([]byte{b}, 32)
	sum := md5.Sum(raw)
	return sseCKey{aws.String(base64.StdEncoding.EncodeToString(raw)), aws.String(base64.StdEncoding.EncodeToString(sum[:]))}
}

// secretBody is a body a search of the disk can find any 16 bytes of.
func secretBody(n int) []byte {
	var b bytes.Buffer
	for b.Len() < n {
		fmt.Fprintf(&b, "SECRET%010d", b.Len())
	}
	return b.Bytes()[:n]
}

// plaintextOnDisk tells whether any file under dir holds "SECRET00000".
func plaintextOnDisk(t *testing.T, dir string) bool {
	t.Helper()
	found := false
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if data, _ := os.ReadFile(path); bytes.Contains(data, []byte("SECRET00000")) {
				found = true
			}
		}
		return nil
	})
	return found
}

func readAll(t *testing.T, out *s3.GetObjectOutput, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestAWSSDKEncryption: SSE-S3 and SSE-C with the AWS SDK, whole and
// multipart, with range reads, copies between the modes, and the keys
// asked for as S3 asks; nothing reaches the disk in the clear.
func TestAWSSDKEncryption(t *testing.T) {
	e, c, b := newBucket(t, "enc")
	ctx := context.Background()
	small, large := secretBody(4<<10), secretBody(3<<20+123)
	must := func(out *s3.GetObjectOutput, err error) []byte { t.Helper(); return readAll(t, out, err) }
	k1, k2 := newSSECKey(1), newSSECKey(2)

	// SSE-S3.
	for name, body := range map[string][]byte{"s3-small": small, "s3-large": large} {
		put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(name), Body: bytes.NewReader(body),
			ServerSideEncryption: types.ServerSideEncryptionAes256})
		if err != nil || put.ServerSideEncryption != types.ServerSideEncryptionAes256 {
			t.Fatalf("put %s: %+v %v", name, put, err)
		}
		sum := md5.Sum(body)
		if aws.ToString(put.ETag) != fmt.Sprintf(`"%x"`, sum) {
			t.Errorf("%s: ETag %s, not the body's MD5 (S3 gives it for SSE-S3)", name, aws.ToString(put.ETag))
		}
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(name)})
		if out != nil && out.ServerSideEncryption != types.ServerSideEncryptionAes256 {
			t.Errorf("get %s: ServerSideEncryption %q", name, out.ServerSideEncryption)
		}
		if got := readAll(t, out, err); !bytes.Equal(got, body) {
			t.Fatalf("get %s: %d bytes", name, len(got))
		}
		got := must(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(name), Range: aws.String("bytes=100-70000")}))
		if want := body[100:min(70001, len(body))]; !bytes.Equal(got, want) {
			t.Fatalf("range of %s: %d bytes", name, len(got))
		}
	}

	// SSE-C: the key on every read, the wrong one refused.
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("c"), Body: bytes.NewReader(large),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
	if err != nil || aws.ToString(put.SSECustomerKeyMD5) != *k1.md5 || aws.ToString(put.SSECustomerAlgorithm) != "AES256" {
		t.Fatalf("SSE-C put: %+v %v", put, err)
	}
	got := must(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("c"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5, Range: aws.String("bytes=1048570-1048600")}))
	if !bytes.Equal(got, large[1048570:1048601]) {
		t.Fatalf("SSE-C range: %q", got)
	}
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("c")})
	if httpStatus(err) != 400 || apiCode(err) != "InvalidRequest" {
		t.Errorf("SSE-C get without the key: %v", err)
	}
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("c"), SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: k2.key, SSECustomerKeyMD5: k2.md5})
	if httpStatus(err) != 403 {
		t.Errorf("SSE-C head with another key: %v", err)
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("c"), SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
	if err != nil || aws.ToString(head.SSECustomerKeyMD5) != *k1.md5 || aws.ToInt64(head.ContentLength) != int64(len(large)) {
		t.Fatalf("SSE-C head: %+v %v", head, err)
	}
	// The REST side reads SSE-S3 objects as they are, and cannot read
	// SSE-C ones.
	if _, body, err := e.st.OpenObject(t.Context(), "alice", "enc", "s3-small"); err != nil {
		t.Fatal(err)
	} else {
		data, _ := io.ReadAll(body)
		body.Close()
		if !bytes.Equal(data, small) {
			t.Fatal("the store's read of an SSE-S3 object")
		}
	}
	if _, _, err := e.st.OpenObject(t.Context(), "alice", "enc", "c"); err == nil {
		t.Fatal("an SSE-C object read without its key")
	}

	// Multipart SSE-C: each part with the key, completed without it.
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
	if err != nil {
		t.Fatal(err)
	}
	mp := secretBody(5<<20 + 1000)
	var parts []types.CompletedPart
	for i, p := range [][]byte{mp[:5<<20], mp[5<<20:]} {
		// (A small body: the refusal comes before the body is read.)
		_, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: cu.UploadId, PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p[:10])})
		if httpStatus(err) != 400 {
			t.Fatalf("a part without the upload's key: %v", err)
		}
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: cu.UploadId, PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p),
			SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatal(err)
	}
	got = must(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("mp"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5}))
	if !bytes.Equal(got, mp) {
		t.Fatalf("SSE-C multipart: %d bytes", len(got))
	}

	// Copies: SSE-C to SSE-S3, and back with another key.
	cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("c-to-s3"), CopySource: aws.String("enc/c"),
		CopySourceSSECustomerAlgorithm: aws.String("AES256"), CopySourceSSECustomerKey: k1.key, CopySourceSSECustomerKeyMD5: k1.md5,
		ServerSideEncryption: types.ServerSideEncryptionAes256})
	if err != nil || cp.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("copy SSE-C to SSE-S3: %+v %v", cp, err)
	}
	if got := must(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("c-to-s3")})); !bytes.Equal(got, large) {
		t.Fatal("the copy to SSE-S3")
	}
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("x"), CopySource: aws.String("enc/c")})
	if httpStatus(err) != 400 {
		t.Errorf("a copy of an SSE-C object without its key: %v", err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("s3-to-c"), CopySource: aws.String("enc/s3-large"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: k2.key, SSECustomerKeyMD5: k2.md5}); err != nil {
		t.Fatal(err)
	}
	got = must(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("s3-to-c"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: k2.key, SSECustomerKeyMD5: k2.md5}))
	if !bytes.Equal(got, large) {
		t.Fatal("the copy to SSE-C")
	}
	// An object copied onto itself to encrypt it, as `aws s3 cp
	// --sse` does to objects already there.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("plain"), Body: bytes.NewReader(small)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("plain"), CopySource: aws.String("enc/plain"),
		ServerSideEncryption: types.ServerSideEncryptionAes256}); err != nil {
		t.Fatalf("encrypt in place: %v", err)
	}
	// UploadPartCopy from an SSE-C source into an SSE-S3 upload.
	cu, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("pc"), ServerSideEncryption: types.ServerSideEncryptionAes256})
	if err != nil || cu.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("SSE-S3 upload: %+v %v", cu, err)
	}
	pc, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: b, Key: aws.String("pc"), UploadId: cu.UploadId, PartNumber: aws.Int32(1),
		CopySource: aws.String("enc/c"), CopySourceRange: aws.String("bytes=10-1000009"),
		CopySourceSSECustomerAlgorithm: aws.String("AES256"), CopySourceSSECustomerKey: k1.key, CopySourceSSECustomerKeyMD5: k1.md5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("pc"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: pc.CopyPartResult.ETag, PartNumber: aws.Int32(1)}}}}); err != nil {
		t.Fatal(err)
	}
	if got := must(c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("pc")})); !bytes.Equal(got, large[10:1000010]) {
		t.Fatal("the part copied from an SSE-C source")
	}
	if plaintextOnDisk(t, e.dir) {
		t.Fatal("plaintext on disk")
	}
}

// TestAWSSDKBucketEncryption: a bucket's default encryption, and the
// refusal of SSE-KMS, with nothing changed by a refusal.
func TestAWSSDKBucketEncryption(t *testing.T) {
	e, c, b := newBucket(t, "benc")
	ctx := context.Background()
	if _, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: b}); apiCode(err) != "ServerSideEncryptionConfigurationNotFoundError" {
		t.Fatalf("a new bucket's encryption: %v", err)
	}
	config := func(alg types.ServerSideEncryption) *types.ServerSideEncryptionConfiguration {
		return &types.ServerSideEncryptionConfiguration{Rules: []types.ServerSideEncryptionRule{{
			ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: alg}}}}
	}
	e.st.SetKMS(nil) // a store without a key service refuses SSE-KMS
	_, err := c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: b, ServerSideEncryptionConfiguration: config(types.ServerSideEncryptionAwsKms)})
	if httpStatus(err) != 501 {
		t.Fatalf("a KMS default without a KMS: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("kms"), Body: strings.NewReader("x"), ServerSideEncryption: types.ServerSideEncryptionAwsKms}); httpStatus(err) != 501 {
		t.Fatalf("an SSE-KMS put: %v", err)
	}
	if _, err := c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: b, ServerSideEncryptionConfiguration: config(types.ServerSideEncryptionAes256)}); err != nil {
		t.Fatal(err)
	}
	out, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: b})
	if err != nil || len(out.ServerSideEncryptionConfiguration.Rules) != 1 ||
		out.ServerSideEncryptionConfiguration.Rules[0].ApplyServerSideEncryptionByDefault.SSEAlgorithm != types.ServerSideEncryptionAes256 {
		t.Fatalf("GetBucketEncryption: %+v %v", out, err)
	}
	body := secretBody(100 << 10)
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: bytes.NewReader(body)})
	if err != nil || put.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("a put into a bucket encrypting by default: %+v %v", put, err)
	}
	// Presigned reads see the plaintext, as any read does.
	ps, err := s3.NewPresignClient(c).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(ps.URL)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(data, body) || resp.Header.Get("X-Amz-Server-Side-Encryption") != "AES256" {
		t.Fatalf("presigned read: %d, %d bytes", resp.StatusCode, len(data))
	}
	if _, err := c.DeleteBucketEncryption(ctx, &s3.DeleteBucketEncryptionInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: b}); apiCode(err) != "ServerSideEncryptionConfigurationNotFoundError" {
		t.Fatalf("after DeleteBucketEncryption: %v", err)
	}
	if put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k2"), Body: strings.NewReader("x")}); err != nil || put.ServerSideEncryption != "" {
		t.Fatalf("a put after the default went: %+v %v", put, err)
	}
	if plaintextOnDisk(t, e.dir) {
		t.Fatal("plaintext on disk")
	}
}

// TestAWSSDKEncryptionAttributes: GetObjectAttributes of an SSE-C object
// needs its key, as in S3: the checksum kept with it is of the plaintext,
// which nobody without the key may learn anything of.
func TestAWSSDKEncryptionAttributes(t *testing.T) {
	_, c, b := newBucket(t, "enc")
	ctx := context.Background()
	k1, k2 := newSSECKey(1), newSSECKey(2)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("c"), Body: bytes.NewReader(secretBody(1000)),
		ChecksumAlgorithm:    types.ChecksumAlgorithmSha256,
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5}); err != nil {
		t.Fatal(err)
	}
	attrs := []types.ObjectAttributes{types.ObjectAttributesChecksum, types.ObjectAttributesEtag, types.ObjectAttributesObjectSize}
	for _, c2 := range []struct {
		name   string
		key    *sseCKey
		status int
	}{{"without the key", nil, 400}, {"with another key", &k2, 403}, {"with the key", &k1, 200}} {
		in := &s3.GetObjectAttributesInput{Bucket: b, Key: aws.String("c"), ObjectAttributes: attrs}
		if c2.key != nil {
			in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), c2.key.key, c2.key.md5
		}
		out, err := c.GetObjectAttributes(ctx, in)
		switch {
		case c2.status == 200 && (err != nil || out.Checksum == nil || aws.ToString(out.Checksum.ChecksumSHA256) == ""):
			t.Errorf("%s: %+v, %v", c2.name, out, err)
		case c2.status != 200 && httpStatus(err) != c2.status:
			t.Errorf("%s: %v (%+v), want %d", c2.name, err, out, c2.status)
		}
	}
	// An object not encrypted with SSE-C needs no key.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("s"), Body: bytes.NewReader(secretBody(10)),
		ServerSideEncryption: types.ServerSideEncryptionAes256}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: aws.String("s"), ObjectAttributes: attrs}); err != nil {
		t.Errorf("SSE-S3: %v", err)
	}
}

// TestListPartsOfSSECUpload: the parts' checksums (of the plaintext) of
// an SSE-C upload are listed only to a request giving its key; without
// one the parts are listed without them, and another key is refused.
func TestListPartsOfSSECUpload(t *testing.T) {
	_, c, b := newBucket(t, "enc")
	ctx := context.Background()
	k1, k2 := newSSECKey(1), newSSECKey(2)
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp"),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: cu.UploadId, PartNumber: aws.Int32(1),
		Body: bytes.NewReader(secretBody(1000)), ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		key    *sseCKey
		status int
		sum    bool
	}{{"without the key", nil, 200, false}, {"with another key", &k2, 403, false}, {"with the key", &k1, 200, true}} {
		in := &s3.ListPartsInput{Bucket: b, Key: aws.String("mp"), UploadId: cu.UploadId}
		if tc.key != nil {
			in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), tc.key.key, tc.key.md5
		}
		out, err := c.ListParts(ctx, in)
		if tc.status != 200 {
			if httpStatus(err) != tc.status {
				t.Errorf("%s: %v, want %d", tc.name, err, tc.status)
			}
			continue
		}
		if err != nil || len(out.Parts) != 1 || (aws.ToString(out.Parts[0].ChecksumSHA256) != "") != tc.sum {
			t.Errorf("%s: %+v, %v; want the checksum shown: %v", tc.name, out, err, tc.sum)
		}
	}
}

// TestPartEncryptionHeaders: UploadPart and UploadPartCopy answer with
// their upload's encryption, as S3 does, whatever a copy's source was:
// SSE-S3 parts say AES256, SSE-C parts the customer key's algorithm and
// MD5, plain parts nothing; copies between the three in every direction.
func TestPartEncryptionHeaders(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "parts")
	b := aws.String("parts")
	src, dst := newSSECKey(1), newSSECKey(2)
	body := secretBody(64 << 10)
	// One source object of each kind.
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("plain"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("s3"), Body: bytes.NewReader(body), ServerSideEncryption: types.ServerSideEncryptionAes256}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("c"), Body: bytes.NewReader(body),
		SSECustomerAlgorithm: aws.String("AES256"), SSECustomerKey: src.key, SSECustomerKeyMD5: src.md5}); err != nil {
		t.Fatal(err)
	}
	type kind struct {
		sse    types.ServerSideEncryption
		alg    string
		keyMD5 string
	}
	for _, upload := range []string{"plain", "s3", "c"} {
		in := &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("to-" + upload)}
		want := kind{}
		switch upload {
		case "s3":
			in.ServerSideEncryption = types.ServerSideEncryptionAes256
			want.sse = types.ServerSideEncryptionAes256
		case "c":
			in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = aws.String("AES256"), dst.key, dst.md5
			want.alg, want.keyMD5 = "AES256", aws.ToString(dst.md5)
		}
		up, err := c.CreateMultipartUpload(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		part := &s3.UploadPartInput{Bucket: b, Key: in.Key, UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(body)}
		if upload == "c" {
			part.SSECustomerAlgorithm, part.SSECustomerKey, part.SSECustomerKeyMD5 = aws.String("AES256"), dst.key, dst.md5
		}
		put, err := c.UploadPart(ctx, part)
		if err != nil {
			t.Fatal(err)
		}
		if got := (kind{put.ServerSideEncryption, aws.ToString(put.SSECustomerAlgorithm), aws.ToString(put.SSECustomerKeyMD5)}); got != want {
			t.Errorf("UploadPart into a %s upload: %+v, want %+v", upload, got, want)
		}
		for i, source := range []string{"plain", "s3", "c"} {
			cp := &s3.UploadPartCopyInput{Bucket: b, Key: in.Key, UploadId: up.UploadId, PartNumber: aws.Int32(int32(i + 2)),
				CopySource: aws.String("parts/" + source)}
			if source == "c" {
				cp.CopySourceSSECustomerAlgorithm, cp.CopySourceSSECustomerKey, cp.CopySourceSSECustomerKeyMD5 = aws.String("AES256"), src.key, src.md5
			}
			if upload == "c" {
				cp.SSECustomerAlgorithm, cp.SSECustomerKey, cp.SSECustomerKeyMD5 = aws.String("AES256"), dst.key, dst.md5
			}
			out, err := c.UploadPartCopy(ctx, cp)
			if err != nil {
				t.Fatalf("UploadPartCopy from %s into a %s upload: %v", source, upload, err)
			}
			if got := (kind{out.ServerSideEncryption, aws.ToString(out.SSECustomerAlgorithm), aws.ToString(out.SSECustomerKeyMD5)}); got != want {
				t.Errorf("UploadPartCopy from %s into a %s upload: %+v, want %+v", source, upload, got, want)
			}
		}
	}
}
