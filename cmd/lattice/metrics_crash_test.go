package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestMetricsSurviveKill: counts older than the metrics flush interval
// (10 s) survive a kill -9 of the real process, as docs/cloud-api.md
// promises. Before the flush was fsync'd, such counts could stay in the
// database's log buffer and be lost.
func TestMetricsSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a metrics flush (12 s)")
	}
	dir := t.TempDir()
	p := startCloud(t, dir)
	r, err := p.call("POST", "/api/admin/keys", p.admin, "application/json", []byte(`{"account":"m","name":"test"}`))
	if err != nil || r.status != http.StatusCreated {
		t.Fatalf("create API key: %v %d %s", err, r.status, r.body)
	}
	var created struct{ Secret string }
	json.Unmarshal(r.body, &created)
	key := created.Secret
	base := "/api/storage/buckets/counted"
	if r, err := p.call("POST", "/api/storage/buckets", key, "application/json", []byte(`{"name":"counted"}`)); err != nil || r.status != http.StatusCreated {
		t.Fatalf("create bucket: %v %d %s", err, r.status, r.body)
	}
	if r, err := p.call("POST", base+"/upload?key=x", key, "text/plain", []byte("counted")); err != nil || r.status != http.StatusCreated {
		t.Fatalf("upload: %v %d %s", err, r.status, r.body)
	}
	const gets = 7
	for range gets {
		if r, err := p.call("GET", base+"/download/x", key, "", nil); err != nil || r.status != http.StatusOK {
			t.Fatalf("download: %v %d", err, r.status)
		}
	}
	time.Sleep(12 * time.Second) // past one flush, with room
	p.kill(t)

	p = startCloud(t, dir)
	r, err = p.call("GET", base+"/metrics/summary", key, "", nil)
	if err != nil || r.status != http.StatusOK {
		t.Fatalf("summary: %v %d %s", err, r.status, r.body)
	}
	var sum struct {
		Requests struct{ Get, Put int }
	}
	if err := json.Unmarshal(r.body, &sum); err != nil {
		t.Fatalf("summary %s: %v", r.body, err)
	}
	if got := sum.Requests; got.Get != gets || got.Put != 1 {
		t.Errorf("after kill -9: %d GETs and %d PUTs counted, want %d and 1 (%s)", got.Get, got.Put, gets, r.body)
	}
	p.stop(t)
}
