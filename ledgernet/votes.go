package ledgernet

import (
	"context"
	"errors"
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

// flushVotes signs the gathered hashes with every representative key that
// has weight, gossips the votes and counts them: the non-final votes
// first, then the final votes, each recorded durably before it is signed.
// Counting a non-final vote may make its election agreed, and its final
// vote then goes out in the same flush.
func (l *electionLoop) flushVotes(ctx context.Context) {
	for len(l.pending)+len(l.finals) > 0 {
		if len(l.pending) > 0 {
			hashes := l.current(l.pending, false)
			l.pending = nil
			l.cast(ctx, hashes, l.s.stamp())
			continue
		}
		hashes := l.recordFinals(l.current(l.finals, true))
		l.finals = nil
		l.cast(ctx, hashes, consensus.FinalTimestamp)
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

// recordFinals records the final votes of hashes durably and returns those
// that may be signed: a place where a final vote for another block is
// recorded (by a vote request answered meanwhile) keeps that one.
func (l *electionLoop) recordFinals(hashes []ledger.Hash) []ledger.Hash {
	recs := make([]ledgerstore.FinalVoteRecord, 0, len(hashes))
	for _, h := range hashes {
		root, _ := l.tally.RootOf(h)
		recs = append(recs, ledgerstore.FinalVoteRecord{Account: root.Account, Previous: root.Previous, Hash: h})
	}
	err := l.s.n.Store.RecordFinalVotes(recs)
	if err == nil {
		return hashes
	}
	if !errors.Is(err, ledgerstore.ErrFinalVoteExists) {
		// Nothing is signed that is not recorded; the elections are
		// advised again at their next vote or sweep.
		l.s.log.Error("recording final votes", "err", err)
		for _, r := range recs {
			delete(l.final, consensus.Root{Account: r.Account, Previous: r.Previous})
		}
		return nil
	}
	var out []ledger.Hash
	for _, r := range recs {
		root := consensus.Root{Account: r.Account, Previous: r.Previous}
		if err := l.s.n.Store.RecordFinalVotes([]ledgerstore.FinalVoteRecord{r}); err == nil {
			out = append(out, r.Hash)
			continue
		}
		rec, found, rerr := l.s.n.Store.FinalVote(r.Account, r.Previous)
		if rerr != nil || !found {
			delete(l.final, root)
			continue
		}
		l.final[root] = rec
		l.setChoice(root, rec, true)
		if _, ok := l.tally.RootOf(rec); ok {
			out = append(out, rec)
		}
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
