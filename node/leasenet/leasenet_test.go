package leasenet_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/leasenet"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/timekeeping"
	"github.com/latticenet/lattice/wallet"
)

// clock is the cluster's clock: the real time plus an offset a test moves
// forward, so that a lease's minute passes in an instant.
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *clock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// leaseNet is a 3-node cluster where every node keeps time and node 2
// provides 4 vCPUs, 8192 MB and 100 GB.
type leaseNet struct {
	*nettest.Cluster
	t        *testing.T
	clock    *clock
	consumer wallet.Key
	provider wallet.Key
	clients  []*nodeclient.Client
}

var capacity = market.Resources{VCPUs: 4, MemoryMB: 8192, DiskGB: 100}

func newLeaseNet(t *testing.T) *leaseNet {
	t.Helper()
	clk := &clock{}
	c := nettest.Start(t, nettest.Options{Nodes: 3, Timekeepers: 3, Providers: map[int]market.Resources{2: capacity}, Now: clk.now})
	n := &leaseNet{Cluster: c, t: t, clock: clk, consumer: wallet.NewKey(), provider: *c.Nodes[2].ProviderKey}
	c.SetCommittee()
	c.Open(n.provider, 1_000_000_000)
	c.Open(n.consumer, 1_000_000_000)
	for _, nd := range c.Nodes {
		n.clients = append(n.clients, nodeclient.New(nd.API.URL, nd.API.Client()))
	}
	// Every node hears of every timekeeper before a lease needs them.
	c.WaitCommitteeHeard(3, 20*time.Second)
	return n
}

// lease builds the consumer's lease block for req at node 0's state-chain
// tip, with its work done.
func (n *leaseNet) lease(req market.Request) *ledger.Block {
	n.t.Helper()
	return n.Lease(n.consumer, n.provider.Address(), n.consumer.Address(), req)
}

func (n *leaseNet) finish(b *ledger.Block, k wallet.Key) *ledger.Block {
	n.t.Helper()
	return n.Finish(b, k)
}

// waitLease waits until every node shows the lease in status, confirmed.
func (n *leaseNet) waitLease(h ledger.Hash, status string, timeout time.Duration) []nodewire.Lease {
	n.t.Helper()
	got := make([]nodewire.Lease, len(n.clients))
	n.WaitFor("lease "+status+" and confirmed", timeout, func(i int) bool {
		l, err := n.clients[i].Lease(context.Background(), h)
		got[i] = l
		return err == nil && l.Status == status && l.Confirmed
	})
	return got
}

func (n *leaseNet) balance(i int, a ledger.Address) ledger.Amount {
	acct, _, err := n.Nodes[i].N.Store.Account(a)
	if err != nil {
		n.t.Fatal(err)
	}
	return acct.Balance(ledger.Native)
}

// TestLeaseLifeCycle makes a lease on a 3-node network and follows it to
// its end: the provider's node accepts it with the committee's start
// attestations and starts it, every node shows it active; when its minute
// is up the provider ends it and takes its payout in; balances move as
// docs/protocol.md says, and the ledgers agree and pass the audit.
func TestLeaseLifeCycle(t *testing.T) {
	n := newLeaseNet(t)
	ctx := context.Background()
	c0, p0 := n.balance(0, n.consumer.Address()), n.balance(0, n.provider.Address())
	req := market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60}
	lease := n.lease(req)
	if _, err := n.clients[0].Submit(ctx, lease); err != nil {
		t.Fatalf("POST /blocks/lease: %v", err)
	}
	active := n.waitLease(lease.Hash, "active", 30*time.Second)
	l := active[1]
	if len(l.SettleHashes) != 1 || l.AcceptHash.IsZero() || l.StartTime == 0 || l.Settled {
		t.Fatalf("active lease: %+v", l)
	}
	accept, err := n.clients[1].Block(ctx, l.AcceptHash)
	if err != nil {
		t.Fatal(err)
	}
	if len(accept.Attestations) != 3 {
		t.Errorf("the accept carries %d attestations, want the committee's 3", len(accept.Attestations))
	}
	// Every node lists it, for the consumer and for the provider, and the
	// provider's free capacity counts it.
	for i, cl := range n.clients {
		byConsumer, err := cl.Leases(ctx, nodeclient.LeaseFilter{Consumer: ptr(n.consumer.Address())})
		if err != nil || len(byConsumer) != 1 || byConsumer[0].LeaseHash != lease.Hash {
			t.Errorf("node %d: leases of the consumer %+v, %v", i, byConsumer, err)
		}
	}
	n.WaitFor("the provider's free capacity counts the lease", 10*time.Second, func(i int) bool {
		ps, err := n.Nodes[i].Market.Providers()
		return err == nil && len(ps) == 1 && ps[0].ActiveLeases == 1 && ps[0].Free == capacity.Sub(req.Resources())
	})
	cost, stake := l.Cost, l.Stake
	if got, want := n.balance(1, n.consumer.Address()), sub(t, c0, cost); got != want {
		t.Errorf("consumer balance while the lease runs %s, want %s", got, want)
	}
	if got, want := n.balance(1, n.provider.Address()), sub(t, p0, stake); got != want {
		t.Errorf("provider balance while the lease runs %s, want %s (stake locked)", got, want)
	}

	// Its minute passes: the provider ends it and takes cost and stake in.
	n.clock.advance(61 * time.Second)
	ended := n.waitLease(lease.Hash, "ended", 30*time.Second)
	if !ended[0].Settled || len(ended[0].SettleHashes) != 2 || ended[0].EndTime < ended[0].EndsAt {
		t.Fatalf("ended lease: %+v", ended[0])
	}
	want := add(t, p0, cost)
	n.WaitFor("the provider took its payout in", 20*time.Second, func(i int) bool {
		return n.balance(i, n.provider.Address()) == want
	})
	if got, want := n.balance(2, n.consumer.Address()), sub(t, c0, cost); got != want {
		t.Errorf("consumer balance after the lease %s, want %s", got, want)
	}
	n.WaitFor("the capacity is free again", 10*time.Second, func(i int) bool {
		ps, err := n.Nodes[i].Market.Providers()
		return err == nil && len(ps) == 1 && ps[0].ActiveLeases == 0 && ps[0].Free == capacity
	})
	n.Audit()
}

// TestLeaseRefund: a lease its provider has no room for is never
// accepted; past the acceptance timeout any node settles it as a refund,
// and the consumer takes the cost back. One that nobody settles is
// refunded by its provider's node once the consumer's grace is over.
func TestLeaseRefund(t *testing.T) {
	n := newLeaseNet(t)
	ctx := context.Background()
	n.Govern("lease.accept_timeout_ms", "60000")
	c0 := n.balance(0, n.consumer.Address())
	lease := n.lease(market.Request{VCPUs: 8, MemoryMB: 512, DiskGB: 5, Duration: 60}) // more vCPUs than the provider has
	// A node that knows the provider's capacity refuses it over HTTP...
	before := n.balance(0, n.consumer.Address())
	if _, err := n.clients[0].Submit(ctx, lease); !isStatus(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "free") {
		t.Fatalf("POST /blocks/lease beyond the provider's capacity: %v, want 400", err)
	}
	if got := n.balance(0, n.consumer.Address()); got != before {
		t.Fatalf("a refused lease moved the balance")
	}
	// ...but it is a valid block, which may come by the network; its
	// provider never accepts it.
	n.Submit(0, lease)
	n.waitLease(lease.Hash, "open", 20*time.Second)
	// Before the deadline there is nothing to settle.
	if _, err := n.clients[1].SettleLease(ctx, lease.Hash); !isStatus(err, http.StatusConflict) {
		t.Fatalf("settle before the deadline: %v, want 409", err)
	}
	n.clock.advance(61 * time.Second)
	// Anyone may ask, so one proof-of-work search of Settle's runs at a
	// time: another is 503, retried later, and changes nothing.
	release := n.Nodes[1].Leases.HoldWork()
	_, err := n.clients[1].SettleLease(ctx, lease.Hash)
	release()
	if !isStatus(err, http.StatusServiceUnavailable) || !strings.Contains(err.Error(), "retry") {
		t.Fatalf("settle during another settle's proof of work: %v, want 503 saying to retry", err)
	}
	if got, err := n.clients[1].Lease(ctx, lease.Hash); err != nil || got.Status != "open" {
		t.Fatalf("after the busy refusal the lease is %s (%v), want open", got.Status, err)
	}
	// And one lease's block is made once at a time: a request while it is
	// being made waits for it, then does what is then due.
	release = n.Nodes[1].Leases.HoldSettling(lease.Hash)
	type answer struct {
		res nodewire.SettleResponse
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := n.clients[1].SettleLease(ctx, lease.Hash)
		answered <- answer{res, err}
	}()
	select {
	case a := <-answered:
		t.Fatalf("a settle answered while the lease's block was being made: %v", a.err)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	a := <-answered
	res, err := a.res, a.err
	if err != nil {
		t.Fatalf("settle past the deadline, once the block in the making was given up: %v", err)
	}
	if res.Kind != "refund" || res.Block.Amount != lease.Amount || len(res.Block.Attestations) != 3 {
		t.Fatalf("settle answered %+v", res)
	}
	n.waitLease(lease.Hash, "refunded", 20*time.Second)
	p, found, err := n.Nodes[0].N.Store.Pending(n.consumer.Address(), res.Hash)
	if err != nil || !found {
		t.Fatalf("the refund is not pending for the consumer: %v", err)
	}
	recv, err := wallet.Receive(n.Head(0, n.consumer.Address()), p, n.clock.now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.clients[0].Submit(ctx, n.finish(recv, n.consumer)); err != nil {
		t.Fatal(err)
	}
	n.WaitConfirmed(recv.Hash, 20*time.Second)
	if got := n.balance(2, n.consumer.Address()); got != c0 {
		t.Errorf("consumer balance after the refund %s, want %s", got, c0)
	}
	if _, err := n.clients[1].SettleLease(ctx, lease.Hash); !isStatus(err, http.StatusConflict) {
		t.Fatalf("settling a refunded lease again: %v, want 409", err)
	}

	// Nobody asks for the next one's refund: its provider, which never
	// accepted it, makes it once the consumer's grace has passed.
	unasked := n.lease(market.Request{VCPUs: 8, MemoryMB: 512, DiskGB: 5, Duration: 60})
	n.Submit(0, unasked)
	n.waitLease(unasked.Hash, "open", 20*time.Second)
	n.clock.advance(61 * time.Second)
	time.Sleep(2 * time.Second) // the provider looks every second
	if got, err := n.clients[0].Lease(ctx, unasked.Hash); err != nil || got.Status != "open" {
		t.Fatalf("within the consumer's grace past the deadline the lease is %s (%v), want open", got.Status, err)
	}
	n.clock.advance(leasenet.DefaultRefundGrace)
	n.waitLease(unasked.Hash, "refunded", 20*time.Second)
	refunded, err := n.clients[0].Lease(ctx, unasked.Hash)
	if err != nil || len(refunded.SettleHashes) != 1 {
		t.Fatalf("the provider's refund: %+v, %v", refunded, err)
	}
	if _, found, err := n.Nodes[1].N.Store.Pending(n.consumer.Address(), refunded.SettleHashes[0]); err != nil || !found {
		t.Fatalf("the provider's refund is not pending for the consumer: %v", err)
	}
	n.Audit()
}

// TestAttestationRequests: a timekeeper signs a lease's start once and
// answers the same attestation when asked again, also after a restart,
// until half the committee's precision window has passed: then it signs
// anew and keeps that one. A lease it does not know is 404, a purpose not
// due 409, and a node that keeps no time 404. The evidence keeper takes
// the renewal for what it is, and two starts within half a window for
// evidence.
func TestAttestationRequests(t *testing.T) {
	clk := &clock{}
	c := nettest.Start(t, nettest.Options{Nodes: 2, Timekeepers: 1, Now: clk.now})
	// A window of a minute: a restart fits well inside half of it.
	committee, _ := json.Marshal(statechain.Timekeepers{Keys: []ledger.Address{c.Nodes[0].TimekeeperKey.Address()}, PrecisionMS: 60_000})
	c.Govern("timekeepers", string(committee))
	consumer := wallet.NewKey()
	c.Open(consumer, 1_000_000_000)
	n := &leaseNet{Cluster: c, t: t, clock: clk, consumer: consumer, provider: wallet.NewKey()}
	tk := nodeclient.New(c.Nodes[0].API.URL, c.Nodes[0].API.Client())
	other := nodeclient.New(c.Nodes[1].API.URL, c.Nodes[1].API.Client())
	ctx := context.Background()
	lease := n.lease(market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60})
	if _, err := tk.RequestAttestation(ctx, lease.Hash, ""); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("unknown lease: %v, want 404", err)
	}
	c.Submit(0, lease)
	a, err := tk.RequestAttestation(ctx, lease.Hash, "")
	if err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	again, err := tk.RequestAttestation(ctx, lease.Hash, "start")
	if err != nil || again != a {
		t.Fatalf("asked again: %+v, %v; want the same attestation %+v", again, err, a)
	}
	if _, err := tk.RequestAttestation(ctx, lease.Hash, "end"); !isStatus(err, http.StatusConflict) {
		t.Fatalf("end of an open lease: %v, want 409", err)
	}
	if _, err := tk.RequestAttestation(ctx, lease.Hash, "expire"); !isStatus(err, http.StatusConflict) {
		t.Fatalf("expiry before the deadline: %v, want 409", err)
	}
	if _, err := tk.RequestAttestation(ctx, lease.Hash, "later"); !isStatus(err, http.StatusBadRequest) {
		t.Fatalf("unknown purpose: %v, want 400", err)
	}
	if _, err := other.RequestAttestation(ctx, lease.Hash, ""); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("a node that keeps no time: %v, want 404", err)
	}
	// The timekeeper restarts: what it signed stays signed.
	c.Stop(0)
	c.Restart(0)
	tk = nodeclient.New(c.Nodes[0].API.URL, c.Nodes[0].API.Client())
	clk.advance(time.Second)
	if after, err := tk.RequestAttestation(ctx, lease.Hash, "start"); err != nil || after != a {
		t.Fatalf("after a restart: %+v, %v; want %+v", after, err, a)
	}
	// Past half the window, a new start, kept in turn.
	clk.advance(30 * time.Second)
	renewed, err := tk.RequestAttestation(ctx, lease.Hash, "start")
	if err != nil || renewed == a || renewed.Timestamp-a.Timestamp <= 30_000 {
		t.Fatalf("past half the window: %+v, %v; want a new start more than 30000 ms after %d", renewed, err, a.Timestamp)
	}
	clk.advance(time.Second)
	if again, err := tk.RequestAttestation(ctx, lease.Hash, ""); err != nil || again != renewed {
		t.Fatalf("asked again: %+v, %v; want %+v", again, err, renewed)
	}

	// Evidence, as blocks carrying the starts would give it: the renewal
	// is none, a third start within half a window of the first is.
	leases := c.Nodes[0].Leases
	accept := func(atts ...ledger.Attestation) *ledger.Block {
		return &ledger.Block{Type: ledger.TypeLeaseAccept, Source: lease.Hash, Attestations: atts}
	}
	leases.Observe(accept(a))
	leases.Observe(accept(renewed))
	if ev, err := leases.Evidence(); err != nil || len(ev) != 0 {
		t.Fatalf("a renewed start taken for evidence: %+v, %v", ev, err)
	}
	// A start a second after the renewal is evidence too, though it is
	// far from the first start: every start seen is compared.
	nearRenewal := timekeeping.Sign(c.Nodes[0].TimekeeperKey.Private(), c.Network.Genesis.Hash, timekeeping.Start, lease.Hash, renewed.Timestamp+1000)
	leases.Observe(accept(nearRenewal))
	if ev, err := tk.TimekeeperEvidence(ctx); err != nil || len(ev) != 1 || ev[0].Purpose != "start" || ev[0].Key != a.PublicKey ||
		ev[0].Attestations != [2]ledger.Attestation{renewed, nearRenewal} {
		t.Fatalf("a start a second after the renewal: evidence %+v, %v; want it with the renewal", ev, err)
	}
	twice := timekeeping.Sign(c.Nodes[0].TimekeeperKey.Private(), c.Network.Genesis.Hash, timekeeping.Start, lease.Hash, a.Timestamp+1000)
	leases.Observe(accept(twice))
	if ev, err := tk.TimekeeperEvidence(ctx); err != nil || len(ev) != 1 || ev[0].Purpose != "start" || ev[0].Key != a.PublicKey ||
		ev[0].Attestations != [2]ledger.Attestation{a, twice} {
		t.Fatalf("two starts a second apart: evidence %+v, %v; want one entry, of these two", ev, err)
	}
}

// TestLateTimekeeperStillStarts: the committee (three members, all needed)
// cannot all sign a lease's start at once: one member's node is cut off
// when the provider first asks, and hears of the lease only after the
// precision window has passed. The members who signed early sign anew
// when asked again, and the provider's accept goes through: a lease never
// waits for its refund because its committee was asked at different times.
func TestLateTimekeeperStillStarts(t *testing.T) {
	n := newLeaseNet(t)
	n.Nodes[1].Host.Isolate(n.PeerIDs(0, 2)...)
	n.Nodes[0].Host.Isolate(n.PeerIDs(1)...)
	n.Nodes[2].Host.Isolate(n.PeerIDs(1)...)
	lease := n.lease(market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60})
	n.Submit(0, lease)
	if _, err := n.clients[1].RequestAttestation(context.Background(), lease.Hash, "start"); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("the cut-off member knows the lease: %v", err)
	}
	// The provider asks: nodes 0 and 2 sign, node 1 cannot be reached.
	n.WaitFor("the early members' starts signed", 20*time.Second, func(i int) bool {
		if i == 1 {
			return true
		}
		a, err := n.clients[i].RequestAttestation(context.Background(), lease.Hash, "start")
		return err == nil && a.Timestamp > 0
	})
	n.clock.advance(6 * time.Second)
	for _, nd := range n.Nodes {
		nd.Host.Heal()
	}
	got := n.waitLease(lease.Hash, "active", 90*time.Second)
	if got[0].Provider != n.provider.Address() {
		t.Fatalf("the lease: %+v", got[0])
	}
}

func isStatus(err error, code int) bool {
	var ae *nodeclient.APIError
	return errors.As(err, &ae) && ae.StatusCode == code
}

func ptr[T any](v T) *T { return &v }

func sub(t *testing.T, a, b ledger.Amount) ledger.Amount {
	v, err := a.Sub(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func add(t *testing.T, a, b ledger.Amount) ledger.Amount {
	v, err := a.Add(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestLeaseForkPartitionAndLateNode: the consumer signs two leases on one
// previous (a fork) at two nodes at once; the votes keep one, and the
// other, with whatever its provider had done with it, is rolled back
// everywhere. Then, with the provider's node cut off, a lease made on
// the other side waits, unconfirmed, and runs once the network heals.
// Last, a fourth node started from nothing replays it all: it holds the
// same leases and passes the audit.
func TestLeaseForkPartitionAndLateNode(t *testing.T) {
	n := newLeaseNet(t)
	ctx := context.Background()

	// The fork.
	a := n.lease(market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60})
	b := n.lease(market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 120})
	if a.Previous != b.Previous {
		t.Fatal("the two leases do not share a previous")
	}
	done := make(chan error, 2)
	go func() { _, err := n.Nodes[0].N.Engine.Submit(ctx, a); done <- err }()
	go func() { _, err := n.Nodes[2].N.Engine.Submit(ctx, b); done <- err }()
	<-done
	<-done
	var winner, loser *ledger.Block
	n.WaitFor("one of the two leases active and confirmed", 60*time.Second, func(i int) bool {
		for _, x := range []*ledger.Block{a, b} {
			if l, err := n.clients[i].Lease(ctx, x.Hash); err == nil && l.Status == "active" && l.Confirmed {
				return true
			}
		}
		return false
	})
	if l, err := n.clients[0].Lease(ctx, a.Hash); err == nil && l.Status == "active" {
		winner, loser = a, b
	} else {
		winner, loser = b, a
	}
	n.waitLease(winner.Hash, "active", 30*time.Second)
	n.WaitFor("the losing lease gone from every node", 30*time.Second, func(i int) bool {
		_, err := n.clients[i].Lease(ctx, loser.Hash)
		return isStatus(err, http.StatusNotFound)
	})
	n.Audit()

	// The partition: node 2 (the provider, and a third of the weight and
	// of the committee) apart from nodes 0 and 1.
	n.Nodes[2].Host.Isolate(n.PeerIDs(0, 1)...)
	n.Nodes[0].Host.Isolate(n.PeerIDs(2)...)
	n.Nodes[1].Host.Isolate(n.PeerIDs(2)...)
	during := n.lease(market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60})
	if _, err := n.clients[0].Submit(ctx, during); err != nil {
		t.Fatalf("a lease during the partition: %v", err)
	}
	time.Sleep(2 * time.Second)
	if l, err := n.clients[0].Lease(ctx, during.Hash); err != nil || l.Status != "open" {
		t.Fatalf("during the partition the lease is %+v (%v), want open: its provider is cut off", l, err)
	}
	if _, err := n.clients[2].Lease(ctx, during.Hash); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("the provider's side heard of the lease: %v", err)
	}
	for _, nd := range n.Nodes {
		nd.Host.Heal()
	}
	n.waitLease(during.Hash, "active", 60*time.Second)
	n.Audit()

	// A node from nothing.
	late := n.StartNode(t.TempDir(), nil)
	n.Nodes = append(n.Nodes, late)
	lc := nodeclient.New(late.API.URL, late.API.Client())
	n.clients = append(n.clients, lc)
	defer func() {
		if t.Failed() {
			for _, h := range []ledger.Hash{winner.Hash, during.Hash} {
				l, err := lc.Lease(ctx, h)
				t.Logf("late node: lease %s: %+v %v", h, l, err)
			}
		}
	}()
	n.WaitFor("the late node holds every lease, confirmed", 60*time.Second, func(i int) bool {
		for _, h := range []ledger.Hash{winner.Hash, during.Hash} {
			l, err := n.clients[i].Lease(ctx, h)
			if err != nil || l.Status != "active" || !l.Confirmed {
				return false
			}
		}
		return true
	})
	want, err := n.clients[0].Leases(ctx, nodeclient.LeaseFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := lc.Leases(ctx, nodeclient.LeaseFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("the late node lists %d leases, node 0 %d", len(got), len(want))
	}
	for i := range want {
		if !equalLease(got[i], want[i]) {
			t.Errorf("lease %d: late node %+v, node 0 %+v", i, got[i], want[i])
		}
	}
	n.Audit()
}

// equalLease compares two renderings of a lease.
func equalLease(a, b nodewire.Lease) bool {
	return a.LeaseHash == b.LeaseHash && a.Status == b.Status && a.StartTime == b.StartTime && a.AcceptHash == b.AcceptHash &&
		a.Cost == b.Cost && a.Stake == b.Stake && len(a.SettleHashes) == len(b.SettleHashes) && a.Confirmed == b.Confirmed
}

// TestLateNodeHearsTimekeepers: a node that joins after the timekeepers
// announced themselves hears of them at once, not at their next periodic
// announcement (an hour here): until it does, it cannot gather the
// committee's attestations for the leases it provides or settles.
func TestLateNodeHearsTimekeepers(t *testing.T) {
	c := nettest.Start(t, nettest.Options{Nodes: 3, Timekeepers: 3, Leases: leasenet.Config{Announce: time.Hour}})
	c.SetCommittee()
	c.WaitCommitteeHeard(3, 20*time.Second)
	joined := time.Now().UnixMilli()
	late := c.StartNode(t.TempDir(), nil)
	deadline := time.Now().Add(15 * time.Second)
	for !nettest.CommitteeHeard(late, 3) {
		if time.Now().After(deadline) {
			tk, err := late.Leases.Timekeepers(late.Gov.Tip().Index)
			t.Fatalf("a node that joined late has not heard of the committee after 15 s: %+v %v", tk, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Announcements made for it, not old ones that gossip still held.
	tk, _ := late.Leases.Timekeepers(late.Gov.Tip().Index)
	for _, k := range tk.Timekeepers {
		if k.UpdatedAt < joined {
			t.Errorf("the late node holds %s's announcement of %d, made before it joined (%d)", k.Key, k.UpdatedAt, joined)
		}
	}
}
