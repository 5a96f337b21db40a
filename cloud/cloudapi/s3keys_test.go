package cloudapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

func TestS3Keys(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	other, _ := a.newKey("other")

	r := a.do("POST", "/api/storage/keys", acme, `{"name":"laptop"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var k struct {
		ID, AccessKeyID, Name, Permissions, BucketScope, CreatedAt, Secret string
	}
	var raw map[string]any
	json.Unmarshal(r.body, &raw)
	k.ID, _ = raw["id"].(string)
	k.AccessKeyID, _ = raw["access_key_id"].(string)
	k.Permissions, _ = raw["permissions"].(string)
	k.BucketScope, _ = raw["bucketScope"].(string)
	k.Secret, _ = raw["secret_access_key"].(string)
	if !strings.HasPrefix(k.AccessKeyID, "LK") || len(k.AccessKeyID) != 20 || k.ID != k.AccessKeyID {
		t.Errorf("access key id %q (id %q), want LK and 18 more characters", k.AccessKeyID, k.ID)
	}
	if len(k.Secret) != 40 || k.Permissions != "readwrite" || k.BucketScope != "*" {
		t.Errorf("created key = %s; want a 40-character secret, readwrite, scope *", r.body)
	}
	// The secret round-trips through the store's encryption.
	if _, secret, err := a.st.S3Secret(k.AccessKeyID); err != nil || secret != k.Secret {
		t.Errorf("S3Secret = %q, %v; want the secret shown at creation", secret, err)
	}
	// Shown once: the list carries no secret.
	l := a.do("GET", "/api/storage/keys", acme, "")
	if l.status != http.StatusOK || strings.Contains(string(l.body), k.Secret) || !strings.Contains(string(l.body), `"total":1`) {
		t.Errorf("list: %d %s", l.status, l.body)
	}
	// Another account neither sees nor deletes it.
	if l := a.do("GET", "/api/storage/keys", other, ""); !strings.Contains(string(l.body), `"total":0`) {
		t.Errorf("other account's list: %s", l.body)
	}
	wantError(t, "delete another account's key", a.do("DELETE", "/api/storage/keys/"+k.ID, other, ""), http.StatusNotFound, "not_found")
	if d := a.do("DELETE", "/api/storage/keys/"+k.ID, acme, ""); d.status != http.StatusNoContent {
		t.Errorf("delete: %d %s", d.status, d.body)
	}
	wantError(t, "delete again", a.do("DELETE", "/api/storage/keys/"+k.ID, acme, ""), http.StatusNotFound, "not_found")

	for _, body := range []string{
		`{"permissions":"admin"}`, `{"bucketScope":"Bad_Name"}`, `{"bucketScope":"**"}`,
		`{"name":"` + strings.Repeat("n", 101) + `"}`, `{"secret":"x"}`,
		// Given empty is not left out: never a key to every bucket.
		`{"bucketScope":""}`, `{"permissions":""}`, `{"bucketScope":null}`, `{"permissions":null}`, `{"bucketScope":5}`,
		`{"bucketScope":"photos","BucketScope":"*"}`, `{"bucketScope":"photos","bucketScope":"*"}`,
	} {
		wantError(t, "create "+body, a.do("POST", "/api/storage/keys", acme, body), http.StatusBadRequest, "validation_error")
	}
	// The bound counts characters: 100 of them in two bytes each are
	// a name, 101 are not.
	if r := a.do("POST", "/api/storage/keys", acme, `{"name":"`+strings.Repeat("é", 100)+`"}`); r.status != http.StatusCreated {
		t.Errorf("a name of 100 two-byte characters: %d %s", r.status, r.body)
	}
	wantError(t, "create with 101 two-byte characters", a.do("POST", "/api/storage/keys", acme, `{"name":"`+strings.Repeat("é", 101)+`"}`),
		http.StatusBadRequest, "validation_error")
	r = a.do("POST", "/api/storage/keys", acme, `{"permissions":"read","bucketScope":"photos"}`)
	if r.status != http.StatusCreated || !strings.Contains(string(r.body), `"bucketScope":"photos"`) || !strings.Contains(string(r.body), `"permissions":"read"`) {
		t.Errorf("scoped read key: %d %s", r.status, r.body)
	}
}

// TestS3KeyQuota: past MaxS3KeysPerAccount keys a create is 403
// quota_exceeded, naming the limit, and stores nothing.
func TestS3KeyQuota(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	for i := range cloudstore.MaxS3KeysPerAccount {
		if _, _, err := a.st.CreateS3Key("acme", fmt.Sprint(i), cloudstore.PermRead, "*", t0); err != nil {
			t.Fatal(err)
		}
	}
	wantError(t, "an S3 key past the account's limit", a.do("POST", "/api/storage/keys", acme, `{"name":"one more"}`),
		http.StatusForbidden, "quota_exceeded")
	if r := a.do("GET", "/api/storage/keys", acme, ""); !strings.Contains(string(r.body), fmt.Sprintf(`"total":%d`, cloudstore.MaxS3KeysPerAccount)) {
		t.Errorf("after the refusal: %s", r.body)
	}
}

// TestAPIKeyNameInCharacters: an API key's name is bounded in
// characters at the store as at the handler: 100 two-byte characters
// are a name (once a 500), 101 are 400.
func TestAPIKeyNameInCharacters(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	if r := a.do("POST", "/api/admin/keys", a.admin, `{"account":"acme","name":"`+strings.Repeat("ж", 100)+`"}`); r.status != http.StatusCreated {
		t.Errorf("a name of 100 two-byte characters: %d %s", r.status, r.body)
	}
	wantError(t, "a name of 101", a.do("POST", "/api/admin/keys", a.admin, `{"account":"acme","name":"`+strings.Repeat("ж", 101)+`"}`),
		http.StatusBadRequest, "validation_error")
}

func TestUsage(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	other, _ := a.newKey("other")
	for _, n := range []string{"b-one", "b-two"} {
		if r := a.do("POST", "/api/storage/buckets", acme, `{"name":"`+n+`"}`); r.status != http.StatusCreated {
			t.Fatalf("create %s: %d %s", n, r.status, r.body)
		}
	}
	a.do("POST", "/api/storage/buckets", other, `{"name":"b-three"}`)
	r := a.do("GET", "/api/storage/usage", acme, "")
	var u struct {
		TotalBytes  int64 `json:"total_bytes"`
		ObjectCount int64 `json:"object_count"`
		BucketCount int   `json:"bucket_count"`
		Buckets     []struct {
			Name string `json:"name"`
		} `json:"buckets"`
	}
	if err := json.Unmarshal(r.body, &u); err != nil || r.status != http.StatusOK {
		t.Fatalf("usage: %d %s", r.status, r.body)
	}
	if u.BucketCount != 2 || len(u.Buckets) != 2 || u.Buckets[0].Name != "b-one" || u.TotalBytes != 0 || u.ObjectCount != 0 {
		t.Errorf("usage = %s, want acme's two empty buckets only", r.body)
	}
}

// TestS3KeyBodyMustBeAnObject: {} creates a key with the default name,
// but null, which decodes into the request as a no-op, is no JSON object:
// 400, and no key is made.
func TestS3KeyBodyMustBeAnObject(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	for _, body := range []string{`null`, ` null `, `[]`, `{}}`} {
		r := a.do("POST", "/api/storage/keys", acme, body)
		wantError(t, "create a key with the body "+body, r, http.StatusBadRequest, "validation_error")
	}
	if l := a.do("GET", "/api/storage/keys", acme, ""); !strings.Contains(string(l.body), `"total":0`) {
		t.Fatalf("refused bodies made keys: %s", l.body)
	}
	if r := a.do("POST", "/api/storage/keys", acme, `{}`); r.status != http.StatusCreated {
		t.Fatalf("create with {}: %d %s", r.status, r.body)
	}
	// Every field is optional, and so is the body.
	if r := a.do("POST", "/api/storage/keys", acme, ""); r.status != http.StatusCreated ||
		!strings.Contains(string(r.body), `"bucketScope":"*"`) || !strings.Contains(string(r.body), `"permissions":"readwrite"`) {
		t.Fatalf("create with no body: %d %s", r.status, r.body)
	}
}
