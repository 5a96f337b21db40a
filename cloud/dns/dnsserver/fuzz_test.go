package dnsserver_test

import (
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnsserver"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// fakeWriter is a dns.ResponseWriter that keeps what the handler writes.
type fakeWriter struct {
	remote net.Addr
	mu     sync.Mutex
	msgs   []*dns.Msg
	raw    [][]byte
	closed bool
}

func (w *fakeWriter) LocalAddr() net.Addr {
	if _, ok := w.remote.(*net.TCPAddr); ok {
		return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}
	}
	return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}
}
func (w *fakeWriter) RemoteAddr() net.Addr { return w.remote }

func (w *fakeWriter) WriteMsg(m *dns.Msg) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, m)
	return nil
}

func (w *fakeWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.raw = append(w.raw, append([]byte(nil), b...))
	return len(b), nil
}

func (w *fakeWriter) Close() error        { w.closed = true; return nil }
func (w *fakeWriter) TsigStatus() error   { return nil }
func (w *fakeWriter) TsigTimersOnly(bool) {}
func (w *fakeWriter) Hijack()             {}

func (w *fakeWriter) written() []*dns.Msg {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.msgs
}

// smallZone is a zone with a bit of everything, built without a store.
func smallZone(t testing.TB) *dnszone.Snapshot {
	t.Helper()
	var recs []dnszone.Record
	for _, in := range append([]dnszone.Input{
		{Type: "NS", Name: "@", Value: "ns1.example.com"},
		{Type: "A", Name: "ns1", Value: "192.0.2.10"},
		{Type: "A", Name: "www", Value: "192.0.2.1"},
		{Type: "AAAA", Name: "www", Value: "2001:db8::1"},
		{Type: "MX", Name: "@", Value: "mail.example.com"},
		{Type: "A", Name: "mail", Value: "192.0.2.25"},
		{Type: "CNAME", Name: "alias", Value: "www.example.com"},
		{Type: "CNAME", Name: "loop1", Value: "loop2.example.com"},
		{Type: "CNAME", Name: "loop2", Value: "loop1.example.com"},
		{Type: "A", Name: "*.wild", Value: "192.0.2.99"},
		{Type: "NS", Name: "sub", Value: "ns.sub.example.com"},
		{Type: "A", Name: "ns.sub", Value: "192.0.2.53"},
		{Type: "TXT", Name: "@", Value: "v=spf1 -all"},
		{Type: "SRV", Name: "_sip._tcp", Value: "sip.example.com", Port: i64(5060)},
	}, bigTXT(20, 100)...) {
		r, err := dnszone.Parse(zone, in)
		if err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		recs = append(recs, r)
	}
	return dnszone.Build(zone, 7, recs)
}

// FuzzServeDNS sends any message that the server would hand its handler
// (it unpacks, and dns.DefaultMsgAcceptFunc, which Serve uses, accepts
// its header) through ServeDNS, as from UDP and from TCP: nothing panics,
// every reply packs, and a UDP reply fits the size the query allows.
func FuzzServeDNS(f *testing.F) {
	seed := func(m *dns.Msg) {
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, q := range []struct {
		name  string
		qtype uint16
	}{
		{"www.example.com", dns.TypeA}, {"example.com", dns.TypeMX}, {"alias.example.com", dns.TypeAAAA},
		{"loop1.example.com", dns.TypeA}, {"x.wild.example.com", dns.TypeA}, {"a.sub.example.com", dns.TypeA},
		{"nope.example.com", dns.TypeA}, {"example.com", dns.TypeANY}, {"big.example.com", dns.TypeTXT},
		{"example.org", dns.TypeA}, {"example.com", dns.TypeAXFR}, {"example.com", dns.TypeIXFR},
	} {
		seed(query(q.name, q.qtype))
		seed(ednsQuery(q.name, q.qtype, 4096))
	}
	bad := ednsQuery("www.example.com", dns.TypeA, 1232)
	bad.IsEdns0().SetVersion(1)
	seed(bad)
	n := new(dns.Msg)
	n.SetNotify(apex)
	seed(n)
	ixfr := query(apex, dns.TypeIXFR)
	ixfr.Ns = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: apex, Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: "a.", Mbox: "b.", Serial: 7}}
	seed(ixfr)
	// A header announcing a question that is not there: found by this
	// target (see TestHeaderOnlyQuery).
	f.Add([]byte{0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	ch := query("version.bind", dns.TypeTXT)
	ch.Question[0].Qclass = dns.ClassCHAOS
	seed(ch)

	srv := dnsserver.New(dnsserver.Options{TransferFrom: []netip.Prefix{mustPrefix("127.0.0.0/8")}, Logger: discardLogger()})
	srv.Update(zone, smallZone(f))

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		// The request as the server reads it, for the size its reply may
		// take; nil when it does not unpack (the reply is then FORMERR).
		r := new(dns.Msg)
		if r.Unpack(data) != nil {
			r = nil
		}
		id := binary.BigEndian.Uint16(data)
		for _, remote := range []net.Addr{&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5353}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5353}} {
			w := &fakeWriter{remote: remote}
			// Through the batched reader's entry: the header checks, the
			// unpacking and the handler, as a datagram takes them.
			dnsserver.HandlePacket(srv, w, data)
			for _, out := range w.written() {
				b, err := out.Pack()
				if err != nil {
					t.Fatalf("reply does not pack: %v\nquery %v\nreply %v", err, r, out)
				}
				if out.Id != id || !out.Response {
					t.Errorf("reply id %d response %v to query id %d", out.Id, out.Response, id)
				}
				if _, tcp := remote.(*net.TCPAddr); tcp {
					if len(b) > dns.MaxMsgSize {
						t.Errorf("a TCP reply of %d bytes", len(b))
					}
					continue
				}
				limit := dns.MinMsgSize
				if r == nil {
					continue
				}
				if opt := r.IsEdns0(); opt != nil {
					limit = max(dns.MinMsgSize, min(int(opt.UDPSize()), dnsserver.UDPSize))
				}
				if len(b) > limit {
					t.Errorf("a UDP reply of %d bytes, more than %d\nquery %v", len(b), limit, r)
				}
			}
		}
	})
}
