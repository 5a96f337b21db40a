package cloudapi_test

// End-to-end tests of presigned URLs, raw PUT uploads by key, public
// buckets and the S3 endpoint record, over real HTTP.

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
)

// presign asks for a presigned URL and returns the answer as it came.
func (a *objAPI) presign(apiKey, bucket, body string) response {
	a.t.Helper()
	return a.do("POST", "/api/storage/buckets/"+bucket+"/presign", apiKey, body)
}

// wantPresigned checks r is 200 with exactly url, method and expires, and
// returns it with url made relative to the API's, for a.do.
func (a *objAPI) wantPresigned(what string, r response) cloudwire.PresignedURL {
	a.t.Helper()
	if r.status != http.StatusOK {
		a.t.Fatalf("%s: status %d, want 200 (body %s)", what, r.status, r.body)
	}
	wantJSON(a.t, r)
	if got := strings.Join(keysOf(a.t, r.body), ","); got != "expires,method,url" {
		a.t.Errorf("%s: fields %s, want expires,method,url", what, got)
	}
	var p cloudwire.PresignedURL
	json.Unmarshal(r.body, &p)
	if !strings.HasPrefix(p.URL, a.url+"/") {
		a.t.Fatalf("%s: url %s is not under %s", what, p.URL, a.url)
	}
	p.URL = strings.TrimPrefix(p.URL, a.url)
	return p
}

// withToken replaces the token of a presigned path.
func withToken(path, token string) string {
	return path[:strings.Index(path, "?token=")] + "?token=" + url.QueryEscape(token)
}

func tokenOf(path string) string { return path[strings.Index(path, "?token=")+len("?token="):] }

func TestPresign(t *testing.T) {
	a := newObjAPI(t)
	a.put("dir/a b.txt", []byte("hello"))
	tests := []struct {
		body, method, path string
		life               time.Duration
	}{
		{`{"key":"dir/a b.txt","action":"download"}`, "GET", "/api/storage/buckets/pics/download/dir/a%20b.txt?token=", time.Hour},
		{`{"key":"dir/a b.txt","action":"download","expires":"30m"}`, "GET", "/api/storage/buckets/pics/download/dir/a%20b.txt?token=", 30 * time.Minute},
		{`{"key":"new/x?y","action":"upload","expires":"7d"}`, "PUT", "/api/storage/buckets/pics/objects/new/x%3Fy?token=", 7 * 24 * time.Hour},
		{`{"key":"k","action":"upload","expires":"604800s"}`, "PUT", "/api/storage/buckets/pics/objects/k?token=", 7 * 24 * time.Hour},
		{`{"key":"k","action":"download","expires":"1s"}`, "GET", "/api/storage/buckets/pics/download/k?token=", time.Second},
		{`{"key":"k","action":"download","expires":"2h"}`, "GET", "/api/storage/buckets/pics/download/k?token=", 2 * time.Hour},
	}
	for _, tt := range tests {
		p := a.wantPresigned(tt.body, a.presign(a.acme, "pics", tt.body))
		if p.Method != tt.method || !strings.HasPrefix(p.URL, tt.path) || len(tokenOf(p.URL)) < 40 {
			t.Errorf("%s: %s %s, want %s %s<token>", tt.body, p.Method, p.URL, tt.method, tt.path)
		}
		// Whole seconds, rounded up: the token holds Unix seconds, and the
		// URL lives at least as long as asked (t0 is not on a second), but
		// never longer than 7 days, which are rounded down.
		want := t0.Add(tt.life).Truncate(time.Second).Add(time.Second)
		if tt.life == 7*24*time.Hour {
			want = want.Add(-time.Second)
		}
		if p.Expires != want.Format(time.RFC3339) {
			t.Errorf("%s: expires %s, want %s", tt.body, p.Expires, want)
		}
	}
}

func TestPresignErrors(t *testing.T) {
	a := newObjAPI(t)
	other, _ := a.newKey("other")
	tests := []struct {
		name, key, bucket, body string
		status                  int
		code                    string
	}{
		{"no API key", "", "pics", `{"key":"k","action":"download"}`, 401, "unauthorized"},
		{"another account's bucket", other, "pics", `{"key":"k","action":"download"}`, 404, "not_found"},
		{"missing bucket", a.acme, "nope", `{"key":"k","action":"download"}`, 404, "not_found"},
		{"no key", a.acme, "pics", `{"action":"download"}`, 400, "validation_error"},
		{"key with an empty segment", a.acme, "pics", `{"key":"a//b","action":"download"}`, 400, "validation_error"},
		{"key with ..", a.acme, "pics", `{"key":"../b","action":"upload"}`, 400, "validation_error"},
		{"no action", a.acme, "pics", `{"key":"k"}`, 400, "validation_error"},
		{"other action", a.acme, "pics", `{"key":"k","action":"delete"}`, 400, "validation_error"},
		{"action in capitals", a.acme, "pics", `{"key":"k","action":"UPLOAD"}`, 400, "validation_error"},
		{"8d", a.acme, "pics", `{"key":"k","action":"download","expires":"8d"}`, 400, "validation_error"},
		{"169h", a.acme, "pics", `{"key":"k","action":"download","expires":"169h"}`, 400, "validation_error"},
		{"604801s", a.acme, "pics", `{"key":"k","action":"download","expires":"604801s"}`, 400, "validation_error"},
		{"0h", a.acme, "pics", `{"key":"k","action":"download","expires":"0h"}`, 400, "validation_error"},
		{"-1h", a.acme, "pics", `{"key":"k","action":"download","expires":"-1h"}`, 400, "validation_error"},
		{"+1h", a.acme, "pics", `{"key":"k","action":"download","expires":"+1h"}`, 400, "validation_error"},
		{"1.5h", a.acme, "pics", `{"key":"k","action":"download","expires":"1.5h"}`, 400, "validation_error"},
		{"1h30m", a.acme, "pics", `{"key":"k","action":"download","expires":"1h30m"}`, 400, "validation_error"},
		{"no unit", a.acme, "pics", `{"key":"k","action":"download","expires":"60"}`, 400, "validation_error"},
		{"unit only", a.acme, "pics", `{"key":"k","action":"download","expires":"h"}`, 400, "validation_error"},
		{"week unit", a.acme, "pics", `{"key":"k","action":"download","expires":"1w"}`, 400, "validation_error"},
		{"huge", a.acme, "pics", `{"key":"k","action":"download","expires":"99999999999999999999d"}`, 400, "validation_error"},
		{"expires a number", a.acme, "pics", `{"key":"k","action":"download","expires":3600}`, 400, "validation_error"},
		{"unknown field", a.acme, "pics", `{"key":"k","action":"download","method":"GET"}`, 400, "validation_error"},
	}
	for _, tt := range tests {
		wantError(t, tt.name, a.presign(tt.key, tt.bucket, tt.body), tt.status, tt.code)
	}
}

func TestPresignedDownloadAndUpload(t *testing.T) {
	a := newObjAPI(t)
	body := []byte("presigned body")
	a.put("docs/a.txt", body)
	dl := a.wantPresigned("download", a.presign(a.acme, "pics", `{"key":"docs/a.txt","action":"download"}`))
	// No Authorization header: the token is the credential.
	r := a.do("GET", dl.URL, "", "")
	if r.status != http.StatusOK || string(r.body) != string(body) {
		t.Fatalf("presigned download: %d %q, want 200 %q", r.status, r.body, body)
	}
	if r := a.do("GET", dl.URL, "", "", "Range", "bytes=0-8"); r.status != http.StatusPartialContent || string(r.body) != "presigned" {
		t.Errorf("presigned ranged download: %d %q", r.status, r.body)
	}
	if r := a.do("HEAD", dl.URL, "", ""); r.status != http.StatusOK {
		t.Errorf("presigned HEAD with a download token: %d, want 200", r.status)
	}
	// The token decides, whatever the header holds.
	other, _ := a.newKey("other")
	if r := a.do("GET", dl.URL, other, ""); r.status != http.StatusOK {
		t.Errorf("presigned download with another account's key in the header: %d, want 200", r.status)
	}
	if r := a.do("GET", dl.URL, "lat_live_garbage", ""); r.status != http.StatusOK {
		t.Errorf("presigned download with a bad key in the header: %d, want 200", r.status)
	}

	up := a.wantPresigned("upload", a.presign(a.acme, "pics", `{"key":"up/new.txt","action":"upload","expires":"5m"}`))
	o := wantObject(t, "presigned upload", a.do("PUT", up.URL, "", "uploaded", "Content-Type", "text/plain"), http.StatusCreated)
	if o.Key != "up/new.txt" || o.Size != 8 || o.ContentType != "text/plain" {
		t.Errorf("presigned upload stored %+v", o)
	}
	a.wantBody("up/new.txt", []byte("uploaded"))
	// An upload URL may be used again until it expires: it overwrites.
	wantObject(t, "presigned upload again", a.do("PUT", up.URL, "", "again", "Content-Type", ""), http.StatusCreated)
	a.wantBody("up/new.txt", []byte("again"))
}

func TestPresignedTokenRefused(t *testing.T) {
	a := newObjAPI(t)
	a.put("a", []byte("A"))
	a.put("b", []byte("B"))
	if r := a.do("POST", "/api/storage/buckets", a.acme, `{"name":"docs"}`); r.status != http.StatusCreated {
		t.Fatal(r.status)
	}
	dl := a.wantPresigned("download a", a.presign(a.acme, "pics", `{"key":"a","action":"download","expires":"10m"}`))
	up := a.wantPresigned("upload a", a.presign(a.acme, "pics", `{"key":"a","action":"upload","expires":"10m"}`))
	tok := tokenOf(dl.URL)
	tampered := []byte(tok)
	tampered[10] ^= 1
	tests := []struct {
		name, method, path string
		status             int
		code               string
	}{
		{"tampered", "GET", withToken(dl.URL, string(tampered)), 401, "unauthorized"},
		{"truncated", "GET", withToken(dl.URL, tok[:len(tok)-3]), 401, "unauthorized"},
		{"empty", "GET", withToken(dl.URL, ""), 401, "unauthorized"},
		{"garbage", "GET", withToken(dl.URL, "not a token"), 401, "unauthorized"},
		{"another key", "GET", "/api/storage/buckets/pics/download/b?token=" + tok, 403, "forbidden"},
		{"another bucket", "GET", "/api/storage/buckets/docs/download/a?token=" + tok, 403, "forbidden"},
		{"an invalid bucket name", "GET", "/api/storage/buckets/NO/download/a?token=" + tok, 403, "forbidden"},
		{"download token for a PUT", "PUT", "/api/storage/buckets/pics/objects/a?token=" + tok, 403, "forbidden"},
		{"upload token for a GET", "GET", "/api/storage/buckets/pics/download/a?token=" + tokenOf(up.URL), 403, "forbidden"},
		{"upload token for another key", "PUT", "/api/storage/buckets/pics/objects/b?token=" + tokenOf(up.URL), 403, "forbidden"},
		// Only the download and object PUT routes take tokens.
		{"token on a listing", "GET", "/api/storage/buckets/pics/objects?token=" + tok, 401, "unauthorized"},
		{"token on a delete", "DELETE", "/api/storage/buckets/pics/objects/a?token=" + tok, 401, "unauthorized"},
		{"token on presign", "POST", "/api/storage/buckets/pics/presign?token=" + tok, 401, "unauthorized"},
	}
	for _, tt := range tests {
		body := ""
		if tt.method == "PUT" {
			body = "x"
		}
		wantError(t, tt.name, a.do(tt.method, tt.path, "", body), tt.status, tt.code)
	}
	a.wantBody("a", []byte("A")) // no refused PUT wrote anything
	a.wantBody("b", []byte("B"))
	// A token on a route that takes none says which method its URL is for.
	for _, path := range []string{up.URL, "/api/storage/buckets/pics/objects?token=" + tok} {
		if r := a.do("GET", path, "", ""); !strings.Contains(string(r.body), "PUT for an upload URL") {
			t.Errorf("GET %s: %d %s, want the methods presigned URLs are for", path, r.status, r.body)
		}
	}

	// Expired: valid until the second it names (10 minutes or up to a
	// second more: it is rounded up), refused from then on, with a
	// message that says so.
	exp, err := time.Parse(time.RFC3339, dl.Expires)
	if err != nil || up.Expires != dl.Expires {
		t.Fatalf("expires %q and %q: %v", dl.Expires, up.Expires, err)
	}
	if life := exp.Sub(a.clock.Now()); life < 10*time.Minute || life >= 10*time.Minute+time.Second {
		t.Fatalf("a 10m URL lives %v", life)
	}
	a.clock.Advance(exp.Sub(a.clock.Now()) - time.Nanosecond)
	if r := a.do("GET", dl.URL, "", ""); r.status != http.StatusOK {
		t.Errorf("just before expiry: %d, want 200", r.status)
	}
	a.clock.Advance(time.Nanosecond)
	for _, p := range []struct{ method, path string }{{"GET", dl.URL}, {"PUT", up.URL}} {
		r := a.do(p.method, p.path, "", "x")
		wantError(t, "expired "+p.method, r, http.StatusUnauthorized, "unauthorized")
		if !strings.Contains(string(r.body), "expired at") {
			t.Errorf("expired %s: message %s does not say it expired", p.method, r.body)
		}
	}
}

func TestPresignedURLDiesWithItsKey(t *testing.T) {
	a := newObjAPI(t)
	a.put("a", []byte("A"))
	secret, id := a.newKey("acme")
	dl := a.wantPresigned("download", a.presign(secret, "pics", `{"key":"a","action":"download"}`))
	if r := a.do("GET", dl.URL, "", ""); r.status != http.StatusOK {
		t.Fatalf("before revocation: %d", r.status)
	}
	if r := a.do("DELETE", "/api/admin/keys/"+id, a.admin, ""); r.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	wantError(t, "after the key's revocation", a.do("GET", dl.URL, "", ""), http.StatusUnauthorized, "unauthorized")
}

func TestPresignedURLsSurviveRestart(t *testing.T) {
	// The signing key comes from secret.key: a second server over the
	// same store (as after a restart) accepts the first one's URLs.
	a := newObjAPI(t)
	a.put("a", []byte("A"))
	dl := a.wantPresigned("download", a.presign(a.acme, "pics", `{"key":"a","action":"download"}`))
	b := newServerOver(t, a.testAPI, cloudapi.Options{})
	if r := b.do("GET", dl.URL, "", ""); r.status != http.StatusOK || string(r.body) != "A" {
		t.Errorf("on a second server: %d %q, want 200 A", r.status, r.body)
	}
}

// newServerOver serves a second API over a's store.
func newServerOver(t *testing.T, a *testAPI, opts cloudapi.Options) *testAPI {
	t.Helper()
	opts.Now = a.clock.Now
	opts.RatePerSecond = -1
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(openapitest.Cloud.Handler(t, cloudapi.New(a.st, a.acc, opts)))
	t.Cleanup(srv.Close) // before newAPI's clean-up closes the store
	b := *a
	b.url = srv.URL
	return &b
}

func TestPresignedRateLimit(t *testing.T) {
	a := newObjAPI(t, cloudapi.Options{RatePerSecond: 1, Burst: 5})
	// acme's burst: creating the bucket, this upload, the public toggle,
	// the presign and one download.
	a.put("a", []byte("A"))
	wantBucket(t, "make public", a.do("PATCH", "/api/storage/buckets/pics/public", a.acme, `{"is_public":true}`), http.StatusOK)
	dl := a.wantPresigned("download", a.presign(a.acme, "pics", `{"key":"a","action":"download"}`))
	if r := a.do("GET", dl.URL, "", ""); r.status != http.StatusOK {
		t.Fatalf("first presigned download: %d %s", r.status, r.body)
	}
	r := a.do("GET", dl.URL, "", "")
	wantError(t, "presigned download past acme's burst", r, http.StatusTooManyRequests, "rate_limited")
	if r.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After = %q, want 1", r.header.Get("Retry-After"))
	}
	// Anonymous callers have a budget of their own, by address.
	if r := a.download("", "pics", "a"); r.status != http.StatusOK {
		t.Errorf("anonymous download while acme is limited: %d, want 200", r.status)
	}
	a.clock.Advance(time.Second)
	if r := a.do("GET", dl.URL, "", ""); r.status != http.StatusOK {
		t.Errorf("presigned download a second later: %d, want 200", r.status)
	}
}

func TestPublicBucket(t *testing.T) {
	a := newObjAPI(t)
	a.put("a.txt", []byte("public body"))
	other, _ := a.newKey("other")
	if r := a.do("POST", "/api/storage/buckets", other, `{"name":"theirs"}`); r.status != http.StatusCreated {
		t.Fatal(r.status)
	}
	anon := func(bucket, key string) response { return a.download("", bucket, key) }
	// Private: 401 without a key, exactly like a bucket that does not
	// exist or cannot.
	for _, tt := range []struct{ name, bucket, key string }{
		{"private bucket", "pics", "a.txt"},
		{"private bucket, missing key", "pics", "nope"},
		{"missing bucket", "nope", "a.txt"},
		{"invalid bucket name", "NO", "a.txt"},
		{"another private bucket", "theirs", "a.txt"},
	} {
		r := anon(tt.bucket, tt.key)
		wantError(t, "anonymous download, "+tt.name, r, http.StatusUnauthorized, "unauthorized")
		if r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("anonymous download, %s: no WWW-Authenticate", tt.name)
		}
	}
	wantError(t, "other account, private bucket", a.download(other, "pics", "a.txt"), http.StatusNotFound, "not_found")

	wantBucket(t, "make public", a.do("PATCH", "/api/storage/buckets/pics/public", a.acme, `{"is_public":true}`), http.StatusOK)
	r := anon("pics", "a.txt")
	if r.status != http.StatusOK || string(r.body) != "public body" || r.header.Get("ETag") == "" {
		t.Errorf("anonymous download, public bucket: %d %q (ETag %q)", r.status, r.body, r.header.Get("ETag"))
	}
	if r := a.download("", "pics", "a.txt", "Range", "bytes=7-"); r.status != http.StatusPartialContent || string(r.body) != "body" {
		t.Errorf("anonymous ranged download: %d %q", r.status, r.body)
	}
	if r := a.download(other, "pics", "a.txt"); r.status != http.StatusOK || string(r.body) != "public body" {
		t.Errorf("another account's key, public bucket: %d %q, want 200", r.status, r.body)
	}
	wantError(t, "anonymous, public bucket, missing key", anon("pics", "nope"), http.StatusNotFound, "not_found")
	wantError(t, "other account, public bucket, missing key", a.download(other, "pics", "nope"), http.StatusNotFound, "not_found")
	wantError(t, "bad key, public bucket", a.download("lat_live_nope", "pics", "a.txt"), http.StatusUnauthorized, "unauthorized")
	// Only downloads are public.
	for _, p := range []struct{ method, path, body string }{
		{"GET", "/api/storage/buckets/pics", ""},
		{"GET", "/api/storage/buckets/pics/objects", ""},
		{"DELETE", "/api/storage/buckets/pics/objects/a.txt", ""},
		{"PUT", "/api/storage/buckets/pics/objects/b.txt", "x"},
		{"POST", "/api/storage/buckets/pics/download-zip", `{"keys":["a.txt"]}`},
	} {
		wantError(t, "anonymous "+p.method+" "+p.path, a.do(p.method, p.path, "", p.body), http.StatusUnauthorized, "unauthorized")
	}
	wantError(t, "other account's delete, public bucket", a.do("DELETE", "/api/storage/buckets/pics/objects/a.txt", other, ""), http.StatusNotFound, "not_found")
	a.wantBody("a.txt", []byte("public body"))

	wantBucket(t, "make private", a.do("PATCH", "/api/storage/buckets/pics/public", a.acme, `{"is_public":false}`), http.StatusOK)
	wantError(t, "anonymous download after making private", anon("pics", "a.txt"), http.StatusUnauthorized, "unauthorized")
}

func TestPutObjectByKey(t *testing.T) {
	a := newObjAPI(t)
	other, _ := a.newKey("other")
	o := wantObject(t, "PUT", a.do("PUT", "/api/storage/buckets/pics/objects/dir/n%C3%A9w.txt", a.acme, "body", "Content-Type", "text/plain"), http.StatusCreated)
	if o.Key != "dir/néw.txt" || o.Size != 4 || o.ContentType != "text/plain" || o.ETag != md5hex([]byte("body")) {
		t.Errorf("PUT stored %+v", o)
	}
	a.wantBody("dir/néw.txt", []byte("body"))
	o = wantObject(t, "PUT without a type", a.do("PUT", "/api/storage/buckets/pics/objects/raw", a.acme, "", "Content-Type", ""), http.StatusCreated)
	if o.Size != 0 || o.ContentType != "application/octet-stream" {
		t.Errorf("PUT without a type or body stored %+v", o)
	}
	tests := []struct {
		name, key, path string
		status          int
		code            string
	}{
		{"no API key", "", "/api/storage/buckets/pics/objects/a", 401, "unauthorized"},
		{"another account's bucket", other, "/api/storage/buckets/pics/objects/a", 404, "not_found"},
		{"missing bucket", a.acme, "/api/storage/buckets/nope/objects/a", 404, "not_found"},
		{"invalid bucket name", a.acme, "/api/storage/buckets/NO/objects/a", 404, "not_found"},
		{"key with a trailing empty segment", a.acme, "/api/storage/buckets/pics/objects/a%2F%2F", 400, "validation_error"},
		{"key with a control character", a.acme, "/api/storage/buckets/pics/objects/a%01", 400, "validation_error"},
	}
	for _, tt := range tests {
		wantError(t, tt.name, a.do("PUT", tt.path, tt.key, "x", "Content-Type", "text/plain"), tt.status, tt.code)
	}
}

func TestEndpointRecord(t *testing.T) {
	tests := []struct {
		name string
		opts cloudapi.Options
		want cloudapi.S3Endpoint // Endpoint "" = the request's host
	}{
		{"loopback", cloudapi.Options{S3Endpoint: "127.0.0.1:9000"}, cloudapi.S3Endpoint{"http://127.0.0.1:9000", 9000, "us-east-1"}},
		{"a name and a region", cloudapi.Options{S3Endpoint: "s3.example.com:9443", Region: "eu-west-1"}, cloudapi.S3Endpoint{"http://s3.example.com:9443", 9443, "eu-west-1"}},
		{"every address", cloudapi.Options{S3Endpoint: "0.0.0.0:9100"}, cloudapi.S3Endpoint{"http://127.0.0.1:9100", 9100, "us-east-1"}},
		{"no host", cloudapi.Options{S3Endpoint: ":9100"}, cloudapi.S3Endpoint{"http://127.0.0.1:9100", 9100, "us-east-1"}},
		{"every IPv6 address", cloudapi.Options{S3Endpoint: "[::]:9100"}, cloudapi.S3Endpoint{"http://127.0.0.1:9100", 9100, "us-east-1"}},
		{"every address, public URL", cloudapi.Options{S3Endpoint: "0.0.0.0:9000", PublicURL: "https://api.example.com/"}, cloudapi.S3Endpoint{"http://api.example.com:9000", 9000, "us-east-1"}},
		{"IPv6", cloudapi.Options{S3Endpoint: "[::1]:9000"}, cloudapi.S3Endpoint{"http://[::1]:9000", 9000, "us-east-1"}},
	}
	for _, tt := range tests {
		a := newAPI(t, tt.opts)
		acme, _ := a.newKey("acme")
		r := a.do("GET", "/api/storage/endpoint", acme, "")
		if r.status != http.StatusOK {
			t.Fatalf("%s: status %d (body %s)", tt.name, r.status, r.body)
		}
		wantJSON(t, r)
		if got := strings.Join(keysOf(t, r.body), ","); got != "endpoint,port,region" {
			t.Errorf("%s: fields %s, want endpoint,port,region", tt.name, got)
		}
		var got cloudapi.S3Endpoint
		json.Unmarshal(r.body, &got)
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
		wantError(t, tt.name+", no API key", a.do("GET", "/api/storage/endpoint", "", ""), http.StatusUnauthorized, "unauthorized")
	}
	a := newAPI(t, cloudapi.Options{})
	acme, _ := a.newKey("acme")
	wantError(t, "no S3 endpoint", a.do("GET", "/api/storage/endpoint", acme, ""), http.StatusNotFound, "not_found")
}
