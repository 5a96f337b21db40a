package netlab

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCluster starts a cluster, measures a few sends and checks the ledger
// every node holds: the harness's own smoke test.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real nodes")
	}
	c := StartCluster(t, ClusterOptions{Users: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sent := c.MeasureSends(ctx, LoadOptions{From: c.Users[0], Node: 1, Watch: c.All()}, 5)
	t.Log(LatencyFigure("confirm-smoke", sent))
	for _, s := range sent {
		if !s.Confirmed {
			t.Errorf("send %s (%v) not confirmed on every node within 10 s", s.Hash, s.Err)
		}
	}
	d, err := c.WaitOneLedger(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one ledger after %s", d)
	snaps := c.Snapshots(ctx, c.All(), nil)
	for _, s := range snaps {
		if s.Err != nil {
			t.Fatal(s.Err)
		}
		if got, want := len(s.Frontiers), len(c.Nodes)+1+len(c.Users)+1; got != want {
			t.Errorf("node %d holds %d accounts, want %d (nodes, genesis, users, warm-up)", s.Node, got, want)
		}
	}
	if _, err := c.Audit(ctx); err != nil && !errors.Is(err, ErrNoNetworkAudit) {
		t.Error(err)
	}
}
