package dnszone_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// records parses ins with IDs r1, r2, ….
func records(t testing.TB, ins ...dnszone.Input) []dnszone.Record {
	t.Helper()
	out := make([]dnszone.Record, len(ins))
	for i, in := range ins {
		out[i] = mustParse(t, in)
		out[i].ID = fmt.Sprintf("r%d", i+1)
	}
	return out
}

func TestCheck(t *testing.T) {
	apexNS := dnszone.Input{Type: "NS", Name: "@", Value: "ns1.example.net"}
	wwwA := dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.1"}
	wwwCNAME := dnszone.Input{Type: "CNAME", Name: "www", Value: "web.example.net"}
	subNS := dnszone.Input{Type: "NS", Name: "sub", Value: "ns.sub.example.com"}
	tests := []struct {
		name   string
		others []dnszone.Input
		r      dnszone.Input
		ok     bool
	}{
		{"empty zone", nil, wwwA, true},
		{"second A", []dnszone.Input{wwwA}, dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.2"}, true},
		{"A and AAAA", []dnszone.Input{wwwA}, dnszone.Input{Type: "AAAA", Name: "www", Value: "2001:db8::1"}, true},
		{"duplicate A", []dnszone.Input{apexNS, wwwA}, wwwA, false},
		{"duplicate A, other TTL", []dnszone.Input{wwwA}, dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.1", TTL: i64(60)}, false},
		{"duplicate MX", []dnszone.Input{{Type: "MX", Name: "@", Value: "mail.example.com"}}, dnszone.Input{Type: "MX", Name: "@", Value: "Mail.Example.Com.", Priority: i64(10)}, false},
		{"MX other priority", []dnszone.Input{{Type: "MX", Name: "@", Value: "mail.example.com"}}, dnszone.Input{Type: "MX", Name: "@", Value: "mail.example.com", Priority: i64(20)}, true},
		{"duplicate TXT", []dnszone.Input{{Type: "TXT", Name: "@", Value: "v=spf1 -all"}}, dnszone.Input{Type: "TXT", Name: "@", Value: "v=spf1 -all"}, false},
		{"duplicate NS", []dnszone.Input{apexNS}, apexNS, false},
		{"second apex NS", []dnszone.Input{apexNS}, dnszone.Input{Type: "NS", Name: "@", Value: "ns2.example.net"}, true},
		{"same value, other name", []dnszone.Input{wwwA}, dnszone.Input{Type: "A", Name: "web", Value: "192.0.2.1"}, true},

		{"CNAME at the apex", nil, dnszone.Input{Type: "CNAME", Name: "@", Value: "www.example.net"}, false},
		{"CNAME beside A", []dnszone.Input{wwwA}, wwwCNAME, false},
		{"A beside CNAME", []dnszone.Input{wwwCNAME}, wwwA, false},
		{"TXT beside CNAME", []dnszone.Input{wwwCNAME}, dnszone.Input{Type: "TXT", Name: "www", Value: "x"}, false},
		{"MX beside CNAME", []dnszone.Input{wwwCNAME}, dnszone.Input{Type: "MX", Name: "www", Value: "mail.example.com"}, false},
		{"second CNAME", []dnszone.Input{wwwCNAME}, dnszone.Input{Type: "CNAME", Name: "www", Value: "other.example.net"}, false},
		{"duplicate CNAME", []dnszone.Input{wwwCNAME}, wwwCNAME, false},
		{"CNAME under a name with A", []dnszone.Input{wwwA}, dnszone.Input{Type: "CNAME", Name: "x.www", Value: "web.example.net"}, true},
		{"CNAME beside A elsewhere", []dnszone.Input{wwwA}, dnszone.Input{Type: "CNAME", Name: "web", Value: "www.example.com"}, true},
		{"wildcard CNAME beside wildcard A", []dnszone.Input{{Type: "A", Name: "*", Value: "192.0.2.1"}}, dnszone.Input{Type: "CNAME", Name: "*", Value: "www.example.com"}, false},

		// A delegation at sub.
		{"second NS at the cut", []dnszone.Input{subNS}, dnszone.Input{Type: "NS", Name: "sub", Value: "ns2.example.net"}, true},
		{"A glue below the cut", []dnszone.Input{subNS}, dnszone.Input{Type: "A", Name: "ns.sub", Value: "192.0.2.53"}, true},
		{"AAAA glue below the cut", []dnszone.Input{subNS}, dnszone.Input{Type: "AAAA", Name: "ns.sub", Value: "2001:db8::53"}, true},
		{"A at the cut", []dnszone.Input{subNS}, dnszone.Input{Type: "A", Name: "sub", Value: "192.0.2.53"}, true},
		{"TXT below the cut", []dnszone.Input{subNS}, dnszone.Input{Type: "TXT", Name: "x.sub", Value: "hello"}, false},
		{"TXT at the cut", []dnszone.Input{subNS}, dnszone.Input{Type: "TXT", Name: "sub", Value: "hello"}, false},
		{"MX at the cut", []dnszone.Input{subNS}, dnszone.Input{Type: "MX", Name: "sub", Value: "mail.example.com"}, false},
		{"CNAME below the cut", []dnszone.Input{subNS}, dnszone.Input{Type: "CNAME", Name: "x.sub", Value: "www.example.com"}, false},
		{"CNAME at the cut", []dnszone.Input{subNS}, dnszone.Input{Type: "CNAME", Name: "sub", Value: "www.example.com"}, false},
		{"wildcard TXT below the cut", []dnszone.Input{subNS}, dnszone.Input{Type: "TXT", Name: "*.sub", Value: "x"}, false},
		{"NS below the cut", []dnszone.Input{subNS}, dnszone.Input{Type: "NS", Name: "deeper.sub", Value: "ns.example.net"}, false},
		{"TXT beside the cut", []dnszone.Input{subNS}, dnszone.Input{Type: "TXT", Name: "xsub", Value: "hello"}, true},
		{"TXT above the cut", []dnszone.Input{subNS}, dnszone.Input{Type: "TXT", Name: "@", Value: "hello"}, true},
		{"NS over a TXT below", []dnszone.Input{{Type: "TXT", Name: "x.sub", Value: "hello"}}, subNS, false},
		{"NS over a TXT at the cut", []dnszone.Input{{Type: "TXT", Name: "sub", Value: "hello"}}, subNS, false},
		{"NS over a CNAME below", []dnszone.Input{{Type: "CNAME", Name: "x.sub", Value: "www.example.com"}}, subNS, false},
		{"NS over an NS below", []dnszone.Input{{Type: "NS", Name: "deeper.sub", Value: "ns.example.net"}}, subNS, false},
		{"NS over glue", []dnszone.Input{{Type: "A", Name: "ns.sub", Value: "192.0.2.53"}, {Type: "AAAA", Name: "ns.sub", Value: "2001:db8::53"}}, subNS, true},
		{"NS beside a TXT elsewhere", []dnszone.Input{{Type: "TXT", Name: "xsub", Value: "hello"}}, subNS, true},
		{"apex NS with records below", []dnszone.Input{{Type: "TXT", Name: "x", Value: "hello"}}, apexNS, true},
	}
	for _, tt := range tests {
		others := records(t, tt.others...)
		r := mustParse(t, tt.r)
		err := dnszone.Check(zone, others, r)
		switch {
		case tt.ok && err != nil:
			t.Errorf("%s: Check(%s): got %v, want nil", tt.name, showIn(tt.r), err)
		case !tt.ok && err == nil:
			t.Errorf("%s: Check(%s): got nil, want an error", tt.name, showIn(tt.r))
		case !tt.ok && !errors.Is(err, dnszone.ErrInvalid):
			t.Errorf("%s: Check(%s): error %v does not wrap ErrInvalid", tt.name, showIn(tt.r), err)
		}
	}
}

// TestCheckTXTCase: TXT values that differ only in case are two records.
func TestCheckTXTCase(t *testing.T) {
	others := records(t, dnszone.Input{Type: "TXT", Name: "@", Value: "token=ABC"})
	r := mustParse(t, dnszone.Input{Type: "TXT", Name: "@", Value: "token=abc"})
	if err := dnszone.Check(zone, others, r); err != nil {
		t.Errorf("Check(%s): got %v, want nil", show(r), err)
	}
}

func TestCheckMaxRecords(t *testing.T) {
	others := make([]dnszone.Record, dnszone.MaxRecords)
	for i := range others {
		others[i] = dnszone.Record{ID: fmt.Sprint(i), Type: "TXT", Name: fmt.Sprintf("n%d.example.com", i), Value: "x", TTL: 3600}
	}
	r := mustParse(t, dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.1"})
	err := dnszone.Check(zone, others, r)
	if err == nil || !errors.Is(err, dnszone.ErrInvalid) {
		t.Errorf("Check with %d others: got %v, want an ErrInvalid", len(others), err)
	}
	if err := dnszone.Check(zone, others[:dnszone.MaxRecords-1], r); err != nil {
		t.Errorf("Check with %d others: got %v, want nil", dnszone.MaxRecords-1, err)
	}
}

func TestCheckRemove(t *testing.T) {
	one := records(t,
		dnszone.Input{Type: "NS", Name: "@", Value: "ns1.example.net"},
		dnszone.Input{Type: "NS", Name: "sub", Value: "ns.example.net"},
		dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.1"},
	)
	two := records(t,
		dnszone.Input{Type: "NS", Name: "@", Value: "ns1.example.net"},
		dnszone.Input{Type: "NS", Name: "@", Value: "ns2.example.net"},
		dnszone.Input{Type: "NS", Name: "sub", Value: "ns.example.net"},
	)
	tests := []struct {
		name    string
		records []dnszone.Record
		r       dnszone.Record
		ok      bool
	}{
		{"the only apex NS", one, one[0], false},
		{"a non-apex NS", one, one[1], true},
		{"an A", one, one[2], true},
		{"one of two apex NS", two, two[0], true},
		{"the other of two apex NS", two, two[1], true},
		{"the last delegation NS", two, two[2], true},
		{"the apex NS of an empty list", nil, one[0], false},
	}
	for _, tt := range tests {
		err := dnszone.CheckRemove(zone, tt.records, tt.r)
		switch {
		case tt.ok && err != nil:
			t.Errorf("%s: CheckRemove(%s): got %v, want nil", tt.name, show(tt.r), err)
		case !tt.ok && err == nil:
			t.Errorf("%s: CheckRemove(%s): got nil, want an error", tt.name, show(tt.r))
		case !tt.ok && !errors.Is(err, dnszone.ErrInvalid):
			t.Errorf("%s: CheckRemove(%s): error %v does not wrap ErrInvalid", tt.name, show(tt.r), err)
		}
	}
}
