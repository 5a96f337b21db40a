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
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
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
	// Phases are the phases each round runs, in the order of AllPhases
	// whatever the order here (default: DefaultPhases). A GET phase needs
	// its PUT phase.
	Phases      []string
	VersionKeys int // keys the versioned PUTs overwrite (default 8)
	// The UploadPartCopy phase copies a source object of CopySize bytes,
	// made once per target by a multipart upload of CopyParts parts, into
	// a new multipart upload of CopyParts ranged UploadPartCopy parts,
	// CopyConcurrency at a time (defaults 1 GiB, 8, 2).
	CopySize        int64
	CopyParts       int
	CopyConcurrency int
	// Quiet, if above 0, makes each phase wait, before it starts, until
	// the other processes of the machine used at most Quiet cores over
	// half a second, or QuietWait has passed (default 10 s): on a machine
	// shared with builds and tests, a phase of a second or two is
	// otherwise measured against whatever burst of theirs it meets.
	Quiet     float64
	QuietWait time.Duration
	// KeepObjects keeps every round's objects until the end of the run.
	// By default a target's round deletes what it wrote (not the copy
	// source) before the next round or target starts, so that every
	// round meets the same machine: on a VM whose memory is overcommitted
	// on its host, objects kept round after round fill the page cache
	// until the host reclaims and each new page costs several times more,
	// and the later rounds measure that instead of the servers.
	KeepObjects bool
	Progress    io.Writer
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
	if len(c.Phases) == 0 {
		c.Phases = DefaultPhases
	}
	if c.VersionKeys <= 0 {
		c.VersionKeys = 8
	}
	if c.CopySize <= 0 {
		c.CopySize = 1 << 30
	}
	if c.CopyParts <= 0 {
		c.CopyParts = 8
	}
	if c.CopyConcurrency <= 0 {
		c.CopyConcurrency = 2
	}
	if c.QuietWait <= 0 {
		c.QuietWait = 10 * time.Second
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
	// pids are the server's processes, whose CPU time a phase counts as
	// its own (a server in this process is counted with the client).
	pids []int
}

// Phase names, in the order a round runs them.
const (
	SmallPut       = "small-put"
	SmallGet       = "small-get"
	LargePut       = "large-put"
	LargeGet       = "large-get"
	VersionedPut   = "versioned-put"    // small PUTs overwriting a few keys of a bucket that keeps versions
	SSESmallPut    = "sse-small-put"    // small PUTs with x-amz-server-side-encryption: AES256 (SSE-S3)
	SSESmallGet    = "sse-small-get"    // GETs of those
	SSELargePut    = "sse-large-put"    // large PUTs with SSE-S3
	SSELargeGet    = "sse-large-get"    // GETs of those
	KMSSmallPut    = "kms-small-put"    // small PUTs with x-amz-server-side-encryption: aws:kms (SSE-KMS, the account's default key)
	KMSSmallGet    = "kms-small-get"    // GETs of those
	KMSLargePut    = "kms-large-put"    // large PUTs with SSE-KMS
	KMSLargeGet    = "kms-large-get"    // GETs of those
	UploadPartCopy = "upload-part-copy" // a multipart copy of a large object in ranged UploadPartCopy parts
)

// AllPhases lists every phase, in the order a round runs them.
var AllPhases = []string{SmallPut, SmallGet, LargePut, LargeGet, VersionedPut, SSESmallPut, SSESmallGet, SSELargePut, SSELargeGet,
	KMSSmallPut, KMSSmallGet, KMSLargePut, KMSLargeGet, UploadPartCopy}

// DefaultPhases are the phases a round runs unless told otherwise.
var DefaultPhases = []string{SmallPut, SmallGet, LargePut, LargeGet}

// Phases is DefaultPhases, under its older name.
var Phases = DefaultPhases

// needs maps a GET phase to the PUT phase that makes its objects.
var needs = map[string]string{SmallGet: SmallPut, LargeGet: LargePut, SSESmallGet: SSESmallPut, SSELargeGet: SSELargePut,
	KMSSmallGet: KMSSmallPut, KMSLargeGet: KMSLargePut}

// PhaseSet turns a list of phase names and groups (classic: the default
// four; sse; kms; versioned: versioned-put; copy: upload-part-copy; all) into
// phases in the order of AllPhases, adding the PUT phase a GET needs.
func PhaseSet(names []string) ([]string, error) {
	groups := map[string][]string{
		"classic":   DefaultPhases,
		"default":   DefaultPhases,
		"sse":       {SSESmallPut, SSESmallGet, SSELargePut, SSELargeGet},
		"kms":       {KMSSmallPut, KMSSmallGet, KMSLargePut, KMSLargeGet},
		"versioned": {VersionedPut},
		"copy":      {UploadPartCopy},
		"all":       AllPhases,
	}
	want := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if g, ok := groups[n]; ok {
			for _, p := range g {
				want[p] = true
			}
			continue
		}
		if !slices.Contains(AllPhases, n) {
			return nil, fmt.Errorf("s3bench: unknown phase %q: want one of %s, or a group: classic, sse, kms, versioned, copy, all", n, strings.Join(AllPhases, ", "))
		}
		want[n] = true
	}
	for get, put := range needs {
		if want[get] {
			want[put] = true
		}
	}
	var out []string
	for _, p := range AllPhases {
		if want[p] {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("s3bench: no phase")
	}
	return out, nil
}

// Phase is the measurement of one phase of one round.
type Phase struct {
	Ops       int     `json:"ops"`
	Bytes     int64   `json:"bytes"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_second"`
	MiBPerSec float64 `json:"mib_per_second"`
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
	// Cores is the CPU the client and the server used during the phase,
	// in cores (CPU seconds per second); Others, what every other process
	// of the machine used meanwhile, the kernel's threads included. Linux
	// only; a server not started by this run counts as others.
	Cores  float64 `json:"cores"`
	Others float64 `json:"others_cores"`
	// Waited is how long the phase waited for the machine to be quiet
	// (Config.Quiet) before it started; Busy, that it gave up waiting.
	Waited float64 `json:"waited_s,omitempty"`
	Busy   bool    `json:"busy,omitempty"`
	// Unsupported, if not empty, says why the server could not run the
	// phase (its answer to the first request, say a 501); the phase then
	// has no figures and takes no part in medians and ratios.
	Unsupported string `json:"unsupported,omitempty"`
}

// Round is one round of one target: each phase chosen once, on a fresh
// bucket. Phases not run are zero.
type Round struct {
	SmallPut       Phase `json:"small_put,omitzero"`
	SmallGet       Phase `json:"small_get,omitzero"`
	LargePut       Phase `json:"large_put,omitzero"`
	LargeGet       Phase `json:"large_get,omitzero"`
	VersionedPut   Phase `json:"versioned_put,omitzero"`
	SSESmallPut    Phase `json:"sse_small_put,omitzero"`
	SSESmallGet    Phase `json:"sse_small_get,omitzero"`
	SSELargePut    Phase `json:"sse_large_put,omitzero"`
	SSELargeGet    Phase `json:"sse_large_get,omitzero"`
	KMSSmallPut    Phase `json:"kms_small_put,omitzero"`
	KMSSmallGet    Phase `json:"kms_small_get,omitzero"`
	KMSLargePut    Phase `json:"kms_large_put,omitzero"`
	KMSLargeGet    Phase `json:"kms_large_get,omitzero"`
	UploadPartCopy Phase `json:"upload_part_copy,omitzero"`
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
	case VersionedPut:
		return &r.VersionedPut
	case SSESmallPut:
		return &r.SSESmallPut
	case SSESmallGet:
		return &r.SSESmallGet
	case SSELargePut:
		return &r.SSELargePut
	case SSELargeGet:
		return &r.SSELargeGet
	case KMSSmallPut:
		return &r.KMSSmallPut
	case KMSSmallGet:
		return &r.KMSSmallGet
	case KMSLargePut:
		return &r.KMSLargePut
	case KMSLargeGet:
		return &r.KMSLargeGet
	case UploadPartCopy:
		return &r.UploadPartCopy
	}
	panic("s3bench: unknown phase " + name)
}

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
// between rounds run back to back. A phase either target could not run is
// missing from the maps.
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
	Phases           []string       `json:"phases"`
	Quiet            float64        `json:"quiet_cores,omitempty"`
	VersionKeys      int            `json:"version_keys,omitempty"`
	CopySize         int64          `json:"copy_size,omitempty"`
	CopyParts        int            `json:"copy_parts,omitempty"`
	CopyConcurrency  int            `json:"copy_concurrency,omitempty"`
	Targets          []TargetReport `json:"targets"`
	Ratios           []Ratio        `json:"ratios,omitempty"`
}

// Run measures every target, round by round: round 1 of each target in
// turn, then round 2, and so on. Each round starts with the next target
// (with two: A then B, B then A, A then B, ...), so that a cost that grows
// or shrinks over a run (this machine's first touch of new memory grows
// as the run fills it) does not fall on the same target every round.
func Run(ctx context.Context, cfg Config, targets []Target) (Report, error) {
	cfg.setDefaults()
	phases, err := PhaseSet(cfg.Phases)
	if err != nil {
		return Report{}, err
	}
	cfg.Phases = phases
	rep := Report{CPUs: runtime.GOMAXPROCS(0), SmallCount: cfg.SmallCount, SmallSize: cfg.SmallSize, Concurrency: cfg.Concurrency,
		LargeCount: cfg.LargeCount, LargeSize: cfg.LargeSize, LargeConcurrency: cfg.LargeConcurrency, Phases: phases, Quiet: cfg.Quiet}
	if slices.Contains(phases, VersionedPut) {
		rep.VersionKeys = cfg.VersionKeys
	}
	if slices.Contains(phases, UploadPartCopy) {
		if cfg.CopySize/int64(cfg.CopyParts) < 5<<20 || cfg.CopySize/int64(cfg.CopyParts) > math.MaxInt32 {
			return rep, fmt.Errorf("s3bench: copy parts of %d bytes: S3 wants 5 MiB to 5 GiB (and here under 2 GiB)", cfg.CopySize/int64(cfg.CopyParts))
		}
		rep.CopySize, rep.CopyParts, rep.CopyConcurrency = cfg.CopySize, cfg.CopyParts, cfg.CopyConcurrency
	}
	if len(targets) == 0 {
		return rep, errors.New("s3bench: no target")
	}
	for i := range targets {
		if targets[i].Region == "" {
			targets[i].Region = "us-east-1"
		}
		rep.Targets = append(rep.Targets, TargetReport{Name: targets[i].Name})
	}
	var tag [4]byte
	rand.Read(tag[:])
	r := &runner{cfg: cfg, run: "s3bench-" + hex.EncodeToString(tag[:]), sources: map[*Target]string{}}
	if slices.ContainsFunc(phases, func(p string) bool { return p == SmallPut || p == VersionedPut || p == SSESmallPut || p == KMSSmallPut }) {
		r.small = newPool(cfg.SmallSize)
	}
	if slices.Contains(phases, LargePut) || slices.Contains(phases, SSELargePut) || slices.Contains(phases, KMSLargePut) {
		r.large = newPool(cfg.LargeSize)
	}
	if slices.Contains(phases, UploadPartCopy) {
		r.part = newPool(int(cfg.CopySize / int64(cfg.CopyParts)))
	}
	defer func() {
		for _, c := range slices.Backward(r.made) {
			if c.t.Cleanup { // the others' data is thrown away whole
				c.run(context.Background(), cfg)
			}
		}
	}()
	for round := 1; round <= cfg.Rounds; round++ {
		for j := range targets {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			i := (round - 1 + j) % len(targets)
			t := &targets[i]
			bucket := fmt.Sprintf("%s-r%d", r.run, round)
			fmt.Fprintf(cfg.Progress, "round %d of %d, %s: %s\n", round, cfg.Rounds, t.Name, strings.Join(phases, ", "))
			if err := request(t, http.MethodPut, "/"+bucket); err != nil {
				return rep, fmt.Errorf("%s: %w", t.Name, err)
			}
			cl := r.cleanup(t, bucket, round)
			rd, err := r.round(ctx, t, bucket, round, cl)
			if err != nil {
				return rep, fmt.Errorf("%s, round %d: %w", t.Name, round, err)
			}
			rep.Targets[i].Rounds = append(rep.Targets[i].Rounds, rd)
			if !cfg.KeepObjects {
				r.clean(ctx, t, round)
			}
		}
	}
	for i := range rep.Targets {
		tr := &rep.Targets[i]
		for _, name := range phases {
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
		for _, name := range phases {
			if x, y := rate(base.Median.Phase(name)), rate(other.Median.Phase(name)); x > 0 && y > 0 {
				r.Median[name] = x / y
			}
		}
		for k := range base.Rounds {
			m := map[string]float64{}
			for _, name := range phases {
				if x, y := rate(base.Rounds[k].Phase(name)), rate(other.Rounds[k].Phase(name)); x > 0 && y > 0 {
					m[name] = x / y
				}
			}
			r.Rounds = append(r.Rounds, m)
		}
		rep.Ratios = append(rep.Ratios, r)
	}
	return rep, nil
}

// rate is what a phase is judged by: operations per second (for large
// objects, in proportion to MiB per second). An unsupported phase's is 0.
func rate(p Phase) float64 { return p.OpsPerSec }

// runner is the state of one run.
type runner struct {
	cfg                Config
	run                string // prefix of the run's bucket names
	small, large, part *pool
	sources            map[*Target]string // path of each target's copy source
	made               []*cleanup
}

// cleanup returns the cleanup of bucket on t, nil if t needs none.
// cleanup registers bucket, made by t's round (0 for one kept for the
// whole run), to be deleted with the objects put in it: after the round,
// unless KeepObjects, else at the end if t asks for it.
func (r *runner) cleanup(t *Target, bucket string, round int) *cleanup {
	if !t.Cleanup && (r.cfg.KeepObjects || round == 0) {
		return nil
	}
	c := &cleanup{t: t, bucket: bucket, round: round}
	r.made = append(r.made, c)
	return c
}

// clean deletes what t's round made and was registered to be deleted,
// untimed, and then syncs, so that the next phase does not pay for the
// deletes' writes.
func (r *runner) clean(ctx context.Context, t *Target, round int) {
	r.made = slices.DeleteFunc(r.made, func(c *cleanup) bool {
		// One that fails (the run canceled) stays for the end of the
		// run, when a target that asks for a cleanup gets it.
		return c.t == t && c.round == round && c.run(ctx, r.cfg) == nil
	})
	syncDisks()
}

// step is a phase of objects of one pool: n requests, conc in flight.
type step struct {
	n, conc int
	pool    *pool
	prefix  string
	method  string
	header  [][2]string
}

var (
	sseHeader = [][2]string{{"X-Amz-Server-Side-Encryption", "AES256"}}
	kmsHeader = [][2]string{{"X-Amz-Server-Side-Encryption", "aws:kms"}}
)

func (r *runner) round(ctx context.Context, t *Target, bucket string, round int, cl *cleanup) (Round, error) {
	var rd Round
	cfg := r.cfg
	for _, name := range cfg.Phases {
		var ph Phase
		var err error
		switch name {
		case SmallPut:
			ph, err = r.objects(ctx, t, bucket, name, step{cfg.SmallCount, cfg.Concurrency, r.small, "s/", http.MethodPut, nil}, cl)
		case SmallGet:
			ph, err = r.objects(ctx, t, bucket, name, step{cfg.SmallCount, cfg.Concurrency, r.small, "s/", http.MethodGet, nil}, cl)
		case LargePut:
			ph, err = r.objects(ctx, t, bucket, name, step{cfg.LargeCount, cfg.LargeConcurrency, r.large, "l/", http.MethodPut, nil}, cl)
		case LargeGet:
			ph, err = r.objects(ctx, t, bucket, name, step{cfg.LargeCount, cfg.LargeConcurrency, r.large, "l/", http.MethodGet, nil}, cl)
		case SSESmallPut:
			ph, err = r.ssePut(ctx, t, bucket, name, step{cfg.SmallCount, cfg.Concurrency, r.small, "sse-s/", http.MethodPut, sseHeader}, cl)
		case SSELargePut:
			ph, err = r.ssePut(ctx, t, bucket, name, step{cfg.LargeCount, cfg.LargeConcurrency, r.large, "sse-l/", http.MethodPut, sseHeader}, cl)
		case KMSSmallPut:
			ph, err = r.ssePut(ctx, t, bucket, name, step{cfg.SmallCount, cfg.Concurrency, r.small, "kms-s/", http.MethodPut, kmsHeader}, cl)
		case KMSLargePut:
			ph, err = r.ssePut(ctx, t, bucket, name, step{cfg.LargeCount, cfg.LargeConcurrency, r.large, "kms-l/", http.MethodPut, kmsHeader}, cl)
		case SSESmallGet, SSELargeGet, KMSSmallGet, KMSLargeGet:
			put := rd.Phase(needs[name])
			if put.Unsupported != "" {
				ph = Phase{Unsupported: "needs " + needs[name] + ", unsupported"}
				break
			}
			prefix := "sse-"
			if name == KMSSmallGet || name == KMSLargeGet {
				prefix = "kms-"
			}
			s := step{cfg.SmallCount, cfg.Concurrency, r.small, prefix + "s/", http.MethodGet, nil}
			if name == SSELargeGet || name == KMSLargeGet {
				s = step{cfg.LargeCount, cfg.LargeConcurrency, r.large, prefix + "l/", http.MethodGet, nil}
			}
			ph, err = r.objects(ctx, t, bucket, name, s, cl)
		case VersionedPut:
			ph, err = r.versioned(ctx, t, fmt.Sprintf("%s-v%d", r.run, round), round)
		case UploadPartCopy:
			ph, err = r.copy(ctx, t, bucket, cl)
		}
		if err != nil {
			return rd, fmt.Errorf("%s: %w", name, err)
		}
		*rd.phase(name) = ph
		if ph.Unsupported != "" {
			fmt.Fprintf(cfg.Progress, "  %-16s unsupported: %s\n", name, ph.Unsupported)
			continue
		}
		note := ""
		if ph.Busy {
			note = fmt.Sprintf(" (busy: others above %.2f cores for the %.0f s it waited)", cfg.Quiet, ph.Waited)
		} else if ph.Waited >= 1 {
			note = fmt.Sprintf(" (waited %.0f s for a quiet machine)", ph.Waited)
		}
		fmt.Fprintf(cfg.Progress, "  %-16s %8.0f ops/s %8.1f MiB/s  p50 %7.2f ms  p99 %7.2f ms  cores %.2f, others %.2f%s\n",
			name, ph.OpsPerSec, ph.MiBPerSec, ph.P50ms, ph.P99ms, ph.Cores, ph.Others, note)
	}
	return rd, nil
}

// measure runs a phase under t's profile labels, timing it from the moment
// its connections are open, and fills in the phase's bytes, rate and CPU.
// body runs the phase: it opens its connections, calls start, and
// returns the latencies of its operations.
func (r *runner) measure(ctx context.Context, t *Target, name string, bytes int64, body func(ctx context.Context, start func()) ([]time.Duration, error)) (Phase, error) {
	waited, busy := r.settle(ctx, t)
	if t.phase != nil {
		t.phase(name)
		defer t.phase("")
	}
	var lat []time.Duration
	var err error
	var t0 time.Time
	var c0 cpuSample
	start := func() {
		c0 = sampleCPU(t.pids)
		t0 = time.Now()
	}
	pprof.Do(ctx, pprof.Labels("target", t.Name, "phase", name, "side", "client"), func(ctx context.Context) {
		lat, err = body(ctx, start)
	})
	elapsed := time.Since(t0).Seconds()
	c1 := sampleCPU(t.pids)
	if err != nil {
		return Phase{}, err
	}
	slices.Sort(lat)
	ph := Phase{Ops: len(lat), Bytes: bytes, Seconds: elapsed, OpsPerSec: float64(len(lat)) / elapsed,
		MiBPerSec: float64(bytes) / (1 << 20) / elapsed, P50ms: ms(percentile(lat, 0.50)), P99ms: ms(percentile(lat, 0.99))}
	ph.Cores = (c1.ours - c0.ours) / elapsed
	ph.Others = max(0, (c1.busy-c0.busy)-(c1.ours-c0.ours)) / elapsed
	ph.Waited, ph.Busy = waited.Seconds(), busy
	return ph, nil
}

// settle prepares the machine for a phase: dirty pages written out, and,
// with Config.Quiet, other processes down to Quiet cores over half a
// second, waiting at most QuietWait. It returns how long it waited and
// whether it gave up.
func (r *runner) settle(ctx context.Context, t *Target) (time.Duration, bool) {
	start := time.Now()
	syncDisks()
	if r.cfg.Quiet <= 0 {
		return 0, false
	}
	const window = 500 * time.Millisecond
	for {
		c0 := sampleCPU(t.pids)
		select {
		case <-ctx.Done():
			return time.Since(start), true
		case <-time.After(window):
		}
		c1 := sampleCPU(t.pids)
		others := ((c1.busy - c0.busy) - (c1.ours - c0.ours)) / window.Seconds()
		if others <= r.cfg.Quiet {
			return time.Since(start), false
		}
		if time.Since(start) >= r.cfg.QuietWait {
			return time.Since(start), true
		}
	}
}

// objects runs a phase of PUTs or GETs of s.n objects, verifying GETs.
func (r *runner) objects(ctx context.Context, t *Target, bucket, name string, s step, cl *cleanup) (Phase, error) {
	path := func(i int) string { return fmt.Sprintf("/%s/%s%07d", bucket, s.prefix, i) }
	op := func(c *client, i int) error {
		if s.method == http.MethodPut {
			return c.send(&req{method: http.MethodPut, path: path(i), header: s.header, body: s.pool.object(i)})
		}
		return c.do(http.MethodGet, path(i), nil, func(rd io.Reader, n int64) error {
			return s.pool.verify(rd, n, i, c.buf)
		})
	}
	if cl != nil && s.method == http.MethodPut {
		for i := range s.n {
			cl.paths = append(cl.paths, path(i))
		}
	}
	return r.measure(ctx, t, name, int64(s.n)*int64(s.pool.size), func(ctx context.Context, start func()) ([]time.Duration, error) {
		return drive(ctx, t, s.n, s.conc, start, op)
	})
}

// ssePut is a phase of PUTs with SSE-S3, after a first PUT, not timed,
// that finds out whether the server does SSE-S3: it must answer 2xx and
// say x-amz-server-side-encryption: AES256. A server that does not is
// reported as unsupported, with its answer.
func (r *runner) ssePut(ctx context.Context, t *Target, bucket, name string, s step, cl *cleanup) (Phase, error) {
	c, err := dial(t)
	if err != nil {
		return Phase{}, err
	}
	h := http.Header{}
	path := fmt.Sprintf("/%s/%s%07d", bucket, s.prefix, 0)
	err = c.send(&req{method: http.MethodPut, path: path, header: s.header, body: s.pool.object(0), respHeader: h})
	c.close()
	mode := s.header[0][1]
	if se := (*statusError)(nil); errors.As(err, &se) {
		return Phase{Unsupported: fmt.Sprintf("a PUT with x-amz-server-side-encryption: %s is answered %d %s", mode, se.status, errorCode(se.body))}, nil
	}
	if err != nil {
		return Phase{}, err
	}
	if cl != nil {
		cl.paths = append(cl.paths, path)
	}
	if v := h.Get("X-Amz-Server-Side-Encryption"); v != mode {
		return Phase{Unsupported: fmt.Sprintf("a PUT with x-amz-server-side-encryption: %s is answered 2xx with x-amz-server-side-encryption %q", mode, v)}, nil
	}
	return r.objects(ctx, t, bucket, name, s, cl)
}

// errorCode is the <Code> of an S3 error body, or the body's start.
func errorCode(body string) string {
	if _, rest, ok := strings.Cut(body, "<Code>"); ok {
		if code, _, ok := strings.Cut(rest, "</Code>"); ok {
			msg := ""
			if _, m, ok := strings.Cut(rest, "<Message>"); ok {
				msg, _, _ = strings.Cut(m, "</Message>")
			}
			if len(msg) > 160 {
				msg = msg[:160] + "..."
			}
			return strings.TrimSpace(code + ": " + msg)
		}
	}
	return strings.TrimSpace(body[:min(len(body), 200)])
}

// versioned is a phase of small PUTs into a new bucket that keeps
// versions, object i to key i mod VersionKeys, so that most PUTs make a
// new version of a key that has some. Every PUT must be answered with a
// version id of its own; after the clock, each key's current body must
// be one of those PUT to it.
func (r *runner) versioned(ctx context.Context, t *Target, bucket string, round int) (Phase, error) {
	if err := request(t, http.MethodPut, "/"+bucket); err != nil {
		return Phase{}, err
	}
	vcl := r.cleanup(t, bucket, round)
	c, err := dial(t)
	if err != nil {
		return Phase{}, err
	}
	const enable = `<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>`
	err = c.send(&req{method: http.MethodPut, path: "/" + bucket, query: url.Values{"versioning": {""}}, body: [][]byte{[]byte(enable)}})
	c.close()
	if se := (*statusError)(nil); errors.As(err, &se) {
		return Phase{Unsupported: fmt.Sprintf("PutBucketVersioning is answered %d %s", se.status, errorCode(se.body))}, nil
	}
	if err != nil {
		return Phase{}, err
	}
	keys, n := r.cfg.VersionKeys, r.cfg.SmallCount
	path := func(i int) string { return fmt.Sprintf("/%s/v/%07d", bucket, i%keys) }
	versions := make([]string, n)
	op := func(c *client, i int) error {
		h := http.Header{}
		if err := c.send(&req{method: http.MethodPut, path: path(i), body: r.small.object(i), respHeader: h}); err != nil {
			return err
		}
		if versions[i] = h.Get("X-Amz-Version-Id"); versions[i] == "" || versions[i] == "null" {
			return fmt.Errorf("s3bench: PUT %s in a bucket that keeps versions: answered without a version id", path(i))
		}
		return nil
	}
	ph, err := r.measure(ctx, t, VersionedPut, int64(n)*int64(r.small.size), func(ctx context.Context, start func()) ([]time.Duration, error) {
		return drive(ctx, t, n, r.cfg.Concurrency, start, op)
	})
	if err != nil {
		return ph, err
	}
	seen := map[string]bool{}
	for i, v := range versions {
		if seen[v] {
			return ph, fmt.Errorf("s3bench: two PUTs to a bucket that keeps versions were given version id %q", v)
		}
		seen[v] = true
		if vcl != nil {
			vcl.paths = append(vcl.paths, path(i)+"?versionId="+url.QueryEscape(v))
		}
	}
	_, err = drive(ctx, t, min(keys, n), r.cfg.Concurrency, nil, func(c *client, k int) error {
		return c.do(http.MethodGet, path(k), nil, func(rd io.Reader, length int64) error {
			var stamp [8]byte
			if _, err := io.ReadFull(rd, stamp[:min(8, r.small.size)]); err != nil {
				return fmt.Errorf("s3bench: GET %s: %w", path(k), err)
			}
			i := int(binary.BigEndian.Uint64(stamp[:]))
			if r.small.size < 8 || i%keys != k || i >= n {
				if r.small.size < 8 {
					return nil // too short to name its object
				}
				return fmt.Errorf("s3bench: GET %s: the body of object %d, not one PUT to this key", path(k), i)
			}
			return r.small.verify(io.MultiReader(bytes.NewReader(stamp[:]), rd), length, i, c.buf)
		})
	})
	return ph, err
}

// copy is the UploadPartCopy phase: the source is made once per target,
// by a multipart upload, not timed; the clock covers creating a multipart
// upload, copying the source into it in CopyParts ranged UploadPartCopy
// parts, CopyConcurrency at a time, and completing it. The copy is then
// read back and checked against the source's bytes.
func (r *runner) copy(ctx context.Context, t *Target, bucket string, cl *cleanup) (Phase, error) {
	parts, size := r.cfg.CopyParts, int64(r.part.size)
	src, ok := r.sources[t]
	if !ok {
		srcBucket := r.run + "-src"
		if err := request(t, http.MethodPut, "/"+srcBucket); err != nil {
			return Phase{}, err
		}
		scl := r.cleanup(t, srcBucket, 0)
		src = "/" + srcBucket + "/source"
		c, err := dial(t)
		if err != nil {
			return Phase{}, err
		}
		defer c.close()
		fmt.Fprintf(r.cfg.Progress, "  making the copy source: %d parts of %d MiB\n", parts, size>>20)
		id, err := createUpload(c, src)
		if se := (*statusError)(nil); errors.As(err, &se) {
			return Phase{Unsupported: fmt.Sprintf("CreateMultipartUpload is answered %d %s", se.status, errorCode(se.body))}, nil
		}
		if err != nil {
			return Phase{}, err
		}
		etags := make([]string, parts)
		for j := range parts {
			h := http.Header{}
			q := url.Values{"partNumber": {strconv.Itoa(j + 1)}, "uploadId": {id}}
			if err := c.send(&req{method: http.MethodPut, path: src, query: q, body: r.part.object(j), respHeader: h}); err != nil {
				return Phase{}, err
			}
			etags[j] = h.Get("ETag")
		}
		if err := completeUpload(c, src, id, etags); err != nil {
			return Phase{}, err
		}
		if scl != nil {
			scl.paths = append(scl.paths, src)
		}
		r.sources[t] = src
	}
	dst := fmt.Sprintf("/%s/c/%07d", bucket, 0)
	var id string
	etags := make([]string, parts)
	op := func(c *client, j int) error {
		h := http.Header{}
		q := url.Values{"partNumber": {strconv.Itoa(j + 1)}, "uploadId": {id}}
		var body bytes.Buffer
		err := c.send(&req{method: http.MethodPut, path: dst, query: q, respHeader: h, header: [][2]string{
			{"X-Amz-Copy-Source", src},
			{"X-Amz-Copy-Source-Range", fmt.Sprintf("bytes=%d-%d", int64(j)*size, int64(j+1)*size-1)},
		}, read: func(rd io.Reader, _ int64) error { _, err := io.Copy(&body, rd); return err }})
		if err != nil {
			return err
		}
		etags[j], err = xmlValue(body.String(), "ETag")
		return err
	}
	var unsupported string
	ph, err := r.measure(ctx, t, UploadPartCopy, int64(parts)*size, func(ctx context.Context, start func()) ([]time.Duration, error) {
		c, err := dial(t)
		if err != nil {
			return nil, err
		}
		defer c.close()
		var lat []time.Duration
		lat, err = drive(ctx, t, parts, r.cfg.CopyConcurrency, func() {
			start()
			if id, err = createUpload(c, dst); err != nil {
				id = ""
			}
		}, func(c *client, j int) error {
			if id == "" {
				return err
			}
			return op(c, j)
		})
		if se := (*statusError)(nil); errors.As(err, &se) {
			unsupported = fmt.Sprintf("%s is answered %d %s", map[bool]string{true: "CreateMultipartUpload", false: "UploadPartCopy"}[id == ""], se.status, errorCode(se.body))
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		return lat, completeUpload(c, dst, id, etags)
	})
	if unsupported != "" {
		return Phase{Unsupported: unsupported}, nil
	}
	if err != nil {
		return Phase{}, err
	}
	if cl != nil {
		cl.paths = append(cl.paths, dst)
	}
	c, err := dial(t)
	if err != nil {
		return ph, err
	}
	defer c.close()
	err = c.do(http.MethodGet, dst, nil, func(rd io.Reader, n int64) error {
		if n >= 0 && n != int64(parts)*size {
			return fmt.Errorf("copy of %d bytes, want %d", n, int64(parts)*size)
		}
		for j := range parts {
			if err := r.part.verify(io.LimitReader(rd, size), size, j, c.buf); err != nil {
				return fmt.Errorf("copy, part %d: %w", j+1, err)
			}
		}
		return nil
	})
	if err != nil {
		return ph, fmt.Errorf("s3bench: GET %s: %w", dst, err)
	}
	return ph, nil
}

// createUpload starts a multipart upload of path and returns its id.
func createUpload(c *client, path string) (string, error) {
	var body bytes.Buffer
	err := c.send(&req{method: http.MethodPost, path: path, query: url.Values{"uploads": {""}},
		read: func(rd io.Reader, _ int64) error { _, err := io.Copy(&body, rd); return err }})
	if err != nil {
		return "", err
	}
	return xmlValue(body.String(), "UploadId")
}

// completeUpload completes a multipart upload with its parts' ETags. A
// 200 whose body is an <Error> is an error, as S3 may answer one late.
func completeUpload(c *client, path, id string, etags []string) error {
	var b strings.Builder
	b.WriteString("<CompleteMultipartUpload>")
	for j, e := range etags {
		fmt.Fprintf(&b, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", j+1, e)
	}
	b.WriteString("</CompleteMultipartUpload>")
	var body bytes.Buffer
	err := c.send(&req{method: http.MethodPost, path: path, query: url.Values{"uploadId": {id}}, body: [][]byte{[]byte(b.String())},
		read: func(rd io.Reader, _ int64) error { _, err := io.Copy(&body, rd); return err }})
	if err != nil {
		return err
	}
	if strings.Contains(body.String(), "<Error>") {
		return fmt.Errorf("s3bench: completing %s: %s", path, errorCode(body.String()))
	}
	return nil
}

// xmlValue is the text of the first element name in an XML body.
func xmlValue(body, name string) (string, error) {
	var v struct {
		Value string `xml:",chardata"`
	}
	d := xml.NewDecoder(strings.NewReader(body))
	for {
		tok, err := d.Token()
		if err != nil {
			return "", fmt.Errorf("s3bench: no <%s> in %q", name, body[:min(len(body), 300)])
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == name {
			if err := d.DecodeElement(&v, &se); err != nil {
				return "", err
			}
			return strings.TrimSpace(v.Value), nil
		}
	}
}

// drive runs op for i in [0, n) with conc workers, each on its own
// connection, opened before start (if not nil) is called and the workers
// start, and returns the latencies of the operations.
func drive(ctx context.Context, t *Target, n, conc int, start func(), op func(cl *client, i int) error) ([]time.Duration, error) {
	conc = max(1, min(conc, n))
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
			return nil, err
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
	if start != nil {
		start()
	}
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
	mu.Lock()
	defer mu.Unlock()
	if failure != nil {
		return nil, failure
	}
	return slices.Concat(lat...), nil
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
	if ok := slices.DeleteFunc(slices.Clone(ps), func(p Phase) bool { return p.Unsupported != "" }); len(ok) > 0 {
		ps = ok
	} else {
		return ps[0] // none ran: the first says why
	}
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

// cleanup is a bucket of the run to delete at the end, with the objects
// (paths, a query allowed: ?versionId=) put in it.
type cleanup struct {
	t      *Target
	bucket string
	round  int // the round that made it; 0: the run
	paths  []string
}

// run deletes the bucket's objects and the bucket, best effort: a
// failure is reported to cfg.Progress and returned.
func (c *cleanup) run(ctx context.Context, cfg Config) error {
	paths := slices.Compact(slices.Sorted(slices.Values(c.paths)))
	_, err := drive(ctx, c.t, len(paths), cfg.Concurrency, nil, func(cl *client, i int) error {
		p, q, _ := strings.Cut(paths[i], "?")
		var query url.Values
		if q != "" {
			query, _ = url.ParseQuery(q)
		}
		return cl.send(&req{method: http.MethodDelete, path: p, query: query})
	})
	if err == nil {
		err = request(c.t, http.MethodDelete, "/"+c.bucket)
	}
	if err != nil {
		fmt.Fprintf(cfg.Progress, "cleaning up %s on %s: %v\n", c.bucket, c.t.Name, err)
	}
	return err
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
