package nodeapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/run/httpmetrics"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/pow"
	"github.com/latticenet/lattice/wallet"
)

// t0 is the node's clock when a harness starts: 2026-01-01T00:00:00Z. The
// clock only moves when a test moves it, so timestamps, uptime and conflict
// detection times are exact.
const t0 = int64(1_767_225_600_000)

// supply is the genesis account's starting native balance, in base units.
const supply = 1_000_000_000_000

// testClock is the node's clock, in Unix milliseconds.
type testClock struct{ ms atomic.Int64 }

func (c *testClock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

// harness is one real node (Pebble ledger in a temporary directory, write
// engine) served by nodeapi over a real loopback HTTP server.
type harness struct {
	t       *testing.T
	n       *node.Node
	api     *nodeapi.Server
	url     string
	hc      *http.Client
	clock   *testClock
	genesis wallet.Key    // controls the genesis account
	gblock  *ledger.Block // the genesis block
	work    ledger.Work
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessAt(t, time.Hour)
}

// newHarnessAt is newHarness with a genesis block genesisAge older than the
// node's clock.
func newHarnessAt(t *testing.T, genesisAge time.Duration) *harness {
	t.Helper()
	clock := &testClock{}
	clock.ms.Store(t0)
	gk := wallet.NewKey()
	gb := ledger.NewGenesis(gk.Private(), ledger.NewAmount(supply), t0-genesisAge.Milliseconds())
	net := &node.Network{Name: "apitest", Work: ledger.DevWork, Genesis: gb}
	reg := httpmetrics.NewRegistry()
	n, err := node.Open(node.Config{
		DataDir: t.TempDir(),
		Network: net,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:     clock.now,
		Metrics: reg,
	})
	if err != nil {
		t.Fatalf("node.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("node.Close: %v", err)
		}
	})
	api := nodeapi.New(n, nodeapi.Options{Metrics: httpmetrics.New(reg, "node"), MetricsHandler: httpmetrics.Handler(reg)})
	srv := httptest.NewServer(openapitest.Node.Handler(t, api))
	t.Cleanup(srv.Close) // runs before n.Close: cleanups are last in, first out
	hc := srv.Client()
	hc.Timeout = 30 * time.Second
	return &harness{t: t, n: n, api: api, url: srv.URL, hc: hc, clock: clock, genesis: gk, gblock: gb, work: net.Work}
}

// tick advances the clock by one millisecond and returns the new time, so
// that every block a test builds has its own timestamp.
func (h *harness) tick() int64 { return h.clock.ms.Add(1) }

// advance moves the clock forward by d.
func (h *harness) advance(d time.Duration) { h.clock.ms.Add(d.Milliseconds()) }

// resp is an HTTP answer read whole.
type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) String() string { return string(r.body) }

func (h *harness) do(method, path string, body io.Reader) resp {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+path, body)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := h.hc.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: data}
}

// from sends a request to the API's handler as a client at the IP
// address addr would: the test's own requests come from loopback, which
// the limits per address spare.
func (h *harness) from(addr, method, path, body string) resp {
	h.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = net.JoinHostPort(addr, "40000")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.api.ServeHTTP(rec, req)
	return resp{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// holdAll holds limit (as nodeapi.Server.Hold) for each address and
// releases them when the test ends.
func (h *harness) holdAll(limit string, addrs ...string) {
	h.t.Helper()
	for _, a := range addrs {
		release, err := h.api.Hold(limit, a)
		if err != nil {
			h.t.Fatalf("hold %s for %s: %v", limit, a, err)
		}
		h.t.Cleanup(release)
	}
}

// checkRetryAfter fails unless r says when to retry, in seconds.
func checkRetryAfter(t *testing.T, r resp, want, what string) {
	t.Helper()
	if got := r.header.Get("Retry-After"); got != want {
		t.Errorf("%s: Retry-After %q, want %q", what, got, want)
	}
}

func (h *harness) get(path string) resp {
	h.t.Helper()
	return h.do(http.MethodGet, path, nil)
}

// post sends body as is when it is a string or []byte, and as JSON
// otherwise.
func (h *harness) post(path string, body any) resp {
	h.t.Helper()
	var data []byte
	switch v := body.(type) {
	case string:
		data = []byte(v)
	case []byte:
		data = v
	default:
		var err error
		if data, err = json.Marshal(v); err != nil {
			h.t.Fatalf("encode body for %s: %v", path, err)
		}
	}
	return h.do(http.MethodPost, path, bytes.NewReader(data))
}

// okJSON checks a 200 JSON answer and decodes it into v (when non-nil).
func (h *harness) okJSON(r resp, what string, v any) {
	h.t.Helper()
	if r.status != http.StatusOK {
		h.t.Fatalf("%s: status %d, want 200; body %s", what, r.status, r.body)
	}
	checkContentType(h.t, r, what)
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			h.t.Fatalf("%s: decode %s: %v", what, r.body, err)
		}
	}
}

// getJSON GETs path, checks for 200 JSON and decodes the body into v.
func (h *harness) getJSON(path string, v any) resp {
	h.t.Helper()
	r := h.get(path)
	h.okJSON(r, "GET "+path, v)
	return r
}

func checkContentType(t *testing.T, r resp, what string) {
	t.Helper()
	ct := r.header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
}

// checkError checks that r is an Error answer with status want: JSON, with
// exactly one field, error, a non-empty message containing every one of
// fragments (case-insensitively). It returns the message.
func checkError(t *testing.T, r resp, want int, what string, fragments ...string) string {
	t.Helper()
	if r.status != want {
		t.Errorf("%s: status %d, want %d; body %s", what, r.status, want, r.body)
	}
	checkContentType(t, r, what)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &fields); err != nil {
		t.Errorf("%s: error body %q is not a JSON object: %v", what, r.body, err)
		return ""
	}
	if got := sortedKeys(fields); !slices.Equal(got, []string{"error"}) {
		t.Errorf("%s: error body fields %v, want [error]", what, got)
	}
	var msg string
	if err := json.Unmarshal(fields["error"], &msg); err != nil {
		t.Errorf("%s: error field %s is not a string", what, fields["error"])
	}
	if strings.TrimSpace(msg) == "" {
		t.Errorf("%s: error message is empty", what)
	}
	for _, f := range fragments {
		if !strings.Contains(strings.ToLower(msg), strings.ToLower(f)) {
			t.Errorf("%s: error %q does not mention %q", what, msg, f)
		}
	}
	return msg
}

// checkFields checks that the JSON object obj has exactly the fields want.
func checkFields(t *testing.T, obj json.RawMessage, what string, want ...string) {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(obj, &fields); err != nil {
		t.Fatalf("%s: %s is not a JSON object: %v", what, obj, err)
	}
	slices.Sort(want)
	if got := sortedKeys(fields); !slices.Equal(got, want) {
		t.Errorf("%s: fields %v, want %v", what, got, want)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// --- ledger state ---

// ledgerState is every read that a block can change, as raw JSON.
type ledgerState struct {
	frontiers, pending, accounts, recent string
}

func (h *harness) state() ledgerState {
	h.t.Helper()
	return ledgerState{
		frontiers: h.getJSON("/frontiers", nil).String(),
		pending:   h.getJSON("/pending", nil).String(),
		accounts:  h.getJSON("/accounts", nil).String(),
		recent:    h.getJSON("/blocks/recent?limit=500", nil).String(),
	}
}

// unchanged fails the test if the ledger differs from before.
func (h *harness) unchanged(before ledgerState, what string) {
	h.t.Helper()
	if after := h.state(); after != before {
		h.t.Errorf("%s changed the ledger:\nbefore %+v\nafter  %+v", what, before, after)
	}
}

// --- building blocks ---

// head returns what a wallet needs to extend a's chain, read from the node's
// store (a new account has a zero Head).
func (h *harness) head(a ledger.Address) wallet.Head {
	h.t.Helper()
	acct, found, err := h.n.Store.Account(a)
	if err != nil {
		h.t.Fatalf("read account %s: %v", a, err)
	}
	if !found {
		return wallet.Head{Account: a}
	}
	return wallet.HeadOf(acct)
}

// solve sets b's pow_nonce to one meeting the network threshold for b.
func (h *harness) solve(b *ledger.Block) *ledger.Block {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nonce, err := pow.Solve(ctx, b.Hash, h.work.For(b.Type))
	if err != nil {
		h.t.Fatalf("pow.Solve: %v", err)
	}
	b.PowNonce = nonce
	return b
}

// failingNonce returns a nonce that does not meet the threshold for b, found
// deterministically.
func (h *harness) failingNonce(b *ledger.Block) int64 {
	t := h.work.For(b.Type)
	for nonce := int64(0); ; nonce++ {
		if !t.Met(b.Hash, nonce) {
			return nonce
		}
	}
}

// signed signs b with k and solves its work.
func (h *harness) signed(b *ledger.Block, k wallet.Key) *ledger.Block {
	h.t.Helper()
	b.Sign(k.Private())
	return h.solve(b)
}

// multisigned adds each key's multisig signature to b and solves its work.
func (h *harness) multisigned(b *ledger.Block, ks ...wallet.Key) *ledger.Block {
	h.t.Helper()
	for _, k := range ks {
		b.AddSignature(k.Private())
	}
	return h.solve(b)
}

// must returns b, failing the test if err is not nil; it takes a wallet
// constructor's results directly.
func (h *harness) must(b *ledger.Block, err error) *ledger.Block {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// sendBlock builds a signed, solved, unsubmitted send from k's account.
func (h *harness) sendBlock(k wallet.Key, to ledger.Address, amount uint64, asset ledger.Asset) *ledger.Block {
	h.t.Helper()
	b := h.must(wallet.Send(h.head(k.Address()), to, ledger.NewAmount(amount), asset, h.tick()))
	return h.signed(b, k)
}

// receiveBlock builds a signed, solved, unsubmitted receive of send by k.
func (h *harness) receiveBlock(k wallet.Key, send *ledger.Block) *ledger.Block {
	h.t.Helper()
	b := h.must(wallet.Receive(h.head(k.Address()), pendingOf(send), h.tick()))
	return h.signed(b, k)
}

// claimBlock builds a signed, solved, unsubmitted faucet claim by k.
func (h *harness) claimBlock(k wallet.Key) *ledger.Block {
	h.t.Helper()
	return h.signed(h.must(wallet.Claim(h.head(k.Address()), h.tick())), k)
}

func pendingOf(send *ledger.Block) ledger.Pending {
	return ledger.Pending{Send: send.Hash, Source: send.Account, Destination: send.Destination,
		Amount: send.Amount, Asset: send.Asset}
}

// submit posts b to /blocks/{type}, expects 200 {"hash": b.Hash} and
// returns b.
func (h *harness) submit(b *ledger.Block) *ledger.Block {
	h.t.Helper()
	path := "/blocks/" + b.Type.String()
	r := h.post(path, b)
	var got map[string]json.RawMessage
	h.okJSON(r, "POST "+path, &got)
	checkFields(h.t, r.body, "POST "+path, "hash")
	var hash ledger.Hash
	if err := json.Unmarshal(got["hash"], &hash); err != nil {
		h.t.Fatalf("POST %s: hash %s: %v", path, got["hash"], err)
	}
	if hash != b.Hash {
		h.t.Errorf("POST %s: hash %s, want %s", path, hash, b.Hash)
	}
	return b
}

// refuse posts b to /blocks/{type}, expects 400 with an error mentioning
// fragments, and checks that the ledger did not change.
func (h *harness) refuse(b *ledger.Block, what string, fragments ...string) string {
	h.t.Helper()
	before := h.state()
	r := h.post("/blocks/"+b.Type.String(), b)
	msg := checkError(h.t, r, http.StatusBadRequest, what, fragments...)
	h.unchanged(before, what)
	return msg
}

// send builds and submits a send from k's account.
func (h *harness) send(k wallet.Key, to ledger.Address, amount uint64, asset ledger.Asset) *ledger.Block {
	h.t.Helper()
	return h.submit(h.sendBlock(k, to, amount, asset))
}

// receive builds and submits k's receive of send.
func (h *harness) receive(k wallet.Key, send *ledger.Block) *ledger.Block {
	h.t.Helper()
	return h.submit(h.receiveBlock(k, send))
}

// fund opens k's account with amount native from the genesis account and
// returns the send and the receive.
func (h *harness) fund(k wallet.Key, amount uint64) (send, recv *ledger.Block) {
	h.t.Helper()
	send = h.send(h.genesis, k.Address(), amount, ledger.Native)
	return send, h.receive(k, send)
}

func keysetOf(threshold int, ks ...wallet.Key) ledger.Keyset {
	addrs := make([]ledger.Address, len(ks))
	for i, k := range ks {
		addrs[i] = k.Address()
	}
	return ledger.NewKeyset(threshold, addrs...)
}

// jsonWith returns b's JSON with its top-level fields changed by edit.
func jsonWith(t *testing.T, b *ledger.Block, edit func(m map[string]any)) []byte {
	t.Helper()
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	return data
}

func randomHash() ledger.Hash {
	var h ledger.Hash
	a := wallet.NewKey().Address()
	copy(h[:], a[:])
	return h
}
