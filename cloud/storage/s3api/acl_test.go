package s3api_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// aclOf is a bucket's or object's ACL as "GRANTEE:PERMISSION" joined by
// commas: a group by its URI, an account by its id, alice's as "owner".
func aclOf(t *testing.T, grants []types.Grant) string {
	t.Helper()
	var out []string
	for _, g := range grants {
		who := aws.ToString(g.Grantee.URI)
		if g.Grantee.Type == types.TypeCanonicalUser {
			who = aws.ToString(g.Grantee.ID)
		}
		if who == "alice" {
			who = "owner"
		}
		out = append(out, who+":"+string(g.Permission))
	}
	return strings.Join(out, ",")
}

const (
	privateACL = "owner:FULL_CONTROL"
	publicACL  = "owner:FULL_CONTROL,http://acs.amazonaws.com/groups/global/AllUsers:READ"
)

func bucketACL(t *testing.T, c *s3.Client, bucket string) string {
	t.Helper()
	out, err := c.GetBucketAcl(context.Background(), &s3.GetBucketAclInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("GetBucketAcl %s: %v", bucket, err)
	}
	return aclOf(t, out.Grants)
}

// TestCreateBucketACL: CreateBucket takes private and public-read under
// BucketOwnerEnforced (the default), and refuses other ACLs there without
// making the bucket; with ACLs enabled it takes any.
func TestCreateBucketACL(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	for _, tc := range []struct {
		name string
		in   s3.CreateBucketInput
		want string // the error code, or the ACL made
	}{
		{"no ACL", s3.CreateBucketInput{}, privateACL},
		{"private", s3.CreateBucketInput{ACL: types.BucketCannedACLPrivate}, privateACL},
		{"public-read", s3.CreateBucketInput{ACL: types.BucketCannedACLPublicRead}, publicACL},
		{"BucketOwnerEnforced", s3.CreateBucketInput{ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced}, privateACL},
		{"public-read-write", s3.CreateBucketInput{ACL: types.BucketCannedACLPublicReadWrite}, "InvalidBucketAclWithObjectOwnership"},
		{"authenticated-read", s3.CreateBucketInput{ACL: types.BucketCannedACLAuthenticatedRead}, "InvalidBucketAclWithObjectOwnership"},
		{"a grant", s3.CreateBucketInput{GrantRead: aws.String(`uri="http://acs.amazonaws.com/groups/global/AllUsers"`)}, "InvalidBucketAclWithObjectOwnership"},
		{"an unknown ACL", s3.CreateBucketInput{ACL: "everyone"}, "InvalidArgument"},
		{"an unknown ownership", s3.CreateBucketInput{ObjectOwnership: "Nobody"}, "InvalidArgument"},
		{"BucketOwnerPreferred", s3.CreateBucketInput{ObjectOwnership: types.ObjectOwnershipBucketOwnerPreferred}, privateACL},
		{"ObjectWriter, public-read", s3.CreateBucketInput{ObjectOwnership: types.ObjectOwnershipObjectWriter, ACL: types.BucketCannedACLPublicRead}, publicACL},
		{"ObjectWriter, authenticated-read", s3.CreateBucketInput{ObjectOwnership: types.ObjectOwnershipObjectWriter, ACL: types.BucketCannedACLAuthenticatedRead},
			"owner:FULL_CONTROL,http://acs.amazonaws.com/groups/global/AuthenticatedUsers:READ"},
		{"ObjectWriter, a grant by e-mail", s3.CreateBucketInput{ObjectOwnership: types.ObjectOwnershipObjectWriter, GrantRead: aws.String(`emailAddress="b@example.com"`)},
			"UnresolvableGrantByEmailAddress"},
		{"ObjectWriter, canned and grants", s3.CreateBucketInput{ObjectOwnership: types.ObjectOwnershipObjectWriter, ACL: types.BucketCannedACLPrivate,
			GrantRead: aws.String(`id="bob"`)}, "InvalidRequest"},
	} {
		name := "acl-" + strings.NewReplacer(" ", "-", ",", "").Replace(strings.ToLower(tc.name))
		in := tc.in
		in.Bucket = aws.String(name)
		_, err := c.CreateBucket(ctx, &in)
		if strings.Contains(tc.want, ":") {
			if err != nil {
				t.Errorf("%s: CreateBucket: %v", tc.name, err)
			} else if got := bucketACL(t, c, name); got != tc.want {
				t.Errorf("%s: ACL %s, want %s", tc.name, got, tc.want)
			}
			continue
		}
		if apiCode(err) != tc.want {
			t.Errorf("%s: CreateBucket: got %v, want %s", tc.name, err, tc.want)
		}
		if _, err := e.st.Bucket("alice", name); err != cloudstore.ErrNotFound {
			t.Errorf("%s: a refused CreateBucket made the bucket (%v)", tc.name, err)
		}
	}
	mustPut(t, c, "acl-public-read", "k", []byte("v"))
	if status, code := e.anonymous(t, "GET", "/acl-public-read/k", nil); status != 200 {
		t.Errorf("anonymous read of a bucket made public-read: %d %s", status, code)
	}
}

// TestPutBucketACL: the canned ACLs private and public-read, or a body
// granting what one of them grants, set the public toggle; anything else
// is refused and changes nothing.
func TestPutBucketACL(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "acl")
	mustPut(t, c, "acl", "k", []byte("v"))
	readID, readSecret := e.key(t, "alice", cloudstore.PermRead, "*")
	bobID, bobSecret := e.key(t, "bob", cloudstore.PermReadWrite, "*")
	owner := &types.Owner{ID: aws.String("alice")}
	grant := func(g types.Grantee, p types.Permission) types.Grant { return types.Grant{Grantee: &g, Permission: p} }
	ownerFull := grant(types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String("alice")}, types.PermissionFullControl)
	everyoneRead := grant(types.Grantee{Type: types.TypeGroup, URI: aws.String("http://acs.amazonaws.com/groups/global/AllUsers")}, types.PermissionRead)
	for _, tc := range []struct {
		name   string
		client *s3.Client
		in     s3.PutBucketAclInput
		want   string // the error code, or the ACL it leaves
	}{
		{"public-read", c, s3.PutBucketAclInput{ACL: types.BucketCannedACLPublicRead}, publicACL},
		{"public-read again", c, s3.PutBucketAclInput{ACL: types.BucketCannedACLPublicRead}, publicACL},
		{"authenticated-read", c, s3.PutBucketAclInput{ACL: types.BucketCannedACLAuthenticatedRead}, "AccessControlListNotSupported"},
		{"public-read-write", c, s3.PutBucketAclInput{ACL: types.BucketCannedACLPublicReadWrite}, "AccessControlListNotSupported"},
		{"an unknown ACL", c, s3.PutBucketAclInput{ACL: "everyone"}, "InvalidArgument"},
		{"a grant header", c, s3.PutBucketAclInput{GrantRead: aws.String(`id="bob"`)}, "AccessControlListNotSupported"},
		{"a grant header granting only what the owner holds", c, s3.PutBucketAclInput{GrantFullControl: aws.String(`id="alice"`)}, "AccessControlListNotSupported"},
		{"a read-only key", e.sdk(readID, readSecret), s3.PutBucketAclInput{ACL: types.BucketCannedACLPrivate}, "AccessDenied"},
		{"another account's key", e.sdk(bobID, bobSecret), s3.PutBucketAclInput{ACL: types.BucketCannedACLPrivate}, "AccessDenied"},
		{"a body granting bob", c, s3.PutBucketAclInput{AccessControlPolicy: &types.AccessControlPolicy{Owner: owner, Grants: []types.Grant{ownerFull,
			grant(types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String("bob")}, types.PermissionRead)}}}, "AccessControlListNotSupported"},
		{"a body without the owner's grant", c, s3.PutBucketAclInput{AccessControlPolicy: &types.AccessControlPolicy{Owner: owner,
			Grants: []types.Grant{everyoneRead}}}, "AccessControlListNotSupported"},
		{"a body of another owner", c, s3.PutBucketAclInput{AccessControlPolicy: &types.AccessControlPolicy{Owner: &types.Owner{ID: aws.String("bob")},
			Grants: []types.Grant{ownerFull}}}, "AccessDenied"},
		{"a header and a body", c, s3.PutBucketAclInput{ACL: types.BucketCannedACLPrivate, AccessControlPolicy: &types.AccessControlPolicy{Owner: owner,
			Grants: []types.Grant{ownerFull}}}, "UnexpectedContent"},
		{"nothing", c, s3.PutBucketAclInput{}, "MissingSecurityHeader"},
		{"a body of the owner's grant", c, s3.PutBucketAclInput{AccessControlPolicy: &types.AccessControlPolicy{Owner: owner, Grants: []types.Grant{ownerFull}}}, privateACL},
		{"a body of both grants", c, s3.PutBucketAclInput{AccessControlPolicy: &types.AccessControlPolicy{Owner: owner, Grants: []types.Grant{ownerFull, everyoneRead}}}, publicACL},
		{"private", c, s3.PutBucketAclInput{ACL: types.BucketCannedACLPrivate}, privateACL},
	} {
		before := bucketACL(t, c, "acl")
		in := tc.in
		in.Bucket = aws.String("acl")
		_, err := tc.client.PutBucketAcl(ctx, &in)
		got := bucketACL(t, c, "acl")
		if strings.Contains(tc.want, ":") {
			if err != nil || got != tc.want {
				t.Errorf("%s: PutBucketAcl: %v, ACL %s, want %s", tc.name, err, got, tc.want)
			}
			continue
		}
		if apiCode(err) != tc.want || got != before {
			t.Errorf("%s: PutBucketAcl: got %v, ACL %s, want %s and the ACL kept (%s)", tc.name, err, got, tc.want, before)
		}
	}
	status, _ := do(t, e.signed(t, "PUT", "/acl?acl", strings.NewReader("<AccessControlPolicy><Owner>"), "", nil))
	if status != 400 {
		t.Errorf("PutBucketAcl with a malformed body: got %d, want 400", status)
	}
	if status, code := e.anonymous(t, "GET", "/acl?acl", nil); status != 403 {
		t.Errorf("anonymous GetBucketAcl: got %d %s, want 403", status, code)
	}
}

// TestObjectACL: an object's ACL is its bucket's. A write may ask for it
// (or bucket-owner-full-control), never for another; GetObjectAcl
// answers it.
func TestObjectACL(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "priv")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("pub"), ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, c, "priv", "src", []byte("src"))
	put := func(bucket, key string, acl types.ObjectCannedACL) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("x"), ACL: acl})
		return err
	}
	for _, tc := range []struct {
		name, bucket string
		call         func(bucket, key string) error
		acl          types.ObjectCannedACL
		want         string
	}{
		{"PutObject private, private bucket", "priv", nil, types.ObjectCannedACLPrivate, ""},
		{"PutObject bucket-owner-full-control", "priv", nil, types.ObjectCannedACLBucketOwnerFullControl, ""},
		{"PutObject public-read, private bucket", "priv", nil, types.ObjectCannedACLPublicRead, "AccessControlListNotSupported"},
		{"PutObject public-read, public bucket", "pub", nil, types.ObjectCannedACLPublicRead, ""},
		{"PutObject private, public bucket", "pub", nil, types.ObjectCannedACLPrivate, "AccessControlListNotSupported"},
		{"PutObject authenticated-read", "priv", nil, types.ObjectCannedACLAuthenticatedRead, "AccessControlListNotSupported"},
		{"PutObject an unknown ACL", "priv", nil, "everyone", "InvalidArgument"},
		{"PutObject a grant", "priv", func(bucket, key string) error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("x"), GrantRead: aws.String(`id="bob"`)})
			return err
		}, "", "AccessControlListNotSupported"},
		{"CreateMultipartUpload public-read, private bucket", "priv", func(bucket, key string) error {
			_, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), ACL: types.ObjectCannedACLPublicRead})
			return err
		}, "", "AccessControlListNotSupported"},
		{"CopyObject public-read, private bucket", "priv", func(bucket, key string) error {
			_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), CopySource: aws.String("priv/src"), ACL: types.ObjectCannedACLPublicRead})
			return err
		}, "", "AccessControlListNotSupported"},
		{"CopyObject public-read, public bucket", "pub", func(bucket, key string) error {
			_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), CopySource: aws.String("priv/src"), ACL: types.ObjectCannedACLPublicRead})
			return err
		}, "", ""},
	} {
		key := strings.ReplaceAll(tc.name, " ", "-")
		call := tc.call
		if call == nil {
			call = func(bucket, key string) error { return put(bucket, key, tc.acl) }
		}
		if err := call(tc.bucket, key); apiCode(err) != tc.want {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
		_, err := e.st.Object("alice", tc.bucket, key)
		if stored := err == nil; stored != (tc.want == "") {
			t.Errorf("%s: stored %v, want %v", tc.name, stored, tc.want == "")
		}
	}
	if uploads, _ := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("priv")}); len(uploads.Uploads) != 0 {
		t.Errorf("a refused CreateMultipartUpload started %d uploads", len(uploads.Uploads))
	}

	for bucket, want := range map[string]string{"priv": privateACL, "pub": publicACL} {
		out, err := c.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String(bucket), Key: aws.String("PutObject-bucket-owner-full-control")})
		if bucket == "pub" {
			out, err = c.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String(bucket), Key: aws.String("PutObject-public-read,-public-bucket")})
		}
		if err != nil || aclOf(t, out.Grants) != want {
			t.Errorf("GetObjectAcl in %s: got %v, %v, want %s", bucket, out, err, want)
		}
	}
	for _, tc := range []struct {
		name, bucket, key string
		acl               types.ObjectCannedACL
		want              string
	}{
		{"private in a private bucket", "priv", "src", types.ObjectCannedACLPrivate, ""},
		{"bucket-owner-full-control", "priv", "src", types.ObjectCannedACLBucketOwnerFullControl, ""},
		{"public-read in a private bucket", "priv", "src", types.ObjectCannedACLPublicRead, "AccessControlListNotSupported"},
		{"public-read in a public bucket", "pub", "PutObject-public-read,-public-bucket", types.ObjectCannedACLPublicRead, ""},
		{"a missing object", "priv", "none", types.ObjectCannedACLPrivate, "NoSuchKey"},
		{"a missing bucket", "none-such", "k", types.ObjectCannedACLPrivate, "NoSuchBucket"},
	} {
		_, err := c.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: aws.String(tc.bucket), Key: aws.String(tc.key), ACL: tc.acl})
		if apiCode(err) != tc.want {
			t.Errorf("PutObjectAcl %s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	if got := bucketACL(t, c, "priv"); got != privateACL {
		t.Errorf("object ACL requests changed the bucket's ACL to %s", got)
	}
}

// TestOwnershipControls: buckets are made BucketOwnerEnforced; the three
// settings are taken, a deletion leaves none (404), and BucketOwnerEnforced
// is refused while the bucket's ACL grants another account, as in S3.
func TestOwnershipControls(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "own")
	put := func(o types.ObjectOwnership) error {
		_, err := c.PutBucketOwnershipControls(ctx, &s3.PutBucketOwnershipControlsInput{Bucket: aws.String("own"),
			OwnershipControls: &types.OwnershipControls{Rules: []types.OwnershipControlsRule{{ObjectOwnership: o}}}})
		return err
	}
	for _, tc := range []struct {
		name  string
		call  func() error
		want  string
		after string // GetBucketOwnershipControls after it: the setting, or the error code
	}{
		{"Put BucketOwnerEnforced", func() error { return put(types.ObjectOwnershipBucketOwnerEnforced) }, "", "BucketOwnerEnforced"},
		{"Put BucketOwnerPreferred", func() error { return put(types.ObjectOwnershipBucketOwnerPreferred) }, "", "BucketOwnerPreferred"},
		{"Put an unknown value", func() error { return put("Nobody") }, "MalformedXML", "BucketOwnerPreferred"},
		{"Put ObjectWriter", func() error { return put(types.ObjectOwnershipObjectWriter) }, "", "ObjectWriter"},
		{"Delete", func() error {
			_, err := c.DeleteBucketOwnershipControls(ctx, &s3.DeleteBucketOwnershipControlsInput{Bucket: aws.String("own")})
			return err
		}, "", "OwnershipControlsNotFoundError"},
		{"a bucket ACL granting another account", func() error {
			_, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("own"), GrantRead: aws.String(`id="bob"`)})
			return err
		}, "", "OwnershipControlsNotFoundError"},
		{"Put BucketOwnerEnforced over it", func() error { return put(types.ObjectOwnershipBucketOwnerEnforced) }, "InvalidBucketAclWithObjectOwnership",
			"OwnershipControlsNotFoundError"},
		{"the bucket ACL made private", func() error {
			_, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("own"), ACL: types.BucketCannedACLPrivate})
			return err
		}, "", "OwnershipControlsNotFoundError"},
		{"Put BucketOwnerEnforced again", func() error { return put(types.ObjectOwnershipBucketOwnerEnforced) }, "", "BucketOwnerEnforced"},
		{"a bucket ACL granting another account, refused", func() error {
			_, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("own"), GrantRead: aws.String(`id="bob"`)})
			return err
		}, "AccessControlListNotSupported", "BucketOwnerEnforced"},
		{"Get of a missing bucket", func() error {
			_, err := c.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: aws.String("none-such")})
			return err
		}, "NoSuchBucket", "BucketOwnerEnforced"},
	} {
		if err := tc.call(); apiCode(err) != tc.want {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
		own, err := c.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: aws.String("own")})
		got := apiCode(err)
		if err == nil && len(own.OwnershipControls.Rules) == 1 {
			got = string(own.OwnershipControls.Rules[0].ObjectOwnership)
		}
		if got != tc.after {
			t.Errorf("after %s: GetBucketOwnershipControls = %s (%v); want %s", tc.name, got, err, tc.after)
		}
	}
	if status, _ := do(t, e.signed(t, "PUT", "/own?ownershipControls", strings.NewReader("<OwnershipControls>"), "", nil)); status != 400 {
		t.Errorf("PutBucketOwnershipControls with a malformed body: got %d, want 400", status)
	}
}

// TestVersionACLRefused: versions keep no ACL of their own here, so
// GetObjectAcl and PutObjectAcl of a version other than null are 501,
// never taken for a GET of that version's body or a PUT over it; the
// object's own ACL (no versionId, or null) still answers.
func TestVersionACLRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "vvv")
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("vvv"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("vvv"), Key: aws.String("k"), Body: strings.NewReader("SECRET-BODY")})
	if err != nil {
		t.Fatal(err)
	}
	path := "/vvv/k?acl&versionId=" + aws.ToString(out.VersionId)
	for _, method := range []string{"GET", "PUT"} {
		resp, err := http.DefaultClient.Do(e.signed(t, method, path, nil, "", map[string]string{"x-amz-acl": "private"}))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotImplemented || strings.Contains(string(body), "SECRET") || !strings.Contains(string(body), "the ACL of one version") {
			t.Errorf("%s %s: %d %s, want 501 naming the version's ACL", method, path, resp.StatusCode, body)
		}
	}
	if got, err := get(c, "vvv", "k"); err != nil || got != "SECRET-BODY" {
		t.Errorf("the object after the refusals: %q, %v", got, err)
	}
	if _, err := c.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String("vvv"), Key: aws.String("k")}); err != nil {
		t.Errorf("GetObjectAcl of the object: %v", err)
	}
}
