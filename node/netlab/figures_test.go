package netlab

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestFigures measures the network's figures on one cluster, with more
// sends than the scenarios make: confirmation latency (submission until
// confirmed on every node watched) on a healthy network, on the majority
// side of a 4|1 cut, and on links of 100 ms ± 20 ms losing 5% of frames;
// and the time from a heal to one confirmed ledger. It runs only with
// LATTICE_PARTITION=figures:
//
//	LATTICE_PARTITION=figures go test -run TestFigures -v ./internal/netlab | grep '^ *figures_test.go:[0-9]*: figure:'
func TestFigures(t *testing.T) {
	if os.Getenv("LATTICE_PARTITION") != "figures" {
		t.Skip("measures figures with LATTICE_PARTITION=figures")
	}
	set := currentSet(t)
	const sends, forks = 100, 5
	c, w := startScenario(t, set, nil, forks+2)
	ctx := context.Background()
	all := c.All()

	t.Log(LatencyFigure("confirm-healthy", c.MeasureSends(ctx, LoadOptions{From: c.Users[0], Node: 0, Watch: all}, sends)))

	majority, minority := []int{0, 1, 2, 3}, []int{4}
	c.Lab.Partition(majority, minority)
	cut := time.Now()
	for f := range forks {
		if _, err := c.Fork(ctx, c.Users[2+f], majority[f%len(majority)], minority[0]); err != nil {
			t.Error(err)
		}
	}
	other := c.StartLoad(LoadOptions{From: c.Users[1], Node: minority[0], MaxWait: 5 * time.Second})
	t.Log(LatencyFigure("confirm-majority-4of5", c.MeasureSends(ctx, LoadOptions{From: c.Users[0], Node: 0, Watch: majority}, sends)))
	sleep(ctx, time.Until(cut.Add(set.hold)))
	other.Stop()
	c.Lab.Heal()
	if d, err := c.WaitOneLedger(ctx, set.oneLedger); err != nil {
		t.Error(err)
	} else {
		t.Log(DurationFigure("one-ledger-after-heal/cut-4-1", d))
	}

	c.Lab.Impair(100*time.Millisecond, 20*time.Millisecond, 0.05)
	t.Log(LatencyFigure("confirm-impaired-100ms-20ms-loss5", c.MeasureSends(ctx,
		LoadOptions{From: c.Users[0], Node: 0, Watch: all, MaxWait: 30 * time.Second}, sends)))
	c.Lab.ClearImpairment()
	if d, err := c.WaitOneLedger(ctx, set.oneLedger); err != nil {
		t.Error(err)
	} else {
		t.Log(DurationFigure("one-ledger-after-impairment", d))
	}
	w.Close()
	for _, cf := range w.Conflicts() {
		t.Errorf("conflicting confirmations: %s", cf)
	}
}
