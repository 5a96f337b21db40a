package nodeapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/testkit/openapitest"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/pow"
	"github.com/latticenet/lattice/timekeeping"
	"github.com/latticenet/lattice/wallet"
)

// The lease endpoints, on a 3-node cluster whose nodes 0 and 1 keep time
// (the committee: 2 of 2) and whose node 2 provides; every answer goes
// through the OpenAPI checker. The cluster's clock is the real time plus
// an offset the test moves, so that a lease's minute passes at once.

type leaseHarness struct {
	t        *testing.T
	c        *nettest.Cluster
	offset   *atomic.Int64
	h        []*harness // one per node
	consumer wallet.Key
	provider wallet.Key
}

func newLeaseHarness(t *testing.T) *leaseHarness {
	t.Helper()
	offset := new(atomic.Int64)
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	c := nettest.Start(t, nettest.Options{Nodes: 3, Timekeepers: 2, Providers: map[int]market.Resources{2: {VCPUs: 2, MemoryMB: 2048, DiskGB: 20}},
		Now: now, Wrap: func(h http.Handler) http.Handler { return openapitest.Node.Handler(t, h) }})
	c.SetCommittee()
	lh := &leaseHarness{t: t, c: c, offset: offset, consumer: wallet.NewKey(), provider: *c.Nodes[2].ProviderKey}
	c.Open(lh.provider, 1_000_000_000)
	c.Open(lh.consumer, 1_000_000_000)
	for _, nd := range c.Nodes {
		hc := nd.API.Client()
		hc.Timeout = 30 * time.Second
		lh.h = append(lh.h, &harness{t: t, n: nd.N, api: nd.Handler, url: nd.API.URL, hc: hc})
	}
	c.WaitFor("the committee and the provider heard of", 20*time.Second, func(i int) bool {
		var tk nodewire.Timekeepers
		if r := lh.h[i].get("/timekeepers"); r.status != 200 || json.Unmarshal(r.body, &tk) != nil {
			return false
		}
		ps, _ := c.Nodes[i].Market.Providers()
		heard := len(tk.Timekeepers) == 2 && len(ps) == 1
		for _, k := range tk.Timekeepers {
			heard = heard && k.Heard
		}
		return heard
	})
	return lh
}

func (lh *leaseHarness) advance(d time.Duration) { lh.offset.Add(int64(d)) }

func (lh *leaseHarness) now() int64 {
	return time.Now().Add(time.Duration(lh.offset.Load())).UnixMilli()
}

// finish signs b with k (unless k is nil) and does its work.
func (lh *leaseHarness) finish(b *ledger.Block, k *wallet.Key) *ledger.Block {
	lh.t.Helper()
	if k != nil {
		b.Signature = ledger.Signature{}
		b.Seal()
		b.Sign(k.Private())
	}
	nonce, err := pow.Solve(context.Background(), b.Hash, ledger.DevWork.For(b.Type))
	if err != nil {
		lh.t.Fatal(err)
	}
	b.PowNonce = nonce
	return b
}

// lease builds the consumer's lease block for 1 vCPU, 512 MB, 5 GB and 60 s.
func (lh *leaseHarness) lease() *ledger.Block {
	lh.t.Helper()
	return lh.leaseOf(lh.provider.Address())
}

// leaseOf is lease, naming provider.
func (lh *leaseHarness) leaseOf(provider ledger.Address) *ledger.Block {
	lh.t.Helper()
	gov := lh.c.Nodes[0].Gov
	tip := gov.Tip().Index
	terms, err := market.Terms{Network: lh.c.Network.Genesis.Hash, StateAt: gov.StateAt}.LeaseTerms(tip, 1, 512, 5, 60)
	if err != nil {
		lh.t.Fatal(err)
	}
	b, err := wallet.Lease(lh.c.Head(0, lh.consumer.Address()), wallet.LeaseSpec{Provider: provider, VCPUs: 1, MemoryMB: 512,
		DiskGB: 5, Duration: 60, AccessKey: lh.consumer.Address(), Cost: terms.Cost, StateChainIndex: tip}, lh.now())
	if err != nil {
		lh.t.Fatal(err)
	}
	return lh.finish(b, &lh.consumer)
}

// attest signs attestations of p for lease by the committee's keys.
func (lh *leaseHarness) attest(p ledger.Purpose, lease ledger.Hash, ts int64) []ledger.Attestation {
	var out []ledger.Attestation
	for i := range 2 {
		out = append(out, timekeeping.Sign(lh.c.Nodes[i].TimekeeperKey.Private(), lh.c.Network.Genesis.Hash, p, lease, ts))
	}
	slices.SortFunc(out, func(a, b ledger.Attestation) int { return bytes.Compare(a.PublicKey[:], b.PublicKey[:]) }) // Judge's order
	return out
}

// waitStatus waits until node i shows the lease in status, confirmed.
func (lh *leaseHarness) waitStatus(h ledger.Hash, status string) nodewire.Lease {
	lh.t.Helper()
	var l nodewire.Lease
	lh.c.WaitFor("lease "+status, 30*time.Second, func(i int) bool {
		r := lh.h[i].get("/leases/" + h.String())
		return r.status == 200 && json.Unmarshal(r.body, &l) == nil && l.Status == status && l.Confirmed
	})
	return l
}

func TestLeaseEndpoints(t *testing.T) {
	lh := newLeaseHarness(t)
	h0, h1, h2 := lh.h[0], lh.h[1], lh.h[2]

	// POST /blocks/lease: a cost that is not the quote is refused and
	// changes nothing; the lease is taken, and taken again idempotently.
	lease := lh.lease()
	bad := lease.Clone()
	bad.Amount = ledger.NewAmount(1)
	bad.Balance, _ = bad.Balance.Add(lease.Amount)
	bad.Balance, _ = bad.Balance.Sub(bad.Amount)
	before := h0.state()
	checkError(t, h0.post("/blocks/lease", lh.finish(bad, &lh.consumer)), http.StatusBadRequest, "a lease at the wrong cost", "wrong amount", "costs")
	h0.unchanged(before, "a lease at the wrong cost")
	var hr nodewire.BlockHashResponse
	h0.okJSON(h0.post("/blocks/lease", lease), "POST /blocks/lease", &hr)
	h0.okJSON(h0.post("/blocks/lease", lease), "POST /blocks/lease again", &hr)
	if hr.Hash != lease.Hash {
		t.Fatalf("POST /blocks/lease answered %s, want %s", hr.Hash, lease.Hash)
	}

	// The provider's node accepts and starts it by itself.
	l := lh.waitStatus(lease.Hash, "active")
	if l.AcceptHash.IsZero() || len(l.SettleHashes) != 1 || l.EndsAt != l.StartTime+60_000 || l.LeaseAccount != ledger.LeaseAccount(lease.Hash) {
		t.Fatalf("active lease: %+v", l)
	}
	var accept, start nodewire.Block
	h1.getJSON("/blocks/"+l.AcceptHash.String(), &accept)
	h1.getJSON("/blocks/"+l.SettleHashes[0].String(), &start)

	// POST /blocks/lease_accept: the real accept is idempotent; one by
	// another account than the lease's provider is refused.
	h1.okJSON(h1.post("/blocks/lease_accept", accept.Block), "POST /blocks/lease_accept again", nil)
	other := wallet.NewKey()
	lh.c.Open(other, 1_000_000_000)
	rec, _, _ := ledger.GetLease(lh.c.Nodes[0].N.Store, lease.Hash)
	forged, err := wallet.LeaseAccept(lh.c.Head(0, other.Address()), rec, ledger.Hash{1}, lh.attest(ledger.PurposeStart, lease.Hash, lh.now()), lh.now())
	if err != nil {
		t.Fatal(err)
	}
	before = h0.state()
	checkError(t, h0.post("/blocks/lease_accept", lh.finish(forged, &other)), http.StatusBadRequest, "accept of another's lease", "not this lease's block", "names provider")
	h0.unchanged(before, "an accept of another's lease")

	// POST /blocks/lease_settle: the start again is idempotent; an end
	// before the lease's end is refused, whoever signed its attestations.
	h2.okJSON(h2.post("/blocks/lease_settle", start.Block), "POST /blocks/lease_settle again", nil)
	rec, _, _ = ledger.GetLease(lh.c.Nodes[0].N.Store, lease.Hash)
	early, _ := wallet.LeaseEnd(lh.c.Head(0, ledger.LeaseAccount(lease.Hash)), rec, lh.attest(ledger.PurposeEnd, lease.Hash, lh.now()))
	before = h0.state()
	checkError(t, h0.post("/blocks/lease_settle", lh.finish(early, nil)), http.StatusBadRequest, "an early end", "not the lease's time")
	h0.unchanged(before, "an early end")

	// GET /leases and its filters and pages.
	var all, one, byConsumer, byProvider, after []nodewire.Lease
	h0.getJSON("/leases", &all)
	h0.getJSON("/leases?limit=1", &one)
	h1.getJSON("/leases?consumer="+lh.consumer.Address().String(), &byConsumer)
	h2.getJSON("/leases?provider="+lh.provider.Address().String()+"&limit=500", &byProvider)
	h0.getJSON("/leases?after="+lease.Hash.String(), &after)
	if len(all) != 1 || len(one) != 1 || len(byConsumer) != 1 || len(byProvider) != 1 || len(after) != 0 || all[0].LeaseHash != lease.Hash {
		t.Fatalf("lists: all %d, limit 1 %d, consumer %d, provider %d, after %d", len(all), len(one), len(byConsumer), len(byProvider), len(after))
	}
	for _, q := range []struct{ query, msg string }{
		{"?limit=0", "limit"}, {"?limit=501", "limit"}, {"?limit=x", "limit"}, {"?consumer=zz", "consumer"}, {"?after=zz", "after"},
		{"?consumer=" + lh.consumer.Address().String() + "&provider=" + lh.provider.Address().String(), "not both"}, {"?status=active", "unknown query parameter"},
	} {
		checkError(t, h0.get("/leases"+q.query), http.StatusBadRequest, "GET /leases"+q.query, q.msg)
	}
	checkError(t, h0.get("/leases/"+strings.Repeat("ab", 32)), http.StatusNotFound, "an unknown lease", "lease not found")
	checkError(t, h0.get("/leases/abc"), http.StatusBadRequest, "a malformed lease hash", "invalid lease hash")

	// POST /attestation/request: the start a timekeeper signed, again; an
	// end before its time; a node that keeps no time.
	var a ledger.Attestation
	h0.okJSON(h0.post("/attestation/request", map[string]string{"lease_hash": lease.Hash.String(), "purpose": "start"}), "attestation of the start", &a)
	if a.PublicKey != lh.c.Nodes[0].TimekeeperKey.Address() || !timekeeping.Verify(a, lh.c.Network.Genesis.Hash, ledger.PurposeStart, lease.Hash) {
		t.Fatalf("attestation %+v", a)
	}
	checkError(t, h0.post("/attestation/request", map[string]string{"lease_hash": lease.Hash.String(), "purpose": "end"}), http.StatusConflict, "an end before its time", "runs until")
	checkError(t, h0.post("/attestation/request", map[string]string{"lease_hash": lease.Hash.String(), "purpose": "soon"}), http.StatusBadRequest, "an unknown purpose", "purpose")
	checkError(t, h0.post("/attestation/request", `{}`), http.StatusBadRequest, "no lease", "lease_hash is required")
	checkError(t, h2.post("/attestation/request", map[string]string{"lease_hash": lease.Hash.String()}), http.StatusNotFound, "a node that keeps no time", "not a timekeeper")
	checkError(t, h0.post("/attestation/request", map[string]string{"lease_hash": strings.Repeat("cd", 32)}), http.StatusNotFound, "an unknown lease", "lease not found")

	// GET /timekeepers.
	var tk nodewire.Timekeepers
	h0.getJSON("/timekeepers", &tk)
	if tk.Threshold != 2 || tk.ThisNode != lh.c.Nodes[0].TimekeeperKey.Address() || tk.Signed < 1 {
		t.Fatalf("timekeepers: %+v", tk)
	}

	// POST /leases/{hash}/settle: nothing due while it runs; its end once
	// its time is up (unless the provider's node was quicker).
	checkError(t, h1.post("/leases/"+lease.Hash.String()+"/settle", ""), http.StatusConflict, "settle while it runs", "runs until")
	checkError(t, h1.post("/leases/"+strings.Repeat("ab", 32)+"/settle", ""), http.StatusNotFound, "settle an unknown lease", "lease not found")
	checkError(t, h1.post("/leases/zz/settle", ""), http.StatusBadRequest, "settle a malformed hash", "invalid lease hash")
	lh.advance(61 * time.Second)
	if r := h1.post("/leases/"+lease.Hash.String()+"/settle", ""); r.status == 200 {
		var sr nodewire.SettleResponse
		h1.okJSON(r, "settle once its time is up", &sr)
		if sr.Kind != "end" || sr.Block.Amount.IsZero() {
			t.Fatalf("settle: %+v", sr)
		}
	} else {
		checkError(t, r, http.StatusConflict, "settle once its time is up, after the provider", "ended")
	}
	lh.waitStatus(lease.Hash, "ended")

	// GET /timekeepers/evidence: a timekeeper that signs a second, other
	// start for a lease is caught when a block carries it.
	var ev []nodewire.Evidence
	h0.getJSON("/timekeepers/evidence", &ev)
	if len(ev) != 0 {
		t.Fatalf("evidence before any misbehaviour: %+v", ev)
	}
	lease2 := lh.lease()
	h0.okJSON(h0.post("/blocks/lease", lease2), "a second lease", nil)
	l2 := lh.waitStatus(lease2.Hash, "active")
	var acc2 nodewire.Block
	h0.getJSON("/blocks/"+l2.AcceptHash.String(), &acc2)
	twin := acc2.Block.Clone()
	twin.Attestations = lh.attest(ledger.PurposeStart, lease2.Hash, twin.Attestations[0].Timestamp+1000) // other times: other signatures
	checkError(t, h0.post("/blocks/lease_accept", lh.finish(twin, &lh.provider)), http.StatusBadRequest, "a second accept", "fork")
	// Every node keeps the evidence it sees; node 0 saw both blocks.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if h0.getJSON("/timekeepers/evidence", &ev); len(ev) == 2 {
			break
		}
	}
	if len(ev) != 2 || ev[0].Purpose != "start" || ev[0].Lease != lease2.Hash {
		t.Fatalf("evidence: %+v", ev)
	}
	lh.c.Audit()
}

// TestLeaseStaleIndex: over HTTP a lease may name an index superseded at
// most a minute ago, or one whose terms for it are still the tip's; a
// lease at an index whose prices changed more than a minute ago is
// refused as stale, and changes nothing.
func TestLeaseStaleIndex(t *testing.T) {
	lh := newLeaseHarness(t)
	h0 := lh.h[0]
	// Leases to a provider no node runs: nothing happens after them that
	// could change the ledger under the test.
	nobody := wallet.NewKey().Address()
	at := func(i uint64) *ledger.Block {
		gov := lh.c.Nodes[0].Gov
		terms, err := market.Terms{Network: lh.c.Network.Genesis.Hash, StateAt: gov.StateAt}.LeaseTerms(i, 1, 512, 5, 60)
		if err != nil {
			t.Fatal(err)
		}
		b, err := wallet.Lease(lh.c.Head(0, lh.consumer.Address()), wallet.LeaseSpec{Provider: nobody, VCPUs: 1, MemoryMB: 512,
			DiskGB: 5, Duration: 60, AccessKey: lh.consumer.Address(), Cost: terms.Cost, StateChainIndex: i}, lh.now())
		if err != nil {
			t.Fatal(err)
		}
		return lh.finish(b, &lh.consumer)
	}
	old := lh.c.Nodes[0].Gov.Tip().Index
	// A change that leaves the lease's terms alone: the old index stands.
	lh.c.Govern("x.note", `"hello"`)
	lh.advance(2 * time.Minute)
	h0.okJSON(h0.post("/blocks/lease", at(old)), "a lease at an index whose terms did not change", nil)
	// A price change, more than a minute ago: the old index is stale.
	priced := lh.c.Nodes[0].Gov.Tip().Index
	lh.c.Govern("lease.prices", `{"vcpu":"300","memory_mb":"1","disk_gb":"1"}`)
	b := at(priced)
	h0.okJSON(h0.post("/blocks/lease", b), "a lease at the index just superseded", nil)
	lh.c.WaitConfirmed(b.Hash, 20*time.Second)
	lh.advance(2 * time.Minute)
	before := h0.state()
	checkError(t, h0.post("/blocks/lease", at(priced)), http.StatusBadRequest, "a lease at a stale index", "is stale", "quote at the tip")
	h0.unchanged(before, "a lease at a stale index")
	// Resubmitting a lease already in the ledger stays idempotent.
	h0.okJSON(h0.post("/blocks/lease", b), "a resubmission", nil)
}

// TestLeaseEndedEarlyEndpoints: a lease ended early at its consumer's
// notice, through the endpoints and the OpenAPI checker: no ending is
// signed before the notice; a send of another account's is no notice;
// the settle endpoint makes the early end, then the remainder (unless the
// provider's node was quicker); the lease shows its notice and refund.
func TestLeaseEndedEarlyEndpoints(t *testing.T) {
	lh := newLeaseHarness(t)
	h0, h1 := lh.h[0], lh.h[1]
	lease := lh.lease()
	h0.okJSON(h0.post("/blocks/lease", lease), "POST /blocks/lease", nil)
	lh.waitStatus(lease.Hash, "active")
	ending := map[string]string{"lease_hash": lease.Hash.String(), "purpose": "ending"}
	checkError(t, h0.post("/attestation/request", ending), http.StatusConflict, "an ending before any notice", "no notice")

	// Another account's send to the lease account is no notice: an early
	// end naming it is refused, and the lease runs on.
	other := wallet.NewKey()
	lh.c.Open(other, 1_000_000)
	stray := lh.finish(h0.must(wallet.Send(lh.c.Head(0, other.Address()), ledger.LeaseAccount(lease.Hash), ledger.NewAmount(1), ledger.Native, lh.now())), &other)
	h0.okJSON(h0.post("/blocks/send", stray), "another account's send to the lease account", nil)
	lh.c.WaitConfirmed(stray.Hash, 10*time.Second)
	rec, _, _ := ledger.GetLease(lh.c.Nodes[0].N.Store, lease.Hash)
	bogus, err := wallet.LeaseEarlyEnd(lh.c.Head(0, ledger.LeaseAccount(lease.Hash)), rec, stray.Hash, lh.attest(ledger.PurposeEnding, stray.Hash, lh.now()))
	if err != nil {
		t.Fatal(err)
	}
	before := h0.state()
	checkError(t, h0.post("/blocks/lease_settle", lh.finish(bogus, nil)), http.StatusBadRequest, "an early end at a stray send", "not this lease's block", "no notice")
	h0.unchanged(before, "an early end at a stray send")
	checkError(t, h1.post("/leases/"+lease.Hash.String()+"/settle", ""), http.StatusConflict, "settle with no notice", "runs until")

	// The consumer's notice.
	lh.advance(20 * time.Second)
	notice := lh.finish(h0.must(wallet.Send(lh.c.Head(0, lh.consumer.Address()), ledger.LeaseAccount(lease.Hash), ledger.NewAmount(1), ledger.Native, lh.now())), &lh.consumer)
	h0.okJSON(h0.post("/blocks/send", notice), "the consumer's notice", nil)
	// The provider's node hears the notice too and makes the early end
	// itself as soon as it can; on a slow machine it can come first, and
	// then the ending is refused because the lease has ended, by this
	// notice (what a consumer's client racing its provider sees).
	if r := h0.post("/attestation/request", ending); r.status == http.StatusOK {
		var a ledger.Attestation
		h0.okJSON(r, "an ending once the notice is in", &a)
		if !timekeeping.Verify(a, lh.c.Network.Genesis.Hash, ledger.PurposeEnding, notice.Hash) {
			t.Fatalf("ending attestation %+v", a)
		}
	} else {
		checkError(t, r, http.StatusConflict, "an ending once the notice is in, the provider first", "is ended")
		if rec, found, err := ledger.GetLease(lh.c.Nodes[0].N.Store, lease.Hash); err != nil || !found || rec.Notice != notice.Hash {
			t.Fatalf("the lease ended before its ending attestation, but not by the notice: %+v, %v", rec, err)
		}
	}
	lh.c.WaitFor("the notice everywhere", 10*time.Second, func(i int) bool {
		_, found, _ := lh.c.Nodes[i].N.Store.Entry(notice.Hash)
		return found
	})
	// What is due comes in this order, the provider's node making some
	// of it first: the early end, the remainder, then the bounce of the
	// other account's send.
	kinds := []string{"early end", "remainder", "bounce"}
	for next := 0; next < len(kinds); next++ {
		r := h1.post("/leases/"+lease.Hash.String()+"/settle", "")
		if r.status != http.StatusOK {
			checkError(t, r, http.StatusConflict, "settle after the notice, after the provider", "")
			continue
		}
		var sr nodewire.SettleResponse
		h1.okJSON(r, "settle after the notice", &sr)
		i := slices.Index(kinds[next:], sr.Kind)
		if i < 0 || sr.Kind == "bounce" && sr.Block.Source != stray.Hash {
			t.Fatalf("settle after the notice: %+v, want one of %q", sr, kinds[next:])
		}
		next += i
	}
	lh.c.WaitFor("the other account's send bounced", 30*time.Second, func(i int) bool {
		found := false
		lh.c.Nodes[i].N.Store.PendingTo(other.Address(), func(p ledger.Pending) error {
			found = found || p.Source == ledger.LeaseAccount(lease.Hash) && p.Amount == stray.Amount
			return nil
		})
		return found
	})
	var l nodewire.Lease
	lh.c.WaitFor("the lease ended early, remainder in", 30*time.Second, func(i int) bool {
		r := lh.h[i].get("/leases/" + lease.Hash.String())
		return r.status == 200 && json.Unmarshal(r.body, &l) == nil && l.Status == "ended" && len(l.SettleHashes) == 3 && l.Confirmed
	})
	if l.NoticeHash != notice.Hash || l.Refund.IsZero() || !l.Settled {
		t.Fatalf("lease ended early: %+v", l)
	}
	lh.c.Audit()
}
