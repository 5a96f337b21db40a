package cli

import (
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/wallet"
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

// TestLeaseCommands: lattice lease create, list, show and settle, and
// lattice timekeeper status, against a real three-node network whose
// nodes keep time and whose last node provides.
func TestLeaseCommands(t *testing.T) {
	cleanEnv(t)
	capacity := market.Resources{VCPUs: 2, MemoryMB: 2048, DiskGB: 20}
	c := nettest.Start(t, nettest.Options{Nodes: 3, Timekeepers: 3, Providers: map[int]market.Resources{2: capacity}})
	c.SetCommittee()
	c.Open(*c.Nodes[2].ProviderKey, 1_000_000_000)
	consumer := wallet.NewKey()
	c.Open(consumer, 1_000_000_000)
	keyFile := filepath.Join(t.TempDir(), "consumer.json")
	if err := wallet.SaveKey(keyFile, consumer); err != nil {
		t.Fatal(err)
	}
	url := c.Nodes[0].API.URL
	prov := c.Nodes[2].ProviderKey.Address().String()
	waitMarket(c)

	out := mustRun(t, "timekeeper", "status", "--node", url).stdout
	if !strings.Contains(out, "3 keys, threshold 3") || !strings.Contains(out, "this node keeps time as") {
		t.Fatalf("timekeeper status:\n%s", out)
	}

	var l nodewire.Lease
	decode(t, mustRun(t, "lease", "create", "--vcpus", "1", "--memory", "512", "--disk", "5", "--duration", "1h",
		"--key", keyFile, "--node", url, "--json"), &l)
	if l.Status != "active" || l.Provider.String() != prov || !l.Confirmed || l.Cost.Units() != "2.2212" {
		t.Fatalf("lease create: %+v", l)
	}
	out = mustRun(t, "lease", "list", "--key", keyFile, "--node", url).stdout
	if !strings.Contains(out, l.LeaseHash.String()) || !strings.Contains(out, "active") || !strings.Contains(out, "2.2212 native") {
		t.Fatalf("lease list:\n%s", out)
	}
	out = mustRun(t, "lease", "list", "--provider", prov, "--node", c.Nodes[1].API.URL).stdout
	if !strings.Contains(out, l.LeaseHash.String()) {
		t.Fatalf("lease list --provider at another node:\n%s", out)
	}
	out = mustRun(t, "lease", "show", l.LeaseHash.String(), "--node", c.Nodes[2].API.URL).stdout
	if !strings.Contains(out, "2.2212 native (escrowed)") || !strings.Contains(out, "(attested)") {
		t.Fatalf("lease show:\n%s", out)
	}
	// The consumer's chain shows what the lease took.
	if out = mustRun(t, "chain", consumer.Address().String(), "--node", url).stdout; !regexp.MustCompile(`(?m)^\d+\s+lease\s+-2\.2212\s`).MatchString(out) {
		t.Fatalf("chain of the consumer: the lease row lacks its cost:\n%s", out)
	}
	// It runs for an hour: nothing to settle yet, until a time people read.
	wantFail(t, run(t, "lease", "settle", l.LeaseHash.String(), "--node", url), 1, "runs until "+time.UnixMilli(l.EndsAt).UTC().Format("2006-01-02T15:04:05.000Z"))
	// The provider has 1 vCPU left: a lease of 2 is refused, naming what is free.
	wantFail(t, run(t, "lease", "create", "--vcpus", "2", "--memory", "512", "--disk", "5", "--duration", "1h",
		"--key", keyFile, "--node", url), 1, "no provider offered", "insufficient capacity")
	wantFail(t, run(t, "lease", "show", strings.Repeat("ab", 32), "--node", url), 1, "lease not found")
	wantFail(t, run(t, "lease", "show", "--node", url), 2, "LEASE")
	wantFail(t, run(t, "lease", "show", l.LeaseHash.String(), "extra", "--node", url), 2, "extra")
	wantFail(t, run(t, "lease", "list", "--all", "--provider", prov, "--node", url), 2, "at most one")
	wantFail(t, run(t, "lease", "create", "--provider", strings.Repeat("cd", 32), "--duration", "1h", "--key", keyFile, "--node", url), 1,
		"made no offer", "it did not answer; it is not a provider this node knows")
	wantFail(t, run(t, "lease", "offers", "--memory", "100", "--duration", "1h", "--node", url), 2,
		"invalid resource request: memory_mb 100: want 512")
	// A forgotten --duration buys nothing (it once bought an hour).
	leases := func() int {
		var ls []json.RawMessage
		decode(t, mustRun(t, "lease", "list", "--key", keyFile, "--node", url, "--json"), &ls)
		return len(ls)
	}
	before := leases()
	wantFail(t, run(t, "lease", "create", "--key", keyFile, "--node", url), 2, "--duration is required")
	if after := leases(); after != before {
		t.Fatalf("lease create without --duration: %d leases, then %d", before, after)
	}
	wantFail(t, run(t, "lease", "settel"), 2, "settle")

	// Its consumer ends it early: refused to anyone else, and once done.
	other := filepath.Join(t.TempDir(), "other.json")
	if err := wallet.SaveKey(other, wallet.NewKey()); err != nil {
		t.Fatal(err)
	}
	wantFail(t, run(t, "lease", "end", l.LeaseHash.String(), "--key", other, "--node", url), 1, "only its consumer can end it early")
	wantFail(t, run(t, "lease", "end", "--key", keyFile, "--node", url), 2, "LEASE")
	out = mustRun(t, "lease", "end", l.LeaseHash.String(), "--key", keyFile, "--node", url).stdout
	if !strings.Contains(out, "ended early at") || !strings.Contains(out, "pending for you: `lattice receive`") {
		t.Fatalf("lease end:\n%s", out)
	}
	out = mustRun(t, "lease", "show", l.LeaseHash.String(), "--node", c.Nodes[1].API.URL).stdout
	if !strings.Contains(out, "ended early:") || !strings.Contains(out, "its consumer's, to end it early") || !strings.Contains(out, "ended early, its term was to") {
		t.Fatalf("lease show after lease end:\n%s", out)
	}
	wantFail(t, run(t, "lease", "end", l.LeaseHash.String(), "--key", keyFile, "--node", url), 1, "is ended already")

	// A send to the ended lease's account comes back: bounced by the
	// provider's node, or by lease settle if it is first.
	account := ledger.LeaseAccount(l.LeaseHash)
	mustRun(t, "send", "--to", account.String(), "--amount", "0.000005", "--key", keyFile, "--node", url)
	if r := run(t, "lease", "settle", l.LeaseHash.String(), "--node", url); r.code == 0 {
		if !strings.Contains(r.stdout, "bounced, 0.000005 native pending for its sender") {
			t.Fatalf("lease settle of an ended lease with a send pending:\n%s", r.stdout)
		}
	} else if !strings.Contains(r.stderr, "is ended") {
		t.Fatalf("lease settle: exit %d, %s", r.code, r.stderr)
	}
	c.WaitFor("the send to the lease account bounced", 20*time.Second, func(i int) bool {
		found := false
		c.Nodes[i].N.Store.PendingTo(consumer.Address(), func(p ledger.Pending) error {
			found = found || p.Source == account && p.Amount == ledger.NewAmount(5)
			return nil
		})
		return found
	})
}

// waitMarket waits until every node of c knows its one provider and has
// heard of every timekeeper, so that a lease can be made and accepted.
func waitMarket(c *nettest.Cluster) {
	c.WaitFor("every node knows the provider and the timekeepers", 30*time.Second, func(i int) bool {
		ps, _ := c.Nodes[i].Market.Providers()
		tk, err := c.Nodes[i].Leases.Timekeepers(c.Nodes[i].Gov.Tip().Index)
		heard := err == nil
		for _, k := range tk.Timekeepers {
			heard = heard && k.Heard
		}
		return len(ps) == 1 && heard
	})
}

// TestPrintLeaseSaysWhatNext: an open lease says what becomes of it when
// no provider accepts it, which the ledger cannot show (a provider that
// declines, or is offline, writes nothing), and an accepted one that did
// not start in time says it is refunded now; other statuses say nothing.
func TestPrintLeaseSaysWhatNext(t *testing.T) {
	future := time.Now().Add(time.Hour).UnixMilli()
	for _, tt := range []struct {
		status   string
		deadline int64
		want     string // "" for none
	}{
		{"open", future, "if not accepted by then (its provider offline, full or declining it): `lattice lease settle "},
		{"open", 60_001, "not accepted in time (its provider offline, full or declining it): `lattice lease settle "},
		{"accepted", 60_001, "not started in time: `lattice lease settle "},
		{"accepted", future, ""},
		{"active", 60_001, ""},
		{"refunded", 60_001, ""},
	} {
		var out strings.Builder
		printLease(&env{stdout: &out, stderr: io.Discard}, nodewire.Lease{Status: tt.status, CreatedAt: 1, AcceptDeadline: tt.deadline})
		got := strings.Join(strings.Fields(out.String()), " ") // table padding aside
		says := strings.Contains(got, "lattice lease settle")
		switch {
		case tt.want == "" && says:
			t.Errorf("%s lease: says how it is refunded, want nothing:\n%s", tt.status, out.String())
		case tt.want != "" && !strings.Contains(got, tt.want):
			t.Errorf("%s lease (deadline %d): want %q in:\n%s", tt.status, tt.deadline, tt.want, out.String())
		case tt.want != "" && !strings.Contains(got, "then `lattice receive`"):
			t.Errorf("%s lease: does not say to receive the refund:\n%s", tt.status, out.String())
		}
	}
}
