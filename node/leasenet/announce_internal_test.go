package leasenet

import (
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

// TestAnnouncementsUnderFlood: a node's timekeeper records are full of
// strangers' announcements, renewed and stamped as far ahead of its clock
// as it allows (keys cost nothing). A member of the committee at the tip,
// or of an earlier one, still gets in, since leases made at an earlier
// index are judged by its committee for their whole life; a stranger that
// comes later stamped right ranks above the flood's older arrivals; and
// one that comes at the same time as the oldest does not.
func TestAnnouncementsUnderFlood(t *testing.T) {
	network := ledger.Hash{0x6e}
	gov, former, current := wallet.NewKey(), wallet.NewKey(), wallet.NewKey()
	start := time.UnixMilli(1_767_225_600_000)
	st, err := statechain.New(network, statechain.Genesis(network, ledger.NewKeyset(1, gov.Address()), start.UnixMilli()-10_000))
	if err != nil {
		t.Fatal(err)
	}
	states := []*statechain.State{st}
	for _, k := range []wallet.Key{former, current} { // index 1, then 2 (the tip)
		tip := states[len(states)-1]
		b := &statechain.Block{Index: tip.Index() + 1, Previous: tip.Tip().Hash, Operation: statechain.OpSet,
			Key: "timekeepers", Value: statechain.TimekeepersValue([]ledger.Address{k.Address()}), Timestamp: start.UnixMilli() - 5000}
		b.Seal(network)
		b.Sign(gov.Private())
		next, err := tip.Apply(b)
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, next)
	}
	announce := func(k wallet.Key, at time.Time) *announcement {
		a := &announcement{NodePeer: "12D3KooWGRUVh7n8w1zdHd6dVgQ6Pq7eP1gJ1mKb7eYxSfvQZk1a", Timestamp: at.UnixMilli()}
		a.Sign(k.Private(), network)
		return a
	}
	flood := make([]wallet.Key, maxTimekeepers)
	for i := range flood {
		flood[i] = wallet.NewKey()
	}
	for _, c := range []struct {
		name string
		key  wallet.Key
		// after is how long after the flood's last renewal the
		// announcement comes, stamped by the node's clock then.
		after time.Duration
		want  bool
	}{
		{"the tip's committee member", current, 0, true},
		{"an earlier committee's member", former, 0, true},
		{"a stranger, later, stamped right", wallet.NewKey(), time.Second, true},
		{"a stranger, at once, stamped right", wallet.NewKey(), 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := start
			s := &Service{cfg: Config{
				Terms: market.Terms{Network: network, StateAt: func(i uint64) (*statechain.State, bool) {
					if i >= uint64(len(states)) {
						return nil, false
					}
					return states[i], true
				}},
				TipIndex: func() uint64 { return uint64(len(states) - 1) },
				Now:      func() time.Time { return now },
				Announce: time.Minute,
			}}
			s.tk.records, s.tk.heard = map[ledger.Address]*announcement{}, map[ledger.Address]int64{}
			for round := range 3 { // renewed every 20 s, stamped 59 s ahead
				now = start.Add(time.Duration(round) * 20 * time.Second)
				for _, k := range flood {
					if !s.keepAnnouncement(announce(k, now.Add(59*time.Second))) && round == 0 {
						t.Fatal("the flood did not fill the records")
					}
				}
			}
			now = now.Add(c.after)
			if got := s.keepAnnouncement(announce(c.key, now)); got != c.want {
				t.Errorf("kept %v, want %v", got, c.want)
			}
			if _, held := s.tk.records[c.key.Address()]; held != c.want || len(s.tk.records) != maxTimekeepers {
				t.Errorf("held %v (want %v), %d records (want %d)", held, c.want, len(s.tk.records), maxTimekeepers)
			}
		})
	}
}
