package signature

import (
	"crypto/ed25519"
	"encoding/binary"
	"sync"
	"testing"

	"github.com/oasisprotocol/curve25519-voi/curve"
)

// TestKeyCacheBounded fills a small key cache past its bound and checks
// that it stays bounded, that an evicted key decodes again to the same
// point and is kept again, and that keys that do not decode are not kept.
func TestKeyCacheBounded(t *testing.T) {
	c := keyCache{size: 64}
	var seed [ed25519.SeedSize]byte
	var pubs []ed25519.PublicKey
	for i := range 200 {
		binary.LittleEndian.PutUint64(seed[:], uint64(i))
		pub := ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)
		pubs = append(pubs, pub)
		p, err := c.point(pub)
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		if q, _ := c.point(pub); q != p {
			t.Fatalf("key %d: a second lookup decoded the key again", i)
		}
		if len(c.m) > c.size {
			t.Fatalf("after %d keys the cache holds %d, more than %d", i+1, len(c.m), c.size)
		}
	}
	var evicted ed25519.PublicKey
	for _, pub := range pubs {
		if _, ok := c.m[[32]byte(pub)]; !ok {
			evicted = pub
			break
		}
	}
	p, err := c.point(evicted)
	if err != nil || p.Point().Equal(mustDecode(t, evicted)) != 1 {
		t.Fatalf("an evicted key decoded to another point: %v", err)
	}
	if c.m[[32]byte(evicted)] != p || len(c.m) != c.size {
		t.Fatal("an evicted key looked up again is not kept, or the cache grew")
	}
	// y = 2 is not the y of a curve point.
	bad := make([]byte, 32)
	bad[0] = 2
	if _, err := c.point(bad); err == nil {
		t.Fatal("a key that is not a point decoded")
	}
	if _, kept := c.m[[32]byte(bad)]; kept || len(c.m) != c.size {
		t.Fatal("a key that does not decode was cached")
	}
}

// TestKeyCacheConcurrent has several goroutines look up overlapping keys
// in a cache small enough to evict all the time (run it with -race): every
// lookup must return the key's point.
func TestKeyCacheConcurrent(t *testing.T) {
	c := keyCache{size: 8}
	var pubs []ed25519.PublicKey
	var want []*curve.EdwardsPoint
	var seed [ed25519.SeedSize]byte
	for i := range 24 {
		binary.LittleEndian.PutUint64(seed[:], uint64(i))
		pub := ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)
		pubs, want = append(pubs, pub), append(want, mustDecode(t, pub))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				k := (g*7 + i) % len(pubs)
				p, err := c.point(pubs[k])
				if err != nil || p.Point().Equal(want[k]) != 1 {
					t.Errorf("goroutine %d, key %d: wrong point (%v)", g, k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(c.m) > c.size {
		t.Fatalf("the cache holds %d keys, more than %d", len(c.m), c.size)
	}
}

func mustDecode(t *testing.T, pub []byte) *curve.EdwardsPoint {
	t.Helper()
	p, ok := decode(pub)
	if !ok {
		t.Fatalf("%x is not a point", pub)
	}
	return p
}
