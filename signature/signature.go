// Package signature verifies ed25519 signatures by the one rule every
// Lattice node applies, one at a time or many at once.
//
// The rule is ZIP 215 (the rule Zcash, Tailscale's tailnet lock and other
// consensus systems adopted): S must be below the group order, the encodings
// of A and R may be non-canonical, and the check is the cofactored equation
// [8][S]B = [8]R + [8][k]A. Every signature RFC 8032's cofactorless check
// accepts (the check of Go's crypto/ed25519) is accepted too, so the rule
// only widens what was valid; it never refuses a block an earlier node took.
//
// The reason for the rule is batch verification. Under the cofactorless
// check a signature with a small-order component can pass alone and fail in
// a batch (or the reverse, depending on the batch's random coefficients),
// so two nodes that batch differently could judge one block differently.
// Under ZIP 215, a batch passes exactly when every one of its signatures
// would pass alone (up to a 2^-128 chance that a batch with a bad signature
// passes), so a node may verify in batches of any size and still judge every
// block as every other node does. A batch of 64 signatures by 64 keys costs
// less than half as much per signature as verifying them one by one.
//
// The arithmetic is curve25519-voi's (Oasis Protocol), whose vectorised
// (AVX2) multiscalar multiplication and precomputed tables for known keys
// make a single check about 40% cheaper than with filippo.io/edwards25519,
// and a batch 25% (8 keys) to 60% (256 keys) cheaper. The package's tests
// hold it to the answers of github.com/hdevalence/ed25519consensus, the
// reference ZIP 215 implementation this package used before, on every
// encoding of a small-order point and the field's non-canonical corner,
// alone and in batches, and under fuzzing; CI runs them on voi's portable
// code too (build tags purego and force32bit), which other CPUs run.
package signature

import (
	"crypto/ed25519"
	"crypto/sha512"
	"errors"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
)

// Verify reports whether sig is a valid signature of msg by pub under the
// rule of the package doc. It keeps pub's decoded point in the key cache
// that batches use (keyCache), as a batch would.
func Verify(pub ed25519.PublicKey, msg, sig []byte) bool {
	if len(pub) != ed25519.PublicKeySize || len(sig) != ed25519.SignatureSize {
		return false
	}
	var s, k scalar.Scalar
	if _, err := s.SetCanonicalBytes(sig[32:]); err != nil {
		return false
	}
	R, ok := decode(sig[:32])
	if !ok {
		return false
	}
	A, err := keys.point(pub)
	if err != nil {
		return false
	}
	challenge(&k, sig[:32], pub, msg)
	// [8]([S]B − [k]A − R) is the identity.
	var check curve.EdwardsPoint
	check.ExpandedDoubleScalarMulBasepointVartime(k.Neg(&k), A, &s)
	check.Sub(&check, R)
	return check.IsSmallOrder()
}

// decode returns the point a 32-byte encoding names, accepting
// non-canonical encodings (y at or above the field's prime, the sign bit
// set on x = 0) as ZIP 215 does.
func decode(enc []byte) (*curve.EdwardsPoint, bool) {
	var c curve.CompressedEdwardsY
	if _, err := c.SetBytes(enc); err != nil {
		return nil, false
	}
	p, err := new(curve.EdwardsPoint).SetCompressedY(&c)
	return p, err == nil
}

// challenge sets k to SHA-512(R ‖ A ‖ M) reduced modulo the group order.
func challenge(k *scalar.Scalar, R, A, M []byte) {
	h := sha512.New()
	h.Write(R)
	h.Write(A)
	h.Write(M)
	var digest [sha512.Size]byte
	if _, err := k.SetBytesModOrderWide(h.Sum(digest[:0])); err != nil {
		panic("signature: a SHA-512 digest is not 64 bytes") // cannot happen
	}
}

// errNotAPoint is a public key whose 32 bytes encode no curve point.
var errNotAPoint = errors.New("signature: the key is not a curve point")
