// Package dnszone holds the rules of the platform's DNS, free of I/O: what
// a zone name and a record may be, how a record's value is written and
// parsed, which records may stand beside which, and how an authoritative
// server answers a question from a zone's records (Answer). The store
// (dnsstore), the server (dnsserver) and the REST API (dnsapi) build on
// it.
package dnszone

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrInvalid is wrapped by every validation error: the message says what
// is wrong, for the API to pass on as a 400.
var ErrInvalid = errors.New("invalid")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// Limits of names (RFC 1035 §2.3.4).
const (
	maxLabel = 63
	maxName  = 253 // in presentation form, without the final dot
)

// ZoneName checks a zone's name and returns it in canonical form: lower
// case, no final dot. A zone has at least two labels (no top-level domain
// alone), each of letters, digits and inner hyphens.
func ZoneName(s string) (string, error) {
	if strings.Contains(s, "/") || strings.Contains(s, ":") {
		return "", invalid("zone name %q: give the domain only, such as example.com (no scheme, port or path)", s)
	}
	name, err := hostname(s, false)
	if err != nil {
		return "", err
	}
	if !strings.Contains(name, ".") {
		return "", invalid("zone name %q has one label: a zone is a domain such as example.com", s)
	}
	return name, nil
}

// hostname checks a domain name in presentation form and returns it lower
// case without a final dot. Labels are letters, digits and hyphens, not
// beginning or ending with a hyphen; with owner set, a label may also
// begin with an underscore (_dmarc, _sip._tcp) and the first label may be
// the wildcard "*".
func hostname(s string, owner bool) (string, error) {
	if err := asciiOnly(s); err != nil {
		return "", err
	}
	name := strings.ToLower(strings.TrimSuffix(s, "."))
	if name == "" {
		return "", invalid("the name is empty")
	}
	if len(name) > maxName {
		return "", invalid("name %q is %d characters long, more than %d", s, len(name), maxName)
	}
	for i, label := range strings.Split(name, ".") {
		if err := checkLabel(label, owner, i == 0); err != nil {
			return "", invalid("name %q: %v", s, err)
		}
	}
	return name, nil
}

func checkLabel(label string, owner, first bool) error {
	switch {
	case label == "":
		return errors.New("an empty label (two dots in a row, or a leading dot)")
	case len(label) > maxLabel:
		return fmt.Errorf("label %q is longer than %d characters", label, maxLabel)
	case label == "*":
		if owner && first {
			return nil
		}
		return errors.New(`"*" is allowed only as the first label of a record's name (a wildcard)`)
	}
	body := label
	if owner && label[0] == '_' {
		body = label[1:]
		if body == "" {
			return errors.New(`label "_" has nothing after the underscore`)
		}
	}
	if body[0] == '-' || body[len(body)-1] == '-' {
		return fmt.Errorf("label %q begins or ends with a hyphen", label)
	}
	for _, c := range body {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || owner && c == '_') {
			return fmt.Errorf("label %q has %q: use letters, digits and hyphens", label, c)
		}
	}
	return nil
}

// OwnerName resolves a record's name in zone: "@" or "" is the apex, a name
// ending in the zone's name (with or without a final dot) is taken as it
// is, and any other name is relative to the zone ("www" is www.zone). It
// returns the full name, lower case, without a final dot.
func OwnerName(zone, s string) (string, error) {
	s = strings.TrimSpace(s)
	if err := asciiOnly(s); err != nil {
		return "", err
	}
	s = strings.ToLower(s)
	switch {
	case s == "" || s == "@":
		return zone, nil
	case strings.HasSuffix(s, "."):
		// Absolute: it must lie in the zone.
		name, err := hostname(s, true)
		if err != nil {
			return "", err
		}
		if !InZone(zone, name) {
			return "", invalid("name %q is outside the zone %s", s, zone)
		}
		return name, nil
	}
	name := strings.TrimSuffix(s, "."+zone)
	if s == zone {
		return zone, nil
	}
	return hostname(name+"."+zone, true)
}

// InZone reports whether name is zone or a name below it (both canonical).
func InZone(zone, name string) bool {
	return name == zone || strings.HasSuffix(name, "."+zone)
}

// Relative is name relative to zone: "@" for the apex, else name without
// ".zone"; when that would itself end in the zone's name (and so be read
// back as a full name), the full name with a final dot. OwnerName reads
// it back as name.
func Relative(zone, name string) string {
	if name == zone {
		return "@"
	}
	rel := strings.TrimSuffix(name, "."+zone)
	if rel == zone || strings.HasSuffix(rel, "."+zone) {
		return name + "."
	}
	return rel
}

// SortKey orders names as DNS does (RFC 4034 §6.1, for our lower-case
// names): by their labels from the right, so that a name comes before
// the names below it.
func SortKey(name string) string {
	labels := strings.Split(name, ".")
	slices.Reverse(labels)
	return strings.Join(labels, "\x00")
}

// asciiOnly refuses a name with a byte beyond ASCII. It runs before
// lower-casing: strings.ToLower maps some non-ASCII letters (the Kelvin
// sign) to ASCII ones.
func asciiOnly(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return invalid("name %q has a character that is not ASCII: write an internationalised name in its xn-- form", s)
		}
	}
	return nil
}
