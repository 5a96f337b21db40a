// Package vmbench measures the machine layer (lattice bench compute): how
// long a VM of the minimal image takes from Start until its agent runs a
// command, against a bare QEMU booting the same kernel and initramfs to
// its first process in the same run (the floor), and the round trip of an
// exec through the agent.
package vmbench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"time"

	"github.com/latticenet/lattice/internal/bench/benchstat"
	"github.com/latticenet/lattice/machine/qemu"
)

// Config sizes a run. Zero values take the defaults.
type Config struct {
	Rounds int // VMs started, one a round (default 3)
	Execs  int // exec round trips timed per round (default 200)
	// Dir holds the images and VMs; default a temporary directory,
	// removed at the end.
	Dir string
	// Agent is the lattice binary the guests run (default this one).
	Agent string
	// Accel forces "kvm" or "tcg"; default as the driver decides.
	Accel    string
	Progress io.Writer
}

// Round is one round's figures.
type Round struct {
	ReadyS    float64 `json:"create_to_exec_ready_s"`
	FloorS    float64 `json:"bare_qemu_boot_s"`
	Ratio     float64 `json:"ready_over_floor"`
	ExecP50ms float64 `json:"exec_p50_ms"`
	ExecP99ms float64 `json:"exec_p99_ms"`
}

// Report is the run's figures.
type Report struct {
	Accel       string  `json:"accel"`
	ImageBuildS float64 `json:"image_build_s"` // the driver's start: image built, KVM probed
	Rounds      []Round `json:"rounds"`
	Median      Round   `json:"median"`
}

// Run starts the driver, then per round times a bare QEMU boot, a VM's
// start to its first exec and Execs exec round trips, and stops the VM.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if cfg.Rounds <= 0 {
		cfg.Rounds = 3
	}
	if cfg.Execs <= 0 {
		cfg.Execs = 200
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "lattice-bench-compute-")
		if err != nil {
			return Report{}, err
		}
		defer os.RemoveAll(dir)
		cfg.Dir = dir
	}
	const memoryMB = 256
	t0 := time.Now()
	d, err := qemu.New(qemu.Config{Dir: cfg.Dir, Agent: cfg.Agent, Accel: cfg.Accel})
	if err != nil {
		return Report{}, err
	}
	r := Report{Accel: d.Accel(), ImageBuildS: time.Since(t0).Seconds()}
	floorCmd, err := d.FloorCommand(memoryMB)
	if err != nil {
		return Report{}, err
	}
	for i := range cfg.Rounds {
		fmt.Fprintf(cfg.Progress, "round %d: bare qemu...\n", i+1)
		var rd Round
		start := time.Now()
		fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		out, err := exec.CommandContext(fctx, floorCmd[0], floorCmd[1:]...).CombinedOutput()
		cancel()
		if err != nil {
			return Report{}, fmt.Errorf("vmbench: bare qemu: %v %s", err, out)
		}
		rd.FloorS = time.Since(start).Seconds()

		fmt.Fprintf(cfg.Progress, "round %d: VM start and %d execs...\n", i+1, cfg.Execs)
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		start = time.Now()
		vm, err := d.Start(sctx, fmt.Sprintf("bench-%d", i+1), qemu.Spec{VCPUs: 1, MemoryMB: memoryMB, Image: "minimal"})
		if err == nil {
			_, err = vm.Exec(sctx, []string{"true"}, nil, 0)
		}
		if err != nil {
			cancel()
			if vm != nil {
				vm.Stop(context.Background())
			}
			return Report{}, err
		}
		rd.ReadyS = time.Since(start).Seconds()
		rd.Ratio = rd.ReadyS / rd.FloorS
		lat := make([]float64, 0, cfg.Execs)
		for range cfg.Execs {
			t := time.Now()
			res, err := vm.Exec(sctx, []string{"true"}, nil, 0)
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("vmbench: true exited %d", res.ExitCode)
			}
			if err != nil {
				cancel()
				vm.Stop(context.Background())
				return Report{}, err
			}
			lat = append(lat, float64(time.Since(t).Microseconds())/1000)
		}
		sort.Float64s(lat)
		rd.ExecP50ms, rd.ExecP99ms = lat[len(lat)/2], lat[len(lat)*99/100]
		err = vm.Stop(sctx)
		cancel()
		if err != nil {
			return Report{}, err
		}
		r.Rounds = append(r.Rounds, rd)
	}
	m := func(f func(Round) float64) float64 { return benchstat.MedianOf(r.Rounds, f) }
	r.Median = Round{ReadyS: m(func(x Round) float64 { return x.ReadyS }), FloorS: m(func(x Round) float64 { return x.FloorS }),
		Ratio: m(func(x Round) float64 { return x.Ratio }), ExecP50ms: m(func(x Round) float64 { return x.ExecP50ms }),
		ExecP99ms: m(func(x Round) float64 { return x.ExecP99ms })}
	return r, nil
}
