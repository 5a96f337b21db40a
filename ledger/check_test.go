package ledger_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// TestCheckAllAgreesWithCheck checks that CheckAll, which verifies
// signatures in batches, answers every block exactly as Check does, wherever
// the block sits among others and whatever is wrong with it.
func TestCheckAllAgreesWithCheck(t *testing.T) {
	k1, k2, k3 := wallet.NewKey(), wallet.NewKey(), wallet.NewKey()
	ks := keysetOf(2, k1, k2, k3)
	dest := wallet.NewKey().Address()
	send := func(i int) *ledger.Block {
		b, err := wallet.Send(wallet.Head{Account: k1.Address(), Balances: [2]ledger.Amount{ledger.NewAmount(1_000_000)}},
			dest, ledger.NewAmount(uint64(1+i)), ledger.Native, t0+int64(i))
		if err != nil {
			t.Fatal(err)
		}
		return signed(b, k1)
	}
	// Work that one nonce in about 2^8 meets: blocks below get nonce 0 and
	// fail it about 255 times in 256.
	params := ledger.Params{Work: ledger.Work{Send: 0xff00000000000000, Receive: 0xff00000000000000}}
	kinds := []struct {
		name string
		make func(i int) *ledger.Block
	}{
		{"valid", func(i int) *ledger.Block { return solved(params, send(i)) }},
		{"bad signature", func(i int) *ledger.Block {
			b := solved(params, send(i))
			b.Signature[63] ^= 0x01
			return b
		}},
		{"signed by another key", func(i int) *ledger.Block { return solved(params, signed(send(i), k2)) }},
		{"no signature", func(i int) *ledger.Block {
			b := solved(params, send(i))
			b.Signature = ledger.Signature{}
			return b
		}},
		{"bad hash", func(i int) *ledger.Block {
			b := solved(params, send(i))
			b.Hash[0] ^= 1
			return b
		}},
		{"no work", func(i int) *ledger.Block {
			b := send(i)
			for params.Work.Send.Met(b.Hash, b.PowNonce) {
				b.PowNonce++
			}
			return b
		}},
		{"multisig valid", func(i int) *ledger.Block {
			return solved(params, multisigned(wallet.MultisigOpen(ks, t0+int64(i)), k1, k3))
		}},
		{"multisig second signature bad", func(i int) *ledger.Block {
			b := solved(params, multisigned(wallet.MultisigOpen(ks, t0+int64(i)), k1, k3))
			b.Signatures[1].Signature[0] ^= 0x80
			return b
		}},
		{"multisig both signatures bad", func(i int) *ledger.Block {
			b := solved(params, multisigned(wallet.MultisigOpen(ks, t0+int64(i)), k1, k3))
			b.Signatures[0].Signature[5] ^= 0x80
			b.Signatures[1].Signature[0] ^= 0x80
			return b
		}},
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{0, 1, 2, 3, 8, 40, 130} {
		t.Run(fmt.Sprint(n, " blocks"), func(t *testing.T) {
			blocks := make([]*ledger.Block, n)
			names := make([]string, n)
			for i := range blocks {
				k := kinds[rng.IntN(len(kinds))]
				blocks[i], names[i] = k.make(i), k.name
			}
			errs := params.CheckAll(blocks)
			if len(errs) != n {
				t.Fatalf("CheckAll gave %d errors for %d blocks", len(errs), n)
			}
			for i, b := range blocks {
				want := params.Check(b)
				if fmt.Sprint(errs[i]) != fmt.Sprint(want) {
					t.Errorf("block %d (%s): CheckAll says %v, Check says %v", i, names[i], errs[i], want)
				}
				if (want == nil) != (names[i] == "valid" || names[i] == "multisig valid") {
					t.Errorf("block %d (%s): Check says %v", i, names[i], want)
				}
			}
		})
	}
	// Every kind of failure is refused with its own error kind.
	for _, tt := range []struct {
		kind int
		want error
	}{{1, ledger.ErrBadSignature}, {2, ledger.ErrBadSignature}, {3, ledger.ErrBadSignature},
		{4, ledger.ErrBadHash}, {5, ledger.ErrInsufficientWork}, {7, ledger.ErrBadSignature}} {
		blocks := []*ledger.Block{kinds[0].make(0), kinds[tt.kind].make(1), kinds[6].make(2)}
		errs := params.CheckAll(blocks)
		if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], tt.want) {
			t.Errorf("%s between two valid blocks: got %v, want [nil %v nil]", kinds[tt.kind].name, errs, tt.want)
		}
	}
}

// solved finds b a nonce that meets p's work for its type.
func solved(p ledger.Params, b *ledger.Block) *ledger.Block {
	for !p.Work.For(b.Type).Met(b.Hash, b.PowNonce) {
		b.PowNonce++
	}
	return b
}

// TestSignatureShape: which signatures a block may carry is checked before
// any is verified. Without it, one key signing twice would count twice
// towards a multisig threshold, and both kinds of signature could ride on
// one block.
func TestSignatureShape(t *testing.T) {
	k1, k2, k3 := wallet.NewKey(), wallet.NewKey(), wallet.NewKey()
	ks := keysetOf(2, k1, k2, k3)
	tests := []struct {
		name  string
		block func() *ledger.Block
		want  error
	}{
		{"one key signs a multisig block twice", func() *ledger.Block {
			return multisigned(wallet.MultisigOpen(ks, t0), k1, k1)
		}, ledger.ErrMalformed},
		{"signature beside signatures", func() *ledger.Block {
			b := multisigned(wallet.MultisigOpen(ks, t0), k1, k2)
			b.Signature = signed(wallet.MultisigOpen(ks, t0), k1).Signature
			return b
		}, ledger.ErrMalformed},
		{"no signature at all", func() *ledger.Block {
			return wallet.MultisigOpen(ks, t0)
		}, ledger.ErrUnauthorized},
		{"single-key block without its signature", func() *ledger.Block {
			b, err := wallet.Send(wallet.Head{Account: k1.Address(), Balances: [2]ledger.Amount{ledger.NewAmount(10)}},
				k2.Address(), ledger.NewAmount(1), ledger.Native, t0)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}, ledger.ErrBadSignature},
	}
	var p ledger.Params
	for _, tt := range tests {
		b := tt.block()
		if err := p.Check(b); !errors.Is(err, tt.want) {
			t.Errorf("%s: Check got %v, want %v", tt.name, err, tt.want)
		}
		if errs := p.CheckAll([]*ledger.Block{b, b, b}); !errors.Is(errs[1], tt.want) {
			t.Errorf("%s: CheckAll got %v, want %v", tt.name, errs[1], tt.want)
		}
	}
}
