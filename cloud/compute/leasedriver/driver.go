// Package leasedriver is the Compute service's second backend: a
// vmhost.Driver whose machines are leases bought on the ledger network.
// Starting a VM buys a lease of its size from the cheapest provider's
// offer, waits until the provider's node runs the lease's VM, and from
// then on reaches the guest through the network: commands through the
// node's exec endpoint, and SSH through a loopback listener on the
// platform's host whose every connection is a tunnel to the guest's port
// 22 (POST /tunnel on the node). The records stay the platform's
// (computestore); the lease each VM runs on is kept in the driver's own
// file, so a platform that restarts finds its VMs at their providers
// again.
//
// The driver speaks to the network through a Market, which the command
// line provides over a node's HTTP API: the cloud's wing never links the
// node's (docs/architecture.md).
package leasedriver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/latticenet/lattice/cloud/compute/computerules"
	"github.com/latticenet/lattice/cloud/compute/vmhost"
	"github.com/latticenet/lattice/machine/agent"
)

// Resources are a lease's size.
type Resources struct{ VCPUs, MemoryMB, DiskGB int }

// Lease is a lease the platform bought.
type Lease struct {
	Hash     string    `json:"hash"`
	Provider string    `json:"provider"`
	EndsAt   time.Time `json:"ends_at,omitzero"` // zero until the provider has started it
}

// LeaseState is a lease as the ledger has it.
type LeaseState struct {
	// Status is the ledger's: open, accepted, active, ended or refunded.
	Status string
	// AcceptDeadline is when an open lease may no longer be accepted
	// (it is refunded then).
	AcceptDeadline time.Time
	EndsAt         time.Time // zero until started
}

// Machine is a lease's VM as its provider's node reports it.
type Machine struct {
	// Status is the provider's: provisioning, running, stopped or error.
	Status string
	Error  string
	Image  string
	EndsAt time.Time
	// Restarts counts the provider's boots of the machine after its guest
	// stopped by itself (a reboot in it).
	Restarts int
}

// Market is what the driver needs of the ledger network, acting for the
// platform's ledger account, which pays for the leases and holds their
// access key.
type Market interface {
	// Buy leases r for d from the cheapest offer of a provider not in
	// exclude and returns once the lease block is in the node's ledger.
	Buy(ctx context.Context, r Resources, d time.Duration, exclude []string) (Lease, error)
	// Lease reports lease as the ledger has it; ErrUnknown when the
	// ledger does not hold it.
	Lease(ctx context.Context, lease string) (LeaseState, error)
	// Machine reports the VM of lease; ErrUnknown when no provider
	// runs one for it (yet).
	Machine(ctx context.Context, lease string) (Machine, error)
	// Exec runs command, a /bin/sh command line, in lease's VM;
	// ErrNotRunning when the VM is not running or stopped during it.
	Exec(ctx context.Context, lease, command string) (agent.ExecResult, error)
	// Dial opens a byte stream to port of lease's VM, through the network.
	Dial(ctx context.Context, lease string, port int) (net.Conn, error)
	// Settle settles lease, which must have ended: its provider is paid
	// and its stake returned.
	Settle(ctx context.Context, lease string) error
	// End ends lease early, if it is running: the platform's notice to
	// the lease account, after which the provider is paid for the time
	// served and the rest comes back to the platform's account. It
	// reports whether the lease is ending (a notice is in), false for a
	// lease that is not running (not started, or over).
	End(ctx context.Context, lease string) (bool, error)
}

// ErrNoOffer is a Market's answer when no provider made an offer: none
// is known yet (their records spread by gossip), or none has room.
var ErrNoOffer = errors.New("leasedriver: no offer")

// OfferWait is how long Start keeps asking for offers when none comes.
const OfferWait = 2 * time.Minute

// ErrUnknown is a Market's answer for a lease whose VM no provider
// reports.
var ErrUnknown = errors.New("leasedriver: no VM for this lease")

// ErrNotRunning is a Market's Exec answer for a VM that is not running,
// or stopped during the command (one that powers it off or reboots it).
var ErrNotRunning = errors.New("leasedriver: the VM is not running")

// Config configures a Driver.
type Config struct {
	Market Market
	// Dir holds the driver's file of leases (leases.json).
	Dir string
	// Duration is how long each lease runs; default one hour.
	Duration time.Duration
	// Image is the image the network's providers run (the lease does not
	// choose one; a provider runs its own): the only image VMs on this
	// backend can ask for. Default debian-12.
	Image computerules.Image
	// Poll is how often a running VM's lease is looked at; default 5 s.
	Poll   time.Duration
	Logger *slog.Logger
}

// Driver is the lease backend's vmhost.Driver.
type Driver struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	leases map[string]Lease // by VM id
	// wrongImage holds the providers found running another image: they
	// are not leased from again while this process runs.
	wrongImage map[string]string
}

// MinLeft is the least time a lease must have left for a VM to start on
// it again: a VM powered on with less gets a new lease.
const MinLeft = time.Minute

// DefaultDuration is a lease's length when Config.Duration is zero.
const DefaultDuration = time.Hour

// New opens the driver's file of leases in cfg.Dir.
func New(cfg Config) (*Driver, error) {
	if cfg.Market == nil {
		return nil, errors.New("leasedriver: no market")
	}
	if cfg.Duration == 0 {
		cfg.Duration = DefaultDuration
	}
	if cfg.Poll == 0 {
		cfg.Poll = 5 * time.Second
	}
	if cfg.Image.Name == "" {
		cfg.Image = computerules.Image{Name: "debian-12", Description: "Debian 12 with systemd and SSH, run by the provider", MinDiskGB: 5, MinMemoryMB: 512, SSH: true}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	d := &Driver{cfg: cfg, log: cfg.Logger, leases: map[string]Lease{}, wrongImage: map[string]string{}}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(d.file())
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(b, &d.leases); err != nil {
			return nil, fmt.Errorf("leasedriver: %s: %w", d.file(), err)
		}
	}
	return d, nil
}

func (d *Driver) file() string { return filepath.Join(d.cfg.Dir, "leases.json") }

// save writes the leases to their file atomically and durably: a
// temporary file, synced, renamed over the old one, the folder synced.
// The caller holds d.mu.
func (d *Driver) save() error {
	b, err := json.MarshalIndent(d.leases, "", "  ")
	if err != nil {
		return err
	}
	tmp := d.file() + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, d.file())
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("leasedriver: recording leases: %w", err)
	}
	if dir, err := os.Open(d.cfg.Dir); err == nil {
		dir.Sync()
		dir.Close()
	}
	return nil
}

// Place is the lease VM id runs on and its provider (vmhost.Placer).
func (d *Driver) Place(id string) (vmhost.Placement, bool) {
	l, ok := d.leaseOf(id)
	return vmhost.Placement{Lease: l.Hash, Provider: l.Provider, EndsAt: l.EndsAt}, ok
}

// leaseOf returns the lease VM id runs on, if any.
func (d *Driver) leaseOf(id string) (Lease, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	l, ok := d.leases[id]
	return l, ok
}

func (d *Driver) setLease(id string, l Lease) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.leases[id] = l
	return d.save()
}

// Start finds VM id at its provider again, or buys it a lease: a VM
// whose lease is still running (a platform restart, a power on after a
// stop) is the same machine; one without a lease, or whose lease has
// ended, was refunded or has less than MinLeft to run, gets a new one, a
// new machine from the provider's image. It returns once the provider's
// node reports the VM running.
func (d *Driver) Start(ctx context.Context, id string, spec vmhost.Spec) (vmhost.Machine, error) {
	if spec.Image != d.cfg.Image.Name {
		return nil, fmt.Errorf("the network's providers run %s, not %s", d.cfg.Image.Name, spec.Image)
	}
	l, ok := d.leaseOf(id)
	if ok {
		usable, err := d.usable(ctx, l)
		if err != nil {
			return nil, fmt.Errorf("lease %s: %w", l.Hash, err)
		}
		if !usable {
			d.log.Info("vm's lease is over; buying another", "vm", id, "lease", l.Hash)
			d.settle(ctx, l.Hash)
			ok = false
		}
	}
	if !ok {
		var err error
		d.log.Info("vm needs a lease; asking the network for offers", "vm", id)
		l, err = d.buy(ctx, Resources{VCPUs: spec.VCPUs, MemoryMB: spec.MemoryMB, DiskGB: spec.DiskGB})
		if err != nil {
			return nil, fmt.Errorf("buying a lease: %w", err)
		}
		if err := d.setLease(id, l); err != nil {
			return nil, err
		}
		d.log.Info("vm leased", "vm", id, "lease", l.Hash, "provider", l.Provider)
	}
	st, err := d.awaitRunning(ctx, l.Hash)
	if err != nil {
		return nil, fmt.Errorf("lease %s at provider %s: %w", l.Hash, l.Provider, err)
	}
	if st.Image != d.cfg.Image.Name {
		// Never again from this provider: the next start leases
		// elsewhere. This lease runs to its end unused.
		d.mu.Lock()
		d.wrongImage[l.Provider] = st.Image
		delete(d.leases, id)
		err := d.save()
		d.mu.Unlock()
		d.log.Warn("provider runs another image; its lease is left to end unused", "vm", id, "lease", l.Hash, "provider", l.Provider, "image", st.Image)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("lease %s: provider %s runs %s, not %s (power on leases from another provider)", l.Hash, l.Provider, st.Image, d.cfg.Image.Name)
	}
	if !st.EndsAt.IsZero() && !st.EndsAt.Equal(l.EndsAt) {
		l.EndsAt = st.EndsAt
		if err := d.setLease(id, l); err != nil {
			return nil, err
		}
	}
	m := &machine{d: d, id: id, lease: l, done: make(chan struct{}), quit: make(chan struct{})}
	if spec.SSH {
		if err := m.listen(); err != nil {
			return nil, err
		}
	}
	go m.watch()
	return m, nil
}

// usable reports whether a VM may start again on l: the ledger holds it,
// open (waiting for its provider, within the accept deadline), accepted
// or active, with at least MinLeft to run.
func (d *Driver) usable(ctx context.Context, l Lease) (bool, error) {
	st, err := d.cfg.Market.Lease(ctx, l.Hash)
	if errors.Is(err, ErrUnknown) {
		return false, nil // lost: refused, or rolled back as a fork's loser
	}
	if err != nil {
		return false, err
	}
	now := time.Now()
	switch st.Status {
	case "open":
		return now.Before(st.AcceptDeadline), nil
	case "accepted", "active":
		return st.EndsAt.IsZero() || st.EndsAt.Sub(now) >= MinLeft, nil
	}
	return false, nil // ended, refunded
}

// buy buys a lease of r, asking again every 2 s for up to OfferWait
// while no provider offers one, never from a provider found running
// another image.
func (d *Driver) buy(ctx context.Context, r Resources) (Lease, error) {
	d.mu.Lock()
	var exclude []string
	for p := range d.wrongImage {
		exclude = append(exclude, p)
	}
	d.mu.Unlock()
	deadline := time.Now().Add(OfferWait)
	for tries := 1; ; tries++ {
		l, err := d.cfg.Market.Buy(ctx, r, d.cfg.Duration, exclude)
		if !errors.Is(err, ErrNoOffer) || time.Now().After(deadline) {
			return l, err
		}
		if tries == 1 {
			d.log.Info("no offer yet; asking again every 2 s", "for", OfferWait, "err", err)
		}
		select {
		case <-ctx.Done():
			return l, err
		case <-time.After(2 * time.Second):
		}
	}
}

// provisioningWarn is how long a provider's VM may report provisioning
// before the wait is worth a warning.
const provisioningWarn = 5 * time.Minute

// awaitRunning polls lease's VM until its provider reports it running.
// Errors reaching the node are retried until ctx ends; a lease that can
// no longer start (refunded, past its accept deadline, ended) fails.
func (d *Driver) awaitRunning(ctx context.Context, lease string) (Machine, error) {
	var last error
	began, told := time.Now(), time.Duration(0)
	for {
		st, err := d.cfg.Market.Machine(ctx, lease)
		state := st.Status
		switch {
		case err == nil && st.Status == "running":
			return st, nil
		case err == nil && (st.Status == "error" || st.Status == "stopped"):
			why := st.Error
			if why == "" {
				// A provider stops a VM with no error only when its
				// lease's time is up or the lease is settled.
				why = "its lease ended before the VM was seen running"
				if !st.EndsAt.IsZero() {
					why += " (at " + st.EndsAt.UTC().Format(time.RFC3339) + ")"
				}
			}
			return st, fmt.Errorf("the provider reports its VM %s: %s", st.Status, why)
		case errors.Is(err, ErrUnknown):
			// No VM yet: the provider has not accepted the lease, or
			// never will.
			ls, lerr := d.cfg.Market.Lease(ctx, lease)
			if lerr == nil && (ls.Status == "refunded" || ls.Status == "ended" || (ls.Status == "open" && time.Now().After(ls.AcceptDeadline))) {
				return st, fmt.Errorf("the lease is %s and no VM runs for it (no provider accepted it in time?)", ls.Status)
			}
			state = "no VM yet, lease " + ls.Status
			if lerr != nil {
				state = fmt.Sprintf("no VM yet, lease unknown (%v)", lerr)
			} else if ls.Status == "open" {
				state += ", accept deadline " + ls.AcceptDeadline.UTC().Format(time.RFC3339)
			}
		case err != nil:
			last = err
			state = err.Error()
		}
		// Say where a long wait stands, once a minute: as news while the
		// provider reports its VM provisioning (a first VM of an image
		// waits for the image's build, a minute or more without KVM), as
		// a warning past provisioningWarn or in any other state.
		if waited := time.Since(began); waited-told >= time.Minute {
			told = waited.Truncate(time.Minute)
			level := slog.LevelWarn
			if st.Status == "provisioning" && waited < provisioningWarn {
				level = slog.LevelInfo
			}
			d.log.Log(ctx, level, "still waiting for the provider's VM", "lease", lease, "waited", waited.Round(time.Second), "state", state)
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return st, fmt.Errorf("waiting for the provider's VM: %w (last: %v)", ctx.Err(), last)
			}
			return st, fmt.Errorf("waiting for the provider's VM (last status %q): %w", st.Status, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// settle settles lease (its provider is paid, or the platform refunded
// when no provider accepted it), logging a failure: the provider settles
// its own leases too, anyone may, and a lease not due yet answers so.
func (d *Driver) settle(ctx context.Context, lease string) {
	if err := d.cfg.Market.Settle(ctx, lease); err != nil {
		d.log.Info("lease not settled by the platform", "lease", lease, "err", err)
	}
}

// Delete forgets VM id's lease. A lease still running is ended early
// (the platform pays for the time served, and the rest of the cost comes
// back to its account), whatever its VM's state: the provider's node
// makes the early end and stops the VM; when the notice cannot be sent,
// Delete fails and forgets nothing. A lease that is over is settled.
func (d *Driver) Delete(id string) error {
	l, ok := d.leaseOf(id)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The early end stops the VM at its provider within seconds. Nothing
	// else here could: a lease's machine runs its whole term, booted
	// again if its guest powers off.
	switch ending, err := d.cfg.Market.End(ctx, l.Hash); {
	case err != nil:
		// The VM is not forgotten while it runs: the delete fails, and
		// may be asked again.
		return fmt.Errorf("lease %s not ended early (its VM runs on at its provider; delete again, or `lattice lease end %s` with the platform's key): %w", l.Hash, l.Hash, err)
	case !ending:
		d.settle(ctx, l.Hash) // not running: its refund or its end, if due
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.leases, id)
	return d.save()
}

// Console is vmhost.ErrNoConsole: the provider keeps its VMs' consoles.
func (d *Driver) Console(id string, max int64) ([]byte, error) {
	return nil, fmt.Errorf("%w: the VM runs at its lease's provider", vmhost.ErrNoConsole)
}

// Images is the one image the providers run.
func (d *Driver) Images() []computerules.Image { return []computerules.Image{d.cfg.Image} }

// Accel is "lease": the provider's host runs the VM.
func (d *Driver) Accel() string { return "lease" }

// CheckPower refuses what a lease cannot do: a leased VM runs until its
// lease ends, so it cannot be powered off from here; power on gives a
// VM whose lease has ended a new one, and reboot reboots its guest
// (Reboot).
func (d *Driver) CheckPower(action string) error {
	if action == computerules.Off {
		return fmt.Errorf("%w: a VM on a lease runs until its lease ends; delete it to give it up, or power it on once its lease has ended to lease it again", computerules.ErrState)
	}
	return nil
}

// RebootCommand is what Reboot runs in the guest: systemd's clean
// reboot, or busybox's where there is no systemd (minimal).
const RebootCommand = "systemctl reboot 2>/dev/null || reboot"

// Reboot reboots m's guest in place and returns once its provider runs
// it again: the guest's reboot stops the machine, and its provider boots
// it again on its disk (a lease's machine is its consumer's for the
// lease's whole term), counting it in the VM's restarts. A lease that
// ends meanwhile is vmhost.ErrEnded.
func (d *Driver) Reboot(ctx context.Context, vm vmhost.Machine) error {
	m, ok := vm.(*machine)
	if !ok {
		return fmt.Errorf("leasedriver: not a leased machine: %T", vm)
	}
	// A VM its provider is booting again (its guest rebooted itself) is
	// waited for first.
	before, err := d.awaitMachine(ctx, m, func(st Machine) bool { return st.Status == "running" })
	if err != nil {
		return err
	}
	res, err := d.cfg.Market.Exec(ctx, m.lease.Hash, RebootCommand)
	switch {
	case errors.Is(err, ErrNotRunning), err == nil && (res.ExitCode == 0 || res.TimedOut):
		// Going down: its answer given first, or lost with it.
	case err != nil:
		return fmt.Errorf("asking the guest to reboot: %w", err)
	default:
		return fmt.Errorf("the guest's reboot exited %d: %s", res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	_, err = d.awaitMachine(ctx, m, func(st Machine) bool { return st.Status == "running" && st.Restarts > before.Restarts })
	return err
}

// awaitMachine asks the provider about m's VM until done says so of its
// answer, polling five times as often as the watch does. A VM stopped or
// gone is vmhost.ErrEnded; one in error, an error with the provider's
// reason.
func (d *Driver) awaitMachine(ctx context.Context, m *machine, done func(Machine) bool) (Machine, error) {
	t := time.NewTicker(max(d.cfg.Poll/5, 10*time.Millisecond))
	defer t.Stop()
	for {
		st, err := d.cfg.Market.Machine(ctx, m.lease.Hash)
		switch {
		case err == nil && done(st):
			return st, nil
		case err == nil && st.Status == "stopped":
			return st, fmt.Errorf("%w: lease %s ended", vmhost.ErrEnded, m.lease.Hash)
		case err == nil && st.Status == "error":
			return st, fmt.Errorf("the provider reports its VM in error: %s", st.Error)
		case errors.Is(err, ErrUnknown):
			return st, fmt.Errorf("%w: no provider reports the VM any more", vmhost.ErrEnded)
		}
		// Otherwise booting, or the node away: look again.
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("waiting for the provider's VM (last status %q): %w", st.Status, ctx.Err())
		case <-m.done:
			if err := m.Err(); err != nil {
				return st, err
			}
			return st, errors.New("the platform let go of the VM")
		case <-t.C:
		}
	}
}

// machine is a leased VM as the host sees it.
type machine struct {
	d     *Driver
	id    string
	lease Lease
	ln    net.Listener

	once sync.Once
	quit chan struct{} // Stop
	done chan struct{}
	mu   sync.Mutex
	err  error
}

// Exec runs argv in the guest with stdin, as one /bin/sh command line:
// each argument single-quoted, stdin in base64 through a pipe.
// The node bounds its time and output (ExecResult); timeout is bounded
// by ctx here.
func (m *machine) Exec(ctx context.Context, argv []string, stdin []byte, timeout time.Duration) (agent.ExecResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout+10*time.Second)
	defer cancel()
	return m.d.cfg.Market.Exec(ctx, m.lease.Hash, Command(argv, stdin))
}

// Command is argv with stdin as one /bin/sh command line: each argument
// single-quoted, stdin in base64 decoded into a pipe (4/3 of its size
// whatever it holds: the 16 KiB of a VM's user data and ten keys of at
// most computerules.MaxSSHKeyLen stay below the node's 64 KiB bound on a
// command).
func Command(argv []string, stdin []byte) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = quote(a)
	}
	cmd := strings.Join(q, " ")
	if stdin != nil {
		cmd = "printf %s '" + base64.StdEncoding.EncodeToString(stdin) + "' | base64 -d | " + cmd
	} else {
		cmd += " < /dev/null"
	}
	return cmd
}

// quote is s single-quoted for /bin/sh.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// listen opens the loopback listener whose connections are tunnels to
// the guest's SSH port.
func (m *machine) listen() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	m.ln = ln
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go m.forward(c)
		}
	}()
	return nil
}

// forward carries c to the guest's port 22 and back.
func (m *machine) forward(c net.Conn) {
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t, err := m.d.cfg.Market.Dial(ctx, m.lease.Hash, 22)
	cancel()
	if err != nil {
		m.d.log.Debug("ssh tunnel to a leased VM", "vm", m.id, "lease", m.lease.Hash, "err", err)
		return
	}
	defer t.Close()
	finished := make(chan struct{})
	defer close(finished)
	go func() { // the machine's end cuts its open sessions
		select {
		case <-m.quit:
		case <-m.done:
		case <-finished:
			return
		}
		c.Close()
		t.Close()
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(t, c)
		if cw, ok := t.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}()
	io.Copy(c, t)
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	wg.Wait()
}

// watch ends the machine when the provider stops its VM (the lease
// ended) or reports it in error.
func (m *machine) watch() {
	defer close(m.done)
	t := time.NewTicker(m.d.cfg.Poll)
	defer t.Stop()
	for {
		select {
		case <-m.quit:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := m.d.cfg.Market.Machine(ctx, m.lease.Hash)
		cancel()
		if err != nil && !errors.Is(err, ErrUnknown) {
			continue // the node is away: look again
		}
		switch {
		case err != nil:
			m.fail(fmt.Errorf("%w: no provider reports the VM any more", vmhost.ErrEnded))
		case st.Status == "stopped":
			m.fail(fmt.Errorf("%w: lease %s ended", vmhost.ErrEnded, m.lease.Hash))
		case st.Status == "error":
			m.fail(fmt.Errorf("the provider reports its VM in error: %s", st.Error))
		default:
			continue
		}
		m.closeListener()
		return
	}
}

func (m *machine) fail(err error) {
	m.mu.Lock()
	m.err = err
	m.mu.Unlock()
}

func (m *machine) closeListener() {
	if m.ln != nil {
		m.ln.Close()
	}
}

// Stop detaches the platform from the VM: its SSH listener closes. The
// VM itself runs on at the provider until its lease ends.
func (m *machine) Stop(ctx context.Context) error {
	m.once.Do(func() { close(m.quit) })
	m.closeListener()
	select {
	case <-m.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (m *machine) Done() <-chan struct{} { return m.done }

func (m *machine) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

func (m *machine) SSHAddr() string {
	if m.ln == nil {
		return ""
	}
	return m.ln.Addr().String()
}

var (
	_ vmhost.Driver       = (*Driver)(nil)
	_ vmhost.Placer       = (*Driver)(nil)
	_ vmhost.Rebooter     = (*Driver)(nil)
	_ vmhost.PowerChecker = (*Driver)(nil)
)
