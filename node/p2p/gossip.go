package p2p

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
)

// Verdict is a topic validator's judgement of a message.
type Verdict int

const (
	// Accept delivers the message and forwards it to our other peers.
	Accept Verdict = iota
	// Ignore drops the message without penalising the peer that sent it:
	// for messages that are not wrong, only not useful now (a duplicate, a
	// block whose predecessor we lack).
	Ignore
	// Reject drops the message as invalid: it is not forwarded, the peer
	// that sent it loses GossipSub score, and RejectLimit rejects within
	// RejectWindow get it banned. Any value other than Accept and Ignore
	// counts as Reject.
	Reject
)

// String returns the verdict's name.
func (v Verdict) String() string {
	switch v {
	case Accept:
		return "accept"
	case Ignore:
		return "ignore"
	}
	return "reject"
}

// validateTimeout bounds one run of a topic validator: a message still
// being judged after it is ignored.
const validateTimeout = 10 * time.Second

// deliverBuffer is how many accepted messages of a topic may wait for its
// deliver function before GossipSub drops the newest ones.
const deliverBuffer = 256

// Thresholds of the GossipSub peer score: below gossipThreshold a peer
// gets no gossip from us, below publishThreshold none of our own messages,
// and below graylistThreshold everything it sends is ignored.
const (
	gossipThreshold    = -10
	publishThreshold   = -50
	graylistThreshold  = -80
	acceptPXThreshold  = 10
	opportunisticGraft = 3
)

// Topic is a GossipSub topic the host has joined.
type Topic struct {
	h     *Host
	name  string
	topic *pubsub.Topic
	sub   *pubsub.Subscription
	done  chan struct{} // closed when the deliver loop has returned
	once  sync.Once
}

// Join joins the gossip topic "/lattice/<Network>/<name>".
//
// validate judges every message before it is delivered or forwarded,
// including the ones we publish (from is then our own ID, and a Reject
// makes Publish fail). from is the peer that handed us the message, not
// necessarily its author. validate may run concurrently for several
// messages and must honour ctx, which ends after 10s.
//
// deliver is called once for every accepted message that came from
// another peer, never for the ones we publish. It runs on one goroutine per
// topic, in arrival order; while it is busy, up to 256 messages wait, and
// newer ones are dropped, so it should hand slow work off.
//
// A topic lives until Host.Close; each name can be joined once.
func (h *Host) Join(name string, validate func(ctx context.Context, from peer.ID, data []byte) Verdict, deliver func(from peer.ID, data []byte)) (*Topic, error) {
	if validate == nil || deliver == nil {
		return nil, fmt.Errorf("p2p: join %q: validate and deliver are required", name)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	if _, ok := h.topics[name]; ok {
		h.mu.Unlock()
		return nil, fmt.Errorf("p2p: topic %q already joined", name)
	}
	h.topics[name] = nil // reserved; pubsub is not called with h.mu held
	h.mu.Unlock()
	t, err := h.join(name, validate)
	h.mu.Lock()
	if err == nil && h.closed {
		delete(h.topics, name)
		h.mu.Unlock()
		t.leave()
		return nil, ErrClosed
	}
	if err != nil {
		delete(h.topics, name)
		h.mu.Unlock()
		return nil, err
	}
	h.topics[name] = t
	h.wg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		defer close(t.done)
		for {
			// Next fails once the subscription is cancelled by close.
			m, err := t.sub.Next(context.Background())
			if err != nil {
				return
			}
			if m.ReceivedFrom == h.ID() {
				continue
			}
			deliver(m.ReceivedFrom, m.Data)
		}
	}()
	return t, nil
}

// join registers the validator, joins and subscribes to the topic name.
func (h *Host) join(name string, validate func(ctx context.Context, from peer.ID, data []byte) Verdict) (*Topic, error) {
	id := string(h.protocolID(name))
	val := func(ctx context.Context, from peer.ID, m *pubsub.Message) pubsub.ValidationResult {
		switch validate(ctx, from, m.Data) {
		case Accept:
			return pubsub.ValidationAccept
		case Ignore:
			return pubsub.ValidationIgnore
		}
		if from != h.ID() {
			h.noteReject(from)
		}
		return pubsub.ValidationReject
	}
	if err := h.ps.RegisterTopicValidator(id, val, pubsub.WithValidatorTimeout(validateTimeout)); err != nil {
		return nil, fmt.Errorf("p2p: join %q: %w", name, err)
	}
	pt, err := h.ps.Join(id)
	if err != nil {
		_ = h.ps.UnregisterTopicValidator(id)
		return nil, fmt.Errorf("p2p: join %q: %w", name, err)
	}
	if err := pt.SetScoreParams(topicScoreParams(h.cfg.RejectLimit)); err != nil {
		_ = pt.Close()
		_ = h.ps.UnregisterTopicValidator(id)
		return nil, fmt.Errorf("p2p: join %q: %w", name, err)
	}
	sub, err := pt.Subscribe(pubsub.WithBufferSize(deliverBuffer))
	if err != nil {
		_ = pt.Close()
		_ = h.ps.UnregisterTopicValidator(id)
		return nil, fmt.Errorf("p2p: join %q: %w", name, err)
	}
	return &Topic{h: h, name: name, topic: pt, sub: sub, done: make(chan struct{})}, nil
}

// Publish validates data with the topic's validator and sends it to the
// topic's peers. It fails if the validator rejects it or the host is
// closed; it does not wait for anyone to receive it.
func (t *Topic) Publish(ctx context.Context, data []byte) error {
	if err := t.topic.Publish(ctx, data); err != nil {
		return fmt.Errorf("p2p: publish to %q: %w", t.name, err)
	}
	return nil
}

// Peers returns the connected peers known to have joined the topic.
func (t *Topic) Peers() []peer.ID { return t.topic.ListPeers() }

// close leaves the topic and waits for its deliver loop.
func (t *Topic) close() {
	t.leave()
	<-t.done
}

// leave cancels the subscription (which ends the deliver loop), closes the
// topic and unregisters its validator.
func (t *Topic) leave() {
	t.once.Do(func() {
		t.sub.Cancel()
		_ = t.topic.Close()
		_ = t.h.ps.UnregisterTopicValidator(t.topic.String())
	})
}

// contentID names a message by the SHA-256 of its topic and payload.
func contentID(m *pb.Message) string {
	h := sha256.New()
	h.Write([]byte(m.GetTopic()))
	h.Write([]byte{0})
	h.Write(m.Data)
	return string(h.Sum(nil))
}

// startGossip starts GossipSub with peer scoring, on protocol ids of our
// network so that it never meshes with another network's nodes.
func (h *Host) startGossip(ctx context.Context) error {
	proto := h.protocolID("meshsub/1.2.0")
	features := func(f pubsub.GossipSubFeature, p protocol.ID) bool {
		switch f {
		case pubsub.GossipSubFeatureMesh, pubsub.GossipSubFeaturePX, pubsub.GossipSubFeatureIdontwant:
			return p == proto
		}
		return false
	}
	ps, err := pubsub.NewGossipSub(ctx, h.host,
		pubsub.WithGossipSubProtocols([]protocol.ID{proto}, features),
		pubsub.WithPeerScore(peerScoreParams(), &pubsub.PeerScoreThresholds{
			GossipThreshold:             gossipThreshold,
			PublishThreshold:            publishThreshold,
			GraylistThreshold:           graylistThreshold,
			AcceptPXThreshold:           acceptPXThreshold,
			OpportunisticGraftThreshold: opportunisticGraft,
		}),
		// Our own messages go to every topic peer whose score allows, not
		// only to the mesh: a message published before the mesh has formed
		// (right after start or a reconnect) would otherwise go nowhere.
		pubsub.WithFloodPublish(true),
		// Payloads authenticate themselves (blocks and votes carry their
		// own signatures, checked by the validators), so messages are not
		// signed again by the host: that cost an ed25519 signature per
		// message and a verification per message per hop. Without an
		// author and sequence number, a message is named by its content,
		// which also makes the same payload one message whoever sends it.
		pubsub.WithMessageSignaturePolicy(pubsub.StrictNoSign),
		pubsub.WithNoAuthor(),
		pubsub.WithMessageIdFn(contentID),
		// A ledger under load sends bursts: the defaults (32 messages
		// queued per peer, 32 waiting for validation) dropped most of a
		// burst, left for sync to recover.
		pubsub.WithPeerOutboundQueueSize(1024),
		pubsub.WithValidateQueueSize(4096),
		pubsub.WithLogger(h.cfg.Logger.With("component", "p2p/pubsub")), // not h.log: one component key
	)
	if err != nil {
		return fmt.Errorf("p2p: start gossipsub: %w", err)
	}
	h.ps = ps
	return nil
}

// peerScoreParams are the topic-independent parts of the peer score.
func peerScoreParams() *pubsub.PeerScoreParams {
	return &pubsub.PeerScoreParams{
		Topics:            make(map[string]*pubsub.TopicScoreParams),
		AppSpecificScore:  func(peer.ID) float64 { return 0 },
		AppSpecificWeight: 1,
		// Many peers behind one IP are suspect (a Sybil), except on
		// loopback, where an operator or a test runs several nodes.
		IPColocationFactorWeight:    -10,
		IPColocationFactorThreshold: 4,
		IPColocationFactorWhitelist: []*net.IPNet{
			{IP: net.IPv4(127, 0, 0, 0), Mask: net.CIDRMask(8, 32)},
			{IP: net.IPv6loopback, Mask: net.CIDRMask(128, 128)},
		},
		BehaviourPenaltyWeight:    -10,
		BehaviourPenaltyThreshold: 6,
		BehaviourPenaltyDecay:     pubsub.ScoreParameterDecay(10 * time.Minute),
		DecayInterval:             time.Second,
		DecayToZero:               0.01,
		RetainScore:               10 * time.Minute,
	}
}

// topicScoreParams scores one topic. Delivering messages first earns a
// little; invalid messages cost their count squared times a weight chosen
// so that graylisting starts just past rejectLimit: a flooder is then
// banned by our own reject count first, which also disconnects it, rather
// than merely ignored. Mesh delivery rates are not scored: a ledger topic
// may be quiet for long stretches.
func topicScoreParams(rejectLimit int) *pubsub.TopicScoreParams {
	return &pubsub.TopicScoreParams{
		TopicWeight:                    1,
		TimeInMeshQuantum:              time.Second,
		FirstMessageDeliveriesWeight:   1,
		FirstMessageDeliveriesDecay:    pubsub.ScoreParameterDecay(10 * time.Minute),
		FirstMessageDeliveriesCap:      20,
		InvalidMessageDeliveriesWeight: graylistThreshold / float64(rejectLimit*rejectLimit),
		InvalidMessageDeliveriesDecay:  pubsub.ScoreParameterDecay(time.Hour),
	}
}

// rejectCount counts one peer's rejected messages in a fixed window.
type rejectCount struct {
	start time.Time
	n     int
}

// noteReject counts a message from p that a validator rejected, and bans p
// when it reaches RejectLimit within RejectWindow.
func (h *Host) noteReject(p peer.ID) { h.count(p, 1) }

// Misbehaved counts an answer from p that broke a request-response
// protocol (a sync answer holding what was not asked for, or what does
// not decode or verify), which no honest peer sends: each counts as a
// quarter of RejectLimit rejected messages, so that a peer that answers
// so four times within RejectWindow is banned like one whose gossip is
// refused.
func (h *Host) Misbehaved(p peer.ID) { h.count(p, max(1, h.cfg.RejectLimit/4)) }

// count adds n to p's count of refused messages, and bans p when it
// reaches RejectLimit within RejectWindow.
func (h *Host) count(p peer.ID, n int) {
	now := h.now()
	h.mu.Lock()
	r := h.rejects[p]
	if r == nil || now.Sub(r.start) >= h.cfg.RejectWindow {
		r = &rejectCount{start: now}
		h.rejects[p] = r
	}
	r.n += n
	ban := r.n >= h.cfg.RejectLimit
	if ban {
		delete(h.rejects, p)
	}
	h.mu.Unlock()
	if ban {
		h.ban(p)
	}
}

// pruneRejects forgets counts whose window has ended.
func (h *Host) pruneRejects() {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for p, r := range h.rejects {
		if now.Sub(r.start) >= h.cfg.RejectWindow {
			delete(h.rejects, p)
		}
	}
}
