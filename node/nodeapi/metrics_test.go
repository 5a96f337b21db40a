package nodeapi_test

import (
	"strings"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// TestMetrics: GET /metrics counts blocks by type and outcome, commits,
// and the API's requests by route and status, and shows the ledger's size.
func TestMetrics(t *testing.T) {
	h := newHarness(t)
	bob := wallet.NewKey()
	send := h.submit(h.sendBlock(h.genesis, bob.Address(), 5, ledger.Native))
	h.submit(h.receiveBlock(bob, send))
	h.submit(send) // a duplicate
	bad := h.sendBlock(h.genesis, bob.Address(), 1, ledger.Native)
	bad.Signature[0] ^= 1
	h.refuse(bad, "a send with a bad signature", "signature")
	h.get("/accounts/" + bob.Address().String())

	r := h.get("/metrics")
	if r.status != 200 {
		t.Fatalf("GET /metrics: status %d, want 200", r.status)
	}
	text := string(r.body)
	for _, want := range []string{
		`lattice_node_blocks_total{result="applied",type="send"} 1`,
		`lattice_node_blocks_total{result="applied",type="receive"} 1`,
		`lattice_node_blocks_total{result="duplicate",type="send"} 1`,
		`lattice_node_blocks_total{result="refused",type="send"} 1`,
		`lattice_node_ledger_blocks 3`,
		`lattice_node_failed 0`,
		`lattice_http_requests_total{op="POST /blocks/send",server="node",status="200"} 2`,
		`lattice_http_requests_total{op="POST /blocks/send",server="node",status="400"} 1`,
		`lattice_http_requests_total{op="GET /accounts/{address}",server="node",status="200"} 1`,
		`lattice_node_commit_duration_seconds_count `,
		`lattice_node_ledger_disk_bytes `,
		`go_goroutines `,
		`process_resident_memory_bytes `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("GET /metrics lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("GET /metrics:\n%s", grepLattice(text))
	}
}

func grepLattice(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "lattice_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
