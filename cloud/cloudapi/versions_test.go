package cloudapi_test

// Object versions over the REST API: the versioning switch, the Bucket's
// and the usage's version fields, the versions listing and its pages, and
// reading and deleting a version by id, with every refusal.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/cloudwire"
)

// setVersioning sends PUT .../versioning with body.
func (a *objAPI) setVersioning(apiKey, bucket, body string) response {
	a.t.Helper()
	return a.do("PUT", "/api/storage/buckets/"+bucket+"/versioning", apiKey, body)
}

// wantVersionedBucket checks r is a Bucket of a bucket that keeps or kept
// versions: the resource's fields and the three of versioning.
func wantVersionedBucket(t *testing.T, what string, r response, status int) cloudwire.Bucket {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d (body %s)", what, r.status, status, r.body)
	}
	wantJSON(t, r)
	if got, want := strings.Join(keysOf(t, r.body), ","), "created_at,is_public,name,noncurrent_size_bytes,noncurrent_version_count,notes,object_count,size_bytes,updated_at,versioning"; got != want {
		t.Errorf("%s: bucket fields %s, want %s", what, got, want)
	}
	var b cloudwire.Bucket
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("%s: %s: %v", what, r.body, err)
	}
	return b
}

// versionCounts renders a versioned bucket's counts: "versioning objects
// bytes / noncurrent bytes".
func versionCounts(b cloudwire.Bucket) string {
	return fmt.Sprintf("%s %d %d / %d %d", b.Versioning, b.ObjectCount, b.SizeBytes, *b.NoncurrentVersionCount, *b.NoncurrentSizeBytes)
}

// versions lists bucket's versions with query (no "?"), checks the answer
// and returns it.
func (a *objAPI) versions(apiKey, bucket, query string) cloudwire.VersionList {
	a.t.Helper()
	r := a.do("GET", "/api/storage/buckets/"+bucket+"/versions?"+query, apiKey, "")
	if r.status != http.StatusOK {
		a.t.Fatalf("versions ?%s: status %d, want 200 (body %s)", query, r.status, r.body)
	}
	wantJSON(a.t, r)
	var l cloudwire.VersionList
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		a.t.Fatalf("versions ?%s: %s: %v", query, r.body, err)
	}
	if l.Data == nil || l.Prefixes == nil {
		a.t.Errorf("versions ?%s: data or prefixes not an array: %s", query, r.body)
	}
	for _, v := range l.Data {
		rfc3339(a.t, v.LastModified)
	}
	return l
}

// ids maps the version ids of the test's listings to names: "null", or
// the key and the version's number in order of writing (a.txt#1).
type ids map[string]string

// rendered renders a page of versions: "key#n [latest] [marker] ..." and
// the prefixes, then the next markers (ids named) and meta.total.
func (n ids) rendered(l cloudwire.VersionList) string {
	var parts []string
	for _, v := range l.Data {
		s := v.Key + "#" + n.name(v.VersionID)
		if v.IsLatest {
			s += "*"
		}
		if v.DeleteMarker {
			s += "(M)"
		}
		parts = append(parts, s)
	}
	for _, p := range l.Prefixes {
		parts = append(parts, "P:"+p)
	}
	return fmt.Sprintf("%s | %s %s %d", strings.Join(parts, " "), l.NextKeyMarker, n.name(l.NextVersionIDMarker), l.Meta.Total)
}

func (n ids) name(id string) string {
	if id == "" || id == "null" {
		return id
	}
	if s, ok := n[id]; ok {
		return s
	}
	return "?" + id
}

// versioned makes pics hold, in order of writing: old.txt (null, before
// versioning), a.txt#1, a.txt#2, a delete marker a.txt#3, dir/x#1,
// dir/y#1, and returns the ids by name.
func versioned(t *testing.T, a *objAPI) map[string]string {
	t.Helper()
	a.put("old.txt", []byte("old"))
	wantVersionedBucket(t, "enable", a.setVersioning(a.acme, "pics", `{"status":"Enabled"}`), http.StatusOK)
	a.put("a.txt", []byte("first"))
	a.put("a.txt", []byte("second!"))
	if r := a.do("DELETE", "/api/storage/buckets/pics/objects/a.txt", a.acme, ""); r.status != http.StatusNoContent {
		t.Fatalf("delete a.txt: %d %s", r.status, r.body)
	}
	a.put("dir/x", []byte("x"))
	a.put("dir/y", []byte("y"))
	l := a.versions(a.acme, "pics", "per_page=100")
	byName := map[string]string{}
	// a.txt's versions come newest first.
	names := []string{"a.txt#3", "a.txt#2", "a.txt#1", "dir/x#1", "dir/y#1", "old.txt#null"}
	if len(l.Data) != len(names) {
		t.Fatalf("versions: %d, want %d: %+v", len(l.Data), len(names), l.Data)
	}
	for i, v := range l.Data {
		byName[names[i]] = v.VersionID
	}
	return byName
}

func namesOf(byName map[string]string) ids {
	n := ids{}
	for name, id := range byName {
		n[id] = strings.SplitN(name, "#", 2)[1]
	}
	return n
}

func TestSetVersioning(t *testing.T) {
	a := newObjAPI(t)
	other, _ := a.newKey("other")
	wantBucket(t, "never versioned", a.do("GET", "/api/storage/buckets/pics", a.acme, ""), http.StatusOK)
	for _, tt := range []struct {
		name, key, bucket, body string
		status                  int
		code                    string
	}{
		{"lower case", a.acme, "pics", `{"status":"enabled"}`, http.StatusBadRequest, "validation_error"},
		{"another state", a.acme, "pics", `{"status":"Disabled"}`, http.StatusBadRequest, "validation_error"},
		{"empty status", a.acme, "pics", `{"status":""}`, http.StatusBadRequest, "validation_error"},
		{"no status", a.acme, "pics", `{}`, http.StatusBadRequest, "validation_error"},
		{"null status", a.acme, "pics", `{"status":null}`, http.StatusBadRequest, "validation_error"},
		{"not a string", a.acme, "pics", `{"status":true}`, http.StatusBadRequest, "validation_error"},
		{"unknown field", a.acme, "pics", `{"status":"Enabled","mfa_delete":"Enabled"}`, http.StatusBadRequest, "validation_error"},
		{"trailing data", a.acme, "pics", `{"status":"Enabled"} {}`, http.StatusBadRequest, "validation_error"},
		{"too large", a.acme, "pics", `{"status":"Enabled","x":"` + strings.Repeat("x", 1<<20) + `"}`, http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"missing bucket", a.acme, "nope", `{"status":"Enabled"}`, http.StatusNotFound, "not_found"},
		{"impossible bucket name", a.acme, "NO", `{"status":"Enabled"}`, http.StatusNotFound, "not_found"},
		{"another account's bucket", other, "pics", `{"status":"Enabled"}`, http.StatusNotFound, "not_found"},
		{"no API key", "", "pics", `{"status":"Enabled"}`, http.StatusUnauthorized, "unauthorized"},
	} {
		wantError(t, tt.name, a.setVersioning(tt.key, tt.bucket, tt.body), tt.status, tt.code)
	}
	wantBucket(t, "after the refusals", a.do("GET", "/api/storage/buckets/pics", a.acme, ""), http.StatusOK)
	if r := a.do("PUT", "/api/storage/buckets/pics/versioning", a.acme, `{"status":"Enabled"}`, "Content-Type", "text/plain"); r.status != http.StatusBadRequest {
		t.Errorf("text/plain body: %d, want 400", r.status)
	}

	a.put("a.txt", []byte("12345"))
	for _, tt := range []struct{ status, want string }{
		{"Enabled", "Enabled 1 5 / 0 0"},
		{"Enabled", "Enabled 1 5 / 0 0"}, // again: no change
		{"Suspended", "Suspended 1 5 / 0 0"},
		{"Enabled", "Enabled 1 5 / 0 0"},
	} {
		b := wantVersionedBucket(t, "set "+tt.status, a.setVersioning(a.acme, "pics", `{"status":"`+tt.status+`"}`), http.StatusOK)
		if got := versionCounts(b); got != tt.want {
			t.Errorf("set %s: got %s, want %s", tt.status, got, tt.want)
		}
	}
	// A versioned bucket's writes and deletes keep what they replace.
	a.put("a.txt", []byte("1234567"))
	a.do("DELETE", "/api/storage/buckets/pics/objects/a.txt", a.acme, "")
	b := wantVersionedBucket(t, "after an overwrite and a delete", a.do("GET", "/api/storage/buckets/pics", a.acme, ""), http.StatusOK)
	if got, want := versionCounts(b), "Enabled 0 0 / 3 12"; got != want {
		t.Errorf("after an overwrite and a delete: got %s, want %s", got, want)
	}
	r := a.do("GET", "/api/storage/buckets", a.acme, "")
	if !bytes.Contains(r.body, []byte(`"versioning":"Enabled","noncurrent_version_count":3,"noncurrent_size_bytes":12`)) {
		t.Errorf("bucket list: %s, want pics's versioning fields", r.body)
	}
	// Suspending again keeps the versions there are.
	b = wantVersionedBucket(t, "suspend", a.setVersioning(a.acme, "pics", `{"status":"Suspended"}`), http.StatusOK)
	if got, want := versionCounts(b), "Suspended 0 0 / 3 12"; got != want {
		t.Errorf("suspended: got %s, want %s", got, want)
	}
}

// TestUsageCountsVersionsApart: usage's spec totals stay those of the
// current objects; noncurrent bytes are beside them, per bucket and in
// all, and only once a bucket has kept versions.
func TestUsageCountsVersionsApart(t *testing.T) {
	a := newObjAPI(t)
	if r := a.do("POST", "/api/storage/buckets", a.acme, `{"name":"docs"}`); r.status != http.StatusCreated {
		t.Fatal(r.status)
	}
	usage := func() (cloudwire.Usage, string) {
		t.Helper()
		r := a.do("GET", "/api/storage/usage", a.acme, "")
		if r.status != http.StatusOK {
			t.Fatalf("usage: %d %s", r.status, r.body)
		}
		var u cloudwire.Usage
		dec := json.NewDecoder(bytes.NewReader(r.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&u); err != nil {
			t.Fatal(err)
		}
		return u, string(r.body)
	}
	a.put("a", []byte("12345"))
	if _, body := usage(); strings.Contains(body, "noncurrent") {
		t.Errorf("usage of buckets never versioned: %s, want no noncurrent_size_bytes", body)
	}
	a.setVersioning(a.acme, "pics", `{"status":"Enabled"}`)
	a.put("a", []byte("123"))
	u, body := usage()
	if u.TotalBytes != 3 || u.ObjectCount != 1 || u.NoncurrentSizeBytes == nil || *u.NoncurrentSizeBytes != 5 {
		t.Errorf("usage: %s, want total_bytes 3, object_count 1, noncurrent_size_bytes 5", body)
	}
	if !strings.Contains(body, `{"name":"docs","object_count":0,"size_bytes":0}`) ||
		!strings.Contains(body, `{"name":"pics","object_count":1,"size_bytes":3,"noncurrent_size_bytes":5}`) {
		t.Errorf("usage lines: %s, want docs without noncurrent_size_bytes and pics with 5", body)
	}
}

func TestListVersionsAPI(t *testing.T) {
	a := newObjAPI(t)
	n := namesOf(versioned(t, a))
	all := "a.txt#3*(M) a.txt#2 a.txt#1 dir/x#1* dir/y#1* old.txt#null* |   6"
	for _, tt := range []struct{ query, want string }{
		{"", all},
		{"per_page=100", all},
		{"limit=100", all},
		{"per_page=2", "a.txt#3*(M) a.txt#2 | a.txt 2 6"},
		{"limit=2", "a.txt#3*(M) a.txt#2 | a.txt 2 6"},
		{"per_page=2&page=2", "a.txt#1 dir/x#1* | dir/x 1 6"},
		{"per_page=2&page=3", "dir/y#1* old.txt#null* |   6"},
		{"per_page=2&page=4", " |   6"},
		{"per_page=4&page=2", "dir/y#1* old.txt#null* |   6"},
		{"key_marker=a.txt", "dir/x#1* dir/y#1* old.txt#null* |   3"},
		{"key_marker=a.txt&version_id_marker=" + n.id("3"), "a.txt#2 a.txt#1 dir/x#1* dir/y#1* old.txt#null* |   5"},
		{"key_marker=a.txt&version_id_marker=" + n.id("2") + "&per_page=1", "a.txt#1 | a.txt 1 4"},
		{"key_marker=a.txt&version_id_marker=" + n.id("2") + "&per_page=1&page=2", "dir/x#1* | dir/x 1 4"},
		{"key_marker=old.txt", " |   0"},
		{"key_marker=zzz", " |   0"},
		{"prefix=dir/", "dir/x#1* dir/y#1* |   2"},
		{"prefix=nothing/", " |   0"},
		{"delimiter=/", "a.txt#3*(M) a.txt#2 a.txt#1 old.txt#null* P:dir/ |   5"},
		{"delimiter=/&per_page=3", "a.txt#3*(M) a.txt#2 a.txt#1 | a.txt 1 5"},
		{"delimiter=/&per_page=4", "a.txt#3*(M) a.txt#2 a.txt#1 P:dir/ | dir/  5"},
		{"delimiter=/&key_marker=dir/", "old.txt#null* |   1"},
		{"prefix=dir/&delimiter=/", "dir/x#1* dir/y#1* |   2"},
	} {
		if got := n.rendered(a.versions(a.acme, "pics", tt.query)); got != tt.want {
			t.Errorf("?%s:\n got %s\nwant %s", tt.query, got, tt.want)
		}
	}
	// The fields of each kind of entry.
	l := a.versions(a.acme, "pics", "per_page=2")
	if m, v := l.Data[0], l.Data[1]; m.Size != 0 || m.ETag != "" || m.ContentType != "" ||
		v.Size != 7 || v.ETag != md5hex([]byte("second!")) || v.ContentType != "application/octet-stream" {
		t.Errorf("marker %+v, version %+v", m, v)
	}
	r := a.do("GET", "/api/storage/buckets/pics/versions?per_page=1", a.acme, "")
	if !bytes.Contains(r.body, []byte(`"is_latest":true,"delete_marker":true,"size":0,"etag":"","last_modified"`)) {
		t.Errorf("a delete marker: %s, want no content_type and an empty etag", r.body)
	}
	// Following the markers walks every entry once, as pages do.
	var walked []string
	q := "per_page=1&delimiter=/"
	for range 10 {
		l := a.versions(a.acme, "pics", q)
		for _, v := range l.Data {
			walked = append(walked, v.Key+"#"+n.name(v.VersionID))
		}
		walked = append(walked, l.Prefixes...)
		if l.NextKeyMarker == "" {
			break
		}
		q = "per_page=1&delimiter=/&key_marker=" + url.QueryEscape(l.NextKeyMarker)
		if l.NextVersionIDMarker != "" {
			q += "&version_id_marker=" + l.NextVersionIDMarker
		}
	}
	if got, want := strings.Join(walked, " "), "a.txt#3 a.txt#2 a.txt#1 dir/ old.txt#null"; got != want {
		t.Errorf("walking the markers: got %s, want %s", got, want)
	}
}

// id is the version id of the a.txt version named name.
func (n ids) id(name string) string {
	for id, s := range n {
		if s == name {
			return id
		}
	}
	panic("no version " + name)
}

func TestListVersionsNeverVersioned(t *testing.T) {
	a := newObjAPI(t)
	a.put("b", []byte("1"))
	a.put("a", []byte("22"))
	if got, want := (ids{}).rendered(a.versions(a.acme, "pics", "")), "a#null* b#null* |   2"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestListVersionsChunks: a page far into a listing, and its total, are
// read in chunks of the store's listing; they agree with the markers.
func TestListVersionsChunks(t *testing.T) {
	a := newObjAPI(t)
	cloudapi.SetVersionChunk(t, 3)
	a.setVersioning(a.acme, "pics", `{"status":"Enabled"}`)
	for i := range 5 {
		a.put(fmt.Sprintf("k%d", i), []byte("v1"))
		a.put(fmt.Sprintf("k%d", i), []byte("v2"))
	}
	var byMarkers []string
	q := "per_page=4"
	for range 10 {
		l := a.versions(a.acme, "pics", q)
		if l.Meta.Total != 10-len(byMarkers) {
			t.Errorf("?%s: total %d, want %d", q, l.Meta.Total, 10-len(byMarkers))
		}
		for _, v := range l.Data {
			byMarkers = append(byMarkers, v.Key+"/"+v.VersionID)
		}
		if l.NextKeyMarker == "" {
			break
		}
		q = "per_page=4&key_marker=" + l.NextKeyMarker + "&version_id_marker=" + l.NextVersionIDMarker
	}
	var byPages []string
	for page := 1; page <= 10; page++ {
		l := a.versions(a.acme, "pics", fmt.Sprintf("per_page=1&page=%d", page))
		if l.Meta.Total != 10 {
			t.Errorf("page %d: total %d, want 10", page, l.Meta.Total)
		}
		for _, v := range l.Data {
			byPages = append(byPages, v.Key+"/"+v.VersionID)
		}
	}
	if got, want := strings.Join(byPages, " "), strings.Join(byMarkers, " "); got != want || len(byPages) != 10 {
		t.Errorf("pages:\n%s\nwant the markers' 10:\n%s", got, want)
	}
}

func TestListVersionsErrors(t *testing.T) {
	a := newObjAPI(t)
	other, _ := a.newKey("other")
	for _, tt := range []struct {
		name, key, path string
		status          int
		code            string
	}{
		{"limit and per_page", a.acme, "pics/versions?limit=2&per_page=2", http.StatusBadRequest, "validation_error"},
		{"per_page 0", a.acme, "pics/versions?per_page=0", http.StatusBadRequest, "validation_error"},
		{"per_page 101", a.acme, "pics/versions?per_page=101", http.StatusBadRequest, "validation_error"},
		{"limit 101", a.acme, "pics/versions?limit=101", http.StatusBadRequest, "validation_error"},
		{"limit not a number", a.acme, "pics/versions?limit=ten", http.StatusBadRequest, "validation_error"},
		{"page 0", a.acme, "pics/versions?page=0", http.StatusBadRequest, "validation_error"},
		{"version marker without key marker", a.acme, "pics/versions?version_id_marker=null", http.StatusBadRequest, "validation_error"},
		{"malformed version marker", a.acme, "pics/versions?key_marker=a&version_id_marker=v1", http.StatusBadRequest, "validation_error"},
		{"empty version marker", a.acme, "pics/versions?key_marker=a&version_id_marker=", http.StatusBadRequest, "validation_error"},
		{"missing bucket", a.acme, "nope/versions", http.StatusNotFound, "not_found"},
		{"impossible bucket name", a.acme, "NO/versions", http.StatusNotFound, "not_found"},
		{"another account's bucket", other, "pics/versions", http.StatusNotFound, "not_found"},
		{"no API key", "", "pics/versions", http.StatusUnauthorized, "unauthorized"},
	} {
		wantError(t, tt.name, a.do("GET", "/api/storage/buckets/"+tt.path, tt.key, ""), tt.status, tt.code)
	}
}

func TestDownloadVersion(t *testing.T) {
	a := newObjAPI(t)
	byName := versioned(t, a)
	other, _ := a.newKey("other")
	dl := func(key, objKey, id string, hdr ...string) response {
		return a.do("GET", "/api/storage/buckets/pics/download/"+objKey+"?version_id="+url.QueryEscape(id), key, "", hdr...)
	}
	for _, tt := range []struct{ key, name, body string }{
		{"a.txt", "a.txt#1", "first"},
		{"a.txt", "a.txt#2", "second!"},
		{"dir/x", "dir/x#1", "x"},
		{"old.txt", "old.txt#null", "old"},
	} {
		r := dl(a.acme, tt.key, byName[tt.name])
		if r.status != http.StatusOK || string(r.body) != tt.body {
			t.Errorf("%s: %d %q, want 200 %q", tt.name, r.status, r.body, tt.body)
		}
		if got, want := r.header.Get("ETag"), `"`+md5hex([]byte(tt.body))+`"`; got != want {
			t.Errorf("%s: ETag %s, want %s", tt.name, got, want)
		}
	}
	if r := dl(a.acme, "a.txt", byName["a.txt#2"], "Range", "bytes=0-2"); r.status != http.StatusPartialContent || string(r.body) != "sec" {
		t.Errorf("a range of a.txt#2: %d %q, want 206 \"sec\"", r.status, r.body)
	}
	if r := dl(a.acme, "old.txt", "null"); r.status != http.StatusOK {
		t.Errorf("version_id=null: %d, want 200", r.status)
	}
	wantError(t, "a.txt without a version: its latest is a marker", a.download(a.acme, "pics", "a.txt"), http.StatusNotFound, "not_found")

	wantVersionedBucket(t, "make public", a.do("PATCH", "/api/storage/buckets/pics/public", a.acme, `{"is_public":true}`), http.StatusOK)
	pre := a.wantPresigned("presign", a.presign(a.acme, "pics", `{"key":"dir/x","action":"download"}`))
	for _, tt := range []struct {
		name, key, objKey, id string
		status                int
		code, message         string
	}{
		{"a delete marker", a.acme, "a.txt", byName["a.txt#3"], http.StatusNotFound, "not_found", "delete marker"},
		{"a version the key lacks", a.acme, "a.txt", byName["dir/x#1"], http.StatusNotFound, "not_found", "has no version"},
		{"a null version the key lacks", a.acme, "a.txt", "null", http.StatusNotFound, "not_found", "has no version"},
		{"a missing key", a.acme, "nope", byName["a.txt#1"], http.StatusNotFound, "not_found", "has no version"},
		{"malformed", a.acme, "a.txt", "v1", http.StatusBadRequest, "validation_error", "no version id"},
		{"upper case", a.acme, "a.txt", strings.ToUpper(byName["a.txt#1"]), http.StatusBadRequest, "validation_error", "no version id"},
		{"empty", a.acme, "a.txt", "", http.StatusBadRequest, "validation_error", "no version id"},
		{"NULL", a.acme, "old.txt", "NULL", http.StatusBadRequest, "validation_error", "no version id"},
		{"anonymous, public bucket", "", "old.txt", "null", http.StatusUnauthorized, "unauthorized", "owner's API key"},
		{"another account, public bucket", other, "old.txt", "null", http.StatusNotFound, "not_found", "bucket"},
	} {
		r := dl(tt.key, tt.objKey, tt.id)
		wantError(t, tt.name, r, tt.status, tt.code)
		if !strings.Contains(string(r.body), tt.message) {
			t.Errorf("%s: %s, want a message saying %q", tt.name, r.body, tt.message)
		}
	}
	for _, tt := range []struct{ name, path string }{
		{"missing bucket", "/api/storage/buckets/nope/download/a.txt"},
		{"impossible bucket name", "/api/storage/buckets/NO/download/a.txt"},
	} {
		wantError(t, tt.name, a.do("GET", tt.path+"?version_id=null", a.acme, ""), http.StatusNotFound, "not_found")
	}
	// A presigned URL reads the current object, never a version.
	if r := a.do("GET", pre.URL, "", ""); r.status != http.StatusOK {
		t.Fatalf("presigned download: %d", r.status)
	}
	wantError(t, "presigned with a version", a.do("GET", pre.URL+"&version_id="+byName["dir/x#1"], "", ""), http.StatusForbidden, "forbidden")
	// Without version_id, the public bucket still serves its current objects.
	if r := a.download("", "pics", "old.txt"); r.status != http.StatusOK {
		t.Errorf("anonymous download of the current old.txt: %d, want 200", r.status)
	}
}

func TestDeleteVersionAPI(t *testing.T) {
	a := newObjAPI(t)
	byName := versioned(t, a)
	n := namesOf(byName)
	other, _ := a.newKey("other")
	del := func(key, bucket, objKey, id string) response {
		return a.do("DELETE", "/api/storage/buckets/"+bucket+"/objects/"+objKey+"?version_id="+url.QueryEscape(id), key, "")
	}
	for _, tt := range []struct {
		name, key, bucket, objKey, id string
		status                        int
		code                          string
	}{
		{"a version the key lacks", a.acme, "pics", "a.txt", byName["dir/x#1"], http.StatusNotFound, "not_found"},
		{"a missing key", a.acme, "pics", "nope", "null", http.StatusNotFound, "not_found"},
		{"malformed", a.acme, "pics", "a.txt", "latest", http.StatusBadRequest, "validation_error"},
		{"empty", a.acme, "pics", "a.txt", "", http.StatusBadRequest, "validation_error"},
		{"missing bucket", a.acme, "nope", "a.txt", "null", http.StatusNotFound, "not_found"},
		{"another account's bucket", other, "pics", "a.txt", byName["a.txt#1"], http.StatusNotFound, "not_found"},
		{"no API key", "", "pics", "a.txt", byName["a.txt#1"], http.StatusUnauthorized, "unauthorized"},
	} {
		wantError(t, tt.name, del(tt.key, tt.bucket, tt.objKey, tt.id), tt.status, tt.code)
	}
	if got, want := n.rendered(a.versions(a.acme, "pics", "prefix=a")), "a.txt#3*(M) a.txt#2 a.txt#1 |   3"; got != want {
		t.Fatalf("after the refusals: got %s, want %s", got, want)
	}
	// Deleting the delete marker brings the newest version back.
	for _, tt := range []struct{ name, listing, current string }{
		{"a.txt#3", "a.txt#2* a.txt#1 |   2", "second!"},
		{"a.txt#2", "a.txt#1* |   1", "first"},
	} {
		if r := del(a.acme, "pics", "a.txt", byName[tt.name]); r.status != http.StatusNoContent || len(r.body) != 0 {
			t.Fatalf("delete %s: %d %s, want 204", tt.name, r.status, r.body)
		}
		if got := n.rendered(a.versions(a.acme, "pics", "prefix=a")); got != tt.listing {
			t.Errorf("after deleting %s: got %s, want %s", tt.name, got, tt.listing)
		}
		a.wantBody("a.txt", []byte(tt.current))
	}
	wantError(t, "a version deleted already", del(a.acme, "pics", "a.txt", byName["a.txt#2"]), http.StatusNotFound, "not_found")

	// Without version_id a versioned bucket's delete makes a marker, also
	// for a key that has no object.
	for _, key := range []string{"dir/x", "never-was"} {
		if r := a.do("DELETE", "/api/storage/buckets/pics/objects/"+key, a.acme, ""); r.status != http.StatusNoContent {
			t.Errorf("delete %s: %d %s, want 204", key, r.status, r.body)
		}
		l := a.versions(a.acme, "pics", "prefix="+key)
		if len(l.Data) == 0 || !l.Data[0].DeleteMarker || !l.Data[0].IsLatest {
			t.Errorf("delete %s: versions %+v, want a delete marker first", key, l.Data)
		}
	}
	// The bucket goes once every version has.
	wantError(t, "delete the bucket with versions", a.do("DELETE", "/api/storage/buckets/pics", a.acme, ""), http.StatusConflict, "bucket_not_empty")
	for _, v := range a.versions(a.acme, "pics", "per_page=100").Data {
		if r := del(a.acme, "pics", keyPath(v.Key), v.VersionID); r.status != http.StatusNoContent {
			t.Errorf("delete %s %s: %d %s", v.Key, v.VersionID, r.status, r.body)
		}
	}
	if r := a.do("DELETE", "/api/storage/buckets/pics", a.acme, ""); r.status != http.StatusNoContent {
		t.Errorf("delete the emptied bucket: %d %s", r.status, r.body)
	}
}

// TestDeleteNullVersionUnversioned: in a bucket never versioned, an
// object is its null version, and deleting that deletes the object.
func TestDeleteNullVersionUnversioned(t *testing.T) {
	a := newObjAPI(t)
	a.put("a", []byte("12"))
	if r := a.do("DELETE", "/api/storage/buckets/pics/objects/a?version_id=null", a.acme, ""); r.status != http.StatusNoContent {
		t.Fatalf("delete the null version: %d %s", r.status, r.body)
	}
	if n, size := a.bucketCounts("pics"); n != 0 || size != 0 {
		t.Errorf("after: %d objects, %d bytes; want none", n, size)
	}
}

// TestObjectLockOverREST: a version that S3 Object Lock protects stays
// when the REST API deletes it (403 forbidden), and a bucket with
// Object Lock keeps its versioning enabled (409).
func TestObjectLockOverREST(t *testing.T) {
	a := newObjAPI(t)
	wantVersionedBucket(t, "enable", a.setVersioning(a.acme, "pics", `{"status":"Enabled"}`), http.StatusOK)
	if err := a.st.SetObjectLock("acme", "pics", cloudstore.ObjectLock{Mode: cloudstore.LockGovernance, Days: 1}); err != nil {
		t.Fatal(err)
	}
	a.put("a.txt", []byte("kept"))
	l := a.versions(a.acme, "pics", "prefix=a")
	if len(l.Data) != 1 {
		t.Fatalf("versions: %+v", l.Data)
	}
	r := a.do("DELETE", "/api/storage/buckets/pics/objects/a.txt?version_id="+url.QueryEscape(l.Data[0].VersionID), a.acme, "")
	wantError(t, "delete a retained version", r, http.StatusForbidden, "forbidden")
	wantError(t, "suspend versioning", a.setVersioning(a.acme, "pics", `{"status":"Suspended"}`), http.StatusConflict, "conflict")
	a.wantBody("a.txt", []byte("kept"))
}
