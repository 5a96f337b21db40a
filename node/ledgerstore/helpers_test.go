package ledgerstore

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// fixture is an initialised store on an in-memory file system, with a
// wallet that builds blocks for it.
type fixture struct {
	t  *testing.T
	fs vfs.FS
	st *Store
	gk wallet.Key
	g  *ledger.Block
	c  *wallet.Chains
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, fs: vfs.NewMem(), gk: wallet.NewKey()}
	f.st = f.open()
	f.g = ledger.NewGenesis(f.gk.Private(), ledger.NewAmount(1_000_000), t0)
	if err := f.st.Init(f.g, "net"); err != nil {
		t.Fatal(err)
	}
	f.c = wallet.NewChains(ledger.DevWork, f.gk, f.g)
	return f
}

func (f *fixture) open() *Store {
	f.t.Helper()
	st, err := Open("db", Options{FS: f.fs})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { st.Close() })
	return st
}

// reopen closes the store and opens it again.
func (f *fixture) reopen() {
	f.t.Helper()
	if err := f.st.Close(); err != nil {
		f.t.Fatal(err)
	}
	f.st = f.open()
}

// key returns a new key the wallet builds blocks for.
func (f *fixture) key() wallet.Key {
	k := wallet.NewKey()
	f.c.Add(k, nil)
	return k
}

func (f *fixture) send(from wallet.Key, to ledger.Address, amount uint64) *ledger.Block {
	f.t.Helper()
	b, err := f.c.Send(from, to, amount)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

func (f *fixture) receive(to wallet.Key, send *ledger.Block) *ledger.Block {
	f.t.Helper()
	b, err := f.c.Receive(to, send, ledger.Address{})
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

// batch runs fn on a new batch and commits it.
func (f *fixture) batch(fn func(b *Batch)) {
	f.t.Helper()
	b := f.st.NewBatch()
	defer b.Close()
	fn(b)
	if err := b.Commit(); err != nil {
		f.t.Fatal(err)
	}
}

// apply decides blk against b and writes it.
func (f *fixture) apply(b *Batch, blk *ledger.Block) {
	f.t.Helper()
	d, err := ledger.Apply(b, blk)
	if err != nil {
		f.t.Fatalf("apply %s %s: %v", blk.Type, blk.Hash, err)
	}
	if err := b.Apply(d); err != nil {
		f.t.Fatal(err)
	}
}

// rollback removes a's latest block in b.
func (f *fixture) rollback(b *Batch, a ledger.Address) {
	f.t.Helper()
	d, err := ledger.Rollback(b, a)
	if err != nil {
		f.t.Fatalf("rollback of %s: %v", a, err)
	}
	if err := b.Apply(d); err != nil {
		f.t.Fatal(err)
	}
}

// commit applies each block in a batch of its own.
func (f *fixture) commit(blocks ...*ledger.Block) {
	f.t.Helper()
	for _, blk := range blocks {
		f.batch(func(b *Batch) { f.apply(b, blk) })
	}
}

// forkError returns the fork error of contender, a block that claims the
// place of one already in the ledger.
func (f *fixture) forkError(b *Batch, contender *ledger.Block) *ledger.ForkError {
	f.t.Helper()
	_, err := ledger.Apply(b, contender)
	var fe *ledger.ForkError
	if !errors.As(err, &fe) {
		f.t.Fatalf("apply contender %s: got %v, want a fork", contender.Hash, err)
	}
	return fe
}
