// Package nettest runs ledger networks of several real nodes in one test
// process: each node has its own ledger (on memory or on disk), a libp2p
// host on loopback, the ledgernet service and its HTTP API on a real
// listener. Tests of everything that rides on the network (gossip, sync,
// consensus, and later chat, leases and tunnels) start a Cluster, act on
// it and check every node; the cluster stops everything it started when
// the test ends.
package nettest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/machine/qemu"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/govnet"
	"github.com/latticenet/lattice/node/leasenet"
	"github.com/latticenet/lattice/node/ledgernet"
	"github.com/latticenet/lattice/node/marketnet"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/node/stack"
	"github.com/latticenet/lattice/node/vmnet"
	"github.com/latticenet/lattice/wallet"
)

// T is what a Cluster needs of whoever runs it. T has it; the
// network benchmark command provides its own.
type T interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	TempDir() string
	Cleanup(func())
}

// Options configure a Cluster.
type Options struct {
	// Nodes is how many nodes start, each a representative with an equal
	// share of the supply. Default 3.
	Nodes int
	// OnDisk keeps ledgers on disk under the test's temp dir; by default
	// they are on memory.
	OnDisk bool
	// Supply is the genesis supply in base units. Default 3e12.
	Supply uint64
	// Net tunes every node's ledgernet service (Node, Host and Reps are
	// set by the cluster).
	Net ledgernet.Config
	// NetFor, if not nil, tunes node i's ledgernet service further, after
	// Net: nodes configured unlike each other.
	NetFor func(i int, cfg *ledgernet.Config)
	// Chat tunes every node's chat service (Dir, FS, Host, Key and Logger
	// are set by the cluster; RetryMax and SyncInterval default to 1 s).
	Chat chatnet.Config
	// Governance is the genesis file's governance keyset; nil means the
	// genesis account alone.
	Governance *ledger.Keyset
	// Gov tunes every node's state-chain service (the stack fills in the
	// rest); its SyncInterval defaults to a second here.
	Gov govnet.Config
	// Providers makes node i a provider of the given capacity, with a
	// key of its own (Node.ProviderKey), when Providers[i] is set.
	Providers map[int]market.Resources
	// Market tunes every node's marketplace service (the stack fills in
	// the rest; Provider and Capacity come from Providers).
	Market marketnet.Config
	// Timekeepers makes nodes 0 to Timekeepers-1 timekeepers, each with a
	// key of its own (Node.TimekeeperKey); SetCommittee names them on the
	// state chain.
	Timekeepers int
	// Leases tunes every node's lease service (the stack fills in the
	// rest; Tick defaults to 100 ms here, Announce to a second).
	Leases leasenet.Config
	// Machines, when set, makes every provider run its leases' VMs on
	// QEMU configured so (its Dir, when empty, the node's machines/);
	// VMs tunes every node's VM service (Image defaults to minimal, Tick
	// to 100 ms). Without Machines a provider runs no VMs, but every node
	// still reaches other providers' machines.
	Machines *qemu.Config
	VMs      vmnet.Config
	// Now, if set, is every node's clock (ledger admission, the state
	// chain, the marketplace and leases); default time.Now.
	Now func() time.Time
	// Logger receives the nodes' logs; default: discarded, or stderr at
	// debug level when LATTICE_TEST_LOG is set.
	Logger *slog.Logger
	// Wrap, if set, wraps every node's HTTP API (to check its answers).
	Wrap func(http.Handler) http.Handler
	// Labels, if set, is a context whose pprof labels every node's
	// goroutines carry, besides node=nodeINDEX (lattice bench network
	// passes its step's).
	Labels context.Context
	// Relays are the nodes that serve as circuit relays, and Private
	// those that take themselves to be behind NAT, so that they reserve
	// a slot on a relay at once (p2p.Config Relay and Reachability).
	Relays, Private []int
	// GenesisOf, if set, starts the cluster from that cluster's genesis
	// (its key, block and supply) instead of a new one: a second network
	// that shares the first one's history but never hears of its blocks,
	// like the two sides of a partition that never heals.
	GenesisOf *Cluster
}

// Cluster is a running network.
type Cluster struct {
	t    T
	opts Options
	// keys of the providers and timekeepers by node index, kept across
	// restarts.
	providerKeys, tkKeys map[int]wallet.Key
	Network              *node.Network
	Genesis              wallet.Key // holds node 0's share of the supply
	Chains               *wallet.Chains
	Nodes                []*Node
}

// Node is one node of a Cluster.
type Node struct {
	Index int
	Dir   string
	FS    vfs.FS
	N     *node.Node
	Host  *p2p.Host
	Svc   *ledgernet.Service
	Chat  *chatnet.Service
	Gov   *govnet.Service
	// Market is the node's marketplace; ProviderKey its provider key,
	// when it is one.
	Market      *marketnet.Service
	ProviderKey *wallet.Key
	// Leases is the node's lease service; TimekeeperKey its timekeeper
	// key, when it is one.
	Leases        *leasenet.Service
	TimekeeperKey *wallet.Key
	// VMs is the node's VM service.
	VMs *vmnet.Service
	API *httptest.Server
	// Handler is the node's HTTP API, which API serves.
	Handler *nodeapi.Server
	Reps    []wallet.Key
	// Stack is the assembled node, whose parts the fields above name.
	Stack *stack.Stack
}

// Start starts a cluster and shares the supply among its nodes' keys.
// Every node bootstraps from the nodes before it.
func Start(t T, opts Options) *Cluster {
	t.Helper()
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	if opts.Supply == 0 {
		opts.Supply = 3_000_000_000_000
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		if os.Getenv("LATTICE_TEST_LOG") != "" {
			opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
	}
	gk := wallet.NewKey()
	network := &node.Network{Name: "nettest", Work: ledger.DevWork}
	if o := opts.GenesisOf; o != nil {
		gk, opts.Supply = o.Genesis, o.opts.Supply
		*network = *o.Network
	} else {
		network.Genesis = ledger.NewGenesis(gk.Private(), ledger.NewAmount(opts.Supply), time.Now().UnixMilli())
		network.Governance = opts.Governance
	}
	c := &Cluster{t: t, opts: opts, Genesis: gk, Network: network,
		Chains:       wallet.NewChains(ledger.DevWork, gk, network.Genesis),
		providerKeys: map[int]wallet.Key{}, tkKeys: map[int]wallet.Key{}}
	t.Cleanup(c.Close)
	for i := range opts.Nodes {
		reps := []wallet.Key{}
		if i == 0 {
			reps = append(reps, gk)
		}
		c.Nodes = append(c.Nodes, c.StartNode(t.TempDir(), nil, reps...))
	}
	c.shareWeight()
	return c
}

// StartNode starts one more node with its data in dir (on fs, or on a
// new memory file system when fs is nil and the cluster is not on disk),
// voting with its own key and reps, bootstrapping from every running node.
func (c *Cluster) StartNode(dir string, fs vfs.FS, reps ...wallet.Key) *Node {
	c.t.Helper()
	return c.startNode(len(c.Nodes), dir, fs, reps...)
}

// Restart starts stopped node i again on its data, with its keys (its
// provider's and timekeeper's too), and puts it in place of the old one.
func (c *Cluster) Restart(i int) *Node {
	c.t.Helper()
	old := c.Nodes[i]
	if old.N != nil {
		c.t.Fatalf("nettest: node %d is running", i)
	}
	nd := c.startNode(i, old.Dir, old.FS, old.Reps[1:]...)
	c.Nodes[i] = nd
	return nd
}

func (c *Cluster) startNode(index int, dir string, fs vfs.FS, reps ...wallet.Key) *Node {
	c.t.Helper()
	if fs == nil && !c.opts.OnDisk {
		fs = vfs.NewMem()
	}
	var bootstrap []string
	for _, o := range c.Nodes {
		if o != nil && o.Host != nil {
			bootstrap = append(bootstrap, o.Host.Addrs()...)
		}
	}
	netCfg := c.opts.Net
	if c.opts.NetFor != nil {
		c.opts.NetFor(index, &netCfg)
	}
	netCfg.Reps = reps
	if netCfg.SyncInterval == 0 {
		netCfg.SyncInterval = time.Second
	}
	chatCfg := c.opts.Chat
	if chatCfg.RetryMax == 0 {
		chatCfg.RetryMax = time.Second
	}
	if chatCfg.SyncInterval == 0 {
		chatCfg.SyncInterval = time.Second
	}
	// The node is assembled as lattice node assembles it (package
	// stack); only its API is served by an httptest server, so that tests
	// have its URL and client.
	govCfg := c.opts.Gov
	if govCfg.SyncInterval == 0 {
		govCfg.SyncInterval = time.Second
	}
	ledgerMod, chatMod, govMod := stack.Ledger(netCfg), stack.Chat(chatCfg), stack.Gov(govCfg)
	mktCfg := c.opts.Market
	var provider *wallet.Key
	if capacity, ok := c.opts.Providers[index]; ok {
		k, ok := c.providerKeys[index]
		if !ok {
			k = wallet.NewKey()
			c.providerKeys[index] = k
		}
		provider, mktCfg.Provider, mktCfg.Capacity = &k, &k, capacity
	}
	if mktCfg.Announce == 0 {
		mktCfg.Announce = time.Second
	}
	mktMod := stack.Market(mktCfg, govMod)
	leaseCfg := c.opts.Leases
	if index < c.opts.Timekeepers {
		k, ok := c.tkKeys[index]
		if !ok {
			k = wallet.NewKey()
			c.tkKeys[index] = k
		}
		leaseCfg.Timekeeper = &k
	}
	if leaseCfg.Tick == 0 {
		leaseCfg.Tick = 100 * time.Millisecond
	}
	if leaseCfg.Announce == 0 {
		leaseCfg.Announce = time.Second
	}
	leaseMod := stack.Leases(leaseCfg, govMod, mktMod)
	vmCfg, machines := c.opts.VMs, qemu.Config{}
	if vmCfg.Image == "" {
		vmCfg.Image = "minimal"
	}
	if vmCfg.Tick == 0 {
		vmCfg.Tick = 100 * time.Millisecond
	}
	if c.opts.Machines != nil {
		machines = *c.opts.Machines
		if machines.Logger == nil {
			machines.Logger = c.opts.Logger
		}
	}
	vmMarket := mktMod
	if c.opts.Machines == nil {
		vmMarket = nil // a provider that runs no VMs
	}
	vmMod := stack.VMs(vmCfg, machines, vmMarket)
	st := stack.New(stack.Config{
		Node:         node.Config{DataDir: dir, Network: c.Network, Logger: c.opts.Logger.With("node", index), FS: fs, Now: c.opts.Now},
		P2P:          []string{"/ip4/127.0.0.1/tcp/0"},
		Bootstrap:    bootstrap,
		Wrap:         c.opts.Wrap,
		Relay:        slices.Contains(c.opts.Relays, index),
		Reachability: reachability(slices.Contains(c.opts.Private, index)),
	}, govMod, ledgerMod, chatMod, mktMod, leaseMod, vmMod)
	// Every goroutine of the node, and of its API server below, carries
	// the pprof label node=nodeINDEX (node0, node1, ...), so that a CPU profile of a cluster
	// (lattice bench network --cpuprofile) tells the nodes apart.
	lctx := c.opts.Labels
	if lctx == nil {
		lctx = context.Background()
	}
	labels := pprof.Labels("node", "node"+strconv.Itoa(index))
	var err error
	pprof.Do(lctx, labels, func(ctx context.Context) { err = st.Provision(ctx) })
	if err != nil {
		st.Close()
		c.t.Fatalf("nettest: start node: %v", err)
	}
	n := st.Node()
	nd := &Node{Index: index, Dir: dir, FS: fs, N: n, Host: st.Host(), Svc: ledgerMod.Service(), Chat: chatMod.Service(), Gov: govMod.Service(), Market: mktMod.Service(), ProviderKey: provider,
		Leases: leaseMod.Service(), TimekeeperKey: leaseCfg.Timekeeper, VMs: vmMod.Service(),
		Reps: append([]wallet.Key{n.Key}, reps...), Stack: st, Handler: st.API()}
	nd.API = httptest.NewUnstartedServer(st.Handler())
	nd.API.Config.RegisterOnShutdown(st.API().StopStreams)
	pprof.Do(lctx, labels, func(context.Context) { nd.API.Start() })
	// Stopped before the test removes dir (cleanups run last in, first
	// out, and dir is often the test's TempDir, made just before): the
	// host writes its known peers there as it closes.
	c.t.Cleanup(func() { c.stopNode(nd) })
	return nd
}

// Stop stops node i (its API, service, host and ledger), leaving its data.
func (c *Cluster) Stop(i int) { c.stopNode(c.Nodes[i]) }

func (c *Cluster) stopNode(nd *Node) {
	if nd == nil || nd.N == nil {
		return
	}
	nd.Chat.StopStreams() // httptest's Close waits for the event streams
	nd.API.Close()
	nd.Stack.Close()
	nd.N = nil
}

// Close stops every node.
func (c *Cluster) Close() {
	for i := range c.Nodes {
		c.Stop(i)
	}
}

// shareWeight sends each node beyond the first an equal share of the
// supply, received by the node's key, and waits until every node has
// confirmed it.
func (c *Cluster) shareWeight() {
	c.t.Helper()
	share := c.opts.Supply / uint64(len(c.Nodes))
	var last []*ledger.Block
	for _, nd := range c.Nodes[1:] {
		c.Chains.Add(nd.N.Key, nil)
		s := c.Must(c.Chains.Send(c.Genesis, nd.N.Key.Address(), share))
		r := c.Must(c.Chains.Receive(nd.N.Key, s, ledger.Address{}))
		c.Submit(0, s, r)
		last = append(last, r)
	}
	for _, b := range last {
		c.WaitConfirmed(b.Hash, 20*time.Second)
	}
}

// Open gives a new account k amount base units from the genesis key and
// waits until its receive is confirmed everywhere; it returns the receive.
func (c *Cluster) Open(k wallet.Key, amount uint64) *ledger.Block {
	c.t.Helper()
	c.Chains.Add(k, nil)
	fund := c.Must(c.Chains.Send(c.Genesis, k.Address(), amount))
	open := c.Must(c.Chains.Receive(k, fund, ledger.Address{}))
	c.Submit(0, fund, open)
	c.WaitConfirmed(open.Hash, 10*time.Second)
	return open
}

// PeerIDs returns the peer IDs of the nodes at the given indexes, as
// p2p.Host.Isolate takes them to cut a partition.
func (c *Cluster) PeerIDs(is ...int) []peer.ID {
	out := make([]peer.ID, 0, len(is))
	for _, i := range is {
		out = append(out, c.Nodes[i].Host.ID())
	}
	return out
}

// Must fails the test on err and returns b.
func (c *Cluster) Must(b *ledger.Block, err error) *ledger.Block {
	c.t.Helper()
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

// Submit submits blocks to node i's engine, as its HTTP API would.
func (c *Cluster) Submit(i int, blocks ...*ledger.Block) {
	c.t.Helper()
	for _, b := range blocks {
		if _, err := c.Nodes[i].N.Engine.Submit(context.Background(), b); err != nil {
			c.t.Fatalf("nettest: submit %s %s to node %d: %v", b.Type, b.Hash, i, err)
		}
	}
}

// Confirmed reports whether node i has block h confirmed.
func (c *Cluster) Confirmed(i int, h ledger.Hash) bool {
	_, found, ok, err := c.Nodes[i].N.Store.EntryConfirmed(h)
	return err == nil && found && ok
}

// WaitConfirmed waits until every running node has block h confirmed.
func (c *Cluster) WaitConfirmed(h ledger.Hash, timeout time.Duration) {
	c.t.Helper()
	c.WaitFor(fmt.Sprintf("block %s confirmed on every node", h), timeout, func(i int) bool { return c.Confirmed(i, h) })
}

// WaitFor waits until cond holds for every running node.
func (c *Cluster) WaitFor(what string, timeout time.Duration, cond func(i int) bool) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok := true
		var failing []int
		for i, nd := range c.Nodes {
			if nd != nil && nd.N != nil && !cond(i) {
				ok = false
				failing = append(failing, i)
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			for _, i := range failing {
				c.t.Logf("node %d: %s", i, c.describe(i))
			}
			c.t.Fatalf("nettest: after %s, still waiting for %s on nodes %v", timeout, what, failing)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// describe sums up node i's network state, for a failure message.
func (c *Cluster) describe(i int) string {
	nd := c.Nodes[i]
	st := nd.Svc.Stats()
	out := fmt.Sprintf("%+v; peers %v", st, nd.Host.Peers())
	for _, e := range nd.Svc.Elections() {
		out += fmt.Sprintf("\n  election %s started %d online %s quorum %s tallies %v", e.Root, e.Started, e.Online, e.Quorum, e.Tallies)
	}
	return out
}

// Audit checks the ledger invariants on every running node.
func (c *Cluster) Audit() {
	c.t.Helper()
	for i, nd := range c.Nodes {
		if nd == nil || nd.N == nil {
			continue
		}
		snap := nd.N.Store.Snapshot()
		_, err := ledger.Audit(snap)
		total, terr := snap.ConfirmedWeightTotal()
		snap.Close()
		if err != nil {
			c.t.Errorf("node %d: audit: %v", i, err)
		}
		if supply := c.Network.Genesis.Amount; terr != nil || total != supply {
			c.t.Errorf("node %d: confirmed weights add up to %s (%v), want the supply %s", i, total, terr, supply)
		}
	}
}

// reachability is a node's p2p.Config.Reachability: private, or as
// AutoNAT finds (on loopback: unknown).
func reachability(private bool) string {
	if private {
		return "private"
	}
	return ""
}
