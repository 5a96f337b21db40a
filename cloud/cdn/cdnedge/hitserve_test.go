package cdnedge

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// rawExchange writes raw to a new connection to addr and reads n
// responses (to HEAD requests when head says so).
func rawExchange(t *testing.T, addr, raw string, n int, head bool) []response {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var out []response
	for range n {
		method := http.MethodGet
		if head {
			method = http.MethodHead
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("reading response %d of %q: %v", len(out)+1, raw, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, response{status: resp.StatusCode, header: resp.Header, body: string(b)})
	}
	return out
}

// TestFastPathMatchesNetHTTP sends the same requests to the edge behind
// its fast-path listener and behind plain net/http: every answer must be
// the same, header for header, and the fast path must have answered the
// fresh hits itself.
func TestFastPathMatchesNetHTTP(t *testing.T) {
	v := newEnv(t, func(o *Options) {
		o.CacheDir = t.TempDir()
		o.MaxMemoryObject = 4096 // /big is on disk only
	})
	o := v.origin(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "max-age=600")
		switch r.URL.Path {
		case "/typed":
			h.Set("Content-Type", "text/css")
			h.Set("ETag", `"t1"`)
			h.Add("X-Multi", "one")
			h.Add("X-Multi", "two")
			io.WriteString(w, "body { color: red }")
		case "/sniffed":
			h["Content-Type"] = nil // the origin sends none: net/http sniffs one at the edge
			io.WriteString(w, "<html><body>hi</body></html>")
		case "/encoded":
			h.Set("Content-Encoding", "gzip")
			io.WriteString(w, "\x1f\x8b not really gzip")
		case "/empty":
		case "/vary":
			h.Set("Vary", "Accept-Encoding")
			h.Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "for %q", r.Header.Get("Accept-Encoding"))
		case "/big":
			h.Set("Content-Type", "application/octet-stream")
			io.WriteString(w, strings.Repeat("b", 10000))
		case "/sniffed-big":
			h["Content-Type"] = nil
			io.WriteString(w, strings.Repeat("s", 10000))
		case "/missing":
			http.NotFound(w, r)
		case "/nodate":
			h["Date"] = nil
			h.Set("Content-Type", "text/plain")
			io.WriteString(w, "no date")
		default:
			fmt.Fprintf(w, "path %s query %s", r.URL.EscapedPath(), r.URL.RawQuery)
		}
	})
	v.deploy("site", o.srv.URL, -1)

	var plainArrived atomic.Int64
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainArrived.Add(1)
		v.edge.ServeHTTP(w, r)
	}))
	t.Cleanup(plain.Close)
	fast := v.srv.Listener.Addr().String()

	paths := []string{"/typed", "/sniffed", "/encoded", "/empty", "/vary", "/big", "/sniffed-big", "/missing", "/nodate",
		"/a%20b", "/a%2Fb?x=1&y=%41", "/q?", "/~user/file.txt", "/a;b=c/d@e:f"}
	for _, p := range paths { // warm through net/http
		rawExchange(t, plain.Listener.Addr().String(), "GET "+p+" HTTP/1.1\r\nHost: site.cdn.localhost\r\n\r\n", 1, false)
	}
	rawExchange(t, plain.Listener.Addr().String(), "GET /vary HTTP/1.1\r\nHost: site.cdn.localhost\r\nAccept-Encoding: gzip\r\n\r\n", 1, false)
	v.clock.Advance(7 * time.Second) // an Age of 7 on both

	type tc struct {
		name     string
		raw      string
		head     bool
		fastPath bool // the fast path answers it itself
	}
	req := func(line string, header ...string) string {
		return line + "\r\nHost: site.cdn.localhost\r\n" + strings.Join(header, "") + "\r\n"
	}
	cases := []tc{
		{"typed", req("GET /typed HTTP/1.1"), false, true},
		{"sniffed", req("GET /sniffed HTTP/1.1"), false, true},
		{"sniffed HEAD", req("HEAD /sniffed HTTP/1.1"), true, true},
		{"encoded", req("GET /encoded HTTP/1.1"), false, true},
		{"empty", req("GET /empty HTTP/1.1"), false, true},
		{"vary none", req("GET /vary HTTP/1.1"), false, true},
		{"vary gzip", req("GET /vary HTTP/1.1", "Accept-Encoding: gzip\r\n"), false, true},
		{"on disk", req("GET /big HTTP/1.1"), false, true},
		{"on disk HEAD", req("HEAD /big HTTP/1.1"), true, true},
		{"on disk, sniffed", req("GET /sniffed-big HTTP/1.1"), false, false},
		{"not a 200", req("GET /missing HTTP/1.1"), false, false},
		{"escaped", req("GET /a%20b HTTP/1.1"), false, true},
		{"escaped slash and query", req("GET /a%2Fb?x=1&y=%41 HTTP/1.1"), false, true},
		{"empty query", req("GET /q? HTTP/1.1"), false, true},
		{"sub-delims", req("GET /a;b=c/d@e:f HTTP/1.1"), false, true},
		{"upper-case host with port", "GET /typed HTTP/1.1\r\nHost: SITE.cdn.localhost.:8088\r\n\r\n", false, true},
		{"connection close", req("GET /typed HTTP/1.1", "Connection: close\r\n"), false, true},
		{"range", req("GET /typed HTTP/1.1", "Range: bytes=0-3\r\n"), false, false},
		{"if-none-match", req("GET /typed HTTP/1.1", "If-None-Match: \"t1\"\r\n"), false, false},
		{"HTTP/1.0", "GET /typed HTTP/1.0\r\nHost: site.cdn.localhost\r\n\r\n", false, false},
		{"unknown host", "GET /typed HTTP/1.1\r\nHost: nosuch.cdn.localhost\r\n\r\n", false, false},
		{"a miss", req("GET /never-asked HTTP/1.1"), false, false},
		{"a body", req("GET /typed HTTP/1.1", "Content-Length: 0\r\n"), false, false},
		{"bare LF", "GET /typed HTTP/1.1\nHost: site.cdn.localhost\n\n", false, false},
		{"a tilde, left as it is", req("GET /~user/file.txt HTTP/1.1"), false, true},
		{"a space before the colon", "GET /typed HTTP/1.1\r\nHost : site.cdn.localhost\r\n\r\n", false, false},
		{"two hosts", "GET /typed HTTP/1.1\r\nHost: site.cdn.localhost\r\nHost: site.cdn.localhost\r\n\r\n", false, false},
		{"no host", "GET /typed HTTP/1.1\r\n\r\n", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			beforeFast, beforePlain := v.edge.Totals().FastPathHits, plainArrived.Load()
			got := rawExchange(t, fast, c.raw, 1, c.head)[0]
			want := rawExchange(t, plain.Listener.Addr().String(), c.raw, 1, c.head)[0]
			if viaFast := v.edge.Totals().FastPathHits == beforeFast+1; viaFast != c.fastPath {
				t.Errorf("answered by the fast path: %v, want %v", viaFast, c.fastPath)
			}
			if n := plainArrived.Load() - beforePlain; n > 1 {
				t.Errorf("net/http's handler ran %d times for one request", n)
			}
			if got.status != want.status || got.body != want.body {
				t.Errorf("fast path: %v\nnet/http:  %v", got, want)
			}
			if !c.fastPath {
				return
			}
			for _, h := range []http.Header{got.header, want.header} {
				if strings.Contains(c.name, "nodate") {
					h.Del("Date")
				}
			}
			for k, vs := range want.header {
				if !slices.Equal(got.header[k], vs) {
					t.Errorf("%s: fast path %q, net/http %q", k, got.header[k], vs)
				}
			}
			for k := range got.header {
				if _, ok := want.header[k]; !ok {
					t.Errorf("the fast path adds %s: %q", k, got.header[k])
				}
			}
		})
	}
	if s := v.edge.Stats(v.deploymentID(t, "site")); s.Hits == 0 || s.Requests < s.Hits {
		t.Errorf("figures after fast-path hits: %+v", s)
	}
}

// deploymentID is the id of deployment name.
func (v *env) deploymentID(t *testing.T, name string) string {
	t.Helper()
	d, ok := v.store.Route(name + ".cdn.localhost")
	if !ok {
		t.Fatalf("no deployment %s", name)
	}
	return d.ID
}

// TestFastPathConnections checks a connection's life on the fast path:
// pipelined requests answered in order, a header sent in pieces, a miss
// that hands the connection to net/http with the requests behind it,
// Connection: close, and idle connections ended when the listener closes.
func TestFastPathConnections(t *testing.T) {
	v := newEnv(t, nil)
	o := v.origin(text("hello", "Cache-Control", "max-age=600", "Content-Type", "text/plain"))
	v.deploy("site", o.srv.URL, -1)
	addr := v.srv.Listener.Addr().String()
	get := func(p string) string { return "GET " + p + " HTTP/1.1\r\nHost: site.cdn.localhost\r\n\r\n" }
	v.get("site", "/a")
	v.get("site", "/b")

	t.Run("pipelined", func(t *testing.T) {
		before := v.arrived.Load()
		rs := rawExchange(t, addr, get("/a")+get("/b")+get("/a"), 3, false)
		for i, r := range rs {
			if r.status != 200 || r.body != "hello" || r.header.Get("X-Cache") != "HIT" {
				t.Errorf("response %d: %v", i+1, r)
			}
		}
		if v.arrived.Load() != before {
			t.Errorf("pipelined hits reached net/http")
		}
	})
	t.Run("a hit, a miss, then hits on net/http", func(t *testing.T) {
		before := v.arrived.Load()
		rs := rawExchange(t, addr, get("/a")+get("/new")+get("/a")+get("/new"), 4, false)
		for i, want := range []string{"HIT", "MISS", "HIT", "HIT"} {
			if rs[i].status != 200 || rs[i].header.Get("X-Cache") != want {
				t.Errorf("response %d: %v, want %s", i+1, rs[i], want)
			}
		}
		if n := v.arrived.Load() - before; n != 3 {
			t.Errorf("net/http answered %d requests, want 3 (all after the miss)", n)
		}
	})
	t.Run("a header in pieces", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		raw := get("/a")
		for _, part := range []string{raw[:5], raw[5:20], raw[20 : len(raw)-1], raw[len(raw)-1:]} {
			io.WriteString(c, part)
			time.Sleep(20 * time.Millisecond)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || string(b) != "hello" {
			t.Errorf("%d %q", resp.StatusCode, b)
		}
	})
	t.Run("connection close", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "GET /a HTTP/1.1\r\nHost: site.cdn.localhost\r\nConnection: close\r\n\r\n")
		all, err := io.ReadAll(c) // ends only when the edge closes
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(all, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.HasSuffix(all, []byte("\r\n\r\nhello")) ||
			!bytes.Contains(all, []byte("\r\nConnection: close\r\n")) {
			t.Errorf("%q", all)
		}
	})
	t.Run("closing the listener ends idle connections", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, get("/a"))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		v.srv.Listener.Close()
		start := time.Now()
		if _, err := br.ReadByte(); err != io.EOF {
			t.Errorf("an idle connection after the close: %v, want EOF", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the idle connection took %v to end", d)
		}
	})
}

// TestFastPathTimeouts shortens the fast path's timeouts and checks the
// limits a connection has: an answer is not held back by an incomplete
// request behind it, a header sent slowly gets headerTimeout in all (not
// per piece), and a connection that never sends anything is closed after
// headerTimeout.
func TestFastPathTimeouts(t *testing.T) {
	const headerTimeout = 300 * time.Millisecond
	v := newEnv(t, nil)
	o := v.origin(text("hello", "Cache-Control", "max-age=600", "Content-Type", "text/plain"))
	v.deploy("site", o.srv.URL, -1)
	v.get("site", "/a")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: v.edge}
	go srv.Serve(v.edge.listen(ln, time.Second, headerTimeout, time.Minute))
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		return c, bufio.NewReader(c)
	}

	t.Run("an answer before an incomplete request", func(t *testing.T) {
		c, br := dial()
		io.WriteString(c, "GET /a HTTP/1.1\r\nHost: site.cdn.localhost\r\n\r\nGET /a HTTP/1.1\r\n")
		c.SetReadDeadline(time.Now().Add(headerTimeout / 2))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("the first answer did not come before the second request was whole: %v", err)
		}
		if b, _ := io.ReadAll(resp.Body); string(b) != "hello" {
			t.Errorf("body %q", b)
		}
	})
	t.Run("a slow header", func(t *testing.T) {
		c, br := dial()
		start := time.Now()
		raw := "GET /a HTTP/1.1\r\nHost: site.cdn.localhost\r\nX-Slow: 1\r\n\r\n"
		var werr error
		for i := 0; i < len(raw) && werr == nil; i++ {
			_, werr = io.WriteString(c, raw[i:i+1])
			time.Sleep(headerTimeout / 10)
		}
		_, err := http.ReadResponse(br, nil)
		if err == nil {
			t.Errorf("a header sent over %v (headerTimeout %v) was answered", time.Since(start), headerTimeout)
		}
	})
	t.Run("a silent connection", func(t *testing.T) {
		_, br := dial()
		start := time.Now()
		if _, err := br.ReadByte(); err != io.EOF {
			t.Errorf("a silent connection: %v, want EOF", err)
		}
		if d := time.Since(start); d > 3*headerTimeout {
			t.Errorf("a silent connection lived %v (headerTimeout %v)", d, headerTimeout)
		}
	})
}

// TestFastPathDrain checks that Wait, after Close, lets an answer in
// progress finish and returns once the fast path's connections are gone.
func TestFastPathDrain(t *testing.T) {
	v := newEnv(t, func(o *Options) { o.CacheDir = t.TempDir() })
	big := strings.Repeat("z", 32<<20)
	o := v.origin(text(big, "Cache-Control", "max-age=600", "Content-Type", "application/octet-stream"))
	v.deploy("site", o.srv.URL, -1)
	v.get("site", "/big")
	c, err := net.Dial("tcp", v.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A small receive buffer, so that the kernel's buffers cannot take
	// the whole answer: the edge would then have finished it, rightly
	// letting Wait return (a CI run under -race saw that).
	c.(*net.TCPConn).SetReadBuffer(32 << 10)
	c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, "GET /big HTTP/1.1\r\nHost: site.cdn.localhost\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 1<<20)); err != nil { // the answer is under way
		t.Fatal(err)
	}
	ln := v.srv.Listener.(*hitListener)
	ln.Close()
	waited := make(chan error, 1)
	go func() { waited <- ln.Wait(t.Context()) }()
	select {
	case err := <-waited:
		t.Fatalf("Wait returned (%v) with an answer in progress", err)
	case <-time.After(100 * time.Millisecond):
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil || len(rest) != len(big)-1<<20 {
		t.Errorf("the rest of the answer: %d bytes, %v; want %d", len(rest), err, len(big)-1<<20)
	}
	if resp.Header.Get("Connection") == "close" {
		t.Errorf("an answer begun before the close says Connection: close")
	}
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("Wait: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("Wait did not return after the last connection ended")
	}
}

// TestForgetThenFill checks that a fill begun before its deployment was
// deleted is not stored after.
func TestForgetThenFill(t *testing.T) {
	c := newCache("", 1<<20, 1<<20, 1<<20)
	gen := c.generation("dep")
	c.forget("dep")
	if c.insert(&entry{dep: "dep", key: "/a", size: 1, body: []byte("x")}, nil, gen) {
		t.Errorf("a fill begun before the deployment was deleted was stored")
	}
	if n, _ := c.usage("dep"); n != 0 {
		t.Errorf("%d objects cached for a deleted deployment", n)
	}
}
