package dnszone_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// testZone is the zone of the Answer tests, each record checked beside
// the ones before it as the store would.
var testZone = []dnszone.Input{
	{Type: "NS", Name: "@", Value: "ns2.example.net"},
	{Type: "NS", Name: "@", Value: "ns1.example.com"},
	{Type: "A", Name: "ns1", Value: "192.0.2.53"},
	{Type: "A", Name: "www", Value: "192.0.2.1"},
	{Type: "AAAA", Name: "www", Value: "2001:db8::1"},
	{Type: "CNAME", Name: "alias", Value: "www.example.com"},
	{Type: "CNAME", Name: "c1", Value: "c2.example.com"},
	{Type: "CNAME", Name: "c2", Value: "www.example.com"},
	{Type: "CNAME", Name: "out", Value: "elsewhere.org"},
	{Type: "CNAME", Name: "dangling", Value: "missing.example.com"},
	{Type: "MX", Name: "@", Value: "mail.example.com"},
	{Type: "A", Name: "mail", Value: "192.0.2.25"},
	{Type: "TXT", Name: "@", Value: "v=spf1 mx -all"},
	{Type: "A", Name: "*.wild", Value: "192.0.2.9"},
	{Type: "TXT", Name: "exists.wild", Value: "here"},
	{Type: "NS", Name: "sub", Value: "ns.sub.example.com"},
	{Type: "A", Name: "ns.sub", Value: "192.0.2.99"},
	{Type: "A", Name: "a.b.deep", Value: "192.0.2.77"},
	{Type: "CNAME", Name: "loop1", Value: "loop2.example.com"},
	{Type: "CNAME", Name: "loop2", Value: "loop1.example.com"},
	{Type: "CNAME", Name: "tosub", Value: "www.sub.example.com"},
	{Type: "CNAME", Name: "towild", Value: "x.wild.example.com"},
	{Type: "SRV", Name: "_sip._tcp", Value: "www.example.com", Port: i64(5060)},
}

func buildZone(t testing.TB, ins []dnszone.Input) *dnszone.Snapshot {
	t.Helper()
	var recs []dnszone.Record
	for i, in := range ins {
		r := mustParse(t, in)
		if err := dnszone.Check(zone, recs, r); err != nil {
			t.Fatalf("Check(%s): %v", showIn(in), err)
		}
		r.ID = fmt.Sprint(i)
		recs = append(recs, r)
	}
	return dnszone.Build(zone, 7, recs)
}

// rrs parses records in zone-file form and prints them as miekg/dns does.
func rrs(t testing.TB, lines ...string) []string {
	t.Helper()
	out := []string{}
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil {
			t.Fatalf("dns.NewRR(%q): %v", l, err)
		}
		out = append(out, rr.String())
	}
	return out
}

func strs(set []dns.RR) []string {
	out := []string{}
	for _, rr := range set {
		out = append(out, rr.String())
	}
	return out
}

const negSOA = "example.com. 300 IN SOA ns1.example.com. hostmaster.example.com. 7 3600 600 1209600 300"

func TestAnswer(t *testing.T) {
	s := buildZone(t, testZone)
	tests := []struct {
		name    string
		qname   string
		qtype   uint16
		rcode   int
		aa      bool
		answer  []string
		ns      []string
		extra   []string
		ordered bool // the answer's order matters (a CNAME chain)
	}{
		{name: "exact A", qname: "www.example.com.", qtype: dns.TypeA, aa: true,
			answer: []string{"www.example.com. 3600 IN A 192.0.2.1"}},
		{name: "exact AAAA", qname: "www.example.com.", qtype: dns.TypeAAAA, aa: true,
			answer: []string{"www.example.com. 3600 IN AAAA 2001:db8::1"}},
		{name: "NODATA", qname: "www.example.com.", qtype: dns.TypeMX, aa: true,
			ns: []string{negSOA}},
		{name: "NXDOMAIN", qname: "nope.example.com.", qtype: dns.TypeA, rcode: dns.RcodeNameError, aa: true,
			ns: []string{negSOA}},
		{name: "NXDOMAIN below an existing name", qname: "x.www.example.com.", qtype: dns.TypeA, rcode: dns.RcodeNameError, aa: true,
			ns: []string{negSOA}},
		{name: "empty non-terminal", qname: "deep.example.com.", qtype: dns.TypeA, aa: true,
			ns: []string{negSOA}},
		{name: "empty non-terminal, deeper", qname: "b.deep.example.com.", qtype: dns.TypeTXT, aa: true,
			ns: []string{negSOA}},
		{name: "below an empty non-terminal", qname: "a.b.deep.example.com.", qtype: dns.TypeA, aa: true,
			answer: []string{"a.b.deep.example.com. 3600 IN A 192.0.2.77"}},
		{name: "NXDOMAIN beside an empty non-terminal", qname: "c.deep.example.com.", qtype: dns.TypeA, rcode: dns.RcodeNameError, aa: true,
			ns: []string{negSOA}},

		// CNAMEs.
		{name: "CNAME followed", qname: "alias.example.com.", qtype: dns.TypeA, aa: true, ordered: true,
			answer: []string{"alias.example.com. 3600 IN CNAME www.example.com.", "www.example.com. 3600 IN A 192.0.2.1"}},
		{name: "CNAME chain", qname: "c1.example.com.", qtype: dns.TypeA, aa: true, ordered: true,
			answer: []string{
				"c1.example.com. 3600 IN CNAME c2.example.com.",
				"c2.example.com. 3600 IN CNAME www.example.com.",
				"www.example.com. 3600 IN A 192.0.2.1",
			}},
		{name: "CNAME chain to NODATA", qname: "c1.example.com.", qtype: dns.TypeMX, aa: true, ordered: true,
			answer: []string{
				"c1.example.com. 3600 IN CNAME c2.example.com.",
				"c2.example.com. 3600 IN CNAME www.example.com.",
			},
			ns: []string{negSOA}},
		{name: "CNAME out of the zone", qname: "out.example.com.", qtype: dns.TypeA, aa: true,
			answer: []string{"out.example.com. 3600 IN CNAME elsewhere.org."}},
		{name: "dangling CNAME", qname: "dangling.example.com.", qtype: dns.TypeA, rcode: dns.RcodeNameError, aa: true,
			answer: []string{"dangling.example.com. 3600 IN CNAME missing.example.com."},
			ns:     []string{negSOA}},
		{name: "CNAME asked for", qname: "alias.example.com.", qtype: dns.TypeCNAME, aa: true,
			answer: []string{"alias.example.com. 3600 IN CNAME www.example.com."}},
		{name: "CNAME asked for in a chain", qname: "c1.example.com.", qtype: dns.TypeCNAME, aa: true,
			answer: []string{"c1.example.com. 3600 IN CNAME c2.example.com."}},
		{name: "CNAME into a delegation", qname: "tosub.example.com.", qtype: dns.TypeA, aa: true,
			answer: []string{"tosub.example.com. 3600 IN CNAME www.sub.example.com."},
			ns:     []string{"sub.example.com. 3600 IN NS ns.sub.example.com."},
			extra:  []string{"ns.sub.example.com. 3600 IN A 192.0.2.99"}},
		{name: "CNAME to a wildcard", qname: "towild.example.com.", qtype: dns.TypeA, aa: true, ordered: true,
			answer: []string{"towild.example.com. 3600 IN CNAME x.wild.example.com.", "x.wild.example.com. 3600 IN A 192.0.2.9"}},

		// Wildcards (RFC 4592).
		{name: "wildcard", qname: "x.wild.example.com.", qtype: dns.TypeA, aa: true,
			answer: []string{"x.wild.example.com. 3600 IN A 192.0.2.9"}},
		{name: "wildcard, two labels down", qname: "y.x.wild.example.com.", qtype: dns.TypeA, aa: true,
			answer: []string{"y.x.wild.example.com. 3600 IN A 192.0.2.9"}},
		{name: "wildcard NODATA", qname: "x.wild.example.com.", qtype: dns.TypeTXT, aa: true,
			ns: []string{negSOA}},
		{name: "wildcard name itself", qname: "*.wild.example.com.", qtype: dns.TypeA, aa: true,
			answer: []string{"*.wild.example.com. 3600 IN A 192.0.2.9"}},
		{name: "existing name beside a wildcard", qname: "exists.wild.example.com.", qtype: dns.TypeA, aa: true,
			ns: []string{negSOA}},
		{name: "existing name's own record", qname: "exists.wild.example.com.", qtype: dns.TypeTXT, aa: true,
			answer: []string{`exists.wild.example.com. 3600 IN TXT "here"`}},
		{name: "below an existing name beside a wildcard", qname: "x.exists.wild.example.com.", qtype: dns.TypeA, rcode: dns.RcodeNameError, aa: true,
			ns: []string{negSOA}},
		{name: "wildcard's parent is an empty non-terminal", qname: "wild.example.com.", qtype: dns.TypeA, aa: true,
			ns: []string{negSOA}},

		// Delegation.
		{name: "referral", qname: "www.sub.example.com.", qtype: dns.TypeA,
			ns:    []string{"sub.example.com. 3600 IN NS ns.sub.example.com."},
			extra: []string{"ns.sub.example.com. 3600 IN A 192.0.2.99"}},
		{name: "referral at the cut", qname: "sub.example.com.", qtype: dns.TypeNS,
			ns:    []string{"sub.example.com. 3600 IN NS ns.sub.example.com."},
			extra: []string{"ns.sub.example.com. 3600 IN A 192.0.2.99"}},
		{name: "referral for glue", qname: "ns.sub.example.com.", qtype: dns.TypeA,
			ns:    []string{"sub.example.com. 3600 IN NS ns.sub.example.com."},
			extra: []string{"ns.sub.example.com. 3600 IN A 192.0.2.99"}},
		{name: "referral for a missing name", qname: "a.b.sub.example.com.", qtype: dns.TypeTXT,
			ns:    []string{"sub.example.com. 3600 IN NS ns.sub.example.com."},
			extra: []string{"ns.sub.example.com. 3600 IN A 192.0.2.99"}},

		// Additional records.
		{name: "MX with glue", qname: "example.com.", qtype: dns.TypeMX, aa: true,
			answer: []string{"example.com. 3600 IN MX 10 mail.example.com."},
			extra:  []string{"mail.example.com. 3600 IN A 192.0.2.25"}},
		{name: "apex NS", qname: "example.com.", qtype: dns.TypeNS, aa: true,
			answer: []string{"example.com. 3600 IN NS ns1.example.com.", "example.com. 3600 IN NS ns2.example.net."},
			extra:  []string{"ns1.example.com. 3600 IN A 192.0.2.53"}},
		{name: "SRV with glue", qname: "_sip._tcp.example.com.", qtype: dns.TypeSRV, aa: true,
			answer: []string{"_sip._tcp.example.com. 3600 IN SRV 10 0 5060 www.example.com."},
			extra:  []string{"www.example.com. 3600 IN A 192.0.2.1", "www.example.com. 3600 IN AAAA 2001:db8::1"}},
		{name: "empty non-terminal of an SRV", qname: "_tcp.example.com.", qtype: dns.TypeSRV, aa: true,
			ns: []string{negSOA}},

		// The apex.
		{name: "SOA", qname: "example.com.", qtype: dns.TypeSOA, aa: true,
			answer: []string{"example.com. 3600 IN SOA ns1.example.com. hostmaster.example.com. 7 3600 600 1209600 300"}},
		{name: "TXT at the apex", qname: "example.com.", qtype: dns.TypeTXT, aa: true,
			answer: []string{`example.com. 3600 IN TXT "v=spf1 mx -all"`}},
		{name: "apex NODATA", qname: "example.com.", qtype: dns.TypeAAAA, aa: true,
			ns: []string{negSOA}},

		// ANY.
		{name: "ANY", qname: "www.example.com.", qtype: dns.TypeANY, aa: true,
			answer: []string{"www.example.com. 3600 IN A 192.0.2.1", "www.example.com. 3600 IN AAAA 2001:db8::1"}},
		{name: "ANY at a wildcard", qname: "x.wild.example.com.", qtype: dns.TypeANY, aa: true,
			answer: []string{"x.wild.example.com. 3600 IN A 192.0.2.9"}},
		{name: "ANY at a missing name", qname: "nope.example.com.", qtype: dns.TypeANY, rcode: dns.RcodeNameError, aa: true,
			ns: []string{negSOA}},
	}
	for _, tt := range tests {
		got := s.Answer(tt.qname, tt.qtype)
		q := fmt.Sprintf("Answer(%s %s)", tt.qname, dns.TypeToString[tt.qtype])
		if got.Rcode != tt.rcode {
			t.Errorf("%s: %s rcode: got %s, want %s", tt.name, q, dns.RcodeToString[got.Rcode], dns.RcodeToString[tt.rcode])
		}
		if got.Authoritative != tt.aa {
			t.Errorf("%s: %s authoritative: got %v, want %v", tt.name, q, got.Authoritative, tt.aa)
		}
		same := func(section string, got []dns.RR, want []string, ordered bool) {
			g, w := strs(got), rrs(t, want...)
			if !ordered {
				slices.Sort(g)
				slices.Sort(w)
			}
			if !slices.Equal(g, w) {
				t.Errorf("%s: %s %s:\ngot  %s\nwant %s", tt.name, q, section, strings.Join(g, "\n     "), strings.Join(w, "\n     "))
			}
		}
		same("answer", got.Answer, tt.answer, tt.ordered)
		same("authority", got.Ns, tt.ns, false)
		same("additional", got.Extra, tt.extra, false)
		// Every response packs.
		m := new(dns.Msg)
		m.SetQuestion(tt.qname, tt.qtype)
		m.Response, m.Authoritative, m.Rcode = true, got.Authoritative, got.Rcode
		m.Answer, m.Ns, m.Extra = got.Answer, got.Ns, got.Extra
		if _, err := m.Pack(); err != nil {
			t.Errorf("%s: %s: packing the reply: %v", tt.name, q, err)
		}
	}
}

func TestAnswerLoop(t *testing.T) {
	s := buildZone(t, testZone)
	done := make(chan dnszone.Response, 1)
	go func() { done <- s.Answer("loop1.example.com.", dns.TypeA) }()
	var got dnszone.Response
	select {
	case got = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Answer(loop1.example.com. A): no answer after 10s, want a loop to end")
	}
	if len(got.Answer) == 0 || len(got.Answer) > 16 {
		t.Errorf("Answer(loop1.example.com. A): got %d records, want 1 to 16", len(got.Answer))
	}
	for _, rr := range got.Answer {
		if _, ok := rr.(*dns.CNAME); !ok {
			t.Errorf("Answer(loop1.example.com. A): got %q, want only CNAMEs", rr)
		}
	}
	if first := got.Answer[0].Header().Name; first != "loop1.example.com." {
		t.Errorf("Answer(loop1.example.com. A): first record's owner: got %s, want loop1.example.com.", first)
	}
	if got.Rcode == dns.RcodeNameError {
		t.Errorf("Answer(loop1.example.com. A) rcode: got NXDOMAIN, want NOERROR or SERVFAIL")
	}
}

// TestAnswerWildcardCopies checks that a wildcard answer does not rename
// the zone's own record.
func TestAnswerWildcardCopies(t *testing.T) {
	s := buildZone(t, testZone)
	s.Answer("x.wild.example.com.", dns.TypeA)
	got := s.Answer("*.wild.example.com.", dns.TypeA)
	if len(got.Answer) != 1 || got.Answer[0].Header().Name != "*.wild.example.com." {
		t.Errorf("Answer(*.wild.example.com. A) after a wildcard answer: got %v, want the record named *.wild.example.com.", got.Answer)
	}
	for _, rr := range s.Records() {
		if strings.HasPrefix(rr.Header().Name, "x.wild") {
			t.Errorf("Records() after a wildcard answer: got %q, want no synthesized name", rr)
		}
	}
}

func TestBuild(t *testing.T) {
	s := buildZone(t, testZone)
	if s.Name != zone || s.Serial != 7 {
		t.Errorf("Build: got Name %q Serial %d, want %q 7", s.Name, s.Serial, zone)
	}
	soa := s.SOA()
	if soa == nil {
		t.Fatal("SOA(): got nil")
	}
	if soa.Serial != 7 {
		t.Errorf("SOA().Serial: got %d, want 7", soa.Serial)
	}
	if soa.Ns != "ns1.example.com." {
		t.Errorf("SOA().Ns: got %q, want the lowest apex NS ns1.example.com.", soa.Ns)
	}
	if soa.Hdr.Name != "example.com." || soa.Hdr.Ttl != dnszone.SOATTL || soa.Minttl != dnszone.SOAMinimum {
		t.Errorf("SOA(): got %q, want example.com. with TTL %d and minimum %d", soa, dnszone.SOATTL, dnszone.SOAMinimum)
	}
	recs := s.Records()
	if len(recs) != len(testZone) {
		t.Errorf("Records(): got %d records, want %d", len(recs), len(testZone))
	}
	for _, rr := range recs {
		if rr.Header().Rrtype == dns.TypeSOA {
			t.Errorf("Records(): got %q, want no SOA", rr)
		}
	}
	// A fixed order: the same records in another order give the same list.
	rev := slices.Clone(testZone)
	slices.Reverse(rev)
	if got, want := strs(buildZone(t, rev).Records()), strs(recs); !slices.Equal(got, want) {
		t.Errorf("Records() of the records reversed:\ngot  %v\nwant %v", got, want)
	}
	// The negative answer does not change the SOA.
	s.Answer("nope.example.com.", dns.TypeA)
	if s.SOA().Hdr.Ttl != dnszone.SOATTL {
		t.Errorf("SOA() TTL after a negative answer: got %d, want %d", s.SOA().Hdr.Ttl, dnszone.SOATTL)
	}
}

func TestBuildNoNS(t *testing.T) {
	s := dnszone.Build(zone, 1, nil)
	if got, want := s.SOA().Ns, "ns.example.com."; got != want {
		t.Errorf("Build without NS: SOA().Ns: got %q, want %q", got, want)
	}
	if got := s.Records(); len(got) != 0 {
		t.Errorf("Build without records: Records(): got %v, want none", got)
	}
	got := s.Answer("example.com.", dns.TypeSOA)
	if len(got.Answer) != 1 || got.Answer[0].Header().Rrtype != dns.TypeSOA {
		t.Errorf("Build without records: Answer(example.com. SOA): got %v, want the SOA", got.Answer)
	}
	got = s.Answer("www.example.com.", dns.TypeA)
	if got.Rcode != dns.RcodeNameError {
		t.Errorf("Build without records: Answer(www.example.com. A) rcode: got %d, want NXDOMAIN", got.Rcode)
	}
}

// TestBuildTTL: an RRset has one TTL (RFC 2181 §5.2), the lowest of its
// records'.
func TestBuildTTL(t *testing.T) {
	s := buildZone(t, []dnszone.Input{
		{Type: "NS", Name: "@", Value: "ns1.example.net"},
		{Type: "A", Name: "www", Value: "192.0.2.1", TTL: i64(600)},
		{Type: "A", Name: "www", Value: "192.0.2.2", TTL: i64(60)},
		{Type: "AAAA", Name: "www", Value: "2001:db8::1", TTL: i64(900)},
	})
	got := s.Answer("www.example.com.", dns.TypeA)
	want := rrs(t, "www.example.com. 60 IN A 192.0.2.1", "www.example.com. 60 IN A 192.0.2.2")
	if g := strs(got.Answer); !slices.Equal(g, want) {
		t.Errorf("Answer(www.example.com. A): got %v, want %v", g, want)
	}
	got = s.Answer("www.example.com.", dns.TypeAAAA)
	want = rrs(t, "www.example.com. 900 IN AAAA 2001:db8::1")
	if g := strs(got.Answer); !slices.Equal(g, want) {
		t.Errorf("Answer(www.example.com. AAAA): got %v, want %v", g, want)
	}
}

// TestAnswerApexWildcard: a wildcard at the apex answers for any missing
// name, but not for empty non-terminals nor below a delegation.
func TestAnswerApexWildcard(t *testing.T) {
	s := buildZone(t, []dnszone.Input{
		{Type: "NS", Name: "@", Value: "ns1.example.net"},
		{Type: "TXT", Name: "*", Value: "catch-all"},
		{Type: "A", Name: "a.b", Value: "192.0.2.1"},
		{Type: "NS", Name: "sub", Value: "ns1.example.net"},
	})
	tests := []struct {
		qname  string
		rcode  int
		answer []string
	}{
		{"nope.example.com.", dns.RcodeSuccess, []string{`nope.example.com. 3600 IN TXT "catch-all"`}},
		{"x.y.example.com.", dns.RcodeSuccess, []string{`x.y.example.com. 3600 IN TXT "catch-all"`}},
		{"b.example.com.", dns.RcodeSuccess, nil},                                                // an empty non-terminal
		{"x.a.b.example.com.", dns.RcodeNameError, nil},                                          // closest encloser a.b, no *.a.b
		{"x.b.example.com.", dns.RcodeNameError, nil},                                            // closest encloser b, no *.b
		{"x.sub.example.com.", dns.RcodeSuccess, nil},                                            // a referral
		{"example.com.", dns.RcodeSuccess, nil},                                                  // the apex has no TXT
		{"*.example.com.", dns.RcodeSuccess, []string{`*.example.com. 3600 IN TXT "catch-all"`}}, // the wildcard itself
	}
	for _, tt := range tests {
		got := s.Answer(tt.qname, dns.TypeTXT)
		if got.Rcode != tt.rcode {
			t.Errorf("Answer(%s TXT) rcode: got %s, want %s", tt.qname, dns.RcodeToString[got.Rcode], dns.RcodeToString[tt.rcode])
		}
		if g, w := strs(got.Answer), rrs(t, tt.answer...); !slices.Equal(g, w) {
			t.Errorf("Answer(%s TXT): got %v, want %v", tt.qname, g, w)
		}
	}
}
