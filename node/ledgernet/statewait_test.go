package ledgernet

import (
	"slices"
	"testing"
	"time"
)

// TestStateWaits: the indices held come out in one look, in order, without
// asking past the first that is not held; an index keeps the time of its
// first wait; the ones whose time has passed come out as expired, and
// nothing comes out twice.
func TestStateWaits(t *testing.T) {
	w := newStateWaits()
	t0 := time.Unix(1_800_000_000, 0)
	for _, i := range []uint64{7, 3, 5, 1 << 40} {
		w.watch(i, t0.Add(time.Minute))
	}
	w.watch(9, t0.Add(10*time.Second))
	w.watch(7, t0.Add(time.Hour)) // a later block naming 7 does not prolong its wait
	select {
	case <-w.wake:
	default:
		t.Fatal("watch did not wake the watcher")
	}

	tip := uint64(5)
	var asked []uint64
	held := func(i uint64) bool { asked = append(asked, i); return i <= tip }
	waited := func(uint64) bool { return true }
	came, expired := w.due(t0, held, waited)
	if !slices.Equal(came, []uint64{3, 5}) || len(expired) != 0 {
		t.Fatalf("at the start, tip 5: came %v, expired %v", came, expired)
	}
	if !slices.Equal(asked, []uint64{3, 5, 7}) {
		t.Errorf("asked the state chain for %v, want 3, 5 and 7 (the first missing) alone", asked)
	}
	if w.len() != 3 {
		t.Fatalf("%d waited for, want 3 (7, 9, 2^40)", w.len())
	}

	came, expired = w.due(t0.Add(30*time.Second), held, waited)
	if len(came) != 0 || !slices.Equal(expired, []uint64{9}) {
		t.Fatalf("after 30 s: came %v, expired %v, want 9 expired", came, expired)
	}
	w.watch(6, t0.Add(2*time.Minute))
	tip = 6
	came, expired = w.due(t0.Add(61*time.Second), held, waited)
	if !slices.Equal(came, []uint64{6}) || !slices.Equal(expired, []uint64{7, 1 << 40}) {
		t.Fatalf("after 61 s, tip 6: came %v, expired %v, want 6 come and 7 (its first wait's time) and 2^40 expired", came, expired)
	}
	if w.len() != 0 {
		t.Fatalf("%d still waited for", w.len())
	}
	if came, expired = w.due(t0.Add(time.Hour), held, waited); len(came)+len(expired) != 0 {
		t.Fatalf("nothing waited for gave came %v, expired %v", came, expired)
	}
}

// TestStateWaitsForgetsOrphans: an index no block waits for any more (the
// unchecked buffer evicted them) is forgotten at the next look, not
// reported expired two minutes later; one still waited for stays.
func TestStateWaitsForgetsOrphans(t *testing.T) {
	w := newStateWaits()
	t0 := time.Unix(1_800_000_000, 0)
	for _, i := range []uint64{4, 8, 9} {
		w.watch(i, t0.Add(time.Minute))
	}
	blocks := map[uint64]bool{8: true} // 4's and 9's blocks were evicted
	var asked []uint64
	waited := func(i uint64) bool { asked = append(asked, i); return blocks[i] }
	came, expired := w.due(t0, func(uint64) bool { return false }, waited)
	if len(came)+len(expired) != 0 {
		t.Fatalf("came %v, expired %v, want neither", came, expired)
	}
	if w.len() != 1 {
		t.Fatalf("%d waited for, want 1 (8)", w.len())
	}
	if !slices.Equal(asked, []uint64{4, 8, 9}) {
		t.Errorf("asked the buffer about %v", asked)
	}
	came, expired = w.due(t0.Add(2*time.Minute), func(uint64) bool { return false }, waited)
	if len(came) != 0 || !slices.Equal(expired, []uint64{8}) {
		t.Fatalf("after 2 minutes: came %v, expired %v, want 8 expired", came, expired)
	}
}
