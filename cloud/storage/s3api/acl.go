package s3api

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3acl"
)

// ACLs and object ownership. A bucket is made BucketOwnerEnforced, as S3
// makes buckets by default: ACLs disabled, the owner owning every object.
// The one access an ACL can express there is the bucket's public toggle
// (the REST API's PATCH .../public): anonymous reads of all its objects.
// So, under BucketOwnerEnforced:
//
//   - GetBucketAcl and GetObjectAcl answer the owner's FULL_CONTROL, and
//     AllUsers READ when the bucket is public.
//   - PutBucketAcl with the canned ACL private or public-read (x-amz-acl),
//     or a body granting exactly what one of them grants, sets the toggle;
//     CreateBucket takes the same two.
//   - An object's ACL is its bucket's: x-amz-acl on PutObject, CopyObject,
//     CreateMultipartUpload and PutObjectAcl is accepted when it is
//     bucket-owner-full-control or says what holds (private in a private
//     bucket, public-read in a public one), and changes nothing.
//   - Any other ACL (another canned ACL, x-amz-grant-* headers, other
//     grants) is refused as S3 refuses ACLs under BucketOwnerEnforced:
//     400 AccessControlListNotSupported.
//
// Object Ownership BucketOwnerPreferred or ObjectWriter (CreateBucket's
// x-amz-object-ownership, PutBucketOwnershipControls; DeleteBucket-
// OwnershipControls leaves objects owned by their writers, as ObjectWriter
// does) enables ACLs: the bucket's ACL and each object's are S3's, set by
// canned ACLs, x-amz-grant-* headers or AccessControlPolicy bodies (package
// s3acl), and grant other accounts what ownership.go says. The bucket
// ACL's AllUsers READ stays the public toggle. Going back to
// BucketOwnerEnforced is refused while the bucket's ACL grants anyone but
// its owner (InvalidBucketAclWithObjectOwnership); objects then belong to
// the bucket's owner again, and their ACLs, kept, take effect again if ACLs
// are enabled again.

var (
	errACLNotSupported = s3err(http.StatusBadRequest, "AccessControlListNotSupported",
		"The bucket does not allow ACLs: its Object Ownership is BucketOwnerEnforced. Only the canned ACLs private and public-read "+
			"(for the bucket, or for an object when they match its bucket) and bucket-owner-full-control are accepted.")
)

// cannedACLs are S3's canned ACLs.
var cannedACLs = []string{"private", "public-read", "public-read-write", "authenticated-read", "aws-exec-read",
	"bucket-owner-read", "bucket-owner-full-control", "log-delivery-write"}

// grantHeader returns the name of the first x-amz-grant-* header of h, or "".
func grantHeader(h http.Header) string {
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), "x-amz-grant-") {
			return name
		}
	}
	return ""
}

// cannedPublic reads a canned ACL that sets a bucket's public toggle:
// whether it makes the bucket public. Another canned ACL is
// errACLNotSupported, an unknown one InvalidArgument.
func cannedPublic(acl string) (bool, error) {
	switch acl {
	case "private":
		return false, nil
	case "public-read":
		return true, nil
	}
	if slices.Contains(cannedACLs, acl) {
		return false, errACLNotSupported
	}
	return false, s3err(http.StatusBadRequest, "InvalidArgument", "x-amz-acl must be one of S3's canned ACLs, not "+acl)
}

// objectACL reads the ACL an object write asks for (x-amz-acl,
// x-amz-grant-*) and says who is to own the object and its ACL (nil for
// the default, its owner's FULL_CONTROL), as the bucket's Object Ownership
// says. Under BucketOwnerEnforced the owner is the bucket's and the ACL
// must be none, bucket-owner-full-control, or the canned ACL that says
// what holds of the bucket.
func (s *Server) objectACL(r *request) (owner string, acl []s3acl.Grant, err error) {
	bk, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return "", nil, errNoSuchBucket
	}
	canned := r.Header.Get("X-Amz-Acl")
	if !bk.ACLsEnabled() {
		return "", nil, s.enforcedObjectACL(r, bk, canned)
	}
	owner = r.requester
	if owner == "" || bk.Ownership == cloudstore.OwnershipPreferred && canned == "bucket-owner-full-control" {
		owner = bk.Account // anonymous writes are the bucket owner's
	}
	if acl, err = requestedGrants(r.Header, owner, bk.Account); err != nil {
		return "", nil, err
	}
	if err := s.knownGrantees(acl); err != nil {
		return "", nil, err
	}
	if err := s.blockPublicACL(r, s3acl.Public(acl)); err != nil {
		return "", nil, err
	}
	if owner == bk.Account {
		owner = ""
	}
	return owner, acl, nil
}

// enforcedObjectACL checks the ACL of an object write to a bucket whose
// ACLs are disabled: none, bucket-owner-full-control, or the canned ACL
// that says what holds of the bucket.
func (s *Server) enforcedObjectACL(r *request, bk cloudstore.Bucket, acl string) error {
	if grantHeader(r.Header) != "" {
		return errACLNotSupported
	}
	if acl == "" || acl == "bucket-owner-full-control" {
		return nil
	}
	public, err := cannedPublic(acl)
	if err != nil {
		return err
	}
	if err := s.blockPublicACL(r, public); err != nil {
		return err
	}
	if public != bk.Public {
		return s3err(http.StatusBadRequest, "AccessControlListNotSupported", "The bucket does not allow ACLs: an object's ACL is its bucket's, "+
			"which is "+map[bool]string{true: "public-read", false: "private"}[bk.Public]+"; send that, bucket-owner-full-control or no x-amz-acl.")
	}
	return nil
}

// requestedGrants reads the ACL a request's headers ask for, for a
// resource owned by owner in a bucket owned by bucketOwner: x-amz-acl's
// canned ACL or the x-amz-grant-* headers' grants (not both, as in S3),
// or nil when it asks for none.
func requestedGrants(h http.Header, owner, bucketOwner string) ([]s3acl.Grant, error) {
	canned := h.Get("X-Amz-Acl")
	var grants []s3acl.Grant
	for name, values := range h {
		perm, ok := s3acl.HeaderPermissions[strings.ToLower(name)]
		if !ok {
			continue
		}
		for _, v := range values {
			g, err := s3acl.ParseGrantHeader(perm, v)
			if err != nil {
				return nil, aclError(err)
			}
			grants = append(grants, g...)
		}
	}
	switch {
	case canned != "" && grants != nil:
		return nil, s3err(http.StatusBadRequest, "InvalidRequest", "Specifying both Canned ACLs and Header Grants is not allowed")
	case len(grants) > s3acl.MaxGrants:
		return nil, s3err(http.StatusBadRequest, "MalformedACLError", fmt.Sprintf("An ACL holds at most %d grants.", s3acl.MaxGrants))
	case canned != "":
		g, err := s3acl.Canned(canned, owner, bucketOwner)
		return g, aclError(err)
	}
	// Grants sorted by permission, then grantee, so that the ACL kept
	// does not depend on the order of the request's headers.
	slices.SortStableFunc(grants, func(a, b s3acl.Grant) int {
		return strings.Compare(string(a.Permission)+a.Grantee.ID+a.Grantee.URI, string(b.Permission)+b.Grantee.ID+b.Grantee.URI)
	})
	return grants, nil
}

// knownGrantees refuses grants to accounts that do not exist (when the
// server can tell, Options.AccountExists), with S3's answer to an unknown
// canonical id.
func (s *Server) knownGrantees(grants []s3acl.Grant) error {
	if s.opts.AccountExists == nil {
		return nil
	}
	for _, g := range grants {
		if g.Grantee.Type != s3acl.TypeUser {
			continue
		}
		ok, err := s.opts.AccountExists(g.Grantee.ID)
		if err != nil {
			return err
		}
		if !ok {
			return s3err(http.StatusBadRequest, "InvalidArgument", "Invalid id: no account is named "+g.Grantee.ID)
		}
	}
	return nil
}

// aclError is the S3 error of an error of package s3acl.
func aclError(err error) error {
	var e *s3acl.Error
	if !errors.As(err, &e) {
		return err
	}
	switch {
	case errors.Is(err, s3acl.ErrMalformed):
		return s3err(http.StatusBadRequest, "MalformedACLError", e.Message)
	case errors.Is(err, s3acl.ErrUnresolvableEmail):
		return s3err(http.StatusBadRequest, "UnresolvableGrantByEmailAddress", e.Message)
	}
	return s3err(http.StatusBadRequest, "InvalidArgument", e.Message)
}

// errVersionACL refuses the ACL of one version: versions keep none of
// their own here.
var errVersionACL = s3err(http.StatusNotImplemented, "NotImplemented", "A header or query you provided implies functionality that is not "+
	"implemented: the ACL of one version (?acl with a versionId other than null) is not supported by this endpoint; "+
	"leave versionId out for the object's. docs/s3.md lists what is.")

// aclRoute returns the operation of an ?acl or ?ownershipControls
// request, if r is one. The ACL of a version other than "null" is
// refused, not taken for a GET or PUT of the version itself.
func aclRoute(r *request, q url.Values) (operation, bool) {
	if q.Has("versionId") && q.Get("versionId") != "null" {
		if q.Has("acl") {
			return refused("Unsupported:versionId acl", errVersionACL), true
		}
		return operation{}, false
	}
	switch {
	case q.Has("acl") && r.key != "":
		switch r.Method {
		case http.MethodGet:
			return operation{name: "GetObjectAcl", read: true, run: (*Server).acl}, true
		case http.MethodPut:
			return operation{name: "PutObjectAcl", write: true, run: (*Server).putObjectACL}, true
		}
		return methodNotAllowed("ObjectAcl"), true
	case q.Has("acl"):
		switch r.Method {
		case http.MethodGet:
			return operation{name: "GetBucketAcl", read: true, run: (*Server).acl}, true
		case http.MethodPut:
			return operation{name: "PutBucketAcl", write: true, run: (*Server).putBucketACL}, true
		}
		return methodNotAllowed("BucketAcl"), true
	case q.Has("ownershipControls") && r.key != "":
		return notImplemented("Unsupported:ownershipControls"), true
	case q.Has("ownershipControls"):
		switch r.Method {
		case http.MethodGet:
			return operation{name: "GetBucketOwnershipControls", read: true, run: (*Server).getOwnershipControls}, true
		case http.MethodPut:
			return operation{name: "PutBucketOwnershipControls", write: true, run: (*Server).putOwnershipControls}, true
		case http.MethodDelete:
			return operation{name: "DeleteBucketOwnershipControls", write: true, run: (*Server).deleteOwnershipControls}, true
		}
		return methodNotAllowed("BucketOwnershipControls"), true
	}
	return operation{}, false
}

// bucketGrants are the grants of bk's ACL: its owner's FULL_CONTROL,
// AllUsers READ when it is public, and, while ACLs are enabled, the rest
// of its ACL.
func bucketGrants(bk cloudstore.Bucket) []s3acl.Grant {
	g, _ := s3acl.Canned("private", bk.Account, bk.Account)
	if bk.Public {
		g = append(g, s3acl.Grant{Grantee: s3acl.Grantee{Type: s3acl.TypeGroup, URI: s3acl.AllUsers}, Permission: s3acl.Read})
	}
	if bk.ACLsEnabled() {
		g = append(g, bk.ACL...)
	}
	return g
}

// acl answers GetBucketAcl and GetObjectAcl with the grants that hold.
// Under BucketOwnerEnforced an object's are its bucket's; otherwise its
// own, with its owner.
func (s *Server) acl(w http.ResponseWriter, r *request) error {
	bk, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return errNoSuchBucket
	}
	owner, grants := bk.Account, bucketGrants(bk)
	if r.key != "" {
		obj, err := s.st.ObjectVersion(r.account, r.bucket, r.key, r.URL.Query().Get("versionId"))
		if err != nil {
			return err
		}
		if g := r.gate(); g != nil {
			if err := g.check(obj); err != nil {
				return err // another object than admitObject judged
			}
		}
		if bk.ACLsEnabled() {
			owner, grants = objectOwner(bk, obj), objectGrants(bk, obj)
		}
	}
	writeXML(w, http.StatusOK, s3acl.Document(owner, grants))
	return nil
}

// requestedPublic reads the ACL a PutBucketAcl or PutObjectAcl asks for
// under BucketOwnerEnforced, as the public toggle it means: x-amz-acl, or
// an AccessControlPolicy body granting exactly the owner's FULL_CONTROL
// and perhaps AllUsers READ (what GetBucketAcl answers, as tools that edit
// ACLs send back).
func requestedPublic(r *request, body []byte) (bool, error) {
	if grantHeader(r.Header) != "" {
		return false, errACLNotSupported // whatever they grant, as S3 refuses them
	}
	grants, err := requestedACL(r, body, r.account, r.account)
	if err != nil {
		return false, err
	}
	var ownerFull, everyoneRead bool
	for _, g := range grants {
		switch {
		case g.Grantee.Type == s3acl.TypeUser && g.Grantee.ID == r.account && g.Permission == s3acl.FullControl:
			ownerFull = true
		case g.Grantee.Type == s3acl.TypeGroup && g.Grantee.URI == s3acl.AllUsers && g.Permission == s3acl.Read:
			everyoneRead = true
		default:
			return false, errACLNotSupported
		}
	}
	if !ownerFull {
		return false, errACLNotSupported
	}
	return everyoneRead, nil
}

// requestedACL reads the ACL a PutBucketAcl or PutObjectAcl asks for, for
// a resource owned by owner in a bucket owned by bucketOwner: x-amz-acl,
// x-amz-grant-* headers, or an AccessControlPolicy body (whose Owner, if
// it names one, must be owner), exactly one of them.
func requestedACL(r *request, body []byte, owner, bucketOwner string) ([]s3acl.Grant, error) {
	headers := r.Header.Get("X-Amz-Acl") != "" || grantHeader(r.Header) != ""
	switch {
	case headers && len(body) > 0:
		return nil, s3err(http.StatusBadRequest, "UnexpectedContent", "This request does not support content when x-amz-acl or x-amz-grant-* is given.")
	case headers:
		return requestedGrants(r.Header, owner, bucketOwner)
	case len(body) == 0:
		return nil, s3err(http.StatusBadRequest, "MissingSecurityHeader", "Your request was missing a required header: x-amz-acl, or an AccessControlPolicy body.")
	}
	p, err := s3acl.ParsePolicy(body)
	if err != nil {
		return nil, aclError(err)
	}
	if p.Owner != "" && p.Owner != owner {
		return nil, s3err(http.StatusForbidden, "AccessDenied", "Access Denied: the ACL's Owner is not the owner of the "+map[bool]string{true: "object", false: "bucket"}[r.key != ""])
	}
	if p.Grants == nil {
		p.Grants = []s3acl.Grant{}
	}
	return p.Grants, nil
}

// splitBucketACL splits the grants asked for a bucket of owner into the
// public toggle (AllUsers READ) and the rest of its ACL, less the owner's
// own grants (its keys are its account's, which no ACL limits).
func splitBucketACL(grants []s3acl.Grant, owner string) (public bool, rest []s3acl.Grant) {
	for _, g := range grants {
		switch {
		case g.Grantee.Type == s3acl.TypeGroup && g.Grantee.URI == s3acl.AllUsers && g.Permission == s3acl.Read:
			public = true
		case g.Grantee.Type == s3acl.TypeUser && g.Grantee.ID == owner:
		case !slices.Contains(rest, g):
			rest = append(rest, g)
		}
	}
	return public, rest
}

func (s *Server) putBucketACL(w http.ResponseWriter, r *request) error {
	bk, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return err
	}
	body, err := readBody(r.body, s3acl.MaxPolicySize)
	if err != nil {
		return err
	}
	var public bool
	var rest []s3acl.Grant
	if bk.ACLsEnabled() {
		grants, err := requestedACL(r, body, bk.Account, bk.Account)
		if err != nil {
			return err
		}
		public, rest = splitBucketACL(grants, bk.Account)
		if err := s.knownGrantees(rest); err != nil {
			return err
		}
	} else if public, err = requestedPublic(r, body); err != nil {
		return err
	}
	// Under BlockPublicAcls a public ACL is refused, on a bucket public
	// already too, as S3 refuses it. The store checks again with the
	// write (ErrPublicAccessBlocked, answered as errBlockedACL): settings
	// put after this check never let a private bucket turn public. It
	// also refuses grants to others should the bucket have become
	// BucketOwnerEnforced meanwhile.
	if err := s.blockPublicACL(r, public || s3acl.Public(rest)); err != nil {
		return err
	}
	_, err = s.st.UpdateBucket(r.account, r.bucket, s.opts.Now(), func(b *cloudstore.Bucket) { b.Public, b.ACL = public, rest })
	if errors.Is(err, cloudstore.ErrACLGrantsOthers) {
		return errACLNotSupported
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// putObjectACL sets an object's ACL while its bucket's ACLs are enabled.
// Under BucketOwnerEnforced it accepts the ACL that holds for the object
// (its bucket's) and changes nothing; any other is refused.
func (s *Server) putObjectACL(w http.ResponseWriter, r *request) error {
	bk, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return errNoSuchBucket
	}
	version := r.URL.Query().Get("versionId")
	if _, err := s.st.ObjectVersion(r.account, r.bucket, r.key, version); err != nil {
		return err // before the body is read
	}
	body, err := readBody(r.body, s3acl.MaxPolicySize)
	if err != nil {
		return err
	}
	if bk.ACLsEnabled() {
		// The ACL is made and the requester's permission judged on the
		// version the write changes, under its lock: not on one read
		// before the body (which the requester sends as slowly as it
		// likes) while another was written in its place.
		gate := r.gate()
		_, err := s.st.SetVersionACL(r.account, r.bucket, r.key, version, func(obj cloudstore.Object) ([]s3acl.Grant, error) {
			if gate != nil {
				if err := gate.check(obj); err != nil {
					return nil, err
				}
			}
			grants, err := requestedACL(r, body, objectOwner(bk, obj), bk.Account)
			if err != nil {
				return nil, err
			}
			if err := s.knownGrantees(grants); err != nil {
				return nil, err
			}
			return grants, s.blockPublicACL(r, s3acl.Public(grants))
		})
		if err != nil {
			return err
		}
		w.WriteHeader(http.StatusOK)
		return nil
	}
	if acl := r.Header.Get("X-Amz-Acl"); acl == "bucket-owner-full-control" && len(body) == 0 && grantHeader(r.Header) == "" {
		w.WriteHeader(http.StatusOK)
		return nil
	}
	public, err := requestedPublic(r, body)
	if err != nil {
		return err
	}
	if err := s.blockPublicACL(r, public); err != nil {
		return err
	}
	if public != bk.Public {
		return s3err(http.StatusBadRequest, "AccessControlListNotSupported", "The bucket does not allow ACLs: an object's ACL is its bucket's, "+
			"which is "+map[bool]string{true: "public-read", false: "private"}[bk.Public]+".")
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// ownerships are the Object Ownership settings S3 names, and what the
// store keeps for each.
var ownerships = map[string]string{"BucketOwnerEnforced": "", "BucketOwnerPreferred": cloudstore.OwnershipPreferred, "ObjectWriter": cloudstore.OwnershipWriter}

// createBucketACL reads the ACL and Object Ownership a CreateBucket by
// account asks for. Under BucketOwnerEnforced (the default) only the
// canned ACLs private, public-read and bucket-owner-full-control are
// taken, as S3 takes them.
func createBucketACL(h http.Header, account string) (cloudstore.BucketOptions, error) {
	var o cloudstore.BucketOptions
	own := h.Get("X-Amz-Object-Ownership")
	if own == "" {
		own = "BucketOwnerEnforced"
	}
	ownership, ok := ownerships[own]
	if !ok {
		return o, s3err(http.StatusBadRequest, "InvalidArgument", "Invalid x-amz-object-ownership: "+own)
	}
	o.Ownership = ownership
	if ownership != "" {
		grants, err := requestedGrants(h, account, account)
		if err != nil {
			return o, err
		}
		o.Public, o.ACL = splitBucketACL(grants, account)
		return o, nil
	}
	if grantHeader(h) != "" {
		return o, errInvalidBucketACL
	}
	acl := h.Get("X-Amz-Acl")
	if acl == "" || acl == "bucket-owner-full-control" {
		return o, nil
	}
	public, err := cannedPublic(acl)
	if err == errACLNotSupported {
		return o, errInvalidBucketACL
	}
	o.Public = public
	return o, err
}

var errInvalidBucketACL = s3err(http.StatusBadRequest, "InvalidBucketAclWithObjectOwnership",
	"Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting: grant others in the bucket policy, "+
		"or make the bucket with x-amz-object-ownership ObjectWriter or BucketOwnerPreferred.")

func (s *Server) getOwnershipControls(w http.ResponseWriter, r *request) error {
	bk, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return err
	}
	own := "BucketOwnerEnforced"
	switch bk.Ownership {
	case cloudstore.OwnershipNone:
		return s3err(http.StatusNotFound, "OwnershipControlsNotFoundError", "The bucket ownership controls were not found")
	case cloudstore.OwnershipPreferred, cloudstore.OwnershipWriter:
		own = bk.Ownership
	}
	type rule struct {
		ObjectOwnership string
	}
	type controls struct {
		XMLName xml.Name `xml:"OwnershipControls"`
		Xmlns   string   `xml:"xmlns,attr"`
		Rules   []rule   `xml:"Rule"`
	}
	writeXML(w, http.StatusOK, controls{Xmlns: xmlns, Rules: []rule{{own}}})
	return nil
}

func (s *Server) putOwnershipControls(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	body, err := readBody(r.body, 64<<10)
	if err != nil {
		return err
	}
	var doc struct {
		XMLName xml.Name `xml:"OwnershipControls"`
		Rules   []struct {
			ObjectOwnership string
		} `xml:"Rule"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil || len(doc.Rules) != 1 {
		return errMalformedXML
	}
	ownership, ok := ownerships[doc.Rules[0].ObjectOwnership]
	if !ok {
		return errMalformedXML
	}
	return s.setOwnership(w, r, ownership, http.StatusOK)
}

// deleteOwnershipControls removes the bucket's Object Ownership setting:
// objects are then owned by their writers, as under ObjectWriter.
func (s *Server) deleteOwnershipControls(w http.ResponseWriter, r *request) error {
	return s.setOwnership(w, r, cloudstore.OwnershipNone, http.StatusNoContent)
}

func (s *Server) setOwnership(w http.ResponseWriter, r *request, ownership string, status int) error {
	_, err := s.st.UpdateBucket(r.account, r.bucket, s.opts.Now(), func(b *cloudstore.Bucket) { b.Ownership = ownership })
	if errors.Is(err, cloudstore.ErrACLGrantsOthers) {
		return errInvalidBucketACL
	}
	if err != nil {
		return err
	}
	w.WriteHeader(status)
	return nil
}
