package workload

import (
	"context"
	"fmt"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// TestWorkloadApplies checks that a generated workload is valid: applied in
// order to the reference ledger, every block is accepted and the ledger
// audits clean, on a fresh ledger and on one whose genesis chain has grown.
func TestWorkloadApplies(t *testing.T) {
	for _, before := range []int{0, 2} {
		t.Run(fmt.Sprint(before, " blocks before"), func(t *testing.T) { testWorkloadApplies(t, before) })
	}
}

func testWorkloadApplies(t *testing.T, before int) {
	gk := wallet.NewKey()
	g := ledger.NewGenesis(gk.Private(), ledger.NewAmount(1e12), 1767225600000)
	m := ledger.NewMem()
	m.Commit(ledger.GenesisDelta(g))
	p := ledger.Params{Work: ledger.DevWork}
	apply := func(b *ledger.Block) {
		t.Helper()
		if err := p.Check(b); err != nil {
			t.Fatalf("%s block: %v", b.Type, err)
		}
		d, err := ledger.Apply(m, b)
		if err != nil {
			t.Fatalf("%s block: %v", b.Type, err)
		}
		m.Commit(d)
	}
	chains := wallet.NewChains(ledger.DevWork, gk, g)
	var from *wallet.Head
	for range before {
		s, err := chains.Send(gk, wallet.NewKey().Address(), 7)
		if err != nil {
			t.Fatal(err)
		}
		apply(s)
		h := chains.Head(gk.Address())
		from = &h
	}
	w, err := Generate(context.Background(), Config{GenesisKey: gk, Genesis: g, From: from, Work: ledger.DevWork,
		Accounts: 6, Fund: ledger.NewAmount(1000), Claim: true, PerPair: 5, Timestamp: g.Timestamp})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := w.Len(), 6*3+3*5*2; got != want {
		t.Fatalf("workload has %d blocks, want %d", got, want)
	}
	for _, b := range w.Setup {
		apply(b)
	}
	for _, s := range w.Streams {
		for _, b := range s {
			apply(b)
		}
	}
	r, err := ledger.Audit(m)
	if err != nil {
		t.Fatal(err)
	}
	if r.Blocks != uint64(w.Len()+1+before) || r.Minted != ledger.NewAmount(6*ledger.FaucetAmount) {
		t.Errorf("audit = %+v", r)
	}
}
