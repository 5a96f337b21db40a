// Package cdnedge is the platform's CDN edge: an HTTP server that routes
// each request by its Host to a deployment (cdnstore) and answers it from
// a shared cache that follows RFC 9111 (the rules are cdnpolicy's), going
// to the deployment's origin (an http(s) server, or a bucket of this
// platform) on a miss.
//
// Concurrent misses for one resource make one origin fetch (the others
// wait for it); a stale response within stale-while-revalidate is served
// at once while one background fetch revalidates it; an origin that is
// unreachable, slow or failing gets the stale copy served where RFC 9111
// and stale-if-error allow, else 502 or 504. Every answer carries Age,
// X-Cache (HIT, MISS or STALE) and an RFC 9211 Cache-Status.
package cdnedge

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/latticenet/lattice/cloud/cdn/cdnpolicy"
	"github.com/latticenet/lattice/cloud/cdn/cdnrules"
	"github.com/latticenet/lattice/cloud/cdn/cdnstore"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/internal/run/httpserve"
)

// Options configure an edge; zero fields take the defaults.
type Options struct {
	Store   *cdnstore.Store
	Buckets Buckets // for s3:// origins (a *cloudstore.Store); nil serves them 502
	// CacheDir holds the disk tier; it is emptied at start (the cache
	// starts cold). "" keeps the cache in memory only.
	CacheDir string
	// MemoryBytes and DiskBytes bound the tiers (default 256 MiB and
	// 4 GiB); MaxMemoryObject is the largest body kept in memory
	// (default 1 MiB) and MaxObject the largest stored at all (default
	// 256 MiB, bodies beyond it are passed through uncached).
	MemoryBytes, DiskBytes, MaxMemoryObject, MaxObject int64
	// AllowPrivateOrigins lets origins be loopback, private or
	// link-local addresses (a development machine); off, the edge
	// refuses to connect to them.
	AllowPrivateOrigins bool
	// OriginTimeout bounds the wait for an origin's response headers
	// (default 30 s; over it the edge answers 504), FetchTimeout a whole
	// cache fill (default 5 min).
	OriginTimeout, FetchTimeout time.Duration
	// MaxStale bounds how stale a response may be to be served when the
	// origin cannot be reached and the response has no stale-if-error
	// (default 24 h).
	MaxStale time.Duration
	Logger   *slog.Logger
	Now      func() time.Time
}

// Edge is the caching edge; it is an http.Handler.
type Edge struct {
	opts      Options
	cache     *cache
	transport *http.Transport
	log       *slog.Logger
	since     time.Time

	fastHits atomic.Int64 // hits answered on the fast path (hitserve.go)

	// loopToken names this edge in the CDN-Loop field (RFC 8586) of
	// every request it sends an origin; a request that comes back with
	// it went round a loop (an origin that is the edge itself).
	loopToken string

	mu      sync.Mutex
	flights map[string]*flight
	stats   sync.Map // deployment id → *counters

	bg     sync.WaitGroup // background revalidations
	ctx    context.Context
	cancel context.CancelFunc
}

// New returns an edge over opts.Store. Close stops its background work.
func New(opts Options) (*Edge, error) {
	if opts.Store == nil {
		return nil, errors.New("cdnedge: no deployment store")
	}
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&opts.MemoryBytes, 256<<20)
	def(&opts.DiskBytes, 4<<30)
	def(&opts.MaxMemoryObject, 1<<20)
	def(&opts.MaxObject, 256<<20)
	if opts.OriginTimeout == 0 {
		opts.OriginTimeout = 30 * time.Second
	}
	if opts.FetchTimeout == 0 {
		opts.FetchTimeout = 5 * time.Minute
	}
	if opts.MaxStale == 0 {
		opts.MaxStale = 24 * time.Hour
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	diskLimit := opts.DiskBytes
	if opts.CacheDir == "" {
		diskLimit = opts.MemoryBytes // memory is the only tier
	} else if err := resetDir(opts.CacheDir); err != nil {
		return nil, fmt.Errorf("cdnedge: cache directory: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Edge{
		opts:      opts,
		cache:     newCache(opts.CacheDir, opts.MemoryBytes, diskLimit, opts.MaxMemoryObject),
		transport: newTransport(opts.AllowPrivateOrigins, opts.OriginTimeout),
		log:       opts.Logger,
		since:     opts.Now(),
		flights:   map[string]*flight{},
		ctx:       ctx,
		cancel:    cancel,
		loopToken: "lattice-" + rand.Text()[:10],
	}
	return e, nil
}

// Close cancels background revalidations, waits for them and closes idle
// origin connections.
func (e *Edge) Close() {
	e.cancel()
	e.bg.Wait()
	e.transport.CloseIdleConnections()
}

// counters are one deployment's figures.
type counters struct {
	requests, hits, misses, stale, bytesServed atomic.Int64
	originRequests, originBytes, originErrors  atomic.Int64
}

func (e *Edge) counters(dep string) *counters {
	if c, ok := e.stats.Load(dep); ok {
		return c.(*counters)
	}
	c, _ := e.stats.LoadOrStore(dep, &counters{})
	return c.(*counters)
}

// Stats returns deployment dep's figures since the edge started.
func (e *Edge) Stats(dep string) cloudwire.CDNStats {
	c := e.counters(dep)
	s := cloudwire.CDNStats{
		Since:          e.since.UTC().Format(time.RFC3339),
		Requests:       c.requests.Load(),
		Hits:           c.hits.Load(),
		Misses:         c.misses.Load(),
		Stale:          c.stale.Load(),
		BytesServed:    c.bytesServed.Load(),
		OriginRequests: c.originRequests.Load(),
		OriginBytes:    c.originBytes.Load(),
		OriginErrors:   c.originErrors.Load(),
	}
	if s.Requests > 0 {
		s.HitRatio = float64(s.Hits+s.Stale) / float64(s.Requests)
	}
	s.CachedObjects, s.CachedBytes = e.cache.usage(dep)
	return s
}

// Totals are the whole edge's figures, for metrics: the cache's sizes,
// and how many hits the fast path answered.
type Totals struct{ Objects, MemoryBytes, DiskBytes, FastPathHits int64 }

// Totals returns the edge's figures.
func (e *Edge) Totals() Totals {
	o, m, d := e.cache.totals()
	if e.opts.CacheDir == "" {
		d = 0
	}
	return Totals{o, m, d, e.fastHits.Load()}
}

// Purge drops deployment dep's cached responses (see cloudwire.Purge) at
// once and returns how many.
func (e *Edge) Purge(dep string, paths, prefixes []string) int {
	return e.cache.purge(dep, paths, prefixes)
}

// Forget drops a deleted deployment's cache and figures.
func (e *Edge) Forget(dep string) {
	e.cache.forget(dep)
	e.stats.Delete(dep)
}

// ServeHTTP answers a request for a deployment, or a probe (probe) when
// the host names none.
func (e *Edge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := strings.ToLower(r.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(host, ".")
	d, ok := e.opts.Store.Route(host)
	if !ok {
		if probe(w, r) {
			return
		}
		http.Error(w, fmt.Sprintf("no CDN deployment answers for %q", host), http.StatusNotFound)
		return
	}
	o, err := cdnrules.ParseOrigin(d.Origin)
	if err != nil { // stored canonical: cannot happen
		http.Error(w, "bad origin", http.StatusInternalServerError)
		return
	}
	c := e.counters(d.ID)
	c.requests.Add(1)
	if e.looped(r.Header) {
		http.Error(w, fmt.Sprintf("the request came back to this edge from deployment %s's origin: its origin leads to the edge itself", d.Name),
			http.StatusLoopDetected)
		return
	}
	if e.bucketGone(d, o) {
		// Checked before the cache: what was stored while the bucket was
		// public is not served once it is private.
		http.Error(w, "the origin bucket is gone or no longer public", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		e.pass(w, r, d, o, c)
		return
	}
	key := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		key += "?" + r.URL.RawQuery
	}
	rq := &request{d: d, o: o, key: key, r: r, c: c}
	for attempt := 0; ; attempt++ {
		v, found := e.cache.lookup(d.ID, key, func() http.Header { return r.Header })
		var stale *view
		if found {
			defer v.close()
			switch v.fresh.State(e.opts.Now()) {
			case cdnpolicy.Fresh:
				c.hits.Add(1)
				e.serve(w, r, v, "HIT", "hit", c)
				return
			case cdnpolicy.StaleWhileRevalidate:
				c.stale.Add(1)
				e.serve(w, r, v, "STALE", "hit; detail=stale-while-revalidate", c)
				e.background(rq, v)
				return
			}
			stale = &v
		}
		f, leader := e.join(d.ID + "\x00" + key)
		if leader {
			e.fill(w, rq, stale, f) // which lands f
			return
		}
		if attempt >= 2 {
			// Two flights landed and neither left a stored response for
			// this request (a purge or an eviction won each time): fetch
			// for this request alone. Only a flight's leader writes it.
			e.fill(w, rq, stale, nil)
			return
		}
		select {
		case <-f.done:
		case <-r.Context().Done():
			return
		}
		if !f.stored {
			// The leader's response could not be stored for it (no-store,
			// too big, an error): fetch for this request alone.
			e.fill(w, rq, stale, nil)
			return
		}
	}
}

// bucketGone reports whether d's origin is a bucket d may no longer read
// (CheckBucket): deleted, or another account's made private. Every
// request to a bucket origin asks, hits too, so that a bucket's owner who
// makes it private stops every other account's deployment of it at once,
// whatever its cache holds; the owner cannot purge another's deployment.
func (e *Edge) bucketGone(d cdnstore.Deployment, o cdnrules.Origin) bool {
	return o.Bucket != "" && e.opts.Buckets != nil && CheckBucket(e.opts.Buckets, d.Account, o.Bucket) != nil
}

// request is one request being answered.
type request struct {
	d   cdnstore.Deployment
	o   cdnrules.Origin
	key string
	r   *http.Request
	c   *counters
}

// flight is one origin fetch that concurrent misses of a key wait for.
// It lands (done closes) as soon as its leader knows whether the response
// was stored, before the leader writes it to its own client, so that a
// slow client holds back no other.
type flight struct {
	key    string
	done   chan struct{}
	stored bool // set once, before done closes (land)
	once   sync.Once
}

// join returns the flight for key, and whether the caller leads it (and
// must fill it: fill lands it).
func (e *Edge) join(key string) (*flight, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f := e.flights[key]; f != nil {
		return f, false
	}
	f := &flight{key: key, done: make(chan struct{})}
	e.flights[key] = f
	return f, true
}

// land ends f, once, with whether its response was stored: later misses
// of its key start a flight of their own, and its waiters go on, reading
// f.stored. Later calls change nothing.
func (e *Edge) land(f *flight, stored bool) {
	f.once.Do(func() {
		f.stored = stored
		e.mu.Lock()
		if e.flights[f.key] == f {
			delete(e.flights, f.key)
		}
		e.mu.Unlock()
		close(f.done)
	})
}

// background revalidates v, which is being served stale, unless a fetch
// of its key is in flight already.
func (e *Edge) background(rq *request, v view) {
	key := rq.d.ID + "\x00" + rq.key
	f, leader := e.join(key)
	if !leader {
		return
	}
	// The request's header is read after the handler returns: clone what
	// the fetch needs.
	r := rq.r.Clone(context.Background())
	bg := &request{d: rq.d, o: rq.o, key: rq.key, r: r, c: rq.c}
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		e.fill(nil, bg, &v, f) // which lands f
	}()
}

// fill fetches rq from the origin (conditionally when stale holds a stored
// response), stores what may be stored, and answers w (nil for a
// background revalidation). f, when not nil, lands as soon as whether the
// response was stored is known, and at the latest when fill returns.
func (e *Edge) fill(w http.ResponseWriter, rq *request, stale *view, f *flight) {
	ctx, cancel := context.WithTimeout(e.ctx, e.opts.FetchTimeout)
	defer cancel()
	gen := e.cache.generation(rq.d.ID)
	// settle lands f once whether the response was stored is known,
	// before anything is written to w.
	settle := func(stored bool) {
		if f != nil {
			e.land(f, stored)
		}
	}
	defer settle(false) // whatever else returns
	sent := e.opts.Now()
	resp, err := e.fetch(ctx, rq, stale)
	got := e.opts.Now()
	c := rq.c
	c.originRequests.Add(1)
	if err != nil {
		c.originErrors.Add(1)
		settle(false)
		if stale != nil && stale.fresh.ServeStaleOnError(got, true, e.opts.MaxStale) {
			if w != nil {
				c.stale.Add(1)
				e.serve(w, rq.r, *stale, "STALE", "hit; fwd=stale; detail=origin-unreachable", c)
			}
			return
		}
		if w == nil {
			return
		}
		c.misses.Add(1)
		status, msg := http.StatusBadGateway, "the origin could not be reached"
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
			status, msg = http.StatusGatewayTimeout, "the origin did not answer in time"
		}
		if errors.Is(err, errPrivateOrigin) {
			msg = "the origin's address is private, which this edge does not fetch from"
		}
		e.log.Warn("cdn: origin failed", "deployment", rq.d.Name, "origin", rq.d.Origin, "path", rq.key, "err", err)
		w.Header().Set("X-Cache", "MISS")
		w.Header().Set("Cache-Status", "lattice; fwd=uri-miss; fwd-status="+strconv.Itoa(status))
		http.Error(w, msg, status)
		return
	}
	defer resp.Body.Close()
	cdnpolicy.HopByHop(resp.Header)
	if resp.StatusCode >= 500 {
		c.originErrors.Add(1)
		if stale != nil && stale.fresh.ServeStaleOnError(got, false, e.opts.MaxStale) {
			settle(false)
			if w != nil {
				c.stale.Add(1)
				e.serve(w, rq.r, *stale, "STALE", "hit; fwd=stale; fwd-status="+strconv.Itoa(resp.StatusCode)+"; detail=stale-if-error", c)
			}
			return
		}
	}
	if resp.StatusCode == http.StatusNotModified && stale != nil {
		header := cdnpolicy.Refresh(stale.header, resp.Header)
		fresh := cdnpolicy.Compute(stale.status, header, sent, got, e.ttl(rq.d))
		wire := renderWire(stale.status, header, stale.body)
		v, ok := e.cache.refresh(stale.e, header, fresh, wire)
		if !ok { // purged meanwhile: the stale copy answers this request only
			v = *stale
			v.header, v.fresh, v.wire = header, fresh, wire
		} else {
			defer v.close()
		}
		settle(ok)
		if w != nil {
			c.hits.Add(1)
			e.serve(w, rq.r, v, "HIT", "hit; fwd=stale; fwd-status=304", c)
		}
		return
	}
	fwd := "uri-miss"
	if stale != nil {
		fwd = "stale"
	}
	if ok, _ := cdnpolicy.Storable(http.MethodGet, rq.r.Header, resp.StatusCode, resp.Header); !ok || resp.StatusCode == http.StatusNotModified {
		if stale != nil {
			e.cache.remove(stale.e)
		}
		settle(false)
		if w != nil {
			c.misses.Add(1)
			e.stream(w, rq.r, resp, nil, "lattice; fwd="+fwd+"; fwd-status="+strconv.Itoa(resp.StatusCode), c)
		} else {
			c.originBytes.Add(drainCount(resp.Body))
		}
		return
	}
	if resp.ContentLength > e.opts.MaxObject || (e.opts.CacheDir == "" && resp.ContentLength > e.opts.MaxMemoryObject) {
		settle(false)
		if w != nil {
			c.misses.Add(1)
			e.stream(w, rq.r, resp, nil, "lattice; fwd="+fwd+"; fwd-status="+strconv.Itoa(resp.StatusCode)+"; detail=too-large", c)
		}
		return
	}
	ent, prefix, err := e.read(rq, resp)
	c.originBytes.Add(ent.size)
	if err != nil {
		settle(false)
		if prefix != nil && w != nil {
			// Longer than the edge stores: pass it through, what was read
			// first and then the rest.
			c.misses.Add(1)
			e.stream(w, rq.r, resp, prefix, "lattice; fwd="+fwd+"; fwd-status="+strconv.Itoa(resp.StatusCode)+"; detail=too-large", c)
			return
		}
		if prefix != nil {
			prefix.Close()
		}
		c.originErrors.Add(1)
		e.log.Warn("cdn: reading from the origin failed", "deployment", rq.d.Name, "path", rq.key, "err", err)
		if w != nil {
			c.misses.Add(1)
			http.Error(w, "the origin's response broke off", http.StatusBadGateway)
		}
		return
	}
	fields, _ := cdnpolicy.VaryFields(resp.Header)
	ent.vkey = cdnpolicy.VaryKey(fields, rq.r.Header)
	ent.fresh = cdnpolicy.Compute(resp.StatusCode, resp.Header, sent, got, e.ttl(rq.d))
	ent.wire = renderWire(ent.status, ent.header, ent.body)
	// The view is taken before the entry is published: whatever happens to
	// the entry then (a purge that raced the fill, an eviction), its body
	// still answers this request.
	v, ok := ent.view()
	if !ok {
		if ent.file != "" {
			os.Remove(ent.file)
		}
		c.originErrors.Add(1)
		if w != nil {
			c.misses.Add(1)
			http.Error(w, "the edge could not read back the origin's response", http.StatusInternalServerError)
		}
		return
	}
	defer v.close()
	stored := e.cache.insert(ent, fields, gen)
	if !stored && ent.file != "" {
		os.Remove(ent.file) // the open view keeps it readable
	}
	settle(stored)
	if w == nil {
		return
	}
	c.misses.Add(1)
	status := "fwd=" + fwd + "; fwd-status=" + strconv.Itoa(resp.StatusCode)
	if stored {
		status += "; stored"
	}
	e.serve(w, rq.r, v, "MISS", status, c)
}

func (e *Edge) ttl(d cdnstore.Deployment) time.Duration {
	return time.Duration(d.DefaultTTL) * time.Second
}

// fetch asks the origin for rq's resource: the whole body (no Range), and,
// when revalidating, with stale's validators.
func (e *Edge) fetch(ctx context.Context, rq *request, stale *view) (*http.Response, error) {
	var cond http.Header
	if stale != nil {
		cond = cdnpolicy.Conditional(stale.header)
	}
	if rq.o.URL == nil {
		if e.opts.Buckets == nil {
			return nil, errors.New("no bucket store: s3:// origins are not served here")
		}
		return bucketResponse(e.opts.Buckets, rq.d, rq.o, rq.r.URL.Path, cond, e.opts.Now()), nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, originURL(rq.o.URL, rq.r.URL), nil)
	if err != nil {
		return nil, err
	}
	copyRequestHeader(req.Header, rq.r)
	req.Header.Add("CDN-Loop", e.loopToken)
	for _, h := range []string{"Range", "If-Range", "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since"} {
		req.Header.Del(h)
	}
	for k, v := range cond {
		req.Header[k] = v
	}
	return e.transport.RoundTrip(req)
}

// originURL is the origin's URL for the request's path and query.
func originURL(base, in *url.URL) string {
	u := *base
	u.Path = base.Path + in.Path
	u.RawPath = ""
	if in.RawPath != "" {
		u.RawPath = base.EscapedPath() + in.RawPath
	}
	u.RawQuery = in.RawQuery
	return u.String()
}

// looped reports whether h's CDN-Loop field names this edge: the
// request is one this edge sent an origin.
func (e *Edge) looped(h http.Header) bool {
	for _, v := range h.Values("CDN-Loop") {
		for _, part := range strings.Split(v, ",") {
			token, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.TrimSpace(token) == e.loopToken {
				return true
			}
		}
	}
	return false
}

// copyRequestHeader copies the client's header for the origin, without
// hop-by-hop fields, adding the X-Forwarded-* fields.
func copyRequestHeader(dst http.Header, r *http.Request) {
	for k, v := range r.Header {
		dst[k] = append([]string(nil), v...)
	}
	cdnpolicy.HopByHop(dst)
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		if prior := dst.Get("X-Forwarded-For"); prior != "" {
			ip = prior + ", " + ip
		}
		dst.Set("X-Forwarded-For", ip)
	}
	dst.Set("X-Forwarded-Host", r.Host)
	proto := "http"
	if r.TLS != nil {
		proto = "https"
	}
	dst.Set("X-Forwarded-Proto", proto)
	if _, ok := dst["User-Agent"]; !ok {
		dst["User-Agent"] = nil // no Go default
	}
}

// read reads resp's body into a new entry: in memory up to the memory
// tier's object limit, in a body file (with a disk tier) up to MaxObject.
// A body longer than the edge stores returns an error and a reader of
// the bytes read so far (the caller passes them on, then the rest).
func (e *Edge) read(rq *request, resp *http.Response) (*entry, io.ReadCloser, error) {
	ent := &entry{dep: rq.d.ID, key: rq.key, status: resp.StatusCode, header: resp.Header}
	limit := e.opts.MaxMemoryObject
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(resp.Body, limit+1))
	ent.size = n
	if err != nil {
		return ent, nil, err
	}
	if n <= limit {
		ent.body = buf.Bytes()
		if ent.body == nil {
			ent.body = []byte{}
		}
		if e.opts.CacheDir != "" {
			f, err := e.cache.newBodyFile()
			if err != nil {
				return ent, nil, err
			}
			_, err = f.Write(ent.body)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(f.Name())
				return ent, nil, err
			}
			ent.file = f.Name()
		}
		return ent, nil, nil
	}
	if e.opts.CacheDir == "" {
		return ent, io.NopCloser(&buf), errTooLarge
	}
	f, err := e.cache.newBodyFile()
	if err != nil {
		return ent, nil, err
	}
	m, err := io.Copy(f, io.MultiReader(&buf, io.LimitReader(resp.Body, e.opts.MaxObject-n+1)))
	ent.size = m
	if err == nil && m > e.opts.MaxObject {
		if _, err = f.Seek(0, io.SeekStart); err == nil {
			return ent, removeOnClose{f}, errTooLarge
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return ent, nil, err
	}
	ent.file = f.Name()
	return ent, nil, nil
}

var errTooLarge = errors.New("larger than the edge stores")

// removeOnClose is a body file that goes away when closed.
type removeOnClose struct{ *os.File }

func (f removeOnClose) Close() error {
	err := f.File.Close()
	os.Remove(f.Name())
	return err
}

// serve answers r from a stored response. A 200 is served through
// http.ServeContent, which handles Range and the client's conditional
// headers against the stored ETag and Last-Modified; other statuses are
// sent as they are.
func (e *Edge) serve(w http.ResponseWriter, r *http.Request, v view, xcache, cacheStatus string, c *counters) {
	h := w.Header()
	for k, vs := range v.header {
		if k != "Content-Length" {
			h[k] = vs
		}
	}
	age := v.fresh.Age(e.opts.Now())
	h.Set("Age", strconv.FormatInt(int64(age/time.Second), 10))
	h.Set("X-Cache", xcache)
	h.Set("Cache-Status", "lattice; "+cacheStatus)
	var body io.ReadSeeker
	if v.body != nil {
		body = bytes.NewReader(v.body)
	} else {
		if _, err := v.f.Seek(0, io.SeekStart); err != nil {
			http.Error(w, "the edge could not read its cached response", http.StatusInternalServerError)
			return
		}
		body = v.f
	}
	cw := &countingWriter{ResponseWriter: w}
	defer func() { c.bytesServed.Add(cw.n) }()
	if v.status != http.StatusOK || (r.Header.Get("Range") == "" && !conditional(r)) {
		h.Set("Content-Length", strconv.FormatInt(v.size, 10))
		if v.status == http.StatusNoContent || v.status == http.StatusNotModified {
			h.Del("Content-Length")
		}
		w.WriteHeader(v.status)
		if r.Method != http.MethodHead {
			io.Copy(cw, body)
		}
		return
	}
	var mod time.Time
	if lm := v.header.Get("Last-Modified"); lm != "" {
		mod, _ = http.ParseTime(lm)
	}
	if _, ok := h["Content-Type"]; !ok {
		h["Content-Type"] = nil // ServeContent must not guess one
	}
	http.ServeContent(cw, r, "", mod, body)
}

func conditional(r *http.Request) bool {
	return r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" ||
		r.Header.Get("If-Match") != "" || r.Header.Get("If-Unmodified-Since") != ""
}

// stream passes an origin response that is not stored to the client:
// prefix (the part already read, if any) and then the rest of its body.
func (e *Edge) stream(w http.ResponseWriter, r *http.Request, resp *http.Response, prefix io.ReadCloser, cacheStatus string, c *counters) {
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = vs
	}
	h.Set("X-Cache", "MISS")
	h.Set("Cache-Status", cacheStatus)
	w.WriteHeader(resp.StatusCode)
	var body io.Reader = resp.Body
	if prefix != nil {
		defer prefix.Close()
		body = io.MultiReader(prefix, resp.Body)
	}
	if r.Method == http.MethodHead {
		return
	}
	cw := &countingWriter{ResponseWriter: w}
	n, _ := io.Copy(cw, body)
	c.bytesServed.Add(cw.n)
	if prefix == nil {
		c.originBytes.Add(n)
	}
}

// pass proxies a request with another method than GET and HEAD to an
// http(s) origin, uncached; a successful unsafe request invalidates the
// stored responses of its path (RFC 9111 4.4). Bucket origins are
// read-only.
func (e *Edge) pass(w http.ResponseWriter, r *http.Request, d cdnstore.Deployment, o cdnrules.Origin, c *counters) {
	c.misses.Add(1)
	if o.URL == nil {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "a bucket origin serves GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	c.originRequests.Add(1)
	rp := &httputil.ReverseProxy{
		Transport: e.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			u, _ := url.Parse(originURL(o.URL, pr.In.URL))
			pr.Out.URL = u
			pr.Out.Host = ""
			pr.SetXForwarded()
			pr.Out.Header.Add("CDN-Loop", e.loopToken)
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Set("X-Cache", "MISS")
			resp.Header.Set("Cache-Status", "lattice; fwd=method; fwd-status="+strconv.Itoa(resp.StatusCode))
			if resp.StatusCode < 400 {
				e.cache.purge(d.ID, []string{r.URL.EscapedPath()}, nil)
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			c.originErrors.Add(1)
			status := http.StatusBadGateway
			var ne net.Error
			if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
				status = http.StatusGatewayTimeout
			}
			e.log.Warn("cdn: origin failed", "deployment", d.Name, "method", r.Method, "err", err)
			http.Error(w, "the origin could not be reached", status)
		},
	}
	rp.ServeHTTP(w, r)
}

// countingWriter counts the body bytes written, keeping the connection's
// ReadFrom (sendfile for body files).
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.ResponseWriter.(io.ReaderFrom); ok {
		n, err := rf.ReadFrom(r)
		c.n += n
		return n, err
	}
	n, err := io.Copy(struct{ io.Writer }{c.ResponseWriter}, r)
	c.n += n
	return n, err
}

func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func drainCount(r io.Reader) int64 {
	n, _ := io.Copy(io.Discard, io.LimitReader(r, 1<<20))
	return n
}

// Probe paths: load balancers and orchestrators ask these, at an address
// (or name) that no deployment answers for.
const (
	ProbeLive  = httpserve.ProbeLive
	ProbeReady = httpserve.ProbeReady
)

// probe answers a liveness or readiness probe, which only a request whose
// host names no deployment can be: a customer's site may hold any path,
// and its requests never reach here. Both are 200 while the edge serves:
// it routes from its store's memory and fetches from origins, so there is
// nothing to be ready for beyond serving.
func probe(w http.ResponseWriter, r *http.Request) bool {
	if !httpserve.IsProbe(r) {
		return false
	}
	httpserve.ServeProbe(w, r, nil)
	return true
}
