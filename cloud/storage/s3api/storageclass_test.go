package s3api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestStorageClass: every object is kept in STANDARD, so a write asking
// for STANDARD succeeds and one asking for any other class, S3's or not,
// is InvalidStorageClass; a refused write stores nothing and starts no
// upload.
func TestStorageClass(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "classes")
	mustPut(t, c, "classes", "src", []byte("source"))
	put := func(key string, class types.StorageClass) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("classes"), Key: aws.String(key), Body: strings.NewReader("x"), StorageClass: class})
		return err
	}
	copyTo := func(key string, class types.StorageClass) error {
		_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("classes"), Key: aws.String(key), CopySource: aws.String("classes/src"), StorageClass: class})
		return err
	}
	create := func(key string, class types.StorageClass) error {
		_, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("classes"), Key: aws.String(key), StorageClass: class})
		return err
	}
	for _, tc := range []struct {
		op    string
		call  func(string, types.StorageClass) error
		class types.StorageClass
		want  string
	}{
		{"PutObject", put, "", ""},
		{"PutObject", put, types.StorageClassStandard, ""},
		{"PutObject", put, types.StorageClassStandardIa, "InvalidStorageClass"},
		{"PutObject", put, types.StorageClassReducedRedundancy, "InvalidStorageClass"},
		{"PutObject", put, "BOGUS", "InvalidStorageClass"},
		{"CopyObject", copyTo, types.StorageClassStandard, ""},
		{"CopyObject", copyTo, types.StorageClassGlacier, "InvalidStorageClass"},
		{"CopyObject", copyTo, "standard", "InvalidStorageClass"},
		{"CreateMultipartUpload", create, types.StorageClassStandard, ""},
		{"CreateMultipartUpload", create, types.StorageClassOnezoneIa, "InvalidStorageClass"},
		{"CreateMultipartUpload", create, "BOGUS", "InvalidStorageClass"},
	} {
		key := strings.ToLower(tc.op) + "-" + string(tc.class)
		if err := tc.call(key, tc.class); apiCode(err) != tc.want {
			t.Errorf("%s with storage class %q: %v, want %q", tc.op, tc.class, err, tc.want)
			continue
		}
		if tc.want == "" {
			continue
		}
		if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("classes"), Key: aws.String(key)}); err == nil {
			t.Errorf("%s with storage class %q was refused but stored %s", tc.op, tc.class, key)
		}
	}
	ups, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("classes")})
	if err != nil || len(ups.Uploads) != 1 {
		t.Errorf("ListMultipartUploads = %+v, %v; want only the STANDARD upload", ups, err)
	}
}

// TestPostObjectStorageClass: a form's x-amz-storage-class field is held
// to STANDARD as the header is.
func TestPostObjectStorageClass(t *testing.T) {
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "classforms")
	now := time.Now()
	for _, tt := range []struct {
		class  string
		status int
	}{{"STANDARD", 204}, {"GLACIER", 400}, {"BOGUS", 400}} {
		key := "k-" + tt.class
		policy := policyDoc(now.Add(time.Hour), append(v4Conditions(e.id, "us-east-1", now), map[string]string{"key": key}, map[string]string{"x-amz-storage-class": tt.class})...)
		body, ct := formBody(append([]field{{"key", key}, {"x-amz-storage-class", tt.class}}, signV4Form(e.id, e.secret, "us-east-1", now, policy)...), "f", []byte("x"))
		resp := e.postForm(t, "classforms", body, ct)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("x-amz-storage-class %s: got %d, want %d", tt.class, resp.StatusCode, tt.status)
		}
	}
}
