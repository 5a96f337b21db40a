package cloudstore

// Tests of the lookups behind presigned URLs and public downloads: a public
// bucket by name alone, an API key by ID, and keys derived from the
// secret key.

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestPublicBucket(t *testing.T) {
	s := newStore(t)
	if _, err := s.CreateBucket("acme", "pics", "", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublicBucket("pics"); !errors.Is(err, ErrNotFound) {
		t.Errorf("PublicBucket of a private bucket: %v, want ErrNotFound", err)
	}
	if _, err := s.PublicBucket("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("PublicBucket of a missing bucket: %v, want ErrNotFound", err)
	}
	if _, err := s.UpdateBucket("acme", "pics", t0, func(b *Bucket) { b.Public = true }); err != nil {
		t.Fatal(err)
	}
	bk, err := s.PublicBucket("pics")
	if err != nil || bk.Account != "acme" || bk.Name != "pics" {
		t.Errorf("PublicBucket of a public bucket: %+v, %v; want acme's pics", bk, err)
	}
}

func TestDerivedKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secret.key")
	s := openStore(t, filepath.Join(dir, "meta"))
	if _, err := s.DerivedKey("presign"); err == nil {
		t.Error("DerivedKey before OpenSecrets: no error")
	}
	if err := s.OpenSecrets(path); err != nil {
		t.Fatal(err)
	}
	a, err := s.DerivedKey("presign")
	if err != nil || len(a) != 32 {
		t.Fatalf("DerivedKey = %x, %v; want 32 bytes", a, err)
	}
	b, _ := s.DerivedKey("other")
	master, _ := os.ReadFile(path)
	if bytes.Equal(a, b) || bytes.Equal(a, master) {
		t.Error("derived keys equal each other or the secret key")
	}
	s.Close()
	s = openStore(t, filepath.Join(dir, "meta"))
	defer s.Close()
	if err := s.OpenSecrets(path); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.DerivedKey("presign"); !bytes.Equal(again, a) {
		t.Error("DerivedKey changed across a restart")
	}
}
