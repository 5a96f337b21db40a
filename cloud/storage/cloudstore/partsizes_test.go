package cloudstore

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// TestPartSizesKept: a completed upload keeps its parts' sizes in the
// object's record, across a restart and a copy; an object uploaded whole
// has none; and a record written before the sizes were kept still reads,
// its part count known from its ETag alone.
func TestPartSizesKept(t *testing.T) {
	b := newBlobStore(t)
	ctx := context.Background()
	u, err := b.CreateUpload(t.Context(), "acme", "pics", "movie", PutOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	var list []CompletedPart
	for i, body := range [][]byte{bytes.Repeat([]byte("1"), MinPartSize), []byte("the end")} {
		p, err := b.Store.PutPart(ctx, "acme", "pics", "movie", u.ID, i+1, bytes.NewReader(body), PartOptions{Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, CompletedPart{Number: i + 1, ETag: p.ETag})
	}
	if _, err := b.CompleteUpload(ctx, "acme", "pics", "movie", u.ID, list, t0, Preconditions{}); err != nil {
		t.Fatal(err)
	}
	b.reopen()
	if _, err := b.Copy(context.Background(), "acme", "pics", "movie", "pics", "copy", t0.Add(time.Minute), CopyOptions{KeepEncryption: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.Put(ctx, "acme", "pics", "whole", bytes.NewReader([]byte("abc")), PutOptions{ContentType: "", Max: 10, Now: t0}); err != nil {
		t.Fatal(err)
	}
	// As a store of an earlier version wrote a completed upload's record.
	old := `{"key":"old","size":3,"etag":"0123456789abcdef0123456789abcdef-3","content_type":"x","last_modified":"2025-01-01T00:00:00Z","inline":"YWJj"}`
	if err := b.db.Set(k(tObject, "pics", "old"), []byte(old), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		key   string
		sizes string
		count int
		part2 string
	}{
		{"movie", fmt.Sprint([]int64{MinPartSize, 7}), 2, fmt.Sprint(MinPartSize, 7, true)},
		{"copy", fmt.Sprint([]int64{MinPartSize, 7}), 2, fmt.Sprint(MinPartSize, 7, true)},
		{"whole", "[]", 0, "0 0 false"},
		{"old", "[]", 3, "0 0 false"},
	} {
		obj, err := b.Object("acme", "pics", tt.key)
		if err != nil {
			t.Fatalf("%s: %v", tt.key, err)
		}
		first, size, ok := obj.Part(2)
		got := fmt.Sprintf("%v %d %v", obj.PartSizes, obj.MultipartCount(), fmt.Sprint(first, size, ok))
		if want := fmt.Sprintf("%s %d %s", tt.sizes, tt.count, tt.part2); got != want {
			t.Errorf("%s: got %v, want %v", tt.key, got, want)
		}
	}
}
