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

// step does what lease h's machine needs now (decide).
func (s *Service) step(ctx context.Context, h ledger.Hash) error {
	v, err := s.view(h)
	if err != nil {
		return err
	}
	p, err := decide(v)
	if err != nil {
		return err
	}
	if p.delete {
		if err := s.cfg.Driver.Delete(vmID(h)); err != nil {
			return err
		}
	}
	switch {
	case p.log == "":
	case p.warn:
		s.log.Warn(p.log, append([]any{"lease", h}, p.attrs...)...)
	default:
		s.log.Info(p.log, append([]any{"lease", h}, p.attrs...)...)
	}
	if p.forget {
		return s.forget(h)
	}
	if p.create != nil {
		if err := s.create(p.create); err != nil {
			return err
		}
	}
	if p.edit != nil {
		if err := s.update(h, p.edit); err != nil {
			return err
		}
	}
	if p.stop {
		s.stop(h, "")
	}
	if p.boot {
		if rec, ok := s.recordOf(h); ok && bootable(rec) {
			s.boot(h, v.lease)
		}
	}
	return nil
}

// view reads what decide needs to know of lease h.
func (s *Service) view(h ledger.Hash) (view, error) {
	r, found, err := ledger.GetLease(s.n.Store, h)
	if err != nil {
		return view{}, err
	}
	v := view{now: s.cfg.Now().UnixMilli(), retain: s.cfg.Retain.Milliseconds(), image: s.cfg.Image,
		confirmed: func(b ledger.Hash) (bool, error) {
			_, _, confirmed, err := s.n.Store.EntryConfirmed(b)
			return confirmed, err
		}}
	if found {
		v.lease = r
		v.ours = r.Provider == s.cfg.Provider.Address() && r.CertificateHash == certificate(s.h.ID())
	}
	s.mu.Lock()
	v.rec = s.records[h] // (a record is replaced when it changes, never changed in place)
	_, booted := s.machines[h]
	_, booting := s.booting[h]
	v.busy = booted || booting || s.stopping[h]
	s.mu.Unlock()
	return v, nil
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
