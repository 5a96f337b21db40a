package qemu_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/testkit/tooltest"
	"github.com/latticenet/lattice/internal/testkit/vmtest"
	"github.com/latticenet/lattice/machine/agent"
	"github.com/latticenet/lattice/machine/qemu"
)

// TestMain lets the test binary be the guest agent: the image the driver
// builds carries this binary as its lattice, whose init runs
// `lattice guest-agent`.
func TestMain(m *testing.M) {
	agent.ServeIfAsked()
	os.Exit(m.Run())
}

// newDriver returns a driver on a new directory, with the shared image
// cache. Where the host lacks QEMU, the guest kernel or busybox, the test
// is skipped, and fails in CI (CI=true), which installs them.
func newDriver(t *testing.T, accel string) *qemu.Driver {
	t.Helper()
	tooltest.Need(t, "qemu-system-x86_64")
	d, err := qemu.New(qemu.Config{Dir: t.TempDir(), ImageDir: vmtest.ImageDir(t), Accel: accel})
	if errors.Is(err, qemu.ErrHostPackage) {
		tooltest.Missing(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestVM boots a real microvm of the minimal image and drives it through
// its agent: exec with stdin, exit codes and both outputs, a timeout, a
// TCP server in the guest reached through Dial, the disk mounted and
// kept across a restart, and a clean stop that leaves no QEMU behind.
func TestVM(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a VM")
	}
	d := newDriver(t, "")
	t.Logf("accelerator: %s", d.Accel())
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	spec := qemu.Spec{VCPUs: 1, MemoryMB: 256, DiskGB: 1, Image: "minimal"}
	start := time.Now()
	vm, err := d.Start(ctx, "vm-1", spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("create → exec-ready in %v", time.Since(start).Round(time.Millisecond))
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			vm.Stop(context.Background())
		}
	})

	res, err := vm.Exec(ctx, []string{"sh", "-c", "cat; echo to-stderr >&2; exit 3"}, []byte("from stdin\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || string(res.Stdout) != "from stdin\n" || string(res.Stderr) != "to-stderr\n" {
		t.Errorf("exec = exit %d, stdout %q, stderr %q; want 3, the stdin, to-stderr", res.ExitCode, res.Stdout, res.Stderr)
	}
	if res, err := vm.Exec(ctx, []string{"/no/such/command"}, nil, 0); err != nil || res.ExitCode != -1 || res.Error == "" {
		t.Errorf("exec of a missing command = %+v, %v; want exit -1 with an error", res, err)
	}
	if res, err := vm.Exec(ctx, []string{"sleep", "10"}, nil, 500*time.Millisecond); err != nil || !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("exec past its timeout = %+v, %v; want timed out", res, err)
	}
	if _, err := vm.Exec(ctx, nil, nil, 0); !errors.Is(err, agent.ErrBadRequest) {
		t.Errorf("exec of nothing: %v, want ErrBadRequest", err)
	}
	// Output past the bound is cut, and says so.
	res, err = vm.Exec(ctx, []string{"sh", "-c", fmt.Sprintf("head -c %d /dev/zero", agent.MaxOutput+1000)}, nil, 0)
	if err != nil || len(res.Stdout) != agent.MaxOutput || !res.StdoutTruncated {
		t.Errorf("exec of %d bytes: %d bytes, truncated %v, %v", agent.MaxOutput+1000, len(res.Stdout), res.StdoutTruncated, err)
	}

	// A TCP server in the guest, reached without guest networking.
	if res, err := vm.Exec(ctx, []string{"sh", "-c", "mkdir -p /tmp/www && echo hello-from-the-guest > /tmp/www/index.html && httpd -p 127.0.0.1:8000 -h /tmp/www"}, nil, 0); err != nil || res.ExitCode != 0 {
		t.Fatalf("starting httpd: %+v %v", res, err)
	}
	conn, err := vm.Dial(ctx, 8000)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /index.html HTTP/1.0\r\n\r\n")
	body, err := io.ReadAll(bufio.NewReader(conn))
	conn.Close()
	if err != nil || !strings.Contains(string(body), "hello-from-the-guest") {
		t.Errorf("HTTP through Dial: %q, %v", body, err)
	}
	if _, err := vm.Dial(ctx, 8001); !errors.Is(err, agent.ErrGuest) {
		t.Errorf("dial of a closed port: %v, want the guest's refusal", err)
	}

	// The agent runs from its own disk, read-only.
	if res, err := vm.Exec(ctx, []string{"sh", "-c", "grep -q ' /lattice/disk ext4 ro,' /proc/mounts && [ -x /lattice/bin/lattice ] && ! touch /lattice/disk/x 2>/dev/null"}, nil, 0); err != nil || res.ExitCode != 0 {
		diag, _ := vm.Exec(ctx, []string{"sh", "-c", "cat /proc/mounts; ls -l /lattice /lattice/disk"}, nil, 0)
		t.Errorf("the agent disk is not mounted read-only at /lattice/disk: %+v %v\n%s%s", res, err, diag.Stdout, diag.Stderr)
	}

	// The disk is mounted; what is written there outlives a restart.
	if res, err := vm.Exec(ctx, []string{"sh", "-c", "grep -q ' /data ext4 ' /proc/mounts && echo kept > /data/note && sync"}, nil, 0); err != nil || res.ExitCode != 0 {
		diag, _ := vm.Exec(ctx, []string{"sh", "-c", "cat /proc/mounts; ls -l /dev/vd*; dmesg | tail -20"}, nil, 0)
		t.Fatalf("writing to /data: %+v %v\n%s%s", res, err, diag.Stdout, diag.Stderr)
	}
	if err := vm.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if console, _ := vm.Console(); !strings.Contains(string(console), "lattice: guest up") {
		t.Errorf("console log lacks the guest's start:\n%s", console)
	}
	vm, err = d.Start(ctx, "vm-1", spec)
	if err != nil {
		t.Fatal(err)
	}
	stopped = false
	if res, err := vm.Exec(ctx, []string{"cat", "/data/note"}, nil, 0); err != nil || string(res.Stdout) != "kept\n" {
		t.Errorf("after a restart /data/note = %+v, %v; want kept", res, err)
	}
	if err := vm.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped = true
	select {
	case <-vm.Done():
	default:
		t.Error("QEMU still runs after Stop")
	}
	if err := vm.Err(); err != nil {
		t.Errorf("Err() after Stop = %v, want nil", err)
	}

	// Powered off by its guest, the VM says so (ErrGuestStopped); its
	// QEMU, in a process group of its own, is not the test's.
	vm, err = d.Start(ctx, "vm-1", spec)
	if err != nil {
		t.Fatal(err)
	}
	stopped = false
	if pgid, err := syscall.Getpgid(qemu.PID(vm)); err != nil || pgid == syscall.Getpgrp() {
		t.Errorf("QEMU's process group %d (%v) is the test's: a terminal's Ctrl-C would reach it", pgid, err)
	}
	vm.Exec(ctx, []string{"poweroff", "-f"}, nil, 2*time.Second) // its answer may not come
	select {
	case <-vm.Done():
	case <-ctx.Done():
		t.Fatal("QEMU still runs after the guest's poweroff")
	}
	stopped = true
	if err := vm.Err(); !errors.Is(err, qemu.ErrExited) || !errors.Is(err, qemu.ErrGuestStopped) {
		t.Errorf("Err() after the guest's poweroff = %v, want ErrExited and ErrGuestStopped", err)
	}
}

// TestAgentDiskMissing: a guest that cannot mount its agent disk powers
// off, and Start fails with the guest's reason, without waiting for the
// caller's deadline.
func TestAgentDiskMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a VM")
	}
	d := newDriver(t, "")
	bad := filepath.Join(t.TempDir(), "not-ext4.img")
	if err := os.WriteFile(bad, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	qemu.SetAgentDisk(d, bad)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	vm, err := d.Start(ctx, "no-agent", qemu.Spec{VCPUs: 1, MemoryMB: 256, Image: "minimal"})
	if err == nil {
		vm.Stop(context.Background())
		t.Fatal("a VM without its agent disk started")
	}
	if ctx.Err() != nil || !strings.Contains(err.Error(), "cannot mount the agent disk") {
		t.Errorf("Start without the agent disk: %v, want the guest's reason before the deadline", err)
	}
}

// TestSpecRefused: a spec or id the driver cannot run is refused before
// anything starts.
func TestSpecRefused(t *testing.T) {
	d := newDriver(t, qemu.TCG)
	for _, tt := range []struct {
		id   string
		spec qemu.Spec
	}{
		{"a", qemu.Spec{VCPUs: 0, MemoryMB: 256, Image: "minimal"}},
		{"a", qemu.Spec{VCPUs: 1, MemoryMB: 64, Image: "minimal"}},
		{"a", qemu.Spec{VCPUs: 1, MemoryMB: 256, DiskGB: -1, Image: "minimal"}},
		{"a", qemu.Spec{VCPUs: 1, MemoryMB: 256, Image: "windows"}},
		{"a", qemu.Spec{VCPUs: 1, MemoryMB: 256, Image: "minimal", ForwardSSH: true}},
		{"a", qemu.Spec{VCPUs: 1, MemoryMB: 256, DiskGB: 0, Image: "debian-12"}},
		{"a", qemu.Spec{VCPUs: 1, MemoryMB: 128, DiskGB: 1, Image: "debian-12"}},
		{"../x", qemu.Spec{VCPUs: 1, MemoryMB: 256, Image: "minimal"}},
	} {
		if _, err := d.Start(t.Context(), tt.id, tt.spec); !errors.Is(err, qemu.ErrSpec) {
			t.Errorf("Start(%q, %+v) = %v, want ErrSpec", tt.id, tt.spec, err)
		}
	}
	_, err := d.Start(t.Context(), "a", qemu.Spec{VCPUs: 1, MemoryMB: 256, DiskGB: 0, Image: "debian-12"})
	if want := "image debian-12 needs disk_gb of at least 1"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a debian-12 VM without a disk: %v, want %q", err, want)
	}
}

// TestImages: both images are listed, one of them the default, and what
// Start checks agrees with what the list says.
func TestImages(t *testing.T) {
	got := map[string]qemu.ImageInfo{}
	defaults := 0
	for _, img := range qemu.Images() {
		got[img.Name] = img
		if img.Default {
			defaults++
		}
		if img.Description == "" {
			t.Errorf("image %s has no description", img.Name)
		}
	}
	if m, d := got["minimal"], got["debian-12"]; m.SSH || m.MinDiskGB != 0 || !d.SSH || d.MinDiskGB < 1 || d.MinMemoryMB < qemu.MinMemoryMB {
		t.Errorf("images %+v", got)
	}
	if defaults != 1 {
		t.Errorf("%d default images, want 1", defaults)
	}
}

// TestKVMProbeRemembered: the accelerator chosen by the probe is kept in
// the driver's directory, and a second driver there does not probe again.
func TestKVMProbeRemembered(t *testing.T) {
	tooltest.Need(t, "qemu-system-x86_64")
	dir := t.TempDir()
	first, err := qemu.New(qemu.Config{Dir: dir, ImageDir: vmtest.ImageDir(t)})
	if errors.Is(err, qemu.ErrHostPackage) {
		tooltest.Missing(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "kvm-probe"))
	if err != nil || !strings.HasSuffix(string(b), first.Accel()+"\n") {
		t.Fatalf("kvm-probe = %q, %v; want it to end with %s", b, err, first.Accel())
	}
	// The remembered answer is taken as it is: flip it, and a second
	// driver reports the flipped one, which only a probe could contradict.
	other := qemu.KVM
	if first.Accel() == qemu.KVM {
		other = qemu.TCG
	}
	key, _, _ := strings.Cut(string(b), "\n")
	if err := os.WriteFile(filepath.Join(dir, "kvm-probe"), []byte(key+"\n"+other+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	second, err := qemu.New(qemu.Config{Dir: dir, ImageDir: vmtest.ImageDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	if second.Accel() != other {
		t.Errorf("second driver chose %s, not the remembered %s: it probed again", second.Accel(), other)
	}
}
