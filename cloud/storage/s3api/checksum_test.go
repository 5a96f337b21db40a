package s3api_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// sumOf is the base64 checksum of data with alg.
func sumOf(alg types.ChecksumAlgorithm, data []byte) string {
	var h hash.Hash
	switch alg {
	case types.ChecksumAlgorithmCrc32:
		h = crc32.NewIEEE()
	case types.ChecksumAlgorithmCrc32c:
		h = crc32.New(crc32.MakeTable(crc32.Castagnoli))
	case types.ChecksumAlgorithmCrc64nvme:
		h = crc64.New(crc64.MakeTable(0x9a6c9329ac4bc9b5))
	case types.ChecksumAlgorithmSha1:
		h = sha1.New()
	case types.ChecksumAlgorithmSha256:
		h = sha256.New()
	}
	h.Write(data)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// pick returns the checksum of alg among an answer's fields.
func pick(alg types.ChecksumAlgorithm, crc32, crc32c, crc64nvme, sha1, sha256 *string) string {
	return aws.ToString(map[types.ChecksumAlgorithm]*string{types.ChecksumAlgorithmCrc32: crc32, types.ChecksumAlgorithmCrc32c: crc32c,
		types.ChecksumAlgorithmCrc64nvme: crc64nvme, types.ChecksumAlgorithmSha1: sha1, types.ChecksumAlgorithmSha256: sha256}[alg])
}

// TestStoredChecksums uploads objects with each checksum algorithm the
// SDK computes, over HTTP (a checksum header) and over TLS (aws-chunked
// with a trailing checksum), and reads the checksum back from PutObject,
// HeadObject and GetObject with checksum mode, and GetObjectAttributes.
func TestStoredChecksums(t *testing.T) {
	for _, mode := range []struct {
		name string
		env  func(*testing.T) *env
	}{{"http", newEnv}, {"tls", newTLSEnv}} {
		t.Run(mode.name, func(t *testing.T) {
			e := mode.env(t)
			ctx := context.Background()
			c := e.sdk(e.id, e.secret)
			if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("sums")}); err != nil {
				t.Fatal(err)
			}
			data := randomBytes(100<<10, 5) // in a body file, not inline
			for _, alg := range []types.ChecksumAlgorithm{types.ChecksumAlgorithmCrc32, types.ChecksumAlgorithmCrc32c,
				types.ChecksumAlgorithmCrc64nvme, types.ChecksumAlgorithmSha1, types.ChecksumAlgorithmSha256} {
				t.Run(string(alg), func(t *testing.T) {
					want := sumOf(alg, data)
					put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sums"), Key: aws.String(string(alg)), Body: bytes.NewReader(data), ChecksumAlgorithm: alg})
					if err != nil {
						t.Fatal(err)
					}
					if got := pick(alg, put.ChecksumCRC32, put.ChecksumCRC32C, put.ChecksumCRC64NVME, put.ChecksumSHA1, put.ChecksumSHA256); got != want {
						t.Errorf("PutObject: got %v, want %v", got, want)
					}
					head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sums"), Key: aws.String(string(alg)), ChecksumMode: types.ChecksumModeEnabled})
					if err != nil {
						t.Fatal(err)
					}
					if got := pick(alg, head.ChecksumCRC32, head.ChecksumCRC32C, head.ChecksumCRC64NVME, head.ChecksumSHA1, head.ChecksumSHA256); got != want || head.ChecksumType != types.ChecksumTypeFullObject {
						t.Errorf("HeadObject: got %v %v, want %v FULL_OBJECT", got, head.ChecksumType, want)
					}
					get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sums"), Key: aws.String(string(alg)), ChecksumMode: types.ChecksumModeEnabled})
					if err != nil {
						t.Fatal(err)
					}
					body, err := io.ReadAll(get.Body) // the SDK checks the body against the checksum
					get.Body.Close()
					if got := pick(alg, get.ChecksumCRC32, get.ChecksumCRC32C, get.ChecksumCRC64NVME, get.ChecksumSHA1, get.ChecksumSHA256); err != nil || got != want || !bytes.Equal(body, data) {
						t.Errorf("GetObject: got %v, %v, want %v", got, err, want)
					}
					at, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String("sums"), Key: aws.String(string(alg)),
						ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesChecksum}})
					if err != nil {
						t.Fatal(err)
					}
					if at.Checksum == nil {
						t.Fatalf("GetObjectAttributes: got no Checksum, want %v", want)
					}
					if got := pick(alg, at.Checksum.ChecksumCRC32, at.Checksum.ChecksumCRC32C, at.Checksum.ChecksumCRC64NVME, at.Checksum.ChecksumSHA1, at.Checksum.ChecksumSHA256); got != want {
						t.Errorf("GetObjectAttributes: got %v, want %v", got, want)
					}
				})
			}
			t.Run("none without checksum mode, nor for a range", func(t *testing.T) {
				head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sums"), Key: aws.String("SHA256")})
				if err != nil {
					t.Fatal(err)
				}
				rng, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sums"), Key: aws.String("SHA256"), Range: aws.String("bytes=0-9"), ChecksumMode: types.ChecksumModeEnabled})
				if err != nil {
					t.Fatal(err)
				}
				if head.ChecksumSHA256 != nil || rng.ChecksumSHA256 != nil {
					t.Errorf("got %v, %v, want none", aws.ToString(head.ChecksumSHA256), aws.ToString(rng.ChecksumSHA256))
				}
			})
		})
	}
}

// TestChecksumRefusals: a wrong checksum is 400 BadDigest, one that
// cannot be a checksum of its algorithm and two checksums are 400
// InvalidRequest, all with S3's messages; none changes the object.
func TestChecksumRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("sums")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sums"), Key: aws.String("k"), Body: strings.NewReader("first")}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		header map[string]string
		status int
		code   string
		msg    string // S3's message, where it is known
	}{
		{"wrong crc32", map[string]string{"X-Amz-Checksum-Crc32": sumOf(types.ChecksumAlgorithmCrc32, []byte("other"))}, 400, "BadDigest",
			"The CRC32 you specified did not match the calculated checksum."},
		{"wrong sha256", map[string]string{"X-Amz-Checksum-Sha256": sumOf(types.ChecksumAlgorithmSha256, []byte("other"))}, 400, "BadDigest",
			"The SHA256 you specified did not match the calculated checksum."},
		{"not base64", map[string]string{"X-Amz-Checksum-Crc32": "!!"}, 400, "InvalidRequest",
			"Value for x-amz-checksum-crc32 header is invalid."},
		{"base64 of the wrong size", map[string]string{"X-Amz-Checksum-Sha256": "ZGVhZA=="}, 400, "InvalidRequest",
			"Value for x-amz-checksum-sha256 header is invalid."},
		{"wrong Content-MD5", map[string]string{"Content-MD5": md5b64("other")}, 400, "BadDigest",
			"The Content-MD5 you specified did not match what we received."},
		{"two checksums", map[string]string{"X-Amz-Checksum-Crc32": sumOf(types.ChecksumAlgorithmCrc32, []byte("second")),
			"X-Amz-Checksum-Sha1": sumOf(types.ChecksumAlgorithmSha1, []byte("second"))}, 400, "InvalidRequest", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, serr := do(t, e.signed(t, "PUT", "/sums/k", strings.NewReader("second"), "", tt.header))
			if status != tt.status || serr.Code != tt.code || tt.msg != "" && serr.Message != tt.msg {
				t.Errorf("got %v %v %q, want %v %v %q", status, serr.Code, serr.Message, tt.status, tt.code, tt.msg)
			}
		})
	}
	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sums"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(get.Body)
	get.Body.Close()
	if string(body) != "first" {
		t.Errorf("got %q, want %q", body, "first")
	}
}

// TestMultipartChecksums uploads parts with SHA-256, CRC32 and CRC64NVME
// checksums: ListParts and CompleteMultipartUpload return them, the
// object's checksum is composite (for CRC64NVME, which S3 never makes
// composite, the whole body's), and a part read returns its part's.
func TestMultipartChecksums(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("sums")}); err != nil {
		t.Fatal(err)
	}
	parts := [][]byte{randomBytes(5<<20, 1), randomBytes(1000, 2)}
	for _, alg := range []types.ChecksumAlgorithm{types.ChecksumAlgorithmSha256, types.ChecksumAlgorithmCrc32, types.ChecksumAlgorithmCrc64nvme} {
		t.Run(string(alg), func(t *testing.T) {
			key := aws.String("mp-" + string(alg))
			cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("sums"), Key: key, ChecksumAlgorithm: alg})
			if err != nil {
				t.Fatal(err)
			}
			var done []types.CompletedPart
			var raw []byte
			for i, p := range parts {
				out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("sums"), Key: key, UploadId: cu.UploadId,
					PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p), ChecksumAlgorithm: alg})
				if err != nil {
					t.Fatal(err)
				}
				want := sumOf(alg, p)
				if got := pick(alg, out.ChecksumCRC32, out.ChecksumCRC32C, out.ChecksumCRC64NVME, out.ChecksumSHA1, out.ChecksumSHA256); got != want {
					t.Errorf("UploadPart %d: got %v, want %v", i+1, got, want)
				}
				b, _ := base64.StdEncoding.DecodeString(want)
				raw = append(raw, b...)
				done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag, ChecksumSHA256: out.ChecksumSHA256, ChecksumCRC32: out.ChecksumCRC32, ChecksumCRC64NVME: out.ChecksumCRC64NVME})
			}
			lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("sums"), Key: key, UploadId: cu.UploadId})
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range lp.Parts {
				if got, want := pick(alg, p.ChecksumCRC32, p.ChecksumCRC32C, p.ChecksumCRC64NVME, p.ChecksumSHA1, p.ChecksumSHA256), sumOf(alg, parts[i]); got != want {
					t.Errorf("ListParts part %d: got %v, want %v", i+1, got, want)
				}
			}
			out, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sums"), Key: key, UploadId: cu.UploadId,
				MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
			if err != nil {
				t.Fatal(err)
			}
			composite, compositeType := sumOf(alg, raw)+"-2", types.ChecksumTypeComposite
			if alg == types.ChecksumAlgorithmCrc64nvme {
				// Never composite: the CRC of the whole body.
				composite, compositeType = sumOf(alg, append(bytes.Clone(parts[0]), parts[1]...)), types.ChecksumTypeFullObject
			}
			if got := pick(alg, out.ChecksumCRC32, out.ChecksumCRC32C, out.ChecksumCRC64NVME, out.ChecksumSHA1, out.ChecksumSHA256); got != composite || out.ChecksumType != compositeType {
				t.Errorf("CompleteMultipartUpload: got %q %q, want %q %q", got, out.ChecksumType, composite, compositeType)
			}
			head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sums"), Key: key, ChecksumMode: types.ChecksumModeEnabled})
			if err != nil {
				t.Fatal(err)
			}
			if got := pick(alg, head.ChecksumCRC32, head.ChecksumCRC32C, head.ChecksumCRC64NVME, head.ChecksumSHA1, head.ChecksumSHA256); got != composite || head.ChecksumType != compositeType {
				t.Errorf("HeadObject: got %q %q, want %q %q", got, head.ChecksumType, composite, compositeType)
			}
			get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sums"), Key: key, PartNumber: aws.Int32(2), ChecksumMode: types.ChecksumModeEnabled})
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(get.Body)
			get.Body.Close()
			if got := pick(alg, get.ChecksumCRC32, get.ChecksumCRC32C, get.ChecksumCRC64NVME, get.ChecksumSHA1, get.ChecksumSHA256); err != nil || got != sumOf(alg, parts[1]) || !bytes.Equal(body, parts[1]) {
				t.Errorf("GetObject part 2: got %v, %v, want %v", got, err, sumOf(alg, parts[1]))
			}
			at, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String("sums"), Key: key,
				ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesChecksum, types.ObjectAttributesObjectParts}})
			if err != nil {
				t.Fatal(err)
			}
			if (at.Checksum == nil) != (composite == "") || at.ObjectParts == nil || len(at.ObjectParts.Parts) != 2 {
				t.Fatalf("GetObjectAttributes: got %+v, want two parts and a checksum if composite %q", at, composite)
			}
			if at.Checksum != nil {
				if got := pick(alg, at.Checksum.ChecksumCRC32, at.Checksum.ChecksumCRC32C, at.Checksum.ChecksumCRC64NVME, at.Checksum.ChecksumSHA1, at.Checksum.ChecksumSHA256); got != composite {
					t.Errorf("GetObjectAttributes: got %v, want %v", got, composite)
				}
			}
			for i, p := range at.ObjectParts.Parts {
				if got, want := pick(alg, p.ChecksumCRC32, p.ChecksumCRC32C, p.ChecksumCRC64NVME, p.ChecksumSHA1, p.ChecksumSHA256), sumOf(alg, parts[i]); got != want {
					t.Errorf("GetObjectAttributes part %d: got %v, want %v", i+1, got, want)
				}
			}
		})
	}
}
