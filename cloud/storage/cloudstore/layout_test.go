package cloudstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/internal/pebblekv"
)

// TestKeyLayout: the keys of the records a store writes are laid out as
// the comments on the tables say (table byte, then the parts with a 0
// between them). The layout is the on-disk format: a store that built its
// keys any other way would find nothing a data directory already holds.
func TestKeyLayout(t *testing.T) {
	b := newBlobStore(t)
	obj := b.put("dir/k", randomBody(InlineMax+1))
	for _, tc := range []struct {
		what, key string
		empty     bool // the key is the record
	}{
		{"bucket", "bpics", false},
		{"the owner's bucket list", "oacme\x00pics", true},
		{"object", "Opics\x00dir/k", false},
		{"body reference count", "R" + obj.Blob, false},
	} {
		v, closer, err := b.db.Get([]byte(tc.key))
		if err != nil {
			t.Errorf("%s at %q: got %v, want the record", tc.what, tc.key, err)
			continue
		}
		if got := len(v) == 0; got != tc.empty {
			t.Errorf("%s at %q: empty record: got %v, want %v", tc.what, tc.key, got, tc.empty)
		}
		closer.Close()
	}
	for _, tc := range []struct {
		parts []string
		want  string
	}{
		{[]string{"pics"}, "Opics"},
		{[]string{"pics", "k"}, "Opics\x00k"},
		{[]string{"pics", "", "k"}, "Opics\x00\x00k"},
	} {
		if got := k(tObject, tc.parts...); string(got) != tc.want {
			t.Errorf("k(O, %q): got %q, want %q", tc.parts, got, tc.want)
		}
	}
}

// TestSuccessor: the upper bound of a scan is the smallest key greater
// than every key with the prefix, also when the prefix ends in 0xff (a
// listing's prefix is the client's, any bytes).
func TestSuccessor(t *testing.T) {
	for _, tc := range []struct {
		prefix, want string
	}{
		{"Oa", "Ob"},
		{"Oa\x00", "Oa\x01"},
		{"Oa\xfe", "Oa\xff"},
		{"Oa\xff", "Ob"},
		{"Oa\xff\xff", "Ob"},
		{"\xff", ""},
	} {
		if got := pebblekv.PrefixEnd([]byte(tc.prefix)); string(got) != tc.want {
			t.Errorf("pebblekv.PrefixEnd(%q): got %q, want %q", tc.prefix, got, tc.want)
		}
	}
	// A listing whose prefix ends in 0xff matches no key (keys are UTF-8)
	// and says so, rather than failing.
	b := newBlobStore(t)
	b.put("a", []byte("x"))
	for _, prefix := range []string{"\xff", "a\xff"} {
		l, err := b.ListObjects("acme", "pics", prefix, "", "", 10)
		if err != nil || len(l.Objects)+len(l.Prefixes) != 0 {
			t.Errorf("ListObjects(prefix %q): got %d objects, %d prefixes, %v; want none, nil", prefix, len(l.Objects), len(l.Prefixes), err)
		}
	}
}

// TestReferenceRecordsGoWithTheirBody: once no object refers to a body
// file, its reference count is deleted with it, not left behind at 0:
// the table holds one record per body file in use, and no more.
func TestReferenceRecordsGoWithTheirBody(t *testing.T) {
	b := newBlobStore(t)
	ctx := context.Background()
	refRecords := func() []string {
		t.Helper()
		var out []string
		if err := b.scan([]byte{tBlob}, func(key, v []byte) error {
			out = append(out, fmt.Sprintf("%s=%s", key[1:], v))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := b.put("a", randomBody(InlineMax+1))
	if _, err := b.Copy(context.Background(), "acme", "pics", "a", "pics", "b", t0, CopyOptions{KeepEncryption: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(refRecords()), fmt.Sprintf("[%s=2]", first.Blob); got != want {
		t.Errorf("after a copy: got %s, want %s", got, want)
	}
	steps := []struct {
		what string
		do   func() error
		want int // reference records left
	}{
		{"overwrite a with a small body", func() error {
			_, err := b.Store.Put(ctx, "acme", "pics", "a", bytes.NewReader([]byte("small")), PutOptions{ContentType: "", Max: 1 << 20, Now: t0})
			return err
		}, 1},
		{"delete b", func() error { _, err := b.Delete("acme", "pics", "b", DeleteOptions{}); return err }, 0},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		if got := refRecords(); len(got) != s.want {
			t.Errorf("%s: got reference records %v, want %d", s.what, got, s.want)
		}
	}
	if _, _, err := b.db.Get(k(tBlob, first.Blob)); !errors.Is(err, pebble.ErrNotFound) {
		t.Errorf("reference record of the dropped body: got %v, want pebble.ErrNotFound", err)
	}
	b.wantFiles("after the last reference went", 0)
}
