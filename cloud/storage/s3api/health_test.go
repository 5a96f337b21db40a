package s3api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3api"
)

// TestProbes: the endpoint answers load balancers' probes unsigned, never
// counts them against the address's failed authentications (before, a
// probe was read as an anonymous bucket request, failed, and after 60 of
// them every client at the address got 503 SlowDown), and a probe path
// never shadows what a virtual-hosted request addresses.
func TestProbes(t *testing.T) {
	e := startEnv(t, false, s3api.Options{Limits: s3api.Limits{AuthFailures: 3}})
	get := func(method, host, path string) (int, string) {
		t.Helper()
		r, err := http.NewRequest(method, e.srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			r.Host = host
		}
		resp, err := e.loopbackClient().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for range 20 { // far more than the address's 3 failures
		for _, p := range []string{s3api.ProbeLive, s3api.ProbeReady} {
			if code, body := get("GET", "", p); code != 200 || strings.TrimSpace(body) != "ok" {
				t.Fatalf("GET %s = %d %q, want 200 ok", p, code, body)
			}
		}
	}
	if code, _ := get("HEAD", "", s3api.ProbeReady); code != 200 {
		t.Errorf("HEAD %s = %d, want 200", s3api.ProbeReady, code)
	}
	if code, _ := get("POST", "", s3api.ProbeLive); code != http.StatusMethodNotAllowed {
		t.Errorf("POST %s = %d, want 405", s3api.ProbeLive, code)
	}
	// The address is not locked out: a signed request still works.
	if code, s3e := do(t, e.signed(t, "GET", "/", nil, "", nil)); code != 200 {
		t.Errorf("a signed request after the probes: %d %s, want 200", code, s3e.Code)
	}
	// Virtual-hosted, the path is a key of the bucket: not a probe.
	if code, body := get("GET", "somebucket.localhost", s3api.ProbeLive); code == 200 || strings.TrimSpace(body) == "ok" {
		t.Errorf("GET %s on a bucket's host = %d %q, want the bucket's answer, not a probe", s3api.ProbeLive, code, body)
	}
}

// TestProbeReadyWhileShuttingDown: readiness says so once the endpoint
// drains, while liveness stays 200.
func TestProbeReadyWhileShuttingDown(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := cloudstore.OpenDir(t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	api := s3api.New(st, s3api.Options{Logger: log})
	api.Wait() // closes the gate: the endpoint is shutting down
	for path, want := range map[string]int{s3api.ProbeReady: http.StatusServiceUnavailable, s3api.ProbeLive: 200} {
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != want {
			t.Errorf("GET %s while shutting down = %d %q, want %d", path, rec.Code, rec.Body, want)
		}
	}
}
