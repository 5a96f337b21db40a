package s3api_test

import (
	"bufio"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// rawResponse sends r on a connection of its own and returns the answer's
// status line and header lines exactly as they came on the wire: Go's
// client canonicalises header names, which is what some tests check.
func rawResponse(t *testing.T, e *env, r *http.Request) (status string, headers []string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", e.addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	r.Close = true
	if err := r.Write(conn); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	status, err = br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			return strings.TrimSpace(status), headers
		}
		headers = append(headers, line)
	}
}

// TestUserMetadataKeepsItsCase: user metadata comes back under the lower-
// case names S3 uses (x-amz-meta-...), not canonicalised.
func TestUserMetadataKeepsItsCase(t *testing.T) {
	e := newEnv(t)
	do(t, e.signed(t, "PUT", "/meta", nil, "", nil))
	if status, serr := do(t, e.signed(t, "PUT", "/meta/k", strings.NewReader("body"), "", map[string]string{"x-amz-meta-meta1": "one", "X-Amz-Meta-Second-Key": "two"})); status != http.StatusOK {
		t.Fatalf("put: %d %s", status, serr.Code)
	}
	for _, method := range []string{"GET", "HEAD"} {
		status, headers := rawResponse(t, e, e.signed(t, method, "/meta/k", nil, "", nil))
		if !strings.Contains(status, "200") {
			t.Fatalf("%s: %s", method, status)
		}
		for _, want := range []string{"x-amz-meta-meta1: one", "x-amz-meta-second-key: two"} {
			found := false
			for _, h := range headers {
				found = found || h == want
			}
			if !found {
				t.Errorf("%s: no header line %q in %q", method, want, headers)
			}
		}
	}
}

// TestRefusedRequests: requests the endpoint cannot honour are refused
// with the error S3 clients expect, and change nothing.
func TestRefusedRequests(t *testing.T) {
	e := newEnv(t)
	do(t, e.signed(t, "PUT", "/refuse", nil, "", nil))
	do(t, e.signed(t, "PUT", "/refuse/there", strings.NewReader("x"), "", nil))
	tests := []struct {
		name       string
		method     string
		path       string
		header     map[string]string
		wantStatus int
		wantCode   string
	}{
		{"SSE-KMS under a key that does not exist", "PUT", "/refuse/k", map[string]string{"X-Amz-Server-Side-Encryption": "aws:kms",
			"X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id": "alias/none"}, 400, "KMS.NotFoundException"},
		{"an SSE-KMS key id without aws:kms", "PUT", "/refuse/k", map[string]string{"X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id": "k1"}, 400, "InvalidArgument"},
		{"an SSE-KMS context without aws:kms", "PUT", "/refuse/k", map[string]string{"X-Amz-Server-Side-Encryption-Context": "e30="}, 400, "InvalidArgument"},
		{"an SSE-KMS context not base64", "PUT", "/refuse/k", map[string]string{"X-Amz-Server-Side-Encryption": "aws:kms",
			"X-Amz-Server-Side-Encryption-Context": "{}"}, 400, "InvalidArgument"},
		{"an SSE-KMS context not a map of strings", "PUT", "/refuse/k", map[string]string{"X-Amz-Server-Side-Encryption": "aws:kms",
			"X-Amz-Server-Side-Encryption-Context": "eyJhIjoxfQ=="}, 400, "InvalidArgument"},
		{"an SSE-KMS context naming another object", "PUT", "/refuse/k", map[string]string{"X-Amz-Server-Side-Encryption": "aws:kms",
			"X-Amz-Server-Side-Encryption-Context": "eyJhd3M6czM6YXJuIjoiYXJuOmF3czpzMzo6OnJlZnVzZS9vdGhlciJ9"}, 400, "InvalidArgument"},
		{"a bucket key flag not a boolean", "PUT", "/refuse/k", map[string]string{"X-Amz-Server-Side-Encryption": "aws:kms",
			"X-Amz-Server-Side-Encryption-Bucket-Key-Enabled": "yes"}, 400, "InvalidArgument"},
		{"SSE-KMS with SSE-C", "PUT", "/refuse/k", map[string]string{"X-Amz-Server-Side-Encryption": "aws:kms",
			"X-Amz-Server-Side-Encryption-Customer-Algorithm": "AES256",
			"X-Amz-Server-Side-Encryption-Customer-Key":       "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
			"X-Amz-Server-Side-Encryption-Customer-Key-Md5":   "hRasmdxgYDKV3nvbahU1MA=="}, 400, "InvalidArgument"},
		{"DSSE-KMS with SSE-C", "PUT", "/refuse/k", map[string]string{"X-Amz-Server-Side-Encryption": "aws:kms:dsse",
			"X-Amz-Server-Side-Encryption-Customer-Algorithm": "AES256",
			"X-Amz-Server-Side-Encryption-Customer-Key":       "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
			"X-Amz-Server-Side-Encryption-Customer-Key-Md5":   "hRasmdxgYDKV3nvbahU1MA=="}, 400, "InvalidArgument"},
		{"a DSSE-KMS context not base64", "POST", "/refuse/k?uploads", map[string]string{"X-Amz-Server-Side-Encryption": "aws:kms:dsse",
			"X-Amz-Server-Side-Encryption-Context": "{}"}, 400, "InvalidArgument"},
		{"an unknown SSE algorithm", "PUT", "/refuse/k", map[string]string{"X-Amz-Server-Side-Encryption": "AES128"}, 400, "InvalidArgument"},
		{"SSE-C with a wrong key MD5", "PUT", "/refuse/k", map[string]string{
			"X-Amz-Server-Side-Encryption-Customer-Algorithm": "AES256",
			"X-Amz-Server-Side-Encryption-Customer-Key":       "KEY32",
			"X-Amz-Server-Side-Encryption-Customer-Key-Md5":   "x",
		}, 400, "InvalidArgument"},
		{"SSE-C with a short key", "PUT", "/refuse/k", map[string]string{
			"X-Amz-Server-Side-Encryption-Customer-Algorithm": "AES256",
			"X-Amz-Server-Side-Encryption-Customer-Key":       "c2hvcnQ=",
			"X-Amz-Server-Side-Encryption-Customer-Key-Md5":   "MJ1OYkTyvMGx5+5cO3rPBg==",
		}, 400, "InvalidArgument"},
		{"SSE-C with another algorithm", "PUT", "/refuse/k", map[string]string{
			"X-Amz-Server-Side-Encryption-Customer-Algorithm": "AES128",
			"X-Amz-Server-Side-Encryption-Customer-Key":       "KEY32",
			"X-Amz-Server-Side-Encryption-Customer-Key-Md5":   "KEYMD5",
		}, 400, "InvalidEncryptionAlgorithmError"},
		{"SSE-C without its MD5", "PUT", "/refuse/k", map[string]string{
			"X-Amz-Server-Side-Encryption-Customer-Algorithm": "AES256",
			"X-Amz-Server-Side-Encryption-Customer-Key":       "KEY32",
		}, 400, "InvalidArgument"},
		{"SSE-C and SSE-S3 together", "PUT", "/refuse/k", map[string]string{
			"X-Amz-Server-Side-Encryption":                    "AES256",
			"X-Amz-Server-Side-Encryption-Customer-Algorithm": "AES256",
			"X-Amz-Server-Side-Encryption-Customer-Key":       "KEY32",
			"X-Amz-Server-Side-Encryption-Customer-Key-Md5":   "KEYMD5",
		}, 400, "InvalidArgument"},
		{"SSE-C on GET of an object without it", "GET", "/refuse/there", map[string]string{
			"X-Amz-Server-Side-Encryption-Customer-Algorithm": "AES256",
			"X-Amz-Server-Side-Encryption-Customer-Key":       "KEY32",
			"X-Amz-Server-Side-Encryption-Customer-Key-Md5":   "KEYMD5",
		}, 400, "InvalidRequest"},
		{"SSE-S3 header on GET", "GET", "/refuse/there", map[string]string{"X-Amz-Server-Side-Encryption": "AES256"}, 400, "InvalidArgument"},
		{"SSE-C on a copy's source without it", "PUT", "/refuse/k", map[string]string{
			"X-Amz-Copy-Source": "refuse/there", "X-Amz-Copy-Source-Server-Side-Encryption-Customer-Algorithm": "AES256",
		}, 400, "InvalidArgument"},
		{"empty bucket in the path", "GET", "//refuse/there", nil, 400, "InvalidURI"},
	}
	sum := md5.Sum([]byte("0123456789abcdef0123456789abcdef"))
	for _, tt := range tests {
		for k, v := range tt.header {
			v = strings.ReplaceAll(v, "KEY32", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
			tt.header[k] = strings.ReplaceAll(v, "KEYMD5", base64.StdEncoding.EncodeToString(sum[:]))
		}
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.method == "PUT" {
				body = strings.NewReader("secret")
			}
			status, serr := do(t, e.signed(t, tt.method, tt.path, body, "", tt.header))
			if status != tt.wantStatus || serr.Code != tt.wantCode {
				t.Errorf("got %d %s, want %d %s", status, serr.Code, tt.wantStatus, tt.wantCode)
			}
		})
	}
	if _, err := e.st.Object("alice", "refuse", "k"); err == nil {
		t.Errorf("refuse/k was stored despite the refusals")
	}
}

// TestTruncatedBody: a body shorter than its Content-Length is the
// client's fault, answered 400 IncompleteBody, for inline and file-backed
// objects and for parts.
func TestTruncatedBody(t *testing.T) {
	e := newEnv(t)
	do(t, e.signed(t, "PUT", "/trunc", nil, "", nil))
	u, err := e.st.CreateUpload(t.Context(), "alice", "trunc", "m", cloudstore.PutOptions{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		size       int
	}{
		{"small object", "/trunc/small", 1000},
		{"large object", "/trunc/large", 1 << 20},
		{"part", "/trunc/m?partNumber=1&uploadId=" + u.ID, 1 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.signed(t, "PUT", tt.path, nil, "", nil)
			conn, err := net.DialTimeout("tcp", e.addr(), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			var head strings.Builder
			fmt.Fprintf(&head, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", r.URL.RequestURI(), r.Host, tt.size)
			for name, vs := range r.Header {
				fmt.Fprintf(&head, "%s: %s\r\n", name, vs[0])
			}
			head.WriteString("\r\n")
			conn.Write([]byte(head.String()))
			conn.Write(make([]byte, tt.size/2))
			conn.(*net.TCPConn).CloseWrite()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), "<Code>IncompleteBody</Code>") {
				t.Errorf("got %d %s, want 400 IncompleteBody", resp.StatusCode, data)
			}
		})
	}
}
