package dnszone_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// Bits of FuzzParse's set argument: which of the optional numbers are
// given.
const (
	setTTL = 1 << iota
	setPriority
	setWeight
	setPort
)

func FuzzParse(f *testing.F) {
	seeds := []struct {
		typ, name, value    string
		set                 uint8
		ttl, prio, wt, port int64
	}{
		{"A", "www", "192.0.2.1", 0, 0, 0, 0, 0},
		{"a", "@", " 10.0.0.1 ", setTTL, 30, 0, 0, 0},
		{"A", "x", "1.2.3", 0, 0, 0, 0, 0},
		{"AAAA", "www", "2001:DB8:0::1", setTTL, 604800, 0, 0, 0},
		{"AAAA", "www", "::ffff:1.2.3.4", 0, 0, 0, 0, 0},
		{"CNAME", "alias", "Target.Example.NET.", 0, 0, 0, 0, 0},
		{"CNAME", "*.wild", "@", 0, 0, 0, 0, 0},
		{"MX", "@", "mail.example.com", setPriority, 0, 20, 0, 0},
		{"MX", "@", ".", 0, 0, 0, 0, 0},
		{"TXT", "_dmarc", "v=DMARC1; p=none", 0, 0, 0, 0, 0},
		{"TXT", "x", `"quoted" \ back\slash \065 é`, 0, 0, 0, 0, 0},
		{"TXT", "x", strings.Repeat("\\\"é", 300), 0, 0, 0, 0, 0},
		{"NS", "sub", "ns.sub.example.com.", 0, 0, 0, 0, 0},
		{"NS", "*", "ns.example.net", 0, 0, 0, 0, 0},
		{"SRV", "_sip._tcp", "sip.example.com", setPort, 0, 0, 0, 5060},
		{"SRV", "_sip._tcp", "@", setPriority | setWeight | setPort | setTTL, 60, 1, 2, 65535},
		{"CAA", "@", `0 issue "letsencrypt.org"`, 0, 0, 0, 0, 0},
		{"CAA", "@", `128 ISSUEWILD ;`, 0, 0, 0, 0, 0},
		{"CAA", "@", `0 iodef "mailto:a@example.com"`, 0, 0, 0, 0, 0},
		{"CAA", "@", `0 issue ""`, 0, 0, 0, 0, 0},
		{"PTR", "x", "host.example.com", 0, 0, 0, 0, 0},
		{"A", "other.org.", "192.0.2.1", setPriority, 0, 10, 0, 0},
	}
	for _, s := range seeds {
		f.Add(s.typ, s.name, s.value, s.set, s.ttl, s.prio, s.wt, s.port)
	}
	f.Fuzz(func(t *testing.T, typ, name, value string, set uint8, ttl, prio, wt, port int64) {
		in := dnszone.Input{Type: typ, Name: name, Value: value}
		if set&setTTL != 0 {
			in.TTL = &ttl
		}
		if set&setPriority != 0 {
			in.Priority = &prio
		}
		if set&setWeight != 0 {
			in.Weight = &wt
		}
		if set&setPort != 0 {
			in.Port = &port
		}
		r, err := dnszone.Parse(zone, in)
		if err != nil {
			if r != (dnszone.Record{}) {
				t.Fatalf("Parse(%s): got %s beside error %v, want the zero Record", showIn(in), show(r), err)
			}
			return
		}
		checkRecord(t, in, r)

		// Idempotent: the canonical record parses to itself.
		again := dnszone.Input{Type: r.Type, Name: r.Name, Value: r.Value, TTL: ttl64(r.TTL)}
		again.Priority, again.Weight, again.Port = to64(r.Priority), to64(r.Weight), to64(r.Port)
		r2, err := dnszone.Parse(zone, again)
		if err != nil {
			t.Fatalf("Parse(%s) = %s; Parse again: %v", showIn(in), show(r), err)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("Parse(%s) = %s; Parse again: got %s, want the same", showIn(in), show(r), show(r2))
		}
		if !dnszone.Same(r, r2) {
			t.Fatalf("Same(%s, %s): got false, want true", show(r), show(r2))
		}

		// The RR packs, and reads back as the record.
		rr := r.RR()
		if rr == nil {
			t.Fatalf("Parse(%s).RR(): got nil", showIn(in))
		}
		back, err := packRR(rr)
		if err != nil {
			t.Fatalf("Parse(%s).RR() = %q: %v", showIn(in), rr, err)
		}
		switch r.Type {
		case "TXT", "CAA":
			// miekg/dns keeps these in presentation form, which the
			// wire changes (é comes back as \195\169): compare values.
			if got := wireValue(back); got != r.Value {
				t.Fatalf("Parse(%s).RR() on the wire: got value %q, want %q", showIn(in), got, r.Value)
			}
		default:
			if !dns.IsDuplicate(rr, back) {
				t.Fatalf("Parse(%s).RR() = %q: got %q back from the wire", showIn(in), rr, back)
			}
		}
		// Build and answer for it.
		s := dnszone.Build(zone, 1, []dnszone.Record{r})
		resp := s.Answer(dns.Fqdn(r.Name), rr.Header().Rrtype)
		if r.Type == "NS" && r.Name != zone {
			if resp.Authoritative || len(resp.Ns) != 1 {
				t.Fatalf("Answer(%s NS) of a delegation: got %+v, want a referral", r.Name, resp)
			}
		} else if len(resp.Answer) != 1 || !dns.IsDuplicate(resp.Answer[0], rr) {
			t.Fatalf("Answer(%s %s): got %v, want %q", r.Name, r.Type, resp.Answer, rr)
		}
	})
}

// ttl64 is a TTL as the *int64 an Input takes.
func ttl64(n uint32) *int64 { v := int64(n); return &v }

// to64 passes *int64 through and turns *uint16 into *int64.
func to64[T uint16 | int64](p *T) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}

// checkRecord checks what every parsed record is.
func checkRecord(t *testing.T, in dnszone.Input, r dnszone.Record) {
	t.Helper()
	known := false
	for _, typ := range dnszone.Types {
		known = known || typ == r.Type
	}
	if !known {
		t.Fatalf("Parse(%s): type %q is not in Types", showIn(in), r.Type)
	}
	if !dnszone.InZone(zone, r.Name) {
		t.Fatalf("Parse(%s): name %q is outside %s", showIn(in), r.Name, zone)
	}
	checkHostname(t, "Parse("+showIn(in)+") name", r.Name, true)
	if r.TTL < dnszone.MinTTL || r.TTL > dnszone.MaxTTL {
		t.Fatalf("Parse(%s): ttl %d is outside %d to %d", showIn(in), r.TTL, dnszone.MinTTL, dnszone.MaxTTL)
	}
	hasPrio, hasWeight := r.Type == "MX" || r.Type == "SRV", r.Type == "SRV"
	if (r.Priority != nil) != hasPrio || (r.Weight != nil) != hasWeight || (r.Port != nil) != hasWeight {
		t.Fatalf("Parse(%s): got %s, want priority for MX and SRV only, weight and port for SRV only", showIn(in), show(r))
	}
	switch r.Type {
	case "CNAME", "NS", "MX", "SRV":
		if (r.Type != "MX" && r.Type != "SRV") || r.Value != "." { // "." is a null MX, or a service not offered
			checkHostname(t, "Parse("+showIn(in)+") value", r.Value, r.Type == "CNAME") // a CNAME may point at a service name (_acme-challenge)
		}
	case "TXT":
		if len(r.Value) == 0 || len(r.Value) > dnszone.MaxTXT || !utf8.ValidString(r.Value) {
			t.Fatalf("Parse(%s): TXT value of %d bytes, want 1 to %d bytes of UTF-8", showIn(in), len(r.Value), dnszone.MaxTXT)
		}
	}
}

// checkHostname checks that name is canonical: lower-case ASCII letters,
// digits and hyphens in labels of 1 to 63 characters, no final dot, at
// most 253 characters; with owner, labels may begin with "_" and hold "_"
// and the first may be "*".
func checkHostname(t *testing.T, what, name string, owner bool) {
	t.Helper()
	if name == "" || len(name) > 253 || strings.HasSuffix(name, ".") {
		t.Fatalf("%s: %q is not a name of 1 to 253 characters without a final dot", what, name)
	}
	for i, label := range strings.Split(name, ".") {
		if label == "*" && owner && i == 0 {
			continue
		}
		if label == "" || len(label) > 63 {
			t.Fatalf("%s: %q has a label of %d characters", what, name, len(label))
		}
		body := label
		if owner {
			body = strings.TrimPrefix(label, "_")
		}
		if body == "" || body[0] == '-' || body[len(body)-1] == '-' {
			t.Fatalf("%s: %q has the label %q", what, name, label)
		}
		for _, c := range body {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || owner && c == '_') {
				t.Fatalf("%s: %q has %q", what, name, c)
			}
		}
	}
}

func FuzzOwnerName(f *testing.F) {
	for _, s := range []string{
		"@", "", "www", "WWW.Example.COM.", "www.example.com", "other.org.", "_dmarc", "_sip._tcp",
		"*", "*.sub", "a.*", "a..b", "-a", "_", "\u212A", "é", "example.com", ".", strings.Repeat("a.", 121),
	} {
		f.Add("example.com", s)
	}
	f.Add("Sub.Example.co.uk.", "x.sub.example.co.uk.")
	f.Add("com", "www")
	f.Fuzz(func(t *testing.T, zoneIn, s string) {
		z, err := dnszone.ZoneName(zoneIn)
		if err != nil {
			return
		}
		checkHostname(t, "ZoneName("+zoneIn+")", z, false)
		if !strings.Contains(z, ".") {
			t.Fatalf("ZoneName(%q): got %q, want two labels at least", zoneIn, z)
		}
		if again, err := dnszone.ZoneName(z); err != nil || again != z {
			t.Fatalf("ZoneName(%q) = %q; ZoneName again: got %q, %v", zoneIn, z, again, err)
		}
		name, err := dnszone.OwnerName(z, s)
		if err != nil {
			return
		}
		what := "OwnerName(" + z + ", " + s + ")"
		if !dnszone.InZone(z, name) {
			t.Fatalf("%s: got %q, outside the zone", what, name)
		}
		checkHostname(t, what, name, true)
		if name != strings.ToLower(name) {
			t.Fatalf("%s: got %q, not lower case", what, name)
		}
		// The canonical name, relative, absolute, or as it is, resolves to
		// itself.
		forms := []string{name, name + ".", strings.ToUpper(name)}
		if rel := dnszone.Relative(z, name); rel != z && !strings.HasSuffix(rel, "."+z) {
			// A relative name that itself ends in the zone's name is
			// read as absolute: see TestRelativeAmbiguous.
			forms = append(forms, rel)
		}
		for _, form := range forms {
			if again, err := dnszone.OwnerName(z, form); err != nil || again != name {
				t.Fatalf("%s = %q; OwnerName(%q, %q): got %q, %v", what, name, z, form, again, err)
			}
		}
	})
}
