package consensus

import (
	"fmt"

	"github.com/latticenet/lattice/ledger"
)

// Defaults of Params, as in Nano.
const (
	DefaultQuorumPercent  = 67
	DefaultOnlineWindow   = 5 * 60 * 1000 // ms
	DefaultMaxElections   = 65536
	DefaultMaxCachedVotes = 65536
)

// Params configure a Tally. The zero value of a field means its default
// (EnsureDefaults), except OnlineFloor, which has no sensible default: it is
// a fraction of the network's supply, chosen per network.
type Params struct {
	// QuorumPercent is the percentage of max(online weight, OnlineFloor) a
	// contender's tally must reach to be confirmed: 51 to 100, so that two
	// contenders can never both reach it.
	QuorumPercent int
	// OnlineWindow is how long, in ms, a representative counts as online
	// after a vote of it arrived.
	OnlineWindow int64
	// OnlineFloor is the least weight quorum is computed from, whatever the
	// online weight: without it a tiny online set could confirm alone. It
	// must be non-zero.
	OnlineFloor ledger.Amount
	// MaxElections bounds the active elections; Start refuses more.
	MaxElections int
	// MaxCachedVotes bounds the (hash, representative) votes held for
	// blocks that have no election yet; the oldest are evicted first. Each
	// entry refers to a vote of up to MaxVoteHashes hashes (about 8 KiB),
	// shared with the vote's other entries.
	MaxCachedVotes int
}

// EnsureDefaults sets every zero field to its default and returns p.
func (p *Params) EnsureDefaults() *Params {
	if p.QuorumPercent == 0 {
		p.QuorumPercent = DefaultQuorumPercent
	}
	if p.OnlineWindow == 0 {
		p.OnlineWindow = DefaultOnlineWindow
	}
	if p.MaxElections == 0 {
		p.MaxElections = DefaultMaxElections
	}
	if p.MaxCachedVotes == 0 {
		p.MaxCachedVotes = DefaultMaxCachedVotes
	}
	return p
}

// Validate reports the first field out of range, wrapping ErrInvalidParams.
// Call it after EnsureDefaults: a zero field is invalid here.
func (p *Params) Validate() error {
	switch {
	case p.QuorumPercent < 51 || p.QuorumPercent > 100:
		return fmt.Errorf("%w: quorum percent %d, want 51 to 100", ErrInvalidParams, p.QuorumPercent)
	case p.OnlineWindow <= 0:
		return fmt.Errorf("%w: online window %d ms, want a positive duration", ErrInvalidParams, p.OnlineWindow)
	case p.OnlineFloor.IsZero():
		return fmt.Errorf("%w: online floor is zero: a tiny online set could confirm alone", ErrInvalidParams)
	case p.MaxElections <= 0:
		return fmt.Errorf("%w: max elections %d, want at least 1", ErrInvalidParams, p.MaxElections)
	case p.MaxCachedVotes <= 0:
		return fmt.Errorf("%w: max cached votes %d, want at least 1", ErrInvalidParams, p.MaxCachedVotes)
	}
	return nil
}
