package ledgernet

import (
	"container/list"
	"slices"
	"sync"

	"github.com/latticenet/lattice/ledger"
)

// unchecked holds blocks that arrived before a block they need (their
// previous or their source), keyed by the hash they wait for. It is bounded
// by count and by bytes; when full it evicts the oldest block and counts
// the eviction. An evicted block is not lost to the network: it is fetched
// again when a later block needs it, and peers that applied it serve it
// to others.
//
// It also remembers, in a bounded ring, hashes that can never apply here:
// the losers of confirmed elections, blocks rolled back for them, and what
// waited for either. A block that arrives waiting for one of those is not
// kept: no block would ever release it. (Such blocks keep coming after a
// fork is decided: a peer that held the loser's chain gossiped or served
// it before its own rollback.) Safe for concurrent use.
type unchecked struct {
	mu        sync.Mutex
	maxCount  int
	maxBytes  int
	bytes     int
	order     *list.List // of *waiting, oldest first
	byMissing map[ledger.Hash][]*list.Element
	byHash    map[ledger.Hash]*list.Element
	evicted   uint64
	lost      recentSet
}

// maxLost bounds the hashes remembered as lost: 32 bytes each in the ring
// and about twice that in the map, a few MiB at most. A block that waits
// for a lost hash forgotten since stays until eviction, as it did before.
const maxLost = 1 << 15

type waiting struct {
	b       *ledger.Block
	missing ledger.Hash
	size    int
}

func newUnchecked(maxCount, maxBytes int) *unchecked {
	return &unchecked{maxCount: maxCount, maxBytes: maxBytes, order: list.New(),
		byMissing: make(map[ledger.Hash][]*list.Element), byHash: make(map[ledger.Hash]*list.Element),
		lost: newRecentSet(maxLost)}
}

// What add did with a block.
const (
	added   = iota // it waits for the missing block
	dup            // it was waiting already
	deadEnd        // what it waits for is lost: it is dropped, and lost too
)

// add keeps b until missing arrives, unless it waits already or missing is
// lost (see unchecked).
func (u *unchecked) add(b *ledger.Block, missing ledger.Hash) int {
	size := blockSize(b)
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.byHash[b.Hash]; ok {
		return dup
	}
	if u.lost.contains(missing) {
		if u.lost.contains(b.Hash) {
			return dup // dropped before: counted then
		}
		u.loseLocked(b.Hash)
		return deadEnd
	}
	for u.order.Len() > 0 && (u.order.Len() >= u.maxCount || u.bytes+size > u.maxBytes) {
		u.removeLocked(u.order.Front())
		u.evicted++
	}
	el := u.order.PushBack(&waiting{b: b, missing: missing, size: size})
	u.byHash[b.Hash] = el
	u.byMissing[missing] = append(u.byMissing[missing], el)
	u.bytes += size
	return added
}

// drop marks h lost and removes the blocks that waited for it, and
// recursively for them, marking them lost too. It returns how many blocks
// it removed.
func (u *unchecked) drop(h ledger.Hash) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	// All under one lock: a block added between the release and the
	// marking would wait for good.
	u.loseLocked(h)
	n := 0
	for next := []ledger.Hash{h}; len(next) > 0; {
		m := next[len(next)-1]
		next = next[:len(next)-1]
		for _, el := range slices.Clone(u.byMissing[m]) {
			b := el.Value.(*waiting).b
			u.removeLocked(el)
			u.loseLocked(b.Hash)
			next = append(next, b.Hash)
			n++
		}
	}
	return n
}

// anyLost reports whether a or b (a zero hash is neither) is remembered
// as lost: it can never apply here, nor be confirmed.
func (u *unchecked) anyLost(a, b ledger.Hash) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return (!a.IsZero() && u.lost.contains(a)) || (!b.IsZero() && u.lost.contains(b))
}

func (u *unchecked) loseLocked(h ledger.Hash) {
	u.lost.add(h)
}

// releaseAll removes and returns the blocks that waited for h and, after
// each, the blocks that waited for it, and so on: in an order in which
// they apply, so that a whole chain that arrived backwards goes to the
// engine in one batch rather than one block per commit.
func (u *unchecked) releaseAll(h ledger.Hash) []*ledger.Block {
	out := u.release(h)
	for i := 0; i < len(out); i++ {
		out = append(out, u.release(out[i].Hash)...)
	}
	return out
}

// waitsFor reports whether a block waits for h.
func (u *unchecked) waitsFor(h ledger.Hash) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.byMissing[h]) > 0
}

// release removes and returns the blocks that were waiting for h.
func (u *unchecked) release(h ledger.Hash) []*ledger.Block {
	u.mu.Lock()
	defer u.mu.Unlock()
	// A copy: removing each element edits the slice in the map.
	els := slices.Clone(u.byMissing[h])
	if len(els) == 0 {
		return nil
	}
	out := make([]*ledger.Block, 0, len(els))
	for _, el := range els {
		out = append(out, el.Value.(*waiting).b)
	}
	for _, el := range els {
		u.removeLocked(el)
	}
	return out
}

func (u *unchecked) removeLocked(el *list.Element) {
	w := el.Value.(*waiting)
	u.order.Remove(el)
	delete(u.byHash, w.b.Hash)
	u.bytes -= w.size
	els := u.byMissing[w.missing]
	for i, e := range els {
		if e == el {
			els = append(els[:i], els[i+1:]...)
			break
		}
	}
	if len(els) == 0 {
		delete(u.byMissing, w.missing)
	} else {
		u.byMissing[w.missing] = els
	}
}

// stats returns the number of blocks waiting, their bytes and the evictions
// so far.
func (u *unchecked) stats() (count, bytes int, evicted uint64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.order.Len(), u.bytes, u.evicted
}

// blockSize approximates a block's memory: its binary form plus the
// bookkeeping around it.
func blockSize(b *ledger.Block) int {
	return 256 + 32*len(b.Signatures) + 32*len(b.Attestations) + 32*len(keys(b))
}

func keys(b *ledger.Block) []ledger.Address {
	if b.Keyset == nil {
		return nil
	}
	return b.Keyset.Keys
}
