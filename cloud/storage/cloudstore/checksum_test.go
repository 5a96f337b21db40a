package cloudstore

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math/rand/v2"
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

// TestFullObjectChecksum checks that combining parts' CRCs gives the CRC
// of the whole body, for each CRC and for parts of many sizes (empty
// ones too), and the values S3's own tests list for three 5 MiB parts of
// 'A', 'B' and 'C' (ceph/s3-tests).
func TestFullObjectChecksum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, alg := range []string{"crc32", "crc32c", "crc64nvme"} {
		for _, sizes := range [][]int64{{0}, {1, 1}, {7, 0, 13}, {1 << 16, 3, 1<<20 + 5}, {5, 4, 3, 2, 1, 0, 100}} {
			whole, parts := newChecksumHash(alg), []*Checksum(nil)
			for _, n := range sizes {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(rng.Uint32())
				}
				whole.Write(b)
				h := newChecksumHash(alg)
				h.Write(b)
				parts = append(parts, &Checksum{Algorithm: alg, Value: base64.StdEncoding.EncodeToString(h.Sum(nil))})
			}
			want := base64.StdEncoding.EncodeToString(whole.Sum(nil))
			got := fullObjectChecksum(alg, parts, sizes)
			if got == nil || got.Value != want || got.Type != FullObject || got.Algorithm != alg {
				t.Errorf("%s of parts %v: %+v, want %s", alg, sizes, got, want)
			}
		}
	}
	for _, tt := range []struct{ alg, a, b, c, want string }{
		{"crc32", "JRTCyQ==", "QoZTGg==", "YAgjqw==", "WgDhBQ=="},
		{"crc64nvme", "L/E4WYn8v98=", "xW1l19VobYM=", "cK5MnNaWrW4=", "i+6LR0y3eFo="},
	} {
		const n = 5 << 20
		for i, letter := range "ABC" {
			h := newChecksumHash(tt.alg)
			h.Write(bytes.Repeat([]byte{byte(letter)}, n))
			if got := base64.StdEncoding.EncodeToString(h.Sum(nil)); got != []string{tt.a, tt.b, tt.c}[i] {
				t.Fatalf("%s of 5 MiB of %c: %s, want %s", tt.alg, letter, got, []string{tt.a, tt.b, tt.c}[i])
			}
		}
		parts := []*Checksum{{Algorithm: tt.alg, Value: tt.a}, {Algorithm: tt.alg, Value: tt.b}, {Algorithm: tt.alg, Value: tt.c}}
		if got := fullObjectChecksum(tt.alg, parts, []int64{n, n, n}); got == nil || got.Value != tt.want {
			t.Errorf("%s of the three parts: %+v, want %s", tt.alg, got, tt.want)
		}
	}
	if c := fullObjectChecksum("sha256", []*Checksum{{Algorithm: "sha256", Value: "x"}}, []int64{1}); c != nil {
		t.Errorf("a full-object SHA-256: %+v", c)
	}
	if c := fullObjectChecksum("crc32", []*Checksum{{Algorithm: "crc32", Value: "AAAAAA=="}, nil}, []int64{1, 1}); c != nil {
		t.Errorf("a part without a checksum: %+v", c)
	}
}
