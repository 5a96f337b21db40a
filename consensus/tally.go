package consensus

import (
	"bytes"
	"container/list"
	"fmt"
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

// Tally holds the elections of one node and the votes cast in them. It is a
// pure state machine: the node feeds it blocks (Start), verified votes
// (Vote) and the time, asks it where elections stand (Result) and what its
// own representatives should vote (Advise), with weights read from the
// ledger, and ends the elections it has acted on (Finish).
//
// Votes come in two kinds. A non-final vote may be replaced by a newer one
// of the same representative, so representatives converge on one
// contender; it confirms nothing. A final vote (timestamp FinalTimestamp)
// is cast at most once per election, only after the contender's votes
// reached quorum, and never replaced: a block is confirmed by final votes
// alone, so no weight can ever count for two contenders.
//
// A Tally is not safe for concurrent use; the node loop that drives it owns
// it. Every collection it holds is bounded by Params or MaxContenders,
// except the representatives seen online and their choices, one per
// representative per election: the node drops votes of accounts without
// weight before they reach the tally, as Nano does.
type Tally struct {
	p         Params
	quorum    ledger.Amount
	elections map[Root]*election
	roots     map[ledger.Hash]Root // the root each contender competes for
	cache     voteCache
	seen      map[ledger.Address]int64 // receiving time of each representative's latest vote
	swept     int64                    // when seen was last cleared of representatives gone offline
	equivocal []Equivocation           // found since the last TakeEquivocations
}

type election struct {
	started    int64
	contenders []ledger.Hash // in the order of Start
	choices    map[ledger.Address]choice
	finals     map[ledger.Address]choice // the first final vote of each representative
}

// choice is a representative's choice in one election: hash, by vote.
type choice struct {
	hash ledger.Hash
	vote *Vote
}

// Equivocation is the proof that a representative signed final votes for
// two contenders of one election: what no honest representative does.
// Only First counts in the tally.
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
	return &Tally{
		p:         p,
		quorum:    Quorum(p.Total),
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
		e = &election{started: now, choices: make(map[ledger.Address]choice), finals: make(map[ledger.Address]choice)}
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
// For each hash of v that contends in an election, the representative's
// choice in that election becomes that hash if v is newer than the vote
// behind its current choice there: a representative has one choice per
// election, a newer vote replaces it, and an older or equally old vote is
// ignored, so replaying votes changes nothing. A final vote is newer than
// every other, so it is never replaced; a second final vote of one
// representative for another contender of the election is recorded as an
// Equivocation and counts for nothing. (Were v to name two contenders of
// one election, the first would count.) Votes for hashes with no election
// yet are cached, the newest per representative and hash, until Start;
// when the cache is full the least recently cached entry is evicted.
//
// Every vote marks its representative online from now, the time it arrived,
// not v.Timestamp, which the representative chose.
func (t *Tally) Vote(v *Vote, now int64) (touched []Root) {
	t.markOnline(v.Representative, now)
	for _, h := range v.Hashes {
		root, ok := t.roots[h]
		if !ok {
			t.cache.put(h, v)
			continue
		}
		if t.apply(root, t.elections[root], h, v) && !slices.Contains(touched, root) {
			touched = append(touched, root)
		}
	}
	return touched
}

// apply makes v's representative choose h, unless its choice stands on a
// vote as new as v or newer, and records a final vote. It reports whether
// the election changed.
func (t *Tally) apply(root Root, e *election, h ledger.Hash, v *Vote) bool {
	changed := false
	if v.Final() {
		switch f, ok := e.finals[v.Representative]; {
		case !ok:
			e.finals[v.Representative] = choice{hash: h, vote: v}
			changed = true
		case f.hash != h:
			t.equivocal = append(t.equivocal, Equivocation{Root: root, Representative: v.Representative, First: f.vote, Second: v})
			return false
		}
	}
	if c, ok := e.choices[v.Representative]; ok && v.Timestamp <= c.vote.Timestamp {
		return changed
	}
	e.choices[v.Representative] = choice{hash: h, vote: v}
	return true
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

// Contender is one block of an election and its tallies: the sum of the
// weights of the representatives whose current choice it is, and of those
// whose final vote it has.
type Contender struct {
	Hash  ledger.Hash   `json:"hash"`
	Tally ledger.Amount `json:"tally"`
	Final ledger.Amount `json:"final"`
}

// Result is where an election stands at one moment, under one set of
// weights.
type Result struct {
	// Tallies lists every contender, by tally descending, then by hash
	// ascending.
	Tallies []Contender `json:"tallies"`
	// Leader is the first of Tallies: ties go to the lowest hash, so every
	// node with the same votes and weights picks the same leader.
	Leader ledger.Hash `json:"leader"`
	// Quorum is Quorum(Params.Total).
	Quorum ledger.Amount `json:"quorum"`
	// Agreed reports whether the leader's tally is at least Quorum:
	// representatives then cast their final votes for it.
	Agreed bool `json:"agreed"`
	// Confirmed reports whether a contender's final votes reach Quorum;
	// that contender is then the Winner (zero otherwise).
	Confirmed bool        `json:"confirmed"`
	Winner    ledger.Hash `json:"winner,omitzero"`
}

// Result tallies root's election. Weights are not stored, since they
// change as the ledger does: weight gives each representative's weight
// now. The result of an unknown root has no tallies and is not confirmed.
//
// A contender is confirmed when the weight of its final votes is at least
// Quorum. Two contenders can both be only if representatives holding more
// than a third of Total signed final votes for both; then the first in
// Tallies' order wins here, and Equivocations hold the proof.
func (t *Tally) Result(root Root, weight func(ledger.Address) ledger.Amount) Result {
	r := Result{Quorum: t.quorum}
	e := t.elections[root]
	if e == nil {
		return r
	}
	sums := make(map[ledger.Hash]ledger.Amount, len(e.contenders))
	for rep, c := range e.choices {
		sums[c.hash] = addSaturating(sums[c.hash], weight(rep))
	}
	finals := make(map[ledger.Hash]ledger.Amount, len(e.contenders))
	for rep, c := range e.finals {
		finals[c.hash] = addSaturating(finals[c.hash], weight(rep))
	}
	r.Tallies = make([]Contender, len(e.contenders))
	for i, h := range e.contenders {
		r.Tallies[i] = Contender{Hash: h, Tally: sums[h], Final: finals[h]}
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
	for _, c := range r.Tallies {
		if c.Final.Cmp(r.Quorum) >= 0 {
			r.Confirmed, r.Winner = true, c.Hash
			break
		}
	}
	return r
}

// Advice is what a representative should vote in an election.
type Advice struct {
	Hash  ledger.Hash
	Final bool
}

// Advise returns what representative rep should vote for in root's
// election, or false when it should vote nothing new:
//
//   - nothing once rep has cast its final vote there, or the election is
//     confirmed, or rep has not voted there yet (its first vote is for the
//     block in its node's ledger, which the node knows, not the tally);
//   - a final vote for the leader when the leader's tally reaches quorum
//     (Result.Agreed);
//   - otherwise a non-final vote for the leader when its tally is strictly
//     greater than that of rep's choice, so representatives converge on
//     one contender.
func (t *Tally) Advise(root Root, rep ledger.Address, weight func(ledger.Address) ledger.Amount) (Advice, bool) {
	e := t.elections[root]
	if e == nil {
		return Advice{}, false
	}
	if _, done := e.finals[rep]; done {
		return Advice{}, false
	}
	mine, voted := e.choices[rep]
	if !voted {
		return Advice{}, false
	}
	res := t.Result(root, weight)
	switch {
	case res.Confirmed:
		return Advice{}, false
	case res.Agreed:
		return Advice{Hash: res.Leader, Final: true}, true
	case mine.hash == res.Leader:
		return Advice{}, false
	}
	var mineTally, leaderTally ledger.Amount
	for _, c := range res.Tallies {
		switch c.Hash {
		case mine.hash:
			mineTally = c.Tally
		case res.Leader:
			leaderTally = c.Tally
		}
	}
	if leaderTally.Cmp(mineTally) > 0 {
		return Advice{Hash: res.Leader}, true
	}
	return Advice{}, false
}

// FirstVote returns how representative rep, which has not voted in root's
// election, votes for h, the block in its node's ledger: a final vote when
// the votes already counted, with rep's own for h, make the election
// agreed on h (the other representatives' votes arrived first, and a
// non-final vote would only be followed at once by the final one);
// otherwise a non-final vote.
func (t *Tally) FirstVote(root Root, rep ledger.Address, h ledger.Hash, weight func(ledger.Address) ledger.Amount) Advice {
	e := t.elections[root]
	if e == nil {
		return Advice{Hash: h}
	}
	if _, voted := e.choices[rep]; voted {
		return Advice{Hash: h}
	}
	e.choices[rep] = choice{hash: h, vote: &Vote{Representative: rep}}
	res := t.Result(root, weight)
	delete(e.choices, rep)
	return Advice{Hash: h, Final: res.Agreed && res.Leader == h && !res.Confirmed}
}

// Certificate returns the final votes for h in root's election, by
// representative ascending: once h is confirmed, the proof a node stores
// with it and a syncing node checks instead of re-running the election.
// The votes are the tally's own; the caller must not modify them.
func (t *Tally) Certificate(root Root, h ledger.Hash) []*Vote {
	e := t.elections[root]
	if e == nil {
		return nil
	}
	var votes []*Vote
	for _, c := range e.finals {
		if c.hash == h {
			votes = append(votes, c.vote)
		}
	}
	slices.SortFunc(votes, func(a, b *Vote) int {
		return bytes.Compare(a.Representative[:], b.Representative[:])
	})
	return votes
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

// Choice is a representative's choice in an election, and the timestamp of
// the vote it stands on.
type Choice struct {
	Representative ledger.Address `json:"representative"`
	Hash           ledger.Hash    `json:"hash"`
	Timestamp      int64          `json:"timestamp"`
	Final          bool           `json:"final"`
}

// ElectionInfo is a snapshot of one election, for the API.
type ElectionInfo struct {
	Root       Root          `json:"root"`
	Started    int64         `json:"started"`    // the now of the Start that created it
	Contenders []ledger.Hash `json:"contenders"` // in the order they were started
	Choices    []Choice      `json:"choices"`    // by representative ascending
}

// Election returns a snapshot of root's election, or false if there is none.
func (t *Tally) Election(root Root) (ElectionInfo, bool) {
	e := t.elections[root]
	if e == nil {
		return ElectionInfo{}, false
	}
	info := ElectionInfo{Root: root, Started: e.started, Contenders: slices.Clone(e.contenders),
		Choices: make([]Choice, 0, len(e.choices))}
	for rep, c := range e.choices {
		info.Choices = append(info.Choices, Choice{Representative: rep, Hash: c.hash, Timestamp: c.vote.Timestamp, Final: c.vote.Final()})
	}
	slices.SortFunc(info.Choices, func(a, b Choice) int {
		return bytes.Compare(a.Representative[:], b.Representative[:])
	})
	return info, true
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

// voteCache holds votes for blocks without an election, the newest per
// (hash, representative), up to max entries, least recently cached first.
type voteCache struct {
	max       int
	order     *list.List // of *cacheEntry
	byHash    map[ledger.Hash]map[ledger.Address]*list.Element
	evictions uint64
}

type cacheEntry struct {
	hash ledger.Hash
	vote *Vote
}

func newVoteCache(max int) voteCache {
	return voteCache{max: max, order: list.New(), byHash: make(map[ledger.Hash]map[ledger.Address]*list.Element)}
}

func (c *voteCache) put(h ledger.Hash, v *Vote) {
	reps := c.byHash[h]
	if el, ok := reps[v.Representative]; ok {
		ce := el.Value.(*cacheEntry)
		if v.Timestamp > ce.vote.Timestamp {
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
		reps = make(map[ledger.Address]*list.Element)
		c.byHash[h] = reps
	}
	reps[v.Representative] = c.order.PushBack(&cacheEntry{hash: h, vote: v})
}

func (c *voteCache) remove(el *list.Element) {
	ce := c.order.Remove(el).(*cacheEntry)
	reps := c.byHash[ce.hash]
	delete(reps, ce.vote.Representative)
	if len(reps) == 0 {
		delete(c.byHash, ce.hash)
	}
}

// take removes and returns the votes cached for h, by representative.
func (c *voteCache) take(h ledger.Hash) []*Vote {
	reps := c.byHash[h]
	votes := make([]*Vote, 0, len(reps))
	for _, el := range reps {
		votes = append(votes, c.order.Remove(el).(*cacheEntry).vote)
	}
	delete(c.byHash, h)
	slices.SortFunc(votes, func(a, b *Vote) int {
		return bytes.Compare(a.Representative[:], b.Representative[:])
	})
	return votes
}
