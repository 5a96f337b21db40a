package dnsserver_test

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// rawReply sends the query bytes over UDP and returns the reply's bytes.
func rawReply(t *testing.T, addr string, q []byte) []byte {
	t.Helper()
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(q); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 65536)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	return buf[:n]
}

// TestPacketCache: a repeated query is answered byte for byte as the
// first one (its own ID aside, and the case of its name kept), the
// counters count it, and a zone change is answered at once.
func TestPacketCache(t *testing.T) {
	ts := startServer(t, serverConfig{})
	pack := func(name string, qtype uint16, id uint16, edns bool) []byte {
		m := query(name, qtype)
		m.Id = id
		if edns {
			m.SetEdns0(1232, true)
		}
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name  string
		qtype uint16
		edns  bool
	}{
		{"www.example.com.", dns.TypeA, false},
		{"WwW.ExAmple.com.", dns.TypeA, true},
		{"nosuch.example.com.", dns.TypeA, false},
		{"example.com.", dns.TypeMX, true},
		{"elsewhere.org.", dns.TypeA, false},
		{"x.wild.example.com.", dns.TypeA, true},
	} {
		first := rawReply(t, ts.addr, pack(tc.name, tc.qtype, 0x1111, tc.edns))
		before := ts.srv.Stats()
		second := rawReply(t, ts.addr, pack(tc.name, tc.qtype, 0x2222, tc.edns))
		after := ts.srv.Stats()
		if second[0] != 0x22 || second[1] != 0x22 || !bytes.Equal(first[2:], second[2:]) {
			t.Errorf("%s %s: the repeat differs:\nfirst  %x\nsecond %x", tc.name, dns.TypeToString[tc.qtype], first, second)
		}
		var m dns.Msg
		if err := m.Unpack(second); err != nil || m.Question[0].Name != tc.name {
			t.Errorf("%s: the repeat's question is %v (%v)", tc.name, m.Question, err)
		}
		if after.Queries != before.Queries+1 {
			t.Errorf("%s: queries %d → %d, want one more", tc.name, before.Queries, after.Queries)
		}
		switch m.Rcode {
		case dns.RcodeNameError:
			if after.NXDomain != before.NXDomain+1 {
				t.Errorf("%s: NXDOMAIN count %d → %d", tc.name, before.NXDomain, after.NXDomain)
			}
		case dns.RcodeRefused:
			if after.Refused != before.Refused+1 {
				t.Errorf("%s: REFUSED count %d → %d", tc.name, before.Refused, after.Refused)
			}
		}
	}

	// A change is answered at once, though the old answer was cached.
	q := pack("new.example.com.", dns.TypeA, 7, false)
	for range 2 {
		var m dns.Msg
		if err := m.Unpack(rawReply(t, ts.addr, q)); err != nil || m.Rcode != dns.RcodeNameError {
			t.Fatalf("new.example.com before it exists: %v, %v", m.Rcode, err)
		}
	}
	if _, err := ts.st.AddRecord(account, ts.zoneID, dnszone.Input{Type: "A", Name: "new", Value: "192.0.2.77"}); err != nil {
		t.Fatal(err)
	}
	var m dns.Msg
	if err := m.Unpack(rawReply(t, ts.addr, q)); err != nil || m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 {
		t.Fatalf("new.example.com right after it was added: %v", &m)
	}
	if a := m.Answer[0].(*dns.A); a.A.String() != "192.0.2.77" {
		t.Errorf("new.example.com = %v", a)
	}
}
