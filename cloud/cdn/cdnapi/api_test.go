package cdnapi_test

// End-to-end tests of the CDN endpoints: real stores in a temporary
// directory (objects, DNS, CDN), the real cloudapi server with the DNS and
// CDN routes, the real edge and a real origin, all on loopback, driven
// with real requests under the API keys of two accounts, alice and bob.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/cdn/cdnapi"
	"github.com/latticenet/lattice/cloud/cdn/cdnedge"
	"github.com/latticenet/lattice/cloud/cdn/cdnstore"
	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/dns/dnsserver"
	"github.com/latticenet/lattice/cloud/dns/dnsstore"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/internal/testkit/apitest"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// testAPI is a served API with the CDN routes, its edge and an origin.
type testAPI struct {
	t          *testing.T
	url, edge  string // the REST API's and the edge's base URLs
	origin     *httptest.Server
	fetches    atomic.Int64 // requests the origin answered
	objects    *cloudstore.Store
	dns        *dnsstore.Store
	alice, bob string // API key secrets
}

type options struct {
	private  bool            // allow private origins
	resolver cdnapi.Resolver // default: none reachable
	ownDNS   bool            // verify with a DNS server of the platform's own zones, as lattice dev does
	noEdge   bool            // register the API without an edge
	fastPath bool            // serve the edge on its own listener (Edge.Listener), with its fast path for hits
}

func newAPI(t *testing.T, o options) *testAPI {
	t.Helper()
	dir := t.TempDir()
	a := &testAPI{t: t}
	a.origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.fetches.Add(1)
		w.Header().Set("Cache-Control", "public, max-age=600")
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "origin says %s", r.URL.Path)
	}))
	t.Cleanup(a.origin.Close)
	cs, err := cloudstore.OpenDir(filepath.Join(dir, "cloud"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dnsstore.Open(filepath.Join(dir, "dns"), dnsstore.Options{Logger: quiet, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	st, err := cdnstore.Open(filepath.Join(dir, "cdn"), cdnstore.Options{Logger: quiet, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	var edge *cdnedge.Edge
	if !o.noEdge {
		if edge, err = cdnedge.New(cdnedge.Options{Store: st, Buckets: cs, AllowPrivateOrigins: true, Logger: quiet}); err != nil {
			t.Fatal(err)
		}
		es := httptest.NewUnstartedServer(edge)
		if o.fastPath {
			es.Listener = edge.Listener(es.Listener)
		}
		es.Start()
		a.edge = es.URL
		t.Cleanup(func() { es.Close(); edge.Close() })
	}
	acc := apitest.Accounts(t)
	api := cloudapi.New(cs, acc, cloudapi.Options{RatePerSecond: -1, Logger: quiet})
	if o.ownDNS {
		o.resolver = serveDNS(t, ds)
	}
	cdnapi.Register(api, cdnapi.Options{Store: st, Edge: edge, Buckets: cs, DNS: ds, AllowPrivateOrigins: o.private, Resolver: o.resolver})
	srv := httptest.NewServer(openapitest.Cloud.Handler(t, api))
	t.Cleanup(func() {
		srv.Close()
		api.Wait()
		st.Close()
		ds.Close()
		cs.Close()
	})
	a.url, a.objects, a.dns = srv.URL, cs, ds
	for _, acct := range []struct {
		name   string
		secret *string
	}{{"alice", &a.alice}, {"bob", &a.bob}} {
		_, secret, err := acc.CreateKey(acct.name, "", false, t0)
		if err != nil {
			t.Fatal(err)
		}
		*acct.secret = secret
	}
	return a
}

func (a *testAPI) do(method, path, key, body string) apitest.Response {
	a.t.Helper()
	return apitest.Do(a.t, method, a.url+path, key, body)
}

// create makes a deployment and returns it.
func (a *testAPI) create(key, name, origin string) cloudwire.Deployment {
	a.t.Helper()
	r := a.do("POST", "/api/cdn/deployments", key, fmt.Sprintf(`{"name": %q, "origin": %q}`, name, origin))
	apitest.Want(a.t, "create "+name, r, http.StatusCreated)
	var d cloudwire.Deployment
	apitest.Decode(a.t, "create "+name, r, &d)
	return d
}

// get fetches path through the edge for host and returns the status,
// X-Cache and body.
func (a *testAPI) get(host, path string) (int, string, string) {
	a.t.Helper()
	req, _ := http.NewRequest("GET", a.edge+path, nil)
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("X-Cache"), string(body)
}

func TestDeployments(t *testing.T) {
	a := newAPI(t, options{private: true})
	d := a.create(a.alice, "site", a.origin.URL+"/base/")
	if d.Name != "site" || d.CNAME != "site.cdn.localhost" || d.Origin != a.origin.URL+"/base" || d.DefaultTTL != 3600 || len(d.ID) != 16 {
		t.Errorf("created %+v", d)
	}
	if _, err := time.Parse(time.RFC3339, d.CreatedAt); err != nil {
		t.Errorf("created_at %q: %v", d.CreatedAt, err)
	}
	r := a.do("POST", "/api/cdn/deployments", a.alice, `{"name": "short", "origin": "https://example.com", "default_ttl": 60}`)
	apitest.Want(t, "create with default_ttl", r, http.StatusCreated)

	var list cloudwire.List[cloudwire.Deployment]
	r = a.do("GET", "/api/cdn/deployments", a.alice, "")
	apitest.Want(t, "list", r, http.StatusOK)
	apitest.Decode(t, "list", r, &list)
	if list.Meta.Total != 2 || len(list.Data) != 2 || list.Data[0].Name != "short" || list.Data[1] != d {
		t.Errorf("list: %+v", list)
	}
	r = a.do("GET", "/api/cdn/deployments?per_page=1&page=2", a.alice, "")
	apitest.Decode(t, "page 2", r, &list)
	if len(list.Data) != 1 || list.Data[0].Name != "site" || list.Meta.Page != 2 {
		t.Errorf("page 2: %+v", list)
	}
	var got cloudwire.Deployment
	r = a.do("GET", "/api/cdn/deployments/"+d.ID, a.alice, "")
	apitest.Want(t, "get", r, http.StatusOK)
	apitest.Decode(t, "get", r, &got)
	if got != d {
		t.Errorf("get: %+v, want %+v", got, d)
	}

	// Through the edge: the origin's path prefix, MISS then HIT.
	if status, xc, body := a.get("site.cdn.localhost", "/a.txt"); status != 200 || xc != "MISS" || body != "origin says /base/a.txt" {
		t.Errorf("first fetch: %d %s %q", status, xc, body)
	}
	if status, xc, _ := a.get("site.cdn.localhost", "/a.txt"); status != 200 || xc != "HIT" {
		t.Errorf("second fetch: %d %s", status, xc)
	}

	apitest.Want(t, "delete", a.do("DELETE", "/api/cdn/deployments/"+d.ID, a.alice, ""), http.StatusNoContent)
	apitest.WantError(t, "get deleted", a.do("GET", "/api/cdn/deployments/"+d.ID, a.alice, ""), 404, "not_found", "deployment")
	if status, _, _ := a.get("site.cdn.localhost", "/a.txt"); status != http.StatusNotFound {
		t.Errorf("edge after delete: %d, want 404", status)
	}
	// The name is free again.
	a.create(a.bob, "site", a.origin.URL)
}

func TestCreateRefusals(t *testing.T) {
	a := newAPI(t, options{})
	if _, err := a.objects.CreateBucket("alice", "alice-assets", "", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := a.objects.CreateBucket("bob", "bob-private", "", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := a.objects.CreateBucket("bob", "bob-public", "", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := a.objects.UpdateBucket("bob", "bob-public", t0, func(b *cloudstore.Bucket) { b.Public = true }); err != nil {
		t.Fatal(err)
	}
	a.create(a.alice, "taken", "https://example.com")
	cases := []struct {
		name, body string
		status     int
		code, msg  string
	}{
		{"no name", `{"origin": "https://example.com"}`, 400, "validation_error", "name is required"},
		{"no origin", `{"name": "x"}`, 400, "validation_error", "origin is required"},
		{"bad name", `{"name": "My Site", "origin": "https://example.com"}`, 400, "validation_error", "lower-case"},
		{"bad origin scheme", `{"name": "x", "origin": "ftp://example.com"}`, 400, "validation_error", "http(s)://"},
		{"origin with query", `{"name": "x", "origin": "https://example.com/?a=1"}`, 400, "validation_error", "query"},
		{"loopback origin", `{"name": "x", "origin": "http://127.0.0.1:8080"}`, 400, "validation_error", "private"},
		{"private origin", `{"name": "x", "origin": "http://10.1.2.3"}`, 400, "validation_error", "private"},
		{"metadata origin", `{"name": "x", "origin": "http://169.254.169.254"}`, 400, "validation_error", "private"},
		{"localhost origin", `{"name": "x", "origin": "http://localhost:9000"}`, 400, "validation_error", "private"},
		{"another's private bucket", `{"name": "x", "origin": "s3://bob-private"}`, 400, "validation_error", "no bucket of yours"},
		{"no such bucket", `{"name": "x", "origin": "s3://nothing-here"}`, 400, "validation_error", "no bucket of yours"},
		{"negative ttl", `{"name": "x", "origin": "https://example.com", "default_ttl": -5}`, 400, "validation_error", "default_ttl"},
		{"unknown field", `{"name": "x", "origin": "https://example.com", "ttl": 5}`, 400, "validation_error", "unknown field"},
		{"taken name", `{"name": "taken", "origin": "https://example.com"}`, 409, "conflict", "taken"},
		{"not JSON", `name=x`, 400, "validation_error", "the body must be a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			apitest.WantError(t, c.name, a.do("POST", "/api/cdn/deployments", a.alice, c.body), c.status, c.code, c.msg)
		})
	}
	apitest.WantError(t, "no key", a.do("GET", "/api/cdn/deployments", "", ""), 401, "unauthorized", "")
	a.create(a.alice, "own-bucket", "s3://alice-assets/v1")
	a.create(a.alice, "public-bucket", "s3://bob-public")
	var list cloudwire.List[cloudwire.Deployment]
	apitest.Decode(t, "list", a.do("GET", "/api/cdn/deployments", a.alice, ""), &list)
	if list.Meta.Total != 3 {
		t.Errorf("after the refusals alice has %d deployments, want 3: %+v", list.Meta.Total, list.Data)
	}
}

// TestTenancy: bob reaches none of alice's deployment's endpoints, and
// learns nothing: each answers 404 as for an id that does not exist.
func TestTenancy(t *testing.T) {
	a := newAPI(t, options{private: true})
	d := a.create(a.alice, "site", a.origin.URL)
	base := "/api/cdn/deployments/" + d.ID
	for _, c := range []struct{ method, path, body string }{
		{"GET", base, ""},
		{"DELETE", base, ""},
		{"GET", base + "/domains", ""},
		{"POST", base + "/domains", `{"name": "www.bob.example"}`},
		{"GET", base + "/domains/site.cdn.localhost", ""},
		{"POST", base + "/domains/www.bob.example/verify", ""},
		{"DELETE", base + "/domains/www.bob.example", ""},
		{"POST", base + "/purge", `{}`},
		{"GET", base + "/stats", ""},
	} {
		for _, id := range []string{d.ID, "0123456789abcdef"} {
			path := strings.Replace(c.path, d.ID, id, 1)
			apitest.WantError(t, "bob "+c.method+" "+path, a.do(c.method, path, a.bob, c.body), 404, "not_found", "deployment not found")
		}
	}
	apitest.Want(t, "alice still has it", a.do("GET", base, a.alice, ""), http.StatusOK)
	var list cloudwire.List[cloudwire.Deployment]
	apitest.Decode(t, "bob's list", a.do("GET", "/api/cdn/deployments", a.bob, ""), &list)
	if list.Meta.Total != 0 {
		t.Errorf("bob lists %+v", list.Data)
	}
}

func TestPurgeAndStats(t *testing.T) {
	a := newAPI(t, options{private: true})
	d := a.create(a.alice, "site", a.origin.URL)
	base := "/api/cdn/deployments/" + d.ID
	host := "site.cdn.localhost"
	for _, p := range []string{"/css/a.css", "/css/b.css", "/img/x.png", "/a b.txt"} {
		a.get(host, p)
	}
	purge := func(body string, want int) {
		t.Helper()
		r := a.do("POST", base+"/purge", a.alice, body)
		apitest.Want(t, "purge "+body, r, http.StatusOK)
		var res cloudwire.PurgeResult
		apitest.Decode(t, "purge", r, &res)
		if res.Purged != want {
			t.Errorf("purge %s: purged %d, want %d", body, res.Purged, want)
		}
	}
	purge(`{"paths": ["/css/a.css"]}`, 1)
	if _, xc, _ := a.get(host, "/css/a.css"); xc != "MISS" {
		t.Errorf("a purged path: X-Cache %s, want MISS", xc)
	}
	if _, xc, _ := a.get(host, "/css/b.css"); xc != "HIT" {
		t.Errorf("a path not purged: X-Cache %s, want HIT", xc)
	}
	purge(`{"paths": ["/a b.txt"]}`, 1) // given unescaped, cached escaped
	purge(`{"prefixes": ["/css/"]}`, 2)
	fetches := a.fetches.Load()
	purge("", 1) // no body: everything (/img/x.png is left)
	if _, xc, _ := a.get(host, "/img/x.png"); xc != "MISS" || a.fetches.Load() != fetches+1 {
		t.Errorf("after purging everything: X-Cache %s, origin fetches %d → %d", xc, fetches, a.fetches.Load())
	}
	for _, c := range []struct{ name, body, msg string }{
		{"relative path", `{"paths": ["css/a.css"]}`, "beginning with /"},
		{"query", `{"paths": ["/a?x=1"]}`, "without a query"},
		{"relative prefix", `{"prefixes": ["img"]}`, "beginning with /"},
		{"too many", `{"paths": [` + strings.TrimSuffix(strings.Repeat(`"/x",`, 101), ",") + `]}`, "at most 100"},
		{"unknown field", `{"urls": ["/x"]}`, "unknown field"},
	} {
		apitest.WantError(t, "purge "+c.name, a.do("POST", base+"/purge", a.alice, c.body), 400, "validation_error", c.msg)
	}

	var st cloudwire.CDNStats
	r := a.do("GET", base+"/stats", a.alice, "")
	apitest.Want(t, "stats", r, http.StatusOK)
	apitest.Decode(t, "stats", r, &st)
	// Fetched: 4 misses, then a.css MISS, b.css HIT, x.png MISS; only
	// x.png is cached now.
	if st.Requests != 7 || st.Hits != 1 || st.Misses != 6 || st.OriginRequests != 6 || st.CachedObjects != 1 || st.HitRatio != 1.0/7 {
		t.Errorf("stats: %+v", st)
	}
	if st.BytesServed == 0 || st.OriginBytes == 0 || st.CachedBytes == 0 {
		t.Errorf("stats count no bytes: %+v", st)
	}
	// An empty body of unknown length (chunked) is no body too.
	req, _ := http.NewRequest("POST", a.url+base+"/purge", io.NopCloser(strings.NewReader("")))
	req.Header.Set("Authorization", "Bearer "+a.alice)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("purge with an empty chunked body: got %d %s, want 200", resp.StatusCode, data)
	}
}

// TestNoEdge: without an edge the API keeps deployments; purges and
// figures answer empty.
func TestNoEdge(t *testing.T) {
	a := newAPI(t, options{noEdge: true})
	d := a.create(a.alice, "site", "https://example.com")
	r := a.do("POST", "/api/cdn/deployments/"+d.ID+"/purge", a.alice, "{}")
	apitest.Want(t, "purge", r, http.StatusOK)
	r = a.do("GET", "/api/cdn/deployments/"+d.ID+"/stats", a.alice, "")
	apitest.Want(t, "stats", r, http.StatusOK)
	var st cloudwire.CDNStats
	apitest.Decode(t, "stats", r, &st)
	if _, err := time.Parse(time.RFC3339, st.Since); err != nil || st.Requests != 0 || st.CachedObjects != 0 {
		t.Errorf("stats without an edge: got %+v, want zero counts since an RFC 3339 time", st)
	}
}

// domainList returns a deployment's domains.
func (a *testAPI) domainList(key, id string) []cloudwire.Domain {
	a.t.Helper()
	r := a.do("GET", "/api/cdn/deployments/"+id+"/domains", key, "")
	apitest.Want(a.t, "domains", r, http.StatusOK)
	var list cloudwire.List[cloudwire.Domain]
	apitest.Decode(a.t, "domains", r, &list)
	return list.Data
}

// TestDomainInPlatformDNS: a custom domain in the account's own zone on
// this platform gets its CNAME made and is active at once; removing it
// removes the CNAME; names that cannot be a CNAME, or lie in another
// account's zone, are refused.
func TestDomainInPlatformDNS(t *testing.T) {
	a := newAPI(t, options{private: true, ownDNS: true})
	d := a.create(a.alice, "site", a.origin.URL)
	base := "/api/cdn/deployments/" + d.ID
	z, err := a.dns.CreateZone("alice", "alice.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.dns.CreateZone("bob", "bob.example"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.dns.AddRecord("alice", z.ID, dnszone.Input{Type: "A", Name: "taken", Value: "192.0.2.1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.dns.AddRecord("alice", z.ID, dnszone.Input{Type: "NS", Name: "deleg", Value: "ns1.elsewhere.example"}); err != nil {
		t.Fatal(err)
	}

	r := a.do("POST", base+"/domains", a.alice, `{"name": "www.alice.example"}`)
	apitest.Want(t, "add www", r, http.StatusCreated)
	var dom cloudwire.Domain
	apitest.Decode(t, "add www", r, &dom)
	if dom.Name != "www.alice.example" || dom.Status != "active" || dom.Type != "custom" || dom.Zone != z.ID || dom.Verification != nil {
		t.Errorf("added %+v: want active in zone %s", dom, z.ID)
	}
	answer := a.dns.Snapshot("alice.example").Answer("www.alice.example.", dns.TypeA)
	if len(answer.Answer) == 0 || answer.Answer[0].Header().Rrtype != dns.TypeCNAME || answer.Answer[0].(*dns.CNAME).Target != "site.cdn.localhost." {
		t.Errorf("the zone answers www with %v, want a CNAME to site.cdn.localhost.", answer.Answer)
	}
	if status, xc, body := a.get("www.alice.example", "/x"); status != 200 || xc != "MISS" || body != "origin says /x" {
		t.Errorf("the edge for the custom domain: %d %s %q", status, xc, body)
	}
	doms := a.domainList(a.alice, d.ID)
	if len(doms) != 2 || doms[0].Name != "site.cdn.localhost" || doms[0].Type != "default" || doms[1].Name != "www.alice.example" {
		t.Errorf("domains: %+v", doms)
	}

	for _, c := range []struct {
		name, domain string
		status       int
		code, msg    string
	}{
		{"apex", "alice.example", 400, "validation_error", "apex"},
		{"name with other records", "taken.alice.example", 409, "conflict", "already has a A record"},
		{"another account's zone", "www.bob.example", 409, "conflict", "another account"},
		{"under the CDN domain", "x.cdn.localhost", 400, "validation_error", "CDN's own domain"},
		{"already attached", "www.alice.example", 409, "conflict", "taken"},
		{"below a delegation", "www.deleg.alice.example", 400, "validation_error", "delegated"},
		{"not a host name", "http://x.example/", 400, "validation_error", "no scheme"},
		{"a bad label", "exa mple.example", 400, "validation_error", "exa mple"},
	} {
		apitest.WantError(t, c.name, a.do("POST", base+"/domains", a.alice, fmt.Sprintf(`{"name": %q}`, c.domain)), c.status, c.code, c.msg)
	}
	if n := len(a.domainList(a.alice, d.ID)); n != 2 {
		t.Errorf("after the refusals: %d domains, want 2", n)
	}

	apitest.Want(t, "remove www", a.do("DELETE", base+"/domains/www.alice.example", a.alice, ""), http.StatusNoContent)
	records, _ := a.dns.Records("alice", z.ID)
	for _, rec := range records {
		if rec.Name == "www.alice.example" {
			t.Errorf("the CNAME outlived its domain: %+v", rec)
		}
	}
	if status, _, _ := a.get("www.alice.example", "/x"); status != 404 {
		t.Errorf("the edge after removing the domain: %d, want 404", status)
	}

	// Deleting the deployment removes the CNAMEs it made.
	apitest.Want(t, "add api", a.do("POST", base+"/domains", a.alice, `{"name": "api.alice.example"}`), http.StatusCreated)
	apitest.Want(t, "delete deployment", a.do("DELETE", base, a.alice, ""), http.StatusNoContent)
	records, _ = a.dns.Records("alice", z.ID)
	for _, rec := range records {
		if rec.Type == "CNAME" {
			t.Errorf("a CNAME outlived its deployment: %+v", rec)
		}
	}
}

// serveDNS serves st's zones on a real authoritative server on loopback
// until the test ends, and returns Go's own resolver asking it.
func serveDNS(t *testing.T, st *dnsstore.Store) *net.Resolver {
	t.Helper()
	udp, tcp, err := dnsserver.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := dnsserver.New(dnsserver.Options{Logger: quiet})
	st.Watch(srv.Update)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, udp[0], tcp, udp[1:]...) }()
	t.Cleanup(func() { cancel(); <-served })
	addr := udp[0].LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
}

// TestDomainVerifiedThroughDNS: a domain elsewhere is pending, with the
// CNAME it needs, until verify finds that CNAME in DNS; the DNS here is a
// real authoritative server on loopback, asked by Go's own resolver.
func TestDomainVerifiedThroughDNS(t *testing.T) {
	// Another DNS provider: a zone on a server of its own.
	ext, err := dnsstore.Open(filepath.Join(t.TempDir(), "ext"), dnsstore.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	z, err := ext.CreateZone("carol", "shop.example")
	if err != nil {
		t.Fatal(err)
	}
	a := newAPI(t, options{private: true, resolver: serveDNS(t, ext)})
	d := a.create(a.alice, "site", a.origin.URL)
	base := "/api/cdn/deployments/" + d.ID
	r := a.do("POST", base+"/domains", a.alice, `{"name": "www.shop.example"}`)
	apitest.Want(t, "add", r, http.StatusCreated)
	var dom cloudwire.Domain
	apitest.Decode(t, "add", r, &dom)
	want := cloudwire.DomainVerification{Type: "CNAME", Name: "www.shop.example", Value: "site.cdn.localhost"}
	if dom.Status != "pending" || dom.Verification == nil || *dom.Verification != want {
		t.Fatalf("added %+v, want pending with %+v", dom, want)
	}
	if status, _, _ := a.get("www.shop.example", "/"); status != 404 {
		t.Errorf("the edge answers a pending domain: %d", status)
	}
	if doms := a.domainList(a.alice, d.ID); len(doms) != 2 || doms[1].Status != "pending" || doms[1].Verification == nil || *doms[1].Verification != want {
		t.Errorf("domains with a pending one: got %+v, want the cname and www.shop.example pending with %+v", doms, want)
	}
	r = a.do("POST", base+"/domains/www.shop.example/verify", a.alice, "")
	apitest.WantError(t, "verify before the CNAME", r, 409, "conflict", "site.cdn.localhost")
	// Why DNS gave nothing, without the host's resolver address, which
	// the lookup's error names (and which is not the tenant's to see).
	if body := string(r.Body); !strings.Contains(body, "DNS gives no answer (") || strings.Contains(body, ":53") {
		t.Errorf("verify before the CNAME says %s; want the reason without a resolver's address", body)
	}
	wrong, err := ext.AddRecord("carol", z.ID, dnszone.Input{Type: "CNAME", Name: "www", Value: "elsewhere.example."})
	if err != nil {
		t.Fatal(err)
	}
	apitest.WantError(t, "verify with a wrong CNAME", a.do("POST", base+"/domains/www.shop.example/verify", a.alice, ""), 409, "conflict", "a CNAME to elsewhere.example")
	if _, err := ext.UpdateRecord("carol", z.ID, wrong.ID, dnszone.Input{Type: "CNAME", Name: "www", Value: "site.cdn.localhost."}); err != nil {
		t.Fatal(err)
	}
	r = a.do("POST", base+"/domains/www.shop.example/verify", a.alice, "")
	apitest.Want(t, "verify", r, http.StatusOK)
	var verified cloudwire.Domain
	apitest.Decode(t, "verify", r, &verified)
	if verified.Status != "active" || verified.Verification != nil {
		t.Errorf("verified: %+v", verified)
	}
	if status, xc, _ := a.get("www.shop.example", "/"); status != 200 || xc != "MISS" {
		t.Errorf("the edge for the verified domain: %d %s", status, xc)
	}
	r = a.do("POST", base+"/domains/www.shop.example./verify", a.alice, "")
	apitest.Want(t, "verify an active domain", r, http.StatusOK)
	apitest.Decode(t, "verify an active domain", r, &verified)
	if verified.Status != "active" {
		t.Errorf("verify an active domain: got %+v, want it active", verified)
	}
	r = a.do("GET", base+"/domains/WWW.shop.example", a.alice, "")
	apitest.Want(t, "get domain", r, http.StatusOK)
	apitest.WantError(t, "get unknown domain", a.do("GET", base+"/domains/nope.example", a.alice, ""), 404, "not_found", "domain")
	var raw map[string]any
	json.Unmarshal(r.Body, &raw)
	if raw["status"] != "active" {
		t.Errorf("get domain: %v", raw)
	}
}

// TestPlatformZoneProvesNothing: anyone may create any zone here, so a
// zone held on the platform is no proof of a domain. Bob creates the zone
// victim.example and attaches www.victim.example, whose real DNS (another
// provider's) names Alice's deployment: the CNAME goes into Bob's zone,
// but the domain stays pending, the edge does not route it to Bob, and
// verify answers 409 with what DNS gives, while Alice's deployment still
// answers for it once verified.
func TestPlatformZoneProvesNothing(t *testing.T) {
	ext, err := dnsstore.Open(filepath.Join(t.TempDir(), "ext"), dnsstore.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	real, err := ext.CreateZone("owner", "victim.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ext.AddRecord("owner", real.ID, dnszone.Input{Type: "CNAME", Name: "www", Value: "alice-site.cdn.localhost."}); err != nil {
		t.Fatal(err)
	}
	a := newAPI(t, options{private: true, resolver: serveDNS(t, ext)})
	a.create(a.alice, "alice-site", a.origin.URL)
	bobs := a.create(a.bob, "bob-site", a.origin.URL)
	if _, err := a.dns.CreateZone("bob", "victim.example"); err != nil {
		t.Fatal(err)
	}
	base := "/api/cdn/deployments/" + bobs.ID
	r := a.do("POST", base+"/domains", a.bob, `{"name": "www.victim.example"}`)
	apitest.Want(t, "bob attaches www.victim.example", r, http.StatusCreated)
	var dom cloudwire.Domain
	apitest.Decode(t, "bob attaches", r, &dom)
	if dom.Status != "pending" || dom.Zone == "" {
		t.Fatalf("bob's domain in his squatted zone: %+v, want pending with its zone", dom)
	}
	if status, _, body := a.get("www.victim.example", "/"); status != 404 {
		t.Errorf("the edge routes www.victim.example: %d %q, want 404", status, body)
	}
	apitest.WantError(t, "bob verifies", a.do("POST", base+"/domains/www.victim.example/verify", a.bob, ""), 409, "conflict", "a CNAME to alice-site.cdn.localhost")
	if status, _, _ := a.get("www.victim.example", "/"); status != 404 {
		t.Errorf("the edge routes www.victim.example after bob's verify: %d", status)
	}
}

// TestProvenClaimTakesTheName: a custom domain is not the first
// claimant's. Bob attaches www.victim.example, in a zone he made here and
// again in none, and Alice, whose deployment the real DNS names, is not
// kept out: her attach, which DNS proves, takes the name (active at
// once), Bob's claim and the CNAME the CDN made in his zone go, and the
// edge routes the name to her deployment. Without the proof her attach
// is refused, naming the CNAME that would prove it, and changes nothing.
func TestProvenClaimTakesTheName(t *testing.T) {
	ext, err := dnsstore.Open(filepath.Join(t.TempDir(), "ext"), dnsstore.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	real, err := ext.CreateZone("owner", "victim.example")
	if err != nil {
		t.Fatal(err)
	}
	www, err := ext.AddRecord("owner", real.ID, dnszone.Input{Type: "CNAME", Name: "www", Value: "bob-site.cdn.localhost."})
	if err != nil {
		t.Fatal(err)
	}
	a := newAPI(t, options{private: true, resolver: serveDNS(t, ext)})
	alices := a.create(a.alice, "alice-site", a.origin.URL+"/alice")
	bobs := a.create(a.bob, "bob-site", a.origin.URL+"/bob")
	aliceBase, bobBase := "/api/cdn/deployments/"+alices.ID, "/api/cdn/deployments/"+bobs.ID
	routed := func(want string) {
		t.Helper()
		if status, _, body := a.get("www.victim.example", "/who"); status != 200 || body != "origin says /"+want+"/who" {
			t.Errorf("the edge for www.victim.example: %d %q, want %s's origin", status, body, want)
		}
	}

	for _, inZone := range []bool{false, true} {
		var z dnsstore.Zone
		if inZone {
			if z, err = a.dns.CreateZone("bob", "victim.example"); err != nil {
				t.Fatal(err)
			}
		}
		// Bob's claim, proved by DNS while www named his deployment, then
		// the domain's owner points it at Alice's.
		if _, err := ext.UpdateRecord("owner", real.ID, www.ID, dnszone.Input{Type: "CNAME", Name: "www", Value: "bob-site.cdn.localhost."}); err != nil {
			t.Fatal(err)
		}
		apitest.Want(t, "bob attaches", a.do("POST", bobBase+"/domains", a.bob, `{"name": "www.victim.example"}`), http.StatusCreated)
		apitest.Want(t, "bob verifies", a.do("POST", bobBase+"/domains/www.victim.example/verify", a.bob, ""), http.StatusOK)
		routed("bob")
		apitest.WantError(t, "alice attaches before DNS names her deployment", a.do("POST", aliceBase+"/domains", a.alice, `{"name": "www.victim.example"}`),
			409, "conflict", "www.victim.example → alice-site.cdn.localhost")
		if doms := a.domainList(a.bob, bobs.ID); len(doms) != 2 || doms[1].Status != "active" {
			t.Errorf("bob's domains after alice's refused attach: %+v", doms)
		}
		if _, err := ext.UpdateRecord("owner", real.ID, www.ID, dnszone.Input{Type: "CNAME", Name: "www", Value: "alice-site.cdn.localhost."}); err != nil {
			t.Fatal(err)
		}
		r := a.do("POST", aliceBase+"/domains", a.alice, `{"name": "www.victim.example"}`)
		apitest.Want(t, "alice attaches with DNS naming her deployment", r, http.StatusCreated)
		var dom cloudwire.Domain
		apitest.Decode(t, "alice attaches", r, &dom)
		if dom.Status != "active" || dom.Zone != "" {
			t.Errorf("alice's domain (in bob's zone here: %v): %+v, want active, in no zone", inZone, dom)
		}
		routed("alice")
		if doms := a.domainList(a.bob, bobs.ID); len(doms) != 1 {
			t.Errorf("bob's domains after alice took the name: %+v, want his cname alone", doms)
		}
		apitest.WantError(t, "bob's claim", a.do("GET", bobBase+"/domains/www.victim.example", a.bob, ""), 404, "not_found", "domain")
		if inZone {
			records, _ := a.dns.Records("bob", z.ID)
			for _, rec := range records {
				if rec.Name == "www.victim.example" {
					t.Errorf("the CNAME the CDN made in bob's zone outlived his claim: %+v", rec)
				}
			}
		}
		apitest.WantError(t, "alice attaches twice", a.do("POST", aliceBase+"/domains", a.alice, `{"name": "www.victim.example"}`), 409, "conflict", "taken")
		apitest.Want(t, "alice removes it", a.do("DELETE", aliceBase+"/domains/www.victim.example", a.alice, ""), http.StatusNoContent)
	}
}
