package nodeapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
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
	// The contract (§9): the interface description carries version
	// 0.4.0. And it says which operations need a credential
	// (decisions.md, "HTTP auth"), as their security requirements do.
	var doc struct {
		Info struct {
			Version     string `json:"version"`
			Description string `json:"description"`
		} `json:"info"`
		Paths map[string]map[string]struct {
			Security []map[string][]string `json:"security"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(resp.body, &doc); err != nil {
		t.Fatalf("GET /openapi.json: %v", err)
	}
	if doc.Info.Version != "0.4.0" {
		t.Errorf("GET /openapi.json: info.version %q, want the interface version 0.4.0", doc.Info.Version)
	}
	var secured []string
	for path, item := range doc.Paths {
		for method, op := range item {
			if len(op.Security) > 0 {
				secured = append(secured, strings.ToUpper(method)+" "+path)
			}
		}
	}
	slices.Sort(secured)
	if want := []string{"POST /tunnel/{leaseHash}/tcp", "POST /vms/{leaseHash}/exec"}; !slices.Equal(secured, want) {
		t.Errorf("GET /openapi.json: operations with a security requirement %v, want %v", secured, want)
	}
	for _, op := range secured {
		if !strings.Contains(doc.Info.Description, op) {
			t.Errorf("GET /openapi.json: info.description does not name %s among those that need a credential", op)
		}
	}
	if strings.Contains(doc.Info.Description, "No endpoint needs a credential") {
		t.Errorf("GET /openapi.json: info.description says no endpoint needs a credential")
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
