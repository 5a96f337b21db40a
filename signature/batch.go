package signature

import (
	"crypto/ed25519"
	"crypto/rand"
	"sync"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
)

// minBatch is the smallest batch Batch.Verify verifies at once: below it,
// one by one is as fast (a batch of 4 costs about two thirds of four single
// checks, of 2 about the same as two).
const minBatch = 3

// Batch collects signatures to verify together. The zero value is an empty
// batch. A Batch is not safe for concurrent use.
type Batch struct {
	items []item
}

type item struct {
	pub      ed25519.PublicKey
	msg, sig []byte
}

// Add adds a signature to the batch. The batch keeps the slices until Reset:
// the caller must not change them before Verify.
func (b *Batch) Add(pub ed25519.PublicKey, msg, sig []byte) {
	b.items = append(b.items, item{pub, msg, sig})
}

// Len returns the number of signatures added since the last Reset.
func (b *Batch) Len() int { return len(b.items) }

// Reset empties the batch, keeping its storage.
func (b *Batch) Reset() {
	clear(b.items)
	b.items = b.items[:0]
}

// Verify checks every signature in the batch and returns, for each in the
// order added, whether it is valid: the same answers Verify would give one
// by one. When the batch as a whole fails, it tells which signatures are bad
// by verifying each alone, so a bad signature costs its batch about one and a
// half times what single checks would have.
func (b *Batch) Verify() []bool {
	ok := make([]bool, len(b.items))
	if len(b.items) >= minBatch && verifyAll(b.items) {
		for i := range ok {
			ok[i] = true
		}
		return ok
	}
	for i, it := range b.items {
		ok[i] = Verify(it.pub, it.msg, it.sig)
	}
	return ok
}

// basepoint is B with its precomputed table, a static point of every batch.
var basepoint = curve.NewExpandedEdwardsPoint(curve.ED25519_BASEPOINT_POINT)

// verifyAll reports whether every signature of items is valid, by the
// cofactored batch equation of ZIP 215:
//
//	[8]( [-Σ zᵢsᵢ]B + Σ [zᵢ]Rᵢ + Σ [zᵢkᵢ]Aᵢ ) = 0
//
// where (Rᵢ, sᵢ) is signature i, Aᵢ its public key, kᵢ = SHA-512(Rᵢ ‖ Aᵢ ‖
// Mᵢ) reduced mod ℓ, and zᵢ a secret random 128-bit coefficient, so that
// invalid signatures cannot cancel each other out (a batch holding one passes
// with probability at most 2⁻¹²⁸).
//
// Two things make it cheaper than a general batch verifier. Public keys come
// from keyCache, decoded and with their multiplication tables built, since
// the same accounts and representatives sign again and again: a cached key
// is a static point of the multiscalar multiplication, whose table is not
// built again. And signatures by one key share its term: Σ [zᵢkᵢ]A over a
// key's signatures is [Σ zᵢkᵢ]A, one point in the multiplication instead of
// one per signature (a chain's blocks arriving together, as in sync, are all
// signed by one key).
func verifyAll(items []item) bool {
	n := len(items)
	// One read of the random coefficients for the whole batch.
	random := make([]byte, 16*n)
	if _, err := rand.Read(random); err != nil {
		return false
	}
	// The static points are B and each distinct key in the order met, with
	// their coefficients; the dynamic ones each signature's R and its zᵢ.
	svals := make([]scalar.Scalar, 1+2*n)
	static := make([]*scalar.Scalar, 1, 1+n)
	staticPoints := make([]*curve.ExpandedEdwardsPoint, 1, 1+n)
	dynamic := make([]*scalar.Scalar, n)
	rs := make([]*curve.EdwardsPoint, n)
	static[0], staticPoints[0] = &svals[0], basepoint
	// A key's index in static; the keys' coefficients follow the
	// signatures' in svals, in the order the keys are met.
	keyAt := make(map[*curve.ExpandedEdwardsPoint]int, n)

	var zbytes [32]byte
	var s, k, zs scalar.Scalar
	for i, it := range items {
		if len(it.pub) != ed25519.PublicKeySize || len(it.sig) != ed25519.SignatureSize {
			return false
		}
		if _, err := s.SetCanonicalBytes(it.sig[32:]); err != nil {
			return false
		}
		R, ok := decode(it.sig[:32])
		if !ok {
			return false
		}
		A, err := keys.point(it.pub)
		if err != nil {
			return false
		}
		challenge(&k, it.sig[:32], it.pub, it.msg)
		z := &svals[1+i]
		copy(zbytes[:16], random[16*i:]) // below 2¹²⁸, so canonical
		if _, err := z.SetCanonicalBytes(zbytes[:]); err != nil {
			return false
		}
		svals[0].Add(&svals[0], zs.Mul(z, &s))
		dynamic[i], rs[i] = z, R
		if j, seen := keyAt[A]; seen {
			static[j].Add(static[j], k.Mul(z, &k))
		} else {
			c := &svals[1+n+len(keyAt)]
			c.Mul(z, &k)
			keyAt[A] = len(static)
			static, staticPoints = append(static, c), append(staticPoints, A)
		}
	}
	svals[0].Neg(&svals[0])
	var check curve.EdwardsPoint
	check.ExpandedMultiscalarMulVartime(static, staticPoints, dynamic, rs)
	return check.IsSmallOrder()
}

// keyCacheSize bounds the decoded public keys kept: 8192 keys with their
// tables, about 13 MB with the map.
const keyCacheSize = 8192

// keys is the process's cache of decoded public keys. Decoding is a pure
// function of the 32 bytes, so a cached point is the same whoever decoded
// it; keys that do not decode are not kept.
var keys = keyCache{size: keyCacheSize}

type keyCache struct {
	size int // most keys kept
	mu   sync.Mutex
	m    map[[32]byte]*curve.ExpandedEdwardsPoint // made on first use
}

// point returns the point pub (32 bytes) encodes, accepting non-canonical
// encodings as ZIP 215 does, with its multiplication table. The point is
// shared: callers must not change it. Once the cache is full, each new key
// replaces an arbitrary one.
func (c *keyCache) point(pub []byte) (*curve.ExpandedEdwardsPoint, error) {
	key := [32]byte(pub)
	c.mu.Lock()
	p, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	A, ok := decode(pub)
	if !ok {
		return nil, errNotAPoint
	}
	p = curve.NewExpandedEdwardsPoint(A)
	c.mu.Lock()
	defer c.mu.Unlock()
	if q, ok := c.m[key]; ok {
		return q, nil // decoded meanwhile by another batch
	}
	if c.m == nil {
		c.m = make(map[[32]byte]*curve.ExpandedEdwardsPoint)
	}
	if len(c.m) >= c.size {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[key] = p
	return p, nil
}
