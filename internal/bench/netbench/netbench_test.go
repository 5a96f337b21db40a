package netbench

import (
	"context"
	"testing"
)

// TestRunSmall runs every measurement once at a small size: the benchmark
// command must keep working, and its figures must be figures.
func TestRunSmall(t *testing.T) {
	rep, err := Run(context.Background(), Config{Blocks: 400, Forks: 3, SyncBlocks: 2000, Rounds: 1, HTTPConc: 8})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Median
	for name, v := range map[string]float64{
		"single blocks/s": r.SingleBlocksPerSec, "confirmed blocks/s": r.ConfirmedBlocksPerSec, "ratio": r.Ratio,
		"single HTTP blocks/s": r.SingleHTTPBlocksPerSec, "confirmed HTTP blocks/s": r.ConfirmedHTTPBlocksPerSec, "HTTP ratio": r.HTTPRatio,
		"fork p50": r.ForkP50ms, "fork p99": r.ForkP99ms, "sync blocks/s": r.SyncBlocksPerSec,
	} {
		if v <= 0 {
			t.Errorf("%s = %v, want a positive figure", name, v)
		}
	}
	if r.SyncBlocks < 2000 {
		t.Errorf("synced %d blocks, want at least 2000", r.SyncBlocks)
	}
}
