package p2p

import (
	"fmt"
	"net"

	ma "github.com/multiformats/go-multiaddr"
)

// PortFree checks that the TCP port of listen multiaddr addr can be bound,
// so that a port in use is found before a node creates any state (libp2p
// binds its own ports only once the host starts). Port 0, and a DNS name
// (which libp2p resolves and reports itself), pass.
func PortFree(addr string) error {
	m, err := ma.NewMultiaddr(addr)
	if err != nil {
		return fmt.Errorf("p2p: listen address %q: %w", addr, err)
	}
	port, err := m.ValueForProtocol(ma.P_TCP)
	if err != nil || port == "0" {
		return nil
	}
	host, err := m.ValueForProtocol(ma.P_IP4)
	if err != nil {
		if host, err = m.ValueForProtocol(ma.P_IP6); err != nil {
			return nil
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	return ln.Close()
}
