package cloudapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/cloudapi"
)

// TestHealth: /healthz and /readyz answer without an API key and without
// counting against a rate limit. (/readyz answering 503 on a read-only
// store is tested against the real binary on a full disk, in cmd/lattice.)
func TestHealth(t *testing.T) {
	a := newAPI(t, cloudapi.Options{RatePerSecond: 1, Burst: 1})
	for range 5 {
		for _, path := range []string{"/healthz", "/readyz"} {
			resp, err := http.Get(a.url + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"ok"`) {
				t.Errorf("GET %s: %d %s, want 200 ok", path, resp.StatusCode, body)
			}
		}
	}
}

// TestOperatorPathsAllow: the paths outside /api answer another method
// than GET and HEAD with 405 and the Allow header, like the API's routes.
func TestOperatorPathsAllow(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	for _, path := range []string{"/healthz", "/readyz", "/openapi.json"} {
		r := a.do("POST", path, "", "")
		wantError(t, "POST "+path, r, http.StatusMethodNotAllowed, "method_not_allowed")
		if got, want := r.header.Get("Allow"), "GET, HEAD"; got != want {
			t.Errorf("POST %s: Allow got %v, want %v", path, got, want)
		}
	}
}
