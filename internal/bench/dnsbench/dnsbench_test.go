package dnsbench

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/internal/bench/program"
)

func TestParsePerf(t *testing.T) {
	out, err := os.ReadFile("testdata/dnsperf-2.10.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parsePerf(string(out))
	want := Result{QPS: 58254.638865, AvgLatencyMs: 1.035, Lost: 0}
	if err != nil || got.QPS != want.QPS || got.Lost != want.Lost || got.AvgLatencyMs < 1.0349 || got.AvgLatencyMs > 1.0351 {
		t.Errorf("parsePerf: got %+v, %v; want %+v", got, err, want)
	}
	if _, err := parsePerf("dnsperf: error: bad server\n"); err == nil || !strings.Contains(err.Error(), "bad server") {
		t.Errorf("parsePerf of an error: got %v, want an error quoting dnsperf's last line", err)
	}
}

// TestZoneFileLoadsAndAnswersAlike checks that the zone file the peers
// load says what lattice's snapshot says: miekg/dns parses it back into
// the same records.
func TestZoneFileLoadsAndAnswersAlike(t *testing.T) {
	snap := zone(50)
	path := t.TempDir() + "/z"
	if err := writeZone(path, snap); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	zp := dns.NewZoneParser(f, "example.com.", path)
	n := 0
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		_ = rr
		n++
	}
	if err := zp.Err(); err != nil {
		t.Fatalf("the zone file does not parse: %v", err)
	}
	if want := len(snap.Records()) + 1; n != want {
		t.Errorf("zone file: %d records, want %d (the SOA and every record)", n, want)
	}
}

// TestRunSmoke runs the whole benchmark briefly against the real peers.
func TestRunSmoke(t *testing.T) {
	for _, tool := range []string{"dnsperf"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing; CI installs it (.ci/run)", tool)
			}
			t.Skipf("%s is not installed (Debian package dnsperf)", tool)
		}
	}
	for _, p := range []string{"nsd", "pdns_server"} {
		if _, err := program.Find("", p, ""); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing; CI installs it (.ci/run)", p)
			}
			t.Skipf("%s is not installed", p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := Run(ctx, Config{Hosts: 20, Duration: time.Second, Rounds: 1, Clients: 1})
	if err != nil {
		t.Fatal(err)
	}
	x := r.Rounds[0]
	for name, res := range map[string]Result{"lattice": x.Lattice, "nsd": x.NSD, "powerdns": x.PDNS} {
		if res.QPS <= 0 || res.Lost > 0 {
			t.Errorf("%s: %v queries a second, %d lost (a peer's rate limiting left on?)", name, res.QPS, res.Lost)
		}
	}
}
