package cloudapi

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudwire"
)

// Presigned URL lifetimes (decisions.md).
const (
	DefaultPresignExpiry = time.Hour
	MaxPresignExpiry     = 7 * 24 * time.Hour
)

// presignLabel names the key tokens are signed with (cloudstore.DerivedKey).
const presignLabel = "presign v1"

// presign answers POST .../presign {key, action, expires}.
func (s *Server) presign(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	bucket, err := bucketName(r)
	if err != nil {
		return err
	}
	var req struct {
		Key     string `json:"key"`
		Action  string `json:"action"`
		Expires string `json:"expires"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if err := cloudwire.ValidRESTKey(req.Key); err != nil {
		return validation("key: %v", err)
	}
	var method, path string
	switch req.Action {
	case "upload":
		method, path = http.MethodPut, "/objects/"
	case "download":
		method, path = http.MethodGet, "/download/"
	default:
		return validation("action must be upload or download, got %q", req.Action)
	}
	d, err := parseExpires(req.Expires)
	if err != nil {
		return err
	}
	if _, err := s.st.Bucket(key.Account, bucket); err != nil {
		return bucketErr(err)
	}
	signKey, err := s.st.DerivedKey(presignLabel)
	if err != nil {
		return err
	}
	// Rounded up to the second the token holds, so that the URL lives at
	// least as long as asked (a "1s" URL rounded down could live a few
	// ms), but never past the longest lifetime: 7d is rounded down.
	now := s.opts.Now()
	exp := now.Add(d + time.Second - time.Nanosecond).Unix()
	if latest := now.Add(MaxPresignExpiry).Unix(); exp > latest {
		exp = latest
	}
	tok := signToken(signKey, claims{Account: key.Account, KeyID: key.ID, Bucket: bucket, Key: req.Key, Method: method, Expires: exp})
	base := s.opts.PublicURL
	if base == "" {
		base = "http://" + r.Host
	}
	writeJSON(w, http.StatusOK, cloudwire.PresignedURL{
		URL:     base + "/api/storage/buckets/" + bucket + path + escapeKey(req.Key) + "?token=" + tok,
		Method:  method,
		Expires: time.Unix(exp, 0).UTC().Format(time.RFC3339),
	})
	return nil
}

// escapeKey escapes an object key for a URL path, segment by segment.
func escapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return strings.Join(segs, "/")
}

// parseExpires reads a lifetime: a positive whole number and one unit of
// s, m, h or d; "" is DefaultPresignExpiry.
func parseExpires(v string) (time.Duration, error) {
	if v == "" {
		return DefaultPresignExpiry, nil
	}
	bad := validation("expires must be a whole number of s, m, h or d (such as 30m, 1h, 7d) from 1s to 7d, got %q", v)
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}
	unit, ok := units[v[len(v)-1]]
	if !ok || len(v) > 12 {
		return 0, bad
	}
	n, err := strconv.ParseUint(v[:len(v)-1], 10, 32)
	if err != nil || n == 0 || time.Duration(n) > MaxPresignExpiry/unit {
		return 0, bad
	}
	return time.Duration(n) * unit, nil
}

// Errors of presigned requests.
var (
	errTokenForbidden = &Error{http.StatusForbidden, "forbidden", "this presigned URL is for another bucket, object or method", 0}
	errTokenBad       = &Error{http.StatusUnauthorized, "unauthorized", "the presigned URL's token is malformed or has been altered", 0}
	errTokenRoute     = &Error{http.StatusUnauthorized, "unauthorized", "a presigned URL is used with the method it was made for: " +
		"PUT for an upload URL, GET or HEAD for a download URL; any other request needs Authorization: Bearer lat_live_...", 0}
)

// presigned authenticates a request by its token: signed by this
// platform, not expired, presigned by an API key that is not revoked.
// Which bucket, key and method it is for, the handler checks (allowed).
func (s *Server) presigned(r *http.Request) (caller, error) {
	signKey, err := s.st.DerivedKey(presignLabel)
	if err != nil {
		return caller{}, err
	}
	c, err := verifyToken(signKey, r.URL.Query().Get("token"), s.opts.Now())
	switch {
	case errors.Is(err, errTokenExpired):
		return caller{}, &Error{http.StatusUnauthorized, "unauthorized", "the presigned URL " + strings.TrimPrefix(err.Error(), "cloudapi: token ") + "; ask for a new one", 0}
	case err != nil:
		return caller{}, errTokenBad
	}
	key, err := s.acc.KeyByID(c.KeyID)
	if errors.Is(err, accounts.ErrNotFound) || (err == nil && (key.Revoked || key.Account != c.Account)) {
		return caller{}, &Error{http.StatusUnauthorized, "unauthorized", "the API key that made this presigned URL has been revoked", 0}
	}
	if err != nil {
		return caller{}, err
	}
	return caller{key: accounts.Key{ID: key.ID, Account: c.Account}, token: &c}, nil
}

// allowed checks that a presigned caller's token is for this bucket, key
// and method (a GET token also serves HEAD).
func (c caller) allowed(r *http.Request, bucket, key string) error {
	if c.token == nil {
		return nil
	}
	m := r.Method
	if m == http.MethodHead {
		m = http.MethodGet
	}
	if c.token.Bucket != bucket || c.token.Key != key || c.token.Method != m {
		return errTokenForbidden
	}
	return nil
}

// S3Endpoint is the answer of GET /api/storage/endpoint.
type S3Endpoint struct {
	Endpoint string `json:"endpoint"` // http://host:port
	Port     int    `json:"port"`
	Region   string `json:"region"`
}

// endpoint answers GET /api/storage/endpoint: where S3 SDKs connect.
func (s *Server) endpoint(w http.ResponseWriter, r *http.Request, key accounts.Key) error {
	if s.opts.S3Endpoint == "" {
		return &Error{http.StatusNotFound, "not_found", "this platform runs no S3 endpoint", 0}
	}
	host, port, err := net.SplitHostPort(s.opts.S3Endpoint)
	if err != nil {
		return fmt.Errorf("cloudapi: S3Endpoint %q: %w", s.opts.S3Endpoint, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("cloudapi: S3Endpoint %q: port: %w", s.opts.S3Endpoint, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = r.Host
		if u, err := url.Parse(s.opts.PublicURL); s.opts.PublicURL != "" && err == nil {
			host = u.Host
		}
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
	}
	writeJSON(w, http.StatusOK, S3Endpoint{Endpoint: "http://" + net.JoinHostPort(host, port), Port: n, Region: s.opts.Region})
	return nil
}
