package ledger_test

import (
	"errors"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// bounce builds the bounce of send s from r's account, at its head.
func (w *leaseWorld) bounce(r *ledger.LeaseRecord, s *ledger.Block) *ledger.Block {
	w.t.Helper()
	p := ledger.Pending{Send: s.Hash, Source: s.Account, Destination: s.Destination, Amount: s.Amount, Asset: s.Asset}
	return wallet.LeaseBounce(w.leaseHead(r.Hash), p, s.Timestamp)
}

// claimed returns a key holding some native and the faucet's stable.
func (w *leaseWorld) claimed() wallet.Key {
	w.t.Helper()
	k := w.funded(1_000_000)
	w.ok(signed(w.must(wallet.Claim(w.head(k.Address()), w.tick(1))), k))
	return k
}

func stableOf(w *world, k wallet.Key) ledger.Amount {
	acct, _, _ := w.m.Account(k.Address())
	return acct.Balance(ledger.Stable)
}

// TestLeaseBounce sends back what a lease's course does not take in: a
// notice that lost to the end, a third party's stable, a second notice,
// a send to a refunded lease before its late accept's stake return. The
// lease's record never changes, and every sender gets its amount back.
func TestLeaseBounce(t *testing.T) {
	t.Run("after an end", func(t *testing.T) {
		w := newLeaseWorld(t)
		c0 := balance(w.world, w.consumer)
		r := w.active()
		late := w.notice(r, 5) // the end wins the second place
		end, _ := wallet.LeaseEnd(w.leaseHead(r.Hash), r, w.attest(ledger.PurposeEnd, r.Hash, r.End(), 3))
		w.ok(end)
		rec := *w.record(r.Hash)
		b := w.ok(w.bounce(r, late))
		if b.Amount != late.Amount || b.Timestamp != end.Timestamp || b.Asset != ledger.Native {
			t.Errorf("bounce pays %s %s at %d, want the notice's %s at the end's time %d", b.Amount, b.Asset, b.Timestamp, late.Amount, end.Timestamp)
		}
		if got := w.record(r.Hash); *got != rec {
			t.Errorf("the bounce changed the lease's record:\n%+v\nwant\n%+v", got, &rec)
		}
		if _, found, _ := w.m.Pending(ledger.LeaseAccount(r.Hash), late.Hash); found {
			t.Error("the notice is still pending at the lease account")
		}
		w.takePending(w.consumer, b)
		if got, want := balance(w.world, w.consumer), mustSub(t, c0, r.Cost); got != want {
			t.Errorf("consumer balance %s, want %s (the cost paid, the notice back)", got, want)
		}

		// Anyone's send, in either asset, goes back the same way.
		k := w.claimed()
		s0 := stableOf(w.world, k)
		stray := w.send(k, ledger.LeaseAccount(r.Hash), 7, ledger.Stable)
		b2 := w.ok(w.bounce(r, stray))
		if b2.Asset != ledger.Stable || b2.Previous != b.Hash {
			t.Errorf("second bounce: %s after %s, want stable after %s", b2.Asset, b2.Previous, b.Hash)
		}
		w.takePending(k, b2)
		if got := stableOf(w.world, k); got != s0 {
			t.Errorf("sender's stable %s, want %s", got, s0)
		}
		if acct, _, _ := w.m.Account(ledger.LeaseAccount(r.Hash)); acct.Height != 4 {
			t.Errorf("lease account height %d, want 4 (start, end, two bounces)", acct.Height)
		}
		w.audit()
	})
	t.Run("after a remainder", func(t *testing.T) {
		w := newLeaseWorld(t)
		r := w.active()
		n := w.notice(r, 1)
		second := w.notice(r, 3)
		w.ok(w.earlyEnd(r, n, r.StartTime+30_000))
		w.ok(wallet.LeaseRemainder(w.leaseHead(r.Hash), w.record(r.Hash)))
		b := w.ok(w.bounce(r, second))
		if rec := w.record(r.Hash); rec.Notice != n.Hash || !rec.EndedEarly() {
			t.Errorf("record after the bounce: %+v", rec)
		}
		w.takePending(w.consumer, b)
		w.audit()
	})
	t.Run("after a refund, before a late accept's stake return", func(t *testing.T) {
		w := newLeaseWorld(t)
		p0 := balance(w.world, w.provider)
		lease := w.ok(w.leaseBlock(1))
		r := w.record(lease.Hash)
		w.ok(wallet.LeaseRefund(w.leaseHead(lease.Hash), r, w.attest(ledger.PurposeExpire, lease.Hash, r.Deadline(), 3)))
		w.now = max(w.now, r.Deadline()) + 10_000
		k := w.funded(1000)
		stray := w.send(k, ledger.LeaseAccount(lease.Hash), 400, ledger.Native)
		b := w.ok(w.bounce(r, stray))
		if b.Timestamp != stray.Timestamp {
			t.Errorf("bounce stamped %d, want the send's %d (later than the refund's)", b.Timestamp, stray.Timestamp)
		}
		w.ok(w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, r.Created+1000, 3)))
		ret := w.ok(wallet.LeaseReturnStake(w.leaseHead(lease.Hash), w.record(lease.Hash)))
		if ret.Previous != b.Hash || ret.Timestamp != b.Timestamp {
			t.Errorf("stake return after %s at %d, want after the bounce at %d", ret.Previous, ret.Timestamp, b.Timestamp)
		}
		w.takePending(w.provider, ret)
		w.takePending(k, b)
		if got := balance(w.world, w.provider); got != p0 {
			t.Errorf("provider balance %s, want %s", got, p0)
		}
		if got := balance(w.world, k); got != ledger.NewAmount(1000) {
			t.Errorf("sender balance %s, want 1000", got)
		}
		if rec := w.record(lease.Hash); !rec.StakeReturned || rec.Second != ret.Hash {
			t.Errorf("record: %+v", rec)
		}
		w.audit()
	})
}

func TestLeaseBounceRefusals(t *testing.T) {
	// ended returns an ended lease and a send of k's to its account.
	ended := func(w *leaseWorld) (*ledger.LeaseRecord, *ledger.Block) {
		r := w.ended()
		return r, w.send(w.funded(1000), ledger.LeaseAccount(r.Hash), 10, ledger.Native)
	}
	// tampered is the bounce of an ended lease's send, changed by f.
	tampered := func(f func(w *leaseWorld, b *ledger.Block)) func(w *leaseWorld) *ledger.Block {
		return func(w *leaseWorld) *ledger.Block {
			r, s := ended(w)
			b := w.bounce(r, s)
			f(w, b)
			return reseal(b)
		}
	}
	checkRefusals(t, []leaseRefusal{
		{"while the lease runs (a send of anyone's is no notice)", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			return w.bounce(r, w.send(w.funded(1000), ledger.LeaseAccount(r.Hash), 10, ledger.Native))
		}, ledger.ErrWrongLease},
		{"after an early end, before its remainder", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			n := w.notice(r, 1)
			second := w.notice(r, 1)
			w.ok(w.earlyEnd(r, n, r.StartTime+30_000))
			return w.bounce(r, second)
		}, ledger.ErrAlreadyReceived},
		{"as the first block of a lease account", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			r := w.record(lease.Hash)
			return w.bounce(r, w.send(w.funded(1000), ledger.LeaseAccount(r.Hash), 10, ledger.Native))
		}, ledger.ErrWrongLease},
		{"more than was sent", tampered(func(w *leaseWorld, b *ledger.Block) {
			b.Amount = mustAdd(w.t, b.Amount, ledger.NewAmount(1))
		}), ledger.ErrBadAmount},
		{"in another asset", tampered(func(_ *leaseWorld, b *ledger.Block) { b.Asset = ledger.Stable }), ledger.ErrMalformed},
		{"stamped before the send", tampered(func(_ *leaseWorld, b *ledger.Block) { b.Timestamp-- }), ledger.ErrTimestamp},
		{"with attestations", tampered(func(w *leaseWorld, b *ledger.Block) {
			b.Attestations = w.attest(ledger.PurposeEnding, b.Source, w.now, 3)
		}), ledger.ErrMalformed},
		{"of a send to another account", func(w *leaseWorld) *ledger.Block {
			r, _ := ended(w)
			other := w.send(w.funded(1000), wallet.NewKey().Address(), 10, ledger.Native)
			return w.bounce(r, other)
		}, ledger.ErrWrongLease},
		{"twice", func(w *leaseWorld) *ledger.Block {
			r, s := ended(w)
			w.ok(w.bounce(r, s))
			return w.bounce(r, s)
		}, ledger.ErrAlreadyReceived},
		{"of a receive", tampered(func(w *leaseWorld, b *ledger.Block) {
			k := wallet.NewKey()
			b.Source = w.receive(k, w.send(w.funded(1000), k.Address(), 10, ledger.Native)).Hash
		}), ledger.ErrWrongLease},
		{"a stake return of a lease that started", func(w *leaseWorld) *ledger.Block {
			r, s := ended(w)
			w.ok(w.bounce(r, s))
			return wallet.LeaseReturnStake(w.leaseHead(r.Hash), r)
		}, ledger.ErrMalformed},
	})
}

// TestLeaseBounceRollback rolls a bounce back: the send it took in is
// pending at the lease account again and its payout is gone; then the
// consumer's chain rolls back with the whole lease, bounce included.
func TestLeaseBounceRollback(t *testing.T) {
	w := newLeaseWorld(t)
	before, keep, height := w.beforeLease()
	r := w.active()
	late := w.notice(r, 5)
	end, _ := wallet.LeaseEnd(w.leaseHead(r.Hash), r, w.attest(ledger.PurposeEnd, r.Hash, r.End(), 3))
	w.ok(end)
	w.takePending(w.provider, end)
	beforeBounce := snapshotState(w.world)
	b := w.ok(w.bounce(r, late))
	if err := w.rollback(ledger.LeaseAccount(r.Hash)); err != nil {
		t.Fatal(err)
	}
	if after := snapshotState(w.world); after != beforeBounce {
		t.Errorf("ledger after the bounce's rollback differs from before it:\n%s\nwant\n%s", after, beforeBounce)
	}
	w.ok(b)
	w.takePending(w.consumer, b)
	// receive of the bounce, bounce, notice, receive of the end, end,
	// start, accept, lease
	w.rollBackConsumer(height, 8, keep, before)
}

// TestLeaseBounceContenders: a bounce or a stake return at a place taken
// already is a fork contender only when it could apply once the block at
// its place is rolled back. One naming what a block below its place took
// in never could: it is refused outright, not put to a vote.
func TestLeaseBounceContenders(t *testing.T) {
	headAt := func(b *ledger.Block) wallet.Head {
		return wallet.Head{Account: b.Account, Frontier: b.Hash, Timestamp: b.Timestamp}
	}
	pendingOf := func(s *ledger.Block) ledger.Pending {
		return ledger.Pending{Send: s.Hash, Source: s.Account, Destination: s.Destination, Amount: s.Amount, Asset: s.Asset}
	}
	for _, tt := range []struct {
		name string
		// block builds a contender for a place taken already; fork says
		// whether it is one (it could apply once the place is free).
		block func(w *leaseWorld) *ledger.Block
		fork  bool
	}{
		{"a bounce of a send a lower bounce took", func(w *leaseWorld) *ledger.Block {
			r := w.ended()
			s1 := w.send(w.funded(1000), ledger.LeaseAccount(r.Hash), 10, ledger.Native)
			s2 := w.send(w.funded(1000), ledger.LeaseAccount(r.Hash), 20, ledger.Native)
			b3 := w.ok(w.bounce(r, s1))
			w.ok(w.bounce(r, s2))
			return wallet.LeaseBounce(headAt(b3), pendingOf(s1), s1.Timestamp)
		}, false},
		{"a bounce of the notice the early end took", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			n := w.notice(r, 1)
			w.ok(w.earlyEnd(r, n, r.StartTime+30_000))
			rem := w.ok(wallet.LeaseRemainder(w.leaseHead(r.Hash), w.record(r.Hash)))
			w.ok(w.bounce(r, w.send(w.funded(1000), ledger.LeaseAccount(r.Hash), 20, ledger.Native)))
			return wallet.LeaseBounce(headAt(rem), pendingOf(n), n.Timestamp)
		}, false},
		{"a second stake return after a bounce", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			r := w.record(lease.Hash)
			w.ok(wallet.LeaseRefund(w.leaseHead(lease.Hash), r, w.attest(ledger.PurposeExpire, lease.Hash, r.Deadline(), 3)))
			w.now = max(w.now, r.Deadline()) + 10_000
			w.ok(w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, r.Created+1000, 3)))
			ret := w.ok(wallet.LeaseReturnStake(w.leaseHead(lease.Hash), w.record(lease.Hash)))
			w.ok(w.bounce(w.record(lease.Hash), w.send(w.funded(1000), ledger.LeaseAccount(lease.Hash), 20, ledger.Native)))
			return wallet.LeaseReturnStake(headAt(ret), w.record(lease.Hash))
		}, false},
		{"two bounces of different sends at one place", func(w *leaseWorld) *ledger.Block {
			r := w.ended()
			s1 := w.send(w.funded(1000), ledger.LeaseAccount(r.Hash), 10, ledger.Native)
			s2 := w.send(w.funded(1000), ledger.LeaseAccount(r.Hash), 20, ledger.Native)
			head := w.leaseHead(r.Hash)
			w.ok(w.bounce(r, s1))
			return wallet.LeaseBounce(head, pendingOf(s2), s2.Timestamp)
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newLeaseWorld(t)
			c := tt.block(w)
			err := w.submit(c)
			var fe *ledger.ForkError
			if got := errors.As(err, &fe); got != tt.fork {
				t.Fatalf("submit: %v; want a fork: %v", err, tt.fork)
			}
			if !tt.fork {
				if !errors.Is(err, ledger.ErrAlreadyReceived) {
					t.Fatalf("submit: %v, want ErrAlreadyReceived", err)
				}
				return
			}
			// The votes pick the contender: the block at its place (and
			// what follows it) is rolled back, and the contender applies.
			acct, _, _ := w.m.Account(c.Account)
			if _, err := ledger.RollbackTo(w.m, c.Account, acct.Height-1); err != nil {
				t.Fatal(err)
			}
			w.ok(c)
		})
	}
}

// ended returns a lease that ran its term and ended.
func (w *leaseWorld) ended() *ledger.LeaseRecord {
	w.t.Helper()
	r := w.active()
	end, _ := wallet.LeaseEnd(w.leaseHead(r.Hash), r, w.attest(ledger.PurposeEnd, r.Hash, r.End(), 3))
	w.ok(end)
	return w.record(r.Hash)
}
