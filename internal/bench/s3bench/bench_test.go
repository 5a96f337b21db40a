package s3bench

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var tiny = Config{SmallCount: 40, SmallSize: 4 << 10, Concurrency: 4, LargeCount: 3, LargeSize: 1<<20 + 3, LargeConcurrency: 2, Rounds: 2}

// TestRunLattice runs a tiny configuration against the endpoint in
// process. It checks that every phase moves every object and the report
// is complete and consistent; it asserts nothing about speed.
func TestRunLattice(t *testing.T) {
	l, err := StartLattice(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, err := Run(context.Background(), tiny, []Target{l.Target()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Targets) != 1 || len(rep.Targets[0].Rounds) != 2 {
		t.Fatalf("report has %d targets, want 1 with 2 rounds: %+v", len(rep.Targets), rep)
	}
	for i, rd := range rep.Targets[0].Rounds {
		for _, name := range Phases {
			ph := rd.Phase(name)
			wantOps, size := tiny.SmallCount, tiny.SmallSize
			if strings.HasPrefix(name, "large") {
				wantOps, size = tiny.LargeCount, tiny.LargeSize
			}
			if ph.Ops != wantOps || ph.Bytes != int64(wantOps*size) {
				t.Errorf("round %d %s: %d ops, %d bytes, want %d, %d", i, name, ph.Ops, ph.Bytes, wantOps, wantOps*size)
			}
			if ph.OpsPerSec <= 0 || ph.MiBPerSec <= 0 || ph.P50ms <= 0 || ph.P99ms < ph.P50ms {
				t.Errorf("round %d %s inconsistent: %+v", i, name, ph)
			}
		}
	}
	if m := rep.Targets[0].Median; m.SmallPut.Ops != tiny.SmallCount || m.LargeGet.Ops != tiny.LargeCount {
		t.Errorf("median incomplete: %+v", m)
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// memS3 is a bare in-memory S3 stand-in that checks nothing but keeps
// bodies; corrupt, if set, alters what a GET returns.
type memS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
	corrupt func(key string, body []byte) []byte
	sse     bool // answers a PUT with x-amz-server-side-encryption as S3 does
	// onBucket, if set, is told of each bucket made and how many objects
	// the server holds then.
	onBucket func(bucket string, objects int)
}

func (m *memS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		if strings.Count(r.URL.Path, "/") == 1 {
			if m.onBucket != nil {
				m.onBucket(r.URL.Path, len(m.objects))
			}
			return
		}
		body, _ := io.ReadAll(r.Body)
		m.objects[r.URL.Path] = body
		if v := r.Header.Get("X-Amz-Server-Side-Encryption"); v != "" && m.sse {
			w.Header().Set("X-Amz-Server-Side-Encryption", v)
		}
	case http.MethodGet:
		body, ok := m.objects[r.URL.Path]
		if !ok {
			http.Error(w, "NoSuchKey", http.StatusNotFound)
			return
		}
		if m.corrupt != nil {
			body = m.corrupt(r.URL.Path, body)
		}
		w.Write(body)
	case http.MethodDelete:
		delete(m.objects, r.URL.Path)
		w.WriteHeader(http.StatusNoContent)
	}
}

// TestVerify checks that a server that answers GETs with anything but
// what was PUT fails the run, and that one that answers right passes,
// with bodies sent with a length or chunked.
func TestVerify(t *testing.T) {
	cfg := Config{SmallCount: 10, SmallSize: 100, Concurrency: 2, LargeCount: 2, LargeSize: 200 << 10, LargeConcurrency: 2, Rounds: 1}
	flip := func(at func(n int) int) func(string, []byte) []byte {
		return func(_ string, b []byte) []byte {
			b = append([]byte(nil), b...)
			b[at(len(b))] ^= 1
			return b
		}
	}
	for _, tc := range []struct {
		name    string
		corrupt func(string, []byte) []byte
		want    string // in the error; "" for success
	}{
		{"faithful", nil, ""},
		{"first byte", flip(func(int) int { return 0 }), "differs"},
		{"middle byte", flip(func(n int) int { return n / 2 }), "differs"},
		{"last byte", flip(func(n int) int { return n - 1 }), "differs"},
		{"short", func(_ string, b []byte) []byte { return b[:len(b)-1] }, "bytes, want"},
		{"long", func(_ string, b []byte) []byte { return append(b[:len(b):len(b)], 0) }, "bytes, want"},
		{"another object", func(k string, b []byte) []byte {
			if strings.HasSuffix(k, "0000001") {
				return nil
			}
			return b
		}, "bytes, want"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(&memS3{objects: map[string][]byte{}, corrupt: tc.corrupt})
			defer srv.Close()
			_, err := Run(context.Background(), cfg, []Target{{Name: "mem", Endpoint: srv.URL, AccessKey: "a", SecretKey: "s", Cleanup: true}})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Run: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Run: got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestRoundsDeleteTheirObjects checks that each round starts on a server
// holding nothing of the rounds before it, unless KeepObjects, and that a
// target that does not ask for a cleanup at the end gets none then.
func TestRoundsDeleteTheirObjects(t *testing.T) {
	for _, keep := range []bool{false, true} {
		var held []int
		m := &memS3{objects: map[string][]byte{}, onBucket: func(_ string, n int) { held = append(held, n) }}
		srv := httptest.NewServer(m)
		cfg := Config{SmallCount: 5, SmallSize: 100, Concurrency: 2, Rounds: 3, Phases: []string{SmallPut, SmallGet}, KeepObjects: keep}
		_, err := Run(context.Background(), cfg, []Target{{Name: "mem", Endpoint: srv.URL, AccessKey: "a", SecretKey: "s"}})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		want, left := []int{0, 0, 0}, 0
		if keep {
			want, left = []int{0, 5, 10}, 15
		}
		if !slices.Equal(held, want) || len(m.objects) != left {
			t.Errorf("KeepObjects %v: objects held as each round began %v, want %v; %d left at the end, want %d", keep, held, want, len(m.objects), left)
		}
	}
}

// TestRoundsAlternate checks that each round starts with the target that
// went second in the one before, and that per-round ratios still pair the
// rounds of one number.
func TestRoundsAlternate(t *testing.T) {
	var order []string
	var mu sync.Mutex
	target := func(name string) (Target, func()) {
		srv := httptest.NewServer(&memS3{objects: map[string][]byte{}, onBucket: func(string, int) {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
		}})
		return Target{Name: name, Endpoint: srv.URL, AccessKey: "a", SecretKey: "s"}, srv.Close
	}
	a, stopA := target("a")
	defer stopA()
	b, stopB := target("b")
	defer stopB()
	cfg := Config{SmallCount: 5, SmallSize: 100, Concurrency: 2, Rounds: 3, Phases: []string{SmallPut}}
	rep, err := Run(context.Background(), cfg, []Target{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "b", "a", "a", "b"}; !slices.Equal(order, want) {
		t.Errorf("rounds ran %v, want %v", order, want)
	}
	if len(rep.Targets) != 2 || len(rep.Targets[0].Rounds) != 3 || len(rep.Targets[1].Rounds) != 3 || len(rep.Ratios) != 1 || len(rep.Ratios[0].Rounds) != 3 {
		t.Errorf("report: %d targets, rounds %d and %d, ratios %+v", len(rep.Targets), len(rep.Targets[0].Rounds), len(rep.Targets[1].Rounds), rep.Ratios)
	}
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{nil, 0.5, 0},
		{ms(7), 0.99, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{ms(1, 2, 3, 4), 0.99, 4 * time.Millisecond},
		{ms(hundred...), 0.5, 50 * time.Millisecond},
		{ms(hundred...), 0.99, 99 * time.Millisecond},
	} {
		if got := percentile(tc.samples, tc.p); got != tc.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tc.samples, tc.p, got, tc.want)
		}
	}
}

// TestRunCanceled checks that a run against a server that stops
// answering ends when its context does, with the context's error.
func TestRunCanceled(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" || strings.Count(r.URL.Path, "/") == 1 {
			return // bucket requests succeed
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, tiny, []Target{{Name: "stuck", Endpoint: srv.URL, AccessKey: "a", SecretKey: "s"}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run: got error %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run took %v to notice its context ended", d)
	}
}

// TestRunLatticeAllPhases runs every phase against the endpoint in
// process: each moves every object, SSE-S3 included, and a phase only one
// target ran has no ratio.
func TestRunLatticeAllPhases(t *testing.T) {
	l, err := StartLattice(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg := tiny
	cfg.Rounds = 1
	cfg.Phases = []string{"all"}
	cfg.VersionKeys = 3
	cfg.CopySize, cfg.CopyParts, cfg.CopyConcurrency = 2*(5<<20), 2, 2
	rep, err := Run(context.Background(), cfg, []Target{l.Target()})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Phases, AllPhases) {
		t.Errorf("phases %v, want %v", rep.Phases, AllPhases)
	}
	rd := rep.Targets[0].Rounds[0]
	for _, name := range AllPhases {
		ph := rd.Phase(name)
		want := map[string]int{LargePut: cfg.LargeCount, LargeGet: cfg.LargeCount, SSELargePut: cfg.LargeCount, SSELargeGet: cfg.LargeCount,
			KMSLargePut: cfg.LargeCount, KMSLargeGet: cfg.LargeCount, UploadPartCopy: cfg.CopyParts}[name]
		if want == 0 {
			want = cfg.SmallCount
		}
		if ph.Unsupported != "" || ph.Ops != want || ph.OpsPerSec <= 0 {
			t.Errorf("%s: %+v, want %d ops", name, ph, want)
		}
	}
	if rd.UploadPartCopy.Bytes != cfg.CopySize {
		t.Errorf("upload-part-copy moved %d bytes, want %d", rd.UploadPartCopy.Bytes, cfg.CopySize)
	}
}

// TestSSE checks that an SSE phase runs against a server that says it
// encrypted (x-amz-server-side-encryption: AES256 in the answer) and is
// reported unsupported, not measured, against one that ignores the header.
func TestSSE(t *testing.T) {
	cfg := Config{SmallCount: 10, SmallSize: 100, Concurrency: 2, LargeCount: 2, LargeSize: 200 << 10, LargeConcurrency: 2, Rounds: 1,
		Phases: []string{"sse", "kms"}}
	for _, sse := range []bool{true, false} {
		srv := httptest.NewServer(&memS3{objects: map[string][]byte{}, sse: sse})
		rep, err := Run(context.Background(), cfg, []Target{{Name: "mem", Endpoint: srv.URL, AccessKey: "a", SecretKey: "s", Cleanup: true}})
		srv.Close()
		if err != nil {
			t.Fatalf("sse %v: Run: %v", sse, err)
		}
		rd := rep.Targets[0].Rounds[0]
		for _, name := range []string{SSESmallPut, SSESmallGet, SSELargePut, SSELargeGet, KMSSmallPut, KMSSmallGet, KMSLargePut, KMSLargeGet} {
			ph := rd.Phase(name)
			if sse && (ph.Unsupported != "" || ph.Ops == 0) {
				t.Errorf("server that encrypts, %s: %+v", name, ph)
			}
			if !sse && (ph.Unsupported == "" || ph.Ops != 0) {
				t.Errorf("server that ignores the header, %s: %+v, want unsupported", name, ph)
			}
		}
	}
}

func TestPhaseSet(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string
		err  bool
	}{
		{[]string{"classic"}, DefaultPhases, false},
		{[]string{"large-get", "small-put"}, []string{SmallPut, LargePut, LargeGet}, false},
		{[]string{"copy", "versioned"}, []string{VersionedPut, UploadPartCopy}, false},
		{[]string{"sse-large-get"}, []string{SSELargePut, SSELargeGet}, false},
		{[]string{"kms"}, []string{KMSSmallPut, KMSSmallGet, KMSLargePut, KMSLargeGet}, false},
		{[]string{"kms-large-get"}, []string{KMSLargePut, KMSLargeGet}, false},
		{[]string{"all"}, AllPhases, false},
		{[]string{"large-putt"}, nil, true},
		{[]string{""}, nil, true},
	} {
		got, err := PhaseSet(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("PhaseSet(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestQuiet checks that with Config.Quiet a phase samples the machine
// before it starts, and starts once the others are under the bound.
func TestQuiet(t *testing.T) {
	srv := httptest.NewServer(&memS3{objects: map[string][]byte{}})
	defer srv.Close()
	cfg := Config{SmallCount: 4, SmallSize: 100, Concurrency: 2, Rounds: 1, Phases: []string{SmallPut}, Quiet: 1000, QuietWait: 5 * time.Second}
	rep, err := Run(context.Background(), cfg, []Target{{Name: "mem", Endpoint: srv.URL, AccessKey: "a", SecretKey: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	ph := rep.Targets[0].Rounds[0].SmallPut
	if ph.Busy || ph.Waited < 0.4 || ph.Waited > 5 || rep.Quiet != 1000 {
		t.Errorf("phase %+v, report quiet %v: want one that waited one window, not busy", ph, rep.Quiet)
	}
}

// TestKMSPhasesAlone: the kms phases run with no other phase to make
// their objects' pools.
func TestKMSPhasesAlone(t *testing.T) {
	srv := httptest.NewServer(&memS3{objects: map[string][]byte{}, sse: true})
	defer srv.Close()
	cfg := Config{SmallCount: 10, SmallSize: 100, Concurrency: 2, LargeCount: 2, LargeSize: 200 << 10, LargeConcurrency: 2, Rounds: 1,
		Phases: []string{"kms-small-get", "kms-large-put"}}
	rep, err := Run(context.Background(), cfg, []Target{{Name: "mem", Endpoint: srv.URL, AccessKey: "a", SecretKey: "s", Cleanup: true}})
	if err != nil {
		t.Fatal(err)
	}
	rd := rep.Targets[0].Rounds[0]
	for _, name := range []string{KMSSmallPut, KMSSmallGet, KMSLargePut} {
		if ph := rd.Phase(name); ph.Unsupported != "" || ph.Ops == 0 {
			t.Errorf("%s: %+v", name, ph)
		}
	}
}
