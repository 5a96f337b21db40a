package netlab

import (
	"fmt"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0 to 100) of ds by the nearest
// rank, or 0 for no durations.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(p/100*float64(len(s))+0.999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

// LatencyFigure formats the confirmation latencies of sends as one line
// that tools can grep for:
//
//	figure: NAME p50=412ms p99=1.03s max=1.2s n=50 unconfirmed=0 failed=0
//
// n counts the sends confirmed within their wait; unconfirmed those that
// were not, failed those the node refused or could not be reached for.
func LatencyFigure(name string, sent []Sent) string {
	var ds []time.Duration
	unconfirmed, failed := 0, 0
	for _, s := range sent {
		switch {
		case s.Err != nil:
			failed++
		case s.Confirmed:
			ds = append(ds, s.Latency)
		default:
			unconfirmed++
		}
	}
	return fmt.Sprintf("figure: %s p50=%s p99=%s max=%s n=%d unconfirmed=%d failed=%d", name,
		roundFigure(Percentile(ds, 50)), roundFigure(Percentile(ds, 99)), roundFigure(Percentile(ds, 100)), len(ds), unconfirmed, failed)
}

// DurationFigure formats one measured duration as a greppable line:
//
//	figure: NAME t=4.21s
func DurationFigure(name string, d time.Duration) string {
	return fmt.Sprintf("figure: %s t=%s", name, roundFigure(d))
}

func roundFigure(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
