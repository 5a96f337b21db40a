package cdnapi_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/latticenet/lattice/internal/testkit/apitest"
)

// TestAnotherAccountsPublicBucket: a deployment whose origin is another
// account's public bucket serves what the bucket's public toggle serves
// an anonymous download, no more: the bucket owner's plain objects, and
// an object a third account wrote only when its own ACL is public-read;
// never an object the key service (SSE-KMS) encrypted, nor another
// account's private object, which read as missing.
func TestAnotherAccountsPublicBucket(t *testing.T) {
	a := newAPI(t, options{private: true})
	if _, err := a.objects.OpenKMS(bytes.Repeat([]byte{1}, 32), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.objects.CreateBucket("bob", "bob-shared", "", t0); err != nil {
		t.Fatal(err)
	}
	apitest.ShareBucket(t, a.objects, "bob", "bob-shared", t0)
	d := a.create(a.alice, "mirror", "s3://bob-shared")
	for key, served := range apitest.SharedObjects {
		status, _, body := a.get(d.CNAME, "/"+key)
		switch {
		case served && (status != http.StatusOK || body != "secret "+key):
			t.Errorf("GET /%s through alice's deployment: %d %q, want it served", key, status, body)
		case !served && status != http.StatusNotFound:
			t.Errorf("GET /%s through alice's deployment: %d %q, want 404", key, status, body)
		case !served && strings.Contains(body, "secret"):
			t.Errorf("the refusal of /%s carries the body: %q", key, body)
		}
	}
	// Bob's own deployment serves his bucket as its owner: his sealed
	// object too.
	own := a.create(a.bob, "own", "s3://bob-shared")
	if status, _, body := a.get(own.CNAME, "/sealed"); status != http.StatusOK || body != "secret sealed" {
		t.Errorf("bob's own deployment: %d %q", status, body)
	}
}
