package ledgerstore

import (
	"reflect"
	"testing"

	"github.com/latticenet/lattice/ledger"
)

// TestBatchLen: Len counts what a batch will write, so that a writer can
// skip the commit (and its fsync) of a batch that changes nothing, and
// never skips one that does: a confirmation or a fork record alone must
// count.
func TestBatchLen(t *testing.T) {
	f := newFixture(t)
	a := f.key()
	s1 := f.send(f.gk, a.Address(), 10)
	f.commit(s1)
	f.c.At(f.g)
	contender := f.send(f.gk, a.Address(), 20)
	tests := []struct {
		name string
		op   func(b *Batch)
		want int // what the operation adds to Len
	}{
		{"apply", func(b *Batch) { f.apply(b, f.receive(a, s1)) }, 1},
		{"confirmation", func(b *Batch) { b.SetConfirmed(f.gk.Address(), 2, s1.Hash) }, 1},
		{"same confirmation again", func(b *Batch) { b.SetConfirmed(f.gk.Address(), 2, s1.Hash) }, 0},
		{"another block at the confirmed height", func(b *Batch) { b.SetConfirmed(f.gk.Address(), 2, contender.Hash) }, 0},
		{"lower confirmation", func(b *Batch) { b.SetConfirmed(f.gk.Address(), 1, f.g.Hash) }, 0},
		{"fork contender", func(b *Batch) { b.AddConflict(f.forkError(b, contender), t0) }, 1},
		{"same contender again", func(b *Batch) { b.AddConflict(f.forkError(b, contender), t0) }, 0},
		{"end of the conflict", func(b *Batch) { b.EndConflict(f.gk.Address(), f.g.Hash) }, 1},
		{"end of no conflict", func(b *Batch) { b.EndConflict(a.Address(), ledger.Hash{1}) }, 0},
		{"certificate", func(b *Batch) { b.PutCertificate(s1.Hash, []byte("votes")) }, 1},
		{"vote", func(b *Batch) { b.PutVote(ledger.Hash{2}, []byte("vote")) }, 1},
	}
	b := f.st.NewBatch()
	defer b.Close()
	for _, tt := range tests {
		before := b.Len()
		tt.op(b)
		if got := b.Len() - before; got != tt.want {
			t.Errorf("%s: got Len up by %d, want %d", tt.name, got, tt.want)
		}
	}
	// Alone in its batch, each of these must count, or it would never
	// be committed.
	for _, tt := range tests {
		if tt.want == 0 || tt.name == "apply" || tt.name == "end of the conflict" {
			continue
		}
		fresh := f.st.NewBatch()
		tt.op(fresh)
		if got := fresh.Len(); got != tt.want {
			t.Errorf("%s alone in a batch: got Len %d, want %d", tt.name, got, tt.want)
		}
		fresh.Close()
	}
}

// TestSetConfirmed: a confirmation only ever rises; one at or below the
// recorded height is ignored, in the batch and on disk; one that names a
// block not at that height of the chain is refused.
func TestSetConfirmed(t *testing.T) {
	type conf struct {
		height uint64
		hash   ledger.Hash
	}
	tests := []struct {
		name  string
		sets  []conf // hash {n} stands for the chain's block at height n
		want  conf
		wrong bool // the last confirmation names the wrong block
	}{
		{"none", nil, conf{1, ledger.Hash{1}}, false},
		{"one", []conf{{3, ledger.Hash{3}}}, conf{3, ledger.Hash{3}}, false},
		{"rising", []conf{{3, ledger.Hash{3}}, {5, ledger.Hash{5}}}, conf{5, ledger.Hash{5}}, false},
		{"lower ignored", []conf{{5, ledger.Hash{5}}, {3, ledger.Hash{3}}}, conf{5, ledger.Hash{5}}, false},
		{"same height ignored", []conf{{5, ledger.Hash{5}}, {5, ledger.Hash{6}}}, conf{5, ledger.Hash{5}}, false},
		{"another block refused", []conf{{3, ledger.Hash{3}}, {5, ledger.Hash{6}}}, conf{3, ledger.Hash{3}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Two ledgers with the same chain: genesis, then sends up to height 6.
			var fs [2]*fixture
			var chains [2][]ledger.Hash
			for i := range fs {
				f := newFixture(t)
				a := f.key()
				chains[i] = []ledger.Hash{{}, f.g.Hash}
				for range 5 {
					s := f.send(f.gk, a.Address(), 1)
					f.commit(s)
					chains[i] = append(chains[i], s.Hash)
				}
				fs[i] = f
			}
			real := func(i int, c conf) conf { return conf{c.height, chains[i][c.hash[0]]} }
			check := func(i int, where string, height uint64, h ledger.Hash, found bool, err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
				if got, want := (conf{height, h}), real(i, tt.want); got != want || !found {
					t.Errorf("%s: got %v (found %v), want %v", where, got, found, want)
				}
			}
			setAll := func(i int, b *Batch, from, to int) {
				for j := from; j < to; j++ {
					c := tt.sets[j]
					err := b.SetConfirmed(fs[i].gk.Address(), c.height, real(i, c).hash)
					if tt.wrong && j == len(tt.sets)-1 {
						if err == nil {
							t.Errorf("confirming height %d with the block of height %d: no error", c.height, c.hash[0])
						}
					} else if err != nil {
						t.Fatal(err)
					}
				}
			}
			// Each in its own batch: the later ones read the earlier from disk.
			for j := range tt.sets {
				fs[0].batch(func(b *Batch) { setAll(0, b, j, j+1) })
			}
			height, h, found, err := fs[0].st.Confirmed(fs[0].gk.Address())
			check(0, "committed one by one", height, h, found, err)
			// All in one batch.
			g := fs[1]
			b := g.st.NewBatch()
			defer b.Close()
			setAll(1, b, 0, len(tt.sets))
			height, h, found, err = b.Confirmed(g.gk.Address())
			check(1, "in one batch", height, h, found, err)
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			height, h, found, err = g.st.Confirmed(g.gk.Address())
			check(1, "that batch committed", height, h, found, err)
		})
	}
}

// TestGenesisConfirmed: Init confirms the genesis block.
func TestGenesisConfirmed(t *testing.T) {
	f := newFixture(t)
	height, h, found, err := f.st.Confirmed(f.gk.Address())
	if err != nil || !found || height != 1 || h != f.g.Hash {
		t.Errorf("Confirmed(genesis account): got %d, %s, %v, %v; want 1, %s, true, nil", height, h, found, err, f.g.Hash)
	}
	e, _, _ := f.st.Entry(f.g.Hash)
	if ok, err := f.st.IsConfirmed(e); err != nil || !ok {
		t.Errorf("IsConfirmed(genesis): got %v, %v; want true, nil", ok, err)
	}
}

// TestConflictContenders: contenders added in one batch or in several all
// join the same conflict record, up to MaxContenders blocks (the kept one
// included); later ones are neither recorded nor kept.
func TestConflictContenders(t *testing.T) {
	for _, perBatch := range []int{1, 5, 100} {
		f := newFixture(t)
		a := f.key()
		kept := f.send(f.gk, a.Address(), 1)
		f.commit(kept)
		var contenders []*ledger.Block
		for i := range MaxContenders + 3 {
			f.c.At(f.g)
			contenders = append(contenders, f.send(f.gk, a.Address(), uint64(i+2)))
		}
		for i := 0; i < len(contenders); i += perBatch {
			f.batch(func(b *Batch) {
				for _, c := range contenders[i:min(i+perBatch, len(contenders))] {
					if err := b.AddConflict(f.forkError(b, c), t0+int64(i)); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
		want := Conflict{Account: f.gk.Address(), Previous: f.g.Hash, DetectedAt: t0, Blocks: []ledger.Hash{kept.Hash}}
		for _, c := range contenders[:MaxContenders-1] {
			want.Blocks = append(want.Blocks, c.Hash)
		}
		var got []Conflict
		if err := f.st.Conflicts(nil, func(c Conflict) error { got = append(got, c); return nil }); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, []Conflict{want}) {
			t.Errorf("%d contenders per batch: got conflicts %+v, want %+v", perBatch, got, []Conflict{want})
		}
		for i, c := range contenders {
			_, found, err := f.st.ForkBlock(c.Hash)
			if want := i < MaxContenders-1; found != want || err != nil {
				t.Errorf("%d contenders per batch: contender %d kept: got %v (%v), want %v", perBatch, i, found, err, want)
			}
		}
	}
}

// TestCachesBounded: the write path's caches of accounts and of weights
// each start over rather than grow past maxCachedAccounts.
func TestCachesBounded(t *testing.T) {
	tests := []struct {
		name  string
		cache func(st *Store) int                  // its size
		fill  func(st *Store, addr ledger.Address) // adds one entry
	}{
		{"accounts", func(st *Store) int { return len(st.accounts) },
			func(st *Store, addr ledger.Address) { st.accounts[addr] = ledger.Account{Address: addr} }},
		{"weights", func(st *Store) int { return len(st.weights) },
			func(st *Store, addr ledger.Address) { st.weights[addr] = ledger.NewAmount(1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			a := f.key()
			s := f.send(f.gk, a.Address(), 10)
			f.commit(s)
			// Fill the cache to its bound exactly.
			for i := 0; tt.cache(f.st) < maxCachedAccounts; i++ {
				var addr ledger.Address
				addr[0], addr[1], addr[2], addr[3] = 0xee, byte(i>>16), byte(i>>8), byte(i)
				tt.fill(f.st, addr)
			}
			// A receive naming a representative adds to both caches.
			r, err := f.c.Receive(a, s, ledger.Address{7})
			if err != nil {
				t.Fatal(err)
			}
			f.commit(r)
			if n := tt.cache(f.st); n > maxCachedAccounts {
				t.Errorf("got %d entries, want at most %d", n, maxCachedAccounts)
			}
			if got, err := f.st.Weight(ledger.Address{7}); err != nil || got != ledger.NewAmount(10) {
				t.Errorf("weight of the named representative: got %v (%v), want 10", got, err)
			}
		})
	}
}
