// Package chat holds the pure rules of signed chat messages: their
// canonical encoding, how they are signed and checked, and the end-to-end
// encryption a sender may choose (seal.go). It does no I/O: package chatnet
// stores and delivers messages, and the node's API serves them.
package chat

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/signature"
)

// tag opens every message preimage, so that no other signed record of the
// protocol (a block, a vote, a directory registration) can be mistaken for
// a chat message.
const tag = "LATTICE-CHAT-V1"

// MaxMessageBytes bounds the message text, in bytes of UTF-8.
const MaxMessageBytes = 4096

// ErrInvalid is wrapped by every error that says a message is malformed or
// badly signed.
var ErrInvalid = errors.New("invalid chat message")

// Message is one signed chat message: From, at Timestamp (Unix ms), says
// Message to To. The signature is From's, over the digest.
type Message struct {
	From      ledger.Address   `json:"from"`
	To        ledger.Address   `json:"to"`
	Message   string           `json:"message"`
	Timestamp int64            `json:"timestamp"`
	Signature ledger.Signature `json:"signature"`
}

// AppendPreimage appends the bytes the message's digest is the SHA-256 of:
// the tag "LATTICE-CHAT-V1", from (32 bytes), to (32 bytes), the timestamp
// (8 bytes), the text's length (2 bytes) and the text, integers big-endian.
func (m *Message) AppendPreimage(dst []byte) []byte {
	dst = append(dst, tag...)
	dst = append(dst, m.From[:]...)
	dst = append(dst, m.To[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(m.Timestamp))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(m.Message)))
	return append(dst, m.Message...)
}

// Hash returns the message's digest: what From signs, and its identity:
// two messages with the same hash are the same message, whatever their
// signatures' bytes.
func (m *Message) Hash() ledger.Hash {
	return sha256.Sum256(m.AppendPreimage(make([]byte, 0, len(tag)+74+len(m.Message))))
}

// Sign sets m.From to priv's public key and m.Signature to priv's signature
// of the digest. Set To, Message and Timestamp first.
func (m *Message) Sign(priv ed25519.PrivateKey) {
	copy(m.From[:], priv.Public().(ed25519.PublicKey))
	h := m.Hash()
	copy(m.Signature[:], ed25519.Sign(priv, h[:]))
}

// Check reports whether m is well formed and signed by From. The error
// wraps ErrInvalid and says what is wrong. Time windows are the caller's:
// see CheckTime.
func (m *Message) Check() error {
	switch {
	case m.From.IsZero():
		return fmt.Errorf("%w: from is required", ErrInvalid)
	case m.To.IsZero():
		return fmt.Errorf("%w: to is required", ErrInvalid)
	case m.Message == "":
		return fmt.Errorf("%w: message is empty", ErrInvalid)
	case len(m.Message) > MaxMessageBytes:
		return fmt.Errorf("%w: message is %d bytes, more than the %d allowed", ErrInvalid, len(m.Message), MaxMessageBytes)
	case !utf8.ValidString(m.Message):
		return fmt.Errorf("%w: message is not valid UTF-8", ErrInvalid)
	case m.Timestamp <= 0:
		return fmt.Errorf("%w: timestamp %d is not a positive Unix time in milliseconds", ErrInvalid, m.Timestamp)
	case m.Signature.IsZero():
		return fmt.Errorf("%w: signature is required", ErrInvalid)
	}
	h := m.Hash()
	if !signature.Verify(m.From.PublicKey(), h[:], m.Signature[:]) {
		return fmt.Errorf("%w: the signature is not from's over this message", ErrInvalid)
	}
	return nil
}

// CheckTime reports whether ts (Unix ms) lies in the window [now-past,
// now+future], saying which way it misses. A zero past or future leaves
// that side open.
func CheckTime(ts, now, past, future int64) error {
	// Compared as differences, which cannot overflow for the positive
	// timestamps Check requires and a positive clock.
	if future > 0 && ts > now && ts-now > future {
		return fmt.Errorf("timestamp %d is %d ms ahead of this node's clock (%d), more than the %d ms allowed", ts, ts-now, now, future)
	}
	if past > 0 && ts < now && now-ts > past {
		return fmt.Errorf("timestamp %d is %d ms behind this node's clock (%d), more than the %d ms allowed", ts, now-ts, now, past)
	}
	return nil
}

// wireSize is the binary form's size without the text.
const wireSize = 32 + 32 + 8 + 2 + 64

// MarshalBinary returns the wire and storage form: from, to, timestamp,
// text length, text, signature. It fails for a text longer than
// MaxMessageBytes, which the form cannot carry.
func (m *Message) MarshalBinary() ([]byte, error) {
	if len(m.Message) > MaxMessageBytes {
		return nil, fmt.Errorf("%w: message is %d bytes, more than the %d allowed", ErrInvalid, len(m.Message), MaxMessageBytes)
	}
	return m.AppendBinary(make([]byte, 0, wireSize+len(m.Message))), nil
}

// AppendBinary appends the MarshalBinary form to dst; the text must fit.
func (m *Message) AppendBinary(dst []byte) []byte {
	dst = append(dst, m.From[:]...)
	dst = append(dst, m.To[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(m.Timestamp))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(m.Message)))
	dst = append(dst, m.Message...)
	return append(dst, m.Signature[:]...)
}

// UnmarshalBinary decodes the MarshalBinary form. It checks the shape only
// (lengths); Check verifies the rest.
func (m *Message) UnmarshalBinary(b []byte) error {
	if len(b) < wireSize {
		return fmt.Errorf("%w: %d bytes, fewer than the %d of an empty message", ErrInvalid, len(b), wireSize)
	}
	n := int(binary.BigEndian.Uint16(b[72:74]))
	if n > MaxMessageBytes {
		return fmt.Errorf("%w: a text of %d bytes, more than the %d allowed", ErrInvalid, n, MaxMessageBytes)
	}
	if len(b) != wireSize+n {
		return fmt.Errorf("%w: %d bytes for a text of %d, want %d", ErrInvalid, len(b), n, wireSize+n)
	}
	copy(m.From[:], b[0:32])
	copy(m.To[:], b[32:64])
	m.Timestamp = int64(binary.BigEndian.Uint64(b[64:72]))
	m.Message = string(b[74 : 74+n])
	copy(m.Signature[:], b[74+n:])
	return nil
}
