// Package vmhost runs the cloud's VMs as their records say: it boots a
// VM that is provisioning or starting, stops one that is stopping, does
// both for a reboot, removes one that is deleting, and marks a VM whose
// machine exits unasked. The records (computestore) are the truth; the
// machines (a Driver: QEMU today) follow them. VMs do not outlive the
// host: Serve's end stops every machine cleanly and leaves the records
// as they were, and the next Serve boots again every VM that was up
// (computerules.Restarted).
package vmhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/latticenet/lattice/cloud/compute/computerules"
	"github.com/latticenet/lattice/cloud/compute/computestore"
	"github.com/latticenet/lattice/machine/agent"
)

// Spec is what the driver boots.
type Spec struct {
	VCPUs, MemoryMB, DiskGB int
	Image                   string
	// SSH asks for the guest's port 22 forwarded from a host port.
	SSH bool
	// Outbound lets the guest connect out through the host (qemu.Spec).
	Outbound bool
}

// Machine is a booted VM.
type Machine interface {
	Exec(ctx context.Context, argv []string, stdin []byte, timeout time.Duration) (agent.ExecResult, error)
	// Stop shuts the guest down cleanly, or kills it once ctx ends.
	Stop(ctx context.Context) error
	// Done is closed once the machine has exited; Err then says why
	// (nil when Stop stopped it).
	Done() <-chan struct{}
	Err() error
	// SSHAddr is the host address forwarded to the guest's port 22, or "".
	SSHAddr() string
}

// Driver boots machines. Each VM has an id, and files (its disk, its
// console log) that outlive its machine until Delete.
type Driver interface {
	Start(ctx context.Context, id string, spec Spec) (Machine, error)
	Delete(id string) error
	// Console returns the last max bytes of VM id's console log.
	Console(id string, max int64) ([]byte, error)
	Images() []computerules.Image
	// Accel names the accelerator ("kvm" or "tcg").
	Accel() string
}

// ErrEnded is a machine's error when it ended by design, not by a fault:
// a leased VM whose lease is over (package leasedriver). The host records
// the VM stopped, with the reason.
var ErrEnded = errors.New("vmhost: the machine's term ended")

// ErrNoConsole is a driver's answer for a VM whose console it does not
// hold (a leased VM's stays with its provider).
var ErrNoConsole = errors.New("vmhost: no console here")

// PowerChecker is a Driver that refuses some power actions: a leased VM
// cannot be powered off. CheckPower's error wraps computerules.ErrState.
type PowerChecker interface {
	CheckPower(action string) error
}

// Rebooter is a Driver that reboots a running machine in place, its
// guest's own reboot, instead of the host's stop and boot: a leased VM
// (its provider boots the guest again on its disk; stopping it would
// give up the lease's machine). Reboot returns once the guest runs
// again.
type Rebooter interface {
	Reboot(ctx context.Context, m Machine) error
}

// Placement is where a VM runs when it is not on this host: the lease
// it runs on and the provider that runs it.
type Placement struct {
	Lease, Provider string
	EndsAt          time.Time // zero until the lease has started
}

// Placer is a Driver whose VMs run elsewhere.
type Placer interface {
	Place(id string) (Placement, bool)
}

// Timeouts of the host's work on a VM.
const (
	// StartTimeout bounds a boot, with the image built on first use.
	StartTimeout = 10 * time.Minute
	// StopTimeout is how long a guest has to power off before it is
	// killed.
	StopTimeout    = 30 * time.Second
	prepareTimeout = 30 * time.Second
)

// Host runs VMs.
type Host struct {
	store *computestore.Store
	drv   Driver
	log   *slog.Logger
	// Outbound lets every guest connect out through the host (qemu.Spec);
	// set before Serve.
	Outbound bool

	mu       sync.Mutex
	ctx      context.Context // Serve's; nil before and after
	machines map[string]Machine
	busy     map[string]bool // a worker acts on the VM
	kicked   map[string]bool // asked again while busy
	closing  bool
	wg       sync.WaitGroup
}

// New returns a host of store's VMs on drv.
func New(store *computestore.Store, drv Driver, log *slog.Logger) *Host {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Host{store: store, drv: drv, log: log, machines: map[string]Machine{}, busy: map[string]bool{}, kicked: map[string]bool{}}
}

// Images are the images VMs are made from.
func (h *Host) Images() []computerules.Image { return h.drv.Images() }

// Accel names the driver's accelerator.
func (h *Host) Accel() string { return h.drv.Accel() }

// SSHAddr is VM id's forwarded SSH address while it runs, or "".
func (h *Host) SSHAddr(id string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if m := h.machines[id]; m != nil {
		return m.SSHAddr()
	}
	return ""
}

// CheckPower returns the driver's refusal of action, if it has one
// (PowerChecker).
func (h *Host) CheckPower(action string) error {
	if pc, ok := h.drv.(PowerChecker); ok {
		return pc.CheckPower(action)
	}
	return nil
}

// Place is where VM id runs, when the driver runs VMs elsewhere (Placer).
func (h *Host) Place(id string) (Placement, bool) {
	if p, ok := h.drv.(Placer); ok {
		return p.Place(id)
	}
	return Placement{}, false
}

// Console is the last max bytes of VM id's console log of its latest
// boot.
func (h *Host) Console(id string, max int64) ([]byte, error) { return h.drv.Console(id, max) }

// Serve brings every VM to what its record says (booting again those
// that were up before the host stopped), acts on changes (Kick) until
// ctx ends, then stops every machine cleanly, within StopTimeout, and
// returns. Records are left as they were: the next Serve resumes them.
func (h *Host) Serve(ctx context.Context) error {
	if err := h.Recover(); err != nil {
		return err
	}
	h.mu.Lock()
	h.ctx, h.closing = ctx, false
	h.mu.Unlock()
	for _, v := range h.store.All() {
		h.Kick(v.ID)
	}
	<-ctx.Done()
	h.mu.Lock()
	h.closing = true
	ms := make(map[string]Machine, len(h.machines))
	for id, m := range h.machines {
		ms[id] = m
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for id, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
			defer cancel()
			if err := m.Stop(sctx); err != nil {
				h.log.Warn("vm stop at shutdown", "vm", id, "err", err)
			}
		}()
	}
	wg.Wait()
	h.wg.Wait() // workers end once their machine calls return
	h.mu.Lock()
	h.ctx = nil
	clear(h.machines)
	h.mu.Unlock()
	return nil
}

// Recover records what a host starting with the store's VMs will do
// (computerules.Restarted): a VM that was up is starting, one that was
// stopping is stopped. Call it before the API answers, so that no VM
// reads running before its machine is; Serve calls it too.
func (h *Host) Recover() error {
	for _, v := range h.store.All() {
		if to := computerules.Restarted(v.Status); to != v.Status {
			if _, err := h.store.SetStatus(v.ID, v.Status, to, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// Kick asks the host to bring VM id to what its record says; the work
// runs in the background, one worker per VM at a time.
func (h *Host) Kick(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ctx == nil || h.closing {
		return // Serve resumes it
	}
	if h.busy[id] {
		h.kicked[id] = true
		return
	}
	h.busy[id] = true
	h.wg.Add(1)
	go h.work(h.ctx, id)
}

func (h *Host) work(ctx context.Context, id string) {
	defer h.wg.Done()
	for {
		h.act(ctx, id)
		h.mu.Lock()
		if !h.kicked[id] || h.closing {
			delete(h.busy, id)
			delete(h.kicked, id)
			h.mu.Unlock()
			return
		}
		delete(h.kicked, id)
		h.mu.Unlock()
	}
}

// act carries out the change VM id's record asks for, if any.
func (h *Host) act(ctx context.Context, id string) {
	v, ok := h.store.ByID(id)
	if !ok {
		return
	}
	log := h.log.With("vm", id, "name", v.Name)
	switch v.Status {
	case computerules.Provisioning, computerules.Starting:
		h.boot(ctx, v, log)
	case computerules.Stopping:
		h.stop(id, log)
		h.set(id, computerules.Stopping, computerules.Stopped, "", log)
	case computerules.Rebooting:
		if rb, ok := h.drv.(Rebooter); ok {
			h.mu.Lock()
			m := h.machines[id]
			h.mu.Unlock()
			if m != nil {
				h.reboot(ctx, v, rb, m, log)
				return
			}
		}
		h.stop(id, log)
		h.boot(ctx, v, log)
	case computerules.Deleting:
		h.stop(id, log)
		if err := h.drv.Delete(id); err != nil {
			log.Error("vm delete: removing its files", "err", err)
			h.set(id, computerules.Deleting, computerules.Error, "delete failed: "+err.Error(), log)
			return
		}
		if err := h.store.Remove(id); err != nil {
			log.Error("vm delete: removing its record", "err", err)
			return
		}
		log.Info("vm deleted")
	}
}

// reboot reboots v's machine m in place (Rebooter), prepares the guest
// as every boot does, and records it running again, or in error with the
// reason.
func (h *Host) reboot(ctx context.Context, v computestore.VM, rb Rebooter, m Machine, log *slog.Logger) {
	rctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	began := time.Now()
	err := rb.Reboot(rctx, m)
	if err == nil {
		err = h.prepare(rctx, m, v)
	}
	if err == nil && m.SSHAddr() != "" {
		err = awaitSSH(rctx, m.SSHAddr(), m.Done())
	}
	if err != nil {
		if ctx.Err() != nil || h.shuttingDown() {
			return
		}
		h.stop(v.ID, log) // as a failed boot is: power on starts afresh
		if errors.Is(err, ErrEnded) {
			if h.set(v.ID, computerules.Rebooting, computerules.Stopped, strings.TrimPrefix(err.Error(), ErrEnded.Error()+": "), log) {
				log.Info("vm's term ended while it rebooted", "reason", err)
			}
			return
		}
		log.Error("vm reboot failed", "err", err)
		h.set(v.ID, computerules.Rebooting, computerules.Error, "reboot failed: "+err.Error(), log)
		return
	}
	if h.set(v.ID, computerules.Rebooting, computerules.Running, "", log) {
		log.Info("vm rebooted", "took", time.Since(began).Round(time.Millisecond))
	}
}

// MaxReason bounds a status reason kept in a record (it carries guest
// output: the console's tail, a script's stderr).
const MaxReason = 2000

// set moves VM id's record from one status to another, logging a failed
// write (the store then refuses every change until a restart).
func (h *Host) set(id, from, to, reason string, log *slog.Logger) bool {
	if len(reason) > MaxReason {
		reason = reason[:MaxReason] + "..."
	}
	ok, err := h.store.SetStatus(id, from, to, reason)
	if err != nil {
		log.Error("vm status not recorded", "status", to, "err", err)
	}
	return ok
}

// shuttingDown reports whether Serve is ending (a failure then is the
// shutdown's, not the VM's).
func (h *Host) shuttingDown() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closing
}

// boot starts v's machine, prepares the guest (host name, SSH keys, the
// user data on the first boot), waits for its SSH server if it has one,
// and records it running, or in error with the reason. A failure that
// the host's shutdown caused leaves the record alone (the next start
// boots the VM again) and the machine stopped.
func (h *Host) boot(ctx context.Context, v computestore.VM, log *slog.Logger) {
	from := v.Status
	sctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	began := time.Now()
	m, err := h.drv.Start(sctx, v.ID, Spec{VCPUs: v.VCPUs, MemoryMB: v.MemoryMB, DiskGB: v.DiskGB, Image: v.Image,
		SSH: imageHasSSH(h.drv.Images(), v.Image), Outbound: h.Outbound})
	if err != nil {
		if ctx.Err() != nil || h.shuttingDown() {
			return
		}
		log.Error("vm did not start", "err", err)
		h.set(v.ID, from, computerules.Error, "start failed: "+err.Error(), log)
		return
	}
	h.mu.Lock()
	if h.closing || ctx.Err() != nil {
		// Serve has taken its list of machines to stop: this one is
		// not on it.
		h.mu.Unlock()
		stopMachine(m, v.ID, log)
		return
	}
	h.machines[v.ID] = m
	h.mu.Unlock()
	fail := func(what string, err error) {
		h.stop(v.ID, log)
		if ctx.Err() != nil || h.shuttingDown() {
			return
		}
		log.Error("vm "+what, "err", err)
		h.set(v.ID, from, computerules.Error, what+": "+err.Error(), log)
	}
	if err := h.prepare(sctx, m, v); err != nil {
		fail("guest preparation failed", err)
		return
	}
	if addr := m.SSHAddr(); addr != "" {
		if err := awaitSSH(sctx, addr, m.Done()); err != nil {
			fail("its SSH server did not answer", err)
			return
		}
	}
	if !h.set(v.ID, from, computerules.Running, "", log) {
		return
	}
	log.Info("vm running", "boot", time.Since(began).Round(time.Millisecond), "ssh", m.SSHAddr())
	h.wg.Add(1)
	go h.watch(v.ID, m, log)
}

// watch marks VM id in error, with the reason, when its machine exits
// while its record says it runs: killed, crashed, or the guest powered
// off, rebooted or panicked by itself (QEMU cannot tell these apart);
// power on boots it again.
func (h *Host) watch(id string, m Machine, log *slog.Logger) {
	defer h.wg.Done()
	<-m.Done()
	h.mu.Lock()
	closing, ours := h.closing, h.machines[id] == m
	if ours {
		delete(h.machines, id)
	}
	h.mu.Unlock()
	if closing || !ours {
		return // the host stopped it, or a later boot replaced it
	}
	reason := "the machine exited"
	if err := m.Err(); err != nil {
		reason += ": " + err.Error()
	}
	if errors.Is(m.Err(), ErrEnded) {
		if h.set(id, computerules.Running, computerules.Stopped, strings.TrimPrefix(m.Err().Error(), ErrEnded.Error()+": "), log) {
			log.Info("vm's term ended", "reason", m.Err())
		}
		return
	}
	if h.set(id, computerules.Running, computerules.Error, reason, log) {
		log.Warn("vm stopped unasked", "reason", reason)
	}
}

// stop stops VM id's machine, if it has one.
func (h *Host) stop(id string, log *slog.Logger) {
	h.mu.Lock()
	m := h.machines[id]
	delete(h.machines, id)
	h.mu.Unlock()
	if m != nil {
		stopMachine(m, id, log)
	}
}

// stopMachine stops m cleanly, killing it after StopTimeout.
func stopMachine(m Machine, id string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
	defer cancel()
	if err := m.Stop(ctx); err != nil {
		log.Warn("vm stop", "vm", id, "err", err)
	}
}

// SSHTimeout bounds the wait for a booted guest's SSH server.
const SSHTimeout = 2 * time.Minute

// awaitSSH waits until the SSH server forwarded at addr sends its
// banner: a VM is running for its user once they can log in, which on
// debian-12 comes seconds after the agent answers.
func awaitSSH(ctx context.Context, addr string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, SSHTimeout)
	defer cancel()
	var last error
	for {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.SetDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 4)
			_, err = io.ReadFull(c, buf)
			c.Close()
			if err == nil && string(buf) == "SSH-" {
				return nil
			}
			if err == nil {
				err = fmt.Errorf("%s answered %q, not an SSH banner", addr, buf)
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("after %s: %v", SSHTimeout, last)
		case <-exited:
			return errors.New("the machine exited")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func imageHasSSH(images []computerules.Image, name string) bool {
	for _, img := range images {
		if img.Name == name {
			return img.SSH
		}
	}
	return false
}

// UserDataLog is where the user data's output goes in the guest.
const UserDataLog = "/var/log/lattice-user-data.log"

// prepare sets the guest's host name and root's SSH keys at every boot,
// and on the first boot starts the user data in the background, its
// output in UserDataLog.
func (h *Host) prepare(ctx context.Context, m Machine, v computestore.VM) error {
	run := func(script string, stdin []byte) error {
		return runIn(ctx, m, []string{"/bin/sh", "-c", script}, stdin)
	}
	// The name is passed as $0, never spliced into the script.
	if err := runIn(ctx, m, []string{"/bin/sh", "-c", `echo "$0" > /etc/hostname && hostname "$0"`, v.Name}, nil); err != nil {
		return fmt.Errorf("host name: %w", err)
	}
	if len(v.SSHKeys) > 0 {
		keys := strings.Join(v.SSHKeys, "\n") + "\n"
		if err := run(`umask 077 && mkdir -p /root/.ssh && cat > /root/.ssh/authorized_keys.new && mv /root/.ssh/authorized_keys.new /root/.ssh/authorized_keys`, []byte(keys)); err != nil {
			return fmt.Errorf("ssh keys: %w", err)
		}
	}
	if v.UserData != "" && !v.UserDataRan {
		script := `umask 077 && mkdir -p /var/lib/lattice /var/log && cat > /var/lib/lattice/user-data && chmod 700 /var/lib/lattice/user-data &&
if [ "$(head -c 2 /var/lib/lattice/user-data)" = '#!' ]; then set -- /var/lib/lattice/user-data; else set -- /bin/sh /var/lib/lattice/user-data; fi &&
(setsid "$@" > ` + UserDataLog + ` 2>&1 < /dev/null &)`
		if err := run(script, []byte(v.UserData)); err != nil {
			return fmt.Errorf("user data: %w", err)
		}
		if err := h.store.UserDataDone(v.ID); err != nil {
			return err
		}
	}
	return nil
}

// runIn runs argv in the guest with stdin; a non-zero exit is an error.
func runIn(ctx context.Context, m Machine, argv []string, stdin []byte) error {
	r, err := m.Exec(ctx, argv, stdin, prepareTimeout)
	if err != nil {
		return err
	}
	if r.ExitCode != 0 {
		return fmt.Errorf("exit %d: %s%s", r.ExitCode, strings.TrimSpace(string(r.Stderr)), r.Error)
	}
	return nil
}

// ErrNotRunning is an exec on a VM whose machine is not up.
var ErrNotRunning = errors.New("vmhost: the VM is not running")

// Exec runs argv in VM id's guest through its agent (see agent.ExecResult
// for the bounds on time and output).
func (h *Host) Exec(ctx context.Context, id string, argv []string, stdin []byte, timeout time.Duration) (agent.ExecResult, error) {
	h.mu.Lock()
	m := h.machines[id]
	h.mu.Unlock()
	if m == nil {
		return agent.ExecResult{}, fmt.Errorf("VM %s: %w", id, ErrNotRunning)
	}
	return m.Exec(ctx, argv, stdin, timeout)
}
