package consensus_test

import (
	"errors"
	"testing"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
)

func TestParams(t *testing.T) {
	p := consensus.Params{Total: ledger.NewAmount(1)}
	p.EnsureDefaults()
	want := consensus.Params{Total: ledger.NewAmount(1), OnlineWindow: 300_000, MaxElections: 65536, MaxCachedVotes: 65536, RoundTimeout: 1000}
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
		{"no total", func(p *consensus.Params) { p.Total = ledger.Amount{} }},
		{"negative window", func(p *consensus.Params) { p.OnlineWindow = -1 }},
		{"negative max elections", func(p *consensus.Params) { p.MaxElections = -1 }},
		{"negative max cached votes", func(p *consensus.Params) { p.MaxCachedVotes = -1 }},
		{"negative round timeout", func(p *consensus.Params) { p.RoundTimeout = -1 }},
		{"round timeout over an hour", func(p *consensus.Params) { p.RoundTimeout = 3_600_001 }},
	} {
		q := want
		tt.edit(&q)
		if err := q.Validate(); !errors.Is(err, consensus.ErrInvalidParams) {
			t.Errorf("%s: Validate = %v, want ErrInvalidParams", tt.name, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Errorf("NewTally without a total did not panic")
		}
	}()
	consensus.NewTally(consensus.Params{})
}
