package govnet_test

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/govnet"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

// cluster starts three nodes whose genesis file names a 2-of-3
// governance keyset, and returns the keys.
func cluster(t *testing.T) (*nettest.Cluster, []wallet.Key) {
	t.Helper()
	var keys []wallet.Key
	var as []ledger.Address
	for range 3 {
		k := wallet.NewKey()
		keys, as = append(keys, k), append(as, k.Address())
	}
	ks := ledger.NewKeyset(2, as...)
	return nettest.Start(t, nettest.Options{Nodes: 3, Governance: &ks}), keys
}

func signed(c *nettest.Cluster, prev *statechain.Block, op statechain.Operation, key, value string, by ...wallet.Key) *statechain.Block {
	b := &statechain.Block{Index: prev.Index + 1, Previous: prev.Hash, Operation: op, Key: key, Value: value,
		Timestamp: max(time.Now().UnixMilli(), prev.Timestamp)}
	b.Seal(c.Network.Genesis.Hash)
	for _, k := range by {
		b.Sign(k.Private())
	}
	return b
}

// TestChainSpreads: a change submitted at one node reaches every node by
// gossip, a keyset change takes effect everywhere, and a node started
// later, from nothing, syncs the whole chain to the same state.
func TestChainSpreads(t *testing.T) {
	c, keys := cluster(t)
	ctx := context.Background()
	g0 := c.Nodes[0].Gov.Tip()
	for _, nd := range c.Nodes {
		if nd.Gov.Tip().Hash != g0.Hash || nd.Gov.State().Keyset().Threshold != 2 {
			t.Fatal("nodes disagree on block 0")
		}
	}
	b1 := signed(c, g0, statechain.OpSet, statechain.KeyLeasePrices, `{"vcpu":"5","memory_mb":"1","disk_gb":"2"}`, keys[0], keys[1])
	if _, err := c.Nodes[0].Gov.Submit(ctx, b1); err != nil {
		t.Fatal(err)
	}
	at := func(h ledger.Hash) func(i int) bool {
		return func(i int) bool { return c.Nodes[i].Gov.Tip().Hash == h }
	}
	c.WaitFor("block 1 everywhere", 20*time.Second, at(b1.Hash))
	b2 := signed(c, b1, statechain.OpUpdateKeyset, "", statechain.KeysetValue(ledger.NewKeyset(1, keys[2].Address())), keys[1], keys[2])
	if _, err := c.Nodes[1].Gov.Submit(ctx, b2); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("block 2 everywhere", 20*time.Second, at(b2.Hash))
	// The old keyset no longer governs, anywhere.
	stale := signed(c, b2, statechain.OpSet, "x.a", "1", keys[0], keys[1])
	for _, nd := range c.Nodes {
		if _, err := nd.Gov.Submit(ctx, stale); !errors.Is(err, statechain.ErrUnauthorized) {
			t.Fatalf("node %d took a block of the old keyset: %v", nd.Index, err)
		}
	}
	b3 := signed(c, b2, statechain.OpSet, statechain.KeyStakeRatio, "0.75", keys[2])
	if _, err := c.Nodes[2].Gov.Submit(ctx, b3); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("block 3 everywhere", 20*time.Second, at(b3.Hash))

	late := c.StartNode(t.TempDir(), nil)
	c.Nodes = append(c.Nodes, late)
	c.WaitFor("the late node synced", 30*time.Second, at(b3.Hash))
	for _, nd := range c.Nodes {
		p, err := nd.Gov.State().Params()
		if err != nil || p.StakeRatio != 7500 || p.Prices.DiskGB != ledger.NewAmount(2) {
			t.Fatalf("node %d params: %+v, %v", nd.Index, p, err)
		}
	}
}

// TestConflictHaltsEverywhere: every node holds block 1; then the
// keyholders sign another block 1 and submit it at one node. Every node
// learns of it and halts; none takes a further change. A node started
// afterwards copies block 1 from peers that all hold the same one: only
// the evidence they serve tells it, and it halts too.
func TestConflictHaltsEverywhere(t *testing.T) {
	c, keys := cluster(t)
	ctx := context.Background()
	g0 := c.Nodes[0].Gov.Tip()
	a := signed(c, g0, statechain.OpSet, "x.side", `"a"`, keys[0], keys[1])
	b := signed(c, g0, statechain.OpSet, "x.side", `"b"`, keys[1], keys[2])
	if _, err := c.Nodes[0].Gov.Submit(ctx, a); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("block 1 everywhere", 20*time.Second, func(i int) bool { return c.Nodes[i].Gov.Tip().Hash == a.Hash })
	if _, err := c.Nodes[2].Gov.Submit(ctx, b); !errors.Is(err, govnet.ErrHalted) {
		t.Fatalf("the conflicting block: %v", err)
	}
	halted := func(i int) bool {
		cs := c.Nodes[i].Gov.Conflicts()
		return c.Nodes[i].Gov.Halted() && len(cs) == 1 && cs[0].Index == 1
	}
	c.WaitFor("every node halted", 30*time.Second, halted)
	for _, nd := range c.Nodes {
		if held := nd.Gov.Tip(); held.Hash != a.Hash {
			t.Fatalf("node %d holds %d %s", nd.Index, held.Index, held.Hash)
		}
		next := signed(c, a, statechain.OpSet, "x.more", "1", keys[0], keys[1])
		if _, err := nd.Gov.Submit(ctx, next); !errors.Is(err, govnet.ErrHalted) {
			t.Fatalf("node %d took a change while halted: %v", nd.Index, err)
		}
	}
	late := c.StartNode(t.TempDir(), nil)
	c.Nodes = append(c.Nodes, late)
	c.WaitFor("the late node halted", 30*time.Second, halted)
}

// TestPartitionedConflictHalts: node 2 is cut off; the keyholders sign
// block 1 twice, one submitted on each side. When the link comes back the
// two sides hold chains of equal length that differ: sync must find it,
// and every node halts. A node started afterwards, from nothing, halts
// too, whichever side it copies.
func TestPartitionedConflictHalts(t *testing.T) {
	c, keys := cluster(t)
	ctx := context.Background()
	c.Nodes[2].Host.Isolate(c.PeerIDs(0, 1)...)
	c.Nodes[0].Host.Isolate(c.PeerIDs(2)...)
	c.Nodes[1].Host.Isolate(c.PeerIDs(2)...)
	g0 := c.Nodes[0].Gov.Tip()
	a := signed(c, g0, statechain.OpSet, "x.side", `"a"`, keys[0], keys[1])
	b := signed(c, g0, statechain.OpSet, "x.side", `"b"`, keys[1], keys[2])
	if _, err := c.Nodes[0].Gov.Submit(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Nodes[2].Gov.Submit(ctx, b); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("each side holds its block", 20*time.Second, func(i int) bool {
		want := a.Hash
		if i == 2 {
			want = b.Hash
		}
		return c.Nodes[i].Gov.Tip().Hash == want
	})
	for _, nd := range c.Nodes {
		if nd.Gov.Halted() {
			t.Fatalf("node %d halted before the link came back", nd.Index)
		}
	}
	for _, nd := range c.Nodes {
		nd.Host.Heal()
	}
	halted := func(i int) bool { return c.Nodes[i].Gov.Halted() }
	c.WaitFor("every node halted after the heal", 30*time.Second, halted)

	late := c.StartNode(t.TempDir(), nil)
	c.Nodes = append(c.Nodes, late)
	c.WaitFor("the late node halted", 30*time.Second, halted)
	if tip := late.Gov.Tip(); tip.Index != 1 {
		t.Fatalf("the late node holds index %d", tip.Index)
	}
}

// TestSyncUnderJunkGossip: a hostile peer gossips, ten times a second, a
// block far ahead of any tip, validly signed by a key of its own, and
// answers every pull with an empty chain. Such a block costs nothing to
// make, and it is ignored, not penalised (an honest peer sends one
// whenever the node lags; which keyset must sign it the node cannot know
// without the blocks below). It must have the victim pull from the
// hostile peer at most about twice per sync interval (once for its gossip,
// once when the periodic pull picks it), and must not keep the victim
// from catching up from its honest peer: a block the victim can get only
// by a pull from the honest node arrives within a few intervals.
func TestSyncUnderJunkGossip(t *testing.T) {
	c := nettest.Start(t, nettest.Options{Nodes: 2}) // SyncInterval 1 s
	honest, victim := c.Nodes[0], c.Nodes[1]
	pulls := junkPeer(t, c, victim, honest)
	c.WaitFor("a pull from the hostile peer", 20*time.Second, func(int) bool { return pulls.Load() > 0 })

	const window = 4 * time.Second
	before := pulls.Load()
	time.Sleep(window)
	if n, most := pulls.Load()-before, int64(2*window/time.Second)+2; n > most {
		t.Errorf("the victim pulled from the hostile peer %d times in %s; at most %d expected", n, window, most)
	}

	victim.Host.Isolate(honest.Host.ID())
	tip := honest.Gov.Tip()
	b := &statechain.Block{Index: tip.Index + 1, Previous: tip.Hash, Operation: statechain.OpSet, Key: "x.junk", Value: "1",
		Timestamp: max(time.Now().UnixMilli(), tip.Timestamp)}
	b.Seal(c.Network.Genesis.Hash)
	b.Sign(c.Genesis.Private())
	if _, err := honest.Gov.Submit(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	// GossipSub advertises a message for three heartbeats of a second:
	// past them, only a pull brings the block to the victim.
	time.Sleep(3 * time.Second)
	victim.Host.Heal()
	healed := time.Now()
	const catchUp = 15 * time.Second
	for victim.Gov.Tip().Index < b.Index {
		if time.Since(healed) > catchUp {
			t.Fatalf("the victim still lacks block %d %s after the link healed; it pulled from the hostile peer %d times in all",
				b.Index, catchUp, pulls.Load())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the victim took block %d %s after the link healed; it pulled from the hostile peer %d times in all",
		b.Index, time.Since(healed).Round(time.Millisecond), pulls.Load())
}

// junkPeer starts a host that talks to victim alone (it shuts out
// others), gossips every 100 ms a block far ahead of any tip, signed by
// a key no keyset names, and answers every state-chain pull with an
// empty chain. It returns the count of pulls; what it starts stops when
// the test ends.
func junkPeer(t *testing.T, c *nettest.Cluster, victim *nettest.Node, others ...*nettest.Node) *atomic.Int64 {
	t.Helper()
	h, err := p2p.New(t.Context(), p2p.Config{Dir: t.TempDir(), Network: c.Network.Genesis.Hash.String(),
		Bootstrap: victim.Host.Addrs(), LowPeers: 1, HighPeers: 4, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	for _, o := range others {
		h.Isolate(o.Host.ID())
	}
	pulls := new(atomic.Int64)
	h.Handle("statechain-sync/1", func(s network.Stream) {
		pulls.Add(1)
		s.Write(binary.BigEndian.AppendUint64(nil, 0)) // tip 0, and no block
		s.Close()
	})
	topic, err := h.Join("statechain/1", func(_ context.Context, from peer.ID, _ []byte) p2p.Verdict {
		if from == h.ID() {
			return p2p.Accept
		}
		return p2p.Ignore // forwards nothing of others'
	}, func(peer.ID, []byte) {})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() }) // before h.Close: cleanups run last in, first out
	stranger := wallet.NewKey()
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := uint64(1000); ; i++ {
			b := &statechain.Block{Index: i, Operation: statechain.OpSet, Key: "x.junk", Value: "1", Timestamp: time.Now().UnixMilli()}
			b.Seal(c.Network.Genesis.Hash)
			b.Sign(stranger.Private())
			data, err := b.MarshalBinary()
			if err != nil {
				t.Errorf("junk block: %v", err)
				return
			}
			topic.Publish(ctx, data) // fails until the victim is connected
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return pulls
}
