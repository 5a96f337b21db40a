package p2p

import (
	"context"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/host/autorelay"
	relayv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
	ma "github.com/multiformats/go-multiaddr"
)

// hopProtocol is the protocol a circuit relay v2 serves reservations on:
// the peers that announce it are relay candidates.
const hopProtocol = "/libp2p/circuit/relay/0.2.0/hop"

// natOptions are libp2p's ways through NAT, all libp2p's own:
//
//   - AutoNAT: the host asks other peers to dial it back, to learn
//     whether it is reachable from outside, and answers their probes
//     (unless it is told it is private: it could not dial back anyway).
//   - AutoRelay: once AutoNAT says it is not, the host reserves a slot on
//     relays among its connected peers (any node run with Relay) and
//     announces its addresses through them, /p2p-circuit ones.
//   - Hole punching (DCUtR): a host that accepts a connection through a
//     relay then tries for a direct one: it dials the other peer itself
//     when that peer has a public address, else both dial at once, each
//     through its own NAT. New streams take the direct connection.
//   - Relay: with Config.Relay, the host relays for others (RelayLimit),
//     and takes itself to be publicly reachable without asking AutoNAT.
func (h *Host) natOptions() []libp2p.Option {
	opts := []libp2p.Option{
		libp2p.EnableRelay(),
		libp2p.EnableHolePunching(holepunch.WithTracer(h.punch)),
		libp2p.EnableAutoRelayWithPeerSource(h.relayCandidates,
			// libp2p waits three minutes for four candidates before it
			// reserves; a small network may have one relay in all.
			autorelay.WithMinCandidates(1),
			autorelay.WithBootDelay(0),
			autorelay.WithMinInterval(10*time.Second),
			autorelay.WithBackoff(time.Minute)),
	}
	if h.cfg.Reachability != "private" {
		// A host forced private never serves probes (libp2p does not
		// start the service), and the dial-back stack this option
		// builds would then never be closed.
		opts = append(opts, libp2p.EnableNATService())
	}
	if h.cfg.Relay {
		res := relayv2.DefaultResources()
		limit := RelayLimit
		res.Limit = &limit
		// libp2p's 2 KiB buffers hold a relayed tunnel to a few MB/s.
		res.BufferSize = 16 << 10
		// The operator says the node is reachable. AutoNAT could not
		// always confirm it: it needs a public peer to dial back, and a
		// network's only public node (its relay) has none.
		opts = append(opts, libp2p.EnableRelayService(relayv2.WithResources(res)), libp2p.ForceReachabilityPublic())
	} else {
		switch h.cfg.Reachability {
		case "public":
			opts = append(opts, libp2p.ForceReachabilityPublic())
		case "private":
			opts = append(opts, libp2p.ForceReachabilityPrivate())
		}
	}
	return opts
}

// RelayOnly makes this host refuse direct connections with the given
// peers, in both directions, closing those that exist, while connections
// through a relay stay allowed (hole punching then fails), until Heal.
// It is a hook for tests and benchmarks (a firewall between two nodes
// that a relay bridges), not part of normal running.
func (h *Host) RelayOnly(ids ...peer.ID) {
	h.gater.mu.Lock()
	for _, p := range ids {
		h.gater.relayOnly[p] = true
	}
	h.gater.mu.Unlock()
	for _, p := range ids {
		for _, c := range h.host.Network().ConnsToPeer(p) {
			if !isCircuit(c.RemoteMultiaddr()) {
				_ = c.Close()
			}
		}
	}
}

// connected closes a direct connection to a relay-only peer that passed
// the gater before RelayOnly named it.
func (h *Host) connected(_ network.Network, c network.Conn) {
	if !isCircuit(c.RemoteMultiaddr()) && !h.gater.direct(c.RemotePeer(), c.RemoteMultiaddr()) {
		go c.Close()
	}
}

// Connect dials the peer at addr, a multiaddr ending in /p2p/<id>, such as
// one through a relay (…/p2p/<relay id>/p2p-circuit/p2p/<id>), unless it
// is connected already. AutoRelay announces relayed addresses on public
// relays only; a test or an operator on a private network names one so.
func (h *Host) Connect(ctx context.Context, addr string) error {
	infos, err := parsePeerAddrs([]string{addr})
	if err != nil {
		return err
	}
	if err := h.host.Connect(network.WithAllowLimitedConn(ctx, "connect"), infos[0]); err != nil {
		return fmt.Errorf("p2p: connect %s: %w", addr, err)
	}
	return nil
}

// isCircuit reports whether a is an address through a relay.
func isCircuit(a ma.Multiaddr) bool {
	_, err := a.ValueForProtocol(ma.P_CIRCUIT)
	return err == nil
}

// relayCandidates is AutoRelay's source of relays: the connected peers
// that serve reservations.
func (h *Host) relayCandidates(ctx context.Context, num int) <-chan peer.AddrInfo {
	out := make(chan peer.AddrInfo, num)
	defer close(out)
	select {
	case <-h.ready: // libp2p may ask while New still runs
	case <-ctx.Done():
		return out
	}
	for _, p := range h.host.Network().Peers() {
		if len(out) == num || ctx.Err() != nil {
			break
		}
		if ok, err := h.host.Peerstore().SupportsProtocols(p, hopProtocol); err != nil || len(ok) == 0 {
			continue
		}
		out <- peer.AddrInfo{ID: p, Addrs: h.host.Peerstore().Addrs(p)}
	}
	return out
}

// Reachability is what AutoNAT learned of the host: "public" when peers
// reached it by dialling back, "private" when they could not (it is
// behind NAT, and reachable through relays), "unknown" until then.
func (h *Host) Reachability() string {
	type reachable interface{ Reachability() network.Reachability }
	r, ok := h.host.(reachable)
	if !ok {
		return "unknown"
	}
	return reachabilityName(r.Reachability())
}

// reachabilityName is AutoNAT's verdict as the host reports it.
func reachabilityName(r network.Reachability) string {
	switch r {
	case network.ReachabilityPublic:
		return "public"
	case network.ReachabilityPrivate:
		return "private"
	}
	return "unknown"
}

// Relayed reports whether s runs over a relayed connection rather than a
// direct one.
func Relayed(s network.Stream) bool {
	c := s.Conn()
	return c.Stat().Limited || isCircuit(c.RemoteMultiaddr())
}

// watchNAT logs what AutoNAT and AutoRelay learn: the host's reachability
// when it changes, and the addresses it announces through relays (none:
// it has no reservation), which is how an operator of a node behind NAT
// sees that peers can reach it.
func (h *Host) watchNAT(ctx context.Context) error {
	return h.onEvents(ctx, "watch NAT", []any{new(event.EvtLocalReachabilityChanged), new(event.EvtAutoRelayAddrsUpdated)}, func(e any) {
		switch ev := e.(type) {
		case event.EvtLocalReachabilityChanged:
			h.log.Info("reachability", "reachability", reachabilityName(ev.Reachability))
		case event.EvtAutoRelayAddrsUpdated:
			h.log.Info("relayed addresses", "addrs", ev.RelayAddrs)
		}
	})
}
