package node

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/ledgerstore"
	"github.com/latticenet/lattice/pow"
	"github.com/latticenet/lattice/wallet"
)

// forkWorld is a ledger in which alice's send to bob (the loser) has a
// contender that passes Check but does not apply once the loser is rolled
// back: its balance is wrong. Resolving the fork in its favour is refused
// after the rollback has been written to the batch.
type forkWorld struct {
	st           *ledgerstore.Store
	e            *Engine
	c            *chains
	gk           wallet.Key
	alice, bob   wallet.Key
	loser, bad   *ledger.Block
	aliceBefore  ledger.Account
	pendingToBob ledger.Hash
}

func newForkWorld(t *testing.T, fs vfs.FS) *forkWorld {
	t.Helper()
	st, err := ledgerstore.Open("ledger", ledgerstore.Options{FS: fs, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	w := &forkWorld{st: st, gk: wallet.NewKey(), alice: wallet.NewKey(), bob: wallet.NewKey()}
	g := ledger.NewGenesis(w.gk.Private(), ledger.NewAmount(1_000_000), time.Now().UnixMilli())
	if err := st.Init(g, Network{Name: "t", Work: ledger.DevWork, Genesis: g}); err != nil {
		t.Fatal(err)
	}
	w.e = NewEngine(st, ledger.Fixed{Work: ledger.DevWork}, quiet, time.Now)
	t.Cleanup(func() { w.e.Close(); st.Close() })
	w.c = newChains(t, w.gk, g)
	w.c.key(w.alice)
	w.c.key(w.bob)
	fund := w.c.send(w.gk, w.alice, 1000)
	open := w.c.receive(w.alice, fund, ledger.Address{})
	w.loser = w.c.send(w.alice, w.bob, 400)
	submitAll(t, w.e, fund, open, w.loser)
	w.aliceBefore, _, _ = st.Account(w.alice.Address())
	w.pendingToBob = w.loser.Hash

	w.c.at(w.alice, open)
	w.bad = w.c.send(w.alice, w.gk, 7).Clone()
	w.bad.Balance = ledger.NewAmount(999) // 1000 - 7 is 993
	w.bad.Seal()
	w.bad.Sign(w.alice.Private())
	if w.bad.PowNonce, err = pow.Solve(context.Background(), w.bad.Hash, ledger.DevWork.For(w.bad.Type)); err != nil {
		t.Fatal(err)
	}
	return w
}

// unchanged checks that alice's chain is as before the refused resolution.
func (w *forkWorld) unchanged(t *testing.T) {
	t.Helper()
	if acct, _, _ := w.st.Account(w.alice.Address()); acct.Frontier != w.aliceBefore.Frontier || acct.Height != w.aliceBefore.Height {
		t.Errorf("alice's chain: got frontier %s at height %d, want %s at %d (the loser)", acct.Frontier, acct.Height, w.aliceBefore.Frontier, w.aliceBefore.Height)
	}
	if _, found, _ := w.st.Entry(w.loser.Hash); !found {
		t.Error("the loser was rolled back by a refused resolution")
	}
	if _, found, _ := w.st.Pending(w.bob.Address(), w.pendingToBob); !found {
		t.Error("the loser's send to bob is no longer pending")
	}
	if rep, err := ledger.Audit(w.st.Snapshot()); err != nil {
		t.Errorf("audit: %v (%+v)", err, rep)
	}
}

// TestRefusedResolutionChangesNothing: a contender is refused as a fork
// and recorded; a resolution in its favour that does not apply once the
// loser is rolled back is refused and leaves the ledger, and the conflict,
// as they were.
func TestRefusedResolutionChangesNothing(t *testing.T) {
	w := newForkWorld(t, vfs.NewMem())
	ctx := context.Background()
	if _, err := w.e.Submit(ctx, w.bad); !errors.As(err, new(*ledger.ForkError)) {
		t.Fatalf("contender submitted: got %v, want a fork", err)
	}
	var conflicts []ledgerstore.Conflict
	collect := func() {
		conflicts = conflicts[:0]
		w.st.Conflicts(nil, func(c ledgerstore.Conflict) error { conflicts = append(conflicts, c); return nil })
	}
	collect()
	if len(conflicts) != 1 || len(conflicts[0].Blocks) != 2 || conflicts[0].Blocks[0] != w.loser.Hash || conflicts[0].Blocks[1] != w.bad.Hash {
		t.Fatalf("conflicts after the contender: got %+v, want one of [%s %s]", conflicts, w.loser.Hash, w.bad.Hash)
	}
	if _, found, _ := w.st.ForkBlock(w.bad.Hash); !found {
		t.Error("the contender was not kept")
	}
	if _, err := w.e.Resolve(ctx, w.bad); !errors.Is(err, ledger.ErrBadBalance) {
		t.Fatalf("resolve to a contender that does not apply: got %v, want ErrBadBalance", err)
	}
	w.unchanged(t)
	collect()
	if len(conflicts) != 1 {
		t.Errorf("conflicts after the refused resolution: got %d, want 1", len(conflicts))
	}
	// The engine goes on.
	submitAll(t, w.e, w.c.send(w.gk, w.bob, 1))
}

// TestRefusedResolutionQueuedBehindSubmissions: a resolution that arrives
// while submissions wait for the writer is decided in a group of its own,
// so that its refusal drops its writes and nothing of the submissions.
func TestRefusedResolutionQueuedBehindSubmissions(t *testing.T) {
	w := newForkWorld(t, slowSyncFS{vfs.NewMem(), 100 * time.Millisecond})
	ctx := context.Background()
	queue := func(b *ledger.Block) func() ([]Result, []error) {
		return w.e.QueueChecked(ctx, []*ledger.Block{b})
	}
	// Fill the pipeline: one group syncing, two waiting for their sync,
	// and the writer holding a fourth. The submissions and the resolution
	// queued next wait for the writer together.
	var waits []func() ([]Result, []error)
	for range 4 {
		waits = append(waits, queue(w.c.send(w.gk, w.alice, 1)))
		for len(w.e.in) > 0 {
			time.Sleep(time.Millisecond)
		}
	}
	for len(w.e.synced) < cap(w.e.synced) {
		time.Sleep(time.Millisecond)
	}
	var queued []*ledger.Block
	for range 3 {
		queued = append(queued, w.c.send(w.gk, w.bob, 1))
	}
	waits = append(waits, w.e.QueueChecked(ctx, queued))
	if _, err := w.e.Resolve(ctx, w.bad); !errors.Is(err, ledger.ErrBadBalance) {
		t.Fatalf("resolve to a contender that does not apply: got %v, want ErrBadBalance", err)
	}
	for _, wait := range waits {
		if _, errs := wait(); errors.Join(errs...) != nil {
			t.Fatalf("queued submissions: got %v, want them applied", errs)
		}
	}
	for _, b := range queued {
		if _, found, _ := w.st.Entry(b.Hash); !found {
			t.Errorf("queued send %s is not in the ledger", b.Hash)
		}
	}
	w.unchanged(t)
}
