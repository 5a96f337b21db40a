package s3api

import (
	"bytes"
	"crypto/tls"
	"encoding/xml"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3acl"
	"github.com/latticenet/lattice/cloud/storage/s3policy"
	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// Bucket policies: PutBucketPolicy, GetBucketPolicy, DeleteBucketPolicy
// and GetBucketPolicyStatus (?policy, ?policyStatus on a bucket), kept in
// the store's bucket configurations and evaluated by package s3policy on
// every request to a bucket that has one.
//
// What a policy does here (docs/s3.md, Policies):
//   - A Deny that applies refuses the request, signed or anonymous,
//     whatever else grants it. The owner's Get/Put/DeleteBucketPolicy are
//     never refused, so that no policy can lock its owner out (S3 does
//     the same for the account's root user).
//   - An Allow grants anonymous requests the operations it names
//     (anonymous GetObject of a prefix, anonymous ListBucket, anonymous
//     uploads and deletes of objects); the bucket's configuration is
//     never written anonymously (authorizeAnonymous).
//   - Signed requests are the bucket owner's keys (another account's keys
//     see the bucket as missing); their permissions and bucket scope are
//     the grant, and an Allow adds nothing to them.

var (
	errNoSuchBucketPolicy = s3err(http.StatusNotFound, "NoSuchBucketPolicy", "The bucket policy does not exist")
	errPolicyDenied       = s3err(http.StatusForbidden, "AccessDenied", "Access Denied: the bucket's policy denies this request")
	errAnonymous          = s3err(http.StatusForbidden, "AccessDenied", "Access Denied: sign requests with an S3 key from /api/storage/keys")
)

// actions are the policy actions of the operations (by name), as S3 asks
// for them; an operation without one is not subject to bucket policies
// (ListBuckets, CreateBucket, refusals).
var actions = map[string]string{
	"HeadBucket": "s3:ListBucket", "ListObjects": "s3:ListBucket", "ListObjectsV2": "s3:ListBucket",
	"ListObjectVersions": "s3:ListBucketVersions", "GetBucketLocation": "s3:GetBucketLocation",
	"ListMultipartUploads": "s3:ListBucketMultipartUploads", "DeleteBucket": "s3:DeleteBucket",
	"GetObject": "s3:GetObject", "HeadObject": "s3:GetObject", "GetObjectAttributes": "s3:GetObjectAttributes",
	"PutObject": "s3:PutObject", "PostObject": "s3:PutObject", "CopyObject": "s3:PutObject", "CreateMultipartUpload": "s3:PutObject",
	"UploadPart": "s3:PutObject", "UploadPartCopy": "s3:PutObject", "CompleteMultipartUpload": "s3:PutObject",
	"AbortMultipartUpload": "s3:AbortMultipartUpload", "ListParts": "s3:ListMultipartUploadParts",
	"DeleteObject": "s3:DeleteObject", "DeleteObjects": "s3:DeleteObject",
	"GetObjectTagging": "s3:GetObjectTagging", "PutObjectTagging": "s3:PutObjectTagging", "DeleteObjectTagging": "s3:DeleteObjectTagging",
	"GetBucketTagging": "s3:GetBucketTagging", "PutBucketTagging": "s3:PutBucketTagging", "DeleteBucketTagging": "s3:PutBucketTagging",
	"GetBucketPolicy": "s3:GetBucketPolicy", "PutBucketPolicy": "s3:PutBucketPolicy", "DeleteBucketPolicy": "s3:DeleteBucketPolicy",
	"GetBucketPolicyStatus": "s3:GetBucketPolicyStatus",
	"GetBucketAcl":          "s3:GetBucketAcl", "PutBucketAcl": "s3:PutBucketAcl", "GetObjectAcl": "s3:GetObjectAcl", "PutObjectAcl": "s3:PutObjectAcl",
	"GetBucketOwnershipControls": "s3:GetBucketOwnershipControls", "PutBucketOwnershipControls": "s3:PutBucketOwnershipControls",
	"DeleteBucketOwnershipControls": "s3:PutBucketOwnershipControls",
	"GetBucketCors":                 "s3:GetBucketCORS", "PutBucketCors": "s3:PutBucketCORS", "DeleteBucketCors": "s3:PutBucketCORS",
	"GetBucketWebsite": "s3:GetBucketWebsite", "PutBucketWebsite": "s3:PutBucketWebsite", "DeleteBucketWebsite": "s3:DeleteBucketWebsite",
	"GetBucketEncryption": "s3:GetEncryptionConfiguration", "PutBucketEncryption": "s3:PutEncryptionConfiguration",
	"DeleteBucketEncryption": "s3:PutEncryptionConfiguration",
	"GetBucketVersioning":    "s3:GetBucketVersioning", "PutBucketVersioning": "s3:PutBucketVersioning", "GetBucketLogging": "s3:GetBucketLogging",
	"PutBucketLogging":       "s3:PutBucketLogging",
	"GetBucket:notification": "s3:GetBucketNotification", "GetBucket:accelerate": "s3:GetAccelerateConfiguration",
	"GetBucket:requestPayment": "s3:GetBucketRequestPayment", "PutBucketRequestPayment": "s3:PutBucketRequestPayment",
	"PutBucketNotificationConfiguration": "s3:PutBucketNotification", "PutBucketAccelerateConfiguration": "s3:PutAccelerateConfiguration",
	"DeleteBucketReplication":    "s3:PutReplicationConfiguration",
	"GetObjectLockConfiguration": "s3:GetBucketObjectLockConfiguration", "PutObjectLockConfiguration": "s3:PutBucketObjectLockConfiguration",
	"GetObjectRetention": "s3:GetObjectRetention", "PutObjectRetention": "s3:PutObjectRetention",
	"GetObjectLegalHold": "s3:GetObjectLegalHold", "PutObjectLegalHold": "s3:PutObjectLegalHold",
	"GetBucketLifecycleConfiguration": "s3:GetLifecycleConfiguration", "PutBucketLifecycleConfiguration": "s3:PutLifecycleConfiguration",
	"DeleteBucketLifecycle": "s3:PutLifecycleConfiguration",
	"GetBucket:lifecycle":   "s3:GetLifecycleConfiguration", "GetBucket:encryption": "s3:GetEncryptionConfiguration",
	"GetBucket:replication": "s3:GetReplicationConfiguration",
	"GetPublicAccessBlock":  "s3:GetBucketPublicAccessBlock", "PutPublicAccessBlock": "s3:PutBucketPublicAccessBlock",
	"DeletePublicAccessBlock": "s3:PutBucketPublicAccessBlock",
}

// versionActions are the actions of operations on one version (with
// versionId), where S3's differ from those on the current object.
var versionActions = map[string]string{
	"GetObject": "s3:GetObjectVersion", "HeadObject": "s3:GetObjectVersion", "GetObjectAttributes": "s3:GetObjectVersionAttributes",
	"DeleteObject": "s3:DeleteObjectVersion", "GetObjectTagging": "s3:GetObjectVersionTagging",
	"PutObjectTagging": "s3:PutObjectVersionTagging", "DeleteObjectTagging": "s3:DeleteObjectVersionTagging",
}

// judgedVersion makes pr's s3:VersionId the version judged (none for a
// current object): a copy's source's, not what the request's own query
// says, which a copy ignores.
func judgedVersion(pr *s3policy.Request, version string) {
	if version == "" {
		delete(pr.Values, "s3:versionid")
		return
	}
	pr.Values["s3:versionid"] = version
}

// versionReads are the reads with an action of their own for a version.
var versionReads = map[string]string{"s3:GetObject": "s3:GetObjectVersion", "s3:GetObjectTagging": "s3:GetObjectVersionTagging"}

// readAction is the action of a read of an object (s3:GetObject), its
// tags (s3:GetObjectTagging) or its lock, of one version when version is
// not "".
func readAction(action, version string) string {
	if version == "" {
		return action
	}
	if a, ok := versionReads[action]; ok {
		return a
	}
	return action // the actions with no version of their own, as s3:GetObjectRetention
}

// actionOf is the policy action of operation o in req.
func actionOf(o operation, req *request) string {
	if a, ok := versionActions[o.name]; ok && req.URL.Query().Has("versionId") {
		return a
	}
	return actions[o.name]
}

// policyOps are the operations a policy never refuses to its owner.
var policyOps = map[string]bool{"GetBucketPolicy": true, "PutBucketPolicy": true, "DeleteBucketPolicy": true}

// bucketPolicy returns the bucket called name, whoever owns it, and its
// parsed policy (nil when it has none).
func (s *Server) bucketPolicy(name string) (cloudstore.Bucket, *s3policy.Policy, error) {
	bk, raw, err := s.st.BucketWithConfig(name, cloudstore.ConfigPolicy)
	if err != nil {
		return bk, nil, err
	}
	// A stored policy was parsed before it was stored; should it no
	// longer parse, requests are refused rather than a Deny ignored.
	p, err := s.policies.get(name, raw, func(raw []byte) (*s3policy.Policy, error) { return s3policy.Parse(raw, name) })
	return bk, p, err
}

// policyRequest is what a policy is evaluated against for req.
func policyRequest(req *request, action, resource string) s3policy.Request {
	pr := s3policy.Request{Action: action, Resource: resource, Anonymous: req.auth == nil,
		AccessKeyID: req.s3key.AccessKeyID, Account: req.requester, SecureTransport: req.TLS != nil, Values: map[string]string{},
		Time: req.now}
	if pr.Time.IsZero() {
		pr.Time = time.Now()
	}
	if ap, err := netip.ParseAddrPort(req.RemoteAddr); err == nil {
		pr.SourceIP = ap.Addr().Unmap()
	}
	for key, header := range policyHeaders {
		if v, ok := req.Header[header]; ok && len(v) > 0 && (key == "aws:useragent" || key == "aws:referer" || action == "s3:PutObject") {
			pr.Values[key] = v[0]
		}
	}
	if req.form != nil {
		// A form upload's encryption is its fields', not its request
		// headers' (postObject ignores those): its condition keys too.
		for key, header := range policyHeaders {
			if strings.HasPrefix(key, "s3:x-amz-server-side-encryption") {
				delete(pr.Values, key)
				if v, ok := req.form.fields[strings.ToLower(header)]; ok {
					pr.Values[key] = v
				}
			}
		}
	}
	if _, ok := pr.Values["s3:x-amz-copy-source"]; ok {
		// As S3 compares it: BUCKET/KEY, decoded, without a version; a
		// copy source that does not parse is refused by the copy.
		delete(pr.Values, "s3:x-amz-copy-source")
		if b, k, _, err := copySource(req); err == nil {
			pr.Values["s3:x-amz-copy-source"] = b + "/" + k
		}
	}
	requestKeys(req, action, pr.Time, pr.Values)
	lockKeys(req, action, pr.Time, pr.Values)
	if action == "s3:ListBucket" || action == "s3:ListBucketVersions" || action == "s3:ListBucketMultipartUploads" {
		q := req.URL.Query()
		pr.Values["s3:prefix"] = q.Get("prefix")
		if q.Has("delimiter") {
			pr.Values["s3:delimiter"] = q.Get("delimiter")
		}
		if q.Has("max-keys") && action != "s3:ListBucketMultipartUploads" {
			// The page size asked for, as S3 has it for the listings of
			// objects and versions (ListMultipartUploads' is max-uploads).
			pr.Values["s3:max-keys"] = q.Get("max-keys")
		}
	}
	return pr
}

// requestKeys sets the condition keys S3 has for every request that
// tell how it was made (s3:authType, s3:signatureversion,
// s3:signatureAge, s3:x-amz-content-sha256, s3:TlsVersion), and the
// version it names (s3:VersionId), the canned ACL it asks for
// (s3:x-amz-acl, for the actions that take one) and the storage class
// of an upload (s3:x-amz-storage-class).
func requestKeys(req *request, action string, now time.Time, values map[string]string) {
	switch {
	case req.form != nil:
		values["s3:authtype"] = "POST"
	case req.auth != nil && req.auth.Presigned:
		values["s3:authtype"] = "REST-QUERY-STRING"
	case req.auth != nil:
		values["s3:authtype"] = "REST-HEADER"
	}
	if req.auth != nil {
		values["s3:signatureversion"] = "AWS4-HMAC-SHA256"
		if req.v2 {
			values["s3:signatureversion"] = "AWS"
		} else if t := req.auth.Time(); !t.IsZero() {
			values["s3:signatureage"] = strconv.FormatInt(now.Sub(t).Milliseconds(), 10)
		}
	}
	// A Signature Version 4 request's payload hash is the one its
	// signature covers and its body is checked against: a presigned URL
	// leaves the header out of the signature (its holder could send any
	// value) and its body unsigned, so the key says UNSIGNED-PAYLOAD
	// whatever the header says. An anonymous request's body is checked
	// against the header. Signature Version 2 and POST forms sign no
	// payload hash: the key is absent, as in S3.
	switch {
	case req.v2 || req.form != nil:
	case req.auth != nil:
		if req.auth.PayloadHash != "" {
			values["s3:x-amz-content-sha256"] = req.auth.PayloadHash
		}
	default:
		if v := req.Header.Get("X-Amz-Content-Sha256"); v != "" {
			values["s3:x-amz-content-sha256"] = v
		}
	}
	if req.TLS != nil {
		if v, ok := tlsVersions[req.TLS.Version]; ok {
			values["s3:tlsversion"] = v
		}
	}
	if req.URL.Query().Has("versionId") {
		values["s3:versionid"] = req.URL.Query().Get("versionId")
	}
	switch action {
	case "s3:PutObject", "s3:PutObjectAcl", "s3:PutObjectVersionAcl", "s3:PutBucketAcl":
		acl := req.Header.Get("X-Amz-Acl")
		if req.form != nil {
			acl = req.form.fields["acl"]
		}
		if acl != "" {
			values["s3:x-amz-acl"] = acl
		}
	}
	if action == "s3:PutObject" {
		if v := req.Header.Get("X-Amz-Storage-Class"); v != "" && req.form == nil {
			values["s3:x-amz-storage-class"] = v
		}
	}
}

// tlsVersions are s3:TlsVersion's values.
var tlsVersions = map[uint16]string{tls.VersionTLS10: "1.0", tls.VersionTLS11: "1.1", tls.VersionTLS12: "1.2", tls.VersionTLS13: "1.3"}

// policyHeaders are the condition keys read from request headers (a
// POST form's fields are not headers: its encryption is not among them);
// but for the user agent and referer, S3 has them for s3:PutObject only
// (uploads and copies).
var policyHeaders = map[string]string{
	"aws:useragent": "User-Agent", "aws:referer": "Referer",
	"s3:x-amz-server-side-encryption":                    "X-Amz-Server-Side-Encryption",
	"s3:x-amz-server-side-encryption-customer-algorithm": "X-Amz-Server-Side-Encryption-Customer-Algorithm",
	"s3:x-amz-server-side-encryption-aws-kms-key-id":     "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id",
	"s3:x-amz-copy-source":                               "X-Amz-Copy-Source",
	"s3:x-amz-metadata-directive":                        "X-Amz-Metadata-Directive",
}

// resourceOf is the policy resource a request addresses.
func resourceOf(req *request) string { return s3policy.Resource(req.bucket, req.key) }

// authorizeAnonymous admits an unsigned request that the bucket's policy
// grants and does not deny, or that reads an object of a public bucket
// (unless the policy denies it). Anything else is AccessDenied, the same
// for a missing bucket, so that anonymous callers never learn which names
// exist. Of the writes, only those on objects (anonymousWrites) are
// admitted, and only by an Allow: a bucket's configuration is its
// owner's. What an anonymous write makes is the bucket owner's, as every
// object is under BucketOwnerEnforced.
func (s *Server) authorizeAnonymous(req *request, o operation) error {
	if o.name == "PreflightCORS" {
		return s.authorizePreflight(req)
	}
	action := actionOf(o, req)
	if req.bucket == "" || action == "" || o.write && !anonymousWrites[o.name] {
		return errAnonymous
	}
	bk, p, err := s.bucketPolicy(req.bucket)
	if err != nil {
		return errAnonymous
	}
	bpa, err := s.publicAccess(req.bucket)
	if err != nil {
		return errAnonymous // the settings unread: refused, not guessed
	}
	d := s3policy.None
	bodyReady := false
	switch {
	case p == nil:
	case o.name == "DeleteObjects":
		// S3 authorises it key by key (deleteDenied); the request itself
		// needs a policy that grants everyone some deletes.
		if (p.Grants("s3:DeleteObject") || p.Grants("s3:DeleteObjectVersion")) && !(bpa.RestrictPublicBuckets && p.Public()) {
			d = s3policy.Allowed
		}
	default:
		if bodyFeedsPolicy(req, p) {
			// The tag set or lock in the body is evaluated (readPolicyBody), read
			// only when the policy may grant the request at all, so that
			// nobody makes the endpoint read bodies for buckets that
			// grant nothing; its checks are set up first, and only once.
			// A body that fails them is refused as anything ungranted is:
			// nothing tells an anonymous caller more before it is granted.
			if !p.Grants(action) || bpa.RestrictPublicBuckets && p.Public() {
				return errAnonymous
			}
			if anonymousBody(req, o) != nil {
				return errAnonymous
			}
			bodyReady = true
			if readPolicyBody(req, p) != nil {
				return errAnonymous
			}
		}
		pr := policyRequest(req, action, resourceOf(req))
		if err := s.addObjectTags(&pr, p, bk.Account, req.bucket, req.key, req.URL.Query().Get("versionId")); err != nil {
			return errAnonymous // the tags unread: refused, not guessed
		}
		if addRequestTags(&pr, p, req) != nil {
			return errAnonymous // tags that do not parse grant nothing
		}
		d = anonymousDecision(p, pr, bpa)
	}
	// A public bucket's current objects, not the versions they replaced:
	// a version is read anonymously only when the policy grants
	// s3:GetObjectVersion.
	public := bk.Public && !bpa.IgnorePublicAcls && (o.name == "GetObject" || o.name == "HeadObject") && !req.URL.Query().Has("versionId")
	// While the bucket's ACLs are enabled, its ACL may grant everyone an
	// operation on the bucket (public-read-write: writing objects), and
	// an object's ACL an operation on the object, which admitObject
	// checks with the object.
	acl := false
	if ap, ok := aclPermissionOf(o, req); ok && d == s3policy.None && bk.ACLsEnabled() {
		acl = ap.object || s3acl.Allows(effectiveGrants(bk.ACL, bpa), "", ap.perm)
	}
	if d == s3policy.Denied || d == s3policy.None && !public && !acl || o.write && d != s3policy.Allowed && !acl {
		return errAnonymous
	}
	req.account, req.bk, req.bpa = bk.Account, &bk, bpa
	req.policyAllowed, req.publicRead = d == s3policy.Allowed, public
	req.aclRequired = d == s3policy.None // allowed by the bucket's public-read or an ACL
	if o.write {
		if err := s.anonymousExtras(req, o, p, bpa); err != nil {
			return err
		}
	}
	if !o.write {
		req.body = req.Body
		return nil
	}
	if bodyReady {
		return nil
	}
	return anonymousBody(req, o)
}

// anonymousWrites are the writes a bucket policy may grant to anonymous
// requests: those on objects.
var anonymousWrites = map[string]bool{
	"PutObject": true, "CopyObject": true, "CreateMultipartUpload": true, "UploadPart": true, "UploadPartCopy": true,
	"CompleteMultipartUpload": true, "AbortMultipartUpload": true, "DeleteObject": true, "DeleteObjects": true,
	"PutObjectTagging": true, "DeleteObjectTagging": true, "PutObjectRetention": true, "PutObjectLegalHold": true,
}

// anonymousExtras checks what an anonymous write does besides writing
// its object, as S3 does: tags it sets (x-amz-tagging on an upload, or
// a copy's tags) need s3:PutObjectTagging too; a copy reads its source
// anonymously, whose bucket must be the same owner's and let everyone
// read it (and its tags, when the copy keeps them); an SSE-KMS source is
// never read anonymously.
func (s *Server) anonymousExtras(req *request, o operation, p *s3policy.Policy, bpa cloudstore.PublicAccessBlock) error {
	tagsOut := false
	if o.name == "PutObject" || o.name == "CreateMultipartUpload" || o.name == "CopyObject" {
		// x-amz-tagging, in the header or (presigned) the query.
		tags, err := requestTags(req)
		if err != nil {
			return err
		}
		tagsOut = len(tags) > 0
	}
	if o.also != nil {
		b, key, version, err := copySource(req)
		if err != nil {
			return err
		}
		if !s.anonymousMay(req, b, key, version, "s3:GetObject") {
			return errAnonymous
		}
		var src cloudstore.Object
		if version != "" {
			src, err = s.st.ObjectVersion(req.account, b, key, version)
		} else {
			src, err = s.st.Object(req.account, b, key)
		}
		if err == nil && src.Encryption.UsesKMS() {
			return errKMSSigV2
		}
		if replace, derr := taggingDirective(req.Header); o.name == "CopyObject" && derr == nil && !replace && err == nil && len(src.Tags) > 0 {
			tagsOut = true
			if !s.anonymousMay(req, b, key, version, "s3:GetObjectTagging") {
				return errAnonymous
			}
		}
	}
	if tagsOut {
		pr := policyRequest(req, "s3:PutObjectTagging", resourceOf(req))
		if p == nil || addRequestTags(&pr, p, req) != nil || anonymousDecision(p, pr, bpa) != s3policy.Allowed {
			return errAnonymous
		}
	}
	for _, action := range lockActions(req, o) {
		if p == nil || anonymousDecision(p, policyRequest(req, action, resourceOf(req)), bpa) != s3policy.Allowed {
			return errAnonymous
		}
	}
	return nil
}

// anonymousMay reports whether an anonymous request may read key (of
// version, if not "") in bucket, or its tags (action
// s3:GetObjectTagging): bucket must be owned by req's account (the bucket
// owner its request was admitted for), and its policy allow it and not
// deny it, or, for the object itself, the bucket be public and the
// object a current one.
func (s *Server) anonymousMay(req *request, bucket, key, version, action string) bool {
	bk, p, err := s.policyOf(req, bucket) // the request's snapshot: GetObject asks for each lock header too
	if err != nil || bk.Account != req.account {
		return false
	}
	bpa, err := s.publicAccess(bucket)
	if err != nil {
		return false
	}
	object := action == "s3:GetObject"
	d := s3policy.None
	if p != nil {
		action = readAction(action, version)
		pr := policyRequest(req, action, s3policy.Resource(bucket, key))
		judgedVersion(&pr, version)
		if s.addObjectTags(&pr, p, bk.Account, bucket, key, version) != nil {
			return false
		}
		d = anonymousDecision(p, pr, bpa)
	}
	return d == s3policy.Allowed || d == s3policy.None && bk.Public && !bpa.IgnorePublicAcls && version == "" && object
}

// anonymousBody sets up the body of an anonymous write: unsigned, or
// checked against the SHA-256 x-amz-content-sha256 gives, with its
// Content-MD5 and x-amz-checksum-* values checked as a signed request's.
// Signed streaming needs a signature, which an anonymous request lacks.
func anonymousBody(req *request, o operation) error {
	ph := req.Header.Get("X-Amz-Content-Sha256")
	switch {
	case ph == "":
		ph = sigv4.UnsignedPayload
	case ph == sigv4.UnsignedPayload || ph == sigv4.StreamingUnsignedTrail:
	case len(ph) == 64 && strings.Trim(ph, "0123456789abcdef") == "":
	default:
		return s3err(http.StatusBadRequest, "InvalidRequest", "An anonymous request's x-amz-content-sha256 must be UNSIGNED-PAYLOAD, "+
			"STREAMING-UNSIGNED-PAYLOAD-TRAILER or the body's SHA-256 in hex: signed streaming needs a signature")
	}
	var err error
	req.body, req.size, req.sums, err = (&sigv4.Auth{PayloadHash: ph}).BodyChecksums(req.Request, o.name != "CompleteMultipartUpload")
	return err
}

// checkPolicy refuses a signed request that the policy of the bucket it
// addresses (or of a copy's source) denies. Only the owner's buckets are
// checked: another account's is answered as missing by the operation.
func (s *Server) checkPolicy(req *request, o operation) error {
	action := actionOf(o, req)
	if action == "" || policyOps[o.name] || o.name == "DeleteObjects" { // DeleteObjects: each key, in deleteObjects
		return nil
	}
	if err := s.policyDenies(req, req.bucket, req.key, req.URL.Query().Get("versionId"), action); err != nil {
		return err
	}
	if setsTags(req) {
		// An upload that sets tags needs s3:PutObjectTagging too, as S3
		// asks: a Deny of it refuses the upload.
		if err := s.policyDenies(req, req.bucket, req.key, "", "s3:PutObjectTagging"); err != nil {
			return err
		}
	}
	for _, action := range lockActions(req, o) {
		if err := s.policyDenies(req, req.bucket, req.key, "", action); err != nil {
			return err
		}
	}
	if o.also != nil {
		if b, key, version, err := copySource(req); err == nil {
			return s.policyDenies(req, b, key, version, readAction("s3:GetObject", version))
		}
	}
	return nil
}

// policyDenies returns errPolicyDenied if the policy of bucket, when
// bucket is req's account's, denies a signed request's action on
// resource. Anonymous requests and other accounts' are judged by their
// grants instead (authorizeAnonymous, admitAccount, deleteDenied).
func (s *Server) policyDenies(req *request, bucket, key, version, action string) error {
	bk, p, err := s.policyOf(req, bucket)
	switch {
	case errors.Is(err, cloudstore.ErrNotFound):
		return nil
	case err != nil && bk.Account != req.account:
		return nil
	case err != nil:
		return err
	case p == nil || bk.Account != req.account:
		return nil
	}
	if err := readPolicyBody(req, p); err != nil {
		return err
	}
	pr := policyRequest(req, action, s3policy.Resource(bucket, key))
	judgedVersion(&pr, version)
	if err := s.addObjectTags(&pr, p, bk.Account, bucket, key, version); err != nil {
		return err
	}
	if err := addRequestTags(&pr, p, req); err != nil {
		return err
	}
	if p.Evaluate(pr) == s3policy.Denied {
		return errPolicyDenied
	}
	return nil
}

// deleteDenied reports whether deleting key (of version) is refused, for
// DeleteObjects, which S3 authorises key by key: for the bucket's owner,
// by a Deny of its policy; for another account or an anonymous request,
// unless its policy allows it or, for a current object, the bucket's ACL
// grants it WRITE (ownership.go).
func (s *Server) deleteDenied(req *request, key, version string) bool {
	action := "s3:DeleteObject"
	if version != "" {
		action = "s3:DeleteObjectVersion"
	}
	if req.requester == req.account {
		return s.policyDenies(req, req.bucket, key, version, action) != nil
	}
	bk, p, err := s.bucketPolicy(req.bucket)
	if err != nil {
		return true
	}
	bpa, err := s.publicAccess(req.bucket)
	if err != nil {
		return true
	}
	d, err := s.decide(req, p, bk, bpa, action, req.bucket, key, version)
	if err != nil {
		return true
	}
	switch d {
	case s3policy.Denied:
		return true
	case s3policy.Allowed:
		return false
	}
	return version != "" || !bk.ACLsEnabled() || !s3acl.Allows(effectiveGrants(bk.ACL, bpa), req.requester, s3acl.Write)
}

// addObjectTags gives pr the tags of the object (or version) it
// addresses, as s3:ExistingObjectTag/TAGKEY values, when p reads them
// and S3 has the key for pr's action: a store read only for policies
// that ask. An object that does not exist has none; a store that cannot
// be read is an error, so that a Deny is never skipped for want of tags.
func (s *Server) addObjectTags(pr *s3policy.Request, p *s3policy.Policy, owner, bucket, key, version string) error {
	if p == nil || key == "" || !tagActions[pr.Action] || !p.NeedsObjectTags() {
		return nil
	}
	var obj cloudstore.Object
	var err error
	if version != "" {
		obj, err = s.st.ObjectVersion(owner, bucket, key, version)
	} else {
		obj, err = s.st.Object(owner, bucket, key)
	}
	switch {
	case errors.Is(err, cloudstore.ErrNotFound) || errors.Is(err, cloudstore.ErrBadVersion):
		return nil
	case err != nil:
		return err
	}
	pr.ObjectTags = map[string][]string{}
	for k, v := range obj.Tags {
		k = strings.ToLower(k)
		pr.ObjectTags[k] = append(pr.ObjectTags[k], v)
	}
	return nil
}

// tagActions are the actions S3 has s3:ExistingObjectTag for.
var tagActions = map[string]bool{
	"s3:GetObject": true, "s3:GetObjectVersion": true, "s3:GetObjectAcl": true, "s3:GetObjectVersionAcl": true,
	"s3:GetObjectTagging": true, "s3:GetObjectVersionTagging": true, "s3:PutObjectAcl": true, "s3:PutObjectVersionAcl": true,
	"s3:PutObjectTagging": true, "s3:PutObjectVersionTagging": true, "s3:DeleteObjectTagging": true, "s3:DeleteObjectVersionTagging": true,
}

// setsTags reports whether req is an upload that sets its object's tags:
// x-amz-tagging on PutObject, CreateMultipartUpload or a CopyObject that
// replaces its source's tags, or a form's tagging field. Tags that do not
// parse count: the upload refuses them itself.
func setsTags(req *request) bool {
	if req.form != nil {
		_, ok := req.form.fields["tagging"]
		return ok
	}
	tags, err := uploadTags(req)
	return err != nil || len(tags) > 0
}

// uploadTags returns the tags an upload sets on its object: a form's
// tagging field, or the x-amz-tagging of PutObject, CreateMultipartUpload
// or a CopyObject that replaces its source's tags (one that keeps them,
// COPY, sets none of its own); none for any other request.
func uploadTags(req *request) (map[string]string, error) {
	switch {
	case req.form != nil:
		if v, ok := req.form.fields["tagging"]; ok {
			return parseTagging([]byte(v), cloudstore.MaxObjectTags)
		}
	case req.op == "PutObject" || req.op == "CreateMultipartUpload":
		return requestTags(req)
	case req.op == "CopyObject":
		if replace, err := taggingDirective(req.Header); err == nil && replace {
			return requestTags(req)
		}
	}
	return nil, nil
}

// bodyFeedsPolicy reports whether p reads condition keys from req's
// body, which must then be read before p is evaluated: S3 evaluates
// s3:RequestObjectTag/… and s3:RequestObjectTagKeys on a
// PutObjectTagging's tag set, and s3:object-lock-* on a
// PutObjectRetention's Retention and a PutObjectLegalHold's LegalHold.
func bodyFeedsPolicy(req *request, p *s3policy.Policy) bool {
	if p == nil {
		return false
	}
	switch req.op {
	case "PutObjectTagging":
		return p.NeedsRequestTags()
	case "PutObjectRetention", "PutObjectLegalHold":
		return p.NeedsLockKeys()
	}
	return false
}

// readPolicyBody reads req's body before its bucket's policy is evaluated
// when the policy reads keys from it (bodyFeedsPolicy). The body is read
// through its checks (a checksum that does not match fails here) and
// kept: the handler reads it from req.body again.
func readPolicyBody(req *request, p *s3policy.Policy) error {
	if req.policyBody != nil || !bodyFeedsPolicy(req, p) {
		return nil
	}
	limit := int64(maxTaggingBody)
	if req.op != "PutObjectTagging" {
		limit = maxLockBody
	}
	data, err := readBody(req.body, limit)
	if err != nil {
		return err
	}
	req.policyBody = append([]byte{}, data...) // not nil, even when empty
	req.body = bytes.NewReader(req.policyBody)
	return nil
}

// addRequestTags gives pr the tags req sets on its object, as
// s3:RequestObjectTag/TAGKEY and s3:RequestObjectTagKeys values, when p
// reads them and pr's action is one S3 has them for: s3:PutObject (the
// x-amz-tagging of an upload, of a multipart upload's creation and of a
// copy that replaces its source's tags; a form's tagging field) and the
// tagging actions (PutObjectTagging's tag set, or the x-amz-tagging of
// an upload, which needs s3:PutObjectTagging too). Tags that do not
// parse are an error: the request would be refused for them anyway.
func addRequestTags(pr *s3policy.Request, p *s3policy.Policy, req *request) error {
	switch pr.Action {
	case "s3:PutObject", "s3:PutObjectTagging", "s3:PutObjectVersionTagging":
	default:
		return nil
	}
	if p == nil || !p.NeedsRequestTags() {
		return nil
	}
	var tags map[string]string
	var err error
	if req.op == "PutObjectTagging" && req.form == nil {
		if req.policyBody == nil {
			return errors.New("s3api: a PutObjectTagging's tag set was not read before its policy check")
		}
		tags, err = parseTagging(req.policyBody, cloudstore.MaxObjectTags)
	} else {
		tags, err = uploadTags(req)
	}
	if err != nil || len(tags) == 0 {
		return err
	}
	pr.RequestTags = make(map[string][]string, len(tags))
	for k, v := range tags {
		lk := strings.ToLower(k)
		pr.RequestTags[lk] = append(pr.RequestTags[lk], v)
		pr.RequestTagKeys = append(pr.RequestTagKeys, k)
	}
	slices.Sort(pr.RequestTagKeys)
	return nil
}

// policyRoute returns the operation of a ?policy or ?policyStatus
// request, if r is one.
func policyRoute(r *request, q url.Values) (operation, bool) {
	if !q.Has("policy") && !q.Has("policyStatus") {
		return operation{}, false
	}
	if r.key != "" {
		return notImplemented("Unsupported:policy"), true
	}
	if q.Has("policyStatus") {
		if r.Method == http.MethodGet {
			return operation{name: "GetBucketPolicyStatus", read: true, run: (*Server).getBucketPolicyStatus}, true
		}
		return methodNotAllowed("BucketPolicyStatus"), true
	}
	switch r.Method {
	case http.MethodGet:
		return operation{name: "GetBucketPolicy", read: true, run: (*Server).getBucketPolicy}, true
	case http.MethodPut:
		return operation{name: "PutBucketPolicy", write: true, run: (*Server).putBucketPolicy}, true
	case http.MethodDelete:
		return operation{name: "DeleteBucketPolicy", write: true, run: (*Server).deleteBucketPolicy}, true
	}
	return methodNotAllowed("BucketPolicy"), true
}

func (s *Server) getBucketPolicy(w http.ResponseWriter, r *request) error {
	data, err := s.st.BucketConfig(r.account, r.bucket, cloudstore.ConfigPolicy)
	if err != nil {
		return err
	}
	if data == nil {
		return errNoSuchBucketPolicy
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(data)
	return err
}

func (s *Server) putBucketPolicy(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	data, err := readBody(r.body, s3policy.MaxSize)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Code == "MaxMessageLengthExceeded" {
			return s3err(http.StatusBadRequest, "MalformedPolicy", "Policies must be less than 20 KB")
		}
		return err
	}
	p, err := s3policy.Parse(data, r.bucket)
	switch {
	case errors.Is(err, s3policy.ErrUnsupported):
		return s3err(http.StatusNotImplemented, "NotImplemented", strings.TrimPrefix(err.Error(), "s3policy: unsupported policy element: "))
	case err != nil:
		return s3err(http.StatusBadRequest, "MalformedPolicy", strings.TrimPrefix(err.Error(), "s3policy: malformed policy: "))
	}
	// A public policy under BlockPublicPolicy is refused, checked under
	// the lock of the write: settings put meanwhile are never overtaken.
	blocked := func(bpa *cloudstore.PublicAccessBlock) error {
		if bpa != nil && bpa.BlockPublicPolicy && p.Public() {
			return errBlockedPolicy
		}
		return nil
	}
	if err := s.st.SetBucketConfigChecked(r.account, r.bucket, cloudstore.ConfigPolicy, data, blocked); err != nil {
		return err
	}
	s.policies.put(r.bucket, data, p)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteBucketPolicy(w http.ResponseWriter, r *request) error {
	if err := s.st.SetBucketConfig(r.account, r.bucket, cloudstore.ConfigPolicy, nil); err != nil {
		return err
	}
	s.policies.drop(r.bucket)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) getBucketPolicyStatus(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	_, p, err := s.bucketPolicy(r.bucket)
	if err != nil {
		return err
	}
	if p == nil {
		return errNoSuchBucketPolicy
	}
	type status struct {
		XMLName  xml.Name `xml:"PolicyStatus"`
		Xmlns    string   `xml:"xmlns,attr"`
		IsPublic bool
	}
	writeXML(w, http.StatusOK, status{Xmlns: xmlns, IsPublic: p.Public()})
	return nil
}
