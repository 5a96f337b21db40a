package dnsstore

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/latticenet/lattice/dnszone"
)

// tableConsts returns the value of every const named table* that the
// package's own (non-test) files declare, by name.
func tableConsts(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "table") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("const %s is not a string literal", id.Name)
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					consts[id.Name] = v
				}
			}
		}
	}
	return consts
}

// TestTablePrefixesAreDistinct: every key begins with its table's prefix,
// so no prefix may begin another (a scan of one table would read the
// other's keys), every table const must be in tables (else nobody checks
// it), and tables holds nothing else.
func TestTablePrefixesAreDistinct(t *testing.T) {
	consts := tableConsts(t)
	if len(consts) != len(tables) || len(consts) < 4 {
		t.Errorf("found %d table consts %v, want one for each of tables %q", len(consts), consts, tables)
	}
	for name, v := range consts {
		if !slices.Contains(tables, v) {
			t.Errorf("const %s = %q is not listed in tables %q", name, v, tables)
		}
	}
	if len(tables) != len(consts) {
		t.Errorf("tables has %d entries %q, want the %d table consts", len(tables), tables, len(consts))
	}
	for i, a := range tables {
		if a == "" || !strings.HasSuffix(a, "/") {
			t.Errorf("table prefix %q: want a non-empty prefix ending in /", a)
		}
		for j, b := range tables {
			if i != j && strings.HasPrefix(b, a) {
				t.Errorf("table prefix %q (tables[%d]) is a prefix of %q (tables[%d])", a, i, b, j)
			}
		}
	}
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
