package dnsserver_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnsserver"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// nsdConf is an nsd.conf for a secondary of example.com on 127.0.0.1:port,
// with every file in dir, that transfers the zone from primary (host:port)
// and takes its NOTIFYs.
func nsdConf(dir string, port int, primaryPort int) string {
	return fmt.Sprintf(`server:
	ip-address: 127.0.0.1
	port: %d
	do-ip4: yes
	do-ip6: no
	server-count: 1
	username: ""
	chroot: ""
	zonesdir: %q
	pidfile: ""
	database: ""
	xfrdfile: %q
	xfrdir: %q
	zonelistfile: %q
	logfile: %q
	verbosity: 2
	hide-version: yes
	xfrd-reload-timeout: 0
	zonefiles-write: 0

remote-control:
	control-enable: no

zone:
	name: example.com
	zonefile: %q
	request-xfr: 127.0.0.1@%d NOKEY
	allow-notify: 127.0.0.1 NOKEY
`, port, dir, filepath.Join(dir, "xfrd.state"), dir, filepath.Join(dir, "zone.list"), filepath.Join(dir, "nsd.log"),
		filepath.Join(dir, "example.com.zone"), primaryPort)
}

// TestNSDSecondary runs NSD as a secondary of the server: it transfers
// the zone, and a change reaches it by NOTIFY and IXFR (which the server
// answers with the whole zone).
func TestNSDSecondary(t *testing.T) {
	nsd := needTool(t, "/usr/sbin/nsd", "nsd")
	t.Parallel()
	dir := t.TempDir()
	nsdPort := freePort(t)
	nsdAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(nsdPort))
	conf := filepath.Join(dir, "nsd.conf")

	// NSD starts while the server's sockets are bound but not yet served:
	// its first transfer waits in the TCP backlog, and the server's first
	// NOTIFY finds it up.
	ts := startServer(t, serverConfig{
		opts: dnsserver.Options{TransferFrom: loopbackOnly, Notify: []string{nsdAddr}},
		beforeServe: func(ts *testServer) {
			if err := os.WriteFile(conf, []byte(nsdConf(dir, nsdPort, ts.port)), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, check := range []string{"/usr/sbin/nsd-checkconf", "nsd-checkconf"} {
				if p, err := lookPath(check); err == nil {
					if out, err := exec.Command(p, conf).CombinedOutput(); err != nil {
						t.Fatalf("nsd-checkconf: %v\n%s", err, out)
					}
					break
				}
			}
			startNSD(t, nsd, conf, dir, nsdAddr)
		},
	})

	// NSD transfers the zone (AXFR at first: it has none).
	c := &dns.Client{Net: "udp", Timeout: 500 * time.Millisecond}
	ask := func(name string, qtype uint16) (*dns.Msg, error) {
		in, _, err := c.Exchange(query(name, qtype), nsdAddr)
		return in, err
	}
	// NSD answers from a new generation of server processes after each
	// transfer, and the old one may still answer for a moment: every fact
	// below is polled until it holds, none is read once after another.
	serial := ts.soa(t).Serial
	waitFor(t, 20*time.Second, fmt.Sprintf("NSD to serve serial %d with www.example.com A", serial), func() (bool, string) {
		if got, last := nsdSerial(ask); got != serial {
			return false, last
		}
		in, err := ask("www.example.com", dns.TypeA)
		if err != nil {
			return false, err.Error()
		}
		return in.Rcode == dns.RcodeSuccess && in.Authoritative && hasA(in, "192.0.2.1"), in.String()
	})
	// Everything came across.
	for _, q := range []struct {
		name  string
		qtype uint16
		n     int
	}{{"example.com", dns.TypeMX, 1}, {"big.example.com", dns.TypeTXT, 40}, {"alias2.example.com", dns.TypeA, 3}, {"x.wild.example.com", dns.TypeA, 1}} {
		cc := &dns.Client{Net: "tcp", Timeout: 2 * time.Second}
		waitFor(t, 5*time.Second, fmt.Sprintf("NSD %s %s with %d answers", q.name, dns.TypeToString[q.qtype], q.n), func() (bool, string) {
			in, _, err := cc.Exchange(query(q.name, q.qtype), nsdAddr)
			if err != nil {
				return false, err.Error()
			}
			return len(in.Answer) == q.n, in.String()
		})
	}

	// A change: our NOTIFY brings NSD to transfer it (nothing else would
	// within the test: the SOA's refresh is an hour).
	recs, err := ts.st.Records(account, ts.zoneID)
	if err != nil {
		t.Fatal(err)
	}
	var www dnszone.Record
	for _, r := range recs {
		if r.Name == "www.example.com" && r.Type == "A" {
			www = r
		}
	}
	start := time.Now()
	if _, err := ts.st.UpdateRecord(account, ts.zoneID, www.ID, dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.2"}); err != nil {
		t.Fatal(err)
	}
	fresh, err := ts.st.AddRecord(account, ts.zoneID, dnszone.Input{Type: "AAAA", Name: "fresh", Value: "2001:db8::f"})
	if err != nil {
		t.Fatal(err)
	}
	newSerial := ts.soa(t).Serial
	waitFor(t, 20*time.Second, fmt.Sprintf("NSD to serve serial %d with the changed www and the new fresh", newSerial), func() (bool, string) {
		if got, last := nsdSerial(ask); got != newSerial {
			return false, last
		}
		in, err := ask("www.example.com", dns.TypeA)
		if err != nil || !hasA(in, "192.0.2.2") || len(in.Answer) != 1 {
			return false, fmt.Sprintf("www.example.com A: %v %v, want 192.0.2.2 alone", in, err)
		}
		in, err = ask("fresh.example.com", dns.TypeAAAA)
		if err != nil || len(in.Answer) != 1 {
			return false, fmt.Sprintf("fresh.example.com AAAA: %v %v", in, err)
		}
		return true, ""
	})
	t.Logf("NSD serves the changes %v after they were made", time.Since(start).Round(time.Millisecond))

	// A deletion too: fresh.example.com has no other record.
	if err := ts.st.DeleteRecord(account, ts.zoneID, fresh.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "NSD to answer NXDOMAIN for the deleted fresh.example.com", func() (bool, string) {
		in, err := ask("fresh.example.com", dns.TypeAAAA)
		if err != nil {
			return false, err.Error()
		}
		return in.Rcode == dns.RcodeNameError, in.String()
	})
	if testing.Verbose() {
		logNSD(t, dir)
	}
}

func hasA(m *dns.Msg, ip string) bool {
	for _, rr := range m.Answer {
		if a, ok := rr.(*dns.A); ok && a.A.String() == ip {
			return true
		}
	}
	return false
}

// nsdSerial is the serial NSD answers for the zone's SOA, 0 with what it
// said instead when it has none.
func nsdSerial(ask func(string, uint16) (*dns.Msg, error)) (uint32, string) {
	in, err := ask(zone, dns.TypeSOA)
	if err != nil {
		return 0, err.Error()
	}
	if len(in.Answer) != 1 {
		return 0, in.String()
	}
	soa, ok := in.Answer[0].(*dns.SOA)
	if !ok {
		return 0, in.String()
	}
	return soa.Serial, in.String()
}

// waitFor polls cond every 100 ms until it holds, failing the test after d
// with cond's last word.
func waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; last: %s", d, what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startNSD runs nsd in the foreground until the test ends.
func startNSD(t *testing.T, nsd, conf, dir, addr string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, nsd, "-d", "-c", conf)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second // then SIGKILL
	out := &logBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting nsd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("nsd did not stop within 10 s of SIGTERM")
			cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("nsd output:\n%s", out.String())
			logNSD(t, dir)
		}
	})
	// Wait until it answers (it refuses or SERVFAILs the zone before the
	// transfer, but answers).
	c := &dns.Client{Net: "udp", Timeout: 200 * time.Millisecond}
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("nsd exited: %v\n%s", err, out.String())
		default:
		}
		m := query("example.com", dns.TypeSOA)
		if _, _, err := c.Exchange(m, addr); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nsd does not answer after 10 s:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func logNSD(t *testing.T, dir string) {
	if data, err := os.ReadFile(filepath.Join(dir, "nsd.log")); err == nil {
		t.Logf("nsd.log:\n%s", data)
	}
}
