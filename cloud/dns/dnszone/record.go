package dnszone

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/miekg/dns"
)

// Types are the record types a zone may hold, besides the SOA the zone
// keeps itself.
var Types = []string{"A", "AAAA", "CNAME", "MX", "TXT", "NS", "SRV", "CAA"}

// TTL bounds and default, in seconds.
const (
	MinTTL     = 30
	MaxTTL     = 604800 // a week
	DefaultTTL = 3600
)

// MaxTXT bounds a TXT record's value in bytes: with the name and the
// other records of a response it still fits a TCP answer easily, and
// 2 KiB holds any DKIM key in use.
const MaxTXT = 2048

// MaxCAA bounds a CAA record's value in bytes. A value of any length was
// taken before, and one past 1025 bytes could not be packed into an
// answer (the fuzzer found it; the DNS library packs a CAA value of at
// most that). CAA values in use (an issuer's domain and parameters, an
// iodef URL) are far shorter.
const MaxCAA = 1024

// Record is a record of a zone, as the API shows it.
//
// Name is the full owner name, lower case, without a final dot
// ("www.example.com"; the apex is the zone's name). Value is the record's
// data in the form of its type:
//
//	A      192.0.2.1
//	AAAA   2001:db8::1
//	CNAME  target.example.net          (a full name; no final dot needed)
//	NS     ns1.example.net
//	MX     mail.example.com            (the preference is Priority)
//	SRV    sip.example.com             (Priority, Weight and Port beside it)
//	TXT    v=spf1 -all                 (any text up to MaxTXT bytes)
//	CAA    0 issue "letsencrypt.org"   (flags, tag, quoted value)
//
// Priority is set for MX and SRV only, Weight and Port for SRV only.
type Record struct {
	ID        string  `json:"id"`
	Type      string  `json:"type"`
	Name      string  `json:"name"`
	Value     string  `json:"value"`
	TTL       uint32  `json:"ttl"`
	Priority  *uint16 `json:"priority,omitempty"`
	Weight    *uint16 `json:"weight,omitempty"`
	Port      *uint16 `json:"port,omitempty"`
	CreatedAt string  `json:"created_at,omitempty"` // RFC 3339
	UpdatedAt string  `json:"updated_at,omitempty"`
}

// Input is a record as a client writes it: Name may be relative to the
// zone or "@", TTL and Priority may be left out (DefaultTTL, and 10 for
// MX and SRV); Weight defaults to 0 for SRV and Port is required there.
type Input struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Value    string `json:"value"`
	TTL      *int64 `json:"ttl,omitempty"`
	Priority *int64 `json:"priority,omitempty"`
	Weight   *int64 `json:"weight,omitempty"`
	Port     *int64 `json:"port,omitempty"`
}

// Parse checks in as a record of zone and returns it in canonical form,
// without ID or times. It checks the record alone; Check checks it beside
// the zone's other records.
func Parse(zone string, in Input) (Record, error) {
	typ := strings.ToUpper(strings.TrimSpace(in.Type))
	if _, ok := dns.StringToType[typ]; !ok || !supported(typ) {
		return Record{}, invalid("type %q is not one of %s", in.Type, strings.Join(Types, ", "))
	}
	name, err := OwnerName(zone, in.Name)
	if err != nil {
		return Record{}, err
	}
	r := Record{Type: typ, Name: name, TTL: DefaultTTL}
	if in.TTL != nil {
		if *in.TTL < MinTTL || *in.TTL > MaxTTL {
			return Record{}, invalid("ttl %d is outside %d to %d seconds", *in.TTL, MinTTL, MaxTTL)
		}
		r.TTL = uint32(*in.TTL)
	}
	if r.Value, err = value(zone, typ, in.Value); err != nil {
		return Record{}, err
	}
	if err := r.numbers(in); err != nil {
		return Record{}, err
	}
	if strings.HasPrefix(name, "*.") && typ == "NS" {
		return Record{}, invalid("an NS record cannot have a wildcard name")
	}
	return r, nil
}

func supported(typ string) bool {
	for _, t := range Types {
		if t == typ {
			return true
		}
	}
	return false
}

// numbers sets Priority, Weight and Port from in, for the types that have
// them, and refuses them on the others.
func (r *Record) numbers(in Input) error {
	field := func(name string, v *int64, def int64, required bool) (*uint16, error) {
		if v == nil {
			if required {
				return nil, invalid("%s record needs %s (0 to 65535)", article(r.Type), name)
			}
			v = &def
		}
		if *v < 0 || *v > 65535 {
			return nil, invalid("%s %d is outside 0 to 65535", name, *v)
		}
		n := uint16(*v)
		return &n, nil
	}
	var err error
	switch r.Type {
	case "MX":
		r.Priority, err = field("priority", in.Priority, 10, false)
		if err == nil && (in.Weight != nil || in.Port != nil) {
			err = invalid("an MX record has a priority, not a weight or port")
		}
	case "SRV":
		if r.Priority, err = field("priority", in.Priority, 10, false); err != nil {
			return err
		}
		if r.Weight, err = field("weight", in.Weight, 0, false); err != nil {
			return err
		}
		r.Port, err = field("port", in.Port, 0, true)
	default:
		if in.Priority != nil || in.Weight != nil || in.Port != nil {
			err = invalid("%s record has no priority, weight or port", article(r.Type))
		}
	}
	return err
}

// value checks a value of typ and returns its canonical form.
func value(zone, typ, v string) (string, error) {
	if typ != "TXT" {
		v = strings.TrimSpace(v)
	}
	if v == "" {
		return "", invalid("the value is empty: %s record needs %s", article(typ), valueHelp[typ])
	}
	switch typ {
	case "A":
		a, err := netip.ParseAddr(v)
		if err != nil || !a.Is4() {
			return "", invalid("value %q is not an IPv4 address (such as 192.0.2.1)", v)
		}
		return a.String(), nil
	case "AAAA":
		a, err := netip.ParseAddr(v)
		if err != nil || !a.Is6() || a.Is4In6() || a.Zone() != "" {
			return "", invalid("value %q is not an IPv6 address (such as 2001:db8::1)", v)
		}
		return a.String(), nil
	case "CNAME", "NS", "MX", "SRV":
		if v == "@" {
			return zone, nil
		}
		if typ == "MX" && v == "." {
			return ".", nil // a null MX: this domain takes no mail (RFC 7505)
		}
		if typ == "SRV" && v == "." {
			return ".", nil // the service is not offered at this name (RFC 2782)
		}
		// A CNAME may point at a service name (_acme-challenge, DKIM's
		// _domainkey); servers' names are host names.
		if (typ == "MX" || typ == "SRV") && strings.Contains(v, " ") {
			return "", invalid("value %q has a space: give the target's host name only; the priority (and for SRV the weight and port) are fields of their own", v)
		}
		name, err := hostname(v, typ == "CNAME")
		if err == nil && strings.HasPrefix(name, "*") {
			err = invalid("%s target cannot be a wildcard", article(typ))
		}
		if err == nil && !strings.Contains(name, ".") {
			// A name is relative to the zone only as an owner; a one-label
			// target is almost always a name in the zone written short.
			err = invalid("%s target %q has one label: give the full name, such as %s.%s (or @ for the apex)", article(typ), v, name, zone)
		}
		if err != nil {
			return "", invalid("value of %s record: %v", article(typ), strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
		}
		return name, nil
	case "TXT":
		if len(v) > MaxTXT {
			return "", invalid("a TXT value is %d bytes, more than %d", len(v), MaxTXT)
		}
		if !utf8.ValidString(v) {
			return "", invalid("a TXT value must be UTF-8 text")
		}
		for _, c := range v {
			if c < 0x20 || c == 0x7f {
				return "", invalid("a TXT value has the control character %U", c)
			}
		}
		return v, nil
	case "CAA":
		return caa(v)
	}
	return "", invalid("type %s is not supported", typ)
}

var valueHelp = map[string]string{
	"A":     "an IPv4 address",
	"AAAA":  "an IPv6 address",
	"CNAME": "a target name",
	"NS":    "a name server's name",
	"MX":    "a mail server's name",
	"SRV":   "a target name",
	"TXT":   "text",
	"CAA":   `flags, a tag and a quoted value, such as 0 issue "letsencrypt.org"`,
}

// caa checks a CAA value (RFC 8659): flags 0-255, a tag of letters and
// digits, and a value, quoted or not.
func caa(v string) (string, error) {
	fields := strings.SplitN(v, " ", 3)
	if len(fields) != 3 {
		return "", invalid(`CAA value %q is not "flags tag value", such as 0 issue "letsencrypt.org"`, v)
	}
	flags, err := strconv.ParseUint(fields[0], 10, 8)
	if err != nil {
		return "", invalid("CAA flags %q is not a number from 0 to 255", fields[0])
	}
	if err := asciiOnly(fields[1]); err != nil {
		return "", invalid("CAA tag %q must be letters and digits", fields[1])
	}
	tag := strings.ToLower(fields[1])
	if tag == "" || len(tag) > 15 {
		return "", invalid("CAA tag %q must be 1 to 15 letters and digits", fields[1])
	}
	for _, c := range tag {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return "", invalid("CAA tag %q must be letters and digits", fields[1])
		}
	}
	val := strings.TrimSpace(fields[2])
	if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
		val = val[1 : len(val)-1]
	}
	if len(val) > MaxCAA {
		return "", invalid("CAA value is %d bytes, at most %d", len(val), MaxCAA)
	}
	if strings.ContainsAny(val, "\"\\") {
		return "", invalid("CAA value %q has a quote or backslash", val)
	}
	for _, c := range val {
		if c < 0x20 || c > 0x7e {
			return "", invalid("CAA value %q must be printable ASCII", val)
		}
	}
	return fmt.Sprintf("%d %s %q", flags, tag, val), nil
}

// Same reports whether a and b are the same record: one type, name and
// data (TTL aside), which a zone holds once.
func Same(a, b Record) bool {
	return a.Type == b.Type && a.Name == b.Name && a.Value == b.Value && eq16(a.Priority, b.Priority) &&
		eq16(a.Weight, b.Weight) && eq16(a.Port, b.Port)
}

func eq16(a, b *uint16) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// RR is the record as a DNS resource record.
func (r Record) RR() dns.RR {
	hdr := dns.RR_Header{Name: dns.Fqdn(r.Name), Rrtype: dns.StringToType[r.Type], Class: dns.ClassINET, Ttl: r.TTL}
	switch r.Type {
	case "A":
		return &dns.A{Hdr: hdr, A: netip.MustParseAddr(r.Value).AsSlice()}
	case "AAAA":
		return &dns.AAAA{Hdr: hdr, AAAA: netip.MustParseAddr(r.Value).AsSlice()}
	case "CNAME":
		return &dns.CNAME{Hdr: hdr, Target: dns.Fqdn(r.Value)}
	case "NS":
		return &dns.NS{Hdr: hdr, Ns: dns.Fqdn(r.Value)}
	case "MX":
		return &dns.MX{Hdr: hdr, Preference: *r.Priority, Mx: dns.Fqdn(r.Value)}
	case "SRV":
		return &dns.SRV{Hdr: hdr, Priority: *r.Priority, Weight: *r.Weight, Port: *r.Port, Target: dns.Fqdn(r.Value)}
	case "TXT":
		return &dns.TXT{Hdr: hdr, Txt: splitTXT(r.Value)}
	case "CAA":
		var flags uint8
		var tag, val string
		fmt.Sscanf(r.Value, "%d %s", &flags, &tag)
		val, _ = strconv.Unquote(r.Value[strings.Index(r.Value, `"`):])
		return &dns.CAA{Hdr: hdr, Flag: flags, Tag: tag, Value: val}
	}
	panic("dnszone: RR of unsupported type " + r.Type)
}

// splitTXT cuts a TXT value into character-strings of at most 255 bytes
// (RFC 1035 §3.3.14), escaped as miekg/dns writes them: a client joins
// them back into the value.
func splitTXT(v string) []string {
	var out []string
	for len(v) > 255 {
		out = append(out, escapeTXT(v[:255]))
		v = v[255:]
	}
	return append(out, escapeTXT(v))
}

// escapeTXT escapes a character-string for miekg/dns, which keeps TXT
// strings in presentation form: a backslash and a quote take a backslash.
func escapeTXT(s string) string {
	if !strings.ContainsAny(s, `\"`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' || s[i] == '"' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ZoneInfo is a zone as the API shows it.
type ZoneInfo struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Serial      uint32   `json:"serial"`
	Nameservers []string `json:"nameservers"` // the platform's: delegate the zone to them
	Records     int      `json:"records"`
	CreatedAt   string   `json:"created_at"` // RFC 3339
	UpdatedAt   string   `json:"updated_at"`
}

// article is "a TYPE" or "an TYPE", as the type's name is said.
func article(typ string) string {
	switch typ {
	case "A", "AAAA", "MX", "NS", "SRV":
		return "an " + typ
	}
	return "a " + typ
}
