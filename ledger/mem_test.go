package ledger_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// TestMemReceiverFollowsReceives: the reference ledger's receiver index
// names the block that took a send, forgets it when that block is rolled
// back, and names the next one that takes it.
func TestMemReceiverFollowsReceives(t *testing.T) {
	w := newWorld(t)
	a := wallet.NewKey()
	s := w.send(w.genesis, a.Address(), 10, ledger.Native)
	if got, found, _ := w.m.Receiver(s.Hash); found {
		t.Fatalf("Receiver of a pending send: got %s, want none", got)
	}
	r := w.receive(a, s)
	if got, found, _ := w.m.Receiver(s.Hash); !found || got != r.Hash {
		t.Fatalf("Receiver after the receive: got %s (found %v), want %s", got, found, r.Hash)
	}
	if err := w.rollback(a.Address()); err != nil {
		t.Fatal(err)
	}
	if got, found, _ := w.m.Receiver(s.Hash); found {
		t.Fatalf("Receiver after the receive was rolled back: got %s, want none", got)
	}
	r2 := w.receive(a, s)
	if got, found, _ := w.m.Receiver(s.Hash); !found || got != r2.Hash {
		t.Fatalf("Receiver after receiving again: got %s (found %v), want %s", got, found, r2.Hash)
	}
}

// TestSecondReceiveNamesTheFirst: a send taken already is refused with
// ErrAlreadyReceived, and the message names the block that took it.
func TestSecondReceiveNamesTheFirst(t *testing.T) {
	w := newWorld(t)
	a := wallet.NewKey()
	s := w.send(w.genesis, a.Address(), 10, ledger.Native)
	r := w.receive(a, s)
	again := signed(w.must(wallet.Receive(w.head(a.Address()), pendingOf(s), w.tick(1))), a)
	err := w.submit(again)
	if !errors.Is(err, ledger.ErrAlreadyReceived) {
		t.Fatalf("second receive of %s: got %v, want ErrAlreadyReceived", s.Hash, err)
	}
	if !strings.Contains(err.Error(), r.Hash.String()) {
		t.Errorf("second receive of %s: got %q, want it to name the receive %s", s.Hash, err, r.Hash)
	}
}

// TestPendingsOfOneDestination: receiving one of several sends to the
// same account leaves the others pending.
func TestPendingsOfOneDestination(t *testing.T) {
	w := newWorld(t)
	a := wallet.NewKey()
	sends := []*ledger.Block{
		w.send(w.genesis, a.Address(), 10, ledger.Native),
		w.send(w.genesis, a.Address(), 20, ledger.Native),
		w.send(w.genesis, a.Address(), 30, ledger.Native),
	}
	for i, s := range sends {
		w.receive(a, s)
		for j, o := range sends {
			_, found, _ := w.m.Pending(a.Address(), o.Hash)
			if want := j > i; found != want {
				t.Errorf("after receiving send %d, send %d pending: got %v, want %v", i, j, found, want)
			}
		}
	}
	acct, _, _ := w.m.Account(a.Address())
	if got, want := acct.Balance(ledger.Native), ledger.NewAmount(60); got != want {
		t.Errorf("balance after the three receives: got %s, want %s", got, want)
	}
}
