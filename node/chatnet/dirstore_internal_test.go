package chatnet

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// entry is a registration as it reaches the store: a name for the
// account, its tier, its timestamp and its arrival (Unix ms).
type entry struct {
	name           string
	tier           byte
	stamp, arrived int64
}

// signed returns e's registration by the key of its name.
func (e entry) signed(keys map[string]wallet.Key) *directory.Registration {
	k, ok := keys[e.name]
	if !ok {
		k = wallet.NewKey()
		keys[e.name] = k
	}
	r := &directory.Registration{NodePeer: aPeer, Timestamp: e.stamp}
	r.Sign(k.Private())
	return r
}

func (e entry) arrival() arrival { return arrival{tier: e.tier, at: e.arrived} }

func peerAt(name string, stamp, arrived int64) entry { return entry{name, tierPeer, stamp, arrived} }
func localAt(name string, stamp, arrived int64) entry {
	return entry{name, tierLocal, stamp, arrived}
}
func ownAt(name string, stamp, arrived int64) entry { return entry{name, tierOwn, stamp, arrived} }

// names returns the names of the accounts st holds registrations of.
func names(t *testing.T, st *store, keys map[string]wallet.Key) map[string]bool {
	t.Helper()
	byAccount := map[ledger.Address]string{}
	for n, k := range keys {
		byAccount[k.Address()] = n
	}
	out := map[string]bool{}
	if err := st.registrations(func(r *directory.Registration) error { out[byAccount[r.Account]] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func openTestStore(t *testing.T, fs vfs.FS, maxRegs int) *store {
	t.Helper()
	st, err := openStore("chat", fs, maxRegs, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestDirectoryEviction: in a full directory a newcomer takes the place of
// the lowest-ranked registration (by tier, then by the earlier of stamp
// and arrival) only when it ranks above it.
func TestDirectoryEviction(t *testing.T) {
	const minutesAhead = 5 * 60 * 1000
	for _, tc := range []struct {
		name    string
		held    []entry // stored in order into a directory of 3
		next    entry
		refuse  bool   // the peer's rate has no token for an eviction
		wantErr error  // of registering next
		gone    string // the registration next took the place of
	}{
		{name: "room left", held: []entry{peerAt("a", 10, 10), peerAt("b", 20, 20)}, next: peerAt("c", 5, 30)},
		{name: "the one refreshed longest ago goes",
			held: []entry{peerAt("a", 20, 20), peerAt("b", 10, 10), peerAt("c", 30, 30)}, next: peerAt("d", 40, 40), gone: "b"},
		{name: "stamping ahead gains nothing: age is the arrival",
			held: []entry{peerAt("a", 100+minutesAhead, 100), peerAt("b", 120, 120), peerAt("c", 130, 130)},
			next: peerAt("d", 140, 140), gone: "a"},
		{name: "an old registration heard late ranks by its stamp",
			held: []entry{peerAt("a", 100, 100), peerAt("b", 120, 120), peerAt("c", 5, 130)},
			next: peerAt("d", 140, 140), gone: "c"},
		{name: "a newcomer ranked alike is refused",
			held: []entry{peerAt("a", 10, 10), peerAt("b", 20, 20), peerAt("c", 30, 30)},
			next: peerAt("d", 10, 50), wantErr: ErrDirectoryFull},
		{name: "a newcomer ranked lower is refused",
			held: []entry{peerAt("a", 10, 10), peerAt("b", 20, 20), peerAt("c", 30, 30)},
			next: peerAt("d", 5, 50), wantErr: ErrDirectoryFull},
		{name: "a submitted one takes a peer's place, however fresh",
			held: []entry{localAt("a", 10, 10), peerAt("b", 50, 50), ownAt("c", 5, 5)},
			next: localAt("d", 40, 40), gone: "b"},
		{name: "a peer's never takes a submitted one's place",
			held: []entry{localAt("a", 10, 10), localAt("b", 20, 20), ownAt("c", 5, 5)},
			next: peerAt("d", 100, 100), wantErr: ErrDirectoryFull},
		{name: "the node's own outranks the submitted ones",
			held: []entry{ownAt("a", 1, 1), localAt("b", 20, 20), localAt("c", 30, 30)},
			next: localAt("d", 40, 40), gone: "b"},
		{name: "a newer registration of a held account takes no place",
			held: []entry{peerAt("a", 10, 10), peerAt("b", 20, 20), peerAt("c", 30, 30)},
			next: peerAt("a", 40, 40)},
		{name: "no token, no eviction",
			held: []entry{peerAt("a", 10, 10), peerAt("b", 20, 20), peerAt("c", 30, 30)},
			next: peerAt("d", 40, 40), refuse: true, wantErr: errNotAdmitted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openTestStore(t, vfs.NewMem(), 3)
			defer st.close()
			keys := map[string]wallet.Key{}
			for _, e := range tc.held {
				if added, err := st.register(e.signed(keys), e.arrival()); !added || err != nil {
					t.Fatalf("storing %s: %v, %v", e.name, added, err)
				}
			}
			a := tc.next.arrival()
			a.admit = func() bool { return !tc.refuse }
			added, err := st.register(tc.next.signed(keys), a)
			if !errors.Is(err, tc.wantErr) || added != (tc.wantErr == nil) {
				t.Fatalf("registering %s: %v, %v; want %v", tc.next.name, added, err, tc.wantErr)
			}
			want := map[string]bool{}
			for _, e := range tc.held {
				want[e.name] = true
			}
			if tc.wantErr == nil {
				want[tc.next.name] = true
			}
			delete(want, tc.gone)
			got := names(t, st, keys)
			if len(got) != len(want) || st.registrationCount() != len(want) {
				t.Fatalf("held %v (count %d), want %v", got, st.registrationCount(), want)
			}
			for n := range want {
				if !got[n] {
					t.Fatalf("held %v, want %v", got, want)
				}
			}
		})
	}
}

// TestDirectoryRanksOutliveARestart: the count and the order of eviction
// come back with the store, registrations stored before there were ranks
// are ranked by their timestamp, and a lowered MaxRegistrations makes
// room by evicting the lowest.
func TestDirectoryRanksOutliveARestart(t *testing.T) {
	fs := vfs.NewMem()
	keys := map[string]wallet.Key{}
	st := openTestStore(t, fs, 10)
	for _, e := range []entry{peerAt("a", 30, 30), peerAt("b", 10, 10), peerAt("c", 20, 20)} {
		if _, err := st.register(e.signed(keys), e.arrival()); err != nil {
			t.Fatal(err)
		}
	}
	// d as a store before ranks kept it: its registration alone.
	d := peerAt("d", 5, 5).signed(keys)
	data, _ := d.MarshalBinary()
	if err := st.db.Set(key(pRegister, d.Account[:]), data, nil); err != nil {
		t.Fatal(err)
	}
	st.close()

	st = openTestStore(t, fs, 4)
	if n := st.registrationCount(); n != 4 {
		t.Fatalf("reopened: %d registrations counted, want 4", n)
	}
	for _, step := range []struct {
		next entry
		gone string
	}{
		{peerAt("e", 40, 40), "d"}, // the unranked one, by its timestamp
		{peerAt("f", 50, 50), "b"},
	} {
		if added, err := st.register(step.next.signed(keys), step.next.arrival()); !added || err != nil {
			t.Fatalf("registering %s: %v, %v", step.next.name, added, err)
		}
		if got := names(t, st, keys); got[step.gone] || !got[step.next.name] || len(got) != 4 {
			t.Fatalf("after %s: held %v, want %s gone", step.next.name, got, step.gone)
		}
	}
	st.close()

	st = openTestStore(t, fs, 2) // lowered: the three lowest (c, a, e) go for g
	defer st.close()
	if added, err := st.register(peerAt("g", 60, 60).signed(keys), peerAt("g", 60, 60).arrival()); !added || err != nil {
		t.Fatalf("registering g: %v, %v", added, err)
	}
	if got := names(t, st, keys); len(got) != 2 || !got["f"] || !got["g"] || st.registrationCount() != 2 {
		t.Fatalf("MaxRegistrations lowered to 2: held %v (count %d), want f and g", got, st.registrationCount())
	}
}

// TestOwnRegistrationRefreshed: the node signs its own account's
// registration anew once it is ownRefresh old, while it names the node,
// so that a full directory elsewhere takes it back; one naming another
// node is left alone.
func TestOwnRegistrationRefreshed(t *testing.T) {
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	s := startService(t, vfs.NewMem(), now)
	first, _, _ := s.st.registration(s.own)
	s.refreshOwn(context.Background())
	if r, _, _ := s.st.registration(s.own); r.Hash() != first.Hash() {
		t.Fatal("the own registration was signed anew before ownRefresh")
	}
	offset.Store(int64(ownRefresh + time.Second))
	s.refreshOwn(context.Background())
	r, _, _ := s.st.registration(s.own)
	if r.Timestamp < now().Add(-time.Minute).UnixMilli() || r.NodePeer != s.self.String() || checkRegistration(r) != nil {
		t.Fatalf("after ownRefresh: the own registration is %+v, want one signed now at this node", r)
	}
	moved := &directory.Registration{NodePeer: aPeer, Timestamp: now().UnixMilli() + 1}
	moved.Sign(s.cfg.Key.Private())
	if err := s.keep(moved, nil); err != nil {
		t.Fatal(err)
	}
	offset.Store(int64(3*ownRefresh + time.Second))
	s.refreshOwn(context.Background())
	if r, _, _ := s.st.registration(s.own); r.Hash() != moved.Hash() {
		t.Errorf("the own account moved to another node: got %+v, want it left there", r)
	}
}
