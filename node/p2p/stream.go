package p2p

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
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
// joined after relayHeadStart by the relays it is connected to
// (viaRelays), whichever answers first; then, when it knows no address (a
// peer never met, such as the node a chat recipient is registered at) or
// none answered, through those relays, then at the addresses the
// network's DHT finds (within findPeerTimeout). A banned or isolated peer
// is not looked for.
// The stream may run through a relay (see Relayed). ctx bounds the dial
// and the protocol negotiation; the stream then gets
// ctx's deadline, or one Config.StreamTimeout away if ctx has none, which
// the caller may move. The caller must Close or Reset the stream.
func (h *Host) Open(ctx context.Context, p peer.ID, name string) (network.Stream, error) {
	// A peer behind NAT may be connected through a relay only (until hole
	// punching gives a direct connection, which new streams then take);
	// libp2p opens streams over such a connection only when asked to.
	sctx := network.WithAllowLimitedConn(ctx, name)
	var s network.Stream
	var err error
	tried := false
	if len(h.host.Peerstore().Addrs(p)) > 0 {
		s, err = h.openKnown(ctx, sctx, p, name)
		tried = true
	}
	// The addresses known may be old ones (a peer behind NAT that
	// restarted, or took another relay, is reached at new ones), and a
	// relay-only peer (RelayOnly) refuses the direct ones.
	for _, look := range []func(context.Context, peer.ID) bool{h.addRelayed, h.addFound} {
		if tried && (err == nil || h.host.Network().Connectedness(p) != network.NotConnected) {
			break // a stream, or a connection that refused it
		}
		if ctx.Err() != nil || !h.gater.allowed(p) {
			break
		}
		if look(ctx, p) {
			s, err = h.host.NewStream(sctx, p, h.protocolID(name))
			tried = true
		}
	}
	if !tried {
		s, err = h.host.NewStream(sctx, p, h.protocolID(name)) // libp2p's words for it
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

// relayHeadStart is how long the addresses a peer is known at have to
// answer, when the host is not connected to it, before its relays are
// tried beside them: the Happy Eyeballs of RFC 8305, with relays in the
// place of IPv4. A peer behind NAT that restarted is known at an address
// its router now drops, whose dial fails only after libp2p's dial
// timeout (5 s for a private address, 15 s for a public one, each
// transport in turn): a tunnel or command through node 1 to such a
// provider waited 28 s in TestLeaseBehindNAT while the relay it was
// connected to held the provider's reservation. When the relay wins, the
// dial of the known addresses is given up (libp2p dials an address under
// the context of the request that asked first), and hole punching tries
// for a direct connection, as over any relayed one.
const relayHeadStart = 2 * time.Second

// openKnown opens a stream to p at the addresses the host knows for it,
// and, if that has neither succeeded nor failed within relayHeadStart and
// the host is not connected to p, through the relays it is connected to
// as well (addRelayed). It returns the first stream opened, resetting one
// that the other attempt opens later, or, when both fail, the last error
// (the second attempt's, which covers both kinds of address).
func (h *Host) openKnown(ctx, sctx context.Context, p peer.ID, name string) (network.Stream, error) {
	proto := h.protocolID(name)
	if h.host.Network().Connectedness(p) != network.NotConnected {
		return h.host.NewStream(sctx, p, proto)
	}
	type opened struct {
		s   network.Stream
		err error
	}
	results := make(chan opened, 2)
	actx, cancel := context.WithCancel(sctx)
	defer cancel()
	open := func() {
		s, err := h.host.NewStream(actx, p, proto)
		results <- opened{s, err}
	}
	go open()
	running := 1
	headStart := time.NewTimer(relayHeadStart)
	defer headStart.Stop()
	var last error
	for running > 0 {
		select {
		case r := <-results:
			running--
			if r.err != nil {
				last = r.err
				continue
			}
			if running > 0 {
				cancel()
				go func(n int) { // the loser's stream, if it opens one
					for range n {
						if r := <-results; r.err == nil {
							_ = r.s.Reset()
						}
					}
				}(running)
			}
			return r.s, nil
		case <-headStart.C:
			if h.gater.allowed(p) && h.addRelayed(ctx, p) {
				running++
				go open()
			}
		}
	}
	return nil, last
}

// addRelayed adds to the peerstore, for a while, p's addresses through the
// relays this host is connected to (viaRelays), and reports whether there
// were any. It clears the swarm's dial backoff for p: a guess made before
// p held its reservation failed, and the backoff, which grows with the
// square of the failures up to 5 minutes, would keep the next dial from
// the address once the reservation exists (the address p announces for
// that relay too).
//
// The relays come before the DHT and need nobody's word: a peer behind NAT
// holds its reservations on relays among its own peers, which in a
// network of a few relays are this host's too, and a relay answers at
// once whether it holds one for p. In CI, TestLeaseBehindNAT's node spent
// 5 minutes dialling a provider's old address while the relay it was
// connected to held the provider's reservation: kad-dht's FindPeer
// reports success with the addresses this host already knows when it
// tried the peer during its lookup, and so brought back the old one.
func (h *Host) addRelayed(_ context.Context, p peer.ID) bool {
	circuits := h.viaRelays(p)
	if len(circuits) == 0 {
		return false
	}
	h.host.Peerstore().AddAddrs(p, circuits, peerstore.TempAddrTTL)
	if sw, ok := h.host.Network().(*swarm.Swarm); ok {
		sw.Backoff().Clear(p)
	}
	return true
}

// addFound adds to the peerstore, for a while, the addresses the DHT finds
// for p within findPeerTimeout, and reports whether it found any.
func (h *Host) addFound(ctx context.Context, p peer.ID) bool {
	if h.dht == nil {
		return false
	}
	fctx, cancel := context.WithTimeout(ctx, findPeerTimeout)
	defer cancel()
	info, err := h.dht.FindPeer(fctx, p)
	if err != nil || len(info.Addrs) == 0 {
		return false
	}
	h.host.Peerstore().AddAddrs(p, info.Addrs, peerstore.TempAddrTTL)
	return true
}

// maxRelayGuesses bounds the relays a peer is tried through, and
// findPeerTimeout a search of the DHT for it: a search that finds nothing
// can otherwise last as long as the caller's context (30 s for an API
// call).
const (
	maxRelayGuesses = 4
	findPeerTimeout = 10 * time.Second
)

// viaRelays returns p's addresses through the relays this host is
// directly connected to, /p2p/<relay id>/p2p-circuit (the circuit
// transport dials the relay by its id, over the connection there is): at
// most maxRelayGuesses, the relays p is known to have used first (those
// in its known circuit addresses), for each connected peer other than p
// that serves circuit relay v2 reservations.
func (h *Host) viaRelays(p peer.ID) []ma.Multiaddr {
	used := map[peer.ID]bool{}
	for _, a := range h.host.Peerstore().Addrs(p) {
		if r, ok := circuitRelay(a); ok {
			used[r] = true
		}
	}
	var relays []peer.ID
	for _, r := range h.host.Network().Peers() {
		if r == p || !h.directTo(r) {
			continue
		}
		if ok, err := h.host.Peerstore().SupportsProtocols(r, hopProtocol); err != nil || len(ok) == 0 {
			continue
		}
		relays = append(relays, r)
	}
	slices.SortStableFunc(relays, func(a, b peer.ID) int {
		switch {
		case used[a] == used[b]:
			return 0
		case used[a]:
			return -1
		}
		return 1
	})
	var out []ma.Multiaddr
	for _, r := range relays[:min(len(relays), maxRelayGuesses)] {
		if a, err := ma.NewMultiaddr("/p2p/" + r.String() + "/p2p-circuit"); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// circuitRelay returns the relay of a circuit address
// (…/p2p/<relay id>/p2p-circuit), if a is one.
func circuitRelay(a ma.Multiaddr) (peer.ID, bool) {
	var relay peer.ID
	circuit := false
	ma.ForEach(a, func(c ma.Component) bool {
		switch c.Protocol().Code {
		case ma.P_P2P:
			if !circuit {
				relay, _ = peer.IDFromBytes(c.RawValue())
			}
		case ma.P_CIRCUIT:
			circuit = true
			return false
		}
		return true
	})
	return relay, circuit && relay != ""
}

// directTo reports whether this host has a direct (not relayed)
// connection to r.
func (h *Host) directTo(r peer.ID) bool {
	for _, c := range h.host.Network().ConnsToPeer(r) {
		if !isCircuit(c.RemoteMultiaddr()) {
			return true
		}
	}
	return false
}
