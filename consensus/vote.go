package consensus

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/signature"
)

// voteTag opens every vote preimage, so that no other signed message of the
// protocol (a block, an attestation) can be mistaken for a vote.
// V2 votes carry a round and a kind where V1 votes carried a timestamp.
const voteTag = "LATTICE-VOTE-V2"

// MaxVoteHashes bounds the hashes one vote carries, as in Nano.
const MaxVoteHashes = 255

// voteHeaderSize is the wire size of a vote without its hashes and signature:
// representative, round, kind, three reserved bytes, count.
const voteHeaderSize = 32 + 4 + 1 + 3 + 2

// ConfirmedRound is the round of a final vote that attests "this block is
// decided": a representative signs one for a block its node confirmed
// (when a peer asks, where no election runs any more), or once such votes
// from more than Total − Quorum reach it (more than faulty
// representatives can hold, so at least one honest node confirmed the
// block; Bracha's amplification). Only a decided block is attested by an
// honest representative, and a decided block is unique, so honest
// representatives never sign two such votes at one place, and a quorum of
// them confirms as a quorum of final votes of any one round does. It lets
// a node that lags, whose weights moved since the network confirmed the
// block, confirm it with the representatives online now. Elections never
// reach this round: it moves no representative, locks nothing, and a
// prevote in it is malformed.
const ConfirmedRound = math.MaxUint32

// The kinds of votes, in their wire byte.
const (
	kindPrevote = 0
	kindFinal   = 1
)

// Vote says: representative R, in round N of the elections of these blocks,
// prevotes (Final false) or casts its final vote (Final true, a precommit in
// Tendermint's terms) for each of them. An honest representative signs at
// most one prevote and one final vote per election and round; a block is
// confirmed by the final votes of a quorum in one round (see Tally).
//
// JSON carries it for the API and debugging; peers exchange the binary form
// (MarshalBinary).
type Vote struct {
	Representative ledger.Address   `json:"representative"`
	Round          uint32           `json:"round"`
	Final          bool             `json:"final"`
	Hashes         []ledger.Hash    `json:"hashes"`
	Signature      ledger.Signature `json:"signature"`
}

// appendHeader appends representative, round, kind, three zero bytes and
// the hash count.
func (v *Vote) appendHeader(dst []byte) []byte {
	dst = append(dst, v.Representative[:]...)
	dst = binary.BigEndian.AppendUint32(dst, v.Round)
	kind := byte(kindPrevote)
	if v.Final {
		kind = kindFinal
	}
	dst = append(dst, kind, 0, 0, 0)
	return binary.BigEndian.AppendUint16(dst, uint16(len(v.Hashes)))
}

// AppendPreimage appends the bytes a vote's digest is the SHA-256 of: the
// tag "LATTICE-VOTE-V2", the network's genesis hash, the representative, the
// round (4 bytes), the kind (1 byte: 0 prevote, 1 final), three zero bytes,
// the hash count (2 bytes) and the hashes, integers big-endian. The genesis
// hash binds the vote to one network, so a vote of another network never
// verifies here.
func (v *Vote) AppendPreimage(dst []byte, network ledger.Hash) []byte {
	dst = append(dst, voteTag...)
	dst = append(dst, network[:]...)
	dst = v.appendHeader(dst)
	for _, h := range v.Hashes {
		dst = append(dst, h[:]...)
	}
	return dst
}

// Digest returns the SHA-256 of the vote's preimage on network: the message
// the representative signs.
func (v *Vote) Digest(network ledger.Hash) ledger.Hash {
	var buf [len(voteTag) + 32 + voteHeaderSize + 8*32]byte
	return sha256.Sum256(v.AppendPreimage(buf[:0], network))
}

// Sign sets v.Representative to priv's public key and v.Signature to priv's
// signature of the vote's digest on network. Set the timestamp and hashes
// first: the signature covers them.
func (v *Vote) Sign(network ledger.Hash, priv ed25519.PrivateKey) {
	copy(v.Representative[:], priv.Public().(ed25519.PublicKey))
	d := v.Digest(network)
	copy(v.Signature[:], ed25519.Sign(priv, d[:]))
}

// Check reports whether the vote has a valid shape: a non-zero
// representative, no prevote in ConfirmedRound, 1 to MaxVoteHashes hashes,
// none zero and none twice. The error wraps ErrMalformedVote.
func (v *Vote) Check() error {
	if v.Representative.IsZero() {
		return fmt.Errorf("%w: zero representative", ErrMalformedVote)
	}
	if v.Round == ConfirmedRound && !v.Final {
		return fmt.Errorf("%w: a prevote in round %d, which is for final votes of confirmed blocks only", ErrMalformedVote, v.Round)
	}
	if err := checkHashes(v.Hashes); err != nil {
		return err
	}
	for _, h := range v.Hashes {
		if h.IsZero() {
			return fmt.Errorf("%w: a vote for the zero hash", ErrMalformedVote)
		}
	}
	return nil
}

// checkHashes holds the shape rules the wire form enforces: a count of 1 to
// MaxVoteHashes, no duplicates.
func checkHashes(hs []ledger.Hash) error {
	if len(hs) == 0 || len(hs) > MaxVoteHashes {
		return fmt.Errorf("%w: %d hashes, want 1 to %d", ErrMalformedVote, len(hs), MaxVoteHashes)
	}
	if len(hs) <= 16 {
		// Few hashes: comparing every pair beats sorting a copy.
		for i := range hs {
			for j := i + 1; j < len(hs); j++ {
				if hs[i] == hs[j] {
					return fmt.Errorf("%w: hash %s twice", ErrMalformedVote, hs[i])
				}
			}
		}
		return nil
	}
	// Every pair of a full vote was 32k comparisons on every encode and
	// decode, a fifth of a node's CPU under load: sort a copy instead.
	sorted := slices.Clone(hs)
	slices.SortFunc(sorted, func(a, b ledger.Hash) int { return bytes.Compare(a[:], b[:]) })
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return fmt.Errorf("%w: hash %s twice", ErrMalformedVote, sorted[i])
		}
	}
	return nil
}

// Verify checks the vote's shape (Check) and its signature by the
// representative over the digest on network. It wraps ErrMalformedVote or
// ErrBadVoteSignature. The tally trusts the votes it is given, so the node
// calls Verify on every vote before Tally.Vote.
func (v *Vote) Verify(network ledger.Hash) error {
	if err := v.Check(); err != nil {
		return err
	}
	d := v.Digest(network)
	if !signature.Verify(v.Representative.PublicKey(), d[:], v.Signature[:]) {
		return fmt.Errorf("%w: representative %s", ErrBadVoteSignature, v.Representative)
	}
	return nil
}

// AppendBinary appends the vote's wire form to dst: representative (32),
// round (4), kind (1), three zero bytes, hash count (2), the hashes (32
// each), signature (64), integers big-endian. It refuses, with ErrMalformedVote, a vote whose form
// UnmarshalBinary would refuse (no hashes, more than MaxVoteHashes, a hash
// twice), so nothing it writes is unreadable.
func (v *Vote) AppendBinary(dst []byte) ([]byte, error) {
	if err := checkHashes(v.Hashes); err != nil {
		return dst, err
	}
	dst = v.appendHeader(dst)
	for _, h := range v.Hashes {
		dst = append(dst, h[:]...)
	}
	return append(dst, v.Signature[:]...), nil
}

// MarshalBinary returns the vote's wire form (see AppendBinary).
func (v *Vote) MarshalBinary() ([]byte, error) {
	return v.AppendBinary(make([]byte, 0, voteHeaderSize+32*len(v.Hashes)+64))
}

// UnmarshalBinary parses the wire form strictly: it refuses truncated input,
// trailing bytes, a kind other than 0 or 1, reserved bytes that are not
// zero, a count of 0 or above MaxVoteHashes and a hash listed twice, so that
// whatever it accepts re-encodes to the same bytes. It checks
// the form only; Verify checks the rest. On error v is unchanged.
func (v *Vote) UnmarshalBinary(data []byte) error {
	if len(data) < voteHeaderSize {
		return fmt.Errorf("%w: %d bytes, truncated", ErrMalformedVote, len(data))
	}
	if kind := data[36]; kind != kindPrevote && kind != kindFinal {
		return fmt.Errorf("%w: kind %d, want 0 (prevote) or 1 (final)", ErrMalformedVote, kind)
	}
	if data[37]|data[38]|data[39] != 0 {
		return fmt.Errorf("%w: reserved bytes are not zero", ErrMalformedVote)
	}
	n := int(binary.BigEndian.Uint16(data[40:42]))
	if n == 0 || n > MaxVoteHashes {
		return fmt.Errorf("%w: %d hashes, want 1 to %d", ErrMalformedVote, n, MaxVoteHashes)
	}
	if want := voteHeaderSize + 32*n + 64; len(data) != want {
		if len(data) < want {
			return fmt.Errorf("%w: %d bytes for %d hashes, truncated", ErrMalformedVote, len(data), n)
		}
		return fmt.Errorf("%w: %d trailing bytes", ErrMalformedVote, len(data)-want)
	}
	var nv Vote
	copy(nv.Representative[:], data[0:32])
	nv.Round = binary.BigEndian.Uint32(data[32:36])
	nv.Final = data[36] == kindFinal
	nv.Hashes = make([]ledger.Hash, n)
	for i := range nv.Hashes {
		copy(nv.Hashes[i][:], data[voteHeaderSize+32*i:])
	}
	copy(nv.Signature[:], data[voteHeaderSize+32*n:])
	if err := checkHashes(nv.Hashes); err != nil {
		return err
	}
	*v = nv
	return nil
}
