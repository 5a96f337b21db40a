// Package govnet keeps the governance state chain (its rules are package
// statechain) on disk and in step across the network: blocks submitted
// over the API are checked, synced to disk and gossiped; blocks from peers
// are checked the same way; a node that is behind or new pulls the blocks
// it lacks from its peers. Two different blocks signed for one index are
// evidence that the keyholders broke the protocol: the node keeps both,
// reports them and stops taking governance changes (it halts) until its
// operator names the block to drop (Config.Reject).
package govnet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/statechain"
)

// Topic and protocol names, under the host's /lattice/<genesis>/ namespace.
const (
	topicBlocks  = "statechain/1"
	protocolSync = "statechain-sync/1"
)

// Errors of Submit besides the rules' (statechain.Err...).
var (
	// ErrHalted: the node holds two conflicting blocks for one index and
	// takes no governance change until its operator resolves it.
	ErrHalted = errors.New("the state chain is halted: the keyholders signed two different blocks for one index (see GET /statechain/conflicts)")
	// ErrEarly: the block is stamped further ahead of this node's clock
	// than MaxClockSkew.
	ErrEarly = errors.New("timestamp is ahead of this node's clock")
	// ErrRejected: the operator rejected this block (Config.Reject).
	ErrRejected = errors.New("this block was rejected by the node's operator")
	// ErrClosed: the service is closed.
	ErrClosed = errors.New("govnet: the state chain service is closed")
)

// Config configures a Service. Zero values take the defaults.
type Config struct {
	// Dir holds the store (DATA/statechain); FS is its file system, nil
	// meaning the operating system's.
	Dir string
	FS  vfs.FS
	// Host is the node's peer-to-peer host.
	Host *p2p.Host
	// Network is the ledger's genesis hash, which every block is bound to.
	Network ledger.Hash
	// Genesis is block 0, made from the genesis file (statechain.Genesis).
	Genesis *statechain.Block
	// Logger receives the service's logs; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxClockSkew is how far ahead of this node's clock a block submitted
	// over the API may be stamped. Default 5 minutes.
	MaxClockSkew time.Duration
	// SyncInterval is how often the node asks a peer for blocks it lacks.
	// Default 10 seconds.
	SyncInterval time.Duration
	// Reject names blocks the operator chose to drop after a conflict:
	// never accepted, and removed at start, with every block after them,
	// if held.
	Reject []ledger.Hash
	// OnAppend, if set, is called with each block's index once the block
	// is applied (with the service's lock held: it must not call back).
	OnAppend func(index uint64)
}

// Service is the state chain of one node.
type Service struct {
	cfg   Config
	log   *slog.Logger
	h     *p2p.Host
	st    *store
	topic *p2p.Topic

	mu        sync.Mutex
	blocks    []*statechain.Block
	keysets   []ledger.Keyset     // the keyset in force after each block
	states    []*statechain.State // the state after each block (never changed)
	state     *statechain.State
	conflicts []*Conflict
	reject    map[ledger.Hash]bool
	closing   bool // set under mu by Close: the store takes no more writes

	kick        chan peer.ID // peers to pull from at once, for kickLoop
	kicks       *kicks       // bounds each peer's kicks
	warnForeign sync.Once
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	closed      sync.Once
}

// Start opens the store, checks and replays the chain it holds, joins the
// network and starts syncing.
func Start(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxClockSkew == 0 {
		cfg.MaxClockSkew = 5 * time.Minute
	}
	if cfg.SyncInterval == 0 {
		cfg.SyncInterval = 10 * time.Second
	}
	if cfg.FS == nil {
		cfg.FS = vfs.Default
	}
	st, err := openStore(cfg.Dir, cfg.FS, cfg.Network, cfg.Logger)
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, log: cfg.Logger.With("service", "statechain"), h: cfg.Host, st: st,
		reject: map[ledger.Hash]bool{}, kick: make(chan peer.ID, 1), kicks: newKicks(cfg.SyncInterval)}
	for _, h := range cfg.Reject {
		s.reject[h] = true
	}
	if err := s.load(); err != nil {
		st.close()
		return nil, err
	}
	if s.h != nil {
		if s.topic, err = s.h.Join(topicBlocks, s.validate, s.deliver); err != nil {
			st.close()
			return nil, err
		}
		s.h.Handle(protocolSync, s.serveSync)
		ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
		s.wg.Go(func() { s.pullLoop(ctx) })
		s.wg.Go(func() { s.kickLoop(ctx) })
	}
	return s, nil
}

// load reads the chain, records and drops what the operator rejected,
// replays the rest from block 0, reads the conflicts, and takes the block
// a resolution kept from the node's own evidence.
func (s *Service) load() error {
	if s.reject[s.cfg.Genesis.Hash] {
		return fmt.Errorf("govnet: --statechain-reject names block 0 (%s), which comes from the genesis file and cannot be rejected", s.cfg.Genesis.Hash)
	}
	if err := s.st.putRejects(s.cfg.Reject); err != nil {
		return err
	}
	stored, err := s.st.rejects()
	if err != nil {
		return err
	}
	for _, h := range stored {
		s.reject[h] = true
	}
	blocks, err := s.st.blocks()
	if err != nil {
		return err
	}
	if len(blocks) == 0 {
		if err := s.st.put(s.cfg.Genesis); err != nil {
			return err
		}
		blocks = []*statechain.Block{s.cfg.Genesis}
	}
	if blocks[0].Hash != s.cfg.Genesis.Hash {
		return fmt.Errorf("govnet: %s holds the state chain of another network or governance keyset (block 0 is %s, the genesis file makes %s)",
			s.cfg.Dir, blocks[0].Hash, s.cfg.Genesis.Hash)
	}
	for i, b := range blocks {
		if s.reject[b.Hash] {
			s.log.Warn("dropping rejected state-chain blocks", "from", i, "count", len(blocks)-i, "hash", b.Hash)
			if err := s.st.truncate(uint64(i)); err != nil {
				return err
			}
			blocks = blocks[:i]
			break
		}
	}
	state, err := statechain.New(s.cfg.Network, blocks[0])
	if err != nil {
		return fmt.Errorf("govnet: block 0: %w", err)
	}
	s.blocks, s.keysets, s.state = blocks[:1], []ledger.Keyset{state.Keyset()}, state
	s.states = []*statechain.State{state}
	for _, b := range blocks[1:] {
		if err := s.append(b, false); err != nil {
			return fmt.Errorf("govnet: stored block %d no longer applies: %w", b.Index, err)
		}
	}
	if s.conflicts, err = s.st.conflicts(); err != nil {
		return err
	}
	slices.SortStableFunc(s.conflicts, func(a, b *Conflict) int { return a.DetectedAt.Compare(b.DetectedAt) })
	named := map[ledger.Hash]bool{}
	for _, c := range s.conflicts {
		named[c.Blocks[0].Hash], named[c.Blocks[1].Hash] = true, true
		if !c.Resolved && (s.reject[c.Blocks[0].Hash] || s.reject[c.Blocks[1].Hash]) {
			c.Resolved = true
			if err := s.st.putConflict(c); err != nil {
				return err
			}
			s.log.Info("state-chain conflict resolved by the operator", "index", c.Index)
		}
	}
	for _, h := range s.cfg.Reject {
		if !named[h] {
			s.log.Warn("--statechain-reject names a block that is in no conflict this node recorded; it will never be accepted", "hash", h)
		}
	}
	// A resolution may leave the kept block only in the evidence (every
	// node held the other): take it from there.
	for progressed := true; progressed; {
		progressed = false
		for _, c := range s.conflicts {
			for _, b := range c.Blocks {
				if c.Resolved && !s.reject[b.Hash] && b.Index == s.state.Index()+1 && s.append(b, true) == nil {
					s.log.Info("state-chain block kept by the resolution applied from the evidence", "index", b.Index, "hash", b.Hash)
					progressed = true
				}
			}
		}
	}
	if c := s.haltedAt(); c != nil {
		s.log.Error("the state chain is halted: two blocks were signed for one index", "index", c.Index,
			"held", c.Blocks[0].Hash, "other", c.Blocks[1].Hash)
	}
	return nil
}

// append applies b after the tip and, when persist, stores it synced
// first. Called with mu held (or before the service runs).
func (s *Service) append(b *statechain.Block, persist bool) error {
	n, err := s.state.Apply(b)
	if err != nil {
		return err
	}
	if persist {
		if err := s.st.put(b); err != nil {
			return fmt.Errorf("govnet: store block %d: %w", b.Index, err)
		}
	}
	s.blocks = append(s.blocks, b.Clone())
	s.keysets = append(s.keysets, n.Keyset())
	s.states = append(s.states, n)
	s.state = n
	if s.cfg.OnAppend != nil {
		s.cfg.OnAppend(b.Index)
	}
	return nil
}

// StateAt returns the state after block i, if the node holds it.
func (s *Service) StateAt(i uint64) (*statechain.State, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= uint64(len(s.states)) {
		return nil, false
	}
	return s.states[i], true
}

// haltedAt returns the first conflict not resolved, if any. Called with
// mu held.
func (s *Service) haltedAt() *Conflict {
	for _, c := range s.conflicts {
		if !c.Resolved {
			return c
		}
	}
	return nil
}

// Close stops the service and closes its store.
func (s *Service) Close() error {
	var err error
	s.closed.Do(func() {
		if s.cancel != nil {
			s.cancel()
		}
		s.wg.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		// Gossip may still deliver until the host closes, after the
		// modules: from here on observe ignores it.
		s.closing = true
		err = s.st.close()
	})
	return err
}

// Submit checks b against the tip, stores it synced and gossips it. A block
// already held answers its hash and changes nothing. Refusals wrap the
// rules' errors (statechain.Err...), ErrEarly, ErrRejected or ErrHalted.
// A block that conflicts with one held is kept as evidence and halts the
// chain, as one from a peer would.
func (s *Service) Submit(ctx context.Context, b *statechain.Block) (ledger.Hash, error) {
	if limit := s.cfg.Now().Add(s.cfg.MaxClockSkew).UnixMilli(); b.Timestamp > limit {
		return ledger.Hash{}, fmt.Errorf("%w: %d is more than %s ahead", ErrEarly, b.Timestamp, s.cfg.MaxClockSkew)
	}
	if h := b.ComputeHash(s.cfg.Network); h != b.Hash {
		return ledger.Hash{}, fmt.Errorf("%w: block says %s, contents hash to %s", statechain.ErrBadHash, b.Hash, h)
	}
	s.mu.Lock()
	res, err := s.observe(b)
	s.mu.Unlock()
	switch res {
	case known:
		return b.Hash, nil
	case added:
		s.publish(ctx, b)
		return b.Hash, nil
	case evidence:
		s.publish(ctx, b)
		return ledger.Hash{}, fmt.Errorf("%w: index %d is taken by another block: %w", statechain.ErrStale, b.Index, ErrHalted)
	case behind:
		// The client knows blocks this node lacks: pull them now
		// (unless that peer's kicks are spent), so that a retry finds
		// them.
		if s.h != nil {
			if peers := s.h.Peers(); len(peers) > 0 {
				s.syncWith(peers[rand.IntN(len(peers))])
			}
		}
	}
	return ledger.Hash{}, err
}

// outcome is what observe did with a block.
type outcome int

const (
	refused  outcome = iota // invalid: err says why
	added                   // applied after the tip
	known                   // held already
	evidence                // conflicts with a held block: recorded, the chain halts
	recorded                // evidence recorded already
	behind                  // this node lacks what it builds on: sync
	ignored                 // not wrong, not useful (halted, rejected)
)

// observe judges b and acts on it: applies it after the tip, or records
// it as evidence of a conflict. Called with mu held.
func (s *Service) observe(b *statechain.Block) (outcome, error) {
	if s.closing {
		return ignored, ErrClosed
	}
	if s.reject[b.Hash] {
		return ignored, ErrRejected
	}
	tip := s.state.Index()
	switch {
	case b.Index <= tip && s.blocks[b.Index].Hash == b.Hash:
		return known, nil
	case b.Index <= tip:
		return s.conflict(b)
	case b.Index > tip+1:
		return behind, fmt.Errorf("%w: index %d, this node's tip is %d", statechain.ErrGap, b.Index, tip)
	}
	if c := s.haltedAt(); c != nil {
		return ignored, ErrHalted
	}
	err := s.append(b, true)
	switch {
	case err == nil:
		s.log.Info("state-chain block applied", "index", b.Index, "operation", b.Operation, "key", b.Key, "hash", b.Hash)
		return added, nil
	case errors.Is(err, statechain.ErrWrongPrevious):
		return behind, err
	}
	return refused, err
}

// conflict judges b, a block for an index this node holds another block
// at: when b follows the same block and would have been valid there (its
// shape, hash, time, signatures by a threshold of the keyset in force and
// its value, as Check judges it against the state before that index), the
// keyholders signed two blocks for one index, and the node records the
// evidence and halts. Called with mu held.
func (s *Service) conflict(b *statechain.Block) (outcome, error) {
	i := b.Index
	if i == 0 {
		return refused, fmt.Errorf("%w: block 0 comes from the genesis file", statechain.ErrStale)
	}
	if b.Previous != s.blocks[i-1].Hash {
		return behind, fmt.Errorf("%w: index %d follows a block this node does not hold", statechain.ErrStale, i)
	}
	for _, c := range s.conflicts {
		if !c.Resolved && c.Index == i && c.Blocks[1].Hash == b.Hash {
			return recorded, fmt.Errorf("%w: index %d: %w", statechain.ErrStale, i, ErrHalted)
		}
	}
	// The cheap checks first, signatures against the keyset in force
	// there: only a block a threshold signed costs a replay.
	if h := b.ComputeHash(s.cfg.Network); h != b.Hash {
		return refused, fmt.Errorf("%w: block says %s, contents hash to %s", statechain.ErrBadHash, b.Hash, h)
	}
	if err := statechain.CheckSignatures(b, s.keysets[i-1]); err != nil {
		return refused, err
	}
	before, err := s.stateAt(i - 1)
	if err != nil {
		return refused, err
	}
	if err := before.Check(b); err != nil {
		return refused, err
	}
	c := &Conflict{Index: i, Blocks: [2]*statechain.Block{s.blocks[i].Clone(), b.Clone()}, DetectedAt: s.cfg.Now().UTC()}
	if err := s.st.putConflict(c); err != nil {
		return refused, err
	}
	s.conflicts = append(s.conflicts, c)
	s.log.Error("the keyholders signed two different blocks for one state-chain index: halting governance changes",
		"index", i, "held", c.Blocks[0].Hash, "other", b.Hash)
	return evidence, nil
}

// stateAt replays the chain up to index i (conflicts are rare, and the
// chain is short). Called with mu held.
func (s *Service) stateAt(i uint64) (*statechain.State, error) {
	st, err := statechain.New(s.cfg.Network, s.blocks[0])
	if err != nil {
		return nil, err
	}
	if st, err = st.ApplyAll(s.blocks[1 : i+1]); err != nil {
		return nil, fmt.Errorf("govnet: replaying %w", err)
	}
	return st, nil
}

// Tip returns the latest block.
func (s *Service) Tip() *statechain.Block {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blocks[len(s.blocks)-1].Clone()
}

// Block returns the block at index i.
func (s *Service) Block(i uint64) (*statechain.Block, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= uint64(len(s.blocks)) {
		return nil, false
	}
	return s.blocks[i].Clone(), true
}

// Range returns the blocks from index from to index to, both included,
// at most max of them.
func (s *Service) Range(from, to uint64, max int) []*statechain.Block {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*statechain.Block
	for i := from; i <= to && i < uint64(len(s.blocks)) && len(out) < max; i++ {
		out = append(out, s.blocks[i].Clone())
	}
	return out
}

// State returns the state after the tip (a State is never changed).
func (s *Service) State() *statechain.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Conflicts returns the conflicts recorded, oldest first.
func (s *Service) Conflicts() []Conflict {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Conflict, len(s.conflicts))
	for i, c := range s.conflicts {
		out[i] = *c
	}
	return out
}

// evidence returns both blocks of every unresolved conflict, for peers.
func (s *Service) evidence() []*statechain.Block {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*statechain.Block
	for _, c := range s.conflicts {
		if !c.Resolved {
			out = append(out, c.Blocks[0].Clone(), c.Blocks[1].Clone())
		}
	}
	return out
}

// Halted reports whether an unresolved conflict halts the chain.
func (s *Service) Halted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.haltedAt() != nil
}

// publish gossips b.
func (s *Service) publish(ctx context.Context, b *statechain.Block) {
	if s.topic == nil {
		return
	}
	data, err := b.MarshalBinary()
	if err != nil {
		return
	}
	if err := s.topic.Publish(ctx, data); err != nil && ctx.Err() == nil {
		s.log.Debug("publish state-chain block", "err", err)
	}
}

// validate is the gossip validator: a block is forwarded when it applies
// after the tip or is evidence of a conflict (so that every node learns of
// it); a block this node cannot place yet is ignored and pulled from the
// sender (syncWith bounds how often), unless its signatures could be
// valid under no keyset; an invalid one is rejected.
func (s *Service) validate(_ context.Context, from peer.ID, data []byte) p2p.Verdict {
	if from == s.h.ID() {
		return p2p.Accept
	}
	b := new(statechain.Block)
	if err := b.UnmarshalBinary(data, s.cfg.Network); err != nil {
		return p2p.Reject
	}
	s.mu.Lock()
	res, _ := s.observe(b)
	s.mu.Unlock()
	switch res {
	case added, evidence:
		return p2p.Accept
	case behind:
		// observe checked no signature: which keyset must sign the block
		// depends on the blocks below it, which this node lacks. What
		// every keyset demands is checked here, so that a block made
		// without any key of the network (a few bytes anyone can send)
		// neither costs a pull nor goes unpenalised.
		if checkSigned(b) != nil {
			return p2p.Reject
		}
		s.syncWith(from)
		return p2p.Ignore
	case refused:
		return p2p.Reject
	}
	return p2p.Ignore
}

func (s *Service) deliver(peer.ID, []byte) {} // validate applied it

// checkSigned checks what b's signatures must be under any keyset, for a
// block whose keyset this node cannot know yet (it lacks the blocks below
// it): at least one signature, since every keyset's threshold is at least
// 1, and each a valid signature of b's hash by its own key. It does not
// tell whether the signers belong to the keyset in force there.
func checkSigned(b *statechain.Block) error {
	if len(b.Signatures) == 0 {
		return fmt.Errorf("%w: block %d carries no signature", statechain.ErrUnauthorized, b.Index)
	}
	signers := make([]ledger.Address, len(b.Signatures))
	for i, sig := range b.Signatures {
		signers[i] = sig.PublicKey
	}
	// Each signer is a member of the keyset of the signers: only the
	// signatures themselves are judged.
	if err := statechain.CheckSignatures(b, ledger.NewKeyset(1, signers...)); err != nil {
		return fmt.Errorf("block %d can be valid under no keyset: %w", b.Index, err)
	}
	return nil
}

// syncWith asks kickLoop to pull from p soon, unless p's kicks are spent
// (kicks.take): a block this node cannot place costs its sender nothing,
// so the pulls it asks for must be bounded, or a peer gossiping junk
// ahead of the tip would have this node pull from it alone.
func (s *Service) syncWith(p peer.ID) {
	if !s.kicks.take(p, time.Now()) {
		return
	}
	select {
	case s.kick <- p:
	default:
		s.kicks.release(p, time.Now()) // a pull is queued already: this kick is spent
	}
}

// pullLoop pulls from a random peer every SyncInterval (every second until
// the first pull succeeds), on a ticker of its own: kicks neither reset
// nor delay it, so a node catches up from whichever honest peer it has,
// whatever other peers gossip.
func (s *Service) pullLoop(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	synced := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		peers := s.h.Peers()
		if len(peers) == 0 {
			continue
		}
		if s.pullFrom(ctx, peers[rand.IntN(len(peers))]) && !synced {
			synced = true
			t.Reset(s.cfg.SyncInterval)
		}
	}
}

// kickLoop pulls at once, one after another, from the peers syncWith
// names: those whose block this node could not place.
func (s *Service) kickLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-s.kick:
			s.pullFrom(ctx, p)
			s.kicks.release(p, time.Now())
		}
	}
}

// pullFrom pulls from p, logging a failure, and reports whether it
// succeeded.
func (s *Service) pullFrom(ctx context.Context, p peer.ID) bool {
	if err := s.pull(ctx, p); err != nil {
		if ctx.Err() == nil {
			s.log.Debug("state-chain pull failed", "peer", p, "err", err)
		}
		return false
	}
	return true
}

// kicks bounds the pulls each peer's gossip asks for: a peer's kick is
// honoured only while no pull it kicked is queued or running, and no
// sooner than an interval after the last one ended. The clock is the real
// one (time.Now), not Config.Now: it paces the network, not the chain.
type kicks struct {
	mu    sync.Mutex
	every time.Duration
	peers map[peer.ID]kickState
}

type kickState struct {
	busy  bool      // a pull it kicked is queued or running
	ended time.Time // when its last kicked pull ended
}

// maxKickPeers is how many peers kicks remembers before it forgets those
// whose interval has passed (they are as good as unknown).
const maxKickPeers = 64

func newKicks(every time.Duration) *kicks {
	return &kicks{every: every, peers: map[peer.ID]kickState{}}
}

// take reports whether a kick by p is honoured at now, marking p busy if
// so; release must follow.
func (k *kicks) take(p peer.ID, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if st, ok := k.peers[p]; ok && (st.busy || now.Sub(st.ended) < k.every) {
		return false
	}
	if len(k.peers) >= maxKickPeers {
		k.prune(now)
	}
	k.peers[p] = kickState{busy: true}
	return true
}

// release records that p's kicked pull ended (or was dropped) at now.
func (k *kicks) release(p peer.ID, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.peers[p] = kickState{ended: now}
}

// prune forgets the peers that are not busy and whose interval has
// passed. Called with mu held.
func (k *kicks) prune(now time.Time) {
	for p, st := range k.peers {
		if !st.busy && now.Sub(st.ended) >= k.every {
			delete(k.peers, p)
		}
	}
}
