package qemu

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/latticenet/lattice/internal/hostprog"
)

// Lazy makes the driver of its Config when a VM first needs it: finding
// QEMU and probing KVM boots a probe VM for up to seconds, which a host
// that runs no VM need not pay. The cloud's Compute and a provider node
// both hold one.
type Lazy struct {
	cfg     Config
	once    sync.Once
	started atomic.Bool
	ready   chan struct{}
	d       *Driver
	err     error
}

// NewLazy returns the lazy driver of cfg.
func NewLazy(cfg Config) *Lazy { return &Lazy{cfg: cfg, ready: make(chan struct{})} }

// Config is the driver's configuration.
func (l *Lazy) Config() Config { return l.cfg }

func (l *Lazy) init() {
	l.once.Do(func() {
		l.d, l.err = New(l.cfg)
		if l.err != nil && l.cfg.Logger != nil {
			l.cfg.Logger.Error("no machine driver: VMs cannot start", "err", l.err)
		}
		close(l.ready)
	})
}

// Driver makes the driver if it is not made yet and returns it, or the
// error that made it unavailable, or ctx's error while it is being made.
func (l *Lazy) Driver(ctx context.Context) (*Driver, error) {
	l.started.Store(true) // before the goroutine: Drain must wait for it
	go l.init()
	select {
	case <-l.ready:
		return l.d, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Drain waits for a driver being made (its KVM probe VM) to be done.
func (l *Lazy) Drain() {
	if l.started.Load() {
		<-l.ready
	}
}

// State is the driver's state for /readyz: "kvm" or "tcg" once made,
// "idle" before the first VM needs it, "starting" while it is made,
// "unavailable: ..." when the host cannot run VMs.
func (l *Lazy) State() string {
	select {
	case <-l.ready:
		if l.err != nil {
			return "unavailable: " + l.err.Error()
		}
		return l.d.Accel()
	default:
		if l.started.Load() {
			return "starting"
		}
		return "idle"
	}
}

// Accel names the accelerator once the driver is made, else "".
func (l *Lazy) Accel() string {
	select {
	case <-l.ready:
		if l.err == nil {
			return l.d.Accel()
		}
	default:
	}
	return ""
}

// Delete removes VM id's files, which needs no driver (nor could have
// one: QEMU missing).
func (l *Lazy) Delete(id string) error { return DeleteFiles(l.cfg.Dir, id) }

// Console returns the last max bytes of VM id's console log.
func (l *Lazy) Console(id string, max int64) ([]byte, error) { return ReadConsole(l.cfg.Dir, id, max) }

// Preflight says whether this host can boot a VM now, without booting
// one: the driver's error once it is made and failed, else the first of
// the programs every boot runs that cannot be found (ErrHostPackage). A
// provider makes no offers while it fails.
func (l *Lazy) Preflight() error {
	select {
	case <-l.ready:
		if l.err != nil {
			return l.err
		}
	default:
	}
	return hostPrograms()
}

// hostPrograms returns the first of the programs every boot runs that
// this host cannot find (ErrHostPackage), nil when it has them all.
func hostPrograms() error {
	for _, t := range []struct{ name, pkg string }{
		{"qemu-system-x86_64", "qemu-system-x86"}, {"qemu-img", "qemu-utils"}, {"mkfs.ext4", "e2fsprogs"},
	} {
		if _, err := hostprog.Look(t.name); err != nil {
			return fmt.Errorf("%w: %s: install the Debian package %s", ErrHostPackage, t.name, t.pkg)
		}
	}
	return nil
}

// HostMissing returns the first thing this host lacks to boot a VM of
// the minimal image (ErrHostPackage, naming the Debian package): the
// programs every boot runs, a guest kernel, a static busybox. nil when it
// has them all. Tests ask it before they start VMs.
func HostMissing() error {
	if err := hostPrograms(); err != nil {
		return err
	}
	if _, _, err := hostKernel(); err != nil {
		return err
	}
	_, err := busybox()
	return err
}
