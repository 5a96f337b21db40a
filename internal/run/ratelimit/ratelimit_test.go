package ratelimit

import (
	"testing"
	"time"
)

func TestAllow(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	l := New[string](2, 3) // 2 a second, bursts of 3
	steps := []struct {
		at       time.Duration
		key      string
		want     bool
		wantWait time.Duration
	}{
		{0, "a", true, 0},
		{0, "a", true, 0},
		{0, "a", true, 0},
		{0, "a", false, 500 * time.Millisecond}, // the burst is spent: one token takes half a second
		{0, "b", true, 0},                       // another key has its own bucket
		{250 * time.Millisecond, "a", false, 250 * time.Millisecond},
		{500 * time.Millisecond, "a", true, 0},
		{500 * time.Millisecond, "a", false, 500 * time.Millisecond},
		{time.Hour, "a", true, 0}, // refilled, but never past the burst:
		{time.Hour, "a", true, 0},
		{time.Hour, "a", true, 0},
		{time.Hour, "a", false, 500 * time.Millisecond},
	}
	for i, s := range steps {
		got, wait := l.Allow(s.key, t0.Add(s.at))
		if got != s.want || wait != s.wantWait {
			t.Errorf("step %d (%s at %v): got %v, wait %v; want %v, wait %v", i, s.key, s.at, got, wait, s.want, s.wantWait)
		}
	}
}

func TestExhaustedTakesNothing(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	l := New[string](1, 2)
	for range 5 {
		if ex, _ := l.Exhausted("a", t0); ex {
			t.Fatal("Exhausted on a full bucket: got true, want false")
		}
	}
	l.Allow("a", t0)
	l.Allow("a", t0)
	if ex, wait := l.Exhausted("a", t0); !ex || wait != time.Second {
		t.Errorf("Exhausted after the burst: got %v, %v; want true, 1s", ex, wait)
	}
}

func TestBoundedKeys(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	l := New[int](0.001, 2) // buckets refill slowly: pruning must drop non-full ones too
	for i := range maxBuckets + 10 {
		l.Allow(i, t0)
	}
	if n := len(l.buckets); n > maxBuckets {
		t.Errorf("buckets after %d keys: got %d, want at most %d", maxBuckets+10, n, maxBuckets)
	}
}
