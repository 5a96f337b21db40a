package s3api

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3cors"
)

// Bucket CORS, as S3 keeps it: PutBucketCors, GetBucketCors and
// DeleteBucketCors (?cors on a bucket) keep a CORSConfiguration in the
// store's bucket configurations; package s3cors matches requests against
// it.
//
//   - A preflight, OPTIONS /BUCKET[/KEY] with Origin and
//     Access-Control-Request-Method (and perhaps -Headers), is answered
//     unauthenticated, as browsers send it: 200 with the Access-Control-*
//     headers of the first rule that allows it, or 403 AccessForbidden.
//   - Any other request carrying an Origin that a rule allows for its
//     method (signed, presigned or anonymous, refused or not, as S3 does)
//     is answered with Access-Control-Allow-Origin, -Methods,
//     -Expose-Headers, -Max-Age (and -Allow-Credentials for a named
//     origin). A request with an Origin to a bucket with CORS rules gets
//     Vary: Origin.

var (
	errNoSuchCORS  = s3err(http.StatusNotFound, "NoSuchCORSConfiguration", "The CORS configuration does not exist")
	errCORSOff     = s3err(http.StatusForbidden, "AccessForbidden", "CORSResponse: CORS is not enabled for this bucket.")
	errCORSRefused = s3err(http.StatusForbidden, "AccessForbidden", "CORSResponse: This CORS request is not allowed. This is usually because the "+
		"evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.")
)

// corsRoute returns the operation of a preflight or of a ?cors request,
// if r is one.
func corsRoute(r *request, q url.Values) (operation, bool) {
	if r.Method == http.MethodOptions {
		return operation{name: "PreflightCORS", run: (*Server).preflight}, true
	}
	if !q.Has("cors") {
		return operation{}, false
	}
	if r.key != "" {
		return notImplemented("Unsupported:cors"), true
	}
	switch r.Method {
	case http.MethodGet:
		return operation{name: "GetBucketCors", read: true, run: (*Server).getBucketCors}, true
	case http.MethodPut:
		return operation{name: "PutBucketCors", write: true, run: (*Server).putBucketCors}, true
	case http.MethodDelete:
		return operation{name: "DeleteBucketCors", write: true, run: (*Server).deleteBucketCors}, true
	}
	return methodNotAllowed("BucketCors"), true
}

// bucketCORS returns the bucket called name, whoever owns it, and its
// parsed CORS rules (nil when it has none).
func (s *Server) bucketCORS(name string) (cloudstore.Bucket, *s3cors.Config, error) {
	return s.cors.read(s, name)
}

func (s *Server) getBucketCors(w http.ResponseWriter, r *request) error { return s.cors.get(s, w, r) }

func (s *Server) putBucketCors(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	// S3 requires the body's integrity to be checked: Content-MD5 or an
	// x-amz-checksum-* (which the body is verified against as it is read).
	if r.Header.Get("Content-Md5") == "" && (r.sums == nil || len(r.sums.Algorithms()) == 0) {
		return s3err(http.StatusBadRequest, "InvalidRequest", "Missing required header for this request: Content-MD5 (or an x-amz-checksum-* header)")
	}
	data, err := readBody(r.body, s3cors.MaxSize)
	if err != nil {
		return err
	}
	c, err := s3cors.Parse(data)
	switch {
	case errors.Is(err, s3cors.ErrInvalid):
		return s3err(http.StatusBadRequest, "InvalidRequest", strings.TrimPrefix(err.Error(), "s3cors: invalid CORS configuration: "))
	case err != nil:
		return errMalformedXML
	}
	return s.cors.store(s, w, r, data, c)
}

func (s *Server) deleteBucketCors(w http.ResponseWriter, r *request) error {
	return s.cors.remove(s, w, r)
}

// authorizePreflight admits a preflight, unsigned as browsers send them;
// the owner of the bucket, if there is one, is the account it counts for.
func (s *Server) authorizePreflight(req *request) error {
	if bk, _, err := s.st.BucketWithConfig(req.bucket, cloudstore.ConfigCORS); err == nil {
		req.account = bk.Account
	}
	req.body = req.Body
	return nil
}

// preflight answers a CORS preflight. A missing bucket, or one without
// CORS rules, is refused alike, so that preflights do not tell which
// names exist.
func (s *Server) preflight(w http.ResponseWriter, r *request) error {
	origin := r.Header.Get("Origin")
	method := r.Header.Get("Access-Control-Request-Method")
	switch {
	case origin == "":
		return s3err(http.StatusBadRequest, "BadRequest", "Insufficient information. Origin request header needed.")
	case method == "":
		return s3err(http.StatusBadRequest, "BadRequest", "Insufficient information. Access-Control-Request-Method request header needed.")
	}
	_, c, err := s.bucketCORS(r.bucket)
	if err != nil || c == nil {
		return errCORSOff
	}
	headers := s3cors.SplitHeaders(strings.Join(r.Header.Values("Access-Control-Request-Headers"), ","))
	rule, ok := c.Match(origin, method, headers)
	if !ok {
		return errCORSRefused
	}
	h := w.Header()
	for name, v := range rule.Headers(origin, true, headers) {
		h.Set(name, v)
	}
	h.Add("Vary", "Origin")
	h.Add("Vary", "Access-Control-Request-Headers")
	h.Add("Vary", "Access-Control-Request-Method")
	w.WriteHeader(http.StatusOK)
	return nil
}

// setCORSHeaders gives a request with an Origin the headers of the first
// CORS rule of its bucket that allows its origin and method.
func (s *Server) setCORSHeaders(w http.ResponseWriter, req *request) {
	origin := req.Header.Get("Origin")
	if origin == "" || req.bucket == "" || req.Method == http.MethodOptions {
		return
	}
	_, c, err := s.bucketCORS(req.bucket)
	if err != nil || c == nil {
		return
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	rule, ok := c.Match(origin, req.Method, nil)
	if !ok {
		return
	}
	for name, v := range rule.Headers(origin, false, nil) {
		h.Set(name, v)
	}
}
