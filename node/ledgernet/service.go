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
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/ledgerstore"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/wallet"
)

// Topic and protocol names, under the host's /lattice/<genesis>/ namespace.
const (
	topicBlocks  = "blocks/1"
	topicVotes   = "votes/2"
	protocolSync = "sync/2"
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
	// OnlineWindow is how long a representative counts as online after
	// its latest vote arrived, for QuorumStatus; the quorum itself never
	// depends on it. Default 5 minutes.
	OnlineWindow time.Duration
	// UncheckedBlocks and UncheckedBytes bound the blocks waiting for a
	// block they need. Defaults 65536 and 64 MiB.
	UncheckedBlocks, UncheckedBytes int
	// SyncInterval is how often the node pulls from its peers. Default 5 s.
	SyncInterval time.Duration
	// SyncBudget is how long a pass pulls from one peer before it moves
	// on to the next: a peer with more (a long log, or one that claims a
	// log without end) goes on in the next pass, which then starts at
	// once. Default 10 s.
	SyncBudget time.Duration
	// VoteDelay is how long a representative gathers hashes into one vote.
	// Default 5 ms.
	VoteDelay time.Duration
	// RequestVotesAfter is how long an election waits for votes before the
	// node asks its peers for them. Default 1 s.
	RequestVotesAfter time.Duration
	// RoundTimeout is how long the first round of an election lasts once
	// its prevotes hold a quorum without a confirmation; later rounds
	// last twice as long as the one before, up to 32 times this
	// (consensus.Params.RoundTimeout). Default 1 s.
	RoundTimeout time.Duration
	// MaxElections bounds the elections running at once
	// (consensus.Params.MaxElections). A block applied while that many
	// run is put to election once one ends. Default 65,536.
	MaxElections int
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.OnlineWindow == 0 {
		c.OnlineWindow = time.Duration(consensus.DefaultOnlineWindow) * time.Millisecond
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
	if c.SyncBudget == 0 {
		c.SyncBudget = 10 * time.Second
	}
	if c.VoteDelay == 0 {
		c.VoteDelay = 5 * time.Millisecond
	}
	if c.RequestVotesAfter == 0 {
		c.RequestVotesAfter = time.Second
	}
	if c.RoundTimeout == 0 {
		c.RoundTimeout = time.Duration(consensus.DefaultRoundTimeout) * time.Millisecond
	}
	if c.MaxElections == 0 {
		c.MaxElections = consensus.DefaultMaxElections
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

	intake      chan inBlock
	intakeWaits chan intakeWait    // batches queued, in order
	outBlocks   chan *ledger.Block // blocks of this node's own to gossip
	held        *heldBlocks
	waiting     *unchecked
	stateWaits  *stateWaits // the state-chain indices blocks in waiting wait for
	fromNet     *hashSet    // hashes that came from peers: not gossiped again
	votesIn     chan *consensus.Vote
	frontiers   chan []ledger.Address
	scanned     chan []ledger.Address // what electUnconfirmed found, taken as room allows
	confirmed   chan confirmOutcome
	confirmQ    chan confirmJob
	decided     chan *ledger.ForkError           // contenders of confirmed blocks, to watch
	bindingIn   *handoff[ledgerstore.VoteRecord] // votes to record, then sign and publish
	ownVotes    *handoff[*consensus.Vote]        // recorded votes signed, for the election loop to count

	stats   counters
	serving servingGate
	choices choiceBook
	quorum  quorumState
	splits  splitBook

	elMu          sync.Mutex // guards elections, a copy the API reads
	elections     []ElectionInfo
	electionCount atomic.Int64
	// rescanning is set while electUnconfirmed runs again for the
	// election loop (electionLoop.retryRefused).
	rescanning atomic.Bool

	cancel context.CancelFunc
	life   context.Context // the service's, cancelled by Close
	quit   chan struct{}   // closed by Close
	wg     sync.WaitGroup
	closed atomic.Bool
}

type counters struct {
	gossipBlocks, gossipVotes, invalid, held, synced, intakeDropped atomic.Uint64
	confirmations, resolved, publishDropped, served                 atomic.Uint64
	uncheckedDropped, equivocations, splits                         atomic.Uint64
	electionsRefused, feedLags                                      atomic.Uint64
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
	if cfg.MaxElections < 0 {
		return nil, fmt.Errorf("ledgernet: MaxElections %d, want 1 or more (0: the default, 65,536)", cfg.MaxElections)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Service{life: ctx,
		cfg: cfg, n: cfg.Node, h: cfg.Host, log: cfg.Logger.With("component", "ledgernet"),
		network:     cfg.Node.Network.Genesis.Hash,
		intake:      make(chan inBlock, 1<<16),
		intakeWaits: make(chan intakeWait, 4),
		quit:        make(chan struct{}),
		outBlocks:   make(chan *ledger.Block, 1<<14),
		held:        newHeldBlocks(4096),
		waiting:     newUnchecked(cfg.UncheckedBlocks, cfg.UncheckedBytes),
		stateWaits:  newStateWaits(),
		fromNet:     newHashSet(1 << 18),
		votesIn:     make(chan *consensus.Vote, 8192),
		frontiers:   make(chan []ledger.Address, 64),
		scanned:     make(chan []ledger.Address, retryPerTick/scanBatch),
		confirmed:   make(chan confirmOutcome, 1024),
		confirmQ:    make(chan confirmJob, 4096),
		decided:     make(chan *ledger.ForkError, 256),
		bindingIn:   newHandoff[ledgerstore.VoteRecord](),
		ownVotes:    newHandoff[*consensus.Vote](),
		cancel:      cancel,
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
	sub := s.n.Engine.Subscribe(feedBuffer)
	s.spawn(func() { s.intakeLoop(ctx) })
	s.spawn(func() { s.intakeAnswers(ctx) })
	s.spawn(func() { s.confirmLoop(ctx) })
	s.spawn(func() { s.voteWriter(ctx) })
	s.spawn(func() { s.publishLoop(ctx) })
	s.spawn(func() { s.electionLoop(ctx, sub) })
	s.spawn(func() { s.syncLoop(ctx) })
	s.rescanning.Store(true)
	s.spawn(func() {
		defer s.rescanning.Store(false)
		s.electUnconfirmed(ctx)
	})
	s.spawn(func() { s.watchState(ctx) })
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
	close(s.quit)
	s.wg.Wait()
	return nil
}

// publishLoop gossips the blocks this node applied that did not come from
// the network (blocks submitted over HTTP), apart from the election loop so
// that publishing never holds up counting votes. Blocks waiting together go
// out in one message (see encodeBlocks): a burst of single-block messages
// overflowed GossipSub's queues.
func (s *Service) publishLoop(ctx context.Context) {
	for {
		batch, ok := takeBatch(ctx, s.outBlocks, maxGossipBlocks)
		if !ok {
			return
		}
		for len(batch) > 0 {
			data, n := encodeBlocks(batch)
			batch = batch[n:]
			if err := s.blocks.Publish(ctx, data); err != nil && ctx.Err() == nil {
				s.log.Debug("publish blocks", "err", err)
			}
		}
	}
}

// scanBatch is how many accounts electUnconfirmed hands over at a time.
const scanBatch = 256

// electUnconfirmed puts the unconfirmed blocks of the ledger to election,
// at start: elections live in memory, and a node that stopped before its
// blocks were confirmed would otherwise never ask for the votes that
// confirm them. It hands every account with unconfirmed blocks to the
// election loop, which takes them as elections have room and opens the
// elections of the forks recorded beneath each frontier and of the
// frontier (electionLoop.retryRefused, checkFrontiers). It runs again when
// blocks or forks may have been left without an election.
func (s *Service) electUnconfirmed(ctx context.Context) {
	var batch []ledger.Address
	flush := func() bool {
		if len(batch) == 0 {
			return true
		}
		select {
		case s.scanned <- batch:
			batch = nil
			return true
		case <-ctx.Done():
			return false
		}
	}
	st := s.n.Store
	err := st.Accounts(func(a ledger.Account) error {
		if err := ctx.Err(); err != nil {
			return err // closing: a long ledger is not walked to its end
		}
		done, _, _, err := st.Confirmed(a.Address)
		if err != nil {
			return err
		}
		if a.Height > done {
			batch = append(batch, a.Address)
			if len(batch) == scanBatch && !flush() {
				return ctx.Err()
			}
		}
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("listing unconfirmed frontiers", "err", err)
		}
		return
	}
	flush()
}

// validateBlock is the gossip validator of block messages: only a message
// whose every block passes the pure core's checks (shape, hash, work,
// signature) is forwarded. This node's own blocks were applied by its
// engine, so they pass as they are. A block stamped too far ahead of this
// node's clock is not invalid but early: it is held until its time.
func (s *Service) validateBlock(_ context.Context, from peer.ID, data []byte) p2p.Verdict {
	if from == s.h.ID() {
		return p2p.Accept
	}
	blocks, err := decodeBlocks(data)
	if err != nil {
		s.stats.invalid.Add(1)
		return p2p.Reject
	}
	blocks = slices.DeleteFunc(blocks, ledger.IsGenesis)
	params, err := s.n.Engine.Params()
	if err != nil {
		return p2p.Ignore // this node cannot judge it now; others will
	}
	for _, err := range params.CheckAll(blocks) {
		if err != nil {
			s.stats.invalid.Add(1)
			return p2p.Reject
		}
	}
	return p2p.Accept
}

func (s *Service) deliverBlock(from peer.ID, data []byte) {
	blocks, err := decodeBlocks(data)
	if err != nil {
		return // the validator accepted it; cannot happen
	}
	limit := s.holdLimit()
	for _, b := range blocks {
		if ledger.IsGenesis(b) {
			continue
		}
		s.stats.gossipBlocks.Add(1)
		if in := (inBlock{b: b, from: from, checked: true}); !s.hold(in, limit) {
			s.enqueue(in)
		}
	}
}

// holdLimit is the latest timestamp the node's admission policy
// (node.Admission) lets a block from the network in with now.
func (s *Service) holdLimit() int64 { return s.n.Admission.HoldLimit(s.cfg.Now()) }

// hold keeps in's block, stamped after limit (holdLimit), until its time,
// and reports whether it did: whatever door a block comes through
// (gossip, a fetch, sync), an early block waits. The hold is bounded (the
// earliest-due are kept); a block it cannot keep is fetched again when a
// block that builds on it arrives, or synced again later.
func (s *Service) hold(in inBlock, limit int64) bool {
	if in.b.Timestamp <= limit {
		return false
	}
	if s.held.add(in) {
		s.stats.held.Add(1)
	}
	return true
}

// enqueue hands a block from the network to the intake. When the intake is
// behind it waits, up to a bound, so that a burst slows gossip delivery
// rather than losing blocks; past the bound it drops the block, which a
// later block's fetch or sync brings back.
func (s *Service) enqueue(in inBlock) {
	s.fromNet.add(in.b.Hash)
	s.toIntake(in)
}

// toIntake queues a block for the intake (see enqueue).
func (s *Service) toIntake(in inBlock) {
	select {
	case s.intake <- in:
		return
	default:
	}
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case s.intake <- in:
	case <-t.C:
		s.stats.intakeDropped.Add(1)
	case <-s.quit:
	}
}

// toIntakeLater queues blocks for the intake from a goroutine of its own,
// for callers that must never wait (the election loop).
func (s *Service) toIntakeLater(ins []inBlock) {
	if len(ins) == 0 {
		return
	}
	s.spawn(func() {
		for _, in := range ins {
			s.toIntake(in)
		}
	})
}

// intakeLoop submits blocks from peers to the engine, as many at a time as
// are waiting (in arrival order, so the engine commits them together), and
// keeps those that arrived before what they need.
func (s *Service) intakeLoop(ctx context.Context) {
	var unchecked []*ledger.Block
	for {
		batch, ok := takeBatch(ctx, s.intake, 1024)
		if !ok {
			return
		}
		unchecked = unchecked[:0]
		for _, in := range batch {
			if !in.checked {
				unchecked = append(unchecked, in.b)
			}
		}
		// The parameters in force now: governance may change them.
		params, err := s.n.Engine.Params()
		if err != nil {
			s.log.Warn("reading the ledger's parameters; the blocks wait for sync", "err", err)
			continue
		}
		errs := params.CheckAll(unchecked)
		blocks := make([]*ledger.Block, 0, len(batch))
		kept := batch[:0]
		for _, in := range batch {
			if !in.checked {
				err := errs[0]
				errs = errs[1:]
				if err != nil {
					s.log.Debug("block from peer refused", "hash", in.b.Hash, "peer", in.from, "err", err)
					continue
				}
			}
			kept = append(kept, in)
			blocks = append(blocks, in.b)
		}
		// Queue, then wait on another goroutine: the next batch reaches
		// the writer while this one's fsync runs, still in order.
		wait := s.n.Engine.QueueChecked(ctx, blocks)
		select {
		case s.intakeWaits <- intakeWait{wait: wait, ins: kept}:
		case <-ctx.Done():
			return
		}
	}
}

// intakeWait is a batch the intake queued, waiting for its answers.
type intakeWait struct {
	wait func() ([]node.Result, []error)
	ins  []inBlock
}

// intakeAnswers takes the engine's answers to the intake's batches, in
// order, and deals with the blocks that could not be applied yet.
func (s *Service) intakeAnswers(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case w := <-s.intakeWaits:
			_, errs := w.wait()
			for i, in := range w.ins {
				s.afterSubmit(ctx, in, errs[i])
			}
		}
	}
}

// afterSubmit deals with what the engine said of a block from a peer.
func (s *Service) afterSubmit(ctx context.Context, in inBlock, err error) {
	var missing ledger.Hash
	var fe *ledger.ForkError
	switch {
	case errors.As(err, &fe):
		// Recorded as a conflict, which the feed has; or refused as a
		// contender of a confirmed block, which the election loop watches
		// for a conflicting confirmation.
		select {
		case s.decided <- fe:
		default:
		}
		return
	case err == nil:
		return // applied: the feed has it
	case errors.Is(err, ledger.ErrGapPrevious):
		missing = in.b.Previous
	case errors.Is(err, ledger.ErrGapSource):
		missing = in.b.Source
	case errors.Is(err, ledger.ErrGapState):
		s.awaitState(in)
		return
	case ledger.IsRule(err):
		s.log.Debug("block from peer refused", "hash", in.b.Hash, "peer", in.from, "err", err)
		return
	default:
		if ctx.Err() == nil {
			s.log.Warn("block from peer not applied", "hash", in.b.Hash, "err", err)
		}
		return
	}
	s.log.Debug("block waits", "hash", in.b.Hash, "type", in.b.Type, "missing", missing)
	// Every block that reaches the engine's rules has passed Check.
	switch s.waiting.add(in.b, missing) {
	case dup:
		return
	case deadEnd:
		s.stats.uncheckedDropped.Add(1)
		s.log.Debug("block built on a lost fork dropped", "hash", in.b.Hash, "missing", missing)
		return
	}
	// The missing block may have been applied between the engine's answer
	// and the add, and its release gone by: look again.
	if _, found, err := s.n.Store.Entry(missing); err == nil && found {
		var again []inBlock
		for _, w := range s.waiting.releaseAll(missing) {
			again = append(again, inBlock{b: w, checked: true})
		}
		s.toIntakeLater(again)
		return
	}
	if in.from != "" {
		s.spawn(func() { s.fetch(ctx, in.from, missing) })
	}
}

// stateGap is the unchecked buffer's key for blocks waiting for state-chain
// index i: no block hashes to it.
func stateGap(i uint64) ledger.Hash {
	return sha256.Sum256(binary.BigEndian.AppendUint64([]byte("lattice state-chain index "), i))
}

// stateWait bounds how long a block waits for the state-chain index it
// names; the state chain's own sync brings it in seconds when it exists.
const stateWait = 2 * time.Minute

// stateTick is how often the state-chain indices that blocks wait for are
// looked for.
const stateTick = 250 * time.Millisecond

// awaitState keeps a lease block that names a state-chain index this node
// does not hold yet, and hands it back to the engine once the state chain
// has it (watchState).
func (s *Service) awaitState(in inBlock) {
	i := in.b.StateChainIndex
	key := stateGap(i)
	s.log.Debug("block waits for a state-chain index", "hash", in.b.Hash, "index", i)
	if s.waiting.add(in.b, key) != added {
		return // never deadEnd: no state-chain index is lost
	}
	// The index may have come between the engine's answer and the add,
	// and the watcher's look for it gone by: look again.
	if g := s.n.Engine.Governance(); g != nil && hasState(g, i) {
		s.releaseState(i)
		return
	}
	s.stateWaits.watch(i, time.Now().Add(stateWait))
}

// watchState hands the blocks waiting for a state-chain index back to the
// engine once the state chain has it, and drops them if it has not within
// stateWait. One goroutine for every index: it sleeps while none is waited
// for.
func (s *Service) watchState(ctx context.Context) {
	tick := time.NewTicker(stateTick)
	defer tick.Stop()
	for {
		if s.stateWaits.len() == 0 {
			select {
			case <-ctx.Done():
				return
			case <-s.stateWaits.wake:
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		g := s.n.Engine.Governance()
		came, expired := s.stateWaits.due(time.Now(),
			func(i uint64) bool { return g != nil && hasState(g, i) },
			func(i uint64) bool { return s.waiting.waitsFor(stateGap(i)) })
		for _, i := range came {
			s.releaseState(i)
		}
		for _, i := range expired {
			if n := len(s.waiting.release(stateGap(i))); n > 0 {
				s.log.Warn("blocks dropped: the state-chain index they name never came", "index", i, "blocks", n)
			}
		}
	}
}

// releaseState hands the blocks waiting for state-chain index i, and those
// waiting for them, back to the engine.
func (s *Service) releaseState(i uint64) {
	var again []inBlock
	for _, w := range s.waiting.releaseAll(stateGap(i)) {
		again = append(again, inBlock{b: w, checked: true})
	}
	if len(again) > 0 {
		s.log.Debug("state-chain index came: blocks released", "index", i, "blocks", len(again))
		s.toIntakeLater(again)
	}
}

// hasState reports whether g holds state-chain index i.
func hasState(g ledger.Governance, i uint64) bool {
	_, err := g.LeaseTerms(i, ledger.MinVCPUs, ledger.MinMemoryMB, ledger.MinDiskGB, ledger.MinDuration)
	return !errors.Is(err, ledger.ErrGapState)
}

// fetchDelay is how long a missing block may take to arrive on its own
// before it is asked for: gossip delivers a burst's messages out of order,
// and asking at once for every gap cost more than the gaps.
const fetchDelay = time.Second

// fetch asks peer p for a block another block needs, unless it arrives
// by itself first.
func (s *Service) fetch(ctx context.Context, p peer.ID, h ledger.Hash) {
	select {
	case <-time.After(fetchDelay):
	case <-ctx.Done():
		return
	}
	if !s.waiting.waitsFor(h) {
		return // it came, and what waited for it was released
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	blocks, err := s.requestBlocks(ctx, p, []ledger.Hash{h})
	if err != nil {
		s.log.Debug("fetch of a missing block failed", "hash", h, "peer", p, "err", err)
		return
	}
	limit := s.holdLimit()
	for _, b := range blocks {
		if in := (inBlock{b: b, from: p}); !s.hold(in, limit) {
			s.enqueue(in)
		}
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
	Served           uint64 `json:"served_blocks"`
	IntakeDropped    uint64 `json:"intake_dropped"`
	PublishDropped   uint64 `json:"publish_dropped"`
	Unchecked        int    `json:"unchecked_blocks"`
	UncheckedBytes   int    `json:"unchecked_bytes"`
	UncheckedEvicted uint64 `json:"unchecked_evicted"`
	Elections        int    `json:"active_elections"`
	Confirmations    uint64 `json:"confirmations"`
	ForksResolved    uint64 `json:"forks_resolved"`
	// UncheckedDropped counts blocks dropped from the unchecked buffer, or
	// never kept in it, because what they waited for lost its fork or was
	// rolled back.
	UncheckedDropped uint64 `json:"unchecked_dropped"`
	// Equivocations counts pairs of final votes of one representative
	// for two contenders of one election.
	Equivocations uint64 `json:"equivocations"`
	// Splits counts conflicting confirmations seen (see Split).
	Splits uint64 `json:"conflicting_confirmations"`
	// ElectionsRefused counts elections that found no room (MaxElections
	// were running): their accounts wait for room, then are put to
	// election again.
	ElectionsRefused uint64 `json:"elections_refused"`
	// FeedLags counts the times the election loop fell behind the
	// ledger's changes and looked through the ledger again.
	FeedLags uint64 `json:"feed_lags"`
	// Quorum is the quorum's state (see QuorumStatus).
	Quorum QuorumStatus `json:"quorum"`
}

// Stats returns the service's counters.
func (s *Service) Stats() Stats {
	c, b, ev := s.waiting.stats()
	el := int(s.electionCount.Load())
	return Stats{
		Peers: len(s.h.Peers()), GossipBlocks: s.stats.gossipBlocks.Load(), GossipVotes: s.stats.gossipVotes.Load(),
		Invalid: s.stats.invalid.Load(), Held: s.stats.held.Load(), Synced: s.stats.synced.Load(), Served: s.stats.served.Load(),
		IntakeDropped: s.stats.intakeDropped.Load(), PublishDropped: s.stats.publishDropped.Load(), Unchecked: c, UncheckedBytes: b, UncheckedEvicted: ev,
		Elections: el, Confirmations: s.stats.confirmations.Load(), ForksResolved: s.stats.resolved.Load(),
		UncheckedDropped: s.stats.uncheckedDropped.Load(), Equivocations: s.stats.equivocations.Load(), Splits: s.stats.splits.Load(),
		ElectionsRefused: s.stats.electionsRefused.Load(), FeedLags: s.stats.feedLags.Load(),
		Quorum: s.Quorum(),
	}
}

// PeerID returns the node's peer id.
func (s *Service) PeerID() string { return s.h.ID().String() }

// Addrs returns the multiaddrs peers can dial this node at.
func (s *Service) Addrs() []string { return s.h.Addrs() }

// Reachability is what AutoNAT learned of this node (p2p.Host.Reachability).
func (s *Service) Reachability() string { return s.h.Reachability() }

func (s *Service) String() string { return fmt.Sprintf("ledgernet(%s)", s.h.ID()) }

// takeBatch waits for one item of ch, then takes what else is waiting, up
// to max in all. It reports false when ctx ends first.
func takeBatch[T any](ctx context.Context, ch <-chan T, max int) ([]T, bool) {
	var batch []T
	select {
	case <-ctx.Done():
		return nil, false
	case x := <-ch:
		batch = append(batch, x)
	}
	for len(batch) < max {
		select {
		case x := <-ch:
			batch = append(batch, x)
		default:
			return batch, true
		}
	}
	return batch, true
}

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
