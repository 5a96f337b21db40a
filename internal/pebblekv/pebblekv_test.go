package pebblekv

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
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
