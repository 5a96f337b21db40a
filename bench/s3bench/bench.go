// Package s3bench measures S3 endpoints: PUT and GET of small objects in
// operations per second and of large objects in MiB per second, with p50
// and p99 latency, over a lean signed HTTP/1.1 client. Several targets
// (the lattice endpoint in process, a MinIO server, any S3 URL) are
// measured in alternating rounds of one run, so that a comparison between
// them comes from the same machine state.
//
// Every GET is checked in full against what was PUT, so a server that
// answers fast but wrong cannot look fast.
package s3bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Config sizes a run. Zero values take the defaults.
type Config struct {
	SmallCount       int // small objects PUT then GET per round (default 4000)
	SmallSize        int // bytes per small object (default 4 KiB)
	Concurrency      int // requests in flight for small objects (default 16)
	LargeCount       int // large objects PUT then GET per round (default 4)
	LargeSize        int // bytes per large object (default 64 MiB)
	LargeConcurrency int // requests in flight for large objects (default 2)
	Rounds           int // rounds per target; medians are reported (default 3)
	Progress         io.Writer
}

func (c *Config) setDefaults() {
	if c.SmallCount <= 0 {
		c.SmallCount = 4000
	}
	if c.SmallSize <= 0 {
		c.SmallSize = 4 << 10
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.LargeCount <= 0 {
		c.LargeCount = 4
	}
	if c.LargeSize <= 0 {
		c.LargeSize = 64 << 20
	}
	if c.LargeConcurrency <= 0 {
		c.LargeConcurrency = 2
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Target is an S3 endpoint to measure.
type Target struct {
	Name      string // in the report: "lattice", "minio", ...
	Endpoint  string // http://host:port; path-style requests
	AccessKey string
	SecretKey string
	Region    string // default us-east-1
	// Cleanup deletes the run's objects and buckets at the end. Targets
	// whose data directory is thrown away after the run do without it.
	Cleanup bool

	// phase, if set, is told the phase about to be measured, so that a
	// server in this process can label its CPU profile with it.
	phase func(string)
}

// Phase names, in the order a round runs them.
const (
	SmallPut = "small-put"
	SmallGet = "small-get"
	LargePut = "large-put"
	LargeGet = "large-get"
)

// Phase is the measurement of one phase of one round.
type Phase struct {
	Ops       int     `json:"ops"`
	Bytes     int64   `json:"bytes"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_second"`
	MiBPerSec float64 `json:"mib_per_second"`
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
}

// Round is one round of one target: each phase once, on a fresh bucket.
type Round struct {
	SmallPut Phase `json:"small_put"`
	SmallGet Phase `json:"small_get"`
	LargePut Phase `json:"large_put"`
	LargeGet Phase `json:"large_get"`
}

func (r *Round) phase(name string) *Phase {
	switch name {
	case SmallPut:
		return &r.SmallPut
	case SmallGet:
		return &r.SmallGet
	case LargePut:
		return &r.LargePut
	case LargeGet:
		return &r.LargeGet
	}
	panic("s3bench: unknown phase " + name)
}

// Phases lists the phase names in the order a round runs them.
var Phases = []string{SmallPut, SmallGet, LargePut, LargeGet}

// Phase returns the measurement of the named phase.
func (r Round) Phase(name string) Phase { return *r.phase(name) }

// TargetReport is every round of one target and, per phase, the round
// with the median rate (its latencies with it).
type TargetReport struct {
	Name   string  `json:"name"`
	Rounds []Round `json:"rounds"`
	Median Round   `json:"median"`
}

// Ratio compares the first target with another: per phase, the first's
// median rate over the other's, and the same ratio for each round, taken
// between rounds run back to back.
type Ratio struct {
	Of     string               `json:"of"`
	To     string               `json:"to"`
	Median map[string]float64   `json:"median"`
	Rounds []map[string]float64 `json:"rounds"`
}

// Report is the outcome of a run.
type Report struct {
	CPUs             int            `json:"cpus"`
	SmallCount       int            `json:"small_count"`
	SmallSize        int            `json:"small_size"`
	Concurrency      int            `json:"concurrency"`
	LargeCount       int            `json:"large_count"`
	LargeSize        int            `json:"large_size"`
	LargeConcurrency int            `json:"large_concurrency"`
	Targets          []TargetReport `json:"targets"`
	Ratios           []Ratio        `json:"ratios,omitempty"`
}

// Run measures every target, round by round: round 1 of each target in
// turn, then round 2, and so on.
func Run(ctx context.Context, cfg Config, targets []Target) (Report, error) {
	cfg.setDefaults()
	rep := Report{CPUs: runtime.GOMAXPROCS(0), SmallCount: cfg.SmallCount, SmallSize: cfg.SmallSize, Concurrency: cfg.Concurrency,
		LargeCount: cfg.LargeCount, LargeSize: cfg.LargeSize, LargeConcurrency: cfg.LargeConcurrency}
	if len(targets) == 0 {
		return rep, errors.New("s3bench: no target")
	}
	for i := range targets {
		if targets[i].Region == "" {
			targets[i].Region = "us-east-1"
		}
		rep.Targets = append(rep.Targets, TargetReport{Name: targets[i].Name})
	}
	small := newPool(cfg.SmallSize)
	large := newPool(cfg.LargeSize)
	var tag [4]byte
	rand.Read(tag[:])
	run := "s3bench-" + hex.EncodeToString(tag[:])
	var made []cleanup
	defer func() {
		for _, c := range made {
			c.run(cfg)
		}
	}()
	for round := 1; round <= cfg.Rounds; round++ {
		for i := range targets {
			t := &targets[i]
			bucket := fmt.Sprintf("%s-r%d", run, round)
			fmt.Fprintf(cfg.Progress, "round %d of %d, %s: %d × %d B at %d in flight, %d × %d MiB at %d in flight\n",
				round, cfg.Rounds, t.Name, cfg.SmallCount, cfg.SmallSize, cfg.Concurrency,
				cfg.LargeCount, cfg.LargeSize>>20, cfg.LargeConcurrency)
			if err := request(t, http.MethodPut, "/"+bucket); err != nil {
				return rep, fmt.Errorf("%s: %w", t.Name, err)
			}
			if t.Cleanup {
				made = append(made, cleanup{t, bucket})
			}
			rd, err := runRound(ctx, cfg, t, bucket, small, large)
			if err != nil {
				return rep, fmt.Errorf("%s, round %d: %w", t.Name, round, err)
			}
			rep.Targets[i].Rounds = append(rep.Targets[i].Rounds, rd)
		}
	}
	for i := range rep.Targets {
		tr := &rep.Targets[i]
		for _, name := range Phases {
			var ps []Phase
			for _, rd := range tr.Rounds {
				ps = append(ps, rd.Phase(name))
			}
			*tr.Median.phase(name) = medianPhase(ps)
		}
	}
	for _, other := range rep.Targets[1:] {
		base := rep.Targets[0]
		r := Ratio{Of: base.Name, To: other.Name, Median: map[string]float64{}}
		for _, name := range Phases {
			r.Median[name] = rate(base.Median.Phase(name)) / rate(other.Median.Phase(name))
		}
		for k := range base.Rounds {
			m := map[string]float64{}
			for _, name := range Phases {
				m[name] = rate(base.Rounds[k].Phase(name)) / rate(other.Rounds[k].Phase(name))
			}
			r.Rounds = append(r.Rounds, m)
		}
		rep.Ratios = append(rep.Ratios, r)
	}
	return rep, nil
}

// rate is what a phase is judged by: operations per second (for large
// objects, in proportion to MiB per second).
func rate(p Phase) float64 { return p.OpsPerSec }

func runRound(ctx context.Context, cfg Config, t *Target, bucket string, small, large *pool) (Round, error) {
	var rd Round
	steps := []struct {
		name   string
		n      int
		conc   int
		pool   *pool
		method string
	}{
		{SmallPut, cfg.SmallCount, cfg.Concurrency, small, http.MethodPut},
		{SmallGet, cfg.SmallCount, cfg.Concurrency, small, http.MethodGet},
		{LargePut, cfg.LargeCount, cfg.LargeConcurrency, large, http.MethodPut},
		{LargeGet, cfg.LargeCount, cfg.LargeConcurrency, large, http.MethodGet},
	}
	for _, s := range steps {
		prefix := "s/"
		if s.pool == large {
			prefix = "l/"
		}
		op := func(cl *client, i int) error {
			path := fmt.Sprintf("/%s/%s%07d", bucket, prefix, i)
			if s.method == http.MethodPut {
				return cl.do(http.MethodPut, path, s.pool.object(i), nil)
			}
			return cl.do(http.MethodGet, path, nil, func(r io.Reader, n int64) error {
				return s.pool.verify(r, n, i, cl.buf)
			})
		}
		if t.phase != nil {
			t.phase(s.name)
		}
		var ph Phase
		var err error
		pprof.Do(ctx, pprof.Labels("target", t.Name, "phase", s.name, "side", "client"), func(ctx context.Context) {
			ph, err = drive(ctx, t, s.n, s.conc, op)
		})
		if t.phase != nil {
			t.phase("")
		}
		if err != nil {
			return rd, fmt.Errorf("%s: %w", s.name, err)
		}
		ph.Bytes = int64(s.n) * int64(s.pool.size)
		ph.MiBPerSec = float64(ph.Bytes) / (1 << 20) / ph.Seconds
		*rd.phase(s.name) = ph
		fmt.Fprintf(cfg.Progress, "  %-9s %8.0f ops/s %8.1f MiB/s  p50 %7.2f ms  p99 %7.2f ms\n",
			s.name, ph.OpsPerSec, ph.MiBPerSec, ph.P50ms, ph.P99ms)
	}
	return rd, nil
}

// drive runs op for i in [0, n) with conc workers, each on its own
// connection, opened before the clock starts.
func drive(ctx context.Context, t *Target, n, conc int, op func(cl *client, i int) error) (Phase, error) {
	conc = min(conc, n)
	clients := make([]*client, conc)
	defer func() {
		for _, cl := range clients {
			if cl != nil {
				cl.close()
			}
		}
	}()
	for i := range clients {
		cl, err := dial(t)
		if err != nil {
			return Phase{}, err
		}
		clients[i] = cl
	}
	// The first failure stops every worker; it is the error reported.
	var mu sync.Mutex
	var failure error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if failure == nil {
			failure = err
			for _, cl := range clients {
				cl.interrupt()
			}
		}
	}
	defer context.AfterFunc(ctx, func() { fail(ctx.Err()) })()
	var next atomic.Int64
	lat := make([][]time.Duration, conc)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				t0 := time.Now()
				if err := op(clients[w], i); err != nil {
					fail(err)
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	if failure != nil {
		return Phase{}, failure
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	return Phase{Ops: len(all), Seconds: elapsed.Seconds(), OpsPerSec: float64(len(all)) / elapsed.Seconds(),
		P50ms: ms(percentile(all, 0.50)), P99ms: ms(percentile(all, 0.99))}, nil
}

// percentile returns the nearest-rank p-th percentile of sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// medianPhase returns the phase with the median rate (the lower middle
// one of an even count).
func medianPhase(ps []Phase) Phase {
	if len(ps) == 0 {
		return Phase{}
	}
	ps = slices.Clone(ps)
	slices.SortFunc(ps, func(a, b Phase) int {
		switch {
		case rate(a) < rate(b):
			return -1
		case rate(a) > rate(b):
			return 1
		}
		return 0
	})
	return ps[(len(ps)-1)/2]
}

// request sends one bodiless request on a connection of its own.
func request(t *Target, method, path string) error {
	cl, err := dial(t)
	if err != nil {
		return err
	}
	defer cl.close()
	return cl.do(method, path, nil, nil)
}

// cleanup is a bucket of the run to delete at the end.
type cleanup struct {
	t      *Target
	bucket string
}

// run deletes the bucket's objects and the bucket, best effort.
func (c cleanup) run(cfg Config) {
	var names []string
	for i := range cfg.SmallCount {
		names = append(names, fmt.Sprintf("/%s/s/%07d", c.bucket, i))
	}
	for i := range cfg.LargeCount {
		names = append(names, fmt.Sprintf("/%s/l/%07d", c.bucket, i))
	}
	_, err := drive(context.Background(), c.t, len(names), cfg.Concurrency, func(cl *client, i int) error {
		return cl.do(http.MethodDelete, names[i], nil, nil)
	})
	if err == nil {
		err = request(c.t, http.MethodDelete, "/"+c.bucket)
	}
	if err != nil {
		fmt.Fprintf(cfg.Progress, "cleaning up %s on %s: %v\n", c.bucket, c.t.Name, err)
	}
}

// pool makes the bodies of objects of one size: object i is its index
// (8 bytes) followed by a window into random bytes that starts at an
// offset depending on i, so that bodies differ and do not compress.
type pool struct {
	size   int
	random []byte
}

const poolSlack = 1 << 20

func newPool(size int) *pool {
	p := &pool{size: size, random: make([]byte, max(size-8, 0)+poolSlack)}
	rand.Read(p.random)
	return p
}

func (p *pool) parts(i int) (stamp [8]byte, rest []byte) {
	binary.BigEndian.PutUint64(stamp[:], uint64(i))
	off := (i * 4099) % poolSlack
	return stamp, p.random[off : off+max(p.size-8, 0)]
}

// object returns the body of object i, in pieces for one writev.
func (p *pool) object(i int) [][]byte {
	stamp, rest := p.parts(i)
	if p.size < 8 {
		return [][]byte{stamp[:p.size]}
	}
	return [][]byte{stamp[:], rest}
}

// verify reads a body of length n (-1: unknown) and checks it is object
// i, reading into buf.
func (p *pool) verify(r io.Reader, n int64, i int, buf []byte) error {
	if n >= 0 && n != int64(p.size) {
		return fmt.Errorf("body of %d bytes, want %d", n, p.size)
	}
	pos := 0
	for _, want := range p.object(i) {
		for len(want) > 0 {
			k, err := io.ReadFull(r, buf[:min(len(want), len(buf))])
			if err != nil {
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					return fmt.Errorf("body ends after %d bytes, want %d", pos+k, p.size)
				}
				return err
			}
			if !bytes.Equal(buf[:k], want[:k]) {
				return fmt.Errorf("body differs from what was put within bytes %d..%d", pos, pos+k)
			}
			want, pos = want[k:], pos+k
		}
	}
	if k, _ := r.Read(buf[:1]); k > 0 {
		return fmt.Errorf("body longer than %d bytes", p.size)
	}
	return nil
}
