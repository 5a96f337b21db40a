package govnet_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/govnet"
	"github.com/latticenet/lattice/node/nettest"
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
	ids := func(is ...int) (out []peer.ID) {
		for _, i := range is {
			out = append(out, c.Nodes[i].Host.ID())
		}
		return out
	}
	c.Nodes[2].Host.Isolate(ids(0, 1)...)
	c.Nodes[0].Host.Isolate(ids(2)...)
	c.Nodes[1].Host.Isolate(ids(2)...)
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
