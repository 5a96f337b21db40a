package ledgerstore

import (
	"reflect"
	"testing"

	"github.com/latticenet/lattice/ledger"
)

// logOf returns the sequence numbers and hashes Log gives after after.
func logOf(t *testing.T, st *Store, after uint64, limit int) ([]uint64, []ledger.Hash) {
	t.Helper()
	var seqs []uint64
	var hashes []ledger.Hash
	err := st.Log(after, limit, func(seq uint64, e *ledger.Entry) error {
		seqs, hashes = append(seqs, seq), append(hashes, e.Block.Hash)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seqs, hashes
}

// TestLogNumbersBlocksInOrder: blocks are numbered 1, 2, 3... in the order
// they are applied, the genesis first; LastSeq is the number of the latest,
// before and after a reopen; Log pages from a number with a limit.
func TestLogNumbersBlocksInOrder(t *testing.T) {
	f := newFixture(t)
	a := f.key()
	s1 := f.send(f.gk, a.Address(), 10)
	s2 := f.send(f.gk, a.Address(), 20)
	r1 := f.receive(a, s1)
	f.commit(s1)
	f.batch(func(b *Batch) { f.apply(b, s2); f.apply(b, r1) })
	all := []ledger.Hash{f.g.Hash, s1.Hash, s2.Hash, r1.Hash}

	checkAll := func(when string) {
		t.Helper()
		seqs, hashes := logOf(t, f.st, 0, 100)
		if want := []uint64{1, 2, 3, 4}; !reflect.DeepEqual(seqs, want) {
			t.Errorf("%s: Log numbers got %v, want %v", when, seqs, want)
		}
		if !reflect.DeepEqual(hashes, all) {
			t.Errorf("%s: Log blocks got %v, want %v", when, hashes, all)
		}
		if got := f.st.LastSeq(); got != 4 {
			t.Errorf("%s: LastSeq got %d, want 4", when, got)
		}
	}
	checkAll("before reopen")
	pages := []struct {
		after uint64
		limit int
		want  []uint64
	}{
		{0, 1, []uint64{1}},
		{1, 2, []uint64{2, 3}},
		{3, 10, []uint64{4}},
		{4, 10, nil},
		{0, 0, nil},
	}
	for _, p := range pages {
		if got, _ := logOf(t, f.st, p.after, p.limit); !reflect.DeepEqual(got, p.want) {
			t.Errorf("Log(%d, %d): got %v, want %v", p.after, p.limit, got, p.want)
		}
	}
	f.reopen()
	checkAll("after reopen")
	// Numbering goes on from there.
	s3 := f.send(f.gk, a.Address(), 30)
	f.commit(s3)
	if seqs, hashes := logOf(t, f.st, 4, 10); !reflect.DeepEqual(seqs, []uint64{5}) || !reflect.DeepEqual(hashes, []ledger.Hash{s3.Hash}) {
		t.Errorf("after reopen, the next block: got %v %v, want [5] [%s]", seqs, hashes, s3.Hash)
	}
	if got := f.st.LastSeq(); got != 5 {
		t.Errorf("LastSeq after the next block: got %d, want 5", got)
	}
}

// TestRecentLimit: Recent gives the latest blocks, newest first, never
// more than the limit.
func TestRecentLimit(t *testing.T) {
	f := newFixture(t)
	a := f.key()
	blocks := []*ledger.Block{f.g}
	for i := range 4 {
		s := f.send(f.gk, a.Address(), uint64(i+1))
		f.commit(s)
		blocks = append(blocks, s)
	}
	newest := func(n int) []ledger.Hash {
		var hs []ledger.Hash
		for i := len(blocks) - 1; i >= 0 && len(hs) < n; i-- {
			hs = append(hs, blocks[i].Hash)
		}
		return hs
	}
	for _, limit := range []int{0, 1, 3, 5, 8} {
		var got []ledger.Hash
		if err := f.st.Recent(limit, func(e *ledger.Entry) error { got = append(got, e.Block.Hash); return nil }); err != nil {
			t.Fatal(err)
		}
		if want := newest(limit); !reflect.DeepEqual(got, want) {
			t.Errorf("Recent(%d): got %d blocks %v, want %d %v", limit, len(got), got, len(want), want)
		}
	}
}
