package nodeclient_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/testkit/openapitest"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/pow"
	"github.com/latticenet/lattice/wallet"
)

const supply = 1_000_000_000

// testNode is a real node (Pebble ledger in a temporary directory) served by
// nodeapi on a loopback HTTP server, with a client for it.
type testNode struct {
	t       *testing.T
	n       *node.Node
	srv     *httptest.Server
	c       *nodeclient.Client
	genesis wallet.Key
	gblock  *ledger.Block
}

func newTestNode(t *testing.T) *testNode {
	t.Helper()
	gk := wallet.NewKey()
	gb := ledger.NewGenesis(gk.Private(), ledger.NewAmount(supply), time.Now().Add(-time.Hour).UnixMilli())
	n, err := node.Open(node.Config{
		DataDir: t.TempDir(),
		Network: &node.Network{Name: "clienttest", Work: ledger.DevWork, Genesis: gb},
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatalf("node.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("node.Close: %v", err)
		}
	})
	// Every answer is held to docs/openapi/node.json.
	srv := httptest.NewServer(openapitest.Node.Handler(t, nodeapi.New(n, nodeapi.Options{})))
	t.Cleanup(srv.Close)
	// A trailing slash on the base URL is harmless.
	c := nodeclient.New(srv.URL+"/", &http.Client{Timeout: 30 * time.Second})
	return &testNode{t: t, n: n, srv: srv, c: c, genesis: gk, gblock: gb}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// prepare signs b with k (or, for multisig blocks, adds each key's
// signature) and solves its work locally.
func (tn *testNode) prepare(b *ledger.Block, ks ...wallet.Key) *ledger.Block {
	tn.t.Helper()
	if b.Type == ledger.TypeMultisigOpen || b.Type == ledger.TypeMultisigUpdate {
		for _, k := range ks {
			b.AddSignature(k.Private())
		}
	} else {
		b.Sign(ks[0].Private())
	}
	nonce, err := pow.Solve(ctx(tn.t), b.Hash, ledger.DevWork.For(b.Type))
	if err != nil {
		tn.t.Fatal(err)
	}
	b.PowNonce = nonce
	return b
}

// must returns b, failing the test if err is not nil.
func (tn *testNode) must(b *ledger.Block, err error) *ledger.Block {
	tn.t.Helper()
	if err != nil {
		tn.t.Fatal(err)
	}
	return b
}

// submit submits b through the client and checks the answer.
func (tn *testNode) submit(b *ledger.Block) *ledger.Block {
	tn.t.Helper()
	h, err := tn.c.Submit(ctx(tn.t), b)
	if err != nil {
		tn.t.Fatalf("Submit %s: %v", b.Type, err)
	}
	if h != b.Hash {
		tn.t.Fatalf("Submit %s: hash %s, want %s", b.Type, h, b.Hash)
	}
	return b
}

func (tn *testNode) head(a ledger.Address) wallet.Head {
	tn.t.Helper()
	h, err := tn.c.Head(ctx(tn.t), a)
	if err != nil {
		tn.t.Fatalf("Head(%s): %v", a, err)
	}
	return h
}

func now() int64 { return time.Now().UnixMilli() }

func TestClient(t *testing.T) {
	t.Parallel()
	tn := newTestNode(t)
	c, g := tn.c, tn.genesis.Address()
	a := wallet.NewKey()

	if got := c.BaseURL(); got != tn.srv.URL {
		t.Errorf("BaseURL() = %q, want %q (no trailing slash)", got, tn.srv.URL)
	}
	info, err := c.Node(ctx(t))
	if err != nil {
		t.Fatalf("Node: %v", err)
	}
	if info.Version != node.Version || info.Account != tn.n.Key.Address() || info.Network != "clienttest" ||
		info.Genesis != tn.gblock.Hash || info.Work != ledger.DevWork || info.UptimeSeconds < 0 {
		t.Errorf("Node() = %+v, want version %s, account %s, network clienttest, genesis %s, dev work",
			info, node.Version, tn.n.Key.Address(), tn.gblock.Hash)
	}

	// Head of a new account is zero; of an existing one, its chain head.
	if got, want := tn.head(a.Address()), (wallet.Head{Account: a.Address()}); got != want {
		t.Errorf("Head(new account) = %+v, want %+v", got, want)
	}
	gh := tn.head(g)
	if want := (wallet.Head{Account: g, Frontier: tn.gblock.Hash, Balances: [2]ledger.Amount{ledger.NewAmount(supply)},
		Timestamp: tn.gblock.Timestamp}); gh != want {
		t.Errorf("Head(genesis) = %+v, want %+v", gh, want)
	}

	// Send with the node's proof of work.
	send, err := wallet.Send(gh, a.Address(), ledger.NewAmount(1_000), ledger.Native, now())
	if err != nil {
		t.Fatal(err)
	}
	send.Sign(tn.genesis.Private())
	if send.PowNonce, err = c.PoW(ctx(t), send.Hash); err != nil {
		t.Fatalf("PoW: %v", err)
	}
	if !ledger.DevWork.Send.Met(send.Hash, send.PowNonce) {
		t.Errorf("PoW(%s) = %d, which does not meet the send threshold", send.Hash, send.PowNonce)
	}
	tn.submit(send)

	// Pending, all and per account.
	all, err := c.Pending(ctx(t), nil)
	if err != nil {
		t.Fatalf("Pending(nil): %v", err)
	}
	wantPending := nodewire.PendingSend{SendHash: send.Hash, Source: g, Destination: a.Address(),
		Amount: ledger.NewAmount(1_000), Asset: ledger.Native}
	if len(all) != 1 || all[0] != wantPending {
		t.Errorf("Pending(nil) = %+v, want [%+v]", all, wantPending)
	}
	addr := a.Address()
	mine, err := c.Pending(ctx(t), &addr)
	if err != nil || len(mine) != 1 || mine[0] != wantPending {
		t.Errorf("Pending(a) = %+v, %v; want [%+v]", mine, err, wantPending)
	}
	if none, err := c.Pending(ctx(t), &g); err != nil || len(none) != 0 {
		t.Errorf("Pending(genesis) = %+v, %v; want none", none, err)
	}
	if got := tn.head(a.Address()); got != (wallet.Head{Account: a.Address()}) {
		t.Errorf("Head(a) before receiving = %+v, want a new account", got)
	}

	// Receive and claim with locally solved work.
	p := mine[0]
	recv := tn.submit(tn.prepare(tn.must(wallet.Receive(tn.head(a.Address()), ledger.Pending{Send: p.SendHash, Source: p.Source,
		Destination: p.Destination, Amount: p.Amount, Asset: p.Asset}, now())), a))
	claim := tn.submit(tn.prepare(tn.must(wallet.Claim(tn.head(a.Address()), now())), a))
	if got, want := tn.head(a.Address()), (wallet.Head{Account: a.Address(), Frontier: claim.Hash,
		Balances:  [2]ledger.Amount{ledger.NewAmount(1_000), ledger.NewAmount(ledger.FaucetAmount)},
		Timestamp: claim.Timestamp}); got != want {
		t.Errorf("Head(a) = %+v, want %+v", got, want)
	}

	// Reads.
	acct, err := c.Account(ctx(t), a.Address())
	wantAcct := nodewire.Account{Address: a.Address(), Balances: map[string]string{"native": "1000", "stable": "100000000"},
		BlockCount: 2, Frontier: claim.Hash}
	if err != nil || !reflect.DeepEqual(acct, wantAcct) {
		t.Errorf("Account(a) = %+v, %v; want %+v", acct, err, wantAcct)
	}
	accts, err := c.Accounts(ctx(t))
	if err != nil || len(accts) != 2 {
		t.Errorf("Accounts() = %+v, %v; want 2 accounts", accts, err)
	}
	for _, x := range accts {
		if x.Address == a.Address() && !reflect.DeepEqual(x, wantAcct) {
			t.Errorf("Accounts() lists %+v, want %+v", x, wantAcct)
		}
	}
	bal, err := c.Balance(ctx(t), a.Address())
	if err != nil || !reflect.DeepEqual(bal, wantAcct.Balances) {
		t.Errorf("Balance(a) = %v, %v; want %v", bal, err, wantAcct.Balances)
	}
	chain, err := c.Chain(ctx(t), a.Address())
	if err != nil || len(chain) != 2 || !reflect.DeepEqual(chain[0].Block, recv) || !reflect.DeepEqual(chain[1].Block, claim) {
		t.Errorf("Chain(a) = %+v, %v; want [receive, claim]", chain, err)
	}
	blk, err := c.Block(ctx(t), send.Hash)
	if err != nil || !reflect.DeepEqual(blk.Block, send) {
		t.Errorf("Block(send) = %+v, %v; want %+v", blk, err, send)
	}
	recent, err := c.Recent(ctx(t), 2)
	if err != nil || len(recent) != 2 || recent[0].Hash != claim.Hash || recent[1].Hash != recv.Hash {
		t.Errorf("Recent(2) = %+v, %v; want [claim, receive]", recent, err)
	}
	fr, err := c.Frontiers(ctx(t))
	wantFr := map[ledger.Address]ledger.Hash{g: send.Hash, a.Address(): claim.Hash}
	if err != nil || !reflect.DeepEqual(fr, wantFr) {
		t.Errorf("Frontiers() = %v, %v; want %v", fr, err, wantFr)
	}

	// Conflicts: none, then one after a fork.
	if cs, err := c.Conflicts(ctx(t), nil); err != nil || len(cs) != 0 {
		t.Errorf("Conflicts(nil) = %+v, %v; want none", cs, err)
	}
	fork := tn.prepare(tn.must(wallet.Send(gh, wallet.NewKey().Address(), ledger.NewAmount(5), ledger.Native, now())), tn.genesis)
	_, err = c.Submit(ctx(t), fork)
	var apiErr *nodeclient.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || errors.Is(err, nodeclient.ErrNotFound) {
		t.Errorf("Submit(fork) = %v, want a 400 APIError that is not ErrNotFound", err)
	}
	for _, who := range []*ledger.Address{nil, &g} {
		cs, err := c.Conflicts(ctx(t), who)
		if err != nil || len(cs) != 1 || cs[0].AccountAddress != g || cs[0].PreviousHash != tn.gblock.Hash ||
			!reflect.DeepEqual(cs[0].BlockHashes, []ledger.Hash{send.Hash, fork.Hash}) {
			t.Errorf("Conflicts(%v) = %+v, %v; want the fork of genesis", who, cs, err)
			continue
		}
		if _, err := time.Parse(time.RFC3339, cs[0].DetectedAt); err != nil {
			t.Errorf("Conflict.DetectedAt %q: %v", cs[0].DetectedAt, err)
		}
	}
	if cs, err := c.Conflicts(ctx(t), &addr); err != nil || len(cs) != 0 {
		t.Errorf("Conflicts(a) = %+v, %v; want none", cs, err)
	}

	// Multisig: keyset and head.
	k1, k2 := wallet.NewKey(), wallet.NewKey()
	ks := ledger.NewKeyset(2, k1.Address(), k2.Address())
	m := ledger.MultisigAddress(ks)
	open := tn.submit(tn.prepare(wallet.MultisigOpen(ks, now()), k1, k2))
	got, err := c.Keyset(ctx(t), m)
	if err != nil || !got.Equal(ks) {
		t.Errorf("Keyset(multisig) = %+v, %v; want %+v", got, err, ks)
	}
	if h := tn.head(m); h != (wallet.Head{Account: m, Frontier: open.Hash, Timestamp: open.Timestamp}) {
		t.Errorf("Head(multisig) = %+v, want frontier %s and no balance", h, open.Hash)
	}
	up := tn.submit(tn.prepare(wallet.MultisigUpdate(tn.head(m), ledger.NewKeyset(1, k2.Address()), now()), k1, k2))
	if got, err := c.Keyset(ctx(t), m); err != nil || !got.Equal(*up.Keyset) {
		t.Errorf("Keyset after update = %+v, %v; want %+v", got, err, *up.Keyset)
	}
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	tn := newTestNode(t)
	c, g := tn.c, tn.genesis.Address()
	unknown := wallet.NewKey().Address()
	var unknownHash ledger.Hash
	copy(unknownHash[:], unknown[:])

	notFound := []struct {
		name string
		call func() error
	}{
		{"Account", func() error { _, err := c.Account(ctx(t), unknown); return err }},
		{"Balance", func() error { _, err := c.Balance(ctx(t), unknown); return err }},
		{"Chain", func() error { _, err := c.Chain(ctx(t), unknown); return err }},
		{"Keyset of an unknown account", func() error { _, err := c.Keyset(ctx(t), unknown); return err }},
		{"Keyset of a single-key account", func() error { _, err := c.Keyset(ctx(t), g); return err }},
		{"Block", func() error { _, err := c.Block(ctx(t), unknownHash); return err }},
		{"Lease", func() error { _, err := c.Lease(ctx(t), unknownHash); return err }},
	}
	for _, tc := range notFound {
		err := tc.call()
		if !errors.Is(err, nodeclient.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", tc.name, err)
		}
		var apiErr *nodeclient.APIError
		if !errors.As(err, &apiErr) {
			t.Errorf("%s: %T is not an *APIError", tc.name, err)
			continue
		}
		if apiErr.StatusCode != http.StatusNotFound {
			t.Errorf("%s: StatusCode %d, want 404", tc.name, apiErr.StatusCode)
		}
		if apiErr.Message == "" || strings.ContainsAny(apiErr.Message, "{}") {
			t.Errorf("%s: Message %q, want the error field's text only", tc.name, apiErr.Message)
		}
		if !strings.Contains(err.Error(), apiErr.Message) || !strings.Contains(err.Error(), "HTTP 404") {
			t.Errorf("%s: Error() = %q, want the message and the status", tc.name, err)
		}
	}

	badSig := tn.prepare(tn.must(wallet.Send(tn.head(g), unknown, ledger.NewAmount(1), ledger.Native, now())), tn.genesis)
	badSig.Signature[0] ^= 1
	badRequest := []struct {
		name, fragment string
		call           func() error
	}{
		{"Recent(0)", "limit", func() error { _, err := c.Recent(ctx(t), 0); return err }},
		{"Recent(501)", "limit", func() error { _, err := c.Recent(ctx(t), 501); return err }},
		{"Submit with a bad signature", "bad signature", func() error { _, err := c.Submit(ctx(t), badSig); return err }},
		{"PoW of the zero hash", "hash is required", func() error { _, err := c.PoW(ctx(t), ledger.ZeroHash); return err }},
	}
	for _, tc := range badRequest {
		err := tc.call()
		var apiErr *nodeclient.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %v, want a 400 APIError", tc.name, err)
			continue
		}
		if errors.Is(err, nodeclient.ErrNotFound) {
			t.Errorf("%s: a 400 matches ErrNotFound", tc.name)
		}
		if !strings.Contains(apiErr.Message, tc.fragment) {
			t.Errorf("%s: Message %q does not mention %q", tc.name, apiErr.Message, tc.fragment)
		}
	}

	// Head fails, rather than reporting a new account, when the node does.
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Head(cancelled, g); !errors.Is(err, context.Canceled) {
		t.Errorf("Head with a cancelled context: %v, want context.Canceled", err)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	dc := nodeclient.New(down.URL, nil)
	if _, err := dc.Head(ctx(t), g); err == nil || errors.Is(err, nodeclient.ErrNotFound) {
		t.Errorf("Head from a stopped node: %v, want a connection error", err)
	}
	var apiErr *nodeclient.APIError
	if _, err := dc.Node(ctx(t)); err == nil || errors.As(err, &apiErr) {
		t.Errorf("Node from a stopped node: %v, want a connection error, not an APIError", err)
	}
}

// TestClientPlainTextError checks the client's answer to an error body that
// is not the node's JSON, as a reverse proxy in front of a node may send.
func TestClientPlainTextError(t *testing.T) {
	t.Parallel()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream node unavailable", http.StatusBadGateway)
	}))
	t.Cleanup(proxy.Close)
	_, err := nodeclient.New(proxy.URL, nil).Node(ctx(t))
	var apiErr *nodeclient.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadGateway || apiErr.Message != "upstream node unavailable" {
		t.Errorf("Node via a failing proxy: %#v, want APIError 502 with the body as message", err)
	}
	if errors.Is(err, nodeclient.ErrNotFound) {
		t.Errorf("a 502 matches ErrNotFound")
	}
}
