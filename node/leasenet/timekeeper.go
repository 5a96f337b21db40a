package leasenet

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/internal/pebblekv"
	"github.com/latticenet/lattice/internal/strictjson"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/timekeeping"
)

// Topic and protocol names, under the host's /lattice/<genesis>/ namespace.
const (
	topicTimekeepers = "timekeepers/1"
	protocolAttest   = "attest/1"
	// maxMessage bounds a request or an answer on an attestation stream.
	maxMessage = 1024
	// staleAfter is how many announce intervals an announcement lives.
	staleAfter = 5
	// maxTimekeepers bounds the announcements a node keeps (keys cost
	// nothing to make); committee members are never the ones dropped.
	maxTimekeepers = 1024
	// announceSkew is how far ahead of this node's clock an announcement
	// may be stamped.
	announceSkew = time.Minute
)

// The store's tables, each a one-byte key prefix.
const (
	pSigned   byte = 'a' // purpose (1) || lease (32) → this timekeeper's attestation
	pSeen     byte = 's' // key (32) || purpose (1) || lease (32) → the attestations seen in blocks (one; starts, up to maxKeptStarts)
	pEvidence byte = 'e' // key (32) || purpose (1) || lease (32) → evidence (JSON)
)

type announcement = timekeeping.Announcement

type tkState struct {
	mu      sync.Mutex
	records map[ledger.Address]*announcement
	// heard is when this node kept each record, by its own clock.
	heard map[ledger.Address]int64
	// members caches committeeTiers at the state chain's index membersAt.
	members   map[ledger.Address]int
	membersAt uint64
	signMu    sync.Mutex // one signing at a time: sign-once is read, then write
	topic     *p2p.Topic
}

func (s *Service) startTimekeeping() error {
	var err error
	if s.tk.topic, err = s.h.Join(topicTimekeepers, s.validateAnnouncement, func(peer.ID, []byte) {}); err != nil {
		return err
	}
	if s.cfg.Timekeeper != nil {
		s.keepAnnouncement(s.announcement())
		s.h.Handle(protocolAttest, s.serveAttest)
	}
	return nil
}

// announcement returns this timekeeper's announcement, signed now.
func (s *Service) announcement() *announcement {
	a := &announcement{NodePeer: s.h.ID().String(), Timestamp: s.now()}
	a.Sign(s.cfg.Timekeeper.Private(), s.cfg.Terms.Network)
	return a
}

// announceLoop announces this timekeeper every Announce, and as soon as
// a peer joins the topic that the last announcement did not reach (or
// rejoins it: a restarted node keeps its peer id but not what it heard),
// at most once a second for joins: gossip does not replay old messages,
// and a node that started after it would otherwise not hear of it for up
// to Announce, unable to gather the committee's attestations meanwhile.
func (s *Service) announceLoop(ctx context.Context) {
	var (
		last    time.Time            // of the last announcement published
		reached = map[peer.ID]bool{} // the topic's peers then, less those gone since
	)
	joinGap := min(s.cfg.Announce, time.Second)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(min(s.cfg.Announce, 250*time.Millisecond)):
		}
		peers := s.tk.topic.Peers()
		for p := range reached {
			if !slices.Contains(peers, p) {
				delete(reached, p)
			}
		}
		joined := slices.ContainsFunc(peers, func(p peer.ID) bool { return !reached[p] })
		if since := time.Since(last); since < s.cfg.Announce && (!joined || since < joinGap) {
			continue
		}
		a := s.announcement()
		s.keepAnnouncement(a)
		if len(peers) == 0 {
			continue
		}
		data, _ := json.Marshal(a)
		if err := s.tk.topic.Publish(ctx, data); err != nil && ctx.Err() == nil {
			s.log.Debug("publish timekeeper announcement", "err", err)
			continue
		}
		last = time.Now()
		clear(reached)
		for _, p := range peers {
			reached[p] = true
		}
	}
}

var errEarly = errors.New("leasenet: an announcement stamped ahead of this node's clock")

func (s *Service) validateAnnouncement(_ context.Context, from peer.ID, data []byte) p2p.Verdict {
	if from == s.h.ID() {
		return p2p.Accept
	}
	var a announcement
	if err := strictjson.Unmarshal(data, &a); err != nil {
		return p2p.Reject
	}
	if err := a.Check(s.cfg.Terms.Network); err != nil {
		return p2p.Reject
	}
	if a.Timestamp > s.cfg.Now().Add(announceSkew).UnixMilli() {
		return p2p.Ignore
	}
	if !s.keepAnnouncement(&a) {
		return p2p.Ignore
	}
	return p2p.Accept
}

// keepAnnouncement holds a when it is newer than the one held for its key.
//
// Keys cost nothing to make, so the records are bounded, and when they
// are full of fresh ones a newcomer takes the place of the lowest record
// only if it ranks above it: first by standing (a member of the committee
// at the state chain's tip, then of any committee the chain ever named,
// since a lease is judged by the committee of the index it names for its
// whole life, then a stranger), then by age. A record's age is that of
// the earlier of its stamp and its arrival here, so that one stamped
// ahead of this node's clock, as it may be by announceSkew, ranks no
// newer than one that came at the same time stamped right.
func (s *Service) keepAnnouncement(a *announcement) bool {
	s.tk.mu.Lock()
	defer s.tk.mu.Unlock()
	now := s.now()
	limit := now - staleAfter*s.cfg.Announce.Milliseconds()
	if a.Timestamp < limit {
		return false
	}
	if old, ok := s.tk.records[a.Key]; ok && old.Timestamp >= a.Timestamp {
		return false
	}
	if _, ok := s.tk.records[a.Key]; !ok && len(s.tk.records) >= maxTimekeepers {
		for k, r := range s.tk.records {
			if r.Timestamp < limit {
				delete(s.tk.records, k)
				delete(s.tk.heard, k)
			}
		}
		if len(s.tk.records) >= maxTimekeepers {
			tiers := s.committeeTiers()
			rank := func(k ledger.Address, stamp, heard int64) [2]int64 {
				return [2]int64{int64(tiers[k]), min(stamp, heard)}
			}
			var lowest *announcement
			var low [2]int64
			for k, r := range s.tk.records {
				if rk := rank(k, r.Timestamp, s.tk.heard[k]); lowest == nil || cmpRank(rk, low) < 0 {
					lowest, low = r, rk
				}
			}
			if cmpRank(rank(a.Key, a.Timestamp, now), low) <= 0 {
				return false
			}
			delete(s.tk.records, lowest.Key)
			delete(s.tk.heard, lowest.Key)
		}
	}
	s.tk.records[a.Key] = a
	s.tk.heard[a.Key] = now
	return true
}

func cmpRank(a, b [2]int64) int {
	if c := cmp.Compare(a[0], b[0]); c != 0 {
		return c
	}
	return cmp.Compare(a[1], b[1])
}

// Standing of a timekeeper's key when records are full (committeeTiers).
const (
	tierStranger = iota
	tierFormer   // a member of a committee the state chain named before its tip
	tierCurrent  // a member of the committee at the tip
)

// committeeTiers ranks the keys of every committee the state chain named,
// up to its tip: tierCurrent for the tip's, tierFormer for the others'.
// Called with tk.mu held; cached until the tip moves.
func (s *Service) committeeTiers() map[ledger.Address]int {
	if s.cfg.TipIndex == nil {
		return nil
	}
	tip := s.cfg.TipIndex()
	if s.tk.members != nil && s.tk.membersAt == tip {
		return s.tk.members
	}
	out := map[ledger.Address]int{}
	for i := tip; ; i-- {
		tier := tierFormer
		if i == tip {
			tier = tierCurrent
		}
		if st, ok := s.cfg.Terms.StateAt(i); ok {
			if p, err := st.Params(); err == nil {
				for _, k := range p.Timekeepers.Keys {
					out[k] = max(out[k], tier)
				}
			}
		}
		if i == 0 {
			break
		}
	}
	s.tk.members, s.tk.membersAt = out, tip
	return out
}

// Timekeeper and Timekeepers are GET /timekeepers's (package nodewire).
type (
	Timekeeper  = nodewire.Timekeeper
	Timekeepers = nodewire.Timekeepers
)

// Timekeepers lists the committee at the state chain's tip and every
// timekeeper heard of recently.
func (s *Service) Timekeepers(tip uint64) (Timekeepers, error) {
	st, ok := s.cfg.Terms.StateAt(tip)
	if !ok {
		return Timekeepers{}, fmt.Errorf("leasenet: no state at index %d", tip)
	}
	p, err := st.Params()
	if err != nil {
		return Timekeepers{}, err
	}
	out := Timekeepers{Index: tip, Threshold: p.Timekeepers.Threshold, PrecisionMS: p.Timekeepers.PrecisionMS, Timekeepers: []Timekeeper{}}
	limit := s.now() - staleAfter*s.cfg.Announce.Milliseconds()
	s.tk.mu.Lock()
	seen := map[ledger.Address]bool{}
	for _, k := range p.Timekeepers.Keys {
		t := Timekeeper{Key: k, InCommittee: true}
		if a, ok := s.tk.records[k]; ok && a.Timestamp >= limit {
			t.NodePeer, t.UpdatedAt, t.Heard = a.NodePeer, a.Timestamp, true
		}
		out.Timekeepers = append(out.Timekeepers, t)
		seen[k] = true
	}
	for k, a := range s.tk.records {
		if !seen[k] && a.Timestamp >= limit {
			out.Timekeepers = append(out.Timekeepers, Timekeeper{Key: k, NodePeer: a.NodePeer, UpdatedAt: a.Timestamp, Heard: true})
		}
	}
	s.tk.mu.Unlock()
	slices.SortFunc(out.Timekeepers, func(a, b Timekeeper) int { return bytes.Compare(a.Key[:], b.Key[:]) })
	if s.cfg.Timekeeper != nil {
		out.ThisNode = s.cfg.Timekeeper.Address()
		n, err := pebblekv.Count(s.db, []byte{pSigned}, 0)
		if err != nil {
			return out, err
		}
		out.Signed = n
	}
	return out, nil
}

// Errors of Attest.
var (
	ErrNotTimekeeper = errors.New("this node is not a timekeeper (start it with --timekeeper-key)")
	ErrNotDue        = timekeeping.ErrNotDue
)

// IsTimekeeper reports whether this node keeps time.
func (s *Service) IsTimekeeper() bool { return s.cfg.Timekeeper != nil }

func signedKey(p ledger.Purpose, lease ledger.Hash) []byte {
	return append([]byte{pSigned, byte(p)}, lease[:]...)
}

// Attest answers a request for this timekeeper's attestation of purpose
// for lease (purpose 0: the one due now, timekeeping.NextPurpose); an
// ending names the lease's consumer's notice in the lease's place. It
// signs each lease and purpose once, durably before answering, and
// answers the same attestation when asked again; a start it signs anew
// once the committee's precision window has passed, if the start is still
// due (timekeeping.Renews), and keeps the new one. Errors:
// ErrNotTimekeeper, ErrUnknownLease, ErrNotDue (wrapped, with the reason).
func (s *Service) Attest(lease ledger.Hash, purpose ledger.Purpose) (ledger.Attestation, ledger.Purpose, error) {
	if s.cfg.Timekeeper == nil {
		return ledger.Attestation{}, 0, ErrNotTimekeeper
	}
	r, found, err := s.lease(lease)
	if err != nil {
		return ledger.Attestation{}, 0, err
	}
	if !found {
		return ledger.Attestation{}, 0, fmt.Errorf("%w: %s is not in this node's ledger (yet)", ErrUnknownLease, lease)
	}
	s.tk.signMu.Lock()
	defer s.tk.signMu.Unlock()
	now := s.now()
	if purpose == 0 {
		p, ok := timekeeping.NextPurpose(r, now)
		if !ok {
			return ledger.Attestation{}, 0, fmt.Errorf("%w: lease %s is %s; nothing is due at %d", ErrNotDue, lease, r.Status(), now)
		}
		purpose = p
	}
	due := timekeeping.Due(r, purpose, now)
	subject := lease // what the attestation names
	if purpose == timekeeping.Ending && due == nil {
		// An ending dates the consumer's notice, and names it: signed
		// before the notice is in, or for another notice, it would let
		// an early end predate its own.
		if n, found, err := s.notice(r); err != nil {
			return ledger.Attestation{}, 0, err
		} else if !found {
			due = fmt.Errorf("%w: lease %s has no notice of its consumer's in this timekeeper's ledger", timekeeping.ErrNotDue, lease)
		} else {
			subject = n.Send
		}
	}
	kept, ok, err := s.signed(purpose, subject)
	if err != nil {
		return ledger.Attestation{}, 0, err
	}
	if ok && (due != nil || !s.renews(r, purpose, kept, now)) {
		return kept, purpose, nil
	}
	if due != nil {
		return ledger.Attestation{}, 0, due
	}
	a := timekeeping.Sign(s.cfg.Timekeeper.Private(), s.cfg.Terms.Network, purpose, subject, now)
	if err := s.db.Set(signedKey(purpose, subject), appendAttestation(nil, a), pebble.Sync); err != nil {
		return ledger.Attestation{}, 0, fmt.Errorf("leasenet: keep attestation: %w", err)
	}
	return a, purpose, nil
}

// renews tells whether the attestation kept for r and purpose is signed
// anew at now (timekeeping.Renews, at r's committee's precision).
func (s *Service) renews(r *ledger.LeaseRecord, purpose ledger.Purpose, kept ledger.Attestation, now int64) bool {
	c, err := s.committee(r)
	return err == nil && timekeeping.Renews(purpose, c.PrecisionMS, kept.Timestamp, now)
}

// signed returns the attestation this timekeeper signed for purpose and
// lease, if any.
func (s *Service) signed(p ledger.Purpose, lease ledger.Hash) (ledger.Attestation, bool, error) {
	v, closer, err := s.db.Get(signedKey(p, lease))
	if errors.Is(err, pebble.ErrNotFound) {
		return ledger.Attestation{}, false, nil
	}
	if err != nil {
		return ledger.Attestation{}, false, err
	}
	defer closer.Close()
	a, err := parseAttestation(v)
	return a, err == nil, err
}

func appendAttestation(b []byte, a ledger.Attestation) []byte {
	b = append(b, a.PublicKey[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(a.Timestamp))
	return append(b, a.Signature[:]...)
}

// attestationSize is the size of an attestation kept: key, time, signature.
const attestationSize = 32 + 8 + 64

func parseAttestation(v []byte) (ledger.Attestation, error) {
	var a ledger.Attestation
	if len(v) != attestationSize {
		return a, errors.New("leasenet: malformed stored attestation")
	}
	copy(a.PublicKey[:], v)
	a.Timestamp = int64(binary.BigEndian.Uint64(v[32:]))
	copy(a.Signature[:], v[40:])
	return a, nil
}

// AttestRequest is the body of POST /attestation/request and of a request
// on an attestation stream (package nodewire).
type AttestRequest = nodewire.AttestRequest

// ParseAttestRequest reads a request on an attestation stream: strict
// JSON, a lease hash, a purpose ("" is 0: the one due).
func ParseAttestRequest(data []byte) (ledger.Hash, ledger.Purpose, error) {
	var req AttestRequest
	if err := strictjson.Unmarshal(data, &req); err != nil {
		return ledger.Hash{}, 0, fmt.Errorf("malformed request: %w", err)
	}
	if req.LeaseHash.IsZero() {
		return ledger.Hash{}, 0, errors.New("malformed request: lease_hash is required")
	}
	p, err := ParsePurpose(req.Purpose)
	return req.LeaseHash, p, err
}

// ParsePurpose reads a request's purpose: "" is 0, the one due.
func ParsePurpose(s string) (ledger.Purpose, error) {
	if s == "" {
		return 0, nil
	}
	return timekeeping.ParsePurpose(s)
}

// attestAnswer is a timekeeper's answer on an attestation stream.
type attestAnswer struct {
	Attestation *ledger.Attestation `json:"attestation,omitempty"`
	Error       string              `json:"error,omitempty"`
}

func (s *Service) serveAttest(st network.Stream) {
	defer st.Close()
	st.SetDeadline(time.Now().Add(5 * time.Second))
	data, err := io.ReadAll(io.LimitReader(st, maxMessage+1))
	if err != nil || len(data) > maxMessage {
		st.Reset()
		return
	}
	var ans attestAnswer
	if lease, p, err := ParseAttestRequest(data); err != nil {
		ans.Error = err.Error()
	} else if a, _, err := s.Attest(lease, p); err != nil {
		ans.Error = err.Error()
	} else {
		ans.Attestation = &a
	}
	out, _ := json.Marshal(ans)
	st.Write(out)
}
