package dnsserver_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/dns/dnsserver"
)

// TestServeStops: when its context ends, Serve returns and the sockets
// are closed.
func TestServeStops(t *testing.T) {
	t.Parallel()
	srv := dnsserver.New(dnsserver.Options{Logger: discardLogger()})
	srv.Update(zone, smallZone(t))
	udp, tcp := listenPair(t)
	addr := udp.LocalAddr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, udp, tcp) }()
	waitServing(t, addr)

	// An idle TCP connection does not hold the shutdown up.
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return within 10 s of its context's end")
	}
	checkClosed(t, udp, tcp)
}

// checkClosed checks that Serve closed its TCP listener and UDP socket.
// Each is asked itself, not by a query to its address: that could reach
// another test's server that took the port since (stop 49's CI saw an
// answer over UDP that way, from a socket on the port once this one
// was closed).
func checkClosed(t *testing.T, udp net.PacketConn, tcp net.Listener) {
	t.Helper()
	if err := tcp.(*net.TCPListener).SetDeadline(time.Now()); err == nil {
		t.Errorf("the TCP listener is still open after Serve returned")
	}
	if _, err := udp.WriteTo([]byte{0}, udp.LocalAddr()); err == nil {
		t.Errorf("the UDP socket is still open after Serve returned")
	}
}

// TestServeListenerFails: when a listener fails, Serve stops the other
// and returns the error.
func TestServeListenerFails(t *testing.T) {
	t.Parallel()
	srv := dnsserver.New(dnsserver.Options{Logger: discardLogger()})
	udp, tcp := listenPair(t)
	addr := udp.LocalAddr().String()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), udp, tcp) }()
	waitServing(t, addr)
	tcp.Close() // the TCP server's Accept fails
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("Serve returned nil after its listener failed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its TCP listener failed")
	}
	if _, err := udp.WriteTo([]byte{0}, udp.LocalAddr()); err == nil {
		t.Errorf("the UDP socket is still open after Serve returned")
	}
}

// TestServeCancelledAtOnce: a context that ends before the servers have
// started stops them all the same.
func TestServeCancelledAtOnce(t *testing.T) {
	t.Parallel()
	srv := dnsserver.New(dnsserver.Options{Logger: discardLogger()})
	srv.Update(zone, smallZone(t))
	for range 20 {
		udp, tcp := listenPair(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, udp, tcp) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return")
		}
		checkClosed(t, udp, tcp)
		if t.Failed() {
			udp.Close()
			tcp.Close()
			return
		}
	}
}
