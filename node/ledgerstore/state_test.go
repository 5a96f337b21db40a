package ledgerstore

import (
	"bytes"
	"testing"

	"github.com/latticenet/lattice/ledger"
)

// TestTypeStateMatchesMem: the room block types have for their own state
// (ledger.StateChange) reads the same from the store as from the
// reference Mem, in the batch that writes it, after its commit and after a
// reopen; a change no store can hold is refused whole.
func TestTypeStateMatchesMem(t *testing.T) {
	f := newFixture(t)
	g := f.gk.Address()
	mem := ledger.NewMem()
	mem.Commit(ledger.GenesisDelta(f.g))
	acct, _, err := f.st.Account(g)
	if err != nil {
		t.Fatal(err)
	}
	type id struct{ table, key string }
	ids := []id{{"lease", "a"}, {"lease", "b"}, {"escrow", "a"}, {"escrow", ""}, {"lease", "absent"}}
	same := func(where string, v ledger.View) {
		t.Helper()
		for _, k := range ids {
			want, wantFound, _ := mem.State(k.table, k.key)
			got, found, err := v.State(k.table, k.key)
			if err != nil || found != wantFound || !bytes.Equal(got, want) {
				t.Errorf("%s: State(%q, %q) = %q, %v, %v; Mem has %q, %v", where, k.table, k.key, got, found, err, want, wantFound)
			}
		}
	}
	steps := [][]ledger.StateChange{
		{{Table: "lease", Key: "a", Value: []byte("1")}, {Table: "lease", Key: "b", Value: []byte("2")},
			{Table: "escrow", Key: "a", Value: []byte{}}, {Table: "escrow", Key: "", Value: []byte("empty key")}},
		{{Table: "lease", Key: "a"}, {Table: "lease", Key: "b", Value: []byte("3")}},
		{{Table: "lease", Key: "b", Value: []byte("4")}, {Table: "lease", Key: "b"}}, // set, then deleted, in one delta
	}
	for i, step := range steps {
		d := &ledger.Delta{Account: acct, State: step}
		if err := mem.Apply(d); err != nil {
			t.Fatal(err)
		}
		b := f.st.NewBatch()
		if err := b.Apply(d); err != nil {
			t.Fatal(err)
		}
		same("in the batch of step "+string(rune('1'+i)), b)
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		b.Close()
		same("after step "+string(rune('1'+i)), f.st)
	}
	f.reopen()
	same("reopened", f.st)

	for _, bad := range []ledger.StateChange{{Table: "", Key: "k", Value: []byte("v")},
		{Table: string(make([]byte, ledger.MaxStateTable+1)), Key: "k", Value: []byte("v")}} {
		d := &ledger.Delta{Account: acct, State: []ledger.StateChange{{Table: "lease", Key: "a", Value: []byte("x")}, bad}}
		if err := mem.Apply(d); err == nil {
			t.Errorf("Mem took state table %q", bad.Table)
		}
		b := f.st.NewBatch()
		if err := b.Apply(d); err == nil {
			t.Errorf("the store took state table %q", bad.Table)
		}
		same("after a refused change", b) // nothing of it, in the batch either
		b.Close()
	}
}
