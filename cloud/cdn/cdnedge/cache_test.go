package cdnedge

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sized answers each path with a body of the size its "n" query asks for
// (default 1000), made of the path's last letter, stored for 10 minutes.
func sized(w http.ResponseWriter, r *http.Request) {
	n := 1000
	if q := r.URL.Query().Get("n"); q != "" {
		n, _ = strconv.Atoi(q)
	}
	w.Header().Set("Cache-Control", "max-age=600")
	io.WriteString(w, sizedBody(r.URL.Path, n))
}

func sizedBody(path string, n int) string {
	return strings.Repeat(path[len(path)-1:], n)
}

// bodyFiles counts the files in the cache directory.
func bodyFiles(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading the cache directory: %v", err)
	}
	return len(ents)
}

// TestLRUEviction fills a tier that holds three 1000-byte responses and
// checks that the least recently used one is evicted.
func TestLRUEviction(t *testing.T) {
	for _, tc := range []struct {
		name string
		disk bool
		set  func(o *Options, dir string)
	}{
		{"memory only", false, func(o *Options, _ string) { o.MemoryBytes = 3000 }},
		{"disk", true, func(o *Options, dir string) { o.CacheDir, o.DiskBytes, o.MemoryBytes = dir, 3000, 1500 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			v := newEnv(t, func(o *Options) { tc.set(o, dir) })
			o := v.origin(sized)
			d := v.deploy("site", o.srv.URL, -1)
			for i, step := range []struct {
				path, xcache string
				origin       int
			}{
				{"/a", "MISS", 1}, {"/b", "MISS", 2}, {"/c", "MISS", 3},
				{"/a", "HIT", 3},  // a is now the most recently used, b the least
				{"/d", "MISS", 4}, // evicts b
				{"/a", "HIT", 4}, {"/c", "HIT", 4}, {"/d", "HIT", 4},
				{"/b", "MISS", 5}, // fetched again; evicts a
				{"/c", "HIT", 5}, {"/a", "MISS", 6},
			} {
				expect(t, fmt.Sprintf("step %d: %s", i, step.path), v.get("site", step.path), http.StatusOK, step.xcache, sizedBody(step.path, 1000))
				if n := o.count(); n != step.origin {
					t.Errorf("step %d: %s: the origin got %d requests, want %d", i, step.path, n, step.origin)
				}
			}
			s := v.edge.Stats(d.ID)
			if s.CachedObjects != 3 || s.CachedBytes != 3000 {
				t.Errorf("cached %d objects, %d bytes, want 3 and 3000", s.CachedObjects, s.CachedBytes)
			}
			tot := v.edge.Totals()
			if tc.disk {
				if tot.MemoryBytes > 1500 || tot.DiskBytes != 3000 {
					t.Errorf("totals: memory %d disk %d, want at most 1500 and 3000", tot.MemoryBytes, tot.DiskBytes)
				}
				if n := bodyFiles(t, dir); n != 3 {
					t.Errorf("%d body files in the cache directory, want 3", n)
				}
			} else if tot.MemoryBytes != 3000 || tot.DiskBytes != 0 {
				t.Errorf("totals: memory %d disk %d, want 3000 and 0", tot.MemoryBytes, tot.DiskBytes)
			}
		})
	}
}

// TestDiskTierLargeBody serves a body larger than MaxMemoryObject from
// its body file, whole and in ranges, byte for byte.
func TestDiskTierLargeBody(t *testing.T) {
	body := make([]byte, 3<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	dir := filepath.Join(t.TempDir(), "cache")
	v := newEnv(t, func(o *Options) { o.CacheDir = dir })
	o := v.origin(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=600")
		w.Header().Set("ETag", `"big"`)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
	v.deploy("site", o.srv.URL, -1)

	for i, tc := range []struct {
		header []string
		status int
		xcache string
		want   []byte
	}{
		{nil, http.StatusOK, "MISS", body},
		{nil, http.StatusOK, "HIT", body},
		{[]string{"Range", "bytes=1048000-3000000"}, http.StatusPartialContent, "HIT", body[1048000:3000001]},
		{[]string{"Range", "bytes=-10"}, http.StatusPartialContent, "HIT", body[len(body)-10:]},
	} {
		got := v.get("site", "/big.bin", tc.header...)
		if got.status != tc.status || got.header.Get("X-Cache") != tc.xcache || got.body != string(tc.want) {
			t.Errorf("request %d (%q): got %d X-Cache=%q %d bytes (equal: %v), want %d %q %d bytes", i, tc.header,
				got.status, got.header.Get("X-Cache"), len(got.body), got.body == string(tc.want), tc.status, tc.xcache, len(tc.want))
		}
	}
	if n := o.count(); n != 1 {
		t.Errorf("the origin got %d requests, want 1", n)
	}
	if tot := v.edge.Totals(); tot.MemoryBytes != 0 || tot.DiskBytes != int64(len(body)) {
		t.Errorf("totals: memory %d disk %d, want 0 and %d", tot.MemoryBytes, tot.DiskBytes, len(body))
	}
	if n := bodyFiles(t, dir); n != 1 {
		t.Errorf("%d body files in the cache directory, want 1", n)
	}
}

// TestMaxObject checks that a body over the largest the edge stores is
// passed through whole but not stored, whether its length is declared or
// not, and that a body at the limit is stored.
func TestMaxObject(t *testing.T) {
	const limit = 64 << 10
	for _, tier := range []struct {
		name string
		disk bool
		set  func(o *Options, dir string)
	}{
		{"memory only", false, func(o *Options, _ string) { o.MaxMemoryObject = limit }},
		{"disk", true, func(o *Options, dir string) { o.CacheDir, o.MaxObject, o.MaxMemoryObject = dir, limit, 4<<10 }},
	} {
		for _, tc := range []struct {
			name     string
			size     int
			declared bool // Content-Length sent; else chunked
			stored   bool
		}{
			{"over, declared", limit + 36<<10, true, false},
			{"over, chunked", limit + 36<<10, false, false},
			{"one over, chunked", limit + 1, false, false},
			{"at the limit, chunked", limit, false, true},
			{"at the limit, declared", limit, true, true},
		} {
			t.Run(tier.name+"/"+tc.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "cache")
				v := newEnv(t, func(o *Options) { tier.set(o, dir) })
				body := bytes.Repeat([]byte("0123456789abcdef"), tc.size/16+1)[:tc.size]
				o := v.origin(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Cache-Control", "max-age=600")
					if tc.declared {
						w.Header().Set("Content-Length", strconv.Itoa(len(body)))
					}
					for p := body; len(p) > 0; {
						n := min(len(p), 8<<10)
						w.Write(p[:n])
						w.(http.Flusher).Flush()
						p = p[n:]
					}
				})
				d := v.deploy("site", o.srv.URL, -1)
				second := "MISS"
				if tc.stored {
					second = "HIT"
				}
				expect(t, "first", v.get("site", "/blob"), http.StatusOK, "MISS", string(body))
				got := v.get("site", "/blob")
				expect(t, "second", got, http.StatusOK, second, string(body))
				wantOrigin, wantObjects, wantFiles := 2, int64(0), 0
				if tc.stored {
					wantOrigin, wantObjects, wantFiles = 1, 1, 1
				} else if cs := got.header.Get("Cache-Status"); !has(cs, "too-large") {
					t.Errorf("Cache-Status %q, want detail=too-large", cs)
				}
				if n := o.count(); n != wantOrigin {
					t.Errorf("the origin got %d requests, want %d", n, wantOrigin)
				}
				if s := v.edge.Stats(d.ID); s.CachedObjects != wantObjects {
					t.Errorf("cached_objects %d, want %d", s.CachedObjects, wantObjects)
				}
				if tier.disk {
					if n := bodyFiles(t, dir); n != wantFiles {
						t.Errorf("%d body files in the cache directory, want %d", n, wantFiles)
					}
				}
			})
		}
	}
}

// TestNewEmptiesCacheDir checks that the cache starts cold.
func TestNewEmptiesCacheDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"body-123", "sub/x"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	newEnv(t, func(o *Options) { o.CacheDir = dir })
	if n := bodyFiles(t, dir); n != 0 {
		t.Errorf("%d entries left in the cache directory, want 0", n)
	}
}

// TestPurge checks purges of everything, of paths (with every query and
// variant) and of prefixes: the purged responses are fetched again at
// once, the others are still hits.
func TestPurge(t *testing.T) {
	type req struct{ path, encoding string }
	cached := []req{
		{"/a", ""}, {"/a?x=1", ""}, {"/a?x=2", ""}, {"/ab", ""},
		{"/img/1.png", ""}, {"/img/2.png", ""}, {"/css/site.css", ""},
		{"/v", ""}, {"/v", "gzip"},
	}
	for _, tc := range []struct {
		name            string
		paths, prefixes []string
		purged          []string // paths (with query) purged
		wantN           int
	}{
		{"all", nil, nil, []string{"/a", "/a?x=1", "/a?x=2", "/ab", "/img/1.png", "/img/2.png", "/css/site.css", "/v"}, 9},
		{"path with its queries", []string{"/a"}, nil, []string{"/a", "/a?x=1", "/a?x=2"}, 3},
		{"path with its variants", []string{"/v"}, nil, []string{"/v"}, 2},
		{"prefix", nil, []string{"/img/"}, []string{"/img/1.png", "/img/2.png"}, 2},
		{"prefix that is a path's beginning", nil, []string{"/a"}, []string{"/a", "/a?x=1", "/a?x=2", "/ab"}, 4},
		{"paths and prefixes", []string{"/css/site.css"}, []string{"/img/"}, []string{"/css/site.css", "/img/1.png", "/img/2.png"}, 3},
		{"nothing matches", []string{"/nope"}, nil, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newEnv(t, nil)
			o := v.origin(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Cache-Control", "max-age=600")
				w.Header().Set("Vary", "Accept-Encoding")
				fmt.Fprintf(w, "%s %s", r.URL.RequestURI(), r.Header.Get("Accept-Encoding"))
			})
			d := v.deploy("site", o.srv.URL, -1)
			v.deploy("other", o.srv.URL, -1)
			get := func(dep string, r req) response {
				if r.encoding == "" {
					return v.get(dep, r.path)
				}
				return v.get(dep, r.path, "Accept-Encoding", r.encoding)
			}
			for _, r := range cached {
				get("site", r)
			}
			get("other", req{"/a", ""})
			if n := v.edge.Purge(d.ID, tc.paths, tc.prefixes); n != tc.wantN {
				t.Errorf("Purge(%q, %q) = %d, want %d", tc.paths, tc.prefixes, n, tc.wantN)
			}
			if s := v.edge.Stats(d.ID); s.CachedObjects != int64(len(cached)-tc.wantN) {
				t.Errorf("cached_objects %d after the purge, want %d", s.CachedObjects, len(cached)-tc.wantN)
			}
			before := o.count()
			for _, r := range cached {
				want := "HIT"
				for _, p := range tc.purged {
					if p == r.path {
						want = "MISS"
					}
				}
				expect(t, fmt.Sprintf("%s (%s)", r.path, r.encoding), get("site", r), http.StatusOK, want, r.path+" "+r.encoding)
			}
			if n := o.count() - before; n != tc.wantN {
				t.Errorf("after the purge the origin got %d requests, want %d", n, tc.wantN)
			}
			expect(t, "the other deployment", get("other", req{"/a", ""}), http.StatusOK, "HIT", "/a ")
		})
	}
}

// TestPurgeDuringFill purges while a fill is waiting for the origin: the
// fill's response answers its request but is not stored.
func TestPurgeDuringFill(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		set  func(o *Options, dir string)
	}{
		{"memory", 100, nil},
		{"disk, in memory too", 100, func(o *Options, dir string) { o.CacheDir = dir }},
		{"disk only", 2 << 20, func(o *Options, dir string) { o.CacheDir = dir }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			v := newEnv(t, func(o *Options) {
				if tc.set != nil {
					tc.set(o, dir)
				}
			})
			release := make(chan struct{})
			var once sync.Once
			unblock := func() { once.Do(func() { close(release) }) }
			body := strings.Repeat("p", tc.size)
			o := v.origin(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-Block") != "" {
					select {
					case <-release:
					case <-r.Context().Done():
						return
					}
				}
				w.Header().Set("Cache-Control", "max-age=600")
				io.WriteString(w, body)
			})
			t.Cleanup(unblock)
			d := v.deploy("site", o.srv.URL, -1)

			type result struct {
				r   response
				err error
			}
			done := make(chan result, 1)
			go func() {
				r, err := v.send(http.MethodGet, "site", "/page", nil, "X-Block", "1")
				done <- result{r, err}
			}()
			waitFor(t, "the fill to reach the origin", func() bool { return o.count() == 1 })
			if n := v.edge.Purge(d.ID, nil, nil); n != 0 {
				t.Errorf("Purge = %d, want 0", n)
			}
			unblock()
			res := <-done
			if res.err != nil {
				t.Fatalf("the purged fill's request: %v", res.err)
			}
			expect(t, "the purged fill's request", res.r, http.StatusOK, "MISS", body)
			if cs := res.r.header.Get("Cache-Status"); has(cs, "stored") {
				t.Errorf("the purged fill's Cache-Status %q says stored", cs)
			}
			expect(t, "after the purge", v.get("site", "/page"), http.StatusOK, "MISS", body)
			expect(t, "then", v.get("site", "/page"), http.StatusOK, "HIT", body)
			if n := o.count(); n != 2 {
				t.Errorf("the origin got %d requests, want 2", n)
			}
			if tc.set != nil {
				if n := bodyFiles(t, dir); n != 1 {
					t.Errorf("%d body files in the cache directory, want 1", n)
				}
			}
		})
	}
}

// TestConcurrentFillsAndEvictions runs many clients over more paths than
// the tiers hold, so fills, hits, revalidations and evictions overlap
// (run with -race); every answer must carry its path's body.
func TestConcurrentFillsAndEvictions(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(o *Options, dir string)
	}{
		{"memory only", func(o *Options, _ string) { o.MemoryBytes = 4000 }},
		{"disk", func(o *Options, dir string) { o.CacheDir, o.MemoryBytes, o.DiskBytes = dir, 2000, 6000 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			v := newEnv(t, func(o *Options) { tc.set(o, dir) })
			o := v.origin(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Cache-Control", "max-age=1")
				w.Header().Set("ETag", `"`+r.URL.Path+`"`)
				if r.Header.Get("If-None-Match") == `"`+r.URL.Path+`"` {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				io.WriteString(w, sizedBody(r.URL.Path, 1000))
			})
			v.deploy("site", o.srv.URL, -1)
			const clients, each = 8, 40
			var wg sync.WaitGroup
			errs := make(chan error, clients*each)
			for c := range clients {
				wg.Go(func() {
					for i := range each {
						if i%10 == 0 {
							v.clock.Advance(time.Second)
						}
						path := "/" + string(rune('a'+(c*7+i*3)%16))
						r, err := v.send(http.MethodGet, "site", path, nil)
						if err == nil && (r.status != http.StatusOK || r.body != sizedBody(path, 1000)) {
							err = fmt.Errorf("%s: got %v", path, r)
						}
						if err != nil {
							errs <- err
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}
