// Package ratelimit holds token buckets by key (an account, a peer, a
// source address): what one client may ask of a server, and how long it
// must wait for more. Pure and safe for concurrent use; the servers decide
// what a refusal answers.
package ratelimit

import (
	"sync"
	"time"
)

// Limiter is a token bucket per key: rate tokens a second, at most burst
// saved up, a key's bucket full when first seen. It tracks at most
// maxBuckets keys: past that it forgets the keys whose buckets are full
// again, then, if an attacker cycling through keys keeps it full,
// arbitrary ones (a forgotten key starts with a full bucket, which only
// lets that key spend its burst again).
type Limiter[K comparable] struct {
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

// New returns a limiter of rate tokens a second, bursts of burst (at
// least 1).
func New[K comparable](rate float64, burst int) *Limiter[K] {
	return &Limiter[K]{rate: rate, burst: float64(max(burst, 1)), buckets: make(map[K]*bucket)}
}

// Rate returns the limiter's tokens a second.
func (l *Limiter[K]) Rate() float64 { return l.rate }

// Allow takes a token of k's bucket at now. When there is none, it says
// how long until there is.
func (l *Limiter[K]) Allow(k K, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.fill(k, now)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, l.wait(b)
}

// Exhausted reports whether k's bucket has no token at now, taking none:
// for costs counted only when they happen (a failed authentication), the
// caller checks first and Allows after.
func (l *Limiter[K]) Exhausted(k K, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.fill(k, now)
	if b.tokens >= 1 {
		return false, 0
	}
	return true, l.wait(b)
}

func (l *Limiter[K]) wait(b *bucket) time.Duration {
	return time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

// fill returns k's bucket with the tokens earned until now.
func (l *Limiter[K]) fill(k K, now time.Time) *bucket {
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
	return b
}

func (l *Limiter[K]) prune(now time.Time) {
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
