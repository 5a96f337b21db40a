package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/node/workload"
)

// TestSyncResumesAfterKill runs two real node processes: the first holds a
// ledger and all the voting weight; the second joins it fresh, is killed
// with SIGKILL in the middle of its sync, restarts, and must end with every
// block, confirmed, and a ledger whose invariants hold.
func TestSyncResumesAfterKill(t *testing.T) {
	dir := t.TempDir()
	genesisPath, keyPath, wl := newNetwork(t, dir, "sync", workload.Config{Accounts: 64, Fund: ledger.NewAmount(1_000_000), PerPair: 400})

	// The first node votes with the genesis key: it holds all the weight.
	a := startNode(t, "--data", filepath.Join(dir, "a"), "--genesis", genesisPath, "--rep-key", keyPath)
	ctx := context.Background()
	for _, st := range append([][]*ledger.Block{wl.Setup}, wl.Streams...) {
		for _, b := range st {
			if _, err := a.c.Submit(ctx, b); err != nil {
				t.Fatalf("submit to the first node: %v", err)
			}
		}
	}
	info, err := a.c.Node(ctx)
	if err != nil || len(info.P2PAddrs) == 0 {
		t.Fatalf("GET /node: %+v, %v; want p2p_addrs", info, err)
	}
	lastOf := func() []ledger.Hash {
		var hs []ledger.Hash
		for _, st := range wl.Streams {
			hs = append(hs, st[len(st)-1].Hash)
		}
		return hs
	}()

	// The second node joins, and dies part-way through its sync.
	bArgs := []string{"--data", filepath.Join(dir, "b"), "--genesis", genesisPath, "--bootstrap", info.P2PAddrs[0]}
	b := startNode(t, bArgs...)
	type counters struct {
		Synced int `json:"synced_blocks"`
		Served int `json:"served_blocks"`
	}
	network := func(p *nodeProc) (c counters) {
		resp, err := http.Get(p.c.BaseURL() + "/network")
		if err != nil {
			return c
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(&c)
		return c
	}
	synced := func(p *nodeProc) int { return network(p).Synced }
	total := wl.Len()
	deadline := time.Now().Add(60 * time.Second)
	for synced(b) < total/4 {
		if time.Now().After(deadline) {
			t.Fatalf("the second node synced %d of %d blocks in 60 s", synced(b), total)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := synced(b); n >= total {
		t.Fatalf("the sync finished (%d blocks) before the kill; make the workload larger", n)
	}
	syncedAtKill, servedAtKill := synced(b), network(a).Served
	b.cmd.Process.Kill() // SIGKILL: no shutdown
	b.cmd.Wait()

	// Restarted, it resumes and catches up, and learns the confirmations.
	b = startNode(t, bArgs...)
	deadline = time.Now().Add(2 * time.Minute)
	for {
		have, done := 0, 0
		for _, h := range lastOf {
			if blk, err := b.c.Block(ctx, h); err == nil {
				have++
				if blk.Confirmed {
					done++
				}
			}
		}
		if done == len(lastOf) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart, %d of %d chains fully synced and %d of them confirmed in 2 minutes; counters %+v",
				have, len(lastOf), done, network(b))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Resumed, not started over: after the restart the first node served
	// what the second had not applied, give or take the batches in flight
	// at the kill (the pull runs up to three batches of 1,024 ahead).
	if again, want := network(a).Served-servedAtKill, total-syncedAtKill+4*1024; again > want {
		t.Errorf("after the restart the first node served %d blocks, more than the %d left plus those in flight: the sync started over", again, total-syncedAtKill)
	}
	b.stop(t)
	a.stop(t)

	var report struct {
		OK     bool   `json:"ok"`
		Blocks uint64 `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(lattice(t, "audit", "--data", filepath.Join(dir, "b"), "--json")), &report); err != nil {
		t.Fatal(err)
	}
	if !report.OK || report.Blocks != uint64(total+1) {
		t.Errorf("audit of the second node = %+v, want ok with %d blocks", report, total+1)
	}
}

// TestDevNetworkWalk is the README's walk, on the real binary: `lattice
// dev --nodes 3`, a send through the CLI to node 0 seen confirmed on nodes
// 1 and 2, and a fourth node joining with `lattice node --bootstrap` and
// catching up.
func TestDevNetworkWalk(t *testing.T) {
	dir := t.TempDir()
	p2pPort := freePortRange(t, 3)
	httpPort := freePortRange(t, 3)
	// Every listener on a free port: the test passes beside another
	// lattice on the default ones.
	dev := exec.Command(binary, "dev", "--nodes", "3", "--data", dir,
		"--http", fmt.Sprintf("127.0.0.1:%d", httpPort), "--p2p", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", p2pPort),
		"--api", freeAddr(t), "--s3", freeAddr(t), "--dns", freeAddr(t), "--cdn", freeAddr(t), "--s3-website", freeAddr(t))
	dev.Env = append(os.Environ(), "HOME="+dir)
	var stderr lockedBuffer
	dev.Stderr = io.MultiWriter(os.Stderr, &stderr)
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- dev.Wait() }()
	t.Cleanup(func() {
		dev.Process.Signal(syscall.SIGTERM)
		<-exited
	})
	// A child that exits early fails the test at once, with its own
	// words, not after the wait's timeout.
	alive := func() {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("lattice dev exited early (%v):\n%s", err, stderr.String())
		default:
		}
	}
	clients := make([]*nodeclient.Client, 3)
	for i := range clients {
		clients[i] = nodeclient.New(fmt.Sprintf("http://127.0.0.1:%d", httpPort+i), nil)
	}
	ctx := context.Background()
	waitUntil(t, "the three nodes answer", 60*time.Second, func() bool {
		alive()
		for _, c := range clients {
			if _, err := c.Node(ctx); err != nil {
				return false
			}
		}
		return true
	})

	// A send through the CLI, to node 0.
	bob := filepath.Join(dir, "bob.json")
	lattice(t, "key", "new", "--out", bob)
	var bobInfo struct {
		Address string `json:"address"`
	}
	json.Unmarshal([]byte(lattice(t, "key", "show", "--key", bob, "--json")), &bobInfo)
	var sent struct {
		Hash ledger.Hash `json:"hash"`
	}
	out := lattice(t, "send", "--node", fmt.Sprintf("http://127.0.0.1:%d", httpPort), "--key", filepath.Join(dir, "dev-key.json"),
		"--to", bobInfo.Address, "--amount", "12.5", "--json")
	if err := json.Unmarshal([]byte(out), &sent); err != nil || sent.Hash.IsZero() {
		t.Fatalf("send printed %q: %v", out, err)
	}
	waitUntil(t, "the send confirmed on every node", 30*time.Second, func() bool {
		for _, c := range clients {
			if b, err := c.Block(ctx, sent.Hash); err != nil || !b.Confirmed {
				return false
			}
		}
		return true
	})

	// A fourth node joins from the genesis file and node 0's address.
	info, err := clients[0].Node(ctx)
	if err != nil || len(info.P2PAddrs) == 0 {
		t.Fatalf("node 0's info: %+v, %v", info, err)
	}
	fourth := startNode(t, "--data", filepath.Join(dir, "fourth"), "--genesis", filepath.Join(dir, "genesis.json"),
		"--bootstrap", info.P2PAddrs[0])
	waitUntil(t, "the fourth node has the send, confirmed", 60*time.Second, func() bool {
		b, err := fourth.c.Block(ctx, sent.Hash)
		return err == nil && b.Confirmed
	})
	fourth.stop(t)
}

// freePortRange returns a port p such that p .. p+n-1 were free just now
// and none of them was returned before in this process.
func freePortRange(t *testing.T, n int) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		ok := true
		for i := 1; i < n && ok; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+i))
			if err != nil {
				ok = false
				continue
			}
			l.Close()
		}
		if ok && p+n < 65535 && takePorts(p, n) {
			return p
		}
	}
	t.Fatal("no free port range")
	return 0
}

func waitUntil(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s, still waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lockedBuffer is a bytes.Buffer that a child's output and the test can
// share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
