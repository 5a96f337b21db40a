package s3api

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3website"
	"github.com/latticenet/lattice/internal/run/accesslog"
)

// Static website hosting, as S3 keeps it: PutBucketWebsite,
// GetBucketWebsite and DeleteBucketWebsite on ?website; an object's
// x-amz-website-redirect-location (objects.go keeps it); and the website
// endpoint (Website), which serves a bucket's objects as a site to
// anonymous browsers. Package s3website holds the rules; this file reads
// the objects.

var errNoSuchWebsite = s3err(http.StatusNotFound, "NoSuchWebsiteConfiguration", "The specified bucket does not have a website configuration")

func websiteRoute(r *request, q url.Values) (operation, bool) {
	if !q.Has("website") {
		return operation{}, false
	}
	if r.key != "" {
		return notImplemented("Unsupported:website"), true
	}
	switch r.Method {
	case http.MethodGet:
		return operation{name: "GetBucketWebsite", read: true, run: (*Server).getBucketWebsite}, true
	case http.MethodPut:
		return operation{name: "PutBucketWebsite", write: true, run: (*Server).putBucketWebsite}, true
	case http.MethodDelete:
		return operation{name: "DeleteBucketWebsite", write: true, run: (*Server).deleteBucketWebsite}, true
	}
	return methodNotAllowed("BucketWebsite"), true
}

func (s *Server) getBucketWebsite(w http.ResponseWriter, r *request) error {
	return s.website.get(s, w, r)
}

func (s *Server) putBucketWebsite(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	data, err := readBody(r.body, s3website.MaxSize)
	if err != nil {
		return err
	}
	c, err := s3website.Parse(data)
	switch {
	case errors.Is(err, s3website.ErrInvalid):
		return s3err(http.StatusBadRequest, "InvalidArgument", strings.TrimPrefix(err.Error(), "s3website: invalid website configuration: "))
	case err != nil:
		return errMalformedXML
	}
	return s.website.store(s, w, r, data, c)
}

func (s *Server) deleteBucketWebsite(w http.ResponseWriter, r *request) error {
	return s.website.remove(s, w, r)
}

// websiteRedirect reads an object write's x-amz-website-redirect-location:
// "" when it has none, an error when it is not a path or an http(s) URL.
func websiteRedirect(h http.Header) (string, error) {
	v := h.Get(cloudstore.MetaWebsiteRedirect)
	if v == "" {
		return "", nil
	}
	if err := s3website.CheckRedirectLocation(v); err != nil {
		return "", s3err(http.StatusBadRequest, "InvalidRedirectLocation", strings.TrimPrefix(err.Error(), "s3website: invalid redirect location: "))
	}
	return v, nil
}

// WebsiteOptions configure the website endpoint.
type WebsiteOptions struct {
	// Domain is the base domain of website hosts: BUCKET.Domain[:port]
	// serves BUCKET's site. Any other host name is taken whole for the
	// bucket's name, so that a bucket named www.example.com serves the
	// site of a CNAME pointed at the endpoint, as in S3.
	Domain string
}

// Website returns the website endpoint: anonymous GET and HEAD requests
// for the sites of the buckets that have a website configuration,
// answered in HTML. It reads each object through the S3 endpoint itself,
// as an anonymous GetObject, so that a site shows exactly what the
// bucket's policy, ACLs, public toggle and Block Public Access let anyone
// read, and the reads are logged and counted as any other.
func (s *Server) Website(o WebsiteOptions) http.Handler {
	return &website{s: s, domain: strings.ToLower(strings.Trim(o.Domain, "."))}
}

type website struct {
	s      *Server
	domain string
}

// bucket is the bucket whose site host names.
func (ws *website) bucket(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if b, ok := strings.CutSuffix(host, "."+ws.domain); ok && ws.domain != "" && b != "" {
		return b
	}
	return host
}

func (ws *website) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := accesslog.New(w)
	a := websiteAnswer{w: rec, r: r, id: newRequestID()}
	defer func() {
		// One line a request, whatever answered it; the object reads are
		// also the S3 endpoint's own requests (logged, counted, and in
		// the bucket's access log), under their request ids.
		ws.s.opts.Logger.Info("s3 website", "request_id", a.id, "host", r.Host, "method", r.Method, "path", r.URL.Path,
			"status", rec.Status, "answer", a.what, "location", rec.Header().Get("Location"), "bytes_out", rec.Bytes,
			"duration", time.Since(start), "remote", r.RemoteAddr)
	}()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rec.Header().Set("Allow", "GET, HEAD")
		a.page(http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.", "")
		return
	}
	bucket := ws.bucket(r.Host)
	_, c, err := ws.s.website.read(ws.s, bucket)
	if errors.Is(err, cloudstore.ErrNotFound) {
		a.page(http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist", "")
		return
	}
	if err != nil {
		ws.s.opts.Logger.Error("s3 website: reading the configuration", "request_id", a.id, "bucket", bucket, "err", err)
		a.page(http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.", "")
		return
	}
	if c == nil {
		a.page(http.StatusNotFound, errNoSuchWebsite.Code, errNoSuchWebsite.Message, "")
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if c.RedirectAll != nil {
		a.redirect(c.RedirectAll.Location(r.URL.RequestURI(), scheme), http.StatusMovedPermanently)
		return
	}
	pathKey := s3website.PathKey(r.URL.Path)
	if rule := c.Before(pathKey); rule != nil {
		a.redirect(rule.Location(pathKey, scheme, r.Host))
		return
	}
	key := c.Key(pathKey)
	got := ws.read(rec, r, r.Method, bucket, key, 0)
	if got.id != "" {
		a.id = got.id // the S3 endpoint's, which its logs name
	}
	switch {
	case got.served:
		a.what = "object"
		return
	case got.location != "":
		a.redirect(got.location, http.StatusMovedPermanently)
		return
	case got.status == http.StatusPreconditionFailed || got.status == http.StatusRequestedRangeNotSatisfiable:
		// The request's own conditions failed, not the site: answered as
		// GetObject answers them, without rules or the error document.
		if cr := got.header.Get("Content-Range"); cr != "" {
			rec.Header().Set("Content-Range", cr)
		}
		a.page(got.status, got.code, got.message, key)
		return
	case got.status == http.StatusNotFound && key == pathKey && pathKey != "":
		// A folder asked for without its slash: S3 sends the browser to
		// the folder, so that its page's relative links resolve there.
		if ws.read(nil, r, http.MethodHead, bucket, pathKey+"/"+c.Index, 0).status == http.StatusOK {
			// Absolute, so that a path beginning // is not taken for
			// another host.
			u := url.URL{Scheme: scheme, Host: r.Host, Path: "/" + pathKey + "/"}
			a.redirect(u.String(), http.StatusFound)
			return
		}
	}
	if rule := c.After(pathKey, got.status); rule != nil {
		a.redirect(rule.Location(pathKey, scheme, r.Host))
		return
	}
	if got.status >= 400 && got.status < 500 && c.ErrorKey != "" {
		if ws.read(rec, r, r.Method, bucket, c.ErrorKey, got.status).served {
			a.what = "error document"
			return
		}
	}
	a.page(got.status, got.code, got.message, key)
}

// websiteAnswer answers a website request that no object answers.
type websiteAnswer struct {
	w    http.ResponseWriter
	r    *http.Request
	id   string
	what string // what answered, for the log
}

func (a *websiteAnswer) redirect(location string, code int) {
	a.what = "redirect"
	a.w.Header().Set("X-Amz-Request-Id", a.id)
	a.w.Header().Set("Server", "lattice")
	a.w.Header().Set("Location", location)
	a.w.Header().Set("Content-Length", "0")
	a.w.WriteHeader(code)
}

// page answers an error as S3's website endpoints do: an HTML page naming
// the error, with the status of the error.
func (a *websiteAnswer) page(status int, code, message, key string) {
	a.what = "error page"
	title := strconv.Itoa(status) + " " + http.StatusText(status)
	var b strings.Builder
	b.WriteString("<html>\n<head><title>" + title + "</title></head>\n<body>\n<h1>" + title + "</h1>\n<ul>\n")
	b.WriteString("<li>Code: " + html.EscapeString(code) + "</li>\n")
	b.WriteString("<li>Message: " + html.EscapeString(message) + "</li>\n")
	if key != "" {
		b.WriteString("<li>Key: " + html.EscapeString(key) + "</li>\n")
	}
	b.WriteString("<li>RequestId: " + html.EscapeString(a.id) + "</li>\n</ul>\n<hr/>\n</body>\n</html>\n")
	h := a.w.Header()
	h.Set("X-Amz-Request-Id", a.id)
	h.Set("Server", "lattice")
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	h.Set("X-Content-Type-Options", "nosniff")
	a.w.WriteHeader(status)
	if a.r.Method != http.MethodHead {
		a.w.Write([]byte(b.String()))
	}
}

// websiteReadKey marks the context of the S3 endpoint's requests that
// read objects for the website endpoint.
type websiteReadKey struct{}

// isWebsiteRead tells whether r reads an object for the website endpoint.
func isWebsiteRead(r *http.Request) bool { return r.Context().Value(websiteReadKey{}) != nil }

// read reads key of bucket through the S3 endpoint, as an anonymous
// request of method (GET or HEAD) from r's client. When w is not nil,
// an object found is served to w, with status instead of its own when
// that is not 0; otherwise (an error, an object's website redirect)
// nothing is written, and the result says what was found. Only the read
// of the page asked for (w set, status 0) carries the request's Range
// and conditions.
func (ws *website) read(w http.ResponseWriter, r *http.Request, method, bucket, key string, status int) websiteRead {
	h := http.Header{}
	names := []string{"Origin", "Referer", "User-Agent"}
	if w != nil && status == 0 {
		names = append(names, "Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since")
	}
	for _, name := range names {
		if v := r.Header.Values(name); len(v) > 0 {
			h[name] = v
		}
	}
	// Path style, with no Host: the bucket is the website's, whatever
	// the S3 endpoint's virtual-hosted domains would make of its host.
	sub := &http.Request{Method: method, URL: &url.URL{Path: "/" + bucket + "/" + key}, Proto: r.Proto, ProtoMajor: r.ProtoMajor, ProtoMinor: r.ProtoMinor,
		Header: h, Body: http.NoBody, RemoteAddr: r.RemoteAddr, RequestURI: "/" + bucket + "/" + url.PathEscape(key)}
	c := &capture{w: w, h: http.Header{}, override: status}
	ws.s.ServeHTTP(c, sub.WithContext(context.WithValue(r.Context(), websiteReadKey{}, true)))
	if c.status == 0 {
		c.status = http.StatusOK
	}
	res := websiteRead{served: c.passed, status: c.status, location: c.location, header: c.h, id: c.h.Get("X-Amz-Request-Id")}
	if !res.served && res.location == "" {
		var e errorBody
		if xml.Unmarshal(c.body.Bytes(), &e) == nil && e.Code != "" {
			res.code, res.message = e.Code, e.Message
		} else {
			res.code, res.message = strings.ReplaceAll(http.StatusText(c.status), " ", ""), http.StatusText(c.status)
		}
	}
	return res
}

// websiteRead is what read found.
type websiteRead struct {
	served   bool   // the object was written to the client
	status   int    // the S3 endpoint's status
	location string // the object's website redirect
	// The S3 error's code and message, when it failed.
	code, message string
	header        http.Header // the S3 endpoint's answer's
	id            string      // the S3 endpoint's request id
}

// capture stands between the S3 endpoint and the website's client: it
// passes an object read to w (with override as its status, when not 0)
// and keeps anything else (an error, an object's website redirect) for
// the website to answer.
type capture struct {
	w        http.ResponseWriter // nil: pass nothing
	h        http.Header
	override int
	status   int
	passed   bool
	location string
	body     bytes.Buffer // an error's, up to maxErrorBody
}

const maxErrorBody = 64 << 10

func (c *capture) Header() http.Header { return c.h }

func (c *capture) WriteHeader(code int) {
	if c.status != 0 {
		return
	}
	c.status = code
	ok := code < 300 || code == http.StatusNotModified
	if loc := c.h.Get(cloudstore.MetaWebsiteRedirect); loc != "" && ok && c.override == 0 {
		c.location = loc
		return
	}
	if !ok || c.w == nil || (c.override != 0 && code != http.StatusOK) {
		return
	}
	dst := c.w.Header()
	for k, v := range c.h {
		dst[k] = v
	}
	dst.Del(cloudstore.MetaWebsiteRedirect)
	if c.override != 0 {
		code = c.override
	}
	c.passed = true
	c.w.WriteHeader(code)
}

func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.passed {
		return c.w.Write(p)
	}
	if c.location == "" && c.body.Len() < maxErrorBody {
		c.body.Write(p[:min(len(p), maxErrorBody-c.body.Len())])
	}
	return len(p), nil
}

// Unwrap lets the S3 endpoint set a transfer's deadlines on the
// client's connection (http.ResponseController).
func (c *capture) Unwrap() http.ResponseWriter { return c.w }

func (c *capture) Flush() {
	if f, ok := c.w.(http.Flusher); ok && c.passed {
		f.Flush()
	}
}
