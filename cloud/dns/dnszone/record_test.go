package dnszone_test

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

const zone = "example.com"

func i64(n int64) *int64   { return &n }
func u16(n uint16) *uint16 { return &n }

// show prints a record with its numbers rather than their addresses.
func show(r dnszone.Record) string {
	num := func(p *uint16) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("{%s %s %q ttl=%d prio=%s weight=%s port=%s}", r.Type, r.Name, r.Value, r.TTL, num(r.Priority), num(r.Weight), num(r.Port))
}

func showIn(in dnszone.Input) string {
	num := func(p *int64) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("{%q %q %q ttl=%s prio=%s weight=%s port=%s}", in.Type, in.Name, in.Value, num(in.TTL), num(in.Priority), num(in.Weight), num(in.Port))
}

func TestParseGood(t *testing.T) {
	long := strings.Repeat("x", dnszone.MaxTXT)
	tests := []struct {
		in   dnszone.Input
		want dnszone.Record
	}{
		// A
		{dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.1"},
			dnszone.Record{Type: "A", Name: "www.example.com", Value: "192.0.2.1", TTL: 3600}},
		{dnszone.Input{Type: "a", Name: "www", Value: " 192.0.2.1 "},
			dnszone.Record{Type: "A", Name: "www.example.com", Value: "192.0.2.1", TTL: 3600}},
		{dnszone.Input{Type: " A ", Name: "@", Value: "0.0.0.0"},
			dnszone.Record{Type: "A", Name: "example.com", Value: "0.0.0.0", TTL: 3600}},
		{dnszone.Input{Type: "A", Name: "*", Value: "192.0.2.9"},
			dnszone.Record{Type: "A", Name: "*.example.com", Value: "192.0.2.9", TTL: 3600}},
		{dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.1", TTL: i64(30)},
			dnszone.Record{Type: "A", Name: "www.example.com", Value: "192.0.2.1", TTL: 30}},
		{dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.1", TTL: i64(604800)},
			dnszone.Record{Type: "A", Name: "www.example.com", Value: "192.0.2.1", TTL: 604800}},
		// AAAA
		{dnszone.Input{Type: "AAAA", Name: "www", Value: "2001:DB8:0::1"},
			dnszone.Record{Type: "AAAA", Name: "www.example.com", Value: "2001:db8::1", TTL: 3600}},
		{dnszone.Input{Type: "aaaa", Name: "www", Value: "2001:0db8:0000:0000:0000:0000:0000:0001"},
			dnszone.Record{Type: "AAAA", Name: "www.example.com", Value: "2001:db8::1", TTL: 3600}},
		{dnszone.Input{Type: "AAAA", Name: "www", Value: "::1"},
			dnszone.Record{Type: "AAAA", Name: "www.example.com", Value: "::1", TTL: 3600}},
		// CNAME
		{dnszone.Input{Type: "CNAME", Name: "alias", Value: "Target.Example.NET."},
			dnszone.Record{Type: "CNAME", Name: "alias.example.com", Value: "target.example.net", TTL: 3600}},
		{dnszone.Input{Type: "CNAME", Name: "alias", Value: "@"},
			dnszone.Record{Type: "CNAME", Name: "alias.example.com", Value: "example.com", TTL: 3600}},
		{dnszone.Input{Type: "cname", Name: "*.wild", Value: "www.example.com"},
			dnszone.Record{Type: "CNAME", Name: "*.wild.example.com", Value: "www.example.com", TTL: 3600}},
		// MX
		{dnszone.Input{Type: "MX", Name: "@", Value: "mail.example.com"},
			dnszone.Record{Type: "MX", Name: "example.com", Value: "mail.example.com", TTL: 3600, Priority: u16(10)}},
		{dnszone.Input{Type: "MX", Name: "@", Value: "Mail.Example.com.", Priority: i64(20)},
			dnszone.Record{Type: "MX", Name: "example.com", Value: "mail.example.com", TTL: 3600, Priority: u16(20)}},
		{dnszone.Input{Type: "MX", Name: "@", Value: ".", Priority: i64(0)},
			dnszone.Record{Type: "MX", Name: "example.com", Value: ".", TTL: 3600, Priority: u16(0)}},
		{dnszone.Input{Type: "MX", Name: "@", Value: "@", Priority: i64(65535)},
			dnszone.Record{Type: "MX", Name: "example.com", Value: "example.com", TTL: 3600, Priority: u16(65535)}},
		// TXT
		{dnszone.Input{Type: "TXT", Name: "@", Value: "v=spf1 -all"},
			dnszone.Record{Type: "TXT", Name: "example.com", Value: "v=spf1 -all", TTL: 3600}},
		{dnszone.Input{Type: "TXT", Name: "_dmarc", Value: "v=DMARC1; p=none"},
			dnszone.Record{Type: "TXT", Name: "_dmarc.example.com", Value: "v=DMARC1; p=none", TTL: 3600}},
		{dnszone.Input{Type: "TXT", Name: "x", Value: `  "quoted" \back\slash  `},
			dnszone.Record{Type: "TXT", Name: "x.example.com", Value: `  "quoted" \back\slash  `, TTL: 3600}},
		{dnszone.Input{Type: "TXT", Name: "x", Value: "héllo wörld ✓"},
			dnszone.Record{Type: "TXT", Name: "x.example.com", Value: "héllo wörld ✓", TTL: 3600}},
		{dnszone.Input{Type: "TXT", Name: "x", Value: long},
			dnszone.Record{Type: "TXT", Name: "x.example.com", Value: long, TTL: 3600}},
		// NS
		{dnszone.Input{Type: "NS", Name: "@", Value: "ns1.example.net."},
			dnszone.Record{Type: "NS", Name: "example.com", Value: "ns1.example.net", TTL: 3600}},
		{dnszone.Input{Type: "NS", Name: "sub", Value: "NS.sub.example.com"},
			dnszone.Record{Type: "NS", Name: "sub.example.com", Value: "ns.sub.example.com", TTL: 3600}},
		// SRV
		{dnszone.Input{Type: "SRV", Name: "_sip._tcp", Value: "sip.example.com", Port: i64(5060)},
			dnszone.Record{Type: "SRV", Name: "_sip._tcp.example.com", Value: "sip.example.com", TTL: 3600, Priority: u16(10), Weight: u16(0), Port: u16(5060)}},
		{dnszone.Input{Type: "srv", Name: "_sip._udp", Value: "@", Priority: i64(0), Weight: i64(65535), Port: i64(0), TTL: i64(60)},
			dnszone.Record{Type: "SRV", Name: "_sip._udp.example.com", Value: "example.com", TTL: 60, Priority: u16(0), Weight: u16(65535), Port: u16(0)}},
		{dnszone.Input{Type: "SRV", Name: "_xmpp._tcp", Value: "xmpp.example.net", Priority: i64(5), Weight: i64(20), Port: i64(65535)},
			dnszone.Record{Type: "SRV", Name: "_xmpp._tcp.example.com", Value: "xmpp.example.net", TTL: 3600, Priority: u16(5), Weight: u16(20), Port: u16(65535)}},
		// CAA
		{dnszone.Input{Type: "CAA", Name: "@", Value: `0 issue "letsencrypt.org"`},
			dnszone.Record{Type: "CAA", Name: "example.com", Value: `0 issue "letsencrypt.org"`, TTL: 3600}},
		{dnszone.Input{Type: "CAA", Name: "@", Value: ` 128 ISSUEWILD letsencrypt.org `},
			dnszone.Record{Type: "CAA", Name: "example.com", Value: `128 issuewild "letsencrypt.org"`, TTL: 3600}},
		{dnszone.Input{Type: "caa", Name: "@", Value: `000 iodef "mailto:security@example.com"`},
			dnszone.Record{Type: "CAA", Name: "example.com", Value: `0 iodef "mailto:security@example.com"`, TTL: 3600}},
		{dnszone.Input{Type: "CAA", Name: "@", Value: `255 issue ";"`},
			dnszone.Record{Type: "CAA", Name: "example.com", Value: `255 issue ";"`, TTL: 3600}},
		{dnszone.Input{Type: "CAA", Name: "@", Value: `0 issue "ca.example.net; account=230123"`},
			dnszone.Record{Type: "CAA", Name: "example.com", Value: `0 issue "ca.example.net; account=230123"`, TTL: 3600}},
		{dnszone.Input{Type: "CAA", Name: "@", Value: `0 issue ""`},
			dnszone.Record{Type: "CAA", Name: "example.com", Value: `0 issue ""`, TTL: 3600}},
		{dnszone.Input{Type: "CAA", Name: "@", Value: `0 tbs123456789012 x`},
			dnszone.Record{Type: "CAA", Name: "example.com", Value: `0 tbs123456789012 "x"`, TTL: 3600}},
	}
	for _, tt := range tests {
		got, err := dnszone.Parse(zone, tt.in)
		if err != nil {
			t.Errorf("Parse(%s): got error %v, want %s", showIn(tt.in), err, show(tt.want))
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Parse(%s): got %s, want %s", showIn(tt.in), show(got), show(tt.want))
		}
	}
}

func TestParseBad(t *testing.T) {
	tests := []dnszone.Input{
		// Types.
		{Type: "PTR", Name: "x", Value: "host.example.com"},
		{Type: "SOA", Name: "@", Value: "ns1.example.com. hostmaster.example.com. 1 2 3 4 5"},
		{Type: "bogus", Name: "x", Value: "x"},
		{Type: "", Name: "x", Value: "192.0.2.1"},
		{Type: "ANY", Name: "x", Value: "192.0.2.1"},
		{Type: "DNAME", Name: "x", Value: "example.net"},
		// Names.
		{Type: "A", Name: "other.org.", Value: "192.0.2.1"},
		{Type: "A", Name: "a.*", Value: "192.0.2.1"},
		{Type: "A", Name: "a..b", Value: "192.0.2.1"},
		{Type: "NS", Name: "*", Value: "ns.example.net"},
		{Type: "NS", Name: "*.sub", Value: "ns.example.net"},
		// Empty values.
		{Type: "A", Name: "x", Value: ""},
		{Type: "A", Name: "x", Value: "   "},
		{Type: "TXT", Name: "x", Value: ""},
		{Type: "CNAME", Name: "x", Value: " "},
		// A
		{Type: "A", Name: "x", Value: "1.2.3"},
		{Type: "A", Name: "x", Value: "::1"},
		{Type: "A", Name: "x", Value: "::ffff:1.2.3.4"},
		{Type: "A", Name: "x", Value: "192.0.2.256"},
		{Type: "A", Name: "x", Value: "01.2.3.4"},
		{Type: "A", Name: "x", Value: "192.0.2.1/24"},
		{Type: "A", Name: "x", Value: "host.example.com"},
		// AAAA
		{Type: "AAAA", Name: "x", Value: "1.2.3.4"},
		{Type: "AAAA", Name: "x", Value: "::ffff:1.2.3.4"},
		{Type: "AAAA", Name: "x", Value: "fe80::1%eth0"},
		{Type: "AAAA", Name: "x", Value: "2001:db8::g"},
		{Type: "AAAA", Name: "x", Value: "2001:db8:::1"},
		// Names as values.
		{Type: "CNAME", Name: "x", Value: "bad..name"},
		{Type: "CNAME", Name: "x", Value: "-bad.example.com"},
		{Type: "CNAME", Name: "x", Value: "*.example.com"},
		{Type: "CNAME", Name: "x", Value: "."},
		{Type: "CNAME", Name: "x", Value: "exämple.com"},
		{Type: "CNAME", Name: "x", Value: strings.Repeat("a", 64) + ".com"},
		{Type: "NS", Name: "@", Value: "."},
		{Type: "NS", Name: "@", Value: "ns 1.example.net"},
		{Type: "MX", Name: "@", Value: ".."},
		{Type: "MX", Name: "@", Value: "mail..example.com"},
		{Type: "SRV", Name: "_sip._tcp", Value: "a..b", Port: i64(5060)},
		// TXT
		{Type: "TXT", Name: "x", Value: strings.Repeat("x", dnszone.MaxTXT+1)},
		{Type: "CAA", Name: "@", Value: `0 issue "` + strings.Repeat("6", dnszone.MaxCAA+1) + `"`},
		{Type: "TXT", Name: "x", Value: "a\nb"},
		{Type: "TXT", Name: "x", Value: "a\rb"},
		{Type: "TXT", Name: "x", Value: "a\tb"},
		{Type: "TXT", Name: "x", Value: "a\x00b"},
		{Type: "TXT", Name: "x", Value: "a\x7fb"},
		{Type: "TXT", Name: "x", Value: "a\xffb"},
		// CAA
		{Type: "CAA", Name: "@", Value: "issue letsencrypt.org"},
		{Type: "CAA", Name: "@", Value: `256 issue "x"`},
		{Type: "CAA", Name: "@", Value: `-1 issue "x"`},
		{Type: "CAA", Name: "@", Value: `+1 issue "x"`},
		{Type: "CAA", Name: "@", Value: `x issue "x"`},
		{Type: "CAA", Name: "@", Value: `0 is-sue "x"`},
		{Type: "CAA", Name: "@", Value: `0 is_sue "x"`},
		{Type: "CAA", Name: "@", Value: `0  issue "x"`},
		{Type: "CAA", Name: "@", Value: `0 abcdefghijklmnop "x"`},
		{Type: "CAA", Name: "@", Value: `0 issue`},
		{Type: "CAA", Name: "@", Value: `0`},
		{Type: "CAA", Name: "@", Value: `0 issue "a"b"`},
		{Type: "CAA", Name: "@", Value: `0 issue "a\b"`},
		{Type: "CAA", Name: "@", Value: `0 issue "x`},
		{Type: "CAA", Name: "@", Value: `0 issue "`},
		{Type: "CAA", Name: "@", Value: "0 issue \"é\""},
		{Type: "CAA", Name: "@", Value: "0 issue \"a\tb\""},
		// TTL
		{Type: "A", Name: "x", Value: "192.0.2.1", TTL: i64(29)},
		{Type: "A", Name: "x", Value: "192.0.2.1", TTL: i64(604801)},
		{Type: "A", Name: "x", Value: "192.0.2.1", TTL: i64(0)},
		{Type: "A", Name: "x", Value: "192.0.2.1", TTL: i64(-1)},
		{Type: "A", Name: "x", Value: "192.0.2.1", TTL: i64(1 << 32)},
		// Priority, weight and port.
		{Type: "MX", Name: "@", Value: "mail.example.com", Weight: i64(1)},
		{Type: "MX", Name: "@", Value: "mail.example.com", Port: i64(25)},
		{Type: "MX", Name: "@", Value: "mail.example.com", Priority: i64(65536)},
		{Type: "MX", Name: "@", Value: "mail.example.com", Priority: i64(-1)},
		{Type: "SRV", Name: "_sip._tcp", Value: "sip.example.com"},
		{Type: "SRV", Name: "_sip._tcp", Value: "sip.example.com", Priority: i64(1), Weight: i64(1)},
		{Type: "SRV", Name: "_sip._tcp", Value: "sip.example.com", Port: i64(65536)},
		{Type: "SRV", Name: "_sip._tcp", Value: "sip.example.com", Port: i64(-1)},
		{Type: "SRV", Name: "_sip._tcp", Value: "sip.example.com", Port: i64(1), Weight: i64(65536)},
		{Type: "SRV", Name: "_sip._tcp", Value: "sip.example.com", Port: i64(1), Priority: i64(-1)},
		{Type: "A", Name: "x", Value: "192.0.2.1", Priority: i64(10)},
		{Type: "A", Name: "x", Value: "192.0.2.1", Weight: i64(0)},
		{Type: "AAAA", Name: "x", Value: "2001:db8::1", Port: i64(80)},
		{Type: "CNAME", Name: "x", Value: "www.example.com", Priority: i64(10)},
		{Type: "TXT", Name: "x", Value: "hello", Port: i64(80)},
		{Type: "NS", Name: "sub", Value: "ns.example.net", Priority: i64(1)},
		{Type: "CAA", Name: "@", Value: `0 issue "x"`, Weight: i64(1)},
	}
	for _, in := range tests {
		got, err := dnszone.Parse(zone, in)
		if err == nil {
			t.Errorf("Parse(%s): got %s, want an error", showIn(in), show(got))
			continue
		}
		if !errors.Is(err, dnszone.ErrInvalid) {
			t.Errorf("Parse(%s): error %v does not wrap ErrInvalid", showIn(in), err)
		}
		if !reflect.DeepEqual(got, dnszone.Record{}) {
			t.Errorf("Parse(%s): got %s beside the error, want the zero Record", showIn(in), show(got))
		}
	}
}

// TestParseSupportedTypes checks that every type in Types parses and that
// its RR has that type.
func TestParseSupportedTypes(t *testing.T) {
	good := map[string]dnszone.Input{
		"A":     {Value: "192.0.2.1"},
		"AAAA":  {Value: "2001:db8::1"},
		"CNAME": {Value: "www.example.net"},
		"MX":    {Value: "mail.example.net"},
		"TXT":   {Value: "hello"},
		"NS":    {Value: "ns.example.net"},
		"SRV":   {Value: "sip.example.net", Port: i64(5060)},
		"CAA":   {Value: `0 issue "letsencrypt.org"`},
	}
	if len(good) != len(dnszone.Types) {
		t.Fatalf("Types: got %v, want the %d types of this test", dnszone.Types, len(good))
	}
	for _, typ := range dnszone.Types {
		in, ok := good[typ]
		if !ok {
			t.Errorf("Types has %s, which this test does not know", typ)
			continue
		}
		in.Type, in.Name = strings.ToLower(typ), "x"
		r, err := dnszone.Parse(zone, in)
		if err != nil {
			t.Errorf("Parse(%s): got error %v, want a record", showIn(in), err)
			continue
		}
		if got, want := r.RR().Header().Rrtype, dns.StringToType[typ]; got != want {
			t.Errorf("Parse(%s).RR() type: got %d, want %d", showIn(in), got, want)
		}
	}
}

func mustParse(t testing.TB, in dnszone.Input) dnszone.Record {
	t.Helper()
	r, err := dnszone.Parse(zone, in)
	if err != nil {
		t.Fatalf("Parse(%s): %v", showIn(in), err)
	}
	return r
}

func TestRR(t *testing.T) {
	tests := []struct {
		in   dnszone.Input
		want string // in zone-file form
	}{
		{dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.1", TTL: i64(300)}, "www.example.com. 300 IN A 192.0.2.1"},
		{dnszone.Input{Type: "AAAA", Name: "www", Value: "2001:db8::1"}, "www.example.com. 3600 IN AAAA 2001:db8::1"},
		{dnszone.Input{Type: "CNAME", Name: "alias", Value: "www.example.com"}, "alias.example.com. 3600 IN CNAME www.example.com."},
		{dnszone.Input{Type: "NS", Name: "@", Value: "ns1.example.net"}, "example.com. 3600 IN NS ns1.example.net."},
		{dnszone.Input{Type: "MX", Name: "@", Value: "mail.example.com", Priority: i64(20)}, "example.com. 3600 IN MX 20 mail.example.com."},
		{dnszone.Input{Type: "MX", Name: "@", Value: ".", Priority: i64(0)}, "example.com. 3600 IN MX 0 ."},
		{dnszone.Input{Type: "SRV", Name: "_sip._tcp", Value: "sip.example.com", Priority: i64(1), Weight: i64(2), Port: i64(5060)}, "_sip._tcp.example.com. 3600 IN SRV 1 2 5060 sip.example.com."},
		{dnszone.Input{Type: "TXT", Name: "@", Value: "v=spf1 -all"}, `example.com. 3600 IN TXT "v=spf1 -all"`},
		{dnszone.Input{Type: "TXT", Name: "@", Value: `say "hi" \o/`}, `example.com. 3600 IN TXT "say \"hi\" \\o/"`},
		{dnszone.Input{Type: "CAA", Name: "@", Value: `128 issue "letsencrypt.org"`}, `example.com. 3600 IN CAA 128 issue "letsencrypt.org"`},
		{dnszone.Input{Type: "CAA", Name: "@", Value: `0 iodef "mailto:a@example.com"`}, `example.com. 3600 IN CAA 0 iodef "mailto:a@example.com"`},
		{dnszone.Input{Type: "A", Name: "*.wild", Value: "192.0.2.9"}, "*.wild.example.com. 3600 IN A 192.0.2.9"},
	}
	for _, tt := range tests {
		r := mustParse(t, tt.in)
		want, err := dns.NewRR(tt.want)
		if err != nil {
			t.Fatalf("dns.NewRR(%q): %v", tt.want, err)
		}
		got := r.RR()
		if !dns.IsDuplicate(got, want) || got.Header().Ttl != want.Header().Ttl {
			t.Errorf("Parse(%s).RR(): got %q, want %q", showIn(tt.in), got, want)
		}
		if _, err := packRR(got); err != nil {
			t.Errorf("Parse(%s).RR(): packing %q: %v", showIn(tt.in), got, err)
		}
	}
}

// packRR packs rr in a reply and unpacks it again.
func packRR(rr dns.RR) (dns.RR, error) {
	m := new(dns.Msg)
	m.SetQuestion(rr.Header().Name, rr.Header().Rrtype)
	m.Response = true
	m.Answer = []dns.RR{rr}
	wire, err := m.Pack()
	if err != nil {
		return nil, err
	}
	back := new(dns.Msg)
	if err := back.Unpack(wire); err != nil {
		return nil, fmt.Errorf("unpacking: %w", err)
	}
	if len(back.Answer) != 1 {
		return nil, fmt.Errorf("unpacking: %d answers, want 1", len(back.Answer))
	}
	return back.Answer[0], nil
}

// unescape undoes miekg/dns's presentation form of a character-string:
// \DDD is a byte, \X is X.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i+2 < len(s) && isDigit(s[i]) && isDigit(s[i+1]) && isDigit(s[i+2]) {
			b.WriteByte((s[i]-'0')*100 + (s[i+1]-'0')*10 + s[i+2] - '0')
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// wireValue is the value a client reads from rr after a trip on the wire:
// for a TXT, its character-strings joined; for a CAA, its value.
func wireValue(rr dns.RR) string {
	switch v := rr.(type) {
	case *dns.TXT:
		var b strings.Builder
		for _, s := range v.Txt {
			b.WriteString(unescape(s))
		}
		return b.String()
	case *dns.CAA:
		return fmt.Sprintf("%d %s %q", v.Flag, v.Tag, unescape(v.Value))
	}
	return ""
}

// TestRRWire sends TXT and CAA records over the wire and back: a client
// reads the value it wrote, whatever its length and characters.
func TestRRWire(t *testing.T) {
	values := []dnszone.Input{
		{Type: "TXT", Value: "v=spf1 -all"},
		{Type: "TXT", Value: `back\slash and "quotes" and \065 digits`},
		{Type: "TXT", Value: strings.Repeat("a", 255)},
		{Type: "TXT", Value: strings.Repeat("b", 256)},
		{Type: "TXT", Value: strings.Repeat("c", 510)},
		{Type: "TXT", Value: strings.Repeat(`"`, dnszone.MaxTXT)},
		{Type: "TXT", Value: strings.Repeat(`\`, dnszone.MaxTXT)},
		{Type: "TXT", Value: strings.Repeat("é", dnszone.MaxTXT/2)},
		{Type: "TXT", Value: strings.Repeat("x", 254) + "é" + strings.Repeat("y", 300)}, // é across the 255-byte cut
		{Type: "TXT", Value: " leading and trailing "},
		{Type: "CAA", Value: `0 issue "letsencrypt.org; validationmethods=dns-01"`},
		{Type: "CAA", Value: `0 iodef "mailto:a@example.com"`},
		{Type: "CAA", Value: `0 issue ""`},
		{Type: "CAA", Value: `0 issue "` + strings.Repeat("6", dnszone.MaxCAA) + `"`},
	}
	for _, in := range values {
		in.Name = "x"
		r := mustParse(t, in)
		back, err := packRR(r.RR())
		if err != nil {
			t.Errorf("Parse(%s).RR(): %v", showIn(in), err)
			continue
		}
		if got := wireValue(back); got != r.Value {
			t.Errorf("Parse(%s).RR() on the wire: got %q, want %q", showIn(in), got, r.Value)
		}
		if txt, ok := r.RR().(*dns.TXT); ok {
			for i, s := range txt.Txt {
				if n := len(unescape(s)); n == 0 || n > 255 {
					t.Errorf("Parse(%s).RR(): string %d is %d bytes, want 1 to 255", showIn(in), i, n)
				}
			}
		}
	}
}

func TestSame(t *testing.T) {
	a := mustParse(t, dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.1"})
	a2 := mustParse(t, dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.1", TTL: i64(60)})
	a2.ID = "other"
	b := mustParse(t, dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.2"})
	c := mustParse(t, dnszone.Input{Type: "A", Name: "web", Value: "192.0.2.1"})
	mx10 := mustParse(t, dnszone.Input{Type: "MX", Name: "@", Value: "mail.example.com"})
	mx20 := mustParse(t, dnszone.Input{Type: "MX", Name: "@", Value: "mail.example.com", Priority: i64(20)})
	srv1 := mustParse(t, dnszone.Input{Type: "SRV", Name: "_s._tcp", Value: "h.example.com", Port: i64(1)})
	srv2 := mustParse(t, dnszone.Input{Type: "SRV", Name: "_s._tcp", Value: "h.example.com", Port: i64(2)})
	srvW := mustParse(t, dnszone.Input{Type: "SRV", Name: "_s._tcp", Value: "h.example.com", Port: i64(1), Weight: i64(5)})
	ns := mustParse(t, dnszone.Input{Type: "NS", Name: "www", Value: "h.example.com"})
	cn := mustParse(t, dnszone.Input{Type: "CNAME", Name: "www", Value: "h.example.com"})
	tests := []struct {
		a, b dnszone.Record
		want bool
	}{
		{a, a, true},
		{a, a2, true}, // TTL and ID aside
		{a, b, false},
		{a, c, false},
		{mx10, mx10, true},
		{mx10, mx20, false},
		{srv1, srv2, false},
		{srv1, srvW, false},
		{ns, cn, false},
	}
	for _, tt := range tests {
		if got := dnszone.Same(tt.a, tt.b); got != tt.want {
			t.Errorf("Same(%s, %s): got %v, want %v", show(tt.a), show(tt.b), got, tt.want)
		}
		if got := dnszone.Same(tt.b, tt.a); got != tt.want {
			t.Errorf("Same(%s, %s): got %v, want %v", show(tt.b), show(tt.a), got, tt.want)
		}
	}
}

// TestSameTXTCase: TXT data is compared byte for byte (RFC 4343 makes
// only names case-insensitive), so two TXT records that differ in case are
// two records.
func TestSameTXTCase(t *testing.T) {
	upper := mustParse(t, dnszone.Input{Type: "TXT", Name: "@", Value: "token=ABC"})
	lower := mustParse(t, dnszone.Input{Type: "TXT", Name: "@", Value: "token=abc"})
	if dnszone.Same(upper, lower) {
		t.Errorf("Same(%s, %s): got true, want false", show(upper), show(lower))
	}
}

func TestRRAddresses(t *testing.T) {
	a := mustParse(t, dnszone.Input{Type: "A", Name: "x", Value: "192.0.2.1"}).RR().(*dns.A)
	if len(a.A) != net.IPv4len || !a.A.Equal(net.ParseIP("192.0.2.1")) {
		t.Errorf("A RR: got %v (%d bytes), want 192.0.2.1 in 4 bytes", a.A, len(a.A))
	}
	aaaa := mustParse(t, dnszone.Input{Type: "AAAA", Name: "x", Value: "2001:db8::1"}).RR().(*dns.AAAA)
	if len(aaaa.AAAA) != net.IPv6len || !aaaa.AAAA.Equal(net.ParseIP("2001:db8::1")) {
		t.Errorf("AAAA RR: got %v (%d bytes), want 2001:db8::1 in 16 bytes", aaaa.AAAA, len(aaaa.AAAA))
	}
}
