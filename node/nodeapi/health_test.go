package nodeapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestHealth: /healthz and /readyz answer 200 on a working node. (A node
// whose engine failed answers /readyz 503 and then shuts down; the engine's
// failure is tested in package node.)
func TestHealth(t *testing.T) {
	h := newHarness(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := h.hc.Get(h.url + path)
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
