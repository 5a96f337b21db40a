package dnszone_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// longName returns a name of exactly n characters made of labels of at
// most 63 characters, ending in ".com".
func longName(n int) string {
	var labels []string
	left := n - len(".com")
	for left > 0 {
		l := min(left, 63)
		if left-l == 1 {
			l-- // the next label needs its dot and at least one character
		}
		labels = append(labels, strings.Repeat("a", l))
		left -= l + 1 // the label and its dot
	}
	return strings.Join(labels, ".") + ".com"
}

func TestLongNameHelper(t *testing.T) {
	for _, n := range []int{20, 63, 64, 65, 200, 253, 254} {
		if got := len(longName(n)); got != n {
			t.Errorf("len(longName(%d)): got %d, want %d", n, got, n)
		}
	}
}

func TestZoneName(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" for a refusal
	}{
		{"example.com", "example.com"},
		{"Example.COM.", "example.com"},
		{"EXAMPLE.com", "example.com"},
		{"sub.example.co.uk", "sub.example.co.uk"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"a-b.example.com", "a-b.example.com"},
		{"0.example.com", "0.example.com"},
		{"1example.com", "1example.com"},
		{strings.Repeat("a", 63) + ".com", strings.Repeat("a", 63) + ".com"},
		{longName(253), longName(253)},
		{longName(253) + ".", longName(253)},

		{"com", ""},
		{"com.", ""},
		{"", ""},
		{".", ""},
		{"..", ""},
		{"a..b", ""},
		{".example.com", ""},
		{"example.com..", ""},
		{"-a.com", ""},
		{"a-.com", ""},
		{"example.-com", ""},
		{strings.Repeat("a", 64) + ".com", ""},
		{longName(254), ""},
		{"*.example.com", ""},
		{"example.*", ""},
		{"_x.example.com", ""},
		{"a_b.example.com", ""},
		{"exämple.com", ""},
		{"пример.рф", ""},
		{"example.com\x00", ""},
		{"\xff.com", ""},
		{"exa mple.com", ""},
		{" example.com", ""},
		{"example.com/x", ""},
		{"@", ""},
	}
	for _, tt := range tests {
		got, err := dnszone.ZoneName(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("ZoneName(%q): got %q, want an error", tt.in, got)
			} else if !errors.Is(err, dnszone.ErrInvalid) {
				t.Errorf("ZoneName(%q): error %v does not wrap ErrInvalid", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ZoneName(%q): got %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestZoneNameKelvin documents that a non-ASCII character whose lower case
// is ASCII slips through: strings.ToLower turns the Kelvin sign (U+212A)
// into "k" before the labels are checked.
func TestZoneNameKelvin(t *testing.T) {
	for _, in := range []string{"\u212Aexample.com", "example.\u212Aom"} {
		if got, err := dnszone.ZoneName(in); err == nil {
			t.Errorf("ZoneName(%q): got %q, want an error (non-ASCII)", in, got)
		}
	}
	if got, err := dnszone.OwnerName("example.com", "\u212A"); err == nil {
		t.Errorf("OwnerName(example.com, %q): got %q, want an error (non-ASCII)", "\u212A", got)
	}
	in := dnszone.Input{Type: "CNAME", Name: "x", Value: "\u212A.example.net"}
	if got, err := dnszone.Parse("example.com", in); err == nil {
		t.Errorf("Parse(%s): got %s, want an error (non-ASCII)", showIn(in), show(got))
	}
}

func TestOwnerName(t *testing.T) {
	const zone = "example.com"
	tests := []struct {
		in   string
		want string // "" for a refusal
	}{
		{"@", zone},
		{"", zone},
		{"  ", zone},
		{" @ ", zone},
		{"example.com", zone},
		{"example.com.", zone},
		{"EXAMPLE.COM.", zone},
		{"www", "www.example.com"},
		{"WWW", "www.example.com"},
		{" www ", "www.example.com"},
		{"www.example.com", "www.example.com"},
		{"www.example.com.", "www.example.com"},
		{"WWW.Example.Com.", "www.example.com"},
		{"a.b.c", "a.b.c.example.com"},
		{"myexample.com", "myexample.com.example.com"}, // no dot before the zone: relative
		{"www.other.org", "www.other.org.example.com"}, // relative without a final dot
		{"_dmarc", "_dmarc.example.com"},
		{"_sip._tcp", "_sip._tcp.example.com"},
		{"_acme-challenge.www", "_acme-challenge.www.example.com"},
		{"a_b", "a_b.example.com"},
		{"*", "*.example.com"},
		{"*.sub", "*.sub.example.com"},
		{"*.example.com.", "*.example.com"},
		{"0", "0.example.com"},
		{strings.Repeat("a", 63), strings.Repeat("a", 63) + ".example.com"},
		{strings.Repeat("a.", 120) + "b", strings.Repeat("a.", 120) + "b.example.com"}, // 253 characters

		{"other.org.", ""},
		{"example.com.org.", ""},
		{"xexample.com.", ""},
		{"com.", ""},
		{".", ""},
		{"a.*", ""},
		{"*.*", ""},
		{"*a", ""},
		{"a*", ""},
		{"a..b", ""},
		{".www", ""},
		{"www..", ""},
		{"-www", ""},
		{"www-", ""},
		{"_", ""},
		{"_-a", ""},
		{"ww w", ""},
		{"wwé", ""},
		{"\xff", ""},
		{"a/b", ""},
		{strings.Repeat("a", 64), ""},
		{strings.Repeat("a.", 120) + "bb", ""}, // 254 characters
	}
	for _, tt := range tests {
		got, err := dnszone.OwnerName(zone, tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("OwnerName(%q, %q): got %q, want an error", zone, tt.in, got)
			} else if !errors.Is(err, dnszone.ErrInvalid) {
				t.Errorf("OwnerName(%q, %q): error %v does not wrap ErrInvalid", zone, tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("OwnerName(%q, %q): got %q, %v, want %q", zone, tt.in, got, err, tt.want)
		}
	}
}

func TestInZone(t *testing.T) {
	tests := []struct {
		zone, name string
		want       bool
	}{
		{"example.com", "example.com", true},
		{"example.com", "www.example.com", true},
		{"example.com", "a.b.example.com", true},
		{"example.com", "*.example.com", true},
		{"example.com", "xexample.com", false},
		{"example.com", "example.org", false},
		{"example.com", "com", false},
		{"example.com", "example.com.org", false},
		{"example.com", "", false},
	}
	for _, tt := range tests {
		if got := dnszone.InZone(tt.zone, tt.name); got != tt.want {
			t.Errorf("InZone(%q, %q): got %v, want %v", tt.zone, tt.name, got, tt.want)
		}
	}
}

func TestRelative(t *testing.T) {
	tests := []struct {
		zone, name, want string
	}{
		{"example.com", "example.com", "@"},
		{"example.com", "www.example.com", "www"},
		{"example.com", "_sip._tcp.example.com", "_sip._tcp"},
		{"example.com", "*.example.com", "*"},
		{"example.com", "a.b.example.com", "a.b"},
	}
	for _, tt := range tests {
		if got := dnszone.Relative(tt.zone, tt.name); got != tt.want {
			t.Errorf("Relative(%q, %q): got %q, want %q", tt.zone, tt.name, got, tt.want)
		}
		// Relative and OwnerName are inverse.
		if back, err := dnszone.OwnerName(tt.zone, dnszone.Relative(tt.zone, tt.name)); err != nil || back != tt.name {
			t.Errorf("OwnerName(%q, Relative(%q)): got %q, %v, want %q", tt.zone, tt.name, back, err, tt.name)
		}
	}
}

// TestRelativeAmbiguous: a name whose part below the zone ends in the
// zone's name (www.example.com.example.com) has a Relative form that
// OwnerName reads as absolute, so the two are not inverse there.
func TestRelativeAmbiguous(t *testing.T) {
	tests := []struct{ zone, name string }{
		{"example.com", "www.example.com.example.com"},
		{"example.com", "example.com.example.com"},
		{"0.0", "0.0.0.0.0"},
	}
	for _, tt := range tests {
		if _, err := dnszone.OwnerName(tt.zone, tt.name); err != nil {
			t.Fatalf("OwnerName(%q, %q): %v", tt.zone, tt.name, err)
		}
		rel := dnszone.Relative(tt.zone, tt.name)
		if back, err := dnszone.OwnerName(tt.zone, rel); err != nil || back != tt.name {
			t.Errorf("OwnerName(%q, Relative(%q) = %q): got %q, %v, want %q", tt.zone, tt.name, rel, back, err, tt.name)
		}
	}
}
