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
// block as every other node does. A batch of 64 signatures costs about half
// as much per signature as verifying them one by one.
package signature

import (
	"crypto/ed25519"

	"github.com/hdevalence/ed25519consensus"
)

// Verify reports whether sig is a valid signature of msg by pub under the
// rule of the package doc.
func Verify(pub ed25519.PublicKey, msg, sig []byte) bool {
	return ed25519consensus.Verify(pub, msg, sig)
}
