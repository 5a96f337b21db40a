package ledgerstore

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/ledger"
)

// TestConfirmedWeight: only confirmed blocks move the weight that counts in
// elections; a store written before the table existed builds it on open.
func TestConfirmedWeight(t *testing.T) {
	f := newFixture(t)
	g := f.gk.Address()
	a, r := f.key(), f.key()
	want := func(where string, ws map[ledger.Address]uint64) {
		t.Helper()
		for rep, w := range ws {
			got, err := f.st.ConfirmedWeight(rep)
			if err != nil || got != ledger.NewAmount(w) {
				t.Errorf("%s: ConfirmedWeight(%s) = %s, %v, want %d", where, rep, got, err, w)
			}
		}
	}
	want("genesis", map[ledger.Address]uint64{g: 1_000_000})
	s1 := f.send(f.gk, a.Address(), 300)
	f.commit(s1)
	recv, err := f.c.Receive(a, s1, r.Address())
	if err != nil {
		t.Fatal(err)
	}
	f.commit(recv)
	want("applied, unconfirmed", map[ledger.Address]uint64{g: 1_000_000, a.Address(): 0, r.Address(): 0})
	f.batch(func(b *Batch) {
		if err := b.SetConfirmed(g, 2, s1.Hash); err != nil {
			t.Fatal(err)
		}
	})
	want("send confirmed: in transit, it counts for its destination", map[ledger.Address]uint64{g: 999_700, a.Address(): 300, r.Address(): 0})
	f.batch(func(b *Batch) {
		if err := b.SetConfirmed(a.Address(), 1, recv.Hash); err != nil {
			t.Fatal(err)
		}
	})
	want("receive confirmed", map[ledger.Address]uint64{g: 999_700, r.Address(): 300, a.Address(): 0})

	// An older store: the table and its mark are absent until reopened.
	if err := f.st.db.DeleteRange([]byte{pCWeight}, []byte{pCWeight + 1}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := f.st.db.Delete(key(pMeta, []byte(metaConfirmedWeights)), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	want("table dropped", map[ledger.Address]uint64{g: 0, r.Address(): 0})
	f.reopen()
	want("rebuilt on open", map[ledger.Address]uint64{g: 999_700, r.Address(): 300, a.Address(): 0})
}

// TestRecordFinalVotes: a final vote is recorded once, durably with its
// batch, and a record for another block at the same place gives back the
// block recorded there, in the batch and after it.
func TestRecordFinalVotes(t *testing.T) {
	f := newFixture(t)
	acct := ledger.Address{7}
	p1, p2 := ledger.Hash{1}, ledger.Hash{2}
	x, y := ledger.Hash{0xa}, ledger.Hash{0xb}
	record := func(b *Batch, recs []FinalVoteRecord, want []ledger.Hash) {
		t.Helper()
		got, err := b.RecordFinalVotes(recs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i].Hash != want[i] || got[i].Account != recs[i].Account || got[i].Previous != recs[i].Previous {
				t.Errorf("record %d: got %+v, want block %s", i, got[i], want[i])
			}
		}
	}
	f.batch(func(b *Batch) {
		record(b, []FinalVoteRecord{{acct, p1, x}}, []ledger.Hash{x})
		record(b, []FinalVoteRecord{{acct, p1, y}}, []ledger.Hash{x}) // in the same batch
	})
	f.batch(func(b *Batch) {
		record(b, []FinalVoteRecord{{acct, p2, y}, {acct, p1, y}}, []ledger.Hash{y, x})
	})
	f.reopen()
	for _, tt := range []struct {
		prev  ledger.Hash
		want  ledger.Hash
		found bool
	}{{p1, x, true}, {p2, y, true}, {ledger.Hash{3}, ledger.Hash{}, false}} {
		h, found, err := f.st.FinalVote(acct, tt.prev)
		if err != nil || found != tt.found || h != tt.want {
			t.Errorf("FinalVote(%s) = %s, %v, %v; want %s, %v", tt.prev, h, found, err, tt.want, tt.found)
		}
	}
}
