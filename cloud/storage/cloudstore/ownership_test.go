package cloudstore

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/storage/s3acl"
)

func grant(id string, p s3acl.Permission) s3acl.Grant {
	return s3acl.Grant{Grantee: s3acl.Grantee{Type: s3acl.TypeUser, ID: id}, Permission: p}
}

var everyone = s3acl.Grant{Grantee: s3acl.Grantee{Type: s3acl.TypeGroup, URI: s3acl.AllUsers}, Permission: s3acl.Write}

// TestBucketOwnershipAndACL: a bucket's Object Ownership and ACL are kept
// across a restart; an ACL granting others is refused under
// BucketOwnerEnforced, when the bucket is made or changed, and a public
// one under BlockPublicAcls, each changing nothing.
func TestBucketOwnershipAndACL(t *testing.T) {
	b := newBlobStore(t)
	if _, err := b.CreateBucketWith("acme", "enforced", "", t0, BucketOptions{ACL: []s3acl.Grant{grant("bob", s3acl.Read)}}); !errors.Is(err, ErrACLGrantsOthers) {
		t.Fatalf("a BucketOwnerEnforced bucket granting bob: %v, want ErrACLGrantsOthers", err)
	}
	if _, err := b.Bucket("acme", "enforced"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused bucket was made: %v", err)
	}
	acl := []s3acl.Grant{grant("bob", s3acl.Read)}
	if _, err := b.CreateBucketWith("acme", "shared", "", t0, BucketOptions{Ownership: OwnershipWriter, ACL: acl}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.UpdateBucket("acme", "shared", t0, func(bk *Bucket) { bk.Ownership = "" }); !errors.Is(err, ErrACLGrantsOthers) {
		t.Errorf("BucketOwnerEnforced over bob's grant: %v, want ErrACLGrantsOthers", err)
	}
	if err := b.SetPublicAccessBlock("acme", "shared", &PublicAccessBlock{BlockPublicAcls: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.UpdateBucket("acme", "shared", t0, func(bk *Bucket) { bk.ACL = append(bk.ACL, everyone) }); !errors.Is(err, ErrPublicAccessBlocked) {
		t.Errorf("AllUsers WRITE under BlockPublicAcls: %v, want ErrPublicAccessBlocked", err)
	}
	b.reopen()
	bk, err := b.Bucket("acme", "shared")
	if err != nil || bk.Ownership != OwnershipWriter || !reflect.DeepEqual(bk.ACL, acl) || !bk.ACLsEnabled() {
		t.Fatalf("after a restart: %+v, %v; want ObjectWriter granting bob READ", bk, err)
	}
	if _, err := b.UpdateBucket("acme", "shared", t0, func(bk *Bucket) { bk.ACL, bk.Ownership = nil, "" }); err != nil {
		t.Fatal(err)
	}
	if bk, _ := b.Bucket("acme", "shared"); bk.ACLsEnabled() || bk.ACL != nil {
		t.Errorf("after BucketOwnerEnforced with the grant dropped: %+v", bk)
	}
}

// TestObjectOwnerAndACL: an object's owner and ACL come from its write
// (whole, multipart or copy), are kept, and an ACL set to no grants stays
// no grants rather than falling back to the default.
func TestObjectOwnerAndACL(t *testing.T) {
	b := newBlobStore(t)
	ctx := context.Background()
	mine := []s3acl.Grant{grant("bob", s3acl.FullControl), grant("acme", s3acl.Read)}
	if _, err := b.Put(ctx, "acme", "pics", "whole", strings.NewReader("x"), PutOptions{Now: t0, Max: 1 << 20, Owner: "bob", ACL: mine}); err != nil {
		t.Fatal(err)
	}
	u, err := b.CreateUpload(t.Context(), "acme", "pics", "parts", PutOptions{Now: t0, Owner: "bob", ACL: mine})
	if err != nil {
		t.Fatal(err)
	}
	if u.Writer() != "bob" {
		t.Errorf("the upload's writer: %q", u.Writer())
	}
	p, err := b.PutPart(ctx, "acme", "pics", "parts", u.ID, 1, strings.NewReader("part"), PartOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.CompleteUpload(ctx, "acme", "pics", "parts", u.ID, []CompletedPart{{Number: 1, ETag: p.ETag}}, t0, Preconditions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Copy(ctx, "acme", "pics", "whole", "pics", "copy", t0, CopyOptions{Owner: "carol"}); err != nil {
		t.Fatal(err)
	}
	b.reopen()
	for key, want := range map[string]Object{"whole": {Owner: "bob", ACL: mine}, "parts": {Owner: "bob", ACL: mine}, "copy": {Owner: "carol"}} {
		obj, err := b.Object("acme", "pics", key)
		if err != nil || obj.Owner != want.Owner || !slices.Equal(obj.ACL, want.ACL) {
			t.Errorf("%s: owner %q, ACL %v, %v; want %q, %v", key, obj.Owner, obj.ACL, err, want.Owner, want.ACL)
		}
	}
	l, err := b.ListObjects("acme", "pics", "", "", "", 10)
	if err != nil || len(l.Objects) != 3 || l.Objects[2].Owner != "bob" {
		t.Errorf("the listing's owners: %+v, %v", l.Objects, err)
	}
	none := func(Object) ([]s3acl.Grant, error) { return nil, nil }
	if _, err := b.SetVersionACL("acme", "pics", "whole", "", none); err != nil {
		t.Fatal(err)
	}
	b.reopen()
	if obj, _ := b.Object("acme", "pics", "whole"); obj.ACL == nil || len(obj.ACL) != 0 || obj.Owner != "bob" {
		t.Errorf("an ACL of no grants: %#v, owner %q; want kept empty, bob's", obj.ACL, obj.Owner)
	}
	if _, err := b.SetVersionACL("acme", "pics", "nope", "", none); !errors.Is(err, ErrNotFound) {
		t.Errorf("the ACL of a missing object: %v", err)
	}
	// What build refuses is not written; it sees the version it changes.
	refuse := errors.New("refused")
	if _, err := b.SetVersionACL("acme", "pics", "parts", "", func(o Object) ([]s3acl.Grant, error) {
		if o.Owner != "bob" {
			t.Errorf("build saw owner %q", o.Owner)
		}
		return mine[:1], refuse
	}); !errors.Is(err, refuse) {
		t.Errorf("a refused ACL: %v", err)
	}
	if obj, _ := b.Object("acme", "pics", "parts"); !slices.Equal(obj.ACL, mine) {
		t.Errorf("a refused ACL changed the object's: %v", obj.ACL)
	}
	if _, err := b.Copy(ctx, "acme", "pics", "whole", "pics", "copy2", t0, CopyOptions{CheckSource: func(Object) error { return refuse }}); !errors.Is(err, refuse) {
		t.Errorf("a copy whose source is refused: %v", err)
	}
	if _, err := b.Object("acme", "pics", "copy2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a refused copy was made: %v", err)
	}
}
