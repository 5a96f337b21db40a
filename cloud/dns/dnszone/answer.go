package dnszone

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// SOA timers of every zone, in seconds: how often secondaries check for a
// new serial, how soon they retry, when they give up on a silent primary,
// and how long resolvers cache a negative answer (RFC 2308).
const (
	SOARefresh = 3600
	SOARetry   = 600
	SOAExpire  = 1209600
	SOAMinimum = 300
	SOATTL     = 3600
)

// Snapshot is a zone ready to answer: its records as resource records by
// name and type. It is immutable once built; a change builds a new one.
type Snapshot struct {
	Name   string // the apex, canonical without a final dot
	Serial uint32
	apex   string // the apex as a DNS name: lower case, final dot
	soa    *dns.SOA
	nodes  map[string]*node // every name holding records, and every empty non-terminal
	rrs    []dns.RR         // every record but the SOA, for transfers
}

type node struct {
	sets map[uint16][]dns.RR // nil for an empty non-terminal
}

// Build makes the snapshot of zone at serial from its records.
func Build(zone string, serial uint32, records []Record) *Snapshot {
	s := &Snapshot{Name: zone, Serial: serial, apex: dns.Fqdn(zone), nodes: map[string]*node{}}
	var mname string
	for _, r := range records {
		rr := r.RR()
		s.add(rr)
		if r.Type == "NS" && r.Name == zone && (mname == "" || r.Value < mname) {
			mname = r.Value
		}
	}
	if mname == "" {
		mname = "ns." + zone
	}
	s.soa = &dns.SOA{
		Hdr:     dns.RR_Header{Name: s.apex, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: SOATTL},
		Ns:      dns.Fqdn(mname),
		Mbox:    "hostmaster." + s.apex,
		Serial:  serial,
		Refresh: SOARefresh, Retry: SOARetry, Expire: SOAExpire, Minttl: SOAMinimum,
	}
	s.node(s.apex).sets[dns.TypeSOA] = []dns.RR{s.soa}
	// One TTL per RRset (RFC 2181 §5.2): the lowest of its records'.
	for _, n := range s.nodes {
		for _, set := range n.sets {
			low := set[0].Header().Ttl
			for _, rr := range set {
				low = min(low, rr.Header().Ttl)
			}
			for _, rr := range set {
				rr.Header().Ttl = low
			}
		}
	}
	// One fixed order, the text of each record computed once: a zone of
	// 10,000 long TXT records sorted on String() took seconds.
	keys := make(map[dns.RR]string, len(s.rrs))
	for _, rr := range s.rrs {
		keys[rr] = rr.String()
	}
	slices.SortFunc(s.rrs, func(a, b dns.RR) int { return strings.Compare(keys[a], keys[b]) })
	return s
}

func (s *Snapshot) add(rr dns.RR) {
	h := rr.Header()
	n := s.node(h.Name)
	n.sets[h.Rrtype] = append(n.sets[h.Rrtype], rr)
	s.rrs = append(s.rrs, rr)
}

// node returns name's node, creating it and the empty non-terminals
// between it and the apex.
func (s *Snapshot) node(name string) *node {
	n, ok := s.nodes[name]
	if !ok || n.sets == nil {
		if !ok {
			n = &node{}
			s.nodes[name] = n
		}
		n.sets = map[uint16][]dns.RR{}
	}
	for p := parent(name); p != "" && dns.IsSubDomain(s.apex, p); p = parent(p) {
		if _, ok := s.nodes[p]; ok {
			break
		}
		s.nodes[p] = &node{}
	}
	return n
}

// parent is name without its first label; "" above the root.
func parent(name string) string {
	i := strings.IndexByte(name, '.')
	if i < 0 || i == len(name)-1 {
		return ""
	}
	return name[i+1:]
}

// SOA returns the zone's SOA record.
func (s *Snapshot) SOA() *dns.SOA { return s.soa }

// Records returns every record of the zone but the SOA, in a fixed order:
// the body of a zone transfer, which begins and ends with the SOA.
func (s *Snapshot) Records() []dns.RR { return s.rrs }

// Response is an answer: what goes in each section of the reply.
type Response struct {
	Rcode         int
	Authoritative bool // false for a referral
	Answer        []dns.RR
	Ns            []dns.RR
	Extra         []dns.RR
}

// maxChain bounds the CNAMEs followed inside the zone, so that a loop
// ends.
const maxChain = 8

// Answer answers the question (qname, a lower-case name with a final dot
// at or below the apex; qtype) as the zone's authoritative server would
// (RFC 1034 §4.3.2, RFC 4592 for wildcards, RFC 2308 for negative
// answers): the records asked for; a CNAME chain followed while it stays
// in the zone; a referral with glue below a delegation; NXDOMAIN or
// NODATA with the SOA in the authority section.
func (s *Snapshot) Answer(qname string, qtype uint16) Response {
	resp := Response{Authoritative: true}
	name := qname
	var seen []string // the names a CNAME chain has passed
	for hops := 0; ; hops++ {
		from := name
		if qtype == dns.TypeDS && name != s.apex {
			// DS records live on the parent's side of a delegation
			// (RFC 4035 §3.1.4.1): the parent answers, it does not refer.
			from = parent(name)
		}
		if cut := s.cut(from); cut != nil {
			// Delegated: refer to the child's servers.
			resp.Authoritative = len(resp.Answer) > 0
			resp.Ns = cut
			resp.Extra = s.glue(cut)
			return resp
		}
		n, owner := s.nodes[name], name
		if n == nil {
			// No such name: a wildcard at the closest encloser answers
			// in its place.
			n = s.nodes["*."+s.closestEncloser(name)]
			if n == nil {
				resp.Rcode = dns.RcodeNameError
				resp.Ns = []dns.RR{s.negativeSOA()}
				return resp
			}
		}
		if qtype == dns.TypeANY && n.sets != nil {
			for _, t := range sortedTypes(n.sets) {
				resp.Answer = append(resp.Answer, rename(n.sets[t], owner)...)
			}
			return resp
		}
		if set := n.sets[qtype]; len(set) > 0 {
			resp.Answer = append(resp.Answer, rename(set, owner)...)
			resp.Extra = s.glue(set)
			return resp
		}
		if cn := n.sets[dns.TypeCNAME]; len(cn) > 0 {
			resp.Answer = append(resp.Answer, rename(cn, owner)...)
			target := LowerASCII(cn[0].(*dns.CNAME).Target)
			seen = append(seen, name)
			if !dns.IsSubDomain(s.apex, target) || hops+1 >= maxChain || slices.Contains(seen, target) {
				return resp // the resolver follows it from here (or sees the loop)
			}
			name = target
			continue
		}
		resp.Ns = []dns.RR{s.negativeSOA()} // NODATA
		return resp
	}
}

// cut returns the NS records of the delegation at or above name, if any.
func (s *Snapshot) cut(name string) []dns.RR {
	for n := name; n != s.apex && n != ""; n = parent(n) {
		if nd := s.nodes[n]; nd != nil {
			if ns := nd.sets[dns.TypeNS]; len(ns) > 0 {
				return ns
			}
		}
	}
	return nil
}

// closestEncloser is the nearest ancestor of name that exists.
func (s *Snapshot) closestEncloser(name string) string {
	for p := parent(name); p != ""; p = parent(p) {
		if _, ok := s.nodes[p]; ok {
			return p
		}
	}
	return s.apex
}

// glue returns the zone's address records of the names that NS, MX and
// SRV records in set point to.
func (s *Snapshot) glue(set []dns.RR) []dns.RR {
	var out []dns.RR
	for _, rr := range set {
		var target string
		switch v := rr.(type) {
		case *dns.NS:
			target = v.Ns
		case *dns.MX:
			target = v.Mx
		case *dns.SRV:
			target = v.Target
		default:
			continue
		}
		if n := s.nodes[LowerASCII(target)]; n != nil {
			out = append(out, n.sets[dns.TypeA]...)
			out = append(out, n.sets[dns.TypeAAAA]...)
		}
	}
	return out
}

// negativeSOA is the SOA of a negative answer: its TTL is the lower of
// its own and its minimum field (RFC 2308 §3).
func (s *Snapshot) negativeSOA() dns.RR {
	soa := *s.soa
	soa.Hdr.Ttl = min(soa.Hdr.Ttl, soa.Minttl)
	return &soa
}

// rename returns set with owner as every record's name: a wildcard's
// records answer for the name asked.
func rename(set []dns.RR, owner string) []dns.RR {
	if len(set) == 0 || set[0].Header().Name == owner {
		return set
	}
	out := make([]dns.RR, len(set))
	for i, rr := range set {
		c := dns.Copy(rr)
		c.Header().Name = owner
		out[i] = c
	}
	return out
}

func sortedTypes(sets map[uint16][]dns.RR) []uint16 {
	ts := make([]uint16, 0, len(sets))
	for t := range sets {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// LowerASCII lower-cases the ASCII letters of a DNS name and nothing else:
// names compare case-insensitively in ASCII only (RFC 4343), and
// strings.ToLower would map some other letters to ASCII ones.
func LowerASCII(name string) string {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'A' && c <= 'Z' {
			b := []byte(name)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return name
}
