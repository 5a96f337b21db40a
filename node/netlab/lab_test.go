package netlab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveEcho echoes lines on ln until the test ends.
func serveEcho(t *testing.T, ln net.Listener) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				io.Copy(c, c)
			}()
		}
	}()
}

// echo dials addr from node i, sends a line and returns the round trip.
func echo(ctx context.Context, l *Lab, i int, addr string) (time.Duration, error) {
	c, err := l.Dial(ctx, i, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if d, ok := ctx.Deadline(); ok {
		c.SetDeadline(d)
	}
	began := time.Now()
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return 0, err
	}
	if line != "ping\n" {
		return 0, fmt.Errorf("echo answered %q", line)
	}
	return time.Since(began), nil
}

func TestLab(t *testing.T) {
	l := New(t, 3)
	// An HTTP server in node 0's namespace, for the monitor's client.
	ln, err := l.Listen(0, "tcp", fmt.Sprintf("%s:%d", l.Addr(0), HTTPPort))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "node 0 saw %s", r.RemoteAddr)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	// An echo server in node 2's namespace, for the other nodes.
	eln, err := l.Listen(2, "tcp", l.Addr(2).String()+":9000")
	if err != nil {
		t.Fatal(err)
	}
	serveEcho(t, eln)
	echoAddr := l.Addr(2).String() + ":9000"

	get := func(ctx context.Context) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, l.URL(0)+"/", nil)
		resp, err := l.HTTPClient().Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	within := func(d time.Duration) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		t.Cleanup(cancel)
		return ctx
	}

	body, err := get(within(5 * time.Second))
	if err != nil || !strings.HasPrefix(body, "node 0 saw 10.77.0.254:") {
		t.Fatalf("GET from the monitor: %q, %v; want it seen from 10.77.0.254", body, err)
	}
	if _, err := echo(within(5*time.Second), l, 0, echoAddr); err != nil {
		t.Fatalf("echo from node 0 to node 2: %v", err)
	}

	l.Partition([]int{0}, []int{1, 2})
	if _, err := echo(within(time.Second), l, 0, echoAddr); err == nil {
		t.Errorf("echo from node 0 to node 2 across a cut: got through")
	}
	if _, err := echo(within(5*time.Second), l, 1, echoAddr); err != nil {
		t.Errorf("echo from node 1 to node 2 within a group: %v", err)
	}
	if _, err := get(within(5 * time.Second)); err != nil {
		t.Errorf("GET from the monitor to a cut node: %v", err)
	}
	l.Heal()
	if _, err := echo(within(5*time.Second), l, 0, echoAddr); err != nil {
		t.Errorf("echo after the heal: %v", err)
	}

	l.Impair(100*time.Millisecond, 0, 0)
	if rtt, err := echo(within(5*time.Second), l, 1, echoAddr); err != nil || rtt < 200*time.Millisecond {
		t.Errorf("echo round trip under 100 ms each way: %s, %v; want at least 200ms", rtt, err)
	}
	began := time.Now()
	if _, err := get(within(5 * time.Second)); err != nil || time.Since(began) > 150*time.Millisecond {
		t.Errorf("GET from the monitor under impairment took %s (%v); want the monitor unimpaired", time.Since(began), err)
	}
	l.ClearImpairment()

	// A link taken down in the node's namespace, then up again.
	ctx := within(30 * time.Second)
	if err := l.SetLinkUp(ctx, 0, false); err != nil {
		t.Fatal(err)
	}
	l.HTTPClient().CloseIdleConnections()
	if _, err := get(within(time.Second)); err == nil {
		t.Errorf("GET of node 0 with its link down: got through")
	}
	if err := l.SetLinkUp(ctx, 0, true); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, lastErr = get(within(time.Second)); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Errorf("GET of node 0 after its link came back: %v", lastErr)
	}

	out, err := l.Command(ctx, 1, "ip", "-4", "addr", "show", "dev", "tap0").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "10.77.0.2/24") {
		t.Errorf("ip addr in node 1's namespace: %s, %v; want 10.77.0.2/24", out, err)
	}
	out, err = l.MonitorCommand(ctx, "cat", "/proc/sys/net/ipv6/conf/tap0/disable_ipv6").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Errorf("disable_ipv6 of the monitor's tap0: %q, %v; want 1", out, err)
	}
	if st := l.Stats(); st.Forwarded == 0 || st.Cut == 0 {
		t.Errorf("switch stats %s: want forwarded and cut frames", st)
	}
}

func TestLabsSideBySide(t *testing.T) {
	a, b := New(t, 1), New(t, 1)
	if a.Namespace(0) == b.Namespace(0) {
		t.Fatalf("two labs share the namespace %s", a.Namespace(0))
	}
	for _, l := range []*Lab{a, b} {
		ln, err := l.Listen(0, "tcp", l.Addr(0).String()+":9000")
		if err != nil {
			t.Fatal(err)
		}
		serveEcho(t, ln)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := l.DialContext(ctx, "tcp", l.Addr(0).String()+":9000")
		cancel()
		if err != nil {
			t.Fatalf("lab %s: dial from the monitor: %v", l.Namespace(0), err)
		}
		c.Close()
	}
}

func TestProcStopAndKill(t *testing.T) {
	l := New(t, 1)
	p, err := l.Start(0, "sleeper", "sh", "-c", "echo started; trap 'echo term; exit 0' TERM; while :; do sleep 0.1; done")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	time.Sleep(300 * time.Millisecond)
	if err := p.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if tail := p.Tail(5); !strings.Contains(tail, "started") || !strings.Contains(tail, "term") {
		t.Errorf("log tail %q: want the process's output", tail)
	}
	// A process that ignores SIGTERM is killed once the context ends.
	p, err = l.Start(0, "stubborn", "sh", "-c", "trap '' TERM; while :; do sleep 0.1; done")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	sctx, scancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer scancel()
	if err := p.Stop(sctx); err == nil || p.Running() {
		t.Errorf("Stop of a process ignoring SIGTERM: %v, running %v; want it killed, with an error", err, p.Running())
	}
	p, err = l.Start(0, "victim", "sleep", "60")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	var ee interface{ ExitCode() int }
	if err := p.Err(); !errors.As(err, &ee) || ee.ExitCode() != -1 {
		t.Errorf("after kill -9: %v, want killed by a signal", err)
	}
}
