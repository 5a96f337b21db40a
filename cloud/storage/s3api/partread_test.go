package s3api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// multipartObject uploads body into bucket/key in parts of the given
// sizes (every one but the last at least 5 MiB), by hand, and returns the
// object's ETag.
func multipartObject(t *testing.T, c *s3.Client, bucket, key string, body []byte, sizes ...int) string {
	t.Helper()
	ctx := context.Background()
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	var parts []types.CompletedPart
	off := 0
	for i, n := range sizes {
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cu.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(body[off : off+n])})
		if err != nil {
			t.Fatalf("UploadPart %d: %v", i+1, err)
		}
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag})
		off += n
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		t.Fatal(err)
	}
	return *done.ETag
}

// TestPartNumberReads reads single parts with GetObject and HeadObject
// ?partNumber=N: the part's bytes as a 206 with their Content-Range and
// x-amz-mp-parts-count for an object completed from parts, the whole
// object (no part count) as part 1 of one uploaded whole, and S3's errors
// otherwise.
func TestPartNumberReads(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("parts")}); err != nil {
		t.Fatal(err)
	}
	sizes := []int{5 << 20, 5<<20 + 7, 1234}
	body := randomBytes(sizes[0]+sizes[1]+sizes[2], 9)
	etag := multipartObject(t, c, "parts", "mp", body, sizes...)
	whole := []byte("uploaded in one piece")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("parts"), Key: aws.String("whole"), Body: bytes.NewReader(whole)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("parts"), Key: aws.String("mp-copy"), CopySource: aws.String("parts/mp")}); err != nil {
		t.Fatal(err)
	}

	total := int64(len(body))
	for _, tt := range []struct {
		name        string
		key         string
		part        int32
		first, size int64
		objSize     int64
		count       *int32
		data        []byte
	}{
		{"first part", "mp", 1, 0, int64(sizes[0]), total, aws.Int32(3), body[:sizes[0]]},
		{"middle part", "mp", 2, int64(sizes[0]), int64(sizes[1]), total, aws.Int32(3), body[sizes[0] : sizes[0]+sizes[1]]},
		{"last part", "mp", 3, int64(sizes[0] + sizes[1]), int64(sizes[2]), total, aws.Int32(3), body[sizes[0]+sizes[1]:]},
		{"part of a copy", "mp-copy", 2, int64(sizes[0]), int64(sizes[1]), total, aws.Int32(3), body[sizes[0] : sizes[0]+sizes[1]]},
		{"part 1 of an object uploaded whole", "whole", 1, 0, int64(len(whole)), int64(len(whole)), nil, whole},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantRange := fmt.Sprintf("bytes %d-%d/%d", tt.first, tt.first+tt.size-1, tt.objSize)
			out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("parts"), Key: aws.String(tt.key), PartNumber: aws.Int32(tt.part)})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(out.Body)
			out.Body.Close()
			if !bytes.Equal(got, tt.data) {
				t.Errorf("GetObject: got %d bytes, want %d bytes of the part", len(got), len(tt.data))
			}
			if aws.ToString(out.ContentRange) != wantRange || aws.ToInt64(out.ContentLength) != tt.size {
				t.Errorf("GetObject: got Content-Range %v, length %v, want %v, %v", aws.ToString(out.ContentRange), aws.ToInt64(out.ContentLength), wantRange, tt.size)
			}
			if fmt.Sprint(aws.ToInt32(out.PartsCount)) != fmt.Sprint(aws.ToInt32(tt.count)) || (out.PartsCount == nil) != (tt.count == nil) {
				t.Errorf("GetObject: got PartsCount %v, want %v", aws.ToInt32(out.PartsCount), aws.ToInt32(tt.count))
			}
			head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("parts"), Key: aws.String(tt.key), PartNumber: aws.Int32(tt.part)})
			if err != nil {
				t.Fatal(err)
			}
			if aws.ToString(head.ContentRange) != wantRange || aws.ToInt64(head.ContentLength) != tt.size || aws.ToInt32(head.PartsCount) != aws.ToInt32(tt.count) {
				t.Errorf("HeadObject: got %v, %v, %v parts, want %v, %v, %v parts", aws.ToString(head.ContentRange), aws.ToInt64(head.ContentLength),
					aws.ToInt32(head.PartsCount), wantRange, tt.size, aws.ToInt32(tt.count))
			}
		})
	}

	t.Run("the whole object reports no part count", func(t *testing.T) {
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("parts"), Key: aws.String("mp")})
		if err != nil {
			t.Fatal(err)
		}
		if head.PartsCount != nil || aws.ToInt64(head.ContentLength) != total || aws.ToString(head.ETag) != etag {
			t.Errorf("got PartsCount %v, length %v, ETag %v, want none, %v, %v", aws.ToInt32(head.PartsCount), aws.ToInt64(head.ContentLength), aws.ToString(head.ETag), total, etag)
		}
	})

	t.Run("conditions apply to the whole object", func(t *testing.T) {
		_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("parts"), Key: aws.String("mp"), PartNumber: aws.Int32(2), IfNoneMatch: aws.String(etag)})
		if got := httpStatus(err); got != http.StatusNotModified {
			t.Errorf("got %v, want %v", got, http.StatusNotModified)
		}
		_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("parts"), Key: aws.String("mp"), PartNumber: aws.Int32(2), IfMatch: aws.String(`"other"`)})
		if got := httpStatus(err); got != http.StatusPreconditionFailed {
			t.Errorf("got %v, want %v", got, http.StatusPreconditionFailed)
		}
	})

	for _, tt := range []struct {
		name   string
		key    string
		part   int32
		rng    string
		status int
		code   string
	}{
		{"past the last part", "mp", 4, "", 416, "InvalidPartNumber"},
		{"part 2 of an object uploaded whole", "whole", 2, "", 416, "InvalidPartNumber"},
		{"part 0", "mp", 0, "", 400, "InvalidArgument"},
		{"part 10001", "mp", 10001, "", 400, "InvalidArgument"},
		{"with a Range", "mp", 1, "bytes=0-9", 400, "InvalidRequest"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := &s3.GetObjectInput{Bucket: aws.String("parts"), Key: aws.String(tt.key), PartNumber: aws.Int32(tt.part)}
			if tt.rng != "" {
				in.Range = aws.String(tt.rng)
			}
			_, err := c.GetObject(ctx, in)
			if httpStatus(err) != tt.status || apiCode(err) != tt.code {
				t.Errorf("GetObject: got %v %v, want %v %v", httpStatus(err), apiCode(err), tt.status, tt.code)
			}
			_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("parts"), Key: aws.String(tt.key), PartNumber: aws.Int32(tt.part), Range: in.Range})
			if httpStatus(err) != tt.status {
				t.Errorf("HeadObject: got %v, want %v", httpStatus(err), tt.status)
			}
		})
	}
}
