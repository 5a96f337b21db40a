package dnsserver

import (
	"context"
	"net"
	"runtime"
	"syscall"
)

// Listen binds addr for the server: TCP, and UDP on the same port (port
// 0 picks one free on both). On Linux it binds one UDP socket per core
// with SO_REUSEPORT, so that the kernel spreads the queries over sockets
// each read by its own goroutine: one socket's reader, moving one packet
// at a time through two system calls, is what bounds a server's queries a
// second. Pass the sockets to Serve.
func Listen(addr string) (udp []net.PacketConn, tcp net.Listener, err error) {
	for try := 0; ; try++ {
		tcp, err = net.Listen("tcp", addr)
		if err != nil {
			return nil, nil, err
		}
		udp, err = listenUDP(tcp.Addr().String(), runtime.NumCPU())
		if err == nil {
			return udp, tcp, nil
		}
		tcp.Close()
		if _, port, _ := net.SplitHostPort(addr); port != "0" || try == 10 {
			return nil, nil, err
		}
	}
}

// listenUDP binds n UDP sockets to addr with SO_REUSEPORT (one, without
// it, where the option is missing).
func listenUDP(addr string, n int) ([]net.PacketConn, error) {
	if reusePort == 0 {
		n = 1
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		if reusePort == 0 || n == 1 {
			return nil
		}
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, reusePort, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	var conns []net.PacketConn
	for range n {
		pc, err := lc.ListenPacket(context.Background(), "udp", addr)
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			return nil, err // net's error names the address: "listen udp ADDR: ..."
		}
		conns = append(conns, pc)
	}
	return conns, nil
}
