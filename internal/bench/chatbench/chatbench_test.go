package chatbench

import (
	"context"
	"testing"
)

// TestRunSmall runs every measurement once at a small size, with the
// subscribers' sockets in this process: the benchmark command must keep
// working, and its figures must be figures.
func TestRunSmall(t *testing.T) {
	rep, err := Run(context.Background(), Config{Messages: 300, Concurrency: 8, Latency: 20, Subscribers: 500, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Median
	for name, v := range map[string]float64{
		"accepted/s": r.AcceptedPerSec, "latency p50": r.LatencyP50ms, "latency p99": r.LatencyP99ms,
		"heap bytes a subscriber": r.HeapBytesPerSubscriber,
	} {
		if v <= 0 {
			t.Errorf("%s = %v, want a positive figure", name, v)
		}
	}
	if r.Delivered != 500 {
		t.Errorf("%d of 500 subscribers got the message, want all", r.Delivered)
	}
}
