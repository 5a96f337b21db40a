package dnsserver_test

import (
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnsserver"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// TestEscapedDotIsNotInTheZone: a\.example.com is two labels under com,
// not a name in example.com (nor one its wildcard covers).
func TestEscapedDotIsNotInTheZone(t *testing.T) {
	ts := startServer(t, serverConfig{records: []dnszone.Input{{Type: "A", Name: "*", Value: "192.0.2.99"}}})
	in := ts.exchange(t, "udp", query(`a\.example.com`, dns.TypeA))
	if in.Rcode != dns.RcodeRefused || len(in.Answer) != 0 {
		t.Errorf(`a\.example.com: %s with %d answers, want REFUSED`, rcode(in), len(in.Answer))
	}
}

// TestTSIGNotAuth: with no keys configured, a signed request is answered
// NOTAUTH, not served as if it were verified.
func TestTSIGNotAuth(t *testing.T) {
	ts := startServer(t, serverConfig{opts: dnsserver.Options{TransferFrom: loopbackOnly}})
	m := query("example.com", dns.TypeSOA)
	m.SetTsig("k1.", dns.HmacSHA256, 300, time.Now().Unix())
	c := &dns.Client{Net: "tcp", Timeout: 2 * time.Second, TsigSecret: map[string]string{"k1.": "c2VjcmV0c2VjcmV0c2VjcmV0"}}
	in, _, err := c.Exchange(m, ts.addr)
	if in == nil {
		t.Fatalf("no answer: %v", err)
	}
	if in.Rcode != dns.RcodeNotAuth || len(in.Answer) != 0 {
		t.Errorf("a TSIG-signed query: %s with %d answers, want NOTAUTH", rcode(in), len(in.Answer))
	}
}

// TestTCNotSetForDroppedAdditionals: an answer that fits without its
// additional records is sent whole without them, and without TC.
func TestTCNotSetForDroppedAdditionals(t *testing.T) {
	var recs []dnszone.Input
	for i := range 10 {
		p := int64(10 + i)
		recs = append(recs,
			dnszone.Input{Type: "MX", Name: "mx", Value: fmt.Sprintf("mail%d.example.com", i), Priority: &p},
			dnszone.Input{Type: "A", Name: fmt.Sprintf("mail%d", i), Value: fmt.Sprintf("192.0.2.%d", 10+i)},
			dnszone.Input{Type: "AAAA", Name: fmt.Sprintf("mail%d", i), Value: fmt.Sprintf("2001:db8::%d", 10+i)},
		)
	}
	ts := startServer(t, serverConfig{records: recs})
	n, in := ts.rawUDP(t, query("mx.example.com", dns.TypeMX))
	if in.Truncated || len(in.Answer) != 10 || n > dns.MinMsgSize {
		t.Errorf("10 MX records with their glue, no EDNS: %d bytes, TC %v, %d answers, %d additional; want the 10 MX, no TC",
			n, in.Truncated, len(in.Answer), len(in.Extra))
	}
	if in := ts.exchange(t, "tcp", query("mx.example.com", dns.TypeMX)); len(in.Extra) != 20 {
		t.Errorf("over TCP: %d additional records, want the 20 addresses", len(in.Extra))
	}
}

// TestPortZeroSourceDropsNoOtherAnswer: a datagram from port 0, to which
// nothing can be sent, must not cost the answers read with it.
func TestPortZeroSourceDropsNoOtherAnswer(t *testing.T) {
	tooltest.NeedRoot(t, "a datagram from port 0 (a raw socket)")
	ts := startServer(t, serverConfig{})
	raw, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_UDP)
	if err != nil {
		t.Fatalf("raw socket: %v", err)
	}
	defer syscall.Close(raw)
	q, _ := query("www.example.com", dns.TypeA).Pack()
	pkt := make([]byte, 8+len(q)) // UDP header: from port 0, no checksum
	pkt[2], pkt[3] = byte(ts.port>>8), byte(ts.port)
	pkt[4], pkt[5] = byte(len(pkt)>>8), byte(len(pkt))
	copy(pkt[8:], q)
	to := &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	var clients []net.Conn
	for range 20 {
		c, err := net.Dial("udp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	for round := range 5 {
		for range 3 {
			if err := syscall.Sendto(raw, pkt, 0, to); err != nil {
				t.Fatalf("sendto: %v", err)
			}
		}
		for _, c := range clients {
			c.Write(q)
		}
		for i, c := range clients {
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			buf := make([]byte, 512)
			if _, err := c.Read(buf); err != nil {
				t.Fatalf("round %d: client %d got no answer beside the port-0 datagrams: %v", round, i, err)
			}
		}
	}
}

// TestTCPConnectionsBounded: past MaxTCP connections at once, a new one
// waits for a slot instead of taking a file descriptor; it is served as
// soon as one closes.
func TestTCPConnectionsBounded(t *testing.T) {
	ts := startServer(t, serverConfig{})
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range dnsserver.MaxTCP {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	time.Sleep(200 * time.Millisecond) // let the server accept them all
	c := &dns.Client{Net: "tcp", Timeout: 500 * time.Millisecond}
	if _, _, err := c.Exchange(query("www.example.com", dns.TypeA), ts.addr); err == nil {
		t.Errorf("a query over connection %d was answered while %d were open", dnsserver.MaxTCP+1, dnsserver.MaxTCP)
	}
	idle[0].Close()
	idle = idle[1:]
	c.Timeout = 5 * time.Second
	if _, _, err := c.Exchange(query("www.example.com", dns.TypeA), ts.addr); err != nil {
		t.Errorf("a query once a slot freed: %v", err)
	}
}
