package ledger_test

import (
	"errors"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/timekeeping"
	"github.com/latticenet/lattice/wallet"
)

// notice sends the consumer's notice to end lease r early: amt native to
// the lease account.
func (w *leaseWorld) notice(r *ledger.LeaseRecord, amt uint64) *ledger.Block {
	w.t.Helper()
	return w.send(w.consumer, ledger.LeaseAccount(r.Hash), amt, ledger.Native)
}

// earlyEnd builds the early end of r at notice n, the committee's ending
// attestations of n at ts, ts+1, ts+2 (attested time ts+1).
func (w *leaseWorld) earlyEnd(r *ledger.LeaseRecord, n *ledger.Block, ts int64) *ledger.Block {
	w.t.Helper()
	return w.must(wallet.LeaseEarlyEnd(w.leaseHead(r.Hash), r, n.Hash, w.attest(ledger.PurposeEnding, n.Hash, ts, 3)))
}

// TestLeaseEarlyEnd ends a lease a quarter into its term at its
// consumer's notice: the provider is paid a quarter of the cost and its
// stake, the consumer gets the rest and its notice back, and native is
// conserved at every step.
func TestLeaseEarlyEnd(t *testing.T) {
	w := newLeaseWorld(t)
	c0, p0 := balance(w.world, w.consumer), balance(w.world, w.provider)
	r := w.active()
	n := w.notice(r, 3)
	at := r.StartTime + 15_000 - 1 // attested: the median, at + 1
	early := w.ok(w.earlyEnd(r, n, at))
	quarter, _ := r.Cost.MulDivFloor(1, 4)
	if want := mustAdd(t, quarter, r.Stake); early.Amount != want || early.Timestamp != at+1 {
		t.Fatalf("early end pays %s at %d, want %s at %d", early.Amount, early.Timestamp, want, at+1)
	}
	rec := w.record(r.Hash)
	refund := mustAdd(t, mustSub(t, r.Cost, quarter), ledger.NewAmount(3))
	if rec.Status() != "ended" || !rec.Settled() || rec.Live() || !rec.EndedEarly() || rec.Notice != n.Hash ||
		rec.EndTime != at+1 || rec.Refund != refund || rec.Held() != refund || !rec.Third.IsZero() {
		t.Fatalf("record after the early end: %+v", rec)
	}
	if _, found, _ := w.m.Pending(ledger.LeaseAccount(r.Hash), n.Hash); found {
		t.Error("the notice is still pending after the early end took it in")
	}
	w.audit()
	rem := w.ok(wallet.LeaseRemainder(w.leaseHead(r.Hash), rec))
	if rem.Amount != refund || rem.Timestamp != early.Timestamp {
		t.Fatalf("remainder pays %s at %d, want %s at %d", rem.Amount, rem.Timestamp, refund, early.Timestamp)
	}
	if rec = w.record(r.Hash); rec.Third != rem.Hash || !rec.Held().IsZero() {
		t.Fatalf("record after the remainder: %+v", rec)
	}
	w.audit()
	w.takePending(w.provider, early)
	w.takePending(w.consumer, rem)
	if got, want := balance(w.world, w.consumer), mustSub(t, c0, quarter); got != want {
		t.Errorf("consumer balance %s, want %s (paid a quarter of %s)", got, want, r.Cost)
	}
	if got, want := balance(w.world, w.provider), mustAdd(t, p0, quarter); got != want {
		t.Errorf("provider balance %s, want %s (a quarter, stake back)", got, want)
	}
	w.audit()
	// The account's course is complete: nothing follows the remainder.
	rec = w.record(r.Hash)
	more := wallet.LeaseRemainder(w.leaseHead(r.Hash), rec)
	if err := w.submit(more); !errors.Is(err, ledger.ErrMalformed) {
		t.Errorf("a block after the remainder: %v, want ErrMalformed", err)
	}
}

// TestLeaseEarned: the provider earns the cost pro rata of the time
// served, rounded down; nothing before the start, all of it from the end.
func TestLeaseEarned(t *testing.T) {
	r := ledger.LeaseRecord{Cost: ledger.NewAmount(1000), StartTime: 10_000, Duration: 60}
	for _, tc := range []struct {
		t    int64
		want uint64
	}{
		{5_000, 0}, {10_000, 0}, {10_059, 0}, {10_060, 1}, {40_000, 500}, {69_999, 999}, {70_000, 1000}, {1 << 62, 1000},
	} {
		if got := r.Earned(tc.t); got != ledger.NewAmount(tc.want) {
			t.Errorf("Earned(%d) = %s, want %d", tc.t, got, tc.want)
		}
	}
	// docs/protocol.md's example (section 24.4).
	doc := ledger.LeaseRecord{Cost: ledger.NewAmount(2_221_200), StartTime: 0, Duration: 3600}
	if got := doc.Earned(726_000); got != ledger.NewAmount(447_942) {
		t.Errorf("the documented example earns %s, the docs say 447942", got)
	}
	big := ledger.LeaseRecord{Cost: ledger.AmountFromParts(1<<62, 0), StartTime: 0, Duration: 31_536_000}
	half, _ := big.Cost.MulDivFloor(1, 2)
	if got := big.Earned(31_536_000 * 500); got != half {
		t.Errorf("Earned of a large cost at half term = %s, want %s", got, half)
	}
}

// TestLeaseEarlyEndPastTerm: a notice the network has after the term pays
// the provider the whole cost, and the remainder gives the notice back.
func TestLeaseEarlyEndPastTerm(t *testing.T) {
	w := newLeaseWorld(t)
	r := w.active()
	n := w.notice(r, 1)
	early := w.ok(w.earlyEnd(r, n, r.End()+5))
	if want := mustAdd(t, r.Cost, r.Stake); early.Amount != want {
		t.Fatalf("early end past the term pays %s, want %s", early.Amount, want)
	}
	rem := w.ok(wallet.LeaseRemainder(w.leaseHead(r.Hash), w.record(r.Hash)))
	if rem.Amount != ledger.NewAmount(1) {
		t.Fatalf("remainder pays %s, want the notice's 1", rem.Amount)
	}
	w.audit()
}

// endedWith is the early end of an active lease at a fresh notice n,
// with the attestations atts gives.
func endedWith(atts func(w *leaseWorld, r *ledger.LeaseRecord, n *ledger.Block) []ledger.Attestation) func(w *leaseWorld) *ledger.Block {
	return func(w *leaseWorld) *ledger.Block {
		r := w.active()
		n := w.notice(r, 1)
		return w.must(wallet.LeaseEarlyEnd(w.leaseHead(r.Hash), r, n.Hash, atts(w, r, n)))
	}
}

// TestLeaseEarlyEndRefusals: every early end or remainder the rules
// refuse is refused with its reason and changes nothing.
func TestLeaseEarlyEndRefusals(t *testing.T) {
	tests := []leaseRefusal{
		{"a send of another account's is no notice", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			other := w.funded(100)
			n := w.send(other, ledger.LeaseAccount(r.Hash), 1, ledger.Native)
			return w.earlyEnd(r, n, w.tick(1))
		}, ledger.ErrWrongLease},
		{"a send of the consumer's elsewhere is no notice", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			n := w.send(w.consumer, w.provider.Address(), 1, ledger.Native)
			return w.earlyEnd(r, n, w.tick(1))
		}, ledger.ErrWrongLease},
		{"without ending attestations", endedWith(func(w *leaseWorld, r *ledger.LeaseRecord, _ *ledger.Block) []ledger.Attestation {
			return w.attest(ledger.PurposeEnd, r.Hash, w.tick(1), 3)
		}), ledger.ErrAttestation},
		{"endings of the lease, not of its notice", endedWith(func(w *leaseWorld, r *ledger.LeaseRecord, _ *ledger.Block) []ledger.Attestation {
			return w.attest(ledger.PurposeEnding, r.Hash, w.tick(1), 3)
		}), ledger.ErrAttestation},
		{"endings of an earlier notice", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			first := w.notice(r, 1)
			atts := w.attest(ledger.PurposeEnding, first.Hash, w.tick(1), 3)
			n := w.notice(r, 1)
			return w.must(wallet.LeaseEarlyEnd(w.leaseHead(r.Hash), r, n.Hash, atts))
		}, ledger.ErrAttestation},
		{"endings further apart than the committee's precision", endedWith(func(w *leaseWorld, _ *ledger.LeaseRecord, n *ledger.Block) []ledger.Attestation {
			atts := w.attest(ledger.PurposeEnding, n.Hash, w.tick(1), 2)
			return append(atts, timekeeping.Sign(w.tks[2].Private(), w.network, ledger.PurposeEnding, n.Hash, w.now+tkPrecision+10))
		}), ledger.ErrAttestation},
		{"too few ending attestations", endedWith(func(w *leaseWorld, _ *ledger.LeaseRecord, n *ledger.Block) []ledger.Attestation {
			return w.attest(ledger.PurposeEnding, n.Hash, w.tick(1), 2)
		}), ledger.ErrAttestation},
		{"paying the provider more than the time served", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			n := w.notice(r, 1)
			b := w.earlyEnd(r, n, r.StartTime+10_000)
			b.Amount = mustAdd(w.t, r.Cost, r.Stake)
			return reseal(b)
		}, ledger.ErrBadAmount},
		{"stamped with another time than the attested one", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			n := w.notice(r, 1)
			b := w.earlyEnd(r, n, r.StartTime+10_000)
			b.Timestamp += 1000
			return reseal(b)
		}, ledger.ErrTimestamp},
		{"of a lease that has not started (its account's first place)", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			w.ok(w.accept(lease.Hash, w.attest(ledger.PurposeStart, lease.Hash, w.now, 3)))
			r := w.record(lease.Hash)
			n := w.notice(r, 1)
			return w.must(wallet.LeaseEarlyEnd(w.leaseHead(r.Hash), r, n.Hash, w.attest(ledger.PurposeEnding, n.Hash, w.tick(1), 3)))
		}, ledger.ErrWrongLease},
		{"of a refunded lease", func(w *leaseWorld) *ledger.Block {
			lease := w.ok(w.leaseBlock(1))
			r := w.record(lease.Hash)
			w.ok(wallet.LeaseRefund(w.leaseHead(r.Hash), r, w.attest(ledger.PurposeExpire, r.Hash, r.Deadline(), 3)))
			r = w.record(lease.Hash)
			n := w.notice(r, 1)
			return w.must(wallet.LeaseEarlyEnd(w.leaseHead(r.Hash), r, n.Hash, w.attest(ledger.PurposeEnding, n.Hash, w.tick(1), 3)))
		}, ledger.ErrMalformed}, // it would be a bounce
		{"after the lease ended (its account's course is complete)", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			end, _ := wallet.LeaseEnd(w.leaseHead(r.Hash), r, w.attest(ledger.PurposeEnd, r.Hash, r.End(), 3))
			w.ok(end)
			n := w.notice(r, 1)
			return w.must(wallet.LeaseEarlyEnd(w.leaseHead(r.Hash), w.record(r.Hash), n.Hash, w.attest(ledger.PurposeEnding, n.Hash, r.End()+10, 3)))
		}, ledger.ErrMalformed},
		{"a remainder paying more than the lease holds", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			w.ok(w.earlyEnd(r, w.notice(r, 1), r.StartTime+10_000))
			b := wallet.LeaseRemainder(w.leaseHead(r.Hash), w.record(r.Hash))
			b.Amount = mustAdd(w.t, b.Amount, ledger.NewAmount(1))
			return reseal(b)
		}, ledger.ErrBadAmount},
		{"a remainder with attestations", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			w.ok(w.earlyEnd(r, w.notice(r, 1), r.StartTime+10_000))
			rec := w.record(r.Hash)
			b := wallet.LeaseRemainder(w.leaseHead(r.Hash), rec)
			b.Attestations = w.attest(ledger.PurposeEnd, r.Hash, rec.EndTime, 3)
			return reseal(b)
		}, ledger.ErrMalformed},
		{"a third block naming the notice again", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			n := w.notice(r, 1)
			w.ok(w.earlyEnd(r, n, r.StartTime+10_000))
			rec := w.record(r.Hash)
			b := wallet.LeaseRemainder(w.leaseHead(r.Hash), rec)
			b.Source = n.Hash
			return reseal(b)
		}, ledger.ErrAlreadyReceived},
		{"an early end signed by the consumer (settles are never signed)", func(w *leaseWorld) *ledger.Block {
			r := w.active()
			return signed(w.earlyEnd(r, w.notice(r, 1), w.tick(1)), w.consumer)
		}, ledger.ErrMalformed},
	}
	checkRefusals(t, tests)
}

// TestLeaseEarlyEndCompetesWithEnd: past the term, an early end and an
// end are both valid contenders for the lease account's second place:
// the second to arrive is a fork for votes to decide, and rolling the
// winner back lets the other apply.
func TestLeaseEarlyEndCompetesWithEnd(t *testing.T) {
	w := newLeaseWorld(t)
	r := w.active()
	n := w.notice(r, 1)
	end, _ := wallet.LeaseEnd(w.leaseHead(r.Hash), r, w.attest(ledger.PurposeEnd, r.Hash, r.End(), 3))
	early := w.earlyEnd(r, n, r.End()+100)
	w.ok(end)
	var fe *ledger.ForkError
	if err := w.submit(early); !errors.As(err, &fe) {
		t.Fatalf("early end beside an end: %v, want a fork", err)
	}
	if err := w.rollback(ledger.LeaseAccount(r.Hash)); err != nil {
		t.Fatal(err)
	}
	w.ok(early)
	if rec := w.record(r.Hash); !rec.EndedEarly() || rec.Second != early.Hash {
		t.Fatalf("record after the fork turned: %+v", rec)
	}
	w.audit()
}

// TestLeaseEarlyEndRollback rolls a lease that ended early back from its
// consumer's chain: the cascade takes the payouts' receives, the
// remainder, the early end, the notice, the start, the accept and the
// lease, and the ledger is as before.
func TestLeaseEarlyEndRollback(t *testing.T) {
	w := newLeaseWorld(t)
	before, keep, height := w.beforeLease()
	r := w.active()
	early := w.ok(w.earlyEnd(r, w.notice(r, 2), r.StartTime+30_000))
	rem := w.ok(wallet.LeaseRemainder(w.leaseHead(r.Hash), w.record(r.Hash)))
	w.takePending(w.provider, early)
	w.takePending(w.consumer, rem)
	w.audit()
	// Rolling the early end back alone puts the notice back in pending
	// and the lease back in its term, live again.
	w2 := newLeaseWorld(t)
	r2 := w2.active()
	n2 := w2.notice(r2, 2)
	w2.ok(w2.earlyEnd(r2, n2, r2.StartTime+30_000))
	if err := w2.rollback(ledger.LeaseAccount(r2.Hash)); err != nil {
		t.Fatal(err)
	}
	if rec := w2.record(r2.Hash); rec.Status() != "active" || !rec.Live() || rec.EndedEarly() || !rec.Refund.IsZero() {
		t.Fatalf("record after the early end's rollback: %+v", rec)
	}
	if _, found, _ := w2.m.Pending(ledger.LeaseAccount(r2.Hash), n2.Hash); !found {
		t.Error("the notice is not pending again")
	}
	w2.audit()

	// receive of the remainder, remainder, receive of the payout, early
	// end, notice, start, accept, lease
	w.rollBackConsumer(height, 8, keep, before)
}

// TestLeaseRecordBinaryEarly: a record of a lease that ended early round
// trips as version 2; one without an early end stays version 1.
func TestLeaseRecordBinaryEarly(t *testing.T) {
	r := ledger.LeaseRecord{Hash: ledger.Hash{1}, Consumer: ledger.Address{2}, Provider: ledger.Address{3}, Duration: 60,
		Cost: ledger.NewAmount(7), Stake: ledger.NewAmount(4), Accept: ledger.Hash{4}, StartTime: 12, Stage: ledger.StageEnded,
		First: ledger.Hash{5}, Second: ledger.Hash{6}, EndTime: 13, Notice: ledger.Hash{7}, Refund: ledger.NewAmount(5), Third: ledger.Hash{8}}
	raw, _ := r.MarshalBinary()
	var back ledger.LeaseRecord
	if err := back.UnmarshalBinary(raw); err != nil || back != r || raw[0] != 2 {
		t.Fatalf("round trip: %v, %+v (version %d)", err, back, raw[0])
	}
	if err := back.UnmarshalBinary(raw[:len(raw)-1]); err == nil {
		t.Error("accepted a short version 2 record")
	}
	r.Notice, r.Refund, r.Third = ledger.Hash{}, ledger.Amount{}, ledger.Hash{}
	if raw, _ = r.MarshalBinary(); raw[0] != 1 {
		t.Errorf("a record without an early end is version %d, want 1", raw[0])
	}
}
