package netlab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/wallet"
)

const (
	// P2PPort is the port Cluster nodes listen on for peers.
	P2PPort = 4001
	// DefaultOnlineWindow is how long a representative counts as online
	// in a node started without --online-window.
	DefaultOnlineWindow = 5 * time.Minute

	startTimeout = 30 * time.Second      // a node answering its API
	meshTimeout  = 60 * time.Second      // every node connected to every other
	setupConfirm = 60 * time.Second      // the distribution confirmed everywhere
	clusterSetup = 15 * time.Minute      // all of StartCluster, a cold build included
	requestLimit = 10 * time.Second      // one API request of the harness
	pollEvery    = 25 * time.Millisecond // polling for a confirmation
)

// ErrNoNetworkAudit is returned by Cluster.Audit when the binary's `lattice
// audit` has no --nodes flag yet.
var ErrNoNetworkAudit = errors.New("netlab: lattice audit has no --nodes")

// ClusterOptions configure a Cluster.
type ClusterOptions struct {
	// Nodes is the number of nodes. Default 5.
	Nodes int
	// Shares are the percentages of the native supply that each node's own
	// account holds and votes with, one per node, summing to 100. Default:
	// equal shares, node 0 taking what the division leaves.
	Shares []int
	// Supply is the genesis supply in units (10^6 base units each).
	// Default 1,000,000,000.
	Supply uint64
	// Users is how many more accounts are funded at start, for forks and
	// load; each represents itself, a weight no node votes with. Default 8.
	Users int
	// UserFunds is what each user account receives, in base units: taken
	// from the supply before the shares, and small enough not to shift
	// them. Default 1,000,000.
	UserFunds uint64
	// OnlineWindow, when non-zero, is given to every node as
	// --online-window, if the binary has that flag (OnlineWindowFlag).
	OnlineWindow time.Duration
	// NodeArgs are more flags for every node.
	NodeArgs []string
	// LogLevel is the nodes' --log-level. Default info.
	LogLevel string
	// Args are more flags for one node, by index, after NodeArgs.
	Args map[int][]string
	// NAT and Public are the lab's (Options): nodes behind NAT, and
	// addresses AutoNAT counts as public.
	NAT    []int
	Public bool
}

// Cluster is a ledger network of `lattice node` processes on a Lab: node i
// serves its API at Lab.URL(i) and listens for peers on 10.77.0.(i+1):4001.
// Every node votes with its own key (DATA/node-key.json) for its own
// account, which holds the node's share of the supply; node 0 also votes
// with the genesis key, whose account is emptied by the distribution.
type Cluster struct {
	// Lab is the network the nodes run on.
	Lab *Lab
	// Nodes are the nodes, by index.
	Nodes []*Node
	// Users are funded accounts the test may spend from, each in one
	// place only unless it means to fork.
	Users []wallet.Key
	// GenesisKey is the genesis account's key.
	GenesisKey wallet.Key
	// Work is the network's proof-of-work thresholds.
	Work ledger.Work

	t          testing.TB
	opts       ClusterOptions
	bin        string
	dir        string
	genesis    string // the genesis file
	genesisKey string // the genesis key file
	windowFlag bool
	warm       wallet.Key // an account of the harness's own, for warm-up sends

	mu sync.Mutex // guards each Node's proc
}

// Node is one node of a Cluster.
type Node struct {
	// Index is the node's index in the cluster and the lab.
	Index int
	// Dir is its data directory.
	Dir string
	// URL is its API's base URL, reached from the monitor.
	URL string
	// Client talks to its API from the monitor namespace.
	Client *nodeclient.Client
	// Key is the node's own key, its account the one holding its share.
	Key wallet.Key
	// PeerAddr is its multiaddr, /ip4/…/tcp/4001/p2p/<peer id>.
	PeerAddr string

	proc *Proc
}

// StartCluster starts a lab and a ledger network on it, shares the supply
// and waits until the shares are confirmed on every node. It fails t if
// any of that fails.
func StartCluster(t testing.TB, opts ClusterOptions) *Cluster {
	t.Helper()
	if err := opts.ensureDefaults(); err != nil {
		t.Fatal(err)
	}
	lab := NewWithOptions(t, Options{Nodes: opts.Nodes, NAT: opts.NAT, Public: opts.Public})
	lab.QuietTails("msg=http ") // the access log of the harness's own polling
	ctx, cancel := context.WithTimeout(context.Background(), clusterSetup)
	defer cancel()
	bin, err := Binary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Lab: lab, t: t, opts: opts, bin: bin, dir: t.TempDir()}
	began := time.Now()
	if err := c.start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("netlab: cluster of %d nodes up in %s, shares %v%%, online window %s", opts.Nodes,
		time.Since(began).Round(time.Millisecond), opts.Shares, c.OnlineWindow())
	return c
}

func (o *ClusterOptions) ensureDefaults() error {
	if o.Nodes == 0 {
		o.Nodes = 5
	}
	if o.Supply == 0 {
		o.Supply = 1_000_000_000
	}
	if o.Users == 0 {
		o.Users = 8
	}
	if o.UserFunds == 0 {
		o.UserFunds = 1_000_000
	}
	if o.LogLevel == "" {
		o.LogLevel = os.Getenv("LATTICE_NETLAB_LOG_LEVEL") // debug, to read a failed run's elections
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	if o.Shares == nil {
		o.Shares = make([]int, o.Nodes)
		for i := range o.Shares {
			o.Shares[i] = 100 / o.Nodes
		}
		o.Shares[0] += 100 - (100/o.Nodes)*o.Nodes
	}
	sum := 0
	for _, s := range o.Shares {
		if s < 0 {
			return fmt.Errorf("netlab: negative share in %v", o.Shares)
		}
		sum += s
	}
	if len(o.Shares) != o.Nodes || sum != 100 {
		return fmt.Errorf("netlab: shares %v: want %d percentages summing to 100", o.Shares, o.Nodes)
	}
	if o.Supply > 1<<63/1_000_000 {
		return fmt.Errorf("netlab: supply %d units is too large", o.Supply)
	}
	if o.UserFunds*uint64(o.Users+1) > o.Supply*1_000_000/1000 {
		return fmt.Errorf("netlab: %d users of %d base units each would take more than 0.1%% of the supply", o.Users, o.UserFunds)
	}
	return nil
}

// OnlineWindow returns how long a representative counts as online in the
// nodes: the option when the binary has --online-window, else the nodes'
// default.
func (c *Cluster) OnlineWindow() time.Duration {
	if c.windowFlag && c.opts.OnlineWindow > 0 {
		return c.opts.OnlineWindow
	}
	return DefaultOnlineWindow
}

// OnlineWindowFlag reports whether the nodes got --online-window: false
// when the option is zero or the binary does not have the flag yet.
func (c *Cluster) OnlineWindowFlag() bool { return c.windowFlag && c.opts.OnlineWindow > 0 }

// Binary returns the lattice binary the nodes run.
func (c *Cluster) Binary() string { return c.bin }

func (c *Cluster) start(ctx context.Context) error {
	c.genesis = filepath.Join(c.dir, "genesis.json")
	c.genesisKey = filepath.Join(c.dir, "genesis-key.json")
	cmd := exec.CommandContext(ctx, c.bin, "genesis", "new", "--key", c.genesisKey, "--network", "partition",
		"--work", "dev", "--supply", fmt.Sprint(c.opts.Supply), "--out", c.genesis)
	cmd.Env = cleanEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("netlab: lattice genesis new: %w\n%s", err, out)
	}
	var err error
	if c.GenesisKey, err = wallet.LoadKey(c.genesisKey); err != nil {
		return fmt.Errorf("netlab: %w", err)
	}
	if c.opts.OnlineWindow > 0 {
		if c.windowFlag, err = hasFlag(ctx, c.bin, "node", "online-window"); err != nil {
			return err
		}
		if !c.windowFlag {
			c.t.Logf("netlab: lattice node has no --online-window yet: the nodes run with the default window of %s, not %s",
				DefaultOnlineWindow, c.opts.OnlineWindow)
		}
	}
	for i := range c.opts.Nodes {
		dir := filepath.Join(c.dir, fmt.Sprintf("node-%d", i))
		c.Nodes = append(c.Nodes, &Node{Index: i, Dir: dir, URL: c.Lab.URL(i),
			Client: nodeclient.New(c.Lab.URL(i), c.Lab.HTTPClient())})
	}
	for i := range c.Nodes {
		if err := c.StartNode(ctx, i); err != nil {
			return err
		}
	}
	for _, n := range c.Nodes {
		if n.Key, err = wallet.LoadKey(filepath.Join(n.Dir, "node-key.json")); err != nil {
			return fmt.Errorf("netlab: node %d's key: %w", n.Index, err)
		}
	}
	if err := c.WaitMesh(ctx, meshTimeout); err != nil {
		return err
	}
	if err := c.distribute(ctx); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, setupConfirm)
	defer cancel()
	if err := c.WarmUp(wctx, 0); err != nil {
		return fmt.Errorf("netlab: warm-up send: %w", err)
	}
	return nil
}

// StartNode starts node i, or restarts it on its data directory, with the
// same addresses, bootstrapping from every other node it knows the
// address of, and waits until its API answers.
func (c *Cluster) StartNode(ctx context.Context, i int) error {
	n := c.Nodes[i]
	c.mu.Lock()
	running := n.proc != nil && n.proc.Running()
	c.mu.Unlock()
	if running {
		return fmt.Errorf("netlab: node %d is running", i)
	}
	addr := c.Lab.LocalAddr(i).String()
	args := []string{"node", "--data", n.Dir, "--genesis", c.genesis,
		"--http", fmt.Sprintf("%s:%d", addr, HTTPPort), "--p2p", fmt.Sprintf("/ip4/%s/tcp/%d", addr, P2PPort),
		"--log-level", c.opts.LogLevel, "--log-format", "text"}
	var peers []string
	for _, o := range c.Nodes {
		if o.Index != i && o.PeerAddr != "" {
			peers = append(peers, o.PeerAddr)
		}
	}
	if len(peers) > 0 {
		args = append(args, "--bootstrap", strings.Join(peers, ","))
	}
	if i == 0 {
		args = append(args, "--rep-key", c.genesisKey)
	}
	if c.OnlineWindowFlag() {
		args = append(args, "--online-window", c.opts.OnlineWindow.String())
	}
	args = append(args, c.opts.NodeArgs...)
	args = append(args, c.opts.Args[i]...)
	p, err := c.Lab.Start(i, fmt.Sprintf("node-%d", i), c.bin, args...)
	if err != nil {
		return err
	}
	c.mu.Lock()
	n.proc = p
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	for {
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		info, err := n.Client.Node(rctx)
		rcancel()
		if err == nil {
			if c.Work == (ledger.Work{}) {
				c.Work = info.Work
			}
			n.PeerAddr = ""
			for _, a := range info.P2PAddrs {
				if strings.HasPrefix(a, "/ip4/"+addr+"/") {
					n.PeerAddr = a
				}
			}
			if n.PeerAddr == "" {
				return fmt.Errorf("netlab: node %d lists no peer address on %s: %q", i, addr, info.P2PAddrs)
			}
			return nil
		}
		if !p.Running() {
			return fmt.Errorf("netlab: node %d exited (%v):\n%s", i, p.Err(), p.Tail(30))
		}
		if ctx.Err() != nil {
			return fmt.Errorf("netlab: node %d's API did not answer within %s: %v", i, startTimeout, err)
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

// Kill kills node i with SIGKILL and waits until it is gone.
func (c *Cluster) Kill(ctx context.Context, i int) error {
	c.t.Helper()
	if p := c.proc(i); p != nil {
		c.t.Logf("netlab: %s kill -9 node %d", time.Now().Format("15:04:05.000"), i)
		return p.Kill(ctx)
	}
	return nil
}

// Stop stops node i with SIGTERM, killing it if ctx ends first.
func (c *Cluster) Stop(ctx context.Context, i int) error {
	if p := c.proc(i); p != nil {
		return p.Stop(ctx)
	}
	return nil
}

// Proc returns node i's current process, or nil before it started.
func (c *Cluster) proc(i int) *Proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Nodes[i].proc
}

// Running returns the indexes of the nodes whose process runs.
func (c *Cluster) Running() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, n := range c.Nodes {
		if n.proc != nil && n.proc.Running() {
			out = append(out, n.Index)
		}
	}
	return out
}

// All returns the indexes of every node.
func (c *Cluster) All() []int {
	out := make([]int, len(c.Nodes))
	for i := range out {
		out[i] = i
	}
	return out
}

// networkInfo is the part of GET /network the harness reads.
type networkInfo struct {
	Peers int `json:"peers"`
}

// network reads node i's GET /network.
func (c *Cluster) network(ctx context.Context, i int) (networkInfo, error) {
	var info networkInfo
	ctx, cancel := context.WithTimeout(ctx, requestLimit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Nodes[i].URL+"/network", nil)
	if err != nil {
		return info, fmt.Errorf("netlab: %w", err)
	}
	resp, err := c.Lab.HTTPClient().Do(req)
	if err != nil {
		return info, fmt.Errorf("netlab: GET /network of node %d: %w", i, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return info, fmt.Errorf("netlab: GET /network of node %d: %s", i, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return info, fmt.Errorf("netlab: GET /network of node %d: %w", i, err)
	}
	return info, nil
}

// WaitMesh waits until every running node is connected to every other
// running node, or bound passes.
func (c *Cluster) WaitMesh(ctx context.Context, bound time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		running := c.Running()
		var short []string
		for _, i := range running {
			info, err := c.network(ctx, i)
			if err != nil {
				short = append(short, err.Error())
			} else if info.Peers < len(running)-1 {
				short = append(short, fmt.Sprintf("node %d has %d peers", i, info.Peers))
			}
		}
		if len(short) == 0 {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("netlab: nodes %v not all connected within %s: %s", running, bound, strings.Join(short, "; "))
		}
		sleep(ctx, 200*time.Millisecond)
	}
}

// distribute sends every node's account its share and every user its
// funds from the genesis account, which ends empty, has each receive
// (the nodes naming their own account as representative, the users none),
// and waits until all of it is confirmed on every node.
func (c *Cluster) distribute(ctx context.Context) error {
	head, err := c.Nodes[0].Client.Head(ctx, c.GenesisKey.Address())
	if err != nil {
		return fmt.Errorf("netlab: genesis account: %w", err)
	}
	hi, total := head.Balance(ledger.Native).Parts()
	if hi != 0 {
		return fmt.Errorf("netlab: genesis balance %s does not fit the harness's arithmetic", head.Balance(ledger.Native))
	}
	users := make([]wallet.Key, c.opts.Users+1)
	for i := range users {
		users[i] = wallet.NewKey()
	}
	rest := total - c.opts.UserFunds*uint64(len(users))
	amounts := make([]uint64, len(c.Nodes))
	left := rest
	for i := len(c.Nodes) - 1; i > 0; i-- {
		amounts[i] = rest / 100 * uint64(c.opts.Shares[i])
		left -= amounts[i]
	}
	amounts[0] = left // the rounding goes to node 0: the genesis account ends empty

	type payee struct {
		key wallet.Key
		rep ledger.Address
		amt uint64
	}
	var payees []payee
	for i, n := range c.Nodes {
		payees = append(payees, payee{n.Key, n.Key.Address(), amounts[i]})
	}
	for _, u := range users {
		payees = append(payees, payee{key: u, amt: c.opts.UserFunds})
	}
	var sends, receives []*ledger.Block
	for _, p := range payees {
		b, err := wallet.Send(head, p.key.Address(), ledger.NewAmount(p.amt), ledger.Native, time.Now().UnixMilli())
		if err != nil {
			return fmt.Errorf("netlab: share: %w", err)
		}
		if err := c.seal(ctx, b, c.GenesisKey); err != nil {
			return err
		}
		head = advance(head, b)
		sends = append(sends, b)
	}
	for k, p := range payees {
		s := sends[k]
		b, err := wallet.Receive(wallet.Head{Account: p.key.Address()}, ledger.Pending{Send: s.Hash, Source: s.Account,
			Destination: p.key.Address(), Amount: s.Amount, Asset: s.Asset}, time.Now().UnixMilli())
		if err != nil {
			return fmt.Errorf("netlab: share: %w", err)
		}
		if !p.rep.IsZero() {
			b.Representative = p.rep
			b.Seal()
		}
		if err := c.seal(ctx, b, p.key); err != nil {
			return err
		}
		receives = append(receives, b)
	}
	for _, b := range append(sends, receives...) {
		if err := c.submit(ctx, 0, b); err != nil {
			return err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, setupConfirm)
	defer cancel()
	for _, b := range append(receives, sends[len(sends)-1]) {
		if _, err := c.WaitConfirmed(wctx, b.Hash, c.All()...); err != nil {
			return fmt.Errorf("netlab: the distribution of the supply: %w", err)
		}
	}
	c.Users, c.warm = users[:len(users)-1], users[len(users)-1]
	return nil
}

// WarmUp sends from an account of the harness's own through node i and
// waits until every running node has confirmed it: every representative
// has then voted recently, so that all count as online.
func (c *Cluster) WarmUp(ctx context.Context, i int) error {
	b, err := c.Send(ctx, i, c.warm, wallet.NewKey().Address(), 1)
	if err != nil {
		return err
	}
	_, err = c.WaitConfirmed(ctx, b.Hash, c.Running()...)
	return err
}

// Audit runs `lattice audit --nodes URL,...` over every running node from
// the monitor namespace and returns its error, with its output, if it
// exits non-zero. It returns ErrNoNetworkAudit when the binary's audit has
// no --nodes flag yet.
func (c *Cluster) Audit(ctx context.Context) (string, error) {
	ok, err := hasFlag(ctx, c.bin, "audit", "nodes")
	if err != nil {
		return "", err
	}
	if !ok {
		return "", ErrNoNetworkAudit
	}
	var urls []string
	for _, i := range c.Running() {
		urls = append(urls, c.Nodes[i].URL)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := c.Lab.MonitorCommand(ctx, c.bin, "audit", "--nodes", strings.Join(urls, ","))
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("netlab: lattice audit --nodes %s: %w\n%s", strings.Join(urls, ","), err, out)
	}
	return string(out), nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
