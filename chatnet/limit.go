package chatnet

import (
	"sync"
	"time"
)

// limiter is a token bucket per key (an account, a peer, a source
// address): rate tokens a second, at most burst saved up. It tracks at
// most maxBuckets keys: past that it forgets the keys whose buckets are
// full again, then, if an attacker cycling through keys keeps it full,
// arbitrary ones (a forgotten key starts with a full bucket, which only
// lets that key send its burst again).
type limiter[K comparable] struct {
	mu      sync.Mutex
	rate    float64
	burst   float64
	buckets map[K]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// maxBuckets is how many keys a limiter tracks.
const maxBuckets = 1 << 16

func newLimiter[K comparable](rate float64, burst int) *limiter[K] {
	return &limiter[K]{rate: rate, burst: float64(max(burst, 1)), buckets: make(map[K]*bucket)}
}

// allow takes a token of k's bucket at now. When there is none, it says
// how long until there is.
func (l *limiter[K]) allow(k K, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[k]
	if b == nil {
		if len(l.buckets) >= maxBuckets {
			l.prune(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[k] = b
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

func (l *limiter[K]) prune(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets { // map order is random
		if len(l.buckets) < maxBuckets*3/4 {
			break
		}
		delete(l.buckets, k)
	}
}
