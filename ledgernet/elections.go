package ledgernet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/p2p"
)

// ElectionInfo describes an active election, for the API.
type ElectionInfo struct {
	Root    consensus.Root
	Started int64 // Unix ms
	Tallies []consensus.Contender
	Online  ledger.Amount
	Quorum  ledger.Amount
}

// Elections returns the running elections of forks (more than one
// contender), as of the last tick.
func (s *Service) Elections() []ElectionInfo {
	s.elMu.Lock()
	defer s.elMu.Unlock()
	return slices.Clone(s.elections)
}

// validateVote is the gossip validator of votes: the signature must verify
// for this network; a vote of an account without weight is ignored, not
// forwarded. This node's own votes, which it has just signed, are not
// verified again.
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
	if w, err := s.n.Store.Weight(v.Representative); err != nil || w.IsZero() {
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

// election is the loop's own state of one root.
type election struct {
	started    int64
	confirming bool
	asked      int64 // when votes were last requested, Unix ms
	contenders int
}

// electionLoop owns the tally: it starts elections for new blocks and
// forks, counts votes, has the node's representatives vote, and hands
// confirmed winners to the confirm loop.
type electionLoop struct {
	s       *Service
	tally   *consensus.Tally
	roots   map[consensus.Root]*election
	byHash  map[ledger.Hash]consensus.Root
	weights map[ledger.Address]ledger.Amount
	choice  map[consensus.Root]ledger.Hash // what this node's reps voted for
	silent  map[consensus.Root]struct{}    // started while this node's reps had no weight
	pending []ledger.Hash                  // hashes to vote for, gathered
	asking  bool
	askDone chan []*consensus.Vote
}

func (s *Service) electionLoop(ctx context.Context, sub *node.Subscription) {
	supply := s.n.Network.Genesis.Amount
	floor, err := supply.MulDivCeil(s.cfg.OnlineFloorPercent, 100)
	if err != nil || floor.IsZero() {
		floor = supply
	}
	l := &electionLoop{
		s:       s,
		tally:   consensus.NewTally(consensus.Params{OnlineFloor: floor}),
		roots:   make(map[consensus.Root]*election),
		byHash:  make(map[ledger.Hash]consensus.Root),
		weights: make(map[ledger.Address]ledger.Amount),
		choice:  make(map[consensus.Root]ledger.Hash),
		silent:  make(map[consensus.Root]struct{}),
		askDone: make(chan []*consensus.Vote, 1),
	}
	defer func() { sub.Close() }()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var flush <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ch, ok := <-sub.C:
			if !ok {
				if ctx.Err() != nil {
					return
				}
				// Dropped for lagging: blocks applied meanwhile are
				// neither gossiped nor put to election by this node
				// (peers still pull them by sync, and their own
				// representatives vote on them).
				s.log.Warn("ledger feed lagged; resubscribing")
				sub = s.n.Engine.Subscribe(1 << 14)
				continue
			}
			l.change(ctx, ch)
		case v := <-s.votesIn:
			l.vote(v)
		case vs := <-l.askDone:
			l.asking = false
			for _, v := range vs {
				l.vote(v)
			}
		case accts := <-s.frontiers:
			l.checkFrontiers(accts)
		case out := <-s.confirmed:
			switch e := l.roots[out.root]; {
			case e == nil || out.err == nil:
			case errors.Is(out.err, node.ErrConfirmed):
				// A confirmed block holds the place: it stands, and
				// this election is over whatever its tally says.
				s.log.Warn("election winner clashes with a confirmed block", "root", out.root, "err", out.err)
				l.finish(out.root)
			default:
				e.confirming = false // the next vote or sweep retries
			}
		case <-flush:
			flush = nil
			l.flushVotes(ctx)
		case <-tick.C:
			l.refreshWeights()
			l.sweep(ctx)
			l.publishInfo()
			s.toIntakeLater(s.held.due(s.cfg.Now().Add(s.cfg.MaxClockSkew).UnixMilli()))
		}
		if len(l.pending) > 0 && flush == nil {
			if len(l.pending) >= consensus.MaxVoteHashes {
				l.flushVotes(ctx)
			} else {
				flush = time.After(s.cfg.VoteDelay)
			}
		}
	}
}

func (l *electionLoop) now() int64 { return l.s.cfg.Now().UnixMilli() }

// change follows the ledger: new blocks are gossiped (when they did not
// come from the network) and put to election, forks add contenders, and
// confirmed blocks end their elections.
func (l *electionLoop) change(ctx context.Context, ch node.Change) {
	s := l.s
	var released []inBlock
	defer func() { s.toIntakeLater(released) }()
	for _, e := range ch.Applied {
		b := e.Block
		if !s.fromNet.has(b.Hash) {
			select {
			case s.outBlocks <- b:
			default:
				s.stats.publishDropped.Add(1) // peers pull it by sync
			}
		}
		for _, w := range s.waiting.releaseAll(b.Hash) {
			released = append(released, inBlock{b: w, checked: true})
		}
		l.start(consensus.Root{Account: b.Account, Previous: b.Previous}, b.Hash, true)
	}
	for _, fe := range ch.Forks {
		root := consensus.Root{Account: fe.Account, Previous: fe.Previous}
		l.start(root, fe.Existing, true)
		l.start(root, fe.Block.Hash, false)
	}
	for _, h := range ch.Confirmed {
		if root, ok := l.byHash[h]; ok {
			l.finish(root)
		}
		s.stats.confirmations.Add(1)
	}
}

// start opens (or joins) root's election with contender h; ours says this
// node's representatives vote for it, because it is the one in the ledger.
func (l *electionLoop) start(root consensus.Root, h ledger.Hash, ours bool) {
	if err := l.tally.Start(root, h, l.now()); err != nil {
		l.s.log.Debug("election not started", "root", root, "hash", h, "err", err)
		return
	}
	e := l.roots[root]
	if e == nil {
		e = &election{started: l.now()}
		l.roots[root] = e
	}
	if _, known := l.byHash[h]; !known {
		e.contenders++
	}
	l.byHash[h] = root
	if ours {
		if _, voted := l.choice[root]; !voted {
			if l.hasReps() {
				l.setChoice(root, h)
				l.pending = append(l.pending, h)
			} else {
				l.silent[root] = struct{}{}
			}
		}
	}
	l.evaluate(root)
}

func (l *electionLoop) finish(root consensus.Root) {
	if info, ok := l.tally.Election(root); ok {
		for _, h := range info.Contenders {
			delete(l.byHash, h)
		}
	}
	l.tally.Finish(root)
	delete(l.roots, root)
	delete(l.choice, root)
	delete(l.silent, root)
	l.s.choices.forget(root)
}

// setChoice records what this node's representatives vote for at root,
// where vote requests can see it too.
func (l *electionLoop) setChoice(root consensus.Root, h ledger.Hash) {
	l.choice[root] = h
	var contenders []ledger.Hash
	if info, ok := l.tally.Election(root); ok {
		contenders = info.Contenders
	}
	l.s.choices.set(root, h, contenders)
}

func (l *electionLoop) vote(v *consensus.Vote) {
	for _, root := range l.tally.Vote(v, l.now()) {
		l.evaluate(root)
	}
}

// evaluate acts on root's tally: a confirmed winner goes to the confirm
// loop; otherwise this node's representatives move to the leader when it
// is ahead of their choice.
func (l *electionLoop) evaluate(root consensus.Root) {
	e := l.roots[root]
	if e == nil {
		return
	}
	res := l.tally.Result(root, l.weight, l.now())
	if res.Confirmed {
		if !e.confirming {
			e.confirming = true
			select {
			case l.s.confirmQ <- confirmJob{root: root, winner: res.Winner, votes: l.tally.Certificate(root, res.Winner)}:
			default:
				e.confirming = false // the next vote or sweep retries
			}
		}
		return
	}
	mine, voted := l.choice[root]
	if !voted || mine == res.Leader || res.Leader.IsZero() {
		return
	}
	var mineTally, leaderTally ledger.Amount
	for _, c := range res.Tallies {
		switch c.Hash {
		case mine:
			mineTally = c.Tally
		case res.Leader:
			leaderTally = c.Tally
		}
	}
	if leaderTally.Cmp(mineTally) > 0 {
		l.setChoice(root, res.Leader)
		l.pending = append(l.pending, res.Leader)
	}
}

func (l *electionLoop) weight(a ledger.Address) ledger.Amount {
	if w, ok := l.weights[a]; ok {
		return w
	}
	w, err := l.s.n.Store.Weight(a)
	if err != nil {
		return ledger.Amount{}
	}
	l.weights[a] = w
	return w
}

// refreshWeights forgets cached weights, which the ledger keeps changing.
func (l *electionLoop) refreshWeights() { clear(l.weights) }

func (l *electionLoop) hasReps() bool {
	for _, k := range l.s.cfg.Reps {
		if !l.weight(k.Address()).IsZero() {
			return true
		}
	}
	return false
}

// flushVotes signs the gathered hashes with every representative key that
// has weight, gossips the votes and counts them.
func (l *electionLoop) flushVotes(ctx context.Context) {
	// Only the current choice of each election: a choice that changed
	// before the flush must not go out beside its successor, because a
	// vote naming two contenders of one election counts for the first.
	seen := make(map[ledger.Hash]bool, len(l.pending))
	current := l.pending[:0]
	for _, h := range l.pending {
		root, ok := l.byHash[h]
		if seen[h] || (ok && l.choice[root] != h) {
			continue
		}
		seen[h] = true
		current = append(current, h)
	}
	l.pending = current
	for len(l.pending) > 0 {
		n := min(len(l.pending), consensus.MaxVoteHashes)
		hashes := slices.Clone(l.pending[:n])
		l.pending = l.pending[n:]
		for _, v := range l.s.signVotes(hashes, l.stamp()) {
			if err := l.s.votes.Publish(ctx, mustBinary(v)); err != nil && ctx.Err() == nil {
				l.s.log.Debug("publish vote", "err", err)
			}
			l.vote(v)
		}
	}
	l.pending = nil
}

// stamp returns a vote timestamp later than every earlier one of this
// node, so a changed vote always replaces the one before.
func (l *electionLoop) stamp() int64 { return l.s.stamp() }

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
// with the choice, so answering one never undoes a switch to the leader.
type choiceBook struct {
	mu     sync.Mutex
	byHash map[ledger.Hash]ledger.Hash
	byRoot map[consensus.Root][]ledger.Hash
}

func (c *choiceBook) set(root consensus.Root, choice ledger.Hash, contenders []ledger.Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byHash == nil {
		c.byHash = make(map[ledger.Hash]ledger.Hash)
		c.byRoot = make(map[consensus.Root][]ledger.Hash)
	}
	for _, h := range c.byRoot[root] {
		delete(c.byHash, h)
	}
	contenders = append(slices.Clone(contenders), choice)
	for _, h := range contenders {
		c.byHash[h] = choice
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
func (c *choiceBook) choiceFor(h ledger.Hash) (ledger.Hash, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.byHash[h]
	return v, ok
}

// signVotes signs hashes (at most MaxVoteHashes, no duplicates) with each
// representative key that has weight.
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
	for _, k := range s.cfg.Reps {
		if w, err := s.n.Store.Weight(k.Address()); err != nil || w.IsZero() {
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

// certificate encodes the evidence that a block won its election: a u16
// count, then for each vote the representative and the vote's digest. The
// votes themselves are stored once each, by digest: one vote names up to
// 255 blocks, and a copy in every block's certificate was most of the
// bytes a node wrote.
func certificate(votes []*consensus.Vote, digest func(*consensus.Vote) ledger.Hash) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(votes)))
	for _, v := range votes {
		d := digest(v)
		b = append(append(b, v.Representative[:]...), d[:]...)
	}
	return b
}

// checkFrontiers starts elections for the unconfirmed frontiers of
// accounts that sync changed, so their votes are asked for.
func (l *electionLoop) checkFrontiers(accts []ledger.Address) {
	st := l.s.n.Store
	for _, a := range accts {
		acct, found, err := st.Account(a)
		if err != nil || !found {
			continue
		}
		done, _, _, err := st.Confirmed(a)
		if err != nil || done >= acct.Height {
			continue
		}
		e, found, err := st.Entry(acct.Frontier)
		if err != nil || !found {
			continue
		}
		root := consensus.Root{Account: a, Previous: e.Block.Previous}
		l.start(root, acct.Frontier, true)
		if el := l.roots[root]; el != nil {
			el.started -= l.s.cfg.RequestVotesAfter.Milliseconds() // ask at once
		}
	}
}

// voteWhereSilent has this node's representatives vote in the elections
// they have not voted in: those that started while they had no weight (a
// node's own first receive gives it its weight after the block's election
// began). They vote for the contender in the ledger.
func (l *electionLoop) voteWhereSilent() {
	if len(l.silent) == 0 || !l.hasReps() {
		return
	}
	for root := range l.silent {
		delete(l.silent, root)
		e := l.roots[root]
		if _, voted := l.choice[root]; voted || e == nil || e.confirming {
			continue
		}
		info, ok := l.tally.Election(root)
		if !ok {
			continue
		}
		for _, h := range info.Contenders {
			if _, found, err := l.s.n.Store.Entry(h); err == nil && found {
				l.setChoice(root, h)
				l.pending = append(l.pending, h)
				break
			}
		}
	}
}

// sweep asks peers for votes on elections that have waited too long: votes
// lost to a partition, a restart, or a node that synced blocks the network
// confirmed long ago.
func (l *electionLoop) sweep(ctx context.Context) {
	l.voteWhereSilent()
	if l.asking {
		return
	}
	now := l.now()
	after := l.s.cfg.RequestVotesAfter.Milliseconds()
	var hashes []ledger.Hash
	for root, e := range l.roots {
		if e.confirming || now-e.started < after || now-e.asked < after {
			continue
		}
		info, ok := l.tally.Election(root)
		if !ok {
			continue
		}
		e.asked = now
		hashes = append(hashes, info.Contenders...)
		if len(hashes) >= 4*MaxHashes {
			break
		}
	}
	if len(hashes) == 0 {
		return
	}
	peers := l.s.h.Peers()
	if len(peers) == 0 {
		return
	}
	rand.Shuffle(len(peers), func(i, j int) { peers[i], peers[j] = peers[j], peers[i] })
	peers = peers[:min(len(peers), 4)]
	l.asking = true
	l.s.spawn(func() {
		var all []*consensus.Vote
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, p := range peers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for chunk := range slices.Chunk(hashes, MaxHashes) {
					cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
					vs, err := l.s.requestVotes(cctx, p, chunk)
					cancel()
					l.s.log.Debug("asked for votes", "peer", p, "hashes", len(chunk), "votes", len(vs), "err", err)
					if err != nil {
						return
					}
					mu.Lock()
					all = append(all, vs...)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		select {
		case l.askDone <- all:
		case <-ctx.Done():
		}
	})
}

// publishInfo copies the forks' elections for the API.
func (l *electionLoop) publishInfo() {
	// Only forks: the API shows their tallies. Every block has an
	// election, and a tally of each, five times a second, was most of a
	// syncing node's time.
	var infos []ElectionInfo
	now := l.now()
	l.s.electionCount.Store(int64(len(l.roots)))
	for root, e := range l.roots {
		if e.contenders < 2 {
			continue
		}
		res := l.tally.Result(root, l.weight, now)
		infos = append(infos, ElectionInfo{Root: root, Started: e.started, Tallies: res.Tallies, Online: res.Online, Quorum: res.Quorum})
	}
	slices.SortFunc(infos, func(a, b ElectionInfo) int {
		if c := bytes.Compare(a.Root.Account[:], b.Root.Account[:]); c != 0 {
			return c
		}
		return bytes.Compare(a.Root.Previous[:], b.Root.Previous[:])
	})
	l.s.elMu.Lock()
	l.s.elections = infos
	l.s.elMu.Unlock()
}

// confirmJob asks the confirm loop to make winner the confirmed block of
// root.
type confirmJob struct {
	root   consensus.Root
	winner ledger.Hash
	votes  []*consensus.Vote // that confirmed it
}

type confirmOutcome struct {
	root consensus.Root
	err  error
}

// confirmLoop carries out confirmations through the engine, as many as are
// waiting in one atomic commit: the winner is confirmed where it is in the
// ledger, or switched in first when it is a refused contender or must be
// fetched from peers.
func (s *Service) confirmLoop(ctx context.Context) {
	for {
		jobs, ok := takeBatch(ctx, s.confirmQ, 1024)
		if !ok {
			return
		}
		errs := s.confirmWinners(ctx, jobs)
		for i, j := range jobs {
			if errs[i] != nil && ctx.Err() == nil {
				s.log.Debug("confirmation not done yet", "root", j.root, "winner", j.winner, "err", errs[i])
			}
			select {
			case s.confirmed <- confirmOutcome{root: j.root, err: errs[i]}:
			case <-ctx.Done():
				return
			}
		}
	}
}

// confirmWinners confirms the winners of jobs, switching forks first where
// a winner is not in the ledger.
func (s *Service) confirmWinners(ctx context.Context, jobs []confirmJob) []error {
	digests := map[*consensus.Vote]ledger.Hash{}
	votes := map[ledger.Hash][]byte{}
	digest := func(v *consensus.Vote) ledger.Hash {
		d, ok := digests[v]
		if !ok {
			d = v.Digest(s.network)
			digests[v] = d
			votes[d] = mustBinary(v)
		}
		return d
	}
	cs := make([]node.Confirmation, len(jobs))
	for i, j := range jobs {
		cs[i] = node.Confirmation{Hash: j.winner, Certificate: certificate(j.votes, digest)}
	}
	_, errs := s.n.Engine.ConfirmAll(ctx, cs, votes)
	for i, j := range jobs {
		if !errors.Is(errs[i], node.ErrNotInLedger) {
			continue
		}
		errs[i] = s.switchTo(ctx, j.winner)
		if errs[i] == nil {
			_, errs[i] = s.n.Engine.Confirm(ctx, j.winner, cs[i].Certificate)
		}
	}
	return errs
}

// switchTo makes winner, a block not in the ledger, the block at its place:
// a refused fork contender this node keeps, or one fetched from peers.
func (s *Service) switchTo(ctx context.Context, winner ledger.Hash) error {
	b, found, err := s.n.Store.ForkBlock(winner)
	if err != nil {
		return err
	}
	if !found {
		if b = s.fetchAny(ctx, winner); b == nil {
			return errors.New("ledgernet: the winner is not known here and no peer gave it")
		}
	}
	res, err := s.n.Engine.Resolve(ctx, b)
	if err != nil {
		return err
	}
	if len(res.RolledBack) > 0 {
		s.stats.resolved.Add(1)
	}
	return nil
}

// fetchAny asks connected peers, one after another, for block h.
func (s *Service) fetchAny(ctx context.Context, h ledger.Hash) *ledger.Block {
	for _, p := range s.h.Peers() {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		blocks, err := s.requestBlocks(cctx, p, []ledger.Hash{h})
		cancel()
		if err == nil && len(blocks) == 1 && blocks[0].Hash == h {
			if s.n.Engine.Params().Check(blocks[0]) == nil {
				return blocks[0]
			}
		}
	}
	return nil
}
