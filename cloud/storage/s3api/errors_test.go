package s3api_test

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3api"
	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// signed builds a request to the endpoint signed with alice's key; a
// payload of "" is signed as UNSIGNED-PAYLOAD.
func (e *env) signed(t *testing.T, method, path string, body io.Reader, payload string, header map[string]string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	if payload == "" {
		payload = sigv4.UnsignedPayload
	}
	sigv4.Sign(r, e.id, e.secret, "us-east-1", payload, time.Now())
	return r
}

type s3Error struct {
	Code, Message, Resource string
	RequestID               string `xml:"RequestId"`
}

// do sends r and decodes an S3 error answer, if any.
func do(t *testing.T, r *http.Request) (int, s3Error) {
	t.Helper()
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var e s3Error
	if resp.StatusCode >= 300 && len(data) > 0 {
		if err := xml.Unmarshal(data, &e); err != nil {
			t.Fatalf("%s %s: %d with a body that is not S3 XML: %q", r.Method, r.URL, resp.StatusCode, data)
		}
		if e.Message == "" || e.RequestID != resp.Header.Get("X-Amz-Request-Id") {
			t.Errorf("error answer %+v lacks a message or the request id %s", e, resp.Header.Get("X-Amz-Request-Id"))
		}
	}
	return resp.StatusCode, e
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestErrorAnswers(t *testing.T) {
	e := startEnv(t, false, s3api.Options{MaxObjectSize: 1 << 20})
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("errs")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("errs"), Key: aws.String("kept"), Body: strings.NewReader("v")}); err != nil {
		t.Fatal(err)
	}
	goodMD5 := md5.Sum([]byte("payload"))
	tests := []struct {
		name   string
		req    func() *http.Request
		status int
		code   string
	}{
		{"payload hash mismatch", func() *http.Request {
			return e.signed(t, "PUT", "/errs/x", strings.NewReader("payload"), sha("other"), nil)
		}, 400, "XAmzContentSHA256Mismatch"},
		{"content-md5 mismatch", func() *http.Request {
			return e.signed(t, "PUT", "/errs/x", strings.NewReader("payloaD"), "", map[string]string{"Content-MD5": base64.StdEncoding.EncodeToString(goodMD5[:])})
		}, 400, "BadDigest"},
		{"content-md5 malformed", func() *http.Request {
			return e.signed(t, "PUT", "/errs/x", strings.NewReader("payload"), "", map[string]string{"Content-MD5": "nope"})
		}, 400, "InvalidDigest"},
		{"checksum header mismatch", func() *http.Request {
			return e.signed(t, "PUT", "/errs/x", strings.NewReader("payload"), "", map[string]string{"X-Amz-Checksum-Crc32": "AAAAAA=="})
		}, 400, "BadDigest"},
		{"over the size limit", func() *http.Request {
			return e.signed(t, "PUT", "/errs/x", strings.NewReader(strings.Repeat("x", 1<<20+1)), "", nil)
		}, 400, "EntityTooLarge"},
		{"chunked, over the size limit", func() *http.Request {
			pr, pw := io.Pipe()
			go func() { pw.Write([]byte(strings.Repeat("x", 1<<20+1))); pw.Close() }()
			return e.signed(t, "PUT", "/errs/x", pr, "", nil) // no length: Transfer-Encoding: chunked
		}, 400, "EntityTooLarge"},
		{"chunked, not the signed payload", func() *http.Request {
			pr, pw := io.Pipe()
			go func() { pw.Write([]byte("streamed")); pw.Close() }()
			return e.signed(t, "PUT", "/errs/x", pr, sha("other"), nil)
		}, 400, "XAmzContentSHA256Mismatch"},
		{"metadata too large", func() *http.Request {
			return e.signed(t, "PUT", "/errs/x", strings.NewReader("p"), "", map[string]string{"X-Amz-Meta-Big": strings.Repeat("m", 2100)})
		}, 400, "MetadataTooLarge"},
		{"invalid key", func() *http.Request {
			return e.signed(t, "PUT", "/errs/bad%01key", strings.NewReader("p"), "", nil)
		}, 400, "InvalidArgument"},
		{"missing bucket", func() *http.Request { return e.signed(t, "GET", "/nobucket/x", nil, "", nil) }, 404, "NoSuchBucket"},
		{"missing key", func() *http.Request { return e.signed(t, "GET", "/errs/none", nil, "", nil) }, 404, "NoSuchKey"},
		{"listing a missing bucket", func() *http.Request { return e.signed(t, "GET", "/nobucket?list-type=2", nil, "", nil) }, 404, "NoSuchBucket"},
		{"bad max-keys", func() *http.Request { return e.signed(t, "GET", "/errs?max-keys=-1", nil, "", nil) }, 400, "InvalidArgument"},
		{"bad continuation token", func() *http.Request {
			return e.signed(t, "GET", "/errs?list-type=2&continuation-token=%25%25", nil, "", nil)
		}, 400, "InvalidArgument"},
		{"bad encoding type", func() *http.Request { return e.signed(t, "GET", "/errs?encoding-type=base64", nil, "", nil) }, 400, "InvalidArgument"},
		{"malformed DeleteObjects", func() *http.Request {
			return e.signed(t, "POST", "/errs?delete", strings.NewReader("<Delete><Object>"), "", nil)
		}, 400, "MalformedXML"},
		{"empty DeleteObjects", func() *http.Request {
			return e.signed(t, "POST", "/errs?delete", strings.NewReader("<Delete></Delete>"), "", nil)
		}, 400, "MalformedXML"},
		{"malformed CreateBucket body", func() *http.Request {
			return e.signed(t, "PUT", "/newbucket", strings.NewReader("<CreateBucketConfiguration"), "", nil)
		}, 400, "MalformedXML"},
		{"other region", func() *http.Request {
			return e.signed(t, "PUT", "/newbucket", strings.NewReader("<CreateBucketConfiguration><LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>"), "", nil)
		}, 400, "IllegalLocationConstraintException"},
		{"unknown upload", func() *http.Request {
			return e.signed(t, "PUT", "/errs/x?partNumber=1&uploadId=nosuch", strings.NewReader("p"), "", nil)
		}, 404, "NoSuchUpload"},
		{"bad part number", func() *http.Request {
			return e.signed(t, "PUT", "/errs/x?partNumber=10001&uploadId=nosuch", strings.NewReader("p"), "", nil)
		}, 400, "InvalidArgument"},
		{"malformed completion", func() *http.Request {
			return e.signed(t, "POST", "/errs/x?uploadId=nosuch", strings.NewReader("<CompleteMultipartUpload><Part>"), "", nil)
		}, 400, "MalformedXML"},
		{"copy from a missing key", func() *http.Request {
			return e.signed(t, "PUT", "/errs/y", nil, "", map[string]string{"X-Amz-Copy-Source": "/errs/none"})
		}, 404, "NoSuchKey"},
		{"copy onto itself", func() *http.Request {
			return e.signed(t, "PUT", "/errs/kept", nil, "", map[string]string{"X-Amz-Copy-Source": "/errs/kept"})
		}, 400, "InvalidRequest"},
		{"copy precondition", func() *http.Request {
			return e.signed(t, "PUT", "/errs/y", nil, "", map[string]string{"X-Amz-Copy-Source": "/errs/kept", "X-Amz-Copy-Source-If-Match": `"0"`})
		}, 412, "PreconditionFailed"},
		{"bad metadata directive", func() *http.Request {
			return e.signed(t, "PUT", "/errs/y", nil, "", map[string]string{"X-Amz-Copy-Source": "/errs/kept", "X-Amz-Metadata-Directive": "MERGE"})
		}, 400, "InvalidArgument"},
		{"method not allowed", func() *http.Request { return e.signed(t, "PATCH", "/errs", nil, "", nil) }, 405, "MethodNotAllowed"},
		{"unsupported subresource", func() *http.Request { return e.signed(t, "PUT", "/errs?replication", nil, "", nil) }, 501, "NotImplemented"},
		{"unsigned request", func() *http.Request {
			r, _ := http.NewRequest("GET", e.srv.URL+"/errs/kept", nil)
			return r
		}, 403, "AccessDenied"},
		{"expired signature version 2 URL", func() *http.Request {
			r, _ := http.NewRequest("GET", e.srv.URL+"/errs/kept?AWSAccessKeyId=x&Signature=y&Expires=1", nil)
			return r
		}, 403, "AccessDenied"},
		{"skewed clock", func() *http.Request {
			r, _ := http.NewRequest("GET", e.srv.URL+"/errs/kept", nil)
			sigv4.Sign(r, e.id, e.secret, "us-east-1", sigv4.UnsignedPayload, time.Now().Add(-time.Hour))
			return r
		}, 403, "RequestTimeTooSkewed"},
		{"another region", func() *http.Request {
			r, _ := http.NewRequest("GET", e.srv.URL+"/errs/kept", nil)
			sigv4.Sign(r, e.id, e.secret, "eu-west-1", sigv4.UnsignedPayload, time.Now())
			return r
		}, 400, "AuthorizationHeaderMalformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, got := do(t, tt.req())
			if status != tt.status || got.Code != tt.code {
				t.Fatalf("%d %+v, want %d %s", status, got, tt.status, tt.code)
			}
		})
	}
	// None of them stored anything.
	l, err := e.st.ListObjects("alice", "errs", "", "", "", 100)
	if err != nil || len(l.Objects) != 1 || l.Objects[0].Key != "kept" {
		t.Fatalf("objects after the refused requests: %+v, %v", l.Objects, err)
	}
	if _, err := e.st.Bucket("alice", "newbucket"); err == nil {
		t.Fatal("a refused CreateBucket made the bucket")
	}
	// HEAD errors carry no body.
	r := e.signed(t, "HEAD", "/errs/none", nil, "", nil)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("HEAD of a missing key: %d", resp.StatusCode)
	}
}

// TestPresignedExpiry checks that a presigned URL stops working when it
// expires, by moving the server's clock.
func TestPresignedExpiry(t *testing.T) {
	var offset atomic.Int64
	e := startEnv(t, false, s3api.Options{Now: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }})
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("exp")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("exp"), Key: aws.String("k"), Body: strings.NewReader("v")}); err != nil {
		t.Fatal(err)
	}
	get, err := s3.NewPresignClient(c).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("exp"), Key: aws.String("k")}, s3.WithPresignExpires(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	fetch := func() (int, s3Error) {
		r, _ := http.NewRequest("GET", get.URL, nil)
		return do(t, r)
	}
	if status, _ := fetch(); status != 200 {
		t.Fatalf("fresh presigned URL: %d", status)
	}
	offset.Store(int64(time.Hour + time.Minute))
	if status, got := fetch(); status != 403 || got.Code != "AccessDenied" || !strings.Contains(got.Message, "expired") {
		t.Fatalf("expired presigned URL: %d %+v", status, got)
	}
	// Longer than 7 days is refused outright.
	r, _ := http.NewRequest("GET", strings.Replace(get.URL, "X-Amz-Expires=3600", "X-Amz-Expires=604801", 1), nil)
	if status, got := do(t, r); status != 400 || got.Code != "AuthorizationQueryParametersError" {
		t.Fatalf("8-day presigned URL: %d %+v", status, got)
	}
}

// TestInterruptedUpload cuts a PUT off mid-body: no object appears and
// nothing is left in the upload area.
func TestInterruptedUpload(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.sdk(e.id, e.secret).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("cut")}); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1000, 300 << 10} { // inline and file-backed
		r := e.signed(t, "PUT", fmt.Sprintf("/cut/obj-%d", size), nil, "", nil)
		r.ContentLength = int64(size)
		conn, err := net.Dial("tcp", e.addr())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", r.URL.Path, r.Host, size)
		for k, v := range r.Header {
			fmt.Fprintf(conn, "%s: %s\r\n", k, v[0])
		}
		fmt.Fprintf(conn, "\r\n%s", strings.Repeat("x", size/2))
		time.Sleep(100 * time.Millisecond)
		conn.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		tmp, _ := os.ReadDir(filepath.Join(e.dir, "objects", "tmp"))
		l, err := e.st.ListObjects("alice", "cut", "", "", "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(tmp) == 0 && len(l.Objects) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after interrupted uploads: %d temp files, objects %+v", len(tmp), l.Objects)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := e.st.Object("alice", "cut", "obj-1000"); err != cloudstore.ErrNotFound {
		t.Fatalf("interrupted object: %v", err)
	}
}
