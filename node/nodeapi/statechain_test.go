package nodeapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/testkit/openapitest"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/govnet"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

// The State chain endpoints, on a one-node nettest cluster whose state
// chain is governed by 2 of 3 keys. The state chain's clock is the test's
// and stands still unless a test moves it (a minute after block 0 at the
// start), so the 5-minute clock window and conflict detection times are
// exact.

// stateHarness is a harness on a node with a state chain.
type stateHarness struct {
	*harness
	c       *nettest.Cluster
	gov     *govnet.Service
	network ledger.Hash  // the ledger genesis hash every block is bound to
	keys    []wallet.Key // the governance keyset's keys
	keyset  ledger.Keyset
}

func newStateHarness(t *testing.T, cfg govnet.Config) *stateHarness {
	t.Helper()
	keys := []wallet.Key{wallet.NewKey(), wallet.NewKey(), wallet.NewKey()}
	ks := keysetOf(2, keys...)
	return startStateHarness(t, nettest.Options{Governance: &ks}, cfg, keys)
}

// startStateHarness starts a one-node cluster with opts and the state
// chain configured by cfg (its clock is the harness's).
func startStateHarness(t *testing.T, opts nettest.Options, cfg govnet.Config, keys []wallet.Key) *stateHarness {
	t.Helper()
	clock := &testClock{}
	clock.ms.Store(time.Now().UnixMilli())
	cfg.Now = clock.now
	opts.Nodes, opts.Gov = 1, cfg
	opts.Wrap = func(h http.Handler) http.Handler { return openapitest.Node.Handler(t, h) }
	c := nettest.Start(t, opts)
	clock.ms.Store(c.Network.Genesis.Timestamp + time.Minute.Milliseconds())
	nd := c.Nodes[0]
	hc := nd.API.Client()
	hc.Timeout = 30 * time.Second
	h := &harness{t: t, n: nd.N, api: nd.Handler, url: nd.API.URL, hc: hc, clock: clock}
	return &stateHarness{harness: h, c: c, gov: nd.Gov, network: c.Network.Genesis.Hash, keys: keys,
		keyset: c.Network.GovernanceKeyset()}
}

// block returns a block after prev, stamped now (each block a millisecond
// later), sealed and signed by signers.
func (h *stateHarness) block(prev *statechain.Block, op statechain.Operation, key, value string, signers ...wallet.Key) *statechain.Block {
	b := &statechain.Block{Index: prev.Index + 1, Previous: prev.Hash, Operation: op, Key: key, Value: value, Timestamp: h.tick()}
	return h.seal(b, signers...)
}

// seal sets b's hash from its contents and replaces its signatures with
// signers'.
func (h *stateHarness) seal(b *statechain.Block, signers ...wallet.Key) *statechain.Block {
	b.Signatures = nil
	b.Seal(h.network)
	for _, k := range signers {
		b.Sign(k.Private())
	}
	return b
}

// next returns a block after the node's tip.
func (h *stateHarness) next(op statechain.Operation, key, value string, signers ...wallet.Key) *statechain.Block {
	return h.block(h.gov.Tip(), op, key, value, signers...)
}

// tip GETs /statechain/tip.
func (h *stateHarness) tip() *statechain.Block {
	h.t.Helper()
	b := new(statechain.Block)
	h.getJSON("/statechain/tip", b)
	return b
}

// accept posts b, expects 200 {"hash": b.Hash} and returns b.
func (h *stateHarness) accept(b *statechain.Block, what string) *statechain.Block {
	h.t.Helper()
	r := h.post("/statechain/blocks", b)
	var got nodewire.BlockHashResponse
	h.okJSON(r, what, &got)
	checkFields(h.t, r.body, what, "hash")
	if got.Hash != b.Hash {
		h.t.Errorf("%s: hash %s, want %s", what, got.Hash, b.Hash)
	}
	return b
}

// chainState is every read a submission can change, as raw JSON.
type chainState struct{ tip, blocks, kv, keyset, params, conflicts string }

func (h *stateHarness) chain() chainState {
	h.t.Helper()
	return chainState{
		tip:       h.getJSON("/statechain/tip", nil).String(),
		blocks:    h.getJSON("/statechain/blocks", nil).String(),
		kv:        h.getJSON("/statechain/kv", nil).String(),
		keyset:    h.getJSON("/statechain/keyset", nil).String(),
		params:    h.getJSON("/statechain/params", nil).String(),
		conflicts: h.getJSON("/statechain/conflicts", nil).String(),
	}
}

// refuse posts body and checks the answer is 400 `invalid state-chain
// block: ...` naming fragments, and that the state chain did not change.
func (h *stateHarness) refuse(body any, what string, fragments ...string) string {
	h.t.Helper()
	before := h.chain()
	r := h.post("/statechain/blocks", body)
	msg := checkError(h.t, r, http.StatusBadRequest, what, append([]string{"invalid state-chain block: "}, fragments...)...)
	if after := h.chain(); after != before {
		h.t.Errorf("%s changed the state chain:\nbefore %+v\nafter  %+v", what, before, after)
	}
	return msg
}

// hashesOf returns the blocks' hashes.
func hashesOf(bs []*statechain.Block) []ledger.Hash {
	out := make([]ledger.Hash, len(bs))
	for i, b := range bs {
		out[i] = b.Hash
	}
	return out
}

// TestStateChainAbsent: a node without a state chain answers every State
// chain endpoint 404 `no endpoint METHOD PATH`.
func TestStateChainAbsent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, path := range []string{"/statechain/tip", "/statechain/blocks/0", "/statechain/blocks", "/statechain/kv/x.a",
		"/statechain/kv", "/statechain/keyset", "/statechain/params", "/statechain/conflicts"} {
		checkError(t, h.get(path), http.StatusNotFound, "GET "+path, "no endpoint GET "+path)
	}
	checkError(t, h.post("/statechain/blocks", `{}`), http.StatusNotFound, "POST /statechain/blocks", "no endpoint POST /statechain/blocks")
}

// TestStateChainGenesis: a new chain is block 0 alone, made from the
// genesis file's governance keyset, and sets no key.
func TestStateChainGenesis(t *testing.T) {
	t.Parallel()
	h := newStateHarness(t, govnet.Config{})
	want := h.c.Network.StateChainGenesis()
	if want.Index != 0 || !want.Previous.IsZero() || want.Operation != statechain.OpUpdateKeyset || want.Key != "" ||
		want.Value != statechain.KeysetValue(h.keyset) || want.Timestamp != h.c.Network.Genesis.Timestamp {
		t.Fatalf("block 0 is not made from the genesis file: %+v", want)
	}
	wantJSON := string(raw(t, want)) + "\n"
	for _, path := range []string{"/statechain/tip", "/statechain/blocks/0", "/statechain/blocks/00"} {
		r := h.getJSON(path, nil)
		if r.String() != wantJSON {
			t.Errorf("GET %s = %s, want %s", path, r, wantJSON)
		}
		checkFields(t, r.body, "GET "+path, "index", "previous", "operation", "key", "value", "timestamp", "signatures", "hash")
		if !strings.Contains(r.String(), `"signatures":[]`) {
			t.Errorf("GET %s: block 0's signatures are not []: %s", path, r)
		}
	}
	for _, q := range []string{"", "?from=0", "?to=0", "?from=0&to=99", "?from=0&to=18446744073709551615"} {
		var got []*statechain.Block
		h.getJSON("/statechain/blocks"+q, &got)
		if len(got) != 1 || got[0].Hash != want.Hash {
			t.Errorf("GET /statechain/blocks%s: got %v, want block 0 alone", q, hashesOf(got))
		}
	}
	for _, q := range []string{"?from=1", "?from=1&to=5", "?from=18446744073709551615"} {
		if r := h.getJSON("/statechain/blocks"+q, nil); r.String() != "[]\n" {
			t.Errorf("GET /statechain/blocks%s = %s, want []", q, r)
		}
	}
	checkError(t, h.get("/statechain/blocks/1"), http.StatusNotFound, "GET /statechain/blocks/1", "state-chain block 1 not found", "the tip is 0")
	checkError(t, h.get("/statechain/blocks/18446744073709551615"), http.StatusNotFound, "GET /statechain/blocks/18446744073709551615", "not found")
	for _, idx := range []string{"-1", "1.5", "abc", "0x1", "+1", "18446744073709551616", "%20"} {
		checkError(t, h.get("/statechain/blocks/"+idx), http.StatusBadRequest, "GET /statechain/blocks/"+idx, "index", "non-negative integer")
	}

	var ks ledger.Keyset
	r := h.getJSON("/statechain/keyset", &ks)
	checkFields(t, r.body, "GET /statechain/keyset", "keys", "threshold")
	if ks.Threshold != 2 || !slices.Equal(ks.Keys, h.keyset.Keys) {
		t.Errorf("GET /statechain/keyset = %s, want the genesis file's %s", r, statechain.KeysetValue(h.keyset))
	}
	if r := h.getJSON("/statechain/kv", nil); r.String() != "{}\n" {
		t.Errorf("GET /statechain/kv = %s, want {}", r)
	}
	for _, key := range []string{"x.a", statechain.KeyStakeRatio, "X.A", "a%2Fb"} {
		checkError(t, h.get("/statechain/kv/"+key), http.StatusNotFound, "GET /statechain/kv/"+key, "is not set")
	}
	if r := h.getJSON("/statechain/conflicts", nil); r.String() != "[]\n" {
		t.Errorf("GET /statechain/conflicts = %s, want []", r)
	}
	h.checkParams(0, nil)
}

// checkParams GETs /statechain/params and checks that it answers index and
// every parameter, set (with the block index) as in set, default otherwise.
func (h *stateHarness) checkParams(index uint64, set map[string]struct {
	value string
	index uint64
}) {
	h.t.Helper()
	var got nodewire.Parameters
	r := h.getJSON("/statechain/params", &got)
	checkFields(h.t, r.body, "GET /statechain/params", "index", "parameters")
	if got.Index != index || len(got.Parameters) != len(statechain.Parameters) {
		h.t.Fatalf("GET /statechain/params = %s: want index %d and %d parameters", r, index, len(statechain.Parameters))
	}
	var raws struct{ Parameters []json.RawMessage }
	if err := json.Unmarshal(r.body, &raws); err != nil {
		h.t.Fatal(err)
	}
	for i, p := range statechain.Parameters {
		g := got.Parameters[i]
		what := fmt.Sprintf("GET /statechain/params: %s", p.Key)
		if g.Key != p.Key || g.Doc != p.Doc || g.Doc == "" {
			h.t.Errorf("%s: got key %q doc %q", what, g.Key, g.Doc)
		}
		s, isSet := set[p.Key]
		switch {
		case isSet:
			checkFields(h.t, raws.Parameters[i], what, "key", "value", "set", "index", "doc")
			if !g.Set || g.Index == nil || *g.Index != s.index || string(g.Value) != s.value {
				h.t.Errorf("%s = %s, want set at %d to %s", what, raws.Parameters[i], s.index, s.value)
			}
		default:
			checkFields(h.t, raws.Parameters[i], what, "key", "value", "set", "doc")
			if g.Set || string(g.Value) != p.Default {
				h.t.Errorf("%s = %s, want the default %s, not set", what, raws.Parameters[i], p.Default)
			}
		}
	}
}

// TestStateChainSubmit: blocks that follow the rules are added, change
// what the reads answer and may be submitted again.
func TestStateChainSubmit(t *testing.T) {
	t.Parallel()
	h := newStateHarness(t, govnet.Config{})
	k := h.keys
	g := h.tip()

	b1 := h.accept(h.next(statechain.OpSet, statechain.KeyStakeRatio, "0.25", k[0], k[1]), "POST a set of lease.stake_ratio")
	if got := h.tip(); got.Hash != b1.Hash || got.Index != 1 || got.Previous != g.Hash || len(got.Signatures) != 2 {
		t.Fatalf("tip after block 1: %+v", got)
	}
	if r := h.getJSON("/statechain/blocks/1", nil); r.String() != string(raw(t, b1))+"\n" {
		t.Errorf("GET /statechain/blocks/1 = %s, want %s", r, raw(t, b1))
	}
	var kv nodewire.KeyValue
	r := h.getJSON("/statechain/kv/"+statechain.KeyStakeRatio, &kv)
	if got, want := r.String(), `{"key":"lease.stake_ratio","value":0.25,"index":1}`+"\n"; got != want {
		t.Errorf("GET /statechain/kv/lease.stake_ratio = %s, want %s", got, want)
	}
	type setAt = struct {
		value string
		index uint64
	}
	h.checkParams(1, map[string]setAt{statechain.KeyStakeRatio: {"0.25", 1}})

	// Submitted again, as it is or with its hex in upper case: 200, the
	// same hash, nothing changes; so is block 0.
	before := h.chain()
	h.accept(b1, "POST block 1 again")
	upper := edit(t, b1, func(o map[string]any) {
		o["hash"] = strings.ToUpper(o["hash"].(string))
		o["previous"] = strings.ToUpper(o["previous"].(string))
	})
	r = h.post("/statechain/blocks", upper)
	h.okJSON(r, "POST block 1 in upper-case hex", nil)
	if got, want := r.String(), `{"hash":"`+b1.Hash.String()+`"}`+"\n"; got != want {
		t.Errorf("POST block 1 in upper-case hex = %s, want %s", got, want)
	}
	h.accept(g, "POST block 0")
	if after := h.chain(); after != before {
		t.Errorf("resubmissions changed the state chain:\nbefore %+v\nafter  %+v", before, after)
	}

	// Keys of the operators' own take any JSON, null included; a deleted
	// key is gone.
	h.accept(h.next(statechain.OpSet, "x.note", `{"a":[1,2]}`, k[0], k[1], k[2]), "POST a set of x.note by all three keys")
	h.accept(h.next(statechain.OpSet, "x.nil", "null", k[1], k[2]), "POST a set of x.nil")
	h.accept(h.next(statechain.OpSet, statechain.KeyAcceptTimeout, "120000", k[2], k[0]), "POST a set of lease.accept_timeout_ms")
	for path, want := range map[string]string{
		"/statechain/kv/x.note": `{"key":"x.note","value":{"a":[1,2]},"index":2}`,
		"/statechain/kv/x.nil":  `{"key":"x.nil","value":null,"index":3}`,
		"/statechain/kv":        `{"lease.accept_timeout_ms":120000,"lease.stake_ratio":0.25,"x.nil":null,"x.note":{"a":[1,2]}}`,
	} {
		if r := h.getJSON(path, nil); r.String() != want+"\n" {
			t.Errorf("GET %s = %s, want %s", path, r, want)
		}
	}
	h.accept(h.next(statechain.OpDelete, "x.note", "", k[0], k[1]), "POST a delete of x.note")
	checkError(t, h.get("/statechain/kv/x.note"), http.StatusNotFound, "GET /statechain/kv/x.note after its delete", `"x.note" is not set`)
	if r, want := h.getJSON("/statechain/kv", nil), `{"lease.accept_timeout_ms":120000,"lease.stake_ratio":0.25,"x.nil":null}`; r.String() != want+"\n" {
		t.Errorf("GET /statechain/kv after the delete = %s, want %s", r, want)
	}
	h.checkParams(5, map[string]setAt{statechain.KeyStakeRatio: {"0.25", 1}, statechain.KeyAcceptTimeout: {"120000", 4}})

	// The keyset moves to 1 of a new key and one old one: the old keys
	// no longer sign, the new one does.
	n := wallet.NewKey()
	next := keysetOf(1, n, k[2])
	h.accept(h.next(statechain.OpUpdateKeyset, "", statechain.KeysetValue(next), k[0], k[1]), "POST an update_keyset")
	var ks ledger.Keyset
	r = h.getJSON("/statechain/keyset", &ks)
	if ks.Threshold != 1 || !slices.Equal(ks.Keys, next.Keys) {
		t.Errorf("GET /statechain/keyset after the update = %s, want %s", r, statechain.KeysetValue(next))
	}
	h.refuse(h.next(statechain.OpSet, "x.b", "1", k[0], k[1]), "a block signed by the replaced keys", "not authorised", "not a member of the keyset")
	b7 := h.accept(h.next(statechain.OpSet, "x.b", "1", n), "POST a block signed by the new key")
	h.checkParams(7, map[string]setAt{statechain.KeyStakeRatio: {"0.25", 1}, statechain.KeyAcceptTimeout: {"120000", 4}})

	var all []*statechain.Block
	h.getJSON("/statechain/blocks", &all)
	if len(all) != 8 || all[7].Hash != b7.Hash || all[0].Hash != g.Hash {
		t.Fatalf("GET /statechain/blocks: %d blocks", len(all))
	}
	for i, b := range all[1:] {
		if b.Index != uint64(i+1) || b.Previous != all[i].Hash {
			t.Errorf("GET /statechain/blocks: block %d does not follow block %d", b.Index, i)
		}
	}
	if got := h.gov.Tip(); got.Hash != b7.Hash {
		t.Errorf("the service's tip is %s, want %s", got.Hash, b7.Hash)
	}
}

// TestStateChainSubmitRefused: every malformed, badly signed, misplaced,
// mistimed or invalid block is 400 with a reason, and changes nothing.
func TestStateChainSubmitRefused(t *testing.T) {
	t.Parallel()
	h := newStateHarness(t, govnet.Config{})
	k := h.keys
	g := h.tip()
	b1 := h.accept(h.next(statechain.OpSet, "x.a", "1", k[0], k[1]), "POST block 1")
	good := func() *statechain.Block { return h.next(statechain.OpSet, "x.b", `"two"`, k[0], k[1]) }
	outsider := wallet.NewKey()
	const limit = 6*statechain.MaxValueBytes + 8192

	for _, tc := range []struct {
		name      string
		body      func(t *testing.T) any
		fragments []string
	}{
		{"malformed JSON", func(*testing.T) any { return `{"index":` }, nil},
		{"empty body", func(*testing.T) any { return "" }, []string{"empty body"}},
		{"not an object", func(*testing.T) any { return `[1]` }, []string{"want a JSON object, got an array"}},
		{"unknown field", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { o["network"] = "main" })
		}, []string{"unknown field", "network"}},
		{"trailing data", func(t *testing.T) any { return append(raw(t, good()), "{}"...) }, []string{"trailing"}},
		{"trailing bracket", func(t *testing.T) any { return append(raw(t, good()), ']') }, []string{"trailing"}},
		{"index as a string", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { o["index"] = "2" })
		}, []string{"index: want a number, got a string"}},
		{"negative index", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { o["index"] = -1 })
		}, []string{"index: want an integer from 0 to 18446744073709551615, got -1"}},
		{"hash not hex", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) { o["hash"] = strings.Repeat("zz", 32) })
		}, []string{"hash"}},
		{"body over the limit", func(*testing.T) any {
			return h.next(statechain.OpSet, "x.big", `"`+strings.Repeat("a", limit)+`"`, k[0], k[1])
		}, []string{fmt.Sprintf("exceeds %d bytes", limit)}},
		{"hash of other contents", func(*testing.T) any { b := good(); b.Value = `"three"`; return b },
			[]string{"hash does not match block contents"}},
		{"hash of another network", func(*testing.T) any {
			b := good()
			b.Signatures = nil
			b.Seal(ledger.Hash{1})
			b.Sign(k[0].Private())
			b.Sign(k[1].Private())
			return b
		}, []string{"hash does not match block contents"}},
		{"last hex digit of a signature changed", func(t *testing.T) any {
			return edit(t, good(), func(o map[string]any) {
				s := o["signatures"].([]any)[1].(map[string]any)
				s["signature"] = flipLastHex(s["signature"].(string))
			})
		}, []string{"bad signature", "signature 1 does not verify"}},
		{"one signature of the two needed", func(*testing.T) any { return h.next(statechain.OpSet, "x.b", "1", k[2]) },
			[]string{"not authorised by the governance keyset", "1 of the keyset's keys signed; its threshold is 2"}},
		{"no signatures", func(*testing.T) any { return h.next(statechain.OpSet, "x.b", "1") },
			[]string{"not authorised", "0 of the keyset's keys signed"}},
		{"signed by a key outside the keyset", func(*testing.T) any { return h.next(statechain.OpSet, "x.b", "1", k[0], outsider) },
			[]string{"not authorised", outsider.Address().String(), "not a member of the keyset"}},
		{"one key's signature twice", func(t *testing.T) any {
			return edit(t, h.next(statechain.OpSet, "x.b", "1", k[0]), func(o map[string]any) {
				sigs := o["signatures"].([]any)
				o["signatures"] = []any{sigs[0], sigs[0]}
			})
		}, []string{"malformed state-chain block", "signed twice"}},
		{"a gap: index tip + 2", func(*testing.T) any {
			b := good()
			b.Index++
			return h.seal(b, k[0], k[1])
		}, []string{"index ahead of the tip", "index 3", "tip is 1"}},
		{"previous not the tip", func(*testing.T) any {
			b := good()
			b.Previous = g.Hash
			return h.seal(b, k[0], k[1])
		}, []string{"previous is not the tip"}},
		{"a block 0 of its own", func(*testing.T) any {
			return h.seal(&statechain.Block{Operation: statechain.OpUpdateKeyset, Value: statechain.KeysetValue(keysetOf(1, outsider)), Timestamp: h.tick()})
		}, []string{"index already taken", "block 0 comes from the genesis file"}},
		{"a block 1 on a block 0 of another chain", func(*testing.T) any {
			b := h.block(&statechain.Block{Hash: randomHash()}, statechain.OpSet, "x.b", "1", k[0], k[1])
			return b
		}, []string{"index already taken", "follows a block this node does not hold"}},
		{"a different block 1 signed by one key", func(*testing.T) any { return h.block(g, statechain.OpSet, "x.b", "1", k[0]) },
			[]string{"not authorised", "threshold is 2"}},
		{"a different block 1 stamped before block 0", func(*testing.T) any {
			b := &statechain.Block{Index: 1, Previous: g.Hash, Operation: statechain.OpSet, Key: "x.b", Value: "1", Timestamp: g.Timestamp - 1}
			return h.seal(b, k[0], k[1])
		}, []string{"bad timestamp"}},
		{"stamped before the tip", func(*testing.T) any {
			b := good()
			b.Timestamp = b1.Timestamp - 1
			return h.seal(b, k[0], k[1])
		}, []string{"bad timestamp", "earlier than the tip's"}},
		{"stamped 10 minutes and 1 ms ahead of the node's clock", func(*testing.T) any {
			b := good()
			b.Timestamp = h.clock.ms.Load() + 10*time.Minute.Milliseconds() + 1
			return h.seal(b, k[0], k[1])
		}, []string{"timestamp is ahead of this node's clock"}},
		{"timestamp 0", func(t *testing.T) any {
			b := good()
			b.Timestamp = 0
			return h.seal(b, k[0], k[1])
		}, []string{"malformed", "timestamp"}},
		{"lease.stake_ratio -1", func(*testing.T) any { return h.next(statechain.OpSet, statechain.KeyStakeRatio, "-1", k[0], k[1]) },
			[]string{"invalid value", "lease.stake_ratio"}},
		{"lease.stake_ratio above 100", func(*testing.T) any {
			return h.next(statechain.OpSet, statechain.KeyStakeRatio, "100.0001", k[0], k[1])
		}, []string{"invalid value", "at most 100"}},
		{"lease.accept_timeout_ms below a second", func(*testing.T) any {
			return h.next(statechain.OpSet, statechain.KeyAcceptTimeout, "999", k[0], k[1])
		}, []string{"invalid value", "lease.accept_timeout_ms"}},
		{"lease.prices missing one", func(*testing.T) any {
			return h.next(statechain.OpSet, statechain.KeyLeasePrices, `{"vcpu":"1","memory_mb":"1"}`, k[0], k[1])
		}, []string{"invalid value", "all required"}},
		{"timekeepers with half as threshold", func(*testing.T) any {
			v := `{"keys":["` + k[0].Address().String() + `","` + k[1].Address().String() + `"],"threshold":1}`
			return h.next(statechain.OpSet, statechain.KeyTimekeepers, v, k[0], k[1])
		}, []string{"invalid value", "more than half"}},
		{"an unknown key, lease.price", func(*testing.T) any { return h.next(statechain.OpSet, "lease.price", "1", k[0], k[1]) },
			[]string{"invalid value", `"lease.price" is not a parameter`, `start with "x."`}},
		{"a value of one's own that is not JSON", func(*testing.T) any { return h.next(statechain.OpSet, "x.b", "hello", k[0], k[1]) },
			[]string{"invalid value", "must be JSON"}},
		{"a delete of a key never set", func(*testing.T) any { return h.next(statechain.OpDelete, "x.b", "", k[0], k[1]) },
			[]string{"invalid value", `"x.b" is not set`}},
		{"a delete with a value", func(*testing.T) any { return h.next(statechain.OpDelete, "x.a", "1", k[0], k[1]) },
			[]string{"malformed", "no value"}},
		{"a set without a value", func(*testing.T) any { return h.next(statechain.OpSet, "x.b", "", k[0], k[1]) },
			[]string{"malformed", "needs a value"}},
		{"a key in capitals", func(*testing.T) any { return h.next(statechain.OpSet, "X.b", "1", k[0], k[1]) },
			[]string{"malformed", "lowercase"}},
		{"a key of 65 bytes", func(*testing.T) any { return h.next(statechain.OpSet, "x."+strings.Repeat("a", 63), "1", k[0], k[1]) },
			[]string{"malformed", "1 to 64 bytes"}},
		{"a value of 8193 bytes", func(*testing.T) any {
			return h.next(statechain.OpSet, "x.b", `"`+strings.Repeat("a", statechain.MaxValueBytes-1)+`"`, k[0], k[1])
		}, []string{"malformed", "8193 bytes"}},
		{"an unknown operation", func(*testing.T) any { return h.next("rename", "x.a", "1", k[0], k[1]) },
			[]string{"malformed", "operation must be set, delete or update_keyset"}},
		{"an update_keyset with a key", func(*testing.T) any {
			return h.next(statechain.OpUpdateKeyset, "x.a", statechain.KeysetValue(keysetOf(1, outsider)), k[0], k[1])
		}, []string{"malformed", "no key"}},
		{"an update_keyset with a threshold above its keys", func(*testing.T) any {
			return h.next(statechain.OpUpdateKeyset, "", `{"keys":["`+outsider.Address().String()+`"],"threshold":2}`, k[0], k[1])
		}, []string{"invalid value"}},
		{"an update_keyset with keys out of order", func(*testing.T) any {
			ks := keysetOf(1, k[0], k[1])
			v := `{"keys":["` + ks.Keys[1].String() + `","` + ks.Keys[0].String() + `"],"threshold":1}`
			return h.next(statechain.OpUpdateKeyset, "", v, k[0], k[1])
		}, []string{"invalid value"}},
	} {
		h.refuse(tc.body(t), "POST "+tc.name, tc.fragments...)
	}
	if got := h.tip(); got.Hash != b1.Hash {
		t.Fatalf("the tip moved: %+v", got)
	}
	if r := h.getJSON("/statechain/conflicts", nil); r.String() != "[]\n" {
		t.Errorf("GET /statechain/conflicts after the refusals = %s, want []", r)
	}
	// Within the clock window, and on the tip, a good block still goes in.
	b := good()
	b.Timestamp = h.clock.ms.Load() + 10*time.Minute.Milliseconds()
	h.accept(h.seal(b, k[0], k[1]), "POST a block stamped 10 minutes ahead")
}

// TestStateChainRange: GET /statechain/blocks answers at most 100 blocks,
// from `from` (default 0) to `to` (default from + 99).
func TestStateChainRange(t *testing.T) {
	t.Parallel()
	h := newStateHarness(t, govnet.Config{})
	const tip = 104
	chain := []*statechain.Block{h.tip()}
	for i := 1; i <= tip; i++ {
		chain = append(chain, h.accept(h.next(statechain.OpSet, "x.n", strconv.Itoa(i), h.keys[i%3], h.keys[(i+1)%3]), fmt.Sprintf("POST block %d", i)))
	}
	span := func(from, to int) []ledger.Hash { return hashesOf(chain[from : to+1]) }
	for _, tc := range []struct {
		query string
		want  []ledger.Hash
	}{
		{"", span(0, 99)},
		{"?from=0", span(0, 99)},
		{"?to=2", span(0, 2)},
		{"?from=5", span(5, 104)},
		{"?from=10", span(10, 104)},
		{"?from=3&to=3", span(3, 3)},
		{"?from=7&to=12", span(7, 12)},
		{"?from=0&to=99", span(0, 99)},
		{"?from=0&to=104", span(0, 99)},
		{"?from=2&to=1000", span(2, 101)},
		{"?from=0&to=18446744073709551615", span(0, 99)},
		{"?from=104", span(104, 104)},
		{"?from=100&to=200", span(100, 104)},
		{"?from=0005&to=006", span(5, 6)},
		{"?from=105", nil},
		{"?from=105&to=105", nil},
		{"?from=18446744073709551615", nil},
		{"?from=18446744073709551600", nil},
	} {
		var got []*statechain.Block
		r := h.getJSON("/statechain/blocks"+tc.query, &got)
		if tc.want == nil && r.String() != "[]\n" {
			t.Errorf("GET /statechain/blocks%s = %s, want []", tc.query, r)
		}
		if !slices.Equal(hashesOf(got), tc.want) {
			t.Errorf("GET /statechain/blocks%s: got %d blocks, want %d", tc.query, len(got), len(tc.want))
		}
	}
	for _, tc := range []struct {
		query     string
		fragments []string
	}{
		{"?from=-1", []string{`from "-1"`, "non-negative integer"}},
		{"?from=abc", []string{`from "abc"`}},
		{"?from=1.5", []string{`from "1.5"`}},
		{"?from=", []string{"from", "empty"}},
		{"?from=18446744073709551616", []string{"from", "non-negative integer"}},
		{"?to=x", []string{`to "x"`}},
		{"?to=", []string{"to", "empty"}},
		{"?from=1&from=2", []string{"from", "given 2 times"}},
		{"?from=1&to=-2", []string{`to "-2"`}},
		{"?from=5&to=4", []string{"to (4) is below from (5)"}},
		{"?from=105&to=0", []string{"to (0) is below from (105)"}},
	} {
		checkError(t, h.get("/statechain/blocks"+tc.query), http.StatusBadRequest, "GET /statechain/blocks"+tc.query, tc.fragments...)
	}
	checkError(t, h.get("/statechain/blocks/105"), http.StatusNotFound, "GET /statechain/blocks/105", "block 105 not found", "the tip is 104")
	var b statechain.Block
	h.getJSON("/statechain/blocks/104", &b)
	if b.Hash != chain[tip].Hash {
		t.Errorf("GET /statechain/blocks/104: got %s, want %s", b.Hash, chain[tip].Hash)
	}
}

// TestStateChainConflict: a second block signed for an index taken is
// kept as evidence, listed, and halts the chain: every new block is then
// refused, while a block held may still be submitted again.
func TestStateChainConflict(t *testing.T) {
	t.Parallel()
	h := newStateHarness(t, govnet.Config{})
	k := h.keys
	g := h.tip()
	b1 := h.accept(h.block(g, statechain.OpSet, statechain.KeyStakeRatio, "0.75", k[0], k[1]), "POST block 1")
	other := h.block(g, statechain.OpSet, statechain.KeyStakeRatio, "0.1", k[1], k[2])
	h.advance(7250 * time.Millisecond)
	detected := h.clock.now().UTC()

	before := h.chain()
	r := h.post("/statechain/blocks", other)
	checkError(t, r, http.StatusBadRequest, "POST a second block 1", "invalid state-chain block: ", "index already taken", "halted", "GET /statechain/conflicts")
	after := h.chain()
	if after.tip != before.tip || after.blocks != before.blocks || after.kv != before.kv || after.keyset != before.keyset || after.params != before.params {
		t.Errorf("a conflicting block changed the chain:\nbefore %+v\nafter  %+v", before, after)
	}
	if !h.gov.Halted() {
		t.Error("the service is not halted")
	}

	var list []json.RawMessage
	h.getJSON("/statechain/conflicts", &list)
	if len(list) != 1 {
		t.Fatalf("GET /statechain/conflicts: %d conflicts, want 1", len(list))
	}
	checkFields(t, list[0], "GET /statechain/conflicts", "index", "block_hashes", "blocks", "detected_at", "resolved")
	var c nodewire.StateConflict
	if err := json.Unmarshal(list[0], &c); err != nil {
		t.Fatal(err)
	}
	if c.Index != 1 || c.Hashes != [2]ledger.Hash{b1.Hash, other.Hash} || c.Resolved ||
		c.Blocks[0] == nil || c.Blocks[1] == nil || c.Blocks[0].Hash != b1.Hash || c.Blocks[1].Hash != other.Hash ||
		c.Blocks[1].Value != "0.1" || len(c.Blocks[1].Signatures) != 2 {
		t.Errorf("GET /statechain/conflicts = %s", list[0])
	}
	if want := detected.Format("2006-01-02T15:04:05.000Z"); c.DetectedAt != want {
		t.Errorf("detected_at %q, want %q", c.DetectedAt, want)
	}

	// Halted: a block that would follow the tip, however well signed, is
	// refused, and so is a third block 1.
	h.advance(time.Second)
	h.refuse(h.block(b1, statechain.OpSet, "x.a", "1", k[0], k[1], k[2]), "POST block 2 while halted", "the state chain is halted")
	h.refuse(h.block(b1, statechain.OpUpdateKeyset, "", statechain.KeysetValue(keysetOf(1, k[0])), k[0], k[1]), "POST an update_keyset while halted", "halted")
	third := h.block(g, statechain.OpSet, statechain.KeyStakeRatio, "0.2", k[0], k[2])
	checkError(t, h.post("/statechain/blocks", third), http.StatusBadRequest, "POST a third block 1", "index already taken", "halted")
	var all []json.RawMessage
	h.getJSON("/statechain/conflicts", &all)
	if len(all) != 2 || string(all[0]) != string(list[0]) {
		t.Errorf("GET /statechain/conflicts after a third block 1: %d conflicts, the first changed: %s", len(all), all)
	}
	// A block held answers 200 still.
	before = h.chain()
	h.accept(b1, "POST block 1 again while halted")
	if after := h.chain(); after != before {
		t.Errorf("resubmitting block 1 changed the chain:\nbefore %+v\nafter  %+v", before, after)
	}
	if got := h.tip(); got.Hash != b1.Hash {
		t.Errorf("tip after the conflict: %s, want block 1 %s", got.Hash, b1.Hash)
	}
}

// TestStateChainRejected: a block the operator rejected
// (--statechain-reject) is refused, however well signed.
func TestStateChainRejected(t *testing.T) {
	t.Parallel()
	a := newStateHarness(t, govnet.Config{})
	b1 := a.next(statechain.OpSet, "x.a", "1", a.keys[0], a.keys[1])
	// A second network with the first one's genesis, whose operator
	// rejects b1.
	h := startStateHarness(t, nettest.Options{GenesisOf: a.c}, govnet.Config{Reject: []ledger.Hash{b1.Hash}}, a.keys)
	if h.network != a.network || h.tip().Hash != a.tip().Hash {
		t.Fatal("the second network's state chain differs from the first's")
	}
	h.refuse(b1, "POST a rejected block", "this block was rejected by the node's operator")
	h.accept(h.next(statechain.OpSet, "x.a", "2", h.keys[0], h.keys[2]), "POST another block 1")
}
