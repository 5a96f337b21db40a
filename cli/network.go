package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	ma "github.com/multiformats/go-multiaddr"

	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/ledgernet"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/wallet"
)

// peered is a node's network side: its host, the service that gossips,
// syncs and votes over it, and chat with the directory.
type peered struct {
	host *p2p.Host
	svc  *ledgernet.Service
	chat *chatnet.Service
}

// joinNetwork starts n's peer-to-peer host on listen, dialling bootstrap,
// and the ledger service over it, voting with reps and counting a
// representative online for onlineWindow after its vote (0: the default).
// Its identity and known peers live in DATA/p2p.
func joinNetwork(ctx context.Context, n *node.Node, dataDir, listen string, bootstrap []string, reps []wallet.Key, onlineWindow time.Duration, log *slog.Logger) (*peered, error) {
	h, err := p2p.New(ctx, p2p.Config{
		Dir:       filepath.Join(dataDir, "p2p"),
		Listen:    []string{listen},
		Bootstrap: bootstrap,
		Network:   n.Network.Genesis.Hash.String(),
		Logger:    log,
	})
	if err != nil {
		return nil, err
	}
	svc, err := ledgernet.Start(ctx, ledgernet.Config{Node: n, Host: h, Reps: reps, Logger: log, OnlineWindow: onlineWindow})
	if err != nil {
		h.Close()
		return nil, err
	}
	ch, err := chatnet.Start(ctx, chatnet.Config{Dir: filepath.Join(dataDir, "chat"), Host: h, Key: n.Key, Logger: log, Now: n.Now})
	if err != nil {
		svc.Close()
		h.Close()
		return nil, err
	}
	return &peered{host: h, svc: svc, chat: ch}, nil
}

// close stops the services, then the host.
func (p *peered) close() {
	p.chat.Close()
	p.svc.Close()
	p.host.Close()
}

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

// p2pPortFree checks that addr's TCP port can be bound, then releases it:
// libp2p binds its own listeners, later, and a port in use must fail
// before any state is created, naming the flag that changes it.
func p2pPortFree(addr string) error {
	m, err := ma.NewMultiaddr(addr)
	if err != nil {
		return usageErr("--p2p %q: %v", addr, err)
	}
	port, err := m.ValueForProtocol(ma.P_TCP)
	if err != nil || port == "0" {
		return nil
	}
	host, err := m.ValueForProtocol(ma.P_IP4)
	if err != nil {
		if host, err = m.ValueForProtocol(ma.P_IP6); err != nil {
			return nil // a DNS name: libp2p resolves and reports it
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return fmt.Errorf("listen %s: %w (choose another address with --p2p or LATTICE_P2P)", addr, err)
	}
	return ln.Close()
}
