package cloudapi_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/docs/openapi"
	"github.com/latticenet/lattice/internal/testkit/apitest"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
)

// TestMain fails the package when one of its documented operations was
// answered by no test: every one is validated against a real response.
func TestMain(m *testing.M) {
	os.Exit(openapitest.Cloud.Covered(m.Run(), "/api/storage/", "/api/admin/", "/healthz", "/readyz", "/openapi.json"))
}

// TestOpenAPIServed checks that GET /openapi.json answers the embedded
// document, without an API key.
func TestOpenAPIServed(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	r := apitest.Do(t, "GET", a.url+"/openapi.json", "", "")
	apitest.Want(t, "GET /openapi.json", r, 200)
	if !bytes.Equal(r.Body, openapi.Cloud) {
		t.Fatalf("GET /openapi.json: got %d bytes, want the %d of docs/openapi/cloud.json", len(r.Body), len(openapi.Cloud))
	}
}

// TestDownloadPreconditions: the download answers the documented 412 for
// a failed If-Match or If-Unmodified-Since, with no body, and several
// ranges as one multipart/byteranges 206.
func TestDownloadPreconditions(t *testing.T) {
	a := newObjAPI(t)
	body := []byte("0123456789abcdefghij")
	wantObjects(t, "upload", a.uploadRaw(a.acme, "pics", "p.txt", "text/plain", body))
	etag := `"` + md5hex(body) + `"`
	for _, tt := range []struct {
		name  string
		hdr   []string
		want  int
		empty bool
	}{
		{"If-Match another ETag", []string{"If-Match", `"other"`}, http.StatusPreconditionFailed, true},
		{"If-Match its ETag", []string{"If-Match", etag}, http.StatusOK, false},
		{"If-Match *", []string{"If-Match", "*"}, http.StatusOK, false},
		{"If-Unmodified-Since before", []string{"If-Unmodified-Since", t0.Add(-time.Hour).Format(http.TimeFormat)}, http.StatusPreconditionFailed, true},
		{"If-Unmodified-Since after", []string{"If-Unmodified-Since", t0.Add(time.Hour).Format(http.TimeFormat)}, http.StatusOK, false},
	} {
		r := a.download(a.acme, "pics", "p.txt", tt.hdr...)
		if got, want := r.status, tt.want; got != want {
			t.Errorf("%s: got %v, want %v", tt.name, got, want)
		}
		if got, want := len(r.body) == 0, tt.empty; got != want {
			t.Errorf("%s: empty body got %v, want %v", tt.name, got, want)
		}
	}
	r := a.download(a.acme, "pics", "p.txt", "Range", "bytes=0-1,5-6")
	if got, want := r.status, http.StatusPartialContent; got != want {
		t.Fatalf("two ranges: got %v, want %v", got, want)
	}
	if got, want := r.header.Get("Content-Type"), "multipart/byteranges"; !strings.HasPrefix(got, want) {
		t.Errorf("two ranges: Content-Type got %v, want %v", got, want)
	}
	if got, want := strings.Count(string(r.body), "Content-Range: bytes "), 2; got != want {
		t.Errorf("two ranges: parts got %v, want %v", got, want)
	}
}

// TestOpenAPIConditional: GET /openapi.json is served by
// http.ServeContent, so it answers ranges and preconditions as documented.
func TestOpenAPIConditional(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	for _, tt := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"a range", []string{"Range", "bytes=0-9"}, http.StatusPartialContent},
		{"a range past the end", []string{"Range", fmt.Sprintf("bytes=%d-", len(openapi.Cloud)+10)}, http.StatusRequestedRangeNotSatisfiable},
		{"If-None-Match *", []string{"If-None-Match", "*"}, http.StatusNotModified},
		{"If-Match an ETag", []string{"If-Match", `"x"`}, http.StatusPreconditionFailed},
	} {
		if got, want := a.do("GET", "/openapi.json", "", "", tt.hdr...).status, tt.want; got != want {
			t.Errorf("%s: got %v, want %v", tt.name, got, want)
		}
	}
	if r := a.do("GET", "/openapi.json", "", "", "Range", "bytes=0-9"); string(r.body) != string(openapi.Cloud[:10]) {
		t.Errorf("a range: got %q, want %q", r.body, openapi.Cloud[:10])
	}
}

// TestShuttingDownAnswers503: once Wait has begun, every request, the
// probes' and the document's included, answers 503 unavailable.
func TestShuttingDownAnswers503(t *testing.T) {
	st, err := cloudstore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	acc := apitest.Accounts(t)
	_, admin, err := acc.EnsureAdmin(t0, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	api := cloudapi.New(st, acc, cloudapi.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(openapitest.Cloud.Handler(t, api))
	t.Cleanup(srv.Close)
	api.Wait()
	a := &testAPI{t: t, url: srv.URL}
	for _, path := range []string{"/healthz", "/readyz", "/openapi.json", "/api/storage/buckets", "/api/admin/keys"} {
		r := a.do("GET", path, admin, "")
		wantError(t, "GET "+path+" while shutting down", r, http.StatusServiceUnavailable, "unavailable")
		if r.header.Get("X-Request-Id") == "" {
			t.Errorf("GET %s while shutting down: got no X-Request-Id, want one on every answer", path)
		}
	}
}
