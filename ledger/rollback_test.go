package ledger_test

import (
	"errors"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

func (w *world) rollback(a ledger.Address) error {
	w.t.Helper()
	d, err := ledger.Rollback(w.m, a)
	if err != nil {
		return err
	}
	w.m.Commit(d)
	w.audit()
	return nil
}

func TestRollbackRestoresState(t *testing.T) {
	w := newWorld(t)
	a, b := w.funded(1000), wallet.NewKey()
	w.ok(signed(w.must(wallet.Claim(w.head(a.Address()), w.tick(1))), a))
	before, _, _ := w.m.Account(a.Address())
	s := w.send(a, b.Address(), 10, ledger.Native)

	// The receiver must go first.
	r := w.receive(b, s)
	if err := w.rollback(a.Address()); !errors.Is(err, ledger.ErrHasDependents) {
		t.Fatalf("rollback of a received send: got %v, want ErrHasDependents", err)
	}
	if err := w.rollback(b.Address()); err != nil {
		t.Fatalf("rollback receive: %v", err)
	}
	if _, found, _ := w.m.Account(b.Address()); found {
		t.Error("account b survives the rollback of its only block")
	}
	if _, found, _ := w.m.Pending(b.Address(), s.Hash); !found {
		t.Error("rolling back the receive did not restore the pending entry")
	}
	if _, found, _ := w.m.Entry(r.Hash); found {
		t.Error("rolled-back receive is still in the ledger")
	}
	if err := w.rollback(a.Address()); err != nil {
		t.Fatalf("rollback send: %v", err)
	}
	after, _, _ := w.m.Account(a.Address())
	if after.Frontier != before.Frontier || after.Balances != before.Balances || after.Height != before.Height || after.LastClaim != before.LastClaim {
		t.Errorf("after rollback %+v, want %+v", after, before)
	}
	// Rolling back the claim re-opens the faucet.
	if err := w.rollback(a.Address()); err != nil {
		t.Fatalf("rollback claim: %v", err)
	}
	w.ok(signed(w.must(wallet.Claim(w.head(a.Address()), w.tick(1))), a))
}

func TestRollbackResolvesFork(t *testing.T) {
	w := newWorld(t)
	a := w.funded(100)
	h := w.head(a.Address())
	x, y := wallet.NewKey().Address(), wallet.NewKey().Address()
	first := w.ok(signed(w.must(wallet.Send(h, x, ledger.NewAmount(60), ledger.Native, w.tick(1))), a))
	second := signed(w.must(wallet.Send(h, y, ledger.NewAmount(70), ledger.Native, w.tick(1))), a)
	if err := w.submit(second); !errors.Is(err, ledger.ErrFork) {
		t.Fatalf("got %v, want fork", err)
	}
	// Consensus picks the second: undo the first, apply the second.
	if err := w.rollback(a.Address()); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	w.ok(second)
	if _, found, _ := w.m.Pending(x, first.Hash); found {
		t.Error("losing send still pending")
	}
	if _, found, _ := w.m.Pending(y, second.Hash); !found {
		t.Error("winning send not pending")
	}
}

func TestRollbackGenesisRefused(t *testing.T) {
	w := newWorld(t)
	if err := w.rollback(w.genesis.Address()); !ledger.IsRule(err) {
		t.Fatalf("rollback genesis: got %v, want a rule error", err)
	}
	if err := w.rollback(wallet.NewKey().Address()); !errors.Is(err, ledger.ErrUnknownAccount) {
		t.Fatalf("rollback unknown account: got %v, want ErrUnknownAccount", err)
	}
}
