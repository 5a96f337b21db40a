package cdnapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3acl"
)

// TestAnotherAccountsPublicBucket: a deployment whose origin is another
// account's public bucket serves what the bucket's public toggle serves
// an anonymous download, no more: the bucket owner's plain objects, and
// an object a third account wrote only when its own ACL is public-read;
// never an object the key service (SSE-KMS) encrypted, nor another
// account's private object, which read as missing.
func TestAnotherAccountsPublicBucket(t *testing.T) {
	a := newAPI(t, options{private: true})
	ctx := context.Background()
	if _, err := a.objects.OpenKMS(bytes.Repeat([]byte{1}, 32), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.objects.KMS().Resolve(ctx, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.objects.CreateBucket("bob", "bob-shared", "", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := a.objects.UpdateBucket("bob", "bob-shared", t0, func(b *cloudstore.Bucket) {
		b.Public, b.Ownership = true, cloudstore.OwnershipWriter
	}); err != nil {
		t.Fatal(err)
	}
	publicRead, err := s3acl.Canned("public-read", "carol", "bob")
	if err != nil {
		t.Fatal(err)
	}
	private, err := s3acl.Canned("private", "carol", "bob")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct {
		key  string
		opts cloudstore.PutOptions
	}{
		{"plain", cloudstore.PutOptions{}},
		{"sealed", cloudstore.PutOptions{Encrypt: &cloudstore.SSE{Mode: cloudstore.SSEKMS}}},
		{"carol-private", cloudstore.PutOptions{Owner: "carol", ACL: private}},
		{"carol-public", cloudstore.PutOptions{Owner: "carol", ACL: publicRead}},
	} {
		o.opts.Max, o.opts.Now = 1<<20, t0
		if _, err := a.objects.Put(ctx, "bob", "bob-shared", o.key, strings.NewReader("secret "+o.key), o.opts); err != nil {
			t.Fatalf("put %s: %v", o.key, err)
		}
	}
	d := a.create(a.alice, "mirror", "s3://bob-shared")
	for _, c := range []struct {
		key    string
		status int
	}{
		{"plain", http.StatusOK},
		{"carol-public", http.StatusOK},
		{"sealed", http.StatusNotFound},
		{"carol-private", http.StatusNotFound},
	} {
		status, _, body := a.get(d.CNAME, "/"+c.key)
		if status != c.status {
			t.Errorf("GET /%s through alice's deployment: %d %q, want %d", c.key, status, body, c.status)
		}
		if c.status != http.StatusOK && strings.Contains(body, "secret") {
			t.Errorf("the refusal of /%s carries the body: %q", c.key, body)
		}
	}
	// Bob's own deployment serves his bucket as its owner: his sealed
	// object too.
	own := a.create(a.bob, "own", "s3://bob-shared")
	if status, _, body := a.get(own.CNAME, "/sealed"); status != http.StatusOK || body != "secret sealed" {
		t.Errorf("bob's own deployment: %d %q", status, body)
	}
}
