// Package vmbench measures the machine layer (lattice bench compute): how
// long a VM takes from Start until its agent runs a command, for the
// minimal image and for debian-12, each against a bare QEMU booting the
// same kernel and initramfs to its first process in the same run (the
// floor), the round trip of an exec through the agent, and for debian-12
// how long until its SSH server answers on the forwarded port.
package vmbench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/latticenet/lattice/internal/bench/benchstat"
	"github.com/latticenet/lattice/machine/qemu"
)

// Config sizes a run. Zero values take the defaults.
type Config struct {
	Rounds int // VMs started per image, one a round (default 3)
	Execs  int // exec round trips timed per round (default 200)
	// Dir holds the VMs and the driver's files; default a temporary
	// directory, removed at the end.
	Dir string
	// ImageDir holds the images (qemu.Config.ImageDir); default
	// lattice/images in the user's cache directory, so that debian-12,
	// whose build downloads Debian's packages, is built once.
	ImageDir string
	// Images are the images measured, in order (default minimal and
	// debian-12).
	Images []string
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
	// SSHReadyS is from Start until the guest's SSH server sends its
	// banner on the forwarded port (images with SSH only).
	SSHReadyS float64 `json:"create_to_ssh_banner_s,omitempty"`
}

// ImageReport is one image's rounds.
type ImageReport struct {
	Image string `json:"image"`
	// PrepareS is the image made ready before the rounds: built, or
	// found in the image directory.
	PrepareS float64 `json:"image_prepare_s"`
	Rounds   []Round `json:"rounds"`
	Median   Round   `json:"median"`
}

// Report is the run's figures. Rounds and Median are the first image's
// (minimal, by default); Images has every image's.
type Report struct {
	Accel       string        `json:"accel"`
	ImageBuildS float64       `json:"image_build_s"` // the driver's start: minimal image built, KVM probed
	Rounds      []Round       `json:"rounds"`
	Median      Round         `json:"median"`
	Images      []ImageReport `json:"images"`
}

const memoryMB = 256

// Run starts the driver, then for each image: makes it ready, and per
// round times a bare QEMU boot, a VM's start to its first exec (and, with
// SSH, to its SSH banner) and Execs exec round trips, and stops the VM.
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
	if len(cfg.Images) == 0 {
		cfg.Images = []string{"minimal", "debian-12"}
	}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "lattice-bench-compute-")
		if err != nil {
			return Report{}, err
		}
		defer os.RemoveAll(dir)
		cfg.Dir = dir
	}
	if cfg.ImageDir == "" {
		if cache, err := os.UserCacheDir(); err == nil {
			cfg.ImageDir = filepath.Join(cache, "lattice", "images")
		}
	}
	t0 := time.Now()
	d, err := qemu.New(qemu.Config{Dir: cfg.Dir, ImageDir: cfg.ImageDir, Agent: cfg.Agent, Accel: cfg.Accel})
	if err != nil {
		return Report{}, err
	}
	r := Report{Accel: d.Accel(), ImageBuildS: time.Since(t0).Seconds()}
	for _, name := range cfg.Images {
		ir, err := runImage(ctx, d, name, cfg)
		if err != nil {
			return Report{}, err
		}
		r.Images = append(r.Images, ir)
	}
	r.Rounds, r.Median = r.Images[0].Rounds, r.Images[0].Median
	return r, nil
}

// runImage measures one image's rounds.
func runImage(ctx context.Context, d *qemu.Driver, name string, cfg Config) (ImageReport, error) {
	var info qemu.ImageInfo
	for _, img := range qemu.Images() {
		if img.Name == name {
			info = img
		}
	}
	if info.Name == "" {
		return ImageReport{}, fmt.Errorf("vmbench: no image %q", name)
	}
	ir := ImageReport{Image: name}
	fmt.Fprintf(cfg.Progress, "%s: preparing the image (built on first use)...\n", name)
	t0 := time.Now()
	pctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	err := d.Prepare(pctx, name)
	if err != nil {
		cancel()
		return ImageReport{}, err
	}
	floorCmd, err := d.FloorCommand(pctx, name, memoryMB)
	cancel()
	if err != nil {
		return ImageReport{}, err
	}
	ir.PrepareS = time.Since(t0).Seconds()
	spec := qemu.Spec{VCPUs: 1, MemoryMB: max(memoryMB, info.MinMemoryMB), DiskGB: info.MinDiskGB, Image: name, ForwardSSH: info.SSH}
	for i := range cfg.Rounds {
		rd, err := runRound(ctx, d, fmt.Sprintf("bench-%s-%d", name, i+1), spec, floorCmd, cfg)
		if err != nil {
			return ImageReport{}, fmt.Errorf("vmbench: %s, round %d: %w", name, i+1, err)
		}
		fmt.Fprintf(cfg.Progress, "%s, round %d: create → exec-ready %.2f s, bare qemu boot %.2f s, exec p50 %.2f ms",
			name, i+1, rd.ReadyS, rd.FloorS, rd.ExecP50ms)
		if rd.SSHReadyS > 0 {
			fmt.Fprintf(cfg.Progress, ", create → SSH banner %.2f s", rd.SSHReadyS)
		}
		fmt.Fprintln(cfg.Progress)
		ir.Rounds = append(ir.Rounds, rd)
	}
	m := func(f func(Round) float64) float64 { return benchstat.MedianOf(ir.Rounds, f) }
	ir.Median = Round{ReadyS: m(func(x Round) float64 { return x.ReadyS }), FloorS: m(func(x Round) float64 { return x.FloorS }),
		Ratio: m(func(x Round) float64 { return x.Ratio }), ExecP50ms: m(func(x Round) float64 { return x.ExecP50ms }),
		ExecP99ms: m(func(x Round) float64 { return x.ExecP99ms }), SSHReadyS: m(func(x Round) float64 { return x.SSHReadyS })}
	return ir, nil
}

// runRound times one bare boot and one VM: its start to its first exec,
// to its SSH banner when it has one, and its execs; then stops it.
func runRound(ctx context.Context, d *qemu.Driver, id string, spec qemu.Spec, floorCmd []string, cfg Config) (Round, error) {
	var rd Round
	fmt.Fprintf(cfg.Progress, "%s: bare qemu...\n", id)
	start := time.Now()
	fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	out, err := exec.CommandContext(fctx, floorCmd[0], floorCmd[1:]...).CombinedOutput()
	cancel()
	if err != nil {
		return Round{}, fmt.Errorf("bare qemu: %v %s", err, out)
	}
	rd.FloorS = time.Since(start).Seconds()

	fmt.Fprintf(cfg.Progress, "%s: VM start and %d execs...\n", id, cfg.Execs)
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	start = time.Now()
	vm, err := d.Start(sctx, id, spec)
	if err != nil {
		return Round{}, err
	}
	defer vm.Stop(context.Background()) // a no-op once stopped below
	if _, err = vm.Exec(sctx, []string{"true"}, nil, 0); err != nil {
		return Round{}, err
	}
	rd.ReadyS = time.Since(start).Seconds()
	rd.Ratio = rd.ReadyS / rd.FloorS
	if addr := vm.SSHAddr(); addr != "" {
		if err := waitSSHBanner(sctx, addr); err != nil {
			return Round{}, err
		}
		rd.SSHReadyS = time.Since(start).Seconds()
	}
	lat := make([]float64, 0, cfg.Execs)
	for range cfg.Execs {
		t := time.Now()
		res, err := vm.Exec(sctx, []string{"true"}, nil, 0)
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("vmbench: true exited %d", res.ExitCode)
		}
		if err != nil {
			return Round{}, err
		}
		lat = append(lat, float64(time.Since(t).Microseconds())/1000)
	}
	sort.Float64s(lat)
	rd.ExecP50ms, rd.ExecP99ms = lat[len(lat)/2], lat[len(lat)*99/100]
	return rd, vm.Stop(sctx)
}

// waitSSHBanner waits until an SSH server answers at addr with its
// banner ("SSH-2.0-..."). Before the guest's server listens, QEMU's
// forward accepts the connection and closes it, or (before the guest's
// network is up) holds it unanswered: each try waits 2 s at most.
func waitSSHBanner(ctx context.Context, addr string) error {
	for {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if strings.HasPrefix(line, "SSH-") {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("vmbench: no SSH banner at %s: %w", addr, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
