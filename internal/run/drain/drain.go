// Package drain lets a server stop taking requests and wait for the ones
// it is running, so that what they use (a store, a node) is closed only
// after the last one has returned.
package drain

import "sync"

// Gate admits requests until it is closed. The zero Gate is open.
type Gate struct {
	mu      sync.Mutex
	closing bool
	running sync.WaitGroup
}

// Enter admits a request, which must call Leave when done; it reports
// false once the gate is closing, and the request must then be refused.
func (g *Gate) Enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return false
	}
	// Under mu, so that no Add races with Close's Wait.
	g.running.Add(1)
	return true
}

// Leave ends a request that Enter admitted.
func (g *Gate) Leave() { g.running.Done() }

// Close refuses new requests and waits until the admitted ones have left.
func (g *Gate) Close() {
	g.mu.Lock()
	g.closing = true
	g.mu.Unlock()
	g.running.Wait()
}
