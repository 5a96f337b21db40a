package netlab

import (
	"context"
	"sync"
	"time"
)

// Watch samples every running node of a cluster in the background and
// keeps every confirmation it saw, so that conflicting confirmations are
// found even when the two sides never show them at the same moment (one
// side confirmed its contender, then rolled it back after the heal).
type Watch struct {
	c      *Cluster
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu        sync.Mutex
	seen      confirmations
	last      []Snapshot
	samples   int
	reported  int // conflicts already logged
	unreached int // node reads that failed
}

// Watch starts sampling every interval until Close or the test's cleanup.
// New conflicts are logged as they are found; Conflicts returns them all.
func (c *Cluster) Watch(interval time.Duration) *Watch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watch{c: c, cancel: cancel, done: make(chan struct{}), seen: confirmations{}}
	go w.run(ctx, interval)
	c.t.Cleanup(w.Close)
	return w
}

func (w *Watch) run(ctx context.Context, interval time.Duration) {
	defer close(w.done)
	for ctx.Err() == nil {
		w.Sample(ctx)
		sleep(ctx, interval)
	}
}

// Sample takes one sample of every running node now and returns the
// conflicts seen so far.
func (w *Watch) Sample(ctx context.Context) []Conflict {
	w.mu.Lock()
	prev := w.last
	w.mu.Unlock()
	snaps := w.c.Snapshots(ctx, w.c.Running(), prev)
	w.mu.Lock()
	defer w.mu.Unlock()
	if ctx.Err() != nil {
		return w.seen.conflicts() // a sample cut short proves nothing
	}
	w.samples++
	for _, s := range snaps {
		if s.Err != nil {
			w.unreached++
			continue
		}
		w.seen.add(s)
	}
	// Keep the latest good snapshot of every node for reuse.
	merged := append([]Snapshot(nil), w.last...)
	for _, s := range snaps {
		if s.Err != nil {
			continue
		}
		replaced := false
		for k := range merged {
			if merged[k].Node == s.Node {
				merged[k], replaced = s, true
			}
		}
		if !replaced {
			merged = append(merged, s)
		}
	}
	w.last = merged
	cs := w.seen.conflicts()
	if len(cs) > w.reported {
		for _, c := range cs {
			w.c.t.Logf("netlab: %s conflicting confirmations: %s", time.Now().Format("15:04:05.000"), c)
		}
		w.reported = len(cs)
	}
	return cs
}

// Conflicts returns every conflicting confirmation seen so far.
func (w *Watch) Conflicts() []Conflict {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen.conflicts()
}

// Samples returns how many samples were taken, and how many node reads
// failed.
func (w *Watch) Samples() (samples, unreached int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.samples, w.unreached
}

// Close stops the sampling and waits for it.
func (w *Watch) Close() {
	w.once.Do(func() {
		w.cancel()
		<-w.done
	})
}
