package s3api

import (
	"net/http"
	"strings"

	"github.com/latticenet/lattice/cloudstore"
)

// checksumXML holds the checksums of an object or a part, as S3's XML
// names them.
type checksumXML struct {
	ChecksumCRC32     string `xml:",omitempty"`
	ChecksumCRC32C    string `xml:",omitempty"`
	ChecksumCRC64NVME string `xml:",omitempty"`
	ChecksumSHA1      string `xml:",omitempty"`
	ChecksumSHA256    string `xml:",omitempty"`
	ChecksumType      string `xml:",omitempty"`
}

// checksumOf sets the field of alg to value.
func checksumOf(alg, value, typ string) checksumXML {
	var x checksumXML
	switch alg {
	case "crc32":
		x.ChecksumCRC32 = value
	case "crc32c":
		x.ChecksumCRC32C = value
	case "crc64nvme":
		x.ChecksumCRC64NVME = value
	case "sha1":
		x.ChecksumSHA1 = value
	case "sha256":
		x.ChecksumSHA256 = value
	default:
		return checksumXML{}
	}
	x.ChecksumType = typ
	return x
}

// objectChecksumXML is the stored checksum of an object, nil for none.
func objectChecksumXML(obj cloudstore.Object) *checksumXML {
	if obj.Checksum == nil {
		return nil
	}
	x := checksumOf(obj.Checksum.Algorithm, obj.Checksum.Value, obj.Checksum.Type)
	return &x
}

// partChecksum is the stored checksum of part n of an object completed
// from parts that all had a checksum of one algorithm, or nil.
func partChecksum(obj cloudstore.Object, n int) *cloudstore.Checksum {
	if obj.PartChecksumAlgorithm == "" || n < 1 || n > len(obj.PartChecksums) {
		return nil
	}
	return &cloudstore.Checksum{Algorithm: obj.PartChecksumAlgorithm, Value: obj.PartChecksums[n-1]}
}

// partChecksumXML is the stored checksum of part n of an object.
func partChecksumXML(obj cloudstore.Object, n int) checksumXML {
	if c := partChecksum(obj, n); c != nil {
		return checksumOf(c.Algorithm, c.Value, "")
	}
	return checksumXML{}
}

// setChecksumHeaders sends c as S3 does: x-amz-checksum-ALG and, when it
// has one, x-amz-checksum-type.
func setChecksumHeaders(h http.Header, c *cloudstore.Checksum) {
	if c == nil {
		return
	}
	h.Set("X-Amz-Checksum-"+c.Algorithm, c.Value)
	if c.Type != "" {
		h.Set("X-Amz-Checksum-Type", c.Type)
	}
}

var errMultipleChecksums = s3err(http.StatusBadRequest, "InvalidRequest", "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")

// uploadChecksum returns what keeps the checksum an upload's body came
// with (in a header or its trailer), to be called once the body was read
// and so verified; nil when it came with none. More than one is refused,
// as S3 refuses them.
func uploadChecksum(r *request, typ string) (func() *cloudstore.Checksum, error) {
	if r.sums == nil {
		return nil, nil
	}
	algs := r.sums.Algorithms()
	switch len(algs) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, errMultipleChecksums
	}
	alg := algs[0]
	return func() *cloudstore.Checksum {
		v, ok := r.sums.Values()[alg]
		if !ok {
			return nil
		}
		return &cloudstore.Checksum{Algorithm: alg, Value: v, Type: typ}
	}, nil
}

// checksumMode reports whether a read asked for the object's checksums.
func checksumMode(r *request) bool {
	return strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED")
}
