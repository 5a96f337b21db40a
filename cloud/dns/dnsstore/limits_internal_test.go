package dnsstore

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

// TestMaxAccountRecords: the records of all an account's zones are
// bounded together; past MaxAccountRecords a new record is ErrLimit and
// changes nothing, while another account adds, and the account's own
// records may still be replaced.
func TestMaxAccountRecords(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := func(name string) dnszone.Input { return dnszone.Input{Type: "A", Name: name, Value: "192.0.2.1"} }
	target, err := s.CreateZone("alice", "target.example")
	if err != nil {
		t.Fatal(err)
	}
	kept, err := s.AddRecord("alice", target.ID, a("www"))
	if err != nil {
		t.Fatal(err)
	}
	// The other zones are filled in memory, as the count reads them: the
	// limit, not the disk, is what is tested.
	for i, n := 0, 0; n < MaxAccountRecords; i++ {
		z, err := s.CreateZone("alice", fmt.Sprintf("full%d.example", i))
		if err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		n = s.accountRecords("alice") // the new zone's apex records too
		for k := len(s.zones[z.ID].records); k < dnszone.MaxRecords && n < MaxAccountRecords; k++ {
			s.zones[z.ID].records = append(s.zones[z.ID].records, dnszone.Record{ID: fmt.Sprint(k), Type: "A", Name: fmt.Sprintf("h%d.%s", k, z.Name), Value: "192.0.2.2"})
			n++
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	if n := s.accountRecords("alice"); n != MaxAccountRecords {
		t.Fatalf("filled to %d records, want %d", n, MaxAccountRecords)
	}
	s.mu.Unlock()
	before, _ := s.Records("alice", target.ID)
	if _, err := s.AddRecord("alice", target.ID, a("one-more")); !errors.Is(err, ErrLimit) {
		t.Fatalf("a record past the account's limit: %v", err)
	}
	if after, _ := s.Records("alice", target.ID); len(after) != len(before) {
		t.Fatalf("the refused record was added: %d records, were %d", len(after), len(before))
	}
	if _, err := s.UpdateRecord("alice", target.ID, kept.ID, a("web")); err != nil {
		t.Fatalf("replacing a record at the limit: %v", err)
	}
	other, err := s.CreateZone("bob", "bob.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddRecord("bob", other.ID, a("www")); err != nil {
		t.Fatalf("another account: %v", err)
	}
}
