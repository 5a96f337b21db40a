// Package cloudapi serves the cloud platform's REST API: Bearer API keys,
// accounts and tenant isolation, per-account rate limits, the error and list
// envelopes of decisions.md, and the Storage bucket endpoints. Handlers are
// thin: they parse and validate, call the store, and return errors that one
// place turns into statuses.
package cloudapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/latticenet/lattice/cloudstore"
)

// Options tune the API; zero values take the defaults.
type Options struct {
	RatePerSecond  float64       // per account; default 100 (negative: no limit)
	Burst          int           // default 200
	RequestTimeout time.Duration // default 30 s
	// TransferTimeout bounds uploads and downloads; default 1 hour.
	TransferTimeout time.Duration
	MaxBody         int64 // JSON bodies; default 1 MiB
	Now             func() time.Time
	Logger          *slog.Logger
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
}

// Server is the REST API.
type Server struct {
	st       *cloudstore.Store
	opts     Options
	mux      *http.ServeMux
	limit    *limiter
	inflight sync.WaitGroup
	// closing is set by Wait under closeMu; requests that arrive after
	// it are refused, so inflight.Add never races with inflight.Wait.
	closeMu sync.Mutex
	closing bool
}

// handler is an endpoint: it may write a success answer, or return an
// error for ServeHTTP to answer.
type handler func(w http.ResponseWriter, r *http.Request, key cloudstore.Key) error

// New returns the API over st.
func New(st *cloudstore.Store, opts Options) *Server {
	opts.setDefaults()
	s := &Server{st: st, opts: opts, mux: http.NewServeMux(), limit: newLimiter(opts.RatePerSecond, opts.Burst)}
	s.route("GET /api/storage/buckets", s.listBuckets)
	s.route("POST /api/storage/buckets", s.createBucket)
	s.route("GET /api/storage/buckets/{name}", s.getBucket)
	s.route("PATCH /api/storage/buckets/{name}", s.patchBucket)
	s.route("DELETE /api/storage/buckets/{name}", s.deleteBucket)
	s.route("PATCH /api/storage/buckets/{name}/public", s.setPublic)
	s.route("GET /api/storage/buckets/{name}/objects", s.listObjects)
	s.route("POST /api/storage/buckets/{name}/upload", s.upload)
	s.route("GET /api/storage/buckets/{name}/download/{key...}", s.download)
	s.route("DELETE /api/storage/buckets/{name}/objects/{key...}", s.deleteObject)
	s.route("POST /api/storage/buckets/{name}/copy", s.copyObject)
	s.route("POST /api/storage/buckets/{name}/folders", s.folder)
	s.route("GET /api/storage/buckets/{name}/lifecycle", s.listRules)
	s.route("POST /api/storage/buckets/{name}/lifecycle", s.addRule)
	s.route("DELETE /api/storage/buckets/{name}/lifecycle/{ruleId}", s.deleteRule)
	s.route("GET /api/storage/usage", s.usage)
	s.route("GET /api/storage/keys", s.listS3Keys)
	s.route("POST /api/storage/keys", s.createS3Key)
	s.route("DELETE /api/storage/keys/{id}", s.deleteS3Key)
	s.route("GET /api/admin/keys", admin(s.listKeys))
	s.route("POST /api/admin/keys", admin(s.createKey))
	s.route("DELETE /api/admin/keys/{id}", admin(s.revokeKey))
	return s
}

type ctxKey struct{}

func (s *Server) route(pattern string, h handler) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		key, _ := r.Context().Value(ctxKey{}).(cloudstore.Key)
		if err := h(w, r, key); err != nil {
			e := apiError(err)
			if e.Status == http.StatusInternalServerError {
				s.opts.Logger.Error("request failed", "request_id", w.Header().Get("X-Request-Id"), "err", err)
			}
			writeError(w, e)
		}
	})
}

func admin(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request, key cloudstore.Key) error {
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
	s.closeMu.Lock()
	if s.closing {
		s.closeMu.Unlock()
		w.Header().Set("Connection", "close")
		writeError(w, &Error{http.StatusServiceUnavailable, "unavailable", "the platform is shutting down", 0})
		return
	}
	s.inflight.Add(1)
	s.closeMu.Unlock()
	defer s.inflight.Done()
	start := s.opts.Now()
	id := r.Header.Get("X-Request-Id")
	if !requestIDPattern.MatchString(id) {
		var b [8]byte
		rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	w.Header().Set("X-Request-Id", id)
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	var account string
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("handler panic", "request_id", id, "panic", p)
			if !rec.wrote {
				writeError(rec, apiError(nil))
			}
		}
		s.opts.Logger.Info("http", "request_id", id, "account", account, "method", r.Method, "path", r.URL.Path,
			"status", rec.status, "bytes", rec.bytes, "duration", s.opts.Now().Sub(start), "remote", r.RemoteAddr)
	}()

	scheme, secret, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") || !strings.HasPrefix(secret, cloudstore.KeyPrefix) {
		writeError(rec, errUnauthorized)
		return
	}
	key, err := s.st.Authenticate(secret)
	if err != nil {
		writeError(rec, apiError(err))
		return
	}
	account = key.Account
	if ok, wait := s.limit.take(key.Account, s.opts.Now()); !ok {
		writeError(rec, &Error{http.StatusTooManyRequests, "rate_limited", "too many requests for this account; retry after the Retry-After seconds", wait})
		return
	}
	timeout := s.opts.RequestTimeout
	if strings.HasSuffix(r.URL.Path, "/upload") || strings.Contains(r.URL.Path, "/download/") {
		timeout = s.opts.TransferTimeout // bodies of up to MaxObjectSize
	}
	ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), ctxKey{}, key), timeout)
	defer cancel()
	r = r.WithContext(ctx)
	if _, pattern := s.mux.Handler(r); pattern == "" {
		s.noRoute(rec, r)
		return
	}
	s.mux.ServeHTTP(rec, r)
}

// Wait blocks until every running handler has returned.
func (s *Server) Wait() {
	s.closeMu.Lock()
	s.closing = true
	s.closeMu.Unlock()
	s.inflight.Wait()
}

func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" {
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
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return &Error{http.StatusRequestEntityTooLarge, "payload_too_large", fmt.Sprintf("the body exceeds %d bytes", s.opts.MaxBody), 0}
		case errors.Is(err, io.EOF):
			return validation("the body must be a JSON object")
		}
		return validation("invalid JSON body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return validation("unexpected data after the JSON object")
	}
	return nil
}

type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
	wrote  bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(p)
	r.bytes += n
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
