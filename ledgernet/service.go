// Package ledgernet connects a ledger node to the peer-to-peer network:
// it gossips blocks and votes, keeps blocks that arrive before what they
// need, syncs the ledger from peers, and runs the node's elections: its
// representatives vote, it tallies the network's votes, and it confirms
// blocks and settles forks through the node's engine.
//
// The rules live elsewhere: block validity in package ledger, votes and the
// quorum rule in package consensus. This package is the loop that drives
// them, and the only one that talks to package p2p about the ledger.
package ledgernet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/p2p"
	"github.com/latticenet/lattice/wallet"
)

// Topic and protocol names, under the host's /lattice/<genesis>/ namespace.
const (
	topicBlocks   = "blocks/1"
	topicVotes    = "votes/1"
	protocolSync  = "sync/1"
	intakeWorkers = 8
)

// Config configures a Service.
type Config struct {
	Node *node.Node
	Host *p2p.Host
	// Reps are the keys this node votes with: those with delegated weight
	// vote, the others stay silent.
	Reps   []wallet.Key
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxClockSkew: a block from a peer stamped further ahead of this
	// node's clock is held until its time. Default 10 minutes.
	MaxClockSkew time.Duration
	// OnlineFloorPercent of the native supply is the least online weight
	// quorum is computed from. Default 50.
	OnlineFloorPercent uint64
	// UncheckedBlocks and UncheckedBytes bound the blocks waiting for a
	// block they need. Defaults 65536 and 64 MiB.
	UncheckedBlocks, UncheckedBytes int
	// SyncInterval is how often the node pulls from its peers. Default 5 s.
	SyncInterval time.Duration
	// VoteDelay is how long a representative gathers hashes into one vote.
	// Default 5 ms.
	VoteDelay time.Duration
	// RequestVotesAfter is how long an election waits for votes before the
	// node asks its peers for them. Default 1 s.
	RequestVotesAfter time.Duration
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxClockSkew == 0 {
		c.MaxClockSkew = 10 * time.Minute
	}
	if c.OnlineFloorPercent == 0 {
		c.OnlineFloorPercent = 50
	}
	if c.UncheckedBlocks == 0 {
		c.UncheckedBlocks = 1 << 16
	}
	if c.UncheckedBytes == 0 {
		c.UncheckedBytes = 64 << 20
	}
	if c.SyncInterval == 0 {
		c.SyncInterval = 5 * time.Second
	}
	if c.VoteDelay == 0 {
		c.VoteDelay = 5 * time.Millisecond
	}
	if c.RequestVotesAfter == 0 {
		c.RequestVotesAfter = time.Second
	}
}

// Service is a node's life on the network. Close stops it.
type Service struct {
	cfg     Config
	n       *node.Node
	h       *p2p.Host
	log     *slog.Logger
	network ledger.Hash // the genesis hash: votes are signed for it

	blocks *p2p.Topic
	votes  *p2p.Topic

	intake    chan inBlock
	held      *heldBlocks
	waiting   *unchecked
	fromNet   *hashSet // hashes that came from peers: not gossiped again
	votesIn   chan *consensus.Vote
	frontiers chan []ledger.Address
	confirmed chan confirmOutcome
	confirmQ  chan confirmJob

	stats   counters
	serving servingGate
	choices choiceBook
	lastTS  atomic.Int64 // of the latest vote this node signed

	elMu      sync.Mutex // guards elections, a copy the API reads
	elections []ElectionInfo

	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool
}

type counters struct {
	gossipBlocks, gossipVotes, invalid, held, synced, intakeDropped atomic.Uint64
	confirmations, resolved                                         atomic.Uint64
}

// inBlock is a block from a peer on its way to the engine.
type inBlock struct {
	b       *ledger.Block
	from    peer.ID
	checked bool // passed Params.Check already
}

// Start joins the network's topics, registers the sync protocol and starts
// the service's loops.
func Start(ctx context.Context, cfg Config) (*Service, error) {
	cfg.setDefaults()
	if cfg.Node == nil || cfg.Host == nil {
		return nil, errors.New("ledgernet: Node and Host are required")
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Service{
		cfg: cfg, n: cfg.Node, h: cfg.Host, log: cfg.Logger.With("component", "ledgernet"),
		network:   cfg.Node.Network.Genesis.Hash,
		intake:    make(chan inBlock, 8192),
		held:      newHeldBlocks(4096),
		waiting:   newUnchecked(cfg.UncheckedBlocks, cfg.UncheckedBytes),
		fromNet:   newHashSet(1 << 18),
		votesIn:   make(chan *consensus.Vote, 8192),
		frontiers: make(chan []ledger.Address, 64),
		confirmed: make(chan confirmOutcome, 1024),
		confirmQ:  make(chan confirmJob, 4096),
		cancel:    cancel,
	}
	var err error
	if s.blocks, err = s.h.Join(topicBlocks, s.validateBlock, s.deliverBlock); err != nil {
		cancel()
		return nil, err
	}
	if s.votes, err = s.h.Join(topicVotes, s.validateVote, s.deliverVote); err != nil {
		cancel()
		return nil, err
	}
	s.h.Handle(protocolSync, s.serveSync)
	sub := s.n.Engine.Subscribe(1 << 14)
	for range intakeWorkers {
		s.spawn(func() { s.intakeLoop(ctx) })
	}
	s.spawn(func() { s.confirmLoop(ctx) })
	s.spawn(func() { s.electionLoop(ctx, sub) })
	s.spawn(func() { s.syncLoop(ctx) })
	return s, nil
}

func (s *Service) spawn(f func()) {
	s.wg.Add(1)
	go func() { defer s.wg.Done(); f() }()
}

// Close stops every loop of the service and waits for them. The host and
// the node stay open: their owner closes them after.
func (s *Service) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.cancel()
	s.wg.Wait()
	return nil
}

// validateBlock is the gossip validator of blocks: only a block that passes
// the pure core's checks (shape, hash, work, signature) is forwarded.
func (s *Service) validateBlock(_ context.Context, from peer.ID, data []byte) p2p.Verdict {
	b := new(ledger.Block)
	if err := b.UnmarshalBinary(data); err != nil {
		s.stats.invalid.Add(1)
		return p2p.Reject
	}
	if ledger.IsGenesis(b) {
		return p2p.Ignore
	}
	if err := s.n.Engine.Params().Check(b); err != nil {
		s.stats.invalid.Add(1)
		return p2p.Reject
	}
	if b.Timestamp-s.cfg.Now().UnixMilli() > s.cfg.MaxClockSkew.Milliseconds() {
		// Not invalid: early. Held until its time, then applied and
		// gossiped by this node.
		if s.held.add(b, from) {
			s.stats.held.Add(1)
		}
		return p2p.Ignore
	}
	return p2p.Accept
}

func (s *Service) deliverBlock(from peer.ID, data []byte) {
	b := new(ledger.Block)
	if err := b.UnmarshalBinary(data); err != nil {
		return // the validator accepted it; cannot happen
	}
	s.stats.gossipBlocks.Add(1)
	s.enqueue(inBlock{b: b, from: from, checked: true})
}

// enqueue hands a block to the intake workers, dropping it when they are
// too far behind: sync brings it back.
func (s *Service) enqueue(in inBlock) {
	s.fromNet.add(in.b.Hash)
	select {
	case s.intake <- in:
	default:
		s.stats.intakeDropped.Add(1)
	}
}

// intakeLoop submits blocks from peers to the engine and keeps those that
// arrived before what they need.
func (s *Service) intakeLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case in := <-s.intake:
			s.take(ctx, in)
		}
	}
}

func (s *Service) take(ctx context.Context, in inBlock) {
	submit := s.n.Engine.Submit
	if in.checked {
		submit = s.n.Engine.SubmitChecked
	}
	_, err := submit(ctx, in.b)
	s.afterSubmit(ctx, in, err)
}

// afterSubmit deals with what the engine said of a block from a peer.
func (s *Service) afterSubmit(ctx context.Context, in inBlock, err error) {
	var missing ledger.Hash
	switch {
	case err == nil, errors.As(err, new(*ledger.ForkError)):
		return // applied, or recorded as a conflict: the feed has it
	case errors.Is(err, ledger.ErrGapPrevious):
		missing = in.b.Previous
	case errors.Is(err, ledger.ErrGapSource):
		missing = in.b.Source
	case ledger.IsRule(err):
		s.log.Debug("block from peer refused", "hash", in.b.Hash, "peer", in.from, "err", err)
		return
	default:
		if ctx.Err() == nil {
			s.log.Warn("block from peer not applied", "hash", in.b.Hash, "err", err)
		}
		return
	}
	// Every block that reaches the engine's rules has passed Check.
	if s.waiting.add(in.b, missing) && in.from != "" {
		s.spawn(func() { s.fetch(ctx, in.from, missing) })
	}
}

// fetch asks peer p for a block another block needs.
func (s *Service) fetch(ctx context.Context, p peer.ID, h ledger.Hash) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	blocks, err := s.requestBlocks(ctx, p, []ledger.Hash{h})
	if err != nil {
		s.log.Debug("fetch of a missing block failed", "hash", h, "peer", p, "err", err)
		return
	}
	for _, b := range blocks {
		s.enqueue(inBlock{b: b, from: p})
	}
}

// Stats are the service's counters, for operators.
type Stats struct {
	Peers            int    `json:"peers"`
	GossipBlocks     uint64 `json:"gossip_blocks"`
	GossipVotes      uint64 `json:"gossip_votes"`
	Invalid          uint64 `json:"invalid_messages"`
	Held             uint64 `json:"held_future_blocks"`
	Synced           uint64 `json:"synced_blocks"`
	IntakeDropped    uint64 `json:"intake_dropped"`
	Unchecked        int    `json:"unchecked_blocks"`
	UncheckedBytes   int    `json:"unchecked_bytes"`
	UncheckedEvicted uint64 `json:"unchecked_evicted"`
	Elections        int    `json:"active_elections"`
	Confirmations    uint64 `json:"confirmations"`
	ForksResolved    uint64 `json:"forks_resolved"`
}

// Stats returns the service's counters.
func (s *Service) Stats() Stats {
	c, b, ev := s.waiting.stats()
	s.elMu.Lock()
	el := len(s.elections)
	s.elMu.Unlock()
	return Stats{
		Peers: len(s.h.Peers()), GossipBlocks: s.stats.gossipBlocks.Load(), GossipVotes: s.stats.gossipVotes.Load(),
		Invalid: s.stats.invalid.Load(), Held: s.stats.held.Load(), Synced: s.stats.synced.Load(),
		IntakeDropped: s.stats.intakeDropped.Load(), Unchecked: c, UncheckedBytes: b, UncheckedEvicted: ev,
		Elections: el, Confirmations: s.stats.confirmations.Load(), ForksResolved: s.stats.resolved.Load(),
	}
}

// PeerID returns the node's peer id.
func (s *Service) PeerID() string { return s.h.ID().String() }

// Addrs returns the multiaddrs peers can dial this node at.
func (s *Service) Addrs() []string { return s.h.Addrs() }

func (s *Service) String() string { return fmt.Sprintf("ledgernet(%s)", s.h.ID()) }

// hashSet is a bounded set of hashes: when full it starts a new generation
// and forgets the one before the last.
type hashSet struct {
	mu        sync.Mutex
	max       int
	cur, prev map[ledger.Hash]struct{}
}

func newHashSet(max int) *hashSet {
	return &hashSet{max: max, cur: make(map[ledger.Hash]struct{}), prev: make(map[ledger.Hash]struct{})}
}

func (h *hashSet) add(x ledger.Hash) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.cur) >= h.max {
		h.prev, h.cur = h.cur, make(map[ledger.Hash]struct{})
	}
	h.cur[x] = struct{}{}
}

func (h *hashSet) has(x ledger.Hash) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, a := h.cur[x]
	_, b := h.prev[x]
	return a || b
}
