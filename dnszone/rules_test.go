package dnszone_test

import (
	"errors"
	"testing"

	"github.com/latticenet/lattice/dnszone"
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
