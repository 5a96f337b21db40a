package cloudapi_test

// End-to-end tests of the activity log and the metrics endpoints: what the
// REST API's requests log and count, the windows, pages and limits, and
// every refusal.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

// eventFields renders an event's fields as they came, sorted, with values
// other than id and time: "key=a size=3 type=object.created".
func eventFields(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var m map[string]any
	json.Unmarshal(raw, &m)
	var parts []string
	for _, k := range keysOf(t, raw) {
		switch k {
		case "id":
		case "time":
			rfc3339(t, m[k].(string))
		default:
			parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
		}
	}
	return strings.Join(parts, " ")
}

func TestEventsAPI(t *testing.T) {
	a := newObjAPI(t) // acme's pics
	step := func(method, path, body string, status int, hdr ...string) {
		t.Helper()
		a.clock.Advance(time.Minute)
		if r := a.do(method, path, a.acme, body, hdr...); r.status != status {
			t.Fatalf("%s %s: %d %s, want %d", method, path, r.status, r.body, status)
		}
	}
	step("PATCH", "/api/storage/buckets/pics", `{"notes":"n"}`, 200)
	step("PATCH", "/api/storage/buckets/pics/public", `{"is_public":true}`, 200)
	step("POST", "/api/storage/buckets/pics/upload?key=a.txt", "hello", 201, "Content-Type", "text/plain")
	step("PUT", "/api/storage/buckets/pics/objects/b", "", 201, "Content-Type", "")
	step("POST", "/api/storage/buckets/pics/copy", `{"source_key":"a.txt","dest_key":"c.txt"}`, 201)
	step("POST", "/api/storage/buckets/pics/folders", `{"path":"dir"}`, 201)
	step("DELETE", "/api/storage/buckets/pics/objects/a.txt", "", 204)
	step("POST", "/api/storage/buckets/pics/lifecycle", `{"prefix":"","expire_days":3}`, 201)
	r := a.do("GET", "/api/storage/buckets/pics/lifecycle", a.acme, "")
	rule := wantList[cloudwire.LifecycleRule](t, "rules", r).Data[0]
	step("DELETE", "/api/storage/buckets/pics/lifecycle/"+rule.ID, "", 204)
	step("PATCH", "/api/storage/buckets/pics/public", `{"is_public":false}`, 200)
	// Failures and reads log nothing.
	a.do("DELETE", "/api/storage/buckets/pics/objects/nope", a.acme, "")
	a.download(a.acme, "pics", "b")

	l := wantList[json.RawMessage](t, "events", a.do("GET", "/api/storage/buckets/pics/events", a.acme, ""))
	want := []string{
		"type=bucket.made_private",
		fmt.Sprintf("expire_days=3 prefix= rule_id=%s type=lifecycle.rule_removed", rule.ID),
		fmt.Sprintf("expire_days=3 prefix= rule_id=%s type=lifecycle.rule_added", rule.ID),
		"key=a.txt size=5 type=object.deleted",
		"key=dir/ size=0 type=object.created",
		"key=c.txt size=5 source_key=a.txt type=object.copied",
		"key=b size=0 type=object.created",
		"key=a.txt size=5 type=object.created",
		"type=bucket.made_public",
		"type=bucket.updated",
		"type=bucket.created",
	}
	if l.Meta != (cloudwire.Meta{Total: 11, Page: 1, PerPage: 20}) {
		t.Errorf("meta %+v, want total 11, page 1, per_page 20", l.Meta)
	}
	if len(l.Data) != len(want) {
		t.Fatalf("%d events, want %d", len(l.Data), len(want))
	}
	for i, raw := range l.Data {
		if got := eventFields(t, raw); got != want[i] {
			t.Errorf("event %d: %s, want %s", i, got, want[i])
		}
		var ev cloudwire.Event
		json.Unmarshal(raw, &ev)
		wantTime := t0.Add(time.Duration(len(want)-1-i) * time.Minute)
		if i == len(want)-1 {
			wantTime = t0
		}
		if ev.ID != int64(len(want)-i) || ev.Time != wantTime.Format(time.RFC3339Nano) {
			t.Errorf("event %d: id %d, time %s; want %d, %s", i, ev.ID, ev.Time, len(want)-i, wantTime.Format(time.RFC3339Nano))
		}
	}

	pages := []struct {
		query string
		ids   string
		meta  cloudwire.Meta
	}{
		{"?limit=3", "11 10 9", cloudwire.Meta{Total: 11, Page: 1, PerPage: 3}},
		{"?limit=3&page=2", "8 7 6", cloudwire.Meta{Total: 11, Page: 2, PerPage: 3}},
		{"?limit=3&page=4", "2 1", cloudwire.Meta{Total: 11, Page: 4, PerPage: 3}},
		{"?limit=3&page=5", "", cloudwire.Meta{Total: 11, Page: 5, PerPage: 3}},
		{"?per_page=4&page=2", "7 6 5 4", cloudwire.Meta{Total: 11, Page: 2, PerPage: 4}},
		{"?limit=100", "11 10 9 8 7 6 5 4 3 2 1", cloudwire.Meta{Total: 11, Page: 1, PerPage: 100}},
	}
	for _, p := range pages {
		l := wantList[cloudwire.Event](t, "events"+p.query, a.do("GET", "/api/storage/buckets/pics/events"+p.query, a.acme, ""))
		var ids []string
		for _, ev := range l.Data {
			ids = append(ids, fmt.Sprint(ev.ID))
		}
		if got := strings.Join(ids, " "); got != p.ids || l.Meta != p.meta {
			t.Errorf("events%s: %q %+v, want %q %+v", p.query, got, l.Meta, p.ids, p.meta)
		}
	}
}

func TestEventsAPIErrors(t *testing.T) {
	a := newObjAPI(t)
	other, _ := a.newKey("other")
	tests := []struct {
		name, key, path string
		status          int
		code            string
	}{
		{"no API key", "", "/api/storage/buckets/pics/events", 401, "unauthorized"},
		{"another account's bucket", other, "/api/storage/buckets/pics/events", 404, "not_found"},
		{"missing bucket", a.acme, "/api/storage/buckets/nope/events", 404, "not_found"},
		{"limit 0", a.acme, "/api/storage/buckets/pics/events?limit=0", 400, "validation_error"},
		{"limit 101", a.acme, "/api/storage/buckets/pics/events?limit=101", 400, "validation_error"},
		{"limit not a number", a.acme, "/api/storage/buckets/pics/events?limit=ten", 400, "validation_error"},
		{"per_page 101", a.acme, "/api/storage/buckets/pics/events?per_page=101", 400, "validation_error"},
		{"page 0", a.acme, "/api/storage/buckets/pics/events?page=0", 400, "validation_error"},
		{"limit and per_page", a.acme, "/api/storage/buckets/pics/events?limit=5&per_page=5", 400, "validation_error"},
	}
	for _, tt := range tests {
		wantError(t, tt.name, a.do("GET", tt.path, tt.key, ""), tt.status, tt.code)
	}
}

// getJSON fetches path with acme's key and decodes a 200 answer strictly
// into v, checking its top-level fields.
func (a *objAPI) getJSON(path, fields string, v any) {
	a.t.Helper()
	r := a.do("GET", path, a.acme, "")
	if r.status != http.StatusOK {
		a.t.Fatalf("GET %s: %d %s", path, r.status, r.body)
	}
	wantJSON(a.t, r)
	if got := strings.Join(keysOf(a.t, r.body), ","); got != fields {
		a.t.Errorf("GET %s: fields %s, want %s", path, got, fields)
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		a.t.Fatalf("GET %s: %s: %v", path, r.body, err)
	}
}

func hourLine(h cloudwire.HourMetrics) string {
	q := h.Requests
	return fmt.Sprintf("%s get=%d put=%d delete=%d list=%d other=%d total=%d in=%d out=%d errors=%d",
		h.Hour, q.Get, q.Put, q.Delete, q.List, q.Other, q.Total, h.BytesIn, h.BytesOut, h.Errors)
}

func TestMetricsAPI(t *testing.T) {
	a := newObjAPI(t) // t0 is 12:00:00.12
	// Hour 12: an upload, two downloads (one ranged), a 404, a listing.
	up := a.uploadRaw(a.acme, "pics", "a.txt", "text/plain", []byte("hello")) // put, in 5
	a.download(a.acme, "pics", "a.txt")                                       // get, out 5
	a.download(a.acme, "pics", "a.txt", "Range", "bytes=0-1")                 // get, out 2
	nf := a.download(a.acme, "pics", "nope")                                  // get, error
	ls := a.do("GET", "/api/storage/buckets/pics/objects", a.acme, "")        // list
	// Hour 14: a PUT by key, a delete, a ZIP.
	a.clock.Advance(2 * time.Hour)
	a.do("PUT", "/api/storage/buckets/pics/objects/b.bin", a.acme, "12345678", "Content-Type", "") // put, in 8
	zr := a.zip(a.acme, "pics", `{"keys":["a.txt","b.bin"]}`)                                      // get
	a.do("DELETE", "/api/storage/buckets/pics/objects/b.bin", a.acme, "")                          // delete
	// Not counted: bucket reads, presigns, events.
	a.do("GET", "/api/storage/buckets/pics", a.acme, "")
	a.do("GET", "/api/storage/buckets/pics/events", a.acme, "")
	a.clock.Advance(30 * time.Minute) // 14:30

	var m cloudwire.Metrics
	a.getJSON("/api/storage/buckets/pics/metrics?hours=4", "bucket,from,hourly,hours,to", &m)
	want := []string{
		"2026-11-21T11:00:00Z get=0 put=0 delete=0 list=0 other=0 total=0 in=0 out=0 errors=0",
		fmt.Sprintf("2026-11-21T12:00:00Z get=3 put=1 delete=0 list=1 other=0 total=5 in=5 out=%d errors=1", len(up.body)+5+2+len(nf.body)+len(ls.body)),
		"2026-11-21T13:00:00Z get=0 put=0 delete=0 list=0 other=0 total=0 in=0 out=0 errors=0",
		fmt.Sprintf("2026-11-21T14:00:00Z get=1 put=1 delete=1 list=0 other=0 total=3 in=%d out=%d errors=0", 8+len(`{"keys":["a.txt","b.bin"]}`), len(zr.body)+objectAnswerLen(t, a)),
	}
	var got []string
	for _, h := range m.Hourly {
		got = append(got, hourLine(h))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("hourly:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if m.Bucket != "pics" || m.Hours != 4 || m.From != "2026-11-21T11:00:00Z" || m.To != t0.Add(150*time.Minute).Format(time.RFC3339Nano) {
		t.Errorf("metrics window: %s %d %s %s", m.Bucket, m.Hours, m.From, m.To)
	}
	var def cloudwire.Metrics
	a.getJSON("/api/storage/buckets/pics/metrics", "bucket,from,hourly,hours,to", &def)
	if def.Hours != 24 || len(def.Hourly) != 24 || def.Hourly[23].Hour != "2026-11-21T14:00:00Z" {
		t.Errorf("default window: %d hours, %d entries", def.Hours, len(def.Hourly))
	}

	var sum cloudwire.MetricsSummary
	a.getJSON("/api/storage/buckets/pics/metrics/summary?hours=4", "bucket,bytes_in,bytes_out,errors,from,hours,object_count,requests,size_bytes,to", &sum)
	if sum.Requests != (cloudwire.Requests{Get: 4, Put: 2, Delete: 1, List: 1, Total: 8}) || sum.Errors != 1 ||
		sum.BytesIn != m.Hourly[1].BytesIn+m.Hourly[3].BytesIn || sum.BytesOut != m.Hourly[1].BytesOut+m.Hourly[3].BytesOut ||
		sum.ObjectCount != 1 || sum.SizeBytes != 5 || sum.Hours != 4 || sum.From != m.From {
		t.Errorf("summary over 4 hours: %+v", sum)
	}
	a.getJSON("/api/storage/buckets/pics/metrics/summary?hours=1", "bucket,bytes_in,bytes_out,errors,from,hours,object_count,requests,size_bytes,to", &sum)
	if sum.Requests.Total != 3 || sum.From != "2026-11-21T14:00:00Z" {
		t.Errorf("summary over the current hour: %+v", sum)
	}

	// Top objects: a.txt (the upload, two good gets; the ZIP names no
	// key). Bytes out count every body sent, JSON answers too.
	// b.bin was deleted, so it is not counted any more.
	l := wantList[cloudwire.TopObject](t, "top", a.do("GET", "/api/storage/buckets/pics/metrics/top-objects", a.acme, ""))
	if l.Meta != (cloudwire.Meta{Total: 1, Page: 1, PerPage: 20}) || len(l.Data) != 1 {
		t.Fatalf("top objects: %+v", l)
	}
	if o := l.Data[0]; o.Key != "a.txt" || o.Requests != 3 || o.BytesIn != 5 || o.BytesOut != int64(len(up.body)+7) || o.LastAccess != t0.Format(time.RFC3339Nano) {
		t.Errorf("top object: %+v", o)
	}
}

// objectAnswerLen is the length of the 201 answer of a PUT of b.bin, as
// the metrics test made it (its body counts in bytes_out).
func objectAnswerLen(t *testing.T, a *objAPI) int {
	t.Helper()
	o := cloudwire.ObjectInfo{Key: "b.bin", Size: 8, ETag: md5hex([]byte("12345678")), ContentType: "application/octet-stream",
		LastModified: t0.Add(2 * time.Hour).Format(time.RFC3339Nano)}
	data, _ := json.Marshal(o)
	return len(data) + 1 // writeJSON ends with a newline
}

func TestTopObjectsAndFileTypesAPI(t *testing.T) {
	a := newObjAPI(t)
	for i, key := range []string{"a.jpg", "b.JPG", "c.png", "d", "e.txt"} {
		a.put(key, bytes.Repeat([]byte("x"), (i+1)*10))
		for range i { // e.txt downloaded 4 times, d 3, ...
			a.download(a.acme, "pics", key)
		}
	}
	top := func(query string) string {
		l := wantList[cloudwire.TopObject](t, "top"+query, a.do("GET", "/api/storage/buckets/pics/metrics/top-objects"+query, a.acme, ""))
		var keys []string
		for _, o := range l.Data {
			keys = append(keys, fmt.Sprintf("%s:%d", o.Key, o.Requests))
		}
		return fmt.Sprintf("%s %d/%d/%d", strings.Join(keys, " "), l.Meta.Total, l.Meta.Page, l.Meta.PerPage)
	}
	for query, want := range map[string]string{
		"":                   "e.txt:5 d:4 c.png:3 b.JPG:2 a.jpg:1 5/1/20",
		"?limit=2":           "e.txt:5 d:4 5/1/2",
		"?limit=2&page=3":    "a.jpg:1 5/3/2",
		"?limit=2&page=4":    " 5/4/2",
		"?per_page=3&page=2": "b.JPG:2 a.jpg:1 5/2/3",
	} {
		if got := top(query); got != want {
			t.Errorf("top-objects%s = %q, want %q", query, got, want)
		}
	}
	l := wantList[cloudwire.FileType](t, "file types", a.do("GET", "/api/storage/buckets/pics/metrics/file-types", a.acme, ""))
	var got []string
	for _, ft := range l.Data {
		got = append(got, fmt.Sprintf("%q:%d/%d", ft.Extension, ft.ObjectCount, ft.SizeBytes))
	}
	if g, w := strings.Join(got, " "), `"txt":1/50 "":1/40 "jpg":2/30 "png":1/30`; g != w || l.Meta.Total != 4 {
		t.Errorf("file types = %s (total %d), want %s (total 4)", g, l.Meta.Total, w)
	}
	l = wantList[cloudwire.FileType](t, "file types page 2", a.do("GET", "/api/storage/buckets/pics/metrics/file-types?per_page=3&page=2", a.acme, ""))
	if len(l.Data) != 1 || l.Data[0].Extension != "png" {
		t.Errorf("file types page 2: %+v", l.Data)
	}
}

func TestMetricsAPIErrors(t *testing.T) {
	a := newObjAPI(t)
	other, _ := a.newKey("other")
	base := "/api/storage/buckets/"
	var tests []struct {
		name, key, path string
		status          int
		code            string
	}
	add := func(name, key, path string, status int, code string) {
		tests = append(tests, struct {
			name, key, path string
			status          int
			code            string
		}{name, key, path, status, code})
	}
	for _, ep := range []string{"metrics", "metrics/summary", "metrics/top-objects", "metrics/file-types"} {
		add(ep+", no API key", "", base+"pics/"+ep, 401, "unauthorized")
		add(ep+", another account's bucket", other, base+"pics/"+ep, 404, "not_found")
		add(ep+", missing bucket", a.acme, base+"nope/"+ep, 404, "not_found")
	}
	for _, ep := range []string{"metrics", "metrics/summary"} {
		for _, q := range []string{"0", "721", "-1", "x", "1.5"} {
			add(ep+" hours="+q, a.acme, base+"pics/"+ep+"?hours="+q, 400, "validation_error")
		}
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "per_page=101", "page=0", "limit=5&per_page=5"} {
		add("top-objects "+q, a.acme, base+"pics/metrics/top-objects?"+q, 400, "validation_error")
	}
	for _, q := range []string{"per_page=0", "per_page=101", "page=0"} {
		add("file-types "+q, a.acme, base+"pics/metrics/file-types?"+q, 400, "validation_error")
	}
	for _, tt := range tests {
		wantError(t, tt.name, a.do("GET", tt.path, tt.key, ""), tt.status, tt.code)
	}
	var m cloudwire.Metrics
	a.getJSON(base+"pics/metrics?hours=720", "bucket,from,hourly,hours,to", &m)
	if len(m.Hourly) != 720 {
		t.Errorf("hours=720: %d entries", len(m.Hourly))
	}
}
