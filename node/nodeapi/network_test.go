package nodeapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/ledgernet"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/wallet"
)

// TestNetworkInfo covers GET /network: a node on a peer-to-peer network
// answers its peer id, addresses and counters, the same identity as GET
// /node; a node without a network answers 404.
func TestNetworkInfo(t *testing.T) {
	h := newChatHarness(t, chatnet.Config{})
	var info struct {
		PeerID       string   `json:"peer_id"`
		Addrs        []string `json:"p2p_addrs"`
		Reachability string   `json:"reachability"`
	}
	r := h.getJSON("/network", &info)
	checkFields(t, r.body, "GET /network", "peer_id", "p2p_addrs", "reachability", "peers", "gossip_blocks", "gossip_votes",
		"invalid_messages", "held_future_blocks", "synced_blocks", "served_blocks", "intake_dropped",
		"publish_dropped", "unchecked_blocks", "unchecked_bytes", "unchecked_evicted", "active_elections",
		"confirmations", "forks_resolved", "unchecked_dropped", "equivocations", "conflicting_confirmations", "elections_refused", "feed_lags", "quorum")
	if info.PeerID != h.peer() {
		t.Errorf("GET /network peer_id: got %q, want %q", info.PeerID, h.peer())
	}
	if len(info.Addrs) == 0 {
		t.Errorf("GET /network p2p_addrs: got none, want the node's listen addresses")
	}
	// On loopback no peer can tell (AutoNAT never probes such addresses).
	if info.Reachability != "unknown" {
		t.Errorf("GET /network reachability: got %q, want unknown on loopback", info.Reachability)
	}
	for _, a := range info.Addrs {
		if !strings.HasSuffix(a, "/p2p/"+h.peer()) {
			t.Errorf("GET /network p2p_addrs: got %q, want it to end in /p2p/%s", a, h.peer())
		}
	}
	var node struct {
		PeerID string   `json:"peer_id"`
		Addrs  []string `json:"p2p_addrs"`
	}
	h.getJSON("/node", &node)
	if node.PeerID != info.PeerID || !slices.Equal(node.Addrs, info.Addrs) {
		t.Errorf("GET /node: got %q %v, want GET /network's %q %v", node.PeerID, node.Addrs, info.PeerID, info.Addrs)
	}

	alone := newHarness(t)
	checkError(t, alone.get("/network"), http.StatusNotFound, "GET /network without a network", "without a peer-to-peer network")
	var m map[string]json.RawMessage
	alone.getJSON("/node", &m)
	if got := string(m["peer_id"]) + " " + string(m["p2p_addrs"]); got != `"" []` {
		t.Errorf("GET /node without a network: got peer_id and p2p_addrs %s, want \"\" []", got)
	}
}

// fakeNetwork is a Network with fixed answers.
type fakeNetwork struct {
	addrs     []string
	elections []ledgernet.ElectionInfo
	noQuorum  bool
	splits    []ledgernet.Split
}

func (f fakeNetwork) PeerID() string                      { return otherPeer }
func (f fakeNetwork) Addrs() []string                     { return f.addrs }
func (f fakeNetwork) Reachability() string                { return "private" }
func (f fakeNetwork) Elections() []ledgernet.ElectionInfo { return f.elections }
func (f fakeNetwork) Stats() ledgernet.Stats              { return ledgernet.Stats{Peers: 2, Confirmations: 7} }
func (f fakeNetwork) Splits() []ledgernet.Split           { return f.splits }
func (f fakeNetwork) Quorum() ledgernet.QuorumStatus {
	q := ledgernet.QuorumStatus{Total: ledger.NewAmount(1000), Quorum: ledger.NewAmount(667), Online: ledger.NewAmount(800), Reachable: true}
	if f.noQuorum {
		q.Online, q.Reachable = ledger.NewAmount(600), false
	}
	return q
}

// serveWith serves h's node through a second API with opts.
func (h *harness) serveWith(opts nodeapi.Options) *harness {
	h.t.Helper()
	srv := httptest.NewServer(openapitest.Node.Handler(h.t, nodeapi.New(h.n, opts)))
	h.t.Cleanup(srv.Close)
	c := *h
	c.url, c.hc = srv.URL, srv.Client()
	return &c
}

// TestConflictElection covers a conflict's election, which a node shows
// while its network runs one at the fork's place, and a network without
// addresses, whose p2p_addrs are [] (never null).
func TestConflictElection(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, b := wallet.NewKey(), wallet.NewKey()
	g := h.genesis.Address()
	kept := h.send(h.genesis, a.Address(), 10, ledger.Native)
	forkBlk := h.signed(h.must(wallet.Send(wallet.HeadOf(ledger.Account{Address: g, Frontier: h.gblock.Hash,
		Balances: [2]ledger.Amount{ledger.NewAmount(supply)}}), b.Address(), ledger.NewAmount(20), ledger.Native, h.tick())), h.genesis)
	h.refuse(forkBlk, "fork", "fork")

	n := h.serveWith(nodeapi.Options{Network: fakeNetwork{elections: []ledgernet.ElectionInfo{{
		Root:    consensus.Root{Account: g, Previous: h.gblock.Hash},
		Round:   2,
		Tallies: []consensus.Contender{{Hash: kept.Hash, Tally: ledger.NewAmount(600), Final: ledger.NewAmount(200)}, {Hash: forkBlk.Hash}},
		Online:  ledger.NewAmount(1000),
		Quorum:  ledger.NewAmount(670),
	}}}})
	want := `"election":{"quorum":"670","online_weight":"1000","round":2,"tallies":[{"hash":"` + kept.Hash.String() +
		`","weight":"600","final_weight":"200"},{"hash":"` + forkBlk.Hash.String() + `","weight":"0","final_weight":"0"}]}`
	for _, path := range []string{"/conflicts", "/conflicts/" + g.String()} {
		if got := n.getJSON(path, nil).String(); !strings.Contains(got, want) {
			t.Errorf("GET %s: got %s, want it to contain %s", path, got, want)
		}
	}
	if got := h.getJSON("/conflicts", nil).String(); strings.Contains(got, "election") {
		t.Errorf("GET /conflicts without a network: got %s, want no election", got)
	}

	var info struct {
		Addrs []string `json:"p2p_addrs"`
	}
	for _, path := range []string{"/network", "/node"} {
		r := n.getJSON(path, &info)
		if info.Addrs == nil || len(info.Addrs) != 0 {
			t.Errorf("GET %s on a network without addresses: got %s, want p2p_addrs []", path, r)
		}
	}
}

// TestQuorumAndSplits: a node shows its side's quorum in GET /node, is not
// ready without it, and lists conflicting confirmations first in GET
// /conflicts, for the account they concern only.
func TestQuorumAndSplits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	g := h.genesis.Address()
	other := ledger.Address{9}
	confirmed, rival := ledger.Hash{1}, ledger.Hash{2}
	n := h.serveWith(nodeapi.Options{Network: fakeNetwork{splits: []ledgernet.Split{{
		Account: g, Previous: h.gblock.Hash, Confirmed: confirmed, Other: rival, Voters: []ledger.Address{other}, DetectedAt: 1767225600000,
	}}}})
	want := `{"account_address":"` + g.String() + `","previous_hash":"` + h.gblock.Hash.String() + `","block_hashes":["` +
		confirmed.String() + `","` + rival.String() + `"],"detected_at":"2026-01-01T00:00:00.000Z","split":{"confirmed":"` +
		confirmed.String() + `","other":"` + rival.String() + `","voters":["` + other.String() + `"]}}`
	for _, tt := range []struct {
		path string
		want string
	}{{"/conflicts", "[" + want + "]"}, {"/conflicts/" + g.String(), "[" + want + "]"}, {"/conflicts/" + other.String(), "[]"}} {
		if got := strings.ReplaceAll(n.getJSON(tt.path, nil).String(), "\n", ""); got != tt.want {
			t.Errorf("GET %s: got %s, want %s", tt.path, got, tt.want)
		}
	}
	if got := n.getJSON("/node", nil).String(); !strings.Contains(got, `"quorum":{"total":"1000","quorum":"667","online":"800","reachable":true}`) {
		t.Errorf("GET /node: got %s, want the quorum's state", got)
	}
	for _, tt := range []struct {
		name   string
		nw     fakeNetwork
		status int
		body   string
	}{
		{"quorum", fakeNetwork{}, http.StatusOK, `"status":"ok"`},
		{"no quorum", fakeNetwork{noQuorum: true}, http.StatusServiceUnavailable, `"status":"no_quorum"`},
	} {
		resp, err := n.hc.Get(h.serveWith(nodeapi.Options{Network: tt.nw}).url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.body) {
			t.Errorf("%s: GET /readyz = %d %s, want %d with %s", tt.name, resp.StatusCode, body, tt.status, tt.body)
		}
	}
}
