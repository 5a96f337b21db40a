package chatnet

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/ledger"
)

// The chat protocol: the sender writes up to maxFramesPerOpen frames,
// each a message's binary form behind its u32 length; the receiver answers
// each with a status byte, a u16 length and a reason in UTF-8.
const (
	statusOK      byte = 0 // stored, or held already
	statusInvalid byte = 1 // never valid here: given up
	statusNotHere byte = 2 // the recipient is not registered at this node (yet)
	statusBusy    byte = 3 // rate limited, stamped ahead of this clock, or the store is unavailable: retried
)

// maxFrame is the largest message frame: a message's binary form with the
// longest text.
const maxFrame = 32 + 32 + 8 + 2 + chat.MaxMessageBytes + 64

// outItem is a message waiting for delivery.
type outItem struct {
	m        *chat.Message
	attempts int
	next     time.Time
}

func (s *Service) queue(m *chat.Message) {
	s.outMu.Lock()
	s.out[m.Hash()] = &outItem{m: m}
	s.outMu.Unlock()
	s.kickOutbox()
}

func (s *Service) kickOutbox() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// registered makes the messages waiting for account due at once and kicks
// the outbox: a new registration of their recipient is what they waited
// for (or a move to another node), whatever retry wait they backed off to.
func (s *Service) registered(account ledger.Address) {
	s.outMu.Lock()
	for _, it := range s.out {
		if it.m.To == account {
			it.next = time.Time{}
		}
	}
	s.outMu.Unlock()
	s.kickOutbox()
}

// Outbox returns how many messages wait for delivery.
func (s *Service) Outbox() int {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	return len(s.out)
}

// deliverLoop sends due messages to their recipients' nodes, one stream
// per node at a time, whenever a message is queued, a registration
// arrives, or a retry falls due.
func (s *Service) deliverLoop(ctx context.Context) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-tick.C:
		}
		for p, items := range s.due() {
			s.spawn(func() { s.deliverTo(ctx, p, items) })
		}
	}
}

// due groups the messages due for an attempt by the peer their recipient
// is registered at, marking those peers in flight. Messages past the
// retention are given up; messages whose recipient is registered here
// (the registration came after them) are done.
func (s *Service) due() map[peer.ID][]*outItem {
	now := s.now()
	oldest := now.Add(-s.cfg.Retention).UnixMilli()
	s.outMu.Lock()
	defer s.outMu.Unlock()
	groups := map[peer.ID][]*outItem{}
	for h, it := range s.out {
		if it.next.After(now) {
			continue
		}
		if it.m.Timestamp < oldest {
			s.log.Warn("chat message undelivered within the retention; given up", "hash", h, "to", it.m.To)
			s.forgetLocked(h)
			continue
		}
		reg, found, err := s.st.registration(it.m.To)
		if err != nil || !found {
			s.backoffLocked(it, now) // a registration kicks the loop
			continue
		}
		if reg.NodePeer == s.self.String() {
			s.forgetLocked(h)
			continue
		}
		p, err := peer.Decode(reg.NodePeer)
		if err != nil || s.inflight[p] {
			continue
		}
		if len(groups[p]) < maxFramesPerOpen {
			groups[p] = append(groups[p], it)
		}
	}
	// At most MaxDeliveries peers at once: the rest wait their turn.
	for p := range groups {
		if len(s.inflight) >= s.cfg.MaxDeliveries {
			delete(groups, p)
			continue
		}
		s.inflight[p] = true
	}
	return groups
}

func (s *Service) forgetLocked(h ledger.Hash) {
	delete(s.out, h)
	if err := s.st.delivered(h); err != nil {
		s.log.Warn("taking a message out of the outbox", "hash", h, "err", err)
	}
}

func (s *Service) backoffLocked(it *outItem, now time.Time) {
	wait := min(s.cfg.RetryMax, 250*time.Millisecond<<min(it.attempts, 16))
	it.attempts++
	it.next = now.Add(wait)
}

// deliverTo sends items to peer p and settles each by its answer.
func (s *Service) deliverTo(ctx context.Context, p peer.ID, items []*outItem) {
	statuses, err := s.push(ctx, p, items)
	now := s.now()
	s.outMu.Lock()
	defer s.outMu.Unlock()
	delete(s.inflight, p)
	for i, it := range items {
		h := it.m.Hash()
		switch {
		case i < len(statuses) && statuses[i].code == statusOK:
			s.forgetLocked(h)
		case i < len(statuses) && statuses[i].code == statusInvalid:
			s.log.Warn("peer refused a chat message; given up", "peer", p, "hash", h, "reason", statuses[i].reason)
			s.forgetLocked(h)
		default:
			s.backoffLocked(it, now)
		}
	}
	if err != nil && ctx.Err() == nil {
		s.log.Debug("chat delivery failed; will retry", "peer", p, "messages", len(items), "err", err)
	}
	if len(statuses) > 0 {
		s.kickOutbox() // more may be waiting for p
	}
}

type status struct {
	code   byte
	reason string
}

// push opens a chat stream to p, writes the messages and reads the
// answers it got.
func (s *Service) push(ctx context.Context, p peer.ID, items []*outItem) ([]status, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := s.h.Open(ctx, p, protocolChat)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	stop := context.AfterFunc(ctx, func() { st.Reset() }) // Close need not wait out the deadline
	defer stop()
	w := bufio.NewWriter(st)
	for _, it := range items {
		data := it.m.AppendBinary(nil)
		w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
		w.Write(data)
	}
	if err := w.Flush(); err != nil {
		st.Reset()
		return nil, err
	}
	if err := st.CloseWrite(); err != nil {
		st.Reset()
		return nil, err
	}
	r := bufio.NewReader(st)
	var out []status
	for range items {
		var hdr [3]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return out, err
		}
		reason := make([]byte, binary.BigEndian.Uint16(hdr[1:]))
		if _, err := io.ReadFull(r, reason); err != nil {
			return out, err
		}
		out = append(out, status{code: hdr[0], reason: string(reason)})
	}
	return out, nil
}

// serveChat takes the messages a peer delivers on st.
func (s *Service) serveChat(st network.Stream) {
	defer st.Close()
	if !s.streams.add(st) {
		return
	}
	defer s.streams.remove(st)
	from := st.Conn().RemotePeer()
	r := bufio.NewReader(st)
	w := bufio.NewWriter(st)
	for range maxFramesPerOpen {
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			if !errors.Is(err, io.EOF) {
				st.Reset()
			}
			break
		}
		size := binary.BigEndian.Uint32(n[:])
		if size > maxFrame {
			st.Reset()
			return
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			st.Reset()
			return
		}
		var code byte
		var reason string
		if ok, _ := s.perPeer.Allow(from, s.now()); !ok {
			code, reason = statusBusy, "rate limited: this peer delivers too many messages"
		} else if s.enter() {
			code, reason = s.take(data)
			s.leave()
		} else {
			st.Reset()
			return
		}
		w.WriteByte(code)
		w.Write(binary.BigEndian.AppendUint16(nil, uint16(len(reason))))
		w.WriteString(reason)
	}
	if err := w.Flush(); err != nil {
		st.Reset()
	}
}

// take judges and stores one delivered message.
func (s *Service) take(data []byte) (byte, string) {
	m := new(chat.Message)
	if err := m.UnmarshalBinary(data); err != nil {
		return statusInvalid, err.Error()
	}
	if err := m.Check(); err != nil {
		return statusInvalid, err.Error()
	}
	now := s.now()
	if err := chat.CheckTime(m.Timestamp, now.UnixMilli(), s.cfg.Retention.Milliseconds(), 0); err != nil {
		return statusInvalid, err.Error() // too old: it never gets younger
	}
	if err := chat.CheckTime(m.Timestamp, now.UnixMilli(), 0, s.cfg.MaxClockSkew.Milliseconds()); err != nil {
		// The sender's node took it within its own window; this clock
		// may be the one behind. Retried, it is taken in time.
		return statusBusy, err.Error()
	}
	reg, found, err := s.st.registration(m.To)
	if err != nil {
		return statusBusy, "the store cannot read"
	}
	if !found || reg.NodePeer != s.self.String() {
		return statusNotHere, fmt.Sprintf("%s is not registered at this node", m.To)
	}
	if _, _, found, err := s.st.message(m.Hash()); err == nil && found {
		return statusOK, ""
	}
	if ok, _ := s.relay.Allow(m.From, now); !ok {
		return statusBusy, "rate limited"
	}
	if _, err := s.add(m, false); err != nil {
		return statusBusy, "the store is unavailable"
	}
	return statusOK, ""
}

// sortContacts orders contacts by their latest message, newest first, then
// by address.
func sortContacts(cs []contact) {
	slices.SortFunc(cs, func(a, b contact) int {
		if c := cmp.Compare(b.latest, a.latest); c != 0 {
			return c
		}
		return bytes.Compare(a.account[:], b.account[:])
	})
}
