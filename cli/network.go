package cli

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	ma "github.com/multiformats/go-multiaddr"
)

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// checkMultiaddr checks a --p2p or --bootstrap value, naming the flag.
func checkMultiaddr(flag, s string) error {
	if _, err := ma.NewMultiaddr(s); err != nil {
		return usageErr("--%s %q: want a multiaddr such as /ip4/0.0.0.0/tcp/4001: %v", flag, s, err)
	}
	return nil
}

// offsetTCP returns the multiaddr addr with its TCP port moved up by i (a
// port of 0 stays 0: the system picks one).
func offsetTCP(addr string, i int) (string, error) {
	m, err := ma.NewMultiaddr(addr)
	if err != nil {
		return "", err
	}
	port, err := m.ValueForProtocol(ma.P_TCP)
	if err != nil {
		return "", fmt.Errorf("%s has no tcp port", addr)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", err
	}
	if p == 0 {
		return addr, nil
	}
	return strings.Replace(addr, "/tcp/"+port, "/tcp/"+strconv.Itoa(p+i), 1), nil
}

// offsetHostPort returns host:port with the port moved up by i (a port
// of 0 stays 0).
func offsetHostPort(addr string, i int) (string, error) {
	if i == 0 {
		return addr, nil // used as given: listening says what is wrong with it
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", fmt.Errorf("address %q: bad port", addr)
	}
	if p == 0 {
		return addr, nil
	}
	return net.JoinHostPort(host, strconv.Itoa(p+i)), nil
}
