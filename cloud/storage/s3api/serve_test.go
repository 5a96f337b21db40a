package s3api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3api"
	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// logLines is a slog destination the tests read back: one JSON record a
// line.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// records returns the records logged with request id id.
func (l *logLines) records(t *testing.T, id string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["request_id"] == id {
			out = append(out, rec)
		}
	}
	return out
}

// has reports whether recs hold a record of that level and message.
func has(recs []map[string]any, level, msg string) bool {
	for _, r := range recs {
		if r["level"] == level && r["msg"] == msg {
			return true
		}
	}
	return false
}

// loggedEndpoint serves st with its log going to the returned lines.
func loggedEndpoint(t *testing.T, st *cloudstore.Store) (*httptest.Server, *logLines) {
	t.Helper()
	lines := &logLines{}
	api := s3api.New(st, s3api.Options{Logger: slog.New(slog.NewJSONHandler(lines, nil))})
	srv := httptest.NewServer(api)
	t.Cleanup(func() {
		srv.Close()
		api.Wait()
	})
	return srv, lines
}

// TestRequestsAreLogged: every request is logged, with its request id, to
// the Logger the endpoint was given; a failure of the server's own (a 500:
// here an object whose body file is gone) is also logged as an error, a
// client's mistake (a 404) is not.
func TestRequestsAreLogged(t *testing.T) {
	dir := t.TempDir()
	st, err := cloudstore.OpenDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now()
	if _, err := st.CreateBucket("alice", "logs", "", now); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", cloudstore.InlineMax+1) // kept in a body file
	obj, err := st.Put(context.Background(), "alice", "logs", "lost", strings.NewReader(big), cloudstore.PutOptions{ContentType: "text/plain", Max: 1 << 20, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if obj.Blob == "" {
		t.Fatalf("an object of %d bytes has no body file", len(big))
	}
	if err := os.Remove(filepath.Join(dir, "objects", obj.Blob[:2], obj.Blob)); err != nil {
		t.Fatal(err)
	}
	k, secret, err := st.CreateS3Key("alice", "test", cloudstore.PermReadWrite, "*", now)
	if err != nil {
		t.Fatal(err)
	}
	srv, lines := loggedEndpoint(t, st)

	for _, tc := range []struct {
		name, path string
		status     int
		code       string
		failure    bool // logged as an error
	}{
		{"missing key", "/logs/nothing-here", http.StatusNotFound, "NoSuchKey", false},
		{"body file gone", "/logs/lost", http.StatusInternalServerError, "InternalError", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := http.NewRequest("GET", srv.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			sigv4.Sign(r, k.AccessKeyID, secret, "us-east-1", sigv4.UnsignedPayload, time.Now())
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(body), "<Code>"+tc.code+"</Code>") {
				t.Fatalf("GET %s: got %d %s, want %d %s", tc.path, resp.StatusCode, body, tc.status, tc.code)
			}
			recs := lines.records(t, resp.Header.Get("X-Amz-Request-Id"))
			if got := has(recs, "INFO", "s3"); !got {
				t.Errorf("GET %s: access line in the endpoint's Logger: got %v, want true (records %v)", tc.path, got, recs)
			}
			if got := has(recs, "ERROR", "s3 request failed"); got != tc.failure {
				t.Errorf("GET %s: logged as a failure: got %v, want %v (records %v)", tc.path, got, tc.failure, recs)
			}
		})
	}
}

// TestPanicAnswers500: a request whose handling panics (here the store
// was closed under the endpoint, and Pebble panics) is answered 500
// InternalError, with the request id, and the panic is logged; it is not
// left to net/http, which would answer an empty 200.
func TestPanicAnswers500(t *testing.T) {
	st, err := cloudstore.OpenDir(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, lines := loggedEndpoint(t, st)
	st.Close()
	// Anonymous: the bucket's lookup (its policy, its public toggle) is the
	// first use of the store.
	r, err := http.NewRequest("GET", srv.URL+"/some-bucket/key", nil)
	if err != nil {
		t.Fatal(err)
	}
	status, serr := do(t, r)
	if status != http.StatusInternalServerError || serr.Code != "InternalError" {
		t.Errorf("GET after a panic: got %d %q, want 500 InternalError", status, serr.Code)
	}
	if got := has(lines.records(t, serr.RequestID), "ERROR", "s3 handler panic"); !got {
		t.Errorf("the panic logged: got %v, want true", got)
	}
}

// TestBucketMetricsByKind: each request to a bucket counts in its owner's
// metrics under its kind: reads as get, listings as list, PUT and POST as
// put, DELETE as delete, any other method as other.
func TestBucketMetricsByKind(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               cloudstore.Requests // counted so far
	}{
		{"PUT", "/kinds", "", 200, cloudstore.Requests{Put: 1}},
		{"PUT", "/kinds/k", "data", 200, cloudstore.Requests{Put: 2}},
		{"GET", "/kinds/k", "", 200, cloudstore.Requests{Put: 2, Get: 1}},
		{"HEAD", "/kinds/k", "", 200, cloudstore.Requests{Put: 2, Get: 2}},
		{"GET", "/kinds?list-type=2", "", 200, cloudstore.Requests{Put: 2, Get: 2, List: 1}},
		{"POST", "/kinds/m?uploads", "", 200, cloudstore.Requests{Put: 3, Get: 2, List: 1}},
		{"DELETE", "/kinds/k", "", 204, cloudstore.Requests{Put: 3, Get: 2, List: 1, Delete: 1}},
		{"PATCH", "/kinds/k", "", 405, cloudstore.Requests{Put: 3, Get: 2, List: 1, Delete: 1, Other: 1}},
		// A CORS preflight (here without its Origin, refused) is other too.
		{"OPTIONS", "/kinds/k", "", 400, cloudstore.Requests{Put: 3, Get: 2, List: 1, Delete: 1, Other: 2}},
	} {
		var body io.Reader
		if tc.body != "" {
			body = strings.NewReader(tc.body)
		}
		r := e.signed(t, tc.method, tc.path, body, "", nil)
		if status, serr := do(t, r); status != tc.status {
			t.Fatalf("%s %s: got %d %s, want %d", tc.method, tc.path, status, serr.Code, tc.status)
		}
		hours, err := e.st.Metrics("alice", "kinds", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var got cloudstore.Requests
		for _, h := range hours {
			got.Get += h.Requests.Get
			got.Put += h.Requests.Put
			got.Delete += h.Requests.Delete
			got.List += h.Requests.List
			got.Other += h.Requests.Other
		}
		if got != tc.want {
			t.Errorf("after %s %s: got %+v, want %+v", tc.method, tc.path, got, tc.want)
		}
	}
}
