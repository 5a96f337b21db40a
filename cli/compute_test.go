package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/compute/computerules"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
	"github.com/latticenet/lattice/internal/testkit/vmtest"
)

// TestComputeCommands is the walk-through a new user makes, against a
// real `lattice cloud`: create a debian-12 VM (with the lattice SSH key
// made for them), log in with `compute ssh` through a real ssh client,
// power it off and on with its files kept, read its console, delete it;
// then the errors a person meets; and the cloud's Ctrl-C leaves no QEMU.
func TestComputeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("boots VMs")
	}
	tooltest.Need(t, "qemu-system-x86_64")
	tooltest.Need(t, "ssh")
	images := vmtest.ImageDir(t) // before cleanEnv gives the test a HOME of its own
	cleanEnv(t)
	t.Setenv("LATTICE_API", "")
	dir := filepath.Join(t.TempDir(), "cloud")
	s := startServer(t, cloudReady, "cloud", "--data", dir, "--api", "127.0.0.1:0", "--s3", "127.0.0.1:0", "--dns", "", "--cdn", "",
		"--compute-images", images)
	admin, err := os.ReadFile(filepath.Join(dir, "admin-api-key"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LATTICE_API_URL", s.url)
	t.Setenv("LATTICE_API_KEY", strings.TrimSpace(string(admin)))

	r := mustRun(t, "compute", "create", "web")
	for _, want := range []string{"name:", "web", "status:", "running", "image:", "debian-12", "ssh -i "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("compute create: no %q in\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "made your lattice SSH key") {
		t.Errorf("compute create stderr: %q", r.stderr)
	}
	// The ssh command it prints logs in as it is (it names the key).
	if m := regexp.MustCompile(`(?m)^ssh:\s+(ssh .*?) \(or:`).FindStringSubmatch(r.stdout); m == nil {
		t.Errorf("compute create prints no ssh command:\n%s", r.stdout)
	} else {
		args := append(strings.Fields(m[1])[1:], "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "hostname")
		out, err := exec.Command(tooltest.Need(t, "ssh"), args...).Output()
		if err != nil || strings.TrimSpace(string(out)) != "web" {
			t.Errorf("the printed %q: %q, %v", m[1], out, err)
		}
	}
	r = mustRun(t, "compute", "ssh", "web", "--", "-o", "BatchMode=yes", "sh", "-c", "'echo kept > /root/file && sync && cat /etc/debian_version && hostname'")
	if lines := strings.Fields(r.stdout); len(lines) != 2 || !strings.HasPrefix(lines[0], "12.") || lines[1] != "web" {
		t.Errorf("compute ssh: %q", r.stdout)
	}
	// A tenant's VM reaches nothing through the host: not the platform's
	// API on the host's loopback (10.0.2.2 on QEMU's user network).
	apiPort := s.url[strings.LastIndex(s.url, ":")+1:]
	r = mustRun(t, "compute", "ssh", "web", "--", "-o", "BatchMode=yes",
		"timeout 5 bash -c '</dev/tcp/10.0.2.2/"+apiPort+"' 2>/dev/null && echo reached || echo isolated")
	if strings.TrimSpace(r.stdout) != "isolated" {
		t.Errorf("the guest and the host's loopback: %q, want isolated", r.stdout)
	}
	mustRun(t, "compute", "power", "web", "off")
	r = mustRun(t, "compute", "ls")
	if !strings.Contains(r.stdout, "stopped") {
		t.Errorf("compute ls after power off:\n%s", r.stdout)
	}
	wantFail(t, run(t, "compute", "ssh", "web"), 1, "is stopped", "compute power web on")
	wantFail(t, run(t, "compute", "power", "web", "off"), 1, "stopped")
	mustRun(t, "compute", "power", "web", "on")
	r = mustRun(t, "compute", "ssh", "web", "--", "-o", "BatchMode=yes", "cat", "/root/file")
	if strings.TrimSpace(r.stdout) != "kept" {
		t.Errorf("after power off and on, /root/file = %q", r.stdout)
	}
	if r := run(t, "compute", "ssh", "web", "--", "-o", "BatchMode=yes", "exit", "3"); r.code != 3 {
		t.Errorf("ssh's exit status: %d, want 3 (%s)", r.code, r.stderr)
	}
	if r := mustRun(t, "compute", "logs", "web"); !strings.Contains(r.stdout, "Debian GNU/Linux 12 web") {
		t.Errorf("compute logs: %.300q", r.stdout)
	}
	if r := mustRun(t, "compute", "show", "web", "--json"); !strings.Contains(r.stdout, `"status": "running"`) {
		t.Errorf("compute show --json: %s", r.stdout)
	}

	// What a person gets wrong.
	wantFail(t, run(t, "compute", "create", "Web"), 1, "lower-case")
	// A 0 or "" given is judged here: the body would leave it out, and
	// the server would take the default.
	wantFail(t, run(t, "compute", "create", "z", "--vcpus", "0"), 2, "--vcpus 0")
	wantFail(t, run(t, "compute", "create", "z", "--memory", "0"), 2, "--memory 0")
	wantFail(t, run(t, "compute", "create", "z", "--image", ""), 2, "--image is empty")
	wantFail(t, run(t, "compute", "create", "web"), 1, "already have a VM of that name")
	wantFail(t, run(t, "compute", "create", "tiny", "--image", "minimal", "--ssh-key", "ssh-ed25519 AAAA"), 1, "ssh")
	wantFail(t, run(t, "compute", "show", "nope"), 1, "no VM nope", "compute ls")
	wantFail(t, run(t, "compute", "power", "web", "sideways"), 2, "on, off or reboot")
	wantFail(t, run(t, "compute", "power", "web"), 2, "on, off or reboot")
	wantFail(t, run(t, "compute", "rm", "web", "extra"), 2, `unexpected argument "extra"`)
	wantFail(t, run(t, "compute", "launch"), 2, "unknown command")

	mustRun(t, "compute", "rm", "web")
	if r := mustRun(t, "compute", "ls"); strings.Contains(r.stdout, "web") {
		t.Errorf("compute ls after rm:\n%s", r.stdout)
	}

	// A VM running when the cloud is stopped stops with it, and boots
	// again when the cloud starts again.
	mustRun(t, "compute", "create", "left", "--image", "minimal", "--memory", "512")
	stopped := func() {
		t.Helper()
		if code := s.stop(); code != 0 {
			t.Errorf("lattice cloud exited %d", code)
		}
		if out, err := exec.Command("pgrep", "-f", dir).Output(); err == nil {
			t.Errorf("QEMU still runs after the cloud stopped: %s", out)
		}
	}
	stopped()
	s = startServer(t, cloudReady, "cloud", "--data", dir, "--api", "127.0.0.1:0", "--s3", "127.0.0.1:0", "--dns", "", "--cdn", "",
		"--compute-images", images)
	t.Setenv("LATTICE_API_URL", s.url)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r := mustRun(t, "compute", "show", "left")
		if strings.Contains(r.stdout, "running") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the cloud's restart, left is not running again:\n%s", r.stdout)
		}
		time.Sleep(250 * time.Millisecond)
	}
	stopped()
}

// TestHowToRun: compute ssh on a VM that is not running says what brings
// it there; a VM on its way was told to power on, which the API refuses.
func TestHowToRun(t *testing.T) {
	for _, tt := range []struct {
		status, want string
	}{
		{computerules.Stopped, "`lattice compute power web on`"},
		{computerules.Stopping, "once it has stopped, `lattice compute power web on`"},
		{computerules.Provisioning, "on its way: `lattice compute show web` says when it runs"},
		{computerules.Starting, "on its way"},
		{computerules.Error, "it failed: no disk; `lattice compute logs web`"},
	} {
		got := howToRun(cloudwire.VM{Name: "web", Status: tt.status, StatusReason: "no disk"})
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.status, got, tt.want)
		}
	}
}

// TestProvisioningHint: the wait names what a VM that provisions long
// waits for on its host. A trial on a leased provider, its image built,
// was told the image was being built: a lease's VM waits for the provider.
func TestProvisioningHint(t *testing.T) {
	for _, tt := range []struct {
		accel, want, not string
	}{
		{"kvm", "image to be built", "emulated"},
		{"tcg", "boots emulated (TCG)", "provider"},
		{"lease", "a provider accepts the lease and boots the VM", ""},
		{"", "image to be built", "emulated"}, // the driver not made yet: its accel unknown
	} {
		got := provisioningHint(tt.accel)
		if !strings.Contains(got, tt.want) || !strings.Contains(got, "image") || tt.not != "" && strings.Contains(got, tt.not) {
			t.Errorf("%s: %q, want it to say %q and of the image, and not %q", tt.accel, got, tt.want, tt.not)
		}
	}
}
