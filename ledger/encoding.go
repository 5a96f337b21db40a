package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// blockTag opens every block preimage, so that no other signed message of
// the protocol can be mistaken for a block.
const blockTag = "LATTICE-BLOCK-V1"

// MaxAttestations bounds the attestations a block may carry.
const MaxAttestations = 16

// fixedSize is the size of the fixed part of the preimage: the tag and every
// scalar field (see docs/protocol.md for the table).
const fixedSize = len(blockTag) + 1 + 32 + 32 + 16 + 1 + 8 + 32 + 32 + 16 + 32 + 4*4 + 32 + 32

const attestationSize = 32 + 8 + 64

// AppendPreimage appends the canonical encoding of every field of b except
// hash, signature, signatures and pow_nonce. The block hash is its SHA-256.
// All integers are big-endian; absent fields are encoded as zeros.
func (b *Block) AppendPreimage(dst []byte) []byte {
	dst = append(dst, blockTag...)
	dst = append(dst, byte(b.Type))
	dst = append(dst, b.Account[:]...)
	dst = append(dst, b.Previous[:]...)
	dst = appendAmount(dst, b.Balance)
	dst = append(dst, byte(b.Asset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.Timestamp))
	dst = append(dst, b.Representative[:]...)
	dst = append(dst, b.Destination[:]...)
	dst = appendAmount(dst, b.Amount)
	dst = append(dst, b.Source[:]...)
	dst = binary.BigEndian.AppendUint32(dst, b.VCPUs)
	dst = binary.BigEndian.AppendUint32(dst, b.MemoryMB)
	dst = binary.BigEndian.AppendUint32(dst, b.DiskGB)
	dst = binary.BigEndian.AppendUint32(dst, b.Duration)
	dst = append(dst, b.AccessPubKey[:]...)
	dst = append(dst, b.CertificateHash[:]...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(b.Attestations)))
	for _, a := range b.Attestations {
		dst = append(dst, a.PublicKey[:]...)
		dst = binary.BigEndian.AppendUint64(dst, uint64(a.Timestamp))
		dst = append(dst, a.Signature[:]...)
	}
	dst = AppendKeyset(dst, b.Keyset)
	if b.Type == TypeLease {
		dst = binary.BigEndian.AppendUint64(dst, b.StateChainIndex)
	}
	return dst
}

// AppendKeyset appends a keyset's encoding: u16 threshold, u16 key count,
// then the keys. A nil keyset encodes as two zero counts.
func AppendKeyset(dst []byte, k *Keyset) []byte {
	var ks Keyset
	if k != nil {
		ks = *k
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(ks.Threshold))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(ks.Keys)))
	for _, key := range ks.Keys {
		dst = append(dst, key[:]...)
	}
	return dst
}

func appendAmount(dst []byte, a Amount) []byte {
	dst = binary.BigEndian.AppendUint64(dst, a.hi)
	return binary.BigEndian.AppendUint64(dst, a.lo)
}

// ComputeHash returns the SHA-256 of the block's preimage.
func (b *Block) ComputeHash() Hash {
	var buf [fixedSize + 8 + 4*attestationSize]byte
	return sha256.Sum256(b.AppendPreimage(buf[:0]))
}

// MarshalBinary returns the block's storage and wire form: the preimage,
// then the signature (64 bytes), the multisig signatures (u16 count, then
// 32-byte key and 64-byte signature each) and the 8-byte pow_nonce. The hash
// is not stored; UnmarshalBinary recomputes it.
func (b *Block) MarshalBinary() ([]byte, error) {
	return b.AppendBinary(make([]byte, 0, fixedSize+80+len(b.Signatures)*96)), nil
}

// AppendBinary appends the form MarshalBinary returns to dst.
func (b *Block) AppendBinary(dst []byte) []byte {
	dst = b.AppendPreimage(dst)
	dst = append(dst, b.Signature[:]...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(b.Signatures)))
	for _, s := range b.Signatures {
		dst = append(dst, s.PublicKey[:]...)
		dst = append(dst, s.Signature[:]...)
	}
	return binary.BigEndian.AppendUint64(dst, uint64(b.PowNonce))
}

// ErrEncoding reports bytes that are not a block's binary form.
var ErrEncoding = errors.New("ledger: malformed block encoding")

// UnmarshalBinary parses the form MarshalBinary produces and sets b.Hash.
// It checks the shape only (lengths, tag, counts); rules are Check's job.
func (b *Block) UnmarshalBinary(data []byte) error {
	r := reader{buf: data}
	if string(r.next(len(blockTag))) != blockTag {
		return fmt.Errorf("%w: bad tag", ErrEncoding)
	}
	var nb Block
	nb.Type = BlockType(r.byte1())
	r.copy(nb.Account[:])
	r.copy(nb.Previous[:])
	nb.Balance = r.amount()
	nb.Asset = Asset(r.byte1())
	nb.Timestamp = int64(r.u64())
	r.copy(nb.Representative[:])
	r.copy(nb.Destination[:])
	nb.Amount = r.amount()
	r.copy(nb.Source[:])
	nb.VCPUs, nb.MemoryMB, nb.DiskGB, nb.Duration = r.u32(), r.u32(), r.u32(), r.u32()
	r.copy(nb.AccessPubKey[:])
	r.copy(nb.CertificateHash[:])
	if n := int(r.u16()); n > 0 {
		if n > MaxAttestations {
			return fmt.Errorf("%w: %d attestations", ErrEncoding, n)
		}
		nb.Attestations = make([]Attestation, n)
		for i := range nb.Attestations {
			a := &nb.Attestations[i]
			r.copy(a.PublicKey[:])
			a.Timestamp = int64(r.u64())
			r.copy(a.Signature[:])
		}
	}
	threshold, nkeys := int(r.u16()), int(r.u16())
	if nkeys > MaxKeys {
		return fmt.Errorf("%w: %d keys", ErrEncoding, nkeys)
	}
	if threshold != 0 || nkeys != 0 {
		nb.Keyset = &Keyset{Threshold: threshold, Keys: make([]Address, nkeys)}
		for i := range nb.Keyset.Keys {
			r.copy(nb.Keyset.Keys[i][:])
		}
	}
	if nb.Type == TypeLease {
		nb.StateChainIndex = r.u64()
	}
	preimageLen := r.off
	r.copy(nb.Signature[:])
	if n := int(r.u16()); n > 0 {
		if n > MaxKeys {
			return fmt.Errorf("%w: %d signatures", ErrEncoding, n)
		}
		nb.Signatures = make([]MultisigSignature, n)
		for i := range nb.Signatures {
			r.copy(nb.Signatures[i].PublicKey[:])
			r.copy(nb.Signatures[i].Signature[:])
		}
	}
	nb.PowNonce = int64(r.u64())
	if r.short {
		return fmt.Errorf("%w: truncated", ErrEncoding)
	}
	if r.off != len(data) {
		return fmt.Errorf("%w: %d trailing bytes", ErrEncoding, len(data)-r.off)
	}
	nb.Hash = sha256.Sum256(data[:preimageLen])
	*b = nb
	return nil
}

// reader consumes a byte slice; once it runs short every read yields zeros
// and short is set, so callers check once at the end.
type reader struct {
	buf   []byte
	off   int
	short bool
}

func (r *reader) next(n int) []byte {
	if r.short || len(r.buf)-r.off < n {
		r.short = true
		return make([]byte, n)
	}
	p := r.buf[r.off : r.off+n]
	r.off += n
	return p
}

func (r *reader) copy(dst []byte) { copy(dst, r.next(len(dst))) }
func (r *reader) byte1() byte     { return r.next(1)[0] }
func (r *reader) u16() uint16     { return binary.BigEndian.Uint16(r.next(2)) }
func (r *reader) u32() uint32     { return binary.BigEndian.Uint32(r.next(4)) }
func (r *reader) u64() uint64     { return binary.BigEndian.Uint64(r.next(8)) }
func (r *reader) amount() Amount {
	hi := r.u64()
	return Amount{hi: hi, lo: r.u64()}
}
