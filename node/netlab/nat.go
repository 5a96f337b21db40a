package netlab

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"time"
)

// A node behind NAT (Options.NAT) sits on a LAN of its own,
// 192.168.(i+1).0/24, at .2, with a default route to its router at .1.
// The router is a namespace of its own, netlab-…-r<i>, whose other device
// is the node's port on the switch, at Addr(i). Its nftables rules are a
// home router's:
//
//   - connections from the LAN leave masqueraded as Addr(i) (Linux keeps
//     the source port when it is free, as most routers do);
//   - from the switch only the answers of those connections come back in,
//     and new connections to HTTPPort, forwarded to the node (a port the
//     operator opened for its API, which the harness calls); anything
//     else is dropped, in silence, as a firewall does;
//   - a set of switch addresses the router refuses to exchange packets
//     with (Block), for tests that must keep a node from reaching another
//     directly.

// lanDev is the device on both ends of a NAT node's LAN.
const lanDev = "lan0"

// lanAddr is host h of node i's LAN.
func lanAddr(i int, h byte) netip.Addr {
	return netip.AddrFrom4([4]byte{192, 168, byte(i + 1), h})
}

// natUnsupported says why this machine cannot put nodes behind NAT, or "".
func natUnsupported() string {
	if _, err := exec.LookPath("nft"); err != nil {
		return "NAT needs the nft command (Debian package nftables)"
	}
	return ""
}

// Router returns the name of node i's router namespace.
func (l *Lab) Router(i int) string { return fmt.Sprintf("%s-r%d", l.prefix, i) }

// addRouter creates node i's router namespace and the LAN between it and
// node i's namespace ns, and returns the router.
func (l *Lab) addRouter(ctx context.Context, i int, ns *netns) (*netns, error) {
	r, err := addNetns(ctx, l.Router(i))
	if err != nil {
		return nil, err
	}
	l.routers[i] = r
	if err := r.disableIPv6(); err != nil {
		l.t.Logf("netlab: namespace %s keeps IPv6: %v", r.name, err)
	}
	node, router := lanAddr(i, 2).String(), lanAddr(i, 1).String()
	for _, args := range [][]string{
		{"-n", r.name, "link", "set", "lo", "up"},
		{"link", "add", lanDev, "netns", ns.name, "type", "veth", "peer", "name", lanDev, "netns", r.name},
		{"-n", ns.name, "addr", "add", node + "/24", "dev", lanDev},
		{"-n", ns.name, "link", "set", lanDev, "up"},
		{"-n", ns.name, "route", "add", "default", "via", router},
		{"-n", r.name, "addr", "add", router + "/24", "dev", lanDev},
		{"-n", r.name, "link", "set", lanDev, "up"},
	} {
		if err := ip(ctx, args...); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// masquerade turns on forwarding in node i's router and loads its rules.
func (l *Lab) masquerade(ctx context.Context, i int) error {
	if err := l.routers[i].run(func() error {
		return writeSysctl("/proc/sys/net/ipv4/ip_forward", "1")
	}); err != nil {
		return err
	}
	rules := fmt.Sprintf(`table ip netlab {
	set blocked { type ipv4_addr; }
	chain pre {
		type nat hook prerouting priority dstnat;
		iifname %[1]q tcp dport %[3]d dnat to %[4]s
	}
	chain post {
		type nat hook postrouting priority srcnat;
		oifname %[1]q masquerade
	}
	chain through {
		type filter hook forward priority filter; policy drop;
		ip saddr @blocked drop
		ip daddr @blocked drop
		ct state established,related accept
		iifname %[2]q accept
		ct status dnat accept
	}
	chain in {
		type filter hook input priority filter; policy accept;
		iifname %[1]q ct state established,related accept
		iifname %[1]q drop
	}
}
`, tapName, lanDev, HTTPPort, lanAddr(i, 2))
	return l.nft(ctx, i, rules)
}

// nft loads rules into node i's router.
func (l *Lab) nft(ctx context.Context, i int, rules string) error {
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", l.Router(i), "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("netlab: nft in %s: %w: %s\n%s", l.Router(i), err, bytes.TrimSpace(out), rules)
	}
	return nil
}

// Block makes node i's router drop every packet to and from the switch
// addresses of nodes others, and only those (none: no block), as a
// firewall between them would: connections between them die, and new
// ones time out. Node i must be behind NAT.
func (l *Lab) Block(i int, others ...int) {
	l.t.Helper()
	if i < 0 || i >= len(l.nat) || !l.nat[i] {
		l.t.Fatalf("netlab: Block: node %d is not behind NAT", i)
	}
	rules := "flush set ip netlab blocked\n"
	if len(others) > 0 {
		var addrs []string
		for _, o := range others {
			addrs = append(addrs, l.Addr(o).String())
		}
		rules += fmt.Sprintf("add element ip netlab blocked { %s }\n", strings.Join(addrs, ", "))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.nft(ctx, i, rules); err != nil {
		l.t.Fatal(err)
	}
	l.t.Logf("netlab: %s node %d's router blocks nodes %v", time.Now().Format("15:04:05.000"), i, others)
}

// writeSysctl writes value to the sysctl file f of the calling thread's
// network namespace.
func writeSysctl(f, value string) error {
	if err := os.WriteFile(f, []byte(value+"\n"), 0o644); err != nil {
		return fmt.Errorf("netlab: %w", err)
	}
	return nil
}
