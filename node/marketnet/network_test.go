package marketnet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

// refusal is the reason offers gives for provider p's refusal, or "".
func refusal(offers market.Offers, p ledger.Address) string {
	for _, r := range offers.Refused {
		if r.Provider == p {
			return r.Reason
		}
	}
	return ""
}

// TestOffers: two providers announce their capacity; every node lists
// both; a request is answered by both with signed offers at the
// network's price, cheapest first; one beyond a provider's capacity is
// refused by it, saying why; a price set by governance reaches the offers.
func TestOffers(t *testing.T) {
	small := market.Resources{VCPUs: 2, MemoryMB: 2048, DiskGB: 20}
	big := market.Resources{VCPUs: 8, MemoryMB: 16384, DiskGB: 200}
	c := nettest.Start(t, nettest.Options{Nodes: 3, Providers: map[int]market.Resources{1: small, 2: big}})
	c.WaitFor("every node lists both providers", 30*time.Second, func(i int) bool {
		ps, _ := c.Nodes[i].Market.Providers()
		return len(ps) == 2
	})
	ps, err := c.Nodes[0].Market.Providers()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		want := small
		if p.Account == c.Nodes[2].ProviderKey.Address() {
			want = big
		}
		if p.Total != want || p.Free != want || p.ActiveLeases != 0 {
			t.Fatalf("provider %s: %+v", p.Account, p)
		}
	}
	ctx := context.Background()
	req := market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 3600}
	got, _ := c.Nodes[0].Market.RequestOffers(ctx, req)
	if got.Asked != 2 || len(got.Offers) != 2 || len(got.Refused) != 0 {
		t.Fatalf("offers: %+v", got)
	}
	// Defaults: vcpu 100, memory_mb 1, disk_gb 1 a second; stake 0.5.
	wantCost := ledger.NewAmount(3600 * (100 + 512 + 5))
	for _, o := range got.Offers {
		if o.Cost != wantCost || o.Stake != ledger.NewAmount(3600*(100+512+5)/2) || o.Request != req || o.Check(c.Network.Genesis.Hash) != nil {
			t.Fatalf("offer: %+v", o)
		}
	}

	// A stranger signs a record naming the big provider's node, newer
	// than the provider's own: the node is still asked once, and its
	// answer counts for the provider that signed it.
	squatter := wallet.NewKey()
	rec := &market.Capacity{NodePeer: c.Nodes[2].Host.ID().String(), Total: big, Timestamp: time.Now().Add(time.Second).UnixMilli()}
	rec.Sign(squatter.Private(), c.Network.Genesis.Hash)
	if !c.Nodes[0].Market.Keep(rec) {
		t.Fatal("the squatter's record was not kept")
	}
	got, _ = c.Nodes[0].Market.RequestOffers(ctx, req)
	if got.Asked != 2 || len(got.Offers) != 2 || len(got.Refused) != 1 || got.Refused[0].Provider != squatter.Address() ||
		!strings.Contains(got.Refused[0].Reason, "which answered for that provider") {
		t.Fatalf("offers with a stranger's record naming a provider's node: %+v", got)
	}

	// Beyond the small provider: only the big one offers.
	large := market.Request{VCPUs: 4, MemoryMB: 4096, DiskGB: 50, Duration: 60}
	got, _ = c.Nodes[0].Market.RequestOffers(ctx, large)
	if len(got.Offers) != 1 || got.Offers[0].Provider != c.Nodes[2].ProviderKey.Address() ||
		len(got.Refused) != 2 || !strings.Contains(refusal(got, c.Nodes[1].ProviderKey.Address()), "insufficient capacity") {
		t.Fatalf("offers beyond one provider: %+v", got)
	}

	// Governance halves the vCPU price; offers follow it.
	gk := c.Genesis // the genesis account governs nettest's state chain
	tip := c.Nodes[0].Gov.Tip()
	b := &statechain.Block{Index: tip.Index + 1, Previous: tip.Hash, Operation: statechain.OpSet, Key: statechain.KeyLeasePrices,
		Value: `{"vcpu":"50","memory_mb":"1","disk_gb":"1"}`, Timestamp: time.Now().UnixMilli()}
	b.Seal(c.Network.Genesis.Hash)
	b.Sign(gk.Private())
	if _, err := c.Nodes[0].Gov.Submit(ctx, b); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("the price everywhere", 20*time.Second, func(i int) bool { return c.Nodes[i].Gov.Tip().Hash == b.Hash })
	got, _ = c.Nodes[1].Market.RequestOffers(ctx, req)
	if len(got.Offers) != 2 || got.Offers[0].Cost != ledger.NewAmount(3600*(50+512+5)) || got.Offers[0].StateIndex != b.Index {
		t.Fatalf("offers after the price change: %+v", got)
	}
}

// TestLoneProviderStays: a provider with no peers keeps renewing its own
// record, so it stays listed (lattice dev with one node).
func TestLoneProviderStays(t *testing.T) {
	c := nettest.Start(t, nettest.Options{Nodes: 1, Providers: map[int]market.Resources{0: {VCPUs: 1, MemoryMB: 1024, DiskGB: 10}}})
	time.Sleep(7 * time.Second) // past five announce intervals of a second
	ps, err := c.Nodes[0].Market.Providers()
	if err != nil || len(ps) != 1 {
		t.Fatalf("the lone provider: %+v, %v", ps, err)
	}
}
