package vmhost

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latticenet/lattice/cloud/compute/computerules"
	"github.com/latticenet/lattice/machine/agent"
	"github.com/latticenet/lattice/machine/qemu"
)

// NewQEMU returns the QEMU driver of cfg, made on first use.
func NewQEMU(cfg qemu.Config) *QEMU { return &QEMU{cfg: cfg, ready: make(chan struct{})} }

// QEMU is the Driver of QEMU machines (package qemu), made when a VM
// first needs it: finding QEMU and probing KVM boots a probe VM for up to
// seconds, which a host that runs no VM need not pay.
type QEMU struct {
	cfg     qemu.Config
	once    sync.Once
	started atomic.Bool
	ready   chan struct{}
	d       *qemu.Driver
	err     error
}

func (l *QEMU) init() {
	l.once.Do(func() {
		l.started.Store(true)
		l.d, l.err = qemu.New(l.cfg)
		if l.err != nil {
			l.cfg.Logger.Error("compute: no machine driver: VMs cannot start", "err", l.err)
		}
		close(l.ready)
	})
}

func (l *QEMU) wait(ctx context.Context) (*qemu.Driver, error) {
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
func (l *QEMU) Drain() {
	if l.started.Load() {
		<-l.ready
	}
}

// State is the driver's state for /readyz: "kvm" or "tcg" once made,
// "idle" before the first VM needs it, "starting" while it is made,
// "unavailable: ..." when the host cannot run VMs.
func (l *QEMU) State() string {
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

func (l *QEMU) Start(ctx context.Context, id string, spec Spec) (Machine, error) {
	d, err := l.wait(ctx)
	if err != nil {
		return nil, err
	}
	vm, err := d.Start(ctx, id, qemu.Spec{VCPUs: spec.VCPUs, MemoryMB: spec.MemoryMB, DiskGB: spec.DiskGB, Image: spec.Image,
		ForwardSSH: spec.SSH, Outbound: spec.Outbound})
	if err != nil {
		return nil, err
	}
	return qemuMachine{vm}, nil
}

// Delete and Console work on a VM's files, which the driver need not
// be made for (nor could be: QEMU missing).
func (l *QEMU) Delete(id string) error { return qemu.DeleteFiles(l.cfg.Dir, id) }

func (l *QEMU) Console(id string, max int64) ([]byte, error) {
	return qemu.ReadConsole(l.cfg.Dir, id, max)
}

func (l *QEMU) Images() []computerules.Image {
	var out []computerules.Image
	for _, img := range qemu.Images() {
		out = append(out, computerules.Image{Name: img.Name, Description: img.Description, MinDiskGB: img.MinDiskGB, MinMemoryMB: img.MinMemoryMB, SSH: img.SSH})
	}
	return out
}

func (l *QEMU) Accel() string {
	select {
	case <-l.ready:
		if l.err == nil {
			return l.d.Accel()
		}
	default:
	}
	return ""
}

// qemuMachine is a QEMU VM as the host sees machines.
type qemuMachine struct{ vm *qemu.VM }

func (m qemuMachine) Exec(ctx context.Context, argv []string, stdin []byte, timeout time.Duration) (agent.ExecResult, error) {
	return m.vm.Exec(ctx, argv, stdin, timeout)
}
func (m qemuMachine) Stop(ctx context.Context) error { return m.vm.Stop(ctx) }
func (m qemuMachine) Done() <-chan struct{}          { return m.vm.Done() }
func (m qemuMachine) Err() error                     { return m.vm.Err() }
func (m qemuMachine) SSHAddr() string                { return m.vm.SSHAddr() }
