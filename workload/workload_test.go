package workload

import (
	"context"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/wallet"
)

// TestWorkloadApplies checks that a generated workload is valid: applied in
// order to the reference ledger, every block is accepted and the ledger
// audits clean.
func TestWorkloadApplies(t *testing.T) {
	gk := wallet.NewKey()
	g := ledger.NewGenesis(gk.Private(), ledger.NewAmount(1e12), 1767225600000)
	w, err := Generate(context.Background(), Config{GenesisKey: gk, Genesis: g, Work: ledger.DevWork,
		Accounts: 6, Fund: ledger.NewAmount(1000), Claim: true, PerPair: 5, Timestamp: g.Timestamp})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := w.Len(), 6*3+3*5*2; got != want {
		t.Fatalf("workload has %d blocks, want %d", got, want)
	}
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
	if r.Blocks != uint64(w.Len()+1) || r.Minted != ledger.NewAmount(6*ledger.FaucetAmount) {
		t.Errorf("audit = %+v", r)
	}
}
