package cloudstore

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
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
