package leasenet_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/timekeeping"
	"github.com/latticenet/lattice/wallet"
)

// TestLeaseEndedEarly ends a running lease at its consumer's notice on a
// 3-node network: no timekeeper dates an ending before the notice is in
// its ledger; once it is, the provider's node ends the lease early with
// the committee's ending attestations, pays the consumer back the
// unserved part and the notice by the remainder, and takes in its pay for
// the time served with its stake; every node agrees, and the ledgers pass
// the audit (native and the confirmed weights both add up).
func TestLeaseEndedEarly(t *testing.T) {
	n := newLeaseNet(t)
	ctx := context.Background()
	c0, p0 := n.balance(0, n.consumer.Address()), n.balance(0, n.provider.Address())
	lease := n.lease(market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 600})
	if _, err := n.clients[0].Submit(ctx, lease); err != nil {
		t.Fatalf("POST /blocks/lease: %v", err)
	}
	l := n.waitLease(lease.Hash, "active", 30*time.Second)[1]
	if _, err := n.clients[0].RequestAttestation(ctx, lease.Hash, "ending"); !isStatus(err, http.StatusConflict) {
		t.Fatalf("an ending before any notice: %v, want 409", err)
	}
	// A fifth of its term later, its consumer sends the notice.
	n.clock.advance(2 * time.Minute)
	notice := n.finish(n.Must(wallet.Send(n.Head(1, n.consumer.Address()), ledger.LeaseAccount(lease.Hash),
		ledger.NewAmount(1), ledger.Native, n.clock.now().UnixMilli())), n.consumer)
	if _, err := n.clients[1].Submit(ctx, notice); err != nil {
		t.Fatalf("the notice: %v", err)
	}
	ended := n.waitLease(lease.Hash, "ended", 30*time.Second)
	e := ended[0]
	if !e.Settled || e.NoticeHash != notice.Hash || len(e.SettleHashes) != 3 || e.EndTime < l.StartTime+120_000 || e.EndTime >= e.EndsAt {
		t.Fatalf("lease ended early: %+v (started %d)", e, l.StartTime)
	}
	for i, o := range ended {
		if !equalLease(o, e) {
			t.Errorf("node %d shows %+v, node 0 %+v", i, o, e)
		}
	}
	rec := ledger.LeaseRecord{Cost: l.Cost, StartTime: l.StartTime, Duration: l.Duration}
	earned := rec.Earned(e.EndTime)
	if want := add(t, sub(t, l.Cost, earned), ledger.NewAmount(1)); e.Refund != want {
		t.Errorf("refund %s, want %s (cost %s less %s earned, and the notice)", e.Refund, want, l.Cost, earned)
	}
	if earned.IsZero() || earned == l.Cost {
		t.Errorf("earned %s of %s: want a part", earned, l.Cost)
	}
	want := add(t, p0, earned)
	n.WaitFor("the provider took its pay for the time served in", 20*time.Second, func(i int) bool {
		return n.balance(i, n.provider.Address()) == want
	})
	// The consumer takes the remainder in.
	rem := e.SettleHashes[2]
	n.WaitConfirmed(rem, 20*time.Second)
	p, found, err := n.Nodes[0].N.Store.Pending(n.consumer.Address(), rem)
	if err != nil || !found || p.Amount != e.Refund {
		t.Fatalf("the remainder's pending entry: %+v, %v, %v", p, found, err)
	}
	recv := n.finish(n.Must(wallet.Receive(n.Head(0, n.consumer.Address()), p, n.clock.now().UnixMilli())), n.consumer)
	n.Submit(0, recv)
	n.WaitConfirmed(recv.Hash, 20*time.Second)
	if got, want := n.balance(2, n.consumer.Address()), sub(t, c0, earned); got != want {
		t.Errorf("consumer balance %s, want %s (paid %s of %s)", got, want, earned, l.Cost)
	}
	n.WaitFor("the capacity is free again", 10*time.Second, func(i int) bool {
		ps, err := n.Nodes[i].Market.Providers()
		return err == nil && len(ps) == 1 && ps[0].ActiveLeases == 0 && ps[0].Free == capacity
	})
	n.Audit()

	// Every node kept the early end's attestations as endings of its
	// notice: a member's second, different ending of it is evidence.
	eb, err := n.clients[1].Block(ctx, e.SettleHashes[1])
	if err != nil {
		t.Fatal(err)
	}
	tk := n.Nodes[0].TimekeeperKey
	forged := *eb.Block
	forged.Attestations = append([]ledger.Attestation(nil), eb.Attestations...)
	for i, a := range forged.Attestations {
		if a.PublicKey == tk.Address() {
			forged.Attestations[i] = timekeeping.Sign(tk.Private(), n.Network.Genesis.Hash, timekeeping.Ending, notice.Hash, a.Timestamp+1)
		}
	}
	n.Nodes[1].Leases.Observe(&forged)
	ev, err := n.Nodes[1].Leases.Evidence()
	if err != nil || len(ev) != 1 || ev[0].Purpose != "ending" || ev[0].Lease != notice.Hash || ev[0].Key != tk.Address() {
		t.Fatalf("evidence of a second ending: %+v, %v", ev, err)
	}
}
