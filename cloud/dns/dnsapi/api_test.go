package dnsapi_test

// End-to-end tests of the DNS endpoints: a real cloudstore and dnsstore in
// a temporary directory, the real cloudapi server with the DNS routes
// registered, served over loopback HTTP and driven with real requests
// under the API keys of two accounts, alice and bob.

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/dns/dnsapi"
	"github.com/latticenet/lattice/cloud/dns/dnsstore"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/internal/testkit/apitest"
	"github.com/latticenet/lattice/internal/testkit/openapitest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// t0 is the DNS store's clock.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// testAPI is a served API with the DNS routes.
type testAPI struct {
	t          *testing.T
	url        string
	dns        *dnsstore.Store
	alice, bob string // API key secrets
}

// newAPI serves the API over fresh stores; opts configures the DNS store
// (a quiet logger, two name servers and the fixed clock unless set).
func newAPI(t *testing.T, opts dnsstore.Options) *testAPI {
	t.Helper()
	dir := t.TempDir()
	cs, err := cloudstore.OpenDir(filepath.Join(dir, "cloud"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	if opts.Nameservers == nil {
		opts.Nameservers = []string{"ns1.lattice.test", "ns2.lattice.test"}
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return t0 }
	}
	ds, err := dnsstore.Open(filepath.Join(dir, "dns"), opts)
	if err != nil {
		cs.Close()
		t.Fatal(err)
	}
	acc := apitest.Accounts(t)
	api := cloudapi.New(cs, acc, cloudapi.Options{RatePerSecond: -1, Logger: quiet})
	dnsapi.Register(api, ds)
	srv := httptest.NewServer(openapitest.Cloud.Handler(t, api))
	t.Cleanup(func() {
		srv.Close()
		api.Wait()
		ds.Close()
		cs.Close()
	})
	a := &testAPI{t: t, url: srv.URL, dns: ds}
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

// response is one answer, read whole.
type response = apitest.Response

// do sends a request with the API key (none if "") and a JSON body (none
// if "").
func (a *testAPI) do(method, path, key, body string) response {
	a.t.Helper()
	return apitest.Do(a.t, method, a.url+path, key, body)
}

var (
	decode    = apitest.Decode
	want      = apitest.Want
	wantError = apitest.WantError
)

// zone is a zone as the API shows it.
type zone struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Serial      uint32   `json:"serial"`
	Nameservers []string `json:"nameservers"`
	Records     int      `json:"records"`
	CreatedAt   string   `json:"created_at"`
	UpdatedAt   string   `json:"updated_at"`
}

// record is a record as the API shows it.
type record struct {
	ID        string  `json:"id"`
	Type      string  `json:"type"`
	Name      string  `json:"name"`
	Value     string  `json:"value"`
	TTL       uint32  `json:"ttl"`
	Priority  *uint16 `json:"priority"`
	Weight    *uint16 `json:"weight"`
	Port      *uint16 `json:"port"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
}

type meta struct {
	Total   int `json:"total"`
	Page    int `json:"page"`
	PerPage int `json:"per_page"`
}

type zoneList struct {
	Data []zone `json:"data"`
	Meta meta   `json:"meta"`
}

type recordList struct {
	Data []record `json:"data"`
	Meta meta     `json:"meta"`
}

func (a *testAPI) createZone(key, name string) zone {
	a.t.Helper()
	r := a.do("POST", "/api/dns/zones", key, `{"name":"`+name+`"}`)
	want(a.t, "create zone "+name, r, http.StatusCreated)
	var z zone
	decode(a.t, "create zone "+name, r, &z)
	return z
}

func (a *testAPI) zone(key, id string) zone {
	a.t.Helper()
	r := a.do("GET", "/api/dns/zones/"+id, key, "")
	want(a.t, "get zone", r, http.StatusOK)
	var z zone
	decode(a.t, "get zone", r, &z)
	return z
}

func (a *testAPI) addRecord(key, zoneID, body string) record {
	a.t.Helper()
	r := a.do("POST", "/api/dns/zones/"+zoneID+"/records", key, body)
	want(a.t, "add record "+body, r, http.StatusCreated)
	var rec record
	decode(a.t, "add record "+body, r, &rec)
	return rec
}

func TestCreateZone(t *testing.T) {
	a := newAPI(t, dnsstore.Options{})
	r := a.do("POST", "/api/dns/zones", a.alice, `{"name":"Example.com"}`)
	want(t, "create", r, http.StatusCreated)
	var keys map[string]json.RawMessage
	json.Unmarshal(r.Body, &keys)
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	if got := strings.Join(names, ","); got != "created_at,id,name,nameservers,records,serial,updated_at" {
		t.Errorf("zone keys %s, want created_at,id,name,nameservers,records,serial,updated_at", got)
	}
	var z zone
	decode(t, "create", r, &z)
	if z.ID == "" || z.Name != "example.com" || z.Serial != 1 || z.Records != 2 || z.CreatedAt != "2026-11-21T12:00:00Z" || z.UpdatedAt != z.CreatedAt {
		t.Errorf("created zone %+v: want an id, name example.com, serial 1, 2 records, created_at 2026-11-21T12:00:00Z", z)
	}
	if want := []string{"ns1.lattice.test", "ns2.lattice.test"}; !slices.Equal(z.Nameservers, want) {
		t.Errorf("nameservers %q, want %q", z.Nameservers, want)
	}

	a.createZone(a.alice, "deep.corp.test")
	tests := []struct {
		what, key, body string
		status          int
		code, fragment  string
	}{
		{"the same name again", a.alice, `{"name":"example.com"}`, http.StatusConflict, "conflict", "example.com"},
		{"the same name in another case, with a dot", a.alice, `{"name":"EXAMPLE.COM."}`, http.StatusConflict, "conflict", "taken"},
		{"bob, the same name", a.bob, `{"name":"example.com"}`, http.StatusConflict, "conflict", "taken"},
		{"bob, below alice's", a.bob, `{"name":"sub.example.com"}`, http.StatusConflict, "conflict", "another account"},
		{"bob, above alice's", a.bob, `{"name":"corp.test"}`, http.StatusConflict, "conflict", "another account"},
		{"a top-level name", a.bob, `{"name":"com"}`, http.StatusBadRequest, "validation_error", "one label"},
		{"an invalid name", a.alice, `{"name":"exa mple.com"}`, http.StatusBadRequest, "validation_error", "exa mple.com"},
		{"an empty name", a.alice, `{"name":""}`, http.StatusBadRequest, "validation_error", "empty"},
		{"no name", a.alice, `{}`, http.StatusBadRequest, "validation_error", "empty"},
		{"an unknown field", a.alice, `{"name":"other.com","ttl":5}`, http.StatusBadRequest, "validation_error", "unknown field"},
		{"a name that is no string", a.alice, `{"name":5}`, http.StatusBadRequest, "validation_error", "invalid JSON"},
		{"not JSON", a.alice, `name=x.com`, http.StatusBadRequest, "validation_error", "JSON"},
		{"two objects", a.alice, `{"name":"x.com"}{}`, http.StatusBadRequest, "validation_error", "after the JSON object"},
		{"no key", "", `{"name":"nokey.com"}`, http.StatusUnauthorized, "unauthorized", "API key"},
		{"a bad key", "lat_live_notakey", `{"name":"badkey.com"}`, http.StatusUnauthorized, "unauthorized", "API key"},
	}
	for _, tc := range tests {
		wantError(t, tc.what, a.do("POST", "/api/dns/zones", tc.key, tc.body), tc.status, tc.code, tc.fragment)
	}
	// The refusals made nothing.
	for _, name := range []string{"other.com", "x.com", "nokey.com", "badkey.com", "sub.example.com"} {
		if a.dns.Snapshot(name) != nil {
			t.Errorf("a refused request created %s", name)
		}
	}
	// The same account may nest its zones; bob may take an unrelated name.
	if sub := a.createZone(a.alice, "sub.example.com"); sub.Name != "sub.example.com" || sub.Serial != 1 {
		t.Errorf("alice's nested zone: %+v", sub)
	}
	a.createZone(a.bob, "example.org")
}

func TestZoneTenancy(t *testing.T) {
	a := newAPI(t, dnsstore.Options{})
	ex := a.createZone(a.alice, "example.com")
	org := a.createZone(a.alice, "alice.org")
	var list zoneList
	r := a.do("GET", "/api/dns/zones", a.alice, "")
	want(t, "alice lists", r, http.StatusOK)
	decode(t, "alice lists", r, &list)
	if len(list.Data) != 2 || list.Data[0].ID != org.ID || list.Data[1].ID != ex.ID || list.Meta != (meta{Total: 2, Page: 1, PerPage: 20}) {
		t.Errorf("alice's list: %s; want alice.org then example.com, total 2, page 1 of 20", r.Body)
	}
	if l := list.Data[1]; l.Name != ex.Name || l.Serial != ex.Serial || l.Records != ex.Records || l.CreatedAt != ex.CreatedAt || !slices.Equal(l.Nameservers, ex.Nameservers) {
		t.Errorf("listed zone %+v, want %+v", l, ex)
	}
	r = a.do("GET", "/api/dns/zones?per_page=1&page=2", a.alice, "")
	want(t, "alice lists page 2", r, http.StatusOK)
	decode(t, "alice lists page 2", r, &list)
	if len(list.Data) != 1 || list.Data[0].ID != ex.ID || list.Meta != (meta{Total: 2, Page: 2, PerPage: 1}) {
		t.Errorf("page 2 of 1: %s", r.Body)
	}
	wantError(t, "per_page 0", a.do("GET", "/api/dns/zones?per_page=0", a.alice, ""), http.StatusBadRequest, "validation_error", "per_page")

	r = a.do("GET", "/api/dns/zones", a.bob, "")
	want(t, "bob lists", r, http.StatusOK)
	if got := strings.TrimSpace(string(r.Body)); got != `{"data":[],"meta":{"total":0,"page":1,"per_page":20}}` {
		t.Errorf("bob's list: %s, want an empty data array", got)
	}

	if z := a.zone(a.alice, ex.ID); z.ID != ex.ID || z.Name != "example.com" || z.Serial != 1 || z.Records != 2 {
		t.Errorf("alice gets %+v, want %+v", z, ex)
	}
	routes := []struct{ method, path, body string }{
		{"GET", "/api/dns/zones/" + ex.ID, ""},
		{"DELETE", "/api/dns/zones/" + ex.ID, ""},
		{"GET", "/api/dns/zones/" + ex.ID + "/records", ""},
		{"POST", "/api/dns/zones/" + ex.ID + "/records", `{"type":"A","name":"evil","value":"192.0.2.66"}`},
	}
	for _, rt := range routes {
		wantError(t, "bob "+rt.method+" "+rt.path, a.do(rt.method, rt.path, a.bob, rt.body), http.StatusNotFound, "not_found", "zone not found")
	}
	wantError(t, "a zone that does not exist", a.do("GET", "/api/dns/zones/0000000000000000", a.alice, ""), http.StatusNotFound, "not_found", "zone not found")
	if z := a.zone(a.alice, ex.ID); z.Serial != 1 || z.Records != 2 {
		t.Errorf("alice's zone after bob's attempts: %+v, want serial 1, 2 records", z)
	}

	r = a.do("DELETE", "/api/dns/zones/"+ex.ID, a.alice, "")
	want(t, "alice deletes", r, http.StatusNoContent)
	wantError(t, "get after delete", a.do("GET", "/api/dns/zones/"+ex.ID, a.alice, ""), http.StatusNotFound, "not_found", "zone not found")
	wantError(t, "records after delete", a.do("GET", "/api/dns/zones/"+ex.ID+"/records", a.alice, ""), http.StatusNotFound, "not_found", "zone not found")
	wantError(t, "delete again", a.do("DELETE", "/api/dns/zones/"+ex.ID, a.alice, ""), http.StatusNotFound, "not_found", "zone not found")
	if a.dns.Snapshot("example.com") != nil {
		t.Errorf("the deleted zone still has a snapshot")
	}
	r = a.do("GET", "/api/dns/zones", a.alice, "")
	decode(t, "alice lists after delete", r, &list)
	if len(list.Data) != 1 || list.Data[0].ID != org.ID {
		t.Errorf("alice's list after the delete: %s", r.Body)
	}
	// The name is free again, for anyone.
	a.createZone(a.bob, "example.com")
}

func TestRecords(t *testing.T) {
	var now atomic.Int64
	now.Store(t0.Unix())
	a := newAPI(t, dnsstore.Options{Now: func() time.Time { return time.Unix(now.Load(), 0).UTC() }})
	z := a.createZone(a.alice, "example.com")
	base := "/api/dns/zones/" + z.ID + "/records"
	changes := 0
	checkSerial := func(what string) {
		t.Helper()
		if got := a.zone(a.alice, z.ID).Serial; got != uint32(1+changes) {
			t.Errorf("after %s: serial %d, want %d (1 + %d changes)", what, got, 1+changes, changes)
		}
	}

	r := a.do("POST", base, a.alice, `{"type":"a","name":"www","value":"192.0.2.1","ttl":300}`)
	want(t, "add A", r, http.StatusCreated)
	changes++
	var www record
	decode(t, "add A", r, &www)
	if www.ID == "" || www.Type != "A" || www.Name != "www.example.com" || www.Value != "192.0.2.1" || www.TTL != 300 || www.CreatedAt != "2026-11-21T12:00:00Z" ||
		www.Priority != nil || www.Weight != nil || www.Port != nil {
		t.Errorf("added record %s: want A www.example.com 192.0.2.1 ttl 300 with an id and created_at", r.Body)
	}
	checkSerial("one add")
	for _, body := range []string{
		`{"type":"AAAA","name":"www","value":"2001:DB8::1"}`,
		`{"type":"A","name":"mail.example.com","value":"192.0.2.2"}`,
		`{"type":"MX","name":"@","value":"mail.example.com","priority":5}`,
		`{"type":"TXT","name":"@","value":"v=spf1 -all"}`,
		`{"type":"SRV","name":"_sip._tcp","value":"sip.example.com","port":5060}`,
		`{"type":"CAA","name":"@","value":"0 issue \"letsencrypt.org\""}`,
		`{"type":"CNAME","name":"blog","value":"www.example.com."}`,
	} {
		a.addRecord(a.alice, z.ID, body)
		changes++
	}
	checkSerial("eight adds")

	refusals := []struct{ what, body, fragment string }{
		{"a bad IPv4", `{"type":"A","name":"x","value":"300.1.2.3"}`, "not an IPv4 address"},
		{"an IPv6 in an A", `{"type":"A","name":"x","value":"2001:db8::1"}`, "not an IPv4 address"},
		{"a name outside the zone", `{"type":"A","name":"x.other.org.","value":"192.0.2.1"}`, "outside the zone"},
		{"a CNAME beside an A", `{"type":"CNAME","name":"www","value":"target.example.net"}`, "CNAME cannot stand beside"},
		{"an A beside a CNAME", `{"type":"A","name":"blog","value":"192.0.2.1"}`, "CNAME cannot stand beside"},
		{"a CNAME at the apex", `{"type":"CNAME","name":"@","value":"target.example.net"}`, "apex"},
		{"an unsupported type", `{"type":"PTR","name":"x","value":"host.example.com"}`, `"PTR" is not one of`},
		{"no type", `{"name":"x","value":"192.0.2.1"}`, "is not one of"},
		{"ttl 10", `{"type":"A","name":"x","value":"192.0.2.1","ttl":10}`, "ttl 10"},
		{"ttl too long", `{"type":"A","name":"x","value":"192.0.2.1","ttl":604801}`, "ttl 604801"},
		{"SRV without a port", `{"type":"SRV","name":"_x._tcp","value":"sip.example.com"}`, "port"},
		{"a priority on an A", `{"type":"A","name":"x","value":"192.0.2.1","priority":1}`, "priority"},
		{"a duplicate", `{"type":"A","name":"WWW","value":"192.0.2.1"}`, "already has this A record"},
		{"an empty value", `{"type":"A","name":"x","value":""}`, "empty"},
		{"a bad owner name", `{"type":"A","name":"a..b","value":"192.0.2.1"}`, "empty label"},
		{"an unknown field", `{"type":"A","name":"x","value":"192.0.2.1","class":"IN"}`, "unknown field"},
		{"a ttl that is no number", `{"type":"A","name":"x","value":"192.0.2.1","ttl":"60"}`, "invalid JSON"},
		{"no body", ``, "JSON object"},
	}
	for _, tc := range refusals {
		wantError(t, tc.what, a.do("POST", base, a.alice, tc.body), http.StatusBadRequest, "validation_error", tc.fragment)
		checkSerial("refusing " + tc.what)
	}

	// Lists and filters.
	list := func(query string) []record {
		t.Helper()
		r := a.do("GET", base+query, a.alice, "")
		want(t, "list "+query, r, http.StatusOK)
		var l recordList
		decode(t, "list "+query, r, &l)
		if l.Meta.Total != len(l.Data) {
			t.Errorf("list %s: total %d, %d records", query, l.Meta.Total, len(l.Data))
		}
		return l.Data
	}
	show := func(rs []record) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Type+" "+r.Name+" "+r.Value)
		}
		return out
	}
	filters := []struct {
		query string
		want  []string
	}{
		{"?type=A", []string{"A mail.example.com 192.0.2.2", "A www.example.com 192.0.2.1"}},
		{"?type=aaaa", []string{"AAAA www.example.com 2001:db8::1"}},
		{"?name=www", []string{"A www.example.com 192.0.2.1", "AAAA www.example.com 2001:db8::1"}},
		{"?name=www.example.com.", []string{"A www.example.com 192.0.2.1", "AAAA www.example.com 2001:db8::1"}},
		{"?name=www&type=AAAA", []string{"AAAA www.example.com 2001:db8::1"}},
		{"?name=@&type=NS", []string{"NS example.com ns1.lattice.test", "NS example.com ns2.lattice.test"}},
		{"?name=nothing", nil},
		{"?type=SRV", []string{"SRV _sip._tcp.example.com sip.example.com"}},
	}
	for _, f := range filters {
		got := show(list(f.query))
		if f.query == "?type=A" || f.query == "?name=www" || f.query == "?name=www.example.com." {
			slices.Sort(got)
		}
		if !slices.Equal(got, f.want) {
			t.Errorf("list %s: got %q, want %q", f.query, got, f.want)
		}
	}
	if all := list(""); len(all) != 10 {
		t.Errorf("all records: %d, want 10 (2 NS + 8 added)", len(all))
	}
	for _, q := range []struct{ query, fragment string }{
		{"?type=bogus", `"bogus" is not one of`},
		{"?type=PTR", "is not one of"},
		{"?name=x.other.org.", "outside the zone"},
		{"?name=a..b", "empty label"},
	} {
		wantError(t, "list "+q.query, a.do("GET", base+q.query, a.alice, ""), http.StatusBadRequest, "validation_error", q.fragment)
	}

	// One record: get, replace, delete.
	rec := base + "/" + www.ID
	r = a.do("GET", rec, a.alice, "")
	want(t, "get record", r, http.StatusOK)
	var got record
	decode(t, "get record", r, &got)
	if got != www {
		t.Errorf("get record: %+v, want %+v", got, www)
	}
	wantError(t, "bob gets the record", a.do("GET", rec, a.bob, ""), http.StatusNotFound, "not_found", "zone not found")
	wantError(t, "a record that does not exist", a.do("GET", base+"/0000000000000000", a.alice, ""), http.StatusNotFound, "not_found", "record not found")

	now.Add(3600)
	r = a.do("PUT", rec, a.alice, `{"type":"A","name":"www","value":"192.0.2.99"}`)
	want(t, "put", r, http.StatusOK)
	changes++
	var put record
	decode(t, "put", r, &put)
	if put.ID != www.ID || put.Value != "192.0.2.99" || put.TTL != 3600 || put.CreatedAt != www.CreatedAt || put.Name != "www.example.com" || put.UpdatedAt != "2026-11-21T13:00:00Z" {
		t.Errorf("put: %+v; want id %s, value 192.0.2.99, the default ttl 3600 (a field left out), created_at kept, updated_at 2026-11-21T13:00:00Z", put, www.ID)
	}
	checkSerial("a put")
	if zz := a.zone(a.alice, z.ID); zz.CreatedAt != "2026-11-21T12:00:00Z" || zz.UpdatedAt != "2026-11-21T13:00:00Z" {
		t.Errorf("zone times after the put: created %s, updated %s; want 2026-11-21T12:00:00Z and 2026-11-21T13:00:00Z", zz.CreatedAt, zz.UpdatedAt)
	}
	if got := show(list("?name=www&type=A")); !slices.Equal(got, []string{"A www.example.com 192.0.2.99"}) {
		t.Errorf("www's A records after the put: %q, want the new value alone", got)
	}
	wantError(t, "bob puts", a.do("PUT", rec, a.bob, `{"type":"A","name":"www","value":"192.0.2.66"}`), http.StatusNotFound, "not_found", "zone not found")
	wantError(t, "a put that breaks a rule", a.do("PUT", rec, a.alice, `{"type":"CNAME","name":"mail","value":"x.example.net"}`), http.StatusBadRequest, "validation_error", "CNAME cannot stand beside")
	wantError(t, "a put of a record that does not exist", a.do("PUT", base+"/0000000000000000", a.alice, `{"type":"A","name":"y","value":"192.0.2.5"}`), http.StatusNotFound, "not_found", "record not found")
	wantError(t, "a put with an unknown field", a.do("PUT", rec, a.alice, `{"type":"A","name":"www","value":"192.0.2.5","id":"x"}`), http.StatusBadRequest, "validation_error", "unknown field")
	checkSerial("refused puts")
	if r := a.do("GET", rec, a.alice, ""); !strings.Contains(string(r.Body), `"192.0.2.99"`) {
		t.Errorf("the record after refused puts: %s", r.Body)
	}

	wantError(t, "bob deletes the record", a.do("DELETE", rec, a.bob, ""), http.StatusNotFound, "not_found", "zone not found")
	want(t, "delete record", a.do("DELETE", rec, a.alice, ""), http.StatusNoContent)
	changes++
	wantError(t, "get a deleted record", a.do("GET", rec, a.alice, ""), http.StatusNotFound, "not_found", "record not found")
	wantError(t, "delete a deleted record", a.do("DELETE", rec, a.alice, ""), http.StatusNotFound, "not_found", "record not found")
	checkSerial("a delete")

	// The apex keeps an NS record.
	ns := list("?type=NS")
	want(t, "delete one apex NS", a.do("DELETE", base+"/"+ns[0].ID, a.alice, ""), http.StatusNoContent)
	changes++
	wantError(t, "delete the last apex NS", a.do("DELETE", base+"/"+ns[1].ID, a.alice, ""), http.StatusBadRequest, "validation_error", "last NS record")
	checkSerial("the NS deletes")

	if z := a.zone(a.alice, z.ID); z.Records != 8 || z.Serial != uint32(1+changes) || changes != 11 {
		t.Errorf("zone at the end: %+v after %d changes; want 8 records (2 NS + 8 added - 2 deleted), serial 12", z, changes)
	}
}

// TestZoneRules: the rules of what a zone may hold, as the API answers
// them: each refusal is a 400 that says why and leaves the serial.
func TestZoneRules(t *testing.T) {
	a := newAPI(t, dnsstore.Options{})
	z := a.createZone(a.alice, "example.com")
	base := "/api/dns/zones/" + z.ID + "/records"
	for _, body := range []string{
		`{"type":"CNAME","name":"alias","value":"www.example.net"}`,
		`{"type":"NS","name":"deleg","value":"ns1.child.net"}`,
		`{"type":"A","name":"ns.deleg","value":"192.0.2.53"}`, // glue below a delegation
		`{"type":"TXT","name":"t.later","value":"hello"}`,
		`{"type":"A","name":"*.wild","value":"192.0.2.8"}`,
		`{"type":"MX","name":"@","value":"."}`,
	} {
		a.addRecord(a.alice, z.ID, body)
	}
	serial := a.zone(a.alice, z.ID).Serial
	refusals := []struct{ what, body, fragment string }{
		{"a second CNAME", `{"type":"CNAME","name":"alias","value":"other.example.net"}`, "at most one"},
		{"an NS with a wildcard name", `{"type":"NS","name":"*.wild","value":"ns1.child.net"}`, "wildcard"},
		{"a TXT at a delegation", `{"type":"TXT","name":"deleg","value":"x"}`, "delegated"},
		{"a TXT below a delegation", `{"type":"TXT","name":"x.deleg","value":"x"}`, "delegated"},
		{"a delegation above a TXT", `{"type":"NS","name":"later","value":"ns1.child.net"}`, "delegate"},
		{"a CAA without a tag", `{"type":"CAA","name":"@","value":"0 letsencrypt.org"}`, "CAA"},
		{"a TXT with a control character", `{"type":"TXT","name":"@","value":"a\u0001b"}`, "control character"},
		{"an MX with a port", `{"type":"MX","name":"@","value":"mail.example.com","port":25}`, "MX"},
	}
	for _, tc := range refusals {
		wantError(t, tc.what, a.do("POST", base, a.alice, tc.body), http.StatusBadRequest, "validation_error", tc.fragment)
	}
	if got := a.zone(a.alice, z.ID).Serial; got != serial {
		t.Errorf("serial after %d refusals: %d, want %d", len(refusals), got, serial)
	}
}

// TestPutKeepsAnApexNS: a PUT that would replace the apex's last NS
// record with another type or name is refused, as its DELETE is.
func TestPutKeepsAnApexNS(t *testing.T) {
	a := newAPI(t, dnsstore.Options{Nameservers: []string{"ns1.lattice.test"}})
	z := a.createZone(a.alice, "example.com")
	r := a.do("GET", "/api/dns/zones/"+z.ID+"/records?type=NS", a.alice, "")
	var l recordList
	decode(t, "list NS", r, &l)
	if len(l.Data) != 1 {
		t.Fatalf("apex NS records: %s, want 1", r.Body)
	}
	path := "/api/dns/zones/" + z.ID + "/records/" + l.Data[0].ID
	wantError(t, "delete the last apex NS", a.do("DELETE", path, a.alice, ""), http.StatusBadRequest, "validation_error", "last NS record")
	wantError(t, "replace the last apex NS by an A", a.do("PUT", path, a.alice, `{"type":"A","name":"@","value":"192.0.2.1"}`), http.StatusBadRequest, "validation_error", "NS")
	if got := a.zone(a.alice, z.ID); got.Serial != 1 {
		t.Errorf("serial %d, want 1", got.Serial)
	}
}

// TestNoRoute: paths beside the routes (an empty record id, a trailing
// slash) are 404 endpoint not found, never a handler's error.
func TestNoRoute(t *testing.T) {
	a := newAPI(t, dnsstore.Options{})
	z := a.createZone(a.alice, "example.com")
	for _, m := range []string{"GET", "PUT", "DELETE", "POST"} {
		for _, path := range []string{"/api/dns/zones/" + z.ID + "/records/", "/api/dns/zones/", "/api/dns/zone", "/api/dns/zones/" + z.ID + "/records/x/y"} {
			body := ""
			if m == "PUT" || m == "POST" {
				body = `{"type":"A","name":"q","value":"192.0.2.1"}`
			}
			wantError(t, m+" "+path, a.do(m, path, a.alice, body), http.StatusNotFound, "not_found", "endpoint")
		}
	}
	if got := a.zone(a.alice, z.ID); got.Serial != 1 || got.Records != 2 {
		t.Errorf("zone after the unrouted requests: %+v", got)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	a := newAPI(t, dnsstore.Options{})
	z := a.createZone(a.alice, "example.com")
	tests := []struct{ method, path, allow string }{
		{"PATCH", "/api/dns/zones", "GET, POST"},
		{"PUT", "/api/dns/zones", "GET, POST"},
		{"PATCH", "/api/dns/zones/" + z.ID, "GET, DELETE"},
		{"PUT", "/api/dns/zones/" + z.ID + "/records", "GET, POST"},
		{"POST", "/api/dns/zones/" + z.ID + "/records/abc", "GET, PUT, DELETE"},
	}
	for _, tc := range tests {
		r := a.do(tc.method, tc.path, a.alice, "")
		wantError(t, tc.method+" "+tc.path, r, http.StatusMethodNotAllowed, "method_not_allowed", tc.method)
		if got := r.Header.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}
}

// TestNeedsAKey: every DNS route answers 401 without a valid key, and does
// nothing.
func TestNeedsAKey(t *testing.T) {
	a := newAPI(t, dnsstore.Options{})
	z := a.createZone(a.alice, "example.com")
	rec := a.addRecord(a.alice, z.ID, `{"type":"A","name":"www","value":"192.0.2.1"}`)
	routes := []struct{ method, path, body string }{
		{"GET", "/api/dns/zones", ""},
		{"POST", "/api/dns/zones", `{"name":"x.com"}`},
		{"GET", "/api/dns/zones/" + z.ID, ""},
		{"DELETE", "/api/dns/zones/" + z.ID, ""},
		{"GET", "/api/dns/zones/" + z.ID + "/records", ""},
		{"POST", "/api/dns/zones/" + z.ID + "/records", `{"type":"A","name":"y","value":"192.0.2.1"}`},
		{"GET", "/api/dns/zones/" + z.ID + "/records/" + rec.ID, ""},
		{"PUT", "/api/dns/zones/" + z.ID + "/records/" + rec.ID, `{"type":"A","name":"www","value":"192.0.2.2"}`},
		{"DELETE", "/api/dns/zones/" + z.ID + "/records/" + rec.ID, ""},
	}
	for _, rt := range routes {
		for _, key := range []string{"", "lat_live_0000000000000000000000000000000000000000", "not-a-key"} {
			r := a.do(rt.method, rt.path, key, rt.body)
			wantError(t, rt.method+" "+rt.path+" with key "+key, r, http.StatusUnauthorized, "unauthorized", "API key")
			if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s: WWW-Authenticate %q, want Bearer", rt.method, rt.path, r.Header.Get("WWW-Authenticate"))
			}
		}
	}
	if got := a.zone(a.alice, z.ID); got.Serial != 2 || got.Records != 3 {
		t.Errorf("zone after the refused requests: %+v, want serial 2, 3 records", got)
	}
	if a.dns.Snapshot("x.com") != nil {
		t.Errorf("a request without a key created x.com")
	}
}

// TestDiskFailure: when a write to the DNS store's disk fails, the API
// answers 503 for writes and goes on answering reads.
func TestDiskFailure(t *testing.T) {
	var full atomic.Bool
	fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
		if full.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return syscall.ENOSPC
		}
		return nil
	}))
	a := newAPI(t, dnsstore.Options{FS: fs})
	z := a.createZone(a.alice, "example.com")
	rec := a.addRecord(a.alice, z.ID, `{"type":"A","name":"www","value":"192.0.2.1"}`)
	full.Store(true)
	writes := []struct{ method, path, body string }{
		{"POST", "/api/dns/zones/" + z.ID + "/records", `{"type":"A","name":"api","value":"192.0.2.2"}`},
		{"POST", "/api/dns/zones", `{"name":"other.com"}`},
		{"PUT", "/api/dns/zones/" + z.ID + "/records/" + rec.ID, `{"type":"A","name":"www","value":"192.0.2.3"}`},
		{"DELETE", "/api/dns/zones/" + z.ID + "/records/" + rec.ID, ""},
		{"DELETE", "/api/dns/zones/" + z.ID, ""},
	}
	for _, w := range writes {
		wantError(t, w.method+" "+w.path+" on a full disk", a.do(w.method, w.path, a.alice, w.body), http.StatusServiceUnavailable, "unavailable", "disk")
	}
	full.Store(false)
	wantError(t, "a write once space is back, before a restart", a.do(writes[0].method, writes[0].path, a.alice, writes[0].body), http.StatusServiceUnavailable, "unavailable", "disk")
	if got := a.zone(a.alice, z.ID); got.Serial != 2 || got.Records != 3 {
		t.Errorf("zone read after the failure: %+v, want serial 2, 3 records", got)
	}
	want(t, "get record after the failure", a.do("GET", "/api/dns/zones/"+z.ID+"/records/"+rec.ID, a.alice, ""), http.StatusOK)
	want(t, "list zones after the failure", a.do("GET", "/api/dns/zones", a.alice, ""), http.StatusOK)
}
