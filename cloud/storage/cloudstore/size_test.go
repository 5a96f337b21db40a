package cloudstore

import (
	"context"
	"testing"
)

// TestTotals: Totals follows buckets and objects as they come and go;
// DiskUsage sees the database.
func TestTotals(t *testing.T) {
	b := newBlobStore(t) // acme's bucket "pics"
	small, large := randomBody(100), randomBody(200<<10)
	steps := []struct {
		name string
		do   func()
		want Totals
	}{
		{"an empty bucket", func() {}, Totals{1, 0, 0}},
		{"a small object", func() { b.put("a", small) }, Totals{1, 1, 100}},
		{"a large object", func() { b.put("b", large) }, Totals{1, 2, 100 + 200<<10}},
		{"a copy", func() {
			if _, err := b.Copy(context.Background(), "acme", "pics", "b", "pics", "c", t0, CopyOptions{KeepEncryption: true}); err != nil {
				t.Fatal(err)
			}
		}, Totals{1, 3, 100 + 2*200<<10}},
		{"an overwrite", func() { b.put("a", small[:10]) }, Totals{1, 3, 10 + 2*200<<10}},
		{"another account's bucket", func() {
			if _, err := b.CreateBucket("globex", "docs", "", t0); err != nil {
				t.Fatal(err)
			}
		}, Totals{2, 3, 10 + 2*200<<10}},
		{"a delete", func() {
			if _, err := b.Delete("acme", "pics", "b", DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, Totals{2, 2, 10 + 200<<10}},
		{"a bucket deleted", func() {
			if err := b.DeleteBucket("globex", "docs"); err != nil {
				t.Fatal(err)
			}
		}, Totals{1, 2, 10 + 200<<10}},
	}
	for _, s := range steps {
		s.do()
		got, err := b.Totals()
		if err != nil {
			t.Fatalf("%s: Totals: %v", s.name, err)
		}
		if got != s.want {
			t.Errorf("%s: got %+v, want %+v", s.name, got, s.want)
		}
	}
	if got := b.DiskUsage(); got == 0 {
		t.Errorf("DiskUsage: got 0, want the database's bytes")
	}
	b.reopen()
	if got, want := mustTotals(t, b.Store), (Totals{1, 2, 10 + 200<<10}); got != want {
		t.Errorf("after a restart: got %+v, want %+v", got, want)
	}
}

func mustTotals(t *testing.T, s *Store) Totals {
	t.Helper()
	got, err := s.Totals()
	if err != nil {
		t.Fatal(err)
	}
	return got
}
