package consensus_test

import (
	"errors"
	"testing"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
)

func TestParams(t *testing.T) {
	p := consensus.Params{OnlineFloor: ledger.NewAmount(1)}
	p.EnsureDefaults()
	want := consensus.Params{QuorumPercent: 67, OnlineWindow: 300_000, OnlineFloor: ledger.NewAmount(1),
		MaxElections: 65536, MaxCachedVotes: 65536}
	if p != want {
		t.Errorf("EnsureDefaults = %+v, want %+v", p, want)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("Validate(defaults) = %v", err)
	}
	for _, tt := range []struct {
		name string
		edit func(p *consensus.Params)
	}{
		{"quorum 50%", func(p *consensus.Params) { p.QuorumPercent = 50 }},
		{"quorum 101%", func(p *consensus.Params) { p.QuorumPercent = 101 }},
		{"negative window", func(p *consensus.Params) { p.OnlineWindow = -1 }},
		{"no floor", func(p *consensus.Params) { p.OnlineFloor = ledger.Amount{} }},
		{"negative max elections", func(p *consensus.Params) { p.MaxElections = -1 }},
		{"negative max cached votes", func(p *consensus.Params) { p.MaxCachedVotes = -1 }},
	} {
		q := want
		tt.edit(&q)
		if err := q.Validate(); !errors.Is(err, consensus.ErrInvalidParams) {
			t.Errorf("%s: Validate = %v, want ErrInvalidParams", tt.name, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Errorf("NewTally without a floor did not panic")
		}
	}()
	consensus.NewTally(consensus.Params{})
}
