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
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// attrs renders what GetObjectAttributes answered, for comparison.
func attrs(out *s3.GetObjectAttributesOutput) string {
	s := fmt.Sprintf("etag=%s size=%d class=%s", aws.ToString(out.ETag), aws.ToInt64(out.ObjectSize), out.StorageClass)
	if p := out.ObjectParts; p != nil {
		s += fmt.Sprintf(" parts=%d marker=%s next=%s max=%d truncated=%v", aws.ToInt32(p.TotalPartsCount), aws.ToString(p.PartNumberMarker),
			aws.ToString(p.NextPartNumberMarker), aws.ToInt32(p.MaxParts), aws.ToBool(p.IsTruncated))
		for _, part := range p.Parts {
			s += fmt.Sprintf(" %d:%d", aws.ToInt32(part.PartNumber), aws.ToInt64(part.Size))
		}
	}
	return s
}

// TestGetObjectAttributes asks for attributes of objects completed from
// parts and uploaded whole with the SDK, pages through the parts, and
// checks the refusals, which change nothing.
func TestGetObjectAttributes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("attrs")}); err != nil {
		t.Fatal(err)
	}
	sizes := []int{5 << 20, 5 << 20, 99}
	body := randomBytes(sizes[0]+sizes[1]+sizes[2], 4)
	mpETag := strings.Trim(multipartObject(t, c, "attrs", "mp", body, sizes...), `"`)
	whole := []byte("whole")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("attrs"), Key: aws.String("whole"), Body: bytes.NewReader(whole)}); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(whole)
	all := []types.ObjectAttributes{types.ObjectAttributesEtag, types.ObjectAttributesChecksum, types.ObjectAttributesObjectParts,
		types.ObjectAttributesStorageClass, types.ObjectAttributesObjectSize}
	total := len(body)
	for _, tt := range []struct {
		name   string
		key    string
		attrs  []types.ObjectAttributes
		max    *int32
		marker *string
		want   string
	}{
		{"all of a multipart object", "mp", all, nil, nil,
			fmt.Sprintf("etag=%s size=%d class=STANDARD parts=3 marker=0 next=3 max=1000 truncated=false 1:%d 2:%d 3:99", mpETag, total, 5<<20, 5<<20)},
		{"first page of parts", "mp", []types.ObjectAttributes{types.ObjectAttributesObjectParts}, aws.Int32(2), nil,
			fmt.Sprintf("etag= size=0 class= parts=3 marker=0 next=2 max=2 truncated=true 1:%d 2:%d", 5<<20, 5<<20)},
		{"next page of parts", "mp", []types.ObjectAttributes{types.ObjectAttributesObjectParts}, aws.Int32(2), aws.String("2"),
			"etag= size=0 class= parts=3 marker=2 next=3 max=2 truncated=false 3:99"},
		{"past the last part", "mp", []types.ObjectAttributes{types.ObjectAttributesObjectParts}, nil, aws.String("3"),
			"etag= size=0 class= parts=3 marker=3 next=3 max=1000 truncated=false"},
		{"all of an object uploaded whole", "whole", all, nil, nil,
			fmt.Sprintf("etag=%s size=%d class=STANDARD", hex.EncodeToString(sum[:]), len(whole))},
		{"size only", "whole", []types.ObjectAttributes{types.ObjectAttributesObjectSize}, nil, nil, "etag= size=5 class="},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String("attrs"), Key: aws.String(tt.key),
				ObjectAttributes: tt.attrs, MaxParts: tt.max, PartNumberMarker: tt.marker})
			if err != nil {
				t.Fatal(err)
			}
			if got := attrs(out); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if out.LastModified == nil {
				t.Errorf("got no Last-Modified, want the object's")
			}
		})
	}

	t.Run("names joined in one header", func(t *testing.T) {
		r := e.signed(t, "GET", "/attrs/whole?attributes", nil, "", map[string]string{"X-Amz-Object-Attributes": "ETag, ObjectSize"})
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := fmt.Sprintf("<ETag>%s</ETag><ObjectSize>5</ObjectSize>", hex.EncodeToString(sum[:]))
		if resp.StatusCode != 200 || !strings.Contains(string(data), want) {
			t.Errorf("got %d %s, want 200 with %v", resp.StatusCode, data, want)
		}
	})

	for _, tt := range []struct {
		name   string
		method string
		path   string
		header map[string]string
		status int
		code   string
	}{
		{"no attributes", "GET", "/attrs/mp?attributes", nil, 400, "InvalidRequest"},
		{"empty attributes", "GET", "/attrs/mp?attributes", map[string]string{"X-Amz-Object-Attributes": " , "}, 400, "InvalidRequest"},
		{"unknown attribute", "GET", "/attrs/mp?attributes", map[string]string{"X-Amz-Object-Attributes": "ETag,Owner"}, 400, "InvalidArgument"},
		{"attribute in lower case", "GET", "/attrs/mp?attributes", map[string]string{"X-Amz-Object-Attributes": "etag"}, 400, "InvalidArgument"},
		{"negative max-parts", "GET", "/attrs/mp?attributes", map[string]string{"X-Amz-Object-Attributes": "ObjectParts", "X-Amz-Max-Parts": "-1"}, 400, "InvalidArgument"},
		{"bad part-number-marker", "GET", "/attrs/mp?attributes", map[string]string{"X-Amz-Object-Attributes": "ObjectParts", "X-Amz-Part-Number-Marker": "x"}, 400, "InvalidArgument"},
		{"missing key", "GET", "/attrs/nothing?attributes", map[string]string{"X-Amz-Object-Attributes": "ETag"}, 404, "NoSuchKey"},
		{"missing bucket", "GET", "/nobucket/mp?attributes", map[string]string{"X-Amz-Object-Attributes": "ETag"}, 404, "NoSuchBucket"},
		{"a write", "PUT", "/attrs/mp?attributes", map[string]string{"X-Amz-Object-Attributes": "ETag"}, 501, "NotImplemented"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, serr := do(t, e.signed(t, tt.method, tt.path, nil, "", tt.header))
			if status != tt.status || serr.Code != tt.code {
				t.Errorf("got %v %v, want %v %v", status, serr.Code, tt.status, tt.code)
			}
		})
	}
	// The refusals changed nothing.
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("attrs"), Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if !bytes.Equal(got, body) || aws.ToString(out.ETag) != `"`+mpETag+`"` {
		t.Errorf("got %d bytes, ETag %v, want %d bytes, ETag %v", len(got), aws.ToString(out.ETag), len(body), `"`+mpETag+`"`)
	}
}

// TestAnonymousAttributes: a public bucket's readers may read its objects
// but not GetObjectAttributes of them, which the public toggle does not
// grant; a bucket policy that allows s3:GetObjectAttributes to everyone
// does.
func TestAnonymousAttributes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("pub"), ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, c, "pub", "k", []byte("hello"))
	anon := e.anonymousSDK()
	attrs := func() (*s3.GetObjectAttributesOutput, error) {
		return anon.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: aws.String("pub"), Key: aws.String("k"),
			ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectSize}})
	}
	if _, err := anon.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("pub"), Key: aws.String("k")}); err != nil {
		t.Fatalf("anonymous GetObject of a public bucket: %v", err)
	}
	if _, err := attrs(); apiCode(err) != "AccessDenied" {
		t.Errorf("anonymous GetObjectAttributes of a public bucket: %v, want AccessDenied", err)
	}
	if err := putPolicy(c, "pub", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObjectAttributes","Resource":"arn:aws:s3:::pub/*"}]}`); err != nil {
		t.Fatal(err)
	}
	if out, err := attrs(); err != nil || aws.ToInt64(out.ObjectSize) != 5 {
		t.Errorf("anonymous GetObjectAttributes the policy allows: %+v, %v", out, err)
	}
}
