package pebblekv

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/latticenet/lattice/internal/run/pebblelog"
)

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct{ prefix, want []byte }{
		{nil, nil},
		{[]byte{}, nil},
		{[]byte("a"), []byte("b")},
		{[]byte("ab"), []byte("ac")},
		{[]byte{'a', 0xff}, []byte("b")},
		{[]byte{'a', 0xff, 0xff}, []byte("b")},
		{[]byte{0xff}, nil},
		{[]byte{0xff, 0xff}, nil},
		{[]byte{0x00}, []byte{0x01}},
	} {
		prefix := bytes.Clone(tc.prefix)
		if got := PrefixEnd(prefix); !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("PrefixEnd(%x) = %x, want %x", tc.prefix, got, tc.want)
		}
		if !bytes.Equal(prefix, tc.prefix) {
			t.Errorf("PrefixEnd(%x) changed its argument to %x", tc.prefix, prefix)
		}
	}
}

// TestCount: the keys under a prefix and no others, neighbours that share
// bytes included; the bound; a snapshot counts what it saw.
func TestCount(t *testing.T) {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(keys ...string) {
		t.Helper()
		for _, k := range keys {
			if err := db.Set([]byte(k), nil, pebble.NoSync); err != nil {
				t.Fatal(err)
			}
		}
	}
	put("a", "b", "ba", "bb", "b\xff", "b\xff\xff", "c", "\xff", "\xff\x01")
	snap := db.NewSnapshot()
	defer snap.Close()
	for i := range 10 {
		put(fmt.Sprintf("d%d", i))
	}
	for _, tc := range []struct {
		r      pebble.Reader
		prefix string
		max    int
		want   int
	}{
		{db, "b", 0, 5},
		{db, "b", 3, 3},
		{db, "b", 5, 5},
		{db, "b", 6, 5},
		{db, "b\xff", 0, 2},
		{db, "ba", 0, 1},
		{db, "bc", 0, 0},
		{db, "\xff", 0, 2},
		{db, "", 0, 19},
		{db, "", -1, 19},
		{db, "d", 0, 10},
		{snap, "d", 0, 0},
		{snap, "", 0, 9},
	} {
		got, err := Count(tc.r, []byte(tc.prefix), tc.max)
		if err != nil || got != tc.want {
			t.Errorf("Count(%q, max %d) = %d, %v; want %d", tc.prefix, tc.max, got, err, tc.want)
		}
	}
}

// TestOpenChecksTheDirectory: a database reopened in a directory where no
// file can be created (one another user owns, as a restore may leave it)
// is an error that names it, before Pebble writes anything (Pebble itself
// would find out in a background flush, and die); a directory that does
// not exist yet is made, as before.
func TestOpenChecksTheDirectory(t *testing.T) {
	fs := vfs.NewMem()
	logger := pebblelog.New(slog.New(slog.DiscardHandler))
	db, err := Open("db", &pebble.Options{FS: fs, Logger: logger})
	if err != nil {
		t.Fatalf("a new directory: %v", err)
	}
	if err := db.Set([]byte("k"), []byte("v"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := fs.List("db")
	denied := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpCreate {
			return iofs.ErrPermission
		}
		return nil
	})
	db, err = Open("db", &pebble.Options{FS: errorfs.Wrap(fs, denied), Logger: logger})
	if err == nil {
		db.Close()
		t.Fatal("Open took a directory where no file can be created")
	}
	if !errors.Is(err, iofs.ErrPermission) || !strings.Contains(err.Error(), "cannot create files in db") {
		t.Errorf("the error: %v", err)
	}
	after, _ := fs.List("db")
	slices.Sort(before)
	slices.Sort(after)
	if !slices.Equal(before, after) {
		t.Errorf("the refused open changed the directory: %v, then %v", before, after)
	}
	db, err = Open("db", &pebble.Options{FS: fs, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, closer, err := db.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Errorf("reopened: %q, %v", v, err)
	} else {
		closer.Close()
	}
	names, _ := fs.List("db")
	for _, n := range names {
		if strings.HasPrefix(n, writeCheck) {
			t.Errorf("the check's file stayed: %v", names)
		}
	}
}

// TestOpenUnwritableOnDisk: the same on the disk, for a directory made
// read-only (root writes anywhere: this case is for the other users CI
// runs the tests as).
func TestOpenUnwritableOnDisk(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write in a read-only directory")
	}
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if _, err := Open(dir, &pebble.Options{}); !errors.Is(err, iofs.ErrPermission) || !strings.Contains(err.Error(), "cannot create files in "+dir) {
		t.Fatalf("a read-only directory: %v, want the check's permission error", err)
	}
}

// TestOpenInUse: a database that is open already is ErrInUse, saying
// what is likely, not Pebble's bare "resource temporarily unavailable".
func TestOpenInUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := Open(dir, &pebble.Options{Logger: pebblelog.New(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = Open(dir, &pebble.Options{Logger: pebblelog.New(slog.New(slog.DiscardHandler))})
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "already running on this data directory") {
		t.Fatalf("a second open: %v, want ErrInUse", err)
	}
}
