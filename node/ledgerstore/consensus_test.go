package ledgerstore

import (
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/ledger"
)

// TestConfirmedWeight: only confirmed blocks move the weight that counts in
// elections; a store written before the table existed builds it on open.
// The store answers from its table in memory, a snapshot from the
// database: both must say the same.
func TestConfirmedWeight(t *testing.T) {
	f := newFixture(t)
	g := f.gk.Address()
	a, r := f.key(), f.key()
	check := func(where, from string, weight func(ledger.Address) (ledger.Amount, error), ws map[ledger.Address]uint64) {
		t.Helper()
		for rep, w := range ws {
			got, err := weight(rep)
			if err != nil || got != ledger.NewAmount(w) {
				t.Errorf("%s: ConfirmedWeight(%s) from %s = %s, %v, want %d", where, rep, from, got, err, w)
			}
		}
	}
	wantDB := func(where string, ws map[ledger.Address]uint64) {
		t.Helper()
		snap := f.st.Snapshot()
		defer snap.Close()
		check(where, "the database", snap.ConfirmedWeight, ws)
	}
	want := func(where string, ws map[ledger.Address]uint64) {
		t.Helper()
		check(where, "memory", f.st.ConfirmedWeight, ws)
		wantDB(where, ws)
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
	wantDB("table dropped", map[ledger.Address]uint64{g: 0, r.Address(): 0})
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

// TestVoteRecordsEndWithConfirmation: a place's vote record is deleted by
// the batch that confirms a block there, and on open for places confirmed
// before that rule; records of undecided places stay. The store answers
// from memory, a snapshot from the database: both must agree.
func TestVoteRecordsEndWithConfirmation(t *testing.T) {
	f := newFixture(t)
	g := f.gk.Address()
	a := f.key()
	s1 := f.send(f.gk, a.Address(), 300)
	f.commit(s1)
	undecided := VoteRecord{Account: ledger.Address{7}, Previous: ledger.Hash{1}, Round: 0, Final: true, Hash: ledger.Hash{0xa}}
	f.batch(func(b *Batch) {
		recs := []VoteRecord{{Account: g, Previous: s1.Previous, Round: 0, Final: true, Hash: s1.Hash}, undecided}
		if got, err := b.RecordVotes(recs); err != nil || len(got) != 2 {
			t.Fatalf("RecordVotes = %v, %v", got, err)
		}
	})
	want := func(where string, a ledger.Address, prev ledger.Hash, found bool) {
		t.Helper()
		snap := f.st.Snapshot()
		defer snap.Close()
		for from, get := range map[string]func(ledger.Address, ledger.Hash) (SignedVotes, bool, error){
			"memory": f.st.SignedVotes, "the database": snap.SignedVotes,
		} {
			if _, got, err := get(a, prev); err != nil || got != found {
				t.Errorf("%s: SignedVotes(%s, %s) from %s found %v, %v; want %v", where, a, prev, from, got, err, found)
			}
		}
	}
	want("recorded", g, s1.Previous, true)
	f.batch(func(b *Batch) {
		if err := b.SetConfirmed(g, 2, s1.Hash); err != nil {
			t.Fatal(err)
		}
	})
	want("confirmed", g, s1.Previous, false)
	want("confirmed elsewhere", undecided.Account, undecided.Previous, true)

	// A store written before the rule keeps records of confirmed places.
	old := SignedVotes{Final: s1.Hash}
	if err := f.st.db.Set(key(pSigned, g[:], s1.Previous[:]), old.encode(), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	f.reopen()
	want("reopened", g, s1.Previous, false)
	want("reopened, undecided", undecided.Account, undecided.Previous, true)
	f.batch(func(b *Batch) {
		// The record of the undecided place still binds after the reopen.
		other := undecided
		other.Hash = ledger.Hash{0xb}
		if got, err := b.RecordVotes([]VoteRecord{other}); err != nil || len(got) != 0 {
			t.Errorf("RecordVotes(a contradiction) granted %v, %v", got, err)
		}
	})
}
