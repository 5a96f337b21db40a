package dnsstore

import (
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/latticenet/lattice/cloud/dns/dnszone"
	"github.com/latticenet/lattice/internal/testkit/tabletest"
)

// TestTablePrefixesAreDistinct: every key begins with its table's prefix,
// so no prefix may begin another, every table const must be in tables
// (else nobody checks it), and tables holds nothing else.
func TestTablePrefixesAreDistinct(t *testing.T) {
	tabletest.Check(t, ".", tables, 4)
	for _, want := range []string{tableZones, tableNames, tableRecords} {
		if !slices.Contains(tables, want) {
			t.Errorf("tables %q lacks %q", tables, want)
		}
	}
}

// TestSerialSkipsZero: a serial at 2^32-1 wraps to 1, not 0 (RFC 1982
// arithmetic; 0 is avoided), in memory and on disk.
func TestSerialSkipsZero(t *testing.T) {
	dir := t.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := Open(dir, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	z, err := s.CreateZone("alice", "example.com")
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.zones[z.ID].Serial = 1<<32 - 1
	s.mu.Unlock()
	if _, err := s.AddRecord("alice", z.ID, dnszone.Input{Type: "A", Name: "www", Value: "192.0.2.1"}); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Zone("alice", z.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Serial != 1 {
		t.Errorf("serial after 4294967295: got %d, want 1", got.Serial)
	}
	if snap := s.Snapshot("example.com"); snap == nil || snap.Serial != 1 || snap.SOA().Serial != 1 {
		t.Errorf("snapshot after the wrap: %+v, want serial 1", snap)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, _, _ := s.Zone("alice", z.ID); got.Serial != 1 {
		t.Errorf("serial after reopen: got %d, want 1", got.Serial)
	}
}
