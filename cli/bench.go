package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/internal/bench/blockload"
	"github.com/latticenet/lattice/internal/bench/cdnbench"
	"github.com/latticenet/lattice/internal/bench/chatbench"
	"github.com/latticenet/lattice/internal/bench/dnsbench"
	"github.com/latticenet/lattice/internal/bench/leasebench"
	"github.com/latticenet/lattice/internal/bench/ledgerbench"
	"github.com/latticenet/lattice/internal/bench/netbench"
	"github.com/latticenet/lattice/internal/bench/providerbench"
	"github.com/latticenet/lattice/internal/bench/s3bench"
	"github.com/latticenet/lattice/internal/bench/vmbench"
	"github.com/latticenet/lattice/ledger"
)

const benchUsage = `Usage: lattice bench COMMAND [flags]

Benchmarks that start their own nodes or servers on this machine, run
several rounds and report each and their median, or JSON with --json. See
docs/benchmarks.md for what each measures and its targets.

Commands:
  ledger     ledger ingestion: blocks a second through HTTP and in process
  network    the ledger network: confirmation, forks and sync on 3 nodes
  lease      lease blocks a second against sends, and a lease's time to its confirmed accept
  chat       chat: accepted messages a second, delivery latency, subscribers
  s3         S3 throughput of lattice, optionally against MinIO
  dns        DNS queries a second of lattice, NSD and PowerDNS, with dnsperf
  cdn        CDN cache hits a second of lattice's edge and nginx, with wrk
  compute    a VM's start to its first exec, against a bare QEMU boot
  provider   a lease's VM over the network: to exec-ready, exec and tunnels, direct and relayed

Examples:
  lattice bench ledger --rounds 5
  lattice bench network --blocks 12000 --forks 30 --sync-blocks 1000000
  lattice bench chat --json
  lattice bench s3 --minio /tmp/minio-bin/minio
  lattice bench dns --rounds 3
  lattice bench cdn --rounds 3
  lattice bench provider --rounds 3

Run ` + "`lattice bench COMMAND -h`" + ` for a command's flags.
`

func runBench(ctx context.Context, e *env, args []string) error {
	const want = "want `lattice bench ledger [flags]`, `lattice bench network [flags]`, `lattice bench lease [flags]`, `lattice bench chat [flags]`, `lattice bench s3 [flags]`, `lattice bench dns [flags]`, `lattice bench cdn [flags]`, `lattice bench compute [flags]` or `lattice bench provider [flags]`"
	if done, err := groupHelp(e, args, benchUsage, want); done {
		return err
	}
	if len(args) > 0 {
		switch args[0] {
		case "ledger":
			return runBenchLedger(ctx, e, args[1:])
		case "s3":
			return runBenchS3(ctx, e, args[1:])
		case "network":
			return runBenchNetwork(ctx, e, args[1:])
		case "lease":
			return runBenchLease(ctx, e, args[1:])
		case "chat":
			return runBenchChat(ctx, e, args[1:])
		case "dns":
			return runBenchDNS(ctx, e, args[1:])
		case "cdn":
			return runBenchCDN(ctx, e, args[1:])
		case "compute":
			return runBenchCompute(ctx, e, args[1:])
		case "provider":
			return runBenchProvider(ctx, e, args[1:])
		case "drive":
			// Not for people: bench ledger and bench network run it as
			// their HTTP load generator, in a process of its own, and
			// hand it its work on stdin.
			if len(args) != 1 {
				return usageErr("want `lattice bench drive`, with its job on stdin")
			}
			return blockload.ServeProcess(ctx, os.Stdin, e.stdout)
		case "chat-subscribers":
			// Not for people: bench chat runs it to hold event streams
			// beyond its own open-file limit.
			if len(args) != 4 {
				return usageErr("want `lattice bench chat-subscribers HOST ACCOUNT N`")
			}
			a, err := ledger.ParseAddress(args[2])
			n, nerr := strconv.Atoi(args[3])
			if err != nil || nerr != nil {
				return usageErr("want `lattice bench chat-subscribers HOST ACCOUNT N`")
			}
			return chatbench.HoldStreams(args[1], a, n, os.Stdin, e.stdout)
		}
	}
	return usageErr("%s", want)
}

func runBenchChat(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "bench chat", "bench chat [--messages N] [--latency N] [--subscribers N] [--rounds N] [flags]", `
Starts 2 nodes on loopback and measures, per round, the messages one
accepts a second, the delivery latency from a send at one node to the
event at the other, and the memory of many open event streams.`, `  lattice bench chat
  lattice bench chat --rounds 5 --subscribers 20000 --json
`)
	messages := f.Int("messages", 20000, "messages submitted to one node per round, to measure how many it accepts a second")
	concurrency := f.Int("concurrency", 64, "requests in flight while submitting them")
	latency := f.Int("latency", 300, "messages timed from a send at one node to the event at another, per round")
	subs := f.Int("subscribers", 10000, "event streams held open on one node at once")
	rounds := f.Int("rounds", 3, "measurement rounds; the report gives medians")
	asJSON := f.jsonFlag()
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	if *messages < 1 || *concurrency < 1 || *latency < 1 || *subs < 1 || *rounds < 1 {
		return usageErr("--messages, --concurrency, --latency, --subscribers and --rounds must be positive")
	}
	r, err := chatbench.Run(ctx, chatbench.Config{Messages: *messages, Concurrency: *concurrency, Latency: *latency,
		Subscribers: *subs, Rounds: *rounds, Progress: e.stderr})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "2 nodes on loopback, %d messages, %d timed deliveries, %d subscribers per round, %d cpus\n\n", *messages, *latency, *subs, runtime.NumCPU())
	tw := tableRight(e.stdout)
	fmt.Fprintln(tw, "round\taccepted msgs/s\tdelivery p50 ms\tp99 ms\tsubscribers\tdelivered\theap+stack B/sub\t")
	row := func(name string, rd chatbench.Round) {
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%.1f\t%d\t%d\t%.0f\t\n", name, rd.AcceptedPerSec, rd.LatencyP50ms, rd.LatencyP99ms,
			rd.Subscribers, rd.Delivered, rd.HeapBytesPerSubscriber)
	}
	for i, rd := range r.Rounds {
		row(fmt.Sprint(i+1), rd)
	}
	row("median", r.Median)
	tw.Flush()
	fmt.Fprintf(e.stdout, "\ntargets: delivery p50 < 20 ms, >= 10,000 subscribers with bounded memory\n")
	return nil
}

func runBenchCompute(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "bench compute", "bench compute [--rounds N] [--execs N] [--image NAME]... [--accel kvm|tcg] [flags]", `
Starts real QEMU microvms of each image (minimal and debian-12;
docs/machines.md) and measures, per round, the time from Start until the
guest agent runs a command (and, for debian-12, until its SSH server
answers), against a bare QEMU booting the same kernel and initramfs to its
first process (the floor), and the round trip of an exec through the
agent. Images are built first if needed (reported apart), in the user's
cache directory.`, `  lattice bench compute
  lattice bench compute --rounds 5 --json
  lattice bench compute --image minimal
`)
	rounds := f.Int("rounds", 3, "VMs started per image, one a round; the report gives medians")
	execs := f.Int("execs", 200, "exec round trips timed per round")
	accel := f.String("accel", "", "force the accelerator: kvm or tcg (default: KVM when it works here)")
	var images stringList
	f.Var(&images, "image", "an image to measure (repeatable; default minimal and debian-12)")
	asJSON := f.jsonFlag()
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	if *rounds < 1 || *execs < 1 {
		return usageErr("--rounds and --execs must be positive")
	}
	if *accel != "" && *accel != "kvm" && *accel != "tcg" {
		return usageErr("--accel %q: want kvm or tcg", *accel)
	}
	for _, img := range images {
		if img != "minimal" && img != "debian-12" {
			return usageErr("--image %q: want minimal or debian-12", img)
		}
	}
	r, err := vmbench.Run(ctx, vmbench.Config{Rounds: *rounds, Execs: *execs, Accel: *accel, Images: images, Progress: e.stderr})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "1 vCPU, 256 MiB, accelerator %s, %d execs per round, %d cpus; driver start (KVM probed) %.2f s\n",
		r.Accel, *execs, runtime.NumCPU(), r.ImageBuildS)
	for _, img := range r.Images {
		fmt.Fprintf(e.stdout, "\n%s (image ready in %.2f s: built, or found in the cache)\n", img.Image, img.PrepareS)
		tw := tableRight(e.stdout)
		ssh := img.Median.SSHReadyS > 0
		head := "round\tcreate → exec-ready s\tbare qemu boot s\tratio\texec p50 ms\texec p99 ms\t"
		if ssh {
			head += "create → ssh banner s\t"
		}
		fmt.Fprintln(tw, head)
		row := func(name string, rd vmbench.Round) {
			fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t", name, rd.ReadyS, rd.FloorS, rd.Ratio, rd.ExecP50ms, rd.ExecP99ms)
			if ssh {
				fmt.Fprintf(tw, "%.2f\t", rd.SSHReadyS)
			}
			fmt.Fprintln(tw)
		}
		for i, rd := range img.Rounds {
			row(fmt.Sprint(i+1), rd)
		}
		row("median", img.Median)
		tw.Flush()
	}
	fmt.Fprintf(e.stdout, "\ntargets: create → exec-ready under TCG: minimal < 3 s, debian-12 < 10 s; on KVM: minimal < 1 s\n")
	return nil
}

func runBenchProvider(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "bench provider", "bench provider [--leases N] [--execs N] [--mib N] [--rounds N] [flags]", `
Starts 3 nodes on loopback, node 2 a provider running its leases' VMs
(real QEMU microvms of the minimal image) and node 0 a relay, and
measures, per round on a new network: a lease posted at node 1 to a
command run in its VM (asked of the provider), an exec's round trip
through node 1, and the throughput of a tunnel into the guest and out of
it through the provider's own node (a port-forward on its host: the
floor), through node 1 directly connected to the provider's node, and
through node 1 by the relay. Needs QEMU and Debian's kernel, as lattice
bench compute does.`, "  lattice bench provider\n  lattice bench provider --rounds 5 --mib 64 --json\n")
	leases := f.Int("leases", 3, "leases timed to exec-ready per round")
	execs := f.Int("execs", 50, "exec round trips through node 1 per round")
	mib := f.Int("mib", 32, "MiB each way of each tunnel")
	rounds := f.Int("rounds", 3, "rounds, each on a new network; the report gives medians")
	asJSON := f.jsonFlag()
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	if *leases < 1 || *execs < 1 || *mib < 1 || *rounds < 1 {
		return usageErr("--leases, --execs, --mib and --rounds must be positive")
	}
	if *mib > 900 {
		// A relayed connection carries at most 1 GiB each way, exec
		// traffic and framing included (p2p.RelayLimit).
		return usageErr("--mib %d: at most 900", *mib)
	}
	r, err := providerbench.Run(ctx, providerbench.Config{Leases: *leases, Execs: *execs, MiB: *mib, Rounds: *rounds, Progress: e.stderr})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "%d leases, %d execs, %d MiB each way per tunnel, %d cpus; MB/s up / down\n", r.Leases, r.Execs, r.MiB, runtime.NumCPU())
	tw := tableRight(e.stdout)
	fmt.Fprintln(tw, "round\tlease → exec-ready p50 s\tmax s\texec via node 1 p50 ms\tp99 ms\tlocal\tdirect\tratio\trelayed\tratio\t")
	row := func(name string, rd providerbench.Round) {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.1f\t%.1f\t%.1f / %.1f\t%.1f / %.1f\t%.2f\t%.1f / %.1f\t%.2f\t\n", name, rd.ReadyP50s, rd.ReadyMaxS,
			rd.ExecP50ms, rd.ExecP99ms, rd.Local.UpMBs, rd.Local.DownMBs, rd.Direct.UpMBs, rd.Direct.DownMBs, rd.DirectRatio,
			rd.Relayed.UpMBs, rd.Relayed.DownMBs, rd.RelayedRatio)
	}
	for i, rd := range r.Rounds {
		row(fmt.Sprint(i+1), rd)
	}
	row("median", r.Median)
	tw.Flush()
	fmt.Fprintf(e.stdout, "\nratio: the slower direction over the local path's; target for direct >= 0.5\n")
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

func runBenchNetwork(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "bench network", "bench network [--blocks N] [--forks N] [--sync-blocks N] [--rounds N] [flags]", `
Starts 3 nodes on loopback and measures, per round, blocks a second
confirmed on all three against one node alone, with the blocks posted over
HTTP (the target's ratio) and handed to the engine in process (for
diagnosis); how fast forks are decided; and how fast a fresh node syncs.`, `  lattice bench network
  lattice bench network --blocks 12000 --forks 30 --sync-blocks 1000000 --rounds 3
  lattice bench network --load-generator process --sync-blocks 2000
`)
	blocks := f.Int("blocks", 12000, "blocks confirmed on three nodes per round, in each phase")
	forks := f.Int("forks", 30, "forks decided per round")
	syncBlocks := f.Int("sync-blocks", 100000, "blocks a fresh node syncs per round")
	rounds := f.Int("rounds", 3, "measurement rounds; the report gives medians")
	conc := f.Int("concurrency", 64, "HTTP requests in flight in the HTTP phase")
	loadgen := f.String("load-generator", "inprocess", loadGeneratorUsage)
	asJSON := f.jsonFlag()
	cpuProfile := f.String("cpuprofile", "", "write a CPU profile of the run to this file")
	traceFile := f.String("trace", "", "write a Go execution trace of the run to this file (go tool trace)")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	if *blocks < 1 || *forks < 1 || *syncBlocks < 1 || *rounds < 1 || *conc < 1 {
		return usageErr("--blocks, --forks, --sync-blocks, --rounds and --concurrency must be positive")
	}
	driver, err := loadDriver(e, *loadgen)
	if err != nil {
		return err
	}
	stop, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stop()
	stopTrace, err := startTrace(*traceFile)
	if err != nil {
		return err
	}
	defer stopTrace()
	r, err := netbench.Run(ctx, netbench.Config{Blocks: *blocks, Forks: *forks, SyncBlocks: *syncBlocks, Rounds: *rounds, HTTPConc: *conc, Progress: e.stderr, Driver: driver})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "3 nodes on loopback, %d blocks confirmed, %d forks, %d blocks synced per round, %d cpus\n", *blocks, *forks, *syncBlocks, runtime.NumCPU())
	fmt.Fprintf(e.stdout, "blocks posted over HTTP (one per request, %d in flight, load generator %s), and handed to the engine in process\n\n", *conc, loadPlace(r.LoadGenerator))
	tw := tableRight(e.stdout)
	// "alone": the lone node's blocks/s; "confirmed": confirmed on three.
	fmt.Fprintln(tw, "round\tHTTP alone\tHTTP confirmed\tHTTP ratio\tin-process alone\tin-process confirmed\tin-process ratio\tfork p50 ms\tfork p99 ms\tsync s\tsync blocks/s\trefused HTTP / in-process\t")
	row := func(name string, rd netbench.Round) {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.3f\t%.0f\t%.0f\t%.3f\t%.1f\t%.1f\t%.2f\t%.0f\t%.0f / %.0f\t\n", name,
			rd.SingleHTTPBlocksPerSec, rd.ConfirmedHTTPBlocksPerSec, rd.HTTPRatio,
			rd.SingleBlocksPerSec, rd.ConfirmedBlocksPerSec, rd.Ratio,
			rd.ForkP50ms, rd.ForkP99ms, rd.SyncSeconds, rd.SyncBlocksPerSec,
			rd.HTTPElectionsRefused, rd.ElectionsRefused)
	}
	for i, rd := range r.Rounds {
		row(fmt.Sprint(i+1), rd)
	}
	row("median", r.Median)
	tw.Flush()
	fmt.Fprintf(e.stdout, "\ntargets: HTTP ratio >= 0.3 (confirmed on three nodes / one node alone, blocks posted alike), fork p50 < 50 ms, 1,000,000 blocks synced in < 180 s\n")
	fmt.Fprintf(e.stdout, "the in-process ratio is for diagnosis: three nodes doing a lone node's work on its cores cannot pass 1/3 (docs/benchmarks.md)\n")
	fmt.Fprintf(e.stdout, "refused: elections the three nodes refused for want of room while confirming (their blocks waited for room)\n")
	return nil
}

func runBenchLease(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "bench lease", "bench lease [--blocks N] [--leases N] [--rounds N] [flags]", `
Measures, per round: lease blocks a second posted over HTTP to one node,
against send blocks a second posted the same way to the same node (each
block from an account of its own); and, on 3 nodes on loopback that keep
time and whose third provides, the time from posting a lease block to its
provider's accept confirmed on all three.`, `  lattice bench lease
  lattice bench lease --blocks 5000 --leases 50 --rounds 5 --json
`)
	blocks := f.Int("blocks", 2000, "lease blocks, and as many sends, per round")
	leases := f.Int("leases", 20, "leases timed to their confirmed accept per round")
	rounds := f.Int("rounds", 3, "measurement rounds; the report gives medians")
	conc := f.Int("concurrency", 32, "HTTP requests in flight in the throughput phase")
	asJSON := f.jsonFlag()
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	if *blocks < 1 || *leases < 1 || *rounds < 1 || *conc < 1 {
		return usageErr("--blocks, --leases, --rounds and --concurrency must be positive")
	}
	r, err := leasebench.Run(ctx, leasebench.Config{Blocks: *blocks, Leases: *leases, Rounds: *rounds, Conc: *conc, Progress: e.stderr})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "%d sends and %d lease blocks through one node over HTTP (%d in flight); %d leases timed to their accept confirmed on 3 nodes; %d cpus\n\n",
		*blocks, *blocks, *conc, *leases, runtime.NumCPU())
	tw := tableRight(e.stdout)
	fmt.Fprintln(tw, "round\tsends/s\tleases/s\tratio\taccept p50 ms\taccept p99 ms\t")
	row := func(name string, rd leasebench.Round) {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.3f\t%.0f\t%.0f\t\n", name, rd.SendsPerSec, rd.LeasesPerSec, rd.Ratio, rd.AcceptP50ms, rd.AcceptP99ms)
	}
	for i, rd := range r.Rounds {
		row(fmt.Sprint(i+1), rd)
	}
	row("median", r.Median)
	tw.Flush()
	fmt.Fprintf(e.stdout, "\ntargets: ratio >= 0.5 (lease blocks/s over send blocks/s, one node), accept p50 < 1000 ms\n")
	return nil
}

func runBenchLedger(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "bench ledger", "bench ledger [--blocks N] [--accounts N] [--concurrency N] [flags]", `
Measures ledger ingestion: blocks a second submitted through the HTTP API
and in process, with latencies, against how fast this machine verifies
signatures.`, `  lattice bench ledger
  lattice bench ledger --rounds 5 --json
  lattice bench ledger --phases http --cpuprofile cpu.prof
  lattice bench ledger --phases http --rounds 1 --blocks 20000 --trace trace.out
`)
	blocks := f.Int("blocks", 40000, "measured blocks per phase")
	accounts := f.Int("accounts", 1024, "accounts, paying each other in pairs")
	conc := f.Int("concurrency", 64, "HTTP requests in flight")
	inConc := f.Int("inprocess-concurrency", 128, "blocks in flight in the in-process phase")
	rounds := f.Int("rounds", 3, "measurement rounds; the report gives medians")
	dir := f.String("dir", "", "data directory for the benchmark nodes (default: a temporary directory)")
	asJSON := f.jsonFlag()
	phases := f.String("phases", "all", "what to measure: all, http or inprocess (one alone is for profiling)")
	cpuProfile := f.String("cpuprofile", "", "write a CPU profile of the run to this file")
	traceFile := f.String("trace", "", "write a Go execution trace of the run to this file (go tool trace; about 4 MB a second)")
	loadgen := f.String("load-generator", "inprocess", loadGeneratorUsage)
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	if *accounts < 2 || *conc < 1 || *blocks < 1 {
		return usageErr("--blocks, --concurrency must be positive and --accounts at least 2")
	}
	driver, err := loadDriver(e, *loadgen)
	if err != nil {
		return err
	}
	stop, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stop()
	stopTrace, err := startTrace(*traceFile)
	if err != nil {
		return err
	}
	defer stopTrace()
	r, err := ledgerbench.Run(ctx, ledgerbench.Config{Blocks: *blocks, Accounts: *accounts, Concurrency: *conc, InProcConc: *inConc, Rounds: *rounds, Dir: *dir, Progress: e.stderr, Phases: *phases, Driver: driver})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "cpus %d, accounts %d, %d blocks per phase, HTTP concurrency %d (load generator %s), in-process concurrency %d\n\n",
		r.CPUs, r.Accounts, *blocks, r.Concurrency, loadPlace(r.LoadGenerator), r.InProcConc)
	tw := tableRight(e.stdout)
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

// loadGeneratorUsage explains bench ledger's and bench network's
// --load-generator.
const loadGeneratorUsage = "where the HTTP phase's load generator runs: inprocess (in this benchmark's process) or process (a separate 'lattice bench drive' process, which --cpuprofile and --trace do not cover)"

// loadDriver is where bench ledger and bench network run their HTTP load
// generator: "inprocess", or "process", this binary's hidden `bench drive`
// in a process of its own.
func loadDriver(e *env, where string) (blockload.Driver, error) {
	switch where {
	case "inprocess":
		return blockload.Driver{}, nil
	case "process":
	default:
		return blockload.Driver{}, usageErr("--load-generator: want inprocess or process, not %q", where)
	}
	exe, err := os.Executable()
	if err != nil {
		return blockload.Driver{}, fmt.Errorf("--load-generator process: find this program: %w", err)
	}
	d := blockload.Driver{Command: []string{exe, "bench", "drive"}, Stderr: e.stderr}
	if !strings.HasPrefix(filepath.Base(exe), "lattice") {
		// Perhaps a test binary, whose TestMain runs as lattice when this
		// is set; a lattice binary under another name ignores it.
		d.Env = []string{"LATTICE_TEST_AS_LATTICE=1"}
	}
	return d, nil
}

// loadPlace says in words where the load generator ran.
func loadPlace(where string) string {
	if where == "process" {
		return "in a process of its own"
	}
	return "in the benchmark's process"
}

// startCPUProfile profiles the process into path until stop is called;
// an empty path profiles nothing.
func startCPUProfile(path string) (stop func(), err error) {
	return record(path, pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// startTrace writes a Go execution trace of the process into path until
// stop is called; an empty path traces nothing. A trace shows what each
// goroutine did and when, which a CPU profile cannot: how long work waited,
// and which stage of a pipeline ran while the others were idle.
func startTrace(path string) (stop func(), err error) {
	return record(path, trace.Start, trace.Stop)
}

// record creates path and starts writing into it with start; the returned
// stop ends it with end and closes the file. An empty path records nothing.
func record(path string, start func(io.Writer) error, end func()) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		end()
		f.Close()
	}, nil
}

func runBenchS3(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "bench s3", "bench s3 [--phases LIST] [--count N] [--concurrency N] [--large-count N] [--large-size SIZE] [--minio PATH | --endpoint URL ...] [flags]", `
Measures S3 throughput: small and large objects PUT then GET against
lattice in process, or --endpoint, and with --minio against MinIO too, in
alternating rounds. --phases adds versioned PUTs, SSE-S3 and SSE-KMS PUT/GET
and UploadPartCopy of a large object, or picks a few phases for a short run.`, `  lattice bench s3
  lattice bench s3 --minio /tmp/minio-bin/minio --rounds 3 --count 12000 --large-count 8
  lattice bench s3 --minio /tmp/minio-bin/minio --phases all
  lattice bench s3 --minio /tmp/minio-bin/minio --phases large-put --large-count 16 --rounds 5
  lattice bench s3 --endpoint http://127.0.0.1:9000 --access-key ID --secret-key S
`)
	count := f.Int("count", 4000, "small objects PUT then GET per round")
	smallSize := f.String("size", "4KiB", "size of a small object")
	conc := f.Int("concurrency", 16, "requests in flight for small objects")
	largeCount := f.Int("large-count", 4, "large objects PUT then GET per round")
	largeSize := f.String("large-size", "64MiB", "size of a large object")
	largeConc := f.Int("large-concurrency", 2, "requests in flight for large objects")
	rounds := f.Int("rounds", 3, "rounds per target; the report gives medians")
	phaseList := f.String("phases", "classic", "comma-separated phases to run: "+strings.Join(s3bench.AllPhases, ", ")+
		"; or groups: classic (small-put, small-get, large-put, large-get), sse, kms, versioned, copy, all. A GET brings its PUT")
	versionKeys := f.Int("version-keys", 8, "keys that versioned-put overwrites (--count PUTs over them)")
	copySize := f.String("copy-size", "1GiB", "size of the object that upload-part-copy copies")
	copyParts := f.Int("copy-parts", 8, "UploadPartCopy parts of a copy (ranges of equal size)")
	copyConc := f.Int("copy-concurrency", 2, "UploadPartCopy requests in flight")
	quiet := f.Float64("quiet", 0.25, "before each phase, wait until other processes use at most this many cores (0: do not wait)")
	quietWait := f.Duration("quiet-wait", 10*time.Second, "the longest a phase waits for --quiet; then it runs, marked busy")
	keep := f.Bool("keep-objects", false, "keep every round's objects to the end of the run (by default each round deletes what it wrote before the next starts)")
	endpoint := f.String("endpoint", "", "measure this S3 endpoint (http://host:port) instead of lattice in process")
	accessKey := f.String("access-key", "", "access key id for --endpoint")
	secretKey := f.String("secret-key", "", "secret key for --endpoint")
	region := f.String("region", "us-east-1", "region to sign for with --endpoint")
	minio := f.String("minio", "", "also start this MinIO server binary and measure it in alternating rounds")
	minioOSync := f.Bool("minio-osync", true, "run MinIO with MINIO_FS_OSYNC=on, so that its 200 means the object is on disk")
	dir := f.String("dir", "", "where the in-process lattice and MinIO keep their data (default: the temporary directory)")
	asJSON := f.jsonFlag()
	cpuProfile := f.String("cpuprofile", "", "write a CPU profile of the run to this file")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	small, err := parseSize(*smallSize)
	if err != nil {
		return usageErr("--size: %v", err)
	}
	large, err := parseSize(*largeSize)
	if err != nil {
		return usageErr("--large-size: %v", err)
	}
	cSize, err := parseSize(*copySize)
	if err != nil {
		return usageErr("--copy-size: %v", err)
	}
	if *count < 1 || *conc < 1 || *largeCount < 1 || *largeConc < 1 || *rounds < 1 || small < 1 || large < 1 ||
		*versionKeys < 1 || *copyParts < 1 || *copyConc < 1 || cSize < 1 || *quiet < 0 || *quietWait < 0 {
		return usageErr("counts, sizes, concurrencies and rounds must be positive, --quiet and --quiet-wait not negative")
	}
	phases, err := s3bench.PhaseSet(strings.Split(*phaseList, ","))
	if err != nil {
		return usageErr("--phases: %v", err)
	}
	if ps := int64(cSize) / int64(*copyParts); slices.Contains(phases, s3bench.UploadPartCopy) && ps < 5<<20 {
		return usageErr("--copy-size / --copy-parts is %d bytes: an UploadPartCopy part but the last must be at least 5 MiB", ps)
	}
	if *endpoint != "" && (*accessKey == "" || *secretKey == "") {
		return usageErr("--endpoint needs --access-key and --secret-key")
	}
	var targets []s3bench.Target
	if *endpoint != "" {
		targets = append(targets, s3bench.Target{Name: "endpoint", Endpoint: strings.TrimRight(*endpoint, "/"),
			AccessKey: *accessKey, SecretKey: *secretKey, Region: *region, Cleanup: true})
	} else {
		l, err := s3bench.StartLattice(*dir, slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
		if err != nil {
			return err
		}
		defer l.Close()
		targets = append(targets, l.Target())
	}
	if *minio != "" {
		// SSE-S3 and SSE-KMS need a KMS key (MinIO's static key); the
		// other phases run without one, as they always have.
		kms := slices.ContainsFunc(phases, func(p string) bool { return strings.HasPrefix(p, "sse-") || strings.HasPrefix(p, "kms-") })
		fmt.Fprintf(e.stderr, "starting %s (MINIO_FS_OSYNC=%v, KMS key %v)...\n", *minio, *minioOSync, kms)
		m, err := s3bench.StartMinIO(ctx, *minio, s3bench.MinIOOptions{Parent: *dir, OSync: *minioOSync, KMS: kms})
		if err != nil {
			return err
		}
		defer m.Close()
		targets = append(targets, m.Target())
	}
	stop, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stop()
	r, err := s3bench.Run(ctx, s3bench.Config{SmallCount: *count, SmallSize: small, Concurrency: *conc, LargeCount: *largeCount,
		LargeSize: large, LargeConcurrency: *largeConc, Rounds: *rounds, Phases: phases, VersionKeys: *versionKeys,
		CopySize: int64(cSize), CopyParts: *copyParts, CopyConcurrency: *copyConc, Quiet: *quiet, QuietWait: *quietWait, KeepObjects: *keep,
		Progress: e.stderr}, targets)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	printS3Report(e.stdout, r)
	return nil
}

func printS3Report(w io.Writer, r s3bench.Report) {
	fmt.Fprintf(w, "cpus %d; small: %d objects of %s at %d in flight; large: %d objects of %s at %d in flight",
		r.CPUs, r.SmallCount, sizeString(r.SmallSize), r.Concurrency, r.LargeCount, sizeString(r.LargeSize), r.LargeConcurrency)
	if r.VersionKeys > 0 {
		fmt.Fprintf(w, "; versioned: %d PUTs over %d keys", r.SmallCount, r.VersionKeys)
	}
	if r.CopySize > 0 {
		fmt.Fprintf(w, "; copy: %s in %d parts at %d in flight", sizeString64(r.CopySize), r.CopyParts, r.CopyConcurrency)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "cores: CPU used by client and server during the phase; others: by every other process of the machine")
	if r.Quiet > 0 {
		fmt.Fprintf(w, "each phase waited for other processes to use at most %.2f cores; * marks one that gave up waiting\n", r.Quiet)
	}
	bytesRate := func(name string) bool {
		return name == s3bench.LargePut || name == s3bench.LargeGet || name == s3bench.SSELargePut || name == s3bench.SSELargeGet ||
			name == s3bench.KMSLargePut || name == s3bench.KMSLargeGet || name == s3bench.UploadPartCopy
	}
	for _, name := range r.Phases {
		unit, big := "ops/s", bytesRate(name)
		if big {
			unit = "MiB/s"
		}
		fmt.Fprintf(w, "\n%s (%s)\n", name, unit)
		tw := tableRight(w)
		head := "round\t"
		for _, t := range r.Targets {
			head += t.Name + "\tp50 ms\tp99 ms\tcores\tothers\t"
		}
		for _, ra := range r.Ratios {
			head += ra.Of + "/" + ra.To + "\t"
		}
		fmt.Fprintln(tw, head)
		var notes []string
		cells := func(t string, p s3bench.Phase) string {
			if p.Unsupported != "" {
				note := t + ": unsupported: " + p.Unsupported
				if !slices.Contains(notes, note) {
					notes = append(notes, note)
				}
				return "unsupported\t\t\t\t\t"
			}
			others := fmt.Sprintf("%.2f", p.Others)
			if p.Busy {
				others += "*"
			}
			if big {
				return fmt.Sprintf("%.1f\t%.0f\t%.0f\t%.2f\t%s\t", p.MiBPerSec, p.P50ms, p.P99ms, p.Cores, others)
			}
			return fmt.Sprintf("%.0f\t%.2f\t%.2f\t%.2f\t%s\t", p.OpsPerSec, p.P50ms, p.P99ms, p.Cores, others)
		}
		ratio := func(m map[string]float64) string {
			if v, ok := m[name]; ok {
				return fmt.Sprintf("%.2f\t", v)
			}
			return "-\t"
		}
		for k := range r.Targets[0].Rounds {
			line := fmt.Sprint(k+1, "\t")
			for _, t := range r.Targets {
				line += cells(t.Name, t.Rounds[k].Phase(name))
			}
			for _, ra := range r.Ratios {
				line += ratio(ra.Rounds[k])
			}
			fmt.Fprintln(tw, line)
		}
		line := "median\t"
		for _, t := range r.Targets {
			line += cells(t.Name, t.Median.Phase(name))
		}
		for _, ra := range r.Ratios {
			line += ratio(ra.Median)
		}
		fmt.Fprintln(tw, line)
		tw.Flush()
		for _, n := range notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	for _, ra := range r.Ratios {
		fmt.Fprintf(w, "\n%s / %s (median rates; per-round range)\n", ra.Of, ra.To)
		tw := tableRight(w)
		for _, name := range r.Phases {
			med, ok := ra.Median[name]
			if !ok {
				fmt.Fprintf(tw, "%s\tn/a\tnot run by both\t\n", name)
				continue
			}
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, rd := range ra.Rounds {
				if v, ok := rd[name]; ok {
					lo, hi = min(lo, v), max(hi, v)
				}
			}
			fmt.Fprintf(tw, "%s\t%.2f\t%.2f..%.2f\t\n", name, med, lo, hi)
		}
		tw.Flush()
	}
}

func sizeString64(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return sizeString(int(n))
}

// parseSize reads a byte count: a number with an optional unit, B, KiB,
// MiB or GiB (K, M, G and KB, MB, GB mean the same binary units here).
func parseSize(s string) (int, error) {
	num := strings.TrimRight(s, "BbKkMmGgIi")
	unit := strings.ToUpper(strings.TrimSuffix(strings.ToUpper(s[len(num):]), "B"))
	shift := map[string]uint{"": 0, "K": 10, "KI": 10, "M": 20, "MI": 20, "G": 30, "GI": 30}
	sh, ok := shift[unit]
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if !ok || err != nil || n < 0 || n > math.MaxInt32>>sh {
		return 0, fmt.Errorf("bad size %q: want e.g. 4096, 4KiB or 64MiB", s)
	}
	return n << sh, nil
}

func sizeString(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func runBenchDNS(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "bench dns", "bench dns [--hosts N] [--duration D] [--clients N] [--rounds N] [flags]", `
Serves one zone with lattice's DNS server, NSD and PowerDNS (its BIND
backend) in turn on loopback, each with as many threads as the machine has
cores, and measures each with dnsperf (the same query mix: hosts, a CNAME,
the MX, a wildcard, a missing name). Reports queries a second, average
latency, and lattice's ratio to each peer per round and their median.
Needs the Debian packages nsd, pdns-server, pdns-backend-bind and dnsperf.`, `  lattice bench dns
  lattice bench dns --duration 20s --rounds 5 --json
`)
	hosts := f.Int("hosts", 1000, "A records in the zone")
	duration := f.Duration("duration", 10*time.Second, "how long dnsperf runs against each server in each round")
	clients := f.Int("clients", 4, "dnsperf's clients (-c)")
	rounds := f.Int("rounds", 3, "measurement rounds; the report gives medians")
	nsd := f.String("nsd", "", "path of nsd (default: found on PATH or in /usr/sbin)")
	pdns := f.String("pdns", "", "path of pdns_server (default: found on PATH or in /usr/sbin)")
	asJSON := f.jsonFlag()
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	if *hosts < 1 || *clients < 1 || *rounds < 1 || *duration <= 0 {
		return usageErr("--hosts, --clients, --rounds and --duration must be positive")
	}
	r, err := dnsbench.Run(ctx, dnsbench.Config{Hosts: *hosts, Duration: *duration, Clients: *clients, Rounds: *rounds,
		NSD: *nsd, PDNS: *pdns, Progress: e.stderr})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "one zone of %d hosts, dnsperf -c %d for %s per server per round, %d server threads, %d cpus\n\n",
		r.Hosts, r.Clients, *duration, r.ServerCores, runtime.NumCPU())
	tw := tableRight(e.stdout)
	fmt.Fprintln(tw, "round\tlattice q/s\tnsd q/s\tpowerdns q/s\tlattice/nsd\tlattice/powerdns\tlattice ms\tnsd ms\tpowerdns ms\t")
	row := func(name string, x dnsbench.Round) {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t%.3f\t%.3f\t%.3f\t\n", name, x.Lattice.QPS, x.NSD.QPS, x.PDNS.QPS,
			x.VsNSD, x.VsPDNS, x.Lattice.AvgLatencyMs, x.NSD.AvgLatencyMs, x.PDNS.AvgLatencyMs)
	}
	for i, x := range r.Rounds {
		row(strconv.Itoa(i+1), x)
	}
	row("median", r.Median)
	return tw.Flush()
}

func runBenchCDN(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "bench cdn", "bench cdn [--objects N] [--size BYTES] [--duration D] [--connections N] [--rounds N] [flags]", `
Serves a set of objects from an origin on loopback through lattice's CDN
edge (this binary as `+"`lattice cloud`"+`, in a process of its own) and through
nginx with proxy_cache, each with as many cores as GOMAXPROCS, warms both
caches and checks that they answer hits, then measures cache hits with wrk
cycling through the objects, the servers taking turns in each round.
Reports requests a second, p50 and p99 latency, and lattice's ratio to
nginx per round, their median and the ratio's range. Needs the Debian
packages nginx and wrk.`, `  lattice bench cdn
  lattice bench cdn --objects 1000 --size 16KiB --duration 20s --rounds 5 --json
`)
	objects := f.Int("objects", 100, "objects the origin serves and wrk cycles through")
	size := f.String("size", "1KiB", "size of an object (e.g. 1024, 1KiB, 1MiB)")
	duration := f.Duration("duration", 10*time.Second, "how long wrk runs against each server in each round (whole seconds)")
	conns := f.Int("connections", 64, "wrk's open connections (-c)")
	threads := f.Int("threads", 2, "wrk's threads (-t)")
	rounds := f.Int("rounds", 3, "measurement rounds; the report gives medians")
	nginx := f.String("nginx", "", "path of nginx (default: found on PATH or in /usr/sbin)")
	wrk := f.String("wrk", "", "path of wrk (default: found on PATH)")
	asJSON := f.jsonFlag()
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	n, err := parseSize(*size)
	if err != nil {
		return usageErr("--size: %v", err)
	}
	if *objects < 1 || n < 1 || *conns < 1 || *threads < 1 || *rounds < 1 || *duration < time.Second {
		return usageErr("--objects, --size, --connections, --threads and --rounds must be positive, --duration at least 1s")
	}
	r, err := cdnbench.Run(ctx, cdnbench.Config{Objects: *objects, ObjectSize: n, Duration: *duration, Rounds: *rounds,
		Connections: *conns, Threads: *threads, NGINX: *nginx, Wrk: *wrk, Progress: e.stderr})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "%d objects of %s, cache hits only, wrk -t %d -c %d for %gs per server per round, %d server cores, %s, %d cpus\n\n",
		r.Objects, sizeString(r.ObjectSize), r.Threads, r.Connections, r.DurationS, r.ServerCores, r.NGINXVersion, runtime.NumCPU())
	tw := tableRight(e.stdout)
	fmt.Fprintln(tw, "round\tlattice req/s\tnginx req/s\tlattice/nginx\tlattice p50 ms\tp99 ms\tnginx p50 ms\tp99 ms\t")
	row := func(name string, x cdnbench.Round) {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", name, x.Lattice.RequestsPerSec, x.NGINX.RequestsPerSec,
			x.Ratio, x.Lattice.P50ms, x.Lattice.P99ms, x.NGINX.P50ms, x.NGINX.P99ms)
	}
	for i, x := range r.Rounds {
		row(strconv.Itoa(i+1), x)
	}
	row("median", r.Median)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nlattice/nginx %.2f (%.2f..%.2f); target >= 0.8 on cache hits\n", r.Median.Ratio, r.RatioMin, r.RatioMax)
	return nil
}
