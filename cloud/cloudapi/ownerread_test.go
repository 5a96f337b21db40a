package cloudapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3acl"
)

// TestOwnerReadsOnlyWhatIsGranted: in a bucket whose ACLs are enabled
// (ObjectWriter), an object another account wrote without granting the
// bucket's owner READ is refused to the owner by the REST API as by the
// S3 endpoint: a download, a ZIP holding it and a copy of it are 403
// forbidden and write nothing; one that grants it (bucket-owner-read),
// and the owner's own, read as always; under BucketOwnerEnforced the
// owner owns them all.
func TestOwnerReadsOnlyWhatIsGranted(t *testing.T) {
	a := newObjAPI(t, cloudapi.Options{})
	a.put("mine", []byte("acme's"))
	now := time.Now()
	if _, err := a.st.UpdateBucket("acme", "pics", now, func(bk *cloudstore.Bucket) { bk.Ownership = cloudstore.OwnershipWriter }); err != nil {
		t.Fatal(err)
	}
	put := func(key, canned string) {
		t.Helper()
		acl, err := s3acl.Canned(canned, "bob", "acme")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.st.Put(context.Background(), "acme", "pics", key, strings.NewReader("bob's "+key), cloudstore.PutOptions{Now: now, Max: 1 << 20, Owner: "bob", ACL: acl}); err != nil {
			t.Fatal(err)
		}
	}
	put("private", "private")
	put("granted", "bucket-owner-read")

	r := a.download(a.acme, "pics", "private")
	wantError(t, "the owner's download of bob's private object", r, http.StatusForbidden, "forbidden")
	if !strings.Contains(string(r.body), "does not grant the bucket's owner READ") {
		t.Errorf("the refusal does not say why: %s", r.body)
	}
	a.wantBody("granted", []byte("bob's granted"))
	a.wantBody("mine", []byte("acme's"))
	// Through version_id too ("null": the object of an unversioned bucket).
	wantError(t, "the owner's download of bob's private object by version_id", a.do("GET", "/api/storage/buckets/pics/download/private?version_id=null", a.acme, ""), http.StatusForbidden, "forbidden")
	if r := a.do("GET", "/api/storage/buckets/pics/download/granted?version_id=null", a.acme, ""); r.status != http.StatusOK || string(r.body) != "bob's granted" {
		t.Errorf("the owner's download of a granted object by version_id: %d %s", r.status, r.body)
	}

	wantError(t, "a ZIP holding bob's private object", a.zip(a.acme, "pics", `{"keys":["mine","private"]}`), http.StatusForbidden, "forbidden")
	if r := a.zip(a.acme, "pics", `{"keys":["mine","granted"]}`); r.status != http.StatusOK {
		t.Errorf("a ZIP of the owner's and a granted object: %d %s", r.status, r.body)
	}

	wantError(t, "a copy of bob's private object", a.do("POST", "/api/storage/buckets/pics/copy", a.acme, `{"source_key":"private","dest_key":"stolen"}`), http.StatusForbidden, "forbidden")
	if r := a.download(a.acme, "pics", "stolen"); r.status != http.StatusNotFound {
		t.Errorf("the refused copy wrote its destination: %d", r.status)
	}
	if r := a.do("POST", "/api/storage/buckets/pics/copy", a.acme, `{"source_key":"granted","dest_key":"copied"}`); r.status != http.StatusCreated {
		t.Errorf("a copy of a granted object: %d %s", r.status, r.body)
	}
	a.wantBody("copied", []byte("bob's granted"))

	// BucketOwnerEnforced: the bucket's owner owns every object.
	if _, err := a.st.UpdateBucket("acme", "pics", now, func(bk *cloudstore.Bucket) { bk.Ownership, bk.ACL = "", nil }); err != nil {
		t.Fatal(err)
	}
	a.wantBody("private", []byte("bob's private"))
}
