package ledgernet

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/ledgerstore"
)

// ElectionInfo describes an active election, for the API.
type ElectionInfo struct {
	Root    consensus.Root
	Started int64  // Unix ms
	Round   uint32 // the round Tallies are of (consensus.Result.Round)
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

// election is the loop's own state of one root.
type election struct {
	started    int64
	confirming bool
	asked      int64 // when votes were last requested, Unix ms
	// watch marks an election opened only to watch a confirmed place for
	// a conflicting confirmation: this node's representatives never vote
	// in it and nothing is confirmed from it.
	watch bool
	// polka is the round of the polka whose votes vote requests are
	// answered with, +1 (0: none yet).
	polka uint32
}

// electionLoop owns the tally: it starts elections for new blocks and
// forks, counts votes, has the node's representatives vote as
// consensus.Tally.FirstVote and Advise say, times rounds out, and hands
// confirmed winners to the confirm loop. The rules are the tally's; this
// loop is the I/O around it.
type electionLoop struct {
	s       *Service
	tally   *consensus.Tally
	roots   map[consensus.Root]*election
	weights map[ledger.Address]ledger.Amount
	silent  map[consensus.Root]struct{} // started while this node's reps had no weight
	retry   map[consensus.Root]struct{} // confirmed elections whose confirmation must be tried again
	due     map[consensus.Root]int64    // when an election's round times out, Unix ms
	pending []ledger.Hash               // prevotes of round 0 to cast, gathered
	attest  []ledger.Hash               // final votes of ConfirmedRound to cast, gathered
	binding []ledgerstore.VoteRecord    // votes to record before they are cast, gathered
	asking  bool
	askDone chan []*consensus.Vote
	beat    int64  // when this node's representatives last announced themselves
	voting  []bool // which of them had weight then, by index in Config.Reps
	// askedOnline is when peers were last asked for their
	// representatives' votes because too few were heard.
	askedOnline int64
	// refused holds the accounts, at most maxRefused, where a block or a
	// fork found no room for its election (MaxElections were running).
	// rescan is set when one could not be held, when a read failed, or
	// when the ledger feed lagged: then every account with unconfirmed
	// blocks is looked for again. Both wait for room (retryRefused).
	refused map[ledger.Address]struct{}
	rescan  bool
	// scanned holds accounts with unconfirmed blocks that a look through
	// the ledger found (electUnconfirmed), waiting for room like refused.
	scanned []ledger.Address
	// blocked holds, by the dependency they wait for, the elections whose
	// final vote a contender's dependencies hold back (ready); that
	// dependency's confirmation, or this node's final vote for it in
	// round 0, puts them in released, whose elections are evaluated again
	// once the event at hand is handled (drainReleased).
	blocked   map[ledger.Hash][]consensus.Root
	blockedAt map[ledger.Hash]int64 // when an election first waited for it, Unix ms
	released  []consensus.Root
	readyFn   consensus.Ready // l.ready, made once
	// descent collects, while electDependencies runs, the dependencies
	// the elections it starts wait for in turn; descended holds the
	// elections it started, whose own dependencies are due at once.
	descent    []ledger.Hash
	descending bool
	descended  map[consensus.Root]struct{}
	// inflight holds, by place, the binding votes asked for and not yet
	// in the store's record (resume reads both).
	inflight map[consensus.Root]ledgerstore.SignedVotes
	// sources holds the send each contender applied or refused in this
	// run takes from (zero for none), and confirmedLately the blocks the
	// feed confirmed lately: with them, ready decides most contenders
	// without reading the store.
	sources         map[ledger.Hash]ledger.Hash
	confirmedLately recentSet
	// lost holds the blocks this loop found lost lately (see lose): ready
	// checks it before a dependency settled by its tally, without the
	// unchecked buffer's lock, which it takes only on its slow path (that
	// set holds what waited for lost blocks too, and more of them).
	lost recentSet
}

// recentConfirmed bounds the hashes confirmedLately remembers.
const recentConfirmed = 8192

// maxRefused bounds the accounts the election loop remembers for want of
// room (a variable for tests).
var maxRefused = consensus.DefaultMaxElections

// feedBuffer is how many of the ledger's changes (commit groups) the
// election loop's subscription holds before the loop counts as lagging
// (a variable for tests).
var feedBuffer = 1 << 14

func (s *Service) electionLoop(ctx context.Context, sub *node.Subscription) {
	l := &electionLoop{
		s: s,
		tally: consensus.NewTally(consensus.Params{Total: s.n.Network.Genesis.Amount,
			OnlineWindow: s.cfg.OnlineWindow.Milliseconds(), RoundTimeout: s.cfg.RoundTimeout.Milliseconds(),
			MaxElections: s.cfg.MaxElections}),
		roots:           make(map[consensus.Root]*election),
		weights:         make(map[ledger.Address]ledger.Amount),
		silent:          make(map[consensus.Root]struct{}),
		retry:           make(map[consensus.Root]struct{}),
		refused:         make(map[ledger.Address]struct{}),
		due:             make(map[consensus.Root]int64),
		askDone:         make(chan []*consensus.Vote, 1),
		blocked:         make(map[ledger.Hash][]consensus.Root),
		blockedAt:       make(map[ledger.Hash]int64),
		sources:         make(map[ledger.Hash]ledger.Hash),
		confirmedLately: newRecentSet(recentConfirmed),
		lost:            newRecentSet(recentConfirmed),
		descended:       make(map[consensus.Root]struct{}),
		inflight:        make(map[consensus.Root]ledgerstore.SignedVotes),
	}
	l.readyFn = l.ready
	defer func() { sub.Close() }()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	l.heartbeat(ctx)
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
				// Dropped for lagging: blocks applied meanwhile are not
				// gossiped by this node (peers pull them by sync), and
				// their elections are found by looking for every
				// unconfirmed frontier again.
				s.log.Warn("ledger feed lagged; resubscribing")
				s.stats.feedLags.Add(1)
				sub = s.n.Engine.Subscribe(feedBuffer)
				l.afterLag()
			} else {
				l.change(ch)
			}
		case v := <-s.votesIn:
			l.vote(v)
		case <-s.ownVotes.notify:
			for _, v := range s.ownVotes.take() {
				l.vote(v)
			}
		case vs := <-l.askDone:
			l.asking = false
			for _, v := range vs {
				l.vote(v)
			}
		case accts := <-s.frontiers:
			l.checkFrontiers(accts)
		case fe := <-s.decided:
			l.watchDecided(fe)
		case out := <-s.confirmed:
			l.confirmOutcome(out)
		case <-flush:
			flush = nil
			l.flushVotes(ctx)
		case <-tick.C:
			l.refreshWeights()
			l.sweep(ctx)
			l.heartbeat(ctx)
			l.publishInfo()
			s.toIntakeLater(s.held.due(s.n.Admission.HoldLimit(s.cfg.Now())))
		}
		l.drainReleased()
		if len(l.pending)+len(l.attest)+len(l.binding) > 0 && flush == nil {
			if len(l.pending) >= consensus.MaxVoteHashes || len(l.binding) >= consensus.MaxVoteHashes {
				l.flushVotes(ctx)
			} else {
				flush = time.After(s.cfg.VoteDelay)
			}
		}
	}
}

func (l *electionLoop) now() int64 { return l.s.cfg.Now().UnixMilli() }

// change follows the ledger: new blocks are gossiped (when they did not
// come from the network) and put to election, forks add contenders,
// confirmed blocks end their elections and drop what waits for their
// losers, and rolled-back blocks end the elections no block of the ledger
// stands in any more.
func (l *electionLoop) change(ch node.Change) {
	s := l.s
	var released []inBlock
	defer func() { s.toIntakeLater(released) }()
	// What this change rolls back or confirms against is lost before the
	// blocks it applies are judged (ready): one commit may hold a
	// rollback and a fork whose contender takes from the rolled-back
	// block.
	for _, b := range ch.RolledBack {
		l.lost.add(b.Hash)
	}
	for _, h := range ch.Confirmed {
		if root, ok := l.tally.RootOf(h); ok {
			for _, c := range l.tally.Contenders(root) {
				if c != h {
					l.lost.add(c)
				}
			}
		}
	}
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
		l.sources[b.Hash], _ = b.DependsOn()
		l.start(consensus.Root{Account: b.Account, Previous: b.Previous}, b.Hash, voteResume)
	}
	for _, fe := range ch.Forks {
		root := consensus.Root{Account: fe.Account, Previous: fe.Previous}
		l.sources[fe.Block.Hash], _ = fe.Block.DependsOn()
		l.start(root, fe.Existing, voteResume)
		l.start(root, fe.Block.Hash, voteNone)
	}
	for _, b := range ch.RolledBack {
		// Blocks built on a rolled-back block can never apply. The
		// elections waiting for it went with it, but for those of
		// refused fork contenders that take from it.
		l.lose(b.Hash)
		delete(l.sources, b.Hash)
		root := consensus.Root{Account: b.Account, Previous: b.Previous}
		if _, ok := l.roots[root]; ok && !l.standing(root) {
			l.finish(root)
		}
	}
	if len(ch.Confirmed) > 0 {
		// Confirmations move the weights that count: a weight cached
		// before them must not decide an election after them.
		l.refreshWeights()
	}
	for _, h := range ch.Confirmed {
		if root, ok := l.tally.RootOf(h); ok {
			delete(l.inflight, root) // its record went with the confirmation
			for _, c := range l.tally.Contenders(root) {
				if c != h {
					l.lose(c)
					delete(l.sources, c)
				}
			}
			l.finish(root)
		}
		delete(l.sources, h)
		l.confirmedLately.add(h)
		l.release(h)
		s.stats.confirmations.Add(1)
	}
}

// ready is the loop's consensus.Ready: this node's representatives cast a
// final vote for contender h only once each of its dependencies, the block
// before it and the send it takes from, is settled here: confirmed, or
// final-voted by them in round 0 of its own election (docs/protocol.md,
// "Dependencies first"). A dependency remembered as lost (a loser of a
// confirmed election, or a block rolled back for one) makes h Lost.
// Otherwise h's election waits in blocked for the first that is not
// settled.
//
// A dependency lost is checked before a settled one: a block this node
// final-voted in round 0 stays settled by that vote until its election
// ends, and a rival's certificate (possible only past the fault model)
// rolls it back first and confirms the rival in a later commit.
//
// Besides the polka's contender, the tally asks of contenders whose turn
// a round may be, and of those others attest; a Waiting one is noted in
// blocked like the polka's, so that its dependencies are elected too.
func (l *electionLoop) ready(h ledger.Hash) consensus.Readiness {
	if l.lost.contains(h) {
		return consensus.Lost
	}
	if src, ok := l.sources[h]; ok {
		if root, ok := l.tally.RootOf(h); ok && l.settledLately(root.Previous) && l.settledLately(src) &&
			!l.lost.contains(root.Previous) && !l.lost.contains(src) {
			return consensus.Settled
		}
	}
	b, dep, err := l.dependency(h)
	if err != nil {
		l.s.log.Debug("a contender's dependencies not read", "hash", h, "err", err)
		return consensus.Waiting // the sweep's vote requests evaluate it again
	}
	if src, _ := b.DependsOn(); l.knownLost(b.Previous, src) {
		return consensus.Lost
	}
	if dep.IsZero() {
		return consensus.Settled
	}
	root := consensus.Root{Account: b.Account, Previous: b.Previous}
	waiting, known := l.blocked[dep]
	if !known {
		l.blockedAt[dep] = l.now()
		if _, ok := l.descended[root]; ok {
			l.blockedAt[dep] -= heldFor // a level of a descent: due at once
		}
		if l.descending {
			l.descent = append(l.descent, dep)
		}
	}
	if !slices.Contains(waiting, root) {
		l.blocked[dep] = append(waiting, root)
	}
	return consensus.Waiting
}

// dependency returns block h (from the ledger, or a fork contender kept
// aside) and the first of its dependencies that is not settled here (see
// ready), a zero hash when none: the block before it, then the send it
// takes from. It reads one snapshot: a block rolled back between two
// reads could otherwise pass for confirmed, as confirmation is a height
// per account.
func (l *electionLoop) dependency(h ledger.Hash) (*ledger.Block, ledger.Hash, error) {
	snap := l.s.n.Store.Snapshot()
	defer snap.Close()
	var b *ledger.Block
	if e, found, err := snap.Entry(h); err != nil {
		return nil, ledger.Hash{}, err
	} else if found {
		b = e.Block
	} else if b, found, err = snap.ForkBlock(h); err != nil {
		return nil, ledger.Hash{}, err
	} else if !found {
		return nil, ledger.Hash{}, fmt.Errorf("ledgernet: contender %s is not kept here", h)
	}
	deps := [2]ledger.Hash{b.Previous}
	deps[1], _ = b.DependsOn()
	for _, d := range deps {
		if d.IsZero() || l.finalAtZero(d) {
			continue
		}
		e, found, err := snap.Entry(d)
		if err != nil {
			return nil, ledger.Hash{}, err
		}
		if !found {
			return b, d, nil
		}
		if ok, err := snap.IsConfirmed(e); err != nil || !ok {
			return b, d, err
		}
	}
	return b, ledger.Hash{}, nil
}

// heldFor is how long an election waits for a dependency before the node
// puts that dependency to election itself (electDependencies), in ms.
const heldFor = 1000

// electDependencies puts to election the dependencies that elections
// have waited for longer than heldFor, where none runs here. A frontier
// put to election alone (after a sync, a restart, a lagged feed, or
// without room) waits for the blocks beneath it, which nothing else here
// elects; when this node's weight is needed, they would never be
// confirmed. Each such dependency may wait in turn for its own: those are
// elected in the same tick, down to the first that is ready, at most
// retryPerTick of them. A dependency's place is elected with the fork
// contenders recorded there. Without room, the dependency takes the place
// of a held election waiting for it, whose account is put to election
// again once there is room (retryRefused). Entries whose elections all
// ended are dropped.
func (l *electionLoop) electDependencies() {
	now := l.now()
	var due []ledger.Hash
	for dep, roots := range l.blocked {
		roots = slices.DeleteFunc(roots, func(r consensus.Root) bool { return l.roots[r] == nil })
		if len(roots) == 0 {
			delete(l.blocked, dep)
			delete(l.blockedAt, dep)
			continue
		}
		l.blocked[dep] = roots
		if now-l.blockedAt[dep] >= heldFor {
			due = append(due, dep)
		}
	}
	l.descending = true
	defer func() { l.descending, l.descent = false, l.descent[:0] }()
	for n := 0; len(due) > 0 && n < retryPerTick; n++ {
		dep := due[len(due)-1]
		due = due[:len(due)-1]
		if root, ok := l.tally.RootOf(dep); ok && l.roots[root] != nil {
			continue // its election runs
		}
		root, ok := l.placeOf(dep)
		if !ok {
			continue // a read error retries; a block not here waits for sync
		}
		if l.tally.Len() >= l.tally.Params().MaxElections && !l.yieldRoom(dep) {
			l.refuse(root.Account)
			continue
		}
		l.electPlaceOf(root, dep)
		due = append(due, l.descent...)
		l.descent = l.descent[:0]
	}
}

// placeOf returns the place of dep, a block of the ledger or a fork
// contender kept aside, when it is not confirmed here; a confirmed one
// releases what waits for it (its confirmation was missed).
func (l *electionLoop) placeOf(dep ledger.Hash) (consensus.Root, bool) {
	e, found, confirmed, err := l.s.n.Store.EntryConfirmed(dep)
	switch {
	case err != nil:
		return consensus.Root{}, false
	case found && confirmed:
		l.release(dep)
		return consensus.Root{}, false
	case found:
		return consensus.Root{Account: e.Block.Account, Previous: e.Block.Previous}, true
	}
	b, found, err := l.s.n.Store.ForkBlock(dep)
	if err != nil || !found {
		return consensus.Root{}, false
	}
	return consensus.Root{Account: b.Account, Previous: b.Previous}, true
}

// electPlaceOf opens the election at root, where dep is a contender,
// with the block of the ledger there and the fork contenders kept with it.
// A place whose previous block is gone (rolled back) is left alone.
func (l *electionLoop) electPlaceOf(root consensus.Root, dep ledger.Hash) {
	st := l.s.n.Store
	height := uint64(1)
	if !root.Previous.IsZero() {
		e, found, err := st.Entry(root.Previous)
		if err != nil || !found {
			return
		}
		height = e.Height + 1
	}
	here, inLedger, err := st.ChainAt(root.Account, height)
	if err != nil {
		return
	}
	var kept []ledger.Hash
	add := func(h ledger.Hash) {
		if _, found, err := st.ForkBlock(h); err == nil && found && !slices.Contains(kept, h) {
			kept = append(kept, h)
		}
	}
	add(dep)
	if err := st.Conflicts(&root.Account, func(c ledgerstore.Conflict) error {
		if c.Previous == root.Previous {
			for _, h := range c.Blocks {
				add(h)
			}
		}
		return nil
	}); err != nil {
		l.rescan = true
	}
	if inLedger {
		l.electPlace(root, here, kept)
	} else {
		for _, h := range kept {
			l.start(root, h, voteNone)
		}
		l.askSoon(root)
	}
	if l.roots[root] != nil {
		l.descended[root] = struct{}{}
	}
}

// yieldRoom ends a held election that waits for dep, so that dep's takes
// its room, and reports whether it found one; its account is put to
// election again once there is room.
func (l *electionLoop) yieldRoom(dep ledger.Hash) bool {
	for _, r := range l.blocked[dep] {
		e := l.roots[r]
		if _, retrying := l.retry[r]; e != nil && !e.confirming && !retrying && l.tally.Held(r) {
			l.finish(r)
			l.refuse(r.Account)
			return true
		}
	}
	return false
}

// settledLately reports, without reading the store, whether dependency d
// is settled: none, final-voted in round 0 here, or confirmed lately.
func (l *electionLoop) settledLately(d ledger.Hash) bool {
	return d.IsZero() || l.finalAtZero(d) || l.confirmedLately.contains(d)
}

// finalAtZero reports whether this node's representatives have cast a
// final vote for d in round 0 of d's election, and are still locked on it.
func (l *electionLoop) finalAtZero(d ledger.Hash) bool {
	root, ok := l.tally.RootOf(d)
	if !ok {
		return false
	}
	o, ok := l.tally.Own(root)
	return ok && o.Final == d && o.FinalRound == 0
}

// knownLost reports whether a block with these dependencies (previous,
// and the send it takes from) takes from a block known lost here: the
// loop's own ring first, then the unchecked buffer's set, under its lock.
func (l *electionLoop) knownLost(previous, source ledger.Hash) bool {
	return l.lost.contains(previous) || l.lost.contains(source) || l.s.waiting.anyLost(previous, source)
}

// lose records that h can never be confirmed here (it lost its election,
// or was rolled back for a block that did): the blocks waiting in the
// unchecked buffer for it are dropped, and the elections waiting for it
// are evaluated again, to find their contenders Lost (ready).
func (l *electionLoop) lose(h ledger.Hash) {
	l.s.stats.uncheckedDropped.Add(uint64(l.s.waiting.drop(h)))
	l.lost.add(h)
	l.release(h)
}

// release marks the elections that waited for h, now settled or lost, to
// be evaluated again: their final votes may be cast.
func (l *electionLoop) release(h ledger.Hash) {
	if roots, ok := l.blocked[h]; ok {
		delete(l.blocked, h)
		delete(l.blockedAt, h)
		l.released = append(l.released, roots...)
	}
}

// drainReleased evaluates the released elections, and those their final
// votes release in turn (a chain of blocks voted on at once): a loop, not
// a recursion as deep as the chain.
func (l *electionLoop) drainReleased() {
	for len(l.released) > 0 {
		root := l.released[len(l.released)-1]
		l.released = l.released[:len(l.released)-1]
		l.evaluate(root)
	}
}

// standing reports whether a contender of root's election is in the
// ledger: an election whose blocks were all rolled back (as dependents of
// a fork's loser) can decide nothing here.
func (l *electionLoop) standing(root consensus.Root) bool {
	for _, h := range l.tally.Contenders(root) {
		if _, found, err := l.s.n.Store.Entry(h); err != nil || found {
			return true // on a read error, keep it: the next change retries
		}
	}
	return false
}

// How start has this node's representatives vote for a contender.
const (
	voteNone   = iota // another node's contender: they vote as the tally advises
	voteResume        // the block in the ledger: they resume from their record at its place, or vote for it
)

// start opens (or joins) root's election with contender h; how says
// whether h is the block in this node's ledger, which its representatives
// prevote for first unless their record at root says what they signed
// there: then they resume from it. The record (kept in memory) is read for
// every block applied, not only after a restart: a place refilled after a
// rollback may hold votes of this run, and a tally that started afresh
// there would believe it had signed what the record then refuses (and
// dependents' final votes rest on what it believes, see ready).
func (l *electionLoop) start(root consensus.Root, h ledger.Hash, how int) {
	if err := l.tally.Start(root, h, l.now()); err != nil {
		l.s.log.Debug("election not started", "root", root, "hash", h, "err", err)
		if errors.Is(err, consensus.ErrTooManyElections) {
			l.refuse(root.Account)
		}
		return
	}
	e := l.roots[root]
	if e == nil {
		e = &election{started: l.now()}
		l.roots[root] = e
	}
	if how != voteNone && e.watch {
		// A block of the ledger, not confirmed, at a place watched: an
		// election, which this node's representatives vote in.
		e.watch = false
	}
	if how != voteNone && !e.watch && !l.voted(root) {
		switch {
		case !l.hasReps():
			l.silent[root] = struct{}{}
		default:
			l.firstVote(root, h)
		}
	}
	l.evaluate(root)
}

// voted reports whether this node's representatives have voted at root.
func (l *electionLoop) voted(root consensus.Root) bool {
	_, ok := l.tally.Own(root)
	return ok
}

// firstVote has this node's representatives vote in root's election for
// the first time, for h, or resume from their record there.
func (l *electionLoop) firstVote(root consensus.Root, h ledger.Hash) {
	if !l.resume(root) {
		return
	}
	if voter, ok := l.voter(); ok {
		l.act(root, l.tally.FirstVote(root, voter, h, l.weight, l.readyFn, l.now()))
	}
}

// resume restores what this node's representatives signed at root, in
// this run or an earlier one, from the record and the binding votes asked
// for and not recorded yet, and reports false when the record cannot be
// read: it is what keeps them from contradicting themselves, so they vote
// nothing then. A final vote for a block rolled back since (a block it
// depends on lost) is void: they resume after its round, unlocked, rather
// than stay locked on a block that can never be confirmed.
func (l *electionLoop) resume(root consensus.Root) bool {
	rec, found, err := l.s.n.Store.SignedVotes(root.Account, root.Previous)
	if err != nil {
		l.s.log.Error("reading the votes signed before", "root", root, "err", err)
		return false
	}
	if in, ok := l.inflight[root]; ok {
		// Asked for and not yet recorded: they may still be signed.
		if covers(rec, in) {
			delete(l.inflight, root)
		} else {
			rec, found = later(rec, in), true
		}
	}
	if !found {
		return true
	}
	void := false
	if !rec.Final.IsZero() {
		_, inLedger, err := l.s.n.Store.Entry(rec.Final)
		_, kept, err2 := l.s.n.Store.ForkBlock(rec.Final)
		// A block neither in the ledger nor kept as a fork contender at an
		// undecided place was rolled back: a block it depends on lost.
		void = err == nil && err2 == nil && !inLedger && !kept
	}
	l.tally.Restore(root, consensus.Record{Prevote: rec.Prevote, PrevoteRound: rec.PrevoteRound, Final: rec.Final, FinalRound: rec.FinalRound, Void: void})
	// Vote requests get what was signed before, which may never have
	// reached a peer.
	l.s.choices.open(root, l.tally.Contenders(root))
	if !rec.Prevote.IsZero() {
		l.s.choices.signed(root, rec.PrevoteRound, false, rec.Prevote)
	}
	if !rec.Final.IsZero() {
		l.s.choices.signed(root, rec.FinalRound, true, rec.Final)
		if rec.FinalRound == 0 && !void {
			l.release(rec.Final) // it settles what depends on it
		}
	}
	return true
}

// covers reports whether record rec holds votes of in's rounds or later.
func covers(rec, in ledgerstore.SignedVotes) bool {
	return (in.Final.IsZero() || !rec.Final.IsZero() && rec.FinalRound >= in.FinalRound) &&
		(in.Prevote.IsZero() || !rec.Prevote.IsZero() && rec.PrevoteRound >= in.PrevoteRound)
}

// later returns, kind by kind, the later vote of a and b.
func later(a, b ledgerstore.SignedVotes) ledgerstore.SignedVotes {
	if !b.Final.IsZero() && (a.Final.IsZero() || b.FinalRound > a.FinalRound) {
		a.Final, a.FinalRound = b.Final, b.FinalRound
	}
	if !b.Prevote.IsZero() && (a.Prevote.IsZero() || b.PrevoteRound > a.PrevoteRound) {
		a.Prevote, a.PrevoteRound = b.Prevote, b.PrevoteRound
	}
	return a
}

// act gathers the votes the tally advised: prevotes of round 0 are cast at
// the next flush; the others are recorded first (voteWriter). It notes
// when the election's round times out.
func (l *electionLoop) act(root consensus.Root, advice []consensus.Advice) {
	for _, a := range advice {
		switch {
		case a.Round == 0 && !a.Final:
			l.s.choices.prevoted(root, a.Hash, l.tally.Contenders(root))
			l.pending = append(l.pending, a.Hash)
			continue
		case a.Round == consensus.ConfirmedRound:
			// An attestation binds nothing a record could guard: an
			// honest node attests one decided block per place.
			l.attest = append(l.attest, a.Hash)
			continue
		}
		l.s.choices.open(root, l.tally.Contenders(root)) // for the vote once signed
		l.binding = append(l.binding, ledgerstore.VoteRecord{Account: root.Account, Previous: root.Previous,
			Round: a.Round, Final: a.Final, Hash: a.Hash})
		in := l.inflight[root]
		switch {
		case a.Final && (in.Final.IsZero() || a.Round > in.FinalRound):
			in.Final, in.FinalRound = a.Hash, a.Round
		case !a.Final && (in.Prevote.IsZero() || a.Round > in.PrevoteRound):
			in.Prevote, in.PrevoteRound = a.Hash, a.Round
		}
		l.inflight[root] = in
		if a.Final && a.Round == 0 {
			l.release(a.Hash) // its dependents' final votes go in the same record
		}
	}
	if d, ok := l.tally.Deadline(root); ok {
		l.due[root] = d
	} else {
		delete(l.due, root)
	}
}

func (l *electionLoop) finish(root consensus.Root) {
	delete(l.descended, root)
	l.tally.Finish(root)
	delete(l.roots, root)
	delete(l.silent, root)
	delete(l.retry, root)
	delete(l.due, root)
	l.s.choices.forget(root)
}

func (l *electionLoop) vote(v *consensus.Vote) {
	for _, root := range l.tally.Vote(v, l.now()) {
		l.evaluate(root)
	}
	for _, eq := range l.tally.TakeEquivocations() {
		l.s.stats.equivocations.Add(1)
		l.s.log.Error("a representative signed two votes of one kind and round for two contenders of one election",
			"representative", eq.Representative, "root", eq.Root, "round", eq.First.Round, "final", eq.First.Final,
			"first", eq.First.Hashes, "second", eq.Second.Hashes)
	}
}

// evaluate acts on root's tally: a confirmed winner goes to the confirm
// loop; otherwise this node's representatives vote as the tally advises
// (a later round, a prevote, a final vote on a polka).
func (l *electionLoop) evaluate(root consensus.Root) {
	e := l.roots[root]
	if e == nil {
		return
	}
	if l.s.splits.isHalted(root.Account) {
		return // see confirmOutcome: nothing more is confirmed on it
	}
	winner, round, confirmed := l.tally.Confirmed(root, l.weight)
	if e.watch {
		if confirmed {
			l.checkWatched(root, winner, round)
		}
		return
	}
	if confirmed {
		if e.confirming {
			return
		}
		cert := l.tally.Certificate(root, winner, round)
		if !l.certified(root, winner, cert) {
			return // the sweep decides again
		}
		e.confirming = true
		delete(l.due, root)
		select {
		case l.s.confirmQ <- confirmJob{root: root, winner: winner, votes: cert}:
		default:
			// The next tick retries: final votes are counted once, so no
			// later vote would.
			e.confirming = false
			l.retry[root] = struct{}{}
		}
		return
	}
	if voter, ok := l.voter(); ok && l.voted(root) {
		l.act(root, l.tally.Advise(root, voter, l.weight, l.readyFn, l.now()))
	}
	if n, ok := l.tally.PolkaRound(root); ok && n+1 != e.polka {
		e.polka = n + 1
		l.s.choices.setPolka(root, l.tally.Polka(root), l.tally.Contenders(root))
	}
}

// certified checks a winner's certificate against the confirmed weights
// read from the store now, not the loop's cache: the final votes must
// hold a quorum, each once, each a final vote for the winner, all of one
// round. The cache
// lags the store by the confirmations of the last moments (between a
// commit and its feed event); a certificate that is short by them waits
// for more final votes, which the sweep asks for.
func (l *electionLoop) certified(root consensus.Root, winner ledger.Hash, cert []*consensus.Vote) bool {
	var sum ledger.Amount
	seen := make(map[ledger.Address]bool, len(cert))
	for _, v := range cert {
		if seen[v.Representative] || !v.Final || v.Round != cert[0].Round || !slices.Contains(v.Hashes, winner) {
			continue
		}
		seen[v.Representative] = true
		w, err := l.s.n.Store.ConfirmedWeight(v.Representative)
		if err != nil {
			return false
		}
		sum, _ = sum.Add(w)
	}
	if sum.Cmp(l.tally.Quorum()) >= 0 {
		return true
	}
	l.s.log.Debug("certificate short of a quorum under the latest confirmed weights", "root", root, "winner", winner,
		"weight", sum, "quorum", l.tally.Quorum(), "votes", len(seen))
	l.refreshWeights()
	return false
}

// confirmOutcome learns how a confirmation went.
func (l *electionLoop) confirmOutcome(out confirmOutcome) {
	e := l.roots[out.root]
	switch {
	case e == nil || out.err == nil:
	case errors.Is(out.err, ledger.ErrConfirmed):
		// Final votes of a quorum for a block other than the one
		// confirmed here: two conflicting confirmations, impossible while
		// less than a third of the weight signs two final votes.
		res := l.tally.Result(out.root, l.weight)
		l.s.splits.add(l.s, out.root, out.winner, l.tally.Certificate(out.root, out.winner, res.ConfirmedRound))
		l.finish(out.root)
	default:
		e.confirming = false
		l.retry[out.root] = struct{}{} // the next tick retries
	}
}

// watchDecided opens a watch election where a peer sent a contender of a
// confirmed block: if the network's final votes confirm that contender,
// two conflicting blocks are confirmed, and the node must say so.
func (l *electionLoop) watchDecided(fe *ledger.ForkError) {
	root := consensus.Root{Account: fe.Account, Previous: fe.Previous}
	if _, ok := l.roots[root]; ok {
		return
	}
	// Only a place confirmed here is watched. Every refused contender
	// comes this way, and one at a place still undecided here may come
	// before the ledger feed starts that place's election: a watch opened
	// then took the election's place, this node's representatives never
	// voted in it, and the network's confirmation of the block in the
	// ledger read as a conflicting one.
	if _, found, confirmed, err := l.s.n.Store.EntryConfirmed(fe.Existing); err != nil || !found || !confirmed {
		return
	}
	// A contender of a confirmed block never applies here, nor what is
	// built on it (a split is reported, not resolved).
	l.lose(fe.Block.Hash)
	if len(l.roots) >= l.tally.Params().MaxElections/2 {
		return // elections of the ledger's own blocks come first
	}
	l.roots[root] = &election{started: l.now(), watch: true}
	for _, h := range []ledger.Hash{fe.Existing, fe.Block.Hash} {
		if err := l.tally.Start(root, h, l.now()); err != nil {
			l.s.log.Debug("watch election not started", "root", root, "err", err)
			l.finish(root)
			return
		}
	}
	l.evaluate(root)
}

// checkWatched ends a watch election whose final votes confirm winner in
// round n: a split when another block is confirmed at that place here.
func (l *electionLoop) checkWatched(root consensus.Root, winner ledger.Hash, n uint32) {
	if _, found, confirmed, err := l.s.n.Store.EntryConfirmed(winner); err == nil && !(found && confirmed) {
		if here := l.s.blockAt(root); !here.IsZero() && here != winner {
			if _, _, hereConfirmed, err := l.s.n.Store.EntryConfirmed(here); err == nil && hereConfirmed {
				l.s.splits.add(l.s, root, winner, l.tally.Certificate(root, winner, n))
			}
		}
	}
	l.finish(root)
}

func (l *electionLoop) weight(a ledger.Address) ledger.Amount {
	if w, ok := l.weights[a]; ok {
		return w
	}
	w, err := l.s.n.Store.ConfirmedWeight(a)
	if err != nil {
		return ledger.Amount{}
	}
	l.weights[a] = w
	return w
}

// refreshWeights forgets cached weights, which confirmations keep
// changing.
func (l *electionLoop) refreshWeights() { clear(l.weights) }

func (l *electionLoop) hasReps() bool {
	_, ok := l.voter()
	return ok
}

// voter returns the first of this node's representative keys that has
// weight: its representatives vote alike, so the tally's advice for one
// is the advice for all.
func (l *electionLoop) voter() (ledger.Address, bool) {
	for _, k := range l.s.cfg.Reps {
		if !l.weight(k.Address()).IsZero() {
			return k.Address(), true
		}
	}
	return ledger.Address{}, false
}

// checkFrontiers starts elections for the unconfirmed blocks of accounts
// that sync changed, whose blocks found no room for an election, or that
// a look through the ledger found (electUnconfirmed), and asks for their
// votes at once (reopen).
func (l *electionLoop) checkFrontiers(accts []ledger.Address) {
	st := l.s.n.Store
	for _, a := range accts {
		if l.s.splits.isHalted(a) {
			continue // its elections decide nothing until a restart
		}
		acct, found, err := st.Account(a)
		if err != nil {
			l.rescan = true // the rescan tries it again
			continue
		}
		if !found {
			continue
		}
		done, _, _, err := st.Confirmed(a)
		if err != nil {
			l.rescan = true
			continue
		}
		if done >= acct.Height {
			continue
		}
		e, found, err := st.Entry(acct.Frontier)
		if err != nil {
			l.rescan = true
			continue
		}
		if !found {
			continue
		}
		root := consensus.Root{Account: a, Previous: e.Block.Previous}
		l.reopen(a, done, root, acct.Frontier)
	}
}

// refuse remembers that a block or a fork of account a found no room for
// its election, for retryRefused.
func (l *electionLoop) refuse(a ledger.Address) {
	l.s.stats.electionsRefused.Add(1)
	if _, ok := l.refused[a]; ok {
		return
	}
	if len(l.refused) >= maxRefused {
		l.rescan = true
		return
	}
	l.refused[a] = struct{}{}
}

// retryPerTick bounds the refused accounts put to election again in one
// tick, so that a backlog of them does not stall the loop.
const retryPerTick = 4096

// retryRefused puts to election, while elections have room, the accounts
// whose blocks or forks found none: nothing else would, and such a block
// stayed unconfirmed here (and this node's representatives never voted on
// it) until a later block of its account came. Then, with the room left,
// the accounts a look through the ledger found, which it takes from the
// look as it goes: the look waits for room rather than overfill the
// elections. It takes at most as many accounts as half the room, leaving
// the rest to the blocks applied meanwhile. When none are left and a
// rescan is due, it starts another look.
func (l *electionLoop) retryRefused(ctx context.Context) {
	room := min((l.tally.Params().MaxElections-l.tally.Len()+1)/2, retryPerTick)
	if room <= 0 {
		return
	}
	if len(l.refused) > 0 {
		accts := make([]ledger.Address, 0, min(room, len(l.refused)))
		for a := range l.refused {
			if len(accts) == room {
				break
			}
			delete(l.refused, a)
			accts = append(accts, a)
		}
		room -= len(accts)
		l.checkFrontiers(accts)
	}
	for room > 0 {
		if len(l.scanned) == 0 {
			select {
			case l.scanned = <-l.s.scanned:
			default:
			}
			if len(l.scanned) == 0 {
				break
			}
		}
		n := min(room, len(l.scanned))
		room -= n
		l.checkFrontiers(l.scanned[:n])
		l.scanned = l.scanned[n:]
	}
	if l.rescan && len(l.refused) == 0 && len(l.scanned) == 0 && !l.s.rescanning.Load() {
		l.rescan = false
		l.s.rescanning.Store(true)
		l.s.spawn(func() {
			defer l.s.rescanning.Store(false)
			l.s.electUnconfirmed(ctx)
		})
	}
}

// electPlace opens (or joins) root's election with here, the block in the
// ledger there, and the other contenders recorded with it as a fork, and
// has it ask for votes at once: they were cast while it had none.
func (l *electionLoop) electPlace(root consensus.Root, here ledger.Hash, contenders []ledger.Hash) {
	l.start(root, here, voteResume)
	for _, h := range contenders {
		if h != here {
			l.start(root, h, voteNone)
		}
	}
	l.askSoon(root)
}

// askSoon has root's election ask peers for votes at the next tick.
func (l *electionLoop) askSoon(root consensus.Root) {
	if e := l.roots[root]; e != nil {
		e.started = min(e.started, l.now()-l.s.cfg.RequestVotesAfter.Milliseconds())
	}
}

// reopen puts account a's unconfirmed blocks to election again after a
// time without (a sync, a restart, no room): first every fork recorded
// above its confirmed height done, lowest first, with all its contenders,
// then the frontier at root. An election without a contender the network
// votes for never ends and holds its room, and so does a frontier's while
// a fork beneath it is undecided, so the forks come first.
func (l *electionLoop) reopen(a ledger.Address, done uint64, root consensus.Root, frontier ledger.Hash) {
	type fork struct {
		height     uint64
		root       consensus.Root
		contenders []ledger.Hash
	}
	st := l.s.n.Store
	var forks []fork
	err := st.Conflicts(&a, func(c ledgerstore.Conflict) error {
		height := uint64(1)
		if !c.Previous.IsZero() {
			e, found, err := st.Entry(c.Previous)
			if err != nil || !found {
				return err // not found: the place went with a rollback
			}
			height = e.Height + 1
		}
		if height > done {
			forks = append(forks, fork{height, consensus.Root{Account: a, Previous: c.Previous}, c.Blocks})
		}
		return nil
	})
	if err != nil {
		l.rescan = true
	}
	slices.SortFunc(forks, func(x, y fork) int { return cmp.Compare(x.height, y.height) })
	for _, f := range forks {
		if here, found, err := st.ChainAt(a, f.height); err == nil && found {
			l.electPlace(f.root, here, f.contenders)
		}
	}
	l.start(root, frontier, voteResume)
	l.askSoon(root)
}

// afterLag catches up with what the ledger feed dropped, as change would
// have: elections whose block was confirmed or rolled back meanwhile end
// (they would otherwise hold their room for good), with the blocks waiting
// for their losers, and a rescan finds the blocks applied and the forks
// found meanwhile.
func (l *electionLoop) afterLag() {
	l.refreshWeights()
	// The confirmations the blocked elections wait for may have been
	// among what was dropped; what still waits is blocked again. The
	// sources of blocks whose confirmation or rollback was dropped go.
	for _, dep := range slices.Collect(maps.Keys(l.blocked)) {
		l.release(dep)
	}
	defer l.drainReleased()
	maps.DeleteFunc(l.sources, func(h, _ ledger.Hash) bool {
		_, ok := l.tally.RootOf(h)
		return !ok
	})
	for root, e := range l.roots {
		if e.watch {
			continue
		}
		contenders := l.tally.Contenders(root)
		if !l.standing(root) {
			// Its block in the ledger was rolled back with a
			// dependency that lost, but which is not known for sure:
			// another contender may still win the place (a refused
			// one, kept or not), and the dependency's own rollback
			// may have been dropped too. Only a contender that takes
			// from a block known lost is lost; the election ends, as
			// change ends it.
			for _, h := range contenders {
				if src, ok := l.sources[h]; ok && l.knownLost(root.Previous, src) {
					l.lose(h)
				}
			}
			l.finish(root)
			continue
		}
		for _, h := range contenders {
			if _, found, confirmed, err := l.s.n.Store.EntryConfirmed(h); err == nil && found && confirmed {
				for _, c := range contenders {
					if c != h {
						l.lose(c)
					}
				}
				l.finish(root)
				break
			}
		}
	}
	l.rescan = true
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
		if l.voted(root) || e == nil || e.confirming || e.watch {
			continue
		}
		for _, h := range l.tally.Contenders(root) {
			if _, found, err := l.s.n.Store.Entry(h); err == nil && found {
				l.firstVote(root, h)
				l.evaluate(root)
				break
			}
		}
	}
}

// watchFor is how long a watch election lasts without finding a
// conflicting confirmation.
const watchFor = 30 * time.Second

// sweep asks peers for votes on elections that have waited too long: votes
// lost to a partition, a restart, or a node that synced blocks the network
// confirmed long ago. It ends watch elections that found nothing.
func (l *electionLoop) sweep(ctx context.Context) {
	l.retryRefused(ctx)
	l.voteWhereSilent()
	l.electDependencies()
	for root, in := range l.inflight {
		if rec, _, err := l.s.n.Store.SignedVotes(root.Account, root.Previous); err == nil && covers(rec, in) {
			delete(l.inflight, root)
		}
	}
	for root := range l.retry {
		if len(l.s.confirmQ) == cap(l.s.confirmQ) {
			// The confirm loop is behind: the rest wait for a later tick.
			// Deciding them again now would only find the queue full, and
			// under a backlog of thousands that busy work was what took
			// the cores from everything else (bench network's sync).
			break
		}
		delete(l.retry, root)
		l.evaluate(root)
	}
	now := l.now()
	for root, d := range l.due {
		if now >= d {
			delete(l.due, root)
			l.evaluate(root) // the round times out: the next begins
		}
	}
	for root, e := range l.roots {
		if e.watch && now-e.started > watchFor.Milliseconds() {
			l.finish(root)
		}
	}
	if l.asking {
		return
	}
	after := l.s.cfg.RequestVotesAfter.Milliseconds()
	var hashes []ledger.Hash
	if !l.s.quorum.get().Reachable && now-l.askedOnline >= after {
		// A node that hears too few representatives asks for them: peers
		// answer a vote request for the genesis block with their
		// representatives' votes, which count them online.
		l.askedOnline = now
		hashes = append(hashes, l.s.network)
	}
	for root, e := range l.roots {
		if e.confirming || now-e.started < after || now-e.asked < after {
			continue
		}
		if _, decided := l.retry[root]; decided {
			continue // confirmed here, waiting for the confirm queue
		}
		// Decide again before asking: votes are counted once, and a
		// decision missed (a vote that arrived while the confirm queue
		// was full, weights that changed since) would otherwise wait for
		// a vote that changes the election, which may never come.
		if l.evaluate(root); e.confirming || l.roots[root] == nil {
			continue
		}
		e.asked = now
		if l.s.log.Enabled(ctx, slog.LevelDebug) {
			l.logElection(root)
		}
		hashes = append(hashes, l.tally.Contenders(root)...)
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

// logElection logs where an election that waits for votes stands, with
// every vote counted and the weights they count with: what a stalled
// election is debugged from.
func (l *electionLoop) logElection(root consensus.Root) {
	res := l.tally.Result(root, l.weight)
	own, _ := l.tally.Own(root)
	info, _ := l.tally.Election(root)
	votes := make([]string, 0, len(info.Choices))
	for _, c := range info.Choices {
		kind := "prevote"
		if c.Final {
			kind = "final"
		}
		votes = append(votes, fmt.Sprintf("%s %s r%d %s w=%s", c.Representative, kind, c.Round, c.Hash, l.weight(c.Representative)))
	}
	l.s.log.Debug("election waits for votes", "root", root, "round", res.Round, "tallies", res.Tallies,
		"quorum", res.Quorum, "own", own, "votes", votes)
}

// publishInfo copies the forks' elections and the quorum's state for the
// API.
func (l *electionLoop) publishInfo() {
	// Only forks: the API shows their tallies. Every block has an
	// election, and a tally of each, five times a second, was most of a
	// syncing node's time.
	var infos []ElectionInfo
	now := l.now()
	online := l.tally.Online(l.weight, now)
	l.s.electionCount.Store(int64(len(l.roots)))
	l.s.quorum.set(l.tally.Params().Total, l.tally.Quorum(), online)
	for root, e := range l.roots {
		if e.watch || len(l.tally.Contenders(root)) < 2 {
			continue
		}
		res := l.tally.Result(root, l.weight)
		infos = append(infos, ElectionInfo{Root: root, Started: e.started, Round: res.Round, Tallies: res.Tallies, Online: online, Quorum: res.Quorum})
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
