package dnsserver_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnsserver"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

var loopbackOnly = []netip.Prefix{mustPrefix("127.0.0.0/8")}

// transfer runs an AXFR or IXFR (ixfrSerial set) of name and returns
// every record received, the first envelope's error, and the number of
// envelopes.
func transfer(t *testing.T, addr, name string, qtype uint16, ixfrSerial uint32) ([]dns.RR, error) {
	t.Helper()
	m := query(name, qtype)
	if qtype == dns.TypeIXFR {
		m.Ns = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: dns.Fqdn(name), Rrtype: dns.TypeSOA, Class: dns.ClassINET},
			Ns: "ns1.example.com.", Mbox: "hostmaster.example.com.", Serial: ixfrSerial}}
	}
	tr := &dns.Transfer{DialTimeout: 2 * time.Second, ReadTimeout: 3 * time.Second, WriteTimeout: 2 * time.Second}
	ch, err := tr.In(m, addr)
	if err != nil {
		return nil, err
	}
	var rrs []dns.RR
	var first error
	for env := range ch {
		if env.Error != nil && first == nil {
			first = env.Error
		}
		rrs = append(rrs, env.RR...)
	}
	return rrs, first
}

// checkWholeZone checks that rrs are a whole transfer of ts's zone: the
// current SOA first and last, every record of the store once between.
func checkWholeZone(t *testing.T, ts *testServer, rrs []dns.RR) {
	t.Helper()
	if len(rrs) < 2 {
		t.Fatalf("transfer of %d records", len(rrs))
	}
	soa := ts.soa(t)
	first, ok1 := rrs[0].(*dns.SOA)
	last, ok2 := rrs[len(rrs)-1].(*dns.SOA)
	if !ok1 || !ok2 || first.Serial != soa.Serial || last.Serial != soa.Serial {
		t.Errorf("transfer begins with %v and ends with %v, want the SOA of serial %d at both ends", rrs[0], rrs[len(rrs)-1], soa.Serial)
	}
	body := rrs[1 : len(rrs)-1]
	got := keys(body)
	want := keys(ts.records(t))
	for k, n := range want {
		if got[k] != n {
			t.Errorf("record %q: %d times in the transfer, want %d", k, got[k], n)
		}
	}
	for k := range got {
		if want[k] == 0 {
			t.Errorf("transfer has %q, which is not in the store", k)
		}
	}
	for _, rr := range body {
		if rr.Header().Rrtype == dns.TypeSOA {
			t.Errorf("a SOA inside the transfer: %v", rr)
		}
	}
}

func TestAXFR(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverConfig{opts: dnsserver.Options{TransferFrom: loopbackOnly}})

	t.Run("TCP from an allowed address", func(t *testing.T) {
		rrs, err := transfer(t, ts.addr, zone, dns.TypeAXFR, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkWholeZone(t, ts, rrs)
	})
	t.Run("after a change", func(t *testing.T) {
		if _, err := ts.st.AddRecord(account, ts.zoneID, dnszone.Input{Type: "AAAA", Name: "v6", Value: "2001:db8::66"}); err != nil {
			t.Fatal(err)
		}
		rrs, err := transfer(t, ts.addr, zone, dns.TypeAXFR, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkWholeZone(t, ts, rrs)
		if !containsKey(rrs, "v6.example.com.\t0\tIN\tAAAA\t2001:db8::66") {
			t.Errorf("the new record is not in the transfer")
		}
	})
	t.Run("UDP", func(t *testing.T) {
		for _, qtype := range []uint16{dns.TypeAXFR, dns.TypeIXFR} {
			m := query(zone, qtype)
			if qtype == dns.TypeIXFR {
				m.Ns = []dns.RR{ts.soa(t)}
				m.Ns[0].(*dns.SOA).Serial--
			}
			in := ts.exchange(t, "udp", m)
			if in.Rcode != dns.RcodeRefused || len(in.Answer) != 0 {
				t.Errorf("%s over UDP: want REFUSED, got\n%v", dns.TypeToString[qtype], in)
			}
		}
	})
	t.Run("a zone not served", func(t *testing.T) {
		_, err := transfer(t, ts.addr, "example.org", dns.TypeAXFR, 0)
		if err == nil || !strings.Contains(err.Error(), "rcode: 5") { // dns.Transfer: "bad xfr rcode: 5"
			t.Errorf("AXFR of example.org: %v, want REFUSED", err)
		}
	})
	t.Run("a name inside the zone", func(t *testing.T) {
		m := query("www.example.com", dns.TypeAXFR)
		in := ts.exchange(t, "tcp", m)
		if in.Rcode != dns.RcodeNotAuth && in.Rcode != dns.RcodeRefused {
			t.Errorf("AXFR of www.example.com: %s with %d records, want NOTAUTH or REFUSED", rcode(in), len(in.Answer))
		}
	})
}

func containsKey(rrs []dns.RR, k string) bool {
	for _, rr := range rrs {
		if key(rr) == k {
			return true
		}
	}
	return false
}

func TestAXFRRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		from []netip.Prefix
	}{
		{"TransferFrom empty", nil},
		{"another network", []netip.Prefix{mustPrefix("10.0.0.0/8"), mustPrefix("::1/128")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ts := startServer(t, serverConfig{opts: dnsserver.Options{TransferFrom: c.from}, records: []dnszone.Input{
				{Type: "A", Name: "www", Value: "192.0.2.1"},
			}})
			for _, qtype := range []uint16{dns.TypeAXFR, dns.TypeIXFR} {
				rrs, err := transfer(t, ts.addr, zone, qtype, 1)
				if err == nil {
					t.Errorf("%s allowed: %d records", dns.TypeToString[qtype], len(rrs))
				}
				if len(rrs) != 0 {
					t.Errorf("%s refused but sent %v", dns.TypeToString[qtype], rrs)
				}
				in := ts.exchange(t, "tcp", query(zone, qtype))
				if in.Rcode != dns.RcodeRefused || len(in.Answer) != 0 {
					t.Errorf("%s: want REFUSED, got\n%v", dns.TypeToString[qtype], in)
				}
			}
			// Queries are still answered.
			checkAnswer(t, ts.exchange(t, "tcp", query("www.example.com", dns.TypeA)), want{aa: true, answer: []string{"www.example.com. A 192.0.2.1"}})
		})
	}
}

func TestIXFR(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverConfig{opts: dnsserver.Options{TransferFrom: loopbackOnly}})
	soa := ts.soa(t)

	t.Run("current serial", func(t *testing.T) {
		m := query(zone, dns.TypeIXFR)
		m.Ns = []dns.RR{soa}
		in := ts.exchange(t, "tcp", m)
		if in.Rcode != dns.RcodeSuccess || !in.Authoritative || len(in.Answer) != 1 {
			t.Fatalf("IXFR at the current serial: want a single SOA, got\n%v", in)
		}
		if got, ok := in.Answer[0].(*dns.SOA); !ok || got.Serial != soa.Serial {
			t.Errorf("IXFR at the current serial answered %v", in.Answer[0])
		}
		// The same through dns.Transfer.
		rrs, err := transfer(t, ts.addr, zone, dns.TypeIXFR, soa.Serial)
		if err != nil || len(rrs) != 1 {
			t.Errorf("IXFR at the current serial via dns.Transfer: %v, %d records", err, len(rrs))
		}
	})
	t.Run("older serial", func(t *testing.T) {
		for _, serial := range []uint32{soa.Serial - 1, 1, 0} {
			rrs, err := transfer(t, ts.addr, zone, dns.TypeIXFR, serial)
			if err != nil {
				t.Fatalf("IXFR from serial %d: %v", serial, err)
			}
			checkWholeZone(t, ts, rrs)
		}
	})
	t.Run("after a change", func(t *testing.T) {
		if _, err := ts.st.AddRecord(account, ts.zoneID, dnszone.Input{Type: "A", Name: "later", Value: "192.0.2.77"}); err != nil {
			t.Fatal(err)
		}
		rrs, err := transfer(t, ts.addr, zone, dns.TypeIXFR, soa.Serial)
		if err != nil {
			t.Fatal(err)
		}
		checkWholeZone(t, ts, rrs)
		if !containsKey(rrs, "later.example.com.\t0\tIN\tA\t192.0.2.77") {
			t.Errorf("the new record is not in the IXFR")
		}
	})
}

// A zone of 40 TXT records of 2000 bytes (records the store accepts:
// dnszone.MaxTXT is 2048) at big.example.com: about 82 KB of data.
func bigZone() []dnszone.Input { return bigTXT(40, 2000) }

// TestAXFRLargeZone: a zone whose records add up to more than 64 KiB
// transfers, in several messages.
func TestAXFRLargeZone(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverConfig{opts: dnsserver.Options{TransferFrom: loopbackOnly}, records: bigZone()})
	rrs, err := transfer(t, ts.addr, zone, dns.TypeAXFR, 0)
	if err != nil {
		t.Fatalf("AXFR: %v after %d records", err, len(rrs))
	}
	checkWholeZone(t, ts, rrs)
	rrs, err = transfer(t, ts.addr, zone, dns.TypeIXFR, 1)
	if err != nil {
		t.Fatalf("IXFR: %v after %d records", err, len(rrs))
	}
	checkWholeZone(t, ts, rrs)
}

// TestTCPAnswerOver64K: an RRset bigger than a TCP message gets an answer
// cut to fit, with TC, rather than none.
func TestTCPAnswerOver64K(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverConfig{records: bigZone()})
	c := &dns.Client{Net: "tcp", Timeout: 2 * time.Second}
	in, _, err := c.Exchange(query("big.example.com", dns.TypeTXT), ts.addr)
	if err != nil {
		t.Fatalf("no answer over TCP: %v", err)
	}
	if !in.Truncated && len(in.Answer) != 40 || in.Rcode != dns.RcodeSuccess && in.Rcode != dns.RcodeServerFailure {
		t.Errorf("TC %v, %d records, %s", in.Truncated, len(in.Answer), rcode(in))
	}
	// Over UDP it is truncated as it should be.
	n, in := ts.rawUDP(t, ednsQuery("big.example.com", dns.TypeTXT, 4096))
	if !in.Truncated || n > dnsserver.UDPSize {
		t.Errorf("UDP: %d bytes, TC %v", n, in.Truncated)
	}
}
