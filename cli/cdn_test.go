package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

var cloudCDNReady = regexp.MustCompile(`lattice cloud: CDN edge (http://\S+) \(deployments answer at NAME\.(\S+)\)`)

// edgeGet asks the edge at edgeURL for path as host would, and returns the
// status, X-Cache and body.
func edgeGet(t *testing.T, edgeURL, host, path string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, edgeURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s%s: %v", host, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("X-Cache"), string(b)
}

// TestCDNCommands drives `lattice cdn` against a real `lattice cloud`:
// a deployment in front of a bucket (the README's walk-through: MISS, HIT,
// purge, MISS) and one in front of an HTTP origin, custom domains made
// through the platform's DNS, and the errors a person meets.
func TestCDNCommands(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LATTICE_API", "")
	dir := filepath.Join(t.TempDir(), "cloud")
	s := startServer(t, cloudCDNReady, "cloud", "--data", dir, "--api", "127.0.0.1:0", "--s3", "127.0.0.1:0",
		"--dns", "127.0.0.1:0", "--cdn", "127.0.0.1:0", "--cdn-private-origins", "true", "--cdn-verify-own-dns", "true")
	m := cloudCDNReady.FindStringSubmatch(s.stdout.String())
	edgeURL, cdnDomain := m[1], m[2]
	if cdnDomain != "cdn.localhost" {
		t.Errorf("CDN domain %q, want the default cdn.localhost", cdnDomain)
	}
	apiURL := cloudReady.FindStringSubmatch(s.stdout.String())[1]
	admin, err := os.ReadFile(filepath.Join(dir, "admin-api-key"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LATTICE_API_URL", apiURL)
	t.Setenv("LATTICE_API_KEY", strings.TrimSpace(string(admin)))

	// A bucket origin, as the README does it.
	work := t.TempDir()
	index := filepath.Join(work, "index.html")
	if err := os.WriteFile(index, []byte("<h1>hello</h1>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "s3", "mb", "site")
	mustRun(t, "s3", "cp", index, "s3://site/")
	r := mustRun(t, "cdn", "create", "site", "--origin", "s3://site")
	if !strings.Contains(r.stdout, "deployment site created") || !strings.Contains(r.stdout, "site.cdn.localhost") {
		t.Errorf("cdn create: %q", r.stdout)
	}
	host := "site.cdn.localhost"
	for i, want := range []string{"MISS", "HIT"} {
		if code, xc, body := edgeGet(t, edgeURL, host, "/"); code != 200 || xc != want || body != "<h1>hello</h1>\n" {
			t.Errorf("fetch %d: %d %s %q, want 200 %s", i+1, code, xc, body, want)
		}
	}
	if r := mustRun(t, "cdn", "purge", "site"); !strings.Contains(r.stdout, "purged 1 cached response of site") {
		t.Errorf("cdn purge: %q", r.stdout)
	}
	if _, xc, _ := edgeGet(t, edgeURL, host, "/"); xc != "MISS" {
		t.Errorf("after the purge: X-Cache %s, want MISS (the origin again)", xc)
	}
	show := mustRun(t, "cdn", "show", "site").stdout
	for _, want := range []string{"origin:       s3://site", "requests:    3 (1 hits", "cached:      1 responses"} {
		if !strings.Contains(show, want) {
			t.Errorf("cdn show lacks %q:\n%s", want, show)
		}
	}

	// An HTTP origin; purges of paths and prefixes.
	var hits atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Cache-Control", "max-age=600")
		fmt.Fprintf(w, "page %s", r.URL.Path)
	}))
	t.Cleanup(origin.Close)
	mustRun(t, "cdn", "create", "app", "--origin", origin.URL, "--default-ttl", "60")
	for _, p := range []string{"/a", "/img/1.png", "/img/2.png"} {
		edgeGet(t, edgeURL, "app.cdn.localhost", p)
	}
	// A path without its slash is purged with one, and the answer says so.
	if r := mustRun(t, "cdn", "purge", "app", "a", "--prefix", "/img/"); !strings.Contains(r.stdout, "purged 3 cached responses of app (/a, prefix /img/)") {
		t.Errorf("cdn purge of a path and a prefix: %q", r.stdout)
	}
	before := hits.Load()
	if _, xc, body := edgeGet(t, edgeURL, "app.cdn.localhost", "/img/2.png"); xc != "MISS" || body != "page /img/2.png" || hits.Load() != before+1 {
		t.Errorf("a purged prefix: X-Cache %s body %q, origin requests %d → %d", xc, body, before, hits.Load())
	}

	var list []cloudwire.Deployment
	if err := json.Unmarshal([]byte(mustRun(t, "cdn", "ls", "--json").stdout), &list); err != nil || len(list) != 2 || list[0].Name != "app" || list[1].Name != "site" {
		t.Errorf("cdn ls --json: %v %+v", err, list)
	}

	// A custom domain in a zone of the platform's DNS: its CNAME is made,
	// and, with the platform's own DNS server verifying (as under lattice
	// dev, whose zones are all the DNS there is), the edge answers for it
	// at once.
	mustRun(t, "dns", "zone", "create", "example.com")
	if r := mustRun(t, "cdn", "domain", "add", "site", "www.example.com"); !strings.Contains(r.stdout, "active") ||
		!strings.Contains(r.stdout, "is in your zone example.com") {
		t.Errorf("cdn domain add in a platform zone: %q", r.stdout)
	}
	if ls := mustRun(t, "dns", "record", "ls", "example.com").stdout; !regexp.MustCompile(`www\.example\.com +CNAME .*site\.cdn\.localhost`).MatchString(ls) {
		t.Errorf("no CNAME made for the custom domain:\n%s", ls)
	}
	if code, _, body := edgeGet(t, edgeURL, "www.example.com", "/"); code != 200 || body != "<h1>hello</h1>\n" {
		t.Errorf("the custom domain on the edge: %d %q", code, body)
	}
	// Elsewhere it waits for its CNAME, and verify says what DNS gave.
	if r := mustRun(t, "cdn", "domain", "add", "site", "www.elsewhere.invalid"); !strings.Contains(r.stdout, "pending") ||
		!strings.Contains(r.stderr+r.stdout, "www.elsewhere.invalid CNAME site.cdn.localhost") {
		t.Errorf("cdn domain add elsewhere: %q %q", r.stdout, r.stderr)
	}
	wantFail(t, run(t, "cdn", "domain", "verify", "site", "www.elsewhere.invalid"), 1, "not verified")
	if code, _, _ := edgeGet(t, edgeURL, "www.elsewhere.invalid", "/"); code != http.StatusNotFound {
		t.Errorf("a pending domain on the edge: %d, want 404", code)
	}
	doms := mustRun(t, "cdn", "domains", "site").stdout
	for _, want := range []string{"site.cdn.localhost", "www.example.com", "www.elsewhere.invalid", "CNAME made in your zone example.com"} {
		if !strings.Contains(doms, want) {
			t.Errorf("cdn domains lacks %s:\n%s", want, doms)
		}
	}
	mustRun(t, "cdn", "domain", "rm", "site", "www.example.com")
	if ls := mustRun(t, "dns", "record", "ls", "example.com").stdout; strings.Contains(ls, "CNAME") {
		t.Errorf("the CNAME outlived its domain:\n%s", ls)
	}

	// What a person gets wrong.
	wantFail(t, run(t, "cdn", "create", "site", "--origin", "s3://site"), 1, "taken")
	wantFail(t, run(t, "cdn", "create", "bad", "--origin", "ftp://x"), 1, "want http(s)://")
	wantFail(t, run(t, "cdn", "create", "Bad_Name", "--origin", "s3://site"), 1)
	wantFail(t, run(t, "cdn", "create", "nob", "--origin", "s3://nosuchbucket"), 1, "nosuchbucket")
	wantFail(t, run(t, "cdn", "create", "nothing"), 2, "--origin is required")
	wantFail(t, run(t, "cdn", "purge", "nosuch"), 1, "nosuch")
	wantFail(t, run(t, "cdn", "purge", "site", "/a?x=1"), 1, "query")
	wantFail(t, run(t, "cdn", "frobnicate"), 2, "unknown command")

	// Another account sees none of it.
	other := strings.TrimSpace(mustRun(t, "cloud", "apikey", "create", "--account", "other", "--name", "t").stdout)
	t.Setenv("LATTICE_API_KEY", other)
	if r := mustRun(t, "cdn", "ls"); strings.Contains(r.stdout, "site") {
		t.Errorf("another account lists acme's deployments: %q", r.stdout)
	}
	wantFail(t, run(t, "cdn", "purge", "site"), 1, "site")
	t.Setenv("LATTICE_API_KEY", strings.TrimSpace(string(admin)))

	mustRun(t, "cdn", "rm", "site")
	if code, _, _ := edgeGet(t, edgeURL, host, "/"); code != http.StatusNotFound {
		t.Errorf("a deleted deployment on the edge: %d, want 404", code)
	}
}
