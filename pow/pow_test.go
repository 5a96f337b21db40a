package pow

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
)

func TestSolveMeetsThreshold(t *testing.T) {
	for _, th := range []ledger.Threshold{0, ledger.DevWork.Receive, ledger.DevWork.Send} {
		h := ledger.Hash{1, 2, 3, byte(th >> 56)}
		n, err := Solve(context.Background(), h, th)
		if err != nil {
			t.Fatalf("Solve(%s): %v", th, err)
		}
		if !th.Met(h, n) {
			t.Errorf("Solve(%s) = %d, whose work %016x does not meet it", th, n, ledger.WorkValue(h, n))
		}
	}
}

func TestSolveHonoursContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	// A threshold of all ones is met by no nonce in practice.
	_, err := Solve(ctx, ledger.Hash{9}, ledger.Threshold(^uint64(0)))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Solve with an expired context: got %v, want DeadlineExceeded", err)
	}
}
