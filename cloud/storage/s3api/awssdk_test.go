package s3api_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// sdk is an AWS SDK for Go v2 client of the endpoint, path style unless
// edited.
func (e *env) sdk(id, secret string, edit ...func(*s3.Options)) *s3.Client {
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(id, secret, ""),
		HTTPClient:  e.loopbackClient(),
	}
	return s3.NewFromConfig(cfg, append([]func(*s3.Options){func(o *s3.Options) {
		o.BaseEndpoint = aws.String(e.scheme() + "://" + e.addr())
		o.UsePathStyle = true
	}}, edit...)...)
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// apiCode is the S3 error code of an SDK error.
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func httpStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

func TestAWSSDKObjects(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("photos")}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("photos")}); err != nil {
		t.Fatalf("HeadBucket: %v", err)
	}
	loc, err := c.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: aws.String("photos")})
	if err != nil || loc.LocationConstraint != "" {
		t.Fatalf("GetBucketLocation = %v, %v", loc, err)
	}

	// Small and large bodies, with the SDK's default checksums.
	small := []byte("hello, lattice")
	large := randomBytes(300<<10, 1)
	for key, body := range map[string][]byte{"small.txt": small, "dir/large.bin": large, "dir/sub/a": small, "b": small} {
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("photos"), Key: aws.String(key), Body: bytes.NewReader(body),
			ContentType: aws.String("text/plain"), Metadata: map[string]string{"owner": "alice"}, CacheControl: aws.String("max-age=60")})
		if err != nil {
			t.Fatalf("PutObject %s: %v", key, err)
		}
		sum := md5.Sum(body)
		if *out.ETag != `"`+hex.EncodeToString(sum[:])+`"` {
			t.Fatalf("PutObject %s ETag = %s", key, *out.ETag)
		}
	}
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("photos"), Key: aws.String("dir/large.bin")})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if !bytes.Equal(data, large) || *got.ContentType != "text/plain" || got.Metadata["owner"] != "alice" || *got.CacheControl != "max-age=60" {
		t.Fatalf("GetObject: %d bytes, type %q, meta %v", len(data), *got.ContentType, got.Metadata)
	}

	// Ranges.
	for _, tc := range []struct {
		rng        string
		first, end int
	}{{"bytes=0-9", 0, 10}, {"bytes=1000-", 1000, len(large)}, {"bytes=-100", len(large) - 100, len(large)}, {"bytes=5-999999999", 5, len(large)}} {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("photos"), Key: aws.String("dir/large.bin"), Range: aws.String(tc.rng)})
		if err != nil {
			t.Fatalf("range %s: %v", tc.rng, err)
		}
		part, _ := io.ReadAll(out.Body)
		out.Body.Close()
		if !bytes.Equal(part, large[tc.first:tc.end]) || *out.ContentRange != fmt.Sprintf("bytes %d-%d/%d", tc.first, tc.end-1, len(large)) {
			t.Fatalf("range %s: %d bytes, Content-Range %s", tc.rng, len(part), *out.ContentRange)
		}
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("photos"), Key: aws.String("b"), Range: aws.String("bytes=100-")}); apiCode(err) != "InvalidRange" {
		t.Fatalf("range beyond the end: %v", err)
	}

	// Conditionals.
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("photos"), Key: aws.String("small.txt")})
	if err != nil || *head.ContentLength != int64(len(small)) {
		t.Fatalf("HeadObject = %v, %v", head, err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("photos"), Key: aws.String("small.txt"), IfNoneMatch: head.ETag}); httpStatus(err) != http.StatusNotModified {
		t.Fatalf("If-None-Match with the ETag: %v", err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("photos"), Key: aws.String("small.txt"), IfMatch: aws.String(`"0000"`)}); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("If-Match with another ETag: %v", err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("photos"), Key: aws.String("small.txt"), IfModifiedSince: aws.Time(time.Now().Add(time.Hour))}); httpStatus(err) != http.StatusNotModified {
		t.Fatalf("If-Modified-Since the future: %v", err)
	}

	// Listing with a delimiter, both versions, and paging.
	v2, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("photos"), Delimiter: aws.String("/")})
	if err != nil {
		t.Fatal(err)
	}
	if keys, prefixes := objKeys(v2.Contents), prefixesOf(v2.CommonPrefixes); !slices.Equal(keys, []string{"b", "small.txt"}) || !slices.Equal(prefixes, []string{"dir/"}) {
		t.Fatalf("ListObjectsV2 / = %v %v", keys, prefixes)
	}
	var all []string
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String("photos"), MaxKeys: aws.Int32(1)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, objKeys(page.Contents)...)
	}
	if !slices.Equal(all, []string{"b", "dir/large.bin", "dir/sub/a", "small.txt"}) {
		t.Fatalf("paged listing = %v", all)
	}
	v1, err := c.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String("photos"), Prefix: aws.String("dir/"), Delimiter: aws.String("/")})
	if err != nil {
		t.Fatal(err)
	}
	if keys, prefixes := objKeys(v1.Contents), prefixesOf(v1.CommonPrefixes); !slices.Equal(keys, []string{"dir/large.bin"}) || !slices.Equal(prefixes, []string{"dir/sub/"}) {
		t.Fatalf("ListObjects dir/ = %v %v", keys, prefixes)
	}

	// Copy, within and across buckets, then delete.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("photos"), Key: aws.String("copy.bin"), CopySource: aws.String("photos/dir/large.bin")}); err != nil {
		t.Fatalf("CopyObject: %v", err)
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("backup")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("backup"), Key: aws.String("x y+z.txt"), CopySource: aws.String("photos/small.txt"),
		MetadataDirective: types.MetadataDirectiveReplace, ContentType: aws.String("application/x-new")}); err != nil {
		t.Fatalf("CopyObject across buckets: %v", err)
	}
	cp, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("backup"), Key: aws.String("x y+z.txt")})
	if err != nil {
		t.Fatal(err)
	}
	data, _ = io.ReadAll(cp.Body)
	cp.Body.Close()
	if !bytes.Equal(data, small) || *cp.ContentType != "application/x-new" {
		t.Fatalf("copied object: %q, %s", data, *cp.ContentType)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("photos"), Key: aws.String("copy.bin")}); err != nil {
		t.Fatal(err)
	}
	dels, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("photos"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("b")}, {Key: aws.String("dir/sub/a")}, {Key: aws.String("never-existed")}}}})
	if err != nil || len(dels.Deleted) != 3 || len(dels.Errors) != 0 {
		t.Fatalf("DeleteObjects = %+v, %v", dels, err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("photos"), Key: aws.String("b")}); httpStatus(err) != http.StatusNotFound {
		t.Fatalf("deleted object: %v", err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("photos"), Key: aws.String("b")}); apiCode(err) != "NoSuchKey" {
		t.Fatalf("GetObject of a deleted key: %v", err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("photos")}); apiCode(err) != "BucketNotEmpty" {
		t.Fatalf("DeleteBucket of a full bucket: %v", err)
	}
	bl, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(bl.Buckets) != 2 || *bl.Buckets[0].Name != "backup" {
		t.Fatalf("ListBuckets = %+v, %v", bl, err)
	}
}

func objKeys(objs []types.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, *o.Key)
	}
	return out
}

func prefixesOf(cps []types.CommonPrefix) []string {
	var out []string
	for _, p := range cps {
		out = append(out, *p.Prefix)
	}
	return out
}

// TestAWSSDKPayloadModes uploads with each payload mode the SDK offers:
// checksums computed when supported (its default) or only when required,
// and UNSIGNED-PAYLOAD.
func TestAWSSDKPayloadModes(t *testing.T) {
	t.Run("http", func(t *testing.T) {
		e := newEnv(t)
		payloadModes(t, e)
		if got := e.payloadModes(); !slices.Equal(got, []string{"UNSIGNED-PAYLOAD", "sha256"}) {
			t.Errorf("payload modes over HTTP = %v", got)
		}
	})
	t.Run("https", func(t *testing.T) {
		e := newTLSEnv(t)
		payloadModes(t, e)
		if got := e.payloadModes(); !slices.Contains(got, "STREAMING-UNSIGNED-PAYLOAD-TRAILER") {
			t.Errorf("payload modes over HTTPS = %v, want aws-chunked with a trailer among them", got)
		}
	})
}

func payloadModes(t *testing.T, e *env) {
	ctx := context.Background()
	modes := map[string]func(*s3.Options){
		"default":       func(*s3.Options) {},
		"when required": func(o *s3.Options) { o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired },
		"unsigned payload": func(o *s3.Options) {
			o.APIOptions = append(o.APIOptions, v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)
		},
		"sha256 checksum": func(o *s3.Options) {},
	}
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("modes")}); err != nil {
		t.Fatal(err)
	}
	body := randomBytes(200<<10, 2)
	for name, edit := range modes {
		t.Run(name, func(t *testing.T) {
			c := e.sdk(e.id, e.secret, edit)
			in := &s3.PutObjectInput{Bucket: aws.String("modes"), Key: aws.String(name), Body: bytes.NewReader(body)}
			if name == "sha256 checksum" {
				in.ChecksumAlgorithm = types.ChecksumAlgorithmSha256
			}
			if _, err := c.PutObject(ctx, in); err != nil {
				t.Fatalf("PutObject: %v", err)
			}
			out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("modes"), Key: aws.String(name)})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(out.Body)
			out.Body.Close()
			if !bytes.Equal(got, body) {
				t.Fatalf("read back %d bytes", len(got))
			}
		})
	}
	t.Logf("payload modes the SDK used: %v", e.payloadModes())
}

func TestAWSSDKMultipart(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("big")}); err != nil {
		t.Fatal(err)
	}
	body := randomBytes(12<<20+12345, 3)
	up := manager.NewUploader(c, func(u *manager.Uploader) { u.PartSize = 5 << 20; u.Concurrency = 2 })
	if _, err := up.Upload(ctx, &s3.PutObjectInput{Bucket: aws.String("big"), Key: aws.String("video.mp4"), Body: bytes.NewReader(body), ContentType: aws.String("video/mp4")}); err != nil {
		t.Fatalf("multipart upload: %v", err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("big"), Key: aws.String("video.mp4")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if !bytes.Equal(got, body) || !strings.HasSuffix(*out.ETag, `-3"`) || *out.ContentType != "video/mp4" {
		t.Fatalf("multipart object: %d bytes, ETag %s, type %s", len(got), *out.ETag, *out.ContentType)
	}

	// By hand: list uploads and parts, refuse bad completions, abort.
	cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("big"), Key: aws.String("manual")})
	if err != nil {
		t.Fatal(err)
	}
	part := func(n int32, data []byte) string {
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("big"), Key: aws.String("manual"), UploadId: cu.UploadId, PartNumber: aws.Int32(n), Body: bytes.NewReader(data)})
		if err != nil {
			t.Fatalf("UploadPart %d: %v", n, err)
		}
		return *out.ETag
	}
	e1, e2 := part(1, []byte("too small")), part(2, []byte("last"))
	lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("big"), Key: aws.String("manual"), UploadId: cu.UploadId})
	if err != nil || len(lp.Parts) != 2 || *lp.Parts[1].Size != 4 {
		t.Fatalf("ListParts = %+v, %v", lp, err)
	}
	lu, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("big")})
	if err != nil || len(lu.Uploads) != 1 || *lu.Uploads[0].UploadId != *cu.UploadId {
		t.Fatalf("ListMultipartUploads = %+v, %v", lu, err)
	}
	complete := func(parts ...types.CompletedPart) error {
		_, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("big"), Key: aws.String("manual"), UploadId: cu.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
		return err
	}
	for _, tc := range []struct {
		name  string
		parts []types.CompletedPart
		code  string
	}{
		{"too small", []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: &e1}, {PartNumber: aws.Int32(2), ETag: &e2}}, "EntityTooSmall"},
		{"wrong etag", []types.CompletedPart{{PartNumber: aws.Int32(2), ETag: &e1}}, "InvalidPart"},
		{"missing part", []types.CompletedPart{{PartNumber: aws.Int32(3), ETag: &e1}}, "InvalidPart"},
		{"out of order", []types.CompletedPart{{PartNumber: aws.Int32(2), ETag: &e2}, {PartNumber: aws.Int32(1), ETag: &e1}}, "InvalidPartOrder"},
	} {
		if err := complete(tc.parts...); apiCode(err) != tc.code {
			t.Errorf("complete %s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("big"), Key: aws.String("manual")}); httpStatus(err) != http.StatusNotFound {
		t.Fatalf("a refused completion made an object: %v", err)
	}
	if _, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("big"), Key: aws.String("manual"), UploadId: cu.UploadId}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("big"), Key: aws.String("manual"), UploadId: cu.UploadId}); apiCode(err) != "NoSuchUpload" {
		t.Fatalf("ListParts after abort: %v", err)
	}
	// A single-part completion of the last part alone works.
	cu2, _ := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("big"), Key: aws.String("one")})
	out2, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("big"), Key: aws.String("one"), UploadId: cu2.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("only part")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("big"), Key: aws.String("one"), UploadId: cu2.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: out2.ETag}}}}); err != nil {
		t.Fatalf("single-part completion: %v", err)
	}
	lu, _ = c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("big")})
	if len(lu.Uploads) != 0 {
		t.Fatalf("uploads left: %+v", lu.Uploads)
	}
}

func TestAWSSDKPresigned(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("share")}); err != nil {
		t.Fatal(err)
	}
	pc := s3.NewPresignClient(c)
	put, err := pc.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("share"), Key: aws.String("up.txt")}, s3.WithPresignExpires(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, put.URL, strings.NewReader("uploaded by URL"))
	for k, v := range put.SignedHeader {
		req.Header[k] = v
	}
	resp, err := e.loopbackClient().Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("presigned PUT: %v %v", resp, err)
	}
	resp.Body.Close()
	get, err := pc.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("share"), Key: aws.String("up.txt")}, s3.WithPresignExpires(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	resp, err = e.loopbackClient().Get(get.URL)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(data) != "uploaded by URL" {
		t.Fatalf("presigned GET: %d %q", resp.StatusCode, data)
	}
	// Tampering with the URL breaks it; so does another key name.
	for _, bad := range []string{strings.Replace(get.URL, "up.txt", "up.txu", 1), strings.Replace(get.URL, "X-Amz-Expires=600", "X-Amz-Expires=6000", 1)} {
		resp, err := e.loopbackClient().Get(bad)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "SignatureDoesNotMatch") {
			t.Fatalf("tampered URL %s: %d %s", bad, resp.StatusCode, body)
		}
	}
}

func TestAWSSDKVirtualHostStyle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(e.scheme() + "://localhost:" + e.addr()[strings.LastIndex(e.addr(), ":")+1:])
		o.UsePathStyle = false
	})
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("vhost")}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("vhost"), Key: aws.String("a/b.txt"), Body: strings.NewReader("virtual")}); err != nil {
		t.Fatal(err)
	}
	// Path style sees the same object.
	out, err := e.sdk(e.id, e.secret).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("vhost"), Key: aws.String("a/b.txt")})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if string(data) != "virtual" {
		t.Fatalf("got %q", data)
	}
	l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("vhost")})
	if err != nil || len(l.Contents) != 1 {
		t.Fatalf("virtual-hosted listing = %+v, %v", l, err)
	}
}

// TestAWSSDKAccess checks signatures, permissions, bucket scope and
// tenancy on every kind of request.
func TestAWSSDKAccess(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	owner := e.sdk(e.id, e.secret)
	for _, b := range []string{"mine", "other-of-mine"} {
		if _, err := owner.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := owner.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("mine"), Key: aws.String("k"), Body: strings.NewReader("v")}); err != nil {
		t.Fatal(err)
	}
	readID, readSecret := e.key(t, "alice", cloudstore.PermRead, "*")
	writeID, writeSecret := e.key(t, "alice", cloudstore.PermWrite, "*")
	scopedID, scopedSecret := e.key(t, "alice", cloudstore.PermReadWrite, "mine")
	bobID, bobSecret := e.key(t, "bob", cloudstore.PermReadWrite, "*")
	reader, writer, scoped, bob := e.sdk(readID, readSecret), e.sdk(writeID, writeSecret), e.sdk(scopedID, scopedSecret), e.sdk(bobID, bobSecret)
	put := func(c *s3.Client, bucket string) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("n"), Body: strings.NewReader("x")})
		return err
	}
	get := func(c *s3.Client, bucket string) error {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
		if err == nil {
			out.Body.Close()
		}
		return err
	}
	// Another first character: "x" itself when the secret begins with one
	// would be the right secret.
	wrong := "x" + e.secret[1:]
	if e.secret[0] == 'x' {
		wrong = "y" + e.secret[1:]
	}
	tests := []struct {
		name string
		err  error
		code string
	}{
		{"wrong secret", put(e.sdk(e.id, wrong), "mine"), "SignatureDoesNotMatch"},
		{"unknown key", put(e.sdk("LKNOSUCHKEY0000000000", e.secret), "mine"), "InvalidAccessKeyId"},
		{"read key reads", get(reader, "mine"), ""},
		{"read key writes", put(reader, "mine"), "AccessDenied"},
		{"write key writes", put(writer, "mine"), ""},
		{"write key reads", get(writer, "mine"), "AccessDenied"},
		{"scoped key in scope", get(scoped, "mine"), ""},
		{"scoped key out of scope", get(scoped, "other-of-mine"), "AccessDenied"},
		{"another account's bucket", get(bob, "mine"), "AccessDenied"},
		{"another account writes", put(bob, "mine"), "AccessDenied"},
	}
	for _, tt := range tests {
		if apiCode(tt.err) != tt.code {
			t.Errorf("%s: %v, want %q", tt.name, tt.err, tt.code)
		}
	}
	if _, err := scoped.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("mine"), Key: aws.String("c"), CopySource: aws.String("other-of-mine/x")}); apiCode(err) != "AccessDenied" {
		t.Errorf("scoped copy from out of scope: %v", err)
	}
	if _, err := bob.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("mine")}); apiCode(err) != "BucketAlreadyExists" {
		t.Errorf("bob creating alice's bucket name: %v", err)
	}
	if _, err := owner.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("mine")}); apiCode(err) != "BucketAlreadyOwnedByYou" {
		t.Errorf("re-creating one's bucket: %v", err)
	}
	if _, err := owner.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("Bad_Name")}); apiCode(err) != "InvalidBucketName" {
		t.Errorf("bad bucket name: %v", err)
	}
	if _, err := owner.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("mine"), Key: aws.String(strings.Repeat("k", 1025)), Body: strings.NewReader("x")}); apiCode(err) != "KeyTooLongError" {
		t.Errorf("over-long key: %v", err)
	}
	sl, err := scoped.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(sl.Buckets) != 1 || *sl.Buckets[0].Name != "mine" {
		t.Errorf("a scoped key's ListBuckets = %+v, %v", sl, err)
	}
	bl, err := bob.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(bl.Buckets) != 0 {
		t.Errorf("bob's ListBuckets = %+v, %v", bl, err)
	}

	// Anonymous: refused, except reading a public bucket's objects.
	anon := func() int {
		resp, err := http.Get(e.srv.URL + "/mine/k")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := anon(); got != http.StatusForbidden {
		t.Errorf("anonymous GET of a private bucket: %d", got)
	}
	if _, err := e.st.UpdateBucket("alice", "mine", time.Now(), func(b *cloudstore.Bucket) { b.Public = true }); err != nil {
		t.Fatal(err)
	}
	if got := anon(); got != http.StatusOK {
		t.Errorf("anonymous GET of a public bucket: %d", got)
	}
	resp, err := http.Get(e.srv.URL + "/mine")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous listing of a public bucket: %d", resp.StatusCode)
	}
}
