package s3api

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3policy"
)

// Object Lock, as S3 has it (the rules are package cloudstore's,
// objectlock.go): CreateBucket with x-amz-bucket-object-lock-enabled;
// GET and PUT of ?object-lock on a bucket (GetObjectLockConfiguration,
// PutObjectLockConfiguration); GET and PUT of ?retention and ?legal-hold
// on an object (Get/PutObjectRetention, Get/PutObjectLegalHold), of one
// version with versionId; the x-amz-object-lock-* headers of PutObject,
// CopyObject and CreateMultipartUpload, and on GetObject and HeadObject;
// x-amz-bypass-governance-retention on DeleteObject, DeleteObjects and
// PutObjectRetention.

const maxLockBody = 64 << 10

var (
	errNoObjectLock      = s3err(http.StatusBadRequest, "InvalidRequest", "Bucket is missing Object Lock Configuration")
	errNoLockConfig      = s3err(http.StatusNotFound, "ObjectLockConfigurationNotFoundError", "Object Lock configuration does not exist for this bucket")
	errNoVersionLock     = s3err(http.StatusNotFound, "NoSuchObjectLockConfiguration", "The specified object does not have a ObjectLock configuration")
	errRetainPast        = s3err(http.StatusBadRequest, "InvalidArgument", "The retain until date must be in the future!")
	errRetainDate        = s3err(http.StatusBadRequest, "InvalidArgument", "The retain until date must be provided in ISO 8601 format, as 2030-01-02T15:04:05Z")
	errRetainPair        = s3err(http.StatusBadRequest, "InvalidArgument", "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied")
	errRetainMode        = s3err(http.StatusBadRequest, "InvalidArgument", "Unknown wormMode directive: the mode is GOVERNANCE or COMPLIANCE.")
	errLegalHoldValue    = s3err(http.StatusBadRequest, "InvalidArgument", "Legal Hold must be either of 'ON' or 'OFF'")
	errDefaultPeriod     = s3err(http.StatusBadRequest, "InvalidArgument", "Default retention period must be a positive integer value of at most 36500 days or 100 years")
	errLockChecksum      = s3err(http.StatusBadRequest, "InvalidRequest", "Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters, and for Object Lock configurations, retentions and legal holds")
	errBypassHeaderValue = s3err(http.StatusBadRequest, "InvalidArgument", "x-amz-bypass-governance-retention is true or false")
)

func objectLockRoute(r *request, q url.Values) (operation, bool) {
	switch {
	case q.Has("object-lock") && r.key == "":
		switch r.Method {
		case http.MethodGet:
			return operation{name: "GetObjectLockConfiguration", read: true, run: (*Server).getObjectLockConfig}, true
		case http.MethodPut:
			return operation{name: "PutObjectLockConfiguration", write: true, run: (*Server).putObjectLockConfig}, true
		}
		return methodNotAllowed("ObjectLockConfiguration"), true
	case q.Has("retention") && r.key != "":
		switch r.Method {
		case http.MethodGet:
			return operation{name: "GetObjectRetention", read: true, run: (*Server).getObjectRetention}, true
		case http.MethodPut:
			return operation{name: "PutObjectRetention", write: true, run: (*Server).putObjectRetention}, true
		}
		return methodNotAllowed("ObjectRetention"), true
	case q.Has("legal-hold") && r.key != "":
		switch r.Method {
		case http.MethodGet:
			return operation{name: "GetObjectLegalHold", read: true, run: (*Server).getObjectLegalHold}, true
		case http.MethodPut:
			return operation{name: "PutObjectLegalHold", write: true, run: (*Server).putObjectLegalHold}, true
		}
		return methodNotAllowed("ObjectLegalHold"), true
	}
	return operation{}, false
}

// lockConfigXML is S3's ObjectLockConfiguration document.
type lockConfigXML struct {
	XMLName           xml.Name     `xml:"ObjectLockConfiguration"`
	Xmlns             string       `xml:"xmlns,attr,omitempty"`
	ObjectLockEnabled string       `xml:"ObjectLockEnabled,omitempty"`
	Rule              *lockRuleXML `xml:"Rule,omitempty"`
}

type lockRuleXML struct {
	DefaultRetention *defaultRetentionXML `xml:"DefaultRetention"`
}

type defaultRetentionXML struct {
	Mode  string `xml:"Mode,omitempty"`
	Days  *int   `xml:"Days,omitempty"`
	Years *int   `xml:"Years,omitempty"`
}

func (s *Server) getObjectLockConfig(w http.ResponseWriter, r *request) error {
	bk, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return errNoSuchBucket
	}
	if bk.ObjectLock == nil {
		return errNoLockConfig
	}
	doc := lockConfigXML{Xmlns: xmlns, ObjectLockEnabled: "Enabled"}
	if l := bk.ObjectLock; l.Mode != "" {
		d := &defaultRetentionXML{Mode: l.Mode}
		if l.Days != 0 {
			d.Days = &l.Days
		} else {
			d.Years = &l.Years
		}
		doc.Rule = &lockRuleXML{DefaultRetention: d}
	}
	writeXML(w, http.StatusOK, doc)
	return nil
}

// parseLockConfig reads a PutObjectLockConfiguration body, as S3 does:
// ObjectLockEnabled is Enabled (Object Lock is never turned off), and a
// Rule has a DefaultRetention of a Mode and either Days or Years.
func parseLockConfig(data []byte) (cloudstore.ObjectLock, error) {
	var doc lockConfigXML
	if err := xml.Unmarshal(data, &doc); err != nil || doc.ObjectLockEnabled != "Enabled" {
		return cloudstore.ObjectLock{}, errMalformedXML
	}
	var l cloudstore.ObjectLock
	if doc.Rule == nil {
		return l, nil
	}
	d := doc.Rule.DefaultRetention
	if d == nil || (d.Mode != cloudstore.LockGovernance && d.Mode != cloudstore.LockCompliance) || (d.Days == nil) == (d.Years == nil) {
		return l, errMalformedXML
	}
	l.Mode = d.Mode
	if d.Days != nil {
		l.Days = *d.Days
	} else {
		l.Years = *d.Years
	}
	if l.Check() != nil {
		return l, errDefaultPeriod
	}
	return l, nil
}

func (s *Server) putObjectLockConfig(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return errNoSuchBucket
	}
	if err := lockChecksum(r); err != nil {
		return err
	}
	data, err := readBody(r.body, maxLockBody)
	if err != nil {
		return err
	}
	l, err := parseLockConfig(data)
	if err != nil {
		return err
	}
	if err := s.st.SetObjectLock(r.account, r.bucket, l); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// retentionXML is S3's Retention document.
type retentionXML struct {
	XMLName         xml.Name `xml:"Retention"`
	Xmlns           string   `xml:"xmlns,attr,omitempty"`
	Mode            string   `xml:"Mode,omitempty"`
	RetainUntilDate string   `xml:"RetainUntilDate,omitempty"`
}

// lockTime is how S3 writes a retain-until date.
const lockTime = "2006-01-02T15:04:05.000Z"

// parseRetainUntil reads a retain-until date: ISO 8601 (RFC 3339), in the
// future.
func parseRetainUntil(v string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
	if err != nil {
		return time.Time{}, errRetainDate
	}
	t = t.UTC().Truncate(time.Millisecond) // as S3 keeps and answers it
	if !t.After(now) {
		return time.Time{}, errRetainPast
	}
	return t, nil
}

// retention reads a mode and a date into a Retention: both or neither
// (nil).
func retention(mode, until string, now time.Time) (*cloudstore.Retention, error) {
	switch {
	case mode == "" && until == "":
		return nil, nil
	case mode == "" || until == "":
		return nil, errRetainPair
	case mode != cloudstore.LockGovernance && mode != cloudstore.LockCompliance:
		return nil, errRetainMode
	}
	t, err := parseRetainUntil(until, now)
	if err != nil {
		return nil, err
	}
	return &cloudstore.Retention{Mode: mode, Until: t}, nil
}

// lockHeaders reads the Object Lock an upload asks for in its
// x-amz-object-lock-* headers (a form's fields): nil when it names none.
func lockHeaders(r *request) (*cloudstore.Lock, error) {
	mode, until, hold := uploadLock(r)
	if mode == "" && until == "" && hold == "" {
		return nil, nil
	}
	ret, err := retention(mode, until, r.now)
	if err != nil {
		return nil, err
	}
	lock := &cloudstore.Lock{Retention: ret, LegalHoldSet: hold != ""}
	switch hold {
	case "", "OFF":
	case "ON":
		lock.LegalHold = true
	default:
		return nil, errLegalHoldValue
	}
	return lock, nil
}

// Object Lock's headers, and a form's fields of the same names.
const (
	lockModeHeader  = "X-Amz-Object-Lock-Mode"
	lockUntilHeader = "X-Amz-Object-Lock-Retain-Until-Date"
	lockHoldHeader  = "X-Amz-Object-Lock-Legal-Hold"
)

// isUpload reports whether op writes an object whose lock its request may
// name: PutObject, CopyObject and CreateMultipartUpload in their
// x-amz-object-lock-* headers, PostObject in its form's fields.
func isUpload(op string) bool {
	return op == "PutObject" || op == "CopyObject" || op == "CreateMultipartUpload" || op == "PostObject"
}

// uploadLock returns the Object Lock an upload names, as sent: a form's
// fields (postObject takes its lock from them, never from the request's
// headers), or the headers of any other upload.
func uploadLock(req *request) (mode, until, hold string) {
	if req.form != nil {
		f := req.form.fields
		return f[strings.ToLower(lockModeHeader)], f[strings.ToLower(lockUntilHeader)], f[strings.ToLower(lockHoldHeader)]
	}
	return req.Header.Get(lockModeHeader), req.Header.Get(lockUntilHeader), req.Header.Get(lockHoldHeader)
}

// requestedLock returns the Object Lock req asks for, as sent: an
// upload's (uploadLock), or the Retention or LegalHold in the body of a
// PutObjectRetention or PutObjectLegalHold that was read before its
// policy was evaluated (readPolicyBody). A body that does not parse asks
// for nothing: the request is refused for it anyway.
func requestedLock(req *request) (mode, until, hold string) {
	switch {
	case isUpload(req.op):
		return uploadLock(req)
	case req.op == "PutObjectRetention" && req.policyBody != nil:
		var doc retentionXML
		if xml.Unmarshal(req.policyBody, &doc) == nil {
			return doc.Mode, doc.RetainUntilDate, ""
		}
	case req.op == "PutObjectLegalHold" && req.policyBody != nil:
		var doc legalHoldXML
		if xml.Unmarshal(req.policyBody, &doc) == nil {
			return "", "", doc.Status
		}
	}
	return "", "", ""
}

// lockKeys sets the Object Lock condition keys (s3policy.LockModeKey, …)
// of the actions S3 has them for, from the lock req asks for
// (requestedLock): all four for s3:PutObject; the mode, the retain-until
// date and the remaining days for s3:PutObjectRetention and
// s3:BypassGovernanceRetention; the legal hold for s3:PutObjectLegalHold.
// A date that does not parse is left out, as its request is refused.
func lockKeys(req *request, action string, now time.Time, values map[string]string) {
	var retain, hold bool
	switch action {
	case "s3:PutObject":
		retain, hold = true, true
	case "s3:PutObjectRetention", "s3:BypassGovernanceRetention":
		retain = true
	case "s3:PutObjectLegalHold":
		hold = true
	default:
		return
	}
	mode, until, legal := requestedLock(req)
	if hold && legal != "" {
		values[s3policy.LockLegalHoldKey] = legal
	}
	if !retain {
		return
	}
	if mode != "" {
		values[s3policy.LockModeKey] = mode
	}
	if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(until)); err == nil {
		values[s3policy.LockRetainUntilKey] = strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', -1, 64)
		values[s3policy.LockRemainingDaysKey] = strconv.FormatInt(remainingDays(t, now), 10)
	}
}

// remainingDays is s3:object-lock-remaining-retention-days: the whole
// days from now until t, a part of a day counted as a day (so a cap of N
// days refuses N days and a minute, and a retention set to now plus N
// days counts N however long the request took to arrive); 0 for a time
// not after now.
func remainingDays(t, now time.Time) int64 {
	d := t.Sub(now)
	if d <= 0 {
		return 0
	}
	const day = 24 * time.Hour
	return int64((d + day - 1) / day)
}

// lockActions are the actions S3 asks, besides s3:PutObject, of an upload
// (o: PutObject, CreateMultipartUpload, CopyObject, PostObject) that
// locks what it writes: s3:PutObjectRetention for a retention,
// s3:PutObjectLegalHold for a legal hold. A policy must allow them to
// another account or to an anonymous request, and may deny them to the
// owner's keys.
func lockActions(req *request, o operation) []string {
	if !isUpload(o.name) {
		return nil
	}
	mode, until, hold := uploadLock(req)
	var out []string
	if mode != "" || until != "" {
		out = append(out, "s3:PutObjectRetention")
	}
	if hold != "" {
		out = append(out, "s3:PutObjectLegalHold")
	}
	return out
}

// lockChecksum refuses a PutObject with Object Lock parameters, or an
// Object Lock configuration, retention or legal hold, that carries no
// integrity check of its body, as S3 does: Content-MD5 or an
// x-amz-checksum-* value, in a header or the trailer (every current SDK
// sends one).
func lockChecksum(r *request) error {
	if hasBodyChecksum(r) {
		return nil
	}
	return errLockChecksum
}

// bypass is what a request's x-amz-bypass-governance-retention gives it:
// whether it bypasses GOVERNANCE retention, and, when it asked to and may
// not, why (for the refusal, if the retention is in the way).
type bypass struct {
	on  bool
	not string
}

// bypassGovernance reads x-amz-bypass-governance-retention for a change of
// key's version: the bucket owner's keys may bypass unless the bucket's
// policy denies s3:BypassGovernanceRetention; another account's only when
// the policy allows it; an anonymous request never, nor a write-only key
// (what a backup agent holds: the key GOVERNANCE retention guards
// against, where S3 would want s3:BypassGovernanceRetention granted to
// it explicitly). A request that may not bypass is refused only if
// GOVERNANCE retention is in its way (lockRefusal), as in S3.
func (s *Server) bypassGovernance(r *request, key, version string) (bypass, error) {
	v := strings.TrimSpace(r.Header.Get("X-Amz-Bypass-Governance-Retention"))
	switch {
	case v == "" || strings.EqualFold(v, "false"):
		return bypass{}, nil
	case !strings.EqualFold(v, "true"):
		return bypass{}, errBypassHeaderValue
	case r.auth == nil:
		return bypass{not: "an anonymous request may not bypass governance retention"}, nil
	case r.s3key.Permissions == cloudstore.PermWrite:
		return bypass{not: "a write-only key may not bypass governance retention"}, nil
	case r.requester != r.account:
		if r.bk == nil {
			return bypass{not: "the bucket is another account's"}, nil
		}
		if d, err := s.decide(r, r.policy, *r.bk, r.bpa, "s3:BypassGovernanceRetention", r.bucket, key, version); err != nil || d != s3policy.Allowed {
			return bypass{not: "the bucket is another account's, and its policy does not allow s3:BypassGovernanceRetention"}, nil
		}
		return bypass{on: true}, nil
	}
	if err := s.policyDenies(r, r.bucket, key, version, "s3:BypassGovernanceRetention"); err != nil {
		return bypass{not: "the bucket's policy denies s3:BypassGovernanceRetention"}, nil
	}
	return bypass{on: true}, nil
}

// lockRefusal adds to err, a refusal by GOVERNANCE retention that a
// bypass would have let through, why the request's bypass did not count.
func lockRefusal(err error, b bypass) error {
	var ge *cloudstore.GovernanceError
	if b.not == "" || !errors.As(err, &ge) {
		return err
	}
	return fmt.Errorf("%w; x-amz-bypass-governance-retention did not apply: %s", err, b.not)
}

// lockBypass is bypassGovernance for the delete of key's version id:
// none for a delete without a version id, which removes nothing for good.
func (s *Server) lockBypass(r *request, key, id string) (bypass, error) {
	if id == "" {
		return bypass{}, nil
	}
	return s.bypassGovernance(r, key, id)
}

// setLockHeaders gives a GetObject or HeadObject answer the Object Lock
// of obj (r's object, of version id if not "") that its requester may
// read: the retention to one allowed s3:GetObjectRetention, the legal
// hold to one allowed s3:GetObjectLegalHold, as S3 gives them. Reading
// the object is not enough: a public bucket's readers need not learn how
// long its records are kept, or that they are held.
func (s *Server) setLockHeaders(h http.Header, r *request, obj cloudstore.Object, id string) {
	if ret := obj.Retention; ret != nil && s.mayReadLock(r, id, "s3:GetObjectRetention") {
		h.Set(lockModeHeader, ret.Mode)
		h.Set(lockUntilHeader, ret.Until.UTC().Format(lockTime))
	}
	if st := obj.LegalHoldStatus(); st != "" && s.mayReadLock(r, id, "s3:GetObjectLegalHold") {
		h.Set(lockHoldHeader, st)
	}
}

// mayReadLock reports whether r's requester may do action, a read of
// the Object Lock of r's object (of version id if not ""): the bucket
// owner's keys unless the bucket's policy denies it, another account or
// an anonymous request where the policy allows it (no ACL grants it).
// Anything that cannot be judged, such as a store that cannot be read,
// shows nothing.
func (s *Server) mayReadLock(r *request, id, action string) bool {
	switch {
	case r.auth == nil:
		return s.anonymousMay(r, r.bucket, r.key, id, action)
	case r.requester == r.account:
		return s.policyDenies(r, r.bucket, r.key, id, action) == nil
	case r.bk == nil:
		return false
	}
	d, err := s.decide(r, r.policy, *r.bk, r.bpa, action, r.bucket, r.key, id)
	return err == nil && d == s3policy.Allowed
}

// lockedVersion reads r's object version (versionId) for a retention or
// legal hold read: in a bucket with Object Lock, and not a delete marker.
func (s *Server) lockedVersion(w http.ResponseWriter, r *request) (cloudstore.Object, error) {
	bk, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return cloudstore.Object{}, errNoSuchBucket
	}
	id, err := versionParam(r)
	if err != nil {
		return cloudstore.Object{}, err
	}
	if bk.ObjectLock == nil {
		return cloudstore.Object{}, errNoObjectLock
	}
	obj, err := s.st.ObjectVersion(r.account, r.bucket, r.key, id)
	if err == nil && obj.DeleteMarker {
		err = &cloudstore.DeleteMarkerError{VersionID: obj.VersionID}
	}
	if err != nil {
		return obj, s.lookupError(w, r, r.bucket, id, err)
	}
	if g := r.gate(); g != nil {
		if err := g.check(obj); err != nil {
			return obj, err
		}
	}
	return obj, nil
}

func (s *Server) getObjectRetention(w http.ResponseWriter, r *request) error {
	obj, err := s.lockedVersion(w, r)
	if err != nil {
		return err
	}
	if obj.Retention == nil {
		return errNoVersionLock
	}
	writeXML(w, http.StatusOK, retentionXML{Xmlns: xmlns, Mode: obj.Retention.Mode, RetainUntilDate: obj.Retention.Until.UTC().Format(lockTime)})
	return nil
}

func (s *Server) putObjectRetention(w http.ResponseWriter, r *request) error {
	id, data, err := s.lockChange(r)
	if err != nil {
		return err
	}
	var doc retentionXML
	if err := xml.Unmarshal(data, &doc); err != nil {
		return errMalformedXML
	}
	ret, err := retention(doc.Mode, doc.RetainUntilDate, r.now)
	if err == errRetainPair || err == errRetainMode {
		return errMalformedXML
	}
	if err != nil {
		return err
	}
	by, err := s.bypassGovernance(r, r.key, id)
	if err != nil {
		return err
	}
	return s.updateLock(w, r, id, func(check func(cloudstore.Object) error) (cloudstore.Object, error) {
		obj, err := s.st.SetRetention(r.account, r.bucket, r.key, id, ret, by.on, check)
		return obj, lockRefusal(err, by)
	})
}

// lockChange reads a retention or legal hold change: the version it is
// of (versionId) and its body.
func (s *Server) lockChange(r *request) (id string, body []byte, err error) {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return "", nil, errNoSuchBucket
	}
	if err := lockChecksum(r); err != nil {
		return "", nil, err
	}
	if id, err = versionParam(r); err != nil {
		return "", nil, err
	}
	body, err = readBody(r.body, maxLockBody)
	return id, body, err
}

// updateLock answers a change of r's version's lock made by change,
// which the request's object gate, if any, judges on the version it
// changes, under the lock that changes it.
func (s *Server) updateLock(w http.ResponseWriter, r *request, id string, change func(check func(cloudstore.Object) error) (cloudstore.Object, error)) error {
	var check func(cloudstore.Object) error
	if g := r.gate(); g != nil {
		check = g.check
	}
	obj, err := change(check)
	if err != nil {
		if isLookup(err) {
			return s.lookupError(w, r, r.bucket, id, err)
		}
		return err
	}
	setVersionHeader(w.Header(), obj)
	w.WriteHeader(http.StatusOK)
	return nil
}

// isLookup reports whether err is a failure to find the version (rather
// than a refusal of the change).
func isLookup(err error) bool {
	var dm *cloudstore.DeleteMarkerError
	return errors.As(err, &dm) || errors.Is(err, cloudstore.ErrNotFound)
}

// legalHoldXML is S3's LegalHold document.
type legalHoldXML struct {
	XMLName xml.Name `xml:"LegalHold"`
	Xmlns   string   `xml:"xmlns,attr,omitempty"`
	Status  string   `xml:"Status"`
}

func (s *Server) getObjectLegalHold(w http.ResponseWriter, r *request) error {
	obj, err := s.lockedVersion(w, r)
	if err != nil {
		return err
	}
	// A version never given a legal hold has none to show, as in S3.
	status := obj.LegalHoldStatus()
	if status == "" {
		return errNoVersionLock
	}
	writeXML(w, http.StatusOK, legalHoldXML{Xmlns: xmlns, Status: status})
	return nil
}

func (s *Server) putObjectLegalHold(w http.ResponseWriter, r *request) error {
	id, data, err := s.lockChange(r)
	if err != nil {
		return err
	}
	var doc legalHoldXML
	if err := xml.Unmarshal(data, &doc); err != nil || (doc.Status != "ON" && doc.Status != "OFF") {
		return errMalformedXML
	}
	return s.updateLock(w, r, id, func(check func(cloudstore.Object) error) (cloudstore.Object, error) {
		return s.st.SetLegalHold(r.account, r.bucket, r.key, id, doc.Status == "ON", check)
	})
}
