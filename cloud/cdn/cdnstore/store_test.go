package cdnstore

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/latticenet/lattice/cloud/cdn/cdnrules"
	"github.com/latticenet/lattice/internal/testkit/tabletest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openStore(t *testing.T, fs vfs.FS) *Store {
	t.Helper()
	s, err := Open("cdn", Options{FS: fs, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ttl(n int) *int { return &n }

func mustCreate(t *testing.T, s *Store, account, name, origin string) Deployment {
	t.Helper()
	d, err := s.Create(account, Spec{Name: name, Origin: origin})
	if err != nil {
		t.Fatalf("Create(%s, %s, %s): %v", account, name, origin, err)
	}
	return d
}

func TestTablePrefixesAreDistinct(t *testing.T) {
	tabletest.Check(t, ".", tables, 2)
}

func TestCreate(t *testing.T) {
	s := openStore(t, vfs.NewMem())
	defer s.Close()
	d := mustCreate(t, s, "alice", "site", "https://Example.com/base/")
	if d.Origin != "https://Example.com/base" || d.DefaultTTL != cdnrules.DefaultTTL || d.Account != "alice" || len(d.ID) != 16 {
		t.Errorf("created %+v: want the origin canonical, default TTL %d, 16-digit id", d, cdnrules.DefaultTTL)
	}
	if got := s.CNAME(d); got != "site.cdn.localhost" {
		t.Errorf("CNAME: got %q, want site.cdn.localhost", got)
	}
	if got, ok := s.Route("site.cdn.localhost"); !ok || got.ID != d.ID {
		t.Errorf("Route(site.cdn.localhost): %+v %v", got, ok)
	}
	if _, err := s.Create("alice", Spec{Name: "zero", Origin: "s3://bucket", DefaultTTL: ttl(0)}); err != nil {
		t.Errorf("default_ttl 0: %v", err)
	}

	refused := []struct {
		name string
		in   Spec
		want error
		msg  string
	}{
		{"taken by the same account", Spec{Name: "site", Origin: "http://a.example"}, ErrExists, "site"},
		{"upper case", Spec{Name: "Site2", Origin: "http://a.example"}, ErrInvalid, "lower-case"},
		{"dot", Spec{Name: "a.b", Origin: "http://a.example"}, ErrInvalid, "lower-case"},
		{"leading hyphen", Spec{Name: "-a", Origin: "http://a.example"}, ErrInvalid, "hyphen"},
		{"too long", Spec{Name: strings.Repeat("a", 64), Origin: "http://a.example"}, ErrInvalid, "63"},
		{"empty", Spec{Name: "", Origin: "http://a.example"}, ErrInvalid, "1 to 63"},
		{"ftp origin", Spec{Name: "b", Origin: "ftp://a.example"}, ErrInvalid, "want http(s)"},
		{"origin with query", Spec{Name: "b", Origin: "http://a.example/?x=1"}, ErrInvalid, "query"},
		{"origin with user", Spec{Name: "b", Origin: "http://u:p@a.example"}, ErrInvalid, "user"},
		{"origin without host", Spec{Name: "b", Origin: "http:///x"}, ErrInvalid, "no host"},
		{"origin port 0", Spec{Name: "b", Origin: "http://a.example:0"}, ErrInvalid, "port"},
		{"bad bucket", Spec{Name: "b", Origin: "s3://A_B"}, ErrInvalid, "bucket"},
		{"negative ttl", Spec{Name: "b", Origin: "s3://bucket", DefaultTTL: ttl(-1)}, ErrInvalid, "default_ttl"},
		{"ttl over a year", Spec{Name: "b", Origin: "s3://bucket", DefaultTTL: ttl(cdnrules.MaxDefaultTTL + 1)}, ErrInvalid, "default_ttl"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Create("alice", c.in)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("Create(%+v): got %v, want %v mentioning %q", c.in, err, c.want, c.msg)
			}
		})
	}
	// A name is the platform's: another account cannot take it either.
	if _, err := s.Create("bob", Spec{Name: "site", Origin: "http://b.example"}); !errors.Is(err, ErrExists) {
		t.Errorf("bob taking alice's name: got %v, want ErrExists", err)
	}
	if n := len(s.Deployments("alice")); n != 2 {
		t.Errorf("alice has %d deployments after the refusals, want 2", n)
	}
}

func TestMaxDeployments(t *testing.T) {
	s := openStore(t, vfs.NewMem())
	defer s.Close()
	for i := range MaxDeployments {
		mustCreate(t, s, "alice", fmt.Sprintf("d%d", i), "http://a.example")
	}
	if _, err := s.Create("alice", Spec{Name: "one-more", Origin: "http://a.example"}); !errors.Is(err, ErrLimit) {
		t.Errorf("deployment %d: got %v, want ErrLimit", MaxDeployments+1, err)
	}
	mustCreate(t, s, "bob", "bobs", "http://a.example") // the limit is per account
}

func TestTenancy(t *testing.T) {
	s := openStore(t, vfs.NewMem())
	defer s.Close()
	d := mustCreate(t, s, "alice", "site", "http://a.example")
	if _, _, err := s.AddDomain("alice", Domain{Name: "www.alice.example", Deployment: d.ID}); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"Deployment": func() error { _, err := s.Deployment("bob", d.ID); return err },
		"Delete":     func() error { _, err := s.Delete("bob", d.ID); return err },
		"Domains":    func() error { _, err := s.Domains("bob", d.ID); return err },
		"AddDomain": func() error {
			_, _, err := s.AddDomain("bob", Domain{Name: "x.bob.example", Deployment: d.ID})
			return err
		},
		"Domain":       func() error { _, err := s.Domain("bob", d.ID, "www.alice.example"); return err },
		"Activate":     func() error { _, err := s.Activate("bob", d.ID, "www.alice.example"); return err },
		"RemoveDomain": func() error { _, err := s.RemoveDomain("bob", d.ID, "www.alice.example"); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s by another account: got %v, want ErrNotFound", name, err)
		}
	}
	if got := s.Deployments("bob"); len(got) != 0 {
		t.Errorf("bob lists %+v", got)
	}
	if _, err := s.Deployment("alice", d.ID); err != nil {
		t.Errorf("alice's deployment after bob's attempts: %v", err)
	}
	if doms, _ := s.Domains("alice", d.ID); len(doms) != 1 {
		t.Errorf("alice's domains after bob's attempts: %+v", doms)
	}
}

func TestDomains(t *testing.T) {
	s := openStore(t, vfs.NewMem())
	defer s.Close()
	d := mustCreate(t, s, "alice", "site", "http://a.example")
	other := mustCreate(t, s, "bob", "other", "http://b.example")

	pending, _, err := s.AddDomain("alice", Domain{Name: "WWW.Alice.Example.", Deployment: d.ID})
	if err != nil {
		t.Fatal(err)
	}
	if pending.Name != "www.alice.example" || pending.Active || pending.Account != "alice" {
		t.Errorf("added %+v: want www.alice.example, pending, alice's", pending)
	}
	if _, ok := s.Route("www.alice.example"); ok {
		t.Error("a pending domain is routed")
	}
	if _, err := s.Activate("alice", d.ID, "www.alice.example"); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.Route("www.alice.example"); !ok || got.ID != d.ID {
		t.Errorf("Route of the active domain: %+v %v", got, ok)
	}
	for _, c := range []struct {
		name, account, deployment, domain string
		want                              error
	}{
		{"taken by the same deployment", "alice", d.ID, "www.alice.example", ErrExists},
		{"taken by another account", "bob", other.ID, "www.alice.example", ErrClaimed},
		{"under the CDN domain", "alice", d.ID, "x.cdn.localhost", ErrInvalid},
		{"the CDN domain", "alice", d.ID, "cdn.localhost", ErrInvalid},
		{"one label", "alice", d.ID, "localhost", ErrInvalid},
		{"with a port", "alice", d.ID, "www.example.com:80", ErrInvalid},
		{"unknown deployment", "alice", "feedfeedfeedfeed", "a.example.com", ErrNotFound},
	} {
		if _, _, err := s.AddDomain(c.account, Domain{Name: c.domain, Deployment: c.deployment}); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := s.RemoveDomain("alice", d.ID, "www.alice.example"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Route("www.alice.example"); ok {
		t.Error("a removed domain is still routed")
	}
	for i := range MaxDomains {
		if _, _, err := s.AddDomain("alice", Domain{Name: fmt.Sprintf("d%d.alice.example", i), Deployment: d.ID}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.AddDomain("alice", Domain{Name: "more.alice.example", Deployment: d.ID}); !errors.Is(err, ErrLimit) {
		t.Errorf("domain %d: got %v, want ErrLimit", MaxDomains+1, err)
	}
	gone, err := s.Delete("alice", d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(gone) != MaxDomains {
		t.Errorf("Delete returned %d domains, want %d", len(gone), MaxDomains)
	}
	if _, ok := s.Route("site.cdn.localhost"); ok {
		t.Error("a deleted deployment is still routed")
	}
	// Its name is free again.
	mustCreate(t, s, "bob", "site", "http://b.example")
}

// TestReopen: deployments, domains and routes come back after a restart,
// on another CDN domain too (cnames follow the configured domain).
func TestReopen(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	d := mustCreate(t, s, "alice", "site", "s3://assets/v1")
	if _, _, err := s.AddDomain("alice", Domain{Name: "www.alice.example", Deployment: d.ID, Active: true, ZoneID: "z1", RecordID: "r1"}); err != nil {
		t.Fatal(err)
	}
	gone := mustCreate(t, s, "alice", "gone", "http://a.example")
	if _, err := s.Delete("alice", gone.ID); err != nil {
		t.Fatal(err)
	}
	wantDoms, _ := s.Domains("alice", d.ID)
	s.Close()

	s2, err := Open("cdn", Options{FS: fs, Logger: quiet, Domain: "edge.example.net"})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.Deployment("alice", d.ID)
	if err != nil || !reflect.DeepEqual(got, d) {
		t.Errorf("deployment after reopen: %+v %v, want %+v", got, err, d)
	}
	if doms, _ := s2.Domains("alice", d.ID); !reflect.DeepEqual(doms, wantDoms) {
		t.Errorf("domains after reopen: %+v, want %+v", doms, wantDoms)
	}
	for _, host := range []string{"site.edge.example.net", "www.alice.example"} {
		if r, ok := s2.Route(host); !ok || r.ID != d.ID {
			t.Errorf("Route(%s) after reopen: %+v %v", host, r, ok)
		}
	}
	if _, ok := s2.Route("gone.edge.example.net"); ok {
		t.Error("a deleted deployment came back")
	}
}

// TestWriteFailureMakesTheStoreReadOnly: on a full disk the failing write
// and every later one answer ErrUnavailable, without hanging; routes and
// reads go on; a restart finds every acknowledged change.
func TestWriteFailureMakesTheStoreReadOnly(t *testing.T) {
	var full atomic.Bool
	fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
		if full.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return syscall.ENOSPC
		}
		return nil
	}))
	s := openStore(t, fs)
	d := mustCreate(t, s, "alice", "site", "http://a.example")
	full.Store(true)
	writes := map[string]func() error{
		"Create": func() error {
			_, err := s.Create("alice", Spec{Name: "new", Origin: "http://a.example"})
			return err
		},
		"AddDomain": func() error {
			_, _, err := s.AddDomain("alice", Domain{Name: "www.a.example", Deployment: d.ID})
			return err
		},
		"Delete": func() error { _, err := s.Delete("alice", d.ID); return err },
	}
	for _, when := range []string{"on a full disk", "after space returned"} {
		for name, w := range writes {
			done := make(chan error, 1)
			go func() { done <- w() }()
			select {
			case err := <-done:
				if !errors.Is(err, ErrUnavailable) {
					t.Errorf("%s %s: got %v, want ErrUnavailable", name, when, err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s %s did not return", name, when)
			}
		}
		if r, ok := s.Route("site.cdn.localhost"); !ok || r.ID != d.ID {
			t.Errorf("route %s: %+v %v", when, r, ok)
		}
		if got := s.Deployments("alice"); len(got) != 1 {
			t.Errorf("deployments %s: %+v", when, got)
		}
		full.Store(false)
	}
	s.Close()
	s2 := openStore(t, fs)
	defer s2.Close()
	if _, err := s2.Deployment("alice", d.ID); err != nil {
		t.Errorf("after the restart: %v", err)
	}
	mustCreate(t, s2, "alice", "new", "http://a.example")
}

// TestProvenClaimReplaces: a claim its caller proved with DNS (Active)
// replaces another deployment's claim of the name in one write, which a
// reopened store keeps; an unproven one does not, nor does a proven one
// replace its own deployment's.
func TestProvenClaimReplaces(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs)
	bobs := mustCreate(t, s, "bob", "bob-site", "http://b.example")
	alices := mustCreate(t, s, "alice", "alice-site", "http://a.example")
	if _, _, err := s.AddDomain("bob", Domain{Name: "www.shop.example", Deployment: bobs.ID, ZoneID: "z1", RecordID: "r1"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AddDomain("alice", Domain{Name: "www.shop.example", Deployment: alices.ID}); !errors.Is(err, ErrClaimed) {
		t.Fatalf("an unproven claim of a held name: %v, want ErrClaimed", err)
	}
	added, replaced, err := s.AddDomain("alice", Domain{Name: "www.shop.example", Deployment: alices.ID, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	if !added.Active || added.Account != "alice" || replaced == nil || replaced.Account != "bob" || replaced.RecordID != "r1" {
		t.Fatalf("added %+v, replaced %+v: want alice's active claim over bob's", added, replaced)
	}
	if _, _, err := s.AddDomain("alice", Domain{Name: "www.shop.example", Deployment: alices.ID, Active: true}); !errors.Is(err, ErrExists) || errors.Is(err, ErrClaimed) {
		t.Errorf("a proven claim of a name its deployment holds: %v, want ErrExists alone", err)
	}
	s.Close()
	s = openStore(t, fs)
	defer s.Close()
	if doms, _ := s.Domains("bob", bobs.ID); len(doms) != 0 {
		t.Errorf("bob's domains after reopening: %+v", doms)
	}
	if d, ok := s.Route("www.shop.example"); !ok || d.ID != alices.ID {
		t.Errorf("Route after reopening: %+v %v, want alice's deployment", d, ok)
	}
}
