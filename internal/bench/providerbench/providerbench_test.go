package providerbench_test

import (
	"errors"
	"os"
	"testing"

	"github.com/latticenet/lattice/internal/bench/providerbench"
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

// TestRun: one small round gives every figure, each plausible, and each
// tunnel went the way it was meant to (Run fails otherwise).
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("boots VMs on a network of nodes")
	}
	tooltest.Need(t, "qemu-system-x86_64")
	r, err := providerbench.Run(t.Context(), providerbench.Config{Leases: 1, Execs: 5, MiB: 2, Rounds: 1, ImageDir: vmtest.ImageDir(t)})
	if errors.Is(err, qemu.ErrHostPackage) {
		tooltest.Missing(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	m := r.Median
	if len(r.Rounds) != 1 || m.ReadyP50s <= 0 || m.ReadyMaxS < m.ReadyP50s || m.ExecP50ms <= 0 || m.ExecP99ms < m.ExecP50ms {
		t.Errorf("report %+v", r)
	}
	for name, p := range map[string]providerbench.Path{"local": m.Local, "direct": m.Direct, "relayed": m.Relayed} {
		if p.UpMBs <= 0 || p.DownMBs <= 0 {
			t.Errorf("%s path %+v", name, p)
		}
	}
	if m.DirectRatio <= 0 || m.RelayedRatio <= 0 {
		t.Errorf("ratios %v and %v", m.DirectRatio, m.RelayedRatio)
	}
}
