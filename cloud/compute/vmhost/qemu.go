package vmhost

import (
	"context"
	"time"

	"github.com/latticenet/lattice/cloud/compute/computerules"
	"github.com/latticenet/lattice/machine/agent"
	"github.com/latticenet/lattice/machine/qemu"
)

// NewQEMU returns the QEMU driver of cfg, made on first use.
func NewQEMU(cfg qemu.Config) *QEMU { return &QEMU{qemu.NewLazy(cfg)} }

// QEMU is the Driver of QEMU machines (package qemu), made when a VM
// first needs it (qemu.Lazy).
type QEMU struct{ *qemu.Lazy }

func (l *QEMU) Start(ctx context.Context, id string, spec Spec) (Machine, error) {
	d, err := l.Driver(ctx)
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

func (l *QEMU) Images() []computerules.Image {
	var out []computerules.Image
	for _, img := range qemu.Images() {
		out = append(out, computerules.Image{Name: img.Name, Description: img.Description, MinDiskGB: img.MinDiskGB, MinMemoryMB: img.MinMemoryMB, SSH: img.SSH})
	}
	return out
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
