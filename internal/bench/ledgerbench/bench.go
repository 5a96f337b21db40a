// Package ledgerbench measures how fast a node ingests blocks, against how
// fast this machine verifies ed25519 signatures, the floor cost of every
// block. It pre-generates signed blocks, then submits them to a fresh node
// over HTTP and, on a second fresh node, straight to the engine.
package ledgerbench

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latticenet/lattice/internal/bench/benchstat"
	"github.com/latticenet/lattice/internal/bench/blockload"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/node/workload"
	"github.com/latticenet/lattice/wallet"
)

// Config sizes a run. Zero values take the defaults.
type Config struct {
	Blocks      int           // measured blocks per phase (default 40000)
	Accounts    int           // accounts, in pairs that pay each other (default 1024)
	Concurrency int           // HTTP requests in flight (default 64)
	InProcConc  int           // blocks in flight in process (default 128)
	Rounds      int           // measurement rounds; medians are reported (default 3)
	VerifyTime  time.Duration // each ed25519 verification sample (default 1 s)
	Dir         string        // where the nodes keep their data (default: a temporary directory)
	Progress    io.Writer     // progress messages, or nil
	// Phases selects what to measure: "all" (the default), "http" or
	// "inprocess"; one phase alone is for profiling.
	Phases string
	// Driver runs the HTTP phase's load generator; the zero value runs it
	// in this process.
	Driver blockload.Driver
}

func (c *Config) setDefaults() {
	if c.Blocks <= 0 {
		c.Blocks = 40000
	}
	if c.Accounts < 2 {
		c.Accounts = 1024
	}
	c.Accounts &^= 1
	if c.Concurrency <= 0 {
		c.Concurrency = 64
	}
	if c.InProcConc <= 0 {
		c.InProcConc = 128
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.VerifyTime <= 0 {
		c.VerifyTime = time.Second
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Phase is the measurement of one ingestion path.
type Phase = blockload.Phase

// Round is one measurement round: each phase's ratio divides its rate by
// the mean of the verification samples taken just before and just after it,
// so that a machine whose speed drifts (a shared VM) compares like with like.
type Round struct {
	Verify         []float64 `json:"ed25519_verify_per_second"` // before HTTP, between, after in-process
	HTTP           Phase     `json:"http"`
	InProcess      Phase     `json:"in_process"`
	HTTPRatio      float64   `json:"http_to_verify_ratio"`
	InProcessRatio float64   `json:"in_process_to_verify_ratio"`
}

// Report is the outcome of a run: every round, and the medians.
type Report struct {
	CPUs           int     `json:"cpus"`
	Concurrency    int     `json:"http_concurrency"`
	InProcConc     int     `json:"in_process_concurrency"`
	Accounts       int     `json:"accounts"`
	Rounds         []Round `json:"rounds"`
	VerifyPerSec   float64 `json:"median_ed25519_verify_per_second"`
	HTTP           Phase   `json:"median_http"`
	InProcess      Phase   `json:"median_in_process"`
	HTTPRatio      float64 `json:"median_http_to_verify_ratio"`
	InProcessRatio float64 `json:"median_in_process_to_verify_ratio"`
	// LoadGenerator says where the HTTP phase's load generator ran:
	// "inprocess" or "process" (blockload.Driver.Where).
	LoadGenerator string `json:"http_load_generator"`
}

// benchWork keeps pre-generation quick. Checking work costs one SHA-256 at
// any threshold, so ingestion is measured at full cost.
var benchWork = ledger.Work{Send: 0xff00000000000000, Receive: 0xf000000000000000}

// Run measures. It starts and stops everything it needs.
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg.setDefaults()
	r := Report{CPUs: runtime.GOMAXPROCS(0), Concurrency: cfg.Concurrency, InProcConc: cfg.InProcConc, Accounts: cfg.Accounts,
		LoadGenerator: cfg.Driver.Where()}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "lattice-bench-")
		if err != nil {
			return r, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	fmt.Fprintf(cfg.Progress, "generating %d setup and %d measured blocks for %d accounts...\n", cfg.Accounts*2, cfg.Blocks, cfg.Accounts)
	w, err := generate(ctx, cfg)
	if err != nil {
		return r, err
	}
	for i := range cfg.Rounds {
		fmt.Fprintf(cfg.Progress, "round %d of %d: verify, HTTP (%d in flight), verify, in process (%d in flight), verify\n",
			i+1, cfg.Rounds, cfg.Concurrency, cfg.InProcConc)
		var rd Round
		// Each phase runs under a pprof label, inherited by every
		// goroutine it starts (server, engine, Pebble), so a CPU profile
		// can be cut by phase with `go tool pprof -tagfocus=phase=http`.
		phase := func(name string, run func(ctx context.Context, dir string, conc int) (Phase, error), conc int) (Phase, error) {
			var ph Phase
			var err error
			if cfg.Phases == "all" || cfg.Phases == "" || cfg.Phases == name {
				pprof.Do(ctx, pprof.Labels("phase", name), func(ctx context.Context) {
					ph, err = run(ctx, filepath.Join(dir, fmt.Sprint(name, i)), conc)
				})
			}
			if err != nil {
				return ph, fmt.Errorf("%s phase: %w", name, err)
			}
			return ph, nil
		}
		rd.Verify = append(rd.Verify, verifyRate(cfg.VerifyTime))
		runHTTP := func(ctx context.Context, dir string, conc int) (Phase, error) {
			return w.runHTTP(ctx, dir, conc, cfg.Driver)
		}
		if rd.HTTP, err = phase("http", runHTTP, cfg.Concurrency); err != nil {
			return r, err
		}
		rd.Verify = append(rd.Verify, verifyRate(cfg.VerifyTime))
		if rd.InProcess, err = phase("inprocess", w.runInProcess, cfg.InProcConc); err != nil {
			return r, err
		}
		rd.Verify = append(rd.Verify, verifyRate(cfg.VerifyTime))
		rd.HTTPRatio = rd.HTTP.PerSecond / ((rd.Verify[0] + rd.Verify[1]) / 2)
		rd.InProcessRatio = rd.InProcess.PerSecond / ((rd.Verify[1] + rd.Verify[2]) / 2)
		r.Rounds = append(r.Rounds, rd)
	}
	var verify []float64
	for _, rd := range r.Rounds {
		verify = append(verify, rd.Verify...)
	}
	r.VerifyPerSec = benchstat.Median(verify)
	r.HTTPRatio = benchstat.Median(collect(r.Rounds, func(rd Round) float64 { return rd.HTTPRatio }))
	r.InProcessRatio = benchstat.Median(collect(r.Rounds, func(rd Round) float64 { return rd.InProcessRatio }))
	r.HTTP = medianPhase(collect(r.Rounds, func(rd Round) Phase { return rd.HTTP }))
	r.InProcess = medianPhase(collect(r.Rounds, func(rd Round) Phase { return rd.InProcess }))
	return r, nil
}

func collect[T any](rounds []Round, f func(Round) T) []T {
	out := make([]T, len(rounds))
	for i, rd := range rounds {
		out[i] = f(rd)
	}
	return out
}

// medianPhase returns the phase with the median rate.
func medianPhase(ps []Phase) Phase {
	ps = slices.Clone(ps)
	slices.SortFunc(ps, func(a, b Phase) int {
		switch {
		case a.PerSecond < b.PerSecond:
			return -1
		case a.PerSecond > b.PerSecond:
			return 1
		}
		return 0
	})
	return ps[(len(ps)-1)/2]
}

// benchLoad is the benchmark's network, its setup blocks and the measured
// streams (see package workload), pre-encoded as JSON for the HTTP phase.
type benchLoad struct {
	network *node.Network
	setup   []*ledger.Block
	streams [][]*ledger.Block
	posts   [][]blockload.Request // the HTTP requests that post streams
}

func generate(ctx context.Context, cfg Config) (*benchLoad, error) {
	gk, _ := wallet.KeyFromSeed(bytes.Repeat([]byte{0x42}, 32))
	t := time.Now().UnixMilli()
	net := &node.Network{Name: "bench", Work: benchWork, Genesis: ledger.NewGenesis(gk.Private(), ledger.NewAmount(1<<62), t)}
	pairs := cfg.Accounts / 2
	wl, err := workload.Generate(ctx, workload.Config{
		GenesisKey: gk, Genesis: net.Genesis, Work: benchWork, Accounts: cfg.Accounts,
		Fund: ledger.NewAmount(1_000_000_000), PerPair: (cfg.Blocks + 2*pairs - 1) / (2 * pairs), Timestamp: t,
	})
	if err != nil {
		return nil, err
	}
	w := &benchLoad{network: net, setup: wl.Setup, streams: wl.Streams}
	// Trim to exactly cfg.Blocks, keeping each stream a prefix.
	total := 0
	for p := range w.streams {
		if total+len(w.streams[p]) > cfg.Blocks {
			w.streams[p] = w.streams[p][:max(0, cfg.Blocks-total)]
		}
		total += len(w.streams[p])
	}
	posts, err := blockload.Requests(w.streams)
	if err != nil {
		return nil, err
	}
	w.posts = posts
	return w, nil
}

func (w *benchLoad) openNode(ctx context.Context, dir string) (*node.Node, error) {
	// The blocks are stamped when they are generated, before the clock
	// starts: a long run must not age them out of the admission window.
	n, err := node.Open(node.Config{DataDir: dir, Network: w.network, MaxClockSkew: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return nil, err
	}
	// Setup blocks go in unmeasured, in order, many at a time per group.
	var wg sync.WaitGroup
	errc := make(chan error, len(w.setup))
	for i := 0; i < len(w.setup); i += 2 {
		// Sends of the genesis chain must be ordered; receives may follow
		// in parallel once their send is in.
		if _, err := n.Engine.Submit(ctx, w.setup[i]); err != nil {
			n.Close()
			return nil, err
		}
		wg.Add(1)
		go func(b *ledger.Block) {
			defer wg.Done()
			if _, err := n.Engine.Submit(ctx, b); err != nil {
				errc <- err
			}
		}(w.setup[i+1])
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

func (w *benchLoad) runInProcess(ctx context.Context, dir string, conc int) (Phase, error) {
	n, err := w.openNode(ctx, dir)
	if err != nil {
		return Phase{}, err
	}
	defer n.Close()
	return blockload.Drive(ctx, w.streams, conc, func(_ int, b *ledger.Block) error {
		// A fresh copy, as if parsed off the wire: nothing cached on b.
		_, err := n.Engine.Submit(ctx, b.Clone())
		return err
	})
}

func (w *benchLoad) runHTTP(ctx context.Context, dir string, conc int, d blockload.Driver) (Phase, error) {
	n, err := w.openNode(ctx, dir)
	if err != nil {
		return Phase{}, err
	}
	defer n.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Phase{}, err
	}
	srv := &http.Server{Handler: nodeapi.New(n, nodeapi.Options{}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	// One connection per worker, opened before the clock starts.
	load, err := d.Start(ctx, ln.Addr().String(), conc, w.posts)
	if err != nil {
		return Phase{}, err
	}
	defer load.Close()
	return load.Drive(ctx)
}

// verifyRate measures ed25519 verifications per second on every core.
func verifyRate(d time.Duration) float64 {
	const n = 64
	type item struct {
		pub ed25519.PublicKey
		msg []byte
		sig []byte
	}
	items := make([]item, n)
	for i := range items {
		k := wallet.NewKey()
		msg := make([]byte, 32)
		msg[0] = byte(i)
		items[i] = item{ed25519.PublicKey(k.Address().PublicKey()), msg, ed25519.Sign(k.Private(), msg)}
	}
	var total atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := 0
			for i := 0; !stop.Load(); i++ {
				it := items[i%n]
				if !ed25519.Verify(it.pub, it.msg, it.sig) {
					panic("ledgerbench: signature did not verify")
				}
				c++
			}
			total.Add(int64(c))
		}()
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	return float64(total.Load()) / time.Since(start).Seconds()
}
