package ledger_test

import (
	"errors"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

func keysetOf(threshold int, ks ...wallet.Key) ledger.Keyset {
	addrs := make([]ledger.Address, len(ks))
	for i, k := range ks {
		addrs[i] = k.Address()
	}
	return ledger.NewKeyset(threshold, addrs...)
}

func multisigned(b *ledger.Block, ks ...wallet.Key) *ledger.Block {
	for _, k := range ks {
		b.AddSignature(k.Private())
	}
	return b
}

func TestMultisig(t *testing.T) {
	w := newWorld(t)
	k1, k2, k3, k4 := wallet.NewKey(), wallet.NewKey(), wallet.NewKey(), wallet.NewKey()
	ks := keysetOf(2, k1, k2, k3)
	addr := ledger.MultisigAddress(ks)

	refuse := func(b *ledger.Block, want error) {
		t.Helper()
		if err := w.submit(b); !errors.Is(err, want) {
			t.Fatalf("submit %s: got %v, want %v", b.Type, err, want)
		}
	}
	refuse(multisigned(wallet.MultisigOpen(ks, w.tick(1)), k1), ledger.ErrUnauthorized)
	refuse(multisigned(wallet.MultisigOpen(ks, w.tick(1)), k1, k4), ledger.ErrUnauthorized)
	open := multisigned(wallet.MultisigOpen(ks, w.tick(1)), k1, k3)
	w.ok(open)
	if got, _, _ := w.m.Account(addr); got.Keyset == nil || !got.Keyset.Equal(ks) {
		t.Fatalf("keyset after open = %v, want %v", got.Keyset, ks)
	}

	// Receiving and sending need the threshold, not one key.
	s := w.send(w.genesis, addr, 500, ledger.Native)
	rb := w.must(wallet.Receive(w.head(addr), pendingOf(s), w.tick(1)))
	refuse(signed(rb.Clone(), k1), ledger.ErrBadSignature)
	refuse(multisigned(rb.Clone(), k2), ledger.ErrUnauthorized)
	w.ok(multisigned(rb, k2, k3))
	sb := w.must(wallet.Send(w.head(addr), k4.Address(), ledger.NewAmount(100), ledger.Native, w.tick(1)))
	w.ok(multisigned(sb, k1, k2))

	// Rotate to a 1-of-1 keyset held by k4; the old keys lose control.
	next := keysetOf(1, k4)
	up := wallet.MultisigUpdate(w.head(addr), next, w.tick(1))
	refuse(multisigned(up.Clone(), k4), ledger.ErrUnauthorized)
	w.ok(multisigned(up, k1, k3))
	sb2 := w.must(wallet.Send(w.head(addr), k1.Address(), ledger.NewAmount(1), ledger.Native, w.tick(1)))
	refuse(multisigned(sb2.Clone(), k1, k2), ledger.ErrUnauthorized)
	w.ok(multisigned(sb2, k4))
	if acct, _, _ := w.m.Account(addr); acct.Balance(ledger.Native) != ledger.NewAmount(399) || acct.Height != 5 {
		t.Errorf("multisig account = %+v, want 399 native at height 5", acct)
	}

	// Opening it again is a second first block: a fork.
	refuse(multisigned(wallet.MultisigOpen(ks, w.tick(1)), k1, k2), ledger.ErrFork)
}

func TestMultisigShape(t *testing.T) {
	k1, k2 := wallet.NewKey(), wallet.NewKey()
	ks := keysetOf(2, k1, k2)
	tests := []struct {
		name   string
		mutate func(b *ledger.Block)
	}{
		{"threshold above key count", func(b *ledger.Block) { b.Keyset.Threshold = 3 }},
		{"threshold zero", func(b *ledger.Block) { b.Keyset.Threshold = 0 }},
		{"keys out of order", func(b *ledger.Block) { b.Keyset.Keys[0], b.Keyset.Keys[1] = b.Keyset.Keys[1], b.Keyset.Keys[0] }},
		{"duplicate key", func(b *ledger.Block) { b.Keyset.Keys[1] = b.Keyset.Keys[0]; b.Keyset.Threshold = 1 }},
		{"account not derived from keyset", func(b *ledger.Block) { b.Account = k1.Address() }},
		{"non-zero balance", func(b *ledger.Block) { b.Balance = ledger.NewAmount(1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := wallet.MultisigOpen(ks, t0)
			tt.mutate(b)
			b.Seal()
			multisigned(b, k1, k2)
			var p ledger.Params
			if err := p.Check(b); !ledger.IsRule(err) {
				t.Fatalf("Check: got %v, want a rule error", err)
			}
		})
	}
	w := newWorld(t)
	up := wallet.MultisigUpdate(w.head(w.genesis.Address()), ks, w.tick(1))
	if err := w.submit(signed(up, w.genesis)); !errors.Is(err, ledger.ErrNotMultisig) {
		t.Fatalf("multisig_update of an ordinary account: got %v, want ErrNotMultisig", err)
	}
}

// TestMultisigResubmitAfterRotation: a block already in the ledger stays a
// duplicate after the keyset that signed it is rotated away.
func TestMultisigResubmitAfterRotation(t *testing.T) {
	w := newWorld(t)
	k1, k2, k3 := wallet.NewKey(), wallet.NewKey(), wallet.NewKey()
	ks := keysetOf(2, k1, k2)
	addr := ledger.MultisigAddress(ks)
	open := w.ok(multisigned(wallet.MultisigOpen(ks, w.tick(1)), k1, k2))
	up := w.ok(multisigned(wallet.MultisigUpdate(w.head(addr), keysetOf(1, k3), w.tick(1)), k1, k2))
	for _, b := range []*ledger.Block{open, up} {
		if err := w.submit(b); !errors.Is(err, ledger.ErrDuplicate) {
			t.Errorf("resubmitting %s after rotation: got %v, want ErrDuplicate", b.Type, err)
		}
	}
}
