package p2p

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/latticenet/lattice/internal/run/durablefile"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// peersFile is the name, in Config.Dir, of the known peers.
const peersFile = "peers.json"

// maxKnownPeers bounds peers.json and the book in memory.
const maxKnownPeers = 1000

// maxPeersPerGroup bounds the peers of one address group (peerGroup) in
// the book: identities cost nothing, addresses do, so peers made up by
// one host or network cannot fill it.
const maxPeersPerGroup = 64

// maxPeerAddrs bounds the addresses kept for one peer.
const maxPeerAddrs = 16

// peersJSON is the form of peers.json.
type peersJSON struct {
	Peers []peerJSON `json:"peers"`
}

type peerJSON struct {
	ID    string   `json:"id"`
	Addrs []string `json:"addrs"`
	// Seen is when we were last connected, in Unix milliseconds.
	Seen int64 `json:"seen"`
	// Group is the address group it connected from (peerGroup); absent,
	// its first address's.
	Group string `json:"group,omitempty"`
}

// knownPeer is a peer we have been connected to.
type knownPeer struct {
	addrs []ma.Multiaddr
	seen  time.Time
	group string // peerGroup of the address it connected from
}

// peerBook is the set of peers we have been connected to, loaded from and
// saved to peers.json.
type peerBook struct {
	path string
	// connected reports whether a peer is connected now: such a peer is
	// never the one forgotten. nil means none is.
	connected func(peer.ID) bool

	mu    sync.Mutex
	peers map[peer.ID]*knownPeer
}

// loadPeerBook reads dir/peers.json; a missing file is an empty book. An
// entry that does not parse is skipped, not fatal: the file only speeds up
// finding peers.
func loadPeerBook(dir string) (*peerBook, error) {
	b := &peerBook{path: filepath.Join(dir, peersFile), peers: make(map[peer.ID]*knownPeer)}
	data, err := os.ReadFile(b.path)
	if errors.Is(err, fs.ErrNotExist) {
		return b, nil
	}
	if err != nil {
		return nil, fmt.Errorf("p2p: known peers: %w", err)
	}
	var file peersJSON
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("p2p: known peers %s: %w", b.path, err)
	}
	for _, e := range file.Peers {
		id, err := peer.Decode(e.ID)
		if err != nil {
			continue
		}
		var addrs []ma.Multiaddr
		for _, s := range e.Addrs {
			if a, err := ma.NewMultiaddr(s); err == nil {
				addrs = append(addrs, a)
			}
		}
		if len(addrs) > 0 {
			b.add(id, addrs, time.UnixMilli(e.Seen), cmp.Or(e.Group, peerGroup(addrs[0])))
		}
	}
	return b, nil
}

// add records p with addrs (those it is known by now), seen at seen,
// connected from an address of group. A full book, or a group at
// maxPeersPerGroup, makes room by forgetting a peer that is not connected:
// the one seen longest ago of p's group when that group is full, else of
// the group with the most peers. So a flood of identities from a few
// groups only ever displaces its own, never the peers of other groups
// nor those connected now; with no peer to forget, p is not recorded.
func (b *peerBook) add(p peer.ID, addrs []ma.Multiaddr, seen time.Time, group string) {
	if len(addrs) == 0 {
		return
	}
	if len(addrs) > maxPeerAddrs {
		addrs = addrs[:maxPeerAddrs]
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if k, ok := b.peers[p]; ok {
		k.addrs, k.seen, k.group = addrs, seen, group
		return
	}
	sizes := map[string]int{}
	for _, k := range b.peers {
		sizes[k.group]++
	}
	from := ""
	switch {
	case sizes[group] >= maxPeersPerGroup:
		from = group
	case len(b.peers) >= maxKnownPeers:
		for g, n := range sizes {
			if from == "" || n > sizes[from] || n == sizes[from] && g < from {
				from = g
			}
		}
	}
	if from != "" {
		var oldest peer.ID
		var when time.Time
		for id, k := range b.peers {
			if k.group != from || b.connected != nil && b.connected(id) {
				continue
			}
			if oldest == "" || k.seen.Before(when) {
				oldest, when = id, k.seen
			}
		}
		if oldest == "" {
			return
		}
		delete(b.peers, oldest)
	}
	b.peers[p] = &knownPeer{addrs: addrs, seen: seen, group: group}
}

// peerGroup is the address group of a: the IPv4 /16 or IPv6 /32 it lies
// in (the reach of one operator, roughly, as Bitcoin groups peers), or,
// for an address without an IP (a DNS name), the address itself.
func peerGroup(a ma.Multiaddr) string {
	ip, err := manet.ToIP(a)
	if err != nil {
		if v, err := a.ValueForProtocol(ma.P_DNS4); err == nil {
			return "dns/" + v
		}
		return a.String()
	}
	if v4 := ip.To4(); v4 != nil {
		return fmt.Sprintf("ip4/%d.%d", v4[0], v4[1])
	}
	return fmt.Sprintf("ip6/%x", []byte(ip.To16()[:4]))
}

// list returns the known peers, most recently seen first.
func (b *peerBook) list() []peer.AddrInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	ids := make([]peer.ID, 0, len(b.peers))
	for id := range b.peers {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(x, y peer.ID) int {
		return cmp.Or(b.peers[y].seen.Compare(b.peers[x].seen), cmp.Compare(x, y))
	})
	out := make([]peer.AddrInfo, len(ids))
	for i, id := range ids {
		out[i] = peer.AddrInfo{ID: id, Addrs: slices.Clone(b.peers[id].addrs)}
	}
	return out
}

// save writes the book to peers.json atomically: a crash leaves the old
// file or the new one, never a mix.
func (b *peerBook) save() error {
	b.mu.Lock()
	file := peersJSON{Peers: make([]peerJSON, 0, len(b.peers))}
	for id, k := range b.peers {
		e := peerJSON{ID: id.String(), Seen: k.seen.UnixMilli(), Group: k.group}
		for _, a := range k.addrs {
			e.Addrs = append(e.Addrs, a.String())
		}
		file.Peers = append(file.Peers, e)
	}
	b.mu.Unlock()
	slices.SortFunc(file.Peers, func(x, y peerJSON) int {
		return cmp.Or(cmp.Compare(y.Seen, x.Seen), cmp.Compare(x.ID, y.ID))
	})
	data, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return err
	}
	return durablefile.Write(b.path, append(data, '\n'), 0o600)
}

// savePeers marks the connected peers of the book as seen now and writes
// the book.
func (h *Host) savePeers() error {
	now := h.now()
	for _, p := range h.host.Network().Peers() {
		h.book.touch(p, now)
	}
	if err := h.book.save(); err != nil {
		return fmt.Errorf("p2p: save known peers: %w", err)
	}
	return nil
}

// touch marks p, if known, as seen at t.
func (b *peerBook) touch(p peer.ID, t time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if k, ok := b.peers[p]; ok {
		k.seen = t
	}
}

// has reports whether p is in the book.
func (b *peerBook) has(p peer.ID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.peers[p]
	return ok
}
