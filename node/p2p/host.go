package p2p

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	drouting "github.com/libp2p/go-libp2p/p2p/discovery/routing"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/net/connmgr"
	relayv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/pbnjay/memory"
)

// ErrClosed is returned by the methods of a Host (or of its topics) that has
// been closed.
var ErrClosed = errors.New("p2p: host closed")

// Config configures a Host. Dir and Network are required; every other zero
// field takes the default its comment names.
type Config struct {
	// Dir holds the identity key file "p2p-key" (an ed25519 key,
	// libp2p-protobuf-marshalled, mode 0600, created on first start and
	// reused so the peer id is stable) and "peers.json" (the known peers,
	// rewritten atomically).
	Dir string
	// Listen are the multiaddrs to listen on, e.g. "/ip4/0.0.0.0/tcp/4001".
	// Only TCP is supported. Default: "/ip4/127.0.0.1/tcp/0".
	Listen []string
	// Bootstrap are peers to dial at start and whenever the host is short
	// of peers: multiaddrs ending in /p2p/<id>.
	Bootstrap []string
	// Network namespaces every protocol id and topic as
	// "/lattice/<Network>/...". The node passes its genesis hash in hex. It
	// may not contain '/'.
	Network string
	// Logger receives the host's own log lines. Default: slog.Default().
	Logger *slog.Logger

	// LowPeers and HighPeers are the connection manager's watermarks: past
	// HighPeers connections it trims back to LowPeers, and below LowPeers
	// the host dials known and discovered peers. Defaults: 32 and 64.
	LowPeers, HighPeers int

	// MaxMemory and MaxFDs are the memory, in bytes, and the file
	// descriptors given to libp2p's resource manager: its default limits
	// on connections, streams and memory (system-wide, per peer, per
	// protocol) are scaled to them. Defaults, as libp2p's AutoScale: an
	// eighth of the machine's memory, half of the process's descriptors.
	MaxMemory int64
	MaxFDs    int

	// RejectLimit is how many messages from one peer our topic validators
	// may reject within RejectWindow before the peer is disconnected and
	// banned for BanDuration. Defaults: 20, one minute, ten minutes.
	RejectLimit  int
	RejectWindow time.Duration
	BanDuration  time.Duration

	// StreamTimeout is the deadline given to a stream of our protocols when
	// nobody gives it another: an inbound stream before its handler runs,
	// an outbound one whose context has no deadline. Default: 30s.
	StreamTimeout time.Duration
	// DialTimeout bounds each dial of the reconnect loop. Default: 10s.
	DialTimeout time.Duration
	// ReconnectInterval is how often the host, while it has fewer than
	// LowPeers peers, dials the bootstrap, saved and discovered peers it is
	// not connected to, and how often it re-checks its DHT advertisement.
	// Default: 10s.
	ReconnectInterval time.Duration
	// SaveInterval is how often the known peers are written to peers.json
	// (they are also written by Close). Default: one minute.
	SaveInterval time.Duration

	// Relay makes the host a circuit relay (libp2p's relay v2) for peers
	// behind NAT: see RelayLimit for what one relayed connection may use.
	// It declares the host publicly reachable (AutoNAT is not asked), so
	// it belongs only on a node that others can dial. Every host, relay or
	// not, answers other peers' AutoNAT probes (but one told it is
	// private), takes part in hole punching (DCUtR) and, when AutoNAT finds
	// it unreachable, reserves a slot on a connected relay and announces
	// the relayed address.
	Relay bool
	// Reachability, when "public" or "private", tells the host what
	// AutoNAT would otherwise find out, which takes from seconds to
	// minutes: a node known to be behind NAT reserves its relay slots at
	// once. "" lets AutoNAT decide. Relay implies "public".
	Reachability string
}

// RelayLimit is what one relayed connection may use at a relay before the
// relay resets it: an hour, and a GiB in each direction. A relayed
// connection is meant to last until hole punching makes a direct one,
// usually within seconds; the bound keeps a relay's operator from carrying
// a tunnel's traffic for good. libp2p's own default (two minutes, 128 KiB)
// would cut an SSH session through a relay within its first screens.
var RelayLimit = relayv2.RelayLimit{Duration: time.Hour, Data: 1 << 30}

func (c *Config) ensureDefaults() {
	if len(c.Listen) == 0 {
		c.Listen = []string{"/ip4/127.0.0.1/tcp/0"}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.LowPeers == 0 {
		c.LowPeers = 32
	}
	if c.HighPeers == 0 {
		c.HighPeers = 2 * c.LowPeers
	}
	if c.RejectLimit == 0 {
		c.RejectLimit = 20
	}
	if c.RejectWindow == 0 {
		c.RejectWindow = time.Minute
	}
	if c.BanDuration == 0 {
		c.BanDuration = 10 * time.Minute
	}
	if c.StreamTimeout == 0 {
		c.StreamTimeout = 30 * time.Second
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = 10 * time.Second
	}
	if c.ReconnectInterval == 0 {
		c.ReconnectInterval = 10 * time.Second
	}
	if c.SaveInterval == 0 {
		c.SaveInterval = time.Minute
	}
}

func (c *Config) validate() error {
	switch {
	case c.Dir == "":
		return errors.New("p2p: config: Dir is required")
	case c.Network == "" || strings.Contains(c.Network, "/"):
		return fmt.Errorf("p2p: config: Network %q must be non-empty and contain no '/'", c.Network)
	case c.LowPeers < 0 || c.HighPeers < c.LowPeers:
		return fmt.Errorf("p2p: config: want 0 <= LowPeers <= HighPeers, have %d and %d", c.LowPeers, c.HighPeers)
	case c.RejectLimit < 1 || c.MaxMemory < 0 || c.MaxFDs < 0:
		return errors.New("p2p: config: RejectLimit must be positive, MaxMemory and MaxFDs not negative")
	case c.Reachability != "" && c.Reachability != "public" && c.Reachability != "private":
		return fmt.Errorf("p2p: config: Reachability %q: want public, private or empty", c.Reachability)
	case c.Relay && c.Reachability == "private":
		return errors.New("p2p: config: a relay must be publicly reachable, not private")
	}
	return nil
}

// Host is a running libp2p host for one network. Its methods are safe for
// concurrent use.
type Host struct {
	cfg       Config
	log       *slog.Logger
	prefix    string // "/lattice/<Network>"
	host      host.Host
	dht       *dht.IpfsDHT
	disc      *drouting.RoutingDiscovery
	ps        *pubsub.PubSub
	gater     *gater
	book      *peerBook
	bootstrap []peer.AddrInfo
	now       func() time.Time
	punch     *punchTracer

	cancel context.CancelFunc // ends the context of the loops, the DHT and pubsub
	// ready is closed once host is set: libp2p calls back into the Host
	// (AutoRelay's candidates) from its own goroutines while New runs.
	ready chan struct{}
	wg    sync.WaitGroup // the host's own goroutines and running stream handlers
	wake  chan struct{}  // asks the reconnect loop for a round now

	mu      sync.Mutex
	closed  bool
	topics  map[string]*Topic
	rejects map[peer.ID]*rejectCount

	closeOnce sync.Once
	closeErr  error
}

// New starts a host: it loads or creates the identity in cfg.Dir, listens
// on cfg.Listen, starts the DHT and GossipSub, and starts the loops that
// dial the bootstrap and saved peers, advertise and discover peers under
// the network's namespace, and save the known peers. It does not wait for
// any dial: Peers tells who is connected. ctx bounds the start only; the
// host runs until Close.
func New(ctx context.Context, cfg Config) (*Host, error) {
	cfg.ensureDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	bootstrap, err := parsePeerAddrs(cfg.Bootstrap)
	if err != nil {
		return nil, err
	}
	key, err := loadOrCreateKey(cfg.Dir)
	if err != nil {
		return nil, err
	}
	book, err := loadPeerBook(cfg.Dir)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("p2p: start: %w", err)
	}

	h := &Host{
		cfg:       cfg,
		log:       cfg.Logger.With("component", "p2p"),
		prefix:    "/lattice/" + cfg.Network,
		book:      book,
		bootstrap: bootstrap,
		now:       time.Now,
		wake:      make(chan struct{}, 1),
		ready:     make(chan struct{}),
		topics:    make(map[string]*Topic),
		rejects:   make(map[peer.ID]*rejectCount),
	}
	h.gater = newGater(func() time.Time { return h.now() })
	h.punch = &punchTracer{log: h.log}

	rm, err := newResourceManager(cfg.MaxMemory, cfg.MaxFDs)
	if err != nil {
		return nil, err
	}
	cm, err := connmgr.NewConnManager(cfg.LowPeers, cfg.HighPeers, connmgr.WithGracePeriod(time.Minute))
	if err != nil {
		rm.Close()
		return nil, fmt.Errorf("p2p: connection manager: %w", err)
	}
	// TCP only: one transport that works the same offline, in tests and in
	// containers; QUIC can be added beside it once it has earned its place.
	opts := []libp2p.Option{
		libp2p.Identity(key),
		libp2p.ListenAddrStrings(cfg.Listen...),
		libp2p.Transport(tcp.NewTCPTransport),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.ResourceManager(rm),
		libp2p.ConnectionManager(cm),
		libp2p.ConnectionGater(h.gater),
		// The node exports its own metrics; libp2p's would register on the
		// process-wide Prometheus registry.
		libp2p.DisableMetrics(),
		libp2p.UserAgent("lattice"),
	}
	h.host, err = libp2p.New(append(opts, h.natOptions()...)...)
	if err != nil {
		// libp2p closes what it was given when New fails after taking it,
		// but not always before; closing twice is harmless.
		rm.Close()
		cm.Close()
		return nil, fmt.Errorf("p2p: start host: %w", err)
	}
	close(h.ready)
	h.host.Network().Notify(&network.NotifyBundle{ConnectedF: h.connected})

	life, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	abort := func(err error) (*Host, error) {
		cancel()
		if h.dht != nil {
			h.dht.Close()
		}
		h.host.Close()
		h.wg.Wait()
		return nil, err
	}
	h.book.connected = func(p peer.ID) bool { return h.host.Network().Connectedness(p) == network.Connected }
	// The peer book hears of peers before anything dials: the DHT's
	// bootstrap may connect and identify a peer at once, and an
	// identification missed is a peer never saved.
	if err := h.watchPeers(life); err != nil {
		return abort(err)
	}
	if err := h.watchNAT(life); err != nil {
		return abort(err)
	}
	if err := h.startRouting(); err != nil {
		return abort(err)
	}
	if err := h.startGossip(life); err != nil {
		return abort(err)
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.maintain(life)
	}()
	h.log.Info("p2p host started", "id", h.ID(), "addrs", h.Addrs(), "network", cfg.Network)
	return h, nil
}

// newResourceManager scales libp2p's default limits (with its limits for
// its own services) to maxMemory bytes and maxFDs descriptors; a zero takes
// the value libp2p's AutoScale would: an eighth of the machine's memory,
// half of the process's descriptor limit.
func newResourceManager(maxMemory int64, maxFDs int) (network.ResourceManager, error) {
	limits := rcmgr.DefaultLimits
	libp2p.SetDefaultServiceLimits(&limits)
	if maxMemory == 0 {
		maxMemory = int64(memory.TotalMemory() / 8)
	}
	if maxFDs == 0 {
		maxFDs = limits.AutoScale().ToPartialLimitConfig().System.FD.Build(0)
	}
	rm, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(limits.Scale(maxMemory, maxFDs)))
	if err != nil {
		return nil, fmt.Errorf("p2p: resource manager: %w", err)
	}
	return rm, nil
}

// ID is the host's peer id, derived from the key in Dir and so stable
// across restarts.
func (h *Host) ID() peer.ID { return h.host.ID() }

// Addrs returns the multiaddrs others can dial to reach this host, each
// ending in /p2p/<id>. An unspecified listen address (0.0.0.0, ::) is
// expanded to the interfaces' addresses, as libp2p does.
func (h *Host) Addrs() []string {
	suffix := "/p2p/" + h.ID().String()
	var out []string
	for _, a := range h.host.Addrs() {
		out = append(out, a.String()+suffix)
	}
	return out
}

// Peers returns the peers the host is connected to now.
func (h *Host) Peers() []peer.ID {
	return h.host.Network().Peers()
}

// Close stops every goroutine the host started and waits for them, closes
// its topics, connections and listeners, and saves the known peers to
// peers.json. It returns the first error met; calling it again returns the
// same error.
func (h *Host) Close() error {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		h.closed = true
		topics := make([]*Topic, 0, len(h.topics))
		for _, t := range h.topics {
			if t != nil { // nil: a Join under way, which will see closed
				topics = append(topics, t)
			}
		}
		h.mu.Unlock()

		for _, t := range topics {
			t.close()
		}
		// Save while the peerstore still has the addresses of live peers.
		errs := []error{h.savePeers()}
		h.cancel()
		errs = append(errs, h.dht.Close())
		errs = append(errs, h.host.Close())
		h.wg.Wait()
		for _, err := range errs {
			if err != nil && h.closeErr == nil {
				h.closeErr = fmt.Errorf("p2p: close: %w", err)
			}
		}
		h.log.Info("p2p host closed", "id", h.ID())
	})
	return h.closeErr
}

// protocolID is the id of our protocol or topic name in this network.
func (h *Host) protocolID(name string) protocol.ID {
	return protocol.ID(h.prefix + "/" + name)
}

// ours reports whether a protocol list names any protocol of our network.
func (h *Host) ours(protos []protocol.ID) bool {
	return slices.ContainsFunc(protos, func(p protocol.ID) bool {
		return strings.HasPrefix(string(p), h.prefix+"/")
	})
}

// parsePeerAddrs parses multiaddrs ending in /p2p/<id>, merging those of
// one peer.
func parsePeerAddrs(addrs []string) ([]peer.AddrInfo, error) {
	var mas []ma.Multiaddr
	for _, s := range addrs {
		m, err := ma.NewMultiaddr(s)
		if err != nil {
			return nil, fmt.Errorf("p2p: bootstrap address %q: %w", s, err)
		}
		mas = append(mas, m)
	}
	infos, err := peer.AddrInfosFromP2pAddrs(mas...)
	if err != nil {
		return nil, fmt.Errorf("p2p: bootstrap addresses must end in /p2p/<id>: %w", err)
	}
	return infos, nil
}
