package ledger_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

func hashesOf(es []*ledger.Entry) []ledger.Hash {
	out := make([]ledger.Hash, len(es))
	for i, e := range es {
		out[i] = e.Block.Hash
	}
	return out
}

// TestConfirmCascade runs the confirmation cascade on Mem: confirming a
// receive confirms the send it takes first, with the send's chain below
// it, and the receiving chain up to it; what is confirmed is not again.
func TestConfirmCascade(t *testing.T) {
	w := newWorld(t)
	g := w.genesis.Address()
	// The genesis block is confirmed from the start, as a store's Init
	// records it.
	if err := w.m.SetConfirmed(g, 1, w.head(g).Frontier); err != nil {
		t.Fatal(err)
	}
	a, b := wallet.NewKey(), wallet.NewKey()
	s1 := w.send(w.genesis, a.Address(), 100, ledger.Native)
	r1 := w.receive(a, s1)
	s2 := w.send(a, b.Address(), 40, ledger.Native)
	r2 := w.receive(b, s2)
	later := w.send(w.genesis, b.Address(), 1, ledger.Native) // not a dependency of r2

	got, err := ledger.Confirm(w.m, r2.Hash)
	if err != nil {
		t.Fatal(err)
	}
	// b's receive waits for a's send, which waits for a's receive of the
	// genesis send: each chain's blocks in order, dependencies first.
	want := []ledger.Hash{s1.Hash, r1.Hash, s2.Hash, r2.Hash}
	if !slices.Equal(hashesOf(got), want) {
		t.Errorf("Confirm(r2) confirmed %v, want %v", hashesOf(got), want)
	}
	for _, tt := range []struct {
		a      ledger.Address
		height uint64
	}{{g, 2}, {a.Address(), 2}, {b.Address(), 1}} {
		if h, _, _, _ := w.m.Confirmed(tt.a); h != tt.height {
			t.Errorf("confirmed height of %s = %d, want %d", tt.a, h, tt.height)
		}
	}
	if got, err := ledger.Confirm(w.m, s2.Hash); err != nil || len(got) != 0 {
		t.Errorf("Confirm(s2) again = %v, %v; want nothing new", hashesOf(got), err)
	}
	if got, err := ledger.Confirm(w.m, later.Hash); err != nil || !slices.Equal(hashesOf(got), []ledger.Hash{later.Hash}) {
		t.Errorf("Confirm(later) = %v, %v; want it alone", hashesOf(got), err)
	}
	if _, err := ledger.Confirm(w.m, ledger.Hash{9}); !errors.Is(err, ledger.ErrNotInLedger) {
		t.Errorf("Confirm(unknown) = %v, want ErrNotInLedger", err)
	}
}

// TestRollbackToCascade runs the rollback cascade on Mem: removing a send
// that was received removes the receiving chain above it first; nothing
// confirmed is ever removed.
func TestRollbackToCascade(t *testing.T) {
	w := newWorld(t)
	a, b := wallet.NewKey(), wallet.NewKey()
	s1 := w.send(w.genesis, a.Address(), 100, ledger.Native)
	r1 := w.receive(a, s1)
	s2 := w.send(a, b.Address(), 40, ledger.Native)
	r2 := w.receive(b, s2)

	if _, err := ledger.Confirm(w.m, r1.Hash); err != nil {
		t.Fatal(err)
	}
	removed, err := ledger.RollbackTo(w.m, a.Address(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []ledger.Hash{r2.Hash, s2.Hash}; !slices.Equal(blockHashes(removed), want) {
		t.Errorf("RollbackTo(a, 1) removed %v, want %v", blockHashes(removed), want)
	}
	if _, found, _ := w.m.Pending(b.Address(), s2.Hash); found {
		t.Error("the rolled-back send's pending entry is still there")
	}
	w.audit()
	// a's first block is confirmed: rolling it back is refused.
	removed, err = ledger.RollbackTo(w.m, a.Address(), 0)
	if !errors.Is(err, ledger.ErrConfirmed) || len(removed) != 0 {
		t.Errorf("RollbackTo(a, 0) = %v, %v; want ErrConfirmed, nothing removed", blockHashes(removed), err)
	}
	if _, found, _ := w.m.Entry(r1.Hash); !found {
		t.Error("a confirmed block was rolled back")
	}
}

func blockHashes(bs []*ledger.Block) []ledger.Hash {
	out := make([]ledger.Hash, len(bs))
	for i, b := range bs {
		out[i] = b.Hash
	}
	return out
}
