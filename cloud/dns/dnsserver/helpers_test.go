package dnsserver_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnsserver"
	"github.com/latticenet/lattice/cloud/dns/dnsstore"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

const (
	account = "acct-1"
	zone    = "example.com"
	apex    = "example.com."
)

// The platform's name servers in the tests: in the zone, with glue.
var nameservers = []string{"ns1.example.com", "ns2.example.com"}

// i64 is a pointer to n, for the optional fields of dnszone.Input.
func i64(n int64) *int64 { return &n }

// fixture is the zone most tests answer from.
func fixture() []dnszone.Input {
	in := []dnszone.Input{
		{Type: "A", Name: "ns1", Value: "192.0.2.10"},
		{Type: "A", Name: "ns2", Value: "192.0.2.11"},
		{Type: "A", Name: "www", Value: "192.0.2.1"},
		{Type: "AAAA", Name: "www", Value: "2001:db8::1"},
		{Type: "MX", Name: "@", Value: "mail.example.com", Priority: i64(10)},
		{Type: "A", Name: "mail", Value: "192.0.2.25"},
		{Type: "AAAA", Name: "mail", Value: "2001:db8::25"},
		{Type: "CNAME", Name: "alias", Value: "www.example.com"},
		{Type: "CNAME", Name: "alias2", Value: "alias.example.com"},
		{Type: "CNAME", Name: "out", Value: "www.example.net"},
		{Type: "A", Name: "*.wild", Value: "192.0.2.99"},
		{Type: "NS", Name: "sub", Value: "ns.sub.example.com"},
		{Type: "A", Name: "ns.sub", Value: "192.0.2.53"},
		{Type: "A", Name: "a.b", Value: "192.0.2.7"}, // b.example.com is an empty non-terminal
		{Type: "TXT", Name: "@", Value: "v=spf1 -all"},
		{Type: "TXT", Name: "quote", Value: `say "hi" \ bye`},
		{Type: "CAA", Name: "@", Value: `0 issue "letsencrypt.org"`},
		{Type: "SRV", Name: "_sip._tcp", Value: "sip.example.com", Priority: i64(5), Weight: i64(1), Port: i64(5060)},
		{Type: "A", Name: "sip", Value: "192.0.2.60"},
	}
	return append(in, bigTXT(40, 100)...)
}

// bigTXT are n TXT records of size bytes each at big.example.com.
func bigTXT(n, size int) []dnszone.Input {
	var in []dnszone.Input
	for i := range n {
		v := strconv.Itoa(i) + "-"
		v += strings.Repeat("x", size-len(v))
		in = append(in, dnszone.Input{Type: "TXT", Name: "big", Value: v})
	}
	return in
}

// logBuffer collects the server's log, shown when a test fails.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testServer is a store with zone example.com and a dnsserver answering
// from it on loopback UDP and TCP.
type testServer struct {
	st     *dnsstore.Store
	srv    *dnsserver.Server
	zoneID string
	addr   string // 127.0.0.1:port, UDP and TCP
	port   int
	log    *logBuffer
}

type serverConfig struct {
	opts    dnsserver.Options
	records []dnszone.Input // nil: fixture()
	noZone  bool            // no zone at all
	// beforeServe runs after the sockets are bound, before Serve: it can
	// use the port (to configure a secondary).
	beforeServe func(ts *testServer)
}

// startServer opens a store in a temporary directory, creates the zone,
// binds loopback sockets and serves until the test ends.
func startServer(t testing.TB, cfg serverConfig) *testServer {
	t.Helper()
	ts := &testServer{log: &logBuffer{}}
	logger := slog.New(slog.NewTextHandler(ts.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, err := dnsstore.Open(t.TempDir(), dnsstore.Options{Nameservers: append([]string(nil), nameservers...), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	})
	ts.st = st
	if !cfg.noZone {
		z, err := st.CreateZone(account, zone)
		if err != nil {
			t.Fatal(err)
		}
		ts.zoneID = z.ID
		records := cfg.records
		if records == nil {
			records = fixture()
		}
		for _, in := range records {
			if _, err := st.AddRecord(account, z.ID, in); err != nil {
				t.Fatalf("adding %+v: %v", in, err)
			}
		}
	}
	opts := cfg.opts
	opts.Logger = logger
	ts.srv = dnsserver.New(opts)
	st.Watch(ts.srv.Update)

	udp, tcp := listenPair(t)
	ts.port = udp.LocalAddr().(*net.UDPAddr).Port
	ts.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ts.port))
	if cfg.beforeServe != nil {
		cfg.beforeServe(ts)
	}
	serve(t, ts.srv, udp, tcp)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", ts.log.String())
		}
	})
	return ts
}

// serve runs srv on udp and tcp until the test ends; the cleanup cancels
// it and waits, bounded, for Serve to return.
func serve(t testing.TB, srv *dnsserver.Server, udp net.PacketConn, tcp net.Listener) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, udp, tcp) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return within 10 s of its context's end")
		}
	})
	waitServing(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)))
}

// waitServing waits until the server answers over UDP and TCP.
func waitServing(t testing.TB, addr string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, network := range []string{"udp", "tcp"} {
		c := &dns.Client{Net: network, Timeout: 200 * time.Millisecond}
		for {
			_, _, err := c.Exchange(query(apex, dns.TypeSOA), addr)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the server does not answer over %s at %s: %v", network, addr, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// listenPair binds UDP and TCP on one loopback port, trying again when the
// TCP port of a fresh UDP port is taken.
func listenPair(t testing.TB) (net.PacketConn, net.Listener) {
	t.Helper()
	var lastErr error
	for range 50 {
		udp, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		tcp, err := net.Listen("tcp", udp.LocalAddr().String())
		if err == nil {
			return udp, tcp
		}
		lastErr = err
		udp.Close()
	}
	t.Fatalf("no loopback port free for both UDP and TCP: %v", lastErr)
	return nil, nil
}

// freePort returns a loopback port free, at the time, for UDP and TCP.
func freePort(t testing.TB) int {
	t.Helper()
	udp, tcp := listenPair(t)
	port := udp.LocalAddr().(*net.UDPAddr).Port
	udp.Close()
	tcp.Close()
	return port
}

func query(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = false
	return m
}

func ednsQuery(name string, qtype uint16, size uint16) *dns.Msg {
	m := query(name, qtype)
	m.SetEdns0(size, false)
	return m
}

// exchange sends m over network ("udp" or "tcp") and fails the test on
// error.
func (ts *testServer) exchange(t testing.TB, network string, m *dns.Msg) *dns.Msg {
	t.Helper()
	c := &dns.Client{Net: network, Timeout: 3 * time.Second, UDPSize: dns.MaxMsgSize}
	in, _, err := c.Exchange(m, ts.addr)
	if err != nil {
		t.Fatalf("%s %s over %s: %v", m.Question[0].Name, dns.TypeToString[m.Question[0].Qtype], network, err)
	}
	if in.Id != m.Id || !in.Response {
		t.Fatalf("not an answer to our query: %v", in)
	}
	return in
}

// rawUDP sends m over UDP and returns the reply's wire size with the
// reply: the size the server chose, with no client buffer in the way.
func (ts *testServer) rawUDP(t testing.TB, m *dns.Msg) (int, *dns.Msg) {
	t.Helper()
	conn, err := net.Dial("udp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	data, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(data); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 65536)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("reading the UDP reply: %v", err)
	}
	in := new(dns.Msg)
	if err := in.Unpack(buf[:n]); err != nil {
		t.Fatalf("unpacking the UDP reply (%d bytes): %v", n, err)
	}
	return n, in
}

// ask queries over UDP and falls back to TCP when the answer is
// truncated, as a resolver does.
func (ts *testServer) ask(t testing.TB, m *dns.Msg) *dns.Msg {
	t.Helper()
	in := ts.exchange(t, "udp", m)
	if in.Truncated {
		in = ts.exchange(t, "tcp", m)
	}
	return in
}

func (ts *testServer) soa(t testing.TB) *dns.SOA {
	t.Helper()
	in := ts.exchange(t, "udp", query(apex, dns.TypeSOA))
	if len(in.Answer) != 1 {
		t.Fatalf("SOA query: %v", in)
	}
	soa, ok := in.Answer[0].(*dns.SOA)
	if !ok {
		t.Fatalf("SOA query answered %v", in.Answer[0])
	}
	return soa
}

// records are the zone's records in the store, as resource records.
func (ts *testServer) records(t testing.TB) []dns.RR {
	t.Helper()
	recs, err := ts.st.Records(account, ts.zoneID)
	if err != nil {
		t.Fatal(err)
	}
	var out []dns.RR
	for _, r := range recs {
		out = append(out, r.RR())
	}
	return out
}

// key identifies a record apart from its TTL (a set's TTL is its lowest).
func key(rr dns.RR) string {
	c := dns.Copy(rr)
	c.Header().Ttl = 0
	c.Header().Name = strings.ToLower(c.Header().Name)
	return c.String()
}

func keys(rrs []dns.RR) map[string]int {
	out := map[string]int{}
	for _, rr := range rrs {
		out[key(rr)]++
	}
	return out
}

func rcode(m *dns.Msg) string {
	if s, ok := dns.RcodeToString[m.Rcode]; ok {
		return s
	}
	return strconv.Itoa(m.Rcode)
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// isCI reports whether the tests run in CI, where the external tools
// (dig, nsd) must be there.
func isCI() bool { return os.Getenv("CI") == "true" }

// needTool returns the path of an external program, skipping the test when
// it is missing outside CI and failing it in CI.
func needTool(t *testing.T, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := lookPath(name); err == nil {
			return p
		}
	}
	if isCI() {
		t.Fatalf("%s is not installed, and CI=true: CI must install it", names[0])
	}
	t.Skipf("%s is not installed (set CI=true to make this a failure)", names[0])
	return ""
}

func lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		fi, err := os.Stat(name)
		if err != nil {
			return "", err
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", errors.New("not executable")
		}
		return name, nil
	}
	return exec.LookPath(name)
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
