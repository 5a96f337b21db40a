package netlab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// Monitor is the index that names the monitor namespace where methods
// take a node index.
const Monitor = -1

// HTTPPort is the port Cluster nodes serve their API on.
const HTTPPort = 8080

const (
	// setupTimeout bounds creating or deleting a lab's namespaces.
	setupTimeout = time.Minute
	// stopGrace is how long a process has to stop after SIGTERM at cleanup.
	stopGrace = 15 * time.Second
	// tapName is the device of every namespace.
	tapName = "tap0"
)

// Options configure a Lab.
type Options struct {
	// Nodes is the number of node namespaces, 1 to 250. Default 5.
	Nodes int
	// NAT are the nodes behind a router of their own that masquerades
	// them, as a home or office router does (see nat.go). Needs nft.
	NAT []int
	// Public puts the switch on 11.77.0.0/24 instead of 10.77.0.0/24:
	// addresses that libp2p counts as public, so that its AutoNAT probes
	// them (it never dials back a private address). The lab's namespaces
	// have no route beyond the switch, so these reach nothing else.
	Public bool
}

// Lab is a set of network namespaces on one switch: Nodes() node
// namespaces, node i at 10.77.0.(i+1)/24, and a monitor namespace at
// 10.77.0.254/24 (11.77.0.x with Options.Public). A node behind NAT has
// its router at that address instead, and a LAN of its own (see nat.go).
// Its methods are safe for concurrent use; those that take a
// testing.TB's Fatal must be called from the test's goroutine.
type Lab struct {
	t       testing.TB
	prefix  string
	net     byte   // the switch's first octet: 10, or 11 when public
	nat     []bool // by node: behind a router of its own
	nodes   []*netns
	routers []*netns // by node: its router, or nil
	mon     *netns
	sw      *Switch
	client  *http.Client
	logDir  string

	mu      sync.Mutex
	procs   []*Proc
	closing bool     // no more processes start
	noise   []string // log lines containing one of these are left out of tails

	closeOnce sync.Once
}

// New creates a lab of nodes node namespaces and a monitor, removed by
// t's cleanup. It skips t when not run as root or without /dev/net/tun,
// and fails it instead when the environment has CI=true.
func New(t testing.TB, nodes int) *Lab {
	t.Helper()
	return NewWithOptions(t, Options{Nodes: nodes})
}

// NewWithOptions is New with Options.
func NewWithOptions(t testing.TB, opts Options) *Lab {
	t.Helper()
	if opts.Nodes == 0 {
		opts.Nodes = 5
	}
	if opts.Nodes < 1 || opts.Nodes > 250 {
		t.Fatalf("netlab: %d nodes, want 1 to 250", opts.Nodes)
	}
	tooltest.NeedRoot(t, "netlab (network namespaces and TAP devices)")
	if reason := unsupported(); reason != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("netlab: %s (CI=true: not skipping)", reason)
		}
		t.Skipf("netlab: %s", reason)
	}
	var b [3]byte
	rand.Read(b[:])
	l := &Lab{t: t, prefix: "netlab-" + hex.EncodeToString(b[:]), logDir: t.TempDir(), net: switchNet(opts.Public), nat: make([]bool, opts.Nodes)}
	for _, i := range opts.NAT {
		if i < 0 || i >= opts.Nodes {
			t.Fatalf("netlab: NAT node %d out of range 0 to %d", i, opts.Nodes-1)
		}
		l.nat[i] = true
	}
	if len(opts.NAT) > 0 {
		if reason := natUnsupported(); reason != "" {
			if os.Getenv("CI") == "true" {
				t.Fatalf("netlab: %s (CI=true: not skipping)", reason)
			}
			t.Skipf("netlab: %s", reason)
		}
	}
	t.Cleanup(l.close)
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := l.setup(ctx, opts.Nodes); err != nil {
		t.Fatal(err)
	}
	t.Logf("netlab: lab %s: %d nodes at %d.77.0.1-%d (behind NAT: %v), monitor at %s", l.prefix, opts.Nodes, l.net, opts.Nodes, opts.NAT, l.Addr(Monitor))
	return l
}

// unsupported says why this machine cannot run a lab, or "".
func unsupported() string {
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return "needs /dev/net/tun: " + err.Error()
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "needs the ip command (iproute2)"
	}
	return ""
}

// setup creates the namespaces, their devices and the switch.
func (l *Lab) setup(ctx context.Context, nodes int) error {
	var ports []io.ReadWriteCloser
	closePorts := func() {
		for _, p := range ports {
			p.Close()
		}
	}
	for i := 0; i <= nodes; i++ {
		name, addr := l.Namespace(i), l.Addr(i)
		if i == nodes {
			name, addr = l.Namespace(Monitor), l.Addr(Monitor)
		}
		ns, err := addNetns(ctx, name)
		if err != nil {
			closePorts()
			return err
		}
		if i == nodes {
			l.mon = ns
		} else {
			l.nodes = append(l.nodes, ns)
			l.routers = append(l.routers, nil)
		}
		if err := ip(ctx, "-n", name, "link", "set", "lo", "up"); err != nil {
			closePorts()
			return err
		}
		if err := ns.disableIPv6(); err != nil {
			l.t.Logf("netlab: namespace %s keeps IPv6: %v", name, err)
		}
		if i < nodes && l.nat[i] {
			// The node's LAN; its router takes the switch's port.
			r, err := l.addRouter(ctx, i, ns)
			if err != nil {
				closePorts()
				return err
			}
			ns, name = r, r.name
		}
		tap, err := ns.openTap(tapName)
		if err != nil {
			closePorts()
			return err
		}
		ports = append(ports, tap)
		// A fixed MAC per namespace makes captures and the switch's table
		// readable: 02:77:00:00:00:<last byte of the address>.
		mac := fmt.Sprintf("02:77:00:00:00:%02x", addr.As4()[3])
		for _, args := range [][]string{
			{"-n", name, "link", "set", tapName, "address", mac},
			{"-n", name, "addr", "add", addr.String() + "/24", "dev", tapName},
			{"-n", name, "link", "set", tapName, "up"},
		} {
			if err := ip(ctx, args...); err != nil {
				closePorts()
				return err
			}
		}
		if i < nodes && l.nat[i] {
			if err := l.masquerade(ctx, i); err != nil {
				closePorts()
				return err
			}
		}
	}
	l.sw = NewSwitch(ports, nodes)
	l.client = &http.Client{
		Transport: &http.Transport{
			DialContext:           l.DialContext,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       30 * time.Second,
			ResponseHeaderTimeout: 30 * time.Second,
		},
		Timeout: 2 * time.Minute,
	}
	return nil
}

// close stops every process, prints the tail of their logs if the test
// failed, closes the switch and deletes the namespaces.
func (l *Lab) close() {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closing = true
		procs := append([]*Proc(nil), l.procs...)
		l.mu.Unlock()
		var wg sync.WaitGroup
		for _, p := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
				defer cancel()
				if err := p.Stop(ctx); err != nil {
					l.t.Logf("netlab: stop %s: %v", p.Name(), err)
				}
			}()
		}
		wg.Wait()
		if l.t.Failed() {
			seen := map[string]bool{}
			for _, p := range procs {
				if !seen[p.LogPath()] {
					seen[p.LogPath()] = true
					l.t.Logf("netlab: last lines of %s (%s):\n%s", p.Name(), p.LogPath(), p.TailFunc(40, l.notNoise))
				}
			}
		}
		if l.client != nil {
			l.client.CloseIdleConnections()
		}
		if l.sw != nil {
			l.t.Logf("netlab: lab %s switch: %s", l.prefix, l.sw.Stats())
			if err := l.sw.Close(); err != nil {
				l.t.Errorf("netlab: %v", err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		for _, ns := range append(append(l.nodes, l.routers...), l.mon) {
			if ns == nil {
				continue
			}
			if err := ns.del(ctx); err != nil {
				l.t.Errorf("netlab: %v", err)
			}
		}
	})
}

// QuietTails leaves log lines containing any of substrings (such as access
// logs) out of the log tails printed when the test fails.
func (l *Lab) QuietTails(substrings ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.noise = append(l.noise, substrings...)
}

func (l *Lab) notNoise(line string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.noise {
		if strings.Contains(line, n) {
			return false
		}
	}
	return true
}

// Nodes returns the number of node namespaces.
func (l *Lab) Nodes() int { return len(l.nodes) }

// Addr returns the address of node i on the switch, or of the monitor for
// Monitor. For a node behind NAT it is its router's: the address the
// others see its connections come from, and reach its API at.
func (l *Lab) Addr(i int) netip.Addr {
	if i == Monitor {
		return netip.AddrFrom4([4]byte{l.net, 77, 0, 254})
	}
	return netip.AddrFrom4([4]byte{l.net, 77, 0, byte(i + 1)})
}

// switchNet is the first octet of the switch's addresses: 11 where they
// must count as public (Options.Public), else 10.
func switchNet(public bool) byte {
	if public {
		return 11
	}
	return 10
}

// monitorAddr is the monitor's address in a lab whose switch is public
// or not: known before the lab is made, for flags that name it.
func monitorAddr(public bool) netip.Addr {
	return netip.AddrFrom4([4]byte{switchNet(public), 77, 0, 254})
}

// LocalAddr returns the address node i's own devices have: Addr(i), or
// for a node behind NAT its address on its LAN, which only it and its
// router can reach. A node's process listens there.
func (l *Lab) LocalAddr(i int) netip.Addr {
	if i != Monitor && i >= 0 && i < len(l.nat) && l.nat[i] {
		return lanAddr(i, 2)
	}
	return l.Addr(i)
}

// URL returns the base URL of node i's HTTP API on HTTPPort.
func (l *Lab) URL(i int) string {
	return "http://" + netip.AddrPortFrom(l.Addr(i), HTTPPort).String()
}

// Namespace returns the name of node i's namespace, or of the monitor's
// for Monitor: netlab-<6 random hex digits>-<i>, or -m for the monitor.
func (l *Lab) Namespace(i int) string {
	if i == Monitor {
		return l.prefix + "-m"
	}
	return fmt.Sprintf("%s-%d", l.prefix, i)
}

// Command returns a command that runs name with args in node i's
// namespace (or the monitor's, for Monitor), through `ip netns exec`,
// killed when ctx ends.
func (l *Lab) Command(ctx context.Context, i int, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", l.Namespace(i), name}, args...)...)
}

// MonitorCommand is Command in the monitor namespace.
func (l *Lab) MonitorCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	return l.Command(ctx, Monitor, name, args...)
}

// DialContext dials addr from the monitor namespace: the socket is
// created on a thread that entered it.
func (l *Lab) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := l.mon.run(func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("netlab: dial %s from the monitor: %w", addr, err)
	}
	return c, nil
}

// Listen listens on addr inside node i's namespace (or the monitor's).
func (l *Lab) Listen(i int, network, addr string) (net.Listener, error) {
	ns, err := l.ns(i)
	if err != nil {
		return nil, err
	}
	var ln net.Listener
	err = ns.run(func() error {
		var err error
		ln, err = net.Listen(network, addr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("netlab: listen on %s in %s: %w", addr, ns.name, err)
	}
	return ln, nil
}

// Dial dials addr from inside node i's namespace (or the monitor's).
func (l *Lab) Dial(ctx context.Context, i int, network, addr string) (net.Conn, error) {
	ns, err := l.ns(i)
	if err != nil {
		return nil, err
	}
	var c net.Conn
	err = ns.run(func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("netlab: dial %s from %s: %w", addr, ns.name, err)
	}
	return c, nil
}

func (l *Lab) ns(i int) (*netns, error) {
	if i == Monitor {
		return l.mon, nil
	}
	if i < 0 || i >= len(l.nodes) {
		return nil, fmt.Errorf("netlab: node %d out of range 0 to %d", i, len(l.nodes)-1)
	}
	return l.nodes[i], nil
}

// HTTPClient returns a client whose connections are dialled from the
// monitor namespace: it reaches every node at URL(i). A request is bounded
// by its context and, at most, by two minutes.
func (l *Lab) HTTPClient() *http.Client { return l.client }

// Partition cuts the links between nodes of different groups (nodes in no
// group are isolated) and mends the links within each group.
func (l *Lab) Partition(groups ...[]int) {
	l.t.Helper()
	if err := l.sw.Partition(groups...); err != nil {
		l.t.Fatal(err)
	}
	l.t.Logf("netlab: %s partition %s", time.Now().Format("15:04:05.000"), formatGroups(groups))
}

// Heal mends every cut link.
func (l *Lab) Heal() {
	l.t.Helper()
	l.sw.Heal()
	l.t.Logf("netlab: %s healed", time.Now().Format("15:04:05.000"))
}

// Impair delays every frame between two nodes by delay ± jitter and drops
// it with probability loss. The monitor's links stay unimpaired.
func (l *Lab) Impair(delay, jitter time.Duration, loss float64) {
	l.t.Helper()
	if err := l.sw.Impair(delay, jitter, loss); err != nil {
		l.t.Fatal(err)
	}
	l.t.Logf("netlab: %s impaired: %s", time.Now().Format("15:04:05.000"), Link{Delay: delay, Jitter: jitter, Loss: loss})
}

// ClearImpairment removes every delay and loss (cuts stay).
func (l *Lab) ClearImpairment() {
	l.t.Helper()
	l.sw.Impair(0, 0, 0)
	l.t.Logf("netlab: %s impairment cleared", time.Now().Format("15:04:05.000"))
}

// SetLink sets the link from node src to node dst, one way.
func (l *Lab) SetLink(src, dst int, link Link) {
	l.t.Helper()
	if err := l.sw.SetLink(src, dst, link); err != nil {
		l.t.Fatal(err)
	}
}

// Stats returns the switch's counters.
func (l *Lab) Stats() Stats { return l.sw.Stats() }

// SetLinkUp takes node i's device down or up inside its namespace (`ip
// link set tap0 down|up`), as unplugging and plugging back its cable
// would: the node's own kernel sees the link go, drops its routes through
// it and fails sends. Bringing it up restores the address if it is gone.
func (l *Lab) SetLinkUp(ctx context.Context, i int, up bool) error {
	l.t.Helper()
	ns, err := l.ns(i)
	if err != nil {
		return err
	}
	if i != Monitor && l.nat[i] {
		ns = l.routers[i] // its cable is the router's: the node's own link stays up
	}
	state := "down"
	if up {
		state = "up"
	}
	if err := ip(ctx, "-n", ns.name, "link", "set", tapName, state); err != nil {
		return err
	}
	if up {
		out, err := ipOutput(ctx, "-n", ns.name, "-4", "addr", "show", "dev", tapName)
		if err != nil {
			return err
		}
		if !strings.Contains(out, " "+l.Addr(i).String()+"/24 ") {
			if err := ip(ctx, "-n", ns.name, "addr", "add", l.Addr(i).String()+"/24", "dev", tapName); err != nil {
				return err
			}
		}
	}
	l.t.Logf("netlab: %s node %d link %s", time.Now().Format("15:04:05.000"), i, state)
	return nil
}

// formatGroups writes groups as 0,1,2 | 3,4.
func formatGroups(groups [][]int) string {
	var parts []string
	for _, g := range groups {
		var s []string
		for _, n := range g {
			s = append(s, fmt.Sprint(n))
		}
		parts = append(parts, strings.Join(s, ","))
	}
	return strings.Join(parts, " | ")
}

// errStopped is returned by Proc methods once the lab closed.
var errStopped = errors.New("netlab: lab closed")
