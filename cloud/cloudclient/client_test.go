package cloudclient_test

// The client against a real API (a cloudstore in a temporary directory,
// cloudapi over loopback HTTP), and against hand-made answers for what a
// real API never sends.

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/cloudclient"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/internal/testkit/apitest"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
)

var ctx = context.Background()

// serve starts the API over a fresh store and returns its URL, the store
// and the admin key's secret.
func serve(t *testing.T) (string, *cloudstore.Store, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := cloudstore.OpenDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	acc := apitest.Accounts(t)
	_, admin, err := acc.EnsureAdmin(time.Now(), func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(openapitest.Cloud.Handler(t, cloudapi.New(st, acc, cloudapi.Options{RatePerSecond: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})))
	t.Cleanup(func() {
		srv.Close()
		st.Close()
	})
	return srv.URL, st, admin
}

// wantAPIError checks err is an *APIError with status and code.
func wantAPIError(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	var e *cloudclient.APIError
	if !errors.As(err, &e) {
		t.Errorf("%s: error %v (%T), want an *APIError", what, err, err)
		return
	}
	if e.StatusCode != status || e.Code != code || e.Message == "" {
		t.Errorf("%s: APIError = %+v, want status %d, code %s and a message", what, e, status, code)
	}
	if msg := err.Error(); !strings.Contains(msg, code) || !strings.Contains(msg, fmt.Sprint(status)) || !strings.Contains(msg, e.Message) {
		t.Errorf("%s: Error() = %q, want the code, the status and the message", what, msg)
	}
}

func TestKeys(t *testing.T) {
	url, _, adminSecret := serve(t)
	admin := cloudclient.New(url+"/", adminSecret, nil) // a trailing slash is fine
	k, err := admin.CreateKey(ctx, "acme", "ci")
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	if k.Account != "acme" || k.Name != "ci" || k.Admin || k.Revoked || !strings.HasPrefix(k.Secret, accounts.KeyPrefix) || k.Prefix != k.Secret[:13] {
		t.Errorf("CreateKey = %+v", k)
	}
	k2, err := admin.CreateKey(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateKey(ctx, "globex", "g"); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		account    string
		page, per  int
		total, got int
	}{
		{"", 1, 20, 4, 4},
		{"acme", 1, 20, 2, 2},
		{"acme", 1, 1, 2, 1},
		{"acme", 2, 1, 2, 1},
		{"acme", 3, 1, 2, 0},
		{"globex", 1, 100, 1, 1},
		{"nobody", 1, 20, 0, 0},
	}
	for _, tt := range tests {
		l, err := admin.Keys(ctx, tt.account, tt.page, tt.per)
		if err != nil {
			t.Fatalf("Keys(%q, %d, %d): %v", tt.account, tt.page, tt.per, err)
		}
		if l.Meta != (cloudwire.Meta{Total: tt.total, Page: tt.page, PerPage: tt.per}) || len(l.Data) != tt.got {
			t.Errorf("Keys(%q, %d, %d) = %d keys, meta %+v; want %d, total %d", tt.account, tt.page, tt.per, len(l.Data), l.Meta, tt.got, tt.total)
		}
		for _, x := range l.Data {
			if x.Secret != "" {
				t.Errorf("Keys shows a secret: %+v", x)
			}
			if tt.account != "" && x.Account != tt.account {
				t.Errorf("Keys(%q) holds a key of %s", tt.account, x.Account)
			}
		}
	}
	_, err = admin.Keys(ctx, "", 0, 20)
	wantAPIError(t, "Keys page 0", err, http.StatusBadRequest, "validation_error")
	_, err = admin.Keys(ctx, "", 1, 101)
	wantAPIError(t, "Keys per_page 101", err, http.StatusBadRequest, "validation_error")
	_, err = admin.Keys(ctx, "bad name", 1, 20)
	wantAPIError(t, "Keys of a bad account", err, http.StatusBadRequest, "validation_error")
	_, err = admin.CreateKey(ctx, "bad name", "")
	wantAPIError(t, "CreateKey of a bad account", err, http.StatusBadRequest, "validation_error")

	// A non-admin key may not.
	acme := cloudclient.New(url, k.Secret, nil)
	_, err = acme.CreateKey(ctx, "acme", "")
	wantAPIError(t, "CreateKey as acme", err, http.StatusForbidden, "forbidden")
	_, err = acme.Keys(ctx, "", 1, 20)
	wantAPIError(t, "Keys as acme", err, http.StatusForbidden, "forbidden")
	_, err = acme.RevokeKey(ctx, k2.ID)
	wantAPIError(t, "RevokeKey as acme", err, http.StatusForbidden, "forbidden")

	r, err := admin.RevokeKey(ctx, k.ID)
	if err != nil {
		t.Fatalf("RevokeKey: %v", err)
	}
	if r.ID != k.ID || !r.Revoked || r.RevokedAt == "" || r.Secret != "" {
		t.Errorf("RevokeKey = %+v", r)
	}
	_, err = acme.Buckets(ctx, 1, 20)
	wantAPIError(t, "revoked key", err, http.StatusUnauthorized, "unauthorized")
	_, err = admin.RevokeKey(ctx, "key_unknown")
	wantAPIError(t, "RevokeKey unknown", err, http.StatusNotFound, "not_found")
	_, err = admin.RevokeKey(ctx, "a/b?c")
	wantAPIError(t, "RevokeKey of an ID needing escapes", err, http.StatusNotFound, "not_found")
}

func TestBuckets(t *testing.T) {
	url, st, adminSecret := serve(t)
	admin := cloudclient.New(url, adminSecret, nil)
	ka, err := admin.CreateKey(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	kg, err := admin.CreateKey(ctx, "globex", "")
	if err != nil {
		t.Fatal(err)
	}
	acme := cloudclient.New(url, ka.Secret, &http.Client{Timeout: 10 * time.Second})
	globex := cloudclient.New(url, kg.Secret, nil)

	b, err := acme.CreateBucket(ctx, "photos", "holiday")
	if err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	if b.Name != "photos" || b.Notes != "holiday" || b.IsPublic || b.ObjectCount != 0 || b.SizeBytes != 0 {
		t.Errorf("CreateBucket = %+v", b)
	}
	if _, err := time.Parse(time.RFC3339, b.CreatedAt); err != nil {
		t.Errorf("created_at %q: %v", b.CreatedAt, err)
	}
	got, err := acme.Bucket(ctx, "photos")
	if err != nil || got != b {
		t.Errorf("Bucket = %+v, %v; want %+v", got, err, b)
	}
	for _, name := range []string{"zeta", "alpha", "mid"} {
		if _, err := acme.CreateBucket(ctx, name, ""); err != nil {
			t.Fatal(err)
		}
	}
	l, err := acme.Buckets(ctx, 1, 3)
	if err != nil {
		t.Fatalf("Buckets: %v", err)
	}
	var names []string
	for _, x := range l.Data {
		names = append(names, x.Name)
	}
	if strings.Join(names, ",") != "alpha,mid,photos" || l.Meta != (cloudwire.Meta{Total: 4, Page: 1, PerPage: 3}) {
		t.Errorf("Buckets(1, 3) = %v %+v", names, l.Meta)
	}
	if l, err := acme.Buckets(ctx, 2, 3); err != nil || len(l.Data) != 1 || l.Data[0].Name != "zeta" {
		t.Errorf("Buckets(2, 3) = %+v, %v", l, err)
	}
	_, err = acme.Buckets(ctx, 1, 0)
	wantAPIError(t, "Buckets per_page 0", err, http.StatusBadRequest, "validation_error")

	// Errors come back as APIError.
	_, err = acme.CreateBucket(ctx, "photos", "")
	wantAPIError(t, "CreateBucket taken", err, http.StatusConflict, "conflict")
	_, err = globex.CreateBucket(ctx, "photos", "")
	wantAPIError(t, "CreateBucket taken by another account", err, http.StatusConflict, "conflict")
	_, err = acme.CreateBucket(ctx, "Bad_Name", "")
	wantAPIError(t, "CreateBucket bad name", err, http.StatusBadRequest, "validation_error")
	_, err = acme.CreateBucket(ctx, "long-notes", strings.Repeat("n", cloudwire.MaxNotes+1))
	wantAPIError(t, "CreateBucket long notes", err, http.StatusBadRequest, "validation_error")
	_, err = globex.Bucket(ctx, "photos")
	wantAPIError(t, "Bucket of another account", err, http.StatusNotFound, "not_found")
	_, err = acme.Bucket(ctx, "missing")
	wantAPIError(t, "Bucket missing", err, http.StatusNotFound, "not_found")
	_, err = acme.Bucket(ctx, "a/../photos")
	wantAPIError(t, "Bucket with a slash in the name", err, http.StatusNotFound, "not_found")
	err = globex.DeleteBucket(ctx, "photos")
	wantAPIError(t, "DeleteBucket of another account", err, http.StatusNotFound, "not_found")

	if _, err := st.UpdateBucket("acme", "photos", time.Now(), func(b *cloudstore.Bucket) { b.Objects = 1 }); err != nil {
		t.Fatal(err)
	}
	err = acme.DeleteBucket(ctx, "photos")
	wantAPIError(t, "DeleteBucket not empty", err, http.StatusConflict, "bucket_not_empty")
	if _, err := st.UpdateBucket("acme", "photos", time.Now(), func(b *cloudstore.Bucket) { b.Objects = 0 }); err != nil {
		t.Fatal(err)
	}
	if err := acme.DeleteBucket(ctx, "photos"); err != nil {
		t.Fatalf("DeleteBucket: %v", err)
	}
	_, err = acme.Bucket(ctx, "photos")
	wantAPIError(t, "Bucket deleted", err, http.StatusNotFound, "not_found")
	err = acme.DeleteBucket(ctx, "photos")
	wantAPIError(t, "DeleteBucket again", err, http.StatusNotFound, "not_found")

	// A bad key.
	_, err = cloudclient.New(url, "lat_live_nope", nil).Buckets(ctx, 1, 20)
	wantAPIError(t, "unknown key", err, http.StatusUnauthorized, "unauthorized")
	_, err = cloudclient.New(url, "", nil).Buckets(ctx, 1, 20)
	wantAPIError(t, "no key", err, http.StatusUnauthorized, "unauthorized")
}

func TestErrorsWithoutEnvelope(t *testing.T) {
	tests := []struct {
		name, body, wantMsg string
		status              int
	}{
		{"plain text", "bad gateway\n", "bad gateway", http.StatusBadGateway},
		{"empty", "", "", http.StatusServiceUnavailable},
		{"JSON without error", `{"message":"x"}`, `{"message":"x"}`, http.StatusInternalServerError},
		{"error without code", `{"error":{"message":"x"}}`, `{"error":{"message":"x"}}`, http.StatusTeapot},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tt.status)
			io.WriteString(w, tt.body)
		}))
		_, err := cloudclient.New(srv.URL, "k", nil).Bucket(ctx, "photos")
		srv.Close()
		var e *cloudclient.APIError
		if !errors.As(err, &e) {
			t.Errorf("%s: %v, want an *APIError", tt.name, err)
			continue
		}
		if e.StatusCode != tt.status || e.Code != "" || e.Message != tt.wantMsg {
			t.Errorf("%s: APIError = %+v, want status %d, no code, message %q", tt.name, e, tt.status, tt.wantMsg)
		}
	}
}

func TestRequests(t *testing.T) {
	// What the client sends: method, path, query, Authorization, and
	// Content-Type only with a body.
	type seen struct{ method, uri, auth, ctype, body string }
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, seen{r.Method, r.RequestURI, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(body)})
		if r.Method == "DELETE" && strings.HasPrefix(r.URL.Path, "/api/storage/") {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	c := cloudclient.New(srv.URL, "lat_live_k", nil)
	c.CreateKey(ctx, "acme", "ci")
	c.Keys(ctx, "acme", 2, 5)
	c.Keys(ctx, "", 1, 20)
	c.RevokeKey(ctx, "key_1")
	c.CreateBucket(ctx, "photos", "n")
	c.Bucket(ctx, "photos")
	c.Buckets(ctx, 3, 7)
	if err := c.DeleteBucket(ctx, "photos"); err != nil {
		t.Errorf("DeleteBucket with 204: %v", err)
	}
	want := []seen{
		{"POST", "/api/admin/keys", "Bearer lat_live_k", "application/json", `{"account":"acme","name":"ci"}`},
		{"GET", "/api/admin/keys?account=acme&page=2&per_page=5", "Bearer lat_live_k", "", ""},
		{"GET", "/api/admin/keys?page=1&per_page=20", "Bearer lat_live_k", "", ""},
		{"DELETE", "/api/admin/keys/key_1", "Bearer lat_live_k", "", ""},
		{"POST", "/api/storage/buckets", "Bearer lat_live_k", "application/json", `{"name":"photos","notes":"n"}`},
		{"GET", "/api/storage/buckets/photos", "Bearer lat_live_k", "", ""},
		{"GET", "/api/storage/buckets?page=3&per_page=7", "Bearer lat_live_k", "", ""},
		{"DELETE", "/api/storage/buckets/photos", "Bearer lat_live_k", "", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	_, err := cloudclient.New(url, "k", nil).Buckets(ctx, 1, 20)
	var e *cloudclient.APIError
	if err == nil || errors.As(err, &e) {
		t.Errorf("a dead server = %v, want a transport error, not an APIError", err)
	}
	if err != nil && !strings.Contains(err.Error(), url) {
		t.Errorf("transport error %q does not name the API %s", err, url)
	}

	// A cancelled context.
	srv = httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := cloudclient.New(srv.URL, "k", nil).Bucket(cctx, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context = %v, want context.Canceled", err)
	}

	// A success answer that is not JSON.
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>") }))
	defer bad.Close()
	if _, err := cloudclient.New(bad.URL, "k", nil).Bucket(ctx, "x"); err == nil {
		t.Errorf("a 200 answer of HTML decoded without error")
	}
}

// acmeClient serves the API and returns a client of a new account "acme".
func acmeClient(t *testing.T) (*cloudclient.Client, string) {
	t.Helper()
	url, _, adminSecret := serve(t)
	k, err := cloudclient.New(url, adminSecret, nil).CreateKey(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	return cloudclient.New(url, k.Secret, nil), url
}

// onlyReader hides every method but Read, so that nothing can learn a
// body's length or seek it: the client must stream it.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestObjects(t *testing.T) {
	c, _ := acmeClient(t)
	if _, err := c.CreateBucket(ctx, "photos", ""); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 300<<10) // over the 64 KiB kept inline
	for i := range big {
		big[i] = byte(i*7 + i>>9)
	}
	tests := []struct {
		key, ctype, wantType string
		body                 []byte
		size                 int64 // as passed to Upload; -1 for unknown
	}{
		{"notes/a.txt", "text/plain", "text/plain", []byte("hello\n"), 6},
		{"big.bin", "", "application/octet-stream", big, int64(len(big))},
		{"chunked.bin", "application/x-test", "application/x-test", big[:100<<10], -1},
		{"empty", "", "application/octet-stream", nil, 0},
		{"odd/a b?c#d%e+f&g=h.txt", "text/plain", "text/plain", []byte("odd"), 3},
		{"ünïcödé/ß.txt", "", "application/octet-stream", []byte("u"), 1},
	}
	for _, tt := range tests {
		o, err := c.Upload(ctx, "photos", tt.key, tt.ctype, onlyReader{bytes.NewReader(tt.body)}, tt.size)
		if err != nil {
			t.Fatalf("Upload(%q): %v", tt.key, err)
		}
		sum := fmt.Sprintf("%x", md5.Sum(tt.body))
		if o.Key != tt.key || o.Size != int64(len(tt.body)) || o.ETag != sum || o.ContentType != tt.wantType {
			t.Errorf("Upload(%q) = %+v, want size %d, etag %s, type %s", tt.key, o, len(tt.body), sum, tt.wantType)
		}
		rc, info, err := c.Download(ctx, "photos", tt.key)
		if err != nil {
			t.Fatalf("Download(%q): %v", tt.key, err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, tt.body) {
			t.Errorf("Download(%q) = %d bytes, %v; want the %d uploaded", tt.key, len(got), err, len(tt.body))
		}
		if info.Key != tt.key || info.Size != int64(len(tt.body)) || info.ETag != sum || info.ContentType != tt.wantType {
			t.Errorf("Download(%q) info = %+v", tt.key, info)
		}
		if lm, err := time.Parse(time.RFC3339, info.LastModified); err != nil || time.Since(lm) > time.Minute {
			t.Errorf("Download(%q) last modified %q, %v", tt.key, info.LastModified, err)
		}
	}

	// Listing: everything, a delimited view, a prefix, and pages that
	// continue with the marker.
	all, err := c.Objects(ctx, "photos", cloudclient.ListOptions{PerPage: 100})
	if err != nil || len(all.Data) != len(tests) || len(all.Prefixes) != 0 || all.NextMarker != "" {
		t.Fatalf("Objects = %+v, %v; want %d objects", all, err, len(tests))
	}
	top, err := c.Objects(ctx, "photos", cloudclient.ListOptions{Delimiter: "/"})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range top.Data {
		keys = append(keys, o.Key)
	}
	if strings.Join(keys, ",") != "big.bin,chunked.bin,empty" || strings.Join(top.Prefixes, ",") != "notes/,odd/,ünïcödé/" {
		t.Errorf("delimited listing = %v + %v", keys, top.Prefixes)
	}
	in, err := c.Objects(ctx, "photos", cloudclient.ListOptions{Prefix: "odd/", Delimiter: "/"})
	if err != nil || len(in.Data) != 1 || in.Data[0].Key != tests[4].key {
		t.Errorf("Objects under odd/ = %+v, %v", in, err)
	}
	var paged []string
	marker := ""
	for i := 0; ; i++ {
		l, err := c.Objects(ctx, "photos", cloudclient.ListOptions{Delimiter: "/", Marker: marker, PerPage: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range l.Data {
			paged = append(paged, o.Key)
		}
		paged = append(paged, l.Prefixes...)
		if l.NextMarker == "" {
			break
		}
		if i > 10 {
			t.Fatalf("the listing does not end")
		}
		marker = l.NextMarker
	}
	if len(paged) != 6 {
		t.Errorf("paged delimited listing = %v, want 6 entries", paged)
	}
	if p2, err := c.Objects(ctx, "photos", cloudclient.ListOptions{Page: 2, PerPage: 4}); err != nil || len(p2.Data) != 2 || p2.Meta.Page != 2 {
		t.Errorf("Objects page 2 = %+v, %v", p2, err)
	}

	// Copy, then delete.
	cp, err := c.CopyObject(ctx, "photos", "notes/a.txt", "notes/b.txt")
	if err != nil || cp.Key != "notes/b.txt" || cp.ETag != fmt.Sprintf("%x", md5.Sum([]byte("hello\n"))) {
		t.Errorf("CopyObject = %+v, %v", cp, err)
	}
	for _, key := range []string{tests[4].key, "notes/b.txt", "ünïcödé/ß.txt"} {
		if err := c.DeleteObject(ctx, "photos", key); err != nil {
			t.Errorf("DeleteObject(%q): %v", key, err)
		}
		_, _, err := c.Download(ctx, "photos", key)
		wantAPIError(t, "Download of a deleted object", err, http.StatusNotFound, "not_found")
	}

	// Errors.
	_, _, err = c.Download(ctx, "photos", "missing")
	wantAPIError(t, "Download missing", err, http.StatusNotFound, "not_found")
	_, _, err = c.Download(ctx, "nobucket", "a.txt")
	wantAPIError(t, "Download from a missing bucket", err, http.StatusNotFound, "not_found")
	err = c.DeleteObject(ctx, "photos", "missing")
	wantAPIError(t, "DeleteObject missing", err, http.StatusNotFound, "not_found")
	_, err = c.Upload(ctx, "nobucket", "a", "", strings.NewReader("x"), 1)
	wantAPIError(t, "Upload to a missing bucket", err, http.StatusNotFound, "not_found")
	_, err = c.Upload(ctx, "photos", "a//b", "", strings.NewReader("x"), 1)
	wantAPIError(t, "Upload of a bad key", err, http.StatusBadRequest, "validation_error")
	_, err = c.Upload(ctx, "photos", "", "", strings.NewReader("x"), 1)
	wantAPIError(t, "Upload without a key", err, http.StatusBadRequest, "validation_error")
	_, err = c.Objects(ctx, "nobucket", cloudclient.ListOptions{})
	wantAPIError(t, "Objects of a missing bucket", err, http.StatusNotFound, "not_found")
	_, err = c.Objects(ctx, "photos", cloudclient.ListOptions{PerPage: 101})
	wantAPIError(t, "Objects per_page 101", err, http.StatusBadRequest, "validation_error")
	_, err = c.CopyObject(ctx, "photos", "missing", "x")
	wantAPIError(t, "CopyObject missing", err, http.StatusNotFound, "not_found")
}

func TestS3KeysUsagePublic(t *testing.T) {
	c, _ := acmeClient(t)
	def, err := c.CreateS3Key(ctx, cloudclient.S3KeyOptions{})
	if err != nil {
		t.Fatalf("CreateS3Key: %v", err)
	}
	if def.ID == "" || def.AccessKeyID != def.ID || def.Permissions != "readwrite" || def.BucketScope != "*" || len(def.Secret) != 40 {
		t.Errorf("CreateS3Key defaults = %+v", def)
	}
	ro, err := c.CreateS3Key(ctx, cloudclient.S3KeyOptions{Name: "ci", Permissions: "read", BucketScope: "photos"})
	if err != nil {
		t.Fatal(err)
	}
	if ro.Name != "ci" || ro.Permissions != "read" || ro.BucketScope != "photos" {
		t.Errorf("CreateS3Key with options = %+v", ro)
	}
	_, err = c.CreateS3Key(ctx, cloudclient.S3KeyOptions{Permissions: "all"})
	wantAPIError(t, "CreateS3Key bad permissions", err, http.StatusBadRequest, "validation_error")
	_, err = c.CreateS3Key(ctx, cloudclient.S3KeyOptions{BucketScope: "Bad_Name"})
	wantAPIError(t, "CreateS3Key bad scope", err, http.StatusBadRequest, "validation_error")

	l, err := c.S3Keys(ctx, 1, 20)
	if err != nil || len(l.Data) != 2 || l.Meta.Total != 2 || l.Data[0].ID != ro.ID {
		t.Fatalf("S3Keys = %+v, %v; want 2 keys, newest first", l, err)
	}
	for _, k := range l.Data {
		if k.Secret != "" {
			t.Errorf("S3Keys shows a secret: %+v", k)
		}
	}
	if err := c.DeleteS3Key(ctx, def.ID); err != nil {
		t.Fatalf("DeleteS3Key: %v", err)
	}
	err = c.DeleteS3Key(ctx, def.ID)
	wantAPIError(t, "DeleteS3Key again", err, http.StatusNotFound, "not_found")
	if l, err := c.S3Keys(ctx, 1, 20); err != nil || len(l.Data) != 1 {
		t.Errorf("S3Keys after a delete = %+v, %v", l, err)
	}

	u, err := c.Usage(ctx)
	if err != nil || u.BucketCount != 0 || u.TotalBytes != 0 || len(u.BucketsUsage) != 0 {
		t.Errorf("Usage of an empty account = %+v, %v", u, err)
	}
	for _, name := range []string{"photos", "docs"} {
		if _, err := c.CreateBucket(ctx, name, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Upload(ctx, "photos", "a", "", strings.NewReader("12345"), 5); err != nil {
		t.Fatal(err)
	}
	u, err = c.Usage(ctx)
	want := cloudwire.Usage{TotalBytes: 5, ObjectCount: 1, BucketCount: 2, BucketsUsage: []cloudwire.BucketUsage{{Name: "docs"}, {Name: "photos", ObjectCount: 1, SizeBytes: 5}}}
	if err != nil || fmt.Sprint(u) != fmt.Sprint(want) {
		t.Errorf("Usage = %+v, %v; want %+v", u, err, want)
	}

	b, err := c.SetPublic(ctx, "photos", true)
	if err != nil || !b.IsPublic {
		t.Errorf("SetPublic true = %+v, %v", b, err)
	}
	if b, err := c.SetPublic(ctx, "photos", false); err != nil || b.IsPublic {
		t.Errorf("SetPublic false = %+v, %v", b, err)
	}
	_, err = c.SetPublic(ctx, "missing", true)
	wantAPIError(t, "SetPublic missing", err, http.StatusNotFound, "not_found")
}

func TestObjectRequests(t *testing.T) {
	// Keys travel escaped segment by segment; uploads send the length and
	// the type they were given.
	type seen struct {
		method, uri, ctype string
		length             int64
		chunked            bool
		body               string
	}
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, seen{r.Method, r.RequestURI, r.Header.Get("Content-Type"), r.ContentLength, len(r.TransferEncoding) > 0, string(body)})
		switch {
		case r.Method == "DELETE":
			w.WriteHeader(http.StatusNoContent)
		case strings.HasSuffix(r.URL.Path, "/upload"):
			io.WriteString(w, `{"objects":[{"key":"k"}]}`)
		default:
			io.WriteString(w, `{}`)
		}
	}))
	defer srv.Close()
	c := cloudclient.New(srv.URL, "k", nil)
	c.Upload(ctx, "b", "a b/c?d#e", "text/plain", onlyReader{strings.NewReader("xyz")}, 3)
	c.Upload(ctx, "b", "s", "", onlyReader{strings.NewReader("xyz")}, -1)
	c.Upload(ctx, "b", "z", "", onlyReader{strings.NewReader("")}, 0)
	if rc, _, err := c.Download(ctx, "b", "a b/c?d#e%f/"); err == nil {
		rc.Close()
	}
	c.DeleteObject(ctx, "b", "dir/x+y")
	c.Objects(ctx, "b", cloudclient.ListOptions{Prefix: "a b/", Delimiter: "/", Marker: "a b/c", Page: 2, PerPage: 5})
	c.Objects(ctx, "b", cloudclient.ListOptions{})
	c.CreateS3Key(ctx, cloudclient.S3KeyOptions{Permissions: "read"})
	c.S3Keys(ctx, 2, 50)
	c.DeleteS3Key(ctx, "LK1")
	c.Usage(ctx)
	c.SetPublic(ctx, "b", true)
	c.CopyObject(ctx, "b", "x", "y")
	want := []seen{
		{"POST", "/api/storage/buckets/b/upload?key=a+b%2Fc%3Fd%23e", "text/plain", 3, false, "xyz"},
		{"POST", "/api/storage/buckets/b/upload?key=s", "", -1, true, "xyz"},
		{"POST", "/api/storage/buckets/b/upload?key=z", "", 0, false, ""},
		{"GET", "/api/storage/buckets/b/download/a%20b/c%3Fd%23e%25f/", "", 0, false, ""},
		{"DELETE", "/api/storage/buckets/b/objects/dir/x+y", "", 0, false, ""},
		{"GET", "/api/storage/buckets/b/objects?delimiter=%2F&marker=a+b%2Fc&page=2&per_page=5&prefix=a+b%2F", "", 0, false, ""},
		{"GET", "/api/storage/buckets/b/objects", "", 0, false, ""},
		{"POST", "/api/storage/keys", "application/json", 22, false, `{"permissions":"read"}`},
		{"GET", "/api/storage/keys?page=2&per_page=50", "", 0, false, ""},
		{"DELETE", "/api/storage/keys/LK1", "", 0, false, ""},
		{"GET", "/api/storage/usage", "", 0, false, ""},
		{"PATCH", "/api/storage/buckets/b/public", "application/json", 18, false, `{"is_public":true}`},
		{"POST", "/api/storage/buckets/b/copy", "application/json", 33, false, `{"dest_key":"y","source_key":"x"}`},
	}
	if len(got) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestPresign(t *testing.T) {
	c, _ := acmeClient(t)
	if _, err := c.CreateBucket(ctx, "photos", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upload(ctx, "photos", "a b/c.txt", "text/plain", strings.NewReader("hello"), 5); err != nil {
		t.Fatal(err)
	}

	// A download URL works without a key.
	p, err := c.Presign(ctx, "photos", "a b/c.txt", "download", "30m")
	if err != nil {
		t.Fatalf("Presign download: %v", err)
	}
	exp, err := time.Parse(time.RFC3339, p.Expires)
	if err != nil || p.Method != "GET" || exp.Before(time.Now().Add(29*time.Minute)) || exp.After(time.Now().Add(31*time.Minute)) {
		t.Errorf("Presign download = %+v (%v), want GET for 30 minutes", p, err)
	}
	resp, err := http.Get(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "hello" {
		t.Errorf("GET %s = %d %q, want 200 hello", p.URL, resp.StatusCode, body)
	}

	// An upload URL takes a PUT without a key; "" expires is the default.
	p, err = c.Presign(ctx, "photos", "up/new.txt", "upload", "")
	if err != nil {
		t.Fatalf("Presign upload: %v", err)
	}
	if exp, err := time.Parse(time.RFC3339, p.Expires); err != nil || p.Method != "PUT" || exp.After(time.Now().Add(61*time.Minute)) {
		t.Errorf("Presign upload = %+v (%v), want PUT for an hour", p, err)
	}
	req, _ := http.NewRequest(p.Method, p.URL, strings.NewReader("uploaded"))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT %s = %d", p.URL, resp.StatusCode)
	}
	rc, _, err := c.Download(ctx, "photos", "up/new.txt")
	if err != nil {
		t.Fatalf("the presigned upload: %v", err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "uploaded" {
		t.Errorf("the presigned upload holds %q", got)
	}

	_, err = c.Presign(ctx, "photos", "a b/c.txt", "download", "8d")
	wantAPIError(t, "Presign 8d", err, http.StatusBadRequest, "validation_error")
	_, err = c.Presign(ctx, "photos", "a b/c.txt", "delete", "1h")
	wantAPIError(t, "Presign delete", err, http.StatusBadRequest, "validation_error")
	_, err = c.Presign(ctx, "nobucket", "a", "download", "1h")
	wantAPIError(t, "Presign in a missing bucket", err, http.StatusNotFound, "not_found")
}
