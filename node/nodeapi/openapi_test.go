package nodeapi_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"testing"

	"github.com/latticenet/lattice/docs/openapi"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
	"github.com/latticenet/lattice/node/chatnet"
)

// TestMain fails the package when a documented operation was answered by
// no test: every one is validated against a real response.
func TestMain(m *testing.M) {
	os.Exit(openapitest.Node.Covered(m.Run(), "/"))
}

// TestOpenAPIDescribesEveryRoute holds docs/openapi/node.json to the
// server's routes, both ways: those of a node with chat (nettest's) and of
// one that serves its metrics (the plain harness's), together.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	h := newChatHarness(t, chatnet.Config{})
	got := h.harness.api.Routes()
	for _, p := range newHarness(t).api.Routes() {
		if !slices.Contains(got, p) {
			got = append(got, p)
		}
	}
	openapitest.Node.Describes(t, got)
}

// TestOpenAPIServed checks that GET /openapi.json is the embedded document.
func TestOpenAPIServed(t *testing.T) {
	h := newHarness(t)
	resp := h.get("/openapi.json")
	if resp.status != 200 {
		t.Fatalf("GET /openapi.json: got status %d, want 200", resp.status)
	}
	if _, err := openapitest.New(resp.body); err != nil {
		t.Fatalf("GET /openapi.json: %v", err)
	}
}

// TestOpenAPIServedConditional checks that GET /openapi.json honours
// Range and If-Match as the document says: 206, 416 and 412.
func TestOpenAPIServedConditional(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name, header, value string
		status              int
		body                string
	}{
		{"a range", "Range", "bytes=0-9", http.StatusPartialContent, string(openapi.Node[:10])},
		{"an unsatisfiable range", "Range", fmt.Sprintf("bytes=%d-", len(openapi.Node)+1), http.StatusRequestedRangeNotSatisfiable, ""},
		{"a failed If-Match", "If-Match", `"x"`, http.StatusPreconditionFailed, ""},
	} {
		req, err := http.NewRequest(http.MethodGet, h.url+"/openapi.json", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(tc.header, tc.value)
		res, err := h.hc.Do(req)
		if err != nil {
			t.Fatalf("GET /openapi.json with %s: %v", tc.name, err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("GET /openapi.json with %s: %v", tc.name, err)
		}
		if res.StatusCode != tc.status {
			t.Errorf("GET /openapi.json with %s: got status %d, want %d", tc.name, res.StatusCode, tc.status)
		}
		if tc.body != "" && string(body) != tc.body {
			t.Errorf("GET /openapi.json with %s: got body %q, want %q", tc.name, body, tc.body)
		}
	}
}
