package agent

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHandshakeSkipsLeftovers: a guest that took a stale hello (an
// earlier host attempt's) and started a session on it, after bytes of an
// earlier session, still serves the host's next attempts: each attempt is
// a new connection to the port, as package qemu makes them, and one soon
// opens a session that works.
func TestHandshakeSkipsLeftovers(t *testing.T) {
	p := newPort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); serveSessions(ctx, p.open) }()
	defer func() { cancel(); p.close(); <-done }()

	// Leftovers: bytes of an earlier session, then an earlier attempt's
	// hello, which the guest answers and starts a session on.
	for p.guestEnd() == nil { // the guest has opened its port
		time.Sleep(time.Millisecond)
	}
	stale := p.dial()
	io.WriteString(stale, "\x00\x01\x00\x02junk of an earlier session"+helloTag+"00112233445566aa\n")
	var cl *Client
	for attempt := 1; attempt <= 10 && cl == nil; attempt++ {
		conn := p.dial()
		actx, acancel := context.WithTimeout(ctx, 500*time.Millisecond)
		c, err := HostHandshake(actx, conn)
		if err == nil {
			var cerr error
			if cl, cerr = NewClient(c); cerr != nil {
				t.Fatal(cerr)
			}
			if err = cl.Ping(actx); err != nil {
				cl.Close()
				cl = nil
			}
		}
		acancel()
		if cl == nil {
			conn.Close()
		}
		t.Logf("attempt %d: %v", attempt, err)
	}
	if cl == nil {
		t.Fatal("no session after 10 attempts")
	}
	defer cl.Close()
	res, err := cl.Exec(ctx, []string{"echo", "hi"}, nil, 5*time.Second)
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "hi" {
		t.Fatalf("exec over the new session: %+v, %v", res, err)
	}
}

// port stands for a virtio-serial port behind QEMU's socket: the host
// connects anew for each attempt (the latest connection is the one the
// guest's bytes go to), the guest closes and opens its end; what is
// written to an end nobody holds is lost, as bytes before the guest
// opens its port are.
type port struct {
	mu    sync.Mutex
	host  net.Conn // the port's side of the latest host connection
	guest net.Conn // the port's side of the guest's open end
	conns []net.Conn
}

func newPort(t *testing.T) *port { return &port{} }

func (p *port) track(c ...net.Conn) {
	p.mu.Lock()
	p.conns = append(p.conns, c...)
	p.mu.Unlock()
}

func (p *port) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// relay copies from one end to whichever the port routes to now.
func (p *port) relay(from net.Conn, to func() net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := from.Read(buf)
		if err != nil {
			return
		}
		if c := to(); c != nil {
			c.Write(buf[:n])
		}
	}
}

// dial opens a host connection. Its writes reach the guest's open end
// in the order they are made, as a QEMU socket's do: an earlier
// connection's bytes never arrive after a later one's.
func (p *port) dial() net.Conn {
	h, far := net.Pipe()
	p.track(h, far)
	p.mu.Lock()
	p.host = far
	p.mu.Unlock()
	return hostEnd{h, p}
}

// hostEnd is a host connection: reads come from the port, writes go
// straight to the guest's open end, or are lost when nobody holds it.
type hostEnd struct {
	net.Conn
	p *port
}

func (h hostEnd) Write(b []byte) (int, error) {
	if g := h.p.guestEnd(); g != nil {
		g.Write(b) // an end the guest closed loses the bytes
	}
	return len(b), nil
}

func (p *port) guestEnd() net.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.guest
}

func (p *port) open() (net.Conn, error) {
	g, far := net.Pipe()
	p.track(g, far)
	p.mu.Lock()
	p.guest = far
	p.mu.Unlock()
	go p.relay(far, func() net.Conn { p.mu.Lock(); defer p.mu.Unlock(); return p.host })
	return g, nil
}

// FuzzHunt: the hunt for a tagged line returns the rest of a line that
// holds the tag, or an error, for any bytes a peer may send.
func FuzzHunt(f *testing.F) {
	f.Add([]byte("junk" + readyTag + "0011223344556677\n"))
	f.Add([]byte(strings.Repeat("x", 5000) + "\n" + readyTag + "z\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := hunt(bufio.NewReaderSize(strings.NewReader(string(data)), 4096), readyTag)
		if err != nil {
			return
		}
		if strings.Contains(got, "\n") || !strings.Contains(string(data), readyTag+got+"\n") {
			t.Fatalf("hunt returned %q from %q", got, data)
		}
	})
}
