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
