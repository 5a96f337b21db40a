package cli

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/latticenet/lattice/ledgerbench"
)

func runBench(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "ledger" {
		return usageErr("want `lattice bench ledger [flags]`")
	}
	f := newFlags(e, "bench ledger", "bench ledger [--blocks N] [--accounts N] [--concurrency N] [flags]")
	blocks := f.Int("blocks", 40000, "measured blocks per phase")
	accounts := f.Int("accounts", 1024, "accounts, paying each other in pairs")
	conc := f.Int("concurrency", 64, "blocks in flight")
	dir := f.String("dir", "", "data directory for the benchmark nodes (default: a temporary directory)")
	asJSON := f.Bool("json", false, "print machine-readable JSON")
	phases := f.String("phases", "all", "what to measure: all, http or inprocess (one alone is for profiling)")
	cpuProfile := f.String("cpuprofile", "", "write a CPU profile of the run to this file")
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	if *accounts < 2 || *conc < 1 || *blocks < 1 {
		return usageErr("--blocks, --concurrency must be positive and --accounts at least 2")
	}
	if *cpuProfile != "" {
		pf, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	r, err := ledgerbench.Run(ctx, ledgerbench.Config{Blocks: *blocks, Accounts: *accounts, Concurrency: *conc, Dir: *dir, Progress: e.stderr, Phases: *phases})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "cpus %d, concurrency %d, accounts %d\n", r.CPUs, r.Concurrency, r.Accounts)
	fmt.Fprintf(e.stdout, "ed25519 verify (all cores)  %9.0f /s\n", r.VerifyPerSec)
	fmt.Fprintf(e.stdout, "HTTP ingestion              %9.0f blocks/s  p50 %.2f ms  p99 %.2f ms  (%d blocks in %.2f s)\n",
		r.HTTP.PerSecond, r.HTTP.P50ms, r.HTTP.P99ms, r.HTTP.Blocks, r.HTTP.Seconds)
	fmt.Fprintf(e.stdout, "in-process ingestion        %9.0f blocks/s  p50 %.2f ms  p99 %.2f ms  (%d blocks in %.2f s)\n",
		r.InProcess.PerSecond, r.InProcess.P50ms, r.InProcess.P99ms, r.InProcess.Blocks, r.InProcess.Seconds)
	fmt.Fprintf(e.stdout, "HTTP / verify               %9.2f  (target >= 0.40)\n", r.HTTPRatio)
	fmt.Fprintf(e.stdout, "in-process / verify         %9.2f  (target >= 0.70)\n", r.InProcessRatio)
	return nil
}
