package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
)

// MaxKeys bounds the keys of a keyset and the signatures of a block.
const MaxKeys = 16

// Keyset is the set of keys that controls a multisig account, and how many of
// them must sign. Keys are kept in strictly ascending byte order, which makes
// the keyset, and so the multisig address, canonical.
type Keyset struct {
	Keys      []Address `json:"keys"`
	Threshold int       `json:"threshold"`
}

// NewKeyset returns a keyset of keys, sorted and de-duplicated.
func NewKeyset(threshold int, keys ...Address) Keyset {
	k := slices.Clone(keys)
	slices.SortFunc(k, func(a, b Address) int { return bytes.Compare(a[:], b[:]) })
	return Keyset{Keys: slices.Compact(k), Threshold: threshold}
}

// Clone returns a deep copy of k.
func (k Keyset) Clone() Keyset {
	return Keyset{Keys: slices.Clone(k.Keys), Threshold: k.Threshold}
}

// Validate checks the keyset's shape: 1 to MaxKeys keys in strictly ascending
// order, none zero, and 1 <= threshold <= len(keys).
func (k Keyset) Validate() error {
	if len(k.Keys) == 0 || len(k.Keys) > MaxKeys {
		return fmt.Errorf("keyset must have 1 to %d keys, has %d", MaxKeys, len(k.Keys))
	}
	if k.Threshold < 1 || k.Threshold > len(k.Keys) {
		return fmt.Errorf("keyset threshold must be between 1 and the number of keys (%d), is %d", len(k.Keys), k.Threshold)
	}
	for i, key := range k.Keys {
		if key.IsZero() {
			return fmt.Errorf("keyset key %d is zero", i)
		}
		if i > 0 && bytes.Compare(k.Keys[i-1][:], key[:]) >= 0 {
			return fmt.Errorf("keyset keys must be unique and in ascending order (key %d)", i)
		}
	}
	return nil
}

// Contains reports whether key is a member of k.
func (k Keyset) Contains(key Address) bool {
	_, found := slices.BinarySearchFunc(k.Keys, key, func(a, b Address) int { return bytes.Compare(a[:], b[:]) })
	return found
}

// Equal reports whether k and o hold the same keys and threshold.
func (k Keyset) Equal(o Keyset) bool {
	return k.Threshold == o.Threshold && slices.Equal(k.Keys, o.Keys)
}

// multisigTag separates multisig address preimages from every other hash.
const multisigTag = "LATTICE-MULTISIG"

// MultisigAddress derives the address of the multisig account opened with k:
// SHA-256("LATTICE-MULTISIG" || u16 threshold || u16 count || keys).
func MultisigAddress(k Keyset) Address {
	h := sha256.New()
	h.Write([]byte(multisigTag))
	var n [4]byte
	binary.BigEndian.PutUint16(n[0:], uint16(k.Threshold))
	binary.BigEndian.PutUint16(n[2:], uint16(len(k.Keys)))
	h.Write(n[:])
	for _, key := range k.Keys {
		h.Write(key[:])
	}
	var a Address
	h.Sum(a[:0])
	return a
}
