package cli

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"text/tabwriter"

	"github.com/latticenet/lattice/ledgerbench"
)

func runBench(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "ledger" {
		return usageErr("want `lattice bench ledger [flags]`")
	}
	f := newFlags(e, "bench ledger", "bench ledger [--blocks N] [--accounts N] [--concurrency N] [flags]")
	blocks := f.Int("blocks", 40000, "measured blocks per phase")
	accounts := f.Int("accounts", 1024, "accounts, paying each other in pairs")
	conc := f.Int("concurrency", 64, "HTTP requests in flight")
	inConc := f.Int("inprocess-concurrency", 128, "blocks in flight in the in-process phase")
	rounds := f.Int("rounds", 3, "measurement rounds; the report gives medians")
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
	r, err := ledgerbench.Run(ctx, ledgerbench.Config{Blocks: *blocks, Accounts: *accounts, Concurrency: *conc, InProcConc: *inConc, Rounds: *rounds, Dir: *dir, Progress: e.stderr, Phases: *phases})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "cpus %d, accounts %d, %d blocks per phase, HTTP concurrency %d, in-process concurrency %d\n\n",
		r.CPUs, r.Accounts, *blocks, r.Concurrency, r.InProcConc)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\tverify/s\tHTTP blocks/s\tp50 ms\tp99 ms\tHTTP/verify\tin-process blocks/s\tp50 ms\tp99 ms\tin-process/verify\t")
	for i, rd := range r.Rounds {
		fmt.Fprintf(tw, "%d\t%.0f..%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.0f\t%.2f\t%.2f\t%.2f\t\n", i+1,
			slices.Min(rd.Verify), slices.Max(rd.Verify), rd.HTTP.PerSecond, rd.HTTP.P50ms, rd.HTTP.P99ms, rd.HTTPRatio,
			rd.InProcess.PerSecond, rd.InProcess.P50ms, rd.InProcess.P99ms, rd.InProcessRatio)
	}
	fmt.Fprintf(tw, "median\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.0f\t%.2f\t%.2f\t%.2f\t\n", r.VerifyPerSec,
		r.HTTP.PerSecond, r.HTTP.P50ms, r.HTTP.P99ms, r.HTTPRatio, r.InProcess.PerSecond, r.InProcess.P50ms, r.InProcess.P99ms, r.InProcessRatio)
	tw.Flush()
	fmt.Fprintf(e.stdout, "\ntargets: HTTP/verify >= 0.40, in-process/verify >= 0.70\n")
	return nil
}
