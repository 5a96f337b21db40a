// Package cdnbench measures the platform's CDN edge against nginx with
// proxy_cache in front of the same origin, with wrk as the load: cache
// hits only, one run, the two servers taking turns in each round, so that
// the ratios compare measurements of the same machine at the same time.
//
// Both servers run in processes of their own (lattice as `lattice cloud`
// with its edge on, nginx as a master and its workers), each allowed as
// many cores as the benchmark's GOMAXPROCS; the origin and the bookkeeping
// run in the benchmark's process and are idle while wrk measures.
package cdnbench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/latticenet/lattice/internal/bench/benchstat"
	"github.com/latticenet/lattice/internal/bench/program"
)

// Config sets a run; zero fields take the defaults.
type Config struct {
	Objects     int           // objects the origin serves and wrk cycles through; default 100
	ObjectSize  int           // bytes of each; default 1 KiB
	Duration    time.Duration // wrk's time per server per round, in whole seconds; default 10 s
	Rounds      int           // default 3
	Connections int           // wrk -c; default 64
	Threads     int           // wrk -t; default 2 (at most Connections)
	// Lattice is the lattice binary, run as `lattice cloud`; "" is this
	// program, which must then be lattice (as in `lattice bench cdn`).
	Lattice string
	// Paths of the peer and the load generator; "" looks them up on PATH
	// (and in /usr/sbin).
	NGINX, Wrk string
	Progress   io.Writer
}

func (c *Config) setDefaults() {
	if c.Objects == 0 {
		c.Objects = 100
	}
	if c.ObjectSize == 0 {
		c.ObjectSize = 1 << 10
	}
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	c.Duration = max(time.Second, c.Duration.Round(time.Second))
	if c.Rounds == 0 {
		c.Rounds = 3
	}
	if c.Connections == 0 {
		c.Connections = 64
	}
	if c.Threads == 0 {
		c.Threads = 2
	}
	c.Threads = min(c.Threads, c.Connections) // wrk refuses more threads than connections
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Result is one server's measurement: wrk's figures.
type Result struct {
	RequestsPerSec float64 `json:"requests_per_s"`
	Requests       int64   `json:"requests"`
	P50ms          float64 `json:"p50_ms"`
	P99ms          float64 `json:"p99_ms"`
	// SocketErrors are wrk's connect, read, write and timeout errors
	// together; a run with any non-2xx response fails instead.
	SocketErrors int64 `json:"socket_errors"`
}

// Round is one round: each server measured once.
type Round struct {
	Lattice Result  `json:"lattice"`
	NGINX   Result  `json:"nginx"`
	Ratio   float64 `json:"lattice_over_nginx"` // of requests a second
}

// Report is a run.
type Report struct {
	Objects      int     `json:"objects"`
	ObjectSize   int     `json:"object_size"`
	DurationS    float64 `json:"duration_s"`
	Connections  int     `json:"connections"`
	Threads      int     `json:"threads"`
	ServerCores  int     `json:"server_cores"` // lattice's GOMAXPROCS, nginx's worker_processes
	NGINXVersion string  `json:"nginx_version"`
	Rounds       []Round `json:"rounds"`
	Median       Round   `json:"median"`
	// RatioMin and RatioMax are the range of the rounds' ratios.
	RatioMin float64 `json:"ratio_min"`
	RatioMax float64 `json:"ratio_max"`
}

// Host is the Host header of every request to either server: the
// deployment's name under the edge's CDN domain.
const Host = deployment + "." + cdnDomain

const (
	deployment = "bench"
	cdnDomain  = "cdn.localhost"
)

// Run runs the benchmark.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.setDefaults()
	var err error
	if cfg.NGINX, err = program.Find(cfg.NGINX, "nginx", "Debian package nginx"); err != nil {
		return nil, err
	}
	if cfg.Wrk, err = program.Find(cfg.Wrk, "wrk", "Debian package wrk"); err != nil {
		return nil, err
	}
	if cfg.Lattice == "" {
		if cfg.Lattice, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("cdnbench: the lattice binary: %w", err)
		}
	}
	dir, err := os.MkdirTemp("", "lattice-bench-cdn-")
	if err != nil {
		return nil, fmt.Errorf("cdnbench: %w", err)
	}
	defer os.RemoveAll(dir)
	cores := runtime.GOMAXPROCS(0)
	rep := &Report{Objects: cfg.Objects, ObjectSize: cfg.ObjectSize, DurationS: cfg.Duration.Seconds(),
		Connections: cfg.Connections, Threads: cfg.Threads, ServerCores: cores, NGINXVersion: nginxVersion(cfg.NGINX)}

	org, err := startOrigin(cfg.Objects, cfg.ObjectSize)
	if err != nil {
		return nil, err
	}
	defer org.close()
	script := filepath.Join(dir, "paths.lua")
	if err := writeScript(script, cfg.Objects); err != nil {
		return nil, err
	}

	fmt.Fprintf(cfg.Progress, "starting lattice cloud (%s) with its CDN edge...\n", cfg.Lattice)
	lat, err := startLattice(ctx, cfg.Lattice, filepath.Join(dir, "lattice"), cores, org.url)
	if err != nil {
		return nil, fmt.Errorf("cdnbench: lattice: %w", err)
	}
	defer lat.stop()
	fmt.Fprintf(cfg.Progress, "starting %s with proxy_cache...\n", cfg.NGINX)
	ngx, err := startNGINX(ctx, cfg.NGINX, filepath.Join(dir, "nginx"), cores, org.addr)
	if err != nil {
		return nil, fmt.Errorf("cdnbench: nginx: %w", err)
	}
	defer ngx.stop()

	type target struct {
		name string
		url  string
		out  func(*Round) *Result
	}
	targets := []target{
		{"lattice", lat.url, func(r *Round) *Result { return &r.Lattice }},
		{"nginx", ngx.url, func(r *Round) *Result { return &r.NGINX }},
	}
	client := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	for _, s := range targets {
		fmt.Fprintf(cfg.Progress, "warming %s's cache: %d objects of %d bytes...\n", s.name, cfg.Objects, cfg.ObjectSize)
		if err := warm(ctx, client, s.url, cfg.Objects, cfg.ObjectSize); err != nil {
			return nil, fmt.Errorf("cdnbench: %s: %w", s.name, err)
		}
	}
	client.CloseIdleConnections() // no idle connections to either server while wrk measures

	for i := range cfg.Rounds {
		var r Round
		for j := range targets {
			s := targets[(i+j)%len(targets)] // each round starts with the other server
			fmt.Fprintf(cfg.Progress, "round %d: %s at %s, wrk -t %d -c %d -d %s...\n", i+1, s.name, s.url,
				cfg.Threads, cfg.Connections, cfg.Duration)
			before := org.requests.Load()
			res, err := runWrk(ctx, cfg, script, s.url)
			if err != nil {
				return nil, fmt.Errorf("cdnbench: wrk against %s: %w", s.name, err)
			}
			if n := org.requests.Load() - before; n > 0 {
				return nil, fmt.Errorf("cdnbench: %s sent %d requests to the origin while wrk ran: not all were cache hits", s.name, n)
			}
			*s.out(&r) = res
		}
		r.Ratio = r.Lattice.RequestsPerSec / r.NGINX.RequestsPerSec
		rep.Rounds = append(rep.Rounds, r)
	}
	med := func(f func(Round) float64) float64 { return benchstat.MedianOf(rep.Rounds, f) }
	medResult := func(of func(Round) Result) Result {
		return Result{
			RequestsPerSec: med(func(r Round) float64 { return of(r).RequestsPerSec }),
			Requests:       int64(med(func(r Round) float64 { return float64(of(r).Requests) })),
			P50ms:          med(func(r Round) float64 { return of(r).P50ms }),
			P99ms:          med(func(r Round) float64 { return of(r).P99ms }),
			SocketErrors:   int64(med(func(r Round) float64 { return float64(of(r).SocketErrors) })),
		}
	}
	rep.Median = Round{
		Lattice: medResult(func(r Round) Result { return r.Lattice }),
		NGINX:   medResult(func(r Round) Result { return r.NGINX }),
		Ratio:   med(func(r Round) float64 { return r.Ratio }),
	}
	rep.RatioMin, rep.RatioMax = math.Inf(1), math.Inf(-1)
	for _, r := range rep.Rounds {
		rep.RatioMin, rep.RatioMax = min(rep.RatioMin, r.Ratio), max(rep.RatioMax, r.Ratio)
	}
	return rep, nil
}

// warm requests every object twice from the server at base: the first
// fills its cache, the second must be a hit (X-Cache: HIT, which both
// servers send), or the benchmark would not measure what it says.
func warm(ctx context.Context, client *http.Client, base string, objects, size int) error {
	for _, want := range []string{"", "HIT"} {
		for i := range objects {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+objectPath(i), nil)
			if err != nil {
				return err
			}
			req.Host = Host
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil {
				return fmt.Errorf("GET %s: %w", objectPath(i), err)
			}
			if resp.StatusCode != http.StatusOK || n != int64(size) {
				return fmt.Errorf("GET %s: %s with %d bytes, want 200 OK with %d", objectPath(i), resp.Status, n, size)
			}
			if got := resp.Header.Get("X-Cache"); want != "" && got != want {
				return fmt.Errorf("GET %s a second time: X-Cache %q, want %q: the response was not cached", objectPath(i), got, want)
			}
		}
	}
	return nil
}
