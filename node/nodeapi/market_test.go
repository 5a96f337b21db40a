package nodeapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/testkit/openapitest"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/marketnet"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/statechain"
)

// The marketplace's endpoints, GET /providers and POST /lease/request, on
// nettest clusters (a real marketplace needs p2p hosts): the API is node
// 0's; providers announce their capacity to every node and answer requests
// for offers over streams. The clocks are real ones: offers expire 5
// minutes after they are made.

// marketHarness is a harness on node 0 of a cluster.
type marketHarness struct {
	*harness
	c       *nettest.Cluster
	network ledger.Hash
}

func newMarketHarness(t *testing.T, opts nettest.Options) *marketHarness {
	t.Helper()
	opts.Wrap = func(h http.Handler) http.Handler { return openapitest.Node.Handler(t, h) }
	c := nettest.Start(t, opts)
	return &marketHarness{harness: nodeHarness(t, c, 0), c: c, network: c.Network.Genesis.Hash}
}

// nodeHarness is a harness on node i of c.
func nodeHarness(t *testing.T, c *nettest.Cluster, i int) *harness {
	nd := c.Nodes[i]
	hc := nd.API.Client()
	hc.Timeout = 30 * time.Second
	return &harness{t: t, n: nd.N, api: nd.Handler, url: nd.API.URL, hc: hc}
}

// strictJSON decodes data into v, failing on unknown fields.
func strictJSON(t *testing.T, data []byte, v any, what string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: decode %s: %v", what, data, err)
	}
}

// providers GETs /providers and checks each provider's fields.
func (h *harness) providers() []market.Provider {
	h.t.Helper()
	r := h.getJSON("/providers", nil)
	var raws []json.RawMessage
	strictJSON(h.t, r.body, &raws, "GET /providers")
	for _, p := range raws {
		checkFields(h.t, p, "GET /providers: provider", "account", "total", "free", "active_leases", "node_peer", "updated_at")
	}
	var ps []market.Provider
	strictJSON(h.t, r.body, &ps, "GET /providers")
	return ps
}

// offers POSTs req to /lease/request, expects 200 and checks every offer:
// signed by its provider for network, for req, at the default
// parameters' cost and stake (a new state chain sets none), at the
// chain's tip (0) and for 5 minutes; cheapest first then by provider,
// refusals by provider, and every provider asked accounted for.
func (h *harness) offers(network ledger.Hash, req market.Request) market.Offers {
	h.t.Helper()
	what := fmt.Sprintf("POST /lease/request %+v", req)
	before := time.Now().UnixMilli()
	r := h.post("/lease/request", req)
	after := time.Now().UnixMilli()
	h.okJSON(r, what, nil)
	checkFields(h.t, r.body, what, "offers", "asked", "refused")
	var got market.Offers
	strictJSON(h.t, r.body, &got, what)
	if got.Offers == nil || got.Refused == nil {
		h.t.Fatalf("%s: offers or refused is null: %s", what, r.body)
	}
	cost, stake, err := market.Quote(statechain.Defaults(), req)
	if err != nil {
		h.t.Fatal(err)
	}
	for i, o := range got.Offers {
		if err := o.Check(network); err != nil {
			h.t.Errorf("%s: offer %d does not verify: %v", what, i, err)
		}
		if o.Request != req || o.Cost != cost || o.Stake != stake || o.StateIndex != 0 {
			h.t.Errorf("%s: offer %d is %+v, want %+v at cost %s, stake %s, index 0", what, i, o, req, cost, stake)
		}
		if ttl := 5 * time.Minute.Milliseconds(); o.Expiry < before+ttl || o.Expiry > after+ttl {
			h.t.Errorf("%s: offer %d expires at %d, want 5 minutes after it was made (%d to %d)", what, i, o.Expiry, before+ttl, after+ttl)
		}
		if i > 0 {
			prev := got.Offers[i-1]
			if c := prev.Cost.Cmp(o.Cost); c > 0 || c == 0 && prev.Provider.String() >= o.Provider.String() {
				h.t.Errorf("%s: offers not cheapest first, then by provider: %+v", what, got.Offers)
			}
		}
	}
	for i, f := range got.Refused {
		if f.Reason == "" {
			h.t.Errorf("%s: refusal %d has no reason", what, i)
		}
		if i > 0 && got.Refused[i-1].Provider.String() >= f.Provider.String() {
			h.t.Errorf("%s: refusals not by provider: %+v", what, got.Refused)
		}
	}
	if got.Asked != len(got.Offers)+len(got.Refused) {
		h.t.Errorf("%s: asked %d, but %d offers and %d refusals", what, got.Asked, len(got.Offers), len(got.Refused))
	}
	return got
}

// validRequest is a valid ResourceRequest's JSON with fields changed.
func validRequest(edits map[string]any) string {
	m := map[string]any{"vcpus": 1, "memory_mb": 512, "disk_gb": 5, "duration": 3600}
	for k, v := range edits {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	data, _ := json.Marshal(m)
	return string(data)
}

// TestMarketAbsent: a node without a marketplace answers both endpoints
// 404 `no endpoint METHOD PATH`.
func TestMarketAbsent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	checkError(t, h.get("/providers"), http.StatusNotFound, "GET /providers", "no endpoint GET /providers")
	checkError(t, h.post("/lease/request", validRequest(nil)), http.StatusNotFound, "POST /lease/request", "no endpoint POST /lease/request")
}

// TestMarketNoProviders: a node that heard of no provider lists none and
// answers a valid request with no offers; every malformed or out-of-range
// request is 400 `invalid resource request: ...`; once the node shuts
// down, both endpoints answer 503.
func TestMarketNoProviders(t *testing.T) {
	t.Parallel()
	h := newMarketHarness(t, nettest.Options{Nodes: 1})
	if r := h.getJSON("/providers", nil); r.String() != "[]\n" {
		t.Errorf("GET /providers = %s, want []", r)
	}
	const none = `{"offers":[],"asked":0,"refused":[]}` + "\n"
	if r := h.post("/lease/request", validRequest(nil)); r.status != http.StatusOK || r.String() != none {
		t.Errorf("POST /lease/request: %d %s, want 200 %s", r.status, r, none)
	}
	if got := h.offers(h.network, market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 3600}); got.Asked != 0 || len(got.Offers) != 0 {
		t.Errorf("offers without providers: %+v", got)
	}
	// Every bound is inclusive.
	for _, req := range []market.Request{
		{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60},
		{VCPUs: 65536, MemoryMB: 1 << 30, DiskGB: 1 << 24, Duration: 31536000},
	} {
		h.offers(h.network, req)
	}
	// A body of exactly 1024 bytes is taken.
	exact := validRequest(nil)
	exact = exact[:len(exact)-1] + strings.Repeat(" ", 1024-len(exact)) + "}"
	if r := h.post("/lease/request", exact); r.status != http.StatusOK || r.String() != none {
		t.Errorf("POST /lease/request of 1024 bytes: %d %s, want 200 %s", r.status, r, none)
	}

	over := validRequest(nil)
	over = over[:len(over)-1] + strings.Repeat(" ", 1025-len(over)) + "}"
	for _, tc := range []struct {
		name, body string
		fragments  []string
	}{
		{"an empty body", "", nil},
		{"malformed JSON", `{"vcpus":1,`, nil},
		{"not an object", `[1,512,5,3600]`, []string{"array"}},
		{"an unknown field", validRequest(map[string]any{"gpus": 1}), []string{`unknown field "gpus"`}},
		{"trailing data", validRequest(nil) + " x", []string{"trailing data"}},
		{"a second object", validRequest(nil) + validRequest(nil), []string{"trailing data"}},
		{"a stray brace", validRequest(nil) + "}", []string{"trailing data"}},
		{"a body over 1024 bytes", over, []string{"body exceeds 1024 bytes"}},
		{"a string", validRequest(map[string]any{"vcpus": "1"}), []string{"vcpus"}},
		{"a fraction", validRequest(map[string]any{"duration": 60.5}), []string{"duration"}},
		{"beyond 64 bits", `{"vcpus":9223372036854775808,"memory_mb":512,"disk_gb":5,"duration":3600}`, []string{"vcpus"}},
		{"null", `null`, []string{"vcpus 0: want 1 to 65536"}},
		{"a missing field", validRequest(map[string]any{"duration": nil}), []string{"duration 0 s: want 60 to 31536000"}},
		{"vcpus 0", validRequest(map[string]any{"vcpus": 0}), []string{"vcpus 0: want 1 to 65536"}},
		{"vcpus -1", validRequest(map[string]any{"vcpus": -1}), []string{"vcpus -1: want 1 to 65536"}},
		{"vcpus 65537", validRequest(map[string]any{"vcpus": 65537}), []string{"vcpus 65537: want 1 to 65536"}},
		{"memory_mb 511", validRequest(map[string]any{"memory_mb": 511}), []string{"memory_mb 511: want 512 to 1073741824"}},
		{"memory_mb 2^30+1", validRequest(map[string]any{"memory_mb": 1<<30 + 1}), []string{"memory_mb 1073741825: want 512 to 1073741824"}},
		{"disk_gb 4", validRequest(map[string]any{"disk_gb": 4}), []string{"disk_gb 4: want 5 to 16777216"}},
		{"disk_gb 2^24+1", validRequest(map[string]any{"disk_gb": 1<<24 + 1}), []string{"disk_gb 16777217: want 5 to 16777216"}},
		{"duration 59", validRequest(map[string]any{"duration": 59}), []string{"duration 59 s: want 60 to 31536000"}},
		{"duration 31536001", validRequest(map[string]any{"duration": 31536001}), []string{"duration 31536001 s: want 60 to 31536000"}},
	} {
		what := "POST /lease/request with " + tc.name
		msg := checkError(t, h.post("/lease/request", tc.body), http.StatusBadRequest, what, tc.fragments...)
		if !strings.HasPrefix(msg, "invalid resource request: ") || strings.Contains(msg, "invalid: ") {
			t.Errorf("%s: error %q does not start with `invalid resource request: `, or says invalid twice", what, msg)
		}
	}

	// A public address has MaxOfferRequestsPerSource open
	// at once; others and loopback are not held up by it.
	var held []string
	for range nodeapi.MaxOfferRequestsPerSource {
		held = append(held, "192.0.2.7")
	}
	h.holdAll("offers", held...)
	r := h.from("192.0.2.7", "POST", "/lease/request", validRequest(nil))
	checkError(t, r, http.StatusTooManyRequests, "POST /lease/request past the address's bound", "the most one address may have at once")
	checkRetryAfter(t, r, "1", "POST /lease/request past the address's bound")
	for _, r := range []resp{h.from("2001:db8::7", "POST", "/lease/request", validRequest(nil)), h.post("/lease/request", validRequest(nil))} {
		if r.status != http.StatusOK || r.String() != none {
			t.Errorf("POST /lease/request from another address: %d %s, want 200 %s", r.status, r, none)
		}
	}

	// Shutting down: the API refuses new requests.
	h.api.Wait()
	checkError(t, h.get("/providers"), http.StatusServiceUnavailable, "GET /providers while shutting down", "the node is shutting down")
	checkError(t, h.post("/lease/request", validRequest(nil)), http.StatusServiceUnavailable, "POST /lease/request while shutting down", "the node is shutting down")
}

// TestMarketOffers: two providers on other nodes are listed once their
// records reach the API's node, with all their capacity free; both offer
// on a request they can take, at the network's price; one beyond a
// provider's capacity is refused by it, saying why; one beyond both has no
// offer. A provider's own node asks it without a stream.
func TestMarketOffers(t *testing.T) {
	t.Parallel()
	small := market.Resources{VCPUs: 2, MemoryMB: 2048, DiskGB: 20}
	big := market.Resources{VCPUs: 8, MemoryMB: 16384, DiskGB: 200}
	h := newMarketHarness(t, nettest.Options{Nodes: 3, Providers: map[int]market.Resources{1: small, 2: big}})
	c := h.c
	c.WaitFor("every node lists both providers", 30*time.Second, func(i int) bool {
		ps, _ := c.Nodes[i].Market.Providers()
		return len(ps) == 2
	})
	smallKey, bigKey := c.Nodes[1].ProviderKey.Address(), c.Nodes[2].ProviderKey.Address()

	ps := h.providers()
	if len(ps) != 2 || ps[0].Account.String() >= ps[1].Account.String() {
		t.Fatalf("GET /providers: %+v, want both providers in ascending order of account", ps)
	}
	now := time.Now().UnixMilli()
	for _, p := range ps {
		want, node := small, 1
		if p.Account == bigKey {
			want, node = big, 2
		} else if p.Account != smallKey {
			t.Fatalf("GET /providers: an unknown provider %s", p.Account)
		}
		if p.Total != want || p.Free != want || p.ActiveLeases != 0 || p.NodePeer != c.Nodes[node].Host.ID().String() ||
			p.UpdatedAt <= c.Network.Genesis.Timestamp || p.UpdatedAt > now {
			t.Errorf("GET /providers: provider of node %d is %+v, want total = free = %+v, no lease, its node's peer", node, p, want)
		}
	}

	// Both offer, at 3600 × (100 + 512 + 5) with half of it staked.
	req := market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 3600}
	for i := range 2 {
		got := nodeHarness(t, c, i).offers(h.network, req) // node 1 is a provider
		if got.Asked != 2 || len(got.Offers) != 2 || len(got.Refused) != 0 {
			t.Fatalf("node %d: POST /lease/request: %+v, want offers from both providers", i, got)
		}
		for _, o := range got.Offers {
			node := 1
			if o.Provider == bigKey {
				node = 2
			}
			if o.Cost != ledger.NewAmount(2221200) || o.Stake != ledger.NewAmount(1110600) || o.NodePeer != c.Nodes[node].Host.ID().String() {
				t.Errorf("node %d: offer %+v, want cost 2221200, stake 1110600, node %d's peer", i, o, node)
			}
		}
	}

	// Beyond the small provider: only the big one offers.
	large := market.Request{VCPUs: 4, MemoryMB: 4096, DiskGB: 50, Duration: 60}
	got := h.offers(h.network, large)
	if got.Asked != 2 || len(got.Offers) != 1 || got.Offers[0].Provider != bigKey || len(got.Refused) != 1 || got.Refused[0].Provider != smallKey ||
		got.Refused[0].Reason != "insufficient capacity: 2 vCPU, 2048 MB memory, 20 GB disk free, 4 vCPU, 4096 MB memory, 50 GB disk asked" {
		t.Errorf("POST /lease/request beyond the small provider: %+v", got)
	}

	// Beyond both: no offer, both refusals.
	got = h.offers(h.network, market.Request{VCPUs: 16, MemoryMB: 512, DiskGB: 5, Duration: 60})
	if got.Asked != 2 || len(got.Offers) != 0 || len(got.Refused) != 2 {
		t.Fatalf("POST /lease/request beyond both providers: %+v", got)
	}
	for _, f := range got.Refused {
		if !strings.HasPrefix(f.Reason, "insufficient capacity: ") {
			t.Errorf("POST /lease/request beyond both providers: refusal %+v", f)
		}
	}
}

// TestMarketLedgerLeases: what a provider's active leases take is not
// free, and a request beyond what is free is refused (the ledger has no
// leases yet: its answer is stood in for); when reading it fails, both
// endpoints answer 500 `internal error`.
func TestMarketLedgerLeases(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	used := market.Resources{VCPUs: 1, MemoryMB: 1024, DiskGB: 10}
	active := func(ledger.Address) (market.Resources, int, error) {
		if fail.Load() {
			return market.Resources{}, 0, errors.New("the ledger's leases cannot be read")
		}
		return used, 1, nil
	}
	total := market.Resources{VCPUs: 2, MemoryMB: 2048, DiskGB: 20}
	h := newMarketHarness(t, nettest.Options{Nodes: 1, Providers: map[int]market.Resources{0: total}, Market: marketnet.Config{Active: active}})
	key := h.c.Nodes[0].ProviderKey.Address()

	ps := h.providers()
	free := market.Resources{VCPUs: 1, MemoryMB: 1024, DiskGB: 10}
	if len(ps) != 1 || ps[0].Account != key || ps[0].Total != total || ps[0].Free != free || ps[0].ActiveLeases != 1 {
		t.Fatalf("GET /providers: %+v, want the node's provider with %+v free of %+v, one lease", ps, free, total)
	}
	req := market.Request{VCPUs: 1, MemoryMB: 1024, DiskGB: 10, Duration: 600}
	if got := h.offers(h.network, req); len(got.Offers) != 1 || got.Offers[0].Provider != key {
		t.Errorf("POST /lease/request within what is free: %+v", got)
	}
	got := h.offers(h.network, market.Request{VCPUs: 2, MemoryMB: 512, DiskGB: 5, Duration: 600})
	if len(got.Offers) != 0 || len(got.Refused) != 1 || !strings.HasPrefix(got.Refused[0].Reason, "insufficient capacity: 1 vCPU, 1024 MB memory, 10 GB disk free") {
		t.Errorf("POST /lease/request beyond what is free: %+v", got)
	}

	fail.Store(true)
	checkError(t, h.get("/providers"), http.StatusInternalServerError, "GET /providers when the ledger fails", "internal error")
	checkError(t, h.post("/lease/request", validRequest(nil)), http.StatusInternalServerError, "POST /lease/request when the ledger fails", "internal error")
}
