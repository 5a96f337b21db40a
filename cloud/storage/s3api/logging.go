package s3api

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3log"
	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

// Server access logging, as S3 has it: PutBucketLogging and
// GetBucketLogging (?logging on a bucket) keep a BucketLoggingStatus in
// the store's bucket configurations (package s3log parses it); every
// request addressed to a bucket that has one, refused or not, signed or
// anonymous, becomes a record in AWS's format, and the records are
// delivered as objects into the target bucket (logsink.go).
//
// As in S3, the target must exist and be the source's owner's, in this
// endpoint's one region; TargetGrants are refused, every bucket here
// having its owner enforced; the source may be its own target (the
// deliveries themselves are not requests and are not logged, so there is
// no loop).

var (
	errNoLogTarget    = s3err(http.StatusBadRequest, "InvalidTargetBucketForLogging", "The target bucket for logging does not exist")
	errLogTargetOwner = s3err(http.StatusBadRequest, "InvalidTargetBucketForLogging", "The owner for the bucket to be logged and the target bucket must be the same.")
	errLogGrants      = s3err(http.StatusBadRequest, "AccessControlListNotSupported", "Target grants not allowed for bucket owner enforced buckets")
)

// loggingRoute returns the operation of a ?logging request, if r is one.
func loggingRoute(r *request, q url.Values) (operation, bool) {
	if !q.Has("logging") {
		return operation{}, false
	}
	if r.key != "" {
		return notImplemented("Unsupported:logging"), true // a bucket's configuration
	}
	switch r.Method {
	case http.MethodGet:
		return operation{name: "GetBucketLogging", read: true, run: (*Server).getBucketLogging}, true
	case http.MethodPut:
		return operation{name: "PutBucketLogging", write: true, run: (*Server).putBucketLogging}, true
	}
	return methodNotAllowed("BucketLogging"), true
}

func (s *Server) getBucketLogging(w http.ResponseWriter, r *request) error {
	data, err := s.st.BucketConfig(r.account, r.bucket, cloudstore.ConfigLogging)
	if err != nil {
		return err
	}
	c, err := s.logging.get(r.bucket, data, s3log.Parse)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(c.XML())
	return err
}

// putBucketLogging sets or, with an empty BucketLoggingStatus, removes
// the bucket's logging. Records taken before a change keep going where
// the configuration of their time said.
func (s *Server) putBucketLogging(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	data, err := readBody(r.body, s3log.MaxSize)
	if err != nil {
		return err
	}
	c, err := s3log.Parse(data)
	switch {
	case errors.Is(err, s3log.ErrGrants):
		return errLogGrants
	case err != nil:
		return errMalformedXML
	case c == nil:
		data = nil // logging off
	case c.TargetBucket == "":
		return errNoLogTarget
	default:
		// The key's scope holds for the target too: a key for one bucket
		// may not send records into another.
		if scope := r.s3key.BucketScope; scope != "*" && c.TargetBucket != scope {
			return s3err(http.StatusForbidden, "AccessDenied", "Access Denied: this S3 key is scoped to bucket "+scope)
		}
		target, _, err := s.st.BucketWithConfig(c.TargetBucket, cloudstore.ConfigLogging)
		switch {
		case errors.Is(err, cloudstore.ErrNotFound):
			return errNoLogTarget
		case err != nil:
			return err
		case target.Account != r.account:
			return errLogTargetOwner
		}
		// The longest key a delivery can make must be a key.
		longest := c.Key(r.account, s.opts.Region, r.bucket, time.Time{}, time.Time{}, logUniqueSample)
		if err := storagenames.ValidObjectKey(longest); err != nil {
			return s3err(http.StatusBadRequest, "InvalidArgument", "The TargetPrefix makes log object keys like "+
				strconv.Quote(longest)+" that are not valid object keys: "+err.Error())
		}
	}
	if err := s.st.SetBucketConfig(r.account, r.bucket, cloudstore.ConfigLogging, data); err != nil {
		return err
	}
	if c == nil {
		s.logging.drop(r.bucket)
	} else {
		s.logging.put(r.bucket, data, c)
		s.logHint.add(r.bucket)
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// logTarget returns where the records of requests to bucket go now, or
// nil when it does not log. ServeHTTP asks as soon as it has located the
// bucket, so that the configuration in force when a request is made
// decides, whatever happens to the bucket during it (a DeleteBucket, or
// the bucket deleted and made again by another account, is logged to
// the configuration the request found).
func (s *Server) logTarget(bucket string) (d *logDest) {
	defer func() {
		if p := recover(); p != nil { // the store failing: no record
			s.opts.Logger.Error("s3 access log configuration unreadable", "bucket", bucket, "panic", p)
			d = nil
		}
	}()
	if bucket == "" || !s.logHint.mayLog(s.st, bucket) {
		return nil
	}
	bk, raw, err := s.st.BucketWithConfig(bucket, cloudstore.ConfigLogging)
	if err != nil || raw == nil {
		return nil
	}
	c, err := s.logging.get(bucket, raw, s3log.Parse)
	if err != nil || c == nil {
		return nil
	}
	return &logDest{owner: bk.Account, source: bucket, cfg: *c}
}

// logAccess takes the record of a request to a bucket that logs (its
// logTarget) and hands it to the sink, once the answer is sent.
func (s *Server) logAccess(req *request, op string, a answered) {
	d := req.logTo
	if d == nil {
		return
	}
	hr := req.Request
	r := s3log.Record{
		BucketOwner: d.owner, Bucket: req.bucket, Time: a.start, RemoteIP: source(hr),
		RequestID: req.id, Operation: logOperation(hr, op), Key: req.key,
		RequestURI: clip(hr.Method + " " + redactSignature(hr.RequestURI) + " " + hr.Proto),
		Status:     a.status, ErrorCode: req.errCode, BytesSent: a.bytes, ObjectSize: objectSize(op, a, req.read),
		TotalTime: a.total, TurnAround: a.turnAround,
		Referer: clip(hr.Referer()), UserAgent: clip(hr.UserAgent()), VersionID: a.header.Get("X-Amz-Version-Id"),
		HostHeader: clip(hr.Host), ACLRequired: req.aclRequired,
	}
	if r.VersionID == "" {
		r.VersionID = hr.URL.Query().Get("versionId")
	}
	if req.auth != nil {
		r.Requester = req.requester
		r.SignatureVersion, r.AuthType = "SigV4", "AuthHeader"
		if req.v2 {
			r.SignatureVersion = "SigV2"
		}
		switch {
		case req.form != nil:
			r.AuthType = "" // signed by its form's policy: neither of S3's two
		case req.auth.Presigned:
			r.AuthType = "QueryString"
		}
	}
	if hr.TLS != nil {
		r.CipherSuite = tlsCipherSuiteName(hr.TLS.CipherSuite)
		r.TLSVersion = tlsVersionName(hr.TLS.Version)
	}
	s.sink.add(*d, a.start, r.Append(nil))
}

// maxLogField bounds what a record keeps of a field a client chooses
// (the request line, referer, user agent, Host), so that no client makes
// records of many kilobytes.
const maxLogField = 2048

func clip(s string) string {
	if len(s) > maxLogField {
		return s[:maxLogField] + "..."
	}
	return s
}

// redactSignature replaces the signature of a presigned URL in a request
// line: whoever reads a bucket's logs must not learn URLs that still
// open other objects.
func redactSignature(uri string) string {
	path, query, ok := strings.Cut(uri, "?")
	if !ok {
		return uri
	}
	params := strings.Split(query, "&")
	changed := false
	for i, p := range params {
		name, _, _ := strings.Cut(p, "=")
		if strings.EqualFold(name, "X-Amz-Signature") || name == "Signature" {
			params[i], changed = name+"=REDACTED", true
		}
	}
	if !changed {
		return uri
	}
	return path + "?" + strings.Join(params, "&")
}

// logHint knows which buckets may log, so that requests to the others
// do not read the store for a configuration they do not have. It is a
// superset of the buckets that log: read from the store once, then added
// to by PutBucketLogging and never taken from (a bucket deleted, or whose
// logging was turned off, costs a read per request, as before); the
// store's configuration decides.
type logHint struct {
	once sync.Once
	all  bool     // the store could not be read: every bucket may log
	m    sync.Map // bucket name -> struct{}
}

func (h *logHint) mayLog(st *cloudstore.Store, bucket string) bool {
	h.once.Do(func() {
		names, err := st.BucketsWithConfig(cloudstore.ConfigLogging)
		h.all = err != nil
		for _, n := range names {
			h.m.Store(n, struct{}{})
		}
	})
	if h.all {
		return true
	}
	_, ok := h.m.Load(bucket)
	return ok
}

func (h *logHint) add(bucket string) { h.m.Store(bucket, struct{}{}) }

// answered is what ServeHTTP knows of an answer once it is sent.
type answered struct {
	start      time.Time
	status     int
	bytes      int64
	total      time.Duration
	turnAround time.Duration
	header     http.Header
}

// logOperation names an operation as S3's records do:
// REST.METHOD.RESOURCE, or WEBSITE.METHOD.RESOURCE for a read of the
// website endpoint (website.go).
func logOperation(r *http.Request, op string) string {
	res, ok := logResources[op]
	if !ok {
		if sub, found := strings.CutPrefix(op, "GetBucket:"); found {
			res = strings.ToUpper(sub) // the configurations kept nowhere (probes.go)
		} else if sub, found := strings.CutPrefix(op, "Unsupported:"); found && len(sub) <= 64 {
			res = strings.ToUpper(sub)
		} else {
			res = "UNKNOWN"
		}
	}
	method := r.Method
	if op == "CopyObject" || op == "UploadPartCopy" {
		method = "COPY"
	}
	if isWebsiteRead(r) {
		return "WEBSITE." + method + "." + res
	}
	return "REST." + method + "." + res
}

// logResources are the resource types of S3's records, by operation.
var logResources = map[string]string{
	"ListObjects": "BUCKET", "ListObjectsV2": "BUCKET", "HeadBucket": "BUCKET", "CreateBucket": "BUCKET", "DeleteBucket": "BUCKET",
	"ListObjectVersions": "BUCKETVERSIONS", "GetBucketLocation": "LOCATION",
	"GetObject": "OBJECT", "HeadObject": "OBJECT", "PutObject": "OBJECT", "CopyObject": "OBJECT", "DeleteObject": "OBJECT", "PostObject": "OBJECT",
	"GetObjectAttributes":   "OBJECT_ATTRIBUTES",
	"DeleteObjects":         "MULTI_OBJECT_DELETE",
	"CreateMultipartUpload": "UPLOADS", "ListMultipartUploads": "UPLOADS", "UploadPart": "PART", "UploadPartCopy": "PART",
	"CompleteMultipartUpload": "UPLOAD", "AbortMultipartUpload": "UPLOAD", "ListParts": "UPLOAD",
	"GetObjectTagging": "OBJECT_TAGGING", "PutObjectTagging": "OBJECT_TAGGING", "DeleteObjectTagging": "OBJECT_TAGGING",
	"GetObjectRetention": "RETENTION", "PutObjectRetention": "RETENTION", "GetObjectLegalHold": "LEGAL_HOLD", "PutObjectLegalHold": "LEGAL_HOLD",
	"GetObjectLockConfiguration": "OBJECT_LOCK_CONFIGURATION", "PutObjectLockConfiguration": "OBJECT_LOCK_CONFIGURATION",
	"GetBucketTagging": "TAGGING", "PutBucketTagging": "TAGGING", "DeleteBucketTagging": "TAGGING",
	"GetBucketPolicy": "BUCKETPOLICY", "PutBucketPolicy": "BUCKETPOLICY", "DeleteBucketPolicy": "BUCKETPOLICY",
	"GetBucketPolicyStatus": "POLICY_STATUS",
	"GetBucketAcl":          "ACL", "PutBucketAcl": "ACL", "GetObjectAcl": "ACL", "PutObjectAcl": "ACL",
	"GetBucketOwnershipControls": "OWNERSHIP_CONTROLS", "PutBucketOwnershipControls": "OWNERSHIP_CONTROLS", "DeleteBucketOwnershipControls": "OWNERSHIP_CONTROLS",
	"GetBucketCors": "CORS", "PutBucketCors": "CORS", "DeleteBucketCors": "CORS", "PreflightCORS": "PREFLIGHT",
	"GetBucketWebsite": "WEBSITE", "PutBucketWebsite": "WEBSITE", "DeleteBucketWebsite": "WEBSITE",
	"GetBucketLifecycleConfiguration": "LIFECYCLE", "PutBucketLifecycleConfiguration": "LIFECYCLE", "DeleteBucketLifecycle": "LIFECYCLE",
	"GetBucketVersioning": "VERSIONING", "PutBucketVersioning": "VERSIONING",
	"GetBucketEncryption": "ENCRYPTION", "PutBucketEncryption": "ENCRYPTION", "DeleteBucketEncryption": "ENCRYPTION",
	"GetBucketLogging": "LOGGING_STATUS", "PutBucketLogging": "LOGGING_STATUS",
	"PutBucketRequestPayment":            "REQUEST_PAYMENT",
	"PutBucketNotificationConfiguration": "NOTIFICATION", "PutBucketAccelerateConfiguration": "ACCELERATE",
	"DeleteBucketReplication": "REPLICATION",
	"GetPublicAccessBlock":    "PUBLIC_ACCESS_BLOCK", "PutPublicAccessBlock": "PUBLIC_ACCESS_BLOCK", "DeletePublicAccessBlock": "PUBLIC_ACCESS_BLOCK",
}

// objectSize is the whole size of the object a request read or wrote, or
// -1: from the answer to a read, the bytes read for a write.
func objectSize(op string, a answered, read int64) int64 {
	switch op {
	case "GetObject", "HeadObject":
		if a.status >= 300 {
			return -1
		}
		if cr := a.header.Get("Content-Range"); cr != "" {
			if _, total, ok := strings.Cut(cr, "/"); ok {
				if n, err := strconv.ParseInt(total, 10, 64); err == nil {
					return n
				}
			}
			return -1
		}
		if n, err := strconv.ParseInt(a.header.Get("Content-Length"), 10, 64); err == nil {
			return n
		}
	case "PutObject", "UploadPart", "PostObject":
		if a.status < 300 {
			return read
		}
	}
	return -1
}

// tlsCipherSuiteName and tlsVersionName name a connection's TLS as S3's
// records do: cipher suites by their OpenSSL names (the standard name for
// a suite without one here).
func tlsCipherSuiteName(id uint16) string {
	if n, ok := opensslSuites[id]; ok {
		return n
	}
	return tls.CipherSuiteName(id)
}

var opensslSuites = map[uint16]string{
	tls.TLS_AES_128_GCM_SHA256:                        "TLS_AES_128_GCM_SHA256",
	tls.TLS_AES_256_GCM_SHA384:                        "TLS_AES_256_GCM_SHA384",
	tls.TLS_CHACHA20_POLY1305_SHA256:                  "TLS_CHACHA20_POLY1305_SHA256",
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256:         "ECDHE-RSA-AES128-GCM-SHA256",
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384:         "ECDHE-RSA-AES256-GCM-SHA384",
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:       "ECDHE-ECDSA-AES128-GCM-SHA256",
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:       "ECDHE-ECDSA-AES256-GCM-SHA384",
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256:   "ECDHE-RSA-CHACHA20-POLY1305",
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-ECDSA-CHACHA20-POLY1305",
	tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA:            "ECDHE-RSA-AES128-SHA",
	tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA:            "ECDHE-RSA-AES256-SHA",
}

func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "TLSv1"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS13:
		return "TLSv1.3"
	}
	return ""
}
