package ledgernet

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/p2p"
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

// flushVotes signs the gathered prevotes of round 0 and attestations
// (final votes of consensus.ConfirmedRound) with every representative key
// that has weight, gossips them and counts them, then
// hands the gathered votes that bind (prevotes of later rounds, final
// votes) to the vote writer, which records them durably before it signs
// them (voteWriter). Counting a prevote may complete a polka, and the
// final vote then goes out in the same flush.
func (l *electionLoop) flushVotes(ctx context.Context) {
	for len(l.pending)+len(l.attest)+len(l.binding) > 0 {
		if len(l.pending) > 0 {
			hashes := l.current(l.pending)
			l.pending = nil
			l.cast(ctx, hashes, 0, false)
			continue
		}
		if len(l.attest) > 0 {
			hashes := l.current(l.attest)
			l.attest = nil
			l.cast(ctx, hashes, consensus.ConfirmedRound, true)
			continue
		}
		recs := l.binding
		l.binding = nil
		l.s.bindingIn.put(recs) // never waits (see handoff)
	}
}

// current keeps, of hashes gathered for votes cast without a record, those
// whose election still runs, once each.
func (l *electionLoop) current(hashes []ledger.Hash) []ledger.Hash {
	seen := make(map[ledger.Hash]bool, len(hashes))
	out := hashes[:0]
	for _, h := range hashes {
		if _, ok := l.tally.RootOf(h); ok && !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
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

// voteWriter records the binding votes of several flushes in one synced
// batch (an fsync per vote flush cost a third of a node's confirmations),
// then signs those the record grants, publishes them, notes them for vote
// requests and hands them to the election loop to count. Nothing is
// signed before it is durable, and nothing the record refuses (a vote
// that could contradict one signed before a restart) is signed at all.
func (s *Service) voteWriter(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.bindingIn.notify:
		}
		asked := s.bindingIn.take()
		recs, err := s.n.Engine.RecordVotes(ctx, asked)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("recording votes", "err", err) // the engine has failed, and the node stops
			}
			continue
		}
		if len(recs) < len(asked) {
			// The election loop reads the record before its first vote at
			// every place, so its tally never asks for what the record
			// refuses; a refusal means they disagree (the same key on two
			// nodes, or a bug), and final votes that counted on the
			// refused ones (dependencies first) may have gone out.
			s.log.Error("the vote record refused votes the election loop asked for", "asked", len(asked), "granted", len(recs))
		}
		type kind struct {
			round uint32
			final bool
		}
		groups := map[kind][]ledger.Hash{}
		var order []kind
		for _, r := range recs {
			k := kind{r.Round, r.Final}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], r.Hash)
			s.choices.signed(consensus.Root{Account: r.Account, Previous: r.Previous}, r.Round, r.Final, r.Hash)
		}
		var votes []*consensus.Vote
		for _, k := range order {
			for chunk := range slices.Chunk(groups[k], consensus.MaxVoteHashes) {
				for _, v := range s.signVotes(chunk, k.round, k.final) {
					if err := s.votes.Publish(ctx, mustBinary(v)); err != nil && ctx.Err() == nil {
						s.log.Debug("publish vote", "err", err)
					}
					votes = append(votes, v)
				}
			}
		}
		s.ownVotes.put(votes)
	}
}

// cast signs hashes as prevotes or final votes of round with each
// representative key that has weight, gossips the votes and counts them.
func (l *electionLoop) cast(ctx context.Context, hashes []ledger.Hash, round uint32, final bool) {
	for chunk := range slices.Chunk(hashes, consensus.MaxVoteHashes) {
		for _, v := range l.s.signVotes(chunk, round, final) {
			if err := l.s.votes.Publish(ctx, mustBinary(v)); err != nil && ctx.Err() == nil {
				l.s.log.Debug("publish vote", "err", err)
			}
			l.vote(v)
		}
	}
}

// heartbeat has this node's representatives announce themselves with a
// prevote for the genesis block (in no election, so it counts for nothing)
// often enough that peers count them online on an idle network: four
// times an online window, at least every second, and at least every
// maxHeartbeat whatever this node's window, because a peer may run with a
// shorter one (an operator's --online-window 30s, to see a cut sooner)
// and would count these representatives offline between beats.
//
// A representative without weight signs nothing, so one that has just
// been given weight would be heard by no one, this node included, until
// the next beat: the node then counted the weight it had lost with the
// old representative and not the weight it had gained, and could report
// no quorum for up to maxHeartbeat. It beats on the tick the set of its
// representatives with weight changes instead, and once more a second
// later: a peer that confirms the delegation after the first beat
// ignored it (it counts confirmed weight only), and needs no fallback.
func (l *electionLoop) heartbeat(ctx context.Context) {
	every := min(max(l.s.cfg.OnlineWindow.Milliseconds()/4, 1000), maxHeartbeat.Milliseconds())
	now := l.now()
	voting := make([]bool, len(l.s.cfg.Reps))
	for i, k := range l.s.cfg.Reps {
		voting[i] = !l.weight(k.Address()).IsZero()
	}
	if l.beat != 0 && now-l.beat < every && slices.Equal(voting, l.voting) {
		return
	}
	changed := l.beat != 0 && !slices.Equal(voting, l.voting)
	l.beat, l.voting = now, voting
	if changed {
		l.beat = now - every + 1000 // the next beat in a second
	}
	l.cast(ctx, []ledger.Hash{l.s.network}, l.s.heartbeatRound(), false)
}

// maxHeartbeat is the longest time between two heartbeats: a peer whose
// online window is three times it (30 s) counts these representatives
// online without a gap. One small signed vote per representative every
// 10 s costs the network nothing worth the saving.
const maxHeartbeat = 10 * time.Second

// heartbeatRound is the round of a heartbeat: the Unix second, so that
// each heartbeat differs from the one before (the gossip layer drops a
// message it has seen) and no election round comes near it.
func (s *Service) heartbeatRound() uint32 { return uint32(s.cfg.Now().Unix()) }

// choiceBook is what this node's representatives have signed in each
// running election, and the highest polka the node has seen there, by
// contender: a vote request about any contender is answered with them, so
// answering never signs anything new, and a peer that missed a polka gets
// the evidence that lets its representatives move on.
type choiceBook struct {
	mu     sync.Mutex
	byHash map[ledger.Hash]consensus.Root
	byRoot map[consensus.Root]*bookEntry
}

type bookEntry struct {
	hashes  []ledger.Hash // the contenders it is listed under
	prevote struct {
		ok    bool
		round uint32
		hash  ledger.Hash
	}
	final struct {
		ok    bool
		round uint32
		hash  ledger.Hash
	}
	polka []*consensus.Vote
}

// entry returns root's entry, listing it under contenders too.
func (c *choiceBook) entry(root consensus.Root, contenders []ledger.Hash) *bookEntry {
	if c.byRoot == nil {
		c.byHash = make(map[ledger.Hash]consensus.Root)
		c.byRoot = make(map[consensus.Root]*bookEntry)
	}
	e := c.byRoot[root]
	if e == nil {
		e = &bookEntry{}
		c.byRoot[root] = e
	}
	for _, h := range contenders {
		if _, ok := c.byHash[h]; !ok {
			c.byHash[h] = root
			e.hashes = append(e.hashes, h)
		}
	}
	return e
}

// open lists root's entry under its contenders, changing nothing else.
func (c *choiceBook) open(root consensus.Root, contenders []ledger.Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entry(root, contenders)
}

// prevoted notes a prevote of round 0 for h, the first vote at root.
func (c *choiceBook) prevoted(root consensus.Root, h ledger.Hash, contenders []ledger.Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(root, append(contenders, h))
	if !e.prevote.ok {
		e.prevote.ok, e.prevote.hash = true, h
	}
}

// signed notes a vote signed after its record was granted.
func (c *choiceBook) signed(root consensus.Root, round uint32, final bool, h ledger.Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byRoot[root] == nil {
		return // the election ended meanwhile
	}
	e := c.entry(root, []ledger.Hash{h})
	m := &e.prevote
	if final {
		m = &e.final
	}
	if !m.ok || round >= m.round {
		m.ok, m.round, m.hash = true, round, h
	}
}

// setPolka notes the prevotes of the highest polka seen at root.
func (c *choiceBook) setPolka(root consensus.Root, votes []*consensus.Vote, contenders []ledger.Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entry(root, contenders).polka = votes
}

func (c *choiceBook) forget(root consensus.Root) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.byRoot[root]; e != nil {
		for _, h := range e.hashes {
			delete(c.byHash, h)
		}
		delete(c.byRoot, root)
	}
}

// bookAnswer is what a vote request about one contender gets.
type bookAnswer struct {
	prevote, final       bool
	prevoteRound, fround uint32
	prevoteHash, fhash   ledger.Hash
	polka                []*consensus.Vote
}

// answerFor returns what this node has for the election h competes in,
// and false when h is in no election this node runs.
func (c *choiceBook) answerFor(h ledger.Hash) (bookAnswer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	root, ok := c.byHash[h]
	if !ok {
		return bookAnswer{}, false
	}
	e := c.byRoot[root]
	return bookAnswer{
		prevote: e.prevote.ok, prevoteRound: e.prevote.round, prevoteHash: e.prevote.hash,
		final: e.final.ok, fround: e.final.round, fhash: e.final.hash, polka: e.polka,
	}, true
}

// signVotes signs hashes (at most MaxVoteHashes, no duplicates) as
// prevotes or final votes of round, with each representative key that has
// confirmed weight; attestations (round consensus.ConfirmedRound) with
// every representative key: a node that lags counts the weights of an
// earlier point of the ledger, where a key that holds nothing now may
// hold what it needs.
func (s *Service) signVotes(hashes []ledger.Hash, round uint32, final bool) []*consensus.Vote {
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
		if round != consensus.ConfirmedRound {
			if w, err := s.n.Store.ConfirmedWeight(k.Address()); err != nil || w.IsZero() {
				continue
			}
		}
		v := &consensus.Vote{Round: round, Final: final, Hashes: uniq}
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
