package s3api

import (
	"errors"
	"net/http"
	"slices"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3acl"
	"github.com/latticenet/lattice/cloud/storage/s3policy"
)

// Cross-account access and object ownership (docs/s3.md, "Object
// Ownership and ACLs").
//
// A request is made by its requester (the account of its S3 key; none
// when anonymous) and acts on its bucket's owner's store: once admitted,
// req.account is the bucket's owner, whoever signed. The bucket owner's
// keys are its own account's identity, as IAM users are an AWS account's:
// they may do what their permission, scope and the bucket policy's Deny
// allow, whatever the ACLs say. Another account's key is admitted to a
// bucket only by a grant: an Allow of the bucket policy naming it, or,
// while the bucket's ACLs are enabled (Object Ownership BucketOwnerPreferred
// or ObjectWriter), the bucket ACL's grant of the permission S3 maps the
// operation to (aclPermissions). Without one it is AccessDenied.
//
// Objects are owned by the bucket's owner under BucketOwnerEnforced, and by
// their writer otherwise (under BucketOwnerPreferred, by the bucket's owner
// when written with bucket-owner-full-control). An object another account
// owns is read, and its ACL read or written, only by its owner or by the
// grants of its own ACL: as in S3, the bucket's owner (and its policy) can
// delete it or overwrite it but not read it without a grant.

// aclPermission is the ACL permission S3 maps an operation to, and
// whether it is the object's permission (true) or the bucket's. An
// operation on an object with no permission ("") is one no ACL grants
// (tagging, attributes): only the object's owner, or the bucket owner's
// policy for the bucket owner's objects, allows it. The operations not
// listed are granted to another account by the bucket policy alone.
type aclPermission struct {
	perm   s3acl.Permission
	object bool
}

var aclPermissions = map[string]aclPermission{
	"ListObjects": {s3acl.Read, false}, "ListObjectsV2": {s3acl.Read, false}, "ListObjectVersions": {s3acl.Read, false},
	"ListMultipartUploads": {s3acl.Read, false}, "HeadBucket": {s3acl.Read, false},
	"PutObject": {s3acl.Write, false}, "PostObject": {s3acl.Write, false}, "CopyObject": {s3acl.Write, false},
	"CreateMultipartUpload": {s3acl.Write, false}, "UploadPart": {s3acl.Write, false}, "UploadPartCopy": {s3acl.Write, false},
	"CompleteMultipartUpload": {s3acl.Write, false}, "AbortMultipartUpload": {s3acl.Write, false}, "ListParts": {s3acl.Write, false},
	"DeleteObject": {s3acl.Write, false}, "DeleteObjects": {s3acl.Write, false},
	"GetBucketAcl": {s3acl.ReadACP, false}, "PutBucketAcl": {s3acl.WriteACP, false},
	"GetObject": {s3acl.Read, true}, "HeadObject": {s3acl.Read, true},
	"GetObjectAcl": {s3acl.ReadACP, true}, "PutObjectAcl": {s3acl.WriteACP, true},
	"GetObjectTagging": {"", true}, "PutObjectTagging": {"", true}, "DeleteObjectTagging": {"", true}, "GetObjectAttributes": {"", true},
	"GetObjectRetention": {"", true}, "PutObjectRetention": {"", true}, "GetObjectLegalHold": {"", true}, "PutObjectLegalHold": {"", true},
}

// lockOps are the Object Lock operations on an object, which no ACL
// grants another account, whoever owns the object.
var lockOps = map[string]bool{"GetObjectRetention": true, "PutObjectRetention": true, "GetObjectLegalHold": true, "PutObjectLegalHold": true}

// aclPermissionOf is the ACL permission of o in req, if an ACL can grant
// it: not the deletion of one version, which S3 grants the bucket's owner
// alone.
func aclPermissionOf(o operation, req *request) (aclPermission, bool) {
	p, ok := aclPermissions[o.name]
	if ok && o.name == "DeleteObject" && req.URL.Query().Has("versionId") {
		return p, false
	}
	return p, ok
}

var (
	errNotGranted = s3err(http.StatusForbidden, "AccessDenied", "Access Denied: the bucket is another account's, and neither its policy nor its ACL grants this request")
	errObjectACL  = s3err(http.StatusForbidden, "AccessDenied", "Access Denied: neither the object's owner nor its ACL grants this request")
	errOwnerOnly  = s3err(http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource: only the bucket owner's account may use its policy.")
)

// admitAccount admits a signed request to its bucket: at once when the
// requester owns it (or when it does not exist: the operation answers
// NoSuchBucket), otherwise by a grant of the bucket's policy or ACL, in
// which case req.account becomes the bucket's owner. It keeps the bucket's
// record in req.bk for the checks of the object (admitObject).
func (s *Server) admitAccount(req *request, o operation) error {
	if req.bucket == "" || o.name == "CreateBucket" {
		return nil
	}
	bk, p, err := s.policyOf(req, req.bucket)
	switch {
	case errors.Is(err, cloudstore.ErrNotFound):
		return nil
	case bk.Account == req.requester:
		req.bk = &bk
		return nil // a policy that no longer parses: checkPolicy answers it
	case err != nil:
		return err
	}
	action := actionOf(o, req)
	if action == "" {
		return errNotGranted
	}
	bpa, err := s.publicAccess(req.bucket)
	if err != nil {
		return err
	}
	if p != nil {
		if err := readPolicyBody(req, p); err != nil {
			return err
		}
	}
	d, err := s.decide(req, p, bk, bpa, action, req.bucket, req.key, req.URL.Query().Get("versionId"))
	if err != nil {
		return err
	}
	if d == s3policy.Denied {
		return errPolicyDenied
	}
	granted := d == s3policy.Allowed
	if policyOps[o.name] {
		// The policy is its owner's alone: another account granted its
		// action is answered 405, as S3 answers it, and one not granted
		// it 403.
		if granted {
			return errOwnerOnly
		}
		return errNotGranted
	}
	ap, ok := aclPermissionOf(o, req)
	switch {
	case granted:
	case o.name == "DeleteObjects":
		granted = true // judged key by key (deleteDenied)
	case lockOps[o.name]:
		// The bucket's policy alone grants another account a lock, even
		// on an object that account owns: one it locked through its ACL
		// grant could be kept from the bucket's owner for good.
	case ok && bk.ACLsEnabled():
		// An object's permission is its own ACL's, checked with the
		// object (admitObject); the bucket's is the bucket ACL's.
		granted = ap.object || s3acl.Allows(effectiveGrants(bk.ACL, bpa), req.requester, ap.perm)
	}
	if !granted {
		return errNotGranted
	}
	req.policyAllowed, req.bpa, req.policy = d == s3policy.Allowed, bpa, p
	if setsTags(req) {
		// The tags an upload sets need s3:PutObjectTagging, which no ACL
		// grants.
		if d, err := s.decide(req, p, bk, bpa, "s3:PutObjectTagging", req.bucket, req.key, ""); err != nil || d != s3policy.Allowed {
			return errNotGranted
		}
	}
	for _, action := range lockActions(req, o) {
		// So does the lock it asks for: no ACL grants one.
		if d, err := s.decide(req, p, bk, bpa, action, req.bucket, req.key, ""); err != nil || d != s3policy.Allowed {
			return errNotGranted
		}
	}
	req.account, req.bk = bk.Account, &bk
	return nil
}

// policyMemo is a request's bucket and policy, as bucketPolicy read them.
type policyMemo struct {
	bk  cloudstore.Bucket
	p   *s3policy.Policy
	err error
}

// policyOf is s.bucketPolicy(bucket), read once per request for the
// request's own bucket: admission and the policy's check read the same
// snapshot rather than two.
func (s *Server) policyOf(req *request, bucket string) (cloudstore.Bucket, *s3policy.Policy, error) {
	if bucket == req.bucket && req.memo != nil {
		return req.memo.bk, req.memo.p, req.memo.err
	}
	bk, p, err := s.bucketPolicy(bucket)
	if bucket == req.bucket {
		req.memo = &policyMemo{bk, p, err}
	}
	return bk, p, err
}

// admitSource admits the source of a signed copy (CopyObject,
// UploadPartCopy) once its target is admitted (req.account is the
// target's owner), and notes its bucket's owner in req.srcAccount. The
// requester's own source needs no grant but its policy's absence of a
// Deny. Another account's needs that bucket's policy to allow reading it,
// or, with that bucket's ACLs enabled, the object's grant (admitObject
// checks the object itself). A CopyObject keeping the tags of a source
// that has some needs, from a requester who owns neither bucket, the
// policies' grants of reading and writing tags, as S3 asks, which no ACL
// gives. A missing source bucket is left to the operation (NoSuchBucket).
func (s *Server) admitSource(req *request, o operation) error {
	if o.also == nil || req.bucket == "" {
		return nil
	}
	b, key, version, err := copySource(req)
	if err != nil {
		return nil // the operation answers it
	}
	sb, sp, err := s.bucketPolicy(b)
	switch {
	case errors.Is(err, cloudstore.ErrNotFound):
		// The operation answers NoSuchBucket, reading the requester's own
		// buckets: never another's made under the name meanwhile.
		req.srcAccount = req.requester
		return nil
	case err != nil:
		return err
	}
	req.srcAccount = sb.Account
	if sb.Account == req.account && req.requester == req.account {
		return nil // the owner's copy within its buckets: checkPolicy judges the Deny
	}
	sbpa, err := s.publicAccess(b)
	if err != nil {
		return err
	}
	read := func(action string) (s3policy.Decision, error) {
		return s.decide(req, sp, sb, sbpa, readAction(action, version), b, key, version)
	}
	d, err := read("s3:GetObject")
	switch {
	case err != nil:
		return err
	case d == s3policy.Denied:
		return errPolicyDenied
	case d != s3policy.Allowed && req.requester != sb.Account && !sb.ACLsEnabled():
		return errNotGranted
	}
	req.srcPolicyAllowed = d == s3policy.Allowed
	replace, err := taggingDirective(req.Header)
	if o.name != "CopyObject" || err != nil || replace || req.requester == sb.Account && req.requester == req.account {
		return nil
	}
	if src, err := s.st.ObjectVersion(sb.Account, b, key, version); err != nil || len(src.Tags) == 0 {
		return nil
	}
	if req.requester != sb.Account {
		if d, err := read("s3:GetObjectTagging"); err != nil || d != s3policy.Allowed {
			return errNotGranted
		}
	}
	if req.requester != req.account {
		if d, err := s.decide(req, req.policy, *req.bk, req.bpa, "s3:PutObjectTagging", req.bucket, req.key, ""); err != nil || d != s3policy.Allowed {
			return errNotGranted
		}
	}
	return nil
}

// decide is what policy p of bucket bk (with Block Public Access settings
// bpa) decides for req's requester, another account or anonymous, doing
// action on bucket's key (of version), with the tags the policy reads.
// Under RestrictPublicBuckets a public policy grants nobody outside the
// bucket owner's account anything (None), as in S3; its Deny still holds.
func (s *Server) decide(req *request, p *s3policy.Policy, bk cloudstore.Bucket, bpa cloudstore.PublicAccessBlock, action, bucket, key, version string) (s3policy.Decision, error) {
	if p == nil {
		return s3policy.None, nil
	}
	pr := policyRequest(req, action, s3policy.Resource(bucket, key))
	judgedVersion(&pr, version)
	if err := s.addObjectTags(&pr, p, bk.Account, bucket, key, version); err != nil {
		return s3policy.None, err
	}
	if err := addRequestTags(&pr, p, req); err != nil {
		return s3policy.None, err
	}
	return anonymousDecision(p, pr, bpa), nil
}

// effectiveGrants are grants as they take effect under Block Public
// Access settings bpa: IgnorePublicAcls drops those to AllUsers and
// AuthenticatedUsers.
func effectiveGrants(grants []s3acl.Grant, bpa cloudstore.PublicAccessBlock) []s3acl.Grant {
	if !bpa.IgnorePublicAcls || !s3acl.Public(grants) {
		return grants
	}
	return slices.DeleteFunc(slices.Clone(grants), func(g s3acl.Grant) bool { return g.Grantee.Type == s3acl.TypeGroup })
}

// objectOwner is the account that owns obj in bk.
func objectOwner(bk cloudstore.Bucket, obj cloudstore.Object) string {
	if bk.ACLsEnabled() && obj.Owner != "" {
		return obj.Owner
	}
	return bk.Account
}

// ownerOf is the account that owns obj of r's bucket.
func (r *request) ownerOf(obj cloudstore.Object) string {
	if r.bk == nil {
		return r.account
	}
	return objectOwner(*r.bk, obj)
}

// objectGrants are the grants of obj's ACL in bk: its own while ACLs are
// enabled, its owner's FULL_CONTROL otherwise or when it has none.
func objectGrants(bk cloudstore.Bucket, obj cloudstore.Object) []s3acl.Grant {
	if bk.ACLsEnabled() && obj.ACL != nil {
		return obj.ACL
	}
	g, _ := s3acl.Canned("private", objectOwner(bk, obj), bk.Account)
	return g
}

// objectGate is who may do what to the objects of one bucket whose ACLs
// are enabled, for one request: the bucket, its Block Public Access
// settings, and whether its policy (or public toggle) granted the request.
type objectGate struct {
	bk            cloudstore.Bucket
	bpa           cloudstore.PublicAccessBlock
	requester     string
	perm          s3acl.Permission
	policyAllowed bool // the bucket's policy or public toggle granted the request
}

// allows reports whether the gate lets its requester do its permission to
// obj: the object's owner may; the bucket owner's policy or public toggle
// speaks for the bucket owner's objects only; anyone else needs the
// object ACL's grant (none, for an operation no ACL grants).
func (g objectGate) allows(obj cloudstore.Object) bool {
	owner := objectOwner(g.bk, obj)
	switch {
	case g.requester != "" && g.requester == owner:
		return true
	case owner == g.bk.Account && g.policyAllowed:
		return true
	}
	return g.perm != "" && s3acl.Allows(effectiveGrants(objectGrants(g.bk, obj), g.bpa), g.requester, g.perm)
}

// check is allows as an error (refusal).
func (g objectGate) check(obj cloudstore.Object) error {
	if g.allows(obj) {
		return nil
	}
	return g.refusal()
}

// refusal is the gate's refusal: errObjectACL, or errAnonymous for an
// anonymous request, which learns nothing more of a bucket it may not use.
func (g objectGate) refusal() error {
	if g.requester == "" {
		return errAnonymous
	}
	return errObjectACL
}

// lists reports whether the gate's requester may list the bucket: be told
// whether a key exists.
func (g objectGate) lists() bool {
	return g.requester != "" && g.requester == g.bk.Account || g.policyAllowed ||
		s3acl.Allows(effectiveGrants(g.bk.ACL, g.bpa), g.requester, s3acl.Read)
}

// gate is the objectGate of req's own bucket for its operation, or nil
// when the bucket's ACLs are disabled (the bucket's owner owns every
// object, and admission already decided) or it is no operation on an
// object.
func (req *request) gate() *objectGate {
	ap, ok := aclPermissionOf(operation{name: req.op}, req)
	if req.bk == nil || !req.bk.ACLsEnabled() || !ok || !ap.object {
		return nil
	}
	return &objectGate{bk: *req.bk, bpa: req.bpa, requester: req.requester, perm: ap.perm,
		policyAllowed: req.policyAllowed || req.requester != "" && req.requester == req.bk.Account || req.publicRead}
}

// admitObject checks an operation on an object of a bucket whose ACLs are
// enabled, and the source of a copy, against the object's owner and ACL
// (objectGate), before the operation reads its body. The handlers check
// again against the object they act on (req.gate), under the store's lock
// for writes, so that an object replaced meanwhile is judged as itself. A
// missing key is told only to those who may list the bucket.
func (s *Server) admitObject(req *request, o operation) error {
	if g := req.gate(); g != nil {
		if err := s.admitObjectIn(g, req.bucket, req.key, req.URL.Query().Get("versionId")); err != nil {
			return err
		}
	}
	if o.also == nil {
		return nil
	}
	g, err := s.sourceGate(req)
	if err != nil || g == nil {
		return err
	}
	b, key, version, _ := copySource(req)
	return s.admitObjectIn(g, b, key, version)
}

// sourceGate is the objectGate of a copy's source in req, nil when its
// bucket's ACLs are disabled (admitAccount decided) or the operation
// answers what is wrong with it.
func (s *Server) sourceGate(req *request) (*objectGate, error) {
	b, _, _, err := copySource(req)
	if err != nil {
		return nil, nil
	}
	sb, err := s.st.Bucket(req.sourceAccount(), b)
	if err != nil || !sb.ACLsEnabled() {
		return nil, nil // the operation answers it; admitSource judged the rest (its policy)
	}
	bpa, err := s.publicAccess(b)
	if err != nil {
		return nil, err
	}
	// An anonymous copy's read was admitted by anonymousExtras
	// (anonymousMay); the source's owner reads its own; anyone else by
	// the source bucket's policy (admitSource) or the object's ACL.
	allowed := req.requester == "" || req.requester == sb.Account || req.srcPolicyAllowed
	return &objectGate{bk: sb, bpa: bpa, requester: req.requester, perm: s3acl.Read, policyAllowed: allowed}, nil
}

// sourceCheck is what a copy in r checks of its source version, under the
// lock that reads it: the gate's judgement, if there is one, and that an
// SSE-KMS source is read only by requests signed with Signature Version
// 4, as GetObject reads it.
func sourceCheck(r *request, gate *objectGate) func(cloudstore.Object) error {
	return func(src cloudstore.Object) error {
		if src.Encryption.UsesKMS() && (r.auth == nil || r.v2) {
			return errKMSSigV2
		}
		if gate != nil {
			return gate.check(src)
		}
		return nil
	}
}

// lookupError is err of a read of the gate's bucket as its requester is
// told it: a missing key (or version, or a delete marker) only to those
// who may list the bucket, and the gate's refusal to others. A nil gate
// tells err as it is.
func (g *objectGate) lookupError(err error) error {
	if g != nil && errors.Is(err, cloudstore.ErrNotFound) && !g.lists() {
		return g.refusal()
	}
	return err
}

// sourceAccount is the account whose bucket a copy's source is in: the
// one admitSource found, or the target's.
func (req *request) sourceAccount() string {
	if req.srcAccount != "" {
		return req.srcAccount
	}
	return req.account
}

// admitObjectIn is admitObject for key (of version) in the gate's bucket,
// named bucket.
func (s *Server) admitObjectIn(g *objectGate, bucket, key, version string) error {
	obj, err := s.st.ObjectVersion(g.bk.Account, bucket, key, version)
	switch {
	case errors.Is(err, cloudstore.ErrNotFound) || err == nil && obj.DeleteMarker: // a DeleteMarkerError is ErrNotFound
		if g.lists() {
			return nil // the operation answers NoSuchKey
		}
		return g.refusal()
	case err != nil:
		return err
	}
	return g.check(obj)
}
