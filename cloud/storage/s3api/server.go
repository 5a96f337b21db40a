// Package s3api serves the S3-compatible endpoint over the cloud
// platform's buckets and objects: the same store the REST API uses, so a
// bucket made in one is seen by the other. It authenticates with the S3
// keys of the REST API (AWS Signature V4, package sigv4, and the
// Version 2 of legacy clients, package sigv2), enforces their
// permissions and bucket scope on every request, and answers S3's XML.
//
// Both path-style (http://host/bucket/key) and virtual-hosted-style
// (http://bucket.domain/key) addressing work; the domains are configured.
package s3api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3cors"
	"github.com/latticenet/lattice/cloud/storage/s3log"
	"github.com/latticenet/lattice/cloud/storage/s3policy"
	"github.com/latticenet/lattice/cloud/storage/s3website"
	"github.com/latticenet/lattice/cloud/storage/sigv2"
	"github.com/latticenet/lattice/cloud/storage/sigv4"
	"github.com/latticenet/lattice/internal/run/accesslog"
	"github.com/latticenet/lattice/internal/run/drain"
	"github.com/latticenet/lattice/internal/run/httpmetrics"
)

// Options tune the endpoint; zero values take the defaults.
type Options struct {
	// Region is the one region this endpoint serves; default us-east-1.
	// Requests may be signed for it or for "auto".
	Region string
	// Domains are the base domains of virtual-hosted-style requests: a
	// request to BUCKET.DOMAIN[:port] addresses BUCKET. Default
	// ["localhost"], so http://mybucket.localhost:9000 works.
	Domains []string
	// MaxObjectSize bounds a single PUT; default 5 GiB, as in S3.
	MaxObjectSize int64
	// Timeout bounds one request, bodies included; default 1 hour.
	Timeout time.Duration
	Now     func() time.Time
	Logger  *slog.Logger
	// Metrics, if set, counts every request (package httpmetrics) under
	// its S3 operation's name ("PutObject", "ListObjectsV2"; see
	// metricOp).
	Metrics *httpmetrics.Metrics
	// Limits keep one account or address from taking the endpoint from
	// the others (see Limits for the defaults).
	Limits Limits
	// AccessLogInterval is how often server access log records are
	// delivered to their target buckets (logsink.go); default a minute.
	AccessLogInterval time.Duration
	// AccountExists, if set, tells whether an account of that name
	// exists: an ACL granting one that does not is refused (400
	// InvalidArgument), as S3 refuses an unknown canonical id, so that no
	// grant waits for whoever takes the name later. The platform sets it.
	AccountExists func(name string) (bool, error)
}

func (o *Options) setDefaults() {
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.Domains == nil {
		o.Domains = []string{"localhost"}
	}
	if o.MaxObjectSize == 0 {
		o.MaxObjectSize = 5 << 30
	}
	if o.Timeout == 0 {
		o.Timeout = time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.AccessLogInterval <= 0 {
		o.AccessLogInterval = time.Minute
	}
	o.Limits.setDefaults()
}

// Server is the S3 endpoint.
type Server struct {
	st   *cloudstore.Store
	opts Options
	gate drain.Gate // admits requests until Wait
	fair *fairUse
	// policies, cors, logging and website cache the buckets' parsed
	// policies (policy.go), CORS rules (cors.go), logging (logging.go)
	// and websites (website.go).
	policies parsedCache[*s3policy.Policy]
	cors     keptConfig[*s3cors.Config]
	logging  parsedCache[*s3log.Config]
	website  keptConfig[*s3website.Config]
	logHint  logHint  // the buckets that may log
	sink     *logSink // delivers access log records
}

// New returns the S3 endpoint over st.
func New(st *cloudstore.Store, opts Options) *Server {
	opts.setDefaults()
	return &Server{st: st, opts: opts, fair: newFairUse(opts.Limits), sink: newLogSink(st, opts),
		cors:    keptConfig[*s3cors.Config]{kind: cloudstore.ConfigCORS, parse: s3cors.Parse, none: errNoSuchCORS},
		website: keptConfig[*s3website.Config]{kind: cloudstore.ConfigWebsite, parse: s3website.Parse, none: errNoSuchWebsite}}
}

// Wait refuses new requests, blocks until running ones have returned, and
// delivers the access log records not yet delivered.
func (s *Server) Wait() {
	s.gate.Close()
	s.sink.close()
}

// request is one S3 request, resolved and authenticated.
type request struct {
	*http.Request
	id     string
	bucket string
	key    string
	vhost  bool        // the bucket is in the host name, not the path
	auth   *sigv4.Auth // nil for an anonymous request
	s3key  cloudstore.S3Key
	// account is the account whose bucket the request acts on: its
	// bucket's owner, once admitted (ownership.go); requester is the
	// account of its S3 key, "" when it is anonymous.
	account   string
	requester string
	// bk is the request's bucket as admitted, nil when it names none or
	// none exists; policyAllowed tells whether the bucket's policy
	// granted it (not merely did not deny it), publicRead whether the
	// bucket's public toggle did (ownership.go, admitObject).
	bk            *cloudstore.Bucket
	bpa           cloudstore.PublicAccessBlock // bk's settings, for the checks of its objects
	policy        *s3policy.Policy             // bk's policy, as another account's request was admitted by
	policyAllowed bool
	publicRead    bool
	// srcAccount owns a copy's source bucket, when admitSource found it;
	// srcPolicyAllowed tells whether that bucket's policy granted reading
	// the source.
	srcAccount       string
	srcPolicyAllowed bool
	memo             *policyMemo // the bucket's policy, read once (policyOf)
	// body is the request body, checked as it is read (payload hash,
	// chunk signatures, checksums); size its decoded length or -1.
	body io.Reader
	size int64
	sums *sigv4.Checksums // the body's x-amz-checksum-* values; nil when anonymous
	read int64            // bytes of body read so far
	form *postForm        // a POST Object's form, read up to its file
	op   string           // the operation's name
	now  time.Time        // when the request arrived, by the server's clock
	// policyBody is the body of a PutObjectTagging, PutObjectRetention
	// or PutObjectLegalHold, read before its bucket's policy is evaluated
	// when the policy reads the tags or the lock it sets
	// (readPolicyBody); nil otherwise.
	policyBody []byte
	// For the access log (logging.go): when the body was read to its
	// end, whether the request was signed with Signature Version 2,
	// the code of the error answered, and whether the bucket's
	// public-read allowed it.
	bodyRead    time.Time
	v2          bool
	errCode     string
	aclRequired bool
	logTo       *logDest // where the request's record goes; nil when its bucket does not log
}

// counter counts the bytes read through it, and notes when the body
// ends.
type counter struct {
	r    io.Reader
	n    *int64
	done *time.Time
}

func (c counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	if err == io.EOF && c.done.IsZero() {
		*c.done = time.Now()
	}
	return n, err
}

// ServeHTTP answers probes (probe), or resolves the bucket and key,
// authenticates, checks the key's permission and scope, and runs the
// operation.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	if s.probe(w, hr) {
		return
	}
	req := &request{Request: hr, id: newRequestID()}
	w.Header().Set("X-Amz-Request-Id", req.id)
	w.Header().Set("Server", "lattice")
	if !s.gate.Enter() {
		w.Header().Set("Connection", "close")
		writeError(w, hr, s3err(http.StatusServiceUnavailable, "ServiceUnavailable", "The server is shutting down; retry elsewhere or later."), req.id)
		return
	}
	defer s.gate.Leave()

	start, began := s.opts.Now(), time.Now()
	req.now = start
	rec := accesslog.New(w)
	var op string
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("s3 handler panic", "request_id", req.id, "panic", p)
			if !rec.Wrote {
				e := toError(nil, nil)
				req.errCode = e.Code
				writeError(rec, hr, e, req.id)
			}
		}
		s.opts.Logger.Info("s3", "request_id", req.id, "account", req.account, "requester", req.requester, "access_key", req.s3key.AccessKeyID,
			"op", op, "method", hr.Method, "bucket", req.bucket, "key", req.key, "status", rec.Status,
			"bytes_out", rec.Bytes, "duration", s.opts.Now().Sub(start), "remote", hr.RemoteAddr)
		s.opts.Metrics.Observe(metricOp(op), rec.Status, s.opts.Now().Sub(start), req.read, rec.Bytes)
		a := answered{start: start, status: rec.Status, bytes: rec.Bytes, total: s.opts.Now().Sub(start), turnAround: -1, header: rec.Header()}
		if !rec.First.IsZero() {
			a.turnAround = rec.First.Sub(began)
			if !req.bodyRead.IsZero() {
				a.turnAround = rec.First.Sub(req.bodyRead)
			}
		}
		s.logAccess(req, op, a)
		// Only the bucket owner's requests count in its metrics, with the
		// bytes really read: nobody else can add to them. They count at
		// their end, so that a CreateBucket's counts are not taken for an
		// earlier bucket of the name's (cloudstore drops those). A success went
		// through the store's ownership check; a failure is checked here.
		if req.bucket != "" && req.account != "" && (req.requester == req.account || rec.Status != http.StatusForbidden) {
			// The owner's requests, and those a grant admitted (another
			// account's or anonymous refusals are not the owner's).
			owned := rec.Status < 300 || rec.Status == http.StatusNotModified
			if !owned {
				_, err := s.st.Bucket(req.account, req.bucket)
				owned = err == nil
			}
			if owned {
				s.st.RecordAccess(req.bucket, cloudstore.Access{Time: s.opts.Now(), Op: opKind(hr.Method, op), Key: req.key,
					Status: rec.Status, BytesIn: req.read, BytesOut: rec.Bytes})
			}
		}
	}()
	ctx, cancel := context.WithTimeout(hr.Context(), s.opts.Timeout)
	defer cancel()
	req.Request = hr.WithContext(ctx)

	if !isControl(hr) { // control.go: S3 Control names no bucket
		req.bucket, req.key, req.vhost = s.locate(hr)
	}
	req.logTo = s.logTarget(req.bucket)
	o := route(req)
	op, req.op = o.name, o.name
	s.setCORSHeaders(w, req) // cors.go: on every answer, refusals included, as S3 does
	// A website read (website.go) is never signed: an anonymous refusal
	// there is a visitor meeting a private object, not a failed
	// authentication, and a visitor's address (a proxy's, for many) must
	// not be blocked by another's.
	website := isWebsiteRead(hr)
	if !website && s.fair.authBlocked(hr, start) {
		// Too many failed authentications from this address: no
		// signature is even checked until its budget refills.
		req.refuse(rec, errSlowDown)
		return
	}
	if err := s.authorize(req, o); err != nil {
		if err != errNotGranted && !website {
			// Another account's valid signature refused for want of a
			// grant is not a failed authentication.
			s.fair.authFailed(hr, start)
		}
		req.refuse(rec, toError(err, errAccessDenied))
		return
	}
	if err := expectedOwner(req, o); err != nil {
		req.refuse(rec, err)
		return
	}
	// Fair use is per requester: another account's requests to a bucket
	// count for that account, anonymous ones for the bucket's owner.
	fairAccount := req.requester
	if fairAccount == "" {
		fairAccount = req.account
	}
	done, refused := s.fair.admit(fairAccount, o.transfer, start)
	if refused != nil {
		req.refuse(rec, refused)
		return
	}
	defer done()
	if err := s.admitObject(req, o); err != nil {
		if req.requester == "" && !website {
			s.fair.authFailed(hr, start) // as an anonymous request to a private bucket
		}
		req.refuse(rec, toError(err, errAccessDenied))
		return
	}
	if o.transfer {
		req.body = newMinRate(req.body, w, s.opts.Limits, s.opts.Now)
	}
	req.body = counter{req.body, &req.read, &req.bodyRead}
	if o.transfer {
		// The server's read and write timeouts suit small requests; a
		// transfer may take up to Timeout, once its key is known good.
		rc := http.NewResponseController(w)
		rc.SetReadDeadline(time.Now().Add(s.opts.Timeout))
		rc.SetWriteDeadline(time.Now().Add(s.opts.Timeout))
	}
	// What the request reads and writes, it does with the KMS keys of
	// its own account only (cloudstore.KMSRequester).
	req.Request = req.Request.WithContext(cloudstore.KMSRequester(req.Context(), req.requester))
	if err := o.run(s, rec, req); err != nil {
		notFound := errNoSuchBucket
		if req.key != "" {
			notFound = errNoSuchKey
		}
		e := toError(err, notFound)
		if e.Status == http.StatusInternalServerError {
			s.opts.Logger.Error("s3 request failed", "request_id", req.id, "op", op, "err", err)
		}
		if rec.Wrote {
			return // the answer has begun; the client sees a short body
		}
		req.errCode = e.Code
		writeError(rec, hr, e, req.id)
	}
}

// newRequestID is a request's id, as S3's: 16 upper-case hex digits.
func newRequestID() string {
	var b [8]byte
	rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

// refuse answers req with e before its body is read (see refuse).
func (req *request) refuse(w http.ResponseWriter, e *Error) {
	req.errCode = e.Code
	refuse(w, req.Request, e, req.id)
}

// refuse answers a request turned away before its body was read. A
// request with a body is answered with Connection: close: otherwise
// net/http reads up to 256 KiB of the unwanted body before it sends the
// answer, which a client trickling its body (or one the limits just
// refused) would hold back for as long as it likes.
func refuse(w http.ResponseWriter, r *http.Request, e *Error, requestID string) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
	writeError(w, r, e, requestID)
}

// locate finds the bucket and key of r, virtual-hosted style when the
// host is a subdomain of a configured domain, path style otherwise.
func (s *Server) locate(r *http.Request) (bucket, key string, vhost bool) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(host)
	path := strings.TrimPrefix(r.URL.Path, "/")
	for _, d := range s.opts.Domains {
		if b, ok := strings.CutSuffix(host, "."+d); ok && b != "" {
			return b, path, true
		}
	}
	bucket, key, _ = strings.Cut(path, "/")
	return bucket, key, false
}

// authorize authenticates req (anonymous requests are allowed only what
// the bucket's policy grants them, and to read a public bucket's objects),
// checks its key's permission and bucket scope for the operation, and
// refuses what the bucket's policy denies.
func (s *Server) authorize(req *request, o operation) error {
	if authMechanisms(req.Request) > 1 {
		return errOneAuth
	}
	if o.name == "PostObject" {
		// Signed by its form, not its headers: see postobject.go.
		err := s.authorizeAs(req, o, s.verifyPost)
		if err == errAnonymousPOST { // a form without a signature
			return s.authorizeAnonymousPost(req, o)
		}
		return err
	}
	if !sigv4.IsSigned(req.Request) && !sigv2.IsSigned(req.Request) {
		return s.authorizeAnonymous(req, o) // policy.go: the bucket's policy, or its public toggle
	}
	if sigv2.IsSigned(req.Request) {
		return s.authorizeAs(req, o, s.verifyV2)
	}
	return s.authorizeAs(req, o, func(req *request) (*sigv4.Auth, error) {
		return sigv4.Verify(req.Request, s.lookup, s.opts.Now())
	})
}

// authorizeAs authenticates req with verify and checks its key's
// permission and bucket scope for the operation.
func (s *Server) authorizeAs(req *request, o operation, verify func(*request) (*sigv4.Auth, error)) error {
	auth, err := verify(req)
	if err != nil {
		return err
	}
	v2 := sigv2.IsSigned(req.Request)
	req.v2 = req.v2 || v2 // a form's signature (verifyPost) set it already
	switch {
	case req.form != nil:
	case auth.Presigned:
		if err := hoistQuery(req.Request, v2); err != nil {
			return err
		}
	case v2:
		if err := unsignedQuery(req.URL.Query()); err != nil {
			return err
		}
	}
	if auth.Region != s.opts.Region && auth.Region != "auto" {
		e := s3err(http.StatusBadRequest, "AuthorizationHeaderMalformed", "The authorization header is malformed; the region '"+auth.Region+"' is wrong; expecting '"+s.opts.Region+"'")
		if auth.Presigned {
			e = s3err(http.StatusBadRequest, "AuthorizationQueryParametersError", "Error parsing the X-Amz-Credential parameter; the region '"+auth.Region+"' is wrong; expecting '"+s.opts.Region+"'")
		}
		e.Region = s.opts.Region
		return e
	}
	key, _, err := s.st.S3Secret(auth.AccessKeyID)
	if err != nil {
		return err
	}
	req.auth, req.s3key, req.account, req.requester = auth, key, key.Account, key.Account
	if req.form != nil {
		req.body, req.size = req.form.file, -1
	} else if req.body, req.size, req.sums, err = auth.BodyChecksums(req.Request, o.name != "CompleteMultipartUpload"); err != nil {
		return err
	}
	if o.write && key.Permissions == cloudstore.PermRead || o.read && key.Permissions == cloudstore.PermWrite {
		return s3err(http.StatusForbidden, "AccessDenied", "Access Denied: this S3 key has "+key.Permissions+" permission")
	}
	for _, b := range o.buckets(req) {
		if key.BucketScope != "*" && b != key.BucketScope {
			return s3err(http.StatusForbidden, "AccessDenied", "Access Denied: this S3 key is scoped to bucket "+key.BucketScope)
		}
	}
	if o.name == "PostObject" {
		// A form names its key in a field: the policy and the grants
		// judge that key (postObject answers a form without one).
		if key, err := postKey(req.form); err == nil {
			req.key = key
		}
	}
	if err := s.admitAccount(req, o); err != nil { // ownership.go: another account's bucket
		return err
	}
	if err := s.admitSource(req, o); err != nil { // ownership.go: a copy's source
		return err
	}
	return s.checkPolicy(req, o) // policy.go: a Deny of the bucket's policy
}

// expectedOwner holds a request to x-amz-expected-bucket-owner and, for a
// copy (CopyObject, UploadPartCopy), x-amz-source-expected-bucket-owner:
// the account that owns the
// bucket (every bucket a request names is its account's, the account of
// its key or, for an anonymous one, the bucket's owner), as the Owner ID
// of ListBuckets names it. Another is 403 AccessDenied, as S3 answers.
func expectedOwner(req *request, o operation) *Error {
	if req.bucket == "" {
		return nil
	}
	owners := map[string]string{"X-Amz-Expected-Bucket-Owner": req.account}
	if o.name == "CopyObject" || o.name == "UploadPartCopy" {
		owners["X-Amz-Source-Expected-Bucket-Owner"] = req.sourceAccount() // the source's bucket's (admitSource)
	}
	for h, owner := range owners {
		if v := req.Header.Get(h); v != "" && v != owner {
			return s3err(http.StatusForbidden, "AccessDenied", "Access Denied: the bucket is not owned by the account "+h[len("X-Amz-"):]+" names")
		}
	}
	return nil
}

func (s *Server) lookup(id string) (string, error) {
	_, secret, err := s.st.S3Secret(id)
	if errors.Is(err, cloudstore.ErrNotFound) {
		return "", sigv4.ErrUnknownKey
	}
	return secret, err
}

// metricOp is an operation's name in the Prometheus metrics: its name,
// but "Unsupported" for a write naming a query parameter no operation
// takes (the name is the client's; the unsupported subresources S3 has
// keep theirs), so that clients cannot make series without bound.
func metricOp(op string) string {
	if sub, ok := strings.CutPrefix(op, "Unsupported:"); ok && !slices.Contains(unsupported, sub) {
		return "Unsupported"
	}
	if op == "" {
		return "unknown"
	}
	return op
}

// opKind is the metrics kind of an operation.
func opKind(method, op string) string {
	switch {
	case strings.HasPrefix(op, "List"):
		return "list"
	case method == http.MethodGet || method == http.MethodHead:
		return "get"
	case method == http.MethodPut || method == http.MethodPost:
		return "put"
	case method == http.MethodDelete:
		return "delete"
	}
	return "other"
}
