package consensus_test

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
)

// TestSimulatedElections runs one fork election on many simulated
// networks: nodes, each with one representative and its own Tally, hold
// one of two contenders, and exchange every vote they sign over links
// that delay (and before a stabilisation time, drop) each message at
// random. One representative may be Byzantine: it signs votes for both
// contenders in every round and sends each node whichever it likes. The
// checks are the protocol's promises: no two nodes ever confirm different
// contenders (whatever the delays, losses and the equivocator do), and
// once messages flow again every honest node confirms, within a bounded
// number of rounds. The node's part (asking peers again for votes it
// missed) is modelled by every node re-sending its latest votes
// and the highest polka it has seen periodically, as vote requests and the
// sweep do.
func TestSimulatedElections(t *testing.T) {
	runs := 200
	if testing.Short() || raceEnabled {
		runs = 50
	}
	cases := []struct {
		name      string
		weights   []uint64
		byzantine int // index of the equivocating representative, -1 for none
		loss      float64
	}{
		{"five equal", []uint64{20, 20, 20, 20, 20}, -1, 0},
		{"five equal, 20% loss before stabilising", []uint64{20, 20, 20, 20, 20}, -1, 0.2},
		{"four, one equivocating (25%)", []uint64{25, 25, 25, 25}, 3, 0.1},
		{"seven uneven, one equivocating (30%)", []uint64{30, 14, 14, 14, 14, 7, 7}, 0, 0.1},
		{"three equal", []uint64{1, 1, 1}, -1, 0.3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var worstRound uint32
			for seed := range uint64(runs) {
				r := simulate(t, c.weights, c.byzantine, c.loss, seed)
				worstRound = max(worstRound, r)
			}
			t.Logf("%d runs, highest confirming round %d", runs, worstRound)
		})
	}
}

type simMsg struct {
	at   int64
	to   int
	vote *consensus.Vote
	seq  int
}

type simQueue []simMsg

func (q simQueue) Len() int { return len(q) }
func (q simQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q simQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *simQueue) Push(x any)   { *q = append(*q, x.(simMsg)) }
func (q *simQueue) Pop() any {
	old := *q
	m := old[len(old)-1]
	*q = old[:len(old)-1]
	return m
}

// simulate runs one election and returns the round it was confirmed in.
func simulate(t *testing.T, weights []uint64, byzantine int, loss float64, seed uint64) uint32 {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	n := len(weights)
	var total uint64
	w := map[ledger.Address]ledger.Amount{}
	for i, x := range weights {
		total += x
		w[rep(byte(i+1))] = ledger.NewAmount(x)
	}
	weight := func(a ledger.Address) ledger.Amount { return w[a] }
	root := root("A")
	x, y := blockHash("x"), blockHash("y")
	const timeout = 100  // ms
	const stable = 3_000 // ms: no loss and at most 50 ms of delay after this
	tallies := make([]*consensus.Tally, n)
	holds := make([]ledger.Hash, n)
	for i := range n {
		tallies[i] = consensus.NewTally(consensus.Params{Total: ledger.NewAmount(total), RoundTimeout: timeout})
		// Each node learns of the two contenders, in its own order.
		first, second := x, y
		if rng.IntN(2) == 0 {
			first, second = y, x
		}
		holds[i] = first
		for _, h := range []ledger.Hash{first, second} {
			if err := tallies[i].Start(root, h, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	var q simQueue
	seq := 0
	send := func(now int64, from int, v *consensus.Vote) {
		for to := range n {
			if to == from {
				continue
			}
			if now < stable && rng.Float64() < loss {
				continue
			}
			delay := int64(5 + rng.IntN(50))
			if now < stable {
				delay = int64(5 + rng.IntN(400))
			}
			seq++
			heap.Push(&q, simMsg{at: now + delay, to: to, vote: v, seq: seq})
		}
	}
	signed := make([][]*consensus.Vote, n) // each node's votes, re-sent periodically
	sign := func(now int64, i int, as []consensus.Advice) {
		for _, a := range as {
			v := signedVote(byte(i+1), a.Round, a.Final, a.Hash)
			tallies[i].Vote(v, now)
			signed[i] = append(signed[i], v)
			send(now, i, v)
		}
	}
	// The Byzantine representative signs, in every round it hears of,
	// both prevotes and both final votes, and sends each node one at
	// random.
	byzSent := map[string]bool{}
	byzantineReact := func(now int64, v *consensus.Vote) {
		for _, final := range []bool{false, true} {
			k := fmt.Sprint(v.Round, final)
			if byzSent[k] {
				continue
			}
			byzSent[k] = true
			vx := signedVote(byte(byzantine+1), v.Round, final, x)
			vy := signedVote(byte(byzantine+1), v.Round, final, y)
			for to := range n {
				if to == byzantine {
					continue
				}
				seq++
				heap.Push(&q, simMsg{at: now + int64(5+rng.IntN(100)), to: to, vote: []*consensus.Vote{vx, vy}[rng.IntN(2)], seq: seq})
			}
		}
	}
	decided := make([]ledger.Hash, n)
	var decidedRound uint32
	check := func(now int64, i int) {
		res := tallies[i].Result(root, weight)
		if !res.Confirmed || !decided[i].IsZero() {
			return
		}
		decided[i] = res.Winner
		decidedRound = max(decidedRound, res.ConfirmedRound)
		for j, d := range decided {
			if !d.IsZero() && d != res.Winner {
				t.Fatalf("seed %d: node %d confirmed %s and node %d confirmed %s", seed, j, name(d), i, name(res.Winner))
			}
		}
	}
	for i := range n {
		if i != byzantine {
			sign(0, i, tallies[i].FirstVote(root, rep(byte(i+1)), holds[i], weight, nil, 0))
		}
	}
	const end = 120_000
	tick := int64(25) // the node loop's tick
	for now := int64(0); now <= end; {
		next := tick
		if q.Len() > 0 && q[0].at < next {
			next = q[0].at
		}
		now = next
		for q.Len() > 0 && q[0].at <= now {
			m := heap.Pop(&q).(simMsg)
			if m.to == byzantine {
				byzantineReact(now, m.vote)
				continue
			}
			tallies[m.to].Vote(m.vote, now)
			check(now, m.to)
			if decided[m.to].IsZero() {
				sign(now, m.to, tallies[m.to].Advise(root, rep(byte(m.to+1)), weight, nil, now))
			}
		}
		if now == tick {
			tick += 25
			for i := range n {
				if i == byzantine {
					continue
				}
				if decided[i].IsZero() {
					sign(now, i, tallies[i].Advise(root, rep(byte(i+1)), weight, nil, now))
					check(now, i)
				}
				// Vote requests: every second, peers get this node's
				// votes again with the highest polka it has seen, and
				// the certificate once it confirmed.
				if now%1000 == 0 && now >= stable {
					resend := append(latestVotes(signed[i]), tallies[i].Polka(root)...)
					if res := tallies[i].Result(root, weight); res.Confirmed {
						resend = tallies[i].Certificate(root, res.Winner, res.ConfirmedRound)
					}
					for _, v := range resend {
						send(now, i, v)
					}
				}
			}
		}
		all := true
		for i := range n {
			if i != byzantine && decided[i].IsZero() {
				all = false
			}
		}
		if all {
			return decidedRound
		}
	}
	for i := range n {
		o, _ := tallies[i].Own(root)
		res := tallies[i].Result(root, weight)
		info, _ := tallies[i].Election(root)
		t.Logf("node %d: own %+v, result %+v", i, o, res)
		for _, c := range info.Choices {
			t.Logf("   rep %d r%d %s final=%v", keyOf(c.Representative), c.Round, name(c.Hash), c.Final)
		}
	}
	t.Fatalf("seed %d: not every honest node confirmed within %d ms: %v", seed, end, decided)
	return 0
}

// latestVotes keeps, of the votes a node signed in order, its latest
// prevote, its latest final vote and its attestation: what its answer book
// holds.
func latestVotes(signed []*consensus.Vote) []*consensus.Vote {
	var pre, fin, att *consensus.Vote
	for _, v := range signed {
		switch {
		case v.Round == consensus.ConfirmedRound:
			att = v
		case v.Final:
			fin = v
		default:
			pre = v
		}
	}
	var out []*consensus.Vote
	for _, v := range []*consensus.Vote{pre, fin, att} {
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}
