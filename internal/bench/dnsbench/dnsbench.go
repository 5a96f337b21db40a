// Package dnsbench measures the platform's authoritative DNS server
// against NSD and PowerDNS serving the same zone, with dnsperf as the
// load: one run, the servers taking turns in each round, so that the
// ratios compare measurements of the same machine at the same time.
package dnsbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnsserver"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
	"github.com/latticenet/lattice/internal/bench/benchstat"
	"github.com/latticenet/lattice/internal/bench/program"
)

// Config sets a run; zero fields take the defaults.
type Config struct {
	Hosts    int           // A records in the zone; default 1000
	Duration time.Duration // dnsperf's time per server per round; default 10 s
	Rounds   int           // default 3
	Clients  int           // dnsperf -c; default 4
	// Paths of the peers and the load generator; "" looks them up on
	// PATH (and in /usr/sbin).
	NSD, PDNS, DNSPerf string
	Progress           io.Writer
}

func (c *Config) setDefaults() {
	if c.Hosts == 0 {
		c.Hosts = 1000
	}
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if c.Rounds == 0 {
		c.Rounds = 3
	}
	if c.Clients == 0 {
		c.Clients = 4
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Result is one server's measurement: dnsperf's figures.
type Result struct {
	QPS          float64 `json:"qps"`
	AvgLatencyMs float64 `json:"avg_latency_ms"`
	Lost         int64   `json:"lost"`
}

// Round is one round: each server measured once.
type Round struct {
	Lattice Result  `json:"lattice"`
	NSD     Result  `json:"nsd"`
	PDNS    Result  `json:"powerdns"`
	VsNSD   float64 `json:"lattice_over_nsd"`
	VsPDNS  float64 `json:"lattice_over_powerdns"`
}

// Report is a run.
type Report struct {
	Hosts       int     `json:"hosts"`
	Queries     int     `json:"query_mix"` // lines of the query file
	DurationS   float64 `json:"duration_s"`
	Clients     int     `json:"clients"`
	ServerCores int     `json:"server_threads"` // NSD server-count, PowerDNS receiver-threads, lattice GOMAXPROCS
	Rounds      []Round `json:"rounds"`
	Median      Round   `json:"median"`
}

// Run runs the benchmark.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.setDefaults()
	var err error
	if cfg.NSD, err = program.Find(cfg.NSD, "nsd", "Debian package nsd"); err != nil {
		return nil, err
	}
	if cfg.PDNS, err = program.Find(cfg.PDNS, "pdns_server", "Debian packages pdns-server and pdns-backend-bind"); err != nil {
		return nil, err
	}
	if cfg.DNSPerf, err = program.Find(cfg.DNSPerf, "dnsperf", "Debian package dnsperf"); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lattice-bench-dns-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	snap := zone(cfg.Hosts)
	zoneFile := filepath.Join(dir, "example.com.zone")
	if err := writeZone(zoneFile, snap); err != nil {
		return nil, err
	}
	queries := filepath.Join(dir, "queries.txt")
	n, err := writeQueries(queries, cfg.Hosts)
	if err != nil {
		return nil, err
	}
	rep := &Report{Hosts: cfg.Hosts, Queries: n, DurationS: cfg.Duration.Seconds(), Clients: cfg.Clients, ServerCores: runtime.NumCPU()}

	type server struct {
		name  string
		start func(ctx context.Context, port int) (stop func(), err error)
		out   func(*Round) *Result
	}
	servers := []server{
		{"lattice", func(ctx context.Context, port int) (func(), error) { return startLattice(ctx, snap, port) },
			func(r *Round) *Result { return &r.Lattice }},
		{"nsd", func(ctx context.Context, port int) (func(), error) {
			return startNSD(ctx, cfg.NSD, dir, zoneFile, port, rep.ServerCores)
		}, func(r *Round) *Result { return &r.NSD }},
		{"powerdns", func(ctx context.Context, port int) (func(), error) {
			return startPDNS(ctx, cfg.PDNS, dir, zoneFile, port, rep.ServerCores)
		}, func(r *Round) *Result { return &r.PDNS }},
	}
	for i := range cfg.Rounds {
		var r Round
		for j := range servers {
			s := servers[(i+j)%len(servers)] // each round starts with the next server
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(cfg.Progress, "round %d: %s on 127.0.0.1:%d...\n", i+1, s.name, port)
			stop, err := s.start(ctx, port)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.name, err)
			}
			res, err := perf(ctx, cfg, queries, port)
			stop()
			if err != nil {
				return nil, fmt.Errorf("dnsperf against %s: %w", s.name, err)
			}
			*s.out(&r) = res
		}
		r.VsNSD, r.VsPDNS = r.Lattice.QPS/r.NSD.QPS, r.Lattice.QPS/r.PDNS.QPS
		rep.Rounds = append(rep.Rounds, r)
	}
	med := func(f func(Round) float64) float64 { return benchstat.MedianOf(rep.Rounds, f) }
	rep.Median = Round{
		Lattice: Result{QPS: med(func(r Round) float64 { return r.Lattice.QPS }), AvgLatencyMs: med(func(r Round) float64 { return r.Lattice.AvgLatencyMs })},
		NSD:     Result{QPS: med(func(r Round) float64 { return r.NSD.QPS }), AvgLatencyMs: med(func(r Round) float64 { return r.NSD.AvgLatencyMs })},
		PDNS:    Result{QPS: med(func(r Round) float64 { return r.PDNS.QPS }), AvgLatencyMs: med(func(r Round) float64 { return r.PDNS.AvgLatencyMs })},
		VsNSD:   med(func(r Round) float64 { return r.VsNSD }),
		VsPDNS:  med(func(r Round) float64 { return r.VsPDNS }),
	}
	return rep, nil
}

// zone builds the benchmark's zone: example.com with hosts A records
// (host0 ...), an AAAA, CNAMEs, MX, TXT and a wildcard below it.
func zone(hosts int) *dnszone.Snapshot {
	const name = "example.com"
	var recs []dnszone.Record
	add := func(typ, owner, value string, prio int64) {
		in := dnszone.Input{Type: typ, Name: owner, Value: value}
		if prio > 0 {
			in.Priority = &prio
		}
		r, err := dnszone.Parse(name, in)
		if err != nil {
			panic(err) // fixed inputs
		}
		recs = append(recs, r)
	}
	add("NS", "@", "ns1.lattice.test", 0)
	add("MX", "@", "mail.example.com", 10)
	add("A", "mail", "192.0.2.25", 0)
	add("TXT", "@", "v=spf1 mx -all", 0)
	add("AAAA", "www", "2001:db8::1", 0)
	add("A", "www", "192.0.2.1", 0)
	for i := range 10 {
		add("CNAME", fmt.Sprintf("alias%d", i), "www.example.com", 0)
	}
	add("A", "*.wild", "192.0.2.99", 0)
	for i := range hosts {
		add("A", fmt.Sprintf("host%d", i), fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), 0)
	}
	return dnszone.Build(name, 1, recs)
}

// writeZone writes snap as an RFC 1035 zone file, for NSD and PowerDNS.
func writeZone(path string, snap *dnszone.Snapshot) error {
	var b strings.Builder
	b.WriteString(snap.SOA().String() + "\n")
	for _, rr := range snap.Records() {
		b.WriteString(rr.String() + "\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeQueries writes dnsperf's input: of every 20 queries, 16 for hosts,
// one each for a CNAME, the MX, a wildcard name and a missing name
// (NXDOMAIN).
func writeQueries(path string, hosts int) (int, error) {
	var b strings.Builder
	n := 0
	for i := range 2000 {
		switch i % 20 {
		case 16:
			fmt.Fprintf(&b, "alias%d.example.com A\n", i%10)
		case 17:
			b.WriteString("example.com MX\n")
		case 18:
			fmt.Fprintf(&b, "x%d.wild.example.com A\n", i)
		case 19:
			fmt.Fprintf(&b, "missing%d.example.com A\n", i)
		default:
			fmt.Fprintf(&b, "host%d.example.com A\n", (i*7919)%hosts)
		}
		n++
	}
	return n, os.WriteFile(path, []byte(b.String()), 0o644)
}

// freePort returns a port free on both UDP and TCP on loopback.
func freePort() (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", l.Addr().String())
		l.Close()
		if err == nil {
			u.Close()
			return port, nil
		}
	}
	return 0, errors.New("no port free on both UDP and TCP")
}

// startLattice serves snap with the platform's DNS server in this
// process.
func startLattice(ctx context.Context, snap *dnszone.Snapshot, port int) (func(), error) {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	udp, tcp, err := dnsserver.Listen(addr)
	if err != nil {
		return nil, err
	}
	srv := dnsserver.New(dnsserver.Options{})
	srv.Update(snap.Name, snap)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ctx, udp[0], tcp, udp[1:]...)
	}()
	stop := func() { cancel(); <-done }
	if err := waitAnswer(ctx, addr); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// startNSD runs NSD on port with threads server processes.
func startNSD(ctx context.Context, bin, dir, zoneFile string, port, threads int) (func(), error) {
	d := filepath.Join(dir, "nsd")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, err
	}
	conf := fmt.Sprintf(`server:
    ip-address: 127.0.0.1@%d
    server-count: %d
    username: ""
    chroot: ""
    zonesdir: %q
    database: ""
    zonelistfile: %q
    xfrdfile: %q
    xfrdir: %q
    pidfile: %q
    logfile: %q
    verbosity: 0
    do-ip6: no
    rrl-ratelimit: 0
remote-control:
    control-enable: no
zone:
    name: example.com
    zonefile: %q
`, port, threads, d, filepath.Join(d, "zone.list"), filepath.Join(d, "xfrd.state"), d, filepath.Join(d, "nsd.pid"),
		filepath.Join(d, "nsd.log"), zoneFile)
	path := filepath.Join(d, "nsd.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return startProcess(ctx, port, filepath.Join(d, "nsd.log"), bin, "-d", "-c", path)
}

// startPDNS runs PowerDNS's authoritative server with its BIND backend on
// port, with threads receiver threads.
func startPDNS(ctx context.Context, bin, dir, zoneFile string, port, threads int) (func(), error) {
	d := filepath.Join(dir, "pdns")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, err
	}
	named := filepath.Join(d, "named.conf")
	if err := os.WriteFile(named, []byte(fmt.Sprintf("zone \"example.com\" { type master; file %q; };\n", zoneFile)), 0o644); err != nil {
		return nil, err
	}
	return startProcess(ctx, port, filepath.Join(d, "pdns.log"), bin, "--no-config", "--daemon=no", "--guardian=no",
		"--launch=bind", "--bind-config="+named, "--local-address=127.0.0.1", fmt.Sprintf("--local-port=%d", port),
		"--socket-dir="+d, "--disable-syslog", "--write-pid=no", fmt.Sprintf("--receiver-threads=%d", threads), "--loglevel=3")
}

// startProcess starts a peer and waits until it answers on port.
func startProcess(ctx context.Context, port int, logPath, bin string, args ...string) (func(), error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		logf.Close()
	}
	if err := waitAnswer(ctx, fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		stop()
		log, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("%w; its log:\n%s", err, log)
	}
	return stop, nil
}

// waitAnswer waits up to 20 s for the server at addr to answer the zone.
func waitAnswer(ctx context.Context, addr string) error {
	m := new(dns.Msg)
	m.SetQuestion("www.example.com.", dns.TypeA)
	c := &dns.Client{Timeout: 300 * time.Millisecond}
	deadline := time.Now().Add(20 * time.Second)
	for {
		in, _, err := c.ExchangeContext(ctx, m, addr)
		if err == nil && in.Rcode == dns.RcodeSuccess && len(in.Answer) > 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("no answer for www.example.com from %s in 20 s (last: %v)", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var (
	qpsLine     = regexp.MustCompile(`Queries per second:\s+([0-9.]+)`)
	latencyLine = regexp.MustCompile(`Average Latency \(s\):\s+([0-9.]+)`)
	lostLine    = regexp.MustCompile(`Queries lost:\s+([0-9]+)`)
)

// perf runs dnsperf against port and reads its figures.
func perf(ctx context.Context, cfg Config, queries string, port int) (Result, error) {
	cmd := exec.CommandContext(ctx, cfg.DNSPerf, "-s", "127.0.0.1", "-p", strconv.Itoa(port), "-d", queries,
		"-l", strconv.FormatFloat(cfg.Duration.Seconds(), 'f', -1, 64), "-c", strconv.Itoa(cfg.Clients), "-T", "1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return Result{}, fmt.Errorf("%w: %s", err, out)
	}
	return parsePerf(string(out))
}

// parsePerf reads dnsperf's report.
func parsePerf(out string) (Result, error) {
	q, l, lost := qpsLine.FindStringSubmatch(out), latencyLine.FindStringSubmatch(out), lostLine.FindStringSubmatch(out)
	if q == nil || l == nil || lost == nil {
		sc := bufio.NewScanner(strings.NewReader(out))
		var last string
		for sc.Scan() {
			last = sc.Text()
		}
		return Result{}, fmt.Errorf("dnsperf printed no figures (last line %q)", last)
	}
	var r Result
	r.QPS, _ = strconv.ParseFloat(q[1], 64)
	lat, _ := strconv.ParseFloat(l[1], 64)
	r.AvgLatencyMs = lat * 1000
	r.Lost, _ = strconv.ParseInt(lost[1], 10, 64)
	return r, nil
}
