package cloudapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// TestUncleanPathsAreRefused: a path with an empty, "." or ".." segment
// answers 404 instead of ServeMux's redirect to the cleaned path, which
// names another object (x/../a is a, c//d is c/d), and nothing changes.
func TestUncleanPathsAreRefused(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	if _, err := a.st.CreateBucket("acme", "bkt", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "x/../a", "c/d", "c//d"} {
		if _, err := a.st.Put(t.Context(), "acme", "bkt", k, strings.NewReader(k), cloudstore.PutOptions{ContentType: "text/plain", Max: 100, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ method, path string }{
		{"DELETE", "/api/storage/buckets/bkt/objects/x/../a"},
		{"DELETE", "/api/storage/buckets/bkt/objects/c//d"},
		{"GET", "/api/storage/buckets/bkt/download/x/./a"},
		{"GET", "/api/storage/buckets/bkt/../bkt/download/a"},
	} {
		r := a.do(tc.method, tc.path, acme, "")
		if r.status != http.StatusNotFound || !strings.Contains(string(r.body), `"code":"not_found"`) || r.header.Get("Location") != "" {
			t.Errorf("%s %s: %d %s (Location %q)", tc.method, tc.path, r.status, r.body, r.header.Get("Location"))
		}
	}
	l, err := a.st.ListObjects("acme", "bkt", "", "", "", 100)
	if err != nil || len(l.Objects) != 4 {
		t.Fatalf("objects after the refused requests: %+v, %v", l.Objects, err)
	}
	// A key with a trailing slash (a folder) is a clean path.
	if r := a.do("GET", "/api/storage/buckets/bkt/download/c/", acme, ""); r.status != http.StatusNotFound || !strings.Contains(string(r.body), "object not found") {
		t.Errorf("GET of a missing folder object: %d %s", r.status, r.body)
	}
}

// TestForeignRequestsNotCounted: another account's requests to a bucket,
// all refused, do not show in the bucket's metrics.
func TestForeignRequestsNotCounted(t *testing.T) {
	a := newAPI(t, cloudapi.Options{Now: time.Now})
	acme, _ := a.newKey("acme")
	evil, _ := a.newKey("evil")
	if r := a.do("POST", "/api/storage/buckets", acme, `{"name":"pics"}`); r.status != http.StatusCreated {
		t.Fatalf("create bucket: %d %s", r.status, r.body)
	}
	for range 5 {
		a.do("GET", "/api/storage/buckets/pics/objects", evil, "")
		a.do("POST", "/api/storage/buckets/pics/upload?key=x", evil, `{}`)
		a.do("GET", "/api/storage/buckets/pics/download/x", evil, "")
	}
	a.do("GET", "/api/storage/buckets/pics/objects", acme, "") // the owner's one listing
	r := a.do("GET", "/api/storage/buckets/pics/metrics/summary?hours=1", acme, "")
	if r.status != http.StatusOK {
		t.Fatalf("summary: %d %s", r.status, r.body)
	}
	if !strings.Contains(string(r.body), `"total":1`) || !strings.Contains(string(r.body), `"errors":0`) {
		t.Fatalf("summary counts other accounts' requests: %s", r.body)
	}
}
