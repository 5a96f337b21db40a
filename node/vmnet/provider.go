package vmnet

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/machine/qemu"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/nodewire"
)

// watch looks over the machines at once when the ledger changes.
func (s *Service) watch(ctx context.Context, sub *node.Subscription) {
	sub.Follow(ctx, func(*node.Change) { s.poke() })
}

func (s *Service) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// loop brings the provider's machines in line with its leases at every
// change of the ledger and every Tick; starting, it boots again what was
// running before a restart.
func (s *Service) loop(ctx context.Context) {
	tick := time.NewTicker(s.cfg.Tick)
	defer tick.Stop()
	for {
		s.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.kick:
		}
	}
}

// vmID is the driver's id of lease h's machine: the hash's first 96
// bits, short enough for the machine's socket paths (a Unix socket's path
// is at most 107 bytes) under a data directory of a usual length.
func vmID(h ledger.Hash) string { return h.String()[:24] }

// VMID is the driver's id of lease h's machine (the name of its folder
// under DATA/machines/vms).
func VMID(h ledger.Hash) string { return vmID(h) }

// pass looks at every lease that has or may need a machine: the
// provider's live leases and those with a record.
func (s *Service) pass(ctx context.Context) {
	me := s.cfg.Provider.Address()
	todo := map[ledger.Hash]bool{}
	err := s.n.Store.States(ledger.LeaseLive, string(me[:]), "", func(key string, _ []byte) error {
		var h ledger.Hash
		copy(h[:], key[len(me):])
		todo[h] = true
		return nil
	})
	if err != nil {
		s.log.Warn("reading the provider's leases", "err", err)
		return
	}
	s.mu.Lock()
	for h := range s.records {
		todo[h] = true
	}
	s.mu.Unlock()
	for h := range todo {
		if ctx.Err() != nil {
			return
		}
		if err := s.step(ctx, h); err != nil {
			s.log.Warn("vm step", "lease", h, "err", err)
		}
	}
}

// step does what lease h's machine needs now.
func (s *Service) step(ctx context.Context, h ledger.Hash) error {
	r, found, err := ledger.GetLease(s.n.Store, h)
	if err != nil {
		return err
	}
	s.mu.Lock()
	rec := s.records[h]
	_, booted := s.machines[h]
	_, booting := s.booting[h]
	busy := booted || booting || s.stopping[h] // a machine, or one on its way up or down
	s.mu.Unlock()
	now := s.cfg.Now().UnixMilli()
	switch {
	case !found || !r.Accepted() || r.Provider != s.cfg.Provider.Address() || r.CertificateHash != certificate(s.h.ID()):
		// The lease or its accept lost a fork (or names another node of
		// this provider): nothing to serve. The disk is kept for Retain,
		// in case the fork turns back, then deleted.
		if rec == nil {
			return nil
		}
		if busy {
			s.stop(h, "")
			return nil
		}
		if rec.RolledBackAt == 0 {
			s.log.Warn("vm stopped: its lease's accept is not in the ledger", "lease", h)
			return s.update(h, func(c *record) {
				c.RolledBackAt = now
				if c.VM.Status != nodewire.VMError {
					c.VM.Status, c.VM.Error = nodewire.VMStopped, "the lease's accept is not in the ledger (rolled back by a fork)"
				}
			})
		}
		if now-rec.RolledBackAt < s.cfg.Retain.Milliseconds() {
			return nil
		}
		if err := s.cfg.Driver.Delete(vmID(h)); err != nil {
			return err
		}
		s.log.Info("vm forgotten: its lease was rolled back", "lease", h)
		return s.forget(h)
	case r.Settled():
		if rec == nil {
			return nil
		}
		if r.EndedEarly() && rec.VM.EndsAt != r.EndTime {
			// The machine's end is its lease's: the early end's time.
			if err := s.update(h, func(c *record) { c.VM.EndsAt = r.EndTime }); err != nil {
				return err
			}
		}
		if busy {
			s.stop(h, "")
			return nil
		}
		if rec.VM.Status != nodewire.VMStopped && rec.VM.Status != nodewire.VMError {
			return s.setStatus(h, nodewire.VMStopped, "")
		}
		settle := r.Second
		if r.Stage == ledger.StageRefunded {
			settle = r.First
		}
		if !rec.Deleted {
			if _, _, confirmed, err := s.n.Store.EntryConfirmed(settle); err != nil || !confirmed {
				return err
			}
			if err := s.cfg.Driver.Delete(vmID(h)); err != nil {
				return err
			}
			s.log.Info("vm deleted: its lease is settled", "lease", h, "status", r.Status())
			return s.update(h, func(c *record) { c.Deleted, c.DeletedAt = true, now })
		}
		if now-rec.DeletedAt >= s.cfg.Retain.Milliseconds() {
			return s.forget(h)
		}
		return nil
	case now >= r.End() || r.Stage == ledger.StageOpen && now >= r.Deadline():
		// The lease's time is up (its end block follows, package
		// leasenet), or it was never started in time (a refund follows):
		// the machine stops now, whatever the ledger says yet.
		if rec != nil && busy {
			s.stop(h, "")
		} else if rec != nil && rec.VM.Status != nodewire.VMStopped && rec.VM.Status != nodewire.VMError {
			return s.setStatus(h, nodewire.VMStopped, "")
		}
		return nil
	}
	// Accepted and live: the machine runs once the accept is confirmed.
	if _, _, confirmed, err := s.n.Store.EntryConfirmed(r.Accept); err != nil || !confirmed {
		return err
	}
	if rec == nil {
		fresh := record{VM: nodewire.VM{LeaseHash: h, Status: nodewire.VMProvisioning, CreatedAt: now,
			Resources: nodewire.Resources{VCPUs: r.VCPUs, MemoryMB: r.MemoryMB, DiskGB: r.DiskGB},
			Provider:  r.Provider, Image: s.cfg.Image}}
		if err := s.create(&fresh); err != nil {
			return err
		}
	}
	// A machine stopped while its lease is accepted and live comes back:
	// every stop is for its accept rolled back (RolledBackAt), its lease
	// settled or its time up, and the cases above rule out the last two,
	// so what stopped it has left the ledger (a consumer's early-end
	// notice that lost a fork: the lease runs on, paid for). It boots
	// again on its disk, which only a confirmed settlement deletes. A
	// machine in error stays so: the fork did not fail it.
	returned := rec != nil && !rec.Deleted && rec.VM.Status != nodewire.VMError &&
		(rec.RolledBackAt != 0 || rec.VM.Status == nodewire.VMStopped)
	if returned && !busy {
		s.log.Info("vm booted again: what stopped it was rolled back by a fork", "lease", h)
	}
	err = s.update(h, func(c *record) {
		if r.Stage == ledger.StageActive {
			c.VM.EndsAt = r.End()
		}
		c.RolledBackAt = 0 // accepted and live: nothing is rolled back
		if returned {
			// A boot of its own, not a restart after its guest's exit
			// (which a stop between the exit and the boot cut short).
			c.VM.Status, c.VM.Error, c.Restarting = nodewire.VMProvisioning, "", false
		}
	})
	if err != nil {
		return err
	}
	rec, _ = s.recordOf(h)
	if busy || rec == nil || rec.VM.Status == nodewire.VMError || rec.VM.Status == nodewire.VMStopped {
		return nil
	}
	s.boot(h, r)
	return nil
}

func (s *Service) recordOf(h ledger.Hash) (*record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[h]
	return r, ok
}

// setStatus records lease h's VM's status, with the reason of an error.
func (s *Service) setStatus(h ledger.Hash, status, reason string) error {
	return s.update(h, func(c *record) { c.VM.Status, c.VM.Error = status, reason })
}

// boot starts lease r's machine in the background.
func (s *Service) boot(h ledger.Hash, r *ledger.LeaseRecord) {
	ctx, cancel := context.WithTimeout(s.ctx, StartTimeout)
	s.mu.Lock()
	s.booting[h] = cancel
	s.mu.Unlock()
	if err := s.setStatus(h, nodewire.VMProvisioning, ""); err != nil {
		s.log.Warn("vm record", "lease", h, "err", err)
	}
	access := r.AccessKey
	s.wg.Go(func() {
		defer cancel()
		start := time.Now()
		m, err := s.cfg.Driver.Start(ctx, vmID(h), qemu.Spec{VCPUs: int(r.VCPUs), MemoryMB: int(r.MemoryMB),
			DiskGB: int(r.DiskGB), Image: s.cfg.Image})
		if err == nil {
			err = s.authorize(ctx, m, access)
			if err != nil {
				sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), StopTimeout)
				m.Stop(sctx)
				scancel()
			}
		}
		s.mu.Lock()
		delete(s.booting, h)
		stopping := s.stopping[h]
		if err == nil && !stopping && s.ctx.Err() == nil {
			s.machines[h] = m
		}
		s.mu.Unlock()
		switch {
		case s.ctx.Err() != nil:
			if err == nil {
				sctx, scancel := context.WithTimeout(context.Background(), StopTimeout)
				m.Stop(sctx)
				scancel()
			}
			return // the record stays as it was: the next start boots it
		case stopping:
			if err == nil {
				sctx, scancel := context.WithTimeout(context.Background(), StopTimeout)
				m.Stop(sctx)
				scancel()
			}
			s.mu.Lock()
			delete(s.stopping, h)
			s.mu.Unlock()
			s.setStatus(h, nodewire.VMStopped, "")
			s.poke()
			return
		case err != nil:
			s.log.Warn("vm boot failed", "lease", h, "err", err)
			if rec, _ := s.recordOf(h); rec != nil && rec.Restarting {
				// Booting again after a stop: tried again, as a stop
				// is, up to the limit.
				s.exited(h, "boot: "+publicReason(err))
				s.poke()
				return
			}
			s.setStatus(h, nodewire.VMError, "boot: "+publicReason(err))
			return
		}
		s.log.Info("vm running", "lease", h, "boot", time.Since(start).Round(time.Millisecond))
		err = s.update(h, func(c *record) {
			c.VM.Status, c.VM.Error = nodewire.VMRunning, ""
			if c.Restarting {
				c.VM.Restarts++
				c.Restarting = false
			}
		})
		if err != nil {
			s.log.Warn("vm record", "lease", h, "err", err)
		}
		s.wg.Go(func() { s.reap(h, m) })
	})
}

// authorize lets the lease's access key log in over SSH, on an image
// that has an SSH server, and waits until that server listens: the key is
// an ed25519 key, so the consumer's wallet key is its SSH key too
// (lattice key ssh writes it). At every boot of the machine, the first
// and those after a restart, it adds the key and keeps every other key
// the consumer authorized (cloud Compute on leases puts its users' keys
// there).
func (s *Service) authorize(ctx context.Context, m Machine, key ledger.Address) error {
	if !imageHasSSH(s.cfg.Image) {
		return nil
	}
	pub, err := ssh.NewPublicKey(ed25519.PublicKey(key[:]))
	if err != nil {
		return err
	}
	line := ssh.MarshalAuthorizedKey(pub)
	res, err := m.Exec(ctx, []string{"/bin/sh", "-c", addKeyScript, "/root/.ssh"}, line, 30*time.Second)
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit code %d: %s", res.ExitCode, res.Stderr)
	}
	if err != nil {
		return fmt.Errorf("installing the access key for SSH: %w", err)
	}
	// Running means ready: the guest's SSH server starts a moment after
	// its agent answers.
	for {
		conn, err := m.Dial(ctx, 22)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the guest's SSH server never listened: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// addKeyScript, run by sh -c with a directory as $0 and an
// authorized_keys line on stdin, adds the line to DIR/authorized_keys
// unless it is there, keeping the lines before it (and ending the last
// of them if it was not), through a new file synced and renamed into
// place; a file it cannot read fails it, and is left as it was.
const addKeyScript = `umask 077 && mkdir -p "$0" && k="$0/authorized_keys" && read -r line &&
if ! grep -qxF -- "$line" "$k" 2>/dev/null; then
	{ if [ -e "$k" ]; then cat "$k" || exit 1; fi; if [ -s "$k" ] && [ -n "$(tail -c 1 "$k")" ]; then echo; fi; printf '%s\n' "$line"; } > "$k.new" && sync "$k.new" && mv "$k.new" "$k"
fi`

func imageHasSSH(name string) bool {
	for _, img := range qemu.Images() {
		if img.Name == name {
			return img.SSH
		}
	}
	return false
}

// reap waits for machine m to exit. An exit nobody asked for (its guest
// powered off, rebooted or panicked, which QEMU's -no-reboot makes alike,
// or QEMU died) leaves the machine to be booted again on its disk by the
// next pass, as long as its lease runs (exited).
func (s *Service) reap(h ledger.Hash, m Machine) {
	select {
	case <-s.ctx.Done():
		return // Close stops it
	case <-m.Done():
	}
	s.mu.Lock()
	ours := s.machines[h] == m
	s.mu.Unlock()
	if !ours {
		return // stopped on purpose (stop took it out first)
	}
	// The log has the whole story; the record, which every node serves
	// without a credential, its first line.
	reason, public := "the machine exited", "the machine exited"
	err := m.Err()
	if err != nil {
		reason, public = err.Error(), publicReason(err)
	}
	if errors.Is(err, qemu.ErrGuestStopped) {
		// Most often its user powered it off or rebooted it: news, not a
		// fault of the provider's.
		s.log.Info("vm stopped by its guest", "lease", h, "err", reason)
	} else {
		s.log.Warn("vm exited unasked", "lease", h, "err", reason)
	}
	// The machine stays in s.machines while its record changes, so that
	// a pass meanwhile finds it busy (and stops it if its lease is over)
	// rather than booting it, or recording it stopped, under the change.
	s.exited(h, public)
	s.mu.Lock()
	if s.machines[h] == m {
		delete(s.machines, h)
	}
	s.mu.Unlock()
	s.poke() // the next pass boots it again, or stops it if its lease is over
}

// exited records that lease h's machine stopped by itself (reap), or
// failed to boot again after it did (boot), for reason public. While its
// lease runs it is booted again by the next pass: a lease's machine is
// its consumer's for the lease's whole term, and the provider has no
// power button to offer. The RestartLimit+1st such stop within
// RestartWindow leaves it in error. A record that a pass stopped
// meanwhile (the lease is over, or rolled back) keeps its status.
func (s *Service) exited(h ledger.Hash, public string) {
	now := s.cfg.Now()
	s.mu.Lock()
	exits := recent(append(s.exits[h], now), now)
	s.exits[h] = exits
	s.mu.Unlock()
	err := s.update(h, func(c *record) {
		c.VM.LastExit, c.VM.LastExitAt = public, now.UnixMilli()
		if c.VM.Status != nodewire.VMRunning && c.VM.Status != nodewire.VMProvisioning || c.RolledBackAt != 0 {
			c.Restarting = false
			return
		}
		if len(exits) > RestartLimit {
			c.VM.Status, c.VM.Error = nodewire.VMError, fmt.Sprintf("%s (it stopped by itself %d times within %s, so it is not booted again)",
				public, len(exits), RestartWindow)
			c.Restarting = false
			return
		}
		c.VM.Status, c.VM.Error, c.Restarting = nodewire.VMProvisioning, "", true
	})
	if err != nil {
		s.log.Warn("vm record", "lease", h, "err", err)
	}
}

// recent is exits without those RestartWindow or more before now.
func recent(exits []time.Time, now time.Time) []time.Time {
	return slices.DeleteFunc(exits, func(t time.Time) bool { return now.Sub(t) >= RestartWindow })
}

// RestartLimit is how many times a lease's machine that stops by itself
// is booted again within RestartWindow; the count lives in the provider
// node's memory, so the node's restart starts it again.
const RestartLimit = 3

// RestartWindow is how far back the stops RestartLimit counts go.
const RestartWindow = 10 * time.Minute

// publicReason is what a VM record, which any node serves to anyone,
// says of err: its first line, without the tails of the guest's console
// and of QEMU's log that the machine driver appends (the guest's output
// is its lease holder's, and QEMU's names the provider's paths).
func publicReason(err error) string {
	first, _, _ := strings.Cut(err.Error(), "\n")
	return strings.TrimSpace(first)
}

// stop powers lease h's machine off in the background (or cancels its
// boot), then records it stopped, with reason as its error when set.
func (s *Service) stop(h ledger.Hash, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping[h] {
		return
	}
	if cancel, ok := s.booting[h]; ok {
		s.stopping[h] = true // the boot stops what it started
		cancel()
		return
	}
	m, ok := s.machines[h]
	if !ok {
		return
	}
	delete(s.machines, h) // no new command or tunnel reaches it
	s.stopping[h] = true
	// Open tunnels end with a reset, so their clients see them cut, not
	// finished. (Abort only resets the guest streams; the release each
	// does waits for s.mu, which the Splice goroutine takes later.)
	if u := s.inUse[h]; u != nil {
		for rel := range u.open {
			go rel.Reset()
		}
	}
	s.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), StopTimeout)
		defer cancel()
		if err := m.Stop(ctx); err != nil {
			s.log.Warn("vm stop", "lease", h, "err", err)
		}
		s.mu.Lock()
		delete(s.stopping, h)
		s.mu.Unlock()
		status := nodewire.VMStopped
		if reason != "" {
			status = nodewire.VMError
		}
		s.setStatus(h, status, reason)
		s.log.Info("vm stopped", "lease", h)
		s.poke()
	})
}
