package cdnedge

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestProbes: at an address no deployment answers for, the edge answers
// load balancers' probes (before, 404 "no CDN deployment"); a deployment's
// own host never gets a probe's answer, whatever its site's paths.
func TestProbes(t *testing.T) {
	v := newEnv(t, nil)
	o := v.origin(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "the customer's "+r.URL.Path)
	})
	v.deploy("site", o.srv.URL, -1)
	probe := func(method, path string) (int, string) {
		t.Helper()
		r, err := http.NewRequest(method, v.srv.URL+path, nil) // Host: the edge's own address
		if err != nil {
			t.Fatal(err)
		}
		resp, err := v.client.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, p := range []string{ProbeLive, ProbeReady} {
		if code, body := probe("GET", p); code != 200 || strings.TrimSpace(body) != "ok" {
			t.Errorf("GET %s = %d %q, want 200 ok", p, code, body)
		}
	}
	if code, _ := probe("DELETE", ProbeLive); code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE %s = %d, want 405", ProbeLive, code)
	}
	if code, _ := probe("GET", "/elsewhere"); code != http.StatusNotFound {
		t.Errorf("GET /elsewhere at the edge's address = %d, want 404", code)
	}
	if r := v.get("site", ProbeLive); r.status != 200 || r.body != "the customer's "+ProbeLive {
		t.Errorf("GET %s on a deployment = %s, want the customer's page", ProbeLive, r)
	}
}
