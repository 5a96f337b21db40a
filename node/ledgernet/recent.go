package ledgernet

import "github.com/latticenet/lattice/ledger"

// recentSet remembers the last max hashes added to it: a map, and a ring
// of its hashes overwritten oldest first.
type recentSet struct {
	max  int
	has  map[ledger.Hash]struct{}
	ring []ledger.Hash
	next int
}

func newRecentSet(max int) recentSet {
	return recentSet{max: max, has: make(map[ledger.Hash]struct{})}
}

// add remembers h, forgetting the oldest hash when max are remembered.
func (r *recentSet) add(h ledger.Hash) {
	if r.contains(h) {
		return
	}
	if len(r.ring) < r.max {
		r.ring = append(r.ring, h)
	} else {
		delete(r.has, r.ring[r.next])
		r.ring[r.next] = h
		r.next = (r.next + 1) % r.max
	}
	r.has[h] = struct{}{}
}

func (r *recentSet) contains(h ledger.Hash) bool {
	_, ok := r.has[h]
	return ok
}
