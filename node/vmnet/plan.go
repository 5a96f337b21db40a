package vmnet

import (
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodewire"
)

// The provider's rules for a lease's machine, apart from the I/O that
// carries them out: Service.step reads a view (the ledger's lease, the
// provider's record of its machine, whether a machine is up) and does
// what decide makes of it, and nothing else.

// view is what decide decides from.
type view struct {
	// lease is the ledger's lease, nil when it is not in the ledger.
	lease *ledger.LeaseRecord
	// ours reports whether lease names this provider, and this node of
	// its (the accept's certificate).
	ours bool
	// rec is the provider's record of the lease's machine, nil when it
	// has none.
	rec *record
	// busy reports whether a machine is up, or on its way up or down.
	busy bool
	// confirmed reports whether a block is confirmed (the node's store).
	// decide asks it only of the block its case turns on: the lease's
	// accept while it runs, its settlement (settlement) once it is over
	// and until its machine's files are deleted.
	confirmed func(ledger.Hash) (bool, error)
	// now and retain are in milliseconds: the provider's clock, and how
	// long a record outlives its machine's files (Config.Retain).
	now, retain int64
	// image is the image a new machine boots (Config.Image).
	image string
}

// plan is what a lease's machine needs now. step carries it out in the
// order of the fields, and logs once the files are deleted (if they are
// to be).
type plan struct {
	// delete deletes the machine's files.
	delete bool
	// forget forgets the record (after delete, when both are set); step
	// does nothing else then.
	forget bool
	// create is a record to write for a lease that has none.
	create *record
	// edit changes the record. It is applied to the record as it is when
	// written, which the machine's boot and stop change meanwhile.
	edit func(*record)
	// stop powers the machine off, or cancels its boot.
	stop bool
	// boot boots the machine, if its record, once edited, is neither
	// stopped nor in error (bootable).
	boot bool
	// log is what the provider's log says of the step, with attrs, at
	// warning level when warn is set; empty when nothing is worth a line.
	log   string
	attrs []any
	warn  bool
}

// also adds edit to p's edit, to be applied after it.
func (p *plan) also(edit func(*record)) {
	if prev := p.edit; prev != nil {
		p.edit = func(c *record) { prev(c); edit(c) }
		return
	}
	p.edit = edit
}

// bootable reports whether a machine with record c may boot: one stopped
// is booted only once a step's edit says so, one in error never.
func bootable(c *record) bool {
	return c.VM.Status != nodewire.VMStopped && c.VM.Status != nodewire.VMError
}

// stopped records a machine stopped, unless it is stopped or in error
// already: a boot or a stop that has just recorded it in error, between
// the step's look at it and this edit, keeps that error and its reason.
func stopped(c *record) {
	if bootable(c) {
		c.VM.Status, c.VM.Error = nodewire.VMStopped, ""
	}
}

// decide returns what lease v.lease's machine needs now. Its error is
// v.confirmed's.
func decide(v view) (plan, error) {
	var p plan
	r, rec := v.lease, v.rec
	// clock is the time a lease's time is judged by: the provider's, or
	// the latest the timekeepers attested to this record if that is
	// later (a provider whose clock lags theirs would otherwise boot a
	// machine again whose lease's end was attested and then rolled back
	// by a fork, only to stop it when its own clock caught up).
	clock := v.now
	if rec != nil {
		clock = max(clock, rec.Attested)
	}
	switch {
	case r == nil || !r.Accepted() || !v.ours:
		// The lease or its accept lost a fork (or names another node of
		// this provider): nothing to serve. The files are kept for
		// retain, in case the fork turns back, then deleted.
		switch {
		case rec == nil:
		case v.busy:
			p.stop = true
		case rec.RolledBackAt == 0:
			p.log, p.warn = "vm stopped: its lease's accept is not in the ledger", true
			now := v.now
			p.edit = func(c *record) {
				c.RolledBackAt = now
				if c.VM.Status != nodewire.VMError {
					c.VM.Status, c.VM.Error = nodewire.VMStopped, "the lease's accept is not in the ledger (rolled back by a fork)"
				}
			}
		case v.now-rec.RolledBackAt >= v.retain:
			p.delete, p.forget = true, true
			p.log = "vm forgotten: its lease was rolled back"
		}
		return p, nil
	case r.Settled():
		if rec == nil {
			return p, nil
		}
		if r.EndTime > rec.Attested {
			// The timekeepers attested the settlement's time: it stands
			// if the settlement is rolled back (clock).
			t := r.EndTime
			p.also(func(c *record) { c.Attested = max(c.Attested, t) })
		}
		if r.EndedEarly() && rec.VM.EndsAt != r.EndTime {
			// The machine's end is its lease's: the early end's time.
			end := r.EndTime
			p.also(func(c *record) { c.VM.EndsAt = end })
		}
		switch {
		case v.busy:
			p.stop = true
		case bootable(rec):
			p.also(stopped)
		case !rec.Deleted:
			confirmed, err := v.confirmed(settlement(r))
			if err != nil {
				return plan{}, err
			}
			if !confirmed {
				return p, nil
			}
			p.delete = true
			p.log, p.attrs = "vm deleted: its lease is settled", []any{"status", r.Status()}
			now := v.now
			p.also(func(c *record) { c.Deleted, c.DeletedAt = true, now })
		case v.now-rec.DeletedAt >= v.retain:
			p.forget, p.edit = true, nil
		}
		return p, nil
	case clock >= r.End() || r.Stage == ledger.StageOpen && clock >= r.Deadline():
		// The lease's time is up (its end block follows, package
		// leasenet, or it came and was rolled back), or it was never
		// started in time (a refund follows): the machine stops now,
		// whatever the ledger says yet.
		switch {
		case rec == nil:
		case v.busy:
			p.stop = true
		case bootable(rec):
			p.edit = stopped
		}
		return p, nil
	}
	// Accepted and live: the machine runs once the accept is confirmed.
	if confirmed, err := v.confirmed(r.Accept); err != nil || !confirmed {
		return p, err
	}
	if rec == nil {
		p.create = &record{VM: nodewire.VM{LeaseHash: r.Hash, Status: nodewire.VMProvisioning, CreatedAt: v.now,
			Resources: nodewire.Resources{VCPUs: r.VCPUs, MemoryMB: r.MemoryMB, DiskGB: r.DiskGB},
			Provider:  r.Provider, Image: v.image}}
	}
	// A machine stopped while its lease is accepted and live comes back:
	// every stop is for its accept rolled back (RolledBackAt), its lease
	// settled or its time up, and the cases above rule out the last two,
	// so what stopped it has left the ledger (a consumer's early-end
	// notice that lost a fork: the lease runs on, paid for). It boots
	// again on its files, which only a confirmed settlement deletes. A
	// machine in error stays so: the fork did not fail it.
	returned := rec != nil && !rec.Deleted && rec.VM.Status != nodewire.VMError &&
		(rec.RolledBackAt != 0 || rec.VM.Status == nodewire.VMStopped)
	if returned && !v.busy {
		p.log = "vm booted again: what stopped it was rolled back by a fork"
	}
	active, end := r.Stage == ledger.StageActive, r.End()
	p.edit = func(c *record) {
		if active {
			c.VM.EndsAt = end
		}
		c.RolledBackAt = 0 // accepted and live: nothing is rolled back
		if returned {
			// A boot of its own, not a restart after its guest's exit
			// (which a stop between the exit and the boot cut short).
			c.VM.Status, c.VM.Error, c.Restarting = nodewire.VMProvisioning, "", false
		}
	}
	p.boot = !v.busy
	return p, nil
}

// settlement is the block of lease r's account that settled it: the
// second (its end), or the first for a refund; zero while it runs.
func settlement(r *ledger.LeaseRecord) ledger.Hash {
	switch r.Stage {
	case ledger.StageEnded:
		return r.Second
	case ledger.StageRefunded:
		return r.First
	}
	return ledger.Hash{}
}
