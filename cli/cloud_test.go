package cli

// Tests of `lattice cloud apikey` against a real cloud API (cloudstore in a
// temporary directory, cloudapi over loopback HTTP), and of the platform's
// first-start admin key.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/platform"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/sigv4"
	"github.com/latticenet/lattice/internal/testkit/apitest"
)

var apiSecretPattern = regexp.MustCompile(`^lat_live_[0-9A-Za-z]{40}$`)

// rfc3339Time matches a time printed as RFC 3339 (2006-01-02T15:04:05Z),
// which tables must not show. It looks for the digits around the T, since
// a key ID or the UTC suffix may hold a T or a Z of its own.
var rfc3339Time = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d`)

// newTestCloud serves the cloud API over fresh stores and returns its URL,
// the accounts store and the admin key's secret. The environment is clean,
// including the API variables.
func newTestCloud(t *testing.T) (string, *accounts.Store, string) {
	t.Helper()
	cleanEnv(t)
	t.Setenv("LATTICE_API_URL", "")
	t.Setenv("LATTICE_API_KEY", "")
	st, err := cloudstore.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	acc := apitest.Accounts(t)
	_, admin, err := acc.EnsureAdmin(time.Now(), func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(cloudapi.New(st, acc, cloudapi.Options{RatePerSecond: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(func() {
		srv.Close()
		st.Close()
	})
	return srv.URL, acc, admin
}

// status answers the status of GET /api/storage/buckets with key.
func status(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/api/storage/buckets", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestCloudAPIKey(t *testing.T) {
	url, st, admin := newTestCloud(t)
	flags := []string{"--api", url, "--api-key", admin}

	// create prints the secret alone on stdout, and the ID on stderr.
	r := mustRun(t, append([]string{"cloud", "apikey", "create", "--account", "acme"}, flags...)...)
	secret := strings.TrimSuffix(r.stdout, "\n")
	if !apiSecretPattern.MatchString(secret) || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("create printed %q, want the secret on one line", r.stdout)
	}
	k, err := st.Authenticate(secret)
	if err != nil {
		t.Fatalf("the printed secret does not authenticate: %v", err)
	}
	if k.Account != "acme" || k.Admin || k.Name != "" {
		t.Errorf("created key = %+v, want a non-admin key of acme", k)
	}
	for _, want := range []string{k.ID, "acme", "only once"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("create stderr %q does not mention %q", r.stderr, want)
		}
	}
	if got := status(t, url, secret); got != http.StatusOK {
		t.Errorf("the new key gets %d, want 200", got)
	}

	// --name, --json, and flags after the operation in any order.
	var created cloudwire.APIKey
	r = mustRun(t, "cloud", "apikey", "create", "--api-key", admin, "--json", "--name", "ci", "--account", "globex", "--api", url)
	decode(t, r, &created)
	if created.Account != "globex" || created.Name != "ci" || !apiSecretPattern.MatchString(created.Secret) || created.Revoked {
		t.Errorf("create --json = %+v", created)
	}

	// list: a table with a header and every key, admin first created so
	// last listed; no secret anywhere.
	r = mustRun(t, append([]string{"cloud", "apikey", "list"}, flags...)...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("list printed %d lines, want a header and 3 keys:\n%s", len(lines), r.stdout)
	}
	if f := strings.Fields(lines[0]); strings.Join(f, " ") != "ID ACCOUNT NAME PREFIX CREATED STATE" {
		t.Errorf("list header = %q", lines[0])
	}
	// Times to the second, in UTC, not RFC 3339 with nanoseconds.
	if !regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`).MatchString(lines[1]) || rfc3339Time.MatchString(lines[1]) {
		t.Errorf("list row %q: want the creation time as 2006-01-02 15:04:05 UTC", lines[1])
	}
	for _, s := range []string{secret, created.Secret, admin} {
		if strings.Contains(r.stdout, s[len(accounts.KeyPrefix):]) {
			t.Errorf("list shows a secret:\n%s", r.stdout)
		}
	}
	for _, want := range []string{k.ID, created.ID, "globex", "ci", k.Prefix + "…", "active, admin"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("list does not show %q:\n%s", want, r.stdout)
		}
	}

	// list --account filters; --json is an array of keys.
	var keys []cloudwire.APIKey
	decode(t, mustRun(t, append([]string{"cloud", "apikey", "list", "--account", "acme", "--json"}, flags...)...), &keys)
	if len(keys) != 1 || keys[0].ID != k.ID || keys[0].Secret != "" {
		t.Errorf("list --account acme --json = %+v, want only %s", keys, k.ID)
	}
	keys = nil
	decode(t, mustRun(t, append([]string{"cloud", "apikey", "list", "--account", "nobody", "--json"}, flags...)...), &keys)
	if keys == nil || len(keys) != 0 {
		t.Errorf("list of an account without keys = %v, want []", keys)
	}

	// revoke ID: the key fails at once.
	r = mustRun(t, append([]string{"cloud", "apikey", "revoke", k.ID}, flags...)...)
	if want := "revoked " + k.ID + " (account acme)\n"; r.stdout != want {
		t.Errorf("revoke printed %q, want %q", r.stdout, want)
	}
	if got := status(t, url, secret); got != http.StatusUnauthorized {
		t.Errorf("the revoked key gets %d, want 401", got)
	}
	r = mustRun(t, append([]string{"cloud", "apikey", "list", "--account", "acme"}, flags...)...)
	if !strings.Contains(r.stdout, "revoked") {
		t.Errorf("list after revoking does not say revoked:\n%s", r.stdout)
	}
	// The ID may come after the flags, and --json prints the record.
	var revoked cloudwire.APIKey
	decode(t, mustRun(t, append(append([]string{"cloud", "apikey", "revoke"}, flags...), "--json", created.ID)...), &revoked)
	if revoked.ID != created.ID || !revoked.Revoked || revoked.RevokedAt == "" {
		t.Errorf("revoke --json = %+v", revoked)
	}

	// The environment may carry the URL and the key.
	t.Setenv("LATTICE_API_URL", url)
	t.Setenv("LATTICE_API_KEY", admin)
	r = mustRun(t, "cloud", "apikey", "create", "--account", "initech")
	if !apiSecretPattern.MatchString(strings.TrimSpace(r.stdout)) {
		t.Errorf("create from the environment printed %q", r.stdout)
	}
}

func TestCloudAPIKeyList(t *testing.T) {
	// More keys than one page: list follows the pages.
	url, st, admin := newTestCloud(t)
	const n = 150
	for i := 0; i < n; i++ {
		if _, _, err := st.CreateKey("many", "", false, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	var keys []cloudwire.APIKey
	decode(t, mustRun(t, "cloud", "apikey", "list", "--json", "--api", url, "--api-key", admin), &keys)
	if len(keys) != n+1 {
		t.Errorf("list --json = %d keys, want %d", len(keys), n+1)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k.ID] {
			t.Errorf("list shows %s twice", k.ID)
		}
		seen[k.ID] = true
	}
	r := mustRun(t, "cloud", "apikey", "list", "--api", url, "--api-key", admin)
	if got := strings.Count(r.stdout, "\n"); got != n+2 {
		t.Errorf("list printed %d lines, want %d", got, n+2)
	}
}

func TestCloudAPIKeyErrors(t *testing.T) {
	url, st, admin := newTestCloud(t)
	_, user, err := st.CreateKey("acme", "", false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		msgs []string
	}{
		{"no operation", []string{"cloud", "apikey"}, 2, []string{"apikey create"}},
		{"unknown operation", []string{"cloud", "apikey", "delete", "--api", url, "--api-key", admin}, 2, []string{"apikey create"}},
		{"create without --api-key", []string{"cloud", "apikey", "create", "--account", "acme", "--api", url}, 2, []string{"--api-key"}},
		{"list without --api-key", []string{"cloud", "apikey", "list", "--api", url}, 2, []string{"--api-key"}},
		{"revoke without --api-key", []string{"cloud", "apikey", "revoke", "key_x", "--api", url}, 2, []string{"--api-key"}},
		{"create without --account", []string{"cloud", "apikey", "create", "--api", url, "--api-key", admin}, 2, []string{"--account"}},
		{"revoke without ID", []string{"cloud", "apikey", "revoke", "--api", url, "--api-key", admin}, 2, []string{"one key ID"}},
		{"revoke two IDs", []string{"cloud", "apikey", "revoke", "a", "b", "--api", url, "--api-key", admin}, 2, []string{"one key ID"}},
		{"unknown flag", []string{"cloud", "apikey", "list", "--bogus", "--api", url, "--api-key", admin}, 2, []string{"bogus"}},
		{"bad account", []string{"cloud", "apikey", "create", "--account", "no spaces", "--api", url, "--api-key", admin}, 1, []string{"validation_error"}},
		{"non-admin key", []string{"cloud", "apikey", "list", "--api", url, "--api-key", user}, 1, []string{"forbidden", "403"}},
		{"unknown key", []string{"cloud", "apikey", "list", "--api", url, "--api-key", "lat_live_nope"}, 1, []string{"unauthorized", "401"}},
		{"revoke unknown ID", []string{"cloud", "apikey", "revoke", "key_nope", "--api", url, "--api-key", admin}, 1, []string{"not_found", "404"}},
		{"revoke itself", []string{"cloud", "apikey", "revoke", mustAdminID(t, st), "--api", url, "--api-key", admin}, 1, []string{"validation_error"}},
		{"no server", []string{"cloud", "apikey", "list", "--api", "http://127.0.0.1:1", "--api-key", admin}, 1, []string{"127.0.0.1:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			wantFail(t, r, tt.code, tt.msgs...)
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
	// None of them made or revoked a key.
	keys, err := st.Keys("")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Errorf("%d keys after the failed commands, want 2", len(keys))
	}
	for _, k := range keys {
		if k.Revoked {
			t.Errorf("a failed command revoked %s", k.ID)
		}
	}
}

func mustAdminID(t *testing.T, st *accounts.Store) string {
	t.Helper()
	keys, err := st.Keys("admin")
	if err != nil || len(keys) != 1 {
		t.Fatalf("admin keys = %v, %v", keys, err)
	}
	return keys[0].ID
}

func TestOpenCloudAdminKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cloud")
	var out strings.Builder
	c := openTestCloud(t, &out, dir)
	path := filepath.Join(dir, "admin-api-key")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("admin key file: %v", err)
	}
	secret := strings.TrimSuffix(string(data), "\n")
	if !apiSecretPattern.MatchString(secret) {
		t.Errorf("admin key file holds %q", data)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("admin key file mode = %v (%v), want 0600", info.Mode().Perm(), err)
	}
	if strings.Count(out.String(), secret) != 1 || !strings.Contains(out.String(), path) {
		t.Errorf("first start printed %q, want the secret once and the file", out.String())
	}
	if k, err := c.Accounts().Authenticate(secret); err != nil || !k.Admin {
		t.Errorf("the admin key file's secret = %+v, %v", k, err)
	}
	c.Close()

	// A second start prints nothing and keeps the file and the key.
	out.Reset()
	c = openTestCloud(t, &out, dir)
	defer c.Close()
	if out.String() != "" {
		t.Errorf("second start printed %q, want nothing", out.String())
	}
	if again, _ := os.ReadFile(path); string(again) != string(data) {
		t.Errorf("second start rewrote the admin key file")
	}
	if _, err := c.Accounts().Authenticate(secret); err != nil {
		t.Errorf("the admin key after a restart: %v", err)
	}
}

// cloudReady matches the banner of `lattice cloud`.
var cloudReady = regexp.MustCompile(`lattice cloud: REST API (http://\S+) \(data `)

func TestCloudServer(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LATTICE_API", "")
	t.Setenv("LATTICE_API_URL", "")
	t.Setenv("LATTICE_API_KEY", "")
	dir := filepath.Join(t.TempDir(), "cloud")
	s := startServer(t, cloudReady, "cloud", "--data", dir, "--api", "127.0.0.1:0")
	data, err := os.ReadFile(filepath.Join(dir, "admin-api-key"))
	if err != nil {
		t.Fatalf("admin key file: %v", err)
	}
	admin := strings.TrimSpace(string(data))
	if !apiSecretPattern.MatchString(admin) || strings.Count(s.stdout.String(), admin) != 1 {
		t.Errorf("first start: admin key %q, printed %q; want it printed once", admin, s.stdout.String())
	}

	// The admin key drives apikey; the new key works; the access log
	// carries the request ID.
	r := mustRun(t, "cloud", "apikey", "create", "--account", "acme", "--api", s.url, "--api-key", admin)
	secret := strings.TrimSpace(r.stdout)
	req, _ := http.NewRequest("GET", s.url+"/api/storage/buckets", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("X-Request-Id", "trace-cli-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Request-Id") != "trace-cli-1" {
		t.Errorf("GET buckets with the new key: %d, X-Request-Id %q", resp.StatusCode, resp.Header.Get("X-Request-Id"))
	}
	// The S3 endpoint runs beside the REST API, on the same store.
	m := regexp.MustCompile(`lattice cloud: S3 endpoint (http://\S+) \(region us-east-1\)`).FindStringSubmatch(s.stdout.String())
	if m == nil {
		t.Fatalf("no S3 endpoint in the banner %q", s.stdout.String())
	}
	checkS3Endpoint(t, s.url, m[1], secret)
	// The REST API's endpoint record names the S3 address really bound.
	req, _ = http.NewRequest("GET", s.url+"/api/storage/endpoint", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var ep struct {
		Endpoint string `json:"endpoint"`
		Port     int    `json:"port"`
		Region   string `json:"region"`
	}
	json.NewDecoder(resp.Body).Decode(&ep)
	resp.Body.Close()
	if ep.Endpoint != m[1] || !strings.HasSuffix(m[1], fmt.Sprintf(":%d", ep.Port)) || ep.Region != "us-east-1" {
		t.Errorf("GET /api/storage/endpoint = %+v, want %s", ep, m[1])
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("cloud exited %d after SIGINT, want 0\nstderr: %s", code, s.stderr.String())
	}
	log := s.stderr.String()
	if !strings.Contains(log, `"msg":"http"`) || !strings.Contains(log, `"request_id":"trace-cli-1"`) || !strings.Contains(log, `"account":"acme"`) {
		t.Errorf("access log lacks the request:\n%s", log)
	}
	if strings.Contains(log, secret[len(accounts.KeyPrefix):]) || strings.Contains(log, admin[len(accounts.KeyPrefix):]) {
		t.Errorf("the log holds an API key:\n%s", log)
	}

	// A restart prints no key, and both keys still work.
	s = startServer(t, cloudReady, "cloud", "--data", dir, "--api", "127.0.0.1:0")
	if strings.Contains(s.stdout.String(), "lat_live_") {
		t.Errorf("second start printed a key:\n%s", s.stdout.String())
	}
	if got := status(t, s.url, secret); got != http.StatusOK {
		t.Errorf("acme's key after a restart: %d", got)
	}
	mustRun(t, "cloud", "apikey", "list", "--api", s.url, "--api-key", admin)
	if code := s.stop(); code != 0 {
		t.Errorf("second cloud exited %d", code)
	}
}

// TestStaleAdminKeyFile: an admin key file left over from a wiped
// database is replaced by the new key, which then works.
func TestStaleAdminKeyFile(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "admin-api-key")
	if err := os.WriteFile(path, []byte("lat_live_stale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := openTestCloud(t, &out, dir)
	defer c.Close()
	data, _ := os.ReadFile(path)
	secret := strings.TrimSpace(string(data))
	if secret == "lat_live_stale" || !strings.Contains(out.String(), secret) {
		t.Fatalf("key file holds %q; output:\n%s", secret, out.String())
	}
	if k, err := c.Accounts().Authenticate(secret); err != nil || !k.Admin {
		t.Errorf("the admin key in the file does not authenticate as admin: %+v, %v", k, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %04o, want 0600", st.Mode().Perm())
	}
}

// checkS3Endpoint makes an S3 key over REST with apiKey, creates a bucket
// over S3 with it and finds it over REST.
func checkS3Endpoint(t *testing.T, apiURL, s3URL, apiKey string) {
	t.Helper()
	req, _ := http.NewRequest("POST", apiURL+"/api/storage/keys", strings.NewReader(`{"name":"cli-test"}`))
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var key struct {
		ID     string `json:"access_key_id"`
		Secret string `json:"secret_access_key"`
	}
	json.NewDecoder(resp.Body).Decode(&key)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || key.Secret == "" {
		t.Fatalf("create S3 key: %d", resp.StatusCode)
	}
	req, _ = http.NewRequest("PUT", s3URL+"/from-s3", nil)
	sigv4.Sign(req, key.ID, key.Secret, "us-east-1", sigv4.EmptySHA256, time.Now())
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("S3 CreateBucket: %v %v", resp, err)
	}
	resp.Body.Close()
	req, _ = http.NewRequest("GET", apiURL+"/api/storage/buckets/from-s3", nil)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the bucket made over S3, over REST: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestCloudPublicURL: behind a proxy, --public-url is the base of
// presigned URLs; a malformed one is a usage error.
func TestCloudPublicURL(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LATTICE_API", "")
	dir := filepath.Join(t.TempDir(), "cloud")
	wantFail(t, run(t, "cloud", "--data", dir, "--api", "127.0.0.1:0", "--public-url", "storage.example.com"), 2, "--public-url")
	wantFail(t, run(t, "cloud", "--data", dir, "--api", "127.0.0.1:0", "--proxy-networks", "lb.example"), 2, `--proxy-networks "lb.example": want an address`)
	wantFail(t, run(t, "cloud", "--data", dir, "--api", "127.0.0.1:0", "--dns-transfer-from", "ns2.example"), 2, `--dns-transfer-from "ns2.example": want an address`)
	if _, err := os.Stat(dir); err == nil {
		t.Error("a usage error created the data directory")
	}
	s := startServer(t, cloudReady, "cloud", "--data", dir, "--api", "127.0.0.1:0", "--public-url", "https://storage.example.com/base", "--proxy-networks", "203.0.113.0/24")
	// A second platform on the same data directory says what is wrong.
	wantFail(t, run(t, "cloud", "--data", dir, "--api", "127.0.0.1:0"), 1, "in use by another process (is a lattice server already running on this data directory?)")
	data, err := os.ReadFile(filepath.Join(dir, "admin-api-key"))
	if err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(string(data))
	if !strings.Contains(s.stderr.String(), `proxy networks spared the bounds per client address`) || !strings.Contains(s.stderr.String(), "203.0.113.0/24") {
		t.Errorf("the start does not name the proxy networks:\n%s", s.stderr.String())
	}
	mustRun(t, "s3", "mb", "pub", "--api", s.url, "--api-key", admin)
	r := mustRun(t, "s3", "presign", "s3://pub/a.txt", "--api", s.url, "--api-key", admin)
	if !strings.HasPrefix(r.stdout, "https://storage.example.com/base/api/storage/buckets/pub/download/a.txt?token=") {
		t.Errorf("presigned URL = %q", r.stdout)
	}
	s.stop()
}

// openTestCloud provisions the platform in dir, as lattice cloud does,
// on loopback ports with no DNS server and no edge; the first start's
// admin key is printed on out.
func openTestCloud(t *testing.T, out io.Writer, dir string) *platform.Platform {
	t.Helper()
	p, _ := newCloud(&env{stdout: out, stderr: io.Discard}, cloudConfig{
		Config:  platform.Config{Dir: dir, API: "127.0.0.1:0"},
		Storage: platform.StorageConfig{S3: "127.0.0.1:0"},
	})
	if err := p.Listen(); err != nil {
		t.Fatal(err)
	}
	if err := p.Provision(); err != nil {
		p.Close()
		t.Fatalf("Provision: %v", err)
	}
	return p
}

// TestExposure: the banner says which addresses other machines reach;
// every default is loopback, so only an address asked for is public.
func TestExposure(t *testing.T) {
	for _, tt := range []struct {
		addr   string
		public bool
	}{
		{"http://127.0.0.1:8090", false},
		{"127.0.0.1:8053", false},
		{"http://localhost:9000", false},
		{"[::1]:53", false},
		{"http://0.0.0.0:8090", true},
		{":53", true},
		{"[::]:53", true},
		{"http://192.0.2.10:9000", true},
		{"not an address", false},
	} {
		if got := exposure(tt.addr) != ""; got != tt.public {
			t.Errorf("exposure(%q) public = %v, want %v", tt.addr, got, tt.public)
		}
	}
}

// TestCloudAccessLogInterval: the access log delivery interval is a
// duration from a second to a day; anything else is a usage error that
// creates nothing.
func TestCloudAccessLogInterval(t *testing.T) {
	cleanEnv(t)
	dir := filepath.Join(t.TempDir(), "cloud")
	for _, v := range []string{"soon", "0s", "500ms", "48h"} {
		wantFail(t, run(t, "cloud", "--data", dir, "--api", "127.0.0.1:0", "--s3", "127.0.0.1:0", "--s3-access-log-interval", v), 2, "--s3-access-log-interval")
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("a usage error created the data directory")
	}
}
