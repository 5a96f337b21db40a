package leasenet_test

import (
	"context"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/wallet"
)

// TestLeaseBounced: a notice that comes after its lease ended is a stray
// at the lease account; the provider's node bounces it back to its
// sender on every node, and the ledgers pass the audit (native and the
// confirmed weights both add up).
func TestLeaseBounced(t *testing.T) {
	n := newLeaseNet(t)
	ctx := context.Background()
	c0 := n.balance(0, n.consumer.Address())
	lease := n.lease(market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 60})
	if _, err := n.clients[0].Submit(ctx, lease); err != nil {
		t.Fatalf("POST /blocks/lease: %v", err)
	}
	n.waitLease(lease.Hash, "active", 30*time.Second)
	n.clock.advance(61 * time.Second)
	ended := n.waitLease(lease.Hash, "ended", 30*time.Second)[0]
	n.WaitConfirmed(ended.SettleHashes[1], 20*time.Second)

	late := n.finish(n.Must(wallet.Send(n.Head(1, n.consumer.Address()), ledger.LeaseAccount(lease.Hash),
		ledger.NewAmount(3), ledger.Native, n.clock.now().UnixMilli())), n.consumer)
	if _, err := n.clients[1].Submit(ctx, late); err != nil {
		t.Fatalf("the late notice: %v", err)
	}
	back := n.bounced(lease.Hash, late)
	if back.Amount != late.Amount || back.Asset != ledger.Native {
		t.Fatalf("bounce pays %s %s, want the notice's %s native", back.Amount, back.Asset, late.Amount)
	}
	if b, err := n.clients[2].Block(ctx, back.Send); err != nil || b.Type != ledger.TypeLeaseSettle {
		t.Fatalf("the bounce: %+v, %v", b, err)
	}
	n.weightGone(lease.Hash, back)
	after := n.waitLease(lease.Hash, "ended", 10*time.Second)
	for i, o := range after {
		if !equalLease(o, ended) || !o.NoticeHash.IsZero() {
			t.Errorf("node %d: the bounce changed the lease: %+v, was %+v", i, o, ended)
		}
	}
	recv := n.finish(n.Must(wallet.Receive(n.Head(0, n.consumer.Address()), back, n.clock.now().UnixMilli())), n.consumer)
	n.Submit(0, recv)
	n.WaitConfirmed(recv.Hash, 20*time.Second)
	if got, want := n.balance(2, n.consumer.Address()), sub(t, c0, ended.Cost); got != want {
		t.Errorf("consumer balance %s, want %s (the cost paid, the notice back)", got, want)
	}
	n.Audit()
}

// TestLeaseBouncedAfterRefund: a send to the account of a lease that was
// refunded (no provider took it) is bounced at the account's second
// place, right after the refund, by the provider the lease named; the
// confirmed weights still add up (this bounce follows a first block, as
// an early end does, but one that names the lease, not an accept).
func TestLeaseBouncedAfterRefund(t *testing.T) {
	n := newLeaseNet(t)
	ctx := context.Background()
	n.Govern("lease.accept_timeout_ms", "60000")
	lease := n.lease(market.Request{VCPUs: 8, MemoryMB: 512, DiskGB: 5, Duration: 60}) // never accepted
	n.Submit(0, lease)
	n.waitLease(lease.Hash, "open", 20*time.Second)
	n.clock.advance(61 * time.Second)
	res, err := n.clients[1].SettleLease(ctx, lease.Hash)
	if err != nil || res.Kind != "refund" {
		t.Fatalf("refund: %+v %v", res, err)
	}
	n.waitLease(lease.Hash, "refunded", 20*time.Second)
	n.WaitConfirmed(res.Hash, 20*time.Second)

	stray := n.finish(n.Must(wallet.Send(n.Head(1, n.consumer.Address()), ledger.LeaseAccount(lease.Hash),
		ledger.NewAmount(3), ledger.Native, n.clock.now().UnixMilli())), n.consumer)
	if _, err := n.clients[1].Submit(ctx, stray); err != nil {
		t.Fatalf("the stray: %v", err)
	}
	n.WaitConfirmed(stray.Hash, 20*time.Second)
	back := n.bounced(lease.Hash, stray)
	if b, err := n.clients[2].Block(ctx, back.Send); err != nil || b.Previous != res.Hash {
		t.Fatalf("the bounce: %+v, %v", b, err)
	}
	n.weightGone(lease.Hash, back)
	n.Audit()
}

// bounced waits until every node has the pending entry by which lease's
// account gives send back to its sender, and returns it.
func (n *leaseNet) bounced(lease ledger.Hash, send *ledger.Block) ledger.Pending {
	n.t.Helper()
	var back ledger.Pending
	n.WaitFor("the lease account bounced the send", 30*time.Second, func(i int) bool {
		found := false
		n.Nodes[i].N.Store.PendingTo(send.Account, func(p ledger.Pending) error {
			if p.Source != ledger.LeaseAccount(lease) {
				return nil
			}
			if e, ok, _ := n.Nodes[i].N.Store.Entry(p.Send); ok && e.Block.Source == send.Hash {
				back, found = p, true
			}
			return nil
		})
		return found
	})
	return back
}

// weightGone waits for bounce back to be confirmed, then checks that the
// bounced send no longer counts for lease's account: it counted for that
// address while in transit, and the bounce moved it to its sender's.
func (n *leaseNet) weightGone(lease ledger.Hash, back ledger.Pending) {
	n.t.Helper()
	n.WaitConfirmed(back.Send, 30*time.Second)
	for i, nd := range n.Nodes {
		if w, err := nd.N.Store.ConfirmedWeight(ledger.LeaseAccount(lease)); err != nil || !w.IsZero() {
			n.t.Errorf("node %d: the lease account's confirmed weight after the bounce is %s (%v), want 0", i, w, err)
		}
	}
}
