package cdnedge

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cdn/cdnstore"
)

// The tests drive a real edge on a loopback listener against real origins
// (httptest servers on 127.0.0.1, or buckets of a cloudstore in a temp
// directory). Time is a manual clock shared by the edge and the origins
// (which stamp Date from it), so freshness is exact and no test sleeps
// for a TTL; waits for background work poll with a deadline.

var quiet = slog.New(slog.DiscardHandler)

// t0 is the clock's start: any fixed instant works, since the origins
// stamp Date from the same clock.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// clock is the manual clock of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// origin is an http origin on 127.0.0.1 that counts and records the
// requests it receives and stamps each response's Date from the clock.
type origin struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []*http.Request // headers, method and URL of each request, in order
	n   atomic.Int64
}

func newOrigin(t *testing.T, clk *clock, h http.HandlerFunc) *origin {
	t.Helper()
	o := &origin{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.got = append(o.got, r.Clone(r.Context()))
		o.mu.Unlock()
		o.n.Add(1)
		w.Header().Set("Date", clk.Now().Format(http.TimeFormat))
		h(w, r)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// count is how many requests the origin has received.
func (o *origin) count() int { return int(o.n.Load()) }

// last is the latest request the origin received.
func (o *origin) last() *http.Request {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.got) == 0 {
		return nil
	}
	return o.got[len(o.got)-1]
}

// env is an edge over a fresh deployment store, served on a loopback
// listener, with a client that neither compresses nor pools across tests.
type env struct {
	t      *testing.T
	clock  *clock
	store  *cdnstore.Store
	edge   *Edge
	srv    *httptest.Server
	client *http.Client
	// arrived counts the requests that reached the edge's handler (not
	// the fast path's hits).
	arrived atomic.Int64
}

// newEnv starts an edge; AllowPrivateOrigins is on (the origins are on
// loopback) unless opts says otherwise through set.
func newEnv(t *testing.T, set func(*Options)) *env {
	t.Helper()
	clk := &clock{t: t0}
	st, err := cdnstore.Open(t.TempDir(), cdnstore.Options{Logger: quiet})
	if err != nil {
		t.Fatalf("cdnstore.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	opts := Options{Store: st, AllowPrivateOrigins: true, Logger: quiet, Now: clk.Now}
	if set != nil {
		set(&opts)
	}
	e, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(e.Close)
	v := &env{t: t, clock: clk, store: st, edge: e}
	// As in production, the edge's listener answers fresh hits on its fast
	// path and gives net/http the rest.
	v.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.arrived.Add(1)
		e.ServeHTTP(w, r)
	}))
	v.srv.Listener = e.Listener(v.srv.Listener)
	v.srv.Start()
	t.Cleanup(v.srv.Close)
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	// A bounded client: a request the edge should answer at once fails
	// the test rather than hanging it.
	v.client = &http.Client{Transport: tr, Timeout: 10 * time.Second}
	return v
}

// origin starts an http origin on the env's clock.
func (v *env) origin(h http.HandlerFunc) *origin {
	v.t.Helper()
	return newOrigin(v.t, v.clock, h)
}

// deploy creates deployment name of account "acme"; ttl < 0 keeps the
// default TTL.
func (v *env) deploy(name, origin string, ttl int) cdnstore.Deployment {
	v.t.Helper()
	in := cdnstore.Spec{Name: name, Origin: origin}
	if ttl >= 0 {
		in.DefaultTTL = &ttl
	}
	d, err := v.store.Create("acme", in)
	if err != nil {
		v.t.Fatalf("Create %s → %s: %v", name, origin, err)
	}
	return d
}

// response is what a client got from the edge.
type response struct {
	status int
	header http.Header
	body   string
}

func (r response) String() string {
	return fmt.Sprintf("%d X-Cache=%q Cache-Status=%q body %q", r.status, r.header.Get("X-Cache"), r.header.Get("Cache-Status"), abbrev(r.body))
}

func abbrev(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%s... (%d bytes)", s[:80], len(s))
	}
	return s
}

// send makes a request to deployment name's host; header holds
// name/value pairs. It is safe to call from several goroutines.
func (v *env) send(method, name, path string, body io.Reader, header ...string) (response, error) {
	req, err := http.NewRequest(method, v.srv.URL+path, body)
	if err != nil {
		return response{}, err
	}
	req.Host = name + ".cdn.localhost"
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := io.Copy(&b, resp.Body); err != nil {
		return response{}, fmt.Errorf("%s %s: reading the body: %w", method, path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b.String()}, nil
}

// get is a GET of path from deployment name, failing the test on a
// transport error.
func (v *env) get(name, path string, header ...string) response {
	v.t.Helper()
	r, err := v.send(http.MethodGet, name, path, nil, header...)
	if err != nil {
		v.t.Fatalf("GET %s: %v", path, err)
	}
	return r
}

// expect checks a response's status, X-Cache and body.
func expect(t *testing.T, what string, got response, status int, xcache, body string) {
	t.Helper()
	if got.status != status || got.header.Get("X-Cache") != xcache || got.body != body {
		t.Errorf("%s: got %v, want %d X-Cache=%q body %q", what, got, status, xcache, abbrev(body))
	}
}

// waitFor polls cond until it holds, failing the test after 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// idle reports whether no origin fetch is in flight on e (a background
// revalidation lands its flight after storing what it fetched).
func idle(e *Edge) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.flights) == 0
}

// text answers a fixed body with name/value header pairs.
func text(body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Add(header[i], header[i+1])
		}
		io.WriteString(w, body)
	}
}

// has reports whether s contains every one of parts.
func has(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
