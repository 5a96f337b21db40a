package p2p

import (
	"context"
	"fmt"
	"sync"
	"time"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/discovery"
	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	drouting "github.com/libp2p/go-libp2p/p2p/discovery/routing"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// maxDialsPerRound bounds how many peers one reconnect round dials, and
// dialParallelism how many dials run at once.
const (
	maxDialsPerRound = 64
	dialParallelism  = 8
)

// discoveryTimeout bounds one advertisement or one search of the DHT.
const discoveryTimeout = 30 * time.Second

// startRouting starts the network's own Kademlia DHT, in server mode, under
// "/lattice/<Network>" so that it never joins the public IPFS DHT, and with
// no bootstrap peers but ours.
func (h *Host) startRouting() error {
	d, err := dht.New(h.host,
		dht.Mode(dht.ModeServer),
		dht.ProtocolPrefix(protocol.ID(h.prefix)),
		dht.BootstrapPeersFunc(h.candidates),
		// Only provider records (who is in the network) are used.
		dht.DisableValues(),
	)
	if err != nil {
		return fmt.Errorf("p2p: start dht: %w", err)
	}
	h.dht = d
	h.disc = drouting.NewRoutingDiscovery(d)
	return nil
}

// namespace is what the host advertises and searches in the DHT.
func (h *Host) namespace() string { return h.prefix }

// candidates returns the peers worth dialling: the bootstrap peers, then
// the known ones, most recently seen first, without ourselves and the
// peers the gater refuses.
// isBootstrap reports whether p is one of the --bootstrap peers.
func (h *Host) isBootstrap(p peer.ID) bool {
	for _, b := range h.bootstrap {
		if b.ID == p {
			return true
		}
	}
	return false
}

func (h *Host) candidates() []peer.AddrInfo {
	var out []peer.AddrInfo
	for _, ai := range append(append([]peer.AddrInfo(nil), h.bootstrap...), h.book.list()...) {
		if ai.ID != h.ID() && h.gater.allowed(ai.ID) {
			out = append(out, ai)
		}
	}
	return out
}

// watchPeers records the peers that identify as members of our network in
// the peer book, and disconnects those that speak none of its protocols:
// they are of another network (or none) and would only take a slot.
func (h *Host) watchPeers(ctx context.Context) error {
	return h.onEvents(ctx, "watch peers", new(event.EvtPeerIdentificationCompleted), func(e any) {
		ev := e.(event.EvtPeerIdentificationCompleted)
		if h.ours(ev.Protocols) {
			group := peerGroup(ev.Conn.RemoteMultiaddr()) // where it came from, not what it says
			h.book.add(ev.Peer, ev.ListenAddrs, h.now(), group)
		} else {
			h.log.Debug("disconnecting a peer of another network", "peer", ev.Peer)
			_ = h.host.Network().ClosePeer(ev.Peer)
		}
	})
}

// onEvents subscribes to the host's events of types (one, or a slice, as
// the event bus takes them) and hands each to handle, on a goroutine of
// the host's, until ctx ends. The subscription exists when it returns.
func (h *Host) onEvents(ctx context.Context, what string, types any, handle func(any)) error {
	sub, err := h.host.EventBus().Subscribe(types)
	if err != nil {
		return fmt.Errorf("p2p: %s: %w", what, err)
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-sub.Out():
				handle(e)
			}
		}
	}()
	return nil
}

// poke asks the maintenance loop for a reconnect round now.
func (h *Host) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// maintain is the host's maintenance loop: every ReconnectInterval (or
// when poked) a reconnect round, every SaveInterval a save of the known
// peers and a pruning of ended bans and reject counts.
func (h *Host) maintain(ctx context.Context) {
	tick := time.NewTicker(h.cfg.ReconnectInterval)
	defer tick.Stop()
	save := time.NewTicker(h.cfg.SaveInterval)
	defer save.Stop()
	var nextAdvertise time.Time
	for {
		h.reconnect(ctx)
		if h.dht.RoutingTable().Size() > 0 && !h.now().Before(nextAdvertise) {
			if ttl, ok := h.advertise(ctx); ok {
				// Advertise again well before the record expires.
				nextAdvertise = h.now().Add(ttl / 2)
			}
		}
	wait:
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-h.wake:
		case <-save.C:
			if err := h.savePeers(); err != nil {
				h.log.Warn("saving known peers", "err", err)
			}
			h.gater.prune()
			h.pruneRejects()
			goto wait
		}
	}
}

// reconnect, while the host has fewer than LowPeers peers, dials the
// bootstrap and known peers it is not connected to, then searches the DHT
// for more members of the network and dials those.
func (h *Host) reconnect(ctx context.Context) {
	if len(h.Peers()) >= h.cfg.LowPeers {
		return
	}
	h.dialAll(ctx, h.candidates())
	if len(h.Peers()) >= h.cfg.LowPeers || h.dht.RoutingTable().Size() == 0 {
		return
	}
	fctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	found, err := h.disc.FindPeers(fctx, h.namespace(), discovery.Limit(maxDialsPerRound))
	if err != nil {
		h.log.Debug("searching the dht for peers", "err", err)
		return
	}
	var infos []peer.AddrInfo
	for ai := range found {
		if ai.ID != h.ID() && len(ai.Addrs) > 0 && h.gater.allowed(ai.ID) {
			infos = append(infos, ai)
		}
	}
	h.dialAll(ctx, infos)
}

// advertise announces in the DHT that we are a member of the network, and
// returns how long the announcement lasts.
func (h *Host) advertise(ctx context.Context) (time.Duration, bool) {
	actx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	ttl, err := h.disc.Advertise(actx, h.namespace())
	if err != nil {
		h.log.Debug("advertising in the dht", "err", err)
		return 0, false
	}
	return ttl, true
}

// dialAll dials the peers of infos that are not connected, at most
// maxDialsPerRound of them and dialParallelism at a time, each for at most
// DialTimeout, and returns when every dial has ended.
func (h *Host) dialAll(ctx context.Context, infos []peer.AddrInfo) {
	sem := make(chan struct{}, dialParallelism)
	var wg sync.WaitGroup
	dials := 0
	for _, ai := range infos {
		if ctx.Err() != nil || dials == maxDialsPerRound {
			break
		}
		if h.host.Network().Connectedness(ai.ID) == network.Connected {
			continue
		}
		dials++
		// A bootstrap peer, or one reached only through a relay, is dialled
		// every round whatever its failures: the swarm's backoff, which
		// grows with the square of a peer's failed dials, would stretch the
		// next dial to minutes after a path that was cut (a router, a
		// partition) comes back, and a provider behind NAT stayed relayed
		// long after it could dial out again. Other candidates (saved or
		// discovered, perhaps gone for good) keep the swarm's backoff.
		limited := h.host.Network().Connectedness(ai.ID) == network.Limited
		if h.isBootstrap(ai.ID) || limited {
			if sw, ok := h.host.Network().(*swarm.Swarm); ok {
				sw.Backoff().Clear(ai.ID)
			}
		}
		// A relayed connection satisfies a plain Connect, which then dials
		// nothing: a peer reached only through a relay that has a public
		// address is dialled directly, as a node behind NAT reaches it
		// once its router lets it out. Hole punching alone tries a few
		// times per relayed connection, and a try that meets the router
		// changing leaves the two relayed for as long as that connection
		// lasts. A peer with no public address (itself behind NAT) is not:
		// such a dial could only fail.
		direct := limited && hasPublicAddr(append(ai.Addrs, h.host.Peerstore().Addrs(ai.ID)...))
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			dctx, cancel := context.WithTimeout(ctx, h.cfg.DialTimeout)
			defer cancel()
			if direct {
				dctx = network.WithForceDirectDial(dctx, "a direct connection to a peer reached through a relay")
			}
			if err := h.host.Connect(dctx, ai); err != nil {
				h.log.Debug("dialling peer", "peer", ai.ID, "err", err)
			}
		}()
	}
	wg.Wait()
}

// hasPublicAddr reports whether addrs hold a public address that is not a
// relay's circuit.
func hasPublicAddr(addrs []ma.Multiaddr) bool {
	for _, a := range addrs {
		if !isCircuit(a) && manet.IsPublicAddr(a) {
			return true
		}
	}
	return false
}
