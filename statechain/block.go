// Package statechain holds the pure rules of the governance state chain:
// one chain of blocks for the whole network, each setting or deleting a
// key or replacing the keyset that governs the chain, valid when it
// follows the tip and a threshold of that keyset signed it. The network's
// parameters (timekeepers, lease prices, the provider stake ratio, the
// lease acceptance timeout) are documented keys whose values are checked
// when a change is made (params.go).
//
// The package does no I/O and never reads the clock: package govnet keeps
// the chain on disk and spreads it over the network.
package statechain

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/signature"
)

// tag opens every block's preimage, so that no other signed record of the
// protocol can be mistaken for a state-chain block.
const tag = "LATTICE-STATECHAIN-V1"

// Limits on a block's fields.
const (
	// MaxKeyBytes bounds a key.
	MaxKeyBytes = 64
	// MaxValueBytes bounds a value (a keyset of 16 keys is about 1.2 KiB).
	MaxValueBytes = 8192
	// MaxSignatures bounds a block's signatures (a keyset's keys).
	MaxSignatures = ledger.MaxKeys
)

// Operation is what a block does to the state.
type Operation string

const (
	OpSet          Operation = "set"           // sets key to value (JSON text)
	OpDelete       Operation = "delete"        // removes key
	OpUpdateKeyset Operation = "update_keyset" // replaces the keyset with value (a Keyset as JSON)
)

// code is the operation's byte in the preimage and the binary form.
func (o Operation) code() byte {
	switch o {
	case OpSet:
		return 1
	case OpDelete:
		return 2
	case OpUpdateKeyset:
		return 3
	}
	return 0
}

func opOf(c byte) Operation {
	switch c {
	case 1:
		return OpSet
	case 2:
		return OpDelete
	case 3:
		return OpUpdateKeyset
	}
	return ""
}

// Block is one entry of the state chain. Index 0 is the chain's genesis,
// made from the network's genesis file (Genesis); every later block
// follows the one before it and is signed by a threshold of the keyset in
// force before it.
type Block struct {
	Index      uint64                     `json:"index"`
	Previous   ledger.Hash                `json:"previous"`
	Operation  Operation                  `json:"operation"`
	Key        string                     `json:"key"`
	Value      string                     `json:"value"`
	Timestamp  int64                      `json:"timestamp"`
	Signatures []ledger.MultisigSignature `json:"signatures"`
	Hash       ledger.Hash                `json:"hash"`
}

// AppendPreimage appends the bytes whose SHA-256 is the block's hash: the
// tag "LATTICE-STATECHAIN-V1", the network (the ledger's genesis hash, 32
// bytes), the index (u64), previous (32), the operation (1 byte: set 1,
// delete 2, update_keyset 3), the key's length (u16) and the key, the
// value's length (u32) and the value, and the timestamp (i64). Integers are
// big-endian. The signatures and the hash are not part of it.
func (b *Block) AppendPreimage(dst []byte, network ledger.Hash) []byte {
	dst = append(dst, tag...)
	dst = append(dst, network[:]...)
	dst = binary.BigEndian.AppendUint64(dst, b.Index)
	dst = append(dst, b.Previous[:]...)
	dst = append(dst, b.Operation.code())
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(b.Key)))
	dst = append(dst, b.Key...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b.Value)))
	dst = append(dst, b.Value...)
	return binary.BigEndian.AppendUint64(dst, uint64(b.Timestamp))
}

// ComputeHash returns the hash of b's contents on network.
func (b *Block) ComputeHash(network ledger.Hash) ledger.Hash {
	return sha256.Sum256(b.AppendPreimage(make([]byte, 0, len(tag)+32+8+32+1+2+len(b.Key)+4+len(b.Value)+8), network))
}

// Seal sets b.Hash from b's contents on network. Set every other field
// but the signatures first.
func (b *Block) Seal(network ledger.Hash) { b.Hash = b.ComputeHash(network) }

// Sign adds priv's signature of b.Hash to b.Signatures, replacing an
// earlier one by the same key, and keeps them in ascending key order.
func (b *Block) Sign(priv ed25519.PrivateKey) {
	var s ledger.MultisigSignature
	copy(s.PublicKey[:], priv.Public().(ed25519.PublicKey))
	copy(s.Signature[:], ed25519.Sign(priv, b.Hash[:]))
	b.AddSignature(s)
}

// AddSignature adds s to b.Signatures, replacing one by the same key, in
// ascending key order. It does not check s.
func (b *Block) AddSignature(s ledger.MultisigSignature) {
	b.Signatures = slices.DeleteFunc(b.Signatures, func(o ledger.MultisigSignature) bool { return o.PublicKey == s.PublicKey })
	i, _ := slices.BinarySearchFunc(b.Signatures, s.PublicKey, func(o ledger.MultisigSignature, k ledger.Address) int {
		return bytes.Compare(o.PublicKey[:], k[:])
	})
	b.Signatures = slices.Insert(b.Signatures, i, s)
}

// Clone returns a deep copy of b.
func (b *Block) Clone() *Block {
	c := *b
	c.Signatures = slices.Clone(b.Signatures)
	return &c
}

// Genesis returns block 0 of network's state chain: the keyset named in
// the genesis file, as an update_keyset block with no signatures, stamped
// with the ledger genesis block's timestamp.
func Genesis(network ledger.Hash, keyset ledger.Keyset, timestamp int64) *Block {
	b := &Block{Operation: OpUpdateKeyset, Value: KeysetValue(keyset), Timestamp: timestamp}
	b.Seal(network)
	return b
}

// KeysetValue is the value of an update_keyset block replacing the keyset
// with k: {"keys":[...],"threshold":n}, keys in ascending order.
func KeysetValue(k ledger.Keyset) string {
	k = ledger.NewKeyset(k.Threshold, k.Keys...)
	out, _ := json.Marshal(k)
	return string(out)
}

// MarshalBinary returns the storage and wire form: the preimage's fields
// from the index on (index, previous, operation, key, value, timestamp, as
// in AppendPreimage), then the count of signatures (1 byte) and each
// signature's public key (32) and signature (64). The hash is computed,
// not carried.
func (b *Block) MarshalBinary() ([]byte, error) {
	if err := b.checkShape(); err != nil {
		return nil, err
	}
	out := make([]byte, 0, 8+32+1+2+len(b.Key)+4+len(b.Value)+8+1+96*len(b.Signatures))
	out = binary.BigEndian.AppendUint64(out, b.Index)
	out = append(out, b.Previous[:]...)
	out = append(out, b.Operation.code())
	out = binary.BigEndian.AppendUint16(out, uint16(len(b.Key)))
	out = append(out, b.Key...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(b.Value)))
	out = append(out, b.Value...)
	out = binary.BigEndian.AppendUint64(out, uint64(b.Timestamp))
	out = append(out, byte(len(b.Signatures)))
	for _, s := range b.Signatures {
		out = append(out, s.PublicKey[:]...)
		out = append(out, s.Signature[:]...)
	}
	return out, nil
}

// UnmarshalBinary decodes the MarshalBinary form of a block of network,
// checking its shape and computing its hash; signatures and the rules are
// checked by State.Check.
func (b *Block) UnmarshalBinary(data []byte, network ledger.Hash) error {
	r := reader{b: data}
	var nb Block
	nb.Index = r.u64()
	copy(nb.Previous[:], r.take(32))
	code := r.byte1()
	nb.Operation = opOf(code)
	nb.Key = string(r.take(int(r.u16())))
	nb.Value = string(r.take(int(r.u32())))
	nb.Timestamp = int64(r.u64())
	n := int(r.byte1())
	if r.err == nil && n > MaxSignatures {
		return fmt.Errorf("%w: %d signatures, more than %d", ErrMalformed, n, MaxSignatures)
	}
	for range n {
		var s ledger.MultisigSignature
		copy(s.PublicKey[:], r.take(32))
		copy(s.Signature[:], r.take(64))
		nb.Signatures = append(nb.Signatures, s)
	}
	if r.err != nil {
		return fmt.Errorf("%w: truncated", ErrMalformed)
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d bytes after the block", ErrMalformed, len(r.b))
	}
	if nb.Operation == "" {
		return fmt.Errorf("%w: unknown operation %d", ErrMalformed, code)
	}
	if err := nb.checkShape(); err != nil {
		return err
	}
	nb.Seal(network)
	*b = nb
	return nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || n > len(r.b) {
		r.err = errors.New("short")
		return make([]byte, min(n, 64)) // enough for any fixed field, never a claimed length
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u64() uint64 { return binary.BigEndian.Uint64(r.take(8)) }
func (r *reader) u32() uint32 { return binary.BigEndian.Uint32(r.take(4)) }
func (r *reader) u16() uint16 { return binary.BigEndian.Uint16(r.take(2)) }
func (r *reader) byte1() byte { return r.take(1)[0] }

// verify reports whether s is a valid signature of hash by its key.
func verify(s ledger.MultisigSignature, hash ledger.Hash) bool {
	return signature.Verify(s.PublicKey.PublicKey(), hash[:], s.Signature[:])
}

// MarshalJSON writes the block's JSON form, with signatures as an array
// (empty for block 0), never null.
func (b Block) MarshalJSON() ([]byte, error) {
	type plain Block
	if b.Signatures == nil {
		b.Signatures = []ledger.MultisigSignature{}
	}
	return json.Marshal(plain(b))
}
