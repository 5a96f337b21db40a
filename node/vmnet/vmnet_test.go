package vmnet_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/testkit/openapitest"
	"github.com/latticenet/lattice/internal/testkit/vmtest"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/machine/access"
	"github.com/latticenet/lattice/machine/agent"
	"github.com/latticenet/lattice/machine/qemu"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/node/vmnet"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

// clock is the cluster's clock: the real time plus an offset the test
// moves forward, so that a lease's time is up in an instant.
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// vmNet is a 3-node cluster whose nodes keep time and whose node 2
// provides, running its leases' VMs on QEMU (the minimal image).
type vmNet struct {
	*nettest.Cluster
	t        *testing.T
	clock    *clock
	consumer wallet.Key
	owner    wallet.Key // the leases' access key
	clients  []*nodeclient.Client
}

func newVMNet(t *testing.T) *vmNet {
	t.Helper()
	vmtest.NeedHost(t)
	clk := &clock{}
	c := nettest.Start(t, nettest.Options{Nodes: 3, Timekeepers: 3, Now: clk.now,
		Providers: map[int]market.Resources{2: {VCPUs: 4, MemoryMB: 4096, DiskGB: 100}},
		Machines:  &qemu.Config{ImageDir: vmtest.ImageDir(t)},
		Wrap:      func(h http.Handler) http.Handler { return openapitest.Node.Handler(t, h) }})
	n := &vmNet{Cluster: c, t: t, clock: clk, consumer: wallet.NewKey(), owner: wallet.NewKey()}
	c.SetCommittee()
	c.Open(*c.Nodes[2].ProviderKey, 1_000_000_000)
	c.Open(n.consumer, 1_000_000_000)
	for _, nd := range c.Nodes {
		n.clients = append(n.clients, nodeclient.New(nd.API.URL, nd.API.Client()))
	}
	c.WaitCommitteeHeard(3, 20*time.Second)
	return n
}

func (n *vmNet) access(k wallet.Key) nodeclient.Access {
	return nodeclient.Access{Key: k.Private(), Network: n.Network.Genesis.Hash}
}

// waitVM waits until node i reports lease h's VM in status.
func (n *vmNet) waitVM(i int, h ledger.Hash, status string, timeout time.Duration) nodewire.VM {
	n.t.Helper()
	return n.waitVMWhere(i, h, status, timeout, func(v nodewire.VM) bool { return v.Status == status })
}

// waitVMWhere waits until node i serves lease h's VM as ok says, failing
// at once on a VM in error unless want is error.
func (n *vmNet) waitVMWhere(i int, h ledger.Hash, want string, timeout time.Duration, ok func(nodewire.VM) bool) nodewire.VM {
	n.t.Helper()
	var vm nodewire.VM
	deadline := time.Now().Add(timeout)
	for {
		v, err := n.clients[i].VM(context.Background(), h)
		if err == nil && ok(v) {
			return v
		}
		if err == nil {
			vm = v
			if v.Status == nodewire.VMError && want != nodewire.VMError {
				n.t.Fatalf("node %d: VM of %s failed: %s", i, h, v.Error)
			}
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("node %d: VM of %s not %s after %s: %+v (%v)", i, h, want, timeout, vm, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// execNow runs command in lease h's VM through node 0, signed by the
// cluster's clock (which "end" moves 10 minutes ahead of the real one the
// client signs with), and returns the HTTP status and body.
func (n *vmNet) execNow(t *testing.T, h ledger.Hash, command string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"command": command})
	target := "/vms/" + h.String() + "/exec"
	req, _ := http.NewRequest("POST", n.Nodes[0].API.URL+target, bytes.NewReader(body))
	req.Header.Set("Authorization", access.Sign(n.owner.Private(), n.Network.Genesis.Hash,
		access.Request{Method: "POST", Target: target, Body: body}, n.clock.now()).Header())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(msg)
}

func apiStatus(err error) int {
	var e *nodeclient.APIError
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

// TestProviderVMs follows a lease's machine through its life on a real
// 3-node network with real VMs: the provider boots it once the lease is
// accepted, a node that is not the provider runs commands in it and opens
// a tunnel that carries 100 MiB each way intact, only the lease's access
// key may do either, the machine comes back after a restart of the
// provider, stops when the lease's time is up and is deleted once the
// lease is settled.
func TestProviderVMs(t *testing.T) {
	n := newVMNet(t)
	ctx := context.Background()
	lease := n.Lease(n.consumer, n.Nodes[2].ProviderKey.Address(), n.owner.Address(),
		market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 600})
	if _, err := n.clients[0].Submit(ctx, lease); err != nil {
		t.Fatal(err)
	}
	h := lease.Hash
	vm := n.waitVM(2, h, nodewire.VMRunning, 2*time.Minute)
	if vm.Resources != (nodewire.Resources{VCPUs: 1, MemoryMB: 512, DiskGB: 5}) || vm.Image != "minimal" ||
		vm.Provider != n.Nodes[2].ProviderKey.Address() || vm.CreatedAt == 0 {
		t.Fatalf("VM at the provider: %+v", vm)
	}
	if got := n.waitVM(0, h, nodewire.VMRunning, 10*time.Second); got.LeaseHash != h {
		t.Fatalf("VM through node 0: %+v", got)
	}
	if vms, err := n.clients[2].VMs(ctx); err != nil || len(vms) != 1 || vms[0].LeaseHash != h {
		t.Fatalf("GET /vms at the provider: %+v %v", vms, err)
	}
	if vms, err := n.clients[0].VMs(ctx); err != nil || len(vms) != 0 {
		t.Fatalf("GET /vms at a node that provides nothing: %+v %v", vms, err)
	}

	t.Run("exec", func(t *testing.T) {
		for _, i := range []int{0, 2} {
			res, err := n.clients[i].Exec(ctx, h, n.access(n.owner), "echo hello from $(uname -s); echo oops >&2; exit 3")
			if err != nil || res.ExitCode != 3 || res.Stdout != "hello from Linux\n" || res.Stderr != "oops\n" {
				t.Fatalf("exec through node %d: %+v %v", i, res, err)
			}
		}
		// A command killed at its 30 s, through a node that is not the
		// provider: the answer outlives the streams' usual deadline.
		res, err := n.clients[0].Exec(ctx, h, n.access(n.owner), "echo started; sleep 40")
		if err != nil || !res.TimedOut || res.ExitCode != -1 || res.Stdout != "started\n" {
			t.Fatalf("a command past its timeout: %+v %v", res, err)
		}
	})

	t.Run("credentials", func(t *testing.T) {
		body := []byte(`{"command":"id"}`)
		target := "/vms/" + h.String() + "/exec"
		post := func(auth string, b []byte, path string) (int, string) {
			req, _ := http.NewRequest("POST", n.Nodes[0].API.URL+path, bytes.NewReader(b))
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(data)
		}
		sign := func(k wallet.Key, b []byte, path string, at time.Time) string {
			return access.Sign(k.Private(), n.Network.Genesis.Hash, access.Request{Method: "POST", Target: path, Body: b}, at).Header()
		}
		good := sign(n.owner, body, target, time.Now())
		if code, msg := post(good, body, target); code != 200 {
			t.Fatalf("a good credential: %d %s", code, msg)
		}
		other := wallet.NewKey()
		for _, tc := range []struct {
			name, auth string
			body       []byte
			path       string
			code       int
			says       string
		}{
			{"none", "", body, target, 401, "no credential"},
			{"replayed", good, body, target, 401, "used before"},
			{"the consumer's key", sign(n.consumer, body, target, time.Now()), body, target, 403, "not the lease's access key"},
			{"another key", sign(other, body, target, time.Now()), body, target, 403, "not the lease's access key"},
			{"expired", sign(n.owner, body, target, time.Now().Add(-10*time.Minute)), body, target, 401, "outside"},
			{"from the future", sign(n.owner, body, target, time.Now().Add(10*time.Minute)), body, target, 401, "outside"},
			{"another body", sign(n.owner, []byte(`{"command":"ls"}`), target, time.Now()), body, target, 401, "does not verify"},
			{"another network", access.Sign(n.owner.Private(), ledger.Hash{1}, access.Request{Method: "POST", Target: target, Body: body}, time.Now()).Header(), body, target, 401, "does not verify"},
			{"malformed", "Lattice-Ed25519 key=zz", body, target, 401, "malformed"},
			{"bearer", "Bearer abc", body, target, 401, "malformed"},
			{"bad body", sign(n.owner, []byte(`{"cmd":"id"}`), target, time.Now()), []byte(`{"cmd":"id"}`), target, 400, "ExecRequest"},
			{"empty command", sign(n.owner, []byte(`{"command":" "}`), target, time.Now()), []byte(`{"command":" "}`), target, 400, "command is required"},
			{"unknown lease", sign(n.owner, body, "/vms/"+strings.Repeat("ab", 32)+"/exec", time.Now()), body, "/vms/" + strings.Repeat("ab", 32) + "/exec", 404, "lease not found"},
			{"bad hash", good, body, "/vms/xyz/exec", 400, "invalid lease hash"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				code, msg := post(tc.auth, tc.body, tc.path)
				if code != tc.code || !strings.Contains(msg, tc.says) {
					t.Fatalf("got %d %s, want %d saying %q", code, msg, tc.code, tc.says)
				}
			})
		}
		// A credential for exec opens no tunnel.
		req, _ := http.NewRequest("POST", n.Nodes[0].API.URL+"/tunnel/"+h.String()+"/tcp?port=22", nil)
		req.Header.Set("Authorization", sign(n.owner, nil, target, time.Now()))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("a tunnel with exec's credential: %d", resp.StatusCode)
		}
		if _, err := n.clients[0].Tunnel(ctx, ledger.Hash{9}, n.access(n.owner), 22); apiStatus(err) != 404 {
			t.Fatalf("a tunnel to an unknown lease: %v", err)
		}
		if _, err := n.clients[0].Tunnel(ctx, h, n.access(other), 22); apiStatus(err) != 403 {
			t.Fatalf("a tunnel with another key: %v", err)
		}
		if _, err := n.clients[0].Tunnel(ctx, h, n.access(n.owner), 0); apiStatus(err) != 400 {
			t.Fatalf("a tunnel to port 0: %v", err)
		}
		if _, err := n.clients[0].Tunnel(ctx, h, n.access(n.owner), 7999); apiStatus(err) != 502 {
			t.Fatalf("a tunnel to a closed port: %v", err)
		}
	})

	t.Run("tunnel", func(t *testing.T) {
		const size = 100 << 20
		data := make([]byte, size)
		rng := rand.NewChaCha8([32]byte{1})
		rng.Read(data)
		sum := sha256.Sum256(data)
		want := hex.EncodeToString(sum[:])
		run := func(cmd string) string {
			t.Helper()
			res, err := n.clients[1].Exec(ctx, h, n.access(n.owner), cmd)
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("exec %q: %+v %v", cmd, res, err)
			}
			return res.Stdout
		}
		// Up: the guest's nc writes what it receives to its disk.
		run("nc -l -p 7000 </dev/null >/data/up 2>/dev/null & sleep 0.2")
		conn, err := n.clients[1].Tunnel(ctx, h, n.access(n.owner), 7000)
		if err != nil {
			t.Fatal(err)
		}
		// Loopback nodes reach each other directly.
		if conn.Path() != vmnet.PathDirect {
			t.Errorf("a tunnel through node 1: path %q, want %q", conn.Path(), vmnet.PathDirect)
		}
		start := time.Now()
		if _, err := conn.Write(data); err != nil {
			t.Fatal(err)
		}
		conn.CloseWrite()
		io.Copy(io.Discard, conn) // until the guest's side closes
		conn.Close()
		t.Logf("100 MiB up in %s", time.Since(start).Round(time.Millisecond))
		deadline := time.Now().Add(30 * time.Second)
		for !strings.HasPrefix(run("sha256sum /data/up"), want) {
			if time.Now().After(deadline) {
				t.Fatalf("the guest's copy: %s, want %s", run("ls -l /data/up; sha256sum /data/up"), want)
			}
			time.Sleep(200 * time.Millisecond)
		}
		// Down: the guest's nc sends the file and closes.
		run("nc -l -p 7001 </data/up >/dev/null 2>&1 & sleep 0.2")
		conn, err = n.clients[1].Tunnel(ctx, h, n.access(n.owner), 7001)
		if err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		got, err := io.ReadAll(conn)
		conn.Close()
		if err != nil || len(got) != size || !bytes.Equal(got, data) {
			t.Fatalf("down: %d bytes, equal %v, %v", len(got), bytes.Equal(got, data), err)
		}
		t.Logf("100 MiB down in %s", time.Since(start).Round(time.Millisecond))
	})

	t.Run("provider restart", func(t *testing.T) {
		n.Stop(2)
		n.Restart(2)
		n.clients[2] = nodeclient.New(n.Nodes[2].API.URL, n.Nodes[2].API.Client())
		n.waitVM(2, h, nodewire.VMRunning, 2*time.Minute)
		// The disk outlived the restart.
		res, err := n.clients[0].Exec(ctx, h, n.access(n.owner), "ls -l /data/up | awk '{print $5}'")
		if err != nil || res.Stdout != fmt.Sprint(100<<20)+"\n" {
			t.Fatalf("after the restart: %+v %v", res, err)
		}
	})

	t.Run("end", func(t *testing.T) {
		// A tunnel open when the time is up is cut with a reset, not
		// ended as if the guest had closed it.
		res, err := n.clients[0].Exec(ctx, h, n.access(n.owner), "(sleep 1000 | nc -l -p 7003 >/dev/null 2>&1) </dev/null >/dev/null 2>&1 & sleep 0.2")
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("starting a server: %+v %v", res, err)
		}
		open, err := n.clients[1].Tunnel(ctx, h, n.access(n.owner), 7003)
		if err != nil {
			t.Fatal(err)
		}
		defer open.Close()
		n.clock.offset.Add(int64(601 * time.Second))
		open.SetDeadline(time.Now().Add(time.Minute))
		if _, err := io.ReadAll(open); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("a tunnel open at the lease's end: %v, want a reset", err)
		}
		n.waitVM(0, h, nodewire.VMStopped, time.Minute)
		n.WaitFor("the lease ended and settled", time.Minute, func(i int) bool {
			l, err := n.clients[i].Lease(ctx, h)
			return err == nil && l.Status == "ended" && l.Confirmed
		})
		files := filepath.Join(n.Nodes[2].Dir, "machines", "vms", vmnet.VMID(h))
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err := os.Stat(files); errors.Is(err, os.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the VM's files %s outlived the settlement", files)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if vm := n.waitVM(2, h, nodewire.VMStopped, time.Second); vm.Error != "" {
			t.Fatalf("a VM stopped at its end: %+v", vm)
		}
		if code, msg := n.execNow(t, h, "true"); code != http.StatusConflict || !strings.Contains(msg, "not running") {
			t.Fatalf("exec on a stopped VM: %d %s", code, msg)
		}
	})

	t.Run("poweroff", func(t *testing.T) {
		// A command that powers its guest off loses its answer with the
		// guest: the caller hears that the VM stopped, a 409, not an
		// internal error.
		l := n.Lease(n.consumer, n.Nodes[2].ProviderKey.Address(), n.owner.Address(),
			market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 600})
		if _, err := n.clients[0].Submit(ctx, l); err != nil {
			t.Fatal(err)
		}
		n.waitVM(2, l.Hash, nodewire.VMRunning, 2*time.Minute)
		if code, msg := n.execNow(t, l.Hash, "echo kept > /data/note && sync"); code != http.StatusOK {
			t.Fatalf("writing to the VM's disk: %d %s", code, msg)
		}
		if code, msg := n.execNow(t, l.Hash, "poweroff -f"); code != http.StatusConflict || !strings.Contains(msg, "stopped during the command") {
			t.Fatalf("exec of poweroff -f: %d %s", code, msg)
		}
		// The lease runs on, and so does its machine: booted again on its
		// disk, RestartLimit times within RestartWindow, then left in
		// error. (reboot -f is the same exit under -no-reboot.)
		for i := 1; ; i++ {
			vm := n.waitVMWhere(2, l.Hash, fmt.Sprintf("running after %d restarts", i), 2*time.Minute, func(v nodewire.VM) bool {
				return v.Status == nodewire.VMRunning && v.Restarts == i
			})
			if !strings.Contains(vm.LastExit, "the guest powered off") || vm.LastExitAt == 0 || vm.Error != "" {
				t.Fatalf("VM booted again after its guest's poweroff: %+v", vm)
			}
			if code, msg := n.execNow(t, l.Hash, "cat /data/note"); code != http.StatusOK || !strings.Contains(msg, "kept") {
				t.Fatalf("the VM's disk after restart %d: %d %s", i, code, msg)
			}
			command := "poweroff -f"
			if i%2 == 1 {
				command = "reboot -f"
			}
			if code, msg := n.execNow(t, l.Hash, command); code != http.StatusConflict {
				t.Fatalf("exec of %s: %d %s", command, code, msg)
			}
			if i == vmnet.RestartLimit {
				break
			}
		}
		vm := n.waitVM(2, l.Hash, nodewire.VMError, 2*time.Minute)
		if want := fmt.Sprintf("stopped by itself %d times within 10m0s", vmnet.RestartLimit+1); !strings.Contains(vm.Error, want) || vm.Restarts != vmnet.RestartLimit {
			t.Fatalf("VM after %d stops by itself: %+v, want error %q", vmnet.RestartLimit+1, vm, want)
		}
		if code, msg := n.execNow(t, l.Hash, "true"); code != http.StatusConflict || !strings.Contains(msg, "not running") {
			t.Fatalf("exec on a VM left in error: %d %s", code, msg)
		}
	})
}

// TestMain lets the test binary be the guests' agent (the images carry it
// as their lattice), and fails the package when a documented VM operation
// was answered by no test (every answer goes through the OpenAPI checker).
func TestMain(m *testing.M) {
	agent.ServeIfAsked()
	os.Exit(openapitest.Node.Covered(m.Run(), "/vms", "/tunnel"))
}

// TestVMBackWhenItsEndRollsBack: a consumer's notice ends its lease early
// on the provider's side of a partition and the provider stops the
// machine; the other side confirms another block of the consumer's in the
// notice's place, so when the partition heals the notice and the end lose
// the fork: the lease runs on, paid for, and its machine boots again on
// its disk, until its own term.
func TestVMBackWhenItsEndRollsBack(t *testing.T) {
	n := newVMNet(t)
	ctx := context.Background()
	// The committee is the provider node's timekeeper alone, so that the
	// provider can end the lease on its side of the partition.
	n.Govern("timekeepers", statechain.TimekeepersValue([]ledger.Address{n.Nodes[2].TimekeeperKey.Address()}))
	n.WaitCommitteeHeard(1, 20*time.Second)
	// Node 2's representative gives half its weight to node 0's, so that
	// nodes 0 and 1 hold more than two thirds of the supply (a quorum)
	// without it: the fork below is theirs to decide.
	give := n.Must(n.Chains.Send(n.Nodes[2].N.Key, n.Genesis.Address(), 500_000_000_000))
	take := n.Must(n.Chains.Receive(n.Genesis, give, ledger.Address{}))
	n.Submit(0, give, take)
	n.WaitConfirmed(take.Hash, 20*time.Second)
	lease := n.Lease(n.consumer, n.Nodes[2].ProviderKey.Address(), n.owner.Address(),
		market.Request{VCPUs: 1, MemoryMB: 512, DiskGB: 5, Duration: 600})
	if _, err := n.clients[0].Submit(ctx, lease); err != nil {
		t.Fatal(err)
	}
	h := lease.Hash
	n.waitVM(2, h, nodewire.VMRunning, 2*time.Minute)
	if code, msg := n.execNow(t, h, "echo kept > /data/note && sync"); code != http.StatusOK {
		t.Fatalf("writing to the VM's disk: %d %s", code, msg)
	}
	var term nodewire.Lease
	n.WaitFor("the lease started everywhere", 20*time.Second, func(i int) bool {
		l, err := n.clients[i].Lease(ctx, h)
		term = l
		return err == nil && l.Status == "active" && l.EndsAt != 0
	})
	n.WaitFor("the consumer's latest block confirmed", 20*time.Second, func(i int) bool {
		acct, _, _ := n.Nodes[i].N.Store.Account(n.consumer.Address())
		return n.Confirmed(i, acct.Frontier)
	})

	// The partition: the provider's node alone (a sixth of the weight:
	// it confirms nothing), the notice on its side, another send of the
	// consumer's in the notice's place on the other, which confirms it.
	n.Nodes[2].Host.Isolate(n.PeerIDs(0, 1)...)
	n.Nodes[0].Host.Isolate(n.PeerIDs(2)...)
	n.Nodes[1].Host.Isolate(n.PeerIDs(2)...)
	head := n.Head(0, n.consumer.Address())
	at := n.clock.now().UnixMilli()
	notice := n.Finish(n.Must(wallet.Send(head, ledger.LeaseAccount(h), ledger.NewAmount(1), ledger.Native, at)), n.consumer)
	other := n.Finish(n.Must(wallet.Send(head, n.owner.Address(), ledger.NewAmount(1), ledger.Native, at)), n.consumer)
	if _, err := n.clients[2].Submit(ctx, notice); err != nil {
		t.Fatalf("the notice at the provider's node: %v", err)
	}
	if _, err := n.clients[0].Submit(ctx, other); err != nil {
		t.Fatalf("the other send at node 0: %v", err)
	}
	if vm := n.waitVM(2, h, nodewire.VMStopped, time.Minute); vm.EndsAt >= term.EndsAt {
		t.Fatalf("the VM stopped by the early end: %+v, want it to end before the term's %d", vm, term.EndsAt)
	}
	if l, err := n.clients[2].Lease(ctx, h); err != nil || l.Status != "ended" || l.NoticeHash != notice.Hash || l.Confirmed {
		t.Fatalf("the lease on the provider's side: %+v %v, want ended by the notice, unconfirmed", l, err)
	}

	n.WaitFor("the other send confirmed on nodes 0 and 1", 30*time.Second, func(i int) bool {
		return i == 2 || n.Confirmed(i, other.Hash)
	})

	// The heal: the provider's node learns of the confirmed send and
	// rolls back the notice, and the end with it.
	for _, nd := range n.Nodes {
		nd.Host.Heal()
	}
	n.WaitFor("the other send confirmed everywhere, the notice gone", time.Minute, func(i int) bool {
		_, found, _ := n.Nodes[i].N.Store.Entry(notice.Hash)
		return !found && n.Confirmed(i, other.Hash)
	})
	n.WaitFor("the lease active again everywhere", 30*time.Second, func(i int) bool {
		l, err := n.clients[i].Lease(ctx, h)
		return err == nil && l.Status == "active" && l.NoticeHash == (ledger.Hash{}) && l.EndTime == 0
	})
	vm := n.waitVM(2, h, nodewire.VMRunning, 2*time.Minute)
	if vm.EndsAt != term.EndsAt || vm.Error != "" || vm.Restarts != 0 {
		t.Fatalf("the VM after its end was rolled back: %+v, want running to the term's %d", vm, term.EndsAt)
	}
	if code, msg := n.execNow(t, h, "cat /data/note"); code != http.StatusOK || !strings.Contains(msg, "kept") {
		t.Fatalf("the VM's disk after its end was rolled back: %d %s", code, msg)
	}
	n.Audit()
}
