package s3api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3api"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// tagSet builds a TagSet from key, value pairs.
func tagSet(kv ...string) []types.Tag {
	out := []types.Tag{}
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
	}
	return out
}

// manyTags is n distinct tags.
func manyTags(n int) []types.Tag {
	var kv []string
	for i := range n {
		kv = append(kv, fmt.Sprintf("k%02d", i), fmt.Sprintf("v%d", i))
	}
	return tagSet(kv...)
}

// tagString is a tag set as "k=v,k=v", in key order, for comparisons.
func tagString(tags []types.Tag) string {
	var kv []string
	for _, t := range tags {
		kv = append(kv, aws.ToString(t.Key)+"="+aws.ToString(t.Value))
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// objectTags reads an object's tags through GetObjectTagging.
func objectTags(t *testing.T, c *s3.Client, bucket, key string) string {
	t.Helper()
	out, err := c.GetObjectTagging(context.Background(), &s3.GetObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("GetObjectTagging %s/%s: %v", bucket, key, err)
	}
	return tagString(out.TagSet)
}

// bucketTags reads a bucket's tags, or the error code of GetBucketTagging.
func bucketTags(t *testing.T, c *s3.Client, bucket string) string {
	t.Helper()
	out, err := c.GetBucketTagging(context.Background(), &s3.GetBucketTaggingInput{Bucket: aws.String(bucket)})
	if err != nil {
		return "error " + apiCode(err)
	}
	return tagString(out.TagSet)
}

// tagCount is the x-amz-tagging-count of GET and HEAD, which must agree.
func tagCount(t *testing.T, c *s3.Client, bucket, key string) int32 {
	t.Helper()
	ctx := context.Background()
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("HeadObject %s/%s: %v", bucket, key, err)
	}
	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("GetObject %s/%s: %v", bucket, key, err)
	}
	get.Body.Close()
	if aws.ToInt32(head.TagCount) != aws.ToInt32(get.TagCount) {
		t.Errorf("x-amz-tagging-count: HEAD %d, GET %d", aws.ToInt32(head.TagCount), aws.ToInt32(get.TagCount))
	}
	return aws.ToInt32(head.TagCount)
}

// TestObjectTagging: PutObjectTagging, GetObjectTagging and
// DeleteObjectTagging through the AWS SDK, x-amz-tagging-count, and every
// refusal S3 makes, each leaving the tags as they were.
func TestObjectTagging(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "tagged")
	etag := mustPut(t, c, "tagged", "doc.txt", []byte("tag me"))
	before, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("tagged"), Key: aws.String("doc.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if got := objectTags(t, c, "tagged", "doc.txt"); got != "" {
		t.Fatalf("untagged object: got %v, want an empty TagSet", got)
	}
	if got := tagCount(t, c, "tagged", "doc.txt"); got != 0 {
		t.Fatalf("untagged object's x-amz-tagging-count: got %v, want none", got)
	}

	put := func(tags []types.Tag) error {
		_, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("tagged"), Key: aws.String("doc.txt"),
			Tagging: &types.Tagging{TagSet: tags}})
		return err
	}
	// UTF-16 counting: U+1D400 (a letter) is two code units.
	bold := strings.Repeat("\U0001D400", 64)
	for _, tc := range []struct {
		name  string
		tags  []types.Tag
		want  string
		count int32
	}{
		{"two tags", tagSet("project", "lattice", "env", "prod"), "env=prod,project=lattice", 2},
		{"replaces the set", tagSet("owner", "alice@example.com"), "owner=alice@example.com", 1},
		{"allowed symbols and spaces", tagSet("a b_c.d:e/f=g+h-i@j", "x y", "é", "ü"), "a b_c.d:e/f=g+h-i@j=x y,é=ü", 2},
		{"an empty value", tagSet("flag", ""), "flag=", 1},
		{"the limits: 10 tags, 128 and 256 characters", append(manyTags(8), tagSet(strings.Repeat("k", 128), strings.Repeat("v", 256), bold, bold)...),
			tagString(append(manyTags(8), tagSet(strings.Repeat("k", 128), strings.Repeat("v", 256), bold, bold)...)), 10},
		{"an empty set removes the tags", tagSet(), "", 0},
		{"tagged again", tagSet("kept", "yes"), "kept=yes", 1},
	} {
		if err := put(tc.tags); err != nil {
			t.Fatalf("%s: PutObjectTagging: %v", tc.name, err)
		}
		if got := objectTags(t, c, "tagged", "doc.txt"); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		if got := tagCount(t, c, "tagged", "doc.txt"); got != tc.count {
			t.Errorf("%s: x-amz-tagging-count: got %v, want %v", tc.name, got, tc.count)
		}
	}

	for _, tc := range []struct {
		name string
		tags []types.Tag
		want string
	}{
		{"11 tags", manyTags(11), "BadRequest"},
		{"an empty key", tagSet("", "v"), "InvalidTag"},
		{"a key of 129 characters", tagSet(strings.Repeat("k", 129), "v"), "InvalidTag"},
		{"a key of 130 UTF-16 code units", tagSet(bold+"\U0001D400", "v"), "InvalidTag"},
		{"a value of 257 characters", tagSet("k", strings.Repeat("v", 257)), "InvalidTag"},
		{"a duplicate key", tagSet("k", "1", "k", "2"), "InvalidTag"},
		{"the aws: prefix", tagSet("aws:cloudformation:stack-name", "x"), "InvalidTag"},
		{"the AWS: prefix", tagSet("AWS:x", "x"), "InvalidTag"},
		{"a comma in a key", tagSet("a,b", "v"), "InvalidTag"},
		{"an ampersand in a value", tagSet("k", "a&b"), "InvalidTag"},
		{"a tab in a value", tagSet("k", "a\tb"), "InvalidTag"},
		{"an emoji", tagSet("k", "😀"), "InvalidTag"},
	} {
		err := put(tc.tags)
		if got := apiCode(err); got != tc.want || httpStatus(err) != http.StatusBadRequest {
			t.Errorf("%s: got %v (%d), want %v (400)", tc.name, err, httpStatus(err), tc.want)
		}
		if got := objectTags(t, c, "tagged", "doc.txt"); got != "kept=yes" {
			t.Errorf("%s changed the tags: got %v, want %v", tc.name, got, "kept=yes")
		}
	}

	// A Tagging document without TagSet, or a Tag without its Value, is
	// MalformedXML.
	for _, body := range []string{`<Tagging></Tagging>`, `<Tagging><TagSet><Tag><Key>k</Key></Tag></TagSet></Tagging>`, `<Tagging><TagSet>`} {
		code, s3e := do(t, e.signed(t, "PUT", "/tagged/doc.txt?tagging", strings.NewReader(body), sha(body), nil))
		if code != http.StatusBadRequest || s3e.Code != "MalformedXML" {
			t.Errorf("PutObjectTagging %s: got %d %s, want %v", body, code, s3e.Code, "400 MalformedXML")
		}
	}
	if got := objectTags(t, c, "tagged", "doc.txt"); got != "kept=yes" {
		t.Errorf("malformed documents changed the tags: got %v, want %v", got, "kept=yes")
	}

	// Tagging changes neither the body, the ETag nor Last-Modified.
	after, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("tagged"), Key: aws.String("doc.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if *after.ETag != etag || !after.LastModified.Equal(*before.LastModified) {
		t.Errorf("after tagging: got ETag %v, Last-Modified %v, want %v, %v", *after.ETag, after.LastModified, etag, before.LastModified)
	}
	if body, _ := mustGet(t, c, "tagged", "doc.txt"); string(body) != "tag me" {
		t.Errorf("body after tagging: got %q, want %q", body, "tag me")
	}

	// DeleteObjectTagging: 204, then an empty set.
	code, _ := do(t, e.signed(t, "DELETE", "/tagged/doc.txt?tagging", nil, "", nil))
	if code != http.StatusNoContent {
		t.Errorf("DeleteObjectTagging: got %v, want %v", code, http.StatusNoContent)
	}
	if got := objectTags(t, c, "tagged", "doc.txt"); got != "" {
		t.Errorf("after DeleteObjectTagging: got %v, want no tags", got)
	}
	if _, err := c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: aws.String("tagged"), Key: aws.String("doc.txt")}); err != nil {
		t.Errorf("DeleteObjectTagging of an untagged object: got %v, want success", err)
	}

	// Missing objects and buckets.
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"GetObjectTagging of a missing key", func() error {
			_, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("tagged"), Key: aws.String("none")})
			return err
		}, "NoSuchKey"},
		{"PutObjectTagging of a missing key", func() error {
			_, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("tagged"), Key: aws.String("none"), Tagging: &types.Tagging{TagSet: tagSet("a", "b")}})
			return err
		}, "NoSuchKey"},
		{"DeleteObjectTagging of a missing key", func() error {
			_, err := c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: aws.String("tagged"), Key: aws.String("none")})
			return err
		}, "NoSuchKey"},
		{"GetObjectTagging in a missing bucket", func() error {
			_, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("no-such-bucket"), Key: aws.String("doc.txt")})
			return err
		}, "NoSuchBucket"},
		{"PutObjectTagging in a missing bucket", func() error {
			_, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("no-such-bucket"), Key: aws.String("doc.txt"), Tagging: &types.Tagging{TagSet: tagSet("a", "b")}})
			return err
		}, "NoSuchBucket"},
	} {
		if got := apiCode(tc.call()); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	if _, err := e.st.Object("alice", "tagged", "none"); err == nil {
		t.Errorf("tagging a missing key created it")
	}
	// POST ?tagging is no operation.
	if code, s3e := do(t, e.signed(t, "POST", "/tagged/doc.txt?tagging", nil, "", nil)); code != http.StatusMethodNotAllowed {
		t.Errorf("POST ?tagging: got %d %s, want %v", code, s3e.Code, http.StatusMethodNotAllowed)
	}
}

// TestBucketTagging: PutBucketTagging, GetBucketTagging and
// DeleteBucketTagging, NoSuchTagSet on an untagged bucket, the refusals,
// and tags that go with their bucket.
func TestBucketTagging(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "team")
	if got := bucketTags(t, c, "team"); got != "error NoSuchTagSet" {
		t.Fatalf("untagged bucket: got %v, want %v", got, "error NoSuchTagSet")
	}
	put := func(tags []types.Tag) error {
		_, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String("team"), Tagging: &types.Tagging{TagSet: tags}})
		return err
	}
	for _, tc := range []struct {
		name string
		tags []types.Tag
		want string
	}{
		{"two tags", tagSet("cost-center", "42", "team", "storage"), "cost-center=42,team=storage"},
		{"replaces the set", tagSet("team", "edge"), "team=edge"},
		{"50 tags", manyTags(50), tagString(manyTags(50))},
		{"an empty set removes the tags", tagSet(), "error NoSuchTagSet"},
		{"tagged again", tagSet("kept", "yes"), "kept=yes"},
	} {
		if err := put(tc.tags); err != nil {
			t.Fatalf("%s: PutBucketTagging: %v", tc.name, err)
		}
		if got := bucketTags(t, c, "team"); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		tags []types.Tag
		want string
	}{
		{"51 tags", manyTags(51), "BadRequest"},
		{"a key of 129 characters", tagSet(strings.Repeat("k", 129), "v"), "InvalidTag"},
		{"a value of 257 characters", tagSet("k", strings.Repeat("v", 257)), "InvalidTag"},
		{"a duplicate key", tagSet("k", "1", "k", "2"), "InvalidTag"},
		{"the aws: prefix", tagSet("aws:createdBy", "x"), "InvalidTag"},
		{"a semicolon", tagSet("a;b", "v"), "InvalidTag"},
	} {
		if got := apiCode(put(tc.tags)); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		if got := bucketTags(t, c, "team"); got != "kept=yes" {
			t.Errorf("%s changed the tags: got %v, want %v", tc.name, got, "kept=yes")
		}
	}
	body := `<Tagging><TagSet><Tag><Value>v</Value></Tag></TagSet></Tagging>`
	if code, s3e := do(t, e.signed(t, "PUT", "/team?tagging", strings.NewReader(body), sha(body), nil)); code != http.StatusBadRequest || s3e.Code != "MalformedXML" {
		t.Errorf("a Tag without its Key: got %d %s, want %v", code, s3e.Code, "400 MalformedXML")
	}
	if got := bucketTags(t, c, "team"); got != "kept=yes" {
		t.Errorf("a malformed document changed the tags: got %v, want %v", got, "kept=yes")
	}
	// The tags are the bucket's alone: its objects have none.
	mustPut(t, c, "team", "a", []byte("a"))
	if got := objectTags(t, c, "team", "a"); got != "" {
		t.Errorf("an object of a tagged bucket: got %v, want no tags", got)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("team"), Key: aws.String("a")}); err != nil {
		t.Fatal(err)
	}

	code, _ := do(t, e.signed(t, "DELETE", "/team?tagging", nil, "", nil))
	if code != http.StatusNoContent {
		t.Errorf("DeleteBucketTagging: got %v, want %v", code, http.StatusNoContent)
	}
	if got := bucketTags(t, c, "team"); got != "error NoSuchTagSet" {
		t.Errorf("after DeleteBucketTagging: got %v, want %v", got, "error NoSuchTagSet")
	}

	// A bucket's tags go with it: the name made anew has none.
	if err := put(tagSet("old", "bucket")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("team")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"GetBucketTagging", func() error {
			_, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String("team")})
			return err
		}},
		{"PutBucketTagging", func() error { return put(tagSet("a", "b")) }},
		{"DeleteBucketTagging", func() error {
			_, err := c.DeleteBucketTagging(ctx, &s3.DeleteBucketTaggingInput{Bucket: aws.String("team")})
			return err
		}},
	} {
		if got := apiCode(tc.call()); got != "NoSuchBucket" {
			t.Errorf("%s of a deleted bucket: got %v, want %v", tc.name, got, "NoSuchBucket")
		}
	}
	mustBuckets(t, c, "team")
	if got := bucketTags(t, c, "team"); got != "error NoSuchTagSet" {
		t.Errorf("a bucket made anew under the name: got %v, want %v", got, "error NoSuchTagSet")
	}
}

// TestTaggingHeader: x-amz-tagging on PutObject, as URL query
// parameters; a refused header stores nothing; a PUT without it leaves
// the new object untagged.
func TestTaggingHeader(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "hdr")
	putTagged := func(key, body, tagging string) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("hdr"), Key: aws.String(key), Body: strings.NewReader(body), Tagging: aws.String(tagging)})
		return err
	}
	for _, tc := range []struct {
		name, header, want string
	}{
		{"two tags", "project=lattice&env=prod", "env=prod,project=lattice"},
		{"escapes, + as a space, a key without =", "a%2Fb=c%3Ad&two+words=x+y&flag", "a/b=c:d,flag=,two words=x y"},
		{"unicode", "%C3%A9t%C3%A9=%C3%BC", "été=ü"},
		{"10 tags", "a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10", "a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8,i=9,j=10"},
	} {
		if err := putTagged("obj", tc.name, tc.header); err != nil {
			t.Fatalf("%s: PutObject: %v", tc.name, err)
		}
		if got := objectTags(t, c, "hdr", "obj"); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		if got, want := tagCount(t, c, "hdr", "obj"), int32(strings.Count(tc.want, ",")+1); got != want {
			t.Errorf("%s: x-amz-tagging-count: got %v, want %v", tc.name, got, want)
		}
	}
	for _, tc := range []struct {
		name, header, want string
	}{
		{"11 tags", "a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11", "BadRequest"},
		{"a duplicate key", "a=1&a=2", "InvalidArgument"},
		{"a bad escape", "a=%zz", "InvalidArgument"},
		{"a semicolon", "a=1;b=2", "InvalidArgument"},
		{"an empty key", "=v", "InvalidTag"},
		{"a key of 129 characters", strings.Repeat("k", 129) + "=v", "InvalidTag"},
		{"a value of 257 characters", "k=" + strings.Repeat("v", 257), "InvalidTag"},
		{"the aws: prefix", "aws%3Akey=v", "InvalidTag"},
		{"a bracket", "TagSet=%5B%7BKey%3Dk%7D%5D", "InvalidTag"},
	} {
		err := putTagged("obj", "overwritten", tc.header)
		if got := apiCode(err); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if body, _ := mustGet(t, c, "hdr", "obj"); string(body) != "10 tags" {
			t.Errorf("%s stored the object: got %q, want %q", tc.name, body, "10 tags")
		}
		if err := putTagged("new-"+tc.name, "x", tc.header); apiCode(err) != tc.want {
			t.Errorf("%s on a new key: got %v, want %v", tc.name, err, tc.want)
		}
		if _, err := e.st.Object("alice", "hdr", "new-"+tc.name); err == nil {
			t.Errorf("%s created the object", tc.name)
		}
	}
	// A new version without the header has no tags, as in S3.
	mustPut(t, c, "hdr", "obj", []byte("plain"))
	if got := objectTags(t, c, "hdr", "obj"); got != "" {
		t.Errorf("overwritten without x-amz-tagging: got %v, want no tags", got)
	}
	// An empty header is no tags.
	if err := putTagged("empty", "x", ""); err != nil {
		t.Fatal(err)
	}
	if got := objectTags(t, c, "hdr", "empty"); got != "" {
		t.Errorf("an empty x-amz-tagging: got %v, want no tags", got)
	}
	// The REST API sees the same tags in the store.
	if err := putTagged("seen", "x", "a=b"); err != nil {
		t.Fatal(err)
	}
	if obj, err := e.st.Object("alice", "hdr", "seen"); err != nil || obj.Tags["a"] != "b" || len(obj.Tags) != 1 {
		t.Errorf("the store's record: got %v, %v, want tags a=b", obj.Tags, err)
	}
}

// TestCopyObjectTagging: CopyObject keeps the source's tags
// (x-amz-tagging-directive COPY, the default), or takes x-amz-tagging
// (REPLACE).
func TestCopyObjectTagging(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "src", "dst")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("src"), Key: aws.String("orig"), Body: strings.NewReader("original"),
		Tagging: aws.String("color=blue&size=l")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		dst       string
		directive types.TaggingDirective
		tagging   *string
		want      string
	}{
		{"no directive: COPY", "dst/a", "", nil, "color=blue,size=l"},
		{"COPY", "dst/b", types.TaggingDirectiveCopy, nil, "color=blue,size=l"},
		{"COPY ignores x-amz-tagging", "dst/c", types.TaggingDirectiveCopy, aws.String("other=1"), "color=blue,size=l"},
		{"REPLACE", "dst/d", types.TaggingDirectiveReplace, aws.String("color=red&new=yes"), "color=red,new=yes"},
		{"REPLACE without x-amz-tagging", "dst/e", types.TaggingDirectiveReplace, nil, ""},
		{"within the bucket", "src/f", types.TaggingDirectiveReplace, aws.String("copy=1"), "copy=1"},
		{"REPLACE onto itself", "src/orig", types.TaggingDirectiveReplace, aws.String("color=green"), "color=green"},
	} {
		bucket, key, _ := strings.Cut(tc.dst, "/")
		_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), CopySource: aws.String("src/orig"),
			TaggingDirective: tc.directive, Tagging: tc.tagging})
		if err != nil {
			t.Fatalf("%s: CopyObject: %v", tc.name, err)
		}
		if got := objectTags(t, c, bucket, key); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		if body, _ := mustGet(t, c, bucket, key); string(body) != "original" {
			t.Errorf("%s: body got %q, want %q", tc.name, body, "original")
		}
	}
	if got := objectTags(t, c, "src", "f"); got != "copy=1" {
		t.Errorf("the copy's tags changed: got %v, want %v", got, "copy=1")
	}
	// The metadata directive does not touch the tags.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String("meta"), CopySource: aws.String("src/orig"),
		MetadataDirective: types.MetadataDirectiveReplace, ContentType: aws.String("text/plain")}); err != nil {
		t.Fatal(err)
	}
	if got := objectTags(t, c, "dst", "meta"); got != "color=green" {
		t.Errorf("metadata REPLACE: got %v, want %v", got, "color=green")
	}

	// Refusals change nothing at the destination.
	mustPut(t, c, "dst", "kept", []byte("kept"))
	for _, tc := range []struct {
		name      string
		directive types.TaggingDirective
		tagging   string
		want      string
	}{
		{"an unknown directive", "MOVE", "", "InvalidArgument"},
		{"REPLACE with 11 tags", types.TaggingDirectiveReplace, "a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11", "BadRequest"},
		{"REPLACE with an invalid key", types.TaggingDirectiveReplace, "aws%3Ax=1", "InvalidTag"},
		{"REPLACE with a duplicate key", types.TaggingDirectiveReplace, "a=1&a=2", "InvalidArgument"},
	} {
		_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("dst"), Key: aws.String("kept"), CopySource: aws.String("src/orig"),
			TaggingDirective: tc.directive, Tagging: aws.String(tc.tagging)})
		if got := apiCode(err); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if body, _ := mustGet(t, c, "dst", "kept"); string(body) != "kept" {
			t.Errorf("%s overwrote the destination: got %q, want %q", tc.name, body, "kept")
		}
	}
	// Copying onto itself without a REPLACE directive is still refused.
	_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("src"), Key: aws.String("orig"), CopySource: aws.String("src/orig"),
		TaggingDirective: types.TaggingDirectiveCopy})
	if got := apiCode(err); got != "InvalidRequest" {
		t.Errorf("a copy onto itself, tags COPY: got %v, want %v", err, "InvalidRequest")
	}
}

// TestMultipartTagging: x-amz-tagging on CreateMultipartUpload tags the
// object the upload completes; a refused header starts no upload.
func TestMultipartTagging(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "mpu")
	for _, tc := range []struct {
		name, tagging, want string
	}{
		{"tagged", "stage=raw&source=camera+1", "source=camera 1,stage=raw"},
		{"untagged", "", ""},
	} {
		cu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("mpu"), Key: aws.String(tc.name), Tagging: aws.String(tc.tagging)})
		if err != nil {
			t.Fatalf("%s: CreateMultipartUpload: %v", tc.name, err)
		}
		part1, part2 := randomBytes(5<<20, 31), []byte("the end")
		var done []types.CompletedPart
		for i, body := range [][]byte{part1, part2} {
			up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("mpu"), Key: aws.String(tc.name), UploadId: cu.UploadId,
				PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(body)})
			if err != nil {
				t.Fatal(err)
			}
			done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: up.ETag})
		}
		// Not yet an object: nothing to tag.
		if _, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("mpu"), Key: aws.String(tc.name)}); apiCode(err) != "NoSuchKey" {
			t.Errorf("%s: GetObjectTagging before completion: got %v, want %v", tc.name, err, "NoSuchKey")
		}
		if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("mpu"), Key: aws.String(tc.name), UploadId: cu.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
			t.Fatalf("%s: CompleteMultipartUpload: %v", tc.name, err)
		}
		if got := objectTags(t, c, "mpu", tc.name); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name, tagging, want string
	}{
		{"11 tags", "a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11", "BadRequest"},
		{"the aws: prefix", "aws%3Ax=1", "InvalidTag"},
		{"a duplicate key", "a=1&a=2", "InvalidArgument"},
	} {
		_, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("mpu"), Key: aws.String("refused"), Tagging: aws.String(tc.tagging)})
		if got := apiCode(err); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	l, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("mpu")})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Uploads) != 0 {
		t.Errorf("refused CreateMultipartUpload: got %v uploads, want %v", len(l.Uploads), 0)
	}
}

// TestTaggingTenancyAndKeys: another account's objects and buckets are
// AccessDenied to every tagging request, which changes nothing; a key
// that can only read may read tags and not write them, one that can only
// write the reverse; a key scoped to one bucket cannot tag another.
func TestTaggingTenancyAndKeys(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice := e.sdk(e.id, e.secret)
	mustBuckets(t, alice, "alices", "other")
	for _, b := range []string{"alices", "other"} {
		if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("obj"), Body: strings.NewReader("x"), Tagging: aws.String("owner=alice")}); err != nil {
			t.Fatal(err)
		}
		if _, err := alice.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(b), Tagging: &types.Tagging{TagSet: tagSet("owner", "alice")}}); err != nil {
			t.Fatal(err)
		}
	}
	calls := func(c *s3.Client, bucket string) map[string]func() error {
		b, k := aws.String(bucket), aws.String("obj")
		return map[string]func() error{
			"GetObjectTagging": func() error {
				_, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: k})
				return err
			},
			"PutObjectTagging": func() error {
				_, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: k, Tagging: &types.Tagging{TagSet: tagSet("owner", "mallory")}})
				return err
			},
			"DeleteObjectTagging": func() error {
				_, err := c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: b, Key: k})
				return err
			},
			"GetBucketTagging": func() error { _, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: b}); return err },
			"PutBucketTagging": func() error {
				_, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: b, Tagging: &types.Tagging{TagSet: tagSet("owner", "mallory")}})
				return err
			},
			"DeleteBucketTagging": func() error {
				_, err := c.DeleteBucketTagging(ctx, &s3.DeleteBucketTaggingInput{Bucket: b})
				return err
			},
			"CopyObject REPLACE": func() error {
				_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: k, CopySource: aws.String(bucket + "/obj"),
					TaggingDirective: types.TaggingDirectiveReplace, Tagging: aws.String("owner=mallory")})
				return err
			},
		}
	}
	unchanged := func(name string) {
		t.Helper()
		for _, b := range []string{"alices", "other"} {
			if got := objectTags(t, alice, b, "obj"); got != "owner=alice" {
				t.Errorf("%s: %s/obj tags got %v, want %v", name, b, got, "owner=alice")
			}
			if got := bucketTags(t, alice, b); got != "owner=alice" {
				t.Errorf("%s: bucket %s tags got %v, want %v", name, b, got, "owner=alice")
			}
		}
	}

	bobID, bobSecret := e.key(t, "bob", cloudstore.PermReadWrite, "*")
	bob := e.sdk(bobID, bobSecret)
	for name, call := range calls(bob, "alices") {
		if got := apiCode(call()); got != "AccessDenied" {
			t.Errorf("bob's %s on alice's bucket: got %v, want %v", name, got, "AccessDenied")
		}
		unchanged("bob's " + name)
	}

	type keyCase struct {
		perms, scope, bucket string
		refused              map[string]bool // the calls refused with AccessDenied
	}
	writes := map[string]bool{"PutObjectTagging": true, "DeleteObjectTagging": true, "PutBucketTagging": true, "DeleteBucketTagging": true, "CopyObject REPLACE": true}
	reads := map[string]bool{"GetObjectTagging": true, "GetBucketTagging": true, "CopyObject REPLACE": true}
	all := map[string]bool{}
	for n := range calls(alice, "x") {
		all[n] = true
	}
	for _, kc := range []keyCase{
		{cloudstore.PermRead, "*", "alices", writes},
		{cloudstore.PermWrite, "*", "alices", reads},
		{cloudstore.PermReadWrite, "alices", "other", all},
	} {
		id, secret := e.key(t, "alice", kc.perms, kc.scope)
		c := e.sdk(id, secret)
		for name, call := range calls(c, kc.bucket) {
			// Writes that are let through put the tags back as they were.
			err := call()
			if kc.refused[name] {
				if got := apiCode(err); got != "AccessDenied" {
					t.Errorf("a %s key scoped to %s: %s on %s: got %v, want %v", kc.perms, kc.scope, name, kc.bucket, err, "AccessDenied")
				}
				continue
			}
			if err != nil {
				t.Errorf("a %s key scoped to %s: %s on %s: got %v, want success", kc.perms, kc.scope, name, kc.bucket, err)
			}
			if _, err := alice.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String(kc.bucket), Key: aws.String("obj"), Tagging: &types.Tagging{TagSet: tagSet("owner", "alice")}}); err != nil {
				t.Fatal(err)
			}
			if _, err := alice.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(kc.bucket), Tagging: &types.Tagging{TagSet: tagSet("owner", "alice")}}); err != nil {
				t.Fatal(err)
			}
		}
		unchanged(fmt.Sprintf("a %s key scoped to %s", kc.perms, kc.scope))
	}

	// An anonymous reader of a public bucket gets the object, but not its
	// tag count, and cannot read its tags.
	if _, err := e.st.UpdateBucket("alice", "alices", time.Now(), func(b *cloudstore.Bucket) { b.Public = true }); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(e.srv.URL + "/alices/obj")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Amz-Tagging-Count") != "" {
		t.Errorf("anonymous GetObject: got %d, x-amz-tagging-count %q, want 200 and none", resp.StatusCode, resp.Header.Get("X-Amz-Tagging-Count"))
	}
	resp, err = http.Get(e.srv.URL + "/alices/obj?tagging")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous GetObjectTagging: got %v, want %v", resp.StatusCode, http.StatusForbidden)
	}
}

// TestTagsSurviveRestart: object and bucket tags are on disk once the
// request answered, and read back after the store is closed and opened.
func TestTagsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var id, secret string
	serve := func(fn func(c *s3.Client)) {
		st, err := cloudstore.OpenDir(dir, log)
		if err != nil {
			t.Fatal(err)
		}
		if id == "" {
			k, sec, err := st.CreateS3Key("alice", "test", cloudstore.PermReadWrite, "*", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			id, secret = k.AccessKeyID, sec
		}
		api := s3api.New(st, s3api.Options{Logger: log})
		srv := httptest.NewServer(api)
		defer func() {
			srv.Close()
			api.Wait()
			if err := st.Close(); err != nil {
				t.Error(err)
			}
		}()
		e := &env{st: st, srv: srv}
		fn(e.sdk(id, secret))
	}
	ctx := context.Background()
	serve(func(c *s3.Client) {
		mustBuckets(t, c, "durable")
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("durable"), Key: aws.String("header"), Body: strings.NewReader("x"), Tagging: aws.String("via=header")}); err != nil {
			t.Fatal(err)
		}
		mustPut(t, c, "durable", "put", []byte("y"))
		if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("durable"), Key: aws.String("put"), Tagging: &types.Tagging{TagSet: tagSet("via", "put", "n", "2")}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String("durable"), Tagging: &types.Tagging{TagSet: tagSet("team", "storage")}}); err != nil {
			t.Fatal(err)
		}
	})
	serve(func(c *s3.Client) {
		for key, want := range map[string]string{"header": "via=header", "put": "n=2,via=put"} {
			if got := objectTags(t, c, "durable", key); got != want {
				t.Errorf("after a restart, %s: got %v, want %v", key, got, want)
			}
		}
		if got := bucketTags(t, c, "durable"); got != "team=storage" {
			t.Errorf("after a restart, the bucket: got %v, want %v", got, "team=storage")
		}
	})
}

// TestAWSCLITagging: the AWS CLI's tagging commands, and s3 cp of a
// tagged object between buckets, which keeps its tags (CopyObject's
// default tagging directive, COPY).
func TestAWSCLITagging(t *testing.T) {
	cli := tooltest.Need(t, "aws", "--version")
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "cli-tags", "cli-copy")
	file := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(file, []byte("from the cli"), 0o600); err != nil {
		t.Fatal(err)
	}
	api := func(args ...string) {
		e.run(t, cli, append([]string{"--endpoint-url", e.srv.URL, "s3api"}, args...)...)
	}

	api("put-object", "--bucket", "cli-tags", "--key", "obj", "--body", file, "--tagging", "stage=raw&team=storage")
	if got := objectTags(t, c, "cli-tags", "obj"); got != "stage=raw,team=storage" {
		t.Errorf("put-object --tagging: got %v, want %v", got, "stage=raw,team=storage")
	}
	e.run(t, cli, "--endpoint-url", e.srv.URL, "s3", "cp", "s3://cli-tags/obj", "s3://cli-copy/obj")
	if got := objectTags(t, c, "cli-copy", "obj"); got != "stage=raw,team=storage" {
		t.Errorf("s3 cp between buckets: got %v, want %v", got, "stage=raw,team=storage")
	}
	api("put-object-tagging", "--bucket", "cli-tags", "--key", "obj", "--tagging", "TagSet=[{Key=stage,Value=done}]")
	if got := objectTags(t, c, "cli-tags", "obj"); got != "stage=done" {
		t.Errorf("put-object-tagging: got %v, want %v", got, "stage=done")
	}
	api("get-object-tagging", "--bucket", "cli-tags", "--key", "obj")
	api("delete-object-tagging", "--bucket", "cli-tags", "--key", "obj")
	if got := objectTags(t, c, "cli-tags", "obj"); got != "" {
		t.Errorf("delete-object-tagging: got %v, want no tags", got)
	}
	api("put-bucket-tagging", "--bucket", "cli-tags", "--tagging", "TagSet=[{Key=cost-center,Value=42}]")
	if got := bucketTags(t, c, "cli-tags"); got != "cost-center=42" {
		t.Errorf("put-bucket-tagging: got %v, want %v", got, "cost-center=42")
	}
	api("get-bucket-tagging", "--bucket", "cli-tags")
	api("delete-bucket-tagging", "--bucket", "cli-tags")
	if got := bucketTags(t, c, "cli-tags"); got != "error NoSuchTagSet" {
		t.Errorf("delete-bucket-tagging: got %v, want %v", got, "error NoSuchTagSet")
	}
}

// TestPresignedTagging: a presigned PUT whose signer put x-amz-tagging
// in the query (as some SDKs hoist x-amz-* headers) tags the object; a
// refused one stores nothing.
func TestPresignedTagging(t *testing.T) {
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "presigned")
	presign := func(key, tagging string) string {
		t.Helper()
		q := url.Values{"x-amz-tagging": {tagging}, "X-Amz-Expires": {"600"}}
		r, err := http.NewRequest("PUT", e.srv.URL+"/presigned/"+key+"?"+q.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		signed, _, err := v4.NewSigner().PresignHTTP(context.Background(), aws.Credentials{AccessKeyID: e.id, SecretAccessKey: e.secret},
			r, "UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return signed
	}
	for _, tc := range []struct {
		key, tagging string
		status       int
		want         string
	}{
		{"tagged", "a=b&c=two+words", http.StatusOK, "a=b,c=two words"},
		{"refused", "aws:x=1", http.StatusBadRequest, ""},
	} {
		r, err := http.NewRequest("PUT", presign(tc.key, tc.tagging), strings.NewReader("presigned body"))
		if err != nil {
			t.Fatal(err)
		}
		code, s3e := do(t, r)
		if code != tc.status {
			t.Errorf("%s: got %d %s, want %v", tc.key, code, s3e.Code, tc.status)
		}
		if tc.status != http.StatusOK {
			if _, err := e.st.Object("alice", "presigned", tc.key); err == nil {
				t.Errorf("%s: got an object, want none", tc.key)
			}
			continue
		}
		if got := objectTags(t, c, "presigned", tc.key); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.key, got, tc.want)
		}
	}
}
