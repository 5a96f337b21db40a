package cloudapi_test

import (
	"net/http"
	"testing"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// TestPublicAccessBlockREST: a bucket's Block Public Access settings
// (set over S3) hold in the REST API too: BlockPublicAcls refuses the
// public toggle with 409 conflict and leaves the bucket private, and
// IgnorePublicAcls keeps a public bucket's objects from anonymous
// downloads until the settings are removed.
func TestPublicAccessBlockREST(t *testing.T) {
	a := newObjAPI(t, cloudapi.Options{})
	a.put("a", []byte("A"))
	if err := a.st.SetPublicAccessBlock("acme", "pics", &cloudstore.PublicAccessBlock{BlockPublicAcls: true}); err != nil {
		t.Fatal(err)
	}
	r := a.do("PATCH", "/api/storage/buckets/pics/public", a.acme, `{"is_public":true}`)
	wantError(t, "the public toggle under BlockPublicAcls", r, http.StatusConflict, "conflict")
	if r := a.download("", "pics", "a"); r.status != http.StatusUnauthorized {
		t.Errorf("anonymous download after a refused toggle: %d, want 401", r.status)
	}
	// Making it private is never blocked.
	wantBucket(t, "make private", a.do("PATCH", "/api/storage/buckets/pics/public", a.acme, `{"is_public":false}`), http.StatusOK)

	if err := a.st.SetPublicAccessBlock("acme", "pics", &cloudstore.PublicAccessBlock{IgnorePublicAcls: true}); err != nil {
		t.Fatal(err)
	}
	wantBucket(t, "make public", a.do("PATCH", "/api/storage/buckets/pics/public", a.acme, `{"is_public":true}`), http.StatusOK)
	if r := a.download("", "pics", "a"); r.status != http.StatusUnauthorized {
		t.Errorf("anonymous download under IgnorePublicAcls: %d, want 401", r.status)
	}
	// Public already, the toggle to true is refused under BlockPublicAcls
	// all the same (and the bucket stays as it was).
	if err := a.st.SetPublicAccessBlock("acme", "pics", &cloudstore.PublicAccessBlock{BlockPublicAcls: true}); err != nil {
		t.Fatal(err)
	}
	r = a.do("PATCH", "/api/storage/buckets/pics/public", a.acme, `{"is_public":true}`)
	wantError(t, "the public toggle of a public bucket under BlockPublicAcls", r, http.StatusConflict, "conflict")
	if bk, _ := a.st.Bucket("acme", "pics"); !bk.Public {
		t.Error("a refused toggle made a public bucket private")
	}
	if err := a.st.SetPublicAccessBlock("acme", "pics", nil); err != nil {
		t.Fatal(err)
	}
	if r := a.download("", "pics", "a"); r.status != http.StatusOK {
		t.Errorf("anonymous download once the settings are removed: %d, want 200", r.status)
	}
}
