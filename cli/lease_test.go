package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/nettest"
)

// TestLeaseOffersAndProviders: lattice lease offers and lattice provider
// status against a real three-node network with one provider.
func TestLeaseOffersAndProviders(t *testing.T) {
	cleanEnv(t)
	capacity := market.Resources{VCPUs: 2, MemoryMB: 2048, DiskGB: 20}
	c := nettest.Start(t, nettest.Options{Nodes: 3, Providers: map[int]market.Resources{2: capacity}})
	c.WaitFor("node 0 knows the provider", 30*time.Second, func(i int) bool { ps, _ := c.Nodes[i].Market.Providers(); return len(ps) == 1 })
	url := c.Nodes[0].API.URL
	prov := c.Nodes[2].ProviderKey.Address().String()

	out := mustRun(t, "provider", "status", "--node", url).stdout
	if !strings.Contains(out, prov) || !strings.Contains(out, "2 vCPU, 2048 MB memory, 20 GB disk") {
		t.Fatalf("provider status:\n%s", out)
	}
	var ps []market.Provider
	decode(t, mustRun(t, "provider", "status", prov, "--node", url, "--json"), &ps)
	if len(ps) != 1 || ps[0].Free != capacity {
		t.Fatalf("provider status --json: %+v", ps)
	}
	wantFail(t, run(t, "provider", "status", strings.Repeat("ab", 32), "--node", url), 1, "no provider this node knows")

	out = mustRun(t, "lease", "offers", "--vcpus", "1", "--memory", "512", "--disk", "5", "--duration", "1h", "--node", url).stdout
	// 3600 s × (100 + 512 + 5) base units = 2.2212 native; stake half.
	if !strings.Contains(out, prov) || !strings.Contains(out, "2.2212 native") || !strings.Contains(out, "1.1106 native") ||
		!strings.Contains(out, "1 of 1 providers offered") {
		t.Fatalf("lease offers:\n%s", out)
	}
	out = mustRun(t, "lease", "offers", "--vcpus", "4", "--memory", "512", "--disk", "5", "--duration", "2d", "--node", url).stdout
	if !strings.Contains(out, "insufficient capacity") || !strings.Contains(out, "0 of 1 providers offered") {
		t.Fatalf("lease offers beyond the capacity:\n%s", out)
	}
	var got market.Offers
	decode(t, mustRun(t, "lease", "offers", "--duration", "90m", "--node", url, "--json"), &got)
	if len(got.Offers) != 1 || got.Offers[0].Request.Duration != 5400 || got.Offers[0].Check(c.Network.Genesis.Hash) != nil {
		t.Fatalf("lease offers --json: %+v", got)
	}
	wantFail(t, run(t, "lease", "offers", "--memory", "100", "--node", url), 2, "memory_mb 100")
	wantFail(t, run(t, "lease", "offers", "--duration", "1.5s", "--node", url), 2, "--duration")
	wantFail(t, run(t, "lease", "offers", "stray", "--node", url), 2, "stray")
}
