package dnsstore_test

// Tests of the DNS store on real Pebble databases: on disk in a temporary
// directory, or on Pebble's in-memory file systems where a test needs to
// cut the power (a crash clone) or fill the disk (errorfs).

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/miekg/dns"

	"github.com/latticenet/lattice/cloud/dns/dnsstore"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// t0 is when every test's clock starts.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

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

// handle is an open store that the test closes at most once (Pebble
// panics on a second Close): by close, or else at cleanup.
type handle struct {
	*dnsstore.Store
	once sync.Once
}

func (h *handle) close(t *testing.T) {
	t.Helper()
	h.once.Do(func() {
		if err := h.Store.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

// open opens the store in dir with opts (a quiet logger unless set).
func open(t *testing.T, dir string, opts dnsstore.Options) *handle {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	s, err := dnsstore.Open(dir, opts)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	h := &handle{Store: s}
	t.Cleanup(func() { h.once.Do(func() { h.Store.Close() }) })
	return h
}

// newStore opens a store in a fresh temporary directory with two name
// servers and a fake clock.
func newStore(t *testing.T) (*handle, *clock) {
	t.Helper()
	c := &clock{now: t0}
	return open(t, t.TempDir(), dnsstore.Options{Nameservers: []string{"ns1.lattice.test", "ns2.lattice.test"}, Now: c.Now}), c
}

func in(typ, name, value string) dnszone.Input {
	return dnszone.Input{Type: typ, Name: name, Value: value}
}

func mustZone(t *testing.T, s *handle, account, name string) dnsstore.Zone {
	t.Helper()
	z, err := s.CreateZone(account, name)
	if err != nil {
		t.Fatalf("CreateZone(%q, %q): %v", account, name, err)
	}
	return z
}

func mustAdd(t *testing.T, s *handle, account, zoneID string, input dnszone.Input) dnszone.Record {
	t.Helper()
	r, err := s.AddRecord(account, zoneID, input)
	if err != nil {
		t.Fatalf("AddRecord(%+v): %v", input, err)
	}
	return r
}

func mustRecords(t *testing.T, s *handle, account, zoneID string) []dnszone.Record {
	t.Helper()
	rs, err := s.Records(account, zoneID)
	if err != nil {
		t.Fatalf("Records(%q, %s): %v", account, zoneID, err)
	}
	return rs
}

func serialOf(t *testing.T, s *handle, account, zoneID string) uint32 {
	t.Helper()
	z, _, err := s.Zone(account, zoneID)
	if err != nil {
		t.Fatalf("Zone(%q, %s): %v", account, zoneID, err)
	}
	return z.Serial
}

// answerA asks snap for name's A records and returns their addresses.
func answerA(snap *dnszone.Snapshot, name string) []string {
	if snap == nil {
		return nil
	}
	var out []string
	for _, rr := range snap.Answer(dns.Fqdn(name), dns.TypeA).Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	slices.Sort(out)
	return out
}

func TestCreateZone(t *testing.T) {
	c := &clock{now: t0}
	names := []string{"NS1.Lattice.test.", "ns2.lattice.test"}
	s := open(t, t.TempDir(), dnsstore.Options{Nameservers: names, Now: c.Now})
	if got, want := s.Nameservers(), []string{"ns1.lattice.test", "ns2.lattice.test"}; !slices.Equal(got, want) {
		t.Errorf("Nameservers() = %q, want %q", got, want)
	}
	z, err := s.CreateZone("alice", "Example.COM.")
	if err != nil {
		t.Fatal(err)
	}
	if z.Name != "example.com" || z.Account != "alice" || z.Serial != 1 || len(z.ID) != 16 || !z.CreatedAt.Equal(t0) || !z.UpdatedAt.Equal(t0) {
		t.Errorf("CreateZone = %+v, want example.com of alice, serial 1, a 16-digit id, created and updated at %v", z, t0)
	}
	got, n, err := s.Zone("alice", z.ID)
	if err != nil || got != z || n != 2 {
		t.Errorf("Zone = %+v, %d, %v; want %+v, 2 records", got, n, err, z)
	}
	rs := mustRecords(t, s, "alice", z.ID)
	var values []string
	for _, r := range rs {
		if r.Type != "NS" || r.Name != "example.com" || r.TTL != dnszone.DefaultTTL || r.ID == "" || r.CreatedAt != "2026-11-21T12:00:00Z" {
			t.Errorf("apex record %+v: want an NS at example.com, ttl %d, with an id and created_at", r, dnszone.DefaultTTL)
		}
		values = append(values, r.Value)
	}
	if want := []string{"ns1.lattice.test", "ns2.lattice.test"}; !slices.Equal(values, want) {
		t.Errorf("apex NS values = %q, want %q", values, want)
	}
	snap := s.Snapshot("example.com")
	if snap == nil || snap.Serial != 1 || snap.SOA().Serial != 1 || snap.SOA().Ns != "ns1.lattice.test." {
		t.Fatalf("Snapshot(example.com) = %+v, want serial 1 with SOA mname ns1.lattice.test.", snap)
	}
	if resp := snap.Answer("example.com.", dns.TypeNS); len(resp.Answer) != 2 {
		t.Errorf("NS answer at the apex: %v, want 2 records", resp.Answer)
	}
	if s.Snapshot("Example.COM.") != nil || s.Snapshot("other.com") != nil {
		t.Errorf("Snapshot answers a name that is not a zone's canonical name")
	}
	if zs := s.Zones("alice"); len(zs) != 1 || zs[0] != z {
		t.Errorf("Zones(alice) = %+v, want [%+v]", zs, z)
	}
	if zs := s.Zones("bob"); len(zs) != 0 {
		t.Errorf("Zones(bob) = %+v, want none", zs)
	}
}

func TestCreateZoneDefaultNameserver(t *testing.T) {
	s := open(t, t.TempDir(), dnsstore.Options{})
	z := mustZone(t, s, "alice", "example.com")
	rs := mustRecords(t, s, "alice", z.ID)
	if len(rs) != 1 || rs[0].Type != "NS" || rs[0].Value != "ns1.lattice.test" {
		t.Errorf("records of a zone under the default name server: %+v, want one NS ns1.lattice.test", rs)
	}
}

func TestOpenRefusesBadNameserver(t *testing.T) {
	for _, ns := range []string{"localhost", "bad_name.test", "a..b", ""} {
		_, err := dnsstore.Open(t.TempDir(), dnsstore.Options{Nameservers: []string{"ns1.lattice.test", ns}, Logger: quiet})
		if !errors.Is(err, dnszone.ErrInvalid) {
			t.Errorf("Open with name server %q: got %v, want an error wrapping dnszone.ErrInvalid", ns, err)
		}
	}
}

// TestOpenKeepsCallersNameservers: Open canonicalises the name servers
// into its own slice, not the caller's.
func TestOpenKeepsCallersNameservers(t *testing.T) {
	names := []string{"NS1.Lattice.Test."}
	open(t, t.TempDir(), dnsstore.Options{Nameservers: names})
	if names[0] != "NS1.Lattice.Test." {
		t.Errorf("caller's Nameservers after Open = %q, want [\"NS1.Lattice.Test.\"] untouched", names)
	}
}

// TestZoneNames: a name is one account's; the same account may nest its
// zones, another may not, above or below.
func TestZoneNames(t *testing.T) {
	s, _ := newStore(t)
	mustZone(t, s, "alice", "example.com")
	mustZone(t, s, "alice", "deep.corp.test")
	tests := []struct {
		account, name string
		want          error // nil: created
	}{
		{"alice", "example.com", dnsstore.ErrExists},
		{"alice", "EXAMPLE.com.", dnsstore.ErrExists},
		{"bob", "example.com", dnsstore.ErrExists},
		{"bob", "Example.Com", dnsstore.ErrExists},
		{"bob", "sub.example.com", dnsstore.ErrExists},  // below alice's
		{"bob", "a.b.example.com", dnsstore.ErrExists},  // further below
		{"bob", "corp.test", dnsstore.ErrExists},        // above alice's deep.corp.test
		{"bob", "x.deep.corp.test", dnsstore.ErrExists}, // below it
		{"alice", "sub.example.com", nil},               // the same account nests
		{"alice", "corp.test", nil},                     // and above its own
		{"bob", "xexample.com", nil},                    // a suffix but not a subdomain
		{"bob", "example.co", nil},                      // a prefix, not a parent
		{"bob", "com", dnszone.ErrInvalid},              // one label
		{"bob", "", dnszone.ErrInvalid},                 // empty
		{"bob", "exa mple.org", dnszone.ErrInvalid},     // a space
		{"bob", "-bad.org", dnszone.ErrInvalid},         // leading hyphen
		{"bob", "a..org", dnszone.ErrInvalid},           // empty label
		{"bob", "*.wild.org", dnszone.ErrInvalid},       // a wildcard is no zone
		{"bob", "_dmarc.under.org", dnszone.ErrInvalid}, // underscores are for owners
		{"bob", "xn--bcher-kva.org", nil},               // an IDN in A-label form
		{"bob", strings.Repeat("a", 64) + ".org", dnszone.ErrInvalid},
	}
	created := map[string][]string{"alice": {"deep.corp.test", "example.com"}}
	for _, tc := range tests {
		z, err := s.CreateZone(tc.account, tc.name)
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("CreateZone(%q, %q): got %v, want it created", tc.account, tc.name, err)
		case tc.want == nil:
			created[tc.account] = append(created[tc.account], z.Name)
		case !errors.Is(err, tc.want):
			t.Errorf("CreateZone(%q, %q): got %v, want %v", tc.account, tc.name, err, tc.want)
		}
	}
	for account, want := range created {
		slices.Sort(want)
		var got []string
		for _, z := range s.Zones(account) {
			got = append(got, z.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("Zones(%s) = %q, want %q", account, got, want)
		}
	}
}

// TestMaxZones: an account has at most MaxZones zones; the limit is the
// account's own.
func TestMaxZones(t *testing.T) {
	start := time.Now()
	s, _ := newStore(t)
	var first dnsstore.Zone
	for i := range dnsstore.MaxZones {
		z := mustZone(t, s, "alice", fmt.Sprintf("z%d.example", i))
		if i == 0 {
			first = z
		}
	}
	if _, err := s.CreateZone("alice", "one-more.example"); !errors.Is(err, dnsstore.ErrLimit) {
		t.Errorf("zone %d of an account: got %v, want ErrLimit", dnsstore.MaxZones+1, err)
	}
	if s.Snapshot("one-more.example") != nil {
		t.Errorf("the refused zone has a snapshot")
	}
	if n := len(s.Zones("alice")); n != dnsstore.MaxZones {
		t.Errorf("alice has %d zones, want %d", n, dnsstore.MaxZones)
	}
	mustZone(t, s, "bob", "bob.example")
	if err := s.DeleteZone("alice", first.ID); err != nil {
		t.Fatal(err)
	}
	mustZone(t, s, "alice", "one-more.example")
	t.Logf("%d zones created in %v", dnsstore.MaxZones+2, time.Since(start))
}

// TestTenancy: another account's zone is not found, by every method, and
// the refusals change nothing.
func TestTenancy(t *testing.T) {
	s, _ := newStore(t)
	z := mustZone(t, s, "alice", "example.com")
	www := mustAdd(t, s, "alice", z.ID, in("A", "www", "192.0.2.1"))
	before := mustRecords(t, s, "alice", z.ID)
	snap := s.Snapshot("example.com")
	for _, zoneID := range []string{z.ID, "0000000000000000", ""} {
		calls := []struct {
			what string
			err  error
		}{
			{"Zone", func() error { _, _, err := s.Zone("bob", zoneID); return err }()},
			{"Records", func() error { _, err := s.Records("bob", zoneID); return err }()},
			{"Record", func() error { _, err := s.Record("bob", zoneID, www.ID); return err }()},
			{"AddRecord", func() error { _, err := s.AddRecord("bob", zoneID, in("A", "evil", "192.0.2.66")); return err }()},
			{"UpdateRecord", func() error {
				_, err := s.UpdateRecord("bob", zoneID, www.ID, in("A", "www", "192.0.2.66"))
				return err
			}()},
			{"DeleteRecord", s.DeleteRecord("bob", zoneID, www.ID)},
			{"DeleteZone", s.DeleteZone("bob", zoneID)},
		}
		for _, c := range calls {
			if !errors.Is(c.err, dnsstore.ErrNotFound) {
				t.Errorf("bob's %s on zone %q: got %v, want ErrNotFound", c.what, zoneID, c.err)
			}
		}
	}
	got, n, err := s.Zone("alice", z.ID)
	if err != nil || got.Serial != 2 || n != 3 {
		t.Errorf("alice's zone after bob's attempts: %+v, %d records, %v; want serial 2, 3 records", got, n, err)
	}
	if after := mustRecords(t, s, "alice", z.ID); !reflect.DeepEqual(after, before) {
		t.Errorf("records after bob's attempts:\n got %+v\nwant %+v", after, before)
	}
	if s.Snapshot("example.com") != snap {
		t.Errorf("the snapshot changed after bob's attempts")
	}
	if zs := s.Zones("bob"); len(zs) != 0 {
		t.Errorf("Zones(bob) = %+v, want none", zs)
	}
}

// TestRecordChanges: every change bumps the serial by exactly one;
// an update keeps the record's id and creation time.
func TestRecordChanges(t *testing.T) {
	s, c := newStore(t)
	z := mustZone(t, s, "alice", "example.com")
	want := uint32(1)
	check := func(what string) {
		t.Helper()
		if got := serialOf(t, s, "alice", z.ID); got != want {
			t.Errorf("after %s: serial %d, want %d", what, got, want)
		}
		if snap := s.Snapshot("example.com"); snap == nil || snap.Serial != want || snap.SOA().Serial != want {
			t.Errorf("after %s: snapshot %+v, want serial %d", what, snap, want)
		}
	}
	inputs := []dnszone.Input{
		in("A", "www", "192.0.2.1"),
		in("AAAA", "www", "2001:db8::1"),
		in("MX", "@", "mail.example.com"),
		in("TXT", "@", "v=spf1 -all"),
		in("CNAME", "blog", "www.example.com"),
	}
	var added []dnszone.Record
	for _, input := range inputs {
		c.Advance(time.Minute)
		added = append(added, mustAdd(t, s, "alice", z.ID, input))
		want++
		check("adding " + input.Type)
	}
	if n := len(mustRecords(t, s, "alice", z.ID)); n != 2+len(inputs) {
		t.Errorf("%d records, want %d", n, 2+len(inputs))
	}
	// Update the A record: same id and creation time, new value and update time.
	old := added[0]
	c.Advance(time.Hour)
	ttl := int64(300)
	upd, err := s.UpdateRecord("alice", z.ID, old.ID, dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.99", TTL: &ttl})
	if err != nil {
		t.Fatal(err)
	}
	want++
	check("an update")
	if upd.ID != old.ID || upd.CreatedAt != old.CreatedAt || upd.Value != "192.0.2.99" || upd.TTL != 300 || upd.UpdatedAt == old.UpdatedAt {
		t.Errorf("updated record %+v; want id %s and created_at %s kept, value 192.0.2.99, ttl 300, a new updated_at (was %+v)", upd, old.ID, old.CreatedAt, old)
	}
	if got, err := s.Record("alice", z.ID, old.ID); err != nil || !reflect.DeepEqual(got, upd) {
		t.Errorf("Record after the update = %+v, %v; want %+v", got, err, upd)
	}
	if got := answerA(s.Snapshot("example.com"), "www.example.com"); !slices.Equal(got, []string{"192.0.2.99"}) {
		t.Errorf("A answer for www after the update: %q, want [192.0.2.99] (the old value replaced)", got)
	}
	if zz, _, _ := s.Zone("alice", z.ID); !zz.UpdatedAt.Equal(c.Now()) || !zz.CreatedAt.Equal(t0) {
		t.Errorf("zone times %v / %v, want created %v, updated %v", zz.CreatedAt, zz.UpdatedAt, t0, c.Now())
	}
	// An update may change the type, within the rules: the CNAME becomes an A.
	if _, err := s.UpdateRecord("alice", z.ID, added[4].ID, in("A", "blog", "192.0.2.7")); err != nil {
		t.Errorf("update of the CNAME into an A: %v", err)
	}
	want++
	check("a type-changing update")
	// Deletes.
	for _, r := range added[1:4] {
		if err := s.DeleteRecord("alice", z.ID, r.ID); err != nil {
			t.Fatalf("delete %+v: %v", r, err)
		}
		want++
		check("a delete")
		if _, err := s.Record("alice", z.ID, r.ID); !errors.Is(err, dnsstore.ErrNotFound) {
			t.Errorf("Record of a deleted record: got %v, want ErrNotFound", err)
		}
	}
	if n := len(mustRecords(t, s, "alice", z.ID)); n != 4 {
		t.Errorf("%d records after the deletes, want 4 (2 NS, www A, blog A)", n)
	}
	if want != 1+uint32(len(inputs))+2+3 {
		t.Fatalf("test miscounted: %d", want)
	}
}

// TestRecordsOrder: Records lists in DNS order (names by their labels
// from the right, so the apex first and a name before the names below
// it), then by type and value.
func TestRecordsOrder(t *testing.T) {
	s, _ := newStore(t)
	z := mustZone(t, s, "alice", "example.com")
	for _, input := range []dnszone.Input{
		in("A", "x", "192.0.2.9"), in("A", "www", "192.0.2.2"), in("TXT", "@", "hi"), in("A", "a.www", "192.0.2.3"),
		in("A", "api", "192.0.2.1"), in("AAAA", "www", "2001:db8::1"), in("A", "www-x", "192.0.2.4"), in("A", "www", "192.0.2.1"),
	} {
		mustAdd(t, s, "alice", z.ID, input)
	}
	var got []string
	for _, r := range mustRecords(t, s, "alice", z.ID) {
		got = append(got, r.Name+" "+r.Type+" "+r.Value)
	}
	want := []string{
		"example.com NS ns1.lattice.test",
		"example.com NS ns2.lattice.test",
		"example.com TXT hi",
		"api.example.com A 192.0.2.1",
		"www.example.com A 192.0.2.1",
		"www.example.com A 192.0.2.2",
		"www.example.com AAAA 2001:db8::1",
		"a.www.example.com A 192.0.2.3",
		"www-x.example.com A 192.0.2.4",
		"x.example.com A 192.0.2.9",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Records order:\n got %q\nwant %q", got, want)
	}
}

// TestRefusedChangesChangeNothing: a change the rules refuse leaves the
// serial, the records and the snapshot as they were.
func TestRefusedChangesChangeNothing(t *testing.T) {
	s, _ := newStore(t)
	z := mustZone(t, s, "alice", "example.com")
	www := mustAdd(t, s, "alice", z.ID, in("A", "www", "192.0.2.1"))
	v6 := mustAdd(t, s, "alice", z.ID, in("AAAA", "v6", "2001:db8::1"))
	mustAdd(t, s, "alice", z.ID, in("A", "v6b", "192.0.2.3"))
	ttl10 := int64(10)
	prio := int64(5)
	tests := []struct {
		what string
		do   func() error
		want error
	}{
		{"a bad IPv4", func() error { _, err := s.AddRecord("alice", z.ID, in("A", "x", "300.1.2.3")); return err }, dnszone.ErrInvalid},
		{"a name outside the zone", func() error { _, err := s.AddRecord("alice", z.ID, in("A", "x.other.org.", "192.0.2.1")); return err }, dnszone.ErrInvalid},
		{"a CNAME beside an A", func() error {
			_, err := s.AddRecord("alice", z.ID, in("CNAME", "www", "target.example.net"))
			return err
		}, dnszone.ErrInvalid},
		{"a CNAME at the apex", func() error {
			_, err := s.AddRecord("alice", z.ID, in("CNAME", "@", "target.example.net"))
			return err
		}, dnszone.ErrInvalid},
		{"an unsupported type", func() error { _, err := s.AddRecord("alice", z.ID, in("PTR", "x", "host.example.com")); return err }, dnszone.ErrInvalid},
		{"ttl 10", func() error {
			_, err := s.AddRecord("alice", z.ID, dnszone.Input{Type: "A", Name: "x", Value: "192.0.2.1", TTL: &ttl10})
			return err
		}, dnszone.ErrInvalid},
		{"SRV without a port", func() error {
			_, err := s.AddRecord("alice", z.ID, in("SRV", "_sip._tcp", "sip.example.com"))
			return err
		}, dnszone.ErrInvalid},
		{"a priority on an A", func() error {
			_, err := s.AddRecord("alice", z.ID, dnszone.Input{Type: "A", Name: "x", Value: "192.0.2.1", Priority: &prio})
			return err
		}, dnszone.ErrInvalid},
		{"a duplicate", func() error { _, err := s.AddRecord("alice", z.ID, in("A", "WWW", "192.0.2.1")); return err }, dnszone.ErrInvalid},
		{"an update into a duplicate", func() error {
			_, err := s.UpdateRecord("alice", z.ID, v6.ID, in("A", "www", "192.0.2.1"))
			return err
		}, dnszone.ErrInvalid},
		{"an update into a CNAME beside an A", func() error {
			_, err := s.UpdateRecord("alice", z.ID, v6.ID, in("CNAME", "v6b", "target.example.net"))
			return err
		}, dnszone.ErrInvalid},
		{"an update with a bad value", func() error {
			_, err := s.UpdateRecord("alice", z.ID, www.ID, in("A", "www", "2001:db8::1"))
			return err
		}, dnszone.ErrInvalid},
		{"an update of a missing record", func() error {
			_, err := s.UpdateRecord("alice", z.ID, "0000000000000000", in("A", "y", "192.0.2.1"))
			return err
		}, dnsstore.ErrNotFound},
		{"a delete of a missing record", func() error { return s.DeleteRecord("alice", z.ID, "0000000000000000") }, dnsstore.ErrNotFound},
	}
	for _, tc := range tests {
		before := mustRecords(t, s, "alice", z.ID)
		serial := serialOf(t, s, "alice", z.ID)
		snap := s.Snapshot("example.com")
		err := tc.do()
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.what, err, tc.want)
		}
		if got := serialOf(t, s, "alice", z.ID); got != serial {
			t.Errorf("%s: serial %d after the refusal, want %d", tc.what, got, serial)
		}
		if after := mustRecords(t, s, "alice", z.ID); !reflect.DeepEqual(after, before) {
			t.Errorf("%s: records changed:\n got %+v\nwant %+v", tc.what, after, before)
		}
		if s.Snapshot("example.com") != snap {
			t.Errorf("%s: the snapshot was rebuilt", tc.what)
		}
	}
	if got := serialOf(t, s, "alice", z.ID); got != 4 {
		t.Errorf("serial after 3 adds and %d refusals: %d, want 4", len(tests), got)
	}
}

// TestEmptyRecordID: a record id of "" names no record: UpdateRecord and
// DeleteRecord answer ErrNotFound and change nothing.
func TestEmptyRecordID(t *testing.T) {
	s, _ := newStore(t)
	z := mustZone(t, s, "alice", "example.com")
	before := mustRecords(t, s, "alice", z.ID)
	calls := []struct {
		what string
		do   func() error
	}{
		{"UpdateRecord", func() error { _, err := s.UpdateRecord("alice", z.ID, "", in("A", "www", "192.0.2.1")); return err }},
		{"DeleteRecord", func() error { return s.DeleteRecord("alice", z.ID, "") }},
	}
	for _, c := range calls {
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("panic: %v", p)
				}
			}()
			err = c.do()
		}()
		if !errors.Is(err, dnsstore.ErrNotFound) {
			t.Errorf(`%s with record id "": got %v, want ErrNotFound`, c.what, err)
		}
	}
	if got := serialOf(t, s, "alice", z.ID); got != 1 {
		t.Errorf("serial %d, want 1", got)
	}
	if after := mustRecords(t, s, "alice", z.ID); !reflect.DeepEqual(after, before) {
		t.Errorf("records changed:\n got %+v\nwant %+v", after, before)
	}
}

// TestApexKeepsAnNS: the last NS record at the apex cannot be deleted;
// one of two can.
func TestApexKeepsAnNS(t *testing.T) {
	s, _ := newStore(t)
	z := mustZone(t, s, "alice", "example.com")
	ns := mustRecords(t, s, "alice", z.ID)
	if len(ns) != 2 {
		t.Fatalf("%d apex records, want 2 NS", len(ns))
	}
	if err := s.DeleteRecord("alice", z.ID, ns[0].ID); err != nil {
		t.Fatalf("delete one of two apex NS: %v", err)
	}
	if err := s.DeleteRecord("alice", z.ID, ns[1].ID); !errors.Is(err, dnszone.ErrInvalid) {
		t.Errorf("delete the last apex NS: got %v, want ErrInvalid", err)
	}
	if got := mustRecords(t, s, "alice", z.ID); len(got) != 1 || got[0].ID != ns[1].ID {
		t.Errorf("records = %+v, want the last NS %+v", got, ns[1])
	}
	if got := serialOf(t, s, "alice", z.ID); got != 2 {
		t.Errorf("serial %d, want 2 (one delete, one refusal)", got)
	}
	// The last apex NS may be replaced by another apex NS.
	if r, err := s.UpdateRecord("alice", z.ID, ns[1].ID, in("NS", "@", "ns.elsewhere.net")); err != nil || r.Value != "ns.elsewhere.net" {
		t.Errorf("replace the last apex NS by another: %+v, %v", r, err)
	}
	// An NS below the apex (a delegation) is no apex NS: it goes freely.
	sub := mustAdd(t, s, "alice", z.ID, in("NS", "sub", "ns.elsewhere.net"))
	if err := s.DeleteRecord("alice", z.ID, sub.ID); err != nil {
		t.Errorf("delete a delegation's only NS: %v", err)
	}
	if got := serialOf(t, s, "alice", z.ID); got != 5 {
		t.Errorf("serial %d, want 5", got)
	}
}

// TestUpdateKeepsAnApexNS: replacing the apex's last NS record with a
// record of another type or name would leave the apex without NS, which
// a delete of it may not.
func TestUpdateKeepsAnApexNS(t *testing.T) {
	for _, input := range []dnszone.Input{in("A", "@", "192.0.2.1"), in("NS", "sub", "ns1.lattice.test"), in("TXT", "@", "gone")} {
		s := open(t, t.TempDir(), dnsstore.Options{}) // one name server
		z := mustZone(t, s, "alice", "example.com")
		ns := mustRecords(t, s, "alice", z.ID)[0]
		_, err := s.UpdateRecord("alice", z.ID, ns.ID, input)
		var apexNS int
		for _, r := range mustRecords(t, s, "alice", z.ID) {
			if r.Type == "NS" && r.Name == "example.com" {
				apexNS++
			}
		}
		if !errors.Is(err, dnszone.ErrInvalid) || apexNS != 1 {
			t.Errorf("UpdateRecord of the apex's only NS into %+v: got err %v and %d apex NS records left; want ErrInvalid and the NS kept", input, err, apexNS)
		}
	}
}

// TestReopen: zones, records, serials and names survive a restart, and
// the snapshots answer as before.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	c := &clock{now: t0}
	opts := dnsstore.Options{Nameservers: []string{"ns1.lattice.test", "ns2.lattice.test"}, Now: c.Now}
	s := open(t, dir, opts)
	ex := mustZone(t, s, "alice", "example.com")
	sub := mustZone(t, s, "alice", "sub.example.com")
	bobs := mustZone(t, s, "bob", "bob.org")
	gone := mustZone(t, s, "bob", "gone.org")
	www := mustAdd(t, s, "alice", ex.ID, in("A", "www", "192.0.2.1"))
	mustAdd(t, s, "alice", ex.ID, in("A", "www", "192.0.2.2"))
	mustAdd(t, s, "alice", ex.ID, in("MX", "@", "mail.example.com"))
	c.Advance(time.Minute)
	if _, err := s.UpdateRecord("alice", ex.ID, www.ID, in("A", "www", "192.0.2.10")); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, "alice", sub.ID, in("TXT", "@", `he said "hi"`))
	tmp := mustAdd(t, s, "bob", bobs.ID, in("AAAA", "v6", "2001:db8::1"))
	if err := s.DeleteRecord("bob", bobs.ID, tmp.ID); err != nil {
		t.Fatal(err)
	}
	port := int64(5060)
	mustAdd(t, s, "bob", bobs.ID, dnszone.Input{Type: "SRV", Name: "_sip._tcp", Value: "sip.bob.org", Port: &port})
	if err := s.DeleteZone("bob", gone.ID); err != nil {
		t.Fatal(err)
	}

	type state struct {
		zones   map[string][]dnsstore.Zone
		records map[string][]dnszone.Record
		www     []string
		serials map[string]uint32
	}
	capture := func(s *handle) state {
		st := state{zones: map[string][]dnsstore.Zone{}, records: map[string][]dnszone.Record{}, serials: map[string]uint32{}}
		for _, account := range []string{"alice", "bob"} {
			st.zones[account] = s.Zones(account)
			for _, z := range st.zones[account] {
				st.records[z.ID] = mustRecords(t, s, account, z.ID)
				if snap := s.Snapshot(z.Name); snap != nil {
					st.serials[z.Name] = snap.Serial
				}
			}
		}
		st.www = answerA(s.Snapshot("example.com"), "www.example.com")
		return st
	}
	before := capture(s)
	s.close(t)

	s2 := open(t, dir, opts)
	after := capture(s2)
	// Times come back from JSON: compare them as instants.
	for account, zs := range after.zones {
		for i := range zs {
			if i < len(before.zones[account]) && zs[i].CreatedAt.Equal(before.zones[account][i].CreatedAt) && zs[i].UpdatedAt.Equal(before.zones[account][i].UpdatedAt) {
				zs[i].CreatedAt, zs[i].UpdatedAt = before.zones[account][i].CreatedAt, before.zones[account][i].UpdatedAt
			}
		}
	}
	if !reflect.DeepEqual(after.zones, before.zones) {
		t.Errorf("zones after reopen:\n got %+v\nwant %+v", after.zones, before.zones)
	}
	if !reflect.DeepEqual(after.records, before.records) {
		t.Errorf("records after reopen:\n got %+v\nwant %+v", after.records, before.records)
	}
	if !reflect.DeepEqual(after.serials, before.serials) {
		t.Errorf("snapshot serials after reopen: got %v, want %v", after.serials, before.serials)
	}
	wantSerials := map[string]uint32{"example.com": 5, "sub.example.com": 2, "bob.org": 4}
	if !reflect.DeepEqual(after.serials, wantSerials) {
		t.Errorf("serials after reopen: got %v, want %v", after.serials, wantSerials)
	}
	if want := []string{"192.0.2.10", "192.0.2.2"}; !slices.Equal(after.www, want) {
		t.Errorf("A answer for www.example.com after reopen: %q, want %q", after.www, want)
	}
	if s2.Snapshot("gone.org") != nil {
		t.Errorf("a deleted zone came back")
	}
	// The names are still taken: by the same account and by another.
	if _, err := s2.CreateZone("bob", "example.com"); !errors.Is(err, dnsstore.ErrExists) {
		t.Errorf("bob creates example.com after reopen: got %v, want ErrExists", err)
	}
	if _, err := s2.CreateZone("alice", "sub.example.com"); !errors.Is(err, dnsstore.ErrExists) {
		t.Errorf("alice creates sub.example.com again after reopen: got %v, want ErrExists", err)
	}
	// The deleted zone's name is free; the serials go on from where they were.
	mustZone(t, s2, "alice", "gone.org")
	mustAdd(t, s2, "alice", ex.ID, in("A", "api", "192.0.2.5"))
	if got := serialOf(t, s2, "alice", ex.ID); got != 6 {
		t.Errorf("serial after one change past the reopen: %d, want 6", got)
	}
}

// event is one call of a watcher.
type event struct {
	name   string
	serial uint32 // 0 for a nil snapshot
	snap   *dnszone.Snapshot
}

// TestWatch: a watcher gets every zone at once, then each change's
// snapshot, in order, and nil when a zone is deleted.
func TestWatch(t *testing.T) {
	s, _ := newStore(t)
	a := mustZone(t, s, "alice", "a.example")
	b := mustZone(t, s, "bob", "b.example")
	mustAdd(t, s, "bob", b.ID, in("A", "www", "192.0.2.1"))
	var mu sync.Mutex
	var events []event
	s.Watch(func(name string, snap *dnszone.Snapshot) {
		mu.Lock()
		defer mu.Unlock()
		e := event{name: name, snap: snap}
		if snap != nil {
			e.serial = snap.Serial
		}
		events = append(events, e)
	})
	take := func() []event {
		mu.Lock()
		defer mu.Unlock()
		out := events
		events = nil
		return out
	}
	initial := take()
	slices.SortFunc(initial, func(x, y event) int { return cmp(x.name, y.name) })
	if len(initial) != 2 || initial[0].name != "a.example" || initial[0].serial != 1 || initial[1].name != "b.example" || initial[1].serial != 2 {
		t.Fatalf("events at registration: %+v, want a.example at 1 and b.example at 2", initial)
	}
	if initial[1].snap != s.Snapshot("b.example") {
		t.Errorf("the registration's snapshot is not the store's")
	}
	if got := answerA(initial[1].snap, "www.b.example"); !slices.Equal(got, []string{"192.0.2.1"}) {
		t.Errorf("initial snapshot answers %q for www.b.example, want [192.0.2.1]", got)
	}

	r := mustAdd(t, s, "alice", a.ID, in("A", "www", "192.0.2.1"))
	if _, err := s.UpdateRecord("alice", a.ID, r.ID, in("A", "www", "192.0.2.2")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddRecord("alice", a.ID, in("A", "www", "192.0.2.2")); err == nil { // refused: no event
		t.Fatal("a duplicate was added")
	}
	if err := s.DeleteRecord("alice", a.ID, r.ID); err != nil {
		t.Fatal(err)
	}
	c := mustZone(t, s, "alice", "c.example")
	if err := s.DeleteZone("bob", b.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteZone("bob", c.ID); err == nil { // not bob's: no event
		t.Fatal("bob deleted alice's zone")
	}
	got := take()
	want := []event{{"a.example", 2, nil}, {"a.example", 3, nil}, {"a.example", 4, nil}, {"c.example", 1, nil}, {"b.example", 0, nil}}
	if len(got) != len(want) {
		t.Fatalf("events: got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].name != want[i].name || got[i].serial != want[i].serial {
			t.Errorf("event %d: got %s at %d, want %s at %d", i, got[i].name, got[i].serial, want[i].name, want[i].serial)
		}
		if want[i].serial == 0 && got[i].snap != nil {
			t.Errorf("event %d: a snapshot for a deleted zone, want nil", i)
		}
	}
	if addrs := answerA(got[0].snap, "www.a.example"); !slices.Equal(addrs, []string{"192.0.2.1"}) {
		t.Errorf("snapshot after the add answers %q, want [192.0.2.1]", addrs)
	}
	if addrs := answerA(got[1].snap, "www.a.example"); !slices.Equal(addrs, []string{"192.0.2.2"}) {
		t.Errorf("snapshot after the update answers %q, want [192.0.2.2]", addrs)
	}
	if resp := got[2].snap.Answer("www.a.example.", dns.TypeA); resp.Rcode != dns.RcodeNameError {
		t.Errorf("snapshot after the delete: rcode %d for www, want NXDOMAIN", resp.Rcode)
	}
	if got[3].snap != s.Snapshot("c.example") {
		t.Errorf("the new zone's event is not its snapshot")
	}
}

func cmp(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestPowerLossKeepsAcknowledgedChanges cuts the power, in effect, while
// records are added from several goroutines: it clones the file system
// keeping only what was synced and opens the store on the clone. Every
// change acknowledged before the cut must be there, and each zone's
// serial must match its records (a change and its serial bump are one
// write).
func TestPowerLossKeepsAcknowledgedChanges(t *testing.T) {
	for round := range 3 {
		fs := vfs.NewCrashableMem()
		opts := dnsstore.Options{FS: fs, Nameservers: []string{"ns1.lattice.test", "ns2.lattice.test"}}
		s := open(t, "dns", opts)
		// Changes of every kind, acknowledged before the writers start.
		base := mustZone(t, s, "alice", "base.example")
		r := mustAdd(t, s, "alice", base.ID, in("A", "www", "192.0.2.1"))
		mustAdd(t, s, "alice", base.ID, in("TXT", "@", "kept"))
		if _, err := s.UpdateRecord("alice", base.ID, r.ID, in("A", "www", "192.0.2.2")); err != nil {
			t.Fatal(err)
		}
		gone := mustAdd(t, s, "alice", base.ID, in("A", "gone", "192.0.2.3"))
		if err := s.DeleteRecord("alice", base.ID, gone.ID); err != nil {
			t.Fatal(err)
		}
		dropped := mustZone(t, s, "bob", "dropped.example")
		if err := s.DeleteZone("bob", dropped.ID); err != nil {
			t.Fatal(err)
		}
		baseRecords := mustRecords(t, s, "alice", base.ID)

		const writers = 4
		zones := make([]dnsstore.Zone, writers)
		for i := range zones {
			zones[i] = mustZone(t, s, fmt.Sprintf("acct%d", i), fmt.Sprintf("w%d.example", i))
		}
		var mu sync.Mutex
		acked := map[string][]dnszone.Record{} // by zone id
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for i, z := range zones {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; n < 2000; n++ {
					select {
					case <-stop:
						return
					default:
					}
					rec, err := s.AddRecord(z.Account, z.ID, in("A", fmt.Sprintf("h%d", n), fmt.Sprintf("192.0.2.%d", i+1)))
					if err != nil {
						t.Errorf("writer %d: %v", i, err)
						return
					}
					mu.Lock()
					acked[z.ID] = append(acked[z.ID], rec)
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(5+rand.IntN(30)) * time.Millisecond)
		mu.Lock()
		before := map[string][]dnszone.Record{}
		total := 0
		for id, rs := range acked {
			before[id] = slices.Clone(rs)
			total += len(rs)
		}
		mu.Unlock()
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
		close(stop)
		wg.Wait()
		s.close(t)

		s2 := open(t, "dns", dnsstore.Options{FS: crashed, Nameservers: opts.Nameservers})
		if got := mustRecords(t, s2, "alice", base.ID); !reflect.DeepEqual(got, baseRecords) {
			t.Errorf("round %d: records of base.example after the cut:\n got %+v\nwant %+v", round, got, baseRecords)
		}
		if got := serialOf(t, s2, "alice", base.ID); got != 6 {
			t.Errorf("round %d: serial of base.example after the cut: %d, want 6", round, got)
		}
		if s2.Snapshot("dropped.example") != nil || len(s2.Zones("bob")) != 0 {
			t.Errorf("round %d: a zone deleted before the cut came back", round)
		}
		for _, z := range zones {
			zz, n, err := s2.Zone(z.Account, z.ID)
			if err != nil {
				t.Errorf("round %d: zone %s created before the cut: %v", round, z.Name, err)
				continue
			}
			have := map[string]dnszone.Record{}
			for _, r := range mustRecords(t, s2, z.Account, z.ID) {
				have[r.ID] = r
			}
			for _, r := range before[z.ID] {
				if got, ok := have[r.ID]; !ok || !reflect.DeepEqual(got, r) {
					t.Errorf("round %d: record %+v acknowledged before the cut: got %+v (present %v)", round, r, got, ok)
				}
			}
			if want := uint32(1 + n - 2); zz.Serial != want {
				t.Errorf("round %d: zone %s has %d records (2 NS) and serial %d, want %d: a record and its serial bump are one write", round, z.Name, n, zz.Serial, want)
			}
			if snap := s2.Snapshot(z.Name); snap == nil || snap.Serial != zz.Serial {
				t.Errorf("round %d: snapshot of %s: %+v, want serial %d", round, z.Name, snap, zz.Serial)
			}
		}
		t.Logf("round %d: %d records acknowledged before the cut", round, total)
		s2.close(t)
	}
}

// within runs f and fails the test if it does not return in time: a
// failed disk must never leave a call waiting.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return in 20 s", what)
	}
}

// TestWriteFailureMakesTheStoreReadOnly fills the disk under the store:
// the write that fails returns ErrUnavailable, reads go on, every later
// write is refused with ErrUnavailable even once space is back, and after
// a restart every acknowledged change is there and writes work again.
func TestWriteFailureMakesTheStoreReadOnly(t *testing.T) {
	var full atomic.Bool
	fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
		if full.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return syscall.ENOSPC
		}
		return nil
	}))
	opts := dnsstore.Options{FS: fs}
	s := open(t, "dns", opts)
	z := mustZone(t, s, "alice", "example.com")
	www := mustAdd(t, s, "alice", z.ID, in("A", "www", "192.0.2.1"))
	records := mustRecords(t, s, "alice", z.ID)
	snap := s.Snapshot("example.com")

	full.Store(true)
	within(t, "AddRecord on a full disk", func() {
		if _, err := s.AddRecord("alice", z.ID, in("A", "api", "192.0.2.2")); !errors.Is(err, dnsstore.ErrUnavailable) {
			t.Errorf("AddRecord on a full disk: got %v, want ErrUnavailable", err)
		}
	})
	writes := func(when string) {
		t.Helper()
		calls := []struct {
			what string
			do   func() error
		}{
			{"CreateZone", func() error { _, err := s.CreateZone("bob", "bob.org"); return err }},
			{"AddRecord", func() error { _, err := s.AddRecord("alice", z.ID, in("A", "api", "192.0.2.2")); return err }},
			{"UpdateRecord", func() error { _, err := s.UpdateRecord("alice", z.ID, www.ID, in("A", "www", "192.0.2.9")); return err }},
			{"DeleteRecord", func() error { return s.DeleteRecord("alice", z.ID, www.ID) }},
			{"DeleteZone", func() error { return s.DeleteZone("alice", z.ID) }},
		}
		for _, c := range calls {
			within(t, c.what+" "+when, func() {
				if err := c.do(); !errors.Is(err, dnsstore.ErrUnavailable) {
					t.Errorf("%s %s: got %v, want ErrUnavailable", c.what, when, err)
				}
			})
		}
	}
	writes("on a full disk")
	reads := func(when string) {
		t.Helper()
		within(t, "reads "+when, func() {
			if got := mustRecords(t, s, "alice", z.ID); !reflect.DeepEqual(got, records) {
				t.Errorf("records %s:\n got %+v\nwant %+v", when, got, records)
			}
			if got := serialOf(t, s, "alice", z.ID); got != 2 {
				t.Errorf("serial %s: %d, want 2", when, got)
			}
			if s.Snapshot("example.com") != snap {
				t.Errorf("snapshot changed %s", when)
			}
			if zs := s.Zones("bob"); len(zs) != 0 {
				t.Errorf("bob's zones %s: %+v, want none", when, zs)
			}
		})
	}
	reads("on a full disk")
	// Still refused when space is back, until a restart.
	full.Store(false)
	writes("after space returned, before a restart")
	reads("after space returned")
	within(t, "Close", func() { s.Store.Close() })
	s.once.Do(func() {})

	s2 := open(t, "dns", opts)
	if got := mustRecords(t, s2, "alice", z.ID); !reflect.DeepEqual(got, records) {
		t.Errorf("records after the restart:\n got %+v\nwant %+v", got, records)
	}
	if got := answerA(s2.Snapshot("example.com"), "www.example.com"); !slices.Equal(got, []string{"192.0.2.1"}) {
		t.Errorf("A answer after the restart: %q, want [192.0.2.1]", got)
	}
	if got := serialOf(t, s2, "alice", z.ID); got != 2 {
		t.Errorf("serial after the restart: %d, want 2", got)
	}
	mustAdd(t, s2, "alice", z.ID, in("A", "api", "192.0.2.2"))
	mustZone(t, s2, "bob", "bob.org")
}

// TestConcurrentChanges: changes from many goroutines to one zone are
// serialised: the serial counts them all exactly.
func TestConcurrentChanges(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "dns"), dnsstore.Options{FS: vfs.NewMem()})
	z := mustZone(t, s, "alice", "example.com")
	var watched atomic.Int64
	s.Watch(func(string, *dnszone.Snapshot) { watched.Add(1) })
	const goroutines, each = 8, 25
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := s.AddRecord("alice", z.ID, in("A", fmt.Sprintf("g%d-%d", g, i), "192.0.2.1")); err != nil {
					t.Error(err)
					return
				}
				s.Snapshot("example.com")
				s.Zones("alice")
			}
		}()
	}
	wg.Wait()
	if got, want := serialOf(t, s, "alice", z.ID), uint32(1+goroutines*each); got != want {
		t.Errorf("serial after %d concurrent adds: %d, want %d", goroutines*each, got, want)
	}
	if got, want := watched.Load(), int64(1+goroutines*each); got != want {
		t.Errorf("watcher calls: %d, want %d (1 at registration + 1 per change)", got, want)
	}
}

// TestNestedZonesHideNothing: a zone of one's own inside another takes
// over the names below it, so neither side may hold records the other
// would hide; a delegation (NS at the inner apex) stays allowed.
func TestNestedZonesHideNothing(t *testing.T) {
	st, err := dnsstore.Open(t.TempDir(), dnsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	outer, err := st.CreateZone("alice", "example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddRecord("alice", outer.ID, dnszone.Input{Type: "A", Name: "www.shop", Value: "192.0.2.1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateZone("alice", "shop.example.com"); !errors.Is(err, dnszone.ErrInvalid) {
		t.Errorf("a zone over the outer zone's www.shop: got %v, want refused (it would hide the record)", err)
	}
	if _, err := st.CreateZone("alice", "blog.example.com"); err != nil {
		t.Fatalf("a zone with nothing of the outer zone below it: %v", err)
	}
	if _, err := st.AddRecord("alice", outer.ID, dnszone.Input{Type: "A", Name: "www.blog", Value: "192.0.2.2"}); !errors.Is(err, dnszone.ErrInvalid) {
		t.Errorf("a record of the outer zone inside the inner one: got %v, want refused", err)
	}
	if _, err := st.AddRecord("alice", outer.ID, dnszone.Input{Type: "NS", Name: "blog", Value: "ns1.lattice.test"}); err != nil {
		t.Errorf("the delegation of the inner zone in the outer one: %v", err)
	}
}

// TestRecreatedZoneKeepsItsSerialRising: a zone deleted and made again
// goes on from the serial it had, across a restart, so that secondaries
// that hold the old zone take the new one for newer.
func TestRecreatedZoneKeepsItsSerialRising(t *testing.T) {
	dir := t.TempDir()
	st, err := dnsstore.Open(dir, dnsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	z, err := st.CreateZone("alice", "example.com")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := st.AddRecord("alice", z.ID, dnszone.Input{Type: "A", Name: fmt.Sprintf("h%d", i), Value: "192.0.2.1"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.DeleteZone("alice", z.ID); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = dnsstore.Open(dir, dnsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	again, err := st.CreateZone("bob", "example.com")
	if err != nil {
		t.Fatal(err)
	}
	if again.Serial != 5 {
		t.Errorf("serial of the zone made again: got %d, want 5 (the deleted zone's 4, plus one)", again.Serial)
	}
}

func TestPublicSuffixRefused(t *testing.T) {
	st, err := dnsstore.Open(t.TempDir(), dnsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, name := range []string{"co.uk", "com.au", "github.io"} {
		if _, err := st.CreateZone("bob", name); !errors.Is(err, dnszone.ErrInvalid) {
			t.Errorf("CreateZone(%q): got %v, want refused as a public suffix", name, err)
		}
	}
	if _, err := st.CreateZone("bob", "example.co.uk"); err != nil {
		t.Errorf("CreateZone(example.co.uk): %v", err)
	}
}
