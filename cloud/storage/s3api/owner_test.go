package s3api_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// TestExpectedBucketOwner holds requests to x-amz-expected-bucket-owner
// (and a copy's x-amz-source-expected-bucket-owner), as the SDKs send
// them: the owner's account passes, another is 403 and changes nothing.
func TestExpectedBucketOwner(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("owned")}); err != nil {
		t.Fatal(err)
	}
	put := func(key, owner string) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("owned"), Key: aws.String(key), Body: bytes.NewReader([]byte("x")), ExpectedBucketOwner: aws.String(owner)})
		return err
	}
	if err := put("mine", "alice"); err != nil {
		t.Fatalf("PutObject expecting the owner: %v", err)
	}
	if err := put("theirs", "mallory"); apiCode(err) != "AccessDenied" {
		t.Errorf("PutObject expecting another owner: %v, want AccessDenied", err)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("owned"), Key: aws.String("theirs")}); httpStatus(err) != http.StatusNotFound {
		t.Errorf("the refused PUT wrote its object: HEAD %v", err)
	}
	for name, call := range map[string]func(owner string) error{
		"HeadBucket": func(o string) error {
			_, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("owned"), ExpectedBucketOwner: aws.String(o)})
			return err
		},
		"GetObject": func(o string) error {
			out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("owned"), Key: aws.String("mine"), ExpectedBucketOwner: aws.String(o)})
			if err == nil {
				out.Body.Close()
			}
			return err
		},
		"ListObjectsV2": func(o string) error {
			_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("owned"), ExpectedBucketOwner: aws.String(o)})
			return err
		},
		"CopyObject source": func(o string) error {
			_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("owned"), Key: aws.String("copy"), CopySource: aws.String("owned/mine"), ExpectedSourceBucketOwner: aws.String(o)})
			return err
		},
		"UploadPartCopy source": func(o string) error {
			cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("owned"), Key: aws.String("parts")})
			if err != nil {
				return err
			}
			_, err = c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("owned"), Key: aws.String("parts"), UploadId: cu.UploadId, PartNumber: aws.Int32(1),
				CopySource: aws.String("owned/mine"), ExpectedSourceBucketOwner: aws.String(o)})
			return err
		},
	} {
		if err := call("alice"); err != nil {
			t.Errorf("%s expecting the owner: %v", name, err)
		}
		if err := call("mallory"); httpStatus(err) != http.StatusForbidden || name != "HeadBucket" && apiCode(err) != "AccessDenied" {
			t.Errorf("%s expecting another owner: %v, want 403 AccessDenied", name, err)
		}
	}
}

// TestWrongRegionNamesTheRegion checks that a request signed for another
// region is told the endpoint's in the error's Region element, which
// boto3 reads to sign again for it.
func TestWrongRegionNamesTheRegion(t *testing.T) {
	e := newEnv(t)
	r, err := http.NewRequest(http.MethodGet, e.srv.URL+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	sigv4.Sign(r, e.id, e.secret, "eu-west-1", sigv4.UnsignedPayload, time.Now())
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var body struct{ Code, Region string }
	if err := xml.Unmarshal(data, &body); err != nil || resp.StatusCode != http.StatusBadRequest || body.Code != "AuthorizationHeaderMalformed" || body.Region != "us-east-1" {
		t.Errorf("signed for eu-west-1: %d %s, want 400 AuthorizationHeaderMalformed with Region us-east-1", resp.StatusCode, data)
	}
	// A HEAD's answer has no body: the header says it.
	r, _ = http.NewRequest(http.MethodHead, e.srv.URL+"/", nil)
	sigv4.Sign(r, e.id, e.secret, "eu-west-1", sigv4.UnsignedPayload, time.Now())
	resp, err = http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("X-Amz-Bucket-Region") != "us-east-1" {
		t.Errorf("HEAD signed for eu-west-1: %d, x-amz-bucket-region %q; want 400 and us-east-1", resp.StatusCode, resp.Header.Get("X-Amz-Bucket-Region"))
	}
}
