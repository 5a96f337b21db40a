package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/latticenet/lattice/internal/testkit/vmtest"
	"github.com/latticenet/lattice/machine/qemu"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/wallet"
)

// TestVMCommands: lattice lease create, then lattice vm show, list and
// exec and lattice tunnel against a real three-node network whose
// provider runs real VMs (the minimal image), with a consumer's key file
// and the nodes that are not the provider.
func TestVMCommands(t *testing.T) {
	vmtest.NeedHost(t)
	cleanEnv(t)
	c := nettest.Start(t, nettest.Options{Nodes: 3, Timekeepers: 3,
		Providers: map[int]market.Resources{2: {VCPUs: 2, MemoryMB: 2048, DiskGB: 20}},
		Machines:  &qemu.Config{ImageDir: vmtest.ImageDir(t)}})
	c.SetCommittee()
	c.Open(*c.Nodes[2].ProviderKey, 1_000_000_000)
	consumer := wallet.NewKey()
	c.Open(consumer, 1_000_000_000)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "consumer.json")
	if err := wallet.SaveKey(keyFile, consumer); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.json")
	if err := wallet.SaveKey(other, wallet.NewKey()); err != nil {
		t.Fatal(err)
	}
	url, provURL := c.Nodes[0].API.URL, c.Nodes[2].API.URL
	waitMarket(c)
	var l nodewire.Lease
	decode(t, mustRun(t, "lease", "create", "--vcpus", "1", "--memory", "512", "--disk", "5", "--duration", "1h",
		"--key", keyFile, "--node", url, "--json"), &l)
	h := l.LeaseHash.String()

	deadline := time.Now().Add(2 * time.Minute)
	for {
		var vm nodewire.VM
		decode(t, mustRun(t, "vm", "show", h, "--node", url, "--json"), &vm)
		if vm.Status == nodewire.VMRunning {
			break
		}
		if vm.Status == nodewire.VMError || time.Now().After(deadline) {
			t.Fatalf("the lease's VM: %+v", vm)
		}
		time.Sleep(200 * time.Millisecond)
	}
	out := mustRun(t, "vm", "show", h, "--node", url).stdout
	if !strings.Contains(out, "status    running") || !strings.Contains(out, "1 vCPU, 512 MB, 5 GB") {
		t.Fatalf("vm show:\n%s", out)
	}
	out = mustRun(t, "vm", "list", "--node", provURL).stdout
	if !strings.Contains(out, h) || !strings.Contains(out, "running") || !strings.Contains(out, "minimal") {
		t.Fatalf("vm list at the provider:\n%s", out)
	}
	if out = mustRun(t, "vm", "list", "--node", url).stdout; !strings.Contains(out, "runs no VMs") {
		t.Fatalf("vm list elsewhere:\n%s", out)
	}

	r := mustRun(t, "vm", "exec", h, "--key", keyFile, "--node", url, "--", "echo", "hi", "from", "'$(hostname)'", ";", "echo", "oops", ">&2")
	if r.stdout != "hi from $(hostname)\n" || r.stderr != "oops\n" {
		t.Fatalf("vm exec: %+v", r)
	}
	wantFail(t, run(t, "vm", "exec", h, "--key", keyFile, "--node", url, "--", "exit 7"), 7)
	var res nodewire.ExecResult
	decode(t, mustRun(t, "vm", "exec", h, "--key", keyFile, "--node", provURL, "--json", "--", "exit 7"), &res)
	if res.ExitCode != 7 {
		t.Fatalf("vm exec --json: %+v", res)
	}
	wantFail(t, run(t, "vm", "exec", h, "--key", other, "--node", url, "--", "id"), 1, "not the lease's access key", "403")
	wantFail(t, run(t, "vm", "exec", h, "--key", keyFile, "--node", url), 2, "put the command after --")
	wantFail(t, run(t, "vm", "exec", "xyz", "--key", keyFile, "--node", url, "--", "id"), 2, "LEASE \"xyz\"")
	wantFail(t, run(t, "vm", "show", h, "stray", "--node", url), 2, "stray")
	wantFail(t, run(t, "vm", "list", "stray", "--node", url), 2, "stray")
	wantFail(t, run(t, "vm", "nope"), 2, "unknown command")

	// A tunnel through node 1 to an echo server in the guest that
	// speaks first, as SSH servers do: its greeting may come with the
	// node's 101 answer, and must not be lost.
	mustRun(t, "vm", "exec", h, "--key", keyFile, "--node", url, "--", "nc -ll -p 7000 -e sh -c 'echo hello; exec cat' </dev/null >/dev/null 2>&1 & sleep 0.2")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close()
	wantFail(t, run(t, "tunnel", h, "--port", "7000", "--listen", listen, "--key", other, "--node", c.Nodes[1].API.URL), 1, "not the lease's access key")
	wantFail(t, run(t, "tunnel", h, "--port", "0", "--key", keyFile, "--node", url), 2, "--port 0")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- mainContext(ctx, []string{"tunnel", h, "--port", "7000", "--listen", listen, "--key", keyFile, "--node", c.Nodes[1].API.URL}, &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("lattice tunnel did not stop")
		}
	})
	var conn net.Conn
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if conn, err = net.Dial("tcp", listen); err == nil {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("lattice tunnel never listened: %v\n%s%s", err, stdout.String(), stderr.String())
		}
	}
	for i := range 2 { // two connections, each its own tunnel
		if i == 1 {
			if conn, err = net.Dial("tcp", listen); err != nil {
				t.Fatal(err)
			}
		}
		msg := []byte(strings.Repeat("lattice ", 10000))
		go func() {
			conn.Write(msg)
			conn.(*net.TCPConn).CloseWrite()
		}()
		conn.SetDeadline(time.Now().Add(30 * time.Second))
		got, err := io.ReadAll(conn)
		conn.Close()
		if err != nil || !bytes.Equal(got, append([]byte("hello\n"), msg...)) {
			t.Fatalf("echo %d through lattice tunnel: %d bytes of %d, %v\n%s", i, len(got), len(msg), err, stderr.String())
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("lattice tunnel exited %d: %s", code, stderr.String())
	}
	done <- 0
	if !strings.Contains(stdout.String(), "forwarding "+listen) {
		t.Fatalf("lattice tunnel said: %s", stdout.String())
	}

	// A reboot in the guest takes the command's answer with it, and the
	// provider boots the VM again: vm show counts it.
	wantFail(t, run(t, "vm", "exec", h, "--key", keyFile, "--node", url, "--", "reboot", "-f"), 1, "stopped during the command")
	deadline = time.Now().Add(2 * time.Minute)
	for {
		var vm nodewire.VM
		decode(t, mustRun(t, "vm", "show", h, "--node", url, "--json"), &vm)
		if vm.Status == nodewire.VMRunning && vm.Restarts == 1 {
			break
		}
		if vm.Status == nodewire.VMError || time.Now().After(deadline) {
			t.Fatalf("the lease's VM after a reboot: %+v", vm)
		}
		time.Sleep(200 * time.Millisecond)
	}
	out = mustRun(t, "vm", "show", h, "--node", url).stdout
	if !strings.Contains(out, "status    running") || !strings.Contains(out, "restarts  1, the last at ") || !strings.Contains(out, "the guest powered off (or rebooted or panicked)") {
		t.Fatalf("vm show after a reboot:\n%s", out)
	}
	if r := mustRun(t, "vm", "exec", h, "--key", keyFile, "--node", url, "--", "echo", "back"); r.stdout != "back\n" {
		t.Fatalf("vm exec after a reboot: %+v", r)
	}
}

// TestKeySSH: lattice key ssh writes the account key as an OpenSSH key
// whose public half is the account's, and never overwrites.
func TestKeySSH(t *testing.T) {
	home := cleanEnv(t)
	k := wallet.NewKey()
	keyFile := filepath.Join(home, "k.json")
	if err := wallet.SaveKey(keyFile, k); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(home, "ssh", "id")
	r := mustRun(t, "key", "ssh", "--key", keyFile, "--out", out)
	if !strings.HasPrefix(r.stdout, "ssh-ed25519 ") {
		t.Fatalf("key ssh printed %q", r.stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	signer, err := ssh.ParsePrivateKey(data)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ssh.NewPublicKey(k.Private().Public())
	if !bytes.Equal(signer.PublicKey().Marshal(), want.Marshal()) {
		t.Fatal("the SSH key is not the account's")
	}
	pub, _ := os.ReadFile(out + ".pub")
	if string(pub) != r.stdout {
		t.Fatalf(".pub %q, printed %q", pub, r.stdout)
	}
	wantFail(t, run(t, "key", "ssh", "--key", keyFile, "--out", out), 1, "never overwritten")
	wantFail(t, run(t, "key", "ssh", "--key", keyFile, "stray"), 2, "stray")
}

// TestVMExecArguments: vm exec runs exactly the words after "--"; a word
// between the lease and "--", a missing "--" or a missing command is a
// usage error before anything is sent (the node named here does not
// exist, so a request would fail differently).
func TestVMExecArguments(t *testing.T) {
	lease := strings.Repeat("ab", 32)
	node := "http://127.0.0.1:1"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{lease, "extra", "--", "uname"}, `unexpected argument "extra" before --`},
		{[]string{lease, "--node", node, "extra", "--", "uname"}, `unexpected argument "extra" before --`},
		{[]string{lease, "uname", "-a"}, "put the command after --"},
		{[]string{lease, "uname"}, "put the command after --"},
		{[]string{lease, "--"}, "want a COMMAND after --"},
		{[]string{"--", "uname"}, "want the LEASE before --"},
		{[]string{"--"}, "want LEASE -- COMMAND"},
	} {
		args := append([]string{"vm", "exec", "--node", node}, tc.args...)
		wantFail(t, run(t, args...), 2, tc.want)
	}
	if r := run(t, "vm", "exec", "-h"); r.code != 0 || !strings.Contains(r.stdout, "vm exec LEASE [flags] -- COMMAND") {
		t.Fatalf("vm exec -h: %+v", r)
	}
}
