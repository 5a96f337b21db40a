package stack

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"path/filepath"
	"sync/atomic"

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
	"github.com/latticenet/lattice/node/vmnet"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
	"github.com/libp2p/go-libp2p/core/peer"
)

// LedgerModule is the ledger network: block and vote gossip, sync and the
// elections (package ledgernet).
type LedgerModule struct {
	cfg ledgernet.Config
	svc *ledgernet.Service
}

// Ledger returns the ledger network's module. cfg tunes the service; its
// Node, Host and Logger are the stack's, and its Reps are the keys the
// node votes with besides its own, which always comes first.
func Ledger(cfg ledgernet.Config) *LedgerModule { return &LedgerModule{cfg: cfg} }

func (m *LedgerModule) Name() string { return "ledgernet" }

func (m *LedgerModule) Provision(ctx context.Context, s *Stack) error {
	cfg := m.cfg
	n := s.Node()
	cfg.Node, cfg.Host, cfg.Logger = n, s.Host(), s.Logger()
	if cfg.Now == nil {
		cfg.Now = n.Now // the clock the API admits blocks by
	}
	cfg.Reps = append([]wallet.Key{n.Key}, m.cfg.Reps...)
	svc, err := ledgernet.Start(ctx, cfg)
	if err != nil {
		return err
	}
	m.svc = svc
	s.Registry().MustRegister(svc)
	return nil
}

func (m *LedgerModule) API(o *nodeapi.Options) { o.Network = m.svc }

func (m *LedgerModule) Close() error {
	if m.svc == nil {
		return nil
	}
	return m.svc.Close()
}

// Service is the running service; set from Provision on.
func (m *LedgerModule) Service() *ledgernet.Service { return m.svc }

// ChatModule is chat and the directory (package chatnet).
type ChatModule struct {
	cfg chatnet.Config
	svc *chatnet.Service
}

// Chat returns the chat module. cfg tunes the service; its Dir is the
// data directory's chat/, its Host, Key and Logger the stack's, its clock
// the node's, and its file system the node's unless cfg names one.
func Chat(cfg chatnet.Config) *ChatModule { return &ChatModule{cfg: cfg} }

func (m *ChatModule) Name() string { return "chat" }

func (m *ChatModule) Provision(ctx context.Context, s *Stack) error {
	cfg := m.cfg
	n := s.Node()
	cfg.Dir, cfg.Host, cfg.Key, cfg.Logger = filepath.Join(s.Dir(), "chat"), s.Host(), n.Key, s.Logger()
	if cfg.Now == nil {
		cfg.Now = n.Now
	}
	if cfg.FS == nil {
		cfg.FS = s.cfg.Node.FS
	}
	svc, err := chatnet.Start(ctx, cfg)
	if err != nil {
		return err
	}
	m.svc = svc
	s.Registry().MustRegister(svc)
	return nil
}

func (m *ChatModule) API(o *nodeapi.Options) { o.Chat = m.svc }

func (m *ChatModule) Close() error {
	if m.svc == nil {
		return nil
	}
	return m.svc.Close()
}

// Service is the running service; set from Provision on.
func (m *ChatModule) Service() *chatnet.Service { return m.svc }

// GovModule is the governance state chain (package govnet).
type GovModule struct {
	cfg govnet.Config
	svc *govnet.Service
}

// Gov returns the state chain's module. cfg tunes the service; its Dir is
// the data directory's statechain/, its Host and Logger the stack's, its
// network and block 0 the node's network's, its clock and clock-skew
// window the node's, and its file system the node's unless cfg names one.
func Gov(cfg govnet.Config) *GovModule { return &GovModule{cfg: cfg} }

func (m *GovModule) Name() string { return "statechain" }

func (m *GovModule) Provision(ctx context.Context, s *Stack) error {
	cfg := m.cfg
	n := s.Node()
	cfg.Dir, cfg.Host, cfg.Logger = filepath.Join(s.Dir(), "statechain"), s.Host(), s.Logger()
	cfg.Network, cfg.Genesis = n.Network.Genesis.Hash, n.Network.StateChainGenesis()
	if cfg.Now == nil {
		cfg.Now = n.Now
	}
	if cfg.MaxClockSkew == 0 {
		// The node's admission window (--max-clock-skew).
		cfg.MaxClockSkew = cmp.Or(s.cfg.Node.MaxClockSkew, node.DefaultMaxClockSkew)
	}
	if cfg.FS == nil {
		cfg.FS = s.cfg.Node.FS
	}
	svc, err := govnet.Start(ctx, cfg)
	if err != nil {
		return err
	}
	m.svc = svc
	s.Registry().MustRegister(svc)
	// Lease blocks are judged by the state chain: the engine must know it
	// before the ledger network brings blocks in (this module comes first).
	n.Engine.SetGovernance(market.Terms{Network: cfg.Network, StateAt: svc.StateAt})
	return nil
}

func (m *GovModule) API(o *nodeapi.Options) { o.StateChain = m.svc }

func (m *GovModule) Close() error {
	if m.svc == nil {
		return nil
	}
	return m.svc.Close()
}

// Service is the running service; set from Provision on.
func (m *GovModule) Service() *govnet.Service { return m.svc }

// MarketModule is the compute marketplace before leases: providers'
// capacity records and offers (package marketnet). It reads the network's
// parameters from the state chain's module, provisioned before it.
type MarketModule struct {
	cfg   marketnet.Config
	gov   *GovModule
	svc   *marketnet.Service
	ready func() error // the VM module's, when the node runs one
}

// Market returns the marketplace's module. cfg tunes the service (its
// Provider and Capacity make the node a provider); its Host, Network,
// Logger and clock are the stack's, and its parameters gov's.
func Market(cfg marketnet.Config, gov *GovModule) *MarketModule {
	return &MarketModule{cfg: cfg, gov: gov}
}

func (m *MarketModule) Name() string { return "market" }

func (m *MarketModule) Provision(ctx context.Context, s *Stack) error {
	cfg := m.cfg
	n := s.Node()
	cfg.Host, cfg.Network, cfg.Logger = s.Host(), n.Network.Genesis.Hash, s.Logger()
	if cfg.Now == nil {
		cfg.Now = n.Now
	}
	if cfg.MaxClockSkew == 0 {
		cfg.MaxClockSkew = cmp.Or(s.cfg.Node.MaxClockSkew, node.DefaultMaxClockSkew)
	}
	if m.gov == nil || m.gov.Service() == nil {
		return errors.New("the marketplace needs the state chain's module before it")
	}
	gov := m.gov.Service()
	cfg.Params = func() (statechain.Params, uint64, error) {
		st := gov.State()
		p, err := st.Params()
		return p, st.Index(), err
	}
	if cfg.Ready == nil && m.ready != nil {
		ready := m.ready // set by the VM module, provisioned after this one
		cfg.Ready = func() error { return ready() }
	}
	if cfg.Active == nil {
		cfg.Active = func(provider ledger.Address) (market.Resources, int, error) {
			return leasenet.LiveLeases(n.Store, provider)
		}
	}
	if cfg.Balance == nil {
		cfg.Balance = func(provider ledger.Address) (ledger.Amount, error) {
			acct, _, err := n.Store.Account(provider)
			return acct.Balance(ledger.Native), err
		}
	}
	svc, err := marketnet.Start(ctx, cfg)
	if err != nil {
		return err
	}
	m.svc = svc
	return nil
}

func (m *MarketModule) API(o *nodeapi.Options) { o.Market = m.svc }

func (m *MarketModule) Close() error {
	if m.svc == nil {
		return nil
	}
	return m.svc.Close()
}

// Service is the running service; set from Provision on.
func (m *MarketModule) Service() *marketnet.Service { return m.svc }

// LeaseModule runs leases on the network (package leasenet): timekeeping,
// the lease account's blocks, the provider's leases and the evidence of
// misbehaving timekeepers. It reads the state chain from gov and the
// provider's key and capacity from market's configuration.
type LeaseModule struct {
	cfg    leasenet.Config
	gov    *GovModule
	market *MarketModule
	svc    *leasenet.Service
}

// Leases returns the leases' module. cfg tunes the service (its
// Timekeeper makes the node a timekeeper); its Node, Host, Dir, Logger,
// clock and state chain are the stack's, and its provider market's.
func Leases(cfg leasenet.Config, gov *GovModule, market *MarketModule) *LeaseModule {
	return &LeaseModule{cfg: cfg, gov: gov, market: market}
}

func (m *LeaseModule) Name() string { return "leases" }

func (m *LeaseModule) Provision(ctx context.Context, s *Stack) error {
	cfg := m.cfg
	n := s.Node()
	if m.gov == nil || m.gov.Service() == nil {
		return errors.New("leases need the state chain's module before them")
	}
	cfg.Node, cfg.Host, cfg.Logger = n, s.Host(), s.Logger()
	cfg.Dir = filepath.Join(s.Dir(), "leases")
	if cfg.FS == nil {
		cfg.FS = s.cfg.Node.FS
	}
	if cfg.Now == nil {
		cfg.Now = n.Now
	}
	gov := m.gov.Service()
	cfg.Terms = market.Terms{Network: n.Network.Genesis.Hash, StateAt: gov.StateAt}
	cfg.TipIndex = func() uint64 { return gov.Tip().Index }
	if m.market != nil && cfg.Provider == nil {
		cfg.Provider, cfg.Capacity = m.market.cfg.Provider, m.market.cfg.Capacity
	}
	svc, err := leasenet.Start(ctx, cfg)
	if err != nil {
		return err
	}
	m.svc = svc
	return nil
}

func (m *LeaseModule) API(o *nodeapi.Options) { o.Leases = m.svc }

func (m *LeaseModule) Close() error {
	if m.svc == nil {
		return nil
	}
	return m.svc.Close()
}

// Service is the running service; set from Provision on.
func (m *LeaseModule) Service() *leasenet.Service { return m.svc }

// VMModule runs leases' machines and reaches them over the network
// (package vmnet). On a provider (market's configuration names its key)
// it boots the machines of the provider's leases on a QEMU driver whose
// files are under the data directory's machines/.
type VMModule struct {
	cfg    vmnet.Config
	qemu   qemu.Config
	market *MarketModule
	svc    *vmnet.Service
	lazy   atomic.Pointer[qemu.Lazy] // the driver made here, read by offers
}

// VMs returns the machines' module. cfg tunes the service; its Node,
// Host, Dir, Logger and clock are the stack's, its provider market's,
// and its Driver, when cfg names none, QEMU configured by q (its Dir the
// data directory's machines/ unless q names one).
func VMs(cfg vmnet.Config, q qemu.Config, market *MarketModule) *VMModule {
	m := &VMModule{cfg: cfg, qemu: q, market: market}
	if market != nil {
		market.ready = m.ready
	}
	return m
}

// ready is the provider's readiness for offers (marketnet.Config.Ready):
// whether the QEMU driver it made can boot a VM. With a driver given in
// the configuration, or none made (no provider), it is always ready.
func (m *VMModule) ready() error {
	l := m.lazy.Load()
	if l == nil {
		return nil
	}
	return l.Preflight()
}

func (m *VMModule) Name() string { return "vms" }

func (m *VMModule) Provision(ctx context.Context, s *Stack) error {
	cfg := m.cfg
	n := s.Node()
	cfg.Node, cfg.Host, cfg.Logger = n, s.Host(), s.Logger()
	cfg.Dir = filepath.Join(s.Dir(), "vms")
	if cfg.FS == nil {
		cfg.FS = s.cfg.Node.FS
	}
	if cfg.Now == nil {
		cfg.Now = n.Now
	}
	if m.market != nil && cfg.Provider == nil {
		cfg.Provider = m.market.cfg.Provider
	}
	if cfg.Provider != nil && cfg.Driver == nil {
		q := m.qemu
		if q.Dir == "" {
			q.Dir = filepath.Join(s.Dir(), "machines")
		}
		if q.Logger == nil {
			q.Logger = s.Logger()
		}
		l := qemu.NewLazy(q)
		m.lazy.Store(l)
		cfg.Driver = vmnet.QEMU(l)
		if err := l.Preflight(); err != nil {
			s.Logger().Error("this provider's host cannot run VMs: it makes no offers until the host has what is missing (a driver that failed to start needs a restart)", "err", err)
		}
	}
	if cfg.FindPeer == nil && m.market != nil && m.market.Service() != nil {
		cfg.FindPeer = providerPeer(m.market.Service())
	}
	svc, err := vmnet.Start(ctx, cfg)
	if err != nil {
		return err
	}
	m.svc = svc
	return nil
}

// providerPeer finds a provider's node among the marketplace's provider
// records: the one whose peer ID hashes to the certificate.
func providerPeer(mk *marketnet.Service) func(context.Context, ledger.Address, ledger.Hash) (peer.ID, error) {
	return func(_ context.Context, provider ledger.Address, cert ledger.Hash) (peer.ID, error) {
		all, err := mk.Providers()
		if err != nil {
			return "", err
		}
		for _, p := range all {
			if p.Account != provider {
				continue
			}
			id, err := peer.Decode(p.NodePeer)
			if err == nil && ledger.Hash(sha256.Sum256([]byte(id))) == cert {
				return id, nil
			}
		}
		return "", errors.New("no provider record of the marketplace names the node the lease's accept names")
	}
}

func (m *VMModule) API(o *nodeapi.Options) { o.VMs = m.svc }

func (m *VMModule) Close() error {
	if m.svc == nil {
		return nil
	}
	return m.svc.Close()
}

// Service is the running service; set from Provision on.
func (m *VMModule) Service() *vmnet.Service { return m.svc }
