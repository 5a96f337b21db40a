package dnszone

import "strings"

// MaxRecords bounds the records of one zone.
const MaxRecords = 10000

// Check reports whether r may join others, the zone's other records (when
// r replaces a record, others leaves that one out). It refuses what an
// authoritative server could not serve:
//
//   - the same record twice;
//   - a CNAME at the apex, or beside any other record of its name
//     (RFC 1034 §3.6.2, RFC 2181 §10.1);
//   - below a delegation (an NS record under the apex), anything but the
//     delegation's NS records and A/AAAA glue;
//   - a null MX beside another MX record (RFC 7505).
func Check(zone string, others []Record, r Record) error {
	if len(others) >= MaxRecords {
		return invalid("the zone holds %d records, the most a zone may", MaxRecords)
	}
	if r.Type == "CNAME" && r.Name == zone {
		return invalid("a CNAME cannot be at the zone's apex, which has SOA and NS records")
	}
	if r.Type == "CNAME" && r.Value == r.Name {
		return invalid("a CNAME at %s points at itself", r.Name)
	}
	for _, o := range others {
		if Same(o, r) {
			return invalid("the zone already has this %s record for %s (id %s)", r.Type, r.Name, o.ID)
		}
		if o.Name == r.Name && (o.Type == "CNAME") != (r.Type == "CNAME") {
			return invalid("%s has %s records: a CNAME cannot stand beside other records of its name", r.Name, o.Type)
		}
		if o.Name == r.Name && o.Type == "MX" && r.Type == "MX" && (o.Value == "." || r.Value == ".") {
			return invalid("%s: a null MX (\".\") must be the name's only MX record (RFC 7505)", r.Name)
		}
		if o.Name == r.Name && o.Type == "CNAME" && r.Type == "CNAME" {
			return invalid("%s already has a CNAME record (id %s): a name has at most one", r.Name, o.ID)
		}
		// Delegations, both ways round.
		if o.Type == "NS" && o.Name != zone && below(r.Name, o.Name) && !mayBeBelowCut(r, o.Name) {
			return invalid("%s is delegated (NS records at %s): only its NS records and A/AAAA glue may be at or below it", r.Name, o.Name)
		}
		if r.Type == "NS" && r.Name != zone && below(o.Name, r.Name) && !mayBeBelowCut(o, r.Name) {
			return invalid("an NS record at %s would delegate it, but the zone has %s record at %s: only NS records and A/AAAA glue may be at or below a delegation", r.Name, article(o.Type), o.Name)
		}
	}
	return nil
}

// CheckRemove reports whether r may leave the zone: the apex keeps at
// least one NS record.
func CheckRemove(zone string, records []Record, r Record) error {
	if r.Type != "NS" || r.Name != zone {
		return nil
	}
	for _, o := range records {
		if o.ID != r.ID && o.Type == "NS" && o.Name == zone {
			return nil
		}
	}
	return invalid("this is the zone's last NS record at the apex: add another before removing it")
}

// below reports whether name is cut or under it.
func below(name, cut string) bool { return name == cut || strings.HasSuffix(name, "."+cut) }

// mayBeBelowCut: at a delegation point cut, its NS records; at or below
// it, address records (glue for the delegated servers).
func mayBeBelowCut(r Record, cut string) bool {
	return r.Type == "A" || r.Type == "AAAA" || r.Type == "NS" && r.Name == cut
}
