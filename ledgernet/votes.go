package ledgernet

import (
	"context"
	"slices"
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/ledgerstore"
	"github.com/latticenet/lattice/p2p"
)

// validateVote is the gossip validator of votes: the signature must verify
// for this network; a vote of an account without confirmed weight is
// ignored, not forwarded. This node's own votes, which it has just
// signed, are not verified again.
func (s *Service) validateVote(_ context.Context, from peer.ID, data []byte) p2p.Verdict {
	if from == s.h.ID() {
		return p2p.Accept
	}
	v := new(consensus.Vote)
	if err := v.UnmarshalBinary(data); err != nil {
		s.stats.invalid.Add(1)
		return p2p.Reject
	}
	if err := v.Verify(s.network); err != nil {
		s.stats.invalid.Add(1)
		return p2p.Reject
	}
	if w, err := s.n.Store.ConfirmedWeight(v.Representative); err != nil || w.IsZero() {
		return p2p.Ignore
	}
	return p2p.Accept
}

func (s *Service) deliverVote(_ peer.ID, data []byte) {
	v := new(consensus.Vote)
	if v.UnmarshalBinary(data) != nil {
		return
	}
	s.stats.gossipVotes.Add(1)
	select {
	case s.votesIn <- v:
	default: // the election loop is behind; vote requests recover it
	}
}

// flushVotes signs the gathered non-final votes with every representative
// key that has weight, gossips them and counts them, then hands the
// gathered final votes to the final-vote writer, which records them
// durably before it signs them (finalLoop). Counting a non-final vote may
// make its election agreed, and its final vote then goes out in the same
// flush.
func (l *electionLoop) flushVotes(ctx context.Context) {
	for len(l.pending)+len(l.finals) > 0 {
		if len(l.pending) > 0 {
			hashes := l.current(l.pending, false)
			l.pending = nil
			l.cast(ctx, hashes, l.s.stamp())
			continue
		}
		hashes := l.current(l.finals, true)
		l.finals = nil
		if len(hashes) == 0 {
			continue
		}
		recs := make([]ledgerstore.FinalVoteRecord, 0, len(hashes))
		for _, h := range hashes {
			root, _ := l.tally.RootOf(h)
			recs = append(recs, ledgerstore.FinalVoteRecord{Account: root.Account, Previous: root.Previous, Hash: h})
		}
		l.s.finalsIn.put(recs) // never waits (see handoff)
	}
}

// current keeps, of hashes gathered for votes, each election's current
// choice once: a choice that changed before the flush must not go out
// beside its successor, because a vote naming two contenders of one
// election counts for the first. No non-final vote goes out where the
// final vote is cast.
func (l *electionLoop) current(hashes []ledger.Hash, final bool) []ledger.Hash {
	seen := make(map[ledger.Hash]bool, len(hashes))
	var out []ledger.Hash
	for _, h := range hashes {
		root, ok := l.tally.RootOf(h)
		if seen[h] || !ok || l.choice[root] != h {
			continue
		}
		if f, done := l.final[root]; done != final || (final && f != h) {
			continue
		}
		seen[h] = true
		out = append(out, h)
	}
	return out
}

// handoff passes items from one loop to another without the sender ever
// waiting: the receiver takes all that accumulated since it last looked.
// The election loop hands final votes to record to the final-vote writer
// this way (the writer may be behind the engine's queue of blocks, and the
// loop must go on counting votes meanwhile), and the writer hands the
// votes it signed back.
type handoff[T any] struct {
	mu     sync.Mutex
	items  []T
	notify chan struct{} // 1-buffered: something to take
}

func newHandoff[T any]() *handoff[T] { return &handoff[T]{notify: make(chan struct{}, 1)} }

func (h *handoff[T]) put(items []T) {
	if len(items) == 0 {
		return
	}
	h.mu.Lock()
	h.items = append(h.items, items...)
	h.mu.Unlock()
	select {
	case h.notify <- struct{}{}:
	default:
	}
}

func (h *handoff[T]) take() []T {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.items
	h.items = nil
	return out
}

// finalLoop is the final-vote writer. It records the final votes of
// several flushes in one synced batch (an fsync per vote flush cost a
// third of a node's confirmations), then signs them, publishes them, marks
// them final for vote requests and hands them to the election loop to
// count. Nothing is signed before it is durable. A place where a final
// vote for another block is recorded (by a run before a restart, or an
// earlier flush) keeps that one.
func (s *Service) finalLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.finalsIn.notify:
		}
		recs := s.recordFinals(ctx, s.finalsIn.take())
		if len(recs) == 0 {
			continue
		}
		hashes := make([]ledger.Hash, len(recs))
		for i, r := range recs {
			hashes[i] = r.Hash
			s.choices.markFinal(consensus.Root{Account: r.Account, Previous: r.Previous}, r.Hash)
		}
		var votes []*consensus.Vote
		for chunk := range slices.Chunk(hashes, consensus.MaxVoteHashes) {
			for _, v := range s.signVotes(chunk, consensus.FinalTimestamp) {
				if err := s.votes.Publish(ctx, mustBinary(v)); err != nil && ctx.Err() == nil {
					s.log.Debug("publish vote", "err", err)
				}
				votes = append(votes, v)
			}
		}
		s.ownVotes.put(votes)
	}
}

// recordFinals records recs durably, in the engine's next group commit,
// and returns them as recorded: a place with a final vote for another
// block recorded before keeps that one. On a write error nothing is
// signed (the engine has failed, and the node stops).
func (s *Service) recordFinals(ctx context.Context, recs []ledgerstore.FinalVoteRecord) []ledgerstore.FinalVoteRecord {
	out, err := s.n.Engine.RecordFinalVotes(ctx, recs)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("recording final votes", "err", err)
		}
		return nil
	}
	return out
}

// cast signs hashes at timestamp ts with each representative key that has
// weight, gossips the votes and counts them.
func (l *electionLoop) cast(ctx context.Context, hashes []ledger.Hash, ts int64) {
	for chunk := range slices.Chunk(hashes, consensus.MaxVoteHashes) {
		for _, v := range l.s.signVotes(chunk, ts) {
			if err := l.s.votes.Publish(ctx, mustBinary(v)); err != nil && ctx.Err() == nil {
				l.s.log.Debug("publish vote", "err", err)
			}
			l.vote(v)
		}
	}
}

// heartbeat has this node's representatives announce themselves with a
// non-final vote for the genesis block (in no election, so it counts for
// nothing) often enough that peers count them online on an idle network:
// four times an online window, at most every minute, at least every
// second.
func (l *electionLoop) heartbeat(ctx context.Context) {
	every := min(max(l.s.cfg.OnlineWindow.Milliseconds()/4, 1000), 60_000)
	now := l.now()
	if l.beat != 0 && now-l.beat < every {
		return
	}
	l.beat = now
	l.cast(ctx, []ledger.Hash{l.s.network}, l.s.stamp())
}

// stamp returns a vote timestamp later than every earlier one of this
// node, so a changed vote always replaces the one before.
func (s *Service) stamp() int64 {
	for {
		last := s.lastTS.Load()
		ts := max(last+1, s.cfg.Now().UnixMilli())
		if s.lastTS.CompareAndSwap(last, ts) {
			return ts
		}
	}
}

// choiceBook is what this node's representatives vote for in each running
// election, by contender: a vote request about any contender is answered
// with the choice, so answering one never undoes a switch to the leader,
// and with the final vote once it is cast.
type choiceBook struct {
	mu     sync.Mutex
	byHash map[ledger.Hash]bookChoice
	byRoot map[consensus.Root][]ledger.Hash
}

type bookChoice struct {
	hash  ledger.Hash
	final bool
}

func (c *choiceBook) set(root consensus.Root, choice ledger.Hash, final bool, contenders []ledger.Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byHash == nil {
		c.byHash = make(map[ledger.Hash]bookChoice)
		c.byRoot = make(map[consensus.Root][]ledger.Hash)
	}
	for _, h := range c.byRoot[root] {
		delete(c.byHash, h)
	}
	contenders = append(slices.Clone(contenders), choice)
	for _, h := range contenders {
		c.byHash[h] = bookChoice{choice, final}
	}
	c.byRoot[root] = contenders
}

// markFinal marks the choice at root final once its final vote is
// recorded, if the choice is still h.
func (c *choiceBook) markFinal(root consensus.Root, h ledger.Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.byRoot[root] {
		if bc := c.byHash[k]; bc.hash == h {
			c.byHash[k] = bookChoice{h, true}
		}
	}
}

func (c *choiceBook) forget(root consensus.Root) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range c.byRoot[root] {
		delete(c.byHash, h)
	}
	delete(c.byRoot, root)
}

// choiceFor returns what this node votes for in the election h competes
// in, and false when h is in no election this node runs.
func (c *choiceBook) choiceFor(h ledger.Hash) (bookChoice, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.byHash[h]
	return v, ok
}

// signVotes signs hashes (at most MaxVoteHashes, no duplicates) with each
// representative key that has confirmed weight.
func (s *Service) signVotes(hashes []ledger.Hash, ts int64) []*consensus.Vote {
	var out []*consensus.Vote
	seen := make(map[ledger.Hash]bool, len(hashes))
	uniq := hashes[:0:0]
	for _, h := range hashes {
		if !seen[h] {
			seen[h] = true
			uniq = append(uniq, h)
		}
	}
	if len(uniq) == 0 {
		return nil
	}
	for _, k := range s.cfg.Reps {
		if w, err := s.n.Store.ConfirmedWeight(k.Address()); err != nil || w.IsZero() {
			continue
		}
		v := &consensus.Vote{Timestamp: ts, Hashes: uniq}
		v.Sign(s.network, k.Private())
		out = append(out, v)
	}
	return out
}

func mustBinary(v *consensus.Vote) []byte {
	b, err := v.MarshalBinary()
	if err != nil {
		panic("ledgernet: a vote this node signed does not encode: " + err.Error())
	}
	return b
}
