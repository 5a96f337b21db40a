package cloudapi

import (
	"net/http"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudwire"
)

// The seam for the platform's other services (DNS, and CDN and compute
// next): each registers its routes with Handle, and its handlers run
// behind the same authentication, rate limits, timeouts, access log,
// metrics and error envelope as storage's, with the helpers below.

// Handler is a service's endpoint, called for an authenticated account.
// It writes a success answer, or returns an error (an *Error, else a 500).
type Handler func(w http.ResponseWriter, r *http.Request, account string) error

// Handle routes pattern ("GET /api/dns/zones/{id}") to h. It needs an API
// key; call it before the server serves.
func (s *Server) Handle(pattern string, h Handler) {
	s.route(pattern, func(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
		return h(w, r, key.Account)
	})
}

// Decode reads a JSON body strictly into v: the API's size limit, no
// unknown fields, nothing after the object. Errors are *Error.
func (s *Server) Decode(w http.ResponseWriter, r *http.Request, v any) error {
	return s.decode(w, r, v)
}

// DecodeOptional is Decode for a body whose fields are all optional: no
// body at all (Content-Length 0, or a chunked body that is empty) is {}.
func (s *Server) DecodeOptional(w http.ResponseWriter, r *http.Request, v any) error {
	return s.decodeOptional(w, r, v)
}

// WriteJSON writes v as the JSON answer with status.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// Page parses page and per_page and cuts that page out of all.
func Page[T any](r *http.Request, all []T) (cloudwire.List[T], error) { return pageOf(r, all) }

// Validation is a 400 validation_error with the message.
func Validation(format string, args ...any) *Error { return validation(format, args...) }

// NotFound is a 404 not_found: "<what> not found".
func NotFound(what string) *Error { return notFound(what) }

// Conflict is a 409 conflict with the message.
func Conflict(message string) *Error { return &Error{http.StatusConflict, "conflict", message, 0} }

// Unavailable is the 503 the API answers for writes when the disk failed.
func Unavailable() *Error { return errUnavailable }
