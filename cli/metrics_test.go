package cli

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// freeAddr returns a loopback address with a port free at the time.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func scrape(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestNodeMetrics: lattice node serves its metrics at GET /metrics on its
// API, or with --metrics on an address of their own (and then not on the
// API); the network and chat collectors are in them; --log-format json
// writes JSON lines naming the service.
func TestNodeMetrics(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	genesis := filepath.Join(dir, "genesis.json")
	mustRun(t, "genesis", "new", "--key", filepath.Join(dir, "k.json"), "--network", "cfgnet", "--work", "dev", "--out", genesis)
	wantAll := []string{"lattice_node_commit_duration_seconds_count", "lattice_node_ledger_blocks ", "lattice_node_peers 0",
		"lattice_chat_outbox_messages 0", "lattice_chat_subscribers 0", `lattice_http_requests_total{op="GET /node",server="node",status="200"}`}

	s := startServer(t, nodeReady, "node", "--data", filepath.Join(dir, "d1"), "--genesis", genesis, "--http", "127.0.0.1:0",
		"--p2p", "/ip4/127.0.0.1/tcp/0", "--log-level", "info", "--log-format", "json")
	getNode(t, s.url)
	code, text := scrape(t, s.url+"/metrics")
	if code != 200 {
		t.Fatalf("GET /metrics on the API: status %d, want 200", code)
	}
	for _, want := range wantAll {
		if !strings.Contains(text, want) {
			t.Errorf("GET /metrics on the API lacks %q", want)
		}
	}
	s.stop()
	if !strings.Contains(s.stderr.String(), `"service":"node"`) {
		t.Errorf("--log-format json: stderr has no JSON line naming the service:\n%s", s.stderr.String())
	}

	addr := freeAddr(t)
	s = startServer(t, nodeReady, "node", "--data", filepath.Join(dir, "d1"), "--http", "127.0.0.1:0",
		"--p2p", "/ip4/127.0.0.1/tcp/0", "--log-level", "error", "--metrics", addr)
	defer s.stop()
	getNode(t, s.url)
	if code, _ := scrape(t, s.url+"/metrics"); code != http.StatusNotFound {
		t.Errorf("GET /metrics on the API with --metrics: status %d, want 404", code)
	}
	code, text = scrape(t, "http://"+addr+"/metrics")
	if code != 200 {
		t.Fatalf("GET /metrics on --metrics %s: status %d, want 200", addr, code)
	}
	for _, want := range wantAll {
		if !strings.Contains(text, want) {
			t.Errorf("GET /metrics on --metrics lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("GET /metrics on --metrics:\n%s", text)
	}
}

// TestLogFormat: --log-format takes text or json, and nothing else.
func TestLogFormat(t *testing.T) {
	cleanEnv(t)
	wantFail(t, run(t, "node", "--data", t.TempDir(), "--log-format", "xml"), 2, "--log-format", "text or json")
}
