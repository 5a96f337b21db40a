package node

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/ledgerstore"
	"github.com/latticenet/lattice/wallet"
)

// chains wraps wallet.Chains for tests: a build error fails the test.
type chains struct {
	t *testing.T
	c *wallet.Chains
}

func newChains(t *testing.T, genesis wallet.Key, g *ledger.Block) *chains {
	return &chains{t: t, c: wallet.NewChains(ledger.DevWork, genesis, g)}
}

func (c *chains) key(k wallet.Key) { c.c.Add(k, nil) }

func (c *chains) send(from, to wallet.Key, amount uint64) *ledger.Block {
	c.t.Helper()
	b, err := c.c.Send(from, to.Address(), amount)
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

func (c *chains) receive(to wallet.Key, send *ledger.Block, rep ledger.Address) *ledger.Block {
	c.t.Helper()
	b, err := c.c.Receive(to, send, rep)
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

// at moves k's head back to block b, to build a fork on it.
func (c *chains) at(_ wallet.Key, b *ledger.Block) { c.c.At(b) }

func openMemEngine(t *testing.T) (*ledgerstore.Store, *Engine, *chains, wallet.Key) {
	t.Helper()
	st, err := ledgerstore.Open("ledger", ledgerstore.Options{FS: vfs.NewMem(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	gk := wallet.NewKey()
	g := ledger.NewGenesis(gk.Private(), ledger.NewAmount(1_000_000), time.Now().UnixMilli())
	if err := st.Init(g, Network{Name: "t", Work: ledger.DevWork, Genesis: g}); err != nil {
		t.Fatal(err)
	}
	e := NewEngine(st, ledger.Fixed{Work: ledger.DevWork}, quiet, time.Now)
	t.Cleanup(func() { e.Close(); st.Close() })
	return st, e, newChains(t, gk, g), gk
}

func submitAll(t *testing.T, e *Engine, blocks ...*ledger.Block) {
	t.Helper()
	for _, b := range blocks {
		if _, err := e.Submit(context.Background(), b); err != nil {
			t.Fatalf("submit %s %s: %v", b.Type, b.Hash, err)
		}
	}
}

func weight(t *testing.T, st *ledgerstore.Store, rep ledger.Address) uint64 {
	t.Helper()
	w, err := st.Weight(rep)
	if err != nil {
		t.Fatal(err)
	}
	_, lo := w.Parts()
	return lo
}

func TestWeightsFollowBalancesAndRepresentatives(t *testing.T) {
	st, e, c, gk := openMemEngine(t)
	alice, rep := wallet.NewKey(), wallet.NewKey()
	c.key(alice)
	s := c.send(gk, alice, 300)
	submitAll(t, e, s)
	if got := weight(t, st, gk.Address()); got != 999_700 {
		t.Errorf("genesis weight after sending 300: got %d, want 999700", got)
	}
	// Alice names a representative: her balance counts for it, not her.
	submitAll(t, e, c.receive(alice, s, rep.Address()))
	if got, self := weight(t, st, rep.Address()), weight(t, st, alice.Address()); got != 300 || self != 0 {
		t.Errorf("after alice's receive naming rep: rep %d, alice %d; want 300, 0", got, self)
	}
	// A later block without a representative keeps the one named.
	submitAll(t, e, c.send(alice, gk, 100))
	if got := weight(t, st, rep.Address()); got != 200 {
		t.Errorf("after alice sends 100: rep weight %d, want 200", got)
	}
}

func TestConfirmTakesDependencies(t *testing.T) {
	st, e, c, gk := openMemEngine(t)
	alice := wallet.NewKey()
	c.key(alice)
	s1 := c.send(gk, alice, 10)
	s2 := c.send(gk, alice, 20)
	r1 := c.receive(alice, s2, ledger.Address{})
	submitAll(t, e, s1, s2, r1)
	ctx := context.Background()
	sub := e.Subscribe(8)
	defer sub.Close()

	res, err := e.Confirm(ctx, r1.Hash, []byte("votes"))
	if err != nil {
		t.Fatal(err)
	}
	// r1 needs s2, which needs s1: all three, the sends first.
	want := []ledger.Hash{s1.Hash, s2.Hash, r1.Hash}
	if len(res.Confirmed) != len(want) {
		t.Fatalf("confirmed %v, want %v", res.Confirmed, want)
	}
	for i := range want {
		if res.Confirmed[i] != want[i] {
			t.Errorf("confirmed[%d] = %s, want %s", i, res.Confirmed[i], want[i])
		}
	}
	if h, _, _, _ := st.Confirmed(gk.Address()); h != 3 {
		t.Errorf("genesis chain confirmed to %d, want 3", h)
	}
	if cert, found, _ := st.Certificate(r1.Hash); !found || string(cert) != "votes" {
		t.Errorf("certificate of r1: %q, %v", cert, found)
	}
	ch := <-sub.C
	if len(ch.Confirmed) != 3 {
		t.Errorf("feed: %d confirmed, want 3", len(ch.Confirmed))
	}
	// Again: nothing new.
	if res, err := e.Confirm(ctx, s1.Hash, nil); err != nil || len(res.Confirmed) != 0 {
		t.Errorf("confirm again: %v, %v; want nothing new", res.Confirmed, err)
	}
	if _, err := e.Confirm(ctx, ledger.Hash{1}, nil); !errors.Is(err, ledger.ErrNotInLedger) {
		t.Errorf("confirm unknown: got %v, want ErrNotInLedger", err)
	}
}

func TestResolveRollsBackTheLoserAndItsDependents(t *testing.T) {
	st, e, c, gk := openMemEngine(t)
	alice, bob := wallet.NewKey(), wallet.NewKey()
	c.key(alice)
	c.key(bob)
	fund := c.send(gk, alice, 1000)
	open := c.receive(alice, fund, ledger.Address{})
	submitAll(t, e, fund, open)
	// Alice's chain: loser (send to bob), received by bob, then more.
	loser := c.send(alice, bob, 400)
	bobOpen := c.receive(bob, loser, ledger.Address{})
	after := c.send(alice, gk, 1)
	submitAll(t, e, loser, bobOpen, after)
	c.at(alice, open)
	winner := c.send(alice, gk, 7)
	ctx := context.Background()
	if _, err := e.Submit(ctx, winner); !errors.As(err, new(*ledger.ForkError)) {
		t.Fatalf("winner submitted: got %v, want a fork", err)
	}
	sub := e.Subscribe(8)
	defer sub.Close()
	res, err := e.Resolve(ctx, winner)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RolledBack) != 3 {
		t.Errorf("rolled back %d blocks, want 3 (after, bob's receive, loser)", len(res.RolledBack))
	}
	for _, b := range []*ledger.Block{loser, bobOpen, after} {
		if _, found, _ := st.Entry(b.Hash); found {
			t.Errorf("%s %s still in the ledger", b.Type, b.Hash)
		}
	}
	if acct, _, _ := st.Account(alice.Address()); acct.Frontier != winner.Hash {
		t.Errorf("alice's frontier %s, want the winner %s", acct.Frontier, winner.Hash)
	}
	if _, found, _ := st.Account(bob.Address()); found {
		t.Error("bob's account survived the rollback of its only block")
	}
	if got := weight(t, st, alice.Address()); got != 993 {
		t.Errorf("alice's weight %d, want 993", got)
	}
	n := 0
	st.Conflicts(nil, func(ledgerstore.Conflict) error { n++; return nil })
	if n != 0 {
		t.Errorf("%d conflicts left, want 0", n)
	}
	ch := <-sub.C
	if len(ch.RolledBack) != 3 || len(ch.Applied) != 1 || ch.Applied[0].Block.Hash != winner.Hash {
		t.Errorf("feed: %d rolled back, applied %v", len(ch.RolledBack), ch.Applied)
	}
	if rep, err := ledger.Audit(st.Snapshot()); err != nil {
		t.Errorf("audit after resolve: %v (%+v)", err, rep)
	}
}

func TestResolveNeverRollsBackConfirmed(t *testing.T) {
	st, e, c, gk := openMemEngine(t)
	alice := wallet.NewKey()
	c.key(alice)
	first := c.send(gk, alice, 5)
	submitAll(t, e, first)
	ctx := context.Background()
	if _, err := e.Confirm(ctx, first.Hash, nil); err != nil {
		t.Fatal(err)
	}
	c.at(gk, &ledger.Block{Account: gk.Address(), Hash: first.Previous, Asset: ledger.Native, Balance: ledger.NewAmount(1_000_000)})
	other := c.send(gk, alice, 6)
	if _, err := e.Resolve(ctx, other); !errors.Is(err, ledger.ErrConfirmed) {
		t.Fatalf("resolve against a confirmed block: got %v, want ErrConfirmed", err)
	}
	if acct, _, _ := st.Account(gk.Address()); acct.Frontier != first.Hash {
		t.Errorf("frontier moved to %s", acct.Frontier)
	}
	// The engine still works after the refused resolution.
	c.at(gk, first)
	submitAll(t, e, c.send(gk, alice, 1))
}

func TestSlowSubscriberIsDropped(t *testing.T) {
	_, e, c, gk := openMemEngine(t)
	alice := wallet.NewKey()
	c.key(alice)
	sub := e.Subscribe(1)
	for range 3 {
		submitAll(t, e, c.send(gk, alice, 1))
	}
	for range sub.C {
	}
	if !sub.Lagged() {
		t.Error("a subscriber two changes behind its one-change buffer was not dropped")
	}
}

func TestForkOfAConfirmedBlockIsNotRecorded(t *testing.T) {
	st, e, c, gk := openMemEngine(t)
	alice := wallet.NewKey()
	c.key(alice)
	first := c.send(gk, alice, 5)
	submitAll(t, e, first)
	ctx := context.Background()
	if _, err := e.Confirm(ctx, first.Hash, nil); err != nil {
		t.Fatal(err)
	}
	c.at(gk, &ledger.Block{Account: gk.Address(), Hash: first.Previous, Asset: ledger.Native, Balance: ledger.NewAmount(1_000_000)})
	other := c.send(gk, alice, 6)
	sub := e.Subscribe(4)
	defer sub.Close()
	if _, err := e.Submit(ctx, other); !errors.As(err, new(*ledger.ForkError)) {
		t.Fatalf("contender of a confirmed block: got %v, want a fork error", err)
	}
	n := 0
	st.Conflicts(nil, func(ledgerstore.Conflict) error { n++; return nil })
	if n != 0 {
		t.Errorf("%d conflicts recorded for a confirmed place, want 0", n)
	}
	if _, found, _ := st.ForkBlock(other.Hash); found {
		t.Error("the losing contender was kept")
	}
	// The feed reports the contender as such (what it carries may be
	// evidence, package leasenet), and nothing else.
	select {
	case ch := <-sub.C:
		if len(ch.Applied)+len(ch.RolledBack)+len(ch.Confirmed)+len(ch.Forks) != 0 || len(ch.Contenders) != 1 || ch.Contenders[0].Hash != other.Hash {
			t.Errorf("feed reported %+v for a refused contender, want it as the only contender", ch)
		}
	default:
		t.Error("the feed did not report the refused contender")
	}
}

// TestFollowAfterLag: a follower that falls behind is told so (a nil
// change) and then follows the changes committed after.
func TestFollowAfterLag(t *testing.T) {
	_, e, c, gk := openMemEngine(t)
	alice := wallet.NewKey()
	c.key(alice)
	sub := e.Subscribe(1)
	// Three commits into a buffer of one: the subscription lags.
	for range 3 {
		submitAll(t, e, c.send(gk, alice, 1))
	}
	got := make(chan *Change, 8)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sub.Follow(ctx, func(ch *Change) { got <- ch })
	}()
	first := <-got // the one buffered change
	if first == nil || len(first.Applied) != 1 {
		t.Fatalf("first: %+v", first)
	}
	if lag := <-got; lag != nil {
		t.Fatalf("after the lag: %+v, want nil", lag)
	}
	later := c.send(gk, alice, 1)
	submitAll(t, e, later)
	select {
	case ch := <-got:
		if ch == nil || len(ch.Applied) != 1 || ch.Applied[0].Block.Hash != later.Hash {
			t.Fatalf("a later change: %+v", ch)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the follower never saw the change after its lag")
	}
	cancel()
	<-done
}
