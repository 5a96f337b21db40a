package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	gonet "net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/platform"
	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/internal/run/durablefile"
	"github.com/latticenet/lattice/internal/run/httpserve"
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
	"github.com/latticenet/lattice/node/stack"
	"github.com/latticenet/lattice/node/vmnet"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

func version() string { return node.Version }

// Dev network parameters: 1e9 native units minted to the dev key.
const devSupplyUnits = "1000000000"

func runDev(ctx context.Context, e *env, args []string) error {
	e = e.synced()
	f := newHelpFlags(e, "dev", "dev [flags]", `
Starts a development network on this machine: one node (or --nodes N, each
a representative), the cloud platform (REST API, S3 endpoint, DNS server,
CDN edge and compute VMs), and a key funded with the whole supply; it writes the "dev"
profile the client commands use. Runs until interrupted.

Node 0 keeps its ledger in DATA/node, with or without --nodes: a later
--nodes 3 adds two nodes that sync that ledger, and a later run with fewer
nodes keeps the others' data (node 0 then votes with their keys).`, `  lattice dev
  lattice dev --nodes 3 --data /tmp/lattice-dev
  lattice dev --log-level info --http 127.0.0.1:18080
`)
	data := f.string("data", "LATTICE_DATA", "data", homeDir(".lattice", "dev"), "directory for all dev state")
	httpAddr := f.string("http", "LATTICE_HTTP", "http", "127.0.0.1:8080", "node HTTP API address (node i listens on its port + i)")
	p2pAddr := f.string("p2p", "LATTICE_P2P", "p2p", "/ip4/127.0.0.1/tcp/4001", "peer-to-peer multiaddr (node i listens on its port + i)")
	nodes := f.string("nodes", "LATTICE_NODES", "nodes", "1", "how many nodes to run, each a representative")
	apiAddr := f.string("api", "LATTICE_API", "api", "127.0.0.1:8090", "cloud REST API address")
	storageFlags := addStorageFlags(f, "10s", "DATA/cloud")
	dnsFlags := addDNSFlags(f, "127.0.0.1:8053")
	cdnFlags := addCDNFlags(f, true)
	computeFlags := addComputeFlags(f, true, "DATA/cloud")
	vmImage := f.string("vm-image", "LATTICE_VM_IMAGE", "vm_image", devVMImage, "image of the VMs the provider node runs for leases: debian-12 (SSH) or minimal (busybox, boots in about 2 s)")
	f.configFile()
	logLevel := f.string("log-level", "LATTICE_LOG_LEVEL", "log_level", "warn", "log level on stderr: debug, info, warn, error (DATA/dev.log gets info and above)")
	logFormat := f.string("log-format", "LATTICE_LOG_FORMAT", "log_format", "", "log format on stderr: text or json (default: text on a terminal, json otherwise)")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	count, err := strconv.Atoi(*nodes)
	if err != nil || count < 1 || count > 16 {
		return usageErr("--nodes %q: want a number from 1 to 16", *nodes)
	}
	if err := checkMultiaddr("p2p", *p2pAddr); err != nil {
		return err
	}
	if err := checkVMImage(*vmImage); err != nil {
		return err
	}
	cloudDir := filepath.Join(*data, "cloud")
	cloudCfg := cloudConfig{Config: platform.Config{Dir: cloudDir, API: *apiAddr}}
	if err := storageFlags.apply(&cloudCfg); err != nil {
		return err
	}
	if err := dnsFlags.apply(&cloudCfg); err != nil {
		return err
	}
	if err := cdnFlags.apply(&cloudCfg); err != nil {
		return err
	}
	if err := computeFlags.apply(&cloudCfg); err != nil {
		return err
	}
	stderrLog, err := logHandler(e.stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	// Every listener is bound before any state is created: a port in use
	// fails here, before a data directory or a key exists, and names the
	// flag that changes it. libp2p binds its own ports; they are checked
	// here and released just before the nodes take them.
	httpLns := make([]gonet.Listener, count)
	defer func() {
		for _, ln := range httpLns {
			if ln != nil {
				ln.Close() // no-op for those already served and closed
			}
		}
	}()
	for i := range count {
		addr, err := offsetHostPort(*httpAddr, i)
		if err != nil {
			return usageErr("--http %q: %v", *httpAddr, err)
		}
		if httpLns[i], err = httpserve.Listen(addr, "http", "LATTICE_HTTP"); err != nil {
			return err
		}
		listen, err := offsetTCP(*p2pAddr, i)
		if err != nil {
			return usageErr("--p2p %q: %v", *p2pAddr, err)
		}
		if err := stack.CheckP2P(listen); err != nil {
			return err
		}
	}
	// The platform binds its listeners now, before any state exists; it
	// is provisioned once the nodes run (its logger is set before then).
	cloud, cdn := newCloud(e, cloudCfg)
	var logFile *os.File
	defer func() {
		cloud.Close()
		if logFile != nil {
			logFile.Close() // after the cloud, whose closing it logs
		}
	}()
	if err := cloud.Listen(); err != nil {
		return err
	}
	if err := notAServersData(*data); err != nil {
		return err
	}
	// The log goes to stderr at the level asked, and to DATA/dev.log at
	// info and above, as JSON, for a look at what happened afterwards.
	if err := os.MkdirAll(*data, 0o700); err != nil {
		return err
	}
	logFile, err = os.OpenFile(filepath.Join(*data, "dev.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	fileLog, _ := logHandler(logFile, "info", "json")
	base := slog.New(teeHandler{stderrLog, fileLog})
	log := base.With("service", "dev")

	keyPath := filepath.Join(*data, "dev-key.json")
	net, err := devNetwork(*data, keyPath)
	if err != nil {
		return err
	}
	devKey, err := wallet.LoadKey(keyPath)
	if err != nil {
		return err
	}
	if lb := cloudCfg.Compute.Lease; lb != nil {
		// Compute on leases: bought through node 0 with the dev key,
		// from the provider node, which runs --vm-image.
		lb.Market, lb.Image = newLeaseMarket("http://"+httpLns[0].Addr().String(), devKey), *vmImage
	}
	moved, err := migrateDevLayout(*data, time.Now())
	if err != nil {
		return fmt.Errorf("bringing %s to this version's layout: %w", *data, err)
	}
	if moved != "" {
		fmt.Fprintf(e.stderr, "lattice dev: %s\n", moved)
		log.Warn("dev data layout changed", "what", moved)
	}
	leftOut, err := devLeftOut(*data, count)
	if err != nil {
		return err
	}
	leftKeys, err := devLeftOutKeys(*data, leftOut)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// The nodes: node 0 votes with the dev key, which holds the genesis
	// weight, and every node with its own key.
	devNodes := make([]*devNode, count)
	defer func() {
		for _, d := range devNodes {
			if d != nil {
				d.close()
			}
		}
	}()
	// The provider's lease VMs share the cloud's built images.
	devVMs := qemu.Config{ImageDir: cmp.Or(cloudCfg.Compute.ImageDir, filepath.Join(cloudDir, "machines", "images")), Accel: cloudCfg.Compute.Accel}
	var bootstrap []string
	var providerKey wallet.Key
	var tkKeys []ledger.Address
	for i := range count {
		ln := httpLns[i]
		httpLns[i] = nil // openDevNode owns it now, and closes it if it fails
		var mkt marketnet.Config
		if i == count-1 { // the last node provides compute
			k, err := loadOrCreateKeyFile(filepath.Join(*data, "provider-key.json"))
			if err != nil {
				return err
			}
			mkt.Provider, mkt.Capacity = &k, devCapacity
			providerKey = k
		}
		// Every node keeps time: the committee is the nodes' timekeeper
		// keys (set on the state chain below).
		tk, err := loadOrCreateKeyFile(filepath.Join(devNodeDir(*data, i), "timekeeper-key.json"))
		if err != nil {
			return err
		}
		tkKeys = append(tkKeys, tk.Address())
		d, err := openDevNode(ctx, i, devNodeDir(*data, i), net, devKey, leftKeys, *p2pAddr, ln, bootstrap, mkt, &tk, devVMs, *vmImage, base.With("service", "node"))
		if err != nil {
			return err
		}
		devNodes[i] = d
		bootstrap = append(bootstrap, d.st.Host().Addrs()...)
	}
	if err := shareDevWeight(ctx, devNodes, devKey); err != nil {
		return fmt.Errorf("sharing the genesis weight among the nodes: %w", err)
	}
	weightless, err := devWeightless(devNodes)
	if err != nil {
		return err
	}
	if err := registerDevKey(ctx, devNodes[0], devKey); err != nil {
		return fmt.Errorf("registering the dev key in the directory: %w", err)
	}
	committee, err := devCommittee(ctx, devNodes[0], devKey, tkKeys)
	if err != nil {
		return fmt.Errorf("naming the timekeeper committee: %w", err)
	}
	if err := fundDevProvider(ctx, devNodes[0].node(), devKey, providerKey); err != nil {
		return fmt.Errorf("funding the provider's stake: %w", err)
	}

	// The cloud platform runs beside the nodes until either stops.
	cloud.SetLogger(base)
	if err := cloud.Provision(); err != nil {
		return err
	}
	cloudReady := make(chan map[string]string, 1)
	cloudDone := make(chan error, 1)
	go func() {
		// The first node's server says "shutting down..." for all.
		cloudDone <- cloud.Serve(ctx, func(u map[string]string) { cloudReady <- u }, nil)
		cancel()
	}()
	var urls map[string]string
	select {
	case urls = <-cloudReady:
	case err := <-cloudDone:
		return fmt.Errorf("cloud: %w", err)
	}
	apiURL, s3URL := urls["API"], urls["S3"]

	// Nodes 1.. serve in the background; node 0 in the foreground prints
	// the banner once every listener is up.
	nodeURLs := make([]string, count)
	nodeDone := make(chan error, count)
	for i := 1; i < count; i++ {
		d := devNodes[i]
		quiet := &env{stdout: e.stdout, stderr: io.Discard}
		ready := make(chan string, 1)
		go func() {
			nodeDone <- d.st.Serve(ctx, func(url string) { ready <- url }, shuttingDown(quiet))
			cancel()
		}()
		nodeURLs[i] = <-ready
	}
	d0 := devNodes[0]
	err = d0.st.Serve(ctx, func(url string) {
		nodeURLs[0] = url
		log.Info("dev network running", "network", net.Name, "nodes", nodeURLs, "cloud_api", apiURL, "s3", s3URL, "data", *data)
		if count == 1 {
			fmt.Fprintf(e.stdout, "lattice dev: single-node network %q and the cloud platform are running\n\n", net.Name)
		} else {
			fmt.Fprintf(e.stdout, "lattice dev: %d-node network %q and the cloud platform are running\n\n", count, net.Name)
		}
		fmt.Fprintf(e.stdout, "  node API    %s\n", url)
		fmt.Fprintf(e.stdout, "  peer        %s\n", strings.Join(d0.st.Host().Addrs(), " "))
		fmt.Fprintf(e.stdout, "  node data   %s\n", devNodeDir(*data, 0))
		for i, d := range devNodes[1:] {
			fmt.Fprintf(e.stdout, "  node %-2d     %s  peer %s  data %s\n", i+1, nodeURLs[i+1], strings.Join(d.st.Host().Addrs(), " "), devNodeDir(*data, i+1))
		}
		fmt.Fprintf(e.stdout, "  provider    node %d, account %s, %s (key in %s)\n", count-1, providerKey.Address(), devCapacity, filepath.Join(*data, "provider-key.json"))
		fmt.Fprintf(e.stdout, "  timekeepers %s\n", committee)
		if len(weightless) > 0 {
			fmt.Fprintf(e.stdout, "  weight      none for node %s: joined after the dev account was used, they sync from node 0 and vote with no weight\n", joinInts(weightless))
		}
		for _, i := range leftOut {
			fmt.Fprintf(e.stdout, "  left out   %s (node %d, kept; node 0 votes with its key)\n", devNodeDir(*data, i), i)
		}
		fmt.Fprintf(e.stdout, "  cloud API   %s  (admin key in %s)\n", apiURL, filepath.Join(cloudDir, "admin-api-key"))
		fmt.Fprintf(e.stdout, "  S3 endpoint %s  (region %s; keys from POST /api/storage/keys)\n", s3URL, platform.S3Region)
		if w := urls["S3 website"]; w != "" {
			fmt.Fprintf(e.stdout, "  S3 websites %s  (bucket NAME's site: %s; aws s3 website s3://NAME)\n", w, siteURL(w, cloudCfg.Storage.WebsiteDomain))
		}
		if urls["DNS"] != "" {
			host, port, _ := gonet.SplitHostPort(urls["DNS"])
			fmt.Fprintf(e.stdout, "  DNS         %s  (UDP and TCP: dig @%s -p %s NAME)\n", urls["DNS"], host, port)
		}
		if urls["CDN"] != "" {
			fmt.Fprintf(e.stdout, "  CDN edge    %s  (deployment NAME answers at NAME.%s)\n", urls["CDN"], cdn.Domain())
		}
		if cloudCfg.Compute.Lease != nil {
			fmt.Fprintf(e.stdout, "  compute     VMs on leases from the network's providers, paid by the dev key (lattice compute create NAME --image %s)\n", *vmImage)
		} else {
			fmt.Fprintf(e.stdout, "  compute     VMs on this machine with QEMU (lattice compute create NAME; data in %s)\n", filepath.Join(cloudDir, "machines"))
		}
		fmt.Fprintf(e.stdout, "  metrics     GET /metrics on every node API and on the cloud API (Prometheus)\n")
		fmt.Fprintf(e.stdout, "  data        %s  (genesis file %s)\n", *data, filepath.Join(*data, "genesis.json"))
		fmt.Fprintf(e.stdout, "  log         %s  (info and above, JSON; the terminal gets %s and above: --log-level info shows more)\n", filepath.Join(*data, "dev.log"), *logLevel)
		fmt.Fprintf(e.stdout, "  dev key     %s\n", keyPath)
		if count == 1 || len(weightless) == count-1 {
			fmt.Fprintf(e.stdout, "  account     %s (the genesis account, created with %s native)\n\n", net.Genesis.Account, net.Genesis.Balance.Units())
		} else {
			fmt.Fprintf(e.stdout, "  account     %s (genesis of %s native, shared with the other nodes' keys)\n\n",
				net.Genesis.Account, net.Genesis.Balance.Units())
		}
		name := devProfileName(*data)
		if path, err := saveDevProfile(name, *data, url, keyPath, apiURL, filepath.Join(cloudDir, "admin-api-key")); err != nil {
			fmt.Fprintf(e.stdout, "Try, in another terminal:\n")
			fmt.Fprintf(e.stdout, "  export LATTICE_NODE=%s LATTICE_KEY=%s\n", url, keyPath)
			fmt.Fprintf(e.stdout, "  lattice balance\n\n(the profile could not be written: %v)\n", err)
		} else {
			if pf, _, err := loadProfiles(); err == nil && pf.Current == name {
				fmt.Fprintf(e.stdout, "  profile     %s, in %s: the commands use it with no flags\n\n", name, path)
				fmt.Fprintf(e.stdout, "Try, in another terminal:\n  lattice balance\n  lattice s3 ls\n  lattice chat send --to ADDRESS hello\n")
			} else {
				fmt.Fprintf(e.stdout, "  profile     %s, in %s (the current profile is %s)\n\n", name, path, pf.Current)
				fmt.Fprintf(e.stdout, "Try, in another terminal:\n  lattice --profile %s balance\n  lattice --profile %s s3 ls\n  lattice profile use %s    # then with no flags\n", name, name, name)
			}
		}
		fmt.Fprintf(e.stdout, "\nStop with Ctrl-C.\n")
	}, shuttingDown(e))
	cancel()
	for i := 1; i < count; i++ {
		if nerr := <-nodeDone; err == nil {
			err = nerr
		}
	}
	if cerr := <-cloudDone; err == nil {
		err = cerr
	}
	return err
}

// devNode is one node of `lattice dev`: its stack and the chat module
// the dev key is registered with.
type devNode struct {
	st   *stack.Stack
	chat *stack.ChatModule
	gov  *stack.GovModule
}

// node is the node's engine.
func (d *devNode) node() *node.Node { return d.st.Node() }

// openDevNode opens node i of a dev network on its bound API listener
// ln, which it owns from then on (closed by d.st.Close).
func openDevNode(ctx context.Context, i int, dir string, net *node.Network, devKey wallet.Key, leftOut []wallet.Key, p2pAddr string, ln gonet.Listener, bootstrap []string, mkt marketnet.Config, tk *wallet.Key, vms qemu.Config, vmImage string, log *slog.Logger) (*devNode, error) {
	listen, err := offsetTCP(p2pAddr, i)
	if err != nil {
		ln.Close()
		return nil, usageErr("--p2p %q: %v", p2pAddr, err)
	}
	// Node 0 also votes with the dev key, which holds the genesis weight,
	// and with the keys of the nodes left out this time, whose weight
	// would otherwise be missing from every quorum.
	var reps []wallet.Key
	if i == 0 {
		reps = append(append(reps, devKey), leftOut...)
	}
	d := &devNode{chat: stack.Chat(chatnet.Config{}), gov: stack.Gov(govnet.Config{})}
	mktMod := stack.Market(mkt, d.gov)
	d.st = stack.New(stack.Config{
		Node:         node.Config{DataDir: dir, Network: net, Logger: log.With("node", i)},
		HTTPListener: ln,
		P2P:          []string{listen},
		Bootstrap:    bootstrap,
	}, d.gov, stack.Ledger(ledgernet.Config{Reps: reps}), d.chat, mktMod, stack.Leases(leasenet.Config{Timekeeper: tk}, d.gov, mktMod),
		stack.VMs(vmnet.Config{Image: vmImage}, vms, mktMod))
	if err := d.st.Listen(); err != nil {
		d.st.Close()
		return nil, err
	}
	if err := d.st.Provision(ctx); err != nil {
		d.st.Close()
		return nil, err
	}
	return d, nil
}

// close stops the node: its API (its server has stopped), its modules,
// its host and its engine.
func (d *devNode) close() { d.st.Close() }

// devCommittee makes the dev nodes' timekeeper keys the network's
// timekeeper committee (the dev key governs a dev network), unless the
// state chain names them already, and says so for the banner.
func devCommittee(ctx context.Context, d *devNode, devKey wallet.Key, keys []ledger.Address) (string, error) {
	gov := d.gov.Service()
	value := statechain.TimekeepersValue(keys)
	nodes := "node 0"
	if len(keys) > 1 {
		nodes = fmt.Sprintf("nodes 0 to %d", len(keys)-1)
	}
	if e, ok := gov.State().Get("timekeepers"); ok && e.Value == value {
		return fmt.Sprintf("%s (set at state-chain index %d)", nodes, e.Index), nil
	}
	tip := gov.Tip()
	b := &statechain.Block{Index: tip.Index + 1, Previous: tip.Hash, Operation: statechain.OpSet, Key: "timekeepers",
		Value: value, Timestamp: d.node().Now().UnixMilli()}
	b.Seal(d.node().Network.Genesis.Hash)
	b.Sign(devKey.Private())
	if _, err := gov.Submit(ctx, b); err != nil {
		// The network still starts, and says what to do; only leases
		// need the committee, and fail at use.
		switch {
		case errors.Is(err, govnet.ErrHalted):
			return fmt.Sprintf("not changed to %s: %v; lattice dev has no --statechain-reject: start over with a new --data", nodes, err), nil
		case errors.Is(err, statechain.ErrUnauthorized):
			return fmt.Sprintf("not changed to %s: %v; until the keyholders set them (`lattice gov set timekeepers ...`), leases may find too few timekeepers", nodes, err), nil
		}
		return "", err
	}
	return fmt.Sprintf("%s (set now, at state-chain index %d, by the dev key)", nodes, b.Index), nil
}

// devProviderFunds is what the dev key gives the provider account, in
// native units, so that it can stake its leases.
const devProviderFunds = "100000"

// fundDevProvider sends the provider account devProviderFunds native from
// the dev key and receives them with the provider's key, once: when the
// provider account does not exist yet.
func fundDevProvider(ctx context.Context, n0 *node.Node, devKey, provider wallet.Key) error {
	if _, found, err := n0.Store.Account(provider.Address()); err != nil || found {
		return err
	}
	acct, found, err := n0.Store.Account(devKey.Address())
	if err != nil || !found {
		return err
	}
	amount, err := ledger.ParseUnits(devProviderFunds)
	if err != nil {
		return err
	}
	if acct.Balance(ledger.Native).Cmp(amount) < 0 {
		return nil // a dev account spent down: the provider stays unfunded
	}
	c := devChains(n0, devKey, acct)
	_, lo := amount.Parts()
	return devGive(ctx, n0, c, devKey, provider, lo)
}

// devChains builds blocks on the dev key's chain as node n0 has it
// (acct).
func devChains(n0 *node.Node, devKey wallet.Key, acct ledger.Account) *wallet.Chains {
	head := wallet.HeadOf(acct)
	c := wallet.NewChains(n0.Network.Work, devKey, n0.Network.Genesis)
	c.Add(devKey, &head)
	return c
}

// devGive sends to's new account amount native from the dev key, and
// receives it with to's key, at node n0.
func devGive(ctx context.Context, n0 *node.Node, c *wallet.Chains, devKey, to wallet.Key, amount uint64) error {
	c.Add(to, nil)
	send, err := c.Send(devKey, to.Address(), amount)
	if err != nil {
		return err
	}
	recv, err := c.Receive(to, send, ledger.Address{})
	if err != nil {
		return err
	}
	for _, b := range []*ledger.Block{send, recv} {
		if _, err := n0.Engine.Submit(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// registerDevKey registers the dev key at node 0 in the directory, so that
// messages to it reach node 0 with no step of the user's, unless it is
// registered there already.
func registerDevKey(ctx context.Context, d *devNode, devKey wallet.Key) error {
	self := d.st.Host().ID().String()
	chat := d.chat.Service()
	if r, found, err := chat.Lookup(devKey.Address()); err != nil || (found && r.NodePeer == self) {
		return err
	}
	r := &directory.Registration{NodePeer: self, Timestamp: d.node().Now().UnixMilli()}
	r.Sign(devKey.Private())
	return chat.Register(ctx, r)
}

// shareDevWeight gives every node of a new multi-node dev network an equal
// share of the genesis supply, received by the node's own account, so each
// is a representative with weight: the dev key sends the shares, each node
// key receives its own. It does nothing once the dev key has sent: a
// network grown from a ledger already in use keeps its dev account's
// balance, and its weight, as they are (see devWeightless).
func shareDevWeight(ctx context.Context, nodes []*devNode, devKey wallet.Key) error {
	if len(nodes) < 2 {
		return nil
	}
	n0 := nodes[0].node()
	acct, found, err := n0.Store.Account(devKey.Address())
	if err != nil || !found || acct.Height > 1 {
		return err
	}
	_, share := acct.Balance(ledger.Native).Parts() // the dev supply fits in 64 bits
	share /= uint64(len(nodes))
	c := devChains(n0, devKey, acct)
	for _, d := range nodes[1:] {
		if err := devGive(ctx, n0, c, devKey, d.node().Key, share); err != nil {
			return err
		}
	}
	return nil
}

// devNetwork returns the dev network of dir, creating its funded key and
// genesis file on first use.
func devNetwork(dir, keyPath string) (*node.Network, error) {
	genesisPath := filepath.Join(dir, "genesis.json")
	if net, err := node.LoadNetwork(genesisPath); err == nil {
		return net, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	key, err := wallet.LoadKey(keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		key = wallet.NewKey()
		err = wallet.SaveKey(keyPath, key)
	}
	if err != nil {
		return nil, err
	}
	supply, _ := ledger.ParseUnits(devSupplyUnits)
	net := &node.Network{Name: "dev", Work: ledger.DevWork,
		Genesis: ledger.NewGenesis(key.Private(), supply, time.Now().UnixMilli())}
	if err := writeFileAtomic(genesisPath, net, 0o644); err != nil {
		return nil, err
	}
	return net, nil
}

// devVMImage is the image of the dev provider's lease VMs: one a user
// can log in to with ssh through a tunnel.
const devVMImage = "debian-12"

// checkVMImage refuses an image the QEMU driver does not have.
func checkVMImage(name string) error {
	var names []string
	for _, img := range qemu.Images() {
		if img.Name == name {
			return nil
		}
		names = append(names, img.Name)
	}
	return usageErr("--vm-image %q: want one of %s", name, strings.Join(names, ", "))
}

func runNode(ctx context.Context, e *env, args []string) error {
	e = e.synced()
	f := newHelpFlags(e, "node", "node --data DIR [--genesis FILE] [flags]", `
Runs a ledger node: its HTTP API, the peer-to-peer network and its votes.
On first start it creates the data directory from --genesis; later starts
read the ledger already there. Flags also come from the environment and
from a JSON --config file.`, `  lattice node --data ./node1 --genesis genesis.json
  lattice node --data ./node2 --http 127.0.0.1:8081 --p2p /ip4/0.0.0.0/tcp/4002 --bootstrap /ip4/127.0.0.1/tcp/4001/p2p/12D3Koo...
  lattice node --config node.json
`)
	data := f.string("data", "LATTICE_DATA", "data", homeDir(".lattice", "node"), "data directory")
	genesis := f.string("genesis", "LATTICE_GENESIS", "genesis", "", "genesis file; needed on first start only")
	httpAddr := f.string("http", "LATTICE_HTTP", "http", "127.0.0.1:8080", "HTTP API address")
	p2pAddr := f.string("p2p", "LATTICE_P2P", "p2p", "/ip4/0.0.0.0/tcp/4001", "peer-to-peer listen multiaddr")
	bootstrap := f.string("bootstrap", "LATTICE_BOOTSTRAP", "bootstrap", "", "comma-separated multiaddrs of peers to join, each ending in /p2p/<peer id>")
	repKey := f.string("rep-key", "LATTICE_REP_KEY", "rep_key", "", "key file of a representative account this node votes for, besides its own key; never give one key to two running nodes")
	providerKey := f.string("provider-key", "LATTICE_PROVIDER_KEY", "provider_key", "", "key file of a provider account: this node then offers compute of --capacity (created if missing)")
	capacity := f.string("capacity", "LATTICE_CAPACITY", "capacity", "", "what this provider's machines have in all: vcpus=N,memory_mb=N,disk_gb=N (with --provider-key)")
	vmImage := f.string("vm-image", "LATTICE_VM_IMAGE", "vm_image", "debian-12", "image of the VMs this provider runs for its leases: debian-12 (systemd, SSH) or minimal (busybox, boots in about 2 s)")
	vmImages := f.string("vm-images", "LATTICE_VM_IMAGES", "vm_images", "", "directory of the built VM images, which nodes and platforms on one host may share (default DATA/machines/images)")
	vmAccel := f.string("vm-accel", "LATTICE_VM_ACCEL", "vm_accel", "", "force the VMs' accelerator: kvm or tcg (default KVM where /dev/kvm works)")
	tkKey := f.string("timekeeper-key", "LATTICE_TIMEKEEPER_KEY", "timekeeper_key", "", "key file of a timekeeper: this node then attests lease times for the committee the state chain names (created if missing)")
	relay := f.boolean("relay", "LATTICE_RELAY", "relay", "relay for peers behind NAT (libp2p circuit relay v2); says this node is publicly reachable, so only on a node others can dial; see docs/operations.md")
	reach := f.string("reachability", "LATTICE_REACHABILITY", "reachability", "auto", "auto: AutoNAT finds out whether peers can dial this node; private: it is behind NAT (it reserves a relay at once); public: they can")
	reject := f.string("statechain-reject", "LATTICE_STATECHAIN_REJECT", "statechain_reject", "", "comma-separated hashes of state-chain blocks to drop after a conflict (docs/operations.md); never accepted, removed with what follows them")
	proxies := proxyNetworksFlag(f)
	f.configFile()
	skew := f.string("max-clock-skew", "LATTICE_MAX_CLOCK_SKEW", "max_clock_skew", "10m", "how far a block's timestamp may be from this node's clock: the API refuses a new block beyond it, the network holds an early one until its time")
	window := f.string("online-window", "LATTICE_ONLINE_WINDOW", "online_window", "5m", "how long a representative counts as online after its latest vote (GET /node's quorum, /readyz); never changes the quorum")
	logLevel := f.string("log-level", "LATTICE_LOG_LEVEL", "log_level", "info", "log level: debug, info, warn, error")
	logFormat := f.string("log-format", "LATTICE_LOG_FORMAT", "log_format", "", "log format: text or json (default: text on a terminal, json otherwise)")
	metricsAddr := f.string("metrics", "LATTICE_METRICS", "metrics", "", "serve Prometheus metrics on this address instead of the API's GET /metrics")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	reachability := ""
	switch *reach {
	case "auto":
	case "public", "private":
		reachability = *reach
	default:
		return usageErr("--reachability %q: want auto, public or private", *reach)
	}
	if *relay && reachability == "private" {
		return usageErr("--relay with --reachability private: a relay must be reachable")
	}
	maxSkew, err := time.ParseDuration(*skew)
	if err != nil || maxSkew <= 0 {
		return usageErr("--max-clock-skew %q: want a positive duration like 10m", *skew)
	}
	onlineWindow, err := time.ParseDuration(*window)
	if err != nil || onlineWindow < time.Second {
		return usageErr("--online-window %q: want a duration of at least 1s, like 5m", *window)
	}
	if err := checkMultiaddr("p2p", *p2pAddr); err != nil {
		return err
	}
	spare, err := parseProxyNetworks(*proxies)
	if err != nil {
		return err
	}
	peers := splitList(*bootstrap)
	for _, b := range peers {
		if err := checkMultiaddr("bootstrap", b); err != nil {
			return err
		}
	}
	var mkt marketnet.Config
	switch {
	case *providerKey != "":
		c, err := parseCapacity(*capacity)
		if err != nil {
			return usageErr("--capacity %q: %v", *capacity, err)
		}
		k, err := loadOrCreateKeyFile(*providerKey)
		if err != nil {
			return fmt.Errorf("--provider-key: %w", err)
		}
		mkt.Provider, mkt.Capacity = &k, c
	case *capacity != "":
		return usageErr("--capacity needs --provider-key, the provider account's key file")
	}
	if err := checkVMImage(*vmImage); err != nil {
		return err
	}
	if *vmAccel != "" && *vmAccel != qemu.KVM && *vmAccel != qemu.TCG {
		return usageErr("--vm-accel %q: want kvm or tcg", *vmAccel)
	}
	var lease leasenet.Config
	if *tkKey != "" {
		k, err := loadOrCreateKeyFile(*tkKey)
		if err != nil {
			return fmt.Errorf("--timekeeper-key: %w", err)
		}
		lease.Timekeeper = &k
	}
	var rejects []ledger.Hash
	for _, r := range splitList(*reject) {
		h, err := ledger.ParseHash(r)
		if err != nil {
			return usageErr("--statechain-reject %q: %v", r, err)
		}
		rejects = append(rejects, h)
	}
	base, err := newLogger(e, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	log := base.With("service", "node")
	logProxies(log, spare)
	// The inputs are read first (reading creates nothing); then the
	// listeners are bound, so that a port in use fails before the data
	// directory or the node's keys are created.
	var net *node.Network
	if *genesis != "" {
		if net, err = node.LoadNetwork(*genesis); err != nil {
			return err
		}
	}
	var reps []wallet.Key
	if *repKey != "" {
		k, err := wallet.LoadKey(*repKey)
		if err != nil {
			return fmt.Errorf("--rep-key: %w", err)
		}
		reps = append(reps, k)
	}
	gov := stack.Gov(govnet.Config{Reject: rejects})
	mktMod := stack.Market(mkt, gov)
	st := stack.New(stack.Config{
		Node:         node.Config{DataDir: *data, Network: net, Logger: log, MaxClockSkew: maxSkew},
		HTTP:         *httpAddr,
		Metrics:      *metricsAddr,
		P2P:          []string{*p2pAddr},
		Bootstrap:    peers,
		Relay:        *relay,
		Reachability: reachability,
		API:          nodeapi.Options{Spare: spare},
	}, gov, stack.Ledger(ledgernet.Config{Reps: reps, OnlineWindow: onlineWindow}), stack.Chat(chatnet.Config{}), mktMod, stack.Leases(lease, gov, mktMod),
		stack.VMs(vmnet.Config{Image: *vmImage}, qemu.Config{ImageDir: *vmImages, Accel: *vmAccel}, mktMod))
	defer st.Close()
	if err := st.Listen(); err != nil {
		return err
	}
	if err := st.Provision(ctx); err != nil {
		return err
	}
	return st.Serve(ctx, func(url string) {
		log.Info("node API listening", "url", url, "peer_id", st.Host().ID())
		fmt.Fprintf(e.stdout, "lattice node: network %q, API %s\n", st.Node().Network.Name, url)
		for _, a := range st.Host().Addrs() {
			fmt.Fprintf(e.stdout, "  peer address %s\n", a)
		}
	}, shuttingDown(e))
}

const genesisUsage = `Usage: lattice genesis COMMAND [flags]

A network starts from a genesis file: its name, proof-of-work thresholds and
the account that holds the whole native supply. Every node of the network
starts from the same file (` + "`lattice node --genesis FILE`" + `).

Commands:
  new --key FILE --network NAME [--out FILE]   create a genesis file

Examples:
  lattice genesis new --key genesis-key.json --network testnet --out genesis.json
  lattice genesis new --key genesis-key.json --network devnet --work dev --supply 1000

Run ` + "`lattice genesis new -h`" + ` for its flags.
`

func runGenesis(_ context.Context, e *env, args []string) error {
	if done, err := groupHelp(e, args, genesisUsage, "want `lattice genesis new --key FILE --network NAME`"); done {
		return err
	}
	if args[0] != "new" {
		return usageErr("want `lattice genesis new --key FILE --out FILE`")
	}
	f := newHelpFlags(e, "genesis new", "genesis new --key FILE --network NAME [--out FILE] [flags]", `
Creates a network's genesis file: the genesis account (its key file is
created if missing) holds the whole native supply. Refuses to overwrite an
existing --out file.`, `  lattice genesis new --key genesis-key.json --network testnet --out genesis.json
  lattice genesis new --key genesis-key.json --network devnet --work dev --supply 1000
  lattice genesis new --key genesis-key.json --network testnet --governance-keys $A,$B,$C --governance-threshold 2
`)
	keyPath := f.string("key", "LATTICE_KEY", "", "", "key file of the genesis account, created if missing; never the profile's (required)")
	f.unprofiled("key") // it will own a new network's whole supply
	out := f.string("out", "", "", "genesis.json", "where to write the genesis file")
	name := f.string("network", "", "", "", "network name (required)")
	supply := f.string("supply", "", "", "1000000000", "native supply in units")
	work := f.string("work", "", "", "public", "proof-of-work thresholds: public or dev")
	rep := f.string("representative", "", "", "", "address of the representative of the whole supply (default: the genesis account itself)")
	govKeys := f.string("governance-keys", "", "", "", "comma-separated addresses of the keyset that governs the state chain (default: the genesis account alone)")
	govThreshold := f.Int("governance-threshold", 0, "how many of --governance-keys must sign each state-chain block (required with them)")
	asJSON := f.jsonFlag()
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	if *keyPath == "" || *name == "" {
		return usageErr("--key and --network are required")
	}
	amt, err := ledger.ParseUnits(*supply)
	if err != nil || amt.IsZero() {
		return usageErr("--supply %q: want a positive amount of units", *supply)
	}
	w := ledger.PublicWork
	switch *work {
	case "public":
	case "dev":
		w = ledger.DevWork
	default:
		return usageErr("--work %q: want public or dev", *work)
	}
	var repAddr ledger.Address
	if *rep != "" {
		if repAddr, err = ledger.ParseAddress(*rep); err != nil {
			return usageErr("--representative: %v", err)
		}
	}
	var gov *ledger.Keyset
	switch {
	case *govKeys != "":
		ks, err := parseKeyset("--governance-keys", "--governance-threshold", *govKeys, *govThreshold)
		if err != nil {
			return err
		}
		gov = &ks
	case *govThreshold != 0:
		return usageErr("--governance-threshold needs --governance-keys")
	}
	if sameFile(*out, *keyPath) {
		// The key would be made there, then replaced by the genesis
		// file: the key of the whole supply gone.
		return usageErr("--out and --key name the same file, %s: the genesis file would replace the key of the whole supply", *out)
	}
	if _, err := os.Stat(*out); err == nil {
		return fmt.Errorf("%s exists; not overwriting", *out)
	}
	key, err := wallet.LoadKey(*keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		key = wallet.NewKey()
		err = wallet.SaveKey(*keyPath, key)
	}
	if err != nil {
		return err
	}
	net := &node.Network{Name: *name, Work: w, Genesis: ledger.NewGenesisWithRepresentative(key.Private(), amt, time.Now().UnixMilli(), repAddr),
		Governance: gov}
	// Never over a file: not one made since the check above, nor the key
	// itself by a path sameFile could not tell apart (a symlinked
	// directory, a case-insensitive file system).
	data, err := json.MarshalIndent(net, "", "  ")
	if err != nil {
		return err
	}
	if err := durablefile.Create(*out, append(data, '\n'), 0o644); errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists (is it --key's file, %s?); not overwriting", *out, *keyPath)
	} else if err != nil {
		return err
	}
	if *asJSON {
		rep := net.Genesis.Account
		if !repAddr.IsZero() {
			rep = repAddr
		}
		return printJSON(e.stdout, map[string]any{"hash": net.Genesis.Hash, "file": *out, "network": net.Name,
			"account": key.Address(), "supply": amt.Units(), "representative": rep, "governance": net.GovernanceKeyset()})
	}
	represented := ""
	if !repAddr.IsZero() {
		represented = ", represented by " + repAddr.String()
	}
	fmt.Fprintf(e.stdout, "genesis %s written to %s: %s native to %s%s\n", net.Genesis.Hash, *out, amt.Units(), key.Address(), represented)
	return nil
}

// notAServersData refuses, for lattice dev, a data directory that is a
// lattice node's or a lattice cloud's own: dev would lay a whole network
// out beside that server's databases (and beside it running).
func notAServersData(dir string) error {
	for _, own := range []struct{ entry, server string }{{"ledger", "lattice node"}, {"meta", "lattice cloud"}} {
		if _, err := os.Stat(filepath.Join(dir, own.entry)); err == nil {
			return fmt.Errorf("%s is the data directory of a %s (it holds %s/): lattice dev keeps its network in a directory of its own; give it another --data", dir, own.server, own.entry)
		}
	}
	return nil
}

// sameFile reports whether paths a and b name one file: the same path
// once made absolute, or one file reached by both.
func sameFile(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// shuttingDown tells the user, once, that a server is stopping.
func shuttingDown(e *env) func() {
	return func() { fmt.Fprintln(e.stderr, "shutting down...") }
}

// newLogger returns the base logger of a server: level and format (text,
// json, or "" for text on a terminal and json otherwise) as the flags
// say. Each part adds the service its lines come from under "service"
// (node, cloud, s3, dev), once: a logger that has one is not given
// another.
func newLogger(e *env, level, format string) (*slog.Logger, error) {
	h, err := logHandler(e.stderr, level, format)
	if err != nil {
		return nil, err
	}
	return slog.New(h), nil
}

func logHandler(w io.Writer, level, format string) (slog.Handler, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageErr("log level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "":
		if isTerminal(w) {
			return slog.NewTextHandler(w, opts), nil
		}
		return slog.NewJSONHandler(w, opts), nil
	case "text":
		return slog.NewTextHandler(w, opts), nil
	case "json":
		return slog.NewJSONHandler(w, opts), nil
	}
	return nil, usageErr("--log-format %q: want text or json", format)
}

// writeFileAtomic writes v as indented JSON to path, durably and whole.
func writeFileAtomic(path string, v any, mode os.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return durablefile.Write(path, append(data, '\n'), mode)
}

// devCapacity is what lattice dev's provider offers.
var devCapacity = market.Resources{VCPUs: 4, MemoryMB: 8192, DiskGB: 100}

// parseCapacity reads vcpus=N,memory_mb=N,disk_gb=N (each once, all three).
func parseCapacity(s string) (market.Resources, error) {
	var r market.Resources
	seen := map[string]bool{}
	for _, part := range splitList(s) {
		k, v, ok := strings.Cut(part, "=")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if !ok || err != nil || n < 0 {
			return r, fmt.Errorf("%q: want NAME=N with N a non-negative integer", part)
		}
		k = strings.TrimSpace(k)
		if seen[k] {
			return r, fmt.Errorf("%s given twice", k)
		}
		seen[k] = true
		switch k {
		case "vcpus":
			r.VCPUs = n
		case "memory_mb":
			r.MemoryMB = n
		case "disk_gb":
			r.DiskGB = n
		default:
			return r, fmt.Errorf("unknown resource %q: want vcpus, memory_mb and disk_gb", k)
		}
	}
	if len(seen) != 3 {
		return r, fmt.Errorf("want vcpus=N,memory_mb=N,disk_gb=N, all three")
	}
	return r, nil
}

// loadOrCreateKeyFile loads a key file, creating it (mode 0600) when it
// does not exist.
func loadOrCreateKeyFile(path string) (wallet.Key, error) {
	k, err := wallet.LoadKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		k = wallet.NewKey()
		err = wallet.SaveKey(path, k)
	}
	return k, err
}
