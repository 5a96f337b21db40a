package chat

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"filippo.io/edwards25519"

	"github.com/latticenet/lattice/ledger"
)

// SealedPrefix opens the text of an end-to-end encrypted message. What
// follows is base64url (no padding) of a 12-byte nonce and the AES-256-GCM
// ciphertext with its 16-byte tag.
const SealedPrefix = "e2e1:"

// sealInfo is HKDF's info, and opens the additional data the AEAD binds.
const sealInfo = "LATTICE-CHAT-E2E-V1"

const nonceSize, tagSize = 12, 16

// MaxSealedPlaintext is the longest text Seal can encrypt into one message.
const MaxSealedPlaintext = (MaxMessageBytes-len(SealedPrefix))*3/4 - nonceSize - tagSize

// ErrNotSealed is returned by Open for a message that is not encrypted.
var ErrNotSealed = errors.New("chat: the message is not end-to-end encrypted")

// IsSealed reports whether the message's text is end-to-end encrypted.
func IsSealed(m *Message) bool { return strings.HasPrefix(m.Message, SealedPrefix) }

// Seal encrypts plaintext from priv's account to m.To and puts the result
// in m.Message, setting m.From. Set m.To and m.Timestamp first, sign after.
// rand supplies the nonce (crypto/rand.Reader; tests pass a fixed one).
//
// The scheme: both accounts' ed25519 keys are mapped to X25519 (RFC 7748)
// the standard way, the shared secret is X25519(own private, other's
// public), and the key is HKDF-SHA256 of it with info "LATTICE-CHAT-E2E-V1"
// || from || to. The additional data is that info and the timestamp, so a
// ciphertext cannot be replayed under another envelope. Both accounts
// derive the same key, so the sender reads its own sent messages too.
func Seal(priv ed25519.PrivateKey, m *Message, plaintext []byte, rand io.Reader) error {
	copy(m.From[:], priv.Public().(ed25519.PublicKey))
	if len(plaintext) > MaxSealedPlaintext {
		return fmt.Errorf("chat: %d bytes to encrypt, more than the %d one message carries", len(plaintext), MaxSealedPlaintext)
	}
	aead, err := conversationAEAD(priv, m.To, m)
	if err != nil {
		return err
	}
	out := make([]byte, nonceSize, nonceSize+len(plaintext)+tagSize)
	if _, err := io.ReadFull(rand, out); err != nil {
		return fmt.Errorf("chat: nonce: %w", err)
	}
	out = aead.Seal(out, out[:nonceSize], plaintext, additionalData(m))
	m.Message = SealedPrefix + base64.RawURLEncoding.EncodeToString(out)
	return nil
}

// Open decrypts a sealed message with priv, the key of either its sender
// or its recipient.
func Open(priv ed25519.PrivateKey, m *Message) ([]byte, error) {
	if !IsSealed(m) {
		return nil, ErrNotSealed
	}
	var self ledger.Address
	copy(self[:], priv.Public().(ed25519.PublicKey))
	other := m.From
	switch self {
	case m.From:
		other = m.To
	case m.To:
	default:
		return nil, errors.New("chat: the message is neither from nor to this key")
	}
	raw, err := base64.RawURLEncoding.DecodeString(m.Message[len(SealedPrefix):])
	if err != nil || len(raw) < nonceSize+tagSize {
		return nil, errors.New("chat: the sealed text is malformed")
	}
	aead, err := conversationAEAD(priv, other, m)
	if err != nil {
		return nil, err
	}
	pt, err := aead.Open(nil, raw[:nonceSize], raw[nonceSize:], additionalData(m))
	if err != nil {
		return nil, errors.New("chat: the sealed text does not decrypt with this key (altered, or sealed for another envelope)")
	}
	return pt, nil
}

// conversationAEAD returns the AEAD of m's conversation, seen from priv,
// whose counterpart is other.
func conversationAEAD(priv ed25519.PrivateKey, other ledger.Address, m *Message) (cipher.AEAD, error) {
	secret, err := SharedSecret(priv, other)
	if err != nil {
		return nil, err
	}
	info := append(append([]byte(sealInfo), m.From[:]...), m.To[:]...)
	key, err := hkdf.Key(sha256.New, secret, nil, string(info), 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func additionalData(m *Message) []byte {
	ad := append(append([]byte(sealInfo), m.From[:]...), m.To[:]...)
	return binary.BigEndian.AppendUint64(ad, uint64(m.Timestamp))
}

// SharedSecret returns the X25519 shared secret of priv's account and
// other's: X25519 of priv's scalar (the clamped first half of SHA-512 of
// its seed, as ed25519 itself uses) and other's public key mapped to its
// Montgomery form.
func SharedSecret(priv ed25519.PrivateKey, other ledger.Address) ([]byte, error) {
	h := sha512.Sum512(priv.Seed())
	sk, err := ecdh.X25519().NewPrivateKey(h[:32])
	if err != nil {
		return nil, err
	}
	p, err := new(edwards25519.Point).SetBytes(other[:])
	if err != nil {
		return nil, fmt.Errorf("chat: %s is not a valid public key: %w", other, err)
	}
	pk, err := ecdh.X25519().NewPublicKey(p.BytesMontgomery())
	if err != nil {
		return nil, err
	}
	secret, err := sk.ECDH(pk)
	if err != nil {
		return nil, fmt.Errorf("chat: no shared secret with %s (a low-order key): %w", other, err)
	}
	return secret, nil
}
