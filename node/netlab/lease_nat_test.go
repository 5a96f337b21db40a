package netlab

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/testkit/vmtest"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

// TestLeaseBehindNAT: a provider's node behind a masquerading router runs
// a lease's VM (the minimal image, under QEMU), and a node outside reaches
// it, with real `lattice node` processes: through the relay (node 0, run
// with --relay) while the router refuses every packet to and from that
// node, then directly once the router lets them through. Each tunnel
// carries 4 MiB to the guest, checked by its SHA-256 there, and says
// which way it went.
func TestLeaseBehindNAT(t *testing.T) {
	if testing.Short() {
		t.Skip("real nodes and a VM behind NAT: not in -short")
	}
	// The provider boots the VM: without QEMU and the rest it would make
	// no offer, and the test would wait for one for minutes.
	vmtest.NeedHost(t)
	const relay, outside, provider = 0, 1, 2
	dir := t.TempDir()
	save := func(name string, k wallet.Key) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := wallet.SaveKey(path, k); err != nil {
			t.Fatal(err)
		}
		return path
	}
	provKey := wallet.NewKey()
	provFile := save("provider-key.json", provKey)
	var tkKeys []ledger.Address
	args := map[int][]string{}
	for i := range 3 {
		k := wallet.NewKey()
		tkKeys = append(tkKeys, k.Address())
		args[i] = []string{"--timekeeper-key", save(fmt.Sprintf("timekeeper-%d.json", i), k)}
	}
	args[relay] = append(args[relay], "--relay")
	args[provider] = append(args[provider], "--provider-key", provFile, "--capacity", "vcpus=2,memory_mb=2048,disk_gb=20",
		"--vm-image", "minimal", "--vm-images", vmtest.ImageDir(t))
	c := StartCluster(t, ClusterOptions{Nodes: 3, NAT: []int{provider}, Public: true, UserFunds: 1_000_000_000, Args: args})
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	info, err := c.Nodes[0].Client.Node(ctx)
	if err != nil {
		t.Fatal(err)
	}
	network := info.Genesis
	consumer := c.Users[0]
	consumerFile := save("consumer.json", consumer)
	cli := func(args ...string) (string, error) {
		cmd := c.Lab.MonitorCommand(ctx, c.bin, args...)
		cmd.Env = append(cleanEnv(), "HOME="+dir)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return out.String(), fmt.Errorf("lattice %s: %w: %s", strings.Join(args, " "), err, errb.String())
		}
		return out.String(), nil
	}

	// The market: the timekeepers named, the provider's stake funded.
	if _, err := cli("gov", "set", "timekeepers", statechain.TimekeepersValue(tkKeys), "--key", c.genesisKey, "--node", c.Nodes[0].URL); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(ctx, 0, c.Users[1], provKey.Address(), 500_000_000); err != nil {
		t.Fatal(err)
	}
	if _, err := cli("receive", "--key", provFile, "--node", c.Nodes[0].URL); err != nil {
		t.Fatal(err)
	}

	// A lease bought at the node outside, while every path is open.
	var lease nodewire.Lease
	waitUntil(t, ctx, "a lease", 3*time.Minute, func() (bool, string) {
		out, err := cli("lease", "create", "--vcpus", "1", "--memory", "512", "--disk", "5", "--duration", "1h",
			"--key", consumerFile, "--node", c.Nodes[outside].URL, "--json")
		if err != nil {
			return false, err.Error()
		}
		return json.Unmarshal([]byte(out), &lease) == nil, out
	})
	h := lease.LeaseHash
	client := c.Nodes[outside].Client
	waitRunning := func(bound time.Duration) {
		t.Helper()
		waitUntil(t, ctx, "the VM running, seen from the node outside", bound, func() (bool, string) {
			vm, err := client.VM(ctx, h)
			if err != nil {
				return false, err.Error()
			}
			if vm.Status == nodewire.VMError {
				t.Fatalf("the VM failed: %s", vm.Error)
			}
			return vm.Status == nodewire.VMRunning, vm.Status
		})
	}
	waitRunning(3 * time.Minute)
	access := nodeclient.Access{Key: consumer.Private(), Network: network}

	// through sends 4 MiB to the guest's port through a tunnel opened at
	// the node outside, checks the guest got them, and returns the path.
	through := func(port int) string {
		t.Helper()
		if res, err := client.Exec(ctx, h, access, fmt.Sprintf("nc -l -p %d </dev/null >/data/up 2>/dev/null & sleep 0.2", port)); err != nil || res.ExitCode != 0 {
			t.Fatalf("starting a listener in the guest: %+v %v", res, err)
		}
		// The guest's nc, started in the background, may not listen yet.
		var conn *nodeclient.TunnelConn
		waitUntil(t, ctx, "a tunnel from the node outside", 20*time.Second, func() (bool, string) {
			var err error
			conn, err = client.Tunnel(ctx, h, access, port)
			if err != nil {
				return false, err.Error()
			}
			return true, ""
		})
		data := make([]byte, 4<<20)
		rand.Read(data)
		began := time.Now()
		if _, err := conn.Write(data); err != nil {
			t.Fatal(err)
		}
		conn.CloseWrite()
		io.Copy(io.Discard, conn) // the guest's end
		conn.Close()
		want := sha256.Sum256(data)
		waitUntil(t, ctx, "the guest to hold the bytes", time.Minute, func() (bool, string) {
			res, err := client.Exec(ctx, h, access, "sha256sum /data/up")
			if err != nil {
				return false, err.Error()
			}
			return strings.HasPrefix(res.Stdout, hex.EncodeToString(want[:])), res.Stdout
		})
		t.Logf("4 MiB to the guest's port %d, path %s, in %s", port, conn.Path(), time.Since(began).Round(time.Millisecond))
		return conn.Path()
	}
	if path := through(7000); path != "direct" {
		t.Errorf("a tunnel with every path open: path %q, want direct", path)
	}

	// The router refuses the node outside, and the provider restarts:
	// nothing connects the two but the relay. Its VM boots again.
	c.Lab.Block(provider, outside)
	if err := c.Stop(ctx, provider); err != nil {
		t.Fatal(err)
	}
	if err := c.StartNode(ctx, provider); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	waitRunning(5 * time.Minute)
	t.Logf("the VM reached through the relay %s after the provider's restart", time.Since(began).Round(time.Millisecond))
	if path := through(7001); path != "relayed" {
		t.Errorf("a tunnel while the router refuses the node outside: path %q, want relayed", path)
	}

	// The router lets them through: the next tunnels go direct.
	c.Lab.Block(provider)
	began = time.Now()
	port := 7002
	waitUntil(t, ctx, "a direct tunnel", 2*time.Minute, func() (bool, string) {
		port++
		path := through(port)
		return path == "direct", path
	})
	t.Logf("direct again %s after the router let the node outside through", time.Since(began).Round(time.Millisecond))
}

// waitUntil polls f every second until it reports true, failing t after
// bound with what f last said.
func waitUntil(t *testing.T, ctx context.Context, what string, bound time.Duration, f func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		ok, last := f()
		if ok {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("netlab: no %s within %s; last: %s", what, bound, last)
		}
		time.Sleep(time.Second)
	}
}
