package ledgernet_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/ledgernet"
	"github.com/latticenet/lattice/nettest"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/wallet"
)

// The network benchmarks (docs/benchmarks.md):
//
//	go test ./ledgernet -run '^$' -bench . -benchtime 1x -count 3
//
// They report confirmed blocks/s on three nodes beside single-node ingest
// of the same blocks in the same run, fork decision latency, and sync.

// chainOfSends returns n blocks: sends from the genesis key to a few
// accounts and their receives, in an order in which they apply.
func chainOfSends(tb testing.TB, c *wallet.Chains, from wallet.Key, n int) []*ledger.Block {
	tb.Helper()
	to := make([]wallet.Key, 16)
	for i := range to {
		to[i] = wallet.NewKey()
		c.Add(to[i], nil)
	}
	var out []*ledger.Block
	for i := 0; len(out) < n; i++ {
		k := to[i%len(to)]
		s, err := c.Send(from, k.Address(), 1)
		if err != nil {
			tb.Fatal(err)
		}
		r, err := c.Receive(k, s, ledger.Address{})
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, s, r)
	}
	return out
}

func BenchmarkConfirmThreeNodes(b *testing.B) {
	const n = 12000
	for range b.N {
		// Sync is the safety net under gossip; at the test harness's
		// one-second interval it would pull every block a second time.
		c := nettest.Start(b, nettest.Options{Nodes: 3, Net: ledgernet.Config{SyncInterval: 30 * time.Second}})
		blocks := chainOfSends(b, c.Chains, c.Genesis, n)

		// Single-node ingest of the same blocks, in the same run, on a
		// node that first takes what the cluster has (the weight shares).
		single := openSingle(b, c.Network)
		var before []*ledger.Block
		c.Nodes[0].N.Store.Log(0, 1<<20, func(_ uint64, e *ledger.Entry) error {
			if !ledger.IsGenesis(e.Block) {
				before = append(before, e.Block)
			}
			return nil
		})
		single.Engine.SubmitAll(context.Background(), before)
		start := time.Now()
		_, errs := single.Engine.SubmitAll(context.Background(), blocks)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		singleRate := float64(len(blocks)) / time.Since(start).Seconds()
		single.Close()

		start = time.Now()
		_, errs = c.Nodes[0].N.Engine.SubmitAll(context.Background(), blocks)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		c.WaitConfirmed(blocks[len(blocks)-1].Hash, 5*time.Minute)
		netRate := float64(len(blocks)) / time.Since(start).Seconds()
		b.ReportMetric(singleRate, "single-blocks/s")
		b.ReportMetric(netRate, "confirmed-blocks/s")
		b.ReportMetric(netRate/singleRate, "ratio")
		c.Close()
	}
}

func BenchmarkForkDecision(b *testing.B) {
	const forks = 30
	for range b.N {
		c := nettest.Start(b, nettest.Options{Nodes: 3})
		alice := wallet.NewKey()
		head := c.Open(alice, 1_000_000)
		var lat []time.Duration
		for range forks {
			x := c.Must(c.Chains.Send(alice, c.Genesis.Address(), 1))
			c.Chains.At(head)
			y := c.Must(c.Chains.Send(alice, c.Genesis.Address(), 2))
			start := time.Now()
			go c.Nodes[0].N.Engine.Submit(context.Background(), x)
			go c.Nodes[2].N.Engine.Submit(context.Background(), y)
			var winner *ledger.Block
			c.WaitFor("fork decided", 20*time.Second, func(i int) bool {
				for _, blk := range []*ledger.Block{x, y} {
					if c.Confirmed(i, blk.Hash) && (winner == nil || winner == blk) {
						winner = blk
						return true
					}
				}
				return false
			})
			lat = append(lat, time.Since(start))
			head = winner
			c.Chains.At(head)
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		c.Close()
	}
}

func BenchmarkSync(b *testing.B) {
	const n = 20000
	for range b.N {
		c := nettest.Start(b, nettest.Options{Nodes: 1})
		blocks := chainOfSends(b, c.Chains, c.Genesis, n)
		_, errs := c.Nodes[0].N.Engine.SubmitAll(context.Background(), blocks)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		nd := c.StartNode(b.TempDir(), nil)
		c.Nodes = append(c.Nodes, nd)
		last := blocks[len(blocks)-1].Hash
		c.WaitFor("synced", 10*time.Minute, func(i int) bool {
			_, found, _ := c.Nodes[i].N.Store.Entry(last)
			return found
		})
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "synced-blocks/s")
		c.Close()
	}
}

func openSingle(tb testing.TB, net *node.Network) *node.Node {
	tb.Helper()
	n, err := node.Open(node.Config{DataDir: tb.TempDir(), Network: net, FS: vfs.NewMem(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}
