package httpserve

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Bounds of the connections every server Serve runs holds open: at most
// MaxConns in all, and at most MaxConnsPerAddress from one address other
// than loopback. A connection is a socket, a goroutine and its buffers,
// held for up to IdleTimeout between requests and for as long as a
// stream lasts; without these a client that opens them faster than the
// timeouts close them takes the server's file descriptors and memory
// from everyone. Loopback is the operator's own clients, the benchmarks
// and a reverse proxy on the host, which carries every user's
// connections: it is bounded by MaxConns alone (the chat benchmark holds
// 10,000 event streams; a node serves 20,000). MaxConnsPerAddress is far
// above what one client's SDK opens (s5cmd's 256 workers, the AWS CLI's
// 10) and a node's 16 event streams per address.
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

// connLimit is a listener that holds at most total connections, and
// perAddr of them from one address other than loopback.
type connLimit struct {
	net.Listener
	total, perAddr int
	log            *slog.Logger
	// spared tells the addresses bounded by total alone: loopback.
	spared func(host string) bool

	mu       sync.Mutex
	all      int
	by       map[string]int
	lastWarn time.Time
}

// LimitConns bounds ln's connections as Serve does (MaxConns,
// MaxConnsPerAddress), for a listener that serves some connections
// itself before Serve's server sees the rest (the CDN edge's fast path).
func LimitConns(ln net.Listener, log *slog.Logger) net.Listener {
	return limitConns(ln, MaxConns, MaxConnsPerAddress, log)
}

func limitConns(ln net.Listener, total, perAddr int, log *slog.Logger) *connLimit {
	return &connLimit{Listener: ln, total: total, perAddr: perAddr, log: log, spared: isLoopback, by: map[string]int{}}
}

// Accept returns the next connection within the bounds; one past them is
// answered 503 and closed here, and the next is waited for.
func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := addressOf(c.RemoteAddr())
		if l.admit(host) {
			return &limitedConn{Conn: c, l: l, host: host}, nil
		}
		// A fresh socket's buffer takes the answer at once; the deadline
		// keeps a refusal from ever holding up the next Accept.
		c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		c.Write(refusal)
		c.Close()
	}
}

func (l *connLimit) admit(host string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	full := l.all >= l.total
	if !full && l.by[host] >= l.perAddr {
		full = !l.spared(host)
	}
	if full {
		if now := time.Now(); now.Sub(l.lastWarn) >= time.Minute {
			l.lastWarn = now
			l.log.Warn("refusing connections past the server's bounds (logged once a minute)", "remote", host,
				"from_address", l.by[host], "open", l.all, "max_per_address", l.perAddr, "max", l.total)
		}
		return false
	}
	l.by[host]++
	l.all++
	return true
}

func (l *connLimit) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by[host]--; l.by[host] <= 0 {
		delete(l.by, host)
	}
	l.all--
}

// open is how many connections are held, in all and from how many
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
	host string
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.release(c.host) })
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

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// addressOf is a remote address's IP, as the bounds count it.
func addressOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
