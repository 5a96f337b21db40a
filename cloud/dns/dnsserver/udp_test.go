package dnsserver_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnsserver"
)

// serveOn runs a server for smallZone on sockets from dnsserver.Listen.
func serveOn(t *testing.T, addr string) string {
	t.Helper()
	udp, tcp, err := dnsserver.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := dnsserver.New(dnsserver.Options{Logger: discardLogger()})
	srv.Update(zone, smallZone(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, udp[0], tcp, udp[1:]...) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return")
		}
	})
	_, port, _ := net.SplitHostPort(tcp.Addr().String())
	return net.JoinHostPort("127.0.0.1", port)
}

// TestListenBothPaths: a socket bound to one address is served in batches
// (serveUDP); one bound to every address by miekg/dns, which answers from
// the address asked. Both answer alike.
func TestListenBothPaths(t *testing.T) {
	for _, bind := range []string{"127.0.0.1:0", "0.0.0.0:0"} {
		t.Run(bind, func(t *testing.T) {
			addr := serveOn(t, bind)
			for _, net := range []string{"udp", "tcp"} {
				c := &dns.Client{Net: net, Timeout: 2 * time.Second}
				in, _, err := c.Exchange(query("www.example.com", dns.TypeA), addr)
				if err != nil || len(in.Answer) != 1 || !in.Authoritative {
					t.Errorf("www A over %s: %v, %v", net, in, err)
				}
			}
		})
	}
}

// TestBatchedPacketRules: the batched reader treats odd datagrams as
// miekg/dns's server does, and goes on answering.
func TestBatchedPacketRules(t *testing.T) {
	addr := serveOn(t, "127.0.0.1:0")
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exchange := func(pkt []byte) *dns.Msg {
		t.Helper()
		conn.Write(pkt)
		conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		buf := make([]byte, 1500)
		n, err := conn.Read(buf)
		if err != nil {
			return nil // silence
		}
		m := new(dns.Msg)
		if err := m.Unpack(buf[:n]); err != nil {
			t.Fatalf("an answer that does not unpack: %v", err)
		}
		return m
	}
	pack := func(m *dns.Msg) []byte {
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if m := exchange([]byte{1, 2, 3}); m != nil {
		t.Errorf("a runt: got %v, want silence", m)
	}
	resp := query("www.example.com", dns.TypeA)
	resp.Response = true
	if m := exchange(pack(resp)); m != nil {
		t.Errorf("a response: got %v, want silence", m)
	}
	upd := new(dns.Msg)
	upd.SetUpdate("example.com.")
	if m := exchange(pack(upd)); m == nil || m.Rcode != dns.RcodeNotImplemented || m.Id != upd.Id {
		t.Errorf("an UPDATE: got %v, want NOTIMP", m)
	}
	bad := pack(query("www.example.com", dns.TypeA))
	bad[12] = 60 // the first label's length runs past the packet's end
	if m := exchange(bad); m == nil || m.Rcode != dns.RcodeFormatError {
		t.Errorf("a broken name: got %v, want FORMERR", m)
	}
	if m := exchange(pack(query("www.example.com", dns.TypeA))); m == nil || len(m.Answer) != 1 {
		t.Errorf("a query after those: got %v", m)
	}
}

// TestListenTakenUDPPort: a UDP port another socket holds is an error that
// says so once ("listen udp ADDR: ...address already in use"), and the TCP
// listener it bound first is let go.
func TestListenTakenUDPPort(t *testing.T) {
	taken, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.LocalAddr().String()
	_, _, err = dnsserver.Listen(addr)
	if err == nil || strings.Count(err.Error(), "listen udp") != 1 || !strings.Contains(err.Error(), addr) {
		t.Fatalf("Listen(%s) with its UDP port taken: %v", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err != nil {
		t.Errorf("the TCP port was kept: %v", err)
	} else {
		l.Close()
	}
}
