package chatnet_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/wallet"
)

// hostile starts a host of the cluster's network connected to node
// victim only (the other nodes hear what it sends through the victim),
// closed when the test ends.
func hostile(t *testing.T, c *nettest.Cluster, victim int) *p2p.Host {
	t.Helper()
	h, err := p2p.New(context.Background(), p2p.Config{Dir: t.TempDir(), Network: c.Network.Genesis.Hash.String(),
		Bootstrap: c.Nodes[victim].Host.Addrs(), LowPeers: 1, HighPeers: 4,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	for i, nd := range c.Nodes {
		if i != victim {
			h.Isolate(nd.Host.ID())
		}
	}
	return h
}

// junk is a valid registration of a fresh key at peer at, stamped now:
// what anyone may make as many of as they can sign.
func junk(at peer.ID) []byte {
	r := &directory.Registration{NodePeer: at.String(), Timestamp: time.Now().UnixMilli()}
	r.Sign(wallet.NewKey().Private())
	data, _ := r.MarshalBinary()
	return data
}

// settle waits until no node's directory has changed size for half a
// second (at most 15 s) and returns their sizes.
func settle(t *testing.T, c *nettest.Cluster) []int {
	t.Helper()
	sizes := func() []int {
		out := make([]int, len(c.Nodes))
		for i := range c.Nodes {
			out[i] = len(directoryOf(t, c, i))
		}
		return out
	}
	last, stable := sizes(), time.Now()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		now := sizes()
		if !slices.Equal(now, last) {
			last, stable = now, time.Now()
		} else if time.Since(stable) > 500*time.Millisecond {
			break
		}
	}
	return last
}

// flood publishes n registrations of fresh keys on the directory topic
// of h as fast as they are signed.
func flood(t *testing.T, h *p2p.Host, n int, at peer.ID) {
	t.Helper()
	topic, err := h.Join("directory/1", func(context.Context, peer.ID, []byte) p2p.Verdict { return p2p.Accept },
		func(peer.ID, []byte) {})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(topic.Peers()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the hostile host never saw a peer on the directory topic")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for range n {
		if err := topic.Publish(context.Background(), junk(at)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDirectoryGossipFlood: a peer gossiping registrations of fresh keys
// as fast as it signs them gets no more of them stored, on the node it
// talks to or on the node behind it, than its rate allows (a burst, then
// so many a second); an honest registration still spreads after.
func TestDirectoryGossipFlood(t *testing.T) {
	const rate, burst, n = 20, 50, 1000
	c := nettest.Start(t, nettest.Options{Nodes: 2, Chat: chatnet.Config{DirectoryPeerRate: rate, DirectoryPeerBurst: burst}})
	h := hostile(t, c, 0)
	before := settle(t, c)
	start := time.Now()
	flood(t, h, n, c.Nodes[0].Host.ID())
	after := settle(t, c)
	// Every token the flood could have had, from its first message to the
	// last change seen, and a little for messages judged meanwhile.
	allowed := burst + int(rate*time.Since(start).Seconds()) + 10
	for i := range c.Nodes {
		grew := after[i] - before[i]
		t.Logf("node %d: %d of %d registrations of fresh keys stored (%d allowed)", i, grew, n, allowed)
		switch {
		case grew > allowed:
			t.Errorf("node %d: %d registrations of fresh keys from one peer stored, more than the %d its rate allows (of %d published)", i, grew, allowed, n)
		case grew < burst/2:
			t.Errorf("node %d: %d registrations of fresh keys stored, fewer than half the burst %d: did the flood arrive?", i, grew, burst)
		}
	}
	alice := wallet.NewKey()
	waitRegistered(t, c, register(t, c, alice, 1, 1, time.Now().UnixMilli()))
}

// TestDirectoryCapUnderFlood: past MaxRegistrations a flood of fresh
// keys takes only the places of registrations learned from peers and
// refreshed before it; the nodes' own accounts and the registrations
// submitted to a node stay there, and an account whose registration went
// gets its place back by registering anew.
func TestDirectoryCapUnderFlood(t *testing.T) {
	const capacity, n = 30, 300
	c := nettest.Start(t, nettest.Options{Nodes: 2,
		Chat: chatnet.Config{MaxRegistrations: capacity, DirectoryPeerRate: 1000, DirectoryPeerBurst: n}})
	alice, bob := wallet.NewKey(), wallet.NewKey()
	waitRegistered(t, c, register(t, c, alice, 0, 0, time.Now().UnixMilli())) // submitted to node 0
	waitRegistered(t, c, register(t, c, bob, 1, 1, time.Now().UnixMilli()))   // submitted to node 1
	h := hostile(t, c, 0)
	flood(t, h, n, c.Nodes[0].Host.ID())
	after := settle(t, c)
	for i, nd := range c.Nodes {
		if after[i] != capacity {
			t.Errorf("node %d holds %d registrations after a flood of %d, want MaxRegistrations %d", i, after[i], n, capacity)
		}
		held := directoryOf(t, c, i)
		if _, ok := held[nd.N.Key.Address()]; !ok {
			t.Errorf("node %d lost its own account's registration to the flood", i)
		}
		if _, ok := held[[]wallet.Key{alice, bob}[i].Address()]; !ok {
			t.Errorf("node %d lost the registration submitted to it to the flood", i)
		}
	}
	// Bob registers anew through node 1: newer than the flood, it takes
	// a place on node 0 again.
	waitRegistered(t, c, register(t, c, bob, 1, 1, time.Now().UnixMilli()))
}

// TestDirectoryPullFromAFlooder: a peer that serves directory pulls an
// endless stream of fresh keys fills at most MaxRegistrations places, and
// once they are full takes others' places only at its rate.
func TestDirectoryPullFromAFlooder(t *testing.T) {
	const capacity, rate, burst = 200, 10, 20
	c := nettest.Start(t, nettest.Options{Nodes: 1,
		Chat: chatnet.Config{MaxRegistrations: capacity, DirectoryPeerRate: rate, DirectoryPeerBurst: burst}})
	h := hostile(t, c, 0)
	pulled := make(chan struct{}, 1)
	h.Handle("directory-sync/1", func(st network.Stream) {
		defer st.Close()
		select {
		case pulled <- struct{}{}:
		default:
		}
		w := bufio.NewWriter(st)
		for {
			data := junk(h.ID())
			w.Write(binary.BigEndian.AppendUint16(nil, uint16(len(data))))
			if _, err := w.Write(data); err != nil {
				return // the puller stopped reading
			}
		}
	})
	nd := c.Nodes[0]
	select {
	case <-pulled:
	case <-time.After(15 * time.Second):
		t.Fatal("no pull from the flooder in 15 s")
	}
	time.Sleep(2 * time.Second) // the first pull, and the next
	full := directoryOf(t, c, 0)
	if len(full) != capacity {
		t.Fatalf("pulls from a flooder: %d registrations held, want MaxRegistrations %d", len(full), capacity)
	}
	start := time.Now()
	time.Sleep(2 * time.Second) // more pulls, one a second
	later := directoryOf(t, c, 0)
	if len(later) > capacity {
		t.Fatalf("%d registrations held, more than MaxRegistrations %d", len(later), capacity)
	}
	took := 0
	for a := range later {
		if _, ok := full[a]; !ok {
			took++
		}
	}
	allowed := burst + int(rate*time.Since(start).Seconds()) + 1
	t.Logf("later pulls put %d fresh keys in others' places (%d allowed)", took, allowed)
	if took > allowed {
		t.Errorf("later pulls put %d fresh keys in others' places, more than the %d the peer's rate allows", took, allowed)
	}
	if _, ok := later[nd.N.Key.Address()]; !ok {
		t.Error("the node lost its own account's registration to the flooder")
	}
}

// TestDirectoryPullsServedAtAPeersRate: a peer pulling the directory
// over and over is served SyncPeerBurst pulls, then one per 1/SyncPeerRate;
// the others are reset.
func TestDirectoryPullsServedAtAPeersRate(t *testing.T) {
	const burst, pulls = 3, 20
	c := nettest.Start(t, nettest.Options{Nodes: 1, Chat: chatnet.Config{SyncPeerRate: 0.01, SyncPeerBurst: burst}})
	h := hostile(t, c, 0)
	victim := c.Nodes[0].Host.ID()
	deadline := time.Now().Add(15 * time.Second)
	for len(h.Peers()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the hostile host never connected")
		}
		time.Sleep(20 * time.Millisecond)
	}
	served := 0
	for range pulls {
		ok, err := pull(h, victim)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			served++
		}
	}
	if served != burst {
		t.Errorf("%d pulls in a row: %d served, want %d (the burst)", pulls, served, burst)
	}
}

// pull reads one directory pull from p to its end: true when it ended
// with EOF after whole frames, false when it was reset.
func pull(h *p2p.Host, p peer.ID) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := h.Open(ctx, p, "directory-sync/1")
	if err != nil {
		return false, err
	}
	defer st.Close()
	st.CloseWrite()
	r := bufio.NewReader(st)
	for {
		var size [2]byte
		if _, err := io.ReadFull(r, size[:]); errors.Is(err, io.EOF) {
			return true, nil
		} else if err != nil {
			return false, nil
		}
		if _, err := io.CopyN(io.Discard, r, int64(binary.BigEndian.Uint16(size[:]))); err != nil {
			return false, nil
		}
	}
}
