package s3api

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// ACLs and object ownership. Every bucket here is as S3 makes buckets by
// default: Object Ownership BucketOwnerEnforced, ACLs disabled, the owner
// owning every object. The one access an ACL can express that this
// endpoint keeps is the bucket's public toggle (the REST API's PATCH
// .../public): anonymous reads of all its objects. So:
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
//   - GetBucketOwnershipControls answers BucketOwnerEnforced;
//     PutBucketOwnershipControls accepts BucketOwnerEnforced and answers
//     the other settings, which would enable ACLs, and
//     DeleteBucketOwnershipControls, 501 NotImplemented.

const (
	allUsers = "http://acs.amazonaws.com/groups/global/AllUsers"
	xsi      = "http://www.w3.org/2001/XMLSchema-instance"
)

var (
	errACLNotSupported = s3err(http.StatusBadRequest, "AccessControlListNotSupported",
		"The bucket does not allow ACLs: its Object Ownership is BucketOwnerEnforced. Only the canned ACLs private and public-read "+
			"(for the bucket, or for an object when they match its bucket) and bucket-owner-full-control are accepted.")
	errMalformedACL = s3err(http.StatusBadRequest, "MalformedACLError", "The XML you provided was not well-formed or did not validate against our published schema")
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

// checkObjectACL checks the ACL an object write asks for (x-amz-acl,
// x-amz-grant-*): none, bucket-owner-full-control, or the canned ACL that
// says what holds of its bucket.
func (s *Server) checkObjectACL(r *request) error {
	acl := r.Header.Get("X-Amz-Acl")
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
	bk, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return errNoSuchBucket
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

// aclRoute returns the operation of an ?acl or ?ownershipControls
// request, if r is one. A version other than "null" is left to the
// route's refusal of versionId.
func aclRoute(r *request, q url.Values) (operation, bool) {
	if q.Has("versionId") && q.Get("versionId") != "null" {
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
			return operation{name: "DeleteBucketOwnershipControls", write: true, run: func(s *Server, _ http.ResponseWriter, r *request) error {
				if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
					return err
				}
				return s3err(http.StatusNotImplemented, "NotImplemented", "Object Ownership is always BucketOwnerEnforced here: "+
					"deleting it would enable ACLs, which this endpoint does not keep.")
			}}, true
		}
		return methodNotAllowed("BucketOwnershipControls"), true
	}
	return operation{}, false
}

type aclGrantee struct {
	XMLNSXsi    string `xml:"xmlns:xsi,attr"`
	Type        string `xml:"xsi:type,attr"`
	ID          string `xml:",omitempty"`
	DisplayName string `xml:",omitempty"`
	URI         string `xml:",omitempty"`
}

type aclGrant struct {
	Grantee    aclGrantee
	Permission string
}

// grantsOf are the grants that hold on a bucket of account's, and on its
// objects: the owner's FULL_CONTROL, and everyone's READ when public.
func grantsOf(account string, public bool) []aclGrant {
	own := ownerOf(account)
	g := []aclGrant{{aclGrantee{xsi, "CanonicalUser", own.ID, own.DisplayName, ""}, "FULL_CONTROL"}}
	if public {
		g = append(g, aclGrant{aclGrantee{XMLNSXsi: xsi, Type: "Group", URI: allUsers}, "READ"})
	}
	return g
}

// acl answers GetBucketAcl and GetObjectAcl with the grants that hold.
func (s *Server) acl(w http.ResponseWriter, r *request) error {
	b, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return errNoSuchBucket
	}
	if r.key != "" {
		if _, err := s.st.Object(r.account, r.bucket, r.key); err != nil {
			return err
		}
	}
	type result struct {
		XMLName xml.Name `xml:"AccessControlPolicy"`
		Xmlns   string   `xml:"xmlns,attr"`
		Owner   owner
		Grants  []aclGrant `xml:"AccessControlList>Grant"`
	}
	writeXML(w, http.StatusOK, result{Xmlns: xmlns, Owner: ownerOf(r.account), Grants: grantsOf(r.account, b.Public)})
	return nil
}

// requestedPublic reads the ACL a PutBucketAcl or PutObjectAcl asks for,
// as the public toggle it means: x-amz-acl, or an AccessControlPolicy
// body granting exactly the owner's FULL_CONTROL and perhaps AllUsers
// READ (what GetBucketAcl answers, as tools that edit ACLs send back).
func requestedPublic(r *request, body []byte) (bool, error) {
	acl := r.Header.Get("X-Amz-Acl")
	switch {
	case grantHeader(r.Header) != "":
		return false, errACLNotSupported
	case acl != "" && len(body) > 0:
		return false, s3err(http.StatusBadRequest, "UnexpectedContent", "This request does not support content when x-amz-acl is given.")
	case acl != "":
		return cannedPublic(acl)
	case len(body) == 0:
		return false, s3err(http.StatusBadRequest, "MissingSecurityHeader", "Your request was missing a required header: x-amz-acl, or an AccessControlPolicy body.")
	}
	var doc struct {
		XMLName xml.Name `xml:"AccessControlPolicy"`
		Owner   *struct{ ID string }
		Grants  []struct {
			Grantee struct {
				Type string `xml:"http://www.w3.org/2001/XMLSchema-instance type,attr"`
				ID   string
				URI  string
			}
			Permission string
		} `xml:"AccessControlList>Grant"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		return false, errMalformedACL
	}
	if doc.Owner != nil && doc.Owner.ID != r.account {
		return false, s3err(http.StatusForbidden, "AccessDenied", "Access Denied: the ACL's Owner is not the bucket's owner")
	}
	var ownerFull, everyoneRead bool
	for _, g := range doc.Grants {
		switch {
		case g.Grantee.Type == "CanonicalUser" && g.Grantee.ID == r.account && g.Permission == "FULL_CONTROL":
			ownerFull = true
		case g.Grantee.Type == "Group" && g.Grantee.URI == allUsers && g.Permission == "READ":
			everyoneRead = true
		case g.Grantee.Type == "" || g.Permission == "":
			return false, errMalformedACL
		default:
			return false, errACLNotSupported
		}
	}
	if !ownerFull {
		return false, errACLNotSupported
	}
	return everyoneRead, nil
}

func (s *Server) putBucketACL(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	body, err := readBody(r.body, 64<<10)
	if err != nil {
		return err
	}
	public, err := requestedPublic(r, body)
	if err != nil {
		return err
	}
	// Under BlockPublicAcls a public ACL is refused, on a bucket public
	// already too, as S3 refuses it. The store checks again with the
	// write (ErrPublicAccessBlocked, answered as errBlockedACL): settings
	// put after this check never let a private bucket turn public.
	if err := s.blockPublicACL(r, public); err != nil {
		return err
	}
	if _, err := s.st.UpdateBucket(r.account, r.bucket, s.opts.Now(), func(b *cloudstore.Bucket) { b.Public = public }); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// putObjectACL accepts the ACL that holds for the object (its bucket's)
// and changes nothing; any other is refused.
func (s *Server) putObjectACL(w http.ResponseWriter, r *request) error {
	bk, err := s.st.Bucket(r.account, r.bucket)
	if err != nil {
		return errNoSuchBucket
	}
	if _, err := s.st.Object(r.account, r.bucket, r.key); err != nil {
		return err
	}
	body, err := readBody(r.body, 64<<10)
	if err != nil {
		return err
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

// createBucketACL reads the ACL and Object Ownership a CreateBucket asks
// for: whether the bucket is to be public.
func createBucketACL(h http.Header) (bool, error) {
	switch own := h.Get("X-Amz-Object-Ownership"); own {
	case "", "BucketOwnerEnforced":
	case "BucketOwnerPreferred", "ObjectWriter":
		return false, s3err(http.StatusNotImplemented, "NotImplemented", "Object Ownership "+own+" enables ACLs, which this endpoint does not keep; "+
			"buckets here are BucketOwnerEnforced.")
	default:
		return false, s3err(http.StatusBadRequest, "InvalidArgument", "Invalid x-amz-object-ownership: "+own)
	}
	if grantHeader(h) != "" {
		return false, errInvalidBucketACL
	}
	acl := h.Get("X-Amz-Acl")
	if acl == "" || acl == "bucket-owner-full-control" {
		return false, nil
	}
	public, err := cannedPublic(acl)
	if err == errACLNotSupported {
		return false, errInvalidBucketACL
	}
	return public, err
}

var errInvalidBucketACL = s3err(http.StatusBadRequest, "InvalidBucketAclWithObjectOwnership",
	"Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting; only x-amz-acl private and public-read are accepted.")

func (s *Server) getOwnershipControls(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	type rule struct {
		ObjectOwnership string
	}
	type controls struct {
		XMLName xml.Name `xml:"OwnershipControls"`
		Xmlns   string   `xml:"xmlns,attr"`
		Rules   []rule   `xml:"Rule"`
	}
	writeXML(w, http.StatusOK, controls{Xmlns: xmlns, Rules: []rule{{"BucketOwnerEnforced"}}})
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
	switch own := doc.Rules[0].ObjectOwnership; own {
	case "BucketOwnerEnforced":
		w.WriteHeader(http.StatusOK)
		return nil
	case "BucketOwnerPreferred", "ObjectWriter":
		return s3err(http.StatusNotImplemented, "NotImplemented", "Object Ownership "+own+" enables ACLs, which this endpoint does not keep; "+
			"buckets here are BucketOwnerEnforced.")
	}
	return errMalformedXML
}
