package dnszone_test

import (
	"errors"
	"testing"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

func TestLowerASCII(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"WWW.Example.COM.", "www.example.com."},
		{"www.example.com.", "www.example.com."},
		{"\u212A.example.com.", "\u212A.example.com."}, // the Kelvin sign is not K
		{"", ""},
	} {
		if got := dnszone.LowerASCII(tt.in); got != tt.want {
			t.Errorf("LowerASCII(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestTargetsAndNullRecords: service names as CNAME targets, "." as the
// SRV target, and a null MX standing alone.
func TestTargetsAndNullRecords(t *testing.T) {
	const zone = "example.com"
	parse := func(typ, name, value string) (dnszone.Record, error) {
		in := dnszone.Input{Type: typ, Name: name, Value: value}
		if typ == "SRV" {
			port := int64(443)
			in.Port = &port
		}
		return dnszone.Parse(zone, in)
	}
	for _, tt := range []struct {
		typ, name, value string
		ok               bool
	}{
		{"CNAME", "_acme-challenge", "_acme-challenge.auth.example.net", true},
		{"CNAME", "sel._domainkey", "sel._domainkey.mail.example.net", true},
		{"CNAME", "x", "*.example.net", false},
		{"MX", "@", "_mx.example.net", false}, // a server's name is a host name
		{"SRV", "_imap._tcp", ".", true},
		{"NS", "sub", ".", false},
		{"CAA", "@", "0 \u212Aissue \"ca.example\"", false},
	} {
		_, err := parse(tt.typ, tt.name, tt.value)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, dnszone.ErrInvalid) {
			t.Errorf("Parse(%s %s %q): got %v, want ok=%v", tt.typ, tt.name, tt.value, err, tt.ok)
		}
	}
	null, err := parse("MX", "@", ".")
	if err != nil {
		t.Fatal(err)
	}
	mail, err := parse("MX", "@", "mail.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if err := dnszone.Check(zone, []dnszone.Record{mail}, null); !errors.Is(err, dnszone.ErrInvalid) {
		t.Errorf("a null MX beside an MX: got %v, want refused", err)
	}
	if err := dnszone.Check(zone, []dnszone.Record{null}, mail); !errors.Is(err, dnszone.ErrInvalid) {
		t.Errorf("an MX beside a null MX: got %v, want refused", err)
	}
	other, _ := parse("MX", "sub", "mail.example.com")
	if err := dnszone.Check(zone, []dnszone.Record{null}, other); err != nil {
		t.Errorf("an MX at another name than a null MX: got %v, want allowed", err)
	}
}

func TestTargetsNeedFullNames(t *testing.T) {
	for _, tt := range []struct{ typ, value string }{{"CNAME", "www"}, {"MX", "mail"}, {"NS", "ns1"}, {"SRV", "sip"}} {
		in := dnszone.Input{Type: tt.typ, Name: "x", Value: tt.value}
		if tt.typ == "SRV" {
			port := int64(5060)
			in.Port = &port
		}
		if _, err := dnszone.Parse("example.com", in); !errors.Is(err, dnszone.ErrInvalid) {
			t.Errorf("%s %q: got %v, want refused (one label)", tt.typ, tt.value, err)
		}
	}
}

func TestCNAMELoops(t *testing.T) {
	self, err := dnszone.Parse("example.com", dnszone.Input{Type: "CNAME", Name: "loop", Value: "loop.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if err := dnszone.Check("example.com", nil, self); !errors.Is(err, dnszone.ErrInvalid) {
		t.Errorf("a CNAME to itself: got %v, want refused", err)
	}
	// A loop of two is a loop a zone may pass through while it is being
	// edited; the answer follows it once and stops, with no repeats.
	a, _ := dnszone.Parse("example.com", dnszone.Input{Type: "CNAME", Name: "a", Value: "b.example.com"})
	b, _ := dnszone.Parse("example.com", dnszone.Input{Type: "CNAME", Name: "b", Value: "a.example.com"})
	resp := dnszone.Build("example.com", 1, []dnszone.Record{a, b}).Answer("a.example.com.", dns.TypeA)
	if len(resp.Answer) != 2 {
		t.Errorf("a loop of two: %d records in the answer, want the two CNAMEs once each: %v", len(resp.Answer), resp.Answer)
	}
}

func TestDSAtADelegationIsTheParents(t *testing.T) {
	ns, _ := dnszone.Parse("example.com", dnszone.Input{Type: "NS", Name: "sub", Value: "ns.example.net"})
	apexNS, _ := dnszone.Parse("example.com", dnszone.Input{Type: "NS", Name: "@", Value: "ns1.example.net"})
	snap := dnszone.Build("example.com", 1, []dnszone.Record{ns, apexNS})
	resp := snap.Answer("sub.example.com.", dns.TypeDS)
	if !resp.Authoritative || len(resp.Answer) != 0 || len(resp.Ns) != 1 || resp.Ns[0].Header().Rrtype != dns.TypeSOA {
		t.Errorf("DS at the cut: got %+v, want an authoritative NODATA with the SOA", resp)
	}
	if resp := snap.Answer("x.sub.example.com.", dns.TypeDS); resp.Authoritative || len(resp.Ns) != 1 || resp.Ns[0].Header().Rrtype != dns.TypeNS {
		t.Errorf("DS below the cut: got %+v, want a referral", resp)
	}
}
