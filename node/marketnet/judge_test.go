package marketnet

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

// TestJudgeOffer: an offer is kept only when it is the network's price at
// an index this node holds, for exactly the request, from the provider
// asked, and holds for a while but not for years.
func TestJudgeOffer(t *testing.T) {
	network := ledger.Hash{5}
	now := time.UnixMilli(1767225600000)
	cheap := statechain.Defaults()
	cheap.Prices.VCPU = ledger.NewAmount(1)
	s := &Service{cfg: Config{Network: network, Now: func() time.Time { return now }, OfferTTL: 5 * time.Minute, MaxClockSkew: 10 * time.Minute,
		Params: func() (statechain.Params, uint64, error) { return statechain.Defaults(), 3, nil }}}
	k := wallet.NewKey()
	p := market.Provider{Account: k.Address()}
	req := market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 600}
	offer := func(params statechain.Params, index uint64, expiry time.Duration, edit func(*market.Offer)) *market.Offer {
		cost, stake, _ := market.Quote(params, req)
		o := &market.Offer{NodePeer: "12D3KooWGzxzKZYveHXtpG6AsrUJBcWxHBFS2HsEoGTxrMLvKXtf", Request: req, Cost: cost, Stake: stake,
			StateIndex: index, Expiry: now.Add(expiry).UnixMilli()}
		if edit != nil {
			edit(o)
		}
		o.Sign(k.Private(), network)
		return o
	}
	for _, c := range []struct {
		name string
		o    *market.Offer
		r    market.Request
		p    market.Provider
		want string
	}{
		{name: "at the tip", o: offer(statechain.Defaults(), 3, time.Minute, nil)},
		{name: "at an earlier index, the prices unchanged since", o: offer(statechain.Defaults(), 1, time.Minute, nil)},
		{name: "at an earlier index, prices no longer in force", o: offer(cheap, 1, time.Minute, nil), want: "not the network's"},
		{name: "beyond the tip", o: offer(statechain.Defaults(), 4, time.Minute, nil), want: "beyond this node's tip"},
		{name: "cheaper than the network", o: offer(cheap, 3, time.Minute, nil), want: "not the network's"},
		{name: "a stake too small", o: offer(statechain.Defaults(), 3, time.Minute, func(o *market.Offer) { o.Stake = ledger.NewAmount(1) }), want: "not the network's"},
		{name: "expired", o: offer(statechain.Defaults(), 3, -time.Second, nil), want: "expired"},
		{name: "for years", o: offer(statechain.Defaults(), 3, 365*24*time.Hour, nil), want: "longer than offers do"},
		{name: "another request", o: offer(statechain.Defaults(), 3, time.Minute, nil), r: market.Request{VCPUs: 2, MemoryMB: 512, DiskGB: 5, Duration: 600}, want: "another request"},
		{name: "another provider", o: offer(statechain.Defaults(), 3, time.Minute, nil), p: market.Provider{Account: ledger.Address{9}}, want: "signed by"},
		{name: "forged", o: func() *market.Offer {
			o := offer(statechain.Defaults(), 3, time.Minute, nil)
			o.Signature[0] ^= 1
			return o
		}(), want: "invalid offer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, pp := req, p
			if c.r != (market.Request{}) {
				r = c.r
			}
			if !c.p.Account.IsZero() {
				pp = c.p
			}
			_, err := s.judgeOffer(pp, r, c.o)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
		})
	}
	if _, err := s.judgeOffer(p, req, offer(statechain.Defaults(), 3, time.Minute, nil)); errors.Is(err, market.ErrInvalid) {
		t.Fatal(err)
	}
}

func TestReason(t *testing.T) {
	if got := reason("bad\x1b[31m\nthings\u202e"); got != "bad [31m things " {
		t.Fatalf("reason = %q", got)
	}
	if got := reason(strings.Repeat("é", 300)); len(got) > maxReason+len("…") {
		t.Fatalf("reason of %d bytes", len(got))
	}
	if reason("") != "no offer" {
		t.Fatal("an empty reason")
	}
}

// TestKeepBounded: a node keeps at most MaxProviders records; when they
// are all fresh, the one renewed longest ago makes way for a newer one,
// so a flood of keys cannot lock a provider out; stale records go.
func TestKeepBounded(t *testing.T) {
	network := ledger.Hash{5}
	now := time.UnixMilli(1767225600000)
	s := &Service{cfg: Config{Network: network, Now: func() time.Time { return now }, Announce: time.Minute},
		records: map[ledger.Address]*market.Capacity{}, ranks: map[ledger.Address]rank{}}
	rec := func(ts time.Time) *market.Capacity {
		c := &market.Capacity{NodePeer: "12D3KooWGzxzKZYveHXtpG6AsrUJBcWxHBFS2HsEoGTxrMLvKXtf", Timestamp: ts.UnixMilli()}
		c.Sign(wallet.NewKey().Private(), network)
		return c
	}
	first := rec(now.Add(-time.Minute))
	s.keep(first)
	for range MaxProviders - 1 {
		if !s.keep(rec(now)) {
			t.Fatal("a record refused below the bound")
		}
	}
	if len(s.records) != MaxProviders {
		t.Fatalf("%d records", len(s.records))
	}
	honest := rec(now.Add(time.Second))
	if !s.keep(honest) || len(s.records) != MaxProviders || s.records[first.Provider] != nil {
		t.Fatal("a newer record did not take the place of the one renewed longest ago")
	}
	if s.keep(rec(now.Add(-staleAfter * time.Minute).Add(-time.Second))) {
		t.Fatal("a stale record was kept")
	}
	now = now.Add(staleAfter*time.Minute + 2*time.Second)
	ps, _ := s.Providers()
	if len(ps) != 0 {
		t.Fatalf("%d providers listed after every record went stale", len(ps))
	}
}

// TestKeepUnderFlood: the records are full of a flood of fresh keys,
// renewed and stamped as far ahead of the node's clock as it allows. A
// provider that holds more on the ledger than each of the flood's keys,
// or has live leases, still gets in and stays, however often the flood
// renews; one that holds no more gets in only when it comes later than
// the flood's oldest arrival, stamping ahead gaining the flood nothing.
func TestKeepUnderFlood(t *testing.T) {
	network := ledger.Hash{5}
	start := time.UnixMilli(1767225600000)
	funded, leased, poor, late := wallet.NewKey(), wallet.NewKey(), wallet.NewKey(), wallet.NewKey()
	rec := func(k wallet.Key, ts time.Time) *market.Capacity {
		c := &market.Capacity{NodePeer: "12D3KooWGzxzKZYveHXtpG6AsrUJBcWxHBFS2HsEoGTxrMLvKXtf", Timestamp: ts.UnixMilli()}
		c.Sign(k.Private(), network)
		return c
	}
	flood := make([]wallet.Key, MaxProviders)
	for i := range flood {
		flood[i] = wallet.NewKey()
	}
	for _, c := range []struct {
		name  string
		key   wallet.Key
		after time.Duration // after the flood's renewal, stamped then
		want  bool
	}{
		{"a provider with a larger balance", funded, 0, true},
		{"a provider with live leases", leased, 0, true},
		{"a provider with the flood's balance, at once", poor, 0, false},
		{"a provider with the flood's balance, later", late, time.Second, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := start
			s := &Service{cfg: Config{Network: network, Now: func() time.Time { return now }, Announce: time.Minute,
				Balance: func(p ledger.Address) (ledger.Amount, error) {
					if p == funded.Address() {
						return ledger.NewAmount(1000), nil
					}
					return ledger.NewAmount(1), nil // every key of the flood is funded with 1
				},
				Active: func(p ledger.Address) (market.Resources, int, error) {
					if p == leased.Address() {
						return market.Resources{VCPUs: 1}, 1, nil
					}
					return market.Resources{}, 0, nil
				}},
				records: map[ledger.Address]*market.Capacity{}, ranks: map[ledger.Address]rank{}}
			renew := func() {
				for _, k := range flood {
					s.keep(rec(k, now.Add(59*time.Second)))
				}
			}
			renew()
			if len(s.records) != MaxProviders {
				t.Fatalf("the flood left %d records", len(s.records))
			}
			now = now.Add(20 * time.Second)
			renew()
			now = now.Add(c.after)
			if got := s.keep(rec(c.key, now)); got != c.want {
				t.Fatalf("kept %v, want %v", got, c.want)
			}
			now = now.Add(20 * time.Second)
			renew()
			if _, held := s.records[c.key.Address()]; c.want && c.key.Address() != late.Address() && !held {
				t.Error("displaced by the flood's next renewal")
			}
			if len(s.records) != MaxProviders {
				t.Errorf("%d records, want %d", len(s.records), MaxProviders)
			}
		})
	}
}
