package ledgerstore

import (
	"fmt"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// TestRecentGenerations: what was put is found until two generations have
// been filled after it, a removal holds in either generation, and the
// memory never holds more than two generations.
func TestRecentGenerations(t *testing.T) {
	const size = 4
	r := newRecent[int, int](size)
	for i := range 2*size + 1 {
		r.put(i, i*10)
		if n := len(r.cur) + len(r.old); n > 2*size {
			t.Fatalf("after %d puts it holds %d, want at most %d", i+1, n, 2*size)
		}
	}
	// 0..3 filled a generation, 4..7 the next (0..3 now older and then
	// dropped when 8 started a third).
	for i := range 2*size + 1 {
		v, ok := r.get(i)
		if want := i >= size; ok != want || (ok && v != i*10) {
			t.Errorf("get(%d) = %d, %v; want found %v", i, v, ok, want)
		}
	}
	r.put(5, 55) // newer value in the newer generation wins
	if v, _ := r.get(5); v != 55 {
		t.Errorf("get(5) = %d after a new put, want 55", v)
	}
	for _, k := range []int{5, 6, 8} { // 5 in both, 6 older, 8 newer
		r.remove(k)
		if _, ok := r.get(k); ok {
			t.Errorf("get(%d) found after remove", k)
		}
	}
}

// TestWritePathRemembers checks that what the write path remembers of
// earlier batches (entries, chain positions, confirmation records and the
// number of conflicts) always says what the database says: after a
// rollback, a new confirmation, a conflict recorded and one ended, and
// after a restart.
func TestWritePathRemembers(t *testing.T) {
	f := newFixture(t)
	a := f.key()
	s := f.send(f.gk, a.Address(), 10)
	r := f.receive(a, s)
	f.commit(s, r)

	view := func(what string, want func(b *Batch) error) {
		t.Helper()
		b := f.st.NewBatch()
		defer b.Close()
		if err := want(b); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	entry := func(h ledger.Hash, height uint64, found bool) func(b *Batch) error {
		return func(b *Batch) error {
			if e, ok, err := b.Entry(h); err != nil || ok != found || (ok && e.Height != height) {
				return fmt.Errorf("Entry(%s) = %v, %v, %v; want found %v", h, e, ok, err, found)
			}
			got, ok, err := b.ChainAt(a.Address(), height)
			if err != nil || ok != found || (ok && got != h) {
				return fmt.Errorf("ChainAt(%d) = %s, %v, %v; want found %v", height, got, ok, err, found)
			}
			return nil
		}
	}
	view("the receive, just written", entry(r.Hash, 1, true))
	f.batch(func(b *Batch) { f.rollback(b, a.Address()) })
	view("the receive, rolled back", entry(r.Hash, 1, false))
	f.c.Add(a, &wallet.Head{Account: a.Address()}) // its chain is empty again
	r2, err := f.c.Receive(a, s, ledger.Address{9})
	if err != nil {
		t.Fatal(err)
	}
	f.commit(r2)
	view("another receive in its place", entry(r2.Hash, 1, true))

	confirmed := func(height uint64) func(b *Batch) error {
		return func(b *Batch) error {
			if got, _, _, err := b.Confirmed(a.Address()); err != nil || got != height {
				return fmt.Errorf("Confirmed = %d, %v; want %d", got, err, height)
			}
			return nil
		}
	}
	view("not confirmed", confirmed(0)) // read, and remembered
	f.batch(func(b *Batch) {
		// The send first, as the engine's cascade confirms it.
		if err := b.SetConfirmed(f.gk.Address(), 2, s.Hash); err != nil {
			t.Fatal(err)
		}
		if err := b.SetConfirmed(a.Address(), 1, r2.Hash); err != nil {
			t.Fatal(err)
		}
	})
	view("confirmed", confirmed(1))

	conflicts := func(n int) func(b *Batch) error {
		return func(b *Batch) error {
			_, found, err := b.Conflict(f.gk.Address(), f.g.Hash)
			if err != nil || found != (n > 0) || f.st.conflicts != n {
				return fmt.Errorf("conflict found %v (%v), %d counted; want %d", found, err, f.st.conflicts, n)
			}
			return nil
		}
	}
	view("no conflict", conflicts(0))
	f.c.At(f.g)
	contender := f.send(f.gk, a.Address(), 3)
	f.batch(func(b *Batch) {
		if err := b.AddConflict(f.forkError(b, contender), t0); err != nil {
			t.Fatal(err)
		}
	})
	view("a conflict", conflicts(1))
	f.c.At(f.g)
	second := f.send(f.gk, a.Address(), 4)
	f.batch(func(b *Batch) { // a second contender of the same conflict
		if err := b.AddConflict(f.forkError(b, second), t0); err != nil {
			t.Fatal(err)
		}
	})
	view("a conflict of three blocks", conflicts(1))
	f.reopen()
	view("a conflict, after a restart", conflicts(1))
	view("confirmed, after a restart", confirmed(1))
	f.batch(func(b *Batch) {
		if err := b.EndConflict(f.gk.Address(), f.g.Hash); err != nil {
			t.Fatal(err)
		}
		if err := b.EndConflict(f.gk.Address(), f.g.Hash); err != nil { // ended already
			t.Fatal(err)
		}
	})
	view("the conflict ended", conflicts(0))
}
