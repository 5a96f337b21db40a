package cloudapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/kms"
	"github.com/latticenet/lattice/internal/testkit/apitest"
)

// TestEncryptedObjects: the REST API reads SSE-S3 objects as any other,
// keeps a copy of one encrypted, and answers SSE-C objects, which only
// the S3 endpoint reads with the client's key, with a clear 400 that
// changes nothing.
func TestEncryptedObjects(t *testing.T) {
	a := newObjAPI(t)
	ctx := context.Background()
	body := bytes.Repeat([]byte("encrypted at rest "), 10000)
	key := bytes.Repeat([]byte{3}, 32)
	for name, enc := range map[string]*cloudstore.SSE{"s3": {Mode: cloudstore.SSES3}, "c": {Mode: cloudstore.SSEC, CustomerKey: key}} {
		if _, err := a.st.Put(ctx, "acme", "pics", name, bytes.NewReader(body), cloudstore.PutOptions{Max: 1 << 20, Now: t0, Encrypt: enc}); err != nil {
			t.Fatal(err)
		}
	}
	a.wantBody("s3", body)
	if r := a.download(a.acme, "pics", "s3", "Range", "bytes=70000-70009"); r.status != http.StatusPartialContent || !bytes.Equal(r.body, body[70000:70010]) {
		t.Errorf("a range of an SSE-S3 object: %d %q", r.status, r.body)
	}
	if r := a.do("POST", "/api/storage/buckets/pics/copy", a.acme, `{"source_key":"s3","dest_key":"s3-copy"}`); r.status != http.StatusCreated {
		t.Fatalf("copy of an SSE-S3 object: %d %s", r.status, r.body)
	}
	if obj, err := a.st.Object("acme", "pics", "s3-copy"); err != nil || obj.Encryption == nil || obj.Encryption.Mode != cloudstore.SSES3 {
		t.Fatalf("the REST copy of an SSE-S3 object is not encrypted: %+v %v", obj.Encryption, err)
	}
	a.wantBody("s3-copy", body)
	for _, r := range []response{
		a.download(a.acme, "pics", "c"),
		a.do("POST", "/api/storage/buckets/pics/copy", a.acme, `{"source_key":"c","dest_key":"c-copy"}`),
		a.do("POST", "/api/storage/buckets/pics/download-zip", a.acme, `{"keys":["s3","c"]}`),
	} {
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "customer_key_required") {
			t.Errorf("an SSE-C object over REST: %d %s", r.status, r.body)
		}
	}
	if _, err := a.st.Object("acme", "pics", "c-copy"); err == nil {
		t.Error("a refused copy was stored")
	}
}

// TestKMSObjectsOverREST: the REST API reads an SSE-KMS object as its
// owner, copies it still under its key, and answers a download or copy
// under a disabled key with 400 kms_key_disabled, changing nothing.
func TestKMSObjectsOverREST(t *testing.T) {
	a := newObjAPI(t)
	ctx := context.Background()
	body := bytes.Repeat([]byte("sealed by the key service "), 5000)
	if _, err := a.st.KMS().Resolve(ctx, "acme", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.st.Put(ctx, "acme", "pics", "k", bytes.NewReader(body), cloudstore.PutOptions{Max: 1 << 20, Now: t0,
		Encrypt: &cloudstore.SSE{Mode: cloudstore.SSEKMS}}); err != nil {
		t.Fatal(err)
	}
	a.wantBody("k", body)
	if r := a.do("POST", "/api/storage/buckets/pics/copy", a.acme, `{"source_key":"k","dest_key":"k-copy"}`); r.status != http.StatusCreated {
		t.Fatalf("copy of an SSE-KMS object: %d %s", r.status, r.body)
	}
	if obj, err := a.st.Object("acme", "pics", "k-copy"); err != nil || obj.Encryption == nil || obj.Encryption.Mode != cloudstore.SSEKMS {
		t.Fatalf("the REST copy of an SSE-KMS object: %+v %v", obj.Encryption, err)
	}
	a.wantBody("k-copy", body)
	local := a.st.KMS().(*kms.Local)
	other, err := local.Create(ctx, "acme", "other", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.st.Put(ctx, "acme", "pics", "o", bytes.NewReader(body), cloudstore.PutOptions{Max: 1 << 20, Now: t0,
		Encrypt: &cloudstore.SSE{Mode: cloudstore.SSEKMS, KMSKey: other.ID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := local.SetEnabled(ctx, "acme", other.ID, false); err != nil {
		t.Fatal(err)
	}
	for _, r := range []response{
		a.download(a.acme, "pics", "o"),
		a.do("POST", "/api/storage/buckets/pics/copy", a.acme, `{"source_key":"o","dest_key":"o-copy"}`),
	} {
		wantError(t, "an object under a disabled key over REST", r, http.StatusBadRequest, "kms_key_disabled")
	}
	if _, err := a.st.Object("acme", "pics", "o-copy"); err == nil {
		t.Error("a refused copy was stored")
	}
	a.wantBody("k", body) // under the default key, still enabled
}

// TestKMSNotAnonymousOverREST: a public bucket's objects download for
// anyone, but not one under a key of the key service, as at the S3
// endpoint: 401 for the anonymous download, while the plain object beside
// it and the owner's own download are served.
func TestKMSNotAnonymousOverREST(t *testing.T) {
	a := newObjAPI(t)
	ctx := context.Background()
	if _, err := a.st.KMS().Resolve(ctx, "acme", ""); err != nil {
		t.Fatal(err)
	}
	secret := []byte("kms-sealed secret payload")
	if _, err := a.st.Put(ctx, "acme", "pics", "sealed", bytes.NewReader(secret), cloudstore.PutOptions{Max: 1 << 20, Now: t0,
		Encrypt: &cloudstore.SSE{Mode: cloudstore.SSEKMS}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.st.Put(ctx, "acme", "pics", "plain", bytes.NewReader([]byte("plain")), cloudstore.PutOptions{Max: 1 << 20, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if r := a.do("PATCH", "/api/storage/buckets/pics/public", a.acme, `{"is_public":true}`); r.status != http.StatusOK {
		t.Fatalf("make pics public: %d %s", r.status, r.body)
	}
	r := a.download("", "pics", "sealed")
	wantError(t, "an anonymous download of an SSE-KMS object", r, http.StatusUnauthorized, "unauthorized")
	if bytes.Contains(r.body, secret) {
		t.Errorf("the refusal carries the plaintext: %s", r.body)
	}
	if r := a.download("", "pics", "plain"); r.status != http.StatusOK || string(r.body) != "plain" {
		t.Errorf("an anonymous download of a plain object of the public bucket: %d %s", r.status, r.body)
	}
	a.wantBody("sealed", secret)
}

// TestPublicToggleServesOnlyWhatIsPublic: a public bucket's toggle is its
// owner's grant, so a download through it, anonymous or by another
// account's key, gets the owner's plain objects and an object a third
// account wrote with a public-read ACL, but not that account's private
// object nor one under a key of the key service; the owner reads its own
// and what carol's ACL grants it, not her private object.
func TestPublicToggleServesOnlyWhatIsPublic(t *testing.T) {
	a := newObjAPI(t)
	alice, _ := a.newKey("alice")
	apitest.ShareBucket(t, a.st, "acme", "pics", t0)
	for _, c := range []struct {
		caller, key string
		status      int
		code        string
	}{
		{"", "plain", http.StatusOK, ""},
		{"", "carol-public", http.StatusOK, ""},
		{"", "sealed", http.StatusUnauthorized, "unauthorized"},
		{"", "carol-private", http.StatusUnauthorized, "unauthorized"},
		{alice, "plain", http.StatusOK, ""},
		{alice, "carol-public", http.StatusOK, ""},
		{alice, "sealed", http.StatusForbidden, "forbidden"},
		{alice, "carol-private", http.StatusNotFound, "not_found"},
		{a.acme, "sealed", http.StatusOK, ""},
		{a.acme, "carol-public", http.StatusOK, ""},
		{a.acme, "carol-private", http.StatusForbidden, "forbidden"},
	} {
		who := map[string]string{"": "anonymous", alice: "alice", a.acme: "acme"}[c.caller]
		r := a.download(c.caller, "pics", c.key)
		if c.status == http.StatusOK {
			if r.status != http.StatusOK || string(r.body) != "secret "+c.key {
				t.Errorf("%s downloads %s: %d %s", who, c.key, r.status, r.body)
			}
			continue
		}
		wantError(t, who+" downloads "+c.key, r, c.status, c.code)
		if bytes.Contains(r.body, []byte("secret")) {
			t.Errorf("the refusal of %s to %s carries the body: %s", c.key, who, r.body)
		}
	}
}
