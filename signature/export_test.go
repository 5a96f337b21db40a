package signature

import (
	"fmt"
)

// BatchPasses reports whether b passes as a whole, without the one-by-one
// fallback of Batch.Verify, which would hide a batch equation that refuses
// good signatures.
func BatchPasses(b *Batch) bool { return verifyAll(b.items) }

// CheckCachedKeys returns an error if a cached point is not what its key
// decodes to afresh: a batch must never change a shared point.
func CheckCachedKeys() error {
	keys.mu.Lock()
	defer keys.mu.Unlock()
	for k, p := range keys.m {
		q, ok := decode(k[:])
		if !ok || p.Point().Equal(q) != 1 {
			return fmt.Errorf("cached key %x: the point changed", k)
		}
	}
	return nil
}
