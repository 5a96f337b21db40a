package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
)

// WorkValue returns the proof-of-work value of nonce for a block hash: the
// first 8 bytes, big-endian, of SHA-256(hash || nonce as 8 big-endian bytes).
// Work binds to the block hash, so it covers every field of the block and
// cannot be reused for another block.
func WorkValue(h Hash, nonce int64) uint64 {
	var buf [40]byte
	copy(buf[:], h[:])
	binary.BigEndian.PutUint64(buf[32:], uint64(nonce))
	sum := sha256.Sum256(buf[:])
	return binary.BigEndian.Uint64(sum[:8])
}

// Threshold is a proof-of-work difficulty: a nonce is valid when its
// WorkValue is at least the threshold. A nonce then takes on average
// 2^64 / (2^64 - threshold) tries to find. JSON carries it as 16 hex digits.
type Threshold uint64

// String returns the threshold as 16 lowercase hex digits.
func (t Threshold) String() string { return fmt.Sprintf("%016x", uint64(t)) }

// MarshalText implements encoding.TextMarshaler.
func (t Threshold) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Threshold) UnmarshalText(b []byte) error {
	if len(b) != 16 {
		return fmt.Errorf("work threshold %q: want 16 hex digits", b)
	}
	v, err := strconv.ParseUint(string(b), 16, 64)
	if err != nil {
		return fmt.Errorf("work threshold %q: not hexadecimal", b)
	}
	*t = Threshold(v)
	return nil
}

// Met reports whether nonce satisfies t for hash h.
func (t Threshold) Met(h Hash, nonce int64) bool { return WorkValue(h, nonce) >= uint64(t) }

// ExpectedTries is the mean number of nonces to try before one meets t.
func (t Threshold) ExpectedTries() float64 {
	return 18446744073709551616.0 / (18446744073709551616.0 - float64(uint64(t)))
}

// Work holds a network's proof-of-work thresholds.
type Work struct {
	Send    Threshold `json:"send"`
	Receive Threshold `json:"receive"`
}

// For returns the threshold a block of type t must meet.
func (w Work) For(t BlockType) Threshold {
	if t.SendLike() {
		return w.Send
	}
	return w.Receive
}

// Max returns the higher threshold, which a nonce for any block type meets.
func (w Work) Max() Threshold { return max(w.Send, w.Receive) }

// Proof-of-work thresholds of the public network and of `lattice dev`.
// The public send threshold takes about 2^26 tries (a few seconds on two
// cores), receive about 2^23; dev needs about 2^12 and 2^8, enough to keep
// the code path honest without slowing tests.
var (
	PublicWork = Work{Send: 0xffffffc000000000, Receive: 0xfffffe0000000000}
	DevWork    = Work{Send: 0xfff0000000000000, Receive: 0xff00000000000000}
)
