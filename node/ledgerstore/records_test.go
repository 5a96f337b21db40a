package ledgerstore

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// TestReceiverIndex: the receiver of a send is the receive that took it,
// in the batch that applies the receive and once committed, and nothing
// after that receive is rolled back.
func TestReceiverIndex(t *testing.T) {
	f := newFixture(t)
	a := f.key()
	s := f.send(f.gk, a.Address(), 10)
	r := f.receive(a, s)
	f.commit(s)
	type view interface {
		Receiver(ledger.Hash) (ledger.Hash, bool, error)
	}
	check := func(where string, v view, want ledger.Hash) {
		t.Helper()
		got, found, err := v.Receiver(s.Hash)
		if err != nil || got != want || found != !want.IsZero() {
			t.Errorf("%s: receiver of the send got %s (found %v, %v), want %s", where, got, found, err, want)
		}
	}
	check("send pending", f.st, ledger.Hash{})
	f.batch(func(b *Batch) {
		f.apply(b, r)
		check("receive in the batch", b, r.Hash)
	})
	check("receive committed", f.st, r.Hash)
	f.batch(func(b *Batch) {
		f.rollback(b, a.Address())
		check("receive rolled back in the batch", b, ledger.Hash{})
	})
	check("rollback committed", f.st, ledger.Hash{})
}

// TestOpenRefusesAnotherFormat: a store whose format record is not this
// version's is refused with ErrFormat rather than misread.
func TestOpenRefusesAnotherFormat(t *testing.T) {
	tests := []struct {
		name   string
		format []byte // nil: no record
		want   error
	}{
		{"this version", u64(formatVersion), nil},
		{"older version", u64(formatVersion - 1), ErrFormat},
		{"newer version", u64(formatVersion + 1), ErrFormat},
		{"no record", nil, ErrFormat},
		{"short record", []byte{formatVersion}, ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			k := key(pMeta, []byte("format"))
			var err error
			if tt.format == nil {
				err = f.st.db.Delete(k, pebble.Sync)
			} else {
				err = f.st.db.Set(k, tt.format, pebble.Sync)
			}
			if err != nil {
				t.Fatal(err)
			}
			f.st.Close()
			st, err := Open("db", Options{FS: f.fs})
			if err == nil {
				st.Close()
			}
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("Open: got %v, want %v", err, tt.want)
			}
		})
	}
}

// keyEndingFF returns a key whose address ends in byte 0xff: the last
// byte of a scan's prefix cannot simply be incremented for its bound.
func keyEndingFF(t *testing.T) wallet.Key {
	t.Helper()
	for i := range 1 << 16 {
		seed := make([]byte, 32)
		seed[0], seed[1] = byte(i), byte(i>>8)
		k, err := wallet.KeyFromSeed(seed)
		if err != nil {
			t.Fatal(err)
		}
		if a := k.Address(); a[len(a)-1] == 0xff {
			return k
		}
	}
	t.Fatal("no key found")
	return wallet.Key{}
}

// TestScansOfAnAddressEndingInFF: one account in 256 has an address
// ending in 0xff; its chain, pending entries and conflicts are found like
// any other's.
func TestScansOfAnAddressEndingInFF(t *testing.T) {
	f := newFixture(t)
	k := keyEndingFF(t)
	f.c.Add(k, nil)
	s1 := f.send(f.gk, k.Address(), 10)
	s2 := f.send(f.gk, k.Address(), 20)
	r1 := f.receive(k, s1)
	f.commit(s1, s2, r1)
	f.c.At(r1)
	kept := f.send(k, f.gk.Address(), 1)
	f.commit(kept)
	f.c.At(r1)
	contender := f.send(k, f.gk.Address(), 2)
	f.batch(func(b *Batch) { b.AddConflict(f.forkError(b, contender), t0) })
	a := k.Address()

	var chain []ledger.Hash
	if err := f.st.Chain(a, func(e *ledger.Entry) error { chain = append(chain, e.Block.Hash); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []ledger.Hash{r1.Hash, kept.Hash}; !reflect.DeepEqual(chain, want) {
		t.Errorf("Chain: got %v, want %v", chain, want)
	}
	var pending []ledger.Hash
	if err := f.st.PendingTo(a, func(p ledger.Pending) error { pending = append(pending, p.Send); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []ledger.Hash{s2.Hash}; !reflect.DeepEqual(pending, want) {
		t.Errorf("PendingTo: got %v, want %v", pending, want)
	}
	var conflicts []Conflict
	if err := f.st.Conflicts(&a, func(c Conflict) error { conflicts = append(conflicts, c); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []Conflict{{Account: a, Previous: r1.Hash, Blocks: []ledger.Hash{kept.Hash, contender.Hash}, DetectedAt: t0}}
	if !reflect.DeepEqual(conflicts, want) {
		t.Errorf("Conflicts: got %+v, want %+v", conflicts, want)
	}
}

// TestMultisigAccountOfMaxKeys: an account whose keyset has the most keys
// allowed is stored and read back whole.
func TestMultisigAccountOfMaxKeys(t *testing.T) {
	for _, n := range []int{1, ledger.MaxKeys} {
		f := newFixture(t)
		keys := make([]ledger.Address, n)
		for i := range keys {
			keys[i] = wallet.NewKey().Address()
		}
		open := wallet.MultisigOpen(ledger.NewKeyset(1, keys...), t0)
		var want ledger.Account
		f.batch(func(b *Batch) {
			d, err := ledger.Apply(b, open)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Apply(d); err != nil {
				t.Fatal(err)
			}
			want = d.Account
		})
		got, found, err := f.st.Account(open.Account)
		if err != nil || !found || !reflect.DeepEqual(got, want) {
			t.Errorf("%d keys: account got %+v (found %v, %v), want %+v", n, got, found, err, want)
		}
		e, found, err := f.st.Entry(open.Hash)
		if err != nil || !found || !reflect.DeepEqual(e.After, want) {
			t.Errorf("%d keys: entry got %+v (found %v, %v), want the account after %+v", n, e, found, err, want)
		}
	}
}
