package cdnbench_test

import (
	"os"
	"testing"

	"github.com/latticenet/lattice/cli"
	"github.com/latticenet/lattice/internal/bench/cdnbench"
)

// TestMain makes the test binary `lattice` when the environment says so:
// TestRunSmoke has the benchmark run it as `lattice cloud`, in a process
// of its own, as `lattice bench cdn` runs itself. (cli imports cdnbench,
// so only this external test package can import cli.)
func TestMain(m *testing.M) {
	if os.Getenv(cdnbench.RunLatticeEnv) == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
