// Package ledger is the pure core of the block-lattice: block encoding,
// hashing, signatures, proof of work, validation and state transition.
//
// The package does no I/O, starts no goroutines and never reads the wall
// clock. Callers hand it blocks and a read-only View of the ledger; it answers
// with a Delta describing exactly what to persist, or an error saying why the
// block is refused. Persisting, ordering and gossiping are the caller's job.
package ledger

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
)

// Address names an account: the hex of an ed25519 public key for ordinary
// accounts, or a keyset digest for multisig accounts (see MultisigAddress).
type Address [32]byte

// Hash is a SHA-256 digest, used for block hashes.
type Hash [32]byte

// ZeroHash is the previous hash of an account's first block.
var ZeroHash Hash

// ZeroAddress is the all-zero address; it never names a real account.
var ZeroAddress Address

// ParseAddress decodes a 64-character hex address.
func ParseAddress(s string) (Address, error) {
	var a Address
	if err := decodeHex32(s, a[:]); err != nil {
		return a, fmt.Errorf("address: %w", err)
	}
	return a, nil
}

// ParseHash decodes a 64-character hex hash.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if err := decodeHex32(s, h[:]); err != nil {
		return h, fmt.Errorf("hash: %w", err)
	}
	return h, nil
}

func decodeHex32(s string, dst []byte) error {
	if len(s) != 64 {
		return fmt.Errorf("want 64 hex characters, got %d", len(s))
	}
	if _, err := hex.Decode(dst, []byte(s)); err != nil {
		return errors.New("not hexadecimal")
	}
	return nil
}

// String returns the lowercase hex form of the address.
func (a Address) String() string { return hex.EncodeToString(a[:]) }

// IsZero reports whether a is the all-zero address.
func (a Address) IsZero() bool { return a == ZeroAddress }

// PublicKey returns the address as an ed25519 public key.
func (a Address) PublicKey() ed25519.PublicKey { return ed25519.PublicKey(a[:]) }

// MarshalText implements encoding.TextMarshaler.
func (a Address) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *Address) UnmarshalText(b []byte) error {
	v, err := ParseAddress(string(b))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// String returns the lowercase hex form of the hash.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the all-zero hash.
func (h Hash) IsZero() bool { return h == ZeroHash }

// MarshalText implements encoding.TextMarshaler.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// Asset is one of the two assets of the ledger.
type Asset uint8

// The two assets. The zero Asset is invalid, so a missing asset is caught.
const (
	Native Asset = 1
	Stable Asset = 2
)

// Assets lists every asset in canonical order.
var Assets = [...]Asset{Native, Stable}

// ParseAsset maps "native" and "stable" to their Asset.
func ParseAsset(s string) (Asset, error) {
	switch s {
	case "native":
		return Native, nil
	case "stable":
		return Stable, nil
	}
	return 0, fmt.Errorf("asset %q: want \"native\" or \"stable\"", s)
}

// Valid reports whether a is one of the two assets.
func (a Asset) Valid() bool { return a == Native || a == Stable }

// String returns the asset's literal, "native" or "stable".
func (a Asset) String() string {
	switch a {
	case Native:
		return "native"
	case Stable:
		return "stable"
	}
	return fmt.Sprintf("asset(%d)", uint8(a))
}

// MarshalText implements encoding.TextMarshaler.
func (a Asset) MarshalText() ([]byte, error) {
	if !a.Valid() {
		return nil, fmt.Errorf("ledger: invalid asset %d", a)
	}
	return []byte(a.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *Asset) UnmarshalText(b []byte) error {
	v, err := ParseAsset(string(b))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// BlockType is the kind of a block.
type BlockType uint8

// The eight block types, with their wire codes (see docs/protocol.md).
const (
	TypeSend           BlockType = 1
	TypeReceive        BlockType = 2
	TypeClaim          BlockType = 3
	TypeLease          BlockType = 4
	TypeLeaseAccept    BlockType = 5
	TypeLeaseSettle    BlockType = 6
	TypeMultisigOpen   BlockType = 7
	TypeMultisigUpdate BlockType = 8
)

var typeNames = map[BlockType]string{
	TypeSend:           "send",
	TypeReceive:        "receive",
	TypeClaim:          "claim",
	TypeLease:          "lease",
	TypeLeaseAccept:    "lease_accept",
	TypeLeaseSettle:    "lease_settle",
	TypeMultisigOpen:   "multisig_open",
	TypeMultisigUpdate: "multisig_update",
}

// ParseBlockType maps a block type name such as "send" to its BlockType.
func ParseBlockType(s string) (BlockType, error) {
	for t, name := range typeNames {
		if name == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown block type %q", s)
}

// Valid reports whether t is one of the eight block types.
func (t BlockType) Valid() bool { _, ok := typeNames[t]; return ok }

// String returns the type's name as used in JSON and URLs.
func (t BlockType) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// MarshalText implements encoding.TextMarshaler.
func (t BlockType) MarshalText() ([]byte, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("ledger: invalid block type %d", t)
	}
	return []byte(t.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *BlockType) UnmarshalText(b []byte) error {
	v, err := ParseBlockType(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// SendLike reports whether blocks of type t pay the higher proof-of-work
// threshold. Blocks that create value or claims on others' attention are
// send-like; blocks that answer something already in the ledger are not.
func (t BlockType) SendLike() bool {
	switch t {
	case TypeReceive, TypeLeaseAccept, TypeLeaseSettle:
		return false
	}
	return true
}
