package consensus

import (
	"bytes"
	"container/list"
	"fmt"
	"iter"
	"slices"

	"github.com/latticenet/lattice/ledger"
)

// MaxContenders bounds the blocks of one election. It matches the ledger,
// which records at most 16 blocks of one conflict (docs/protocol.md, 12.2),
// so every block the ledger knows of can contend.
const MaxContenders = 16

// Root is the place in an account's chain that the blocks of an election
// compete for: the block that follows Previous in Account's chain (Previous
// is zero for an account's first block).
type Root struct {
	Account  ledger.Address `json:"account"`
	Previous ledger.Hash    `json:"previous"`
}

// String returns "account/previous" in hex.
func (r Root) String() string { return r.Account.String() + "/" + r.Previous.String() }

func compareRoots(a, b Root) int {
	if c := bytes.Compare(a.Account[:], b.Account[:]); c != 0 {
		return c
	}
	return bytes.Compare(a.Previous[:], b.Previous[:])
}

func compareHashes(a, b ledger.Hash) int { return bytes.Compare(a[:], b[:]) }

// MaxRounds bounds the rounds of one election whose votes a tally keeps.
// Honest representatives move a round on only after a quorum prevoted in
// the one before, so a healthy election uses one round and a contested one
// a few; a vote for a round below every kept one is ignored once the bound
// is reached.
const MaxRounds = 8

// Tally holds the elections of one node, the votes cast in them and what
// the node's own representatives have voted. It is a pure state machine:
// the node feeds it blocks (Start), verified votes (Vote) and the time,
// asks it where elections stand (Result) and what its representatives
// should sign next (FirstVote, Advise), with weights read from the ledger,
// and ends the elections it has acted on (Finish).
//
// An election runs in rounds, as Tendermint's do, without a proposer. In
// each round a representative signs at most one prevote and one final
// vote (a precommit). It casts its final vote for a contender only when
// that contender's prevotes of the same round hold a quorum (a polka), and
// it is then locked on it: in later rounds it prevotes the contender of the
// highest-round polka it has seen, which is its lock unless a newer polka
// unlocked it. A block is confirmed by the final votes of a quorum in one
// round. Two quorums share more than a third of the weight, so while less
// than a third signs two votes of one kind in one round, no two contenders
// are ever confirmed (docs/protocol.md, "Why two contenders are never both
// confirmed"). A round that ends without confirmation (the prevotes split,
// votes were lost) is followed by the next, so a split never stalls an
// election for good.
//
// A Tally is not safe for concurrent use; the node loop that drives it owns
// it. Every collection it holds is bounded by Params, MaxContenders or
// MaxRounds, except the representatives seen online and their votes, two
// per representative per round of an election: the node drops votes of
// accounts without weight before they reach the tally, as Nano does.
type Tally struct {
	p         Params
	quorum    ledger.Amount
	skip      ledger.Amount // the weight that moves a representative to a later round: Total − Quorum + 1
	elections map[Root]*election
	roots     map[ledger.Hash]Root // the root each contender competes for
	cache     voteCache
	seen      map[ledger.Address]int64 // receiving time of each representative's latest vote
	swept     int64                    // when seen was last cleared of representatives gone offline
	equivocal []Equivocation           // found since the last TakeEquivocations
	votes     uint64                   // Vote calls, which mark the elections each one touched
}

type election struct {
	started    int64
	contenders []ledger.Hash // in the order of Start
	rounds     []*round      // at most MaxRounds, in no order
	polka      mark          // the highest-round polka seen
	own        own
	touched    uint64 // the Tally.votes count of the last Vote that changed it
}

// roundAt returns e's round n, or nil.
func (e *election) roundAt(n uint32) *round {
	for _, rd := range e.rounds {
		if rd.n == n {
			return rd
		}
	}
	return nil
}

// round holds the votes of round n of an election: each representative's
// prevotes and final votes, one per contender. An honest representative
// signs one of each kind; a dishonest one's votes for several contenders
// all count, each for its contender, as Tendermint's vote sets do: a
// quorum certificate then verifies the same at every node whichever of
// the conflicting votes it heard first, and two quorums for different
// contenders still need more than a third to sign both.
type round struct {
	n        uint32
	prevotes voteSet
	finals   voteSet
}

// voteSet is one kind of votes of one round: each representative's
// choices, in the order the representatives were first heard. A round
// holds a few representatives, whose votes the node counts again after
// every vote it receives: a slice scanned in order costs a fraction of a
// map's lookups and randomised iteration there. Past smallSet
// representatives an index keeps each lookup constant.
type voteSet struct {
	reps []repChoices
	idx  map[ledger.Address]int // nil up to smallSet representatives
}

// repChoices is one representative's choices: one, but for an
// equivocator's, kept inline.
type repChoices struct {
	rep  ledger.Address
	c0   choice
	more []choice
}

// all yields r's choices, in the order they came.
func (r *repChoices) all() iter.Seq[choice] {
	return func(yield func(choice) bool) {
		if !yield(r.c0) {
			return
		}
		for _, c := range r.more {
			if !yield(c) {
				return
			}
		}
	}
}

const smallSet = 16

func (s *voteSet) find(rep ledger.Address) int {
	if s.idx != nil {
		if i, ok := s.idx[rep]; ok {
			return i
		}
		return -1
	}
	for i := range s.reps {
		if s.reps[i].rep == rep {
			return i
		}
	}
	return -1
}

// get returns rep's choices, or nil.
func (s *voteSet) get(rep ledger.Address) *repChoices {
	if i := s.find(rep); i >= 0 {
		return &s.reps[i]
	}
	return nil
}

// has reports whether rep has a vote here.
func (s *voteSet) has(rep ledger.Address) bool { return s.find(rep) >= 0 }

// add appends c to rep's choices.
func (s *voteSet) add(rep ledger.Address, c choice) {
	i := s.find(rep)
	if i >= 0 {
		s.reps[i].more = append(s.reps[i].more, c)
		return
	}
	if s.reps == nil {
		s.reps = make([]repChoices, 0, 4)
	}
	i = len(s.reps)
	s.reps = append(s.reps, repChoices{rep: rep, c0: c})
	switch {
	case s.idx != nil:
		s.idx[rep] = i
	case len(s.reps) > smallSet:
		s.idx = make(map[ledger.Address]int, 2*len(s.reps))
		for j, r := range s.reps {
			s.idx[r.rep] = j
		}
	}
}

// len returns the number of representatives with votes here.
func (s *voteSet) len() int { return len(s.reps) }

// choice is a representative's vote in one round of one election: hash, by
// vote.
type choice struct {
	hash ledger.Hash
	vote *Vote
}

// mark names a contender in a round: a polka, or a lock.
type mark struct {
	ok    bool
	round uint32
	hash  ledger.Hash
}

// own is what the node's representatives have signed in an election. They
// vote alike, so one record serves them all.
type own struct {
	started  bool // they have voted here (or a record says they did)
	round    uint32
	prevoted bool        // in round
	prevote  ledger.Hash // in round; zero when prevoted is known only from a record
	last     ledger.Hash // their latest prevote in any round
	finaled  bool        // a final vote in round
	lock     mark        // their latest final vote
	quorumAt int64       // when round's prevotes first held a quorum; -1 not yet
	attested bool        // their final vote in ConfirmedRound is cast
	held     bool        // round has a polka whose final vote waits for its contender's dependencies
}

// Equivocation is the proof that a representative signed two votes of one
// kind, in one round of one election, for two contenders: what no honest
// representative does. Both count, each for its contender, as in
// Tendermint's vote sets: a quorum's certificate then verifies alike at
// every node, whichever it heard first.
type Equivocation struct {
	Root           Root           `json:"root"`
	Representative ledger.Address `json:"representative"`
	First          *Vote          `json:"first"`
	Second         *Vote          `json:"second"`
}

// NewTally returns an empty tally. It applies p.EnsureDefaults and panics
// when p is then invalid: check parameters that come from configuration
// with Validate first.
func NewTally(p Params) *Tally {
	p.EnsureDefaults()
	if err := p.Validate(); err != nil {
		panic(err)
	}
	q := Quorum(p.Total)
	skip, err := p.Total.Sub(q)
	if err != nil {
		skip = ledger.Amount{}
	}
	return &Tally{
		p:         p,
		quorum:    q,
		skip:      addSaturating(skip, ledger.NewAmount(1)),
		elections: make(map[Root]*election),
		roots:     make(map[ledger.Hash]Root),
		cache:     newVoteCache(p.MaxCachedVotes),
		seen:      make(map[ledger.Address]int64),
	}
}

// Params returns the tally's parameters, defaults filled in.
func (t *Tally) Params() Params { return t.p }

// Quorum returns the weight a contender's votes must reach: Quorum(Total).
func (t *Tally) Quorum() ledger.Amount { return t.quorum }

// Start adds block h as a contender for root, creating root's election at
// now if there is none. Votes for h that arrived before it (see Vote) count
// from now on. Starting a contender again is a no-op.
//
// It refuses, leaving the tally unchanged, a new election when MaxElections
// are active (ErrTooManyElections), a contender beyond MaxContenders
// (ErrTooManyContenders), and h when it already contends for another root
// (ErrContenderElsewhere): a block hash covers its account and previous, so
// it has one root only.
func (t *Tally) Start(root Root, h ledger.Hash, now int64) error {
	if r, ok := t.roots[h]; ok {
		if r == root {
			return nil
		}
		return fmt.Errorf("%w: %s contends for %s, not %s", ErrContenderElsewhere, h, r, root)
	}
	e := t.elections[root]
	if e == nil {
		if len(t.elections) >= t.p.MaxElections {
			return fmt.Errorf("%w: %d active", ErrTooManyElections, len(t.elections))
		}
		e = &election{started: now, own: own{quorumAt: -1}}
		t.elections[root] = e
	} else if len(e.contenders) >= MaxContenders {
		return fmt.Errorf("%w: %s has %d", ErrTooManyContenders, root, len(e.contenders))
	}
	e.contenders = append(e.contenders, h)
	t.roots[h] = root
	for _, v := range t.cache.take(h) {
		t.apply(root, e, h, v)
	}
	return nil
}

// Vote counts v, received at now, and returns the roots whose election it
// changed, in the order of v's hashes. The caller must have verified v
// (Vote.Verify); the tally keeps v, and the caller must not modify it after.
//
// For each hash of v that contends in an election, v counts as its
// representative's prevote or final vote in v's round of that election,
// unless the representative has one of that kind in that round already:
// the same vote again changes nothing, so replaying votes is harmless, and
// one for another contender is recorded as an Equivocation and counts for
// that contender too (see round). (A vote naming two contenders of one
// election is its own equivocation.) Votes for hashes with no election yet are cached, per
// representative, hash and kind the one of the highest round, until Start;
// when the cache is full the least recently cached entry is evicted.
//
// Every vote marks its representative online from now, the time it
// arrived.
func (t *Tally) Vote(v *Vote, now int64) (touched []Root) {
	t.markOnline(v.Representative, now)
	t.votes++
	touched = make([]Root, 0, len(v.Hashes))
	for _, h := range v.Hashes {
		root, ok := t.roots[h]
		if !ok {
			t.cache.put(h, v)
			continue
		}
		if e := t.elections[root]; t.apply(root, e, h, v) && e.touched != t.votes {
			e.touched = t.votes
			touched = append(touched, root)
		}
	}
	return touched
}

// apply counts v for h in its round of e, and reports whether the election
// changed.
func (t *Tally) apply(root Root, e *election, h ledger.Hash, v *Vote) bool {
	if v.Round == ConfirmedRound && !v.Final {
		return false // malformed (Vote.Check)
	}
	rd := t.round(e, v.Round)
	if rd == nil {
		return false
	}
	votes := &rd.prevotes
	if v.Final {
		votes = &rd.finals
	}
	if r := votes.get(v.Representative); r != nil {
		for c := range r.all() {
			if c.hash == h {
				return false
			}
		}
		t.equivocal = append(t.equivocal, Equivocation{Root: root, Representative: v.Representative, First: r.c0.vote, Second: v})
	}
	votes.add(v.Representative, choice{hash: h, vote: v})
	return true
}

// round returns e's round n, making room for it, or nil when n is the
// round to go. When MaxRounds rounds are kept, a round far ahead of the
// node's own (more than MaxRounds after it) goes first, the farthest
// first, so votes for rounds far ahead never crowd out the rounds about to
// matter; otherwise the lowest goes, so recent rounds' polka evidence is
// kept. The node's own round, the highest polka's round and ConfirmedRound
// are never dropped.
func (t *Tally) round(e *election, n uint32) *round {
	if rd := e.roundAt(n); rd != nil {
		return rd
	}
	if len(e.rounds) >= MaxRounds {
		protected := func(r uint32) bool {
			return r == e.own.round || (e.polka.ok && r == e.polka.round) || r == ConfirmedRound
		}
		farAhead := func(r uint32) bool { return r > e.own.round && r-e.own.round > MaxRounds }
		// worse reports whether a should go before b.
		worse := func(a, b uint32) bool {
			switch fa, fb := farAhead(a), farAhead(b); {
			case fa != fb:
				return fa
			case fa:
				return a > b
			}
			return a < b
		}
		victim, found := n, !protected(n)
		for _, rd := range e.rounds {
			if r := rd.n; !protected(r) && (!found || worse(r, victim)) {
				victim, found = r, true
			}
		}
		if found && victim == n {
			return nil
		}
		if found {
			e.rounds = slices.DeleteFunc(e.rounds, func(rd *round) bool { return rd.n == victim })
		}
	}
	rd := &round{n: n}
	e.rounds = append(e.rounds, rd)
	return rd
}

// TakeEquivocations returns the equivocations found since its last call
// and forgets them.
func (t *Tally) TakeEquivocations() []Equivocation {
	eq := t.equivocal
	t.equivocal = nil
	return eq
}

func (t *Tally) markOnline(rep ledger.Address, now int64) {
	if last, ok := t.seen[rep]; !ok || now > last {
		t.seen[rep] = now
	}
	// Sweep at most once a window, so that a vote costs O(1) amortised.
	if now-t.swept >= t.p.OnlineWindow {
		for r, last := range t.seen {
			if !t.online(last, now) {
				delete(t.seen, r)
			}
		}
		t.swept = now
	}
}

func (t *Tally) online(seen, now int64) bool { return now-seen <= t.p.OnlineWindow }

// Online returns the online weight at now: the sum of the weights of the
// representatives whose latest vote arrived at most OnlineWindow ms before
// now. A sum beyond 128 bits saturates. It says whether the
// representatives this node hears could reach quorum; it has no part in
// confirming.
func (t *Tally) Online(weight func(ledger.Address) ledger.Amount, now int64) ledger.Amount {
	var sum ledger.Amount
	for rep, seen := range t.seen {
		if t.online(seen, now) {
			sum = addSaturating(sum, weight(rep))
		}
	}
	return sum
}

var maxAmount = ledger.AmountFromParts(^uint64(0), ^uint64(0))

func addSaturating(a, b ledger.Amount) ledger.Amount {
	s, err := a.Add(b)
	if err != nil {
		return maxAmount
	}
	return s
}

// Contender is one block of an election and its tallies in one round: the
// sum of the weights of the representatives whose prevote it has, and of
// those whose final vote it has.
type Contender struct {
	Hash  ledger.Hash   `json:"hash"`
	Tally ledger.Amount `json:"tally"`
	Final ledger.Amount `json:"final"`
}

// Result is where an election stands at one moment, under one set of
// weights.
type Result struct {
	// Round is the round Tallies are of: the node's representatives' round
	// once they vote in the election, the highest round with votes before.
	Round uint32 `json:"round"`
	// Tallies lists every contender, by tally descending, then by hash
	// ascending.
	Tallies []Contender `json:"tallies"`
	// Leader is the first of Tallies: ties go to the lowest hash, so every
	// node with the same votes and weights picks the same leader.
	Leader ledger.Hash `json:"leader"`
	// Quorum is Quorum(Params.Total).
	Quorum ledger.Amount `json:"quorum"`
	// Agreed reports whether the leader's prevotes in Round hold a quorum
	// (a polka): representatives in that round then cast their final
	// votes for it.
	Agreed bool `json:"agreed"`
	// Confirmed reports whether a contender's final votes of one round
	// hold a quorum; that contender is then the Winner, confirmed in
	// ConfirmedRound (zero values otherwise).
	Confirmed      bool        `json:"confirmed"`
	Winner         ledger.Hash `json:"winner,omitzero"`
	ConfirmedRound uint32      `json:"confirmed_round,omitempty"`
}

// Result tallies root's election. Weights are not stored, since they
// change as the ledger does: weight gives each representative's weight
// now. The result of an unknown root has no tallies and is not confirmed.
//
// A contender is confirmed when the weight of its final votes in one round
// is at least Quorum. Two contenders can both be only if representatives
// holding more than a third of Total signed two final votes in one round
// or broke their locks; then the lowest round wins here, and Equivocations
// hold what proof there is.
func (t *Tally) Result(root Root, weight func(ledger.Address) ledger.Amount) Result {
	r := Result{Quorum: t.quorum}
	e := t.elections[root]
	if e == nil {
		return r
	}
	r.ConfirmedRound, r.Winner, r.Confirmed = t.confirmed(e, weight)
	r.Round = e.shownRound()
	prevotes, finals := e.sums(e.roundAt(r.Round), weight)
	r.Tallies = make([]Contender, len(e.contenders))
	for i, h := range e.contenders {
		r.Tallies[i] = Contender{Hash: h, Tally: prevotes[i], Final: finals[i]}
	}
	slices.SortFunc(r.Tallies, func(a, b Contender) int {
		if c := b.Tally.Cmp(a.Tally); c != 0 {
			return c
		}
		return compareHashes(a.Hash, b.Hash)
	})
	lead := r.Tallies[0]
	r.Leader = lead.Hash
	r.Agreed = lead.Tally.Cmp(r.Quorum) >= 0
	return r
}

// Confirmed reports the winner of root's election and the round its final
// votes hold a quorum in, as Result does, without the tallies: what the
// node asks after every vote.
func (t *Tally) Confirmed(root Root, weight func(ledger.Address) ledger.Amount) (ledger.Hash, uint32, bool) {
	e := t.elections[root]
	if e == nil {
		return ledger.Hash{}, 0, false
	}
	n, h, ok := t.confirmed(e, weight)
	return h, n, ok
}

// shownRound is the round Result shows: the node's own, else the highest
// with votes.
func (e *election) shownRound() uint32 {
	if e.own.started {
		return e.own.round
	}
	var hi uint32
	for _, rd := range e.rounds {
		if rd.n != ConfirmedRound {
			hi = max(hi, rd.n)
		}
	}
	return hi
}

// tallies holds a weight for each contender of an election, in the order
// of its contenders. An election has at most MaxContenders, so a fixed
// array does, and counting votes allocates nothing: the node tallies after
// every vote.
type tallies [MaxContenders]ledger.Amount

// index returns h's place among e's contenders, or -1.
func (e *election) index(h ledger.Hash) int {
	for i, c := range e.contenders {
		if c == h {
			return i
		}
	}
	return -1
}

// add adds w to h's tally.
func (e *election) add(s *tallies, h ledger.Hash, w ledger.Amount) {
	if i := e.index(h); i >= 0 {
		s[i] = addSaturating(s[i], w)
	}
}

// addUp adds each representative's weight to every contender it voted for.
func (e *election) addUp(s *tallies, votes *voteSet, weight func(ledger.Address) ledger.Amount) {
	for i := range votes.reps {
		r := &votes.reps[i]
		w := weight(r.rep)
		for c := range r.all() {
			e.add(s, c.hash, w)
		}
	}
}

// reaching returns the first contender whose tally is at least min.
func (e *election) reaching(s *tallies, min ledger.Amount) (ledger.Hash, bool) {
	for i, h := range e.contenders {
		if s[i].Cmp(min) >= 0 {
			return h, true
		}
	}
	return ledger.Hash{}, false
}

// sums adds up the weights of rd's prevotes and final votes by contender.
func (e *election) sums(rd *round, weight func(ledger.Address) ledger.Amount) (prevotes, finals tallies) {
	if rd != nil {
		e.addUp(&prevotes, &rd.prevotes, weight)
		e.addUp(&finals, &rd.finals, weight)
	}
	return prevotes, finals
}

// confirmed finds the lowest round whose final votes for one contender
// hold a quorum.
func (t *Tally) confirmed(e *election, weight func(ledger.Address) ledger.Amount) (uint32, ledger.Hash, bool) {
	found := false
	var best uint32
	var winner ledger.Hash
	for _, rd := range e.rounds {
		n := rd.n
		if rd.finals.len() == 0 || (found && n >= best) {
			continue
		}
		var finals tallies
		e.addUp(&finals, &rd.finals, weight)
		if h, ok := e.reaching(&finals, t.quorum); ok {
			found, best, winner = true, n, h
		}
	}
	return best, winner, found
}

// polkaIn returns the contender whose prevotes in rd hold a quorum, with
// self's weight added for its own prevote own when rd lacks self's vote
// (the node counts its own votes once it has signed them).
func (t *Tally) polkaIn(e *election, rd *round, self ledger.Address, own ledger.Hash, weight func(ledger.Address) ledger.Amount) (ledger.Hash, bool) {
	prevotes, _ := e.sums(rd, weight)
	if (rd == nil || !rd.prevotes.has(self)) && !own.IsZero() && !self.IsZero() {
		e.add(&prevotes, own, weight(self))
	}
	return e.reaching(&prevotes, t.quorum)
}

// notePolkas raises e.polka to the highest-round polka among e's rounds.
func (t *Tally) notePolkas(e *election, weight func(ledger.Address) ledger.Amount) {
	for _, rd := range e.rounds {
		n := rd.n
		if e.polka.ok && n <= e.polka.round {
			continue
		}
		if h, ok := t.polkaIn(e, rd, ledger.Address{}, ledger.Hash{}, weight); ok {
			e.polka = mark{ok: true, round: n, hash: h}
		}
	}
}

// Advice is a vote the node's representatives should sign: a prevote or a
// final vote for Hash in Round.
type Advice struct {
	Hash  ledger.Hash
	Round uint32
	Final bool
}

// Ready reports how a contender's dependencies (the block before it in
// its chain, and the send it takes from) stand at the node: the node's
// representatives cast a final vote for it only once they are Settled
// (see Advise and docs/protocol.md, "Dependencies first"). nil means
// every contender is Settled.
type Ready func(ledger.Hash) Readiness

// Readiness is what a Ready says of one contender.
type Readiness uint8

const (
	// Waiting: a dependency is not settled at the node yet.
	Waiting Readiness = iota
	// Settled: every dependency is confirmed at the node, or final-voted
	// by its representatives in round 0 of its own election.
	Settled
	// Lost: a dependency lost its election at the node (another block
	// is confirmed in its place), so the contender can never be
	// confirmed: the node's representatives never final-vote or attest
	// it, never follow its polka, and pass over it in the turns; a
	// round whose polka is for it is not held for it. A lock on it
	// (possible only past the fault model) is kept, as every lock is.
	Lost
)

// FirstVote has the node's representatives, which have not voted in
// root's election, prevote in round 0 for h, the block in their node's
// ledger, and returns the votes to sign: that prevote, and the final vote
// for h as well when the prevotes already counted, with self's own, hold a
// quorum for it (the other representatives' votes arrived first) and h is
// ready. self is the node's representative whose weight counts for its
// votes before they are signed. It returns nothing when they have voted
// there before, or the election is unknown.
func (t *Tally) FirstVote(root Root, self ledger.Address, h ledger.Hash, weight func(ledger.Address) ledger.Amount, ready Ready, now int64) []Advice {
	e := t.elections[root]
	if e == nil || e.own.started {
		return nil
	}
	e.own = own{started: true, prevoted: true, prevote: h, last: h, quorumAt: -1}
	return append([]Advice{{Hash: h}}, t.Advise(root, self, weight, ready, now)...)
}

// Record is what a node's representatives have signed in one election, as
// the node keeps it on disk: their latest final vote and their latest
// prevote of a round above 0 (a zero hash for none). A prevote of round 0
// needs no record: it is for the block the node's ledger holds, which a
// restart does not change.
type Record struct {
	Prevote      ledger.Hash
	PrevoteRound uint32
	Final        ledger.Hash
	FinalRound   uint32
	// Void says the final vote's block can never be confirmed (the node
	// rolled it back: a block it depends on lost its election): they
	// resume in the round after the latest the record names, unlocked,
	// and so never sign again in a round they signed in.
	Void bool
}

// Restore sets what the node's representatives have signed in root's
// election from rec, before they vote there again after a restart: they
// resume in the latest round rec names, locked on their final vote, and
// sign nothing in that round that could contradict what they signed
// before. An empty rec, or an election that is unknown or already voted
// in, is left as it is.
func (t *Tally) Restore(root Root, rec Record) {
	e := t.elections[root]
	if e == nil || e.own.started || (rec.Prevote.IsZero() && rec.Final.IsZero()) {
		return
	}
	o := own{started: true, quorumAt: -1}
	if rec.Void {
		o.round = max(rec.PrevoteRound, rec.FinalRound) + 1
		e.own = o
		return
	}
	if !rec.Final.IsZero() {
		o.round = rec.FinalRound
		o.lock = mark{ok: true, round: rec.FinalRound, hash: rec.Final}
	}
	if !rec.Prevote.IsZero() && (rec.Final.IsZero() || rec.PrevoteRound >= rec.FinalRound) {
		o.round = rec.PrevoteRound
		o.last = rec.Prevote
	}
	// What they prevoted in the round of a final vote alone is not known:
	// they prevote nothing more there.
	o.prevoted = true
	if !rec.Prevote.IsZero() && rec.PrevoteRound == o.round {
		o.prevote = rec.Prevote
	}
	if o.lock.ok && o.lock.round == o.round {
		o.finaled = true
	}
	e.own = o
}

// Advise returns the votes the node's representatives should sign next in
// root's election, and counts them as signed: nothing before they have
// voted there (FirstVote) or once the election is confirmed; otherwise, in
// this order,
//
//   - they move to a later round when representatives holding more than
//     Total − Quorum voted in it (no honest quorum can still form without
//     them); from round 0 to round 1 when no contender can have a polka
//     in round 0 any more (its prevotes with the weight of the
//     representatives online that have yet to prevote fall short: a plain
//     fork split between its contenders); from any
//     round to the next when it has lasted Params.RoundTimeout (doubled each round,
//     up to 32 times) since representatives holding a quorum voted in it
//     or later, without a confirmation;
//   - in a round they have not prevoted in, they prevote the contender of
//     the highest-round polka they have seen (unless it is older than their
//     lock, or of the same round: then the lock, or it is Lost), else their
//     lock, else the contenders ordered by hash take turns: round n gets
//     the (n−1)th, modulo their number, the same at every node that knows
//     them, or the first after it that is Settled here, or failing that
//     the first that is not Lost (see choosePrevote);
//   - in a round they have not cast a final vote in, they cast one for the
//     contender whose prevotes of that round hold a quorum (self's weight
//     counted for its own prevote), and are locked on it, once that
//     contender is Settled: while it is Waiting the round is held, and
//     does not time out (its final vote is due, not a new round); a Lost
//     one gets no final vote and the round times out as one without a
//     polka;
//   - once final votes of ConfirmedRound for a contender from more than
//     Total − Quorum reached them, they cast theirs for it, once, unless
//     they are locked on another or it is Lost.
//
// ready says how each contender's dependencies stand (nil: all
// Settled). now is the time in Unix ms; a node calls Advise when votes
// change an election, when a contender becomes ready or lost, and
// periodically, so that rounds time out.
func (t *Tally) Advise(root Root, self ledger.Address, weight func(ledger.Address) ledger.Amount, ready Ready, now int64) []Advice {
	e := t.elections[root]
	if e == nil || !e.own.started {
		return nil
	}
	if _, _, done := t.confirmed(e, weight); done {
		return nil
	}
	t.notePolkas(e, weight)
	o := &e.own
	if n, ok := t.skipTo(e, weight); ok && n > o.round {
		o.enter(n)
	}
	// A round whose final vote waits for its contender to be ready is
	// held: timing it out would only spin rounds until then.
	wasHeld := o.held
	o.held = false
	// The polka in the node's round is found once, for the hold and the
	// final vote both, unless the round or the prevote change in between.
	var (
		polka       ledger.Hash
		polkaOK     bool
		verdict     = Settled // what ready says of polka
		judged      bool      // polka and verdict are the round's
		judgedRound = o.round
	)
	if o.prevoted && !o.finaled && ready != nil {
		polka, polkaOK = t.polkaIn(e, t.round(e, o.round), self, o.prevote, weight)
		if polkaOK {
			verdict = ready(polka)
		}
		o.held = polkaOK && verdict == Waiting
		judged = true
	}
	if wasHeld && !o.held {
		o.quorumAt = -1 // the round's timeout counts from its final vote's release
	}
	polkaHere := e.polka.ok && e.polka.round == o.round
	if o.prevoted && !o.held && o.round < ConfirmedRound-1 && ((o.round == 0 && !polkaHere && t.dead(e, self, weight, now)) || t.timedOut(e, self, weight, now)) {
		o.enter(o.round + 1)
	}
	var out []Advice
	if rd := e.roundAt(ConfirmedRound); rd != nil && !o.attested {
		_, attests := e.sums(rd, weight)
		for i, h := range e.contenders {
			if attests[i].Cmp(t.skip) >= 0 && (!o.lock.ok || o.lock.hash == h) && (ready == nil || ready(h) != Lost) {
				o.attested = true
				out = append(out, Advice{Hash: h, Round: ConfirmedRound, Final: true})
				break
			}
		}
	}
	if !o.prevoted {
		h := t.choosePrevote(e, ready)
		if h.IsZero() {
			return out
		}
		o.prevoted, o.prevote, o.last = true, h, h
		out = append(out, Advice{Hash: h, Round: o.round})
		judged = false
	}
	if !o.finaled && !o.held {
		if !judged || judgedRound != o.round {
			polka, polkaOK = t.polkaIn(e, t.round(e, o.round), self, o.prevote, weight)
			verdict = Settled
			if polkaOK && ready != nil {
				verdict = ready(polka)
			}
		}
		switch {
		case !polkaOK, verdict == Lost:
			// A Lost contender's polka is no polka here: the round
			// times out, and the next round's prevote goes elsewhere.
		case verdict == Settled:
			o.finaled = true
			o.lock = mark{ok: true, round: o.round, hash: polka}
			out = append(out, Advice{Hash: polka, Round: o.round, Final: true})
		default:
			o.held = true
		}
	}
	return out
}

// enter moves the node's representatives to round n.
func (o *own) enter(n uint32) {
	o.round, o.prevoted, o.prevote, o.finaled, o.quorumAt, o.held = n, false, ledger.Hash{}, false, -1, false
}

// skipTo returns the highest round above the node's own in which
// representatives holding at least Total − Quorum + 1 voted.
func (t *Tally) skipTo(e *election, weight func(ledger.Address) ledger.Amount) (uint32, bool) {
	found := false
	var best uint32
	for _, rd := range e.rounds {
		n := rd.n
		if n <= e.own.round || (found && n <= best) || n == ConfirmedRound {
			continue
		}
		var sum ledger.Amount
		for _, r := range rd.prevotes.reps {
			sum = addSaturating(sum, weight(r.rep))
		}
		for _, r := range rd.finals.reps {
			if !rd.prevotes.has(r.rep) {
				sum = addSaturating(sum, weight(r.rep))
			}
		}
		if sum.Cmp(t.skip) >= 0 {
			found, best = true, n
		}
	}
	return best, found
}

// dead reports whether no contender can have a polka in the node's round
// any more: representatives holding a quorum prevoted there, and for each
// contender its prevotes, with the weight of every
// representative online (heard within Params.OnlineWindow) that has not
// prevoted there yet, fall short of the quorum. Advise ends round 0 then,
// without waiting for its timeout: a fork whose contenders split the first
// prevotes moves on at network speed to round 1, where unlocked
// representatives agree. Weight never heard (an account's own, delegated to
// no voting representative) would keep every split open until the
// timeout; a round ended early costs only a round, never safety. Later
// rounds wait for their timeouts, which grow: representatives locked on
// different contenders make every round dead until a polka's evidence
// reaches them, and ending rounds at network speed would only spin.
func (t *Tally) dead(e *election, self ledger.Address, weight func(ledger.Address) ledger.Amount, now int64) bool {
	o := &e.own
	rd := e.roundAt(o.round)
	prevotes, _ := e.sums(rd, weight)
	var voted ledger.Amount
	if rd != nil {
		for _, r := range rd.prevotes.reps {
			voted = addSaturating(voted, weight(r.rep))
		}
	}
	if (rd == nil || !rd.prevotes.has(self)) && !o.prevote.IsZero() && !self.IsZero() {
		e.add(&prevotes, o.prevote, weight(self))
		voted = addSaturating(voted, weight(self))
	}
	if voted.Cmp(t.quorum) < 0 {
		return false // too few heard to call it: the timer decides
	}
	var unvoted ledger.Amount
	for rep, seen := range t.seen {
		if rep != self && t.online(seen, now) && (rd == nil || !rd.prevotes.has(rep)) {
			unvoted = addSaturating(unvoted, weight(rep))
		}
	}
	for i := range e.contenders {
		if addSaturating(prevotes[i], unvoted).Cmp(t.quorum) >= 0 {
			return false
		}
	}
	return true
}

// timedOut reports whether the node's round has lasted its timeout since
// representatives holding a quorum had voted in it or a later round,
// noting when they first had. (Counting later rounds too, a node whose own
// prevote of the round was lost is not left waiting for a quorum that
// moved on.)
func (t *Tally) timedOut(e *election, self ledger.Address, weight func(ledger.Address) ledger.Amount, now int64) bool {
	o := &e.own
	if o.quorumAt < 0 {
		sum := t.votedSince(e, self, weight)
		if sum.Cmp(t.quorum) < 0 {
			return false
		}
		o.quorumAt = now
	}
	return now-o.quorumAt >= t.RoundTimeout(o.round)
}

// votedSince sums the weights of the representatives that voted in the
// node's round or a later one, each once, self's included.
func (t *Tally) votedSince(e *election, self ledger.Address, weight func(ledger.Address) ledger.Amount) ledger.Amount {
	var sum ledger.Amount
	// Each representative once: a few, kept in an array, or many, in a
	// map.
	var small [smallSet]ledger.Address
	var n int
	var many map[ledger.Address]bool
	count := func(rep ledger.Address) {
		switch {
		case many != nil:
			if many[rep] {
				return
			}
			many[rep] = true
		case slices.Contains(small[:n], rep):
			return
		case n < smallSet:
			small[n] = rep
			n++
		default:
			many = make(map[ledger.Address]bool, 2*smallSet)
			for _, a := range small {
				many[a] = true
			}
			many[rep] = true
		}
		sum = addSaturating(sum, weight(rep))
	}
	for _, rd := range e.rounds {
		if rd.n < e.own.round || rd.n == ConfirmedRound {
			continue
		}
		for _, r := range rd.prevotes.reps {
			count(r.rep)
		}
		for _, r := range rd.finals.reps {
			count(r.rep)
		}
	}
	if !self.IsZero() {
		count(self) // it has prevoted in its round
	}
	return sum
}

// RoundTimeout returns how long, in ms, round n lasts after its prevotes
// hold a quorum: Params.RoundTimeout, doubled each round up to 32 times.
func (t *Tally) RoundTimeout(n uint32) int64 {
	return t.p.RoundTimeout << min(n, 5)
}

// choosePrevote picks what the node's representatives prevote in a new
// round (see Advise).
func (t *Tally) choosePrevote(e *election, ready Ready) ledger.Hash {
	o := &e.own
	p := e.polka
	switch {
	case p.ok && (!o.lock.ok || p.round > o.lock.round || p.hash == o.lock.hash) && (ready == nil || ready(p.hash) != Lost):
		return p.hash
	case o.lock.ok:
		return o.lock.hash // a lock is kept whatever happened since
	case len(e.contenders) == 0:
		return ledger.Hash{}
	}
	// No polka to follow and no lock: the contenders by hash, one after
	// the other as rounds pass. It depends on no vote, so every
	// representative in this state prevotes alike, whatever it has heard.
	byHash := slices.Clone(e.contenders)
	slices.SortFunc(byHash, compareHashes)
	first := int((o.round - 1) % uint32(len(byHash)))
	if ready == nil {
		return byHash[first]
	}
	// A contender that cannot have a final vote here yet would only
	// gather a polka that holds every round it wins (a receive of a send
	// nobody has, say): the turn passes to the next one Settled here,
	// else the next one not Lost. Nodes that judge the contenders alike
	// still prevote alike, and judgements converge as confirmations
	// spread.
	fallback := ledger.Hash{}
	for i := range byHash {
		h := byHash[(first+i)%len(byHash)]
		switch ready(h) {
		case Settled:
			return h
		case Waiting:
			if fallback.IsZero() {
				fallback = h
			}
		}
	}
	if fallback.IsZero() {
		return byHash[first] // every contender Lost: the prevote changes nothing
	}
	return fallback
}

// Deadline returns when, in Unix ms, the node's round in root's election
// times out: once Advise found its prevotes holding a quorum, and not
// while the round is held. The node calls Advise again then.
func (t *Tally) Deadline(root Root) (int64, bool) {
	e := t.elections[root]
	if e == nil || !e.own.started || e.own.quorumAt < 0 || e.own.held {
		return 0, false
	}
	return e.own.quorumAt + t.RoundTimeout(e.own.round), true
}

// Held reports whether the node's round in root's election is held: it
// has a polka whose contender was not ready when Advise last looked.
func (t *Tally) Held(root Root) bool {
	e := t.elections[root]
	return e != nil && e.own.held
}

// PolkaRound returns the round of the highest polka Advise has seen in
// root's election, if any.
func (t *Tally) PolkaRound(root Root) (uint32, bool) {
	e := t.elections[root]
	if e == nil || !e.polka.ok {
		return 0, false
	}
	return e.polka.round, true
}

// Own is what the node's representatives have signed in an election, for
// answering peers who ask: their prevote in their round (zero when only a
// record says they prevoted) and their latest final vote (zero for none).
type Own struct {
	Round      uint32
	Prevote    ledger.Hash
	Final      ledger.Hash
	FinalRound uint32
}

// Own returns what the node's representatives have signed in root's
// election, and false when they have not voted there.
func (t *Tally) Own(root Root) (Own, bool) {
	e := t.elections[root]
	if e == nil || !e.own.started {
		return Own{}, false
	}
	o := Own{Round: e.own.round, Prevote: e.own.prevote}
	if e.own.lock.ok {
		o.Final, o.FinalRound = e.own.lock.hash, e.own.lock.round
	}
	return o, true
}

// Polka returns the prevotes of the highest-round polka the tally has
// seen in root's election, by representative ascending: the evidence that
// lets a locked representative move to a newer contender. Peers that ask
// for votes get it, so a polka seen by one node is seen by all.
func (t *Tally) Polka(root Root) []*Vote {
	e := t.elections[root]
	if e == nil || !e.polka.ok {
		return nil
	}
	rd := e.roundAt(e.polka.round)
	if rd == nil {
		return nil
	}
	return collect(&rd.prevotes, e.polka.hash)
}

// collect returns the votes for h, by representative ascending.
func collect(votes *voteSet, h ledger.Hash) []*Vote {
	var out []*Vote
	for i := range votes.reps {
		for c := range votes.reps[i].all() {
			if c.hash == h {
				out = append(out, c.vote)
			}
		}
	}
	sortByRep(out)
	return out
}

func sortByRep(votes []*Vote) {
	slices.SortFunc(votes, func(a, b *Vote) int {
		return bytes.Compare(a.Representative[:], b.Representative[:])
	})
}

// Certificate returns the final votes for h in round n of root's election,
// by representative ascending: once h is confirmed (Result.Winner and
// ConfirmedRound), the proof a node stores with it. The votes are the
// tally's own; the caller must not modify them.
func (t *Tally) Certificate(root Root, h ledger.Hash, n uint32) []*Vote {
	e := t.elections[root]
	if e == nil {
		return nil
	}
	rd := e.roundAt(n)
	if rd == nil {
		return nil
	}
	return collect(&rd.finals, h)
}

// Contenders returns the contenders of root's election, in the order they
// were started, or nil when there is none.
func (t *Tally) Contenders(root Root) []ledger.Hash {
	if e := t.elections[root]; e != nil {
		return slices.Clone(e.contenders)
	}
	return nil
}

// RootOf returns the root of the election h contends in.
func (t *Tally) RootOf(h ledger.Hash) (Root, bool) {
	r, ok := t.roots[h]
	return r, ok
}

// Finish ends root's election, with its votes. Votes that arrive later for
// its contenders are cached like votes for unknown blocks, so the node
// ignores votes for blocks it has cemented before they reach the tally.
func (t *Tally) Finish(root Root) {
	e := t.elections[root]
	if e == nil {
		return
	}
	for _, h := range e.contenders {
		delete(t.roots, h)
	}
	delete(t.elections, root)
}

// Len returns the number of active elections.
func (t *Tally) Len() int { return len(t.elections) }

// Roots returns the roots of the active elections, sorted by account, then
// previous.
func (t *Tally) Roots() []Root {
	roots := make([]Root, 0, len(t.elections))
	for r := range t.elections {
		roots = append(roots, r)
	}
	slices.SortFunc(roots, compareRoots)
	return roots
}

// Choice is one vote of a representative in an election.
type Choice struct {
	Representative ledger.Address `json:"representative"`
	Hash           ledger.Hash    `json:"hash"`
	Round          uint32         `json:"round"`
	Final          bool           `json:"final"`
}

// ElectionInfo is a snapshot of one election, for the API.
type ElectionInfo struct {
	Root       Root          `json:"root"`
	Started    int64         `json:"started"`    // the now of the Start that created it
	Contenders []ledger.Hash `json:"contenders"` // in the order they were started
	Choices    []Choice      `json:"choices"`    // by representative ascending, then round, prevote first
}

// Election returns a snapshot of root's election, or false if there is none.
func (t *Tally) Election(root Root) (ElectionInfo, bool) {
	e := t.elections[root]
	if e == nil {
		return ElectionInfo{}, false
	}
	info := ElectionInfo{Root: root, Started: e.started, Contenders: slices.Clone(e.contenders)}
	for _, rd := range e.rounds {
		for _, r := range rd.prevotes.reps {
			for c := range r.all() {
				info.Choices = append(info.Choices, Choice{Representative: r.rep, Hash: c.hash, Round: rd.n})
			}
		}
		for _, r := range rd.finals.reps {
			for c := range r.all() {
				info.Choices = append(info.Choices, Choice{Representative: r.rep, Hash: c.hash, Round: rd.n, Final: true})
			}
		}
	}
	slices.SortFunc(info.Choices, func(a, b Choice) int {
		if c := bytes.Compare(a.Representative[:], b.Representative[:]); c != 0 {
			return c
		}
		if a.Round != b.Round {
			return cmpUint32(a.Round, b.Round)
		}
		return boolInt(a.Final) - boolInt(b.Final)
	})
	return info, true
}

func cmpUint32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Stats are the tally's counters, for operators.
type Stats struct {
	Elections      int    `json:"elections"`
	CachedVotes    int    `json:"cached_votes"`    // (hash, representative) entries
	CacheEvictions uint64 `json:"cache_evictions"` // since NewTally
}

// Stats returns the tally's counters.
func (t *Tally) Stats() Stats {
	return Stats{Elections: len(t.elections), CachedVotes: t.cache.order.Len(), CacheEvictions: t.cache.evictions}
}

// voteCache holds votes for blocks without an election: per hash,
// representative and kind, the vote of the highest round, up to max
// entries, least recently cached first.
type voteCache struct {
	max       int
	order     *list.List // of *cacheEntry
	byHash    map[ledger.Hash]map[cacheKey]*list.Element
	evictions uint64
}

type cacheKey struct {
	rep   ledger.Address
	final bool
}

type cacheEntry struct {
	hash ledger.Hash
	vote *Vote
}

func newVoteCache(max int) voteCache {
	return voteCache{max: max, order: list.New(), byHash: make(map[ledger.Hash]map[cacheKey]*list.Element)}
}

func (c *voteCache) put(h ledger.Hash, v *Vote) {
	reps := c.byHash[h]
	k := cacheKey{v.Representative, v.Final}
	if el, ok := reps[k]; ok {
		ce := el.Value.(*cacheEntry)
		if v.Round > ce.vote.Round {
			ce.vote = v
			c.order.MoveToBack(el)
		}
		return
	}
	if c.order.Len() >= c.max {
		c.remove(c.order.Front())
		c.evictions++
	}
	if reps == nil {
		reps = make(map[cacheKey]*list.Element)
		c.byHash[h] = reps
	}
	reps[k] = c.order.PushBack(&cacheEntry{hash: h, vote: v})
}

func (c *voteCache) remove(el *list.Element) {
	ce := c.order.Remove(el).(*cacheEntry)
	reps := c.byHash[ce.hash]
	delete(reps, cacheKey{ce.vote.Representative, ce.vote.Final})
	if len(reps) == 0 {
		delete(c.byHash, ce.hash)
	}
}

// take removes and returns the votes cached for h, by representative,
// prevotes first.
func (c *voteCache) take(h ledger.Hash) []*Vote {
	reps := c.byHash[h]
	votes := make([]*Vote, 0, len(reps))
	for _, el := range reps {
		votes = append(votes, c.order.Remove(el).(*cacheEntry).vote)
	}
	delete(c.byHash, h)
	slices.SortFunc(votes, func(a, b *Vote) int {
		if c := bytes.Compare(a.Representative[:], b.Representative[:]); c != 0 {
			return c
		}
		return boolInt(a.Final) - boolInt(b.Final)
	})
	return votes
}
