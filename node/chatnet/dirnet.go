package chatnet

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/node/p2p"
)

// publish gossips r. With no peer on the topic yet it does nothing: the
// sync loop publishes the node's own registration once there are peers,
// and peers pull the rest.
func (s *Service) publish(ctx context.Context, r *directory.Registration) {
	if len(s.topic.Peers()) == 0 {
		return
	}
	data, err := r.MarshalBinary()
	if err != nil {
		return
	}
	if err := s.topic.Publish(ctx, data); err != nil && ctx.Err() == nil {
		s.log.Debug("publish registration", "err", err)
	}
}

// validateRegistration is the gossip validator: a registration is
// forwarded only when it is valid, not stamped ahead of this node's clock
// by more than MaxClockSkew, and newer than the one held (an old one
// stops here).
func (s *Service) validateRegistration(_ context.Context, from peer.ID, data []byte) p2p.Verdict {
	r, err := s.judge(data)
	switch {
	case errors.Is(err, errEarly):
		// Not the sender's fault when this node's clock is behind:
		// ignored, never scored against the peer.
		return p2p.Ignore
	case err != nil:
		return p2p.Reject
	}
	if from == s.self {
		return p2p.Accept
	}
	if !s.enter() {
		return p2p.Ignore
	}
	defer s.leave()
	held, found, err := s.st.registration(r.Account)
	if err != nil || (found && !directory.Newer(r, held)) {
		return p2p.Ignore
	}
	return p2p.Accept
}

func (s *Service) deliverRegistration(_ peer.ID, data []byte) {
	r, err := s.judge(data)
	if err != nil {
		return
	}
	s.keep(r)
}

// judge decodes and checks a registration from a peer.
func (s *Service) judge(data []byte) (*directory.Registration, error) {
	r := new(directory.Registration)
	if err := r.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	if err := checkRegistration(r); err != nil {
		return nil, err
	}
	if r.Timestamp > s.now().Add(s.cfg.MaxClockSkew).UnixMilli() {
		return nil, errEarly
	}
	return r, nil
}

// errEarly says a registration is stamped further ahead of this node's
// clock than the skew allows.
var errEarly = errors.New("chatnet: a registration stamped ahead of this node's clock")

// keep stores a checked registration from a peer when it is newer.
func (s *Service) keep(r *directory.Registration) {
	if !s.enter() {
		return
	}
	defer s.leave()
	added, err := s.st.register(r)
	if err != nil {
		s.log.Debug("storing a registration", "account", r.Account, "err", err)
		return
	}
	if added {
		s.registered(r.Account)
	}
}

// syncLoop pulls the directory from a random peer every SyncInterval,
// and every second until the first pull; it publishes the node's own
// registration once the topic has peers.
func (s *Service) syncLoop(ctx context.Context, own *directory.Registration) {
	announced, synced := false, false
	for {
		wait := s.cfg.SyncInterval
		if !synced || (!announced && len(s.h.Peers()) > 0) {
			wait = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if !announced && len(s.topic.Peers()) > 0 {
			// The newest registration of the node's account, which a
			// user may have replaced since start.
			if r, found, err := s.st.registration(own.Account); err == nil && found {
				s.publish(ctx, r)
				announced = true
			}
		}
		peers := s.h.Peers()
		if len(peers) == 0 {
			continue
		}
		p := peers[rand.IntN(len(peers))]
		n, err := s.pull(ctx, p)
		if err != nil {
			s.log.Debug("directory pull failed", "peer", p, "err", err)
			continue
		}
		synced = true
		s.log.Debug("directory pulled", "peer", p, "registrations", n)
	}
}

// pull reads every registration p holds and keeps the newer ones.
func (s *Service) pull(ctx context.Context, p peer.ID) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	st, err := s.h.Open(ctx, p, protocolDirSync)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	stop := context.AfterFunc(ctx, func() { st.Reset() }) // Close need not wait out the deadline
	defer stop()
	if err := st.CloseWrite(); err != nil {
		st.Reset()
		return 0, err
	}
	r := bufio.NewReader(st)
	n := 0
	for {
		var size [2]byte
		if _, err := io.ReadFull(r, size[:]); errors.Is(err, io.EOF) {
			return n, nil
		} else if err != nil {
			return n, err
		}
		data := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(r, data); err != nil {
			return n, err
		}
		reg, err := s.judge(data)
		if errors.Is(err, errEarly) {
			continue // this clock may be the one behind: a later pull takes it
		}
		if err != nil {
			st.Reset()
			return n, err // a peer that serves invalid registrations is not read further
		}
		s.keep(reg)
		n++
	}
}

// serveDirectory streams every registration held, each behind its u16
// length, then closes.
func (s *Service) serveDirectory(st network.Stream) {
	defer st.Close()
	if !s.streams.add(st) {
		return
	}
	defer s.streams.remove(st)
	if !s.enter() {
		st.Reset()
		return
	}
	defer s.leave()
	w := bufio.NewWriter(st)
	err := s.st.registrations(func(r *directory.Registration) error {
		data, err := r.MarshalBinary()
		if err != nil {
			return err
		}
		w.Write(binary.BigEndian.AppendUint16(nil, uint16(len(data))))
		_, err = w.Write(data)
		return err
	})
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		st.Reset()
	}
}
