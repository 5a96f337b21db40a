package ledgernet

import (
	"slices"
	"sync"
	"time"
)

// stateWaits are the state-chain indices that blocks wait for (a lease
// block names the index it was judged at, and this node may not hold it
// yet), each with the time its wait ends. One goroutine watches them all
// (Service.watchState): a watcher per index would let a peer that names
// many indices start as many goroutines, each polling the state chain.
type stateWaits struct {
	mu    sync.Mutex
	until map[uint64]time.Time
	wake  chan struct{} // the watcher sleeps on it while none is waited for
}

func newStateWaits() *stateWaits {
	return &stateWaits{until: map[uint64]time.Time{}, wake: make(chan struct{}, 1)}
}

// watch waits for index i until the time given; an index waited for
// already keeps its own time, so later blocks naming it do not prolong it.
func (w *stateWaits) watch(i uint64, until time.Time) {
	w.mu.Lock()
	if _, ok := w.until[i]; !ok {
		w.until[i] = until
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// len is how many indices are waited for.
func (w *stateWaits) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.until)
}

// due takes out the indices whose wait is over: came, those held tells
// this node holds now, and expired, those whose time has passed without.
// A node holds the state chain from index 0 to its tip, so the look for
// held ones stops at the first that is not: one call of held per index
// that came, and one more. An index not held that no block waits for any
// more (waited: the unchecked buffer evicted them, or they were dropped)
// is forgotten at once, without waiting out its time.
func (w *stateWaits) due(now time.Time, held, waited func(uint64) bool) (came, expired []uint64) {
	w.mu.Lock()
	indices := make([]uint64, 0, len(w.until))
	for i := range w.until {
		indices = append(indices, i)
	}
	w.mu.Unlock()
	slices.Sort(indices)
	n := 0
	for n < len(indices) && held(indices[n]) {
		n++
	}
	came = indices[:n]
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, i := range came {
		delete(w.until, i)
	}
	for _, i := range indices[n:] {
		// waited is asked under w.mu: a block added for i after the
		// answer watches i after this delete, never before it.
		if _, ok := w.until[i]; ok && !waited(i) {
			delete(w.until, i)
			continue
		}
		if until, ok := w.until[i]; ok && now.After(until) {
			expired = append(expired, i)
			delete(w.until, i)
		}
	}
	return came, expired
}
