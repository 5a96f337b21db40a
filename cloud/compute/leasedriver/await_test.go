package leasedriver

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/machine/agent"
)

// reporting is a Market whose provider reports one VM state; the driver's
// reading of it is what is tested.
type reporting struct{ m Machine }

func (r reporting) Machine(context.Context, string) (Machine, error) { return r.m, nil }
func (reporting) Buy(context.Context, Resources, time.Duration, []string) (Lease, error) {
	panic("not asked")
}
func (reporting) Lease(context.Context, string) (LeaseState, error) { panic("not asked") }
func (reporting) Exec(context.Context, string, string) (agent.ExecResult, error) {
	panic("not asked")
}
func (reporting) Dial(context.Context, string, int) (net.Conn, error) { panic("not asked") }
func (reporting) Settle(context.Context, string) error                { panic("not asked") }
func (reporting) End(context.Context, string) (bool, error)           { panic("not asked") }

// TestAwaitRunningSaysWhy: a VM its provider reports stopped or in error
// ends the wait with a reason, never an empty one.
func TestAwaitRunningSaysWhy(t *testing.T) {
	ends := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		m    Machine
		want string
	}{
		{Machine{Status: "error", Error: "qemu: exit status 1"}, "the provider reports its VM error: qemu: exit status 1"},
		{Machine{Status: "stopped", EndsAt: ends}, "the provider reports its VM stopped: its lease ended before the VM was seen running (at 2026-12-03T06:00:00Z)"},
		{Machine{Status: "stopped"}, "the provider reports its VM stopped: its lease ended before the VM was seen running"},
		{Machine{Status: "stopped", Error: "the lease's accept is not in the ledger"}, "the provider reports its VM stopped: the lease's accept is not in the ledger"},
	} {
		d, err := New(Config{Market: reporting{tt.m}, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = d.awaitRunning(ctx, strings.Repeat("ab", 32))
		cancel()
		if err == nil || err.Error() != tt.want {
			t.Errorf("%+v: %v, want %q", tt.m, err, tt.want)
		}
	}
}
