package vmbench_test

import (
	"errors"
	"os"
	"testing"

	"github.com/latticenet/lattice/internal/bench/vmbench"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
	"github.com/latticenet/lattice/internal/testkit/vmtest"
	"github.com/latticenet/lattice/machine/agent"
	"github.com/latticenet/lattice/machine/qemu"
)

// TestMain lets the test binary be the guests' agent (see package qemu).
func TestMain(m *testing.M) {
	agent.ServeIfAsked()
	os.Exit(m.Run())
}

// TestRun: one small round of each image gives every figure, each
// plausible.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("boots VMs")
	}
	tooltest.Need(t, "qemu-system-x86_64")
	r, err := vmbench.Run(t.Context(), vmbench.Config{Rounds: 1, Execs: 20, Dir: t.TempDir(), ImageDir: vmtest.ImageDir(t)})
	if errors.Is(err, qemu.ErrHostPackage) {
		tooltest.Missing(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	m := r.Median
	if len(r.Rounds) != 1 || m.ReadyS <= 0 || m.FloorS <= 0 || m.ExecP50ms <= 0 || m.ExecP99ms < m.ExecP50ms || r.Accel == "" {
		t.Errorf("report %+v", r)
	}
	if len(r.Images) != 2 || r.Images[0].Image != "minimal" || r.Images[1].Image != "debian-12" {
		t.Fatalf("images %+v, want minimal and debian-12", r.Images)
	}
	if d := r.Images[1].Median; d.ReadyS <= 0 || d.FloorS <= 0 || d.SSHReadyS < d.ReadyS || d.ExecP50ms <= 0 {
		t.Errorf("debian-12 %+v", d)
	}
}
