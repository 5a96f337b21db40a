package ledgerstore

import (
	"slices"
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

// TestRecordVotes: votes of this node's representatives are recorded per
// place and kind, move only to later rounds, durably with their batch; a
// vote that could contradict one recorded before is refused, in the batch
// and after it.
func TestRecordVotes(t *testing.T) {
	f := newFixture(t)
	acct := ledger.Address{7}
	p1, p2 := ledger.Hash{1}, ledger.Hash{2}
	x, y := ledger.Hash{0xa}, ledger.Hash{0xb}
	record := func(b *Batch, recs []VoteRecord, granted ...bool) {
		t.Helper()
		got, err := b.RecordVotes(recs)
		if err != nil {
			t.Fatal(err)
		}
		var want []VoteRecord
		for i, g := range granted {
			if g {
				want = append(want, recs[i])
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("RecordVotes(%+v) granted %+v, want %+v", recs, got, want)
		}
	}
	f.batch(func(b *Batch) {
		record(b, []VoteRecord{{acct, p1, 0, true, x}}, true)
		record(b, []VoteRecord{{acct, p1, 0, true, y}}, false) // another block, same round: in the same batch
		record(b, []VoteRecord{{acct, p1, 0, true, x}}, true)  // the same vote again
		record(b, []VoteRecord{{acct, p1, 2, false, y}}, true) // a prevote: its own slot
	})
	f.batch(func(b *Batch) {
		record(b, []VoteRecord{
			{acct, p2, 1, false, y}, // a new place
			{acct, p1, 0, true, y},  // refused after the batch too
			{acct, p1, 1, false, x}, // an earlier round than recorded
			{acct, p1, 3, true, y},  // a later round
		}, true, false, false, true)
	})
	f.reopen()
	for _, tt := range []struct {
		prev  ledger.Hash
		want  SignedVotes
		found bool
	}{
		{p1, SignedVotes{Prevote: y, PrevoteRound: 2, Final: y, FinalRound: 3}, true},
		{p2, SignedVotes{Prevote: y, PrevoteRound: 1}, true},
		{ledger.Hash{3}, SignedVotes{}, false},
	} {
		got, found, err := f.st.SignedVotes(acct, tt.prev)
		if err != nil || found != tt.found || got != tt.want {
			t.Errorf("SignedVotes(%s) = %+v, %v, %v; want %+v, %v", tt.prev, got, found, err, tt.want, tt.found)
		}
	}
}

// TestSignedVotesFirstLayout reads a record of the first layout, a final
// vote's hash alone, as a final vote of round 0, and refuses a corrupt one.
func TestSignedVotesFirstLayout(t *testing.T) {
	x := ledger.Hash{0xa}
	for _, tt := range []struct {
		name string
		in   []byte
		want SignedVotes
		ok   bool
	}{
		{"first layout", x[:], SignedVotes{Final: x}, true},
		{"round trip", SignedVotes{Prevote: x, PrevoteRound: 7, Final: x, FinalRound: 6}.encode(), SignedVotes{Prevote: x, PrevoteRound: 7, Final: x, FinalRound: 6}, true},
		{"short", x[:31], SignedVotes{}, false},
		{"long", append(SignedVotes{}.encode(), 0), SignedVotes{}, false},
	} {
		got, err := decodeSignedVotes(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("%s: decodeSignedVotes = %+v, %v; want %+v, ok %v", tt.name, got, err, tt.want, tt.ok)
		}
	}
}
