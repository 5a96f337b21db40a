package kms

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
)

// The sealed forms. Every seal is AES-256-GCM with a random 96-bit nonce,
// bound by its additional data to what it belongs to, so that a sealed
// value moved to another key, version or context does not open.
//
//	material of key ID, version V, under the master key:
//	  nonce(12) | GCM(master, material(32), ad = "lattice/kms/material/v1" 0 ID 0 V)
//	a data key under key ID's version V:
//	  "LK1" | V (4, big-endian) | nonce(12) | GCM(material V, data key(32), ad = "lattice/kms/datakey/v1" 0 ID 0 context)
const (
	materialSize   = 32
	dataKeySize    = 32
	sealedPrefix   = "LK1"
	nonceSize      = 12
	tagSize        = 16
	sealedKeySize  = len(sealedPrefix) + 4 + nonceSize + dataKeySize + tagSize
	sealedMaterial = nonceSize + materialSize + tagSize
)

func gcm(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("kms: a key is %d bytes, not 32", len(key))
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// Fingerprint names a master key without revealing it: the first 8 bytes
// of its SHA-256, in hex. Records keep it, so that a key sealed under
// another master key is told apart from a corrupt one.
func Fingerprint(master []byte) string {
	sum := sha256.Sum256(append([]byte("lattice/kms/master/v1\x00"), master...))
	return hex.EncodeToString(sum[:8])
}

func materialAD(id string, version int) []byte {
	return []byte("lattice/kms/material/v1\x00" + id + "\x00" + strconv.Itoa(version))
}

func dataKeyAD(id string, encCtx []byte) []byte {
	return append([]byte("lattice/kms/datakey/v1\x00"+id+"\x00"), encCtx...)
}

// sealMaterial seals a version's material under the master key.
func sealMaterial(master cipher.AEAD, id string, version int, material []byte) []byte {
	nonce := make([]byte, nonceSize, sealedMaterial)
	rand.Read(nonce)
	return master.Seal(nonce, nonce, material, materialAD(id, version))
}

// openMaterial opens what sealMaterial sealed.
func openMaterial(master cipher.AEAD, id string, version int, sealed []byte) ([]byte, error) {
	if len(sealed) != sealedMaterial {
		return nil, ErrMasterKey
	}
	m, err := master.Open(nil, sealed[:nonceSize], sealed[nonceSize:], materialAD(id, version))
	if err != nil {
		return nil, ErrMasterKey
	}
	return m, nil
}

// sealDataKey seals a data key under material, version version of key id.
func sealDataKey(material []byte, id string, version int, dataKey, encCtx []byte) ([]byte, error) {
	aead, err := gcm(material)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, sealedKeySize)
	out = append(out, sealedPrefix...)
	out = binary.BigEndian.AppendUint32(out, uint32(version))
	nonce := make([]byte, nonceSize)
	rand.Read(nonce)
	out = append(out, nonce...)
	return aead.Seal(out, nonce, dataKey, dataKeyAD(id, encCtx)), nil
}

// sealedVersion reads which version of its key sealed a data key.
func sealedVersion(sealed []byte) (int, error) {
	if len(sealed) != sealedKeySize || string(sealed[:len(sealedPrefix)]) != sealedPrefix {
		return 0, ErrInvalidCiphertext
	}
	return int(binary.BigEndian.Uint32(sealed[len(sealedPrefix):])), nil
}

// openDataKey opens what sealDataKey sealed.
func openDataKey(material []byte, id string, sealed, encCtx []byte) ([]byte, error) {
	aead, err := gcm(material)
	if err != nil {
		return nil, err
	}
	at := len(sealedPrefix) + 4
	k, err := aead.Open(nil, sealed[at:at+nonceSize], sealed[at+nonceSize:], dataKeyAD(id, encCtx))
	if err != nil {
		return nil, ErrInvalidCiphertext
	}
	return k, nil
}
