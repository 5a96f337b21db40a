package ledgerbench

import (
	"context"
	"testing"
	"time"
)

// TestRunSmall runs the whole benchmark on a tiny workload. It checks that
// every phase ingests every block and the report is complete; it asserts
// nothing about speed.
func TestRunSmall(t *testing.T) {
	r, err := Run(context.Background(), Config{Blocks: 300, Accounts: 16, Concurrency: 4, InProcConc: 8,
		Rounds: 2, VerifyTime: 50 * time.Millisecond, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rounds) != 2 {
		t.Fatalf("%d rounds, want 2", len(r.Rounds))
	}
	for i, rd := range r.Rounds {
		if rd.HTTP.Blocks != 300 || rd.InProcess.Blocks != 300 {
			t.Errorf("round %d ingested %d over HTTP and %d in process, want 300 each", i, rd.HTTP.Blocks, rd.InProcess.Blocks)
		}
		if len(rd.Verify) != 3 || rd.HTTPRatio <= 0 || rd.InProcessRatio <= 0 {
			t.Errorf("round %d incomplete: %+v", i, rd)
		}
	}
	if r.VerifyPerSec <= 0 || r.HTTP.P99ms < r.HTTP.P50ms {
		t.Errorf("report inconsistent: %+v", r)
	}
}
