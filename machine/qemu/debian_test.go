package qemu_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/testkit/tooltest"
	"github.com/latticenet/lattice/internal/testkit/vmtest"
	"github.com/latticenet/lattice/machine/qemu"
)

// TestDebian boots a debian-12 VM (its image built on first use, then
// taken from the shared cache) and checks that it is Debian 12; that its
// root disk, grown to the spec's size, keeps a file across a stop and a
// start; that a real ssh client logs in as root, through the forwarded
// port, with a key installed through the agent; that Err is nil after
// Stop; and that Err says how QEMU ended when it is killed from outside.
func TestDebian(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image and boots VMs")
	}
	sshBin := tooltest.Need(t, "ssh")
	keygen := tooltest.Need(t, "ssh-keygen")
	tooltest.Need(t, "qemu-img")
	d := newDriver(t, "")
	bctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	if err := d.Prepare(bctx, "debian-12"); err != nil {
		if errors.Is(err, qemu.ErrHostPackage) {
			tooltest.Missing(t, err)
		}
		t.Fatal(err)
	}
	t.Logf("debian-12 image ready in %v (built, or found in %s)", time.Since(start).Round(time.Millisecond), vmtest.ImageDir(t))

	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	spec := qemu.Spec{VCPUs: 1, MemoryMB: 512, DiskGB: 2, Image: "debian-12", ForwardSSH: true}
	start = time.Now()
	vm, err := d.Start(ctx, "deb-1", spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("create → exec-ready in %v", time.Since(start).Round(time.Millisecond))
	running := vm
	t.Cleanup(func() { running.Stop(context.Background()) })

	run := func(vm *qemu.VM, script string) string {
		t.Helper()
		res, err := vm.Exec(ctx, []string{"sh", "-c", script}, nil, time.Minute)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%q: %+v, %v", script, res, err)
		}
		return string(res.Stdout)
	}
	if got := run(vm, "cat /etc/debian_version"); !strings.HasPrefix(got, "12.") {
		t.Errorf("/etc/debian_version = %q, want 12.x", got)
	}
	// The root file system fills the 2 GiB disk once grown (the unit
	// runs at boot; starting it again waits for it).
	if got := run(vm, "systemctl start lattice-growfs.service && df -B1M --output=size / | tail -1"); atoiOr0(got) < 1900 {
		t.Errorf("root file system of %s MiB on a 2 GiB disk, want it grown", strings.TrimSpace(got))
	}
	// The machine is named by its id until it has a name of its own,
	// which its restarts keep.
	if got := run(vm, "hostname"); got != "deb-1\n" {
		t.Errorf("host name %q, want deb-1", got)
	}
	run(vm, "echo kept > /root/note && echo mine > /etc/hostname && hostname mine && sync")

	// A real ssh client, with a key the agent installs as the cloud does.
	dir := t.TempDir()
	key := filepath.Join(dir, "id_ed25519")
	if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := vm.Exec(ctx, []string{"sh", "-c", "mkdir -p -m 700 /root/.ssh && cat >> /root/.ssh/authorized_keys && chmod 600 /root/.ssh/authorized_keys"}, pub, 0); err != nil || res.ExitCode != 0 {
		t.Fatalf("installing the key: %+v %v", res, err)
	}
	addr := vm.SSHAddr()
	host, port, ok := strings.Cut(addr, ":")
	if !ok || host != "127.0.0.1" {
		t.Fatalf("SSHAddr() = %q, want 127.0.0.1:PORT", addr)
	}
	// sshd starts shortly after the agent: the client tries for a while.
	var out []byte
	sshStart := time.Now()
	for {
		sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
		out, err = exec.CommandContext(sctx, sshBin, "-i", key, "-p", port,
			"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
			"-o", "ConnectTimeout=10", "-o", "LogLevel=ERROR",
			"root@127.0.0.1", "echo ssh-ok $(id -un) $(cat /root/note)").CombinedOutput()
		scancel()
		if err == nil || time.Since(sshStart) > time.Minute {
			break
		}
		time.Sleep(time.Second)
	}
	if got := strings.TrimSpace(string(out)); err != nil || got != "ssh-ok root kept" {
		diag, _ := vm.Exec(ctx, []string{"sh", "-c", "systemctl status ssh lattice-ssh-hostkey systemd-networkd --no-pager; ip addr"}, nil, 0)
		t.Fatalf("ssh: %q, %v; want ssh-ok root kept\n%s", got, err, diag.Stdout)
	}
	t.Logf("ssh login %v after exec-ready", time.Since(sshStart).Round(time.Millisecond))

	if err := vm.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := vm.Err(); err != nil {
		t.Errorf("Err() after Stop = %v, want nil", err)
	}

	// A disk only grows.
	small := spec
	small.DiskGB = 1
	if _, err := d.Start(ctx, "deb-1", small); !errors.Is(err, qemu.ErrSpec) {
		t.Errorf("restart with a smaller disk: %v, want ErrSpec", err)
	}
	// Started again, the VM has its disk as it was.
	vm, err = d.Start(ctx, "deb-1", spec)
	if err != nil {
		t.Fatal(err)
	}
	running = vm
	if got := run(vm, "cat /root/note; hostname"); got != "kept\nmine\n" {
		t.Errorf("after a restart /root/note and the host name = %q, want kept and mine", got)
	}
	// Ended from outside, the VM says so.
	if err := syscall.Kill(qemu.PID(vm), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-vm.Done():
	case <-ctx.Done():
		t.Fatal("QEMU still runs after SIGTERM")
	}
	if err := vm.Err(); !errors.Is(err, qemu.ErrExited) || errors.Is(err, qemu.ErrGuestStopped) || !strings.Contains(err.Error(), "terminating on signal 15") {
		t.Errorf("Err() after SIGTERM = %v, want ErrExited naming the signal, not ErrGuestStopped", err)
	}
	t.Logf("Err() after SIGTERM: %.300v", vm.Err())
}

func atoiOr0(s string) int {
	n := 0
	for _, c := range strings.TrimSpace(s) {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}
