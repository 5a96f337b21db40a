package computeapi_test

// End-to-end tests of the Compute endpoints: the real store in a
// temporary directory, the real cloudapi server with the Compute routes,
// and the real host booting real QEMU microvms of the minimal image (TCG
// where KVM does not work), driven with real requests under the API keys
// of two accounts, alice and bob. Every response is checked against
// docs/openapi/cloud.json.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/compute/computeapi"
	"github.com/latticenet/lattice/cloud/compute/computerules"
	"github.com/latticenet/lattice/cloud/compute/computestore"
	"github.com/latticenet/lattice/cloud/compute/vmhost"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/internal/testkit/apitest"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
	"github.com/latticenet/lattice/internal/testkit/vmtest"
	"github.com/latticenet/lattice/machine/agent"
	"github.com/latticenet/lattice/machine/qemu"
)

// TestMain lets the test binary be the guests' agent (the images carry
// it as their lattice), and fails the package when one of the Compute
// operations of the OpenAPI document was answered by no test.
func TestMain(m *testing.M) {
	agent.ServeIfAsked()
	os.Exit(openapitest.Cloud.Covered(m.Run(), "/api/compute/"))
}

var quiet = slog.New(slog.NewTextHandler(logOut(), nil))

// logOut is where the host logs: nowhere, unless LATTICE_TEST_LOG=1.
func logOut() io.Writer {
	if os.Getenv("LATTICE_TEST_LOG") == "1" {
		return os.Stderr
	}
	return io.Discard
}

// testAPI is a served API with the Compute routes over a host.
type testAPI struct {
	t          *testing.T
	url        string
	dir        string // the host's machines
	store      *computestore.Store
	host       *vmhost.Host
	drv        *vmhost.QEMU
	stop       func() // ends the host's Serve, stopping its VMs
	alice, bob string
}

type options struct {
	quota, capacity computerules.Resources
	serve           bool // run the host (else VMs stay as recorded)
}

func newAPI(t *testing.T, o options) *testAPI {
	t.Helper()
	dir := t.TempDir()
	a := &testAPI{t: t, dir: filepath.Join(dir, "machines")}
	cs, err := cloudstore.OpenDir(filepath.Join(dir, "cloud"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	a.store, err = computestore.Open(filepath.Join(dir, "compute"), computestore.Options{Quota: o.quota, Capacity: o.capacity, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	a.drv = vmhost.NewQEMU(qemu.Config{Dir: a.dir, ImageDir: vmtest.ImageDir(t), Logger: quiet})
	a.host = vmhost.New(a.store, a.drv, quiet)
	acc := apitest.Accounts(t)
	api := cloudapi.New(cs, acc, cloudapi.Options{RatePerSecond: -1, Logger: quiet})
	computeapi.Register(api, a.store, a.host)
	srv := httptest.NewServer(openapitest.Cloud.Handler(t, api))
	a.stop = func() {}
	if o.serve {
		a.serve()
	}
	t.Cleanup(func() {
		a.stop()
		srv.Close()
		api.Wait()
		a.store.Close()
		cs.Close()
	})
	a.url = srv.URL
	for _, acct := range []struct {
		name   string
		secret *string
	}{{"alice", &a.alice}, {"bob", &a.bob}} {
		_, secret, err := acc.CreateKey(acct.name, "", false, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		*acct.secret = secret
	}
	return a
}

// serve runs the host until a.stop, having recorded what it resumes
// first, as the platform's Provision does before the API answers.
func (a *testAPI) serve() {
	if err := a.host.Recover(); err != nil {
		a.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := a.host.Serve(ctx)
		a.drv.Drain()
		done <- err
	}()
	a.stop = func() {
		cancel()
		if err := <-done; err != nil {
			a.t.Errorf("host: %v", err)
		}
		a.stop = func() {}
	}
}

func (a *testAPI) do(method, path, key, body string) apitest.Response {
	a.t.Helper()
	return apitest.Do(a.t, method, a.url+path, key, body)
}

func (a *testAPI) vm(what string, r apitest.Response, status int) cloudwire.VM {
	a.t.Helper()
	apitest.Want(a.t, what, r, status)
	var v cloudwire.VM
	apitest.Decode(a.t, what, r, &v)
	return v
}

// await polls VM id until its status is want ("gone": until it is 404);
// a VM in error fails the test unless want is error.
func (a *testAPI) await(id, want string) cloudwire.VM {
	a.t.Helper()
	deadline := time.Now().Add(3 * time.Minute) // a boot under TCG on a loaded 2-core host
	for {
		r := a.do("GET", "/api/compute/vms/"+id, a.alice, "")
		if r.Status == http.StatusNotFound && want == "gone" {
			return cloudwire.VM{}
		}
		v := a.vm("get "+id, r, http.StatusOK)
		switch {
		case v.Status == want:
			return v
		case v.Status == computerules.Error:
			a.t.Fatalf("VM %s is in error (%s), want %s; console:\n%s", id, v.StatusReason, want, a.console(id))
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("VM %s still %s after 3 minutes; console:\n%s", id, v.Status, a.console(id))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (a *testAPI) console(id string) string {
	r := a.do("GET", "/api/compute/vms/"+id+"/console", a.alice, "")
	return string(r.Body)
}

// exec runs a shell command in VM id and returns its stdout.
func (a *testAPI) exec(id, script string) string {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := a.host.Exec(ctx, id, []string{"/bin/sh", "-c", script}, nil, 20*time.Second)
	if err != nil || r.ExitCode != 0 {
		a.t.Fatalf("exec %q in %s: %v, exit %d, stderr %q", script, id, err, r.ExitCode, r.Stderr)
	}
	return strings.TrimSpace(string(r.Stdout))
}

// needQEMU skips (fails in CI) where the host cannot run VMs.
func needQEMU(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("boots VMs")
	}
	tooltest.Need(t, "qemu-system-x86_64")
}

// TestVMLifeCycle boots a real VM through the API and takes it through
// every transition: provisioning (requests refused meanwhile), running
// with its user data run once, another account seeing nothing, power off
// and on and reboot keeping its disk, a host restart booting it again, a
// crash of its QEMU marking it error, power on from error, and a delete
// that removes its files. No QEMU outlives the test.
func TestVMLifeCycle(t *testing.T) {
	needQEMU(t)
	a := newAPI(t, options{serve: true})
	body := `{"name": "box", "image": "minimal", "memory_mb": 256, "disk_gb": 1,
		"user_data": "#!/bin/sh\necho ran >> /data/user-data-runs\n"}`
	v := a.vm("create", a.do("POST", "/api/compute/vms", a.alice, body), http.StatusCreated)
	if v.Status != computerules.Provisioning || v.Name != "box" || v.VCPUs != 1 || v.MemoryMB != 256 || v.DiskGB != 1 ||
		v.Image != "minimal" || v.Console != "/api/compute/vms/"+v.ID+"/console" || v.SSH != nil {
		t.Errorf("created %+v", v)
	}
	id := v.ID
	// While it provisions, power and delete wait.
	apitest.WantError(t, "power during provisioning", a.do("POST", "/api/compute/vms/"+id+"/power", a.alice, `{"action": "off"}`),
		http.StatusConflict, "conflict", "provisioning")
	apitest.WantError(t, "delete during provisioning", a.do("DELETE", "/api/compute/vms/"+id, a.alice, ""),
		http.StatusConflict, "conflict", "provisioning")

	v = a.await(id, computerules.Running)
	if v.Accel != qemu.KVM && v.Accel != qemu.TCG {
		t.Errorf("accel %q", v.Accel)
	}
	if got := a.exec(id, "hostname"); got != "box" {
		t.Errorf("guest host name %q, want box", got)
	}
	a.exec(id, "echo kept > /data/file && sync")
	waitFor(t, "the user data to run", func() bool { return a.exec(id, "cat /data/user-data-runs 2>/dev/null || true") == "ran" })
	if c := a.console(id); !strings.Contains(c, "lattice: guest up") {
		t.Errorf("console has no word of the guest's init: %.300q", c)
	}

	// Bob sees none of it.
	for _, req := range [][3]string{{"GET", "/api/compute/vms/" + id, ""}, {"DELETE", "/api/compute/vms/" + id, ""},
		{"POST", "/api/compute/vms/" + id + "/power", `{"action": "off"}`}, {"GET", "/api/compute/vms/" + id + "/console", ""}} {
		apitest.WantError(t, "bob: "+req[0]+" "+req[1], a.do(req[0], req[1], a.bob, req[2]), http.StatusNotFound, "not_found", "VM not found")
	}
	var list cloudwire.List[cloudwire.VM]
	apitest.Decode(t, "bob's list", a.do("GET", "/api/compute/vms", a.bob, ""), &list)
	if len(list.Data) != 0 || list.Meta.Total != 0 {
		t.Errorf("bob lists %+v", list)
	}

	power := func(action, transitional, steady string) {
		t.Helper()
		v := a.vm("power "+action, a.do("POST", "/api/compute/vms/"+id+"/power", a.alice, `{"action": "`+action+`"}`), http.StatusAccepted)
		if v.Status != transitional {
			t.Errorf("power %s: %s, want %s", action, v.Status, transitional)
		}
		a.await(id, steady)
	}
	apitest.WantError(t, "on while running", a.do("POST", "/api/compute/vms/"+id+"/power", a.alice, `{"action": "on"}`),
		http.StatusConflict, "conflict", "running")
	power(computerules.Off, computerules.Stopping, computerules.Stopped)
	if _, err := a.host.Exec(t.Context(), id, []string{"true"}, nil, time.Second); !errors.Is(err, vmhost.ErrNotRunning) {
		t.Errorf("exec in a stopped VM: %v", err)
	}
	apitest.WantError(t, "off while stopped", a.do("POST", "/api/compute/vms/"+id+"/power", a.alice, `{"action": "off"}`),
		http.StatusConflict, "conflict", "stopped")
	power(computerules.On, computerules.Starting, computerules.Running)
	if got := a.exec(id, "cat /data/file"); got != "kept" {
		t.Errorf("after off and on, /data/file = %q", got)
	}
	power(computerules.Reboot, computerules.Rebooting, computerules.Running)
	if got := a.exec(id, "cat /data/file; cat /data/user-data-runs"); got != "kept\nran" {
		t.Errorf("after a reboot: %q (the user data runs once)", got)
	}

	// The host stops: the VM with it, its record unchanged; the next
	// host boots it again.
	a.stop()
	if got := a.vm("get", a.do("GET", "/api/compute/vms/"+id, a.alice, ""), http.StatusOK); got.Status != computerules.Running {
		t.Errorf("record after the host stopped: %s", got.Status)
	}
	noQEMU(t, id)
	a.serve() // the host again, as a restarted platform's

	a.await(id, computerules.Running) // starting, then running
	if got := a.exec(id, "cat /data/file"); got != "kept" {
		t.Errorf("after a host restart, /data/file = %q", got)
	}

	// QEMU killed from outside: error, with the reason.
	if out, err := exec.Command("pkill", "-KILL", "-f", "vms/"+id+"/").CombinedOutput(); err != nil {
		t.Fatalf("pkill: %v %s", err, out)
	}
	v = a.await(id, computerules.Error)
	if !strings.Contains(v.StatusReason, "exited") {
		t.Errorf("reason %q", v.StatusReason)
	}
	power(computerules.On, computerules.Starting, computerules.Running)

	v = a.vm("delete", a.do("DELETE", "/api/compute/vms/"+id, a.alice, ""), http.StatusAccepted)
	if v.Status != computerules.Deleting {
		t.Errorf("delete: %s", v.Status)
	}
	a.await(id, "gone")
	if _, err := os.Stat(filepath.Join(a.dir, "vms", id)); !os.IsNotExist(err) {
		t.Errorf("the VM's files after its delete: %v", err)
	}
	noQEMU(t, id)
}

// noQEMU fails t if a QEMU of VM id runs.
func noQEMU(t *testing.T, id string) {
	t.Helper()
	if out, err := exec.Command("pgrep", "-f", "vms/"+id+"/").Output(); err == nil {
		t.Errorf("QEMU of VM %s still runs: pid %s", id, out)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestVMRequests checks what the API refuses and counts, with the host
// not running (VMs stay as recorded): validation, names, quotas, the
// host's capacity, lists and pages, images and usage.
func TestVMRequests(t *testing.T) {
	a := newAPI(t, options{quota: computerules.Resources{VMs: 3, VCPUs: 4, MemoryMB: 4096, DiskGB: 30},
		capacity: computerules.Resources{VCPUs: 6, MemoryMB: 8192, DiskGB: 40}})
	create := func(key, body string) apitest.Response { return a.do("POST", "/api/compute/vms", key, body) }
	for _, tc := range []struct{ body, fragment string }{
		{`{}`, "name is required"},
		{`{"name": "Web"}`, "lower-case"},
		{`{"name": "web", "image": "windows"}`, `image "windows"`},
		{`{"name": "web", "vcpus": 65}`, "vcpus 65"},
		{`{"name": "web", "memory_mb": 64}`, "memory_mb 64"},
		{`{"name": "web", "image": "minimal", "disk_gb": -1}`, "disk_gb -1"},
		{`{"name": "web", "ssh_keys": ["ssh-rsa nope"]}`, "ssh_keys[0]"},
		{`{"name": "web", "image": "minimal", "ssh_keys": ["` + testKey + `"]}`, "no SSH server"},
		{`{"name": "web", "user_data": "` + strings.Repeat("x", computerules.MaxUserDataSize+1) + `"}`, "user_data"},
		{`{"name": "web", "colour": "blue"}`, "colour"},
		// A field given is checked as given, not taken for its default.
		{`{"name": "web", "vcpus": 0}`, "vcpus 0"},
		{`{"name": "web", "memory_mb": 0}`, "memory_mb 0"},
		{`{"name": "web", "image": ""}`, `image ""`},
		{`{"name": "web", "VCPUS": 2}`, `"VCPUS"`},
		{`{"name": "web", "name": "db"}`, `"name"`},
		{`{"name": 7}`, ""},
	} {
		apitest.WantError(t, "create "+tc.body[:min(len(tc.body), 60)], create(a.alice, tc.body), http.StatusBadRequest, "validation_error", tc.fragment)
	}
	if n := len(a.store.All()); n != 0 {
		t.Fatalf("refused creates recorded %d VMs", n)
	}
	v := a.vm("create", create(a.alice, `{"name": "web", "ssh_keys": ["`+testKey+` me@laptop"]}`), http.StatusCreated)
	if v.Image != computeapi.DefaultImage || v.MemoryMB != computerules.DefaultMemoryMB || len(v.SSHKeys) != 1 || v.SSHKeys[0] != testKey+" me@laptop" {
		t.Errorf("created with defaults: %+v", v)
	}
	apitest.WantError(t, "same name", create(a.alice, `{"name": "web", "image": "minimal"}`), http.StatusConflict, "conflict", "name")
	a.vm("bob's web", create(a.bob, `{"name": "web", "image": "minimal"}`), http.StatusCreated) // names are per account

	// Quota: 3 VMs, 4 vCPUs, 4096 MB, 30 GB for alice.
	r := create(a.alice, `{"name": "big", "image": "minimal", "vcpus": 4}`)
	apitest.WantError(t, "vcpus past the quota", r, http.StatusForbidden, "quota_exceeded", "5 vCPUs, at most 4")
	a.vm("db", create(a.alice, `{"name": "db", "image": "minimal", "vcpus": 2, "memory_mb": 1024, "disk_gb": 20}`), http.StatusCreated)
	apitest.WantError(t, "disk past the quota", create(a.alice, `{"name": "x", "image": "minimal", "disk_gb": 20}`),
		http.StatusForbidden, "quota_exceeded", "GB of disk")
	// Capacity: 6 vCPUs on the host; alice holds 3, bob 1.
	r = create(a.bob, `{"name": "big", "image": "minimal", "vcpus": 3}`)
	apitest.WantError(t, "past the host", r, http.StatusServiceUnavailable, "insufficient_capacity", "not enough vCPUs free")
	if r.Header.Get("Retry-After") != "30" {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}

	var usage cloudwire.ComputeUsage
	apitest.Decode(t, "usage", a.do("GET", "/api/compute/usage", a.alice, ""), &usage)
	if usage.Used != (cloudwire.ComputeResources{VMs: 2, VCPUs: 3, MemoryMB: 1536, DiskGB: 20 + v.DiskGB}) || usage.Quota.VMs != 3 {
		t.Errorf("usage %+v", usage)
	}
	var list cloudwire.List[cloudwire.VM]
	apitest.Decode(t, "list", a.do("GET", "/api/compute/vms?per_page=1&page=2", a.alice, ""), &list)
	if list.Meta.Total != 2 || len(list.Data) != 1 || list.Data[0].Name != "web" {
		t.Errorf("page 2 of 1: %+v", list)
	}
	apitest.WantError(t, "bad page", a.do("GET", "/api/compute/vms?per_page=101", a.alice, ""), http.StatusBadRequest, "validation_error", "per_page")
	var images cloudwire.List[cloudwire.VMImage]
	apitest.Decode(t, "images", a.do("GET", "/api/compute/images", a.alice, ""), &images)
	names := []string{}
	for _, img := range images.Data {
		names = append(names, img.Name)
	}
	if fmt.Sprint(names) != "[minimal debian-12]" && fmt.Sprint(names) != "[debian-12 minimal]" {
		t.Errorf("images %v", names)
	}

	// The VMs were never booted (no host serves): they provision still.
	apitest.WantError(t, "bad action", a.do("POST", "/api/compute/vms/"+v.ID+"/power", a.alice, `{"action": "restart"}`),
		http.StatusBadRequest, "validation_error", "on, off or reboot")
	apitest.WantError(t, "no action", a.do("POST", "/api/compute/vms/"+v.ID+"/power", a.alice, `{}`),
		http.StatusBadRequest, "validation_error", "action")
	apitest.WantError(t, "unknown VM", a.do("GET", "/api/compute/vms/0123456789abcdef", a.alice, ""), http.StatusNotFound, "not_found", "")
	apitest.WantError(t, "unknown VM's console", a.do("GET", "/api/compute/vms/nope/console", a.alice, ""), http.StatusNotFound, "not_found", "")
	apitest.WantError(t, "no key", a.do("GET", "/api/compute/vms", "", ""), http.StatusUnauthorized, "unauthorized", "")
	r = a.do("GET", "/api/compute/vms/"+v.ID+"/console", a.alice, "")
	if r.Status != http.StatusOK || len(r.Body) != 0 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("console before a boot: %d %q %q", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
}

const testKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"

// TestShutdownDuringBoot stops the host while VMs boot, at several
// points of the boot: no QEMU outlives it, no VM is marked error by the
// shutdown, and the next start boots them all.
func TestShutdownDuringBoot(t *testing.T) {
	needQEMU(t)
	a := newAPI(t, options{serve: true})
	a.await(a.vm("warm", a.do("POST", "/api/compute/vms", a.alice, `{"name": "warm", "image": "minimal"}`), http.StatusCreated).ID,
		computerules.Running) // the driver made, so the stops below land in boots
	var ids []string
	for i, delay := range []time.Duration{0, 300 * time.Millisecond, 1500 * time.Millisecond} {
		v := a.vm("create", a.do("POST", "/api/compute/vms", a.alice, fmt.Sprintf(`{"name": "b%d", "image": "minimal"}`, i)), http.StatusCreated)
		ids = append(ids, v.ID)
		time.Sleep(delay)
		a.stop()
		for _, id := range append([]string{}, ids...) {
			noQEMU(t, id)
			if v, _ := a.store.ByID(id); v.Status == computerules.Error {
				t.Errorf("VM %s in error after a shutdown %v into its boot: %s", id, delay, v.Reason)
			}
		}
		a.serve()
	}
	for _, id := range ids {
		a.await(id, computerules.Running)
	}
}
