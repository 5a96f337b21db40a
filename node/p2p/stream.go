package p2p

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
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
// recipient is registered at) or none of them answers, with those the
// network's DHT finds.
// The stream may run through a relay (see Relayed). ctx bounds the dial
// and the protocol negotiation; the stream then gets
// ctx's deadline, or one Config.StreamTimeout away if ctx has none, which
// the caller may move. The caller must Close or Reset the stream.
func (h *Host) Open(ctx context.Context, p peer.ID, name string) (network.Stream, error) {
	looked := false
	if len(h.host.Peerstore().Addrs(p)) == 0 && h.dht != nil {
		looked = true
		if info, err := h.dht.FindPeer(ctx, p); err == nil {
			h.host.Peerstore().AddAddrs(p, info.Addrs, peerstore.TempAddrTTL)
		}
	}
	// A peer behind NAT may be connected through a relay only (until hole
	// punching gives a direct connection, which new streams then take);
	// libp2p opens streams over such a connection only when asked to.
	sctx := network.WithAllowLimitedConn(ctx, name)
	s, err := h.host.NewStream(sctx, p, h.protocolID(name))
	if err != nil && !looked && ctx.Err() == nil && h.dht != nil && h.gater.allowed(p) &&
		h.host.Network().Connectedness(p) == network.NotConnected && !errors.Is(err, swarm.ErrGaterDisallowedConnection) {
		// The addresses known may be old ones: a peer behind NAT that
		// restarted, or took another relay, is reached at new ones,
		// which its DHT neighbours know. Ask once.
		if info, ferr := h.dht.FindPeer(ctx, p); ferr == nil && len(info.Addrs) > 0 {
			h.host.Peerstore().AddAddrs(p, info.Addrs, peerstore.TempAddrTTL)
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
