package nodeapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/wallet"
)

// TestAccounts covers GET /accounts and the per-account reads.
func TestAccounts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	g := h.genesis.Address()
	a, b, nobody := wallet.NewKey(), wallet.NewKey(), wallet.NewKey()

	s1, r1 := h.fund(a, 5_000)
	claim := h.submit(h.claimBlock(a))
	s2 := h.send(a, b.Address(), 1_500, ledger.Native)
	// b has a pending send but no block yet: it is not an account.

	var list []json.RawMessage
	h.getJSON("/accounts", &list)
	if len(list) != 2 {
		t.Fatalf("GET /accounts lists %d accounts, want 2 (genesis and a): %s", len(list), list)
	}
	want := map[string]struct {
		balances string
		count    string
		frontier ledger.Hash
	}{
		g.String():           {`{"native":"999999995000"}`, "2", s1.Hash},
		a.Address().String(): {`{"native":"3500","stable":"100000000"}`, "3", s2.Hash},
	}
	for _, raw := range list {
		checkFields(t, raw, "GET /accounts element", "address", "balances", "block_count", "frontier")
		var acct map[string]json.RawMessage
		json.Unmarshal(raw, &acct)
		var addr string
		json.Unmarshal(acct["address"], &addr)
		w, ok := want[addr]
		if !ok {
			t.Errorf("GET /accounts lists unexpected account %s", addr)
			continue
		}
		if got := string(acct["balances"]); got != w.balances {
			t.Errorf("account %s balances %s, want %s", addr, got, w.balances)
		}
		if got := string(acct["block_count"]); got != w.count {
			t.Errorf("account %s block_count %s, want %s", addr, got, w.count)
		}
		if got := string(acct["frontier"]); got != `"`+w.frontier.String()+`"` {
			t.Errorf("account %s frontier %s, want %s", addr, got, w.frontier)
		}
		// GET /accounts/{address} answers the same resource.
		one := h.getJSON("/accounts/"+addr, nil)
		if got := strings.TrimSpace(one.String()); got != string(raw) {
			t.Errorf("GET /accounts/%s = %s, want the /accounts element %s", addr, got, raw)
		}
	}

	// Balances: only non-zero assets, as decimal strings.
	for _, tc := range []struct {
		addr ledger.Address
		want string
	}{
		{g, `{"native":"999999995000"}`},
		{a.Address(), `{"native":"3500","stable":"100000000"}`},
	} {
		r := h.getJSON("/accounts/"+tc.addr.String()+"/balance", nil)
		if got := strings.TrimSpace(r.String()); got != tc.want {
			t.Errorf("GET /accounts/%s/balance = %s, want %s", tc.addr, got, tc.want)
		}
	}
	// An account that spent everything has an empty (not null) balance map.
	h.submit(h.signed(h.must(wallet.Send(h.head(a.Address()), g, ledger.NewAmount(3_500), ledger.Native, h.tick())), a))
	h.submit(h.signed(h.must(wallet.Send(h.head(a.Address()), g, ledger.NewAmount(100_000_000), ledger.Stable, h.tick())), a))
	r := h.getJSON("/accounts/"+a.Address().String()+"/balance", nil)
	if got := strings.TrimSpace(r.String()); got != "{}" {
		t.Errorf("balance of an emptied account = %s, want {}", got)
	}
	var acct map[string]json.RawMessage
	h.getJSON("/accounts/"+a.Address().String(), &acct)
	if got := string(acct["balances"]); got != "{}" {
		t.Errorf("balances of an emptied account = %s, want {}", got)
	}

	// Chain: oldest first, each block linked to the one before.
	var chain []json.RawMessage
	h.getJSON("/accounts/"+a.Address().String()+"/chain", &chain)
	wantHashes := []ledger.Hash{r1.Hash, claim.Hash, s2.Hash}
	if len(chain) != 5 {
		t.Fatalf("chain of %s has %d blocks, want 5", a.Address(), len(chain))
	}
	prev := ledger.ZeroHash
	for i, raw := range chain {
		var blk ledger.Block
		if err := json.Unmarshal(raw, &blk); err != nil {
			t.Fatalf("chain[%d]: %v", i, err)
		}
		if i < len(wantHashes) && blk.Hash != wantHashes[i] {
			t.Errorf("chain[%d] = %s, want %s", i, blk.Hash, wantHashes[i])
		}
		if blk.Previous != prev {
			t.Errorf("chain[%d].previous = %s, want %s", i, blk.Previous, prev)
		}
		prev = blk.Hash
	}
	// Exact field names, and amounts as strings.
	checkFields(t, chain[0], "receive block", "type", "account", "previous", "balance", "asset", "timestamp",
		"hash", "signature", "pow_nonce", "source", "amount", "confirmed")
	checkFields(t, chain[2], "send block", "type", "account", "previous", "balance", "asset", "timestamp",
		"hash", "signature", "pow_nonce", "destination", "amount", "confirmed")
	for _, frag := range []string{`"balance":"3500"`, `"amount":"1500"`, `"asset":"native"`, `"type":"send"`} {
		if !strings.Contains(string(chain[2]), frag) {
			t.Errorf("send block JSON %s lacks %s", chain[2], frag)
		}
	}

	// Errors of every per-account read.
	for _, suffix := range []string{"", "/balance", "/chain", "/keyset"} {
		for _, tc := range []struct {
			name   string
			addr   string
			status int
			frags  []string
		}{
			{"unknown account", nobody.Address().String(), http.StatusNotFound, []string{"account not found", nobody.Address().String()}},
			{"not hex", strings.Repeat("zz", 32), http.StatusBadRequest, []string{"invalid address", "not hexadecimal"}},
			{"short address", g.String()[:63], http.StatusBadRequest, []string{"invalid address", "64 hex characters"}},
			{"long address", g.String() + "00", http.StatusBadRequest, []string{"64 hex characters"}},
		} {
			path := "/accounts/" + tc.addr + suffix
			checkError(t, h.get(path), tc.status, "GET "+path+" ("+tc.name+")", tc.frags...)
		}
	}
	// The keyset of a single-key account does not exist.
	path := "/accounts/" + g.String() + "/keyset"
	checkError(t, h.get(path), http.StatusNotFound, "GET "+path, "not multisig")
}

// TestBlockByHash covers GET /blocks/{hash}.
func TestBlockByHash(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := wallet.NewKey()
	k1, k2 := wallet.NewKey(), wallet.NewKey()
	s, r := h.fund(a, 42)
	open := h.submit(h.multisigned(wallet.MultisigOpen(keysetOf(2, k1, k2), h.tick()), k1, k2))

	for _, want := range []*ledger.Block{h.gblock, s, r, open} {
		var got ledger.Block
		resp := h.getJSON("/blocks/"+want.Hash.String(), &got)
		if !reflect.DeepEqual(&got, want) {
			t.Errorf("GET /blocks/%s = %+v, want %+v", want.Hash, got, want)
		}
		if want.Type == ledger.TypeMultisigOpen {
			checkFields(t, resp.body, "multisig_open block", "type", "account", "previous", "balance", "asset",
				"timestamp", "hash", "pow_nonce", "keyset", "signatures", "confirmed")
		}
	}

	for _, tc := range []struct {
		name   string
		hash   string
		status int
		frags  []string
	}{
		{"unknown", randomHash().String(), http.StatusNotFound, []string{"block not found"}},
		{"short", s.Hash.String()[:10], http.StatusBadRequest, []string{"invalid block hash", "64 hex characters"}},
		{"not hex", strings.Repeat("g", 64), http.StatusBadRequest, []string{"invalid block hash", "not hexadecimal"}},
	} {
		checkError(t, h.get("/blocks/"+tc.hash), tc.status, "GET /blocks/{"+tc.name+"}", tc.frags...)
	}
}

// TestRecent covers GET /blocks/recent and its limit.
func TestRecent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := wallet.NewKey()
	all := []ledger.Hash{h.gblock.Hash} // in ledger order
	for range 12 {
		s := h.send(h.genesis, a.Address(), 1, ledger.Native)
		r := h.receive(a, s)
		all = append(all, s.Hash, r.Hash)
	}
	slices.Reverse(all) // newest first

	hashes := func(path string) []ledger.Hash {
		var blocks []ledger.Block
		h.getJSON(path, &blocks)
		out := make([]ledger.Hash, len(blocks))
		for i, b := range blocks {
			out[i] = b.Hash
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  []ledger.Hash
	}{
		{"", all[:20]},
		{"?limit=1", all[:1]},
		{"?limit=20", all[:20]},
		{"?limit=24", all[:24]},
		{"?limit=500", all},
	} {
		if got := hashes("/blocks/recent" + tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("GET /blocks/recent%s = %d blocks %v, want %d newest first %v", tc.query, len(got), got, len(tc.want), tc.want)
		}
	}
	for _, bad := range []string{"0", "501", "-1", "abc", "1.5", "99999999999999999999"} {
		path := "/blocks/recent?limit=" + bad
		checkError(t, h.get(path), http.StatusBadRequest, "GET "+path, "limit", "1 to 500")
	}
	// An empty, repeated or malformed limit: TestQueryStrict.
}

// TestPoW covers POST /pow.
func TestPoW(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i := range 3 {
		hash := randomHash()
		r := h.post("/pow", map[string]string{"hash": hash.String()})
		h.okJSON(r, "POST /pow", nil)
		checkFields(t, r.body, "POST /pow", "nonce")
		var got struct {
			Nonce json.Number `json:"nonce"`
		}
		dec := json.NewDecoder(strings.NewReader(r.String()))
		dec.UseNumber()
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("POST /pow: %v", err)
		}
		nonce, err := got.Nonce.Int64()
		if err != nil {
			t.Fatalf("POST /pow: nonce %s is not an int64: %v", got.Nonce, err)
		}
		if !h.work.Send.Met(hash, nonce) {
			t.Errorf("POST /pow #%d: nonce %d does not meet the send threshold %s for %s", i, nonce, h.work.Send, hash)
		}
	}

	// The nonce makes a real block acceptable.
	a := wallet.NewKey()
	b := h.must(wallet.Send(h.head(h.genesis.Address()), a.Address(), ledger.NewAmount(1), ledger.Native, h.tick()))
	b.Sign(h.genesis.Private())
	var res struct {
		Nonce int64 `json:"nonce"`
	}
	h.okJSON(h.post("/pow", map[string]string{"hash": b.Hash.String()}), "POST /pow", &res)
	b.PowNonce = res.Nonce
	h.submit(b)

	for _, tc := range []struct {
		name  string
		body  string
		frags []string
	}{
		{"empty body", "", nil},
		{"malformed JSON", `{"hash": `, nil},
		{"not an object", `"abc"`, nil},
		{"missing hash", `{}`, []string{"hash is required"}},
		{"zero hash", `{"hash":"` + ledger.ZeroHash.String() + `"}`, []string{"hash is required"}},
		{"short hash", `{"hash":"abcd"}`, []string{"64 hex characters"}},
		{"not hex", `{"hash":"` + strings.Repeat("x", 64) + `"}`, []string{"not hexadecimal"}},
		{"hash as number", `{"hash":12}`, nil},
		{"unknown field", `{"hash":"` + randomHash().String() + `","threshold":"ffff"}`, []string{"unknown field"}},
		// Nothing may follow the object: no proof of work is searched for.
		{"trailing garbage", `{"hash":"` + randomHash().String() + `"} garbage`, []string{"trailing data"}},
		{"a stray brace", `{"hash":"` + randomHash().String() + `"}}`, []string{"trailing data"}},
	} {
		checkError(t, h.post("/pow", tc.body), http.StatusBadRequest, "POST /pow ("+tc.name+")", tc.frags...)
	}
	checkError(t, h.post("/pow", strings.Repeat(" ", 8<<10)+`{"hash":"`+randomHash().String()+`"}`),
		http.StatusBadRequest, "POST /pow (oversized body)")
}

// TestPoWTurns: an public address has one POST /pow
// searching or waiting for its turn at a time (429 for a second), and the
// node holds MaxPoWWaiting of them in all (503 past it, from loopback
// too); a bad body is 400 before either limit is asked.
func TestPoWTurns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	body := `{"hash":"` + randomHash().String() + `"}`
	release, err := h.api.Hold("pow", "192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	r := h.from("192.0.2.7", "POST", "/pow", body)
	checkError(t, r, http.StatusTooManyRequests, "a second POST /pow from one address", "one address has one at a time")
	checkRetryAfter(t, r, "5", "a second POST /pow from one address")
	checkError(t, h.from("192.0.2.7", "POST", "/pow", `{}`), http.StatusBadRequest, "a bad POST /pow from a held address", "hash is required")
	h.okJSON(h.from("2001:db8::7", "POST", "/pow", body), "POST /pow from another address", nil)
	release()
	h.okJSON(h.from("192.0.2.7", "POST", "/pow", body), "POST /pow once the address's first is done", nil)

	var many []string
	for i := range nodeapi.MaxPoWWaiting {
		many = append(many, fmt.Sprintf("10.0.%d.%d", i>>8, i&255))
	}
	h.holdAll("pow", many...)
	for _, r := range []resp{h.from("192.0.2.8", "POST", "/pow", body), h.post("/pow", body)} {
		checkError(t, r, http.StatusServiceUnavailable, "POST /pow with the node's turns taken", "waiting for their turn")
		checkRetryAfter(t, r, "5", "POST /pow with the node's turns taken")
	}
}

// TestNodeInfo covers GET /node.
func TestNodeInfo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	info := func() map[string]json.RawMessage {
		var m map[string]json.RawMessage
		h.getJSON("/node", &m)
		return m
	}
	m := info()
	for _, f := range []string{"version", "peer_id", "account", "uptime_seconds"} {
		if _, ok := m[f]; !ok {
			t.Errorf("GET /node lacks %s: %v", f, m)
		}
	}
	var version, peerID, account string
	json.Unmarshal(m["version"], &version)
	json.Unmarshal(m["account"], &account)
	if err := json.Unmarshal(m["peer_id"], &peerID); err != nil {
		t.Errorf("peer_id %s is not a string", m["peer_id"])
	}
	if version != node.Version {
		t.Errorf("version %q, want %q", version, node.Version)
	}
	if account != h.n.Key.Address().String() {
		t.Errorf("account %q, want the node's key %s", account, h.n.Key.Address())
	}
	if got := string(m["uptime_seconds"]); got != "0" {
		t.Errorf("uptime_seconds %s at start, want 0", got)
	}
	var network, genesis string
	json.Unmarshal(m["network"], &network)
	json.Unmarshal(m["genesis"], &genesis)
	if network != "apitest" || genesis != h.gblock.Hash.String() {
		t.Errorf("network %q genesis %q, want apitest and %s", network, genesis, h.gblock.Hash)
	}
	var work ledger.Work
	if err := json.Unmarshal(m["work"], &work); err != nil || work != ledger.DevWork {
		t.Errorf("work %s, want %+v (%v)", m["work"], ledger.DevWork, err)
	}

	h.advance(90*time.Second + 500*time.Millisecond)
	if got := string(info()["uptime_seconds"]); got != "90" {
		t.Errorf("uptime_seconds %s after 90.5 s, want 90", got)
	}
}

// TestPendingAndFrontiers covers GET /pending, /pending/{address} and
// /frontiers.
func TestPendingAndFrontiers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	g := h.genesis.Address()
	a, b, nobody := wallet.NewKey(), wallet.NewKey(), wallet.NewKey()

	if r := h.getJSON("/pending", nil); strings.TrimSpace(r.String()) != "[]" {
		t.Errorf("GET /pending on a new ledger = %s, want []", r)
	}
	h.fund(a, 1_000)
	toA := h.send(h.genesis, a.Address(), 300, ledger.Native)
	toB1 := h.send(h.genesis, b.Address(), 200, ledger.Native)
	h.submit(h.claimBlock(a))
	toB2 := h.send(a, b.Address(), 7, ledger.Stable)

	type pending struct {
		SendHash, Source, Destination, Amount, Asset string
	}
	decode := func(path string) []pending {
		var raw []json.RawMessage
		h.getJSON(path, &raw)
		out := make([]pending, len(raw))
		for i, r := range raw {
			checkFields(t, r, "GET "+path+" element", "send_hash", "source", "destination", "amount", "asset")
			var m map[string]string // every field is a string: amounts too
			if err := json.Unmarshal(r, &m); err != nil {
				t.Fatalf("GET %s element %s: %v", path, r, err)
			}
			out[i] = pending{m["send_hash"], m["source"], m["destination"], m["amount"], m["asset"]}
		}
		slices.SortFunc(out, func(x, y pending) int { return strings.Compare(x.SendHash, y.SendHash) })
		return out
	}
	p := func(s *ledger.Block) pending {
		return pending{s.Hash.String(), s.Account.String(), s.Destination.String(), s.Amount.String(), s.Asset.String()}
	}
	sorted := func(ps ...pending) []pending {
		slices.SortFunc(ps, func(x, y pending) int { return strings.Compare(x.SendHash, y.SendHash) })
		return ps
	}
	for _, tc := range []struct {
		path string
		want []pending
	}{
		{"/pending", sorted(p(toA), p(toB1), p(toB2))},
		{"/pending/" + a.Address().String(), sorted(p(toA))},
		{"/pending/" + b.Address().String(), sorted(p(toB1), p(toB2))},
		{"/pending/" + g.String(), []pending{}},
		{"/pending/" + nobody.Address().String(), []pending{}},
	} {
		if got := decode(tc.path); !slices.Equal(got, tc.want) {
			t.Errorf("GET %s = %+v, want %+v", tc.path, got, tc.want)
		}
	}
	if r := h.getJSON("/pending/"+nobody.Address().String(), nil); strings.TrimSpace(r.String()) != "[]" {
		t.Errorf("GET /pending/{no pending} = %s, want []", r)
	}
	if r := h.getJSON("/pending/"+b.Address().String(), nil); !strings.Contains(r.String(), `"amount":"7"`) ||
		!strings.Contains(r.String(), `"asset":"stable"`) {
		t.Errorf("GET /pending/{b} = %s, want the amount as a string and the asset by name", r)
	}
	h.receive(a, toA)
	if got := decode("/pending/" + a.Address().String()); len(got) != 0 {
		t.Errorf("GET /pending/{a} after receiving = %+v, want none", got)
	}
	for _, bad := range []string{"xyz", strings.Repeat("q", 64), g.String()[:62]} {
		checkError(t, h.get("/pending/"+bad), http.StatusBadRequest, "GET /pending/"+bad, "invalid address")
	}

	// Frontiers: every account's latest block, matching GET /accounts.
	var fr map[string]string
	h.getJSON("/frontiers", &fr)
	var accts []struct {
		Address  string `json:"address"`
		Frontier string `json:"frontier"`
	}
	h.getJSON("/accounts", &accts)
	if len(fr) != len(accts) || len(fr) != 2 {
		t.Errorf("GET /frontiers has %d entries, /accounts %d; want 2", len(fr), len(accts))
	}
	for _, acct := range accts {
		if fr[acct.Address] != acct.Frontier {
			t.Errorf("frontier of %s = %q, /accounts says %q", acct.Address, fr[acct.Address], acct.Frontier)
		}
	}
	if fr[g.String()] != toB1.Hash.String() {
		t.Errorf("frontier of genesis = %s, want %s", fr[g.String()], toB1.Hash)
	}
}

// TestConflictsEmpty covers GET /conflicts without forks (TestFork covers
// them with one).
func TestConflictsEmpty(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, path := range []string{"/conflicts", "/conflicts/" + h.genesis.Address().String(), "/conflicts/" + wallet.NewKey().Address().String()} {
		if r := h.getJSON(path, nil); strings.TrimSpace(r.String()) != "[]" {
			t.Errorf("GET %s = %s, want []", path, r)
		}
	}
	for _, bad := range []string{"abc", strings.Repeat("z", 64)} {
		checkError(t, h.get("/conflicts/"+bad), http.StatusBadRequest, "GET /conflicts/"+bad, "invalid account")
	}
}

// TestRouting covers unknown paths and wrong methods.
func TestRouting(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	g := h.genesis.Address().String()
	for _, tc := range []struct {
		method, path string
	}{
		{"GET", "/"},
		{"GET", "/nope"},
		{"POST", "/nope"},
		{"GET", "/accounts/" + g + "/history"},
		{"GET", "/blocks/" + g + "/x"},
		{"GET", "/chat/messages"},
		{"GET", "/machines"},
		{"DELETE", "/statechain/kv/x"},
	} {
		what := tc.method + " " + tc.path
		checkError(t, h.do(tc.method, tc.path, nil), http.StatusNotFound, what, "no endpoint", tc.path)
	}
	for _, tc := range []struct {
		method, path, allow string
	}{
		{"DELETE", "/accounts", "GET"},
		{"POST", "/accounts", "GET"},
		{"PUT", "/accounts/" + g, "GET"},
		{"POST", "/accounts/" + g + "/balance", "GET"},
		{"DELETE", "/accounts/" + g + "/chain", "GET"},
		{"GET", "/pow", "POST"},
		{"PUT", "/pow", "POST"},
		{"POST", "/node", "GET"},
		{"DELETE", "/pending", "GET"},
		{"PATCH", "/frontiers", "GET"},
		{"POST", "/conflicts", "GET"},
		{"PUT", "/blocks/recent", "GET"},
		{"POST", "/blocks/recent", "GET"},
		{"POST", "/blocks/" + strings.Repeat("ab", 32), "GET"},
		{"PUT", "/blocks/send", "POST"},
		{"DELETE", "/blocks/multisig_open", "POST"},
	} {
		checkNotAllowed(t, h, tc.method, tc.path, tc.allow)
	}
	// A submission's path is not a block hash: GET and HEAD of every
	// /blocks/{type} the node accepts answer 405 like other methods, not
	// 400 "invalid block hash".
	for _, typ := range ledger.AcceptedTypes() {
		for _, method := range []string{"GET", "HEAD", "DELETE"} {
			checkNotAllowed(t, h, method, "/blocks/"+typ.String(), "POST")
		}
	}
}

// TestRoutingNodeWithChat covers the wrong methods of the paths a node
// with chat and the state chain adds: a path that takes GET and POST
// lists both, and /directory/register is a submission's path, not an
// account's.
func TestRoutingNodeWithChat(t *testing.T) {
	h := newChatHarness(t, chatnet.Config{})
	for _, tc := range []struct {
		method, path, allow string
	}{
		{"DELETE", "/statechain/blocks", "GET, POST"},
		{"PUT", "/statechain/blocks", "GET, POST"},
		{"GET", "/directory/register", "POST"},
		{"HEAD", "/directory/register", "POST"},
		{"DELETE", "/directory/register", "POST"},
		{"GET", "/chat/send", "POST"},
		{"POST", "/directory", "GET"},
		{"POST", "/directory/" + wallet.NewKey().Address().String(), "GET"},
	} {
		checkNotAllowed(t, h.harness, tc.method, tc.path, tc.allow)
	}
}

// checkNotAllowed checks that method on path answers 405 with the Allow
// header allow and an Error body (none for HEAD).
func checkNotAllowed(t *testing.T, h *harness, method, path, allow string) {
	t.Helper()
	what := method + " " + path
	r := h.do(method, path, nil)
	if method == http.MethodHead {
		if r.status != http.StatusMethodNotAllowed || len(r.body) != 0 {
			t.Errorf("%s: status %d, body %q, want 405 and none", what, r.status, r.body)
		}
	} else {
		checkError(t, r, http.StatusMethodNotAllowed, what, method, "not allowed", "use "+allow)
	}
	if got := r.header.Get("Allow"); got != allow {
		t.Errorf("%s: Allow %q, want %q", what, got, allow)
	}
}

// TestBalancesAreStrings checks, on the raw JSON text, that balances and
// amounts are quoted decimal strings (BalanceStrings), never JSON numbers.
func TestBalancesAreStrings(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := wallet.NewKey()
	s, r := h.fund(a, 123_456)
	g := h.genesis.Address().String()
	for _, tc := range []struct {
		path  string
		frags []string
	}{
		{"/accounts", []string{`"balances":{"native":"999999876544"}`, `"balances":{"native":"123456"}`}},
		{"/accounts/" + g + "/balance", []string{`"native":"999999876544"`}},
		{"/blocks/" + s.Hash.String(), []string{`"balance":"999999876544"`, `"amount":"123456"`}},
		{"/blocks/" + r.Hash.String(), []string{`"balance":"123456"`, `"amount":"123456"`}},
		{"/blocks/recent", []string{`"balance":"123456"`}},
		{"/accounts/" + a.Address().String() + "/chain", []string{`"balance":"123456"`}},
	} {
		body := h.getJSON(tc.path, nil).String()
		for _, f := range tc.frags {
			if !strings.Contains(body, f) {
				t.Errorf("GET %s = %s, want it to contain %s", tc.path, body, f)
			}
		}
	}
}
