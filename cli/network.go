package cli

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"

	ma "github.com/multiformats/go-multiaddr"

	"github.com/latticenet/lattice/internal/run/httpserve"
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

// proxyNetworksFlag adds --proxy-networks, which lattice node and lattice
// cloud share.
func proxyNetworksFlag(f *flags) *string {
	return f.string("proxy-networks", "LATTICE_PROXY_NETWORKS", "proxy_networks", "",
		"networks (CIDR or address, comma-separated) of your reverse proxies and load balancers on public addresses: spared the bounds per client address, as loopback and private addresses are (docs/operations.md)")
}

// parseProxyNetworks reads --proxy-networks.
func parseProxyNetworks(v string) (httpserve.Spare, error) {
	spare, err := httpserve.ParseSpare(splitList(v))
	if err != nil {
		return nil, usageErr("--proxy-networks %v", err)
	}
	return spare, nil
}

// logProxies says at start which networks --proxy-networks spares, so that
// a mistyped prefix length (a /2 for a /24) is seen.
func logProxies(log *slog.Logger, spare httpserve.Spare) {
	if len(spare) > 0 {
		log.Info("proxy networks spared the bounds per client address", "networks", fmt.Sprint(spare))
	}
}
