package s3api_test

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/s3api"
)

// TestS3Edges holds the small conformance bugs of issue 9's list, each
// answered as S3 answers it.
func TestS3Edges(t *testing.T) {
	e := newEnv(t)
	get := func(path string, header map[string]string) (int, []byte) {
		t.Helper()
		resp, err := http.DefaultClient.Do(e.signed(t, "GET", path, nil, "", header))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, data
	}

	t.Run("bucket names with a hyphen next to a dot", func(t *testing.T) {
		for _, name := range []string{"foo-.bar", "foo.-bar"} {
			if status, serr := do(t, e.signed(t, "PUT", "/"+name, nil, "", nil)); status != 400 || serr.Code != "InvalidBucketName" {
				t.Errorf("create %s: got %d %s, want 400 InvalidBucketName", name, status, serr.Code)
			}
		}
	})

	t.Run("ListBuckets pages by max-buckets", func(t *testing.T) {
		names := []string{"page-a", "page-b", "page-c", "page-d", "page-e"}
		for _, n := range names {
			do(t, e.signed(t, "PUT", "/"+n, nil, "", nil))
		}
		type page struct {
			Names []string `xml:"Buckets>Bucket>Name"`
			Token string   `xml:"ContinuationToken"`
		}
		var got []string
		token := ""
		for i := 0; ; i++ {
			q := url.Values{"max-buckets": {"2"}, "prefix": {"page-"}}
			if token != "" {
				q.Set("continuation-token", token)
			}
			status, data := get("/?"+q.Encode(), nil)
			var p page
			if err := xml.Unmarshal(data, &p); status != 200 || err != nil {
				t.Fatalf("page %d: %d %s %v", i, status, data, err)
			}
			if len(p.Names) > 2 {
				t.Fatalf("page %d holds %d buckets, want at most 2", i, len(p.Names))
			}
			got = append(got, p.Names...)
			if token = p.Token; token == "" {
				break
			}
		}
		if strings.Join(got, ",") != strings.Join(names, ",") {
			t.Errorf("pages gave %v, want %v", got, names)
		}
		for _, bad := range []string{"0", "10001", "x"} {
			if status, _ := get("/?max-buckets="+bad, nil); status != 400 {
				t.Errorf("max-buckets=%s: got %d, want 400", bad, status)
			}
		}
	})

	do(t, e.signed(t, "PUT", "/edges", nil, "", nil))
	do(t, e.signed(t, "PUT", "/edges/whole", strings.NewReader("one piece"), "", nil))

	t.Run("empty Content-MD5", func(t *testing.T) {
		status, serr := do(t, e.signed(t, "PUT", "/edges/md5", strings.NewReader("x"), "", map[string]string{"Content-MD5": ""}))
		if status != 400 || serr.Code != "InvalidDigest" {
			t.Errorf("got %d %s, want 400 InvalidDigest", status, serr.Code)
		}
	})

	t.Run("partNumber of an object uploaded whole", func(t *testing.T) {
		for _, tt := range []struct {
			query  string
			status int
		}{{"partNumber=1", 206}, {"partNumber=2", 416}, {"partNumber=0", 400}, {"partNumber=x", 400}} {
			if status, data := get("/edges/whole?"+tt.query, nil); status != tt.status {
				t.Errorf("%s: got %d %s, want %d", tt.query, status, data, tt.status)
			}
		}
	})

	t.Run("encoding-type=url encodes a space as %20", func(t *testing.T) {
		do(t, e.signed(t, "PUT", "/edges/"+url.PathEscape("run books")+"/c+d", strings.NewReader("x"), "", nil))
		status, data := get("/edges?list-type=2&encoding-type=url&prefix=run", nil)
		if status != 200 || !strings.Contains(string(data), "<Key>run%20books/c%2Bd</Key>") {
			t.Errorf("got %d %s, want the key as run%%20books/c%%2Bd", status, data)
		}
		status, data = get("/edges?list-type=2&encoding-type=url&delimiter=/&prefix=run", nil)
		if status != 200 || !strings.Contains(string(data), "<Prefix>run%20books/</Prefix>") {
			t.Errorf("got %d %s, want the common prefix as run%%20books/", status, data)
		}
	})

	t.Run("CompleteMultipartUpload's Location is absolute", func(t *testing.T) {
		c := e.sdk(e.id, e.secret)
		ctx := context.Background()
		up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("edges"), Key: aws.String("dir/big file")})
		if err != nil {
			t.Fatal(err)
		}
		part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("edges"), Key: aws.String("dir/big file"), UploadId: up.UploadId,
			PartNumber: aws.Int32(1), Body: strings.NewReader("the only part")})
		if err != nil {
			t.Fatal(err)
		}
		done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("edges"), Key: aws.String("dir/big file"), UploadId: up.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})
		if err != nil {
			t.Fatal(err)
		}
		want := e.srv.URL + "/edges/dir/big%20file"
		if got := aws.ToString(done.Location); got != want {
			t.Errorf("Location = %q, want %q", got, want)
		}
	})
}

// TestExpiredPresignedURL: a presigned URL past its expiry is refused
// with 403 AccessDenied, as S3 does, not a 400.
func TestExpiredPresignedURL(t *testing.T) {
	later := time.Now().Add(time.Hour)
	e := startEnv(t, false, s3api.Options{Now: func() time.Time { return later }})
	if _, err := e.st.CreateBucket("alice", "share", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	pc := s3.NewPresignClient(e.sdk(e.id, e.secret))
	get, err := pc.PresignGetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("share"), Key: aws.String("x")}, s3.WithPresignExpires(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.loopbackClient().Get(get.URL)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(data), "<Code>AccessDenied</Code>") {
		t.Errorf("got %d %s, want 403 AccessDenied", resp.StatusCode, data)
	}
}

// TestConditionalWritesSDK: the AWS SDK's conditional PutObject and
// CompleteMultipartUpload are honoured: 412 when the condition fails, and
// the object is left as it was.
func TestConditionalWritesSDK(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("cond")}); err != nil {
		t.Fatal(err)
	}
	put := func(body string, edit func(*s3.PutObjectInput)) (*s3.PutObjectOutput, error) {
		in := &s3.PutObjectInput{Bucket: aws.String("cond"), Key: aws.String("k"), Body: strings.NewReader(body)}
		edit(in)
		return c.PutObject(ctx, in)
	}
	first, err := put("first", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	if err != nil {
		t.Fatalf("create with If-None-Match: *: %v", err)
	}
	if _, err := put("second", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }); apiCode(err) != "PreconditionFailed" {
		t.Errorf("create again with If-None-Match: *: got %v, want PreconditionFailed", err)
	}
	if _, err := put("third", func(in *s3.PutObjectInput) { in.IfMatch = aws.String(`"0123456789abcdef0123456789abcdef"`) }); apiCode(err) != "PreconditionFailed" {
		t.Errorf("replace with a wrong If-Match: got %v, want PreconditionFailed", err)
	}
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("cond"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if string(data) != "first" {
		t.Errorf("after refused writes the object holds %q, want %q", data, "first")
	}
	if _, err := put("fourth", func(in *s3.PutObjectInput) { in.IfMatch = first.ETag }); err != nil {
		t.Errorf("replace with the right If-Match: %v", err)
	}

	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cond"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cond"), Key: aws.String("k"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: strings.NewReader("part")})
	if err != nil {
		t.Fatal(err)
	}
	complete := &s3.CompleteMultipartUploadInput{Bucket: aws.String("cond"), Key: aws.String("k"), UploadId: up.UploadId, IfNoneMatch: aws.String("*"),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}}
	if _, err := c.CompleteMultipartUpload(ctx, complete); apiCode(err) != "PreconditionFailed" {
		t.Errorf("complete onto an existing object with If-None-Match: *: got %v, want PreconditionFailed", err)
	}
}
