package cloudapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/cloudwire"
)

// TestKMSKeys: the key service's routes, each answer checked against the
// OpenAPI document: create, list, show by id and name, disable, enable,
// rotate; the refusals (bad names, a taken name, another account's key,
// disabling the default key, unknown actions) change nothing.
func TestKMSKeys(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	alice, _ := a.newKey("alice")
	bob, _ := a.newKey("bob")
	decode := func(r response, status int) cloudwire.KMSKey {
		t.Helper()
		if r.status != status {
			t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
		}
		var k cloudwire.KMSKey
		if err := json.Unmarshal(r.body, &k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	k := decode(a.do("POST", "/api/storage/kms/keys", alice, `{"name":"logs","description":"for logs"}`), http.StatusCreated)
	if k.Name != "logs" || !k.Enabled || k.Versions != 1 || k.Managed || !strings.HasSuffix(k.ARN, ":alice:key/"+k.ID) {
		t.Fatalf("created %+v", k)
	}
	for _, c := range []struct{ body, code string }{
		{`{"name":"logs"}`, "conflict"},
		{`{"name":"aws/s3"}`, "validation_error"},
		{`{"name":""}`, "validation_error"},
		{`{"name":"has space"}`, "validation_error"},
		{`{"name":"x","description":"` + strings.Repeat("d", 8193) + `"}`, "validation_error"},
		{`{"name":"x","color":"red"}`, "validation_error"},
	} {
		status := map[string]int{"conflict": 409, "validation_error": 400}[c.code]
		wantError(t, "create "+c.body[:min(len(c.body), 30)], a.do("POST", "/api/storage/kms/keys", alice, c.body), status, c.code)
	}
	for _, ref := range []string{k.ID, "logs"} {
		if got := decode(a.do("GET", "/api/storage/kms/keys/"+ref, alice, ""), 200); got != k {
			t.Fatalf("GET by %s: %+v", ref, got)
		}
	}
	wantError(t, "another account's key", a.do("GET", "/api/storage/kms/keys/"+k.ID, bob, ""), 404, "not_found")
	wantError(t, "no such key", a.do("GET", "/api/storage/kms/keys/nope", alice, ""), 404, "not_found")
	wantError(t, "another account's key disabled", a.do("POST", "/api/storage/kms/keys/logs/disable", bob, ""), 404, "not_found")

	if got := decode(a.do("POST", "/api/storage/kms/keys/logs/disable", alice, ""), 200); got.Enabled {
		t.Fatalf("disabled: %+v", got)
	}
	wantError(t, "rotating a disabled key", a.do("POST", "/api/storage/kms/keys/logs/rotate", alice, ""), 400, "validation_error")
	if got := decode(a.do("POST", "/api/storage/kms/keys/logs/enable", alice, ""), 200); !got.Enabled {
		t.Fatalf("enabled: %+v", got)
	}
	if got := decode(a.do("POST", "/api/storage/kms/keys/"+k.ID+"/rotate", alice, ""), 200); got.Versions != 2 || got.RotatedAt == "" {
		t.Fatalf("rotated: %+v", got)
	}
	wantError(t, "an unknown action", a.do("POST", "/api/storage/kms/keys/logs/destroy", alice, ""), 404, "not_found")

	// The default key, made by an SSE-KMS write (here by the service
	// directly), cannot be disabled.
	if _, err := a.st.KMS().Resolve(t.Context(), "alice", ""); err != nil {
		t.Fatal(err)
	}
	var list cloudwire.List[cloudwire.KMSKey]
	r := a.do("GET", "/api/storage/kms/keys", alice, "")
	if err := json.Unmarshal(r.body, &list); err != nil || r.status != 200 || len(list.Data) != 2 || list.Data[0].Name != "aws/s3" || !list.Data[0].Managed {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	wantError(t, "disabling the default key", a.do("POST", "/api/storage/kms/keys/"+list.Data[0].ID+"/disable", alice, ""), 400, "validation_error")
	if r := a.do("GET", "/api/storage/kms/keys", bob, ""); r.status != 200 || !strings.Contains(string(r.body), `"data":[]`) {
		t.Fatalf("bob's keys: %s", r.body)
	}
}
