package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"4096", 4096, true},
		{"4KiB", 4096, true},
		{"4k", 4096, true},
		{"64MiB", 64 << 20, true},
		{"64MB", 64 << 20, true},
		{"1GiB", 1 << 30, true},
		{"10B", 10, true},
		{"", 0, false},
		{"KiB", 0, false},
		{"-1", 0, false},
		{"4TiB", 0, false},
		{"4 KiB", 4096, true},
		{"3GiB", 0, false}, // more than an int32 of bytes
	} {
		got, err := parseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestBenchLedgerProfiles runs a small bench ledger with a CPU profile and
// an execution trace, and checks both files are what their tools read: a
// gzipped profile and a Go trace. A file that cannot be created fails the
// command before anything is measured.
func TestBenchLedgerProfiles(t *testing.T) {
	dir := t.TempDir()
	prof, tr := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "trace.out")
	r := mustRun(t, "bench", "ledger", "--blocks", "200", "--accounts", "16", "--rounds", "1", "--phases", "http",
		"--cpuprofile", prof, "--trace", tr)
	if !strings.Contains(r.stdout, "HTTP/verify") {
		t.Errorf("no report:\n%s", r.stdout)
	}
	for _, f := range []struct{ path, magic string }{{prof, "\x1f\x8b"}, {tr, "go 1."}} {
		data, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte(f.magic)) {
			t.Errorf("%s starts with %q, want %q", filepath.Base(f.path), data[:min(len(data), 8)], f.magic)
		}
	}

	missing := filepath.Join(dir, "no-such-dir", "trace.out")
	r = run(t, "bench", "ledger", "--blocks", "200", "--accounts", "16", "--rounds", "1", "--trace", missing)
	if r.code == 0 || !strings.Contains(r.stderr, "no-such-dir") {
		t.Errorf("a trace file that cannot be created: exit %d, stderr %q", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "HTTP/verify") {
		t.Errorf("measured although the trace file could not be created:\n%s", r.stdout)
	}
}

// TestBenchNetwork runs a small bench network and checks the report has
// both ratios, in process and over HTTP, with figures in them; bad sizes
// are usage errors, before anything starts.
func TestBenchNetwork(t *testing.T) {
	r := mustRun(t, "bench", "network", "--blocks", "200", "--forks", "2", "--sync-blocks", "2000", "--rounds", "1", "--concurrency", "4")
	var header, median []string
	for line := range strings.Lines(r.stdout) {
		switch f := strings.Fields(line); {
		case len(f) > 0 && f[0] == "round":
			header = f
		case len(f) > 0 && f[0] == "median":
			median = f
		}
	}
	// Ten figures, then the elections refused: "HTTP / in-process".
	if !slices.Contains(header, "ratio") || !slices.Contains(header, "HTTP") || !slices.Contains(header, "refused") || len(median) != 14 {
		t.Fatalf("no report with both ratios and the elections refused:\n%s", r.stdout)
	}
	for i, v := range median[1:11] {
		if f, err := strconv.ParseFloat(v, 64); err != nil || f <= 0 {
			t.Errorf("median column %d = %q, want a positive figure:\n%s", i+1, v, r.stdout)
		}
	}
	for _, v := range []string{median[11], median[13]} {
		if n, err := strconv.Atoi(v); err != nil || n < 0 || median[12] != "/" {
			t.Errorf("elections refused = %q, want a count:\n%s", strings.Join(median[11:], " "), r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "4 in flight, load generator in the benchmark's process") {
		t.Errorf("the report does not say how many requests were in flight, and from where:\n%s", r.stdout)
	}
	for _, bad := range [][]string{{"--concurrency", "0"}, {"--blocks", "-1"}, {"--rounds", "0"}} {
		r := run(t, append([]string{"bench", "network"}, bad...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "must be positive") || r.stdout != "" {
			t.Errorf("bench network %v: exit %d, stdout %q, stderr %q; want a usage error", bad, r.code, r.stdout, r.stderr)
		}
	}
}

// TestBenchLoadGenerator runs both benchmarks' HTTP phases with the load
// generator in a process of its own (this test binary, standing in for
// lattice: TestMain) and checks the reports say so; an unknown place is a
// usage error.
func TestBenchLoadGenerator(t *testing.T) {
	const own = "load generator in a process of its own"
	r := mustRun(t, "bench", "ledger", "--blocks", "200", "--accounts", "16", "--rounds", "1", "--phases", "http", "--load-generator", "process")
	if !strings.Contains(r.stdout, own) || !strings.Contains(r.stdout, "HTTP/verify") {
		t.Errorf("bench ledger:\n%s", r.stdout)
	}
	r = mustRun(t, "bench", "network", "--blocks", "200", "--forks", "1", "--sync-blocks", "500", "--rounds", "1", "--concurrency", "4", "--load-generator", "process")
	if !strings.Contains(r.stdout, own) {
		t.Errorf("bench network:\n%s", r.stdout)
	}
	for _, cmd := range []string{"ledger", "network"} {
		r := run(t, "bench", cmd, "--load-generator", "elsewhere")
		if r.code != 2 || !strings.Contains(r.stderr, "--load-generator") || r.stdout != "" {
			t.Errorf("bench %s --load-generator elsewhere: exit %d, stdout %q, stderr %q; want a usage error", cmd, r.code, r.stdout, r.stderr)
		}
	}
}

// TestBenchLease runs a small bench lease and checks its report; bad
// flags are usage errors.
func TestBenchLease(t *testing.T) {
	r := mustRun(t, "bench", "lease", "--blocks", "100", "--leases", "2", "--rounds", "1", "--json")
	var rep struct {
		Median struct {
			SendsPerSec  float64 `json:"sends_per_sec"`
			LeasesPerSec float64 `json:"leases_per_sec"`
			Ratio        float64 `json:"ratio"`
			AcceptP50ms  float64 `json:"accept_p50_ms"`
			AcceptP99ms  float64 `json:"accept_p99_ms"`
		} `json:"median"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("bench lease --json: %v\n%s", err, r.stdout)
	}
	m := rep.Median
	if m.SendsPerSec <= 0 || m.LeasesPerSec <= 0 || m.Ratio <= 0 || m.AcceptP50ms <= 0 || m.AcceptP99ms < m.AcceptP50ms {
		t.Fatalf("bench lease report: %+v", m)
	}
	for _, bad := range [][]string{{"--blocks", "0"}, {"--rounds", "-1"}, {"stray"}} {
		if r := run(t, append([]string{"bench", "lease"}, bad...)...); r.code != 2 {
			t.Errorf("bench lease %v: exit %d, want 2", bad, r.code)
		}
	}
}
