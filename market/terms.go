package market

import (
	"fmt"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/timekeeping"
)

// Terms is the ledger's view of governance (ledger.Governance): the lease
// terms and the timekeeper committee at each index of a state chain.
type Terms struct {
	// Network is the ledger's genesis hash, which attestations are bound to.
	Network ledger.Hash
	// StateAt returns the state after state-chain block i, if held.
	StateAt func(i uint64) (*statechain.State, bool)
}

var _ ledger.Governance = Terms{}

func (t Terms) params(i uint64) (*statechain.State, statechain.Params, error) {
	st, ok := t.StateAt(i)
	if !ok {
		return nil, statechain.Params{}, fmt.Errorf("%w: index %d", ledger.ErrGapState, i)
	}
	p, err := st.Params()
	return st, p, err
}

// LeaseTerms implements ledger.Governance: the Quote at index i.
func (t Terms) LeaseTerms(i uint64, vcpus, memoryMB, diskGB, duration uint32) (ledger.LeaseTerms, error) {
	st, p, err := t.params(i)
	if err != nil {
		return ledger.LeaseTerms{}, err
	}
	// A lease that could be neither accepted nor refunded would keep its
	// escrow for ever: its terms need a committee, a cost and a stake.
	if len(p.Timekeepers.Keys) == 0 {
		return ledger.LeaseTerms{}, fmt.Errorf("state-chain index %d names no timekeeper committee, so no lease could start or be refunded", i)
	}
	cost, stake, err := Quote(p, Request{VCPUs: int64(vcpus), MemoryMB: int64(memoryMB), DiskGB: int64(diskGB), Duration: int64(duration)})
	if err != nil {
		return ledger.LeaseTerms{}, err
	}
	if cost.IsZero() || stake.IsZero() {
		return ledger.LeaseTerms{}, fmt.Errorf("at state-chain index %d the lease costs %s and stakes %s: both must be positive", i, cost, stake)
	}
	return ledger.LeaseTerms{Cost: cost, Stake: stake, AcceptTimeout: p.AcceptTimeoutMS, Timestamp: st.Tip().Timestamp}, nil
}

// Attested implements ledger.Governance: timekeeping.Judge against the
// committee at index i.
func (t Terms) Attested(i uint64, purpose ledger.Purpose, lease ledger.Hash, atts []ledger.Attestation) (int64, error) {
	_, p, err := t.params(i)
	if err != nil {
		return 0, err
	}
	return timekeeping.Judge(t.Network, Committee(p), purpose, lease, atts)
}

// Committee returns the timekeeper committee of the parameters p.
func Committee(p statechain.Params) timekeeping.Committee {
	return timekeeping.Committee{Keys: p.Timekeepers.Keys, Threshold: p.Timekeepers.Threshold, PrecisionMS: p.Timekeepers.PrecisionMS}
}
