package cloudapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloudapi"
)

func TestLifecycleRules(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	other, _ := a.newKey("other")
	if r := a.do("POST", "/api/storage/buckets", acme, `{"name":"logs"}`); r.status != http.StatusCreated {
		t.Fatalf("create bucket: %d %s", r.status, r.body)
	}
	r := a.do("POST", "/api/storage/buckets/logs/lifecycle", acme, `{"prefix":"tmp/","expire_days":7}`)
	if r.status != http.StatusCreated {
		t.Fatalf("add rule: %d %s", r.status, r.body)
	}
	var rule struct {
		ID         string `json:"id"`
		Prefix     string `json:"prefix"`
		ExpireDays int    `json:"expire_days"`
		CreatedAt  string `json:"created_at"`
	}
	json.Unmarshal(r.body, &rule)
	if !strings.HasPrefix(rule.ID, "rule_") || rule.Prefix != "tmp/" || rule.ExpireDays != 7 || rule.CreatedAt == "" {
		t.Errorf("rule = %s", r.body)
	}
	if l := a.do("GET", "/api/storage/buckets/logs/lifecycle", acme, ""); l.status != http.StatusOK || !strings.Contains(string(l.body), `"total":1`) {
		t.Errorf("list rules: %d %s", l.status, l.body)
	}
	for _, body := range []string{`{}`, `{"expire_days":0}`, `{"expire_days":36501}`, `{"expire_days":"7"}`, `{"expire_days":7,"x":1}`} {
		wantError(t, "add rule "+body, a.do("POST", "/api/storage/buckets/logs/lifecycle", acme, body), http.StatusBadRequest, "validation_error")
	}
	// Tenancy: another account's bucket, and its rules, are not found.
	wantError(t, "other lists", a.do("GET", "/api/storage/buckets/logs/lifecycle", other, ""), http.StatusNotFound, "not_found")
	wantError(t, "other adds", a.do("POST", "/api/storage/buckets/logs/lifecycle", other, `{"expire_days":1}`), http.StatusNotFound, "not_found")
	wantError(t, "other deletes", a.do("DELETE", "/api/storage/buckets/logs/lifecycle/"+rule.ID, other, ""), http.StatusNotFound, "not_found")
	if d := a.do("DELETE", "/api/storage/buckets/logs/lifecycle/"+rule.ID, acme, ""); d.status != http.StatusNoContent {
		t.Errorf("delete rule: %d %s", d.status, d.body)
	}
	wantError(t, "delete again", a.do("DELETE", "/api/storage/buckets/logs/lifecycle/"+rule.ID, acme, ""), http.StatusNotFound, "not_found")
}
