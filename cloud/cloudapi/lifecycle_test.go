package cloudapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
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
	for _, body := range []string{`{}`, `{"expire_days":0}`, `{"expire_days":36501}`, `{"expire_days":"7"}`, `{"expire_days":7,"x":1}`,
		`{"expire_days":7.5}`, `{"expire_days":null}`, `{"expire_days":1e400}`, `{"expire_days":true}`, `{"Expire_Days":7}`,
		`{"expire_days":7.0000000000000001}`, `{"expire_days":6.9999999999999999}`, `{"expire_days":36500.000000000001}`,
		`{"expire_days":1e999999999}`, `{"expire_days":-0}`, `{"expire_days":1e-400}`, `{"expire_days":1e20}`,
		`{"expire_days":7,"prefix":"a\u0001"}`, `{"expire_days":7,"prefix":"a\u007f"}`} {
		wantError(t, "add rule "+body, a.do("POST", "/api/storage/buckets/logs/lifecycle", acme, body), http.StatusBadRequest, "validation_error")
	}
	// A whole number however JSON writes it (Python's json writes 7.0).
	for _, days := range []string{"7.0", "7e0", "70e-1"} {
		r := a.do("POST", "/api/storage/buckets/logs/lifecycle", acme, `{"prefix":"p/","expire_days":`+days+`}`)
		if r.status != http.StatusCreated || !strings.Contains(string(r.body), `"expire_days":7`) {
			t.Errorf("expire_days %s: %d %s", days, r.status, r.body)
		}
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

// TestLifecycleRulesFromS3 checks that the rules S3's
// PutBucketLifecycleConfiguration sets are listed here, with what the REST
// fields cannot say in s3, that one can be removed here by its S3 id, and
// that their events fit the schema.
func TestLifecycleRulesFromS3(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	if r := a.do("POST", "/api/storage/buckets", acme, `{"name":"logs"}`); r.status != http.StatusCreated {
		t.Fatalf("create bucket: %d %s", r.status, r.body)
	}
	yes, gt := true, int64(100)
	rules := []cloudstore.Rule{
		{ID: "tmp files", S3: true, Filter: cloudstore.FilterPrefix, Prefix: "tmp/", ExpireDays: 7},
		{ID: "versions/old", S3: true, Disabled: true, Filter: cloudstore.FilterAnd, Prefix: "v/", Tags: map[string]string{"k": "v"}, SizeGreaterThan: &gt,
			NoncurrentDays: 30, NewerNoncurrentVersions: 2},
		{ID: "markers", S3: true, Filter: cloudstore.FilterEmpty, ExpiredObjectDeleteMarker: &yes, AbortDays: 3},
		{ID: "date", S3: true, Filter: cloudstore.FilterEmpty, ExpireDate: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	if _, err := a.st.SetRules("acme", "logs", rules, a.clock.Now()); err != nil {
		t.Fatal(err)
	}
	l := a.do("GET", "/api/storage/buckets/logs/lifecycle", acme, "")
	if l.status != http.StatusOK {
		t.Fatalf("list rules: %d %s", l.status, l.body)
	}
	var page struct {
		Data []cloudwire.LifecycleRule `json:"data"`
	}
	if err := json.Unmarshal(l.body, &page); err != nil || len(page.Data) != 4 {
		t.Fatalf("list rules: %s, %v; want 4 rules", l.body, err)
	}
	var got []string
	for _, r := range page.Data {
		s := r.S3
		got = append(got, fmt.Sprintf("%s prefix=%s days=%d %s tags=%v gt=%v nc=%d/%d markers=%v abort=%d date=%s", r.ID, r.Prefix, r.ExpireDays,
			s.Status, s.Tags, s.ObjectSizeGreaterThan != nil, s.NoncurrentDays, s.NewerNoncurrentVersions, s.ExpiredObjectDeleteMarker, s.AbortIncompleteUploadDays, s.ExpirationDate))
	}
	want := []string{
		"tmp files prefix=tmp/ days=7 Enabled tags=map[] gt=false nc=0/0 markers=false abort=0 date=",
		"versions/old prefix=v/ days=0 Disabled tags=map[k:v] gt=true nc=30/2 markers=false abort=0 date=",
		"markers prefix= days=0 Enabled tags=map[] gt=false nc=0/0 markers=true abort=3 date=",
		"date prefix= days=0 Enabled tags=map[] gt=false nc=0/0 markers=false abort=0 date=2030-01-01T00:00:00Z",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rules made over S3, listed here:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := a.do("DELETE", "/api/storage/buckets/logs/lifecycle/"+url.PathEscape("versions/old"), acme, ""); d.status != http.StatusNoContent {
		t.Errorf("delete a rule by its S3 id: %d %s", d.status, d.body)
	}
	if left, _ := a.st.Rules("acme", "logs"); len(left) != 3 {
		t.Errorf("after the delete: %d rules, want 3", len(left))
	}
	if ev := a.do("GET", "/api/storage/buckets/logs/events", acme, ""); ev.status != http.StatusOK || !strings.Contains(string(ev.body), `"rule_id":"markers"`) {
		t.Errorf("events: %d %s", ev.status, ev.body)
	}
}

// TestLifecycleRuleLimit: a bucket holds at most cloudstore.MaxRules
// rules however they are added, the bound S3's configurations keep: the
// next POST is 400, adds nothing, and the rules can still be read and
// written back whole over S3's API (SetRules).
func TestLifecycleRuleLimit(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	if r := a.do("POST", "/api/storage/buckets", acme, `{"name":"logs"}`); r.status != http.StatusCreated {
		t.Fatalf("create bucket: %d %s", r.status, r.body)
	}
	rules := make([]cloudstore.Rule, cloudstore.MaxRules-1)
	for i := range rules {
		rules[i] = cloudstore.Rule{Prefix: fmt.Sprintf("p%d/", i), ExpireDays: 7}
	}
	if _, err := a.st.SetRules("acme", "logs", rules, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r := a.do("POST", "/api/storage/buckets/logs/lifecycle", acme, `{"expire_days":7}`); r.status != http.StatusCreated {
		t.Fatalf("the 1000th rule: %d %s", r.status, r.body)
	}
	r := a.do("POST", "/api/storage/buckets/logs/lifecycle", acme, `{"expire_days":7}`)
	wantError(t, "the 1001st rule", r, http.StatusBadRequest, "validation_error")
	if !strings.Contains(string(r.body), "at most 1000 lifecycle rules") {
		t.Errorf("the 1001st rule's refusal: %s", r.body)
	}
	got, err := a.st.Rules("acme", "logs")
	if err != nil || len(got) != cloudstore.MaxRules {
		t.Fatalf("after the refusal: %d rules, %v", len(got), err)
	}
	if _, err := a.st.SetRules("acme", "logs", got, time.Now()); err != nil {
		t.Errorf("the rules written back whole: %v", err)
	}
}
