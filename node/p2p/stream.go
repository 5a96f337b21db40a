package p2p

import (
	"context"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	ma "github.com/multiformats/go-multiaddr"
)

// Handle serves the stream protocol "/lattice/<Network>/<name>": handler
// is called, on its own goroutine, for every stream a peer opens with it.
//
// The stream arrives with a deadline Config.StreamTimeout away, so a peer
// that stops talking cannot hold it forever; the handler may set another
// (SetDeadline, SetReadDeadline) to suit its protocol. The handler owns the
// stream: it must Close it when done, or Reset it on error. Close waits for
// running handlers, whose streams it resets by closing the connections.
// Handling a name again replaces its handler.
func (h *Host) Handle(name string, handler func(s network.Stream)) {
	h.host.SetStreamHandler(h.protocolID(name), func(s network.Stream) {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			_ = s.Reset()
			return
		}
		h.wg.Add(1)
		h.mu.Unlock()
		defer h.wg.Done()
		_ = s.SetDeadline(time.Now().Add(h.cfg.StreamTimeout))
		handler(s)
	})
}

// Open opens a stream to peer p with protocol "/lattice/<Network>/<name>",
// dialling p first if needed: with the addresses the host knows for it,
// or, when it knows none (a peer never met, such as the node a chat
// recipient is registered at) or none of them answers, with those it
// finds (findAddrs): through the relays it is connected to, and those the
// network's DHT knows.
// The stream may run through a relay (see Relayed). ctx bounds the dial
// and the protocol negotiation; the stream then gets
// ctx's deadline, or one Config.StreamTimeout away if ctx has none, which
// the caller may move. The caller must Close or Reset the stream.
func (h *Host) Open(ctx context.Context, p peer.ID, name string) (network.Stream, error) {
	looked := false
	if len(h.host.Peerstore().Addrs(p)) == 0 {
		looked = true
		h.findAddrs(ctx, p)
	}
	// A peer behind NAT may be connected through a relay only (until hole
	// punching gives a direct connection, which new streams then take);
	// libp2p opens streams over such a connection only when asked to.
	sctx := network.WithAllowLimitedConn(ctx, name)
	s, err := h.host.NewStream(sctx, p, h.protocolID(name))
	if err != nil && !looked && ctx.Err() == nil && h.gater.allowed(p) &&
		h.host.Network().Connectedness(p) == network.NotConnected {
		// The addresses known may be old ones: a peer behind NAT that
		// restarted, or took another relay, is reached at new ones; and
		// a relay-only peer (RelayOnly) refuses the direct ones. Look
		// once. A banned or isolated peer is not looked for.
		if h.findAddrs(ctx, p) {
			s, err = h.host.NewStream(sctx, p, h.protocolID(name))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("p2p: open %s to %s: %w", name, p, err)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(h.cfg.StreamTimeout)
	}
	if err := s.SetDeadline(deadline); err != nil {
		_ = s.Reset()
		return nil, fmt.Errorf("p2p: open %s to %s: %w", name, p, err)
	}
	return s, nil
}

// findAddrs adds to the peerstore, for a while, addresses at which p may
// be reached now, and reports whether it found any: p through each relay
// this host is connected to directly (at most maxRelayGuesses), and the
// addresses the DHT finds for p (within findPeerTimeout).
//
// The relays come first and need nobody's word: a peer behind NAT holds
// its reservations on relays among its own peers, which in a network of a
// few relays are this host's too, and the relay answers at once whether
// it holds one for p. The DHT's answer depends on what its routing table
// holds: in CI, TestLeaseBehindNAT's node spent 5 minutes dialling a
// provider's old address, its lookups never bringing the relayed one,
// while the relay it was connected to held the provider's reservation.
func (h *Host) findAddrs(ctx context.Context, p peer.ID) bool {
	found := false
	if circuits := h.viaRelays(p); len(circuits) > 0 {
		h.host.Peerstore().AddAddrs(p, circuits, peerstore.TempAddrTTL)
		found = true
	}
	if h.dht != nil {
		fctx, cancel := context.WithTimeout(ctx, findPeerTimeout)
		defer cancel()
		if info, err := h.dht.FindPeer(fctx, p); err == nil && len(info.Addrs) > 0 {
			h.host.Peerstore().AddAddrs(p, info.Addrs, peerstore.TempAddrTTL)
			found = true
		}
	}
	return found
}

// maxRelayGuesses bounds the relays findAddrs tries a peer through, and
// findPeerTimeout its search of the DHT: a search that finds nothing can
// otherwise last as long as the caller's context (30 s for an API call),
// when the relays may have answered already.
const (
	maxRelayGuesses = 4
	findPeerTimeout = 10 * time.Second
)

// viaRelays returns p's addresses through the relays this host is
// directly connected to: …/p2p/<relay>/p2p-circuit, the form p announces
// them in, for each connected peer (other than p) that serves circuit
// relay v2 reservations.
func (h *Host) viaRelays(p peer.ID) []ma.Multiaddr {
	var out []ma.Multiaddr
	for _, r := range h.host.Network().Peers() {
		if len(out) == maxRelayGuesses {
			break
		}
		if r == p {
			continue
		}
		if ok, err := h.host.Peerstore().SupportsProtocols(r, hopProtocol); err != nil || len(ok) == 0 {
			continue
		}
		at := h.relayAddr(r)
		if at == nil {
			continue
		}
		circuit, err := ma.NewMultiaddr("/p2p/" + r.String() + "/p2p-circuit")
		if err != nil {
			continue
		}
		out = append(out, at.Encapsulate(circuit))
	}
	return out
}

// relayAddr is an address of relay r that this host reaches it at: the
// remote address of a direct connection it dialled, else one r listens
// on; nil when it has no direct connection to r.
func (h *Host) relayAddr(r peer.ID) ma.Multiaddr {
	direct := false
	for _, c := range h.host.Network().ConnsToPeer(r) {
		if isCircuit(c.RemoteMultiaddr()) {
			continue
		}
		direct = true
		if c.Stat().Direction == network.DirOutbound {
			return c.RemoteMultiaddr()
		}
	}
	if !direct {
		return nil
	}
	for _, a := range h.host.Peerstore().Addrs(r) {
		if !isCircuit(a) {
			return a
		}
	}
	return nil
}
