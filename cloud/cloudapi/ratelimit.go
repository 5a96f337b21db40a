package cloudapi

import (
	"sync"
	"time"
)

// limiter is a token bucket per account: rate tokens a second, up to
// burst. Idle accounts are forgotten after a while so the map stays small.
type limiter struct {
	rate  float64
	burst float64
	mu    sync.Mutex
	accts map[string]*tokens
	swept time.Time
}

type tokens struct {
	n    float64
	last time.Time
}

func newLimiter(rate float64, burst int) *limiter {
	return &limiter{rate: rate, burst: float64(burst), accts: make(map[string]*tokens)}
}

// take spends a token of account's bucket at time now. If there is none it
// says how long until there will be.
func (l *limiter) take(account string, now time.Time) (ok bool, wait time.Duration) {
	if l.rate <= 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// An account idle long enough to have refilled completely is
	// forgotten; sooner would hand it a full burst early.
	idle := max(time.Minute, time.Duration(l.burst/l.rate*float64(time.Second)))
	if now.Sub(l.swept) > idle {
		for a, t := range l.accts {
			if now.Sub(t.last) > idle {
				delete(l.accts, a)
			}
		}
		l.swept = now
	}
	t, found := l.accts[account]
	if !found {
		t = &tokens{n: l.burst, last: now}
		l.accts[account] = t
	}
	t.n = min(l.burst, t.n+now.Sub(t.last).Seconds()*l.rate)
	t.last = now
	if t.n >= 1 {
		t.n--
		return true, 0
	}
	return false, time.Duration((1 - t.n) / l.rate * float64(time.Second))
}
