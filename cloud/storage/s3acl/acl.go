// Package s3acl is S3's access control lists as rules without I/O: the
// grants a canned ACL, the x-amz-grant-* headers or an AccessControlPolicy
// document give, whether a list of grants allows a requester a permission,
// and the document GetBucketAcl and GetObjectAcl answer. Package s3api
// decides when ACLs apply (a bucket's Object Ownership) and reads and
// writes them through the store; docs/s3.md, "Object Ownership and ACLs",
// says what a grant lets another account do.
//
// Accounts are named by their canonical id, which is the account's name
// here (ListBuckets' Owner ID). Accounts have no e-mail address on this
// platform, so a grant by e-mail never resolves
// (ErrUnresolvableEmail, S3's UnresolvableGrantByEmailAddress).
package s3acl

import (
	"encoding/xml"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Permission is what a grant allows.
type Permission string

// The permissions of S3's ACLs. FULL_CONTROL is all four others.
const (
	Read        Permission = "READ"
	Write       Permission = "WRITE"
	ReadACP     Permission = "READ_ACP"
	WriteACP    Permission = "WRITE_ACP"
	FullControl Permission = "FULL_CONTROL"
)

var permissions = []Permission{Read, Write, ReadACP, WriteACP, FullControl}

// The groups a grant may name. LogDelivery is S3's log delivery service;
// no request here is made as it (server access logs are written by the
// endpoint itself), so its grants are kept and allow no request.
const (
	AllUsers           = "http://acs.amazonaws.com/groups/global/AllUsers"
	AuthenticatedUsers = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
	LogDelivery        = "http://acs.amazonaws.com/groups/s3/LogDelivery"
)

var groups = []string{AllUsers, AuthenticatedUsers, LogDelivery}

// Grantee types, as the xsi:type of an AccessControlPolicy's Grantee.
const (
	TypeUser  = "CanonicalUser"
	TypeGroup = "Group"
	TypeEmail = "AmazonCustomerByEmail"
)

// Grantee is who a grant is to: an account (ID) or a group (URI).
type Grantee struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// Grant is one entry of an ACL.
type Grant struct {
	Grantee    Grantee    `json:"grantee"`
	Permission Permission `json:"permission"`
}

// MaxGrants is how many grants an ACL may hold, as in S3.
const MaxGrants = 100

// Errors, each S3's error code of the same meaning (s3api answers them
// with status 400).
var (
	// ErrMalformed is MalformedACLError: the document does not parse, or
	// a grant lacks its grantee or permission.
	ErrMalformed = errors.New("MalformedACLError")
	// ErrInvalidArgument is InvalidArgument: an unknown permission,
	// group, canned ACL or grantee type, or an unknown account.
	ErrInvalidArgument = errors.New("InvalidArgument")
	// ErrUnresolvableEmail is UnresolvableGrantByEmailAddress.
	ErrUnresolvableEmail = errors.New("UnresolvableGrantByEmailAddress")
)

// Error is an error of this package with what was wrong; errors.Is
// matches it to its kind (ErrMalformed, ErrInvalidArgument,
// ErrUnresolvableEmail).
type Error struct {
	Kind    error
	Message string
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Message }
func (e *Error) Unwrap() error { return e.Kind }
func fail(kind error, format string, a ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, a...)}
}

// accountID is what a canonical id may be: an account name here.
var accountID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Canned are the grants of S3's canned ACL name, for a resource owned by
// owner in a bucket owned by bucketOwner (the same for a bucket). Canned
// ACLs that name the bucket owner (bucket-owner-read,
// bucket-owner-full-control) give it nothing more on a bucket, as in S3;
// aws-exec-read's grant to Amazon EC2 names no account here and is left
// out.
func Canned(name, owner, bucketOwner string) ([]Grant, error) {
	g := []Grant{user(owner, FullControl)}
	switch name {
	case "private", "aws-exec-read":
	case "public-read":
		g = append(g, group(AllUsers, Read))
	case "public-read-write":
		g = append(g, group(AllUsers, Read), group(AllUsers, Write))
	case "authenticated-read":
		g = append(g, group(AuthenticatedUsers, Read))
	case "bucket-owner-read":
		if bucketOwner != owner {
			g = append(g, user(bucketOwner, Read))
		}
	case "bucket-owner-full-control":
		if bucketOwner != owner {
			g = append(g, user(bucketOwner, FullControl))
		}
	case "log-delivery-write":
		g = append(g, group(LogDelivery, Write), group(LogDelivery, ReadACP))
	default:
		return nil, fail(ErrInvalidArgument, "x-amz-acl %q is not one of S3's canned ACLs", name)
	}
	return g, nil
}

func user(id string, p Permission) Grant   { return Grant{Grantee{Type: TypeUser, ID: id}, p} }
func group(uri string, p Permission) Grant { return Grant{Grantee{Type: TypeGroup, URI: uri}, p} }

// HeaderPermissions are the x-amz-grant-* headers (lower case) and the
// permission each grants.
var HeaderPermissions = map[string]Permission{
	"x-amz-grant-read": Read, "x-amz-grant-write": Write, "x-amz-grant-read-acp": ReadACP,
	"x-amz-grant-write-acp": WriteACP, "x-amz-grant-full-control": FullControl,
}

// ParseGrantHeader reads the value of an x-amz-grant-* header granting
// p: a comma-separated list of id="CANONICAL-ID", uri="GROUP-URI" or
// emailAddress="ADDRESS" (the quotes optional), as S3 takes them.
func ParseGrantHeader(p Permission, value string) ([]Grant, error) {
	var out []Grant
	for item := range strings.SplitSeq(value, ",") {
		item = strings.TrimSpace(item)
		typ, v, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fail(ErrInvalidArgument, "an x-amz-grant-* value must be id=\"...\", uri=\"...\" or emailAddress=\"...\", not %q", item)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		var g Grant
		switch strings.ToLower(strings.TrimSpace(typ)) {
		case "id":
			g = user(v, p)
		case "uri":
			g = group(v, p)
		case "emailaddress":
			return nil, fail(ErrUnresolvableEmail, "The e-mail address you provided does not match any account on record: accounts here have no e-mail address; grant by id")
		default:
			return nil, fail(ErrInvalidArgument, "unknown grantee type %q in an x-amz-grant-* header", typ)
		}
		out = append(out, g)
	}
	return out, check(out)
}

// check refuses grants naming what is not a grantee here: ids that are
// not account names, unknown groups, unknown permissions.
func check(grants []Grant) error {
	if len(grants) > MaxGrants {
		return fail(ErrMalformed, "an ACL holds at most %d grants", MaxGrants)
	}
	for _, g := range grants {
		if !slices.Contains(permissions, g.Permission) {
			return fail(ErrInvalidArgument, "unknown permission %q", g.Permission)
		}
		switch g.Grantee.Type {
		case TypeUser:
			if !accountID.MatchString(g.Grantee.ID) {
				return fail(ErrInvalidArgument, "Invalid id: %q is not an account's canonical id", g.Grantee.ID)
			}
		case TypeGroup:
			if !slices.Contains(groups, g.Grantee.URI) {
				return fail(ErrInvalidArgument, "Invalid group uri: %q", g.Grantee.URI)
			}
		default:
			return fail(ErrInvalidArgument, "unknown grantee type %q", g.Grantee.Type)
		}
	}
	return nil
}

// Policy is an AccessControlPolicy document: its Owner's id, if it names
// one, and its grants.
type Policy struct {
	Owner  string
	Grants []Grant
}

// MaxPolicySize is the largest AccessControlPolicy document read.
const MaxPolicySize = 64 << 10

// ParsePolicy reads an AccessControlPolicy document (the body of
// PutBucketAcl and PutObjectAcl). Grants by e-mail are
// ErrUnresolvableEmail; grants that are not well formed, ErrMalformed.
func ParsePolicy(body []byte) (Policy, error) {
	if len(body) > MaxPolicySize {
		return Policy{}, fail(ErrMalformed, "the document is larger than %d bytes", MaxPolicySize)
	}
	var doc struct {
		XMLName xml.Name `xml:"AccessControlPolicy"`
		Owner   *struct{ ID string }
		Grants  []struct {
			Grantee *struct {
				Type         string `xml:"http://www.w3.org/2001/XMLSchema-instance type,attr"`
				ID           string
				URI          string
				EmailAddress string
			}
			Permission string
		} `xml:"AccessControlList>Grant"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		return Policy{}, fail(ErrMalformed, "The XML you provided was not well-formed or did not validate against our published schema")
	}
	var p Policy
	if doc.Owner != nil {
		if doc.Owner.ID == "" {
			return Policy{}, fail(ErrMalformed, "the Owner has no ID")
		}
		p.Owner = doc.Owner.ID
	}
	for _, dg := range doc.Grants {
		if dg.Grantee == nil || dg.Permission == "" {
			return Policy{}, fail(ErrMalformed, "a Grant needs a Grantee and a Permission")
		}
		g := Grant{Permission: Permission(dg.Permission)}
		switch dg.Grantee.Type {
		case TypeUser:
			g.Grantee = Grantee{Type: TypeUser, ID: dg.Grantee.ID}
		case TypeGroup:
			g.Grantee = Grantee{Type: TypeGroup, URI: dg.Grantee.URI}
		case TypeEmail:
			return Policy{}, fail(ErrUnresolvableEmail, "The e-mail address you provided does not match any account on record: accounts here have no e-mail address; grant by id")
		case "":
			return Policy{}, fail(ErrMalformed, "a Grantee needs its xsi:type")
		default:
			return Policy{}, fail(ErrInvalidArgument, "unknown grantee type %q", dg.Grantee.Type)
		}
		p.Grants = append(p.Grants, g)
	}
	return p, check(p.Grants)
}

// Allows reports whether grants allow requester (an account's canonical
// id; "" for an anonymous request) permission p. FULL_CONTROL allows
// every permission; AllUsers takes in everyone, AuthenticatedUsers every
// signed request.
func Allows(grants []Grant, requester string, p Permission) bool {
	for _, g := range grants {
		if g.Permission != p && g.Permission != FullControl {
			continue
		}
		switch g.Grantee.Type {
		case TypeUser:
			if requester != "" && g.Grantee.ID == requester {
				return true
			}
		case TypeGroup:
			if g.Grantee.URI == AllUsers || g.Grantee.URI == AuthenticatedUsers && requester != "" {
				return true
			}
		}
	}
	return false
}

// Public reports whether grants give anything to everyone (AllUsers) or
// to every account (AuthenticatedUsers): what Block Public Access calls
// a public ACL.
func Public(grants []Grant) bool {
	return slices.ContainsFunc(grants, func(g Grant) bool {
		return g.Grantee.Type == TypeGroup && (g.Grantee.URI == AllUsers || g.Grantee.URI == AuthenticatedUsers)
	})
}

// GrantsOthers reports whether grants give anything to anyone but owner:
// what a bucket's ACL may not do for its Object Ownership to be
// BucketOwnerEnforced.
func GrantsOthers(grants []Grant, owner string) bool {
	return slices.ContainsFunc(grants, func(g Grant) bool { return g.Grantee.Type != TypeUser || g.Grantee.ID != owner })
}

// Document is the AccessControlPolicy GetBucketAcl and GetObjectAcl
// answer: owner, and grants in their order.
func Document(owner string, grants []Grant) any {
	type grantee struct {
		XMLNSXsi    string `xml:"xmlns:xsi,attr"`
		Type        string `xml:"xsi:type,attr"`
		ID          string `xml:",omitempty"`
		DisplayName string `xml:",omitempty"`
		URI         string `xml:",omitempty"`
	}
	type grant struct {
		Grantee    grantee
		Permission Permission
	}
	type ownerDoc struct {
		ID          string
		DisplayName string
	}
	type doc struct {
		XMLName xml.Name `xml:"AccessControlPolicy"`
		Xmlns   string   `xml:"xmlns,attr"`
		Owner   ownerDoc
		Grants  []grant `xml:"AccessControlList>Grant"`
	}
	d := doc{Xmlns: "http://s3.amazonaws.com/doc/2006-03-01/", Owner: ownerDoc{owner, owner}, Grants: []grant{}}
	for _, g := range grants {
		ge := grantee{XMLNSXsi: "http://www.w3.org/2001/XMLSchema-instance", Type: g.Grantee.Type, ID: g.Grantee.ID, URI: g.Grantee.URI}
		if g.Grantee.Type == TypeUser {
			ge.DisplayName = g.Grantee.ID
		}
		d.Grants = append(d.Grants, grant{ge, g.Permission})
	}
	return d
}
