package consensus_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"slices"
	"testing"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
)

// The tally tests are scenes: a sequence of steps against one Tally, whose
// representatives are the vector keys 1 to 9 with weights the scene sets.

type scene struct {
	t       *testing.T
	tally   *consensus.Tally
	weights map[ledger.Address]ledger.Amount
}

func (s *scene) weight(a ledger.Address) ledger.Amount { return s.weights[a] }

type step struct {
	name string
	do   func(s *scene)
}

func rep(n byte) ledger.Address {
	var a ledger.Address
	copy(a[:], vecKey(n).Public().(ed25519.PublicKey))
	return a
}

// Roots and block hashes of the scenes. Hashes are ordered: h1 < h2 < h3.
var (
	rootA = consensus.Root{Account: ledger.Address{0xa}, Previous: ledger.Hash{1}}
	rootB = consensus.Root{Account: ledger.Address{0xb}, Previous: ledger.Hash{2}}
	h1    = ledger.Hash{0x11}
	h2    = ledger.Hash{0x22}
	h3    = ledger.Hash{0x33}
	h4    = ledger.Hash{0x44}
	other = ledger.Hash{0x99} // a block no scene starts an election for
)

func weigh(ws map[byte]uint64) step {
	return step{"weigh", func(s *scene) {
		for n, w := range ws {
			s.weights[rep(n)] = ledger.NewAmount(w)
		}
	}}
}

func start(root consensus.Root, h ledger.Hash, now int64, want error) step {
	return step{"start", func(s *scene) {
		if err := s.tally.Start(root, h, now); !errors.Is(err, want) || (want == nil) != (err == nil) {
			s.t.Errorf("Start(%s, %x) = %v, want %v", root, h[:1], err, want)
		}
	}}
}

// vote has representative n vote at ts for hashes, received at now, and
// checks the roots it touched.
func vote(n byte, ts, now int64, hashes []ledger.Hash, touched ...consensus.Root) step {
	return step{"vote", func(s *scene) {
		got := s.tally.Vote(signedVote(n, ts, hashes...), now)
		if !slices.Equal(got, touched) {
			s.t.Errorf("rep %d vote at %d for %d hashes touched %v, want %v", n, ts, len(hashes), got, touched)
		}
	}}
}

func hs(h ...ledger.Hash) []ledger.Hash { return h }

// expect checks root's Result at now. tallies lists contenders and tallies
// in the expected order.
type expectation struct {
	online, quorum uint64
	tallies        []consensus.Contender
	confirmed      bool
}

func ct(h ledger.Hash, w uint64) consensus.Contender {
	return consensus.Contender{Hash: h, Tally: ledger.NewAmount(w)}
}

func expect(root consensus.Root, now int64, want expectation) step {
	return step{"expect", func(s *scene) {
		r := s.tally.Result(root, s.weight, now)
		if r.Online != ledger.NewAmount(want.online) || r.Quorum != ledger.NewAmount(want.quorum) {
			s.t.Errorf("at %d: online %s quorum %s, want %d and %d", now, r.Online, r.Quorum, want.online, want.quorum)
		}
		if !slices.Equal(r.Tallies, want.tallies) {
			s.t.Errorf("at %d: tallies %v, want %v", now, r.Tallies, want.tallies)
		}
		var leader, winner ledger.Hash
		if len(want.tallies) > 0 {
			leader = want.tallies[0].Hash
		}
		if want.confirmed {
			winner = leader
		}
		if r.Leader != leader || r.Confirmed != want.confirmed || r.Winner != winner {
			s.t.Errorf("at %d: leader %x confirmed %v winner %x, want %x %v %x",
				now, r.Leader[:1], r.Confirmed, r.Winner[:1], leader[:1], want.confirmed, winner[:1])
		}
	}}
}

func check(name string, f func(s *scene)) step { return step{name, f} }

func TestTally(t *testing.T) {
	floor := func(f uint64) consensus.Params { return consensus.Params{OnlineFloor: ledger.NewAmount(f)} }
	tests := []struct {
		name   string
		params consensus.Params
		steps  []step
	}{
		{
			name: "a single contender is confirmed once its tally reaches quorum", params: floor(100),
			steps: []step{
				weigh(map[byte]uint64{1: 66, 2: 1, 3: 33}),
				start(rootA, h1, 0, nil),
				expect(rootA, 0, expectation{online: 0, quorum: 67, tallies: []consensus.Contender{ct(h1, 0)}}),
				vote(1, 10, 10, hs(h1), rootA),
				vote(3, 10, 10, hs(other)), // online, but not for h1
				expect(rootA, 10, expectation{online: 99, quorum: 67, tallies: []consensus.Contender{ct(h1, 66)}}),
				vote(2, 10, 20, hs(h1), rootA),
				expect(rootA, 20, expectation{online: 100, quorum: 67, tallies: []consensus.Contender{ct(h1, 67)}, confirmed: true}),
			},
		},
		{
			name: "quorum rounds up", params: floor(101),
			steps: []step{
				weigh(map[byte]uint64{1: 67, 2: 1}),
				start(rootA, h1, 0, nil),
				vote(1, 10, 10, hs(h1), rootA),
				expect(rootA, 10, expectation{online: 67, quorum: 68, tallies: []consensus.Contender{ct(h1, 67)}}),
				vote(2, 10, 10, hs(h1), rootA),
				expect(rootA, 10, expectation{online: 68, quorum: 68, tallies: []consensus.Contender{ct(h1, 68)}, confirmed: true}),
			},
		},
		{
			name: "the floor keeps a tiny online set from confirming", params: floor(1000),
			steps: []step{
				weigh(map[byte]uint64{1: 10}),
				start(rootA, h1, 0, nil),
				vote(1, 10, 10, hs(h1), rootA),
				expect(rootA, 10, expectation{online: 10, quorum: 670, tallies: []consensus.Contender{ct(h1, 10)}}),
			},
		},
		{
			name: "in a fork, representatives switch to the leader by newer votes", params: floor(100),
			steps: []step{
				weigh(map[byte]uint64{1: 40, 2: 35, 3: 25}),
				start(rootA, h1, 0, nil),
				start(rootA, h2, 0, nil),
				vote(1, 10, 10, hs(h1), rootA),
				vote(2, 10, 10, hs(h2), rootA),
				vote(3, 10, 10, hs(h2), rootA),
				expect(rootA, 10, expectation{online: 100, quorum: 67, tallies: []consensus.Contender{ct(h2, 60), ct(h1, 40)}}),
				vote(1, 20, 20, hs(h2), rootA),
				expect(rootA, 20, expectation{online: 100, quorum: 67, tallies: []consensus.Contender{ct(h2, 100), ct(h1, 0)}, confirmed: true}),
				check("certificate", func(s *scene) {
					var reps []ledger.Address
					for _, v := range s.tally.Certificate(rootA, h2) {
						reps = append(reps, v.Representative)
						if v.Representative == rep(1) && v.Timestamp != 20 {
							s.t.Errorf("certificate holds rep 1's vote of %d, want its latest, of 20", v.Timestamp)
						}
						if err := v.Verify(vecNetwork); err != nil || !slices.Contains(v.Hashes, h2) {
							s.t.Errorf("certificate vote %+v: %v", v, err)
						}
					}
					want := []ledger.Address{rep(1), rep(2), rep(3)}
					slices.SortFunc(want, func(a, b ledger.Address) int { return bytes.Compare(a[:], b[:]) })
					if !slices.Equal(reps, want) {
						s.t.Errorf("certificate of h2 from %v, want %v", reps, want)
					}
					if c := s.tally.Certificate(rootA, h1); len(c) != 0 {
						s.t.Errorf("certificate of h1 holds %d votes, want none", len(c))
					}
				}),
			},
		},
		{
			name: "replayed, equally old and older votes change nothing", params: floor(100),
			steps: []step{
				weigh(map[byte]uint64{1: 50}),
				start(rootA, h1, 0, nil),
				start(rootA, h2, 0, nil),
				vote(1, 50, 50, hs(h1), rootA),
				vote(1, 50, 60, hs(h1)),            // replay
				vote(1, 50, 60, hs(h2)),            // equally old, another contender
				vote(1, 40, 60, hs(h2)),            // older
				vote(1, 60, 60, hs(h1, h2), rootA), // newer, naming both: the first counts
				expect(rootA, 60, expectation{online: 50, quorum: 67, tallies: []consensus.Contender{ct(h1, 50), ct(h2, 0)}}),
			},
		},
		{
			name: "votes that arrive before their block count from Start", params: floor(100),
			steps: []step{
				weigh(map[byte]uint64{1: 70, 2: 20}),
				vote(1, 10, 10, hs(h1)),
				vote(1, 15, 12, hs(h1)), // replaces the cached vote of 10
				vote(1, 12, 14, hs(h1)), // older than the cached one: dropped
				vote(2, 10, 10, hs(h2)),
				check("cached", func(s *scene) {
					if st := s.tally.Stats(); st.CachedVotes != 2 || st.Elections != 0 {
						s.t.Errorf("stats %+v, want 2 cached votes and no election", st)
					}
				}),
				start(rootA, h1, 20, nil),
				expect(rootA, 20, expectation{online: 90, quorum: 67, tallies: []consensus.Contender{ct(h1, 70)}, confirmed: true}),
				check("the newest cached vote counts", func(s *scene) {
					if c := s.tally.Certificate(rootA, h1); len(c) != 1 || c[0].Timestamp != 15 {
						s.t.Errorf("certificate %+v, want rep 1's vote of 15", c)
					}
				}),
				vote(2, 30, 30, hs(h1), rootA), // newer than its cached vote for h2
				start(rootA, h2, 40, nil),      // the cached, older vote for h2 does not count
				expect(rootA, 40, expectation{online: 90, quorum: 67, tallies: []consensus.Contender{ct(h1, 90), ct(h2, 0)}, confirmed: true}),
				check("cache emptied", func(s *scene) {
					if st := s.tally.Stats(); st.CachedVotes != 0 {
						s.t.Errorf("stats %+v, want no cached vote", st)
					}
				}),
			},
		},
		{
			name:   "the vote cache is bounded, oldest evicted first",
			params: consensus.Params{OnlineFloor: ledger.NewAmount(100), MaxCachedVotes: 2},
			steps: []step{
				weigh(map[byte]uint64{1: 80}),
				vote(1, 10, 10, hs(h1)),
				vote(1, 10, 10, hs(h2)),
				vote(1, 10, 10, hs(h3)),
				check("evicted", func(s *scene) {
					if st := s.tally.Stats(); st.CachedVotes != 2 || st.CacheEvictions != 1 {
						s.t.Errorf("stats %+v, want 2 cached votes, 1 eviction", st)
					}
				}),
				start(rootA, h1, 20, nil),
				start(rootB, h3, 20, nil),
				expect(rootA, 20, expectation{online: 80, quorum: 67, tallies: []consensus.Contender{ct(h1, 0)}}),
				expect(rootB, 20, expectation{online: 80, quorum: 67, tallies: []consensus.Contender{ct(h3, 80)}, confirmed: true}),
			},
		},
		{
			name:   "elections are bounded",
			params: consensus.Params{OnlineFloor: ledger.NewAmount(100), MaxElections: 1},
			steps: []step{
				start(rootA, h1, 0, nil),
				start(rootB, h3, 0, consensus.ErrTooManyElections),
				start(rootA, h2, 0, nil), // another contender is no new election
				check("finish", func(s *scene) {
					if n := s.tally.Len(); n != 1 {
						s.t.Errorf("Len = %d, want 1", n)
					}
					s.tally.Finish(rootA)
					if n := s.tally.Len(); n != 0 {
						s.t.Errorf("after Finish, Len = %d, want 0", n)
					}
				}),
				start(rootB, h3, 0, nil),
			},
		},
		{
			name:   "a representative is online for the window after its vote arrives",
			params: consensus.Params{OnlineFloor: ledger.NewAmount(10), OnlineWindow: 1000},
			steps: []step{
				weigh(map[byte]uint64{1: 60, 2: 40}),
				start(rootA, h1, 0, nil),
				vote(1, 5000, 0, hs(h1), rootA), // its timestamp is not when it arrived
				vote(2, 500, 500, hs(other)),
				expect(rootA, 1000, expectation{online: 100, quorum: 67, tallies: []consensus.Contender{ct(h1, 60)}}),
				// Rep 1 went offline; its vote still counts, and quorum is
				// now taken from rep 2 alone.
				expect(rootA, 1001, expectation{online: 40, quorum: 27, tallies: []consensus.Contender{ct(h1, 60)}, confirmed: true}),
				expect(rootA, 1501, expectation{online: 0, quorum: 7, tallies: []consensus.Contender{ct(h1, 60)}, confirmed: true}),
				vote(2, 600, 3000, hs(other)), // sweeps rep 1 out; rep 2 is back
				expect(rootA, 3000, expectation{online: 40, quorum: 27, tallies: []consensus.Contender{ct(h1, 60)}, confirmed: true}),
			},
		},
		{
			name: "weights are read at each call, so a change of weight changes the result", params: floor(100),
			steps: []step{
				weigh(map[byte]uint64{1: 40, 2: 60}),
				start(rootA, h1, 0, nil),
				start(rootA, h2, 0, nil),
				vote(1, 10, 10, hs(h1), rootA),
				vote(2, 10, 10, hs(h2), rootA),
				expect(rootA, 10, expectation{online: 100, quorum: 67, tallies: []consensus.Contender{ct(h2, 60), ct(h1, 40)}}),
				weigh(map[byte]uint64{1: 100, 2: 10}),
				expect(rootA, 10, expectation{online: 110, quorum: 74, tallies: []consensus.Contender{ct(h1, 100), ct(h2, 10)}, confirmed: true}),
			},
		},
		{
			name: "ties go to the lowest hash", params: floor(100),
			steps: []step{
				weigh(map[byte]uint64{1: 30, 2: 30}),
				start(rootA, h3, 0, nil),
				start(rootA, h2, 0, nil),
				expect(rootA, 0, expectation{online: 0, quorum: 67, tallies: []consensus.Contender{ct(h2, 0), ct(h3, 0)}}),
				vote(1, 10, 10, hs(h3), rootA),
				vote(2, 10, 10, hs(h2), rootA),
				expect(rootA, 10, expectation{online: 60, quorum: 67, tallies: []consensus.Contender{ct(h2, 30), ct(h3, 30)}}),
			},
		},
		{
			name: "Start refuses a hash of another root and a contender too many", params: floor(100),
			steps: []step{
				start(rootA, h1, 0, nil),
				start(rootA, h1, 5, nil), // again: a no-op
				start(rootB, h1, 0, consensus.ErrContenderElsewhere),
				check("fill", func(s *scene) {
					for i := 1; i < consensus.MaxContenders; i++ {
						if err := s.tally.Start(rootA, ledger.Hash{0xc0, byte(i)}, 0); err != nil {
							s.t.Fatalf("contender %d: %v", i+1, err)
						}
					}
				}),
				start(rootA, h4, 0, consensus.ErrTooManyContenders),
				check("unchanged", func(s *scene) {
					info, _ := s.tally.Election(rootA)
					if len(info.Contenders) != consensus.MaxContenders || info.Contenders[0] != h1 {
						s.t.Errorf("contenders %v, want %d starting with h1", info.Contenders, consensus.MaxContenders)
					}
					if _, ok := s.tally.Election(rootB); ok || s.tally.Len() != 1 {
						s.t.Errorf("a refused Start left an election behind")
					}
				}),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scene{t: t, tally: consensus.NewTally(tt.params), weights: make(map[ledger.Address]ledger.Amount)}
			for i, st := range tt.steps {
				st.do(s)
				if t.Failed() {
					t.Fatalf("failed at step %d (%s)", i, st.name)
				}
			}
		})
	}
}

func TestElectionListing(t *testing.T) {
	tl := consensus.NewTally(consensus.Params{OnlineFloor: ledger.NewAmount(1)})
	for _, s := range []struct {
		root consensus.Root
		h    ledger.Hash
	}{{rootB, h3}, {rootA, h2}, {rootA, h1}} {
		if err := tl.Start(s.root, s.h, 100); err != nil {
			t.Fatal(err)
		}
	}
	tl.Vote(signedVote(2, 10, h1), 110)
	tl.Vote(signedVote(1, 20, h2), 120)
	if got := tl.Roots(); len(got) != 2 || got[0] != rootA || got[1] != rootB {
		t.Errorf("Roots = %v, want rootA, rootB", got)
	}
	info, ok := tl.Election(rootA)
	if !ok || info.Root != rootA || info.Started != 100 || len(info.Contenders) != 2 || info.Contenders[0] != h2 || info.Contenders[1] != h1 {
		t.Errorf("Election(rootA) = %+v, %v, want started 100, contenders h2, h1", info, ok)
	}
	wantChoices := []consensus.Choice{{rep(1), h2, 20}, {rep(2), h1, 10}}
	if r1, r2 := rep(1), rep(2); bytes.Compare(r2[:], r1[:]) < 0 {
		wantChoices[0], wantChoices[1] = wantChoices[1], wantChoices[0]
	}
	if !slices.Equal(info.Choices, wantChoices) {
		t.Errorf("choices %+v, want %+v", info.Choices, wantChoices)
	}
	tl.Finish(rootA)
	tl.Finish(rootA) // twice is harmless
	if _, ok := tl.Election(rootA); ok || tl.Len() != 1 {
		t.Errorf("rootA's election outlived Finish")
	}
	// A finished election's blocks are unknown again: votes for them wait
	// in the cache.
	if got := tl.Vote(signedVote(2, 30, h1), 130); got != nil {
		t.Errorf("vote for a finished election's block touched %v", got)
	}
	if st := tl.Stats(); st.CachedVotes != 1 || st.Elections != 1 {
		t.Errorf("stats %+v, want 1 cached vote, 1 election", st)
	}
	if err := tl.Start(rootB, h1, 140); err != nil {
		t.Errorf("h1 in another election after Finish: %v", err)
	}
}
