package sse

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"testing"
)

// vector is one of testdata/vectors.json: a body, its key and nonce
// prefix, and the stream (whole, or its SHA-256 when long).
type vector struct {
	Name         string `json:"name"`
	Key          string `json:"key"`
	Prefix       string `json:"prefix"`
	Plaintext    string `json:"plaintext,omitempty"`     // hex
	PlainPattern string `json:"plain_pattern,omitempty"` // repeated to PlainSize bytes
	PlainSize    int    `json:"plain_size,omitempty"`
	Stream       string `json:"stream,omitempty"` // hex
	StreamSHA256 string `json:"stream_sha256,omitempty"`
}

func (v vector) plain(t *testing.T) []byte {
	if v.PlainPattern != "" {
		return bytes.Repeat([]byte(v.PlainPattern), v.PlainSize/len(v.PlainPattern)+1)[:v.PlainSize]
	}
	p, err := hex.DecodeString(v.Plaintext)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVectors holds the format to docs/s3.md's vectors: each
// stream as the package writes it, as a second, plain implementation of
// the format in this test writes it, and decrypting back.
func TestVectors(t *testing.T) {
	data, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		key, prefix, plain := unhex(t, v.Key), unhex(t, v.Prefix), v.plain(t)
		e, err := newEncrypter(key, bytes.NewReader(plain), prefix)
		if err != nil {
			t.Fatal(err)
		}
		stream, err := io.ReadAll(e)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(stream, reference(t, key, prefix, plain)) {
			t.Errorf("%s: the package and the reference disagree", v.Name)
		}
		sum := sha256.Sum256(stream)
		switch {
		case v.Stream != "" && hex.EncodeToString(stream) != v.Stream:
			t.Errorf("%s: stream %x, want %s", v.Name, stream, v.Stream)
		case v.StreamSHA256 != "" && hex.EncodeToString(sum[:]) != v.StreamSHA256:
			t.Errorf("%s: stream SHA-256 %x, want %s", v.Name, sum, v.StreamSHA256)
		}
		got, err := decrypt(key, stream, int64(len(plain)))
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("%s: decrypt: %v", v.Name, err)
		}
	}
}

// reference writes a stream as docs/s3.md describes it, directly: one
// layer for a 32-byte key, two (the inner key first) for a 64-byte one.
func reference(t *testing.T, key, prefix, plain []byte) []byte {
	var gcms []cipher.AEAD
	for i := 0; i < len(key); i += 32 {
		block, err := aes.NewCipher(key[i : i+32])
		if err != nil {
			t.Fatal(err)
		}
		gcm, _ := cipher.NewGCM(block)
		gcms = append(gcms, gcm)
	}
	magic := "LSE1"
	if len(gcms) == 2 {
		magic = "LSE2"
	}
	out := append([]byte(magic), prefix...)
	for i := 0; ; i++ {
		n := min(len(plain), 65536)
		last := n == len(plain)
		c := uint32(i)
		if last {
			c |= 1 << 31
		}
		chunk := plain[:n]
		for l, gcm := range gcms {
			nonce := append(bytes.Clone(prefix[8*l:8*l+8]), 0, 0, 0, 0)
			binary.BigEndian.PutUint32(nonce[8:], c)
			chunk = gcm.Seal(nil, nonce, chunk, nil)
		}
		out = append(out, chunk...)
		plain = plain[n:]
		if last {
			return out
		}
	}
}
