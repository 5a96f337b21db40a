package dnsserver_test

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnsserver"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// fakeSecondary is a miekg/dns server on loopback UDP that records the
// NOTIFY messages it gets and answers them with rcode (unless drop says
// to stay silent on that one).
type fakeSecondary struct {
	addr  string
	rcode int
	drop  func(n int) bool // n counts from 1; nil answers all

	mu   sync.Mutex
	got  []*dns.Msg
	from []net.Addr
	ch   chan struct{}
}

func startSecondary(t *testing.T, rcode int, drop func(int) bool) *fakeSecondary {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fs := &fakeSecondary{addr: pc.LocalAddr().String(), rcode: rcode, drop: drop, ch: make(chan struct{}, 100)}
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, Handler: fs, NotifyStartedFunc: func() { close(started) }}
	done := make(chan error, 1)
	go func() { done <- srv.ActivateAndServe() }()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("fake secondary: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the fake secondary did not start")
	}
	t.Cleanup(func() {
		srv.Shutdown()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("the fake secondary did not stop")
		}
	})
	return fs
}

func (fs *fakeSecondary) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	fs.mu.Lock()
	fs.got = append(fs.got, r.Copy())
	fs.from = append(fs.from, w.RemoteAddr())
	n := len(fs.got)
	fs.mu.Unlock()
	fs.ch <- struct{}{}
	if fs.drop != nil && fs.drop(n) {
		return
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Rcode = fs.rcode
	w.WriteMsg(m)
}

// serials are the serials of the NOTIFYs received so far, in order.
func (fs *fakeSecondary) serials() []uint32 {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out []uint32
	for _, m := range fs.got {
		var s uint32
		if len(m.Answer) == 1 {
			if soa, ok := m.Answer[0].(*dns.SOA); ok {
				s = soa.Serial
			}
		}
		out = append(out, s)
	}
	return out
}

// waitSerial waits, at most d, for a NOTIFY of serial; it returns it.
func (fs *fakeSecondary) waitSerial(t *testing.T, serial uint32, d time.Duration) *dns.Msg {
	t.Helper()
	deadline := time.After(d)
	for {
		fs.mu.Lock()
		for i, m := range fs.got {
			if len(m.Answer) == 1 {
				if soa, ok := m.Answer[0].(*dns.SOA); ok && soa.Serial == serial {
					from := fs.from[i]
					fs.mu.Unlock()
					checkNotify(t, m, from)
					return m
				}
			}
		}
		fs.mu.Unlock()
		select {
		case <-fs.ch:
		case <-deadline:
			t.Fatalf("no NOTIFY of serial %d within %v (got serials %v)", serial, d, fs.serials())
			return nil
		}
	}
}

func count(ss []uint32, s uint32) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}

// checkNotify checks a NOTIFY as RFC 1996 has it.
func checkNotify(t *testing.T, m *dns.Msg, from net.Addr) {
	t.Helper()
	if m.Opcode != dns.OpcodeNotify || m.Response || !m.Authoritative {
		t.Errorf("not a NOTIFY request with AA: %v", m)
	}
	if len(m.Question) != 1 || m.Question[0].Name != apex || m.Question[0].Qtype != dns.TypeSOA || m.Question[0].Qclass != dns.ClassINET {
		t.Errorf("NOTIFY question %v, want example.com. IN SOA", m.Question)
	}
	if len(m.Answer) != 1 || m.Answer[0].Header().Name != apex {
		t.Errorf("NOTIFY answer %v, want the zone's SOA", m.Answer)
	}
	if ua, ok := from.(*net.UDPAddr); !ok || !ua.IP.IsLoopback() {
		t.Errorf("NOTIFY from %v, want loopback UDP", from)
	}
}

func TestNotify(t *testing.T) {
	t.Parallel()
	sec := startSecondary(t, dns.RcodeSuccess, nil)
	refusing := startSecondary(t, dns.RcodeRefused, nil) // answers, if not gladly: no retry either
	ts := startServer(t, serverConfig{opts: dnsserver.Options{Notify: []string{sec.addr, refusing.addr}}})
	s0 := ts.soa(t).Serial

	// At start, the secondaries hear of every zone.
	sec.waitSerial(t, s0, 5*time.Second)
	refusing.waitSerial(t, s0, 5*time.Second)

	if _, err := ts.st.AddRecord(account, ts.zoneID, dnszone.Input{Type: "A", Name: "notified", Value: "192.0.2.150"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s1 := ts.soa(t).Serial
	if s1 == s0 {
		t.Fatalf("serial did not change")
	}
	m := sec.waitSerial(t, s1, 5*time.Second)
	t.Logf("NOTIFY of serial %d after %v", s1, time.Since(start))
	if soa := m.Answer[0].(*dns.SOA); soa.Ns != "ns1.example.com." {
		t.Errorf("NOTIFY SOA %v", soa)
	}
	refusing.waitSerial(t, s1, 5*time.Second)

	// Both answered: nothing is sent again (the server retries after 2 s
	// without an answer).
	time.Sleep(2500 * time.Millisecond)
	for _, fs := range []*fakeSecondary{sec, refusing} {
		ss := fs.serials()
		if count(ss, s0) != 1 || count(ss, s1) != 1 || len(ss) != 2 {
			t.Errorf("NOTIFYs of serials %v, want %d and %d once each", ss, s0, s1)
		}
	}

	t.Run("burst", func(t *testing.T) {
		for i := range 5 {
			if _, err := ts.st.AddRecord(account, ts.zoneID, dnszone.Input{Type: "TXT", Name: "burst", Value: string(rune('a' + i))}); err != nil {
				t.Fatal(err)
			}
		}
		sec.waitSerial(t, ts.soa(t).Serial, 5*time.Second)
	})
}

// TestNotifyRetry: a secondary that does not answer is told again.
func TestNotifyRetry(t *testing.T) {
	t.Parallel()
	sec := startSecondary(t, dns.RcodeSuccess, func(n int) bool { return n == 1 })
	ts := startServer(t, serverConfig{opts: dnsserver.Options{Notify: []string{sec.addr}}})
	s0 := ts.soa(t).Serial
	deadline := time.Now().Add(8 * time.Second)
	for count(sec.serials(), s0) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("NOTIFYs %v: the unanswered one was not sent again", sec.serials())
		}
		select {
		case <-sec.ch:
		case <-time.After(100 * time.Millisecond):
		}
	}
	time.Sleep(2500 * time.Millisecond)
	if ss := sec.serials(); len(ss) != 2 {
		t.Errorf("NOTIFYs %v, want 2 (one dropped, one answered)", ss)
	}
}

// TestNotifySilentSecondary: one secondary that never answers does not
// hold up the NOTIFYs of later changes to the others.
func TestNotifySilentSecondary(t *testing.T) {
	t.Parallel()
	silent, err := net.ListenPacket("udp", "127.0.0.1:0") // reads nothing, answers nothing
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	sec := startSecondary(t, dns.RcodeSuccess, nil)
	ts := startServer(t, serverConfig{opts: dnsserver.Options{Notify: []string{silent.LocalAddr().String(), sec.addr}}})
	sec.waitSerial(t, ts.soa(t).Serial, 5*time.Second)
	time.Sleep(200 * time.Millisecond)
	if _, err := ts.st.AddRecord(account, ts.zoneID, dnszone.Input{Type: "A", Name: "later", Value: "192.0.2.151"}); err != nil {
		t.Fatal(err)
	}
	sec.waitSerial(t, ts.soa(t).Serial, 5*time.Second)
}
