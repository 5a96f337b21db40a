package httpserve

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Bounds of the connections every server Serve runs holds open from the
// public internet: at most MaxConnsPerAddress from one address (an IPv4
// address, or an IPv6 /64, what one subscriber holds), and at most
// MaxConns from all of them together. A connection is a socket, a
// goroutine and its buffers, held for up to IdleTimeout between requests
// and for as long as a stream lasts; without these one client that opens
// them faster than the timeouts close them takes the server's file
// descriptors and memory from everyone. MaxConnsPerAddress is far above
// what one client's tools open (s5cmd's 256 workers, the AWS CLI's 10).
//
// Loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7) and
// link-local addresses are spared both bounds: they are the operator's
// own clients, health checks, benchmarks, and the reverse proxies and
// load balancers that carry every user's connections from one address
// (which should apply their own limits per client); so are the networks
// an operator names (Spare, for its proxies on public addresses). Being
// spared the total, they still get in while the internet's share is full.
const (
	MaxConns           = 32768
	MaxConnsPerAddress = 1024
)

// refusal is what a connection past a bound is told before it is closed:
// an HTTP answer, read by a client that has sent its request or is about
// to.
var refusal = func() []byte {
	const body = "too many connections from this address or to this server; retry later\n"
	return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"+
		"Retry-After: 10\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}()

// maxRefusing bounds the refused connections being closed gracefully at
// once (refuse); past it they are closed at once.
const maxRefusing = 256

// connLimit is a listener that holds at most total connections from
// addresses it does not spare, and perAddr of them from one.
type connLimit struct {
	net.Listener
	total, perAddr int
	log            *slog.Logger
	// spared tells the addresses bounded by neither (Spared).
	spared func(net.IP) bool

	mu       sync.Mutex
	all      int            // connections counted, from addresses not spared
	by       map[string]int // the same, by address
	lastWarn time.Time
	refusing chan struct{} // a slot per refusal being closed gracefully
}

// LimitConns bounds ln's connections as Serve does (MaxConns,
// MaxConnsPerAddress, sparing what spare does), for a listener that
// serves some connections itself before Serve's server sees the rest (the
// CDN edge's fast path).
func LimitConns(ln net.Listener, log *slog.Logger, spare Spare) net.Listener {
	return limitConns(ln, MaxConns, MaxConnsPerAddress, log, spare.Spares)
}

func limitConns(ln net.Listener, total, perAddr int, log *slog.Logger, spared func(net.IP) bool) *connLimit {
	return &connLimit{Listener: ln, total: total, perAddr: perAddr, log: log, spared: spared,
		by: map[string]int{}, refusing: make(chan struct{}, maxRefusing)}
}

// Spared tells whether connections from ip are spared the bounds whatever
// the operator says: loopback, private and link-local addresses, and an
// address that is not IP (a Unix socket's peer).
func Spared(ip net.IP) bool {
	return ip == nil || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast()
}

// Spare is the networks an operator spares the bounds per address besides
// those Spared spares: its reverse proxies and load balancers on public
// addresses (a CDN's edges in front of the API), which carry many users'
// connections from one address and should bound each user themselves.
// The zero Spare adds none.
type Spare []netip.Prefix

// Spares tells whether ip is spared: Spared, or in one of s's networks.
func (s Spare) Spares(ip net.IP) bool {
	if Spared(ip) {
		return true
	}
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return false
	}
	a = a.Unmap()
	for _, p := range s {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParseSpare reads a list of networks and addresses (192.0.2.0/24,
// 2001:db8::/48, 198.51.100.7) as an operator writes them; an address is
// a network of one. IPv4 written as IPv4-mapped IPv6 is taken as IPv4,
// which is how Spares compares it. A network wider than MinSpareBits4
// (IPv4) or MinSpareBits6 (IPv6) is refused: no fleet of proxies fills
// it, and sparing it would lift the bounds per address from much of the
// internet (a 0.0.0.0/0 typed for "my proxies" lifts them from all of it).
func ParseSpare(list []string) (Spare, error) {
	var s Spare
	for _, c := range list {
		p, err := ParseNetwork(c)
		if err != nil {
			return nil, err
		}
		if min := spareMinBits(p); p.Bits() < min {
			return nil, fmt.Errorf("%q: a network wider than /%d is no set of proxies; sparing it would lift the bounds per address from all of its %s addresses (name your proxies' own networks)",
				c, min, spareSize(p))
		}
		s = append(s, p)
	}
	return s, nil
}

// The widest networks ParseSpare takes: an IPv4 /8 (16.7 million
// addresses, more than any one operator's proxies) and an IPv6 /32 (a
// regional registry's usual allocation to a whole provider).
const (
	MinSpareBits4 = 8
	MinSpareBits6 = 32
)

func spareMinBits(p netip.Prefix) int {
	if p.Addr().Is4() {
		return MinSpareBits4
	}
	return MinSpareBits6
}

// spareSize says how many addresses p holds, as a power of two.
func spareSize(p netip.Prefix) string {
	return fmt.Sprintf("2^%d", p.Addr().BitLen()-p.Bits())
}

// ParseNetwork reads one network (CIDR) or address, as ParseSpare does.
func ParseNetwork(c string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(c)
	if err != nil {
		a, aerr := netip.ParseAddr(c)
		if aerr != nil {
			return netip.Prefix{}, fmt.Errorf("%q: want an address or a network such as 192.0.2.0/24", c)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		// ::ffff:192.0.2.53 is how an IPv4 client looks on an IPv6
		// socket; addresses are compared unmapped.
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// Accept returns the next connection within the bounds; one past them is
// answered 503 and closed (refuse), and the next is waited for.
func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := ipOf(c.RemoteAddr())
		if l.spared(ip) {
			return c, nil
		}
		key := AddressKey(ip)
		if l.admit(key) {
			return &limitedConn{Conn: c, l: l, key: key}, nil
		}
		l.refuse(c)
	}
}

func (l *connLimit) admit(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.all < l.total && l.by[key] < l.perAddr {
		l.by[key]++
		l.all++
		return true
	}
	if now := time.Now(); now.Sub(l.lastWarn) >= time.Minute {
		l.lastWarn = now
		l.log.Warn("refusing connections past the server's bounds (logged once a minute)", "remote", key,
			"from_address", l.by[key], "open", l.all, "max_per_address", l.perAddr, "max", l.total)
	}
	return false
}

func (l *connLimit) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by[key]--; l.by[key] <= 0 {
		delete(l.by, key)
	}
	l.all--
}

// refuse answers c 503 and closes it. Closing a socket with a request
// still unread in it makes the kernel send a reset, which can reach the
// client before the answer does, so the answer is followed by a
// half-close and whatever the client sends is read for up to a second
// before the close, off the accepting goroutine; past maxRefusing such
// refusals at once, c is closed at once.
func (l *connLimit) refuse(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)) // a fresh socket's buffer takes it at once
	c.Write(refusal)
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// open is how many connections are counted, in all and from how many
// addresses.
func (l *connLimit) open() (all, addrs int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all, len(l.by)
}

// limitedConn gives its place back when it is closed, once, whoever
// closes it (the server, or a handler that took it over).
type limitedConn struct {
	net.Conn
	l    *connLimit
	key  string
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.release(c.key) })
	return c.Conn.Close()
}

// ReadFrom keeps the TCP connection's own (sendfile, splice), which
// net/http uses for a response's body when the connection has one.
func (c *limitedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// CloseWrite and SetLinger reach the TCP connection underneath, for a
// handler that takes the connection over (a node's tunnels half-close
// and reset theirs).
func (c *limitedConn) CloseWrite() error {
	if t, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return t.CloseWrite()
	}
	return errors.ErrUnsupported
}

func (c *limitedConn) SetLinger(sec int) error {
	if t, ok := c.Conn.(interface{ SetLinger(int) error }); ok {
		return t.SetLinger(sec)
	}
	return errors.ErrUnsupported
}

// ipOf is a remote address's IP, nil when it has none.
func ipOf(a net.Addr) net.IP {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP
	case nil:
		return nil
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return nil
	}
	return net.ParseIP(host)
}

// AddressKey is what a bound per address counts ip as: an IPv4 address,
// or an IPv6 address's /64.
func AddressKey(ip net.IP) string {
	if ip4 := ip.To4(); ip4 != nil {
		return ip4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
