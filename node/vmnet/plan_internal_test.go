package vmnet

import (
	"errors"
	"slices"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodewire"
)

// TestDecide: the provider's rules for a lease's machine, case by case:
// what it stops, boots, records, deletes and forgets, for every place a
// lease can be in the ledger and every state its machine can be in.
func TestDecide(t *testing.T) {
	const (
		now    = int64(1_800_000_000_000)
		retain = int64(24 * 3600 * 1000)
		start  = now - 60_000
		dur    = 3600 // seconds
		end    = start + dur*1000
		notice = now - 5_000 // an early end's time
	)
	h := ledger.Hash{1}
	accept, first, second := ledger.Hash{3}, ledger.Hash{4}, ledger.Hash{5}
	// confirms confirms blocks, and records what decide asks of it.
	var asked []ledger.Hash
	confirms := func(blocks ...ledger.Hash) func(ledger.Hash) (bool, error) {
		return func(b ledger.Hash) (bool, error) {
			asked = append(asked, b)
			return slices.Contains(blocks, b), nil
		}
	}
	live := func(edits ...func(*ledger.LeaseRecord)) *ledger.LeaseRecord {
		r := &ledger.LeaseRecord{Hash: h, Provider: ledger.Address{2}, VCPUs: 1, MemoryMB: 512, DiskGB: 2,
			Duration: dur, Created: start - 10_000, AcceptTimeout: 300_000,
			Accept: accept, StartTime: start, Stage: ledger.StageActive, First: first}
		for _, e := range edits {
			e(r)
		}
		return r
	}
	open := func(r *ledger.LeaseRecord) { r.Stage, r.First = ledger.StageOpen, ledger.Hash{} }
	ended := func(r *ledger.LeaseRecord) { r.Stage, r.Second, r.EndTime = ledger.StageEnded, second, end }
	endedEarly := func(r *ledger.LeaseRecord) {
		r.Stage, r.Second, r.EndTime, r.Notice = ledger.StageEnded, second, notice, ledger.Hash{6}
	}
	refunded := func(r *ledger.LeaseRecord) { r.Stage, r.First, r.EndTime = ledger.StageRefunded, first, start }
	timeUp := func(r *ledger.LeaseRecord) { r.StartTime = now - dur*1000 }
	unaccepted := func(r *ledger.LeaseRecord) {
		r.Accept, r.StartTime, r.Stage, r.First = ledger.Hash{}, 0, ledger.StageOpen, ledger.Hash{}
	}

	machine := func(status string, edits ...func(*record)) *record {
		c := &record{VM: nodewire.VM{LeaseHash: h, Status: status, CreatedAt: start, EndsAt: end, Image: "minimal"}}
		for _, e := range edits {
			e(c)
		}
		return c
	}
	with := func(r *record, edits ...func(*record)) *record {
		c := *r
		for _, e := range edits {
			e(&c)
		}
		return &c
	}
	rolledBack := func(at int64) func(*record) { return func(c *record) { c.RolledBackAt = at } }
	failed := func(c *record) { c.VM.Error = "boot: the guest agent never answered" }
	status := func(s, reason string) func(*record) { return func(c *record) { c.VM.Status, c.VM.Error = s, reason } }
	restarting := func(c *record) { c.Restarting = true }
	deleted := func(at int64) func(*record) { return func(c *record) { c.Deleted, c.DeletedAt = true, at } }
	endsAt := func(t int64) func(*record) { return func(c *record) { c.VM.EndsAt = t } }
	attested := func(t int64) func(*record) { return func(c *record) { c.Attested = t } }
	const (
		gone     = "the lease's accept is not in the ledger (rolled back by a fork)"
		warnGone = "vm stopped: its lease's accept is not in the ledger"
		booted   = "vm booted again: what stopped it was rolled back by a fork"
	)

	type want struct {
		stop, delete, forget, boots bool
		// log is the line logged, "" for none.
		log string
		// after is the record once the step's edit (or create) is
		// written; nil when the step writes none.
		after *record
	}
	cases := []struct {
		name string
		v    view
		want want
	}{
		// The lease, or its accept, is not in the ledger.
		{"no lease, no machine", view{}, want{}},
		{"no lease: the machine up is stopped", view{rec: machine(nodewire.VMRunning), busy: true}, want{stop: true}},
		{"accept rolled back: recorded stopped", view{lease: live(unaccepted), ours: true, rec: machine(nodewire.VMRunning)},
			want{log: warnGone, after: machine(nodewire.VMStopped, rolledBack(now), status(nodewire.VMStopped, gone))}},
		{"accept rolled back: a machine in error stays so", view{lease: live(unaccepted), ours: true, rec: machine(nodewire.VMError, failed)},
			want{log: warnGone, after: machine(nodewire.VMError, failed, rolledBack(now))}},
		{"another node of the provider's: like a rollback", view{lease: live(), ours: false, rec: machine(nodewire.VMStopped)},
			want{log: warnGone, after: machine(nodewire.VMStopped, rolledBack(now), status(nodewire.VMStopped, gone))}},
		{"rolled back within retain: kept", view{rec: machine(nodewire.VMStopped, rolledBack(now-retain+1))}, want{}},
		{"rolled back for retain: deleted and forgotten", view{rec: machine(nodewire.VMStopped, rolledBack(now-retain))},
			want{delete: true, forget: true, log: "vm forgotten: its lease was rolled back"}},

		// Settled: ended, ended early or refunded. The settlement's
		// attested time is recorded (the provider's clock, now, lags it in
		// the ended cases).
		{"ended, no machine", view{lease: live(ended), ours: true}, want{}},
		{"ended: the machine up is stopped", view{lease: live(ended), ours: true, rec: machine(nodewire.VMRunning), busy: true},
			want{stop: true, after: machine(nodewire.VMRunning, attested(end))}},
		{"ended early: stopped, ending at the notice", view{lease: live(endedEarly), ours: true, rec: machine(nodewire.VMRunning), busy: true},
			want{stop: true, after: machine(nodewire.VMRunning, endsAt(notice), attested(notice))}},
		{"ended, the machine down: recorded stopped", view{lease: live(ended), ours: true, rec: machine(nodewire.VMRunning)},
			want{after: machine(nodewire.VMStopped, attested(end))}},
		{"ended, settlement unconfirmed: the attested end recorded", view{lease: live(ended), ours: true, rec: machine(nodewire.VMStopped)},
			want{after: machine(nodewire.VMStopped, attested(end))}},
		{"ended, settlement unconfirmed, its end recorded: files kept", view{lease: live(ended), ours: true, rec: machine(nodewire.VMStopped, attested(end))},
			want{}},
		{"ended, settlement confirmed: files deleted", view{lease: live(ended), ours: true, rec: machine(nodewire.VMStopped, attested(end)), confirmed: confirms(second)},
			want{delete: true, log: "vm deleted: its lease is settled", after: machine(nodewire.VMStopped, attested(end), deleted(now))}},
		{"refunded, a machine in error: files deleted", view{lease: live(refunded), ours: true, rec: machine(nodewire.VMError, failed), confirmed: confirms(first)},
			want{delete: true, log: "vm deleted: its lease is settled", after: machine(nodewire.VMError, failed, attested(start), deleted(now))}},
		{"deleted within retain: kept", view{lease: live(ended), ours: true, rec: machine(nodewire.VMStopped, attested(end), deleted(now-retain+1)), confirmed: confirms(second)},
			want{}},
		{"deleted for retain: forgotten", view{lease: live(ended), ours: true, rec: machine(nodewire.VMStopped, attested(end), deleted(now-retain)), confirmed: confirms(second)},
			want{forget: true}},
		{"ended early, deleted for retain: forgotten, nothing else", view{lease: live(endedEarly), ours: true,
			rec: machine(nodewire.VMStopped, deleted(now-retain)), confirmed: confirms(second)},
			want{forget: true}},

		// Time is up, before the ledger says so.
		{"time up: the machine up is stopped", view{lease: live(timeUp), ours: true, rec: machine(nodewire.VMRunning), busy: true, confirmed: confirms(accept)},
			want{stop: true}},
		{"time up, the machine down: recorded stopped", view{lease: live(timeUp), ours: true, rec: machine(nodewire.VMProvisioning, restarting), confirmed: confirms(accept)},
			want{after: machine(nodewire.VMStopped, restarting)}},
		{"time up, stopped: nothing", view{lease: live(timeUp), ours: true, rec: machine(nodewire.VMStopped), confirmed: confirms(accept)}, want{}},
		{"end rolled back, the provider's clock behind: stays stopped", view{lease: live(), ours: true, confirmed: confirms(accept),
			rec: machine(nodewire.VMStopped, attested(end))}, want{}},
		{"end rolled back, still stopping: stopped", view{lease: live(), ours: true, confirmed: confirms(accept),
			rec: machine(nodewire.VMRunning, attested(end)), busy: true}, want{stop: true}},
		{"never started in time: nothing boots", view{lease: live(open, func(r *ledger.LeaseRecord) { r.Created = now - 300_000 }), ours: true, confirmed: confirms(accept)},
			want{}},

		// Accepted and live.
		{"accept unconfirmed: nothing yet", view{lease: live(), ours: true}, want{}},
		{"accepted: a new machine boots", view{lease: live(), ours: true, confirmed: confirms(accept), image: "minimal"},
			want{boots: true, after: &record{VM: nodewire.VM{LeaseHash: h, Status: nodewire.VMProvisioning, CreatedAt: now, EndsAt: end,
				Resources: nodewire.Resources{VCPUs: 1, MemoryMB: 512, DiskGB: 2}, Provider: ledger.Address{2}, Image: "minimal"}}}},
		{"accepted, not started: no end yet", view{lease: live(open), ours: true, confirmed: confirms(accept), image: "minimal"},
			want{boots: true, after: &record{VM: nodewire.VM{LeaseHash: h, Status: nodewire.VMProvisioning, CreatedAt: now,
				Resources: nodewire.Resources{VCPUs: 1, MemoryMB: 512, DiskGB: 2}, Provider: ledger.Address{2}, Image: "minimal"}}}},
		{"running: left alone", view{lease: live(), ours: true, confirmed: confirms(accept), rec: machine(nodewire.VMRunning), busy: true},
			want{after: machine(nodewire.VMRunning)}},
		{"started meanwhile: its end recorded", view{lease: live(), ours: true, confirmed: confirms(accept), rec: machine(nodewire.VMRunning, endsAt(0)), busy: true},
			want{after: machine(nodewire.VMRunning)}},
		{"its guest stopped it: booted again, a restart", view{lease: live(), ours: true, confirmed: confirms(accept), rec: machine(nodewire.VMProvisioning, restarting)},
			want{boots: true, after: machine(nodewire.VMProvisioning, restarting)}},
		{"accept back after a rollback: booted again", view{lease: live(), ours: true, confirmed: confirms(accept),
			rec: machine(nodewire.VMStopped, rolledBack(now-1000), status(nodewire.VMStopped, gone))},
			want{boots: true, log: booted, after: machine(nodewire.VMProvisioning)}},
		{"accept back, still stopping: not booted under the stop", view{lease: live(), ours: true, confirmed: confirms(accept),
			rec: machine(nodewire.VMRunning, rolledBack(now-1000)), busy: true},
			want{after: machine(nodewire.VMProvisioning)}},
		{"early end rolled back: booted again, not a restart", view{lease: live(), ours: true, confirmed: confirms(accept),
			rec: machine(nodewire.VMStopped, endsAt(notice), attested(notice), restarting)},
			want{boots: true, log: booted, after: machine(nodewire.VMProvisioning, attested(notice))}},
		{"accept back to a machine in error: stays in error", view{lease: live(), ours: true, confirmed: confirms(accept),
			rec: machine(nodewire.VMError, failed, rolledBack(now-1000))},
			want{after: machine(nodewire.VMError, failed)}},
		{"in error: never booted", view{lease: live(), ours: true, confirmed: confirms(accept), rec: machine(nodewire.VMError, failed)},
			want{after: machine(nodewire.VMError, failed)}},
		{"settlement rolled back after its files went: not booted", view{lease: live(), ours: true, confirmed: confirms(accept),
			rec: machine(nodewire.VMStopped, deleted(now-1000))},
			want{after: machine(nodewire.VMStopped, deleted(now-1000))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.v.now, tc.v.retain = now, retain
			if tc.v.confirmed == nil {
				tc.v.confirmed = confirms()
			}
			asked = nil
			p, err := decide(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			// Only the block its case turns on: none for a lease that is
			// not there (or not ours), the settlement of a settled one, the
			// accept of one that runs.
			switch r := tc.v.lease; {
			case r == nil || !r.Accepted() || !tc.v.ours:
				if len(asked) > 0 {
					t.Errorf("asked for %v", asked)
				}
			case r.Settled():
				if slices.ContainsFunc(asked, func(b ledger.Hash) bool { return b != settlement(r) }) {
					t.Errorf("asked for %v; the settlement is %v", asked, settlement(r))
				}
			default:
				if slices.ContainsFunc(asked, func(b ledger.Hash) bool { return b != r.Accept }) {
					t.Errorf("asked for %v; the accept is %v", asked, r.Accept)
				}
			}
			if p.log != tc.want.log || p.warn != (tc.want.log == warnGone) {
				t.Errorf("log %q (warn %v), want %q", p.log, p.warn, tc.want.log)
			}
			if p.stop != tc.want.stop || p.delete != tc.want.delete || p.forget != tc.want.forget {
				t.Errorf("stop, delete, forget = %v, %v, %v; want %v, %v, %v", p.stop, p.delete, p.forget, tc.want.stop, tc.want.delete, tc.want.forget)
			}
			var after *record
			switch {
			case p.create != nil:
				after = with(p.create)
			case tc.v.rec != nil:
				after = with(tc.v.rec)
			}
			if p.create != nil && tc.v.rec != nil {
				t.Errorf("a record created for a lease that has one")
			}
			if p.edit != nil {
				if after == nil {
					t.Fatal("an edit for a lease with no record")
				}
				p.edit(after)
			}
			wrote := p.create != nil || p.edit != nil && *after != *tc.v.rec
			switch {
			case tc.want.after == nil && wrote:
				t.Errorf("record written: %+v; want none", *after)
			case tc.want.after != nil && !wrote && (tc.v.rec == nil || *tc.want.after != *tc.v.rec):
				t.Errorf("no record written; want %+v", *tc.want.after)
			case tc.want.after != nil && wrote && *after != *tc.want.after:
				t.Errorf("record\n got %+v\nwant %+v", *after, *tc.want.after)
			}
			if boots := p.boot && after != nil && bootable(after); boots != tc.want.boots {
				t.Errorf("boots = %v, want %v", boots, tc.want.boots)
			}
			if p.forget && (p.create != nil || p.edit != nil || p.stop || p.boot) {
				t.Errorf("forgets, and does more: %+v", p)
			}
		})
	}
}

// TestDecideStoreError: a store that cannot say whether a block is
// confirmed stops the step before it does anything.
func TestDecideStoreError(t *testing.T) {
	broken := errors.New("pebble: closed")
	r := &ledger.LeaseRecord{Hash: ledger.Hash{1}, Duration: 3600, Accept: ledger.Hash{3}, StartTime: 1_800_000_000_000,
		Stage: ledger.StageActive}
	for _, rec := range []*record{nil, {VM: nodewire.VM{LeaseHash: r.Hash, Status: nodewire.VMStopped}}} {
		lease := *r
		if rec != nil {
			lease.Stage, lease.Second, lease.EndTime = ledger.StageEnded, ledger.Hash{5}, r.End()
		}
		p, err := decide(view{lease: &lease, ours: true, rec: rec, now: r.StartTime + 1000, retain: 1000,
			confirmed: func(ledger.Hash) (bool, error) { return true, broken }})
		if !errors.Is(err, broken) {
			t.Errorf("stage %v: err = %v, want %v", lease.Stage, err, broken)
		}
		if p.delete || p.forget || p.create != nil || p.edit != nil || p.stop || p.boot {
			t.Errorf("stage %v: a plan beside the error: %+v", lease.Stage, p)
		}
	}
}
