package chatnet

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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
// by more than MaxClockSkew, newer than the one held (an old one stops
// here), and within the rate of the peer that handed it over.
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
	// Keys cost nothing, so every registration of a fresh one is new:
	// only the peer's rate bounds what it makes every node store and
	// forward. Past it they are ignored, not rejected: they are valid,
	// and the peer may only be relaying another's flood. An honest one
	// held back here comes with a later pull.
	if ok, _ := s.dirPeer.Allow(from, s.now()); !ok {
		return p2p.Ignore
	}
	return p2p.Accept
}

// deliverRegistration keeps a gossiped registration, which took its
// peer's token in validateRegistration.
func (s *Service) deliverRegistration(_ peer.ID, data []byte) {
	r, err := s.judge(data)
	if err != nil {
		return
	}
	s.keep(r, nil)
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

// errClosing is returned by keep once the service is closing.
var errClosing = errors.New("chatnet: the service is closing")

// keep stores a checked registration from a peer when it is newer; admit,
// when set, is asked before it takes another's place in a full directory
// (see arrival). One that ranks too low to take a place is no error.
func (s *Service) keep(r *directory.Registration, admit func() bool) error {
	if !s.enter() {
		return errClosing
	}
	defer s.leave()
	a := s.arrival(r, false)
	a.admit = admit
	added, err := s.st.register(r, a)
	switch {
	case errors.Is(err, ErrDirectoryFull):
		return nil
	case err != nil:
		s.log.Debug("storing a registration", "account", r.Account, "err", err)
		return err
	case added:
		s.registered(r.Account)
	}
	return nil
}

// arrival is how r reaches the store now: submitted here when local (and
// then synced), else from a peer. The node's own account ranks first
// whichever way its registration came.
func (s *Service) arrival(r *directory.Registration, local bool) arrival {
	a := arrival{tier: tierPeer, at: s.now().UnixMilli(), synced: local}
	switch {
	case r.Account == s.own:
		a.tier = tierOwn
	case local:
		a.tier = tierLocal
	}
	return a
}

// ownRefresh is how old the node lets its own account's registration
// grow, while it names this node, before signing it anew: a full
// directory lets the registration refreshed longest ago go first.
const ownRefresh = time.Hour

// refreshOwn signs the node's own account's registration anew when the
// one held names this node and is older than ownRefresh, and gossips it.
// One that names another node (a user moved the account) is left alone.
func (s *Service) refreshOwn(ctx context.Context) {
	held, found, err := s.st.registration(s.own)
	now := s.now()
	if err != nil || !found || held.NodePeer != s.self.String() || now.UnixMilli()-held.Timestamp < ownRefresh.Milliseconds() {
		return
	}
	r := &directory.Registration{NodePeer: held.NodePeer, Timestamp: now.UnixMilli()}
	r.Sign(s.cfg.Key.Private())
	if added, err := s.st.register(r, s.arrival(r, true)); err != nil || !added {
		return
	}
	s.publish(ctx, r)
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
		s.refreshOwn(ctx)
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

// pull reads the registrations p holds, as many as this node holds at
// most, and keeps the newer ones. Those that take another's place in a
// full directory take p's tokens, as its gossip does: a peer serving a
// flood of fresh keys is not read past its rate.
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
	admit := func() bool {
		ok, _ := s.dirPeer.Allow(p, s.now())
		return ok
	}
	n := 0
	for range s.cfg.MaxRegistrations {
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
		if err := s.keep(reg, admit); err != nil {
			st.Reset()
			return n, fmt.Errorf("chatnet: pulling from %s: %w", p, err)
		}
		n++
	}
	st.Reset() // more than this node holds: the rest waits for another pull
	return n, nil
}

// serveDirectory streams every registration held, each behind its u16
// length, then closes. A peer pulling more often than SyncPeerRate is
// reset: each pull reads the whole directory.
func (s *Service) serveDirectory(st network.Stream) {
	defer st.Close()
	if !s.streams.add(st) {
		return
	}
	defer s.streams.remove(st)
	if ok, _ := s.pullers.Allow(st.Conn().RemotePeer(), s.now()); !ok {
		st.Reset()
		return
	}
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
