package consensus_test

import (
	"encoding/binary"
	"testing"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
)

// BenchmarkTallyUncontested is the tally's work for blocks without a fork
// at one node of three equal representatives, called as the node's
// election loop calls it (ledgernet): each block starts an election and
// gets the node's first vote; the two other representatives' prevotes,
// then their final votes, arrive in votes of 60 hashes; every vote is
// followed by Confirmed and Advise for each election it touched, and a
// confirmed election is finished. ns/op is per block.
func BenchmarkTallyUncontested(b *testing.B) {
	reps := []ledger.Address{{1}, {2}, {3}}
	weights := map[ledger.Address]ledger.Amount{}
	for _, r := range reps {
		weights[r] = ledger.NewAmount(1000)
	}
	weight := func(a ledger.Address) ledger.Amount { return weights[a] }
	t := consensus.NewTally(consensus.Params{Total: ledger.NewAmount(3000)})
	const batch = 60
	roots := make([]consensus.Root, batch)
	hashes := make([]ledger.Hash, batch)
	now := int64(1)
	evaluate := func(root consensus.Root) {
		if _, _, ok := t.Confirmed(root, weight); ok {
			t.Finish(root)
			return
		}
		t.Advise(root, reps[0], weight, nil, now)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += batch {
		for i := range roots {
			var h ledger.Hash
			binary.BigEndian.PutUint64(h[:], uint64(n+i+1))
			var a ledger.Address
			binary.BigEndian.PutUint64(a[:], uint64(n+i+1))
			roots[i], hashes[i] = consensus.Root{Account: a}, h
			if err := t.Start(roots[i], h, now); err != nil {
				b.Fatal(err)
			}
			t.FirstVote(roots[i], reps[0], h, weight, nil, now)
			evaluate(roots[i])
		}
		for _, final := range []bool{false, true} {
			for _, rep := range reps {
				v := &consensus.Vote{Representative: rep, Final: final, Hashes: hashes}
				for _, root := range t.Vote(v, now) {
					evaluate(root)
				}
			}
		}
		now++
	}
}
