package cloudapi_test

// End-to-end tests of the REST API: a real cloudstore in a temporary
// directory, served over loopback HTTP, driven with real requests. Every
// answer's status, Content-Type and envelope are checked exactly.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/internal/testkit/apitest"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
)

// t0 is when every test's fake clock starts.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 123456789, time.UTC)

// clock is a fake clock the tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// testAPI is a served API over a fresh store.
type testAPI struct {
	t       *testing.T
	st      *cloudstore.Store
	acc     *accounts.Store
	url     string
	clock   *clock
	admin   string // the admin key's secret
	adminID string
}

// newAPI serves the API with opts; a nil opts.Now is the fake clock, and a
// zero RatePerSecond means no rate limit (the rate-limit test sets its own).
func newAPI(t *testing.T, opts cloudapi.Options) *testAPI {
	t.Helper()
	dir := t.TempDir()
	st, err := cloudstore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.OpenSecrets(filepath.Join(dir, "secret.key")); err != nil {
		t.Fatal(err)
	}
	if err := st.OpenBlobs(filepath.Join(dir, "objects")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.OpenKMS(bytes.Repeat([]byte{7}, 32), nil); err != nil {
		t.Fatal(err)
	}
	a := &testAPI{t: t, st: st, acc: apitest.Accounts(t), clock: &clock{now: t0}}
	st.SetClock(a.clock.Now)
	k, secret, err := a.acc.EnsureAdmin(t0, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	a.admin, a.adminID = secret, k.ID
	if opts.Now == nil {
		opts.Now = a.clock.Now
	}
	if opts.RatePerSecond == 0 {
		opts.RatePerSecond = -1
	}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(openapitest.Cloud.Handler(t, cloudapi.New(st, a.acc, opts)))
	a.url = srv.URL
	t.Cleanup(func() {
		srv.Close()
		st.Close()
	})
	return a
}

// response is one answer, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request with the API key (none if "") and a raw body (none if
// ""), with Content-Type application/json when there is a body.
func (a *testAPI) do(method, path, key, body string, hdr ...string) response {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.url+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return response{resp.StatusCode, resp.Header, data}
}

// newKey makes a key for account through the admin endpoint and returns
// its secret and ID.
func (a *testAPI) newKey(account string) (secret, id string) {
	a.t.Helper()
	r := a.do("POST", "/api/admin/keys", a.admin, fmt.Sprintf(`{"account":%q}`, account))
	if r.status != http.StatusCreated {
		a.t.Fatalf("create key for %s: %d %s", account, r.status, r.body)
	}
	var k cloudwire.APIKey
	if err := json.Unmarshal(r.body, &k); err != nil {
		a.t.Fatal(err)
	}
	return k.Secret, k.ID
}

// keysOf returns the top-level keys of a JSON object, sorted.
func keysOf(t *testing.T, data []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("not a JSON object: %s (%v)", data, err)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func wantJSON(t *testing.T, r response) {
	t.Helper()
	if got := r.header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", got)
	}
}

// wantError checks that r is the error envelope with status and code, and
// nothing else.
func wantError(t *testing.T, what string, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d, want %d (body %s)", what, r.status, status, r.body)
	}
	wantJSON(t, r)
	if got := strings.Join(keysOf(t, r.body), ","); got != "error" {
		t.Errorf("%s: body keys %s, want only error: %s", what, got, r.body)
		return
	}
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	json.Unmarshal(r.body, &env)
	if got := strings.Join(keysOf(t, env.Error), ","); got != "code,message" {
		t.Errorf("%s: error keys %s, want code,message: %s", what, got, r.body)
	}
	var e struct{ Code, Message string }
	if err := json.Unmarshal(env.Error, &e); err != nil {
		t.Fatalf("%s: error object %s: %v", what, env.Error, err)
	}
	if e.Code != code {
		t.Errorf("%s: error code %q, want %q (message %q)", what, e.Code, code, e.Message)
	}
	if e.Message == "" {
		t.Errorf("%s: empty error message", what)
	}
}

// wantBucket checks r is a Bucket with exactly the resource's fields, and
// returns it.
func wantBucket(t *testing.T, what string, r response, status int) cloudwire.Bucket {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d (body %s)", what, r.status, status, r.body)
	}
	wantJSON(t, r)
	if got, want := strings.Join(keysOf(t, r.body), ","), "created_at,is_public,name,notes,object_count,size_bytes,updated_at"; got != want {
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

// rfc3339 parses an RFC 3339 time of the API, which must be UTC.
func rfc3339(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Errorf("time %q is not RFC 3339: %v", s, err)
	}
	if !strings.HasSuffix(s, "Z") {
		t.Errorf("time %q is not UTC", s)
	}
	return tm
}

// list is a list envelope as it came.
type list[T any] struct {
	Data []T            `json:"data"`
	Meta cloudwire.Meta `json:"meta"`
}

// wantList checks r is a 200 list envelope with exactly data and meta and
// returns it.
func wantList[T any](t *testing.T, what string, r response) list[T] {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("%s: status %d, want 200 (body %s)", what, r.status, r.body)
	}
	wantJSON(t, r)
	if got := strings.Join(keysOf(t, r.body), ","); got != "data,meta" {
		t.Errorf("%s: list keys %s, want data,meta", what, got)
	}
	var raw struct {
		Data json.RawMessage `json:"data"`
		Meta json.RawMessage `json:"meta"`
	}
	json.Unmarshal(r.body, &raw)
	if got := strings.Join(keysOf(t, raw.Meta), ","); got != "page,per_page,total" {
		t.Errorf("%s: meta keys %s, want page,per_page,total", what, got)
	}
	if !bytes.HasPrefix(raw.Data, []byte("[")) {
		t.Errorf("%s: data = %s, want an array", what, raw.Data)
	}
	var l list[T]
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		t.Fatalf("%s: %s: %v", what, r.body, err)
	}
	return l
}

func TestAuthentication(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	tests := []struct {
		name, auth string
	}{
		{"no header", ""},
		{"empty bearer", "Bearer "},
		{"bearer without a space", "Bearer" + acme},
		{"basic scheme", "Basic " + acme},
		{"key without scheme", acme},
		{"wrong prefix", "Bearer lat_test_" + acme[len("lat_live_"):]},
		{"prefix only", "Bearer lat_live_"},
		{"malformed", "Bearer not-a-key"},
		{"unknown key", "Bearer lat_live_" + strings.Repeat("0", 40)},
		{"truncated key", "Bearer " + acme[:len(acme)-1]},
		{"key with extra character", "Bearer " + acme + "x"},
		{"two spaces", "Bearer  " + acme},
	}
	for _, tt := range tests {
		for _, path := range []string{"/api/storage/buckets", "/api/admin/keys", "/api/nowhere"} {
			r := a.do("GET", path, "", "", "Authorization", tt.auth)
			wantError(t, tt.name+" "+path, r, http.StatusUnauthorized, "unauthorized")
			if r.header.Get("X-Request-Id") == "" {
				t.Errorf("%s: 401 without X-Request-Id", tt.name)
			}
		}
	}
	// A good key passes, whatever the case of the scheme (RFC 9110).
	if r := a.do("GET", "/api/storage/buckets", acme, ""); r.status != http.StatusOK {
		t.Errorf("GET buckets with a good key: %d %s", r.status, r.body)
	}
	if r := a.do("GET", "/api/storage/buckets", "", "", "Authorization", "bearer "+acme); r.status != http.StatusOK {
		t.Errorf("lowercase bearer scheme: %d %s", r.status, r.body)
	}
	if r := a.do("GET", "/api/storage/buckets", "", ""); r.header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
}

func TestContentTypeIsExact(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	for ct, want := range map[string]int{
		"application/json":                http.StatusCreated,
		"application/json; charset=utf-8": http.StatusCreated,
		"application/jsonx":               http.StatusBadRequest,
		"text/plain":                      http.StatusBadRequest,
	} {
		name := fmt.Sprintf("ct-%d", len(ct))
		r := a.do("POST", "/api/storage/buckets", acme, `{"name":"`+name+`"}`, "Content-Type", ct)
		if r.status != want {
			t.Errorf("Content-Type %q: status %d, want %d (%s)", ct, r.status, want, r.body)
		}
	}
}

// TestRateLimitIdleRefill: an idle account refills at the rate, not all
// at once when the limiter forgets it.
func TestRateLimitIdleRefill(t *testing.T) {
	c := &clock{now: t0}
	a := newAPI(t, cloudapi.Options{RatePerSecond: 1, Burst: 100, Now: c.Now})
	_, acme, err := a.acc.CreateKey("acme", "", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		a.do("GET", "/api/storage/buckets", acme, "")
	}
	c.Advance(61 * time.Second)
	ok := 0
	for range 100 {
		if a.do("GET", "/api/storage/buckets", acme, "").status == http.StatusOK {
			ok++
		}
	}
	if ok > 62 {
		t.Errorf("after 61 idle seconds at 1/s, %d requests passed; want at most 62", ok)
	}
}

func TestRevokedKeyFailsAtOnce(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, id := a.newKey("acme")
	other, _ := a.newKey("acme")
	if r := a.do("GET", "/api/storage/buckets", acme, ""); r.status != http.StatusOK {
		t.Fatalf("before revoking: %d %s", r.status, r.body)
	}
	if r := a.do("DELETE", "/api/admin/keys/"+id, a.admin, ""); r.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	// The very next request fails, for every endpoint.
	wantError(t, "revoked key", a.do("GET", "/api/storage/buckets", acme, ""), http.StatusUnauthorized, "unauthorized")
	wantError(t, "revoked key, POST", a.do("POST", "/api/storage/buckets", acme, `{"name":"after-revoke"}`), http.StatusUnauthorized, "unauthorized")
	if _, err := a.st.Bucket("acme", "after-revoke"); err == nil {
		t.Errorf("a revoked key created a bucket")
	}
	// The account's other key still works.
	if r := a.do("GET", "/api/storage/buckets", other, ""); r.status != http.StatusOK {
		t.Errorf("the account's other key after revoking one: %d %s", r.status, r.body)
	}
}

func TestAdminOnly(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, acmeID := a.newKey("acme")
	tests := []struct {
		method, path, body string
	}{
		{"GET", "/api/admin/keys", ""},
		{"GET", "/api/admin/keys?account=acme", ""},
		{"POST", "/api/admin/keys", `{"account":"acme"}`},
		{"POST", "/api/admin/keys", `{"account":"admin"}`},
		{"DELETE", "/api/admin/keys/" + acmeID, ""},
		{"DELETE", "/api/admin/keys/" + a.adminID, ""},
		{"DELETE", "/api/admin/keys/key_unknown", ""},
	}
	for _, tt := range tests {
		r := a.do(tt.method, tt.path, acme, tt.body)
		wantError(t, tt.method+" "+tt.path+" as acme", r, http.StatusForbidden, "forbidden")
	}
	// Nothing changed: acme's key still works, no key was made.
	if r := a.do("GET", "/api/storage/buckets", acme, ""); r.status != http.StatusOK {
		t.Errorf("acme's key after its admin attempts: %d", r.status)
	}
	if keys, _ := a.acc.Keys(""); len(keys) != 2 {
		t.Errorf("%d keys after forbidden attempts, want 2", len(keys))
	}
}

func TestCreateBucket(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	r := a.do("POST", "/api/storage/buckets", acme, `{"name":"photos","notes":"holiday 2026"}`)
	b := wantBucket(t, "create", r, http.StatusCreated)
	want := cloudwire.Bucket{Name: "photos", Notes: "holiday 2026", CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt}
	if b != want {
		t.Errorf("created bucket = %+v, want %+v", b, want)
	}
	if got := rfc3339(t, b.CreatedAt); !got.Equal(t0) {
		t.Errorf("created_at = %s, want %s", b.CreatedAt, t0.Format(time.RFC3339Nano))
	}
	if got := rfc3339(t, b.UpdatedAt); !got.Equal(t0) {
		t.Errorf("updated_at = %s, want %s", b.UpdatedAt, t0.Format(time.RFC3339Nano))
	}
	// The raw JSON carries the types of the resource.
	var raw map[string]any
	json.Unmarshal(r.body, &raw)
	if raw["is_public"] != false || raw["object_count"] != float64(0) || raw["size_bytes"] != float64(0) {
		t.Errorf("created bucket JSON = %s", r.body)
	}

	// Notes are optional; a Content-Type with parameters is fine.
	r = a.do("POST", "/api/storage/buckets", acme, `{"name":"no-notes"}`, "Content-Type", "application/json; charset=utf-8")
	if b := wantBucket(t, "create without notes", r, http.StatusCreated); b.Notes != "" || b.Name != "no-notes" {
		t.Errorf("bucket without notes = %+v", b)
	}
	// So is no Content-Type at all.
	r = a.do("POST", "/api/storage/buckets", acme, `{"name":"no-type"}`, "Content-Type", "")
	wantBucket(t, "create without Content-Type", r, http.StatusCreated)
	// Notes of exactly the limit.
	r = a.do("POST", "/api/storage/buckets", acme, fmt.Sprintf(`{"name":"full-notes","notes":%q}`, strings.Repeat("n", cloudwire.MaxNotes)))
	wantBucket(t, "create with 1024 bytes of notes", r, http.StatusCreated)

	// GET answers the same resource.
	got := wantBucket(t, "get", a.do("GET", "/api/storage/buckets/photos", acme, ""), http.StatusOK)
	if got != b {
		t.Errorf("GET = %+v", got)
	}
}

func TestCreateBucketValidation(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	tests := []struct {
		name, body string
		hdr        []string
	}{
		{"short name", `{"name":"ab"}`, nil},
		{"empty name", `{"name":""}`, nil},
		{"no name", `{"notes":"x"}`, nil},
		{"long name", fmt.Sprintf(`{"name":%q}`, strings.Repeat("a", 64)), nil},
		{"uppercase", `{"name":"Photos"}`, nil},
		{"underscore", `{"name":"my_photos"}`, nil},
		{"leading hyphen", `{"name":"-photos"}`, nil},
		{"trailing dot", `{"name":"photos."}`, nil},
		{"adjacent dots", `{"name":"pho..tos"}`, nil},
		{"IPv4", `{"name":"192.168.1.1"}`, nil},
		{"xn-- prefix", `{"name":"xn--photos"}`, nil},
		{"-s3alias suffix", `{"name":"photos-s3alias"}`, nil},
		{"notes too long", fmt.Sprintf(`{"name":"photos","notes":%q}`, strings.Repeat("n", cloudwire.MaxNotes+1)), nil},
		{"malformed JSON", `{"name":"photos"`, nil},
		{"not JSON", `name=photos`, nil},
		{"array", `[{"name":"photos"}]`, nil},
		{"string", `"photos"`, nil},
		{"null", `null`, nil},
		{"number name", `{"name":5}`, nil},
		{"unknown field", `{"name":"photos","colour":"red"}`, nil},
		{"field in capitals", `{"NAME":"photos"}`, nil},
		{"field given twice", `{"name":"photos","name":"photos2"}`, nil},
		{"second object", `{"name":"photos"} {"name":"photos2"}`, nil},
		{"trailing garbage", `{"name":"photos"}x`, nil},
		{"trailing brace", `{"name":"photos"}}`, nil},
		{"trailing bracket", `{"name":"photos"}]`, nil},
		{"empty body", ``, nil},
		{"whitespace body", "  \n", nil},
		{"text/plain", `{"name":"photos"}`, []string{"Content-Type", "text/plain"}},
		{"form", `{"name":"photos"}`, []string{"Content-Type", "application/x-www-form-urlencoded"}},
	}
	for _, tt := range tests {
		var r response
		if tt.body == "" {
			r = a.do("POST", "/api/storage/buckets", acme, "", append([]string{"Content-Type", "application/json"}, tt.hdr...)...)
		} else {
			r = a.do("POST", "/api/storage/buckets", acme, tt.body, tt.hdr...)
		}
		wantError(t, tt.name, r, http.StatusBadRequest, "validation_error")
	}
	// None of them created a bucket.
	if l := wantList[cloudwire.Bucket](t, "list", a.do("GET", "/api/storage/buckets", acme, "")); l.Meta.Total != 0 {
		t.Errorf("invalid requests created %d buckets: %+v", l.Meta.Total, l.Data)
	}
	// A wrong JSON type is told in JSON's terms, not Go's.
	if r := a.do("POST", "/api/storage/buckets", acme, `{"name":5}`); !strings.Contains(string(r.body), "name: want a string, got a number") {
		t.Errorf(`{"name":5}: %d %s, want "name: want a string, got a number"`, r.status, r.body)
	}
	// Trailing white space is fine.
	wantBucket(t, "trailing space", a.do("POST", "/api/storage/buckets", acme, "{\"name\":\"photos\"}\n\n "), http.StatusCreated)
}

func TestPayloadTooLarge(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	// Just over 1 MiB of otherwise valid JSON: 413.
	big := `{"name":"photos","notes":"` + strings.Repeat("n", 1<<20) + `"}`
	wantError(t, "1 MiB of notes", a.do("POST", "/api/storage/buckets", acme, big), http.StatusRequestEntityTooLarge, "payload_too_large")
	wantError(t, "1 MiB PATCH", a.do("PATCH", "/api/storage/buckets/photos", acme, big), http.StatusRequestEntityTooLarge, "payload_too_large")
	// Just under 1 MiB is read (and then refused for its notes, not its size).
	under := `{"name":"photos","notes":"` + strings.Repeat("n", 1<<20-40) + `"}`
	if len(under) > 1<<20 {
		t.Fatalf("test body is %d bytes", len(under))
	}
	wantError(t, "almost 1 MiB", a.do("POST", "/api/storage/buckets", acme, under), http.StatusBadRequest, "validation_error")
	if _, err := a.st.Bucket("acme", "photos"); err == nil {
		t.Errorf("an oversized request created a bucket")
	}

	// Over it by trailing white space alone is over it still (not "data
	// after the object").
	wantError(t, "1 MiB of trailing space", a.do("POST", "/api/storage/buckets", acme, `{"name":"photos"}`+strings.Repeat(" ", 1<<20)),
		http.StatusRequestEntityTooLarge, "payload_too_large")

	// MaxBody is an option.
	b := newAPI(t, cloudapi.Options{MaxBody: 64})
	acme, _ = b.newKey("acme")
	wantError(t, "over MaxBody", b.do("POST", "/api/storage/buckets", acme, fmt.Sprintf(`{"name":"photos","notes":%q}`, strings.Repeat("n", 64))),
		http.StatusRequestEntityTooLarge, "payload_too_large")
	wantBucket(t, "under MaxBody", b.do("POST", "/api/storage/buckets", acme, `{"name":"photos"}`), http.StatusCreated)
}

func TestBucketNameConflict(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	globex, _ := a.newKey("globex")
	wantBucket(t, "create", a.do("POST", "/api/storage/buckets", acme, `{"name":"shared","notes":"acme's"}`), http.StatusCreated)
	wantError(t, "same account", a.do("POST", "/api/storage/buckets", acme, `{"name":"shared"}`), http.StatusConflict, "conflict")
	wantError(t, "other account", a.do("POST", "/api/storage/buckets", globex, `{"name":"shared","notes":"globex's"}`), http.StatusConflict, "conflict")
	// acme still owns it, unchanged; globex has nothing.
	b := wantBucket(t, "get", a.do("GET", "/api/storage/buckets/shared", acme, ""), http.StatusOK)
	if b.Notes != "acme's" {
		t.Errorf("after the conflicts, notes = %q, want acme's", b.Notes)
	}
	if l := wantList[cloudwire.Bucket](t, "globex's list", a.do("GET", "/api/storage/buckets", globex, "")); l.Meta.Total != 0 {
		t.Errorf("globex has %d buckets after a conflict", l.Meta.Total)
	}
}

func TestBucketTenancy(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	globex, _ := a.newKey("globex")
	wantBucket(t, "create", a.do("POST", "/api/storage/buckets", acme, `{"name":"acme-data","notes":"private"}`), http.StatusCreated)

	requests := []struct {
		method, suffix, body string
	}{
		{"GET", "", ""},
		{"PATCH", "", `{"notes":"pwned"}`},
		{"PATCH", "/public", `{"is_public":true}`},
		{"DELETE", "", ""},
	}
	for _, rq := range requests {
		theirs := a.do(rq.method, "/api/storage/buckets/acme-data"+rq.suffix, globex, rq.body)
		missing := a.do(rq.method, "/api/storage/buckets/no-such-bucket"+rq.suffix, globex, rq.body)
		invalid := a.do(rq.method, "/api/storage/buckets/Not_Valid"+rq.suffix, globex, rq.body)
		what := rq.method + " " + rq.suffix
		wantError(t, what+" another account's bucket", theirs, http.StatusNotFound, "not_found")
		wantError(t, what+" a missing bucket", missing, http.StatusNotFound, "not_found")
		wantError(t, what+" an invalid name", invalid, http.StatusNotFound, "not_found")
		// Identical answers: nothing tells the name exists.
		if !bytes.Equal(theirs.body, missing.body) || !bytes.Equal(theirs.body, invalid.body) {
			t.Errorf("%s: another account's bucket answers %s, a missing one %s, an invalid name %s", what, theirs.body, missing.body, invalid.body)
		}
		for _, h := range []string{"Content-Type", "Content-Length", "Allow", "Retry-After"} {
			if theirs.header.Get(h) != missing.header.Get(h) {
				t.Errorf("%s: header %s differs: %q vs %q", what, h, theirs.header.Get(h), missing.header.Get(h))
			}
		}
	}
	// The bucket is untouched, and absent from globex's list.
	b := wantBucket(t, "get", a.do("GET", "/api/storage/buckets/acme-data", acme, ""), http.StatusOK)
	if b.Notes != "private" || b.IsPublic || b.UpdatedAt != b.CreatedAt {
		t.Errorf("acme's bucket after globex's attempts = %+v", b)
	}
	if l := wantList[cloudwire.Bucket](t, "globex's list", a.do("GET", "/api/storage/buckets", globex, "")); l.Meta.Total != 0 || len(l.Data) != 0 {
		t.Errorf("globex's list = %+v", l)
	}
}

func TestBucketUpdateAndDelete(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	wantBucket(t, "create", a.do("POST", "/api/storage/buckets", acme, `{"name":"photos","notes":"old"}`), http.StatusCreated)

	a.clock.Advance(time.Hour)
	t1 := t0.Add(time.Hour)
	b := wantBucket(t, "patch notes", a.do("PATCH", "/api/storage/buckets/photos", acme, `{"notes":"new"}`), http.StatusOK)
	if b.Notes != "new" || b.IsPublic || !rfc3339(t, b.CreatedAt).Equal(t0) || !rfc3339(t, b.UpdatedAt).Equal(t1) {
		t.Errorf("after PATCH notes: %+v, want notes new, created %v, updated %v", b, t0, t1)
	}

	a.clock.Advance(time.Hour)
	t2 := t1.Add(time.Hour)
	b = wantBucket(t, "public on", a.do("PATCH", "/api/storage/buckets/photos/public", acme, `{"is_public":true}`), http.StatusOK)
	if !b.IsPublic || b.Notes != "new" || !rfc3339(t, b.UpdatedAt).Equal(t2) || !rfc3339(t, b.CreatedAt).Equal(t0) {
		t.Errorf("after public on: %+v", b)
	}
	if got := wantBucket(t, "get", a.do("GET", "/api/storage/buckets/photos", acme, ""), http.StatusOK); got != b {
		t.Errorf("GET after PATCH = %+v, want %+v", got, b)
	}
	b = wantBucket(t, "public off", a.do("PATCH", "/api/storage/buckets/photos/public", acme, `{"is_public":false}`), http.StatusOK)
	if b.IsPublic {
		t.Errorf("after public off: %+v", b)
	}
	b = wantBucket(t, "clear notes", a.do("PATCH", "/api/storage/buckets/photos", acme, `{"notes":""}`), http.StatusOK)
	if b.Notes != "" {
		t.Errorf("after clearing notes: %+v", b)
	}

	bad := []struct {
		name, path, body string
	}{
		{"notes missing", "", `{}`},
		{"notes null", "", `{"notes":null}`},
		{"notes a number", "", `{"notes":1}`},
		{"notes too long", "", fmt.Sprintf(`{"notes":%q}`, strings.Repeat("n", cloudwire.MaxNotes+1))},
		{"is_public in notes patch", "", `{"notes":"x","is_public":true}`},
		{"is_public missing", "/public", `{}`},
		{"is_public null", "/public", `{"is_public":null}`},
		{"is_public a string", "/public", `{"is_public":"true"}`},
		{"is_public a number", "/public", `{"is_public":1}`},
		{"notes in public patch", "/public", `{"is_public":true,"notes":"x"}`},
		{"malformed", "/public", `{"is_public":`},
	}
	for _, tt := range bad {
		wantError(t, tt.name, a.do("PATCH", "/api/storage/buckets/photos"+tt.path, acme, tt.body), http.StatusBadRequest, "validation_error")
	}
	if got := wantBucket(t, "get", a.do("GET", "/api/storage/buckets/photos", acme, ""), http.StatusOK); got != b {
		t.Errorf("bad PATCHes changed the bucket: %+v, want %+v", got, b)
	}

	// A bucket that holds objects is not deleted.
	if _, err := a.st.UpdateBucket("acme", "photos", t2, func(b *cloudstore.Bucket) { b.Objects, b.Bytes = 2, 300 }); err != nil {
		t.Fatal(err)
	}
	b = wantBucket(t, "get full", a.do("GET", "/api/storage/buckets/photos", acme, ""), http.StatusOK)
	if b.ObjectCount != 2 || b.SizeBytes != 300 {
		t.Errorf("object_count, size_bytes = %d, %d; want 2, 300", b.ObjectCount, b.SizeBytes)
	}
	wantError(t, "delete full", a.do("DELETE", "/api/storage/buckets/photos", acme, ""), http.StatusConflict, "bucket_not_empty")
	if _, err := a.st.UpdateBucket("acme", "photos", t2, func(b *cloudstore.Bucket) { b.Objects, b.Bytes = 0, 0 }); err != nil {
		t.Fatal(err)
	}

	r := a.do("DELETE", "/api/storage/buckets/photos", acme, "")
	if r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Errorf("DELETE = %d %q, want 204 and no body", r.status, r.body)
	}
	wantError(t, "get deleted", a.do("GET", "/api/storage/buckets/photos", acme, ""), http.StatusNotFound, "not_found")
	wantError(t, "delete again", a.do("DELETE", "/api/storage/buckets/photos", acme, ""), http.StatusNotFound, "not_found")
	wantError(t, "patch deleted", a.do("PATCH", "/api/storage/buckets/photos", acme, `{"notes":"x"}`), http.StatusNotFound, "not_found")
	// The name is free again.
	wantBucket(t, "recreate", a.do("POST", "/api/storage/buckets", acme, `{"name":"photos"}`), http.StatusCreated)
}

func TestPagination(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	globex, _ := a.newKey("globex")
	const n = 45
	var all []string
	for i := n - 1; i >= 0; i-- { // created out of order; listed by name
		name := fmt.Sprintf("bucket-%02d", i)
		if _, err := a.st.CreateBucket("acme", name, "", t0); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		all = append(all, fmt.Sprintf("bucket-%02d", i))
	}
	if _, err := a.st.CreateBucket("globex", "globex-only", "", t0); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query             string
		page, per, lo, hi int // meta page and per_page; data is all[lo:hi]
	}{
		{"", 1, 20, 0, 20},
		{"?page=1", 1, 20, 0, 20},
		{"?page=2", 2, 20, 20, 40},
		{"?page=3", 3, 20, 40, 45},
		{"?page=4", 4, 20, 45, 45},
		{"?page=1000", 1000, 20, 45, 45},
		{"?per_page=1", 1, 1, 0, 1},
		{"?per_page=100", 1, 100, 0, 45},
		{"?per_page=45", 1, 45, 0, 45},
		{"?per_page=44&page=2", 2, 44, 44, 45},
		{"?page=7&per_page=7", 7, 7, 42, 45},
		{"?page=3&per_page=10", 3, 10, 20, 30},
		{"?per_page=20&page=2&other=x", 2, 20, 20, 40},
	}
	for _, tt := range tests {
		l := wantList[cloudwire.Bucket](t, tt.query, a.do("GET", "/api/storage/buckets"+tt.query, acme, ""))
		if l.Meta != (cloudwire.Meta{Total: n, Page: tt.page, PerPage: tt.per}) {
			t.Errorf("%q: meta = %+v, want total %d, page %d, per_page %d", tt.query, l.Meta, n, tt.page, tt.per)
		}
		var got []string
		for _, b := range l.Data {
			got = append(got, b.Name)
		}
		if strings.Join(got, ",") != strings.Join(all[tt.lo:tt.hi], ",") {
			t.Errorf("%q: data = %v, want %v", tt.query, got, all[tt.lo:tt.hi])
		}
	}
	// An empty page is [], not null.
	r := a.do("GET", "/api/storage/buckets?page=99", acme, "")
	if !bytes.Contains(r.body, []byte(`"data":[]`)) {
		t.Errorf("a page past the end = %s, want data []", r.body)
	}
	// Another account sees only its own.
	l := wantList[cloudwire.Bucket](t, "globex", a.do("GET", "/api/storage/buckets", globex, ""))
	if l.Meta.Total != 1 || len(l.Data) != 1 || l.Data[0].Name != "globex-only" {
		t.Errorf("globex's list = %+v", l)
	}

	for _, q := range []string{
		"page=0", "page=-1", "page=abc", "page=", "page=1.5", "page=1e3", "page=99999999999999999999",
		"per_page=0", "per_page=101", "per_page=-1", "per_page=abc", "per_page=", "per_page=20.0",
		"page=1&per_page=1000", "page=0&per_page=0",
	} {
		for _, path := range []string{"/api/storage/buckets?", "/api/admin/keys?"} {
			key := acme
			if strings.HasPrefix(path, "/api/admin") {
				key = a.admin
			}
			wantError(t, path+q, a.do("GET", path+q, key, ""), http.StatusBadRequest, "validation_error")
		}
	}
}

func TestRateLimit(t *testing.T) {
	c := &clock{now: t0}
	a := newAPI(t, cloudapi.Options{RatePerSecond: 1, Burst: 2, Now: c.Now})
	// Keys straight from the store, so that making them spends no tokens.
	_, acme, err := a.acc.CreateKey("acme", "", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	_, acme2, err := a.acc.CreateKey("acme", "second", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	_, globex, err := a.acc.CreateKey("globex", "", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	get := func(key string) response { return a.do("GET", "/api/storage/buckets", key, "") }
	wantOK := func(what string, r response) {
		t.Helper()
		if r.status != http.StatusOK {
			t.Errorf("%s: %d %s, want 200", what, r.status, r.body)
		}
	}
	wantLimited := func(what string, r response) {
		t.Helper()
		wantError(t, what, r, http.StatusTooManyRequests, "rate_limited")
		ra, err := strconv.Atoi(r.header.Get("Retry-After"))
		if err != nil || ra < 1 {
			t.Errorf("%s: Retry-After = %q, want whole seconds >= 1", what, r.header.Get("Retry-After"))
		}
	}

	wantOK("first", get(acme))
	wantOK("second", get(acme))
	r := get(acme)
	wantLimited("third", r)
	if got := r.header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1 (one token a second)", got)
	}
	// The limit is the account's, whichever of its keys is used, and
	// whatever the endpoint (even unknown ones).
	wantLimited("acme's other key", get(acme2))
	wantLimited("acme, POST", a.do("POST", "/api/storage/buckets", acme, `{"name":"limited"}`))
	wantLimited("acme, unknown path", a.do("GET", "/api/nowhere", acme, ""))
	if _, err := a.st.Bucket("acme", "limited"); err == nil {
		t.Errorf("a rate-limited request created a bucket")
	}
	// Other accounts are not affected.
	wantOK("globex first", get(globex))
	wantOK("globex second", get(globex))
	wantLimited("globex third", get(globex))
	// Failed authentication spends nobody's tokens and is 401, not 429.
	wantError(t, "bad key", get("lat_live_"+strings.Repeat("x", 40)), http.StatusUnauthorized, "unauthorized")

	// Half a second refills half a token: still limited.
	c.Advance(500 * time.Millisecond)
	wantLimited("after 0.5 s", get(acme))
	// Time refills the bucket: one token a second...
	c.Advance(500 * time.Millisecond)
	wantOK("after 1 s", get(acme))
	wantLimited("after 1 s, again", get(acme))
	// ...up to the burst, however long the wait.
	c.Advance(30 * time.Second)
	wantOK("after 30 s, 1", get(acme))
	wantOK("after 30 s, 2", get(acme))
	wantLimited("after 30 s, 3", get(acme))
}

func TestRetryAfterRoundsUp(t *testing.T) {
	c := &clock{now: t0}
	a := newAPI(t, cloudapi.Options{RatePerSecond: 0.25, Burst: 1, Now: c.Now})
	_, acme, err := a.acc.CreateKey("acme", "", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	if r := a.do("GET", "/api/storage/buckets", acme, ""); r.status != http.StatusOK {
		t.Fatalf("first: %d", r.status)
	}
	tests := []struct {
		advance time.Duration
		want    string
	}{
		{0, "4"},
		{time.Second, "3"},
		{1500 * time.Millisecond, "2"}, // 1.5 s left: rounds up
		{1400 * time.Millisecond, "1"}, // 0.1 s left
	}
	for _, tt := range tests {
		c.Advance(tt.advance)
		r := a.do("GET", "/api/storage/buckets", acme, "")
		wantError(t, "limited", r, http.StatusTooManyRequests, "rate_limited")
		if got := r.header.Get("Retry-After"); got != tt.want {
			t.Errorf("after %v more: Retry-After = %q, want %q", tt.advance, got, tt.want)
		}
	}
	c.Advance(100 * time.Millisecond)
	if r := a.do("GET", "/api/storage/buckets", acme, ""); r.status != http.StatusOK {
		t.Errorf("after waiting Retry-After out: %d %s", r.status, r.body)
	}
}

func TestRequestID(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	generated := regexp.MustCompile(`^[0-9a-f]{16}$`)
	tests := []struct {
		name, sent string
		echoed     bool
	}{
		{"valid", "req-123", true},
		{"all allowed characters", "AZaz09._-", true},
		{"64 characters", strings.Repeat("r", 64), true},
		{"1 character", "r", true},
		{"absent", "", false},
		{"65 characters", strings.Repeat("r", 65), false},
		{"space", "req 123", false},
		{"slash", "req/123", false},
		{"colon", "req:123", false},
		{"non-ASCII", "r\u00e9q", false},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		for _, key := range []string{acme, ""} { // on success and on 401
			r := a.do("GET", "/api/storage/buckets", key, "", "X-Request-Id", tt.sent)
			got := r.header.Get("X-Request-Id")
			if tt.echoed {
				if got != tt.sent {
					t.Errorf("%s: X-Request-Id = %q, want %q echoed", tt.name, got, tt.sent)
				}
				continue
			}
			if !generated.MatchString(got) {
				t.Errorf("%s: X-Request-Id = %q, want a generated one (16 hex digits)", tt.name, got)
			}
			if seen[got] {
				t.Errorf("%s: generated X-Request-Id %q twice", tt.name, got)
			}
			seen[got] = true
		}
	}
	// Errors carry it too.
	r := a.do("GET", "/api/storage/buckets/missing", acme, "", "X-Request-Id", "trace-404")
	if got := r.header.Get("X-Request-Id"); got != "trace-404" {
		t.Errorf("404: X-Request-Id = %q, want trace-404", got)
	}
}

func TestUnknownPathAndMethod(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	// Nor a download with no key, which ServeMux would redirect, with or
	// without an API key.
	wantError(t, "GET .../download", a.do("GET", "/api/storage/buckets/photos/download", acme, ""), http.StatusNotFound, "not_found")
	wantError(t, "GET .../download without an API key", a.do("GET", "/api/storage/buckets/photos/download", "", ""), http.StatusUnauthorized, "unauthorized")
	for _, path := range []string{
		"/", "/api", "/api/", "/api/storage", "/api/compute",
		"/api/storage/buckets/photos/metrics/nope", "/api/storage/buckets/photos/presign/x",
		"/api/admin", "/api/admin/accounts", "/nope",
	} {
		wantError(t, "GET "+path, a.do("GET", path, acme, ""), http.StatusNotFound, "not_found")
	}
	tests := []struct {
		method, path, allow string
	}{
		{"PUT", "/api/storage/buckets", "GET, POST"},
		{"DELETE", "/api/storage/buckets", "GET, POST"},
		{"PATCH", "/api/storage/buckets", "GET, POST"},
		{"POST", "/api/storage/buckets/photos", "GET, PATCH, DELETE"},
		{"PUT", "/api/storage/buckets/photos", "GET, PATCH, DELETE"},
		{"GET", "/api/storage/buckets/photos/public", "PATCH"},
		{"POST", "/api/storage/buckets/photos/public", "PATCH"},
		{"PUT", "/api/admin/keys", "GET, POST"},
		{"GET", "/api/admin/keys/key_x", "DELETE"},
		{"GET", "/api/storage/buckets/photos/presign", "POST"},
		{"GET", "/api/storage/buckets/photos/download-zip", "POST"},
		{"POST", "/api/storage/buckets/photos/download/a", "GET"},
		{"GET", "/api/storage/buckets/photos/objects/a", "PUT, DELETE"},
		{"POST", "/api/storage/buckets/photos/events", "GET"},
		{"DELETE", "/api/storage/endpoint", "GET"},
		// The {key...} routes with no key: ServeMux would redirect to
		// .../objects/, the API answers for the path asked.
		{"PUT", "/api/storage/buckets/photos/objects", "GET"},
		{"DELETE", "/api/storage/buckets/photos/objects", "GET"},
	}
	for _, tt := range tests {
		r := a.do(tt.method, tt.path, a.admin, "")
		wantError(t, tt.method+" "+tt.path, r, http.StatusMethodNotAllowed, "method_not_allowed")
		if got := r.header.Get("Allow"); got != tt.allow {
			t.Errorf("%s %s: Allow = %q, want %q", tt.method, tt.path, got, tt.allow)
		}
	}
}

func TestAdminKeys(t *testing.T) {
	a := newAPI(t, cloudapi.Options{})
	a.clock.Advance(time.Minute)
	r := a.do("POST", "/api/admin/keys", a.admin, `{"account":"acme","name":"ci"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("create key: %d %s", r.status, r.body)
	}
	wantJSON(t, r)
	if got, want := strings.Join(keysOf(t, r.body), ","), "account,admin,created_at,id,name,prefix,revoked,secret"; got != want {
		t.Errorf("created key fields %s, want %s", got, want)
	}
	var k cloudwire.APIKey
	if err := json.Unmarshal(r.body, &k); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^lat_live_[0-9A-Za-z]{40}$`).MatchString(k.Secret) {
		t.Errorf("secret = %q, want lat_live_ and 40 base62 characters", k.Secret)
	}
	if !regexp.MustCompile(`^key_[0-9A-Za-z]{16}$`).MatchString(k.ID) {
		t.Errorf("id = %q", k.ID)
	}
	if k.Account != "acme" || k.Name != "ci" || k.Admin || k.Revoked || k.RevokedAt != "" || k.Prefix != k.Secret[:13] {
		t.Errorf("created key = %+v", k)
	}
	if !rfc3339(t, k.CreatedAt).Equal(t0.Add(time.Minute)) {
		t.Errorf("created_at = %s, want %s", k.CreatedAt, t0.Add(time.Minute).Format(time.RFC3339Nano))
	}
	// The new key works, for its account.
	wantBucket(t, "create with the new key", a.do("POST", "/api/storage/buckets", k.Secret, `{"name":"acme-b"}`), http.StatusCreated)
	if _, err := a.st.Bucket("acme", "acme-b"); err != nil {
		t.Errorf("the new key's bucket is not acme's: %v", err)
	}

	a.clock.Advance(time.Minute)
	globexSecret, globexID := a.newKey("globex")
	a.clock.Advance(time.Minute)
	_, acme2ID := a.newKey("acme")

	// The list never shows a secret.
	r = a.do("GET", "/api/admin/keys", a.admin, "")
	l := wantList[cloudwire.APIKey](t, "list", r)
	for _, s := range []string{k.Secret, globexSecret, a.admin} {
		if bytes.Contains(r.body, []byte(s[9:])) {
			t.Errorf("the key list shows a secret: %s", r.body)
		}
	}
	if bytes.Contains(r.body, []byte(`"secret"`)) {
		t.Errorf("the key list has a secret field: %s", r.body)
	}
	var got []string
	for _, x := range l.Data {
		got = append(got, x.ID)
	}
	if want := []string{acme2ID, globexID, k.ID, a.adminID}; strings.Join(got, ",") != strings.Join(want, ",") || l.Meta.Total != 4 {
		t.Errorf("list = %v (total %d), want %v newest first", got, l.Meta.Total, want)
	}
	if last := l.Data[len(l.Data)-1]; !last.Admin || last.Account != "admin" {
		t.Errorf("the admin key is listed as %+v", last)
	}

	filters := []struct {
		query string
		want  []string
	}{
		{"?account=acme", []string{acme2ID, k.ID}},
		{"?account=globex", []string{globexID}},
		{"?account=admin", []string{a.adminID}},
		{"?account=nobody", nil},
		{"?account=acme&per_page=1", []string{acme2ID}},
		{"?account=acme&per_page=1&page=2", []string{k.ID}},
		{"?account=", []string{acme2ID, globexID, k.ID, a.adminID}},
	}
	for _, f := range filters {
		l := wantList[cloudwire.APIKey](t, f.query, a.do("GET", "/api/admin/keys"+f.query, a.admin, ""))
		var got []string
		for _, x := range l.Data {
			got = append(got, x.ID)
		}
		if strings.Join(got, ",") != strings.Join(f.want, ",") {
			t.Errorf("list %s = %v, want %v", f.query, got, f.want)
		}
	}
	wantError(t, "bad account filter", a.do("GET", "/api/admin/keys?account=no%20spaces", a.admin, ""), http.StatusBadRequest, "validation_error")

	// Bad creations.
	for _, body := range []string{
		`{}`,
		`{"account":""}`,
		`{"account":"has space"}`,
		fmt.Sprintf(`{"account":%q}`, strings.Repeat("a", 65)),
		fmt.Sprintf(`{"account":"acme","name":%q}`, strings.Repeat("n", 101)),
		`{"account":"acme","admin":true}`,
		`{"account":"acme"`,
		`{"account":"acme"} {}`,
	} {
		wantError(t, "create "+body, a.do("POST", "/api/admin/keys", a.admin, body), http.StatusBadRequest, "validation_error")
	}
	if keys, _ := a.acc.Keys(""); len(keys) != 4 {
		t.Errorf("bad creations made keys: %d, want 4", len(keys))
	}

	// Revoke.
	a.clock.Advance(time.Minute)
	r = a.do("DELETE", "/api/admin/keys/"+globexID, a.admin, "")
	if r.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	wantJSON(t, r)
	var rk cloudwire.APIKey
	json.Unmarshal(r.body, &rk)
	if rk.ID != globexID || !rk.Revoked || rk.Account != "globex" || rk.Secret != "" || !rfc3339(t, rk.RevokedAt).Equal(t0.Add(4*time.Minute)) {
		t.Errorf("revoked key = %s", r.body)
	}
	wantError(t, "revoked globex key", a.do("GET", "/api/storage/buckets", globexSecret, ""), http.StatusUnauthorized, "unauthorized")
	// Revoking again answers the same record.
	r = a.do("DELETE", "/api/admin/keys/"+globexID, a.admin, "")
	var again cloudwire.APIKey
	json.Unmarshal(r.body, &again)
	if r.status != http.StatusOK || again != rk {
		t.Errorf("revoke again: %d %s, want 200 %+v", r.status, r.body, rk)
	}
	// The list shows it revoked.
	l = wantList[cloudwire.APIKey](t, "list globex", a.do("GET", "/api/admin/keys?account=globex", a.admin, ""))
	if len(l.Data) != 1 || !l.Data[0].Revoked || l.Data[0].RevokedAt != rk.RevokedAt {
		t.Errorf("globex's keys after revoking = %+v", l.Data)
	}
	wantError(t, "revoke unknown", a.do("DELETE", "/api/admin/keys/key_0000000000000000", a.admin, ""), http.StatusNotFound, "not_found")
	// An admin key cannot revoke itself, and keeps working.
	wantError(t, "revoke itself", a.do("DELETE", "/api/admin/keys/"+a.adminID, a.admin, ""), http.StatusBadRequest, "validation_error")
	if r := a.do("GET", "/api/admin/keys", a.admin, ""); r.status != http.StatusOK {
		t.Errorf("the admin key after trying to revoke itself: %d", r.status)
	}
	// Another admin key can.
	_, admin2, err := a.acc.CreateKey("admin", "second admin", true, t0)
	if err != nil {
		t.Fatal(err)
	}
	if r := a.do("DELETE", "/api/admin/keys/"+a.adminID, admin2, ""); r.status != http.StatusOK {
		t.Errorf("second admin revokes the first: %d %s", r.status, r.body)
	}
	wantError(t, "revoked admin", a.do("GET", "/api/admin/keys", a.admin, ""), http.StatusUnauthorized, "unauthorized")
}

// lockedBuffer is a log destination the server writes from its goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestInternalError(t *testing.T) {
	// A store that fails under the server: the answer is a plain 500
	// internal_error, and the details go to the log with the request ID.
	dir := t.TempDir()
	st, err := cloudstore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	acc := apitest.Accounts(t)
	_, admin, err := acc.EnsureAdmin(t0, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	var log lockedBuffer
	srv := httptest.NewServer(openapitest.Cloud.Handler(t, cloudapi.New(st, acc, cloudapi.Options{Logger: slog.New(slog.NewJSONHandler(&log, nil))})))
	defer srv.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	a := &testAPI{t: t, url: srv.URL}
	r := a.do("GET", "/api/storage/buckets", admin, "", "X-Request-Id", "trace-500")
	wantError(t, "closed store", r, http.StatusInternalServerError, "internal_error")
	if strings.Contains(string(r.body), "pebble") {
		t.Errorf("the 500 answer leaks details: %s", r.body)
	}
	if !strings.Contains(log.String(), `"request_id":"trace-500"`) {
		t.Errorf("the log does not carry the failed request's ID:\n%s", log.String())
	}
}

func TestDefaultRateLimit(t *testing.T) {
	// The defaults of decisions.md: 100 requests/s, bursts of 200.
	st, err := cloudstore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	acc := apitest.Accounts(t)
	_, acme, err := acc.CreateKey("acme", "", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{now: t0}
	srv := httptest.NewServer(openapitest.Cloud.Handler(t, cloudapi.New(st, acc, cloudapi.Options{Now: c.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})))
	t.Cleanup(func() {
		srv.Close()
		st.Close()
	})
	a := &testAPI{t: t, url: srv.URL}
	for i := 0; i < 200; i++ {
		if r := a.do("GET", "/api/storage/buckets", acme, ""); r.status != http.StatusOK {
			t.Fatalf("request %d of the burst: %d %s", i+1, r.status, r.body)
		}
	}
	wantError(t, "request 201", a.do("GET", "/api/storage/buckets", acme, ""), http.StatusTooManyRequests, "rate_limited")
	c.Advance(10 * time.Millisecond) // one token at 100/s
	if r := a.do("GET", "/api/storage/buckets", acme, ""); r.status != http.StatusOK {
		t.Errorf("after 10 ms: %d, want 200", r.status)
	}
	wantError(t, "after 10 ms, again", a.do("GET", "/api/storage/buckets", acme, ""), http.StatusTooManyRequests, "rate_limited")
}
