package s3api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// TestPresignedURLCannotBeWidened: headers added to a presigned URL's
// request (a copy source, metadata) are refused, not acted on.
func TestPresignedURLCannotBeWidened(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	for _, b := range []string{"share", "private"} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("private"), Key: aws.String("secret.txt"), Body: strings.NewReader("TOP SECRET")}); err != nil {
		t.Fatal(err)
	}
	put, err := s3.NewPresignClient(c).PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("share"), Key: aws.String("up.txt")})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []map[string]string{
		{"X-Amz-Copy-Source": "private/secret.txt"},
		{"X-Amz-Meta-Owner": "mallory"},
	} {
		r, _ := http.NewRequest("PUT", put.URL, nil)
		for k, v := range h {
			r.Header.Set(k, v)
		}
		if status, got := do(t, r); status != 403 || got.Code != "AccessDenied" {
			t.Errorf("presigned PUT with %v: %d %+v", h, status, got)
		}
	}
	if _, err := e.st.Object("alice", "share", "up.txt"); err != cloudstore.ErrNotFound {
		t.Fatalf("a widened presigned URL stored up.txt: %v", err)
	}
}

// TestSmallBodiesAreVerifiedWhole: an XML body longer than its limit is
// refused, and one that is not the body signed is refused, before
// anything is deleted.
func TestSmallBodiesAreVerifiedWhole(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("del")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("del"), Key: aws.String("victim"), Body: strings.NewReader("v")}); err != nil {
		t.Fatal(err)
	}
	body := "<Delete><Object><Key>victim</Key></Object></Delete>"
	signedFor := sha("<Delete><Object><Key>other</Key></Object></Delete>")
	for _, tc := range []struct {
		name, body, payload, code string
	}{
		{"swapped body, padded past the limit", body + strings.Repeat(" ", 3<<20), signedFor, "MaxMessageLengthExceeded"},
		{"swapped body", body, signedFor, "XAmzContentSHA256Mismatch"},
	} {
		r := e.signed(t, "POST", "/del?delete", strings.NewReader(tc.body), tc.payload, nil)
		if status, got := do(t, r); status != 400 || got.Code != tc.code {
			t.Errorf("%s: %d %+v", tc.name, status, got)
		}
	}
	if _, err := e.st.Object("alice", "del", "victim"); err != nil {
		t.Fatalf("victim after refused deletes: %v", err)
	}
}

// TestMetricsCountOnlyTheOwner: another account's requests to a bucket,
// refused, do not show in its metrics; bytes are those really read.
func TestMetricsCountOnlyTheOwner(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.sdk(e.id, e.secret).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("photos")}); err != nil {
		t.Fatal(err)
	}
	bobID, bobSecret := e.key(t, "bob", cloudstore.PermReadWrite, "*")
	for range 3 {
		r, _ := http.NewRequest("PUT", e.srv.URL+"/photos/x", strings.NewReader("tiny"))
		sigv4.Sign(r, bobID, bobSecret, "us-east-1", sigv4.UnsignedPayload, time.Now())
		if status, _ := do(t, r); status != 403 {
			t.Fatalf("bob's PUT: %d", status)
		}
	}
	r := e.signed(t, "PUT", "/photos/mine", strings.NewReader("12345"), "", nil)
	if status, _ := do(t, r); status != 200 {
		t.Fatalf("alice's PUT: %d", status)
	}
	hours, err := e.st.Metrics("alice", "photos", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var puts, in int64
	for _, h := range hours {
		puts += h.Requests.Put
		in += h.BytesIn
	}
	if puts != 2 || in != 5 {
		t.Fatalf("metrics count %d PUTs, %d bytes in; want alice's 2 (CreateBucket, PutObject) and 5", puts, in)
	}
}

// TestURLEncodedListingPages: ListObjects v1 with encoding-type=url and a
// delimiter pages to its end through the SDK, which sends NextMarker back
// as it came: '/' must stay as is. (A key holding '~' loops there against
// S3 too, since S3 encodes '~' and does not decode markers.)
func TestURLEncodedListingPages(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("enc")}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a/1", "a/2", "b c/3", "f*g"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("enc"), Key: aws.String(k), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	in := &s3.ListObjectsInput{Bucket: aws.String("enc"), Delimiter: aws.String("/"), MaxKeys: aws.Int32(1), EncodingType: types.EncodingTypeUrl}
	for page := 0; ; page++ {
		if page > 10 {
			t.Fatalf("the listing does not end: %v", seen)
		}
		out, err := c.ListObjects(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range out.CommonPrefixes {
			seen = append(seen, *p.Prefix)
		}
		for _, o := range out.Contents {
			seen = append(seen, *o.Key)
		}
		if !*out.IsTruncated {
			break
		}
		in.Marker = out.NextMarker
	}
	if strings.Join(seen, ",") != "a/,b%20c/,f*g" { // a space is %20
		t.Fatalf("pages = %v", seen)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("enc"), Key: aws.String("d~e"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("enc"), Prefix: aws.String("d"), EncodingType: types.EncodingTypeUrl})
	if err != nil || len(out.Contents) != 1 || *out.Contents[0].Key != "d%7Ee" {
		t.Fatalf("encoded d~e = %+v, %v", out, err)
	}
}

// TestUnknownWriteSubresources: a write naming a subresource this endpoint
// does not know is NotImplemented, not a plain write.
func TestUnknownWriteSubresources(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("keep")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ method, path string }{
		{"DELETE", "/keep?metadataTable"},
		{"DELETE", "/keep?someFutureThing"},
		{"PUT", "/keep/k?renameObject"},
		{"POST", "/keep/k?select&select-type=2"},
	} {
		if status, got := do(t, e.signed(t, tc.method, tc.path, nil, "", nil)); status != 501 || got.Code != "NotImplemented" {
			t.Errorf("%s %s: %d %+v", tc.method, tc.path, status, got)
		}
	}
	if _, err := e.st.Bucket("alice", "keep"); err != nil {
		t.Fatalf("bucket after refused DELETE: %v", err)
	}
}

// TestDeletedS3KeyFailsAtOnce: S3 keys are cached; deleting one still
// stops it on the very next request.
func TestDeletedS3KeyFailsAtOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.ListBuckets(ctx, &s3.ListBucketsInput{}); err != nil {
		t.Fatal(err)
	}
	if err := e.st.DeleteS3Key("alice", e.id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListBuckets(ctx, &s3.ListBucketsInput{}); apiCode(err) != "InvalidAccessKeyId" {
		t.Fatalf("a deleted key: %v", err)
	}
}
