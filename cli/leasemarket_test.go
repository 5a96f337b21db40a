package cli

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/compute/leasedriver"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// TestLeaseMarketBoundsCalls: a node that takes the connection and never
// answers fails each short call of the cloud's lease backend within its
// bound, so that the driver's loops ask again instead of hanging.
func TestLeaseMarketBoundsCalls(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	m := newLeaseMarket(srv.URL, wallet.NewKey())
	m.timeout = 200 * time.Millisecond
	lease := ledger.Hash{1}.String()
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"lease", func(ctx context.Context) error { _, err := m.Lease(ctx, lease); return err }},
		{"machine", func(ctx context.Context) error { _, err := m.Machine(ctx, lease); return err }},
		{"settle", func(ctx context.Context) error { return m.Settle(ctx, lease) }},
		{"end", func(ctx context.Context) error { _, err := m.End(ctx, lease); return err }},
		{"buy", func(ctx context.Context) error {
			_, err := m.Buy(ctx, leasedriver.Resources{VCPUs: 1, MemoryMB: 512, DiskGB: 5}, time.Hour, nil)
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			began := time.Now()
			err := c.call(ctx)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want the call's deadline", err)
			}
			if ctx.Err() != nil {
				t.Fatalf("the call ran to its caller's deadline (%s), not its own bound", time.Since(began))
			}
		})
	}
}
