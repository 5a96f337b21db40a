package s3api_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

func md5Hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// multipartETag is S3's quoted ETag of an object of parts with these
// quoted ETags.
func multipartETag(etags ...string) string {
	var sums []byte
	for _, e := range etags {
		s, _ := hex.DecodeString(strings.Trim(e, `"`))
		sums = append(sums, s...)
	}
	return fmt.Sprintf(`"%s-%d"`, md5Hex(sums), len(etags))
}

// mustPut stores body as bucket/key.
func mustPut(t *testing.T, c *s3.Client, bucket, key string, body []byte) string {
	t.Helper()
	out, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatalf("PutObject %s/%s: %v", bucket, key, err)
	}
	return *out.ETag
}

// mustGet reads bucket/key and its ETag.
func mustGet(t *testing.T, c *s3.Client, bucket, key string) ([]byte, string) {
	t.Helper()
	out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("GetObject %s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return data, *out.ETag
}

func mustBuckets(t *testing.T, c *s3.Client, names ...string) {
	t.Helper()
	for _, b := range names {
		if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAWSSDKUploadPartCopy builds an object in another bucket from copied
// whole objects (single-part, multipart, a key that needs escaping),
// copied ranges and an uploaded part, completes it and reads it back byte
// for byte with its multipart ETag.
func TestAWSSDKUploadPartCopy(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "src", "dst")
	big := randomBytes(12<<20+333, 11)
	mid := randomBytes(5<<20+7, 12)
	small := []byte("a small object, inline in the store")
	mustPut(t, c, "src", "big", big)
	midETag := mustPut(t, c, "src", "dir/a b+c&d.bin", mid)
	mustPut(t, c, "src", "small", small)
	multi := randomBytes(11<<20, 13)
	up := manager.NewUploader(c, func(u *manager.Uploader) { u.PartSize = 5 << 20; u.Concurrency = 2 })
	if _, err := up.Upload(ctx, &s3.PutObjectInput{Bucket: aws.String("src"), Key: aws.String("multi"), Body: bytes.NewReader(multi)}); err != nil {
		t.Fatal(err)
	}
	uploaded := randomBytes(5<<20, 14)

	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("dst"), Key: aws.String("joined"), ContentType: aws.String("application/x-joined")})
	if err != nil {
		t.Fatal(err)
	}
	type part struct {
		source, rng string // a copy's source and range
		body        []byte // an uploaded part's body
		want        []byte
	}
	parts := []part{
		{source: "src/big", rng: fmt.Sprintf("bytes=0-%d", 6<<20-1), want: big[:6<<20]},
		{body: uploaded, want: uploaded},
		{source: "src/multi", want: multi},                // a multipart source: its bytes, not its ETag
		{source: "/src/dir/a%20b%2Bc%26d.bin", want: mid}, // escaped, with a leading slash
		{source: "src/big", rng: fmt.Sprintf("bytes=%d-%d", 6<<20, len(big)-1), want: big[6<<20:]},
		{source: "src/small", rng: "bytes=2-9", want: small[2:10]}, // the last part may be small
	}
	var completed []types.CompletedPart
	var etags []string
	var want []byte
	for i, p := range parts {
		n := aws.Int32(int32(i + 1))
		var etag string
		if p.source == "" {
			out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("dst"), Key: aws.String("joined"), UploadId: cu.UploadId, PartNumber: n, Body: bytes.NewReader(p.body)})
			if err != nil {
				t.Fatalf("UploadPart %d: %v", i+1, err)
			}
			etag = *out.ETag
		} else {
			in := &s3.UploadPartCopyInput{Bucket: aws.String("dst"), Key: aws.String("joined"), UploadId: cu.UploadId, PartNumber: n, CopySource: aws.String(p.source)}
			if p.rng != "" {
				in.CopySourceRange = aws.String(p.rng)
			}
			out, err := c.UploadPartCopy(ctx, in)
			if err != nil {
				t.Fatalf("UploadPartCopy %d (%s %s): %v", i+1, p.source, p.rng, err)
			}
			if out.CopyPartResult == nil || out.CopyPartResult.ETag == nil || out.CopyPartResult.LastModified == nil ||
				time.Since(*out.CopyPartResult.LastModified) > time.Minute {
				t.Fatalf("UploadPartCopy %d: result %+v", i+1, out.CopyPartResult)
			}
			etag = *out.CopyPartResult.ETag
		}
		if etag != `"`+md5Hex(p.want)+`"` {
			t.Fatalf("part %d: ETag %s, want the MD5 of its bytes %s", i+1, etag, md5Hex(p.want))
		}
		etags = append(etags, etag)
		completed = append(completed, types.CompletedPart{PartNumber: n, ETag: aws.String(etag)})
		want = append(want, p.want...)
	}
	if etags[3] != midETag {
		t.Errorf("the copy of a whole single-part object has ETag %s, the object %s", etags[3], midETag)
	}
	lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("dst"), Key: aws.String("joined"), UploadId: cu.UploadId})
	if err != nil || len(lp.Parts) != len(parts) {
		t.Fatalf("ListParts = %+v, %v", lp, err)
	}
	for i, p := range lp.Parts {
		if *p.Size != int64(len(parts[i].want)) || *p.ETag != etags[i] {
			t.Errorf("listed part %d: %d bytes, ETag %s; want %d, %s", i+1, *p.Size, *p.ETag, len(parts[i].want), etags[i])
		}
	}
	out, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("dst"), Key: aws.String("joined"), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: completed}})
	if err != nil {
		t.Fatalf("CompleteMultipartUpload: %v", err)
	}
	wantETag := multipartETag(etags...)
	if *out.ETag != wantETag {
		t.Errorf("completed ETag %s, want %s", *out.ETag, wantETag)
	}
	got, gotETag := mustGet(t, c, "dst", "joined")
	if !bytes.Equal(got, want) || gotETag != wantETag {
		t.Fatalf("joined object: %d bytes (MD5 %s), ETag %s; want %d bytes (MD5 %s), %s", len(got), md5Hex(got), gotETag, len(want), md5Hex(want), wantETag)
	}
	// The sources are as they were.
	for key, body := range map[string][]byte{"big": big, "dir/a b+c&d.bin": mid, "small": small, "multi": multi} {
		if got, _ := mustGet(t, c, "src", key); !bytes.Equal(got, body) {
			t.Errorf("source %s changed: %d bytes", key, len(got))
		}
	}
}

// copyLikeTheCLI copies src/key to dst/key as the AWS CLI and boto3's
// managed copy do above their 8 MiB threshold: UploadPartCopy of 8 MiB
// ranges, concurrently, then CompleteMultipartUpload.
func copyLikeTheCLI(ctx context.Context, c *s3.Client, src, dst, key string) error {
	const chunk = 8 << 20
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(src), Key: aws.String(key)})
	if err != nil {
		return err
	}
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(dst), Key: aws.String(key), ContentType: head.ContentType, Metadata: head.Metadata})
	if err != nil {
		return err
	}
	size := *head.ContentLength
	n := int((size + chunk - 1) / chunk)
	completed := make([]types.CompletedPart, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := int64(i) * chunk
			last := min(first+chunk, size) - 1
			out, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String(dst), Key: aws.String(key), UploadId: cu.UploadId,
				PartNumber: aws.Int32(int32(i + 1)), CopySource: aws.String(src + "/" + key), CopySourceRange: aws.String(fmt.Sprintf("bytes=%d-%d", first, last))})
			if err != nil {
				errs[i] = err
				return
			}
			completed[i] = types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.CopyPartResult.ETag}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(dst), Key: aws.String(key), UploadId: cu.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: completed}})
	return err
}

// TestAWSSDKManagedCopy copies a 20 MiB object between buckets in 8 MiB
// ranges, as the AWS CLI and boto3 do (the Go SDK's manager has no copy).
func TestAWSSDKManagedCopy(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "from", "into")
	body := randomBytes(20<<20, 21)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("from"), Key: aws.String("big"), Body: bytes.NewReader(body),
		ContentType: aws.String("video/mp4"), Metadata: map[string]string{"origin": "camera"}}); err != nil {
		t.Fatal(err)
	}
	if err := copyLikeTheCLI(ctx, c, "from", "into", "big"); err != nil {
		t.Fatalf("copy: %v", err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("into"), Key: aws.String("big")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	etags := []string{md5Hex(body[:8<<20]), md5Hex(body[8<<20 : 16<<20]), md5Hex(body[16<<20:])}
	if !bytes.Equal(got, body) || *out.ETag != multipartETag(etags...) || *out.ContentType != "video/mp4" || out.Metadata["origin"] != "camera" {
		t.Fatalf("copy: %d bytes, ETag %s (want %s), type %s, metadata %v", len(got), *out.ETag, multipartETag(etags...), *out.ContentType, out.Metadata)
	}
}

// TestAWSSDKUploadPartCopyRefusals: every refused UploadPartCopy changes
// nothing: the upload keeps its one part, no object appears, the source
// is as it was.
func TestAWSSDKUploadPartCopyRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "src", "dst")
	body := randomBytes(100<<10, 31)
	srcETag := mustPut(t, c, "src", "obj", body)
	bobID, bobSecret := e.key(t, "bob", cloudstore.PermReadWrite, "*")
	bob := e.sdk(bobID, bobSecret)
	mustBuckets(t, bob, "bobs")
	mustPut(t, bob, "bobs", "obj", body)
	bobUpload, err := bob.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("bobs"), Key: aws.String("m")})
	if err != nil {
		t.Fatal(err)
	}
	scopedID, scopedSecret := e.key(t, "alice", cloudstore.PermReadWrite, "dst")
	readID, readSecret := e.key(t, "alice", cloudstore.PermRead, "*")
	writeID, writeSecret := e.key(t, "alice", cloudstore.PermWrite, "*")

	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("dst"), Key: aws.String("m")})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("dst"), Key: aws.String("m"), UploadId: cu.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("kept")})
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	future := time.Now().Add(time.Hour)
	type tc struct {
		name   string
		client *s3.Client
		edit   func(*s3.UploadPartCopyInput)
		status int
		code   string
	}
	cases := []tc{
		{"range past the end", c, func(in *s3.UploadPartCopyInput) {
			in.CopySourceRange = aws.String(fmt.Sprintf("bytes=0-%d", len(body)))
		}, 400, "InvalidArgument"},
		{"range starting past the end", c, func(in *s3.UploadPartCopyInput) {
			in.CopySourceRange = aws.String(fmt.Sprintf("bytes=%d-%d", len(body), len(body)+10))
		}, 400, "InvalidArgument"},
		{"open range", c, func(in *s3.UploadPartCopyInput) { in.CopySourceRange = aws.String("bytes=5-") }, 400, "InvalidArgument"},
		{"suffix range", c, func(in *s3.UploadPartCopyInput) { in.CopySourceRange = aws.String("bytes=-5") }, 400, "InvalidArgument"},
		{"reversed range", c, func(in *s3.UploadPartCopyInput) { in.CopySourceRange = aws.String("bytes=9-5") }, 400, "InvalidArgument"},
		{"two ranges", c, func(in *s3.UploadPartCopyInput) { in.CopySourceRange = aws.String("bytes=0-1,3-4") }, 400, "InvalidArgument"},
		{"no unit", c, func(in *s3.UploadPartCopyInput) { in.CopySourceRange = aws.String("0-5") }, 400, "InvalidArgument"},
		{"missing source key", c, func(in *s3.UploadPartCopyInput) { in.CopySource = aws.String("src/none") }, 404, "NoSuchKey"},
		{"missing source bucket", c, func(in *s3.UploadPartCopyInput) { in.CopySource = aws.String("nobucket/obj") }, 404, "NoSuchBucket"},
		{"another account's source, not granted", c, func(in *s3.UploadPartCopyInput) { in.CopySource = aws.String("bobs/obj") }, 403, "AccessDenied"},
		{"a source without a key", c, func(in *s3.UploadPartCopyInput) { in.CopySource = aws.String("src") }, 400, "InvalidArgument"},
		{"a malformed source version", c, func(in *s3.UploadPartCopyInput) { in.CopySource = aws.String("src/obj?versionId=3") }, 400, "InvalidArgument"},
		{"a missing source version", c, func(in *s3.UploadPartCopyInput) {
			in.CopySource = aws.String("src/obj?versionId=" + strings.Repeat("0", 24))
		}, 404, "NoSuchVersion"},
		{"a source with another query", c, func(in *s3.UploadPartCopyInput) { in.CopySource = aws.String("src/obj?acl") }, 400, "InvalidArgument"},
		{"scoped key, source out of scope", e.sdk(scopedID, scopedSecret), nil, 403, "AccessDenied"},
		{"read-only key", e.sdk(readID, readSecret), nil, 403, "AccessDenied"},
		{"write-only key", e.sdk(writeID, writeSecret), nil, 403, "AccessDenied"},
		{"if-match fails", c, func(in *s3.UploadPartCopyInput) { in.CopySourceIfMatch = aws.String(`"0123"`) }, 412, "PreconditionFailed"},
		{"if-none-match fails", c, func(in *s3.UploadPartCopyInput) { in.CopySourceIfNoneMatch = aws.String(srcETag) }, 412, "PreconditionFailed"},
		{"if-unmodified-since fails", c, func(in *s3.UploadPartCopyInput) { in.CopySourceIfUnmodifiedSince = &past }, 412, "PreconditionFailed"},
		{"if-modified-since fails", c, func(in *s3.UploadPartCopyInput) { in.CopySourceIfModifiedSince = &future }, 412, "PreconditionFailed"},
		{"unknown upload", c, func(in *s3.UploadPartCopyInput) { in.UploadId = aws.String("0123456789abcdef0123456789abcdef") }, 404, "NoSuchUpload"},
		{"another key's upload", c, func(in *s3.UploadPartCopyInput) { in.Key = aws.String("other") }, 404, "NoSuchUpload"},
		{"part 0", c, func(in *s3.UploadPartCopyInput) { in.PartNumber = aws.Int32(0) }, 400, "InvalidArgument"},
		{"part 10001", c, func(in *s3.UploadPartCopyInput) { in.PartNumber = aws.Int32(10001) }, 400, "InvalidArgument"},
		{"bob into alice's upload", bob, func(in *s3.UploadPartCopyInput) { in.CopySource = aws.String("bobs/obj") }, 403, "AccessDenied"},
		{"bob from alice's bucket, not granted", bob, func(in *s3.UploadPartCopyInput) {
			in.Bucket, in.UploadId = aws.String("bobs"), bobUpload.UploadId
		}, 403, "AccessDenied"},
	}
	for _, tt := range cases {
		in := &s3.UploadPartCopyInput{Bucket: aws.String("dst"), Key: aws.String("m"), UploadId: cu.UploadId, PartNumber: aws.Int32(1), CopySource: aws.String("src/obj")}
		if tt.edit != nil {
			tt.edit(in)
		}
		_, err := tt.client.UploadPartCopy(ctx, in)
		if httpStatus(err) != tt.status || apiCode(err) != tt.code {
			t.Errorf("%s: %v, want %d %s", tt.name, err, tt.status, tt.code)
		}
	}
	// S3's messages for the two range errors.
	for rng, msg := range map[string]string{
		fmt.Sprintf("bytes=10-%d", len(body)): fmt.Sprintf("Range specified is not valid for source object of size: %d", len(body)),
		"bytes=10-":                           "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy",
	} {
		status, serr := do(t, e.signed(t, "PUT", "/dst/m?partNumber=1&uploadId="+*cu.UploadId, nil, "",
			map[string]string{"X-Amz-Copy-Source": "src/obj", "X-Amz-Copy-Source-Range": rng}))
		if status != 400 || serr.Code != "InvalidArgument" || serr.Message != msg {
			t.Errorf("range %s: %d %+v, want 400 InvalidArgument %q", rng, status, serr, msg)
		}
	}
	lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("dst"), Key: aws.String("m"), UploadId: cu.UploadId})
	if err != nil || len(lp.Parts) != 1 || *lp.Parts[0].ETag != *kept.ETag || *lp.Parts[0].Size != 4 {
		t.Fatalf("the upload's parts after the refusals = %+v, %v", lp.Parts, err)
	}
	lb, err := bob.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("bobs"), Key: aws.String("m"), UploadId: bobUpload.UploadId})
	if err != nil || len(lb.Parts) != 0 {
		t.Fatalf("bob's upload after the refusals = %+v, %v", lb.Parts, err)
	}
	for _, key := range []string{"m", "other"} {
		if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("dst"), Key: aws.String(key)}); httpStatus(err) != http.StatusNotFound {
			t.Errorf("dst/%s exists after the refusals: %v", key, err)
		}
	}
	if got, etag := mustGet(t, c, "src", "obj"); !bytes.Equal(got, body) || etag != srcETag {
		t.Errorf("the source changed")
	}

	// The conditions that hold let the copy through, and a copy replaces
	// the part of its number.
	out, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("dst"), Key: aws.String("m"), UploadId: cu.UploadId, PartNumber: aws.Int32(1),
		CopySource: aws.String("src/obj"), CopySourceIfMatch: aws.String(srcETag), CopySourceIfModifiedSince: &past, CopySourceRange: aws.String("bytes=0-0")})
	if err != nil || *out.CopyPartResult.ETag != `"`+md5Hex(body[:1])+`"` {
		t.Fatalf("a copy whose conditions hold: %+v, %v", out, err)
	}
	lp, err = c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("dst"), Key: aws.String("m"), UploadId: cu.UploadId})
	if err != nil || len(lp.Parts) != 1 || *lp.Parts[0].Size != 1 {
		t.Fatalf("the replaced part = %+v, %v", lp.Parts, err)
	}
}
