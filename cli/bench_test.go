package cli

import (
	"bytes"
	"os"
	"path/filepath"
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
