// Package timekeeping holds the pure rules of trusted time for leases: a
// timekeeper's attestation (a signed statement "lease L reached purpose P
// at time T"), and how a committee's attestations become one time that
// every node computes alike: enough distinct members, valid signatures,
// timestamps that agree within a precision, and their median.
//
// Two different signatures by one key for the same network, lease and
// purpose are provable misbehaviour (Equivocation): ed25519 signatures are
// deterministic, so they can only come from two different timestamps. A
// start is the exception, within limits: it must agree with the other
// members' within the committee's precision, so a member renews it once
// half that window has passed (Renews), and only two starts closer than
// half the window are evidence.
//
// The package does no I/O and never reads the clock.
package timekeeping

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/signature"
)

// tag opens every attestation's preimage, so that an attestation can never
// be mistaken for any other signed record of the protocol.
const tag = "LATTICE-ATTESTATION-V1"

// MaxAttestations bounds the attestations a block carries (the largest
// committee, statechain.MaxTimekeepers, is as large).
const MaxAttestations = ledger.MaxAttestations

// Purpose is what an attestation attests (ledger.Purpose: the ledger's
// lease rules name them too).
type Purpose = ledger.Purpose

// The purposes.
const (
	// Start: the lease starts (carried by lease_accept).
	Start = ledger.PurposeStart
	// End: the lease has reached its end (the lease_settle that ends it).
	End = ledger.PurposeEnd
	// Expire: the lease's acceptance timeout has passed (the refund).
	Expire = ledger.PurposeExpire
	// Started: the provider's accept was in the timekeeper's ledger
	// before the acceptance deadline (the settle that starts the lease).
	Started = ledger.PurposeStarted
	// Ending: the consumer's notice to end an active lease early was in
	// the timekeeper's ledger (the lease_settle that ends it early).
	Ending = ledger.PurposeEnding
)

// Errors of Judge; each wraps ErrInvalid.
var (
	ErrInvalid = errors.New("invalid attestations")
)

// Preimage returns the bytes whose SHA-256 a timekeeper signs: the tag
// "LATTICE-ATTESTATION-V1", the network (the ledger genesis hash, 32
// bytes), the purpose (1 byte), the lease block's hash (32) and the
// timestamp (i64, Unix ms, big-endian).
func Preimage(network ledger.Hash, purpose Purpose, lease ledger.Hash, timestamp int64) []byte {
	b := make([]byte, 0, len(tag)+32+1+32+8)
	b = append(b, tag...)
	b = append(b, network[:]...)
	b = append(b, byte(purpose))
	b = append(b, lease[:]...)
	return binary.BigEndian.AppendUint64(b, uint64(timestamp))
}

// Digest is SHA-256 of the preimage: what the signature covers.
func Digest(network ledger.Hash, purpose Purpose, lease ledger.Hash, timestamp int64) ledger.Hash {
	return sha256.Sum256(Preimage(network, purpose, lease, timestamp))
}

// Sign returns priv's attestation that lease reached purpose at timestamp.
func Sign(priv ed25519.PrivateKey, network ledger.Hash, purpose Purpose, lease ledger.Hash, timestamp int64) ledger.Attestation {
	var a ledger.Attestation
	copy(a.PublicKey[:], priv.Public().(ed25519.PublicKey))
	a.Timestamp = timestamp
	d := Digest(network, purpose, lease, timestamp)
	copy(a.Signature[:], ed25519.Sign(priv, d[:]))
	return a
}

// Verify reports whether a is a valid attestation by its key.
func Verify(a ledger.Attestation, network ledger.Hash, purpose Purpose, lease ledger.Hash) bool {
	d := Digest(network, purpose, lease, a.Timestamp)
	return signature.Verify(a.PublicKey.PublicKey(), d[:], a.Signature[:])
}

// Committee is the timekeeper committee a block's attestations are
// judged against (the state chain's timekeepers parameter at the index
// the block names).
type Committee struct {
	Keys        []ledger.Address
	Threshold   int
	PrecisionMS int64
}

// Judge checks atts, a block's attestations that lease reached purpose,
// against the committee and returns the attested time: the median of the
// timestamps (of an even count, the lower middle one, so that every node
// picks the same). It refuses, wrapping ErrInvalid: an empty committee;
// more than MaxAttestations; an attestation by a key outside the
// committee or by one key twice; a signature that does not verify; fewer
// than the threshold; timestamps further apart than the precision.
func Judge(network ledger.Hash, c Committee, purpose Purpose, lease ledger.Hash, atts []ledger.Attestation) (int64, error) {
	switch {
	case len(c.Keys) == 0 || c.Threshold < 1:
		return 0, fmt.Errorf("%w: the network names no timekeeper committee", ErrInvalid)
	case len(atts) > MaxAttestations:
		return 0, fmt.Errorf("%w: %d attestations, more than %d", ErrInvalid, len(atts), MaxAttestations)
	case len(atts) < c.Threshold:
		return 0, fmt.Errorf("%w: %d attestations of the %s, the committee's threshold is %d", ErrInvalid, len(atts), purpose, c.Threshold)
	}
	times := make([]int64, 0, len(atts))
	for i, a := range atts {
		if !slices.Contains(c.Keys, a.PublicKey) {
			return 0, fmt.Errorf("%w: attestation %d is by %s, not a member of the timekeeper committee", ErrInvalid, i, a.PublicKey)
		}
		if i > 0 && bytes.Compare(atts[i-1].PublicKey[:], a.PublicKey[:]) >= 0 {
			// One order: ascending keys (so no key twice), so that a set
			// of attestations makes one block, not one per permutation.
			return 0, fmt.Errorf("%w: attestations must be in ascending order of public key, each key once (attestation %d)", ErrInvalid, i)
		}
		if a.Timestamp <= 0 {
			return 0, fmt.Errorf("%w: attestation %d has timestamp %d", ErrInvalid, i, a.Timestamp)
		}
		if !Verify(a, network, purpose, lease) {
			return 0, fmt.Errorf("%w: attestation %d by %s does not verify for the %s of lease %s", ErrInvalid, i, a.PublicKey, purpose, lease)
		}
		times = append(times, a.Timestamp)
	}
	slices.Sort(times)
	// A start is a point the lease's clock runs from: the members must
	// agree on it within the precision. An expiry, an end or a started is
	// a bound that an honest member never signs before (or, for started,
	// after) it holds, and a threshold holds an honest member while fewer
	// than a threshold are faulty: however far apart the times are, an
	// accepted set shows the bound holds, and a timekeeper that signs once
	// cannot be made to sign again closer to the others. An ending is a
	// point too, the time that prices the lease's service: its set must
	// fit the precision as a start's does. A set holds an honest member
	// while fewer than a threshold are faulty, so its median is then
	// within the precision of an honest member's time, whoever chose the
	// set. An ending is not renewed (the provider would gain by asking
	// late): a notice whose endings never fit a window is followed by
	// another notice, which is attested afresh.
	if spread := times[len(times)-1] - times[0]; (purpose == Start || purpose == Ending) && spread > c.PrecisionMS {
		return 0, fmt.Errorf("%w: attested times spread over %d ms, more than the committee's precision of %d ms", ErrInvalid, spread, c.PrecisionMS)
	}
	return times[(len(times)-1)/2], nil
}

// Evidence is a timekeeper's proof of misbehaviour: two valid, different
// attestations by one key for one lease and purpose.
type Evidence struct {
	Key     ledger.Address     `json:"public_key"`
	Purpose string             `json:"purpose"`
	Lease   ledger.Hash        `json:"lease_hash"`
	A, B    ledger.Attestation `json:"-"`
	// Attestations are A and B, for the JSON form.
	Attestations [2]ledger.Attestation `json:"attestations"`
}

// Renews reports whether a timekeeper that attested purpose at signed
// (Unix ms) signs it anew at now rather than answer the attestation it
// keeps, given the lease's committee's precision. Only a start is renewed,
// once half its window has passed: a set of starts must fit one window,
// and a member that signed once and for all could leave a lease that can
// never start when another member can only sign later (it had not yet
// heard of the lease, or was unreachable): the lease would wait for its
// refund. Half the window, so that a kept start and the others' fresh
// ones still fit a window with room for the time a request takes. An
// expiry, an end or a started is a bound that holds once reached, so a
// set of them needs no window (Judge) and is never renewed.
func Renews(purpose Purpose, precisionMS, signed, now int64) bool {
	return purpose == Start && precisionMS > 0 && now-signed > precisionMS/2
}

// Equivocation returns the evidence when a and b are two valid, different
// attestations by one key for lease and purpose on network. Two starts
// more than half of precisionMS apart (the lease's committee's precision)
// are not evidence, since an honest member renews its start that often
// (Renews); nor are two starts when precisionMS is 0 (not known).
func Equivocation(network ledger.Hash, purpose Purpose, lease ledger.Hash, precisionMS int64, a, b ledger.Attestation) (Evidence, bool) {
	if a.PublicKey != b.PublicKey || bytes.Equal(a.Signature[:], b.Signature[:]) {
		return Evidence{}, false
	}
	if purpose == Start && (precisionMS <= 0 || Renews(purpose, precisionMS, a.Timestamp, b.Timestamp) || Renews(purpose, precisionMS, b.Timestamp, a.Timestamp)) {
		return Evidence{}, false
	}
	if !Verify(a, network, purpose, lease) || !Verify(b, network, purpose, lease) {
		return Evidence{}, false
	}
	return Evidence{Key: a.PublicKey, Purpose: purpose.String(), Lease: lease, A: a, B: b, Attestations: [2]ledger.Attestation{a, b}}, true
}
