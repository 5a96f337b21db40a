// Package cloudapi serves the cloud platform's REST API: Bearer API keys,
// accounts and tenant isolation, per-account rate limits, the error and list
// envelopes of decisions.md, and the Storage endpoints: buckets, objects,
// presigned URLs, public downloads, activity and metrics. Handlers are
// thin: they parse and validate, call the store, and return errors that one
// place turns into statuses.
package cloudapi

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/storagenames"
	"github.com/latticenet/lattice/docs/openapi"
	"github.com/latticenet/lattice/internal/run/accesslog"
	"github.com/latticenet/lattice/internal/run/drain"
	"github.com/latticenet/lattice/internal/run/httpmetrics"
	"github.com/latticenet/lattice/internal/strictjson"
)

// Options tune the API; zero values take the defaults.
type Options struct {
	RatePerSecond  float64       // per account; default 100 (negative: no limit)
	Burst          int           // default 200
	RequestTimeout time.Duration // default 30 s
	// TransferTimeout bounds uploads and downloads; default 1 hour.
	TransferTimeout time.Duration
	MaxBody         int64 // JSON bodies; default 1 MiB
	// S3Endpoint is the host:port the S3 endpoint listens on, for GET
	// /api/storage/endpoint ("" answers that there is none). An
	// unspecified host (":9000", "0.0.0.0:9000", "[::]:9000") is answered
	// with the host the client reached the API by.
	S3Endpoint string
	Region     string // the S3 endpoint's region; default us-east-1
	// PublicURL is the API's base URL as clients reach it
	// ("https://api.example.com"), for presigned URLs; default
	// "http://" and the request's Host.
	PublicURL string
	Now       func() time.Time
	Logger    *slog.Logger
	// Metrics, if set, counts every request (package httpmetrics) under
	// its route's pattern ("GET /api/storage/buckets/{name}"), or
	// "healthz", "readyz", "metrics" or "unmatched" (no route: 404, 405,
	// or a path refused as not clean).
	Metrics *httpmetrics.Metrics
	// MetricsHandler, if set, answers GET /metrics without an API key, for
	// Prometheus' scrapes; nil leaves /metrics unrouted (404).
	MetricsHandler http.Handler
}

func (o *Options) setDefaults() {
	if o.RatePerSecond == 0 {
		o.RatePerSecond = 100
	}
	if o.Burst == 0 {
		o.Burst = 200
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = 30 * time.Second
	}
	if o.TransferTimeout == 0 {
		o.TransferTimeout = time.Hour
	}
	if o.MaxBody == 0 {
		o.MaxBody = 1 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	o.PublicURL = strings.TrimRight(o.PublicURL, "/")
}

// Server is the REST API.
type Server struct {
	// reports add fields to /healthz and /readyz (Report); set before
	// the server serves.
	reports []report
	st      *cloudstore.Store
	acc     *accounts.Store // who calls: accounts and their API keys
	opts    Options
	mux     *http.ServeMux
	// patterns are the routes' patterns, the only names of requests in
	// the metrics besides the fixed ones, so that no client can make
	// series without bound.
	patterns map[string]bool
	limit    *limiter
	gate     drain.Gate // admits handlers until Wait
}

// handler is an endpoint: it may write a success answer, or return an
// error for ServeHTTP to answer. key is the caller's API key; on the routes
// that take presigned tokens or anonymous callers (see caller) it may be a
// stand-in holding only the account the token acts for, or nothing.
type handler func(w http.ResponseWriter, r *http.Request, key accounts.Key) error

// Routes that answer without an API key: a presigned token's, and (GET)
// anyone's for a public bucket.
const (
	downloadRoute  = "GET /api/storage/buckets/{name}/download/{key...}"
	putObjectRoute = "PUT /api/storage/buckets/{name}/objects/{key...}"
)

// transferRoutes run for Options.TransferTimeout, not RequestTimeout.
var transferRoutes = map[string]bool{
	downloadRoute:  true,
	putObjectRoute: true,
	"POST /api/storage/buckets/{name}/upload":       true,
	"POST /api/storage/buckets/{name}/download-zip": true,
}

// New returns the API over st, its callers authenticated by acc.
func New(st *cloudstore.Store, acc *accounts.Store, opts Options) *Server {
	opts.setDefaults()
	s := &Server{st: st, acc: acc, opts: opts, mux: http.NewServeMux(), patterns: map[string]bool{}, limit: newLimiter(opts.RatePerSecond, opts.Burst)}
	s.route("GET /api/storage/buckets", s.listBuckets)
	s.route("POST /api/storage/buckets", s.createBucket)
	s.route("GET /api/storage/buckets/{name}", s.getBucket)
	s.route("PATCH /api/storage/buckets/{name}", s.patchBucket)
	s.route("DELETE /api/storage/buckets/{name}", s.deleteBucket)
	s.route("PATCH /api/storage/buckets/{name}/public", s.setPublic)
	s.route("PUT /api/storage/buckets/{name}/versioning", s.setVersioning)
	s.metered("GET /api/storage/buckets/{name}/versions", cloudstore.OpList, s.listVersions)
	s.metered("GET /api/storage/buckets/{name}/objects", cloudstore.OpList, s.listObjects)
	s.metered("POST /api/storage/buckets/{name}/upload", cloudstore.OpPut, s.upload)
	s.metered(downloadRoute, cloudstore.OpGet, s.download)
	s.metered(putObjectRoute, cloudstore.OpPut, s.putObject)
	s.metered("DELETE /api/storage/buckets/{name}/objects/{key...}", cloudstore.OpDelete, s.deleteObject)
	s.route("POST /api/storage/buckets/{name}/copy", s.copyObject)
	s.route("POST /api/storage/buckets/{name}/folders", s.folder)
	s.metered("POST /api/storage/buckets/{name}/download-zip", cloudstore.OpGet, s.downloadZip)
	s.route("POST /api/storage/buckets/{name}/presign", s.presign)
	s.route("GET /api/storage/buckets/{name}/events", s.events)
	s.route("GET /api/storage/buckets/{name}/metrics", s.metrics)
	s.route("GET /api/storage/buckets/{name}/metrics/summary", s.metricsSummary)
	s.route("GET /api/storage/buckets/{name}/metrics/top-objects", s.topObjects)
	s.route("GET /api/storage/buckets/{name}/metrics/file-types", s.fileTypes)
	s.route("GET /api/storage/buckets/{name}/lifecycle", s.listRules)
	s.route("POST /api/storage/buckets/{name}/lifecycle", s.addRule)
	s.route("DELETE /api/storage/buckets/{name}/lifecycle/{ruleId}", s.deleteRule)
	s.route("GET /api/storage/usage", s.usage)
	s.route("GET /api/storage/kms/keys", s.listKMSKeys)
	s.route("POST /api/storage/kms/keys", s.createKMSKey)
	s.route("GET /api/storage/kms/keys/{key}", s.getKMSKey)
	s.route("POST /api/storage/kms/keys/{key}/{action}", s.changeKMSKey)
	s.route("GET /api/storage/keys", s.listS3Keys)
	s.route("POST /api/storage/keys", s.createS3Key)
	s.route("DELETE /api/storage/keys/{id}", s.deleteS3Key)
	s.route("GET /api/storage/endpoint", s.endpoint)
	s.route("GET /api/admin/keys", admin(s.listKeys))
	s.route("POST /api/admin/keys", admin(s.createKey))
	s.route("DELETE /api/admin/keys/{id}", admin(s.revokeKey))
	return s
}

type ctxKey struct{}

func (s *Server) route(pattern string, h handler) { s.metered(pattern, "", h) }

// metered is route for an endpoint whose requests count in the bucket's
// access metrics as op.
func (s *Server) metered(pattern, op string, h handler) {
	s.patterns[pattern] = true
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(ctxKey{}).(caller)
		start := s.opts.Now()
		if rec, ok := w.(*accesslog.Recorder); ok && op != "" {
			in := &countingReader{r: r.Body}
			r = r.WithContext(r.Context()) // see ServeHTTP
			r.Body = in
			defer s.record(r, op, start, in, rec) // also when a stream is cut (a panic)
		}
		if err := h(w, r, c.key); err != nil {
			e := apiError(err)
			if e.Status == http.StatusInternalServerError {
				s.opts.Logger.Error("request failed", "request_id", w.Header().Get("X-Request-Id"), "err", err)
			}
			writeError(w, e)
		}
	})
}

// record counts a request in its bucket's access metrics.
func (s *Server) record(r *http.Request, op string, start time.Time, in *countingReader, rec *accesslog.Recorder) {
	bucket := r.PathValue("name")
	if storagenames.ExistingBucketName(bucket) != nil {
		return
	}
	if rec.Status >= 300 && rec.Status != http.StatusNotModified {
		// A success went through the handler's ownership check (or a
		// presigned token's, or the public path's); a failure may be
		// anyone's: it counts only if the caller owns the bucket.
		c, _ := r.Context().Value(ctxKey{}).(caller)
		if c.key.Account == "" {
			return
		}
		if _, err := s.st.Bucket(c.key.Account, bucket); err != nil {
			return
		}
	}
	key := r.PathValue("key")
	if key == "" && op == cloudstore.OpPut {
		key = r.URL.Query().Get("key") // a raw upload's
	}
	s.st.RecordAccess(bucket, cloudstore.Access{Time: start, Op: op, Key: key, Status: rec.Status,
		BytesIn: in.n, BytesOut: rec.Bytes})
}

// countingReader counts the bytes read from a request body.
type countingReader struct {
	r io.ReadCloser
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }

func admin(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
		if !key.Admin {
			return errForbidden
		}
		return h(w, r, key)
	}
}

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// ServeHTTP authenticates, rate-limits, bounds and logs every request,
// then routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("X-Request-Id")
	if !requestIDPattern.MatchString(id) {
		var b [8]byte
		rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	w.Header().Set("X-Request-Id", id)
	if !s.gate.Enter() {
		w.Header().Set("Connection", "close")
		writeError(w, &Error{http.StatusServiceUnavailable, "unavailable", "the platform is shutting down", 0})
		return
	}
	defer s.gate.Leave()
	start := s.opts.Now()
	rec := accesslog.New(w)
	var account string
	// The request's name in the metrics, and its body's bytes as read.
	op := "unmatched"
	in := &countingReader{r: r.Body}
	if r.Body != nil {
		// On a copy of the request: net/http looks at the original's
		// Body after the handler, and a body it does not recognise it
		// drains first (256 KiB), which holds an early answer (a 413
		// for a declared size) until the client sends that much.
		r = r.WithContext(r.Context())
		r.Body = in
	}
	defer func() {
		p := recover()
		switch {
		case p == http.ErrAbortHandler: // a stream cut on purpose: net/http drops the connection
		case p != nil:
			s.opts.Logger.Error("handler panic", "request_id", id, "panic", p)
			if !rec.Wrote {
				writeError(rec, apiError(nil))
			}
		}
		s.opts.Logger.Info("http", "request_id", id, "account", account, "method", r.Method, "path", r.URL.Path,
			"status", rec.Status, "bytes", rec.Bytes, "duration", s.opts.Now().Sub(start), "remote", r.RemoteAddr)
		s.opts.Metrics.Observe(op, rec.Status, s.opts.Now().Sub(start), in.n, rec.Bytes)
		if p == http.ErrAbortHandler {
			panic(p)
		}
	}()

	switch {
	case r.URL.Path == "/healthz" || r.URL.Path == "/readyz":
		op = r.URL.Path[1:]
		s.health(rec, r)
		return
	case r.URL.Path == "/openapi.json":
		op = "openapi"
		serveDocument(rec, r)
		return
	case r.URL.Path == "/metrics" && s.opts.MetricsHandler != nil:
		op = "metrics"
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			rec.Header().Set("Allow", "GET, HEAD")
			writeError(rec, &Error{http.StatusMethodNotAllowed, "method_not_allowed", "use GET", 0})
			return
		}
		s.opts.MetricsHandler.ServeHTTP(rec, r)
		return
	}
	// ServeMux would answer a path that is not clean with a redirect to the
	// cleaned one, which names another object (x/../a is a, c//d is c/d),
	// and clients follow redirects with their key: refuse instead.
	if !cleanPath(r.URL.EscapedPath()) {
		writeError(rec, &Error{http.StatusNotFound, "not_found", "the path has an empty, \".\" or \"..\" segment; object keys with such segments are reachable through the S3 endpoint only", 0})
		return
	}
	pattern := s.match(r)
	if s.patterns[pattern] {
		op = pattern
	}
	c, err := s.authenticate(r, pattern)
	if err != nil {
		writeError(rec, apiError(err))
		return
	}
	account = c.key.Account
	if ok, wait := s.limit.take(c.limitKey(r), s.opts.Now()); !ok {
		who := "this account"
		if c.anonymous {
			who = "this address without an API key"
		}
		writeError(rec, &Error{http.StatusTooManyRequests, "rate_limited", "too many requests for " + who + "; retry after the Retry-After seconds", wait})
		return
	}
	timeout := s.opts.RequestTimeout
	if transferRoutes[pattern] {
		timeout = s.opts.TransferTimeout // bodies of up to MaxObjectSize
	}
	ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), ctxKey{}, c), timeout)
	defer cancel()
	// The caller's reads and writes use its own account's KMS keys only
	// (an anonymous caller's, none).
	ctx = cloudstore.KMSRequester(ctx, c.key.Account)
	r = r.WithContext(ctx)
	if pattern == "" {
		s.noRoute(rec, r)
		return
	}
	s.mux.ServeHTTP(rec, r)
}

// caller is who makes a request: an API key's holder, a presigned token's
// (key then holds only the token's account and key ID), or, for downloads
// from public buckets, anyone.
type caller struct {
	key       accounts.Key
	token     *claims // set for a presigned request
	anonymous bool
}

// limitKey is the rate limiter's bucket: the account, or for an anonymous
// caller the client's address (which no account name can equal).
func (c caller) limitKey(r *http.Request) string {
	if c.anonymous {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		return "anonymous " + host
	}
	return c.key.Account
}

// authenticate finds the request's caller. On the download and object
// PUT routes, a token query parameter is a presigned URL's and takes the
// place of the Authorization header; a download without either may be
// anonymous (its handler allows it for public buckets only). Every other
// route needs an API key.
func (s *Server) authenticate(r *http.Request, pattern string) (caller, error) {
	if (pattern == downloadRoute || pattern == putObjectRoute) && r.URL.Query().Has("token") {
		return s.presigned(r)
	}
	header := r.Header.Get("Authorization")
	if header == "" && pattern == downloadRoute {
		return caller{anonymous: true}, nil
	}
	if header == "" && r.URL.Query().Has("token") {
		return caller{}, errTokenRoute
	}
	scheme, secret, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") || !strings.HasPrefix(secret, accounts.KeyPrefix) {
		return caller{}, errUnauthorized
	}
	key, err := s.acc.Authenticate(secret)
	if err != nil {
		return caller{}, err
	}
	return caller{key: key}, nil
}

// Wait blocks until every running handler has returned.
func (s *Server) Wait() { s.gate.Close() }

// redirect is the type of the handler ServeMux gives for a path it
// would redirect.
var redirect = reflect.TypeOf(http.RedirectHandler("/", http.StatusTemporaryRedirect))

// match is the pattern of the route that serves r, or "" for none. A
// path that ServeMux would redirect, .../download to .../download/ (the
// {key...} routes with an empty key), is none: the API answers JSON, and
// a client should not follow a redirect with its key to a route it did
// not ask for.
func (s *Server) match(r *http.Request) string {
	h, pattern := s.mux.Handler(r)
	if reflect.TypeOf(h) == redirect {
		return ""
	}
	return pattern
}

func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if s.match(probe) != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeError(w, &Error{http.StatusMethodNotAllowed, "method_not_allowed",
			fmt.Sprintf("%s %s is not allowed; use %s", r.Method, r.URL.Path, strings.Join(allowed, ", ")), 0})
		return
	}
	writeError(w, notFound("endpoint "+r.Method+" "+r.URL.Path))
}

// decode reads a JSON body strictly into v.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return validation("Content-Type must be application/json, got %q", ct)
		}
	}
	err := strictjson.Object(http.MaxBytesReader(w, r.Body, s.opts.MaxBody), v)
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mbe):
		return &Error{http.StatusRequestEntityTooLarge, "payload_too_large", fmt.Sprintf("the body exceeds %d bytes", s.opts.MaxBody), 0}
	case errors.Is(err, io.EOF), errors.Is(err, strictjson.ErrNotObject):
		return validation("the body must be a JSON object")
	case errors.Is(err, strictjson.ErrTrailing):
		return validation("unexpected data after the JSON object")
	}
	return validation("invalid JSON body: %v", strictjson.Explain(err))
}

// decodeOptional is decode for a body whose fields are all optional:
// no body at all is taken as {}.
func (s *Server) decodeOptional(w http.ResponseWriter, r *http.Request, v any) error {
	br := bufio.NewReader(r.Body)
	if _, err := br.Peek(1); errors.Is(err, io.EOF) {
		return nil
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	return s.decode(w, r, v)
}

// cleanPath reports whether p is already clean: no empty, "." or ".."
// segment, though it may end in "/".
func cleanPath(p string) bool {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// Routes are the patterns of the endpoints this server answers ("GET
// /api/storage/buckets/{name}"), those of the services registered with
// Handle included, as docs/openapi/cloud.json describes them.
func (s *Server) Routes() []string {
	ps := []string{"GET /healthz", "GET /readyz", "GET /openapi.json"}
	if s.opts.MetricsHandler != nil {
		ps = append(ps, "GET /metrics")
	}
	for p := range s.patterns {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// serveDocument answers GET /openapi.json, unauthenticated: the API's
// OpenAPI document.
func serveDocument(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, &Error{http.StatusMethodNotAllowed, "method_not_allowed", "use GET", 0})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(openapi.Cloud))
}

// health answers the unauthenticated probes of load balancers and
// orchestrators: /healthz is 200 while the process serves; /readyz is 200
// while the store takes writes and 503, with the reason, once a failed
// disk write has made it read-only (reads still work; a restart is
// needed).
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, &Error{http.StatusMethodNotAllowed, "method_not_allowed", "use GET", 0})
		return
	}
	if err := s.st.Err(); err != nil && r.URL.Path == "/readyz" {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "read-only", "reason": err.Error()})
		return
	}
	out := map[string]string{"status": "ok"}
	for _, r := range s.reports {
		out[r.key] = r.value()
	}
	writeJSON(w, http.StatusOK, out)
}

type report struct {
	key   string
	value func() string
}

// Report adds key, with value's answer at each request, to the probes'
// JSON (a service's state: "compute": "tcg"). Call it before the server
// serves.
func (s *Server) Report(key string, value func() string) {
	s.reports = append(s.reports, report{key, value})
}
