package leasenet

import (
	"encoding/json"
	"errors"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/timekeeping"
)

// Misbehaviour: a timekeeper signs each lease and purpose once (a start
// once per precision window, timekeeping.Renews), so two different valid
// attestations by one key for one lease and purpose prove it signed twice
// (timekeeping.Equivocation). Every node keeps the
// attestations it sees in blocks and records the evidence when a second,
// different one turns up; GET /timekeepers/evidence lists it.

type evidenceState struct {
	mu sync.Mutex // one observation at a time: read, then write
}

// purposeOf returns what the attestations of b attest, if b carries any.
func (s *Service) purposeOf(b *ledger.Block) (ledger.Hash, ledger.Purpose, bool) {
	switch b.Type {
	case ledger.TypeLeaseAccept:
		return b.Source, timekeeping.Start, len(b.Attestations) > 0
	case ledger.TypeLeaseSettle:
		if len(b.Attestations) == 0 {
			return ledger.Hash{}, 0, false
		}
		// The refund (first block, naming the lease) carries expiry
		// attestations, the end (second, naming the lease) end ones, the
		// early end (second, naming the consumer's notice) ending ones,
		// which name the notice; the start (first, naming the accept)
		// started ones, whose lease is the accept's.
		if !b.Previous.IsZero() {
			e, found, err := s.n.Store.Entry(b.Source)
			if err != nil || !found {
				return ledger.Hash{}, 0, false
			}
			if e.Block.Type == ledger.TypeSend {
				return b.Source, timekeeping.Ending, true
			}
			return b.Source, timekeeping.End, true
		}
		if e, found, err := s.n.Store.Entry(b.Source); err == nil && found && e.Block.Type == ledger.TypeLeaseAccept {
			return e.Block.Source, timekeeping.Started, true
		}
		return b.Source, timekeeping.Expire, true
	}
	return ledger.Hash{}, 0, false
}

func seenKey(prefix byte, k ledger.Address, p ledger.Purpose, lease ledger.Hash) []byte {
	out := append([]byte{prefix}, k[:]...)
	out = append(out, byte(p))
	return append(out, lease[:]...)
}

// observe checks the attestations of an applied block against those seen
// before.
func (s *Service) observe(b *ledger.Block) {
	lease, p, ok := s.purposeOf(b)
	if !ok {
		return
	}
	var precision int64 // the rule needs it for starts only
	if p == timekeeping.Start {
		precision = s.precision(lease)
	}
	s.evidence.mu.Lock()
	defer s.evidence.mu.Unlock()
	for _, a := range b.Attestations {
		// Only a valid attestation is kept or compared: a refused block's
		// garbage must not stand in for the key's real one.
		if !timekeeping.Verify(a, s.cfg.Terms.Network, p, lease) {
			continue
		}
		key := seenKey(pSeen, a.PublicKey, p, lease)
		v, closer, err := s.db.Get(key)
		var kept []ledger.Attestation
		switch {
		case errors.Is(err, pebble.ErrNotFound):
		case err != nil:
			s.log.Warn("reading attestations seen", "err", err)
			return
		default:
			kept = parseAttestations(v)
			closer.Close()
		}
		known := false
		for _, old := range kept {
			if old.Signature == a.Signature {
				known = true
				break
			}
			ev, bad := timekeeping.Equivocation(s.cfg.Terms.Network, p, lease, precision, old, a)
			if !bad {
				continue
			}
			data, _ := json.Marshal(ev)
			if err := s.db.Set(seenKey(pEvidence, a.PublicKey, p, lease), data, pebble.Sync); err != nil {
				s.log.Warn("recording timekeeper evidence", "err", err)
				break
			}
			s.log.Warn("a timekeeper signed two different attestations for one lease and purpose",
				"timekeeper", a.PublicKey, "lease", lease, "purpose", p, "times", []int64{old.Timestamp, a.Timestamp})
			break
		}
		// One attestation of a key suffices to catch a second, except for
		// starts, which an honest member renews every half precision: two
		// starts close together are evidence whichever came first, so a
		// node keeps each start it sees (a few: one a contender of the
		// lease's accept), up to maxKeptStarts.
		if known || len(kept) > 0 && (p != timekeeping.Start || len(kept) >= maxKeptStarts) {
			continue
		}
		var out []byte
		for _, old := range kept {
			out = appendAttestation(out, old)
		}
		if err := s.db.Set(key, appendAttestation(out, a), pebble.NoSync); err != nil {
			s.log.Warn("keeping an attestation seen", "err", err)
		}
	}
}

// maxKeptStarts bounds the starts of one key and lease a node keeps to
// compare: each came in a contender of the lease's accept.
const maxKeptStarts = 16

// parseAttestations reads what observe kept: attestations back to back.
// A malformed record yields what precedes it.
func parseAttestations(v []byte) []ledger.Attestation {
	var out []ledger.Attestation
	for len(v) >= attestationSize {
		a, err := parseAttestation(v[:attestationSize])
		if err != nil {
			break
		}
		out = append(out, a)
		v = v[attestationSize:]
	}
	return out
}

// precision is the precision of lease's committee, 0 when it cannot be
// read (then no two starts are evidence: timekeeping.Equivocation).
func (s *Service) precision(lease ledger.Hash) int64 {
	r, found, err := s.lease(lease)
	if err != nil || !found {
		return 0
	}
	c, err := s.committee(r)
	if err != nil {
		return 0
	}
	return c.PrecisionMS
}

// Evidence lists the timekeepers' equivocations this node recorded, by
// key, purpose and lease.
func (s *Service) Evidence() ([]timekeeping.Evidence, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pEvidence}, UpperBound: []byte{pEvidence + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	out := []timekeeping.Evidence{}
	for it.First(); it.Valid(); it.Next() {
		var ev timekeeping.Evidence
		if err := json.Unmarshal(it.Value(), &ev); err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, it.Error()
}
