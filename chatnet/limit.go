package chatnet

import (
	"sync"
	"time"

	"github.com/latticenet/lattice/ledger"
)

// limiter is a token bucket per account: Rate tokens a second, at most
// Burst saved up. The buckets of idle accounts are forgotten once there
// are many, so an attacker cycling through keys cannot grow it forever.
type limiter struct {
	mu      sync.Mutex
	rate    float64
	burst   float64
	buckets map[ledger.Address]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// maxBuckets is how many accounts a limiter tracks before it forgets the
// ones whose buckets are full again.
const maxBuckets = 1 << 16

func newLimiter(rate float64, burst int) *limiter {
	return &limiter{rate: rate, burst: float64(burst), buckets: make(map[ledger.Address]*bucket)}
}

// allow takes a token of a's bucket at now. When there is none, it says
// how long until there is.
func (l *limiter) allow(a ledger.Address, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[a]
	if b == nil {
		if len(l.buckets) >= maxBuckets {
			l.prune(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[a] = b
	}
	if el := now.Sub(b.at).Seconds(); el > 0 {
		b.tokens = min(l.burst, b.tokens+el*l.rate)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
	return false, wait
}

func (l *limiter) prune(now time.Time) {
	for a, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, a)
		}
	}
}
