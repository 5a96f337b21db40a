package cloudstore

import (
	"encoding/base64"
	"encoding/binary"
	"testing"
)

// TestChecksumAlgorithms checks the algorithms against known values:
// CRC-64/NVME of 32 zero bytes (the AWS checksums library's vector) and of
// "123456789" (the CRC catalogue's check value), and composite checksums.
func TestChecksumAlgorithms(t *testing.T) {
	for _, tt := range []struct {
		alg  string
		data []byte
		want uint64
	}{
		{"crc64nvme", make([]byte, 32), 0xCF3473434D4ECF3B},
		{"crc64nvme", []byte("123456789"), 0xae8b14860a799888},
		{"crc32", []byte("123456789"), 0xcbf43926},
		{"crc32c", []byte("123456789"), 0xe3069283},
	} {
		h := newChecksumHash(tt.alg)
		h.Write(tt.data)
		sum := h.Sum(nil)
		var got uint64
		if len(sum) == 8 {
			got = binary.BigEndian.Uint64(sum)
		} else {
			got = uint64(binary.BigEndian.Uint32(sum))
		}
		if got != tt.want {
			t.Errorf("%s(%q): got %#x, want %#x", tt.alg, tt.data, got, tt.want)
		}
	}
	a, b := base64.StdEncoding.EncodeToString([]byte{1, 2, 3, 4}), base64.StdEncoding.EncodeToString([]byte{5, 6, 7, 8})
	h := newChecksumHash("crc32")
	h.Write([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	want := base64.StdEncoding.EncodeToString(h.Sum(nil)) + "-2"
	if c := compositeChecksum([]*Checksum{{Algorithm: "crc32", Value: a}, {Algorithm: "crc32", Value: b}}); c == nil || c.Value != want || c.Type != Composite {
		t.Errorf("composite: got %+v, want %v COMPOSITE", c, want)
	}
	for _, parts := range [][]*Checksum{nil, {{Algorithm: "crc32", Value: a}, nil}, {{Algorithm: "crc32", Value: a}, {Algorithm: "sha1", Value: b}}} {
		if c := compositeChecksum(parts); c != nil {
			t.Errorf("composite of %v: got %+v, want none", parts, c)
		}
	}
}
