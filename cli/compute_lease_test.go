package cli

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
	"github.com/latticenet/lattice/internal/testkit/vmtest"
	"github.com/latticenet/lattice/node/nodewire"
)

// TestComputeOnLeases is cloud Compute on the ledger network's market,
// end to end over HTTP: `lattice dev --nodes 3 --compute-backend lease`,
// a VM created with POST /api/compute/vms runs at the dev network's
// provider on a lease the dev account paid for; its record names the
// lease and the provider; a real ssh logs in through the platform's
// tunnelled address and finds the user data's work; reboot reboots the
// guest in place (its provider boots it again); power off is
// refused; when the lease ends the VM is stopped, power on leases it
// again, and delete removes it and ends its lease early. Under the race detector the provider runs
// minimal VMs (no SSH: the host name is checked with vm exec instead).
func TestComputeOnLeases(t *testing.T) {
	if testing.Short() {
		t.Skip("boots VMs")
	}
	tooltest.Need(t, "qemu-system-x86_64")
	sshBin := tooltest.Need(t, "ssh")
	images := vmtest.ImageDir(t) // before cleanEnv gives the test a HOME of its own
	cleanEnv(t)
	dir := filepath.Join(t.TempDir(), "dev")
	leaseTerm, image := 240*time.Second, "debian-12"
	if raceEnabled {
		image = "minimal"
	}
	s := startServer(t, devReady, "dev", "--data", dir, "--nodes", "3", "--http", "127.0.0.1:0", "--api", "127.0.0.1:0", "--vm-image", image,
		"--compute-backend", "lease", "--compute-lease-duration", fmt.Sprint(int(leaseTerm.Seconds()))+"s", "--compute-images", images)
	banner := s.stdout.String()
	if !strings.Contains(banner, "compute     VMs on leases from the network's providers") {
		t.Fatalf("dev's banner does not say compute runs on leases:\n%s", banner)
	}
	apiURL := regexp.MustCompile(`(?m)^  cloud API\s+(http://\S+)`).FindStringSubmatch(banner)
	provider := regexp.MustCompile(`(?m)^  provider\s+node \d+, account ([0-9a-f]{64})`).FindStringSubmatch(banner)
	if apiURL == nil || provider == nil {
		t.Fatalf("dev's banner has no cloud API or provider:\n%s", banner)
	}
	admin, err := os.ReadFile(filepath.Join(dir, "cloud", "admin-api-key"))
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path string, body any, want int, out any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, apiURL[1]+path, rd)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(admin)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
		}
		if err := openapitest.Cloud.Checker(t).Check(req, resp.StatusCode, resp.Header, b, false); err != nil {
			t.Errorf("%s %s: the answer is not as docs/openapi/cloud.json says: %v", method, path, err)
		}
		if out != nil {
			if err := json.Unmarshal(b, out); err != nil {
				t.Fatalf("%s %s: %v in %s", method, path, err, b)
			}
		}
	}
	await := func(id, status string, within time.Duration) cloudwire.VM {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			var v cloudwire.VM
			call("GET", "/api/compute/vms/"+id, nil, http.StatusOK, &v)
			if v.Status == status {
				return v
			}
			if v.Status == "error" || time.Now().After(deadline) {
				// The dev network's log says where it stood (a lease not
				// yet accepted, a VM still booting).
				// stderr has warnings; DATA/dev.log every line from info up
				// (the provider's lease steps, the attestations gathered).
				tail := func(text string, n int) string {
					lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
					return strings.Join(lines[max(0, len(lines)-n):], "\n")
				}
				devLog, _ := os.ReadFile(filepath.Join(dir, "dev.log"))
				t.Fatalf("VM %s is %s (%s), want %s\nthe last lines of lattice dev's stderr:\n%s\nthe last lines of its dev.log:\n%s",
					id, v.Status, v.StatusReason, status, tail(s.stderr.String(), 40), tail(string(devLog), 150))
			}
			time.Sleep(500 * time.Millisecond)
		}
	}

	// An SSH key of the test's own.
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	sshPub, _ := ssh.NewPublicKey(pub)
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "id")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}

	var v cloudwire.VM
	create := map[string]any{"name": "web", "image": image, "user_data": "#!/bin/sh\necho leased > /root/user-data-ran\n"}
	if image == "debian-12" {
		create["ssh_keys"] = []string{string(ssh.MarshalAuthorizedKey(sshPub))}
	}
	call("POST", "/api/compute/vms", create, http.StatusCreated, &v)
	// Alone this takes about 20 s; beside the rest of the suite on 2
	// cores (CI's go test ./...), a debian-12 guest under TCG and the
	// lease's blocks have taken over 5 minutes. Twice a run of the whole
	// suite (never CI's, never this test alone or beside the packages
	// that ran with it) saw it still provisioning at 10 minutes: the
	// deadline is short enough that the failure prints lattice dev's log
	// before go test's own 10-minute timeout kills the package.
	v = await(v.ID, "running", 6*time.Minute)
	if v.Accel != "lease" || v.Lease == nil || v.Lease.Provider != provider[1] || len(v.Lease.Hash) != 64 || v.Lease.EndsAt == "" || (v.SSH == nil) != (image == "minimal") {
		t.Fatalf("a running leased VM's record: %+v (lease %+v)", v, v.Lease)
	}
	first := v.Lease.Hash
	// The platform set the guest's host name through the node (the
	// lease's access key is the dev key, the profile's).
	if out := mustRun(t, "vm", "exec", first, "--", "hostname").stdout; out != "web\n" {
		t.Fatalf("vm exec hostname in the leased VM: %q", out)
	}

	// The lease is on the ledger, paid by the dev account, on every node.
	for _, u := range devNodeURLs(t, s) {
		var l nodewire.Lease
		decode(t, mustRun(t, "lease", "show", first, "--node", u, "--json"), &l)
		if l.Provider.String() != provider[1] || l.Status != "active" || l.Duration != uint32(leaseTerm.Seconds()) {
			t.Fatalf("the VM's lease at %s: %+v", u, l)
		}
	}

	// A real ssh through the platform's address, a tunnel over the
	// network to the provider's guest.
	sshRun := func(cmd string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var out string
		for range 5 { // the user data runs in the background at boot
			c := exec.CommandContext(ctx, sshBin, "-i", keyFile, "-p", fmt.Sprint(v.SSH.Port), "-o", "BatchMode=yes",
				"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
				"root@"+v.SSH.Host, cmd)
			b, err := c.CombinedOutput()
			if out = string(b); err == nil {
				return out
			}
			time.Sleep(time.Second)
		}
		t.Fatalf("ssh %s through the tunnel: %s", cmd, out)
		return ""
	}
	if image == "debian-12" {
		if out := sshRun("hostname && cat /root/user-data-ran"); out != "web\nleased\n" {
			t.Fatalf("ssh through the tunnel: %q", out)
		}
	}

	// A reboot: the guest's own, then the platform's. The provider boots
	// the guest again on its disk each time (vm show counts it) and
	// adds the lease's access key beside the keys the platform put
	// there; the name set by the platform stays. The platform's reboot
	// prepares the guest again as at every boot; after the guest's own,
	// the user's key logs in and the name is kept all the same.
	urls := devNodeURLs(t, s)
	awaitRestart := func(restarts int) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for {
			var m nodewire.VM
			decode(t, mustRun(t, "vm", "show", first, "--node", urls[len(urls)-1], "--json"), &m)
			if m.Status == nodewire.VMRunning && m.Restarts == restarts {
				if !strings.Contains(m.LastExit, "the guest powered off (or rebooted") {
					t.Fatalf("the leased VM at its provider after a reboot: %+v", m)
				}
				return
			}
			if m.Status == nodewire.VMError || m.Status == nodewire.VMStopped || time.Now().After(deadline) {
				t.Fatalf("the leased VM at its provider, waiting for restart %d: %+v", restarts, m)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	restarts := 0
	if image == "debian-12" {
		reboot := exec.Command(sshBin, "-i", keyFile, "-p", fmt.Sprint(v.SSH.Port), "-o", "BatchMode=yes",
			"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
			"root@"+v.SSH.Host, "systemctl reboot")
		reboot.Run() // the guest ends the session as it goes down
		restarts++
		awaitRestart(restarts)
		if v = await(v.ID, "running", time.Second); v.Lease == nil || v.Lease.Hash != first {
			t.Fatalf("the VM's record after a reboot in its guest: %+v", v)
		}
		if out := sshRun("hostname && cat /root/user-data-ran"); out != "web\nleased\n" {
			t.Fatalf("ssh through the tunnel after a reboot in the guest: %q", out)
		}
	}
	call("POST", "/api/compute/vms/"+v.ID+"/power", map[string]string{"action": "reboot"}, http.StatusAccepted, &v)
	if v.Status != "rebooting" {
		t.Fatalf("a leased VM's reboot: %+v", v)
	}
	if v = await(v.ID, "running", 3*time.Minute); v.Lease == nil || v.Lease.Hash != first {
		t.Fatalf("the VM's record after a reboot: %+v", v)
	}
	restarts++
	awaitRestart(restarts)
	if out := mustRun(t, "vm", "exec", first, "--", "hostname").stdout; out != "web\n" {
		t.Fatalf("vm exec hostname after a reboot: %q", out)
	}
	if image == "debian-12" {
		if out := sshRun("hostname && cat /root/user-data-ran"); out != "web\nleased\n" {
			t.Fatalf("ssh through the tunnel after a reboot: %q", out)
		}
	}

	// Power off and the console stay with the lease: 409, clear.
	var e struct {
		Error struct{ Code, Message string }
	}
	call("POST", "/api/compute/vms/"+v.ID+"/power", map[string]string{"action": "off"}, http.StatusConflict, &e)
	if !strings.Contains(e.Error.Message, "runs until its lease ends") {
		t.Fatalf("power off of a leased VM: %+v", e)
	}
	call("GET", "/api/compute/vms/"+v.ID+"/console", nil, http.StatusConflict, nil)

	// The lease's end stops the VM; power on leases it again.
	ends, err := time.Parse(time.RFC3339, v.Lease.EndsAt)
	if err != nil {
		t.Fatal(err)
	}
	v = await(v.ID, "stopped", time.Until(ends)+time.Minute)
	if !strings.Contains(v.StatusReason, "ended") {
		t.Fatalf("a VM whose lease ended: %+v", v)
	}
	call("POST", "/api/compute/vms/"+v.ID+"/power", map[string]string{"action": "on"}, http.StatusAccepted, nil)
	v = await(v.ID, "running", 5*time.Minute)
	if v.Lease == nil || v.Lease.Hash == first {
		t.Fatalf("power on after the lease's end: %+v", v.Lease)
	}

	call("DELETE", "/api/compute/vms/"+v.ID, nil, http.StatusAccepted, nil)
	deadline := time.Now().Add(time.Minute)
	for {
		req, _ := http.NewRequest("GET", apiURL[1]+"/api/compute/vms/"+v.ID, nil)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(admin)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted VM still answers %d", resp.StatusCode)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Its lease was ended early: the dev account pays for the time served
	// and gets the rest of the cost back.
	urls = devNodeURLs(t, s)
	second, node := v.Lease.Hash, urls[0]
	deadline = time.Now().Add(time.Minute)
	var l nodewire.Lease
	for {
		decode(t, mustRun(t, "lease", "show", second, "--node", node, "--json"), &l)
		if l.Status == "ended" && !l.NoticeHash.IsZero() && len(l.SettleHashes) == 3 {
			if l.Refund.IsZero() || l.EndTime >= l.EndsAt {
				t.Fatalf("the deleted VM's lease ended early: %+v", l)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted VM's lease is %s (notice %s, settles %d), want ended early", l.Status, l.NoticeHash, len(l.SettleHashes))
		}
		time.Sleep(500 * time.Millisecond)
	}
	// At its provider (the last node) the machine stopped, not failed, at
	// the early end's time: the platform left stopping it to the lease.
	deadline = time.Now().Add(30 * time.Second)
	for {
		var m nodewire.VM
		decode(t, mustRun(t, "vm", "show", second, "--node", urls[len(urls)-1], "--json"), &m)
		if m.Status == nodewire.VMStopped && m.EndsAt == l.EndTime {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted VM at its provider: %s (%s), ends %d; want stopped, ending at the early end %d", m.Status, m.Error, m.EndsAt, l.EndTime)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestSSHTargetChecked: what the platform answers becomes ssh's
// arguments and a file name on the user's machine, so only a user name,
// a host name or address and an id pass: an answer that would be an ssh
// option (-oProxyCommand runs a program here) or a path is refused.
func TestSSHTargetChecked(t *testing.T) {
	vm := func(user, host, id string) cloudwire.VM {
		return cloudwire.VM{ID: id, SSH: &cloudwire.VMSSH{User: user, Host: host, Port: 2222}}
	}
	const id = "0123456789abcdef"
	for _, tc := range []struct {
		v  cloudwire.VM
		ok bool
	}{
		{vm("root", "127.0.0.1", id), true},
		{vm("debian", "vm.example.com", id), true},
		{vm("root", "::1", id), true},
		{vm("-oProxyCommand=touch /tmp/pwned", "127.0.0.1", id), false},
		{vm("root", "-oProxyCommand=touch", id), false},
		{vm("root", "host name", id), false},
		{vm("root@x", "127.0.0.1", id), false},
		{vm("root", "127.0.0.1", "../../.bashrc"), false},
		{vm("", "127.0.0.1", id), false},
		{onLease(vm("root", "127.0.0.1", id), strings.Repeat("ab", 32)), true},
		{onLease(vm("root", "127.0.0.1", id), "-oProxyCommand=touch /tmp/pwned"), false},
		{onLease(vm("root", "127.0.0.1", id), strings.Repeat("AB", 32)), false},
		{onLease(vm("root", "127.0.0.1", id), "ab"), false},
	} {
		if err := checkSSHTarget(tc.v); (err == nil) != tc.ok {
			t.Errorf("user %q host %q id %q: %v, want ok %v", tc.v.SSH.User, tc.v.SSH.Host, tc.v.ID, err, tc.ok)
		}
		if _, err := sshArgs(tc.v, "id_lattice", nil); (err == nil) != tc.ok {
			t.Errorf("sshArgs of user %q host %q id %q: %v, want ok %v", tc.v.SSH.User, tc.v.SSH.Host, tc.v.ID, err, tc.ok)
		}
	}
}

func onLease(v cloudwire.VM, hash string) cloudwire.VM {
	v.Lease = &cloudwire.VMLease{Hash: hash}
	return v
}

// TestSSHHostKeyPerMachine: ssh keeps a VM's host key under the name of
// the machine that made it. A VM of the lease backend powered on again
// runs at a new lease, a new machine with a new host key: under the old
// name ssh refused it ("host key changed"), found by a new user's trial.
func TestSSHHostKeyPerMachine(t *testing.T) {
	const id = "0123456789abcdef"
	alias := func(v cloudwire.VM) string {
		t.Helper()
		args, err := sshArgs(v, filepath.Join(t.TempDir(), "id_lattice"), []string{"uptime"})
		if err != nil {
			t.Fatal(err)
		}
		if args[len(args)-1] != "uptime" || args[len(args)-2] != "root@127.0.0.1" {
			t.Errorf("ssh args %q: want the destination, then the user's arguments", args)
		}
		for i, a := range args {
			if a == "-o" && strings.HasPrefix(args[i+1], "HostKeyAlias=") {
				return strings.TrimPrefix(args[i+1], "HostKeyAlias=")
			}
		}
		t.Fatalf("ssh args %q: no HostKeyAlias", args)
		return ""
	}
	local := cloudwire.VM{ID: id, SSH: &cloudwire.VMSSH{User: "root", Host: "127.0.0.1", Port: 2222}}
	moved := local
	moved.SSH = &cloudwire.VMSSH{User: "root", Host: "127.0.0.1", Port: 2223}
	if a, b := alias(local), alias(moved); a != b {
		t.Errorf("one local VM on another port: host key names %q and %q, want one (its disk keeps its key)", a, b)
	}
	first, second := onLease(local, strings.Repeat("1a", 32)), onLease(local, strings.Repeat("2b", 32))
	if a, b := alias(first), alias(second); a == b {
		t.Errorf("one VM at two leases: host key name %q for both, want one per lease (each is a new machine)", a)
	}
	if a, b := alias(first), alias(onLease(moved, first.Lease.Hash)); a != b {
		t.Errorf("one lease, another port: host key names %q and %q, want one", a, b)
	}
}
