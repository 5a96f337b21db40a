package agent

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// guestMainEnv makes the test binary, run again by TestGuestMainDiesOnSIGTERM,
// do what the lattice command does before it runs the agent.
const guestMainEnv = "LATTICE_TEST_GUEST_MAIN"

func init() {
	if os.Getenv(guestMainEnv) == "1" {
		// As cli.Main: SIGTERM ends a context, which the agent ignores.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		_ = ctx
		os.Exit(GuestMain()) // no port here: it looks for one for 5 s, then exits 1
	}
}

// TestGuestMainDiesOnSIGTERM: the agent, started as the lattice command
// starts it (SIGTERM caught for a context), still dies at once on
// SIGTERM, as init expects at shutdown, instead of carrying on.
func TestGuestMainDiesOnSIGTERM(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), guestMainEnv+"=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Fatalf("agent after SIGTERM: %v, want killed by SIGTERM", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("agent took %v to die on SIGTERM", d)
	}
}
