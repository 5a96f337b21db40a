// Package directory holds the pure rules of the account-to-peer directory:
// a signed registration says "this account is reached at this peer", and
// the newest valid registration of an account wins on every node. Package
// chatnet stores registrations and spreads them over the network.
package directory

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/signature"
)

// tag opens every registration preimage (see chat's for why).
const tag = "LATTICE-DIRECTORY-V1"

// MaxPeerBytes bounds node_peer: a libp2p peer ID in its base58 text form
// is 46 to 53 characters; the bound leaves room for longer key types.
const MaxPeerBytes = 128

// base58 is the alphabet of peer IDs' text form.
const base58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// ErrInvalid is wrapped by every error that says a registration is
// malformed or badly signed.
var ErrInvalid = errors.New("invalid directory registration")

// Registration says that Account, as of Timestamp (Unix ms), is reached at
// the node whose peer ID is NodePeer. Account signs it.
type Registration struct {
	Account   ledger.Address   `json:"account"`
	NodePeer  string           `json:"node_peer"`
	Timestamp int64            `json:"timestamp"`
	Signature ledger.Signature `json:"signature"`
}

// AppendPreimage appends the bytes the digest is the SHA-256 of: the tag
// "LATTICE-DIRECTORY-V1", the account (32 bytes), the timestamp (8 bytes,
// big-endian), node_peer's length (1 byte) and node_peer.
func (r *Registration) AppendPreimage(dst []byte) []byte {
	dst = append(dst, tag...)
	dst = append(dst, r.Account[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.Timestamp))
	dst = append(dst, byte(len(r.NodePeer)))
	return append(dst, r.NodePeer...)
}

// Hash returns the registration's digest, which Account signs.
func (r *Registration) Hash() ledger.Hash {
	return sha256.Sum256(r.AppendPreimage(make([]byte, 0, len(tag)+41+len(r.NodePeer))))
}

// Sign sets r.Account to priv's public key and r.Signature to priv's
// signature of the digest. Set NodePeer and Timestamp first.
func (r *Registration) Sign(priv ed25519.PrivateKey) {
	copy(r.Account[:], priv.Public().(ed25519.PublicKey))
	h := r.Hash()
	copy(r.Signature[:], ed25519.Sign(priv, h[:]))
}

// Check reports whether r is well formed and signed by its account; the
// error wraps ErrInvalid. node_peer is checked for its alphabet and length
// here; the node also decodes it as a peer ID.
func (r *Registration) Check() error {
	switch {
	case r.Account.IsZero():
		return fmt.Errorf("%w: account is required", ErrInvalid)
	case r.NodePeer == "":
		return fmt.Errorf("%w: node_peer is required", ErrInvalid)
	case len(r.NodePeer) > MaxPeerBytes:
		return fmt.Errorf("%w: node_peer is %d bytes, more than %d", ErrInvalid, len(r.NodePeer), MaxPeerBytes)
	case strings.Trim(r.NodePeer, base58) != "":
		return fmt.Errorf("%w: node_peer %q is not a peer ID (base58)", ErrInvalid, r.NodePeer)
	case r.Timestamp <= 0:
		return fmt.Errorf("%w: timestamp %d is not a positive Unix time in milliseconds", ErrInvalid, r.Timestamp)
	case r.Signature.IsZero():
		return fmt.Errorf("%w: signature is required", ErrInvalid)
	}
	h := r.Hash()
	if !signature.Verify(r.Account.PublicKey(), h[:], r.Signature[:]) {
		return fmt.Errorf("%w: the signature is not the account's over this registration", ErrInvalid)
	}
	return nil
}

// Newer reports whether r replaces old, a registration of the same
// account: the later timestamp wins, and of two with the same timestamp the
// one with the greater digest, so every node picks the same one.
func Newer(r, old *Registration) bool {
	if r.Timestamp != old.Timestamp {
		return r.Timestamp > old.Timestamp
	}
	a, b := r.Hash(), old.Hash()
	return bytes.Compare(a[:], b[:]) > 0
}

// MarshalBinary returns the wire and storage form: account, timestamp,
// node_peer's length (1 byte), node_peer, signature.
func (r *Registration) MarshalBinary() ([]byte, error) {
	if len(r.NodePeer) > MaxPeerBytes {
		return nil, fmt.Errorf("%w: node_peer is %d bytes, more than %d", ErrInvalid, len(r.NodePeer), MaxPeerBytes)
	}
	b := append(make([]byte, 0, 32+8+1+len(r.NodePeer)+64), r.Account[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(r.Timestamp))
	b = append(b, byte(len(r.NodePeer)))
	b = append(b, r.NodePeer...)
	return append(b, r.Signature[:]...), nil
}

// UnmarshalBinary decodes the MarshalBinary form, checking its shape only.
func (r *Registration) UnmarshalBinary(b []byte) error {
	const fixed = 32 + 8 + 1 + 64
	if len(b) < fixed {
		return fmt.Errorf("%w: %d bytes, fewer than %d", ErrInvalid, len(b), fixed)
	}
	n := int(b[40])
	if n > MaxPeerBytes || len(b) != fixed+n {
		return fmt.Errorf("%w: %d bytes for a node_peer of %d", ErrInvalid, len(b), n)
	}
	copy(r.Account[:], b[:32])
	r.Timestamp = int64(binary.BigEndian.Uint64(b[32:40]))
	r.NodePeer = string(b[41 : 41+n])
	copy(r.Signature[:], b[41+n:])
	return nil
}
