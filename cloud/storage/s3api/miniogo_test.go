package s3api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/sse"
)

func (e *env) minio(t *testing.T, lookup minio.BucketLookupType) *minio.Client {
	t.Helper()
	endpoint := e.addr()
	if lookup == minio.BucketLookupDNS {
		endpoint = "localhost:" + endpoint[strings.LastIndex(endpoint, ":")+1:]
	}
	c, err := minio.New(endpoint, &minio.Options{
		Creds:           credentials.NewStaticV4(e.id, e.secret, ""),
		Secure:          e.scheme() == "https",
		Transport:       e.loopbackClient().Transport,
		BucketLookup:    lookup,
		TrailingHeaders: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMinioGo(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.minio(t, minio.BucketLookupPath)
	if err := c.MakeBucket(ctx, "docs", minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("MakeBucket: %v", err)
	}
	if ok, err := c.BucketExists(ctx, "docs"); err != nil || !ok {
		t.Fatalf("BucketExists = %v, %v", ok, err)
	}
	small := []byte("minio-go was here")
	large := randomBytes(1<<20+7, 4)
	uploads := []struct {
		key  string
		body []byte
		opts minio.PutObjectOptions
	}{
		{"a.txt", small, minio.PutObjectOptions{ContentType: "text/plain", UserMetadata: map[string]string{"color": "blue"}}},
		{"dir/b.bin", large, minio.PutObjectOptions{}},
		{"dir/c.bin", large, minio.PutObjectOptions{DisableContentSha256: true}},
		{"dir/sub/d.bin", large, minio.PutObjectOptions{Checksum: minio.ChecksumCRC32C}},
		{"e.bin", large, minio.PutObjectOptions{AutoChecksum: minio.ChecksumCRC64NVME}},
	}
	for _, u := range uploads {
		if _, err := c.PutObject(ctx, "docs", u.key, bytes.NewReader(u.body), int64(len(u.body)), u.opts); err != nil {
			t.Fatalf("PutObject %s: %v", u.key, err)
		}
	}
	// Unknown size: minio-go streams it in parts.
	if _, err := c.PutObject(ctx, "docs", "stream.bin", io.LimitReader(bytes.NewReader(large), int64(len(large))), -1, minio.PutObjectOptions{PartSize: 5 << 20}); err != nil {
		t.Fatalf("PutObject of unknown size: %v", err)
	}
	// Multipart: 11 MiB in 5 MiB parts.
	big := randomBytes(11<<20, 5)
	if _, err := c.PutObject(ctx, "docs", "big.bin", bytes.NewReader(big), int64(len(big)), minio.PutObjectOptions{PartSize: 5 << 20}); err != nil {
		t.Fatalf("multipart PutObject: %v", err)
	}
	read := func(key string, opts minio.GetObjectOptions) []byte {
		t.Helper()
		o, err := c.GetObject(ctx, "docs", key, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		data, err := io.ReadAll(o)
		if err != nil {
			t.Fatalf("GetObject %s: %v", key, err)
		}
		return data
	}
	for key, want := range map[string][]byte{"a.txt": small, "dir/b.bin": large, "dir/c.bin": large, "dir/sub/d.bin": large, "e.bin": large, "stream.bin": large, "big.bin": big} {
		if got := read(key, minio.GetObjectOptions{}); !bytes.Equal(got, want) {
			t.Errorf("%s read back %d bytes, want %d", key, len(got), len(want))
		}
	}
	var ro minio.GetObjectOptions
	ro.SetRange(100, 199)
	if got := read("big.bin", ro); !bytes.Equal(got, big[100:200]) {
		t.Errorf("range read %d bytes", len(got))
	}
	st, err := c.StatObject(ctx, "docs", "a.txt", minio.StatObjectOptions{})
	if err != nil || st.ContentType != "text/plain" || st.UserMetadata["Color"] != "blue" {
		t.Fatalf("StatObject = %+v, %v", st, err)
	}

	// Listing with a delimiter (not recursive), and recursive.
	var top, all []string
	for o := range c.ListObjects(ctx, "docs", minio.ListObjectsOptions{}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		top = append(top, o.Key)
	}
	slices.Sort(top) // minio-go yields the objects, then the common prefixes
	if !slices.Equal(top, []string{"a.txt", "big.bin", "dir/", "e.bin", "stream.bin"}) {
		t.Errorf("top level = %v", top)
	}
	for o := range c.ListObjects(ctx, "docs", minio.ListObjectsOptions{Prefix: "dir/", Recursive: true, MaxKeys: 2}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		all = append(all, o.Key)
	}
	if !slices.Equal(all, []string{"dir/b.bin", "dir/c.bin", "dir/sub/d.bin"}) {
		t.Errorf("recursive dir/ = %v", all)
	}

	// Copy and delete.
	if _, err := c.CopyObject(ctx, minio.CopyDestOptions{Bucket: "docs", Object: "copy.txt"}, minio.CopySrcOptions{Bucket: "docs", Object: "a.txt"}); err != nil {
		t.Fatalf("CopyObject: %v", err)
	}
	if got := read("copy.txt", minio.GetObjectOptions{}); !bytes.Equal(got, small) {
		t.Errorf("copy holds %q", got)
	}
	if err := c.RemoveObject(ctx, "docs", "copy.txt", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	objs := make(chan minio.ObjectInfo, 3)
	for _, k := range []string{"dir/b.bin", "dir/c.bin", "dir/sub/d.bin"} {
		objs <- minio.ObjectInfo{Key: k}
	}
	close(objs)
	for r := range c.RemoveObjects(ctx, "docs", objs, minio.RemoveObjectsOptions{}) {
		t.Errorf("RemoveObjects: %v", r.Err)
	}
	if _, err := c.StatObject(ctx, "docs", "dir/b.bin", minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
		t.Errorf("removed object: %v", err)
	}

	// Presigned GET and PUT.
	putURL, err := c.PresignedPutObject(ctx, "docs", "shared.txt", 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, putURL.String(), strings.NewReader("via presigned PUT"))
	resp, err := e.loopbackClient().Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("presigned PUT: %v, %v", resp, err)
	}
	resp.Body.Close()
	getURL, err := c.PresignedGetObject(ctx, "docs", "shared.txt", 5*time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = e.loopbackClient().Get(getURL.String())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "via presigned PUT" {
		t.Fatalf("presigned GET: %d %q", resp.StatusCode, body)
	}

	modes := e.payloadModes()
	for _, want := range []string{"STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", "UNSIGNED-PAYLOAD", "sha256"} {
		if !slices.Contains(modes, want) {
			t.Errorf("minio-go never sent %s; modes seen %v", want, modes)
		}
	}
}

func TestMinioGoVirtualHost(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.minio(t, minio.BucketLookupDNS)
	if err := c.MakeBucket(ctx, "vhost-bucket", minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("MakeBucket: %v", err)
	}
	if _, err := c.PutObject(ctx, "vhost-bucket", "k", strings.NewReader("v"), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := c.GetObject(ctx, "vhost-bucket", "k", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(o)
	o.Close()
	if string(data) != "v" {
		t.Fatalf("got %q", data)
	}
}

// TestMinioGoSignatureV2Subresources: minio-go's Version 2 signer (mc
// --api S3v2) signs ?encryption in the resource and leaves ?object-lock
// out, unlike botocore: bucket encryption and the object-lock probe mc
// makes before every copy are answered, not refused SignatureDoesNotMatch.
func TestMinioGoSignatureV2Subresources(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c, err := minio.New(e.addr(), &minio.Options{
		Creds:     credentials.NewStaticV2(e.id, e.secret, ""),
		Secure:    e.scheme() == "https",
		Transport: e.loopbackClient().Transport,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MakeBucket(ctx, "v2sub", minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("MakeBucket: %v", err)
	}
	if err := c.SetBucketEncryption(ctx, "v2sub", sse.NewConfigurationSSES3()); err != nil {
		t.Fatalf("SetBucketEncryption: %v", err)
	}
	cfg, err := c.GetBucketEncryption(ctx, "v2sub")
	if err != nil || len(cfg.Rules) != 1 || cfg.Rules[0].Apply.SSEAlgorithm != "AES256" {
		t.Fatalf("GetBucketEncryption = %+v, %v; want one AES256 rule", cfg, err)
	}
	if err := c.RemoveBucketEncryption(ctx, "v2sub"); err != nil {
		t.Fatalf("RemoveBucketEncryption: %v", err)
	}
	_, _, _, _, err = c.GetObjectLockConfig(ctx, "v2sub")
	if code := minio.ToErrorResponse(err).Code; code != "ObjectLockConfigurationNotFoundError" {
		t.Fatalf("GetObjectLockConfig: %v (code %q), want ObjectLockConfigurationNotFoundError", err, code)
	}
}
