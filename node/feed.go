package node

import (
	"context"
	"sync"

	"github.com/latticenet/lattice/ledger"
)

// Change is what one durable commit of the engine changed. Subscribers see
// changes in commit order, each only after it is on disk.
type Change struct {
	// Applied lists the blocks appended, in the order they were applied.
	Applied []*ledger.Entry
	// RolledBack lists the blocks a fork resolution removed.
	RolledBack []*ledger.Block
	// Confirmed lists the blocks that became confirmed.
	Confirmed []ledger.Hash
	// Forks lists the contenders refused as forks (and recorded as
	// conflicts).
	Forks []*ledger.ForkError
	// Contenders lists every valid block refused as a fork, recorded or
	// not (a contender of a confirmed block is not): what it carries may
	// still be evidence of misbehaviour.
	Contenders []*ledger.Block
}

// Empty reports whether c changed nothing.
func (c *Change) Empty() bool {
	return len(c.Applied) == 0 && len(c.RolledBack) == 0 && len(c.Confirmed) == 0 && len(c.Forks) == 0 && len(c.Contenders) == 0
}

func changeOf(reqs []*request) Change {
	var c Change
	for _, r := range reqs {
		if r.err != nil && r.fork == nil {
			if r.contender != nil {
				c.Contenders = append(c.Contenders, r.contender)
			}
			continue
		}
		c.RolledBack = append(c.RolledBack, r.res.RolledBack...)
		if r.applied != nil {
			c.Applied = append(c.Applied, r.applied)
		}
		c.Confirmed = append(c.Confirmed, r.res.Confirmed...)
		if r.fork != nil {
			c.Forks = append(c.Forks, r.fork)
		}
		if r.contender != nil {
			c.Contenders = append(c.Contenders, r.contender)
		}
	}
	return c
}

// Subscription receives the engine's changes on C until it is closed.
// A subscriber that falls more than its buffer behind is dropped: C is
// closed and Lagged reports true, and the subscriber must catch up from the
// store (and subscribe again) rather than be waited for, because the writer
// never blocks on a reader.
type Subscription struct {
	// C carries the changes, in commit order.
	C <-chan Change

	c      chan Change
	f      *feed
	lagged bool // guarded by f.mu
}

// Lagged reports whether the subscription was dropped for falling behind.
func (s *Subscription) Lagged() bool {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	return s.lagged
}

// Close ends the subscription; C is closed.
func (s *Subscription) Close() { s.f.remove(s, false) }

// Follow calls fn with each change s receives until ctx ends or the
// engine closes, then closes s. When s falls behind, it is replaced by a
// new subscription with the same buffer and fn is called with nil:
// changes were missed, so fn looks at the store afresh.
func (s *Subscription) Follow(ctx context.Context, fn func(*Change)) {
	defer func() { s.Close() }()
	for {
		select {
		case <-ctx.Done():
			return
		case c, ok := <-s.C:
			if !ok {
				if s.Lagged() && ctx.Err() == nil {
					s = s.f.add(cap(s.c))
					fn(nil)
					continue
				}
				return
			}
			fn(&c)
		}
	}
}

// Subscribe returns a subscription to every change committed from now on,
// buffering up to buffer changes (each change is one commit group).
func (e *Engine) Subscribe(buffer int) *Subscription {
	return e.feed.add(buffer)
}

type feed struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
}

func (f *feed) add(buffer int) *Subscription {
	c := make(chan Change, max(buffer, 1))
	s := &Subscription{C: c, c: c, f: f}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		close(c)
		return s
	}
	if f.subs == nil {
		f.subs = make(map[*Subscription]struct{})
	}
	f.subs[s] = struct{}{}
	return s
}

func (f *feed) remove(s *Subscription, lagged bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.subs[s]; !ok {
		return
	}
	delete(f.subs, s)
	s.lagged = lagged
	close(s.c)
}

func (f *feed) publish(c Change) {
	if c.Empty() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		select {
		case s.c <- c:
		default:
			delete(f.subs, s)
			s.lagged = true
			close(s.c)
		}
	}
}

func (f *feed) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for s := range f.subs {
		delete(f.subs, s)
		close(s.c)
	}
}
