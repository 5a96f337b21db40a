package cdnapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/internal/testkit/apitest"
)

// TestAnotherAccountsPublicBucket: a deployment whose origin is another
// account's public bucket serves what the bucket's public toggle serves
// an anonymous download, no more: the bucket owner's plain objects, and
// an object a third account wrote only when its own ACL is public-read;
// never an object the key service (SSE-KMS) encrypted, nor another
// account's private object, which read as missing (through the owner's
// own deployment too).
func TestAnotherAccountsPublicBucket(t *testing.T) {
	a := newAPI(t, options{private: true, fastPath: true})
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
	// object too, and carol's public one; not carol's private object,
	// whose ACL grants bob no READ (he reads it nowhere else either).
	own := a.create(a.bob, "own", "s3://bob-shared")
	for key, want := range map[string]int{"sealed": http.StatusOK, "carol-public": http.StatusOK, "carol-private": http.StatusNotFound} {
		status, _, body := a.get(own.CNAME, "/"+key)
		if status != want || want == http.StatusOK && body != "secret "+key || want != http.StatusOK && strings.Contains(body, "secret") {
			t.Errorf("GET /%s through bob's own deployment: %d %q, want %d", key, status, body, want)
		}
	}

	// Made private, the bucket is no longer served by alice's
	// deployment, though its cache holds /plain (a hit, on the edge's
	// fast path), and bob cannot purge her deployment; bob's own still
	// serves it.
	if status, xc, _ := a.get(d.CNAME, "/plain"); status != http.StatusOK || xc != "HIT" {
		t.Fatalf("/plain before: %d %s, want a hit", status, xc)
	}
	if _, err := a.objects.UpdateBucket("bob", "bob-shared", t0, func(b *cloudstore.Bucket) { b.Public = false }); err != nil {
		t.Fatal(err)
	}
	// On a new connection, which the edge's fast path takes first, and
	// on the one net/http holds.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("GET", a.edge+"/plain", nil)
	req.Host = d.CNAME
	resp, err := fresh.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || strings.Contains(string(body), "secret") {
		t.Errorf("/plain through alice's deployment of a bucket made private, on a new connection: %d %q", resp.StatusCode, body)
	}
	if status, _, body := a.get(d.CNAME, "/plain"); status != http.StatusNotFound || strings.Contains(body, "secret") {
		t.Errorf("/plain through alice's deployment of a bucket made private: %d %q", status, body)
	}
	if status, _, body := a.get(own.CNAME, "/plain"); status != http.StatusOK || body != "secret plain" {
		t.Errorf("bob's own deployment of his private bucket: %d %q", status, body)
	}
}

// TestDisabledKeyAtOrigin: while the SSE-KMS key of an object is disabled,
// its owner's deployment answers 403, saying so (not 500, nor the body),
// and the refusal is not cached: once the key is enabled again the object
// is served.
func TestDisabledKeyAtOrigin(t *testing.T) {
	a := newAPI(t, options{private: true, fastPath: true})
	keys, err := a.objects.OpenKMS(bytes.Repeat([]byte{1}, 32), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := a.objects.CreateBucket("bob", "bob-vault", "", t0); err != nil {
		t.Fatal(err)
	}
	k, err := keys.Create(ctx, "bob", "cdn", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.objects.Put(ctx, "bob", "bob-vault", "locked", strings.NewReader("secret locked"),
		cloudstore.PutOptions{Now: t0, Max: 100, Encrypt: &cloudstore.SSE{Mode: cloudstore.SSEKMS, KMSKey: k.ID}}); err != nil {
		t.Fatal(err)
	}
	d := a.create(a.bob, "vault", "s3://bob-vault")
	if _, err := keys.SetEnabled(ctx, "bob", k.ID, false); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the refusal is not stored: asked again, the origin answers again
		if status, _, body := a.get(d.CNAME, "/locked"); status != http.StatusForbidden || !strings.Contains(body, "key is disabled") || strings.Contains(body, "secret") {
			t.Fatalf("GET /locked under a disabled key: %d %q, want 403", status, body)
		}
	}
	if _, err := keys.SetEnabled(ctx, "bob", k.ID, true); err != nil {
		t.Fatal(err)
	}
	if status, _, body := a.get(d.CNAME, "/locked"); status != http.StatusOK || body != "secret locked" {
		t.Fatalf("GET /locked once the key is enabled: %d %q", status, body)
	}
}
