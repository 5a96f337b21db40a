package cloudstore

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/cloud/storage/sse"
)

// TestDSSERecords: a DSSE-KMS object keeps two data keys sealed apart,
// never a bucket key, and reads only with both in their places: a record
// whose keys were swapped, or that lost its outer key, is an error, never
// other bytes.
func TestDSSERecords(t *testing.T) {
	b := newSecretStore(t)
	if _, err := b.OpenKMS(bytes.Repeat([]byte{3}, 32), nil); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, n := range []int{10, 3*sse.ChunkSize + 7} {
		key := "dsse-" + string(rune('a'+n%26))
		plain := plaintext(n)
		obj, err := b.Put(ctx, "acme", "pics", key, bytes.NewReader(plain),
			PutOptions{Max: 1 << 20, Now: t0, Encrypt: &SSE{Mode: SSEDSSE, BucketKey: true}})
		if err != nil {
			t.Fatal(err)
		}
		enc := obj.Encryption
		if enc == nil || enc.Mode != SSEDSSE || len(enc.SealedKey) == 0 || len(enc.OuterSealedKey) == 0 ||
			bytes.Equal(enc.SealedKey, enc.OuterSealedKey) || enc.BucketKey || !enc.UsesKMS() {
			t.Fatalf("%d bytes: %+v", n, enc)
		}
		if got, _, err := b.readVersion(key, "", nil); err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("%d bytes: read %d bytes, %v", n, len(got), err)
		}
		for name, change := range map[string]func(*Encryption){
			"keys swapped":      func(e *Encryption) { e.SealedKey, e.OuterSealedKey = e.OuterSealedKey, e.SealedKey },
			"no outer key":      func(e *Encryption) { e.OuterSealedKey = nil },
			"read as SSE-KMS":   func(e *Encryption) { e.Mode = SSEKMS },
			"outer key as both": func(e *Encryption) { e.SealedKey = e.OuterSealedKey },
		} {
			changed := obj
			e := *enc
			change(&e)
			changed.Encryption = &e
			b.putRecord(key, changed)
			if got, _, err := b.readVersion(key, "", nil); !errors.Is(err, sse.ErrCorrupt) {
				t.Errorf("%d bytes, %s: %d bytes, %v; want ErrCorrupt", n, name, len(got), err)
			}
			b.putRecord(key, obj)
		}
		if got, _, err := b.readVersion(key, "", nil); err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("%d bytes, the record put back: %v", n, err)
		}
	}
	if bytes.Contains(b.onDisk(), []byte("PLAIN00000")) {
		t.Fatal("plaintext on disk")
	}
	// A bucket default of DSSE-KMS encrypts what asks for nothing.
	if err := b.SetBucketEncryption("acme", "pics", DefaultEncryption{Mode: SSEDSSE, BucketKey: true}); err != nil {
		t.Fatal(err)
	}
	obj, err := b.Put(ctx, "acme", "pics", "by-default", bytes.NewReader(plaintext(100)), PutOptions{Max: 1000, Now: t0})
	if err != nil || obj.Encryption == nil || obj.Encryption.Mode != SSEDSSE || obj.Encryption.BucketKey {
		t.Fatalf("a put under a DSSE-KMS default: %+v %v", obj.Encryption, err)
	}
}

// putRecord writes obj as key's current record in acme's pics, as it is.
func (b *blobStore) putRecord(key string, obj Object) {
	b.t.Helper()
	batch := b.db.NewBatch()
	defer batch.Close()
	if err := setJSON(batch, k(tObject, "pics", key), obj); err != nil {
		b.t.Fatal(err)
	}
	if err := batch.Commit(pebble.Sync); err != nil {
		b.t.Fatal(err)
	}
}
