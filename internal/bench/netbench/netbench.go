// Package netbench measures the ledger network (lattice bench network):
// confirmed blocks per second on a three-node network beside single-node
// ingest of the same blocks in the same round, submitted in process and
// over HTTP, how long a fork takes to be decided on every node, and how
// fast a fresh node syncs a ledger. Every node is real (package nettest:
// libp2p on loopback, the ledgernet service, Pebble on disk in a temporary
// directory, fsync'd) and they all share this machine's cores and disk.
package netbench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/latticenet/lattice/internal/bench/benchstat"
	"github.com/latticenet/lattice/internal/bench/blockload"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/ledgernet"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/node/workload"
	"github.com/latticenet/lattice/wallet"
)

// Config sizes a run. Zero values take the defaults.
type Config struct {
	Blocks     int       // blocks confirmed on three nodes per round (default 12000)
	Forks      int       // forks decided per round (default 30)
	SyncBlocks int       // blocks a fresh node syncs per round (default 100000)
	Rounds     int       // rounds; the report gives medians (default 3)
	HTTPConc   int       // HTTP requests in flight in the HTTP phase (default 64)
	Progress   io.Writer // progress messages, or nil
	// Driver runs the HTTP phase's load generator; the zero value runs it
	// in this process.
	Driver blockload.Driver
}

func (c *Config) setDefaults() {
	if c.Blocks <= 0 {
		c.Blocks = 12000
	}
	if c.Forks <= 0 {
		c.Forks = 30
	}
	if c.SyncBlocks <= 0 {
		c.SyncBlocks = 100000
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.HTTPConc <= 0 {
		c.HTTPConc = 64
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Round is one round's figures.
type Round struct {
	// Blocks handed to the engine in process, for diagnosis (the target
	// is read against HTTPRatio): Config.Blocks blocks, on a lone node and
	// confirmed on three.
	SingleBlocksPerSec    float64 `json:"single_blocks_per_sec"`
	ConfirmedBlocksPerSec float64 `json:"confirmed_blocks_per_sec"`
	Ratio                 float64 `json:"ratio"`
	// The same over HTTP: Config.Blocks blocks (rounded up to whole
	// rounds of every stream) of HTTPConc independent streams, posted one
	// per request to node 0 (and to the lone node) from HTTPConc
	// connections, as wallets submit them.
	SingleHTTPBlocksPerSec    float64 `json:"single_http_blocks_per_sec"`
	ConfirmedHTTPBlocksPerSec float64 `json:"confirmed_http_blocks_per_sec"`
	HTTPRatio                 float64 `json:"http_ratio"`
	ForkP50ms                 float64 `json:"fork_p50_ms"`
	ForkP99ms                 float64 `json:"fork_p99_ms"`
	SyncBlocks                int     `json:"sync_blocks"`
	SyncSeconds               float64 `json:"sync_seconds"`
	SyncBlocksPerSec          float64 `json:"sync_blocks_per_sec"`
	// Elections the three nodes refused for want of room (ledgernet's
	// MaxElections) while confirming, in process and over HTTP: their
	// blocks waited for room before this node's representatives voted.
	ElectionsRefused     float64 `json:"elections_refused"`
	HTTPElectionsRefused float64 `json:"http_elections_refused"`
}

// Report is a run's rounds and their medians.
type Report struct {
	Rounds []Round `json:"rounds"`
	Median Round   `json:"median"`
	// LoadGenerator says where the HTTP phase's load generator ran:
	// "inprocess" or "process" (blockload.Driver.Where).
	LoadGenerator string `json:"http_load_generator"`
}

// Run measures cfg.Rounds rounds.
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg.setDefaults()
	rep := Report{LoadGenerator: cfg.Driver.Where()}
	for i := range cfg.Rounds {
		var rd Round
		steps := []struct {
			name string
			f    func(ctx context.Context, t nettest.T) error
		}{
			{"confirmation", func(ctx context.Context, t nettest.T) error { return confirmation(ctx, t, cfg.Blocks, &rd) }},
			{"confirmation over HTTP", func(ctx context.Context, t nettest.T) error {
				return confirmationHTTP(ctx, t, cfg.Blocks, cfg.HTTPConc, cfg.Driver, &rd)
			}},
			{"forks", func(_ context.Context, t nettest.T) error { return forks(t, cfg.Forks, &rd) }},
			{"sync", func(ctx context.Context, t nettest.T) error { return syncFresh(ctx, t, cfg.SyncBlocks, &rd) }},
		}
		for _, s := range steps {
			fmt.Fprintf(cfg.Progress, "round %d: %s...\n", i+1, s.name)
			// CPU profiles (bench network --cpuprofile) tell the steps
			// apart by this label, the lone node by "node=lone" and the
			// cluster's nodes by "node=node0" and so on.
			var err error
			pprof.Do(ctx, pprof.Labels("step", s.name), func(ctx context.Context) {
				err = nettest.Run("bench-network", func(t nettest.T) error { return s.f(ctx, t) })
			})
			if err != nil {
				return rep, fmt.Errorf("netbench: round %d, %s: %w", i+1, s.name, err)
			}
		}
		rep.Rounds = append(rep.Rounds, rd)
	}
	med := func(f func(Round) float64) float64 { return benchstat.MedianOf(rep.Rounds, f) }
	rep.Median = Round{
		SingleBlocksPerSec:        med(func(r Round) float64 { return r.SingleBlocksPerSec }),
		ConfirmedBlocksPerSec:     med(func(r Round) float64 { return r.ConfirmedBlocksPerSec }),
		Ratio:                     med(func(r Round) float64 { return r.Ratio }),
		SingleHTTPBlocksPerSec:    med(func(r Round) float64 { return r.SingleHTTPBlocksPerSec }),
		ConfirmedHTTPBlocksPerSec: med(func(r Round) float64 { return r.ConfirmedHTTPBlocksPerSec }),
		HTTPRatio:                 med(func(r Round) float64 { return r.HTTPRatio }),
		ForkP50ms:                 med(func(r Round) float64 { return r.ForkP50ms }),
		ForkP99ms:                 med(func(r Round) float64 { return r.ForkP99ms }),
		SyncBlocks:                cfg.SyncBlocks,
		SyncSeconds:               med(func(r Round) float64 { return r.SyncSeconds }),
		SyncBlocksPerSec:          med(func(r Round) float64 { return r.SyncBlocksPerSec }),
		ElectionsRefused:          med(func(r Round) float64 { return r.ElectionsRefused }),
		HTTPElectionsRefused:      med(func(r Round) float64 { return r.HTTPElectionsRefused }),
	}
	return rep, nil
}

// confirmation submits n blocks to node 0 of three and times them until the
// last is confirmed on all three; and, first, the same blocks on a lone
// node that has what the cluster had before them.
func confirmation(ctx context.Context, t nettest.T, n int, rd *Round) error {
	// Sync is the safety net under gossip; it need not run during a burst.
	c := nettest.Start(t, nettest.Options{Nodes: 3, OnDisk: true, Net: ledgernet.Config{SyncInterval: 30 * time.Second}, Labels: ctx})
	blocks, err := chainOfSends(c.Chains, c.Genesis, n)
	if err != nil {
		return err
	}
	single, err := lone(ctx, t, c)
	if err != nil {
		return err
	}
	defer single.Close()
	start := time.Now()
	if err := submitAll(ctx, single, blocks); err != nil {
		return err
	}
	rd.SingleBlocksPerSec = float64(len(blocks)) / time.Since(start).Seconds()

	start = time.Now()
	if err := submitAll(ctx, c.Nodes[0].N, blocks); err != nil {
		return err
	}
	c.WaitConfirmed(blocks[len(blocks)-1].Hash, 5*time.Minute)
	rd.ConfirmedBlocksPerSec = float64(len(blocks)) / time.Since(start).Seconds()
	rd.Ratio = rd.ConfirmedBlocksPerSec / rd.SingleBlocksPerSec
	rd.ElectionsRefused = refused(c)
	return nil
}

// refused returns the elections c's nodes refused for want of room.
func refused(c *nettest.Cluster) float64 {
	var n uint64
	for _, nd := range c.Nodes {
		n += nd.Svc.Stats().ElectionsRefused
	}
	return float64(n)
}

// confirmationHTTP posts n blocks of conc independent streams to node 0's
// HTTP API, one block per request from conc connections, and times them
// until every block is confirmed on all three nodes; and, first, the same
// blocks posted the same way to a lone node that has what the cluster had
// before them.
func confirmationHTTP(ctx context.Context, t nettest.T, n, conc int, d blockload.Driver, rd *Round) error {
	c := nettest.Start(t, nettest.Options{Nodes: 3, OnDisk: true, Net: ledgernet.Config{SyncInterval: 30 * time.Second}, Labels: ctx})
	from := c.Chains.Head(c.Genesis.Address())
	// One pair of accounts, one stream, per connection.
	wl, err := workload.Generate(ctx, workload.Config{GenesisKey: c.Genesis, Genesis: c.Network.Genesis, From: &from,
		Work: c.Network.Work, Accounts: 2 * conc, Fund: ledger.NewAmount(1_000_000),
		PerPair: (n + 2*conc - 1) / (2 * conc), Timestamp: time.Now().UnixMilli()})
	if err != nil {
		return err
	}
	posts, err := blockload.Requests(wl.Streams)
	if err != nil {
		return err
	}
	// The setup goes in unmeasured; the cluster confirms it before the
	// clock starts.
	single, err := lone(ctx, t, c)
	if err != nil {
		return err
	}
	defer single.Close()
	for _, nd := range []*node.Node{single, c.Nodes[0].N} {
		if err := submitAll(ctx, nd, wl.Setup); err != nil {
			return err
		}
	}
	for i := 1; i < len(wl.Setup); i += 2 { // each receive, and so its send
		c.WaitConfirmed(wl.Setup[i].Hash, 5*time.Minute)
	}
	var api *httptest.Server
	pprof.Do(ctx, pprof.Labels("node", "lone"), func(context.Context) {
		api = httptest.NewServer(nodeapi.New(single, nodeapi.Options{}))
	})
	defer api.Close()
	// Connections are opened before each clock starts.
	start := func(url string) (blockload.Runner, error) {
		return d.Start(ctx, strings.TrimPrefix(url, "http://"), conc, posts)
	}
	load, err := start(api.URL)
	if err != nil {
		return err
	}
	defer load.Close()
	ph, err := load.Drive(ctx)
	if err != nil {
		return fmt.Errorf("lone node: %w", err)
	}
	rd.SingleHTTPBlocksPerSec = ph.PerSecond

	load0, err := start(c.Nodes[0].API.URL)
	if err != nil {
		return err
	}
	defer load0.Close()
	// The clock runs from the word to go to the last confirmation. With
	// the load generator in a process of its own it also counts the
	// word's way there and the child's report (well under 1% of a round).
	began := time.Now()
	ph0, err := load0.Drive(ctx)
	if err != nil {
		return fmt.Errorf("node 0: %w", err)
	}
	// A stream's last block is a receive that depends on every block of
	// its pair's two chains before it, so it is confirmed last.
	for _, st := range wl.Streams {
		c.WaitConfirmed(st[len(st)-1].Hash, 5*time.Minute)
	}
	rd.ConfirmedHTTPBlocksPerSec = float64(ph0.Blocks) / time.Since(began).Seconds()
	rd.HTTPRatio = rd.ConfirmedHTTPBlocksPerSec / rd.SingleHTTPBlocksPerSec
	rd.HTTPElectionsRefused = refused(c)
	return nil
}

// lone opens a node alone, outside c's network, with every block c's node
// 0 has: the same ledger the cluster starts from.
func lone(ctx context.Context, t nettest.T, c *nettest.Cluster) (*node.Node, error) {
	var single *node.Node
	var err error
	pprof.Do(ctx, pprof.Labels("node", "lone"), func(context.Context) {
		single, err = node.Open(node.Config{DataDir: t.TempDir(), Network: c.Network,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	})
	if err != nil {
		return nil, err
	}
	var before []*ledger.Block
	err = c.Nodes[0].N.Store.Log(0, 1<<20, func(_ uint64, e *ledger.Entry) error {
		if !ledger.IsGenesis(e.Block) {
			before = append(before, e.Block)
		}
		return nil
	})
	if err == nil {
		err = submitAll(ctx, single, before)
	}
	if err != nil {
		single.Close()
		return nil, err
	}
	return single, nil
}

// forks makes n forks in a row on one account, the two contenders
// submitted to nodes 0 and 2 at once, and times each until one contender
// is confirmed on all three nodes.
func forks(t nettest.T, n int, rd *Round) error {
	c := nettest.Start(t, nettest.Options{Nodes: 3, OnDisk: true})
	alice := wallet.NewKey()
	head := c.Open(alice, 1_000_000)
	var lat []time.Duration
	for range n {
		x, err := c.Chains.Send(alice, c.Genesis.Address(), 1)
		if err != nil {
			return err
		}
		c.Chains.At(head)
		y, err := c.Chains.Send(alice, c.Genesis.Address(), 2)
		if err != nil {
			return err
		}
		start := time.Now()
		var wg sync.WaitGroup
		for i, b := range map[int]*ledger.Block{0: x, 2: y} {
			wg.Add(1)
			go func() { defer wg.Done(); c.Nodes[i].N.Engine.Submit(context.Background(), b) }()
		}
		var winner *ledger.Block
		c.WaitFor("a contender confirmed everywhere", 30*time.Second, func(i int) bool {
			for _, b := range []*ledger.Block{x, y} {
				if c.Confirmed(i, b.Hash) && (winner == nil || winner == b) {
					winner = b
					return true
				}
			}
			return false
		})
		lat = append(lat, time.Since(start))
		wg.Wait()
		head = winner
		c.Chains.At(head)
	}
	slices.Sort(lat)
	rd.ForkP50ms = ms(lat[len(lat)/2])
	rd.ForkP99ms = ms(lat[min(len(lat)-1, len(lat)*99/100)])
	return nil
}

// syncFresh writes about n blocks to a lone node, then times a fresh node
// pulling all of them.
func syncFresh(ctx context.Context, t nettest.T, n int, rd *Round) error {
	c := nettest.Start(t, nettest.Options{Nodes: 1, OnDisk: true, Supply: 1 << 62})
	accounts := 256
	perPair := max(1, (n-2*accounts)/accounts)
	wl, err := workload.Generate(ctx, workload.Config{GenesisKey: c.Genesis, Genesis: c.Network.Genesis, Work: c.Network.Work,
		Accounts: accounts, Fund: ledger.NewAmount(1 << 40), PerPair: perPair, Timestamp: time.Now().UnixMilli()})
	if err != nil {
		return err
	}
	src := c.Nodes[0].N
	if err := submitAll(ctx, src, wl.Setup); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(wl.Streams))
	for _, s := range wl.Streams {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- submitAll(ctx, src, s) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	var last []ledger.Hash
	for _, s := range wl.Streams {
		last = append(last, s[len(s)-1].Hash)
	}
	start := time.Now()
	nd := c.StartNode(t.TempDir(), nil)
	c.Nodes = append(c.Nodes, nd)
	c.WaitFor("the fresh node synced", 30*time.Minute, func(i int) bool {
		for _, h := range last {
			if _, found, _ := c.Nodes[i].N.Store.Entry(h); !found {
				return false
			}
		}
		return true
	})
	rd.SyncSeconds = time.Since(start).Seconds()
	rd.SyncBlocks = wl.Len()
	rd.SyncBlocksPerSec = float64(wl.Len()) / rd.SyncSeconds
	return nil
}

// chainOfSends returns n blocks: sends from the genesis key to a few
// accounts and their receives, in an order in which they apply.
func chainOfSends(c *wallet.Chains, from wallet.Key, n int) ([]*ledger.Block, error) {
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
			return nil, err
		}
		r, err := c.Receive(k, s, ledger.Address{})
		if err != nil {
			return nil, err
		}
		out = append(out, s, r)
	}
	return out, nil
}

// submitAll submits blocks to n in chunks, in order.
func submitAll(ctx context.Context, n *node.Node, blocks []*ledger.Block) error {
	for chunk := range slices.Chunk(blocks, 4096) {
		_, errs := n.Engine.SubmitAll(ctx, chunk)
		for i, err := range errs {
			if err != nil {
				return fmt.Errorf("block %s: %w", chunk[i].Hash, err)
			}
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
