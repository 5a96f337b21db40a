package p2p

import (
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	ma "github.com/multiformats/go-multiaddr"
)

// gater refuses connections, in both directions, to banned peers until
// their ban ends and to isolated peers until Heal.
type gater struct {
	now func() time.Time

	mu        sync.Mutex
	bans      map[peer.ID]time.Time // peer -> end of its ban
	isolated  map[peer.ID]bool
	relayOnly map[peer.ID]bool // direct connections refused (Host.RelayOnly)
}

func newGater(now func() time.Time) *gater {
	return &gater{now: now, bans: make(map[peer.ID]time.Time), isolated: make(map[peer.ID]bool), relayOnly: make(map[peer.ID]bool)}
}

// allowed reports whether connections with p may exist.
func (g *gater) allowed(p peer.ID) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.isolated[p] && !g.bannedLocked(p)
}

func (g *gater) bannedLocked(p peer.ID) bool {
	end, ok := g.bans[p]
	if ok && !g.now().Before(end) {
		delete(g.bans, p)
		return false
	}
	return ok
}

func (g *gater) banned(p peer.ID) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.bannedLocked(p)
}

func (g *gater) ban(p peer.ID, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bans[p] = g.now().Add(d)
}

// prune forgets bans that have ended, so the map holds only live ones.
func (g *gater) prune() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for p := range g.bans {
		g.bannedLocked(p)
	}
}

// InterceptPeerDial refuses to dial a banned or isolated peer.
func (g *gater) InterceptPeerDial(p peer.ID) bool { return g.allowed(p) }

// InterceptAddrDial refuses to dial a banned or isolated peer, and a
// relay-only peer but through a relay.
func (g *gater) InterceptAddrDial(p peer.ID, a ma.Multiaddr) bool {
	return g.allowed(p) && g.direct(p, a)
}

// direct reports whether a connection with p at address a may exist: one
// through a relay always, a direct one unless p is relay-only.
func (g *gater) direct(p peer.ID, a ma.Multiaddr) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.relayOnly[p] || isCircuit(a)
}

// InterceptAccept accepts every inbound connection: the peer is not known
// before the security handshake.
func (g *gater) InterceptAccept(network.ConnMultiaddrs) bool { return true }

// InterceptSecured refuses an inbound or outbound connection whose peer,
// now authenticated, is banned or isolated.
func (g *gater) InterceptSecured(_ network.Direction, p peer.ID, cm network.ConnMultiaddrs) bool {
	return g.allowed(p) && g.direct(p, cm.RemoteMultiaddr())
}

// InterceptUpgraded accepts every connection that was secured.
func (g *gater) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) { return true, 0 }

// Banned reports whether p is banned now: it sent too many messages that
// our validators rejected (see Config.RejectLimit) and connections with it
// are refused until its ban ends.
func (h *Host) Banned(p peer.ID) bool { return h.gater.banned(p) }

// ban disconnects p and refuses it for Config.BanDuration.
func (h *Host) ban(p peer.ID) {
	h.gater.ban(p, h.cfg.BanDuration)
	h.log.Warn("banned peer", "peer", p, "for", h.cfg.BanDuration)
	_ = h.host.Network().ClosePeer(p)
}

// Isolate cuts this host off from the given peers: it closes the
// connections with them and refuses new ones, in both directions, until
// Heal. It is a hook for tests and operations (simulating a partition,
// shutting out a misbehaving peer by hand), not part of normal running.
func (h *Host) Isolate(ids ...peer.ID) {
	h.gater.mu.Lock()
	for _, p := range ids {
		h.gater.isolated[p] = true
	}
	h.gater.mu.Unlock()
	for _, p := range ids {
		_ = h.host.Network().ClosePeer(p)
	}
}

// Heal lifts every Isolate and RelayOnly and asks the reconnect loop to dial the known
// peers now, so connections come back without waiting for its next round.
func (h *Host) Heal() {
	h.gater.mu.Lock()
	healed := make([]peer.ID, 0, len(h.gater.isolated))
	for p := range h.gater.isolated {
		healed = append(healed, p)
	}
	clear(h.gater.isolated)
	clear(h.gater.relayOnly)
	h.gater.mu.Unlock()
	// Dials refused while isolated put the peers in the swarm's dial
	// backoff; forget it so the first dial after Heal is a real one.
	if sw, ok := h.host.Network().(*swarm.Swarm); ok {
		for _, p := range healed {
			sw.Backoff().Clear(p)
		}
	}
	h.poke()
}
