package s3api

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
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

// declaredChecksum is the algorithm of the one checksum r's body comes
// with, in a header or announced as a trailer, "" for none.
func declaredChecksum(r *request) string {
	if r.sums == nil {
		return ""
	}
	if algs := r.sums.Algorithms(); len(algs) == 1 {
		return algs[0]
	}
	return ""
}

// uploadChecksumSpec reads the checksum algorithm and type a
// CreateMultipartUpload asks for, refused as S3 refuses them.
func uploadChecksumSpec(h http.Header) (alg, typ string, err error) {
	if v := h.Get("X-Amz-Checksum-Algorithm"); v != "" {
		alg = strings.ToLower(v)
		if !slices.Contains(cloudstore.ChecksumAlgorithms, alg) {
			return "", "", s3err(http.StatusBadRequest, "InvalidRequest", "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]")
		}
	}
	typ = h.Get("X-Amz-Checksum-Type")
	switch {
	case typ != "" && typ != cloudstore.Composite && typ != cloudstore.FullObject:
		return "", "", s3err(http.StatusBadRequest, "InvalidRequest", "Value for x-amz-checksum-type header is invalid.")
	case typ != "" && alg == "":
		return "", "", s3err(http.StatusBadRequest, "InvalidRequest", "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.")
	}
	if _, err := cloudstore.UploadChecksumType(alg, typ); err != nil {
		return "", "", s3err(http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("The %s checksum type cannot be used with the %s checksum algorithm.", typ, alg))
	}
	return alg, typ, nil
}

var errBadPartChecksum = s3err(http.StatusBadRequest, "InvalidArgument", "Invalid Base64 or multiple checksums present in request")

// given is the one checksum a CompleteMultipartUpload lists for a part,
// nil for none.
func (x checksumXML) given() (*cloudstore.Checksum, error) {
	var c *cloudstore.Checksum
	for _, f := range []struct{ alg, v string }{
		{"crc32", x.ChecksumCRC32}, {"crc32c", x.ChecksumCRC32C}, {"crc64nvme", x.ChecksumCRC64NVME},
		{"sha1", x.ChecksumSHA1}, {"sha256", x.ChecksumSHA256},
	} {
		if f.v == "" {
			continue
		}
		if _, err := base64.StdEncoding.DecodeString(f.v); c != nil || err != nil {
			return nil, errBadPartChecksum
		}
		c = &cloudstore.Checksum{Algorithm: f.alg, Value: f.v}
	}
	return c, nil
}

// completeChecksum is the whole object's checksum a
// CompleteMultipartUpload gives in an x-amz-checksum-* header, nil for
// none; a composite one may carry its -N.
func completeChecksum(h http.Header) (*cloudstore.Checksum, error) {
	var c *cloudstore.Checksum
	for _, alg := range cloudstore.ChecksumAlgorithms {
		v := h.Get("X-Amz-Checksum-" + alg)
		if v == "" {
			continue
		}
		if c != nil {
			return nil, errMultipleChecksums
		}
		base, _, _ := strings.Cut(v, "-")
		if _, err := base64.StdEncoding.DecodeString(base); err != nil {
			return nil, s3err(http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("Value for x-amz-checksum-%s header is invalid.", alg))
		}
		c = &cloudstore.Checksum{Algorithm: alg, Value: v}
	}
	return c, nil
}

// checkCompleteChecksum checks what a CompleteMultipartUpload says of the
// object's checksum (x-amz-checksum-type, typ, and c) against the upload.
func checkCompleteChecksum(u cloudstore.Upload, typ string, c *cloudstore.Checksum) error {
	if typ != "" && typ != u.ChecksumType {
		mode := u.ChecksumType
		if mode == "" {
			mode = "null"
		}
		return s3err(http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("The upload was created using the %s checksum mode. The complete request must use the same checksum mode.", mode))
	}
	if c != nil && u.ChecksumAlgorithm != "" && c.Algorithm != u.ChecksumAlgorithm {
		return s3err(http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("The upload was created using a %s checksum. The complete request must use the same checksum algorithm, not %s.", u.ChecksumAlgorithm, c.Algorithm))
	}
	return nil
}

// checksumError is the S3 error of a checksum refused by the store, nil
// for another error.
func checksumError(err error) *Error {
	var pe *cloudstore.PartChecksumError
	var ae *cloudstore.ChecksumAlgorithmError
	switch {
	case errors.As(err, &ae):
		got := ae.Got
		if got == "" {
			got = "null"
		}
		return s3err(http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("Checksum Type mismatch occurred, expected checksum Type: %s, actual checksum Type: %s", ae.Want, got))
	case errors.As(err, &pe) && errors.Is(err, cloudstore.ErrPartChecksumMissing):
		return s3err(http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("The upload was created using a %s checksum. The complete request must include the checksum for each part. It was missing for part %d in the request.", pe.Algorithm, pe.Part))
	case errors.As(err, &pe):
		return s3err(http.StatusBadRequest, "BadDigest", fmt.Sprintf("The %s you specified for part %d did not match what we received.", pe.Algorithm, pe.Part))
	case errors.Is(err, cloudstore.ErrChecksumMismatch):
		return s3err(http.StatusBadRequest, "BadDigest", "The checksum you specified for the object did not match the checksum of its parts.")
	case errors.Is(err, cloudstore.ErrChecksumUnchecked):
		return s3err(http.StatusBadRequest, "InvalidRequest", "The upload was created without a checksum algorithm and its parts have no checksum of the one given for the object: create the upload with x-amz-checksum-algorithm.")
	case errors.Is(err, cloudstore.ErrChecksumSpec):
		return s3err(http.StatusBadRequest, "InvalidRequest", "The checksum type cannot be used with the checksum algorithm.")
	}
	return nil
}
