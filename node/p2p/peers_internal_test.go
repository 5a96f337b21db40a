package p2p

import (
	"fmt"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

func newPeerID(t *testing.T) peer.ID {
	t.Helper()
	_, pub, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestPeerBookUnderSybils: identities cost nothing, addresses do. Honest
// peers, each from a network of its own, stay in the peer book through
// a flood of identities from one network or from many, and so do the
// peers connected now, even in a group at its bound.
func TestPeerBookUnderSybils(t *testing.T) {
	for _, c := range []struct {
		name     string
		networks int // the flood comes from this many /16s
		sybils   int
	}{
		{"from one network", 1, 3000},
		{"from twenty networks", 20, 3000},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &peerBook{peers: map[peer.ID]*knownPeer{}}
			now := time.UnixMilli(1767225600000)
			at := func(ip string) ([]ma.Multiaddr, string) {
				a := ma.StringCast("/ip4/" + ip + "/tcp/4001")
				return []ma.Multiaddr{a}, peerGroup(a)
			}
			var honest []peer.ID
			for i := range 10 {
				id := newPeerID(t)
				addrs, group := at(fmt.Sprintf("%d.1.2.3", 100+i))
				b.add(id, addrs, now, group)
				honest = append(honest, id)
			}
			// Three peers of the flood's first network are connected now.
			connected := map[peer.ID]bool{}
			b.connected = func(p peer.ID) bool { return connected[p] }
			for range 3 {
				id := newPeerID(t)
				addrs, group := at("1.0.0.1")
				b.add(id, addrs, now, group)
				connected[id] = true
			}
			for i := range c.sybils {
				now = now.Add(time.Second) // each newer than every honest peer
				addrs, group := at(fmt.Sprintf("%d.%d.%d.%d", 1+i%c.networks, i/256%256, i%256, 1))
				b.add(newPeerID(t), addrs, now, group)
			}
			for i, id := range honest {
				if !b.has(id) {
					t.Errorf("honest peer %d forgotten", i)
				}
			}
			for id := range connected {
				if !b.has(id) {
					t.Error("a connected peer forgotten")
				}
			}
			sizes := map[string]int{}
			for _, k := range b.peers {
				sizes[k.group]++
			}
			for g, n := range sizes {
				if n > maxPeersPerGroup {
					t.Errorf("group %s holds %d peers, more than %d", g, n, maxPeersPerGroup)
				}
			}
			if len(b.peers) > maxKnownPeers {
				t.Errorf("%d peers, more than %d", len(b.peers), maxKnownPeers)
			}
		})
	}
}
