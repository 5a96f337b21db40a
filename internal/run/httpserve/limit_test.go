package httpserve

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// limitedServer serves h on a loopback listener bounded by total and
// perAddr, sparing what spared does (none: a test on loopback counts it
// like any address).
func limitedServer(t *testing.T, total, perAddr int, spared func(net.IP) bool, h http.Handler) (*connLimit, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := limitConns(ln, total, perAddr, slog.New(slog.DiscardHandler), spared)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l, ln.Addr().String()
}

func none(net.IP) bool { return false }

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

// get sends one request on a connection of its own and returns the
// status line's code and the body.
func get(t *testing.T, addr string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return roundTrip(t, c)
}

func roundTrip(t *testing.T, c net.Conn) (int, string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// hold opens n connections that each have had a request answered, so
// that the server holds them (idle, kept alive).
func hold(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var cs []net.Conn
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if code, _ := roundTrip(t, c); code != http.StatusOK {
			t.Fatalf("a held connection's request: %d", code)
		}
		cs = append(cs, c)
	}
	return cs
}

// waitOpen waits for the limit to count want connections (a closed
// one is uncounted once the server sees it close).
func waitOpen(t *testing.T, l *connLimit, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if all, _ := l.open(); all == want {
			return
		}
		if time.Now().After(deadline) {
			all, addrs := l.open()
			t.Fatalf("the server counts %d connections of %d addresses, want %d", all, addrs, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestConnLimitPerAddress: an address holds perAddr connections; the
// next is answered 503 with Retry-After and closed, and nothing of it
// stays counted; once one closes, a new one is served.
func TestConnLimitPerAddress(t *testing.T) {
	l, addr := limitedServer(t, 100, 2, none, ok)
	held := hold(t, addr, 2)
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	// A client that has sent its request, and part of a body, reads the
	// answer (the refusal half-closes and drains, so that unread bytes
	// do not turn the close into a reset that could overtake it).
	io.WriteString(c, "PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"+strings.Repeat("x", 30000))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the refused connection's answer: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "10" || !strings.Contains(string(body), "too many connections") {
		t.Fatalf("the refused connection: %d %v %q", res.StatusCode, res.Header, body)
	}
	if int64(len(body)) != res.ContentLength {
		t.Fatalf("the refusal's body is %d bytes, its Content-Length %d", len(body), res.ContentLength)
	}
	waitOpen(t, l, 2)
	held[0].Close()
	waitOpen(t, l, 1)
	if code, body := get(t, addr); code != http.StatusOK || body != "ok" {
		t.Fatalf("after a close: %d %q", code, body)
	}
	waitOpen(t, l, 1)
}

// TestConnLimitTotal: the addresses not spared hold total connections
// together; a spared address still gets in, and is not counted.
func TestConnLimitTotal(t *testing.T) {
	var spare atomic.Bool
	l, addr := limitedServer(t, 5, 10, func(net.IP) bool { return spare.Load() }, ok)
	hold(t, addr, 5)
	waitOpen(t, l, 5)
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if res, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("one past the server's bound: %v %v", res, err)
	}
	spare.Store(true)
	hold(t, addr, 3)
	waitOpen(t, l, 5)
}

func TestSpared(t *testing.T) {
	for _, tc := range []struct {
		ip    string
		spare bool
	}{
		{"127.0.0.1", true}, {"127.3.4.5", true}, {"::1", true},
		{"10.0.0.11", true}, {"172.16.0.1", true}, {"192.168.1.20", true}, {"fd00::5", true},
		{"169.254.0.1", true}, {"fe80::1", true},
		{"8.8.8.8", false}, {"100.64.0.1", false}, {"172.32.0.1", false}, {"2001:db8::1", false}, {"::ffff:8.8.8.8", false},
	} {
		if got := Spared(net.ParseIP(tc.ip)); got != tc.spare {
			t.Errorf("Spared(%s) = %v, want %v", tc.ip, got, tc.spare)
		}
	}
	if !Spared(nil) {
		t.Error("an address that is not IP is not spared")
	}
}

// TestSpare: the operator's networks are spared besides the built-in
// ones, IPv4 clients on IPv6 sockets included, and nothing else is.
func TestSpare(t *testing.T) {
	spare, err := ParseSpare([]string{"203.0.113.0/24", "198.51.100.7", "2001:db8:5::/48", "::ffff:192.0.2.0/120", "44.0.0.0/8", "2001:db9::/32"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ip    string
		spare bool
	}{
		{"203.0.113.1", true}, {"::ffff:203.0.113.200", true}, {"198.51.100.7", true}, {"2001:db8:5:ff::1", true},
		{"192.0.2.9", true}, {"127.0.0.1", true}, {"10.1.2.3", true},
		{"203.0.114.1", false}, {"198.51.100.8", false}, {"2001:db8:6::1", false}, {"8.8.8.8", false},
	} {
		if got := spare.Spares(net.ParseIP(tc.ip)); got != tc.spare {
			t.Errorf("Spares(%s) = %v, want %v", tc.ip, got, tc.spare)
		}
	}
	if !(Spare(nil)).Spares(net.ParseIP("192.168.0.1")) || (Spare(nil)).Spares(net.ParseIP("8.8.8.8")) {
		t.Error("the zero Spare does not spare what Spared does, and only that")
	}
	for _, bad := range []string{"", "example.com", "203.0.113.0/33", "1.2.3.4/", "2001:db8::/129",
		"0.0.0.0/0", "128.0.0.0/1", "203.0.0.0/7", "::/0", "2001:db8::/31", "::ffff:0.0.0.0/96"} {
		if _, err := ParseSpare([]string{bad}); err == nil {
			t.Errorf("ParseSpare(%q) took it", bad)
		}
	}
	// Through a listener: connections from a public address the
	// operator spares are not counted; from one it does not, they are.
	for _, tc := range []struct {
		spare       Spare
		hold, count int
	}{{spare, 5, 0}, {nil, 3, 3}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l := limitConns(publicPeers{ln}, 100, 3, slog.New(slog.DiscardHandler), tc.spare.Spares)
		srv := &http.Server{Handler: ok, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(l)
		hold(t, ln.Addr().String(), tc.hold) // past the bound of 3 when spared
		waitOpen(t, l, tc.count)
		srv.Close()
	}
}

// publicPeers is a listener whose connections say they come from
// 203.0.113.5, a public address, whatever their loopback peer is.
type publicPeers struct{ net.Listener }

func (l publicPeers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return publicConn{c}, nil
}

type publicConn struct{ net.Conn }

func (publicConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.ParseIP("203.0.113.5"), Port: 40000}
}

// TestAddressKey: IPv4 addresses count one by one (mapped into IPv6 or
// not), IPv6 ones by their /64.
func TestAddressKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"203.0.113.7", "::ffff:203.0.113.7"},
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff"},
	} {
		if ka, kb := AddressKey(net.ParseIP(tc.a)), AddressKey(net.ParseIP(tc.b)); ka != kb {
			t.Errorf("%s counts as %s, %s as %s: want one address", tc.a, ka, tc.b, kb)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"203.0.113.7", "203.0.113.8"},
		{"2001:db8:1:2::1", "2001:db8:1:3::1"},
	} {
		if ka, kb := AddressKey(net.ParseIP(tc.a)), AddressKey(net.ParseIP(tc.b)); ka == kb {
			t.Errorf("%s and %s both count as %s: want two addresses", tc.a, tc.b, ka)
		}
	}
	if ipOf(nil) != nil {
		t.Error("ipOf(nil) is not nil")
	}
}

// TestConnLimitHijacked: a connection a handler takes over counts until
// the handler closes it, and half-closes and resets as a TCP connection
// does, through the bound's wrapper.
func TestConnLimitHijacked(t *testing.T) {
	halfClosed := make(chan error, 1)
	l, addr := limitedServer(t, 10, 10, none, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			halfClosed <- err
			return
		}
		defer c.Close()
		buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\nbytes")
		buf.Flush()
		tc, ok := c.(interface {
			CloseWrite() error
			SetLinger(int) error
		})
		if !ok {
			halfClosed <- io.ErrUnexpectedEOF
			return
		}
		err = tc.CloseWrite()
		if err == nil {
			err = tc.SetLinger(0)
		}
		halfClosed <- err
		io.Copy(io.Discard, c) // until the client closes
	}))
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if err := <-halfClosed; err != nil {
		t.Fatalf("the hijacked connection's CloseWrite and SetLinger: %v", err)
	}
	// The half-close reaches the client: its reads end after the bytes.
	got, err := io.ReadAll(c)
	if err != nil || !strings.HasSuffix(string(got), "\r\n\r\nbytes") {
		t.Fatalf("the client read %q, %v", got, err)
	}
	waitOpen(t, l, 1)
	c.Close()
	waitOpen(t, l, 0)
}
