package cloudstore

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"strings"
)

// Checksum is an additional checksum of an object or a part, as S3 keeps
// the x-amz-checksum-* value it was uploaded with (checked against the
// body before it was stored).
type Checksum struct {
	Algorithm string `json:"alg"`   // crc32, crc32c, crc64nvme, sha1 or sha256
	Value     string `json:"value"` // base64; a composite one ends in -N
	// Type is FULL_OBJECT (of the bytes themselves) or COMPOSITE (of
	// the parts' checksums, for an object completed from parts).
	Type string `json:"type,omitempty"`
}

// Checksum types, as S3 names them.
const (
	FullObject = "FULL_OBJECT"
	Composite  = "COMPOSITE"
)

// ChecksumAlgorithms are the checksum algorithms kept, as S3 names them
// in lower case.
var ChecksumAlgorithms = []string{"crc32", "crc32c", "crc64nvme", "sha1", "sha256"}

// UploadChecksumType is the checksum type of an upload created with
// checksum algorithm alg and type typ ("" for alg's default, as S3's:
// FULL_OBJECT for CRC64NVME, COMPOSITE for the others). Errors wrap
// ErrChecksumSpec: a type without an algorithm, FULL_OBJECT with a SHA,
// COMPOSITE with CRC64NVME, an unknown algorithm or type.
func UploadChecksumType(alg, typ string) (string, error) {
	switch {
	case alg == "" && typ == "":
		return "", nil
	case alg == "":
		return "", fmt.Errorf("%w: a checksum type without an algorithm", ErrChecksumSpec)
	case newChecksumHash(alg) == nil:
		return "", fmt.Errorf("%w: unknown algorithm %q", ErrChecksumSpec, alg)
	case typ == "" && alg == "crc64nvme":
		return FullObject, nil
	case typ == "":
		return Composite, nil
	case typ == FullObject && !FullObjectAlgorithm(alg), typ == Composite && alg == "crc64nvme":
		return "", fmt.Errorf("%w: %s with %s", ErrChecksumSpec, typ, alg)
	case typ != FullObject && typ != Composite:
		return "", fmt.Errorf("%w: unknown type %q", ErrChecksumSpec, typ)
	}
	return typ, nil
}

var crc64NVME = crc64.MakeTable(0x9a6c9329ac4bc9b5) // CRC-64/NVME, reflected

// newChecksumHash returns the hash of a checksum algorithm, nil for an
// unknown one.
func newChecksumHash(alg string) hash.Hash {
	switch alg {
	case "crc32":
		return crc32.NewIEEE()
	case "crc32c":
		return crc32.New(crc32.MakeTable(crc32.Castagnoli))
	case "crc64nvme":
		return crc64.New(crc64NVME)
	case "sha1":
		return sha1.New()
	case "sha256":
		return sha256.New()
	}
	return nil
}

// checksumming returns r passed through alg's hash (a known algorithm)
// and what gives, once r was read to its end, the checksum of its bytes.
func checksumming(alg string, r io.Reader) (io.Reader, func() *Checksum) {
	h := newChecksumHash(alg)
	return io.TeeReader(r, h), func() *Checksum {
		return &Checksum{Algorithm: alg, Value: base64.StdEncoding.EncodeToString(h.Sum(nil))}
	}
}

// compositeChecksum is S3's checksum of an object completed from parts
// whose checksums all use one algorithm: that algorithm over the parts'
// raw checksums, in order, then -N. It returns nil when a part has no
// checksum or another algorithm, and for CRC64NVME, which S3 keeps only as
// a full-object checksum (never composite).
func compositeChecksum(parts []*Checksum) *Checksum {
	alg := partsAlgorithm(parts)
	if alg == "" || alg == "crc64nvme" {
		return nil
	}
	h := newChecksumHash(alg)
	if h == nil {
		return nil
	}
	for _, p := range parts {
		raw, err := base64.StdEncoding.DecodeString(p.Value)
		if err != nil {
			return nil
		}
		h.Write(raw)
	}
	return &Checksum{Algorithm: alg, Value: fmt.Sprintf("%s-%d", base64.StdEncoding.EncodeToString(h.Sum(nil)), len(parts)), Type: Composite}
}

// partsAlgorithm is the algorithm of the parts' checksums when every part
// has one and all use the same, else "".
func partsAlgorithm(parts []*Checksum) string {
	if len(parts) == 0 || parts[0] == nil {
		return ""
	}
	for _, p := range parts {
		if p == nil || p.Algorithm != parts[0].Algorithm {
			return ""
		}
	}
	return parts[0].Algorithm
}

// A crcCombiner joins the CRCs of two byte strings into the CRC of their
// concatenation without reading the bytes, as zlib's crc32_combine does:
// crc(A‖B) = crc(A)·x^(8·len(B)) mod P ⊕ crc(B). That holds for the
// three CRCs S3 uses (reflected, initial value and final XOR all ones,
// which cancel). Polynomials are in reflected bit order, where the top
// bit of the register is x^0; multiplying by x is a right shift.
type crcCombiner struct {
	width uint
	poly  uint64     // reflected
	x2n   [64]uint64 // x^(2^k) mod P
}

func newCRCCombiner(width uint, reflectedPoly uint64) *crcCombiner {
	c := &crcCombiner{width: width, poly: reflectedPoly}
	c.x2n[0] = c.one() >> 1 // x^1
	for k := 1; k < len(c.x2n); k++ {
		c.x2n[k] = c.mul(c.x2n[k-1], c.x2n[k-1])
	}
	return c
}

func (c *crcCombiner) one() uint64 { return 1 << (c.width - 1) } // x^0

// mul is a·b mod P.
func (c *crcCombiner) mul(a, b uint64) uint64 {
	var p uint64
	for m := c.one(); m != 0 && a != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
			a ^= m
		}
		if b&1 != 0 {
			b = b>>1 ^ c.poly
		} else {
			b >>= 1
		}
	}
	return p
}

// combine is the CRC of A‖B given crcA, crcB and len(B) in bytes.
func (c *crcCombiner) combine(crcA, crcB uint64, lenB int64) uint64 {
	// x^(8·lenB) = the product of x^(2^k) for the bits k of 8·lenB.
	f := c.one()
	for k, n := 3, uint64(lenB); n != 0; k, n = k+1, n>>1 {
		if n&1 != 0 {
			f = c.mul(c.x2n[k%len(c.x2n)], f)
		}
	}
	return c.mul(f, crcA) ^ crcB
}

var crcCombiners = map[string]*crcCombiner{
	"crc32":     newCRCCombiner(32, 0xEDB88320),
	"crc32c":    newCRCCombiner(32, 0x82F63B78),
	"crc64nvme": newCRCCombiner(64, 0x9A6C9329AC4BC9B5),
}

// FullObjectAlgorithm reports whether alg's checksum of a multipart object
// can be of the whole object (FULL_OBJECT): the CRCs can, by combining the
// parts'; SHA-1 and SHA-256 cannot.
func FullObjectAlgorithm(alg string) bool { return crcCombiners[alg] != nil }

// fullObjectChecksum is the CRC of an object completed from parts of
// these sizes and CRCs, all of algorithm alg (a CRC): the CRC of the
// whole body, made from the parts' without reading them. It returns nil
// when a part has no checksum or another algorithm, or one that does not
// decode.
func fullObjectChecksum(alg string, parts []*Checksum, sizes []int64) *Checksum {
	comb := crcCombiners[alg]
	if comb == nil || partsAlgorithm(parts) != alg || len(sizes) != len(parts) {
		return nil
	}
	bytes := int(comb.width / 8)
	var crc uint64
	for i, p := range parts {
		raw, err := base64.StdEncoding.DecodeString(p.Value)
		if err != nil || len(raw) != bytes {
			return nil
		}
		var v uint64
		for _, b := range raw {
			v = v<<8 | uint64(b)
		}
		if i == 0 {
			crc = v
		} else {
			crc = comb.combine(crc, v, sizes[i])
		}
	}
	raw := make([]byte, bytes)
	for i := range raw {
		raw[i] = byte(crc >> (8 * (bytes - 1 - i)))
	}
	return &Checksum{Algorithm: alg, Value: base64.StdEncoding.EncodeToString(raw), Type: FullObject}
}

// sameChecksum reports whether given, a client's checksum of a whole
// object, is kept, the object's: a composite one may be given with or
// without its -N, as S3 takes it.
func sameChecksum(given, kept *Checksum) bool {
	if kept == nil || given.Algorithm != kept.Algorithm {
		return false
	}
	if given.Value == kept.Value {
		return true
	}
	base, _, composite := strings.Cut(kept.Value, "-")
	return composite && given.Value == base
}
