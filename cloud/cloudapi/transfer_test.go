package cloudapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/internal/testkit/apitest"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
)

// TestTransferOutlivesReadTimeout: an upload slower than the server's
// ReadTimeout (sized for ordinary requests) still completes, because the
// transfer endpoints extend their own deadlines.
func TestTransferOutlivesReadTimeout(t *testing.T) {
	dir := t.TempDir()
	st, err := cloudstore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.OpenBlobs(filepath.Join(dir, "objects")); err != nil {
		t.Fatal(err)
	}
	acc := apitest.Accounts(t)
	_, key, _ := acc.CreateKey("acme", "", false, time.Now())
	st.CreateBucket("acme", "slow", "", time.Now())
	srv := httptest.NewUnstartedServer(cloudapi.New(st, acc, cloudapi.Options{RatePerSecond: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()

	body := bytes.Repeat([]byte("s"), 100_000)
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/storage/buckets/slow/upload?key=k HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", key, len(body))
	// Send the body in pieces over ~0.8 s, past the 300 ms ReadTimeout.
	for i := 0; i < len(body); i += len(body) / 8 {
		conn.Write(body[i:min(i+len(body)/8, len(body))])
		time.Sleep(100 * time.Millisecond)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufioReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("slow upload: %d %s", resp.StatusCode, got)
	}
	if o, err := st.Object("acme", "slow", "k"); err != nil || o.Size != int64(len(body)) {
		t.Errorf("stored object: %+v, %v", o, err)
	}
}

func bufioReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }

// fairEnv is a store with one account's bucket, served with opts.
func fairEnv(t *testing.T, opts cloudapi.Options) (url, key string) {
	t.Helper()
	dir := t.TempDir()
	st, err := cloudstore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.OpenBlobs(filepath.Join(dir, "objects")); err != nil {
		t.Fatal(err)
	}
	acc := apitest.Accounts(t)
	_, key, _ = acc.CreateKey("acme", "", false, time.Now())
	st.CreateBucket("acme", "fair", "", time.Now())
	opts.RatePerSecond = -1
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(openapitest.Cloud.Handler(t, cloudapi.New(st, acc, opts)))
	t.Cleanup(srv.Close)
	return srv.URL, key
}

// rawRequest writes head (with a blank line after) and then body to the
// server, and reads the answer within wait.
func rawRequest(t *testing.T, url, head string, body []byte, wait time.Duration) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	io.WriteString(conn, head+"\r\n")
	conn.Write(body)
	conn.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufioReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer within %v: %v", wait, err)
	}
	got, _ := io.ReadAll(resp.Body)
	return resp, string(got)
}

// TestDeclaredSizeRefusedAtOnce: an upload that declares more than the
// limit is refused before its body is sent, not after.
func TestDeclaredSizeRefusedAtOnce(t *testing.T) {
	url, key := fairEnv(t, cloudapi.Options{})
	for _, tt := range []struct{ name, path string }{
		{"PUT of an object", "PUT /api/storage/buckets/fair/objects/big HTTP/1.1"},
		{"raw upload", "POST /api/storage/buckets/fair/upload?key=big HTTP/1.1"},
	} {
		head := fmt.Sprintf("%s\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n",
			tt.path, key, int64(cloudapi.MaxObjectSize)+2<<20)
		resp, body := rawRequest(t, url, head, nil, 2*time.Second) // no body sent at all
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "payload_too_large") {
			t.Errorf("%s declaring over the limit: got %d %s, want 413 payload_too_large", tt.name, resp.StatusCode, body)
		}
	}
}

// TestStalledBodyIs408: a body that stops arriving is answered 408
// request_timeout, with no socket address in the message, for raw bodies
// and forms alike.
func TestStalledBodyIs408(t *testing.T) {
	url, key := fairEnv(t, cloudapi.Options{TransferTimeout: 300 * time.Millisecond})
	form := "--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\npart of a fi"
	for _, tt := range []struct {
		name, path, ctype, body string
	}{
		{"PUT of an object", "PUT /api/storage/buckets/fair/objects/stalled HTTP/1.1", "application/octet-stream", "ten bytes."},
		{"raw upload", "POST /api/storage/buckets/fair/upload?key=stalled HTTP/1.1", "application/octet-stream", "ten bytes."},
		{"form upload", "POST /api/storage/buckets/fair/upload HTTP/1.1", "multipart/form-data; boundary=XX", form},
	} {
		head := fmt.Sprintf("%s\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: 1000\r\n",
			tt.path, key, tt.ctype)
		resp, body := rawRequest(t, url, head, []byte(tt.body), 5*time.Second) // 1000 declared, fewer sent, then silence
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "request_timeout") {
			t.Errorf("%s that stalls: got %d %s, want 408 request_timeout", tt.name, resp.StatusCode, body)
		}
		if strings.Contains(body, "127.0.0.1") {
			t.Errorf("%s that stalls: the message shows a socket address: %s", tt.name, body)
		}
	}
}

// TestUserContentHeaders: downloads are nosniff, and types a browser
// would run are attachments.
func TestUserContentHeaders(t *testing.T) {
	url, key := fairEnv(t, cloudapi.Options{})
	for _, tt := range []struct {
		ctype      string
		attachment bool
	}{
		{"text/html; charset=utf-8", true},
		{"image/svg+xml", true},
		{"application/javascript", true},
		{"application/atom+xml", true},
		{"not a media type", true},
		{"image/png", false},
		{"text/plain", false},
		{"application/octet-stream", false},
	} {
		req, _ := http.NewRequest("PUT", url+"/api/storage/buckets/fair/objects/page", strings.NewReader("<script>alert(1)</script>"))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", tt.ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		req, _ = http.NewRequest("GET", url+"/api/storage/buckets/fair/download/page", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q, want nosniff", tt.ctype, got)
		}
		if _, _, err := mime.ParseMediaType(tt.ctype); err != nil {
			if got, want := resp.Header.Get("Content-Type"), "application/octet-stream"; got != want {
				t.Errorf("%s: Content-Type got %v, want %v", tt.ctype, got, want)
			}
		}
		disp := resp.Header.Get("Content-Disposition")
		if got := strings.HasPrefix(disp, "attachment"); got != tt.attachment {
			t.Errorf("%s: Content-Disposition %q: attachment %v, want %v", tt.ctype, disp, got, tt.attachment)
		}
	}
}
