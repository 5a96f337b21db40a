package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/node/workload"
	"github.com/latticenet/lattice/wallet"
)

// binary is the lattice binary built once for the tests of this package.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lattice-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "lattice")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building lattice: %v\n%s", err, out)
		os.Exit(1)
	}
	// The binaries the tests start never read or write the user's client
	// profiles: they get a config directory of their own.
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	os.Setenv("LATTICE_PROFILE", "")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// lattice runs the binary to completion and returns its stdout.
func lattice(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "LATTICE_KEY=", "LATTICE_NODE=")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("lattice %v: %v\n%s%s", args, err, out, stderr)
	}
	return string(out)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", freePortRange(t, 1))
}

// handedOut are the ports freeAddr and freePortRange returned so far: a
// port is free again once its probe closes, and the kernel may hand it,
// or one of a range, to the next probe, so that two listeners of one
// child collided (TestDevNetworkWalk's DNS server on node 1's port).
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// takePorts records p .. p+n-1 as handed out, unless one of them was.
func takePorts(p, n int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	for i := range n {
		if handedOut.ports[p+i] {
			return false
		}
	}
	for i := range n {
		handedOut.ports[p+i] = true
	}
	return true
}

// nodeProc is a running `lattice node`.
type nodeProc struct {
	cmd *exec.Cmd
	c   *nodeclient.Client
}

func startNode(t *testing.T, args ...string) *nodeProc {
	t.Helper()
	addr := freeAddr(t)
	// Loopback only; a test that wants another p2p address passes its own.
	cmd := exec.Command(binary, append([]string{"node", "--http", addr, "--p2p", "/ip4/127.0.0.1/tcp/0", "--log-level", "warn"}, args...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &nodeProc{cmd: cmd, c: nodeclient.New("http://"+addr, nil)}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := p.c.Node(ctx)
		cancel()
		if err == nil {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("node did not come up on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the node with SIGTERM and checks that it shut down cleanly.
func (p *nodeProc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("node exited after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("node did not stop within 20 s of SIGTERM")
	}
}

// newNetwork writes a dev-work genesis with `lattice genesis new` in dir
// and generates the workload c describes on it. It returns the genesis
// file, the genesis key file and the workload.
func newNetwork(t *testing.T, dir, name string, c workload.Config) (genesisPath, keyPath string, wl *workload.Workload) {
	t.Helper()
	genesisPath = filepath.Join(dir, "genesis.json")
	keyPath = filepath.Join(dir, "genesis-key.json")
	lattice(t, "genesis", "new", "--key", keyPath, "--network", name, "--work", "dev", "--out", genesisPath)
	net, err := node.LoadNetwork(genesisPath)
	if err != nil {
		t.Fatal(err)
	}
	if c.GenesisKey, err = wallet.LoadKey(keyPath); err != nil {
		t.Fatal(err)
	}
	c.Genesis, c.Work, c.Timestamp = net.Genesis, net.Work, time.Now().UnixMilli()
	if wl, err = workload.Generate(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return genesisPath, keyPath, wl
}

// TestKillDuringSubmissions kills the real node process with SIGKILL while
// blocks stream in, restarts it, and checks that every block it
// acknowledged survived and that the ledger's invariants hold.
func TestKillDuringSubmissions(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "node")
	genesisPath, _, wl := newNetwork(t, dir, "crash", workload.Config{Accounts: 32, Fund: ledger.NewAmount(1_000_000), Claim: true, PerPair: 150})
	work := append([][]*ledger.Block{wl.Setup}, wl.Streams...)
	total := wl.Len()

	var mu sync.Mutex
	acked := map[ledger.Hash]bool{}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	args := []string{"--data", data, "--genesis", genesisPath}
	for round := range 4 {
		p := startNode(t, args...)
		ctx, cancel := context.WithCancel(context.Background())
		// Setup first (the genesis chain is one stream), then the pairs.
		submit := func(st []*ledger.Block) {
			for _, b := range st {
				if _, err := p.c.Submit(ctx, b); err != nil {
					return // the node died, or the ledger refused: stop this stream
				}
				mu.Lock()
				acked[b.Hash] = true
				mu.Unlock()
			}
		}
		submit(work[0])
		var wg sync.WaitGroup
		for _, st := range work[1:] {
			wg.Add(1)
			go func() { defer wg.Done(); submit(st) }()
		}
		if round < 3 {
			// Kill once this round has added a random number of new
			// acknowledgements, so every round dies mid-stream.
			mu.Lock()
			target := len(acked) + 100 + rng.IntN(800)
			mu.Unlock()
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
				mu.Lock()
				n := len(acked)
				mu.Unlock()
				if n >= target || n == total {
					break
				}
			}
			p.cmd.Process.Kill() // SIGKILL: no shutdown, no flush
			p.cmd.Wait()
		}
		wg.Wait()
		cancel()
		mu.Lock()
		t.Logf("round %d: %d of %d blocks acknowledged so far", round, len(acked), total)
		mu.Unlock()
		if round < 3 {
			continue
		}
		// The last round runs to completion; everything must be there.
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n != total {
			t.Errorf("final round acknowledged %d of %d blocks", n, total)
		}
		p.stop(t)
	}

	// Every acknowledged block is in the ledger after the crashes.
	p := startNode(t, "--data", data)
	ctx := context.Background()
	have := map[ledger.Hash]bool{}
	accts, err := p.c.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range accts {
		chain, err := p.c.Chain(ctx, a.Address)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range chain {
			have[b.Hash] = true
		}
	}
	for h := range acked {
		if !have[h] {
			t.Errorf("acknowledged block %s lost", h)
		}
	}
	p.stop(t)

	// The ledger's invariants hold, checked offline by `lattice audit`.
	var report struct {
		OK     bool   `json:"ok"`
		Blocks uint64 `json:"blocks"`
		Minted string `json:"stable_minted"`
	}
	if err := json.Unmarshal([]byte(lattice(t, "audit", "--data", data, "--json")), &report); err != nil {
		t.Fatal(err)
	}
	if !report.OK || report.Blocks != uint64(total+1) {
		t.Errorf("audit = %+v, want ok with %d blocks", report, total+1)
	}
	if want := fmt.Sprint(32 * ledger.FaucetAmount); report.Minted != want {
		t.Errorf("stable minted %s, want %s", report.Minted, want)
	}
}
