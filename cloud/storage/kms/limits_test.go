package kms

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestLimits: an account makes at most MaxKeysPerAccount keys and a key
// has at most MaxVersions versions; past either, ErrLimit changes
// nothing, another account is not held back, and the default key is
// still made when an SSE-KMS write needs it.
func TestLimits(t *testing.T) {
	fs := vfs.NewMem()
	db := openDB(t, fs)
	defer db.Close()
	l := open(t, db, key32(1), nil)
	for i := range MaxKeysPerAccount {
		if _, err := l.Create(ctx, "alice", fmt.Sprintf("k%d", i), ""); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	if _, err := l.Create(ctx, "alice", "one-more", ""); !errors.Is(err, ErrLimit) {
		t.Fatalf("a key past the account's limit: %v", err)
	}
	if _, err := l.Get(ctx, "alice", "one-more"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused key exists: %v", err)
	}
	if _, err := l.Create(ctx, "bob", "k0", ""); err != nil {
		t.Fatalf("another account: %v", err)
	}
	if d, err := l.Resolve(ctx, "alice", ""); err != nil || !d.Managed {
		t.Fatalf("the default key past the limit: %+v %v", d, err)
	}

	k, err := l.Create(ctx, "bob", "rotated", "")
	if err != nil {
		t.Fatal(err)
	}
	for k.Versions < MaxVersions {
		if k, err = l.Rotate(ctx, "bob", "rotated"); err != nil {
			t.Fatalf("rotation to version %d: %v", k.Versions+1, err)
		}
	}
	if _, err := l.Rotate(ctx, "bob", "rotated"); !errors.Is(err, ErrLimit) {
		t.Fatalf("a rotation past the key's limit: %v", err)
	}
	if got, err := l.Get(ctx, "bob", "rotated"); err != nil || got.Versions != MaxVersions {
		t.Fatalf("after the refusal the key has %d versions (%v), want %d", got.Versions, err, MaxVersions)
	}
}
