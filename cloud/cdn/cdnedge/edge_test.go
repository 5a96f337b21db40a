package cdnedge

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestDirectives plays a sequence of requests, moving the clock between
// them, against an origin that answers with one set of headers (and 304
// to a matching If-None-Match), and checks what the edge answered and how
// often it went to the origin.
func TestDirectives(t *testing.T) {
	type step struct {
		after  time.Duration // the clock moves this much before the request
		header []string      // request header pairs
		xcache string
		origin int  // requests the origin has received after this one
		cond   bool // the origin's latest request carried If-None-Match
	}
	for _, tc := range []struct {
		name   string
		ttl    int // the deployment's default_ttl; -1 keeps the default
		status int // the origin's status (0: 200)
		header func(now time.Time) []string
		steps  []step
	}{
		{
			name:   "max-age: fresh, then stale",
			ttl:    -1,
			header: fixed("Cache-Control", "max-age=60"),
			steps:  []step{{0, nil, "MISS", 1, false}, {59 * time.Second, nil, "HIT", 1, false}, {2 * time.Second, nil, "MISS", 2, false}, {0, nil, "HIT", 2, false}},
		},
		{
			name:   "s-maxage beats a shorter max-age",
			ttl:    -1,
			header: fixed("Cache-Control", "max-age=10, s-maxage=60"),
			steps:  []step{{0, nil, "MISS", 1, false}, {30 * time.Second, nil, "HIT", 1, false}, {31 * time.Second, nil, "MISS", 2, false}},
		},
		{
			name:   "s-maxage beats a longer max-age",
			ttl:    -1,
			header: fixed("Cache-Control", "max-age=600, s-maxage=5"),
			steps:  []step{{0, nil, "MISS", 1, false}, {4 * time.Second, nil, "HIT", 1, false}, {2 * time.Second, nil, "MISS", 2, false}},
		},
		{
			name:   "no-store is never stored",
			ttl:    -1,
			header: fixed("Cache-Control", "no-store, max-age=60"),
			steps:  []step{{0, nil, "MISS", 1, false}, {0, nil, "MISS", 2, false}, {0, nil, "MISS", 3, false}},
		},
		{
			name:   "no-cache is revalidated at every use",
			ttl:    -1,
			header: fixed("Cache-Control", "no-cache", "ETag", `"e1"`),
			steps:  []step{{0, nil, "MISS", 1, false}, {0, nil, "HIT", 2, true}, {10 * time.Second, nil, "HIT", 3, true}},
		},
		{
			name:   "private is not stored",
			ttl:    -1,
			header: fixed("Cache-Control", "private, max-age=60"),
			steps:  []step{{0, nil, "MISS", 1, false}, {0, nil, "MISS", 2, false}},
		},
		{
			name: "Expires with Date",
			ttl:  -1,
			header: func(now time.Time) []string {
				return []string{"Expires", now.Add(100 * time.Second).Format(http.TimeFormat)}
			},
			steps: []step{{0, nil, "MISS", 1, false}, {99 * time.Second, nil, "HIT", 1, false}, {2 * time.Second, nil, "MISS", 2, false}},
		},
		{
			name:   `Expires "0" is already expired`,
			ttl:    3600,
			header: fixed("Expires", "0"),
			steps:  []step{{0, nil, "MISS", 1, false}, {0, nil, "MISS", 2, false}},
		},
		{
			name:   "no freshness information: the deployment's default_ttl",
			ttl:    30,
			header: fixed("Content-Type", "text/plain"),
			steps:  []step{{0, nil, "MISS", 1, false}, {29 * time.Second, nil, "HIT", 1, false}, {2 * time.Second, nil, "MISS", 2, false}},
		},
		{
			name:   "404 gets at most 60s of the default_ttl",
			ttl:    3600,
			status: http.StatusNotFound,
			header: fixed(),
			steps:  []step{{0, nil, "MISS", 1, false}, {59 * time.Second, nil, "HIT", 1, false}, {2 * time.Second, nil, "MISS", 2, false}},
		},
		{
			name:   "404 with a default_ttl under 60s",
			ttl:    10,
			status: http.StatusNotFound,
			header: fixed(),
			steps:  []step{{0, nil, "MISS", 1, false}, {9 * time.Second, nil, "HIT", 1, false}, {2 * time.Second, nil, "MISS", 2, false}},
		},
		{
			name:   "404 with its own max-age",
			ttl:    3600,
			status: http.StatusNotFound,
			header: fixed("Cache-Control", "max-age=300"),
			steps:  []step{{0, nil, "MISS", 1, false}, {299 * time.Second, nil, "HIT", 1, false}},
		},
		{
			name:   "Set-Cookie is not stored",
			ttl:    -1,
			header: fixed("Cache-Control", "max-age=60", "Set-Cookie", "session=secret"),
			steps:  []step{{0, nil, "MISS", 1, false}, {0, nil, "MISS", 2, false}},
		},
		{
			name:   "Authorization without public is not stored",
			ttl:    -1,
			header: fixed("Cache-Control", "max-age=60"),
			steps:  []step{{0, []string{"Authorization", "Bearer x"}, "MISS", 1, false}, {0, []string{"Authorization", "Bearer x"}, "MISS", 2, false}},
		},
		{
			name:   "Authorization with public is stored",
			ttl:    -1,
			header: fixed("Cache-Control", "public, max-age=60"),
			steps:  []step{{0, []string{"Authorization", "Bearer x"}, "MISS", 1, false}, {0, []string{"Authorization", "Bearer x"}, "HIT", 1, false}, {0, nil, "HIT", 1, false}},
		},
		{
			name:   "request no-store is not stored",
			ttl:    -1,
			header: fixed("Cache-Control", "max-age=60"),
			steps:  []step{{0, []string{"Cache-Control", "no-store"}, "MISS", 1, false}, {0, nil, "MISS", 2, false}, {0, nil, "HIT", 2, false}},
		},
		{
			name:   "Vary: * is not stored",
			ttl:    -1,
			header: fixed("Cache-Control", "max-age=60", "Vary", "*"),
			steps:  []step{{0, nil, "MISS", 1, false}, {0, nil, "MISS", 2, false}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newEnv(t, nil)
			status := tc.status
			if status == 0 {
				status = http.StatusOK
			}
			o := v.origin(func(w http.ResponseWriter, r *http.Request) {
				h := tc.header(v.clock.Now())
				for i := 0; i+1 < len(h); i += 2 {
					w.Header().Add(h[i], h[i+1])
				}
				if etag := w.Header().Get("ETag"); etag != "" && r.Header.Get("If-None-Match") == etag {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				w.WriteHeader(status)
				io.WriteString(w, "hello")
			})
			v.deploy("site", o.srv.URL, tc.ttl)
			for i, s := range tc.steps {
				v.clock.Advance(s.after)
				got := v.get("site", "/page", s.header...)
				expect(t, fmt.Sprintf("step %d", i), got, status, s.xcache, "hello")
				if n := o.count(); n != s.origin {
					t.Errorf("step %d: the origin got %d requests, want %d", i, n, s.origin)
				}
				if cond := o.last().Header.Get("If-None-Match") != ""; cond != s.cond {
					t.Errorf("step %d: the origin's request was conditional: %v, want %v", i, cond, s.cond)
				}
			}
		})
	}
}

// fixed is a header function that ignores the time.
func fixed(pairs ...string) func(time.Time) []string {
	return func(time.Time) []string { return pairs }
}

// TestVary checks that responses varying on Accept-Encoding are stored
// per variant and served only to requests that match.
func TestVary(t *testing.T) {
	v := newEnv(t, nil)
	o := v.origin(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=60")
		w.Header().Set("Vary", "Accept-Encoding")
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "gzipped")
			return
		}
		io.WriteString(w, "plain")
	})
	v.deploy("site", o.srv.URL, -1)
	gzip := []string{"Accept-Encoding", "gzip"}
	for i, tc := range []struct {
		header  []string
		xcache  string
		body    string
		encoded bool
		origin  int
	}{
		{gzip, "MISS", "gzipped", true, 1},
		{nil, "MISS", "plain", false, 2},
		{gzip, "HIT", "gzipped", true, 2},
		{nil, "HIT", "plain", false, 2},
		{[]string{"Accept-Encoding", "br"}, "MISS", "plain", false, 3},
		{[]string{"Accept-Encoding", "br"}, "HIT", "plain", false, 3},
		{gzip, "HIT", "gzipped", true, 3},
	} {
		got := v.get("site", "/app.js", tc.header...)
		expect(t, fmt.Sprintf("request %d (%q)", i, tc.header), got, http.StatusOK, tc.xcache, tc.body)
		if enc := got.header.Get("Content-Encoding") == "gzip"; enc != tc.encoded {
			t.Errorf("request %d (%q): Content-Encoding %q, want gzip: %v", i, tc.header, got.header.Get("Content-Encoding"), tc.encoded)
		}
		if n := o.count(); n != tc.origin {
			t.Errorf("request %d (%q): the origin got %d requests, want %d", i, tc.header, n, tc.origin)
		}
	}
}

// TestRevalidation checks revalidation with each validator: the origin
// gets the conditional request, a 304 refreshes the stored response
// (same body, fresh again), and a 200 replaces it.
func TestRevalidation(t *testing.T) {
	lastModified := func(version int64) string {
		return t0.Add(time.Duration(version-10) * time.Hour).Format(http.TimeFormat)
	}
	for _, tc := range []struct {
		validator, conditional string
		value                  func(version int64) string
	}{
		{"ETag", "If-None-Match", func(version int64) string { return fmt.Sprintf(`"v%d"`, version) }},
		{"Last-Modified", "If-Modified-Since", lastModified},
	} {
		t.Run(tc.validator, func(t *testing.T) {
			v := newEnv(t, nil)
			var version atomic.Int64
			version.Store(1)
			o := v.origin(func(w http.ResponseWriter, r *http.Request) {
				ver := version.Load()
				w.Header().Set("Cache-Control", "max-age=10")
				w.Header().Set(tc.validator, tc.value(ver))
				if r.Header.Get(tc.conditional) == tc.value(ver) {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				fmt.Fprintf(w, "body v%d", ver)
			})
			v.deploy("site", o.srv.URL, -1)

			expect(t, "first", v.get("site", "/doc"), http.StatusOK, "MISS", "body v1")
			if got := o.last().Header.Get(tc.conditional); got != "" {
				t.Errorf("first request to the origin: %s %q, want none", tc.conditional, got)
			}

			v.clock.Advance(11 * time.Second)
			got := v.get("site", "/doc")
			expect(t, "stale, origin answers 304", got, http.StatusOK, "HIT", "body v1")
			if got := o.last().Header.Get(tc.conditional); got != tc.value(1) {
				t.Errorf("revalidation: origin got %s %q, want %q", tc.conditional, got, tc.value(1))
			}
			if cs := got.header.Get("Cache-Status"); !has(cs, "fwd=stale", "fwd-status=304") {
				t.Errorf("revalidated: Cache-Status %q, want fwd=stale and fwd-status=304", cs)
			}
			if age := got.header.Get("Age"); age != "0" {
				t.Errorf("revalidated: Age %q, want 0", age)
			}

			v.clock.Advance(5 * time.Second)
			expect(t, "fresh again after the 304", v.get("site", "/doc"), http.StatusOK, "HIT", "body v1")
			if n := o.count(); n != 2 {
				t.Errorf("after the 304: the origin got %d requests, want 2", n)
			}

			version.Store(2)
			v.clock.Advance(11 * time.Second)
			expect(t, "stale, origin answers 200", v.get("site", "/doc"), http.StatusOK, "MISS", "body v2")
			if got := o.last().Header.Get(tc.conditional); got != tc.value(1) {
				t.Errorf("second revalidation: origin got %s %q, want %q", tc.conditional, got, tc.value(1))
			}
			v.clock.Advance(time.Second)
			expect(t, "the 200 replaced the stored response", v.get("site", "/doc"), http.StatusOK, "HIT", "body v2")
			if n := o.count(); n != 3 {
				t.Errorf("after the replacing 200: the origin got %d requests, want 3", n)
			}
		})
	}
}

// TestStaleWhileRevalidate checks that within the window the stale copy
// is served at once while one background fetch (however many requests
// see the stale copy) replaces it, and that past the window the edge
// revalidates before answering.
func TestStaleWhileRevalidate(t *testing.T) {
	v := newEnv(t, nil)
	release := make(chan struct{})
	var n atomic.Int64
	o := v.origin(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		if k == 2 { // the background revalidation waits for the test
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Cache-Control", "max-age=10, stale-while-revalidate=30")
		fmt.Fprintf(w, "v%d", k)
	})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	v.deploy("site", o.srv.URL, -1)

	expect(t, "first", v.get("site", "/feed"), http.StatusOK, "MISS", "v1")
	v.clock.Advance(15 * time.Second)
	got := v.get("site", "/feed") // answered while the origin is blocked
	expect(t, "stale within the window", got, http.StatusOK, "STALE", "v1")
	if cs := got.header.Get("Cache-Status"); !has(cs, "stale-while-revalidate") {
		t.Errorf("stale: Cache-Status %q, want stale-while-revalidate", cs)
	}
	if age := got.header.Get("Age"); age != "15" {
		t.Errorf("stale: Age %q, want 15", age)
	}
	waitFor(t, "the background revalidation to reach the origin", func() bool { return o.count() == 2 })
	for i := range 3 {
		expect(t, fmt.Sprintf("stale again %d", i), v.get("site", "/feed"), http.StatusOK, "STALE", "v1")
	}
	unblock()
	waitFor(t, "the background revalidation to land", func() bool { return idle(v.edge) })
	if got := o.count(); got != 2 {
		t.Errorf("the origin got %d requests, want 2 (one background revalidation)", got)
	}
	expect(t, "after the background revalidation", v.get("site", "/feed"), http.StatusOK, "HIT", "v2")

	// v2 arrived at 15s: fresh until 25s, servable stale until 55s.
	v.clock.Advance(41 * time.Second)
	got = v.get("site", "/feed")
	expect(t, "past the window", got, http.StatusOK, "MISS", "v3")
	if cs := got.header.Get("Cache-Status"); !has(cs, "fwd=stale") {
		t.Errorf("past the window: Cache-Status %q, want fwd=stale", cs)
	}
	if got := o.count(); got != 3 {
		t.Errorf("the origin got %d requests, want 3", got)
	}
}

// TestOriginFailure checks what the edge serves when the origin is down,
// failing or slow: the stale copy where allowed, else the error.
func TestOriginFailure(t *testing.T) {
	const unreachable = "the origin could not be reached\n"
	for _, tc := range []struct {
		name   string
		cc     string // the first response's Cache-Control; "" caches nothing
		fail   string // "down" (listener closed) or "503"
		after  time.Duration
		status int
		xcache string
		body   string
	}{
		{"down, nothing cached", "", "down", 0, http.StatusBadGateway, "MISS", unreachable},
		{"down, within stale-if-error", "max-age=10, stale-if-error=60", "down", 20 * time.Second, http.StatusOK, "STALE", "v1"},
		{"down, past stale-if-error", "max-age=10, stale-if-error=60", "down", 80 * time.Second, http.StatusBadGateway, "MISS", unreachable},
		{"down, no stale-if-error, within MaxStale", "max-age=10", "down", time.Hour, http.StatusOK, "STALE", "v1"},
		{"down, no stale-if-error, past MaxStale", "max-age=10", "down", 25 * time.Hour, http.StatusBadGateway, "MISS", unreachable},
		{"down, must-revalidate", "max-age=10, must-revalidate, stale-if-error=60", "down", 20 * time.Second, http.StatusBadGateway, "MISS", unreachable},
		{"down, no-cache", "no-cache, stale-if-error=60", "down", 0, http.StatusBadGateway, "MISS", unreachable},
		{"503, within stale-if-error", "max-age=10, stale-if-error=60", "503", 20 * time.Second, http.StatusOK, "STALE", "v1"},
		{"503, past stale-if-error", "max-age=10, stale-if-error=60", "503", 80 * time.Second, http.StatusServiceUnavailable, "MISS", "busy"},
		{"503, no stale-if-error", "max-age=10", "503", 20 * time.Second, http.StatusServiceUnavailable, "MISS", "busy"},
		{"503, must-revalidate", "max-age=10, must-revalidate, stale-if-error=60", "503", 20 * time.Second, http.StatusServiceUnavailable, "MISS", "busy"},
		{"503, still fresh", "max-age=10", "503", 5 * time.Second, http.StatusOK, "HIT", "v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newEnv(t, nil)
			var failing atomic.Bool
			o := v.origin(func(w http.ResponseWriter, r *http.Request) {
				if failing.Load() {
					w.WriteHeader(http.StatusServiceUnavailable)
					io.WriteString(w, "busy")
					return
				}
				w.Header().Set("Cache-Control", tc.cc)
				w.Header().Set("ETag", `"v1"`) // revalidations never match: the origin has moved on
				io.WriteString(w, "v1")
			})
			d := v.deploy("site", o.srv.URL, -1)
			if tc.cc != "" {
				expect(t, "first", v.get("site", "/x"), http.StatusOK, "MISS", "v1")
			}
			if tc.fail == "down" {
				o.srv.Close()
			} else {
				failing.Store(true)
			}
			v.clock.Advance(tc.after)
			got := v.get("site", "/x")
			expect(t, "after the failure", got, tc.status, tc.xcache, tc.body)
			if tc.xcache == "STALE" && !has(got.header.Get("Cache-Status"), "fwd=stale") {
				t.Errorf("Cache-Status %q, want fwd=stale", got.header.Get("Cache-Status"))
			}
			wantErrors := int64(0)
			if tc.xcache != "HIT" {
				wantErrors = 1
			}
			if s := v.edge.Stats(d.ID); s.OriginErrors != wantErrors {
				t.Errorf("origin_errors %d, want %d", s.OriginErrors, wantErrors)
			}
		})
	}
}

// TestOriginTimeout checks that an origin slower than OriginTimeout gets
// 504, or the stale copy when there is one.
func TestOriginTimeout(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cached bool
		status int
		xcache string
		body   string
	}{
		{"nothing cached", false, http.StatusGatewayTimeout, "MISS", "the origin did not answer in time\n"},
		{"stale copy", true, http.StatusOK, "STALE", "quick"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newEnv(t, func(o *Options) { o.OriginTimeout = 50 * time.Millisecond })
			release := make(chan struct{})
			var slow atomic.Bool
			o := v.origin(func(w http.ResponseWriter, r *http.Request) {
				if slow.Load() {
					select {
					case <-release:
					case <-r.Context().Done(): // the edge gave up
					}
					return
				}
				w.Header().Set("Cache-Control", "max-age=10")
				io.WriteString(w, "quick")
			})
			t.Cleanup(func() { close(release) })
			v.deploy("site", o.srv.URL, -1)
			if tc.cached {
				expect(t, "first", v.get("site", "/x"), http.StatusOK, "MISS", "quick")
				v.clock.Advance(20 * time.Second)
			}
			slow.Store(true)
			expect(t, "slow origin", v.get("site", "/x"), tc.status, tc.xcache, tc.body)
		})
	}
}

// TestCollapse sends concurrent misses for one URL while the origin holds
// its answer until all of them have reached the edge: a storable response
// makes one origin fetch; an uncacheable one makes each waiter fetch for
// itself, and each gets its own response.
func TestCollapse(t *testing.T) {
	const n = 20
	for _, tc := range []struct {
		name       string
		cc         string
		wantOrigin int
		wantHits   int64
	}{
		{"storable", "max-age=60", 1, n - 1},
		{"no-store", "no-store", n, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newEnv(t, nil)
			var waited atomic.Bool
			o := v.origin(func(w http.ResponseWriter, r *http.Request) {
				deadline := time.Now().Add(5 * time.Second)
				for v.arrived.Load() < n {
					if time.Now().After(deadline) {
						waited.Store(true)
						break
					}
					time.Sleep(time.Millisecond)
				}
				w.Header().Set("Cache-Control", tc.cc)
				fmt.Fprintf(w, "for %s", r.Header.Get("X-Id"))
			})
			d := v.deploy("site", o.srv.URL, -1)
			var wg sync.WaitGroup
			got := make([]response, n)
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					got[i], errs[i] = v.send(http.MethodGet, "site", "/hot", nil, "X-Id", strconv.Itoa(i))
				})
			}
			wg.Wait()
			if waited.Load() {
				t.Fatalf("only %d of %d requests reached the edge", v.arrived.Load(), n)
			}
			first := ""
			for i := range n {
				if errs[i] != nil {
					t.Fatalf("request %d: %v", i, errs[i])
				}
				if got[i].status != http.StatusOK {
					t.Errorf("request %d: got %v, want 200", i, got[i])
				}
				if tc.wantOrigin == 1 {
					// One response for everyone: the one fetch's.
					if first == "" {
						first = got[i].body
					}
					if got[i].body != first {
						t.Errorf("request %d: body %q, want %q like the others", i, got[i].body, first)
					}
				} else if want := "for " + strconv.Itoa(i); got[i].body != want {
					t.Errorf("request %d: body %q, want %q (its own fetch)", i, got[i].body, want)
				}
			}
			if c := o.count(); c != tc.wantOrigin {
				t.Errorf("the origin got %d requests, want %d", c, tc.wantOrigin)
			}
			if s := v.edge.Stats(d.ID); s.Hits != tc.wantHits || s.Misses != n-tc.wantHits || s.OriginRequests != int64(tc.wantOrigin) {
				t.Errorf("stats: hits %d misses %d origin_requests %d, want %d, %d, %d", s.Hits, s.Misses, s.OriginRequests, tc.wantHits, n-tc.wantHits, tc.wantOrigin)
			}
		})
	}
}

// TestRangeAndConditional checks that Range and the client's conditional
// headers are answered from the stored response, and that the origin
// only ever gets plain GETs.
func TestRangeAndConditional(t *testing.T) {
	const body = "0123456789abcdefghij"
	lastModified := t0.Add(-time.Hour).Format(http.TimeFormat)
	v := newEnv(t, nil)
	o := v.origin(text(body, "Cache-Control", "max-age=60", "ETag", `"r1"`, "Last-Modified", lastModified, "Content-Type", "text/plain"))
	v.deploy("site", o.srv.URL, -1)

	got := v.get("site", "/file", "Range", "bytes=2-5")
	expect(t, "range on a miss", got, http.StatusPartialContent, "MISS", "2345")
	if cr := got.header.Get("Content-Range"); cr != "bytes 2-5/20" {
		t.Errorf("range on a miss: Content-Range %q, want %q", cr, "bytes 2-5/20")
	}
	for _, tc := range []struct {
		name         string
		header       []string
		status       int
		body         string
		contentRange string
	}{
		{"range", []string{"Range", "bytes=10-"}, http.StatusPartialContent, "abcdefghij", "bytes 10-19/20"},
		{"suffix range", []string{"Range", "bytes=-3"}, http.StatusPartialContent, "hij", "bytes 17-19/20"},
		{"unsatisfiable range", []string{"Range", "bytes=50-"}, http.StatusRequestedRangeNotSatisfiable, "invalid range: failed to overlap\n", "bytes */20"},
		{"whole", nil, http.StatusOK, body, ""},
		{"If-None-Match matching", []string{"If-None-Match", `"r1"`}, http.StatusNotModified, "", ""},
		{"If-None-Match other", []string{"If-None-Match", `"r0"`}, http.StatusOK, body, ""},
		{"If-Modified-Since", []string{"If-Modified-Since", lastModified}, http.StatusNotModified, "", ""},
		{"If-Range stale", []string{"Range", "bytes=0-1", "If-Range", `"r0"`}, http.StatusOK, body, ""},
		{"If-Range current", []string{"Range", "bytes=0-1", "If-Range", `"r1"`}, http.StatusPartialContent, "01", "bytes 0-1/20"},
	} {
		got := v.get("site", "/file", tc.header...)
		expect(t, tc.name, got, tc.status, "HIT", tc.body)
		if cr := got.header.Get("Content-Range"); cr != tc.contentRange {
			t.Errorf("%s: Content-Range %q, want %q", tc.name, cr, tc.contentRange)
		}
	}
	if c := o.count(); c != 1 {
		t.Errorf("the origin got %d requests, want 1", c)
	}
	r := o.last()
	for _, h := range []string{"Range", "If-Range", "If-None-Match", "If-Modified-Since"} {
		if r.Header.Get(h) != "" {
			t.Errorf("the origin's request carried %s %q, want none", h, r.Header.Get(h))
		}
	}
}

// TestAgeAndCacheStatus checks Age (growing with the clock, starting from
// the origin's Age), X-Cache and Cache-Status.
func TestAgeAndCacheStatus(t *testing.T) {
	for _, tc := range []struct {
		name      string
		originAge string
		ages      []string // at 0, 30 and 90 seconds
	}{
		{"no Age from the origin", "", []string{"0", "30", "90"}},
		{"Age 10 from the origin", "10", []string{"10", "40", "100"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newEnv(t, nil)
			o := v.origin(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Cache-Control", "max-age=200")
				if tc.originAge != "" {
					w.Header().Set("Age", tc.originAge)
				}
				io.WriteString(w, "x")
			})
			v.deploy("site", o.srv.URL, -1)
			for i, step := range []struct {
				after         time.Duration
				xcache, cstat string
			}{
				{0, "MISS", "lattice; fwd=uri-miss; fwd-status=200; stored"},
				{30 * time.Second, "HIT", "lattice; hit"},
				{60 * time.Second, "HIT", "lattice; hit"},
			} {
				v.clock.Advance(step.after)
				got := v.get("site", "/")
				if got.header.Get("Age") != tc.ages[i] || got.header.Get("X-Cache") != step.xcache || got.header.Get("Cache-Status") != step.cstat {
					t.Errorf("step %d: Age %q X-Cache %q Cache-Status %q, want %q %q %q", i,
						got.header.Get("Age"), got.header.Get("X-Cache"), got.header.Get("Cache-Status"), tc.ages[i], step.xcache, step.cstat)
				}
			}
		})
	}
}

// TestMethods checks that other methods than GET and HEAD are proxied to
// the origin and that a successful one invalidates the path's stored
// responses.
func TestMethods(t *testing.T) {
	for _, tc := range []struct {
		method      string
		status      int
		invalidates bool
	}{
		{http.MethodPost, http.StatusCreated, true},
		{http.MethodPut, http.StatusOK, true},
		{http.MethodDelete, http.StatusNoContent, true},
		{http.MethodPatch, http.StatusOK, true},
		{http.MethodPost, http.StatusConflict, false},
	} {
		t.Run(fmt.Sprintf("%s %d", tc.method, tc.status), func(t *testing.T) {
			v := newEnv(t, nil)
			var gotBody atomic.Value
			o := v.origin(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					w.Header().Set("Cache-Control", "max-age=60")
					io.WriteString(w, "item")
					return
				}
				b, _ := io.ReadAll(r.Body)
				gotBody.Store(r.Method + " " + string(b))
				w.WriteHeader(tc.status)
			})
			v.deploy("site", o.srv.URL, -1)
			expect(t, "GET", v.get("site", "/item"), http.StatusOK, "MISS", "item")
			expect(t, "GET with a query", v.get("site", "/item?v=2"), http.StatusOK, "MISS", "item")
			expect(t, "GET again", v.get("site", "/item"), http.StatusOK, "HIT", "item")

			got, err := v.send(tc.method, "site", "/item", strings.NewReader("payload"))
			if err != nil {
				t.Fatalf("%s: %v", tc.method, err)
			}
			if got.status != tc.status || got.header.Get("X-Cache") != "MISS" {
				t.Errorf("%s: got %v, want %d MISS", tc.method, got, tc.status)
			}
			if b, _ := gotBody.Load().(string); b != tc.method+" payload" {
				t.Errorf("the origin got %q, want %q", b, tc.method+" payload")
			}
			want := "HIT"
			if tc.invalidates {
				want = "MISS"
			}
			expect(t, "GET after "+tc.method, v.get("site", "/item"), http.StatusOK, want, "item")
			expect(t, "GET with a query after "+tc.method, v.get("site", "/item?v=2"), http.StatusOK, want, "item")
		})
	}
}

// TestHead checks that HEAD is answered from the GET's stored response,
// and that a HEAD miss stores the GET response it fetched.
func TestHead(t *testing.T) {
	v := newEnv(t, nil)
	o := v.origin(text("0123456789", "Cache-Control", "max-age=60", "ETag", `"h"`, "Content-Type", "text/plain"))
	v.deploy("site", o.srv.URL, -1)

	head := func(path string) response {
		t.Helper()
		r, err := v.send(http.MethodHead, "site", path, nil)
		if err != nil {
			t.Fatalf("HEAD %s: %v", path, err)
		}
		return r
	}
	get := v.get("site", "/a")
	expect(t, "GET /a", get, http.StatusOK, "MISS", "0123456789")
	h := head("/a")
	expect(t, "HEAD /a", h, http.StatusOK, "HIT", "")
	for _, name := range []string{"Content-Length", "Content-Type", "Etag", "Cache-Control"} {
		if h.header.Get(name) != get.header.Get(name) {
			t.Errorf("HEAD /a: %s %q, want %q as for GET", name, h.header.Get(name), get.header.Get(name))
		}
	}

	expect(t, "HEAD /b (miss)", head("/b"), http.StatusOK, "MISS", "")
	if m := o.last().Method; m != http.MethodGet {
		t.Errorf("HEAD miss: the origin got %s, want GET", m)
	}
	expect(t, "GET /b after HEAD", v.get("site", "/b"), http.StatusOK, "HIT", "0123456789")
	if c := o.count(); c != 2 {
		t.Errorf("the origin got %d requests, want 2", c)
	}
}

// TestRouting checks that the edge answers by Host and 404s unknown hosts.
func TestRouting(t *testing.T) {
	v := newEnv(t, nil)
	o := v.origin(text("routed", "Cache-Control", "max-age=60"))
	v.deploy("site", o.srv.URL, -1)
	for _, tc := range []struct {
		host   string
		status int
	}{
		{"site.cdn.localhost", http.StatusOK},
		{"SITE.cdn.localhost.", http.StatusOK},
		{"site.cdn.localhost:8080", http.StatusOK},
		{"other.cdn.localhost", http.StatusNotFound},
		{"site.example.com", http.StatusNotFound},
		{"cdn.localhost", http.StatusNotFound},
	} {
		req, err := http.NewRequest(http.MethodGet, v.srv.URL+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = tc.host
		resp, err := v.client.Do(req)
		if err != nil {
			t.Fatalf("Host %s: %v", tc.host, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("Host %s: status %d (%q), want %d", tc.host, resp.StatusCode, b, tc.status)
		}
	}
}

// TestStats checks a deployment's figures after a scripted sequence.
func TestStats(t *testing.T) {
	v := newEnv(t, nil)
	o := v.origin(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			w.Header().Set("Cache-Control", "max-age=10, stale-while-revalidate=60")
			io.WriteString(w, "aaaa")
		case "/b":
			w.Header().Set("Cache-Control", "no-store")
			io.WriteString(w, "bb")
		}
	})
	d := v.deploy("site", o.srv.URL, -1)
	other := v.deploy("other", o.srv.URL, -1)

	expect(t, "GET /a", v.get("site", "/a"), http.StatusOK, "MISS", "aaaa")
	expect(t, "GET /a again", v.get("site", "/a"), http.StatusOK, "HIT", "aaaa")
	expect(t, "GET /b", v.get("site", "/b"), http.StatusOK, "MISS", "bb")
	v.clock.Advance(15 * time.Second)
	expect(t, "GET /a stale", v.get("site", "/a"), http.StatusOK, "STALE", "aaaa")
	waitFor(t, "the background revalidation", func() bool { return o.count() == 3 && idle(v.edge) })
	expect(t, "GET /a revalidated", v.get("site", "/a"), http.StatusOK, "HIT", "aaaa")
	if r := v.get("nobody", "/a"); r.status != http.StatusNotFound {
		t.Errorf("unknown host: got %v, want 404", r)
	}

	got := v.edge.Stats(d.ID)
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"requests", got.Requests, 5},
		{"hits", got.Hits, 2},
		{"misses", got.Misses, 2},
		{"stale", got.Stale, 1},
		{"bytes_served", got.BytesServed, 18},
		{"origin_requests", got.OriginRequests, 3},
		{"origin_bytes", got.OriginBytes, 10},
		{"origin_errors", got.OriginErrors, 0},
		{"cached_objects", got.CachedObjects, 1},
		{"cached_bytes", got.CachedBytes, 4},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
		}
	}
	if got.HitRatio != 0.6 {
		t.Errorf("hit_ratio: got %v, want 0.6", got.HitRatio)
	}
	if got.Since != t0.Format(time.RFC3339) {
		t.Errorf("since: got %q, want %q", got.Since, t0.Format(time.RFC3339))
	}
	if s := v.edge.Stats(other.ID); s.Requests != 0 || s.CachedObjects != 0 {
		t.Errorf("the other deployment: requests %d cached_objects %d, want 0 and 0", s.Requests, s.CachedObjects)
	}
}

// TestLoopDetected: an origin that leads back to the edge itself (here,
// a proxy in front of it that sends every request back to the same
// deployment) makes one round and no more: the edge names itself in
// CDN-Loop (RFC 8586) on the requests it sends an origin, and answers
// 508 to one that comes back with its name; GET and POST alike.
func TestLoopDetected(t *testing.T) {
	v := newEnv(t, nil)
	var hops atomic.Int64
	back := v.origin(func(w http.ResponseWriter, r *http.Request) {
		hops.Add(1)
		out, _ := http.NewRequest(r.Method, v.srv.URL+r.URL.RequestURI(), r.Body)
		out.Host = "loop.cdn.localhost"
		out.Header = r.Header.Clone()
		resp, err := v.client.Do(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})
	v.deploy("loop", back.srv.URL, 0)
	for _, method := range []string{"GET", "POST"} {
		hops.Store(0)
		r, err := v.send(method, "loop", "/x", strings.NewReader("body"))
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if got := hops.Load(); got != 1 {
			t.Errorf("%s: the request went round %d times, want once", method, got)
		}
		if r.status != http.StatusLoopDetected || !strings.Contains(r.body, "leads to the edge itself") {
			t.Errorf("%s through the loop: %s, want 508", method, r)
		}
		if tok := back.last().Header.Get("CDN-Loop"); !strings.HasPrefix(tok, "lattice-") {
			t.Errorf("%s: the origin saw CDN-Loop %q", method, tok)
		}
	}
	// Another CDN's token, or another lattice edge's, is no loop.
	plain := v.origin(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	v.deploy("plain", plain.srv.URL, 0)
	if r, err := v.send("GET", "plain", "/y", nil, "CDN-Loop", "cloudflare, lattice-other; v=1"); err != nil || r.status != 200 {
		t.Errorf("a request through other CDNs: %v, %v", r, err)
	}
}

// TestPurgeReachesEverySpelling: the cache keeps each spelling of a path
// a client sends apart, but a purge of the path, or of a prefix, reaches
// them all (escapes, dot segments, doubled slashes), as the origin reads
// them as one resource: none of them serves what was purged.
func TestPurgeReachesEverySpelling(t *testing.T) {
	v := newEnv(t, nil)
	var version atomic.Int64
	version.Store(1)
	o := v.origin(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=600")
		fmt.Fprintf(w, "v%d", version.Load())
	})
	d := v.deploy("site", o.srv.URL, -1)
	spellings := map[string][]string{
		"/secret.txt": {"/secret.txt", "/secret%2Etxt", "/x/../secret.txt", "//secret.txt", "/./secret.txt"},
		"/img/":       {"/img/a.png", "/im%67/a.png", "//img/a.png", "/img/./b.png"},
	}
	for _, paths := range spellings {
		for _, p := range paths {
			if r, err := v.send("GET", "site", p, nil); err != nil || r.body != "v1" {
				t.Fatalf("warming %s: %v, %v", p, r, err)
			}
			if r, err := v.send("GET", "site", p, nil); err != nil || r.header.Get("X-Cache") != "HIT" {
				t.Fatalf("%s is not cached: %v, %v", p, r, err)
			}
		}
	}
	version.Store(2)
	v.edge.Purge(d.ID, []string{"/secret.txt"}, []string{"/img/"})
	for _, paths := range spellings {
		for _, p := range paths {
			if r, err := v.send("GET", "site", p, nil); err != nil || r.body != "v2" {
				t.Errorf("%s after the purge: %v, %v; want the origin's v2", p, r, err)
			}
		}
	}
}

// TestSlowClientHoldsNoOne: a response the edge may not store (no-store)
// goes to the client whose miss fetched it, which here never reads it;
// another client's request for the same path meanwhile is not held
// waiting for that client, but fetches for itself and is answered.
func TestSlowClientHoldsNoOne(t *testing.T) {
	v := newEnv(t, nil)
	body := strings.Repeat("x", 16<<20) // more than the sockets' buffers hold
	o := v.origin(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, body)
	})
	v.deploy("site", o.srv.URL, -1)
	slow, err := net.Dial("tcp", v.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := io.WriteString(slow, "GET /big HTTP/1.1\r\nHost: site.cdn.localhost\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for o.count() < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	r, err := v.send("GET", "site", "/big", nil)
	if err != nil || r.status != 200 || len(r.body) != len(body) {
		t.Fatalf("another client beside one that never reads: %v, %v", r, err)
	}
	if o.count() != 2 {
		t.Errorf("the origin answered %d requests, want 2 (each client's own)", o.count())
	}
	t.Logf("answered in %s beside the stalled client", time.Since(start))
}
