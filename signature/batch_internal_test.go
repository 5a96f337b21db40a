package signature

import (
	"crypto/ed25519"
	"encoding/binary"
	"testing"

	"filippo.io/edwards25519"
)

type edwardsPoint = edwards25519.Point

// TestKeyCacheBounded fills the key cache past its bound and checks that it
// stays bounded, that evicted keys decode again, and that keys that do not
// decode are not kept.
func TestKeyCacheBounded(t *testing.T) {
	c := keyCache{m: make(map[[32]byte]*edwardsPoint)}
	var seed [ed25519.SeedSize]byte
	var first ed25519.PublicKey
	for i := range keyCacheSize + 100 {
		binary.LittleEndian.PutUint64(seed[:], uint64(i))
		pub := ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)
		if i == 0 {
			first = pub
		}
		p, err := c.point(pub)
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		if q, _ := c.point(pub); q != p {
			t.Fatalf("key %d: a second lookup decoded the key again", i)
		}
		if len(c.m) > keyCacheSize {
			t.Fatalf("after %d keys the cache holds %d, more than %d", i+1, len(c.m), keyCacheSize)
		}
	}
	p, err := c.point(first)
	if err != nil || p.Equal(mustDecode(t, first)) != 1 {
		t.Fatalf("a key evicted or not: %v", err)
	}
	// y = 2 is not the y of a curve point.
	bad := make([]byte, 32)
	bad[0] = 2
	n := len(c.m)
	if _, err := c.point(bad); err == nil {
		t.Fatal("a key that is not a point decoded")
	}
	if _, kept := c.m[[32]byte(bad)]; kept || len(c.m) != n {
		t.Fatal("a key that does not decode was cached")
	}
}

func mustDecode(t *testing.T, pub []byte) *edwardsPoint {
	t.Helper()
	p, err := new(edwardsPoint).SetBytes(pub)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
