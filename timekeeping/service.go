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

// What an honest timekeeper signs, and when (docs/protocol.md, section
// 22.4). A timekeeper signs each lease and purpose at most once, and keeps
// what it signed: asked again, it answers the same attestation, so a key
// with two different attestations for one lease and purpose is provably
// misbehaving (Equivocation). A start is renewed once half the
// committee's precision window has passed (Renews), so only two starts
// closer than that are.

// Refusals of Due; each wraps ErrNotDue.
var ErrNotDue = errors.New("not due")

// Due reports whether an honest timekeeper attests purpose for lease r at
// its clock's time now (Unix ms):
//   - start while the lease is open (not accepted, not settled) and before
//     its acceptance deadline;
//   - expire from the deadline on, while the lease has not started;
//   - end once an active lease has run its duration from its attested start;
//   - ending while the lease is active (that its consumer's notice is in
//     the ledger, the caller checks: a record does not say).
func Due(r *ledger.LeaseRecord, purpose Purpose, now int64) error {
	switch purpose {
	case Start:
		switch {
		case r.Settled():
			return fmt.Errorf("%w: lease %s is %s", ErrNotDue, r.Hash, r.Status())
		case r.Accepted():
			return fmt.Errorf("%w: lease %s was accepted by %s", ErrNotDue, r.Hash, r.Accept)
		case now >= r.Deadline():
			return fmt.Errorf("%w: lease %s's acceptance deadline %d has passed (now %d)", ErrNotDue, r.Hash, r.Deadline(), now)
		}
	case Started:
		switch {
		case r.Stage != ledger.StageOpen:
			return fmt.Errorf("%w: lease %s is %s", ErrNotDue, r.Hash, r.Status())
		case !r.Accepted():
			return fmt.Errorf("%w: lease %s has no accept in this timekeeper's ledger", ErrNotDue, r.Hash)
		case now >= r.Deadline():
			return fmt.Errorf("%w: lease %s's acceptance deadline %d has passed (now %d)", ErrNotDue, r.Hash, r.Deadline(), now)
		}
	case Expire:
		switch {
		case r.Stage != ledger.StageOpen:
			return fmt.Errorf("%w: lease %s is %s", ErrNotDue, r.Hash, r.Status())
		case now < r.Deadline():
			return fmt.Errorf("%w: lease %s may be accepted until %d (now %d)", ErrNotDue, r.Hash, r.Deadline(), now)
		}
	case End:
		switch {
		case r.Stage != ledger.StageActive:
			return fmt.Errorf("%w: lease %s is %s, not active", ErrNotDue, r.Hash, r.Status())
		case now < r.End():
			return fmt.Errorf("%w: lease %s runs until %d (now %d)", ErrNotDue, r.Hash, r.End(), now)
		}
	case Ending:
		if r.Stage != ledger.StageActive {
			return fmt.Errorf("%w: lease %s is %s, not active", ErrNotDue, r.Hash, r.Status())
		}
	default:
		return fmt.Errorf("%w: unknown purpose %d", ErrNotDue, purpose)
	}
	return nil
}

// NextPurpose returns what the lease's course needs attested next at now:
// start while it may be accepted and is not, expire past the deadline
// while it has not started, end once an active lease has run; false when
// nothing is due.
func NextPurpose(r *ledger.LeaseRecord, now int64) (Purpose, bool) {
	for _, p := range []Purpose{Start, Started, Expire, End} {
		if Due(r, p, now) == nil {
			return p, true
		}
	}
	return 0, false
}

// ParsePurpose maps "start", "started", "end", "expire" and "ending" to
// their Purpose.
func ParsePurpose(s string) (Purpose, error) {
	for _, p := range []Purpose{Start, Started, End, Expire, Ending} {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("purpose %q: want start, started, end, expire or ending", s)
}

// Pick chooses, from attestations gathered for one lease and purpose, a
// set the committee accepts (Judge), in ascending order of key: valid, by
// distinct members, at least the threshold; for a start, as many as fit
// one precision window (the one with the most; the earliest of those).
// It returns an error when no such set exists.
func Pick(network ledger.Hash, c Committee, purpose Purpose, lease ledger.Hash, atts []ledger.Attestation) ([]ledger.Attestation, error) {
	var ok []ledger.Attestation
	for _, a := range atts {
		if a.Timestamp <= 0 || !slices.Contains(c.Keys, a.PublicKey) || !Verify(a, network, purpose, lease) {
			continue
		}
		if slices.ContainsFunc(ok, func(o ledger.Attestation) bool { return o.PublicKey == a.PublicKey }) {
			continue
		}
		ok = append(ok, a)
	}
	slices.SortFunc(ok, func(a, b ledger.Attestation) int {
		if a.Timestamp != b.Timestamp {
			return cmpInt(a.Timestamp, b.Timestamp)
		}
		return slices.Compare(a.PublicKey[:], b.PublicKey[:])
	})
	best := ok
	if purpose == Start || purpose == Ending {
		// The largest set within one precision window (the earliest of
		// those); an expiry, an end or a started needs no window (Judge).
		best = nil
		for i := range ok {
			j := i
			for j < len(ok) && ok[j].Timestamp-ok[i].Timestamp <= c.PrecisionMS {
				j++
			}
			if j-i > len(best) {
				best = ok[i:j]
			}
		}
	}
	if len(best) > MaxAttestations {
		best = best[:MaxAttestations]
	}
	if len(best) < c.Threshold || len(best) == 0 {
		return nil, fmt.Errorf("%w: %d valid attestations of the %s agree within %d ms, the committee's threshold is %d",
			ErrInvalid, len(best), purpose, c.PrecisionMS, c.Threshold)
	}
	out := slices.Clone(best)
	slices.SortFunc(out, func(a, b ledger.Attestation) int { return bytes.Compare(a.PublicKey[:], b.PublicKey[:]) })
	return out, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Announcement is a timekeeper's signed statement of the node that
// answers its attestation requests, gossiped so that providers and
// settlers find the committee's nodes.
type Announcement struct {
	Key       ledger.Address   `json:"public_key"`
	NodePeer  string           `json:"node_peer"`
	Timestamp int64            `json:"timestamp"`
	Signature ledger.Signature `json:"signature"`
}

const announceTag = "LATTICE-TIMEKEEPER-V1"

// Digest is SHA-256 of "LATTICE-TIMEKEEPER-V1", the network (32), the key
// (32), the timestamp (i64), node_peer's length (u8) and node_peer.
func (a *Announcement) Digest(network ledger.Hash) ledger.Hash {
	b := make([]byte, 0, len(announceTag)+32+32+8+1+len(a.NodePeer))
	b = append(b, announceTag...)
	b = append(b, network[:]...)
	b = append(b, a.Key[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(a.Timestamp))
	b = append(b, byte(len(a.NodePeer)))
	b = append(b, a.NodePeer...)
	return sha256.Sum256(b)
}

// Sign sets a.Key to priv's public key and signs the announcement.
func (a *Announcement) Sign(priv ed25519.PrivateKey, network ledger.Hash) {
	copy(a.Key[:], priv.Public().(ed25519.PublicKey))
	d := a.Digest(network)
	copy(a.Signature[:], ed25519.Sign(priv, d[:]))
}

// Check reports whether a is well formed and signed by its key.
func (a *Announcement) Check(network ledger.Hash) error {
	switch {
	case a.Key.IsZero():
		return fmt.Errorf("%w: public_key is required", ErrInvalid)
	case a.NodePeer == "" || len(a.NodePeer) > 128:
		return fmt.Errorf("%w: node_peer must be 1 to 128 bytes", ErrInvalid)
	case a.Timestamp <= 0:
		return fmt.Errorf("%w: timestamp %d is not a positive Unix time in milliseconds", ErrInvalid, a.Timestamp)
	}
	d := a.Digest(network)
	if !signature.Verify(a.Key.PublicKey(), d[:], a.Signature[:]) {
		return fmt.Errorf("%w: the signature is not the key's over this announcement", ErrInvalid)
	}
	return nil
}
