package leasedriver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/compute/vmhost"
	"github.com/latticenet/lattice/machine/agent"
)

// scripted is a Market whose provider reports a VM through a script of
// states (the last one repeats) and answers the reboot command as told.
type scripted struct {
	reporting
	mu      sync.Mutex
	states  []Machine
	execRes agent.ExecResult
	execErr error
	execs   []string
}

func (s *scripted) Machine(context.Context, string) (Machine, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.states[0]
	if len(s.states) > 1 && (st.Status != "running" || len(s.execs) > 0) {
		// Past the first running state only once the command went.
		s.states = s.states[1:]
	}
	return st, nil
}

func (s *scripted) Exec(_ context.Context, _, command string) (agent.ExecResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.execs = append(s.execs, command)
	return s.execRes, s.execErr
}

// TestReboot: a leased VM's reboot runs the guest's reboot through the
// node and waits until its provider runs it again; every other course
// ends with a reason, and a lease that ends meanwhile is vmhost.ErrEnded.
func TestReboot(t *testing.T) {
	running := func(restarts int) Machine { return Machine{Status: "running", Restarts: restarts} }
	booting := Machine{Status: "provisioning", Restarts: 0}
	for _, tt := range []struct {
		name    string
		states  []Machine
		execRes agent.ExecResult
		execErr error
		execs   int
		want    string // "" for success; else a part of the error
		ended   bool
	}{
		{name: "answered, then booted again", states: []Machine{running(0), booting, running(1)}, execs: 1},
		{name: "its answer lost with the guest", states: []Machine{running(0), booting, running(1)},
			execErr: ErrNotRunning, execs: 1},
		{name: "timed out while it went down", states: []Machine{running(2), running(3)},
			execRes: agent.ExecResult{ExitCode: -1, TimedOut: true}, execs: 1},
		{name: "booting again already: waited for first", states: []Machine{booting, running(1), booting, running(2)}, execs: 1},
		{name: "the node refuses the command", states: []Machine{running(0)},
			execErr: errors.New("node: too many commands at once on this VM (HTTP 429)"), execs: 1, want: "asking the guest to reboot: node: too many commands"},
		{name: "the reboot command fails", states: []Machine{running(0)},
			execRes: agent.ExecResult{ExitCode: 1, Stderr: []byte("reboot: not permitted\n")}, execs: 1, want: "the guest's reboot exited 1: reboot: not permitted"},
		{name: "the lease ends meanwhile", states: []Machine{running(0), booting, {Status: "stopped"}}, execs: 1,
			want: "lease " + strings.Repeat("ab", 32) + " ended", ended: true},
		{name: "it fails to come back", states: []Machine{running(0), booting, {Status: "error", Error: "boot: the agent never answered"}}, execs: 1,
			want: "the provider reports its VM in error: boot: the agent never answered"},
		{name: "in error before", states: []Machine{{Status: "error", Error: "x"}}, want: "in error: x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mk := &scripted{states: tt.states, execRes: tt.execRes, execErr: tt.execErr}
			d, err := New(Config{Market: mk, Dir: t.TempDir(), Poll: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			m := &machine{d: d, lease: Lease{Hash: strings.Repeat("ab", 32)}, done: make(chan struct{}), quit: make(chan struct{})}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err = d.Reboot(ctx, m)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Reboot: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Reboot: %v, want an error saying %q", err, tt.want)
			case errors.Is(err, vmhost.ErrEnded) != tt.ended:
				t.Fatalf("Reboot: %v: ErrEnded %v, want %v", err, errors.Is(err, vmhost.ErrEnded), tt.ended)
			}
			if len(mk.execs) != tt.execs || tt.execs > 0 && mk.execs[0] != RebootCommand {
				t.Fatalf("commands sent: %q, want %d of %q", mk.execs, tt.execs, RebootCommand)
			}
		})
	}
}
