package dnsserver_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnsserver"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// want describes an expected answer: the rcode, the AA bit, and the
// records (as "name type data" without TTL) of each section, in any
// order. A nil section is not checked.
type want struct {
	rcode  int
	aa     bool
	answer []string
	ns     []string
	extra  []string // the OPT record left out
}

// brief is rr as "name type data", without TTL and class.
func brief(rr dns.RR) string {
	h := rr.Header()
	s := rr.String()
	// name TTL class type data: drop TTL and class.
	f := strings.SplitN(s, "\t", 5)
	data := ""
	if len(f) == 5 {
		data = f[4]
	}
	return strings.ToLower(h.Name) + " " + dns.TypeToString[h.Rrtype] + " " + data
}

func briefs(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeOPT {
			continue
		}
		out = append(out, brief(rr))
	}
	slices.Sort(out)
	return out
}

func checkAnswer(t *testing.T, in *dns.Msg, w want) {
	t.Helper()
	if in.Rcode != w.rcode {
		t.Errorf("rcode %s, want %s\n%v", rcode(in), dns.RcodeToString[w.rcode], in)
	}
	if in.Authoritative != w.aa {
		t.Errorf("AA %v, want %v\n%v", in.Authoritative, w.aa, in)
	}
	if in.Truncated {
		t.Errorf("TC set\n%v", in)
	}
	if in.RecursionAvailable {
		t.Errorf("RA set by an authoritative-only server\n%v", in)
	}
	for _, sec := range []struct {
		name string
		got  []dns.RR
		want []string
	}{{"answer", in.Answer, w.answer}, {"authority", in.Ns, w.ns}, {"additional", in.Extra, w.extra}} {
		if sec.want == nil {
			continue
		}
		want := slices.Clone(sec.want)
		slices.Sort(want)
		if got := briefs(sec.got); !slices.Equal(got, want) {
			t.Errorf("%s section:\n got %q\nwant %q", sec.name, got, want)
		}
	}
}

func TestAnswers(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverConfig{})
	soa := ts.soa(t)
	soaBrief := brief(soa)
	nsApex := []string{"example.com. NS ns1.example.com.", "example.com. NS ns2.example.com."}
	nsGlue := []string{"ns1.example.com. A 192.0.2.10", "ns2.example.com. A 192.0.2.11"}

	cases := []struct {
		name  string
		qname string
		qtype uint16
		want  want
	}{
		{"A", "www.example.com", dns.TypeA, want{aa: true, answer: []string{"www.example.com. A 192.0.2.1"}}},
		{"AAAA", "www.example.com", dns.TypeAAAA, want{aa: true, answer: []string{"www.example.com. AAAA 2001:db8::1"}}},
		{"mixed case", "WwW.ExAmPlE.CoM", dns.TypeA, want{aa: true, answer: []string{"www.example.com. A 192.0.2.1"}}},
		{"MX with glue", "example.com", dns.TypeMX, want{aa: true,
			answer: []string{"example.com. MX 10 mail.example.com."},
			extra:  []string{"mail.example.com. A 192.0.2.25", "mail.example.com. AAAA 2001:db8::25"}}},
		{"SRV with glue", "_sip._tcp.example.com", dns.TypeSRV, want{aa: true,
			answer: []string{"_sip._tcp.example.com. SRV 5 1 5060 sip.example.com."},
			extra:  []string{"sip.example.com. A 192.0.2.60"}}},
		{"NS at the apex with glue", "example.com", dns.TypeNS, want{aa: true, answer: nsApex, extra: nsGlue}},
		{"CAA", "example.com", dns.TypeCAA, want{aa: true, answer: []string{`example.com. CAA 0 issue "letsencrypt.org"`}}},
		{"TXT with quotes", "quote.example.com", dns.TypeTXT, want{aa: true, answer: []string{`quote.example.com. TXT "say \"hi\" \\ bye"`}}},
		{"CNAME", "alias.example.com", dns.TypeA, want{aa: true, answer: []string{
			"alias.example.com. CNAME www.example.com.", "www.example.com. A 192.0.2.1"}}},
		{"CNAME chain", "alias2.example.com", dns.TypeAAAA, want{aa: true, answer: []string{
			"alias2.example.com. CNAME alias.example.com.", "alias.example.com. CNAME www.example.com.",
			"www.example.com. AAAA 2001:db8::1"}}},
		{"CNAME asked for", "alias.example.com", dns.TypeCNAME, want{aa: true, answer: []string{"alias.example.com. CNAME www.example.com."}}},
		{"CNAME out of the zone", "out.example.com", dns.TypeA, want{aa: true, answer: []string{"out.example.com. CNAME www.example.net."}}},
		{"NXDOMAIN", "nope.example.com", dns.TypeA, want{rcode: dns.RcodeNameError, aa: true, answer: []string{}, ns: []string{soaBrief}}},
		{"NXDOMAIN deep", "a.b.c.nope.example.com", dns.TypeTXT, want{rcode: dns.RcodeNameError, aa: true, answer: []string{}, ns: []string{soaBrief}}},
		{"NODATA", "www.example.com", dns.TypeMX, want{aa: true, answer: []string{}, ns: []string{soaBrief}}},
		{"NODATA at an empty non-terminal", "b.example.com", dns.TypeA, want{aa: true, answer: []string{}, ns: []string{soaBrief}}},
		{"wildcard", "foo.wild.example.com", dns.TypeA, want{aa: true, answer: []string{"foo.wild.example.com. A 192.0.2.99"}}},
		{"wildcard, deeper", "x.y.wild.example.com", dns.TypeA, want{aa: true, answer: []string{"x.y.wild.example.com. A 192.0.2.99"}}},
		{"wildcard NODATA", "foo.wild.example.com", dns.TypeAAAA, want{aa: true, answer: []string{}, ns: []string{soaBrief}}},
		{"referral", "host.sub.example.com", dns.TypeA, want{aa: false, answer: []string{},
			ns: []string{"sub.example.com. NS ns.sub.example.com."}, extra: []string{"ns.sub.example.com. A 192.0.2.53"}}},
		{"referral at the cut", "sub.example.com", dns.TypeNS, want{aa: false, answer: []string{},
			ns: []string{"sub.example.com. NS ns.sub.example.com."}, extra: []string{"ns.sub.example.com. A 192.0.2.53"}}},
		{"glue is not answered authoritatively", "ns.sub.example.com", dns.TypeA, want{aa: false, answer: []string{},
			ns: []string{"sub.example.com. NS ns.sub.example.com."}, extra: []string{"ns.sub.example.com. A 192.0.2.53"}}},
		{"ANY", "www.example.com", dns.TypeANY, want{aa: true, answer: []string{"www.example.com. A 192.0.2.1", "www.example.com. AAAA 2001:db8::1"}}},
		{"SOA", "example.com", dns.TypeSOA, want{aa: true, answer: []string{soaBrief}, ns: []string{}}},
	}
	for _, c := range cases {
		for _, network := range []string{"udp", "tcp"} {
			t.Run(c.name+"/"+network, func(t *testing.T) {
				in := ts.exchange(t, network, query(c.qname, c.qtype))
				w := c.want
				if c.qtype == dns.TypeANY && network == "udp" {
					// One RRset over UDP (RFC 8482): no amplification.
					w.answer = w.answer[:1]
				}
				checkAnswer(t, in, w)
				if len(in.Question) != 1 || in.Question[0].Name != dns.Fqdn(c.qname) || in.Question[0].Qtype != c.qtype {
					t.Errorf("question %v, want the one asked (case kept)", in.Question)
				}
			})
		}
	}

	t.Run("SOA fields", func(t *testing.T) {
		if soa.Hdr.Name != apex || soa.Ns != "ns1.example.com." || soa.Mbox != "hostmaster.example.com." {
			t.Errorf("SOA %v", soa)
		}
		if soa.Refresh != dnszone.SOARefresh || soa.Retry != dnszone.SOARetry || soa.Expire != dnszone.SOAExpire || soa.Minttl != dnszone.SOAMinimum {
			t.Errorf("SOA timers %v", soa)
		}
		if soa.Serial == 0 {
			t.Errorf("SOA serial 0")
		}
	})
	t.Run("negative TTL", func(t *testing.T) {
		in := ts.exchange(t, "udp", query("nope.example.com", dns.TypeA))
		if len(in.Ns) != 1 || in.Ns[0].Header().Ttl != dnszone.SOAMinimum {
			t.Errorf("NXDOMAIN authority %v: want the SOA with TTL %d (RFC 2308)", in.Ns, dnszone.SOAMinimum)
		}
	})
	t.Run("class ANY", func(t *testing.T) {
		m := query("www.example.com", dns.TypeA)
		m.Question[0].Qclass = dns.ClassANY
		in := ts.exchange(t, "udp", m)
		checkAnswer(t, in, want{aa: true, answer: []string{"www.example.com. A 192.0.2.1"}})
	})
	t.Run("RD is copied, RA stays clear", func(t *testing.T) {
		m := query("www.example.com", dns.TypeA)
		m.RecursionDesired = true
		in := ts.exchange(t, "udp", m)
		if !in.RecursionDesired || in.RecursionAvailable {
			t.Errorf("RD %v RA %v, want RD copied and no RA", in.RecursionDesired, in.RecursionAvailable)
		}
	})
}

func TestRefused(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverConfig{})
	for _, network := range []string{"udp", "tcp"} {
		t.Run("other zone/"+network, func(t *testing.T) {
			for _, name := range []string{"example.org", "www.example.org", "com", ".", "notexample.com", "example.com.evil.net"} {
				in := ts.exchange(t, network, query(name, dns.TypeA))
				if in.Rcode != dns.RcodeRefused || in.Authoritative || len(in.Answer)+len(in.Ns)+len(in.Extra) != 0 {
					t.Errorf("%s: want an empty REFUSED, got\n%v", name, in)
				}
			}
		})
		t.Run("CHAOS/"+network, func(t *testing.T) {
			for _, name := range []string{"www.example.com", "version.bind", "id.server"} {
				m := query(name, dns.TypeTXT)
				m.Question[0].Qclass = dns.ClassCHAOS
				in := ts.exchange(t, network, m)
				if in.Rcode != dns.RcodeRefused || len(in.Answer) != 0 {
					t.Errorf("%s CH TXT: want REFUSED, got\n%v", name, in)
				}
			}
		})
	}
	t.Run("NOTIFY", func(t *testing.T) {
		m := new(dns.Msg)
		m.SetNotify(apex)
		m.Answer = []dns.RR{ts.soa(t)}
		in := ts.exchange(t, "udp", m)
		if in.Rcode != dns.RcodeRefused || in.Opcode != dns.OpcodeNotify {
			t.Errorf("NOTIFY to the primary: want REFUSED, got\n%v", in)
		}
	})
	t.Run("UPDATE", func(t *testing.T) {
		m := new(dns.Msg)
		m.SetUpdate(apex)
		rr, _ := dns.NewRR("evil.example.com. 300 IN A 192.0.2.66")
		m.Insert([]dns.RR{rr})
		in := ts.exchange(t, "udp", m)
		if in.Rcode != dns.RcodeNotImplemented && in.Rcode != dns.RcodeRefused {
			t.Errorf("UPDATE: want NOTIMP or REFUSED, got\n%v", in)
		}
		if got := ts.exchange(t, "udp", query("evil.example.com", dns.TypeA)); got.Rcode != dns.RcodeNameError {
			t.Errorf("an UPDATE changed the zone: %v", got)
		}
	})
	st := ts.srv.Stats()
	if st.Refused == 0 || st.Queries == 0 || st.Zones != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestEDNS(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverConfig{})
	for _, network := range []string{"udp", "tcp"} {
		t.Run("OPT in reply/"+network, func(t *testing.T) {
			for _, q := range []*dns.Msg{
				ednsQuery("www.example.com", dns.TypeA, 4096),
				ednsQuery("nope.example.com", dns.TypeA, 1232),
				ednsQuery("example.org", dns.TypeA, 512), // REFUSED carries it too
			} {
				in := ts.exchange(t, network, q)
				opt := in.IsEdns0()
				if opt == nil {
					t.Errorf("%s: no OPT in the reply to an EDNS query\n%v", q.Question[0].Name, in)
					continue
				}
				if opt.UDPSize() != dnsserver.UDPSize || opt.Version() != 0 {
					t.Errorf("%s: OPT UDP size %d version %d, want %d and 0", q.Question[0].Name, opt.UDPSize(), opt.Version(), dnsserver.UDPSize)
				}
				if n := len(in.Extra); in.Extra[n-1] != opt {
					t.Errorf("the OPT is not the last record of the additional section: %v", in.Extra)
				}
				if strings.Count(in.String(), "OPT PSEUDOSECTION") != 1 {
					t.Errorf("more than one OPT: %v", in)
				}
			}
		})
	}
	t.Run("no EDNS, no OPT, 512 bytes", func(t *testing.T) {
		for _, q := range []struct {
			name  string
			qtype uint16
		}{{"www.example.com", dns.TypeA}, {"example.com", dns.TypeMX}, {"example.com", dns.TypeANY}, {"big.example.com", dns.TypeTXT}} {
			n, in := ts.rawUDP(t, query(q.name, q.qtype))
			if in.IsEdns0() != nil {
				t.Errorf("%s: OPT in the reply to a query without EDNS", q.name)
			}
			if n > dns.MinMsgSize {
				t.Errorf("%s %s: %d bytes over UDP without EDNS, more than 512", q.name, dns.TypeToString[q.qtype], n)
			}
		}
	})
	t.Run("BADVERS", func(t *testing.T) {
		for _, network := range []string{"udp", "tcp"} {
			m := ednsQuery("www.example.com", dns.TypeA, 1232)
			m.IsEdns0().SetVersion(1)
			in := ts.exchange(t, network, m)
			if in.Rcode != dns.RcodeBadVers {
				t.Errorf("%s: EDNS version 1: rcode %s, want BADVERS\n%v", network, rcode(in), in)
			}
			opt := in.IsEdns0()
			if opt == nil || opt.Version() != 0 {
				t.Errorf("%s: BADVERS must carry an OPT of version 0: %v", network, in)
			}
			if len(in.Answer) != 0 {
				t.Errorf("%s: BADVERS with answers: %v", network, in)
			}
		}
	})
	t.Run("small EDNS size is 512", func(t *testing.T) {
		n, in := ts.rawUDP(t, ednsQuery("big.example.com", dns.TypeTXT, 100))
		if n > dns.MinMsgSize || !in.Truncated {
			t.Errorf("EDNS size 100: %d bytes, TC %v: want at most 512 bytes and TC", n, in.Truncated)
		}
		if in.IsEdns0() == nil {
			t.Errorf("no OPT in the truncated reply")
		}
	})
}

func TestTruncation(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverConfig{})
	const nbig = 40 // bigTXT(40, 100) in the fixture
	q := func() *dns.Msg { return query("big.example.com", dns.TypeTXT) }

	t.Run("UDP without EDNS", func(t *testing.T) {
		n, in := ts.rawUDP(t, q())
		if !in.Truncated {
			t.Errorf("TC not set on %d of %d records", len(in.Answer), nbig)
		}
		if n > dns.MinMsgSize {
			t.Errorf("%d bytes, more than 512", n)
		}
		// The TC bit alone: no records for a forged source to receive.
		if len(in.Answer)+len(in.Ns)+len(in.Extra) > 0 || n > 64 {
			t.Errorf("a truncated answer of %d bytes with %d answers, %d authority and %d additional records; want none",
				n, len(in.Answer), len(in.Ns), len(in.Extra))
		}
		if in.Rcode != dns.RcodeSuccess || !in.Authoritative {
			t.Errorf("rcode %s AA %v", rcode(in), in.Authoritative)
		}
	})
	t.Run("UDP with EDNS 4096", func(t *testing.T) {
		n, in := ts.rawUDP(t, ednsQuery("big.example.com", dns.TypeTXT, 4096))
		if n > dnsserver.UDPSize {
			t.Errorf("%d bytes, more than %d", n, dnsserver.UDPSize)
		}
		if !in.Truncated {
			t.Errorf("TC not set on %d of %d records", len(in.Answer), nbig)
		}
		if opt := in.IsEdns0(); opt == nil || opt.UDPSize() != dnsserver.UDPSize {
			t.Errorf("OPT %v", opt)
		}
		// The TC bit and the OPT alone, however much room the client
		// offered: a truncated answer is no amplifier.
		if len(in.Answer)+len(in.Ns) > 0 || len(in.Extra) != 1 || n > 64 {
			t.Errorf("a truncated answer of %d bytes with %d answers, %d authority and %d additional records; want the OPT alone",
				n, len(in.Answer), len(in.Ns), len(in.Extra))
		}
	})
	t.Run("UDP with EDNS, answer fits", func(t *testing.T) {
		n, in := ts.rawUDP(t, ednsQuery("www.example.com", dns.TypeAAAA, 4096))
		if in.Truncated || len(in.Answer) != 1 || n > dnsserver.UDPSize {
			t.Errorf("%d bytes, TC %v, %d answers", n, in.Truncated, len(in.Answer))
		}
	})
	t.Run("TCP", func(t *testing.T) {
		for _, m := range []*dns.Msg{q(), ednsQuery("big.example.com", dns.TypeTXT, 512)} {
			in := ts.exchange(t, "tcp", m)
			if in.Truncated || len(in.Answer) != nbig {
				t.Errorf("over TCP: TC %v, %d records, want all %d", in.Truncated, len(in.Answer), nbig)
			}
			checkBigTXT(t, in.Answer, nbig)
		}
	})
	t.Run("UDP then TCP on TC", func(t *testing.T) {
		c := &dns.Client{Net: "udp", Timeout: 3 * time.Second}
		in, _, err := c.Exchange(q(), ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		if !in.Truncated {
			t.Fatalf("TC not set over UDP")
		}
		c.Net = "tcp"
		if in, _, err = c.Exchange(q(), ts.addr); err != nil {
			t.Fatal(err)
		}
		checkBigTXT(t, in.Answer, nbig)
		checkBigTXT(t, ts.ask(t, ednsQuery("big.example.com", dns.TypeTXT, 4096)).Answer, nbig)
	})
	t.Run("referral glue under 512 bytes", func(t *testing.T) {
		n, in := ts.rawUDP(t, query("x.sub.example.com", dns.TypeA))
		if n > dns.MinMsgSize || in.Truncated || len(in.Ns) != 1 || len(in.Extra) != 1 {
			t.Errorf("referral: %d bytes TC %v: %v", n, in.Truncated, in)
		}
	})
}

func checkBigTXT(t *testing.T, rrs []dns.RR, n int) {
	t.Helper()
	seen := map[string]bool{}
	for _, rr := range rrs {
		txt, ok := rr.(*dns.TXT)
		if !ok {
			t.Errorf("not a TXT: %v", rr)
			continue
		}
		v := strings.Join(txt.Txt, "")
		if len(v) != 100 {
			t.Errorf("TXT of %d bytes: %q", len(v), v)
		}
		seen[v] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct TXT records, want %d", len(seen), n)
	}
}

func TestChangesAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverConfig{})
	serial := ts.soa(t).Serial

	r, err := ts.st.AddRecord(account, ts.zoneID, dnszone.Input{Type: "A", Name: "new", Value: "192.0.2.200"})
	if err != nil {
		t.Fatal(err)
	}
	for _, network := range []string{"udp", "tcp"} {
		checkAnswer(t, ts.exchange(t, network, query("new.example.com", dns.TypeA)),
			want{aa: true, answer: []string{"new.example.com. A 192.0.2.200"}})
	}
	s1 := ts.soa(t).Serial
	if s1 <= serial {
		t.Errorf("serial %d after an add, was %d", s1, serial)
	}

	if _, err := ts.st.UpdateRecord(account, ts.zoneID, r.ID, dnszone.Input{Type: "A", Name: "new", Value: "192.0.2.201", TTL: i64(60)}); err != nil {
		t.Fatal(err)
	}
	in := ts.exchange(t, "udp", query("new.example.com", dns.TypeA))
	checkAnswer(t, in, want{aa: true, answer: []string{"new.example.com. A 192.0.2.201"}})
	if len(in.Answer) == 1 && in.Answer[0].Header().Ttl != 60 {
		t.Errorf("TTL %d, want 60", in.Answer[0].Header().Ttl)
	}
	s2 := ts.soa(t).Serial
	if s2 <= s1 {
		t.Errorf("serial %d after an update, was %d", s2, s1)
	}

	if err := ts.st.DeleteRecord(account, ts.zoneID, r.ID); err != nil {
		t.Fatal(err)
	}
	in = ts.exchange(t, "udp", query("new.example.com", dns.TypeA))
	if in.Rcode != dns.RcodeNameError {
		t.Errorf("after the delete: %s, want NXDOMAIN\n%v", rcode(in), in)
	}
	s3 := ts.soa(t).Serial
	if s3 <= s2 {
		t.Errorf("serial %d after a delete, was %d", s3, s2)
	}
	if len(in.Ns) == 1 {
		if soa, ok := in.Ns[0].(*dns.SOA); !ok || soa.Serial != s3 {
			t.Errorf("NXDOMAIN carries %v, want the SOA of serial %d", in.Ns[0], s3)
		}
	}

	t.Run("new zone, deleted zone", func(t *testing.T) {
		z, err := ts.st.CreateZone(account, "example.net")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ts.st.AddRecord(account, z.ID, dnszone.Input{Type: "A", Name: "www", Value: "198.51.100.1"}); err != nil {
			t.Fatal(err)
		}
		checkAnswer(t, ts.exchange(t, "udp", query("www.example.net", dns.TypeA)),
			want{aa: true, answer: []string{"www.example.net. A 198.51.100.1"}})
		// A CNAME to the other zone is not followed across zones.
		checkAnswer(t, ts.exchange(t, "udp", query("out.example.com", dns.TypeA)),
			want{aa: true, answer: []string{"out.example.com. CNAME www.example.net."}})
		if err := ts.st.DeleteZone(account, z.ID); err != nil {
			t.Fatal(err)
		}
		if in := ts.exchange(t, "udp", query("www.example.net", dns.TypeA)); in.Rcode != dns.RcodeRefused {
			t.Errorf("a deleted zone: %s, want REFUSED", rcode(in))
		}
		if n := ts.srv.Stats().Zones; n != 1 {
			t.Errorf("%d zones, want 1", n)
		}
	})
}

// TestConcurrentQueriesAndChanges races queries over UDP and TCP against
// changes (run it with -race).
func TestConcurrentQueriesAndChanges(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	errs := make(chan error, 8)
	for i := range 4 {
		network := []string{"udp", "tcp"}[i%2]
		go func() {
			c := &dns.Client{Net: network, Timeout: 2 * time.Second}
			var err error
			for n := 0; ctx.Err() == nil && n < 200; n++ {
				for _, q := range []*dns.Msg{
					query("www.example.com", dns.TypeA), ednsQuery("big.example.com", dns.TypeTXT, 4096),
					query("example.com", dns.TypeMX), query("x.sub.example.com", dns.TypeA), query("example.com", dns.TypeANY),
				} {
					var in *dns.Msg
					if in, _, err = c.Exchange(q, ts.addr); err != nil {
						break
					}
					if in.Rcode != dns.RcodeSuccess {
						err = fmt.Errorf("%s %s: %s", q.Question[0].Name, dns.TypeToString[q.Question[0].Qtype], rcode(in))
						break
					}
				}
				if err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for i := 0; i < 30; i++ {
		r, err := ts.st.AddRecord(account, ts.zoneID, dnszone.Input{Type: "A", Name: "www", Value: "192.0.2." + strconv.Itoa(100+i)})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := ts.st.DeleteRecord(account, ts.zoneID, r.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Errorf("query during changes: %v", err)
		}
	}
}

// TestMalformed: what the server gets from the network that is not a
// plain query gets a plain error, and the server goes on answering.
func TestMalformed(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverConfig{})
	send := func(t *testing.T, pkt []byte) (*dns.Msg, error) {
		conn, err := net.Dial("udp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.Write(pkt)
		conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		buf := make([]byte, 65536)
		n, err := conn.Read(buf)
		if err != nil {
			return nil, err
		}
		in := new(dns.Msg)
		return in, in.Unpack(buf[:n])
	}
	hdr := func(id, bits, qd, an, ns, ar uint16) []byte {
		b := make([]byte, 12)
		for i, v := range []uint16{id, bits, qd, an, ns, ar} {
			binary.BigEndian.PutUint16(b[2*i:], v)
		}
		return b
	}
	q, _ := query("www.example.com", dns.TypeA).Pack()

	t.Run("no question", func(t *testing.T) {
		in, err := send(t, hdr(7, 0, 0, 0, 0, 0))
		if err == nil && in.Rcode != dns.RcodeFormatError {
			t.Errorf("QDCOUNT 0: %v, want FORMERR or silence", in)
		}
	})
	t.Run("two questions", func(t *testing.T) {
		pkt := append([]byte(nil), q...)
		binary.BigEndian.PutUint16(pkt[4:], 2)
		pkt = append(pkt, q[12:]...)
		in, err := send(t, pkt)
		if err == nil && in.Rcode != dns.RcodeFormatError {
			t.Errorf("QDCOUNT 2: %v, want FORMERR or silence", in)
		}
	})
	t.Run("a response", func(t *testing.T) {
		pkt := append([]byte(nil), q...)
		pkt[2] |= 0x80 // QR
		if in, err := send(t, pkt); err == nil {
			t.Errorf("a response was answered: %v", in)
		}
	})
	t.Run("short", func(t *testing.T) {
		if in, err := send(t, q[:5]); err == nil {
			t.Errorf("5 bytes were answered: %v", in)
		}
	})
	t.Run("cut question", func(t *testing.T) {
		in, err := send(t, q[:len(q)-3])
		if err == nil && in.Rcode != dns.RcodeFormatError {
			t.Errorf("a cut question: %v, want FORMERR or silence", in)
		}
	})
	// Each of those left the server answering.
	checkAnswer(t, ts.exchange(t, "udp", query("www.example.com", dns.TypeA)), want{aa: true, answer: []string{"www.example.com. A 192.0.2.1"}})
	checkAnswer(t, ts.exchange(t, "tcp", query("www.example.com", dns.TypeA)), want{aa: true, answer: []string{"www.example.com. A 192.0.2.1"}})
}

// TestHeaderOnlyQuery: a header that announces one question followed by
// nothing unpacks (miekg/dns returns "just the header") into a message
// with no question, which the accept function lets through.
func TestHeaderOnlyQuery(t *testing.T) {
	ts := startServer(t, serverConfig{})
	conn, err := net.Dial("udp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pkt := []byte{0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}
	conn.Write(pkt)
	conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	buf := make([]byte, 512)
	if n, err := conn.Read(buf); err == nil {
		in := new(dns.Msg)
		if err := in.Unpack(buf[:n]); err != nil || in.Rcode != dns.RcodeFormatError {
			t.Errorf("header-only query: %v (%v), want FORMERR or silence", in, err)
		}
	}
	checkAnswer(t, ts.exchange(t, "udp", query("www.example.com", dns.TypeA)), want{aa: true, answer: []string{"www.example.com. A 192.0.2.1"}})
}

// TestServeDNSHeaderOnly is TestHeaderOnlyQuery without the network: the
// handler must not panic on a message without a question.
func TestServeDNSHeaderOnly(t *testing.T) {
	srv := dnsserver.New(dnsserver.Options{})
	srv.Update(zone, smallZone(t))
	for _, m := range []*dns.Msg{
		{MsgHdr: dns.MsgHdr{Id: 1, Opcode: dns.OpcodeQuery}},
		{MsgHdr: dns.MsgHdr{Id: 2, Opcode: dns.OpcodeNotify}},
	} {
		w := &fakeWriter{remote: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5353}}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("ServeDNS panics on a message without a question (opcode %s): %v", dns.OpcodeToString[m.Opcode], p)
				}
			}()
			srv.ServeDNS(w, m)
		}()
		for _, out := range w.msgs {
			if out.Rcode != dns.RcodeFormatError && out.Rcode != dns.RcodeRefused {
				t.Errorf("no question: %v", out)
			}
		}
	}
}
