package s3api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"hash/crc32"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func b64sum(h hash.Hash, data ...[]byte) string {
	for _, d := range data {
		h.Write(d)
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// TestMultipartChecksumTypes holds CreateMultipartUpload's checksum
// algorithm and type to S3's rules: FULL_OBJECT uploads get the CRC of the
// whole body (checked against the one the completion gives), parts
// without a CRC get one computed, and COMPOSITE uploads take parts of
// their algorithm only and must list every part's checksum.
func TestMultipartChecksumTypes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// The client sends checksums only where asked, so that each request
	// below carries exactly the checksum the test gives it.
	c := e.sdk(e.id, e.secret, func(o *s3.Options) {
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("sums")}); err != nil {
		t.Fatal(err)
	}
	p1, p2 := randomBytes(5<<20, 11), randomBytes(777, 12)
	create := func(key string, alg types.ChecksumAlgorithm, typ types.ChecksumType) (*s3.CreateMultipartUploadOutput, error) {
		return c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("sums"), Key: aws.String(key), ChecksumAlgorithm: alg, ChecksumType: typ})
	}
	upload := func(key string, id *string, n int32, data []byte, edit func(*s3.UploadPartInput)) (*s3.UploadPartOutput, error) {
		in := &s3.UploadPartInput{Bucket: aws.String("sums"), Key: aws.String(key), UploadId: id, PartNumber: aws.Int32(n), Body: bytes.NewReader(data)}
		if edit != nil {
			edit(in)
		}
		return c.UploadPart(ctx, in)
	}

	t.Run("full object", func(t *testing.T) {
		cu, err := create("full", types.ChecksumAlgorithmCrc32, types.ChecksumTypeFullObject)
		if err != nil {
			t.Fatal(err)
		}
		if cu.ChecksumAlgorithm != types.ChecksumAlgorithmCrc32 || cu.ChecksumType != types.ChecksumTypeFullObject {
			t.Errorf("CreateMultipartUpload answered algorithm %q, type %q", cu.ChecksumAlgorithm, cu.ChecksumType)
		}
		// Part 1 with its CRC32, part 2 without: the store computes it.
		o1, err := upload("full", cu.UploadId, 1, p1, func(in *s3.UploadPartInput) { in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32 })
		if err != nil {
			t.Fatal(err)
		}
		o2, err := upload("full", cu.UploadId, 2, p2, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := b64sum(crc32.NewIEEE(), p2); aws.ToString(o2.ChecksumCRC32) != want {
			t.Errorf("part 2 sent without a checksum: answered CRC32 %q, want %q", aws.ToString(o2.ChecksumCRC32), want)
		}
		if _, err := upload("full", cu.UploadId, 3, p2, func(in *s3.UploadPartInput) { in.ChecksumAlgorithm = types.ChecksumAlgorithmSha256 }); apiCode(err) != "InvalidRequest" {
			t.Errorf("a SHA-256 part into a CRC32 upload: %v, want InvalidRequest", err)
		}
		lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("sums"), Key: aws.String("full"), UploadId: cu.UploadId})
		if err != nil || lp.ChecksumAlgorithm != types.ChecksumAlgorithmCrc32 || lp.ChecksumType != types.ChecksumTypeFullObject || len(lp.Parts) != 2 {
			t.Fatalf("ListParts: %+v, %v", lp, err)
		}
		whole := b64sum(crc32.NewIEEE(), p1, p2)
		complete := func(sum string) (*s3.CompleteMultipartUploadOutput, error) {
			return c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sums"), Key: aws.String("full"), UploadId: cu.UploadId,
				ChecksumCRC32: aws.String(sum), ChecksumType: types.ChecksumTypeFullObject,
				MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
					{PartNumber: aws.Int32(1), ETag: o1.ETag}, {PartNumber: aws.Int32(2), ETag: o2.ETag}}}})
		}
		if _, err := complete(b64sum(crc32.NewIEEE(), p2, p1)); apiCode(err) != "BadDigest" {
			t.Errorf("completing with another CRC32 of the object: %v, want BadDigest", err)
		}
		parts := &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: o1.ETag}, {PartNumber: aws.Int32(2), ETag: o2.ETag}}}
		if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sums"), Key: aws.String("full"), UploadId: cu.UploadId,
			ChecksumType: types.ChecksumTypeComposite, MultipartUpload: parts}); apiCode(err) != "InvalidRequest" {
			t.Errorf("completing a FULL_OBJECT upload as COMPOSITE: %v, want InvalidRequest", err)
		}
		if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sums"), Key: aws.String("full"), UploadId: cu.UploadId,
			ChecksumCRC32C: aws.String(whole), MultipartUpload: parts}); apiCode(err) != "InvalidRequest" {
			t.Errorf("completing a CRC32 upload with a CRC32C of the object: %v, want InvalidRequest", err)
		}
		if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sums"), Key: aws.String("full")}); httpStatus(err) != 404 {
			t.Errorf("refused completions made the object: HEAD %v", err)
		}
		out, err := complete(whole)
		if err != nil {
			t.Fatalf("completing with the object's CRC32: %v", err)
		}
		if aws.ToString(out.ChecksumCRC32) != whole || out.ChecksumType != types.ChecksumTypeFullObject {
			t.Errorf("CompleteMultipartUpload: CRC32 %q type %q, want %q FULL_OBJECT", aws.ToString(out.ChecksumCRC32), out.ChecksumType, whole)
		}
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sums"), Key: aws.String("full"), ChecksumMode: types.ChecksumModeEnabled})
		if err != nil || aws.ToString(head.ChecksumCRC32) != whole || head.ChecksumType != types.ChecksumTypeFullObject {
			t.Fatalf("HeadObject: %+v, %v; want CRC32 %s FULL_OBJECT", head, err, whole)
		}
	})

	t.Run("crc64nvme is full object by default", func(t *testing.T) {
		cu, err := create("nvme", types.ChecksumAlgorithmCrc64nvme, "")
		if err != nil || cu.ChecksumType != types.ChecksumTypeFullObject {
			t.Fatalf("CreateMultipartUpload with CRC64NVME: %+v, %v", cu, err)
		}
		o1, err := upload("nvme", cu.UploadId, 1, p1, nil)
		if err != nil {
			t.Fatal(err)
		}
		o2, err := upload("nvme", cu.UploadId, 2, p2, func(in *s3.UploadPartInput) { in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc64nvme })
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sums"), Key: aws.String("nvme"), UploadId: cu.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: o1.ETag}, {PartNumber: aws.Int32(2), ETag: o2.ETag}}}})
		if err != nil {
			t.Fatal(err)
		}
		// The object's CRC64NVME is the one of the SDK's PutObject of the
		// same bytes.
		put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sums"), Key: aws.String("nvme-single"), Body: bytes.NewReader(append(bytes.Clone(p1), p2...)),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc64nvme})
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToString(out.ChecksumCRC64NVME) == "" || aws.ToString(out.ChecksumCRC64NVME) != aws.ToString(put.ChecksumCRC64NVME) {
			t.Errorf("completed CRC64NVME %q, the SDK's of the whole body %q", aws.ToString(out.ChecksumCRC64NVME), aws.ToString(put.ChecksumCRC64NVME))
		}
	})

	t.Run("composite", func(t *testing.T) {
		cu, err := create("comp", types.ChecksumAlgorithmSha256, "")
		if err != nil || cu.ChecksumType != types.ChecksumTypeComposite {
			t.Fatalf("CreateMultipartUpload with SHA256: %+v, %v", cu, err)
		}
		// A small body: the refusal comes before the body is read, and a
		// large one could meet a closed connection while still sending.
		if _, err := upload("comp", cu.UploadId, 1, p2, nil); apiCode(err) != "InvalidRequest" || !strings.Contains(err.Error(), "actual checksum Type: null") {
			t.Errorf("a part without a checksum into a COMPOSITE upload: %v", err)
		}
		sha := func(in *s3.UploadPartInput) { in.ChecksumAlgorithm = types.ChecksumAlgorithmSha256 }
		o1, err := upload("comp", cu.UploadId, 1, p1, sha)
		if err != nil {
			t.Fatal(err)
		}
		o2, err := upload("comp", cu.UploadId, 2, p2, sha)
		if err != nil {
			t.Fatal(err)
		}
		complete := func(parts ...types.CompletedPart) (*s3.CompleteMultipartUploadOutput, error) {
			return c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sums"), Key: aws.String("comp"), UploadId: cu.UploadId,
				MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
		}
		first := types.CompletedPart{PartNumber: aws.Int32(1), ETag: o1.ETag, ChecksumSHA256: o1.ChecksumSHA256}
		for _, tc := range []struct {
			name, code string
			second     types.CompletedPart
		}{
			{"a part listed without its checksum", "InvalidRequest", types.CompletedPart{PartNumber: aws.Int32(2), ETag: o2.ETag}},
			{"a part listed with another value", "InvalidPart", types.CompletedPart{PartNumber: aws.Int32(2), ETag: o2.ETag, ChecksumSHA256: o1.ChecksumSHA256}},
			{"a part listed with another algorithm", "BadDigest", types.CompletedPart{PartNumber: aws.Int32(2), ETag: o2.ETag, ChecksumCRC32: aws.String("AAAAAA==")}},
			{"a checksum that is not base64", "InvalidArgument", types.CompletedPart{PartNumber: aws.Int32(2), ETag: o2.ETag, ChecksumSHA256: aws.String("not base64!")}},
		} {
			if _, err := complete(first, tc.second); apiCode(err) != tc.code {
				t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
			}
		}
		raw1, _ := base64.StdEncoding.DecodeString(*o1.ChecksumSHA256)
		raw2, _ := base64.StdEncoding.DecodeString(*o2.ChecksumSHA256)
		composite := b64sum(sha256.New(), raw1, raw2)
		second := types.CompletedPart{PartNumber: aws.Int32(2), ETag: o2.ETag, ChecksumSHA256: o2.ChecksumSHA256}
		withSum := func(sum string) (*s3.CompleteMultipartUploadOutput, error) {
			return c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sums"), Key: aws.String("comp"), UploadId: cu.UploadId,
				ChecksumSHA256: aws.String(sum), MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{first, second}}})
		}
		if _, err := withSum(b64sum(sha256.New(), raw2, raw1) + "-2"); apiCode(err) != "BadDigest" {
			t.Errorf("completing with another composite SHA256: %v, want BadDigest", err)
		}
		if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sums"), Key: aws.String("comp")}); httpStatus(err) != 404 {
			t.Errorf("refused completions made the object: HEAD %v", err)
		}
		// The object's composite checksum, given without its -N, as S3
		// takes it.
		out, err := withSum(composite)
		if err != nil {
			t.Fatalf("the refusals above left the upload unusable: %v", err)
		}
		if want := composite + "-2"; aws.ToString(out.ChecksumSHA256) != want || out.ChecksumType != types.ChecksumTypeComposite {
			t.Errorf("composite SHA256 %q (%s), want %q", aws.ToString(out.ChecksumSHA256), out.ChecksumType, want)
		}
	})

	t.Run("no algorithm", func(t *testing.T) {
		cu, err := create("plain", "", "")
		if err != nil || cu.ChecksumAlgorithm != "" || cu.ChecksumType != "" {
			t.Fatalf("CreateMultipartUpload without a checksum: %+v, %v", cu, err)
		}
		crc := func(in *s3.UploadPartInput) { in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32 }
		o1, err := upload("plain", cu.UploadId, 1, p1, crc)
		if err != nil {
			t.Fatal(err)
		}
		o2, err := upload("plain", cu.UploadId, 2, p2, crc)
		if err != nil {
			t.Fatal(err)
		}
		parts := &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: o1.ETag}, {PartNumber: aws.Int32(2), ETag: o2.ETag}}}
		for _, tc := range []struct {
			name, code string
			in         *s3.CompleteMultipartUploadInput
		}{
			{"a CRC32C the parts cannot check", "InvalidRequest", &s3.CompleteMultipartUploadInput{ChecksumCRC32C: aws.String(b64sum(crc32.New(crc32.MakeTable(crc32.Castagnoli)), p1, p2))}},
			{"another CRC32", "BadDigest", &s3.CompleteMultipartUploadInput{ChecksumCRC32: aws.String(b64sum(crc32.NewIEEE(), p2, p1))}},
			{"a type", "InvalidRequest", &s3.CompleteMultipartUploadInput{ChecksumType: types.ChecksumTypeFullObject}},
		} {
			tc.in.Bucket, tc.in.Key, tc.in.UploadId, tc.in.MultipartUpload = aws.String("sums"), aws.String("plain"), cu.UploadId, parts
			if _, err := c.CompleteMultipartUpload(ctx, tc.in); apiCode(err) != tc.code {
				t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
			}
		}
		// The CRC32 of the whole body, which the parts' CRC32s check.
		if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sums"), Key: aws.String("plain"), UploadId: cu.UploadId,
			ChecksumCRC32: aws.String(b64sum(crc32.NewIEEE(), p1, p2)), MultipartUpload: parts}); err != nil {
			t.Fatalf("completing with the body's CRC32: %v", err)
		}
	})

	t.Run("refused at creation", func(t *testing.T) {
		for _, tc := range []struct {
			alg types.ChecksumAlgorithm
			typ types.ChecksumType
		}{
			{types.ChecksumAlgorithmSha256, types.ChecksumTypeFullObject},
			{types.ChecksumAlgorithmSha1, types.ChecksumTypeFullObject},
			{types.ChecksumAlgorithmCrc64nvme, types.ChecksumTypeComposite},
			{"", types.ChecksumTypeComposite},
			{types.ChecksumAlgorithmCrc32, "WHOLE"},
			{"MD4", ""},
		} {
			if _, err := create("refused", tc.alg, tc.typ); apiCode(err) != "InvalidRequest" {
				t.Errorf("algorithm %q type %q: %v, want InvalidRequest", tc.alg, tc.typ, err)
			}
		}
		lu, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("sums"), Prefix: aws.String("refused")})
		if err != nil || len(lu.Uploads) != 0 {
			t.Errorf("a refused creation left uploads: %+v, %v", lu, err)
		}
	})

	t.Run("part copy", func(t *testing.T) {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sums"), Key: aws.String("src"), Body: bytes.NewReader(p1)}); err != nil {
			t.Fatal(err)
		}
		cu, err := create("copied", types.ChecksumAlgorithmCrc32, types.ChecksumTypeComposite)
		if err != nil {
			t.Fatal(err)
		}
		// A source PUT with its CRC32, whose body file the part shares.
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sums"), Key: aws.String("src-crc"), Body: bytes.NewReader(p1),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32}); err != nil {
			t.Fatal(err)
		}
		var done []types.CompletedPart
		var body []byte
		for n, tc := range []struct{ src, rng string }{{"sums/src", ""}, {"sums/src-crc", ""}, {"sums/src", "bytes=10-2000"}} {
			in := &s3.UploadPartCopyInput{Bucket: aws.String("sums"), Key: aws.String("copied"), UploadId: cu.UploadId, PartNumber: aws.Int32(int32(n + 1)), CopySource: aws.String(tc.src)}
			want := p1
			if tc.rng != "" {
				in.CopySourceRange, want = aws.String(tc.rng), p1[10:2001]
			}
			out, err := c.UploadPartCopy(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if got, w := aws.ToString(out.CopyPartResult.ChecksumCRC32), b64sum(crc32.NewIEEE(), want); got != w {
				t.Errorf("UploadPartCopy of %s %q into a CRC32 upload: checksum %q, want %q", tc.src, tc.rng, got, w)
			}
			done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(n + 1)), ETag: out.CopyPartResult.ETag, ChecksumCRC32: out.CopyPartResult.ChecksumCRC32})
			body = append(body, want...)
		}
		if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("sums"), Key: aws.String("copied"), UploadId: cu.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
			t.Fatalf("completing the copied parts: %v", err)
		}
		get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sums"), Key: aws.String("copied")})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(get.Body)
		get.Body.Close()
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("the copied object: %d bytes, %v; want the %d copied", len(got), err, len(body))
		}
	})
}
