package consensus

import (
	"fmt"

	"github.com/latticenet/lattice/ledger"
)

// Defaults of Params.
const (
	DefaultOnlineWindow   = 5 * 60 * 1000 // ms
	DefaultMaxElections   = 65536
	DefaultMaxCachedVotes = 65536
	DefaultRoundTimeout   = 1000 // ms
)

// Params configure a Tally. The zero value of a field means its default
// (EnsureDefaults), except Total, which has no sensible default: it is the
// network's supply.
type Params struct {
	// Total is the weight every quorum is a part of: the network's native
	// supply, which every node reads from the same genesis. A contender
	// is agreed or confirmed when its representatives hold more than two
	// thirds of it (Quorum). It must be non-zero.
	Total ledger.Amount
	// OnlineWindow is how long, in ms, a representative counts as online
	// after a vote of it arrived. The online weight is reported (can this
	// node's side of the network reach quorum?); it never lowers the
	// quorum, which depends on Total alone.
	OnlineWindow int64
	// MaxElections bounds the active elections; Start refuses more.
	MaxElections int
	// MaxCachedVotes bounds the (hash, representative) votes held for
	// blocks that have no election yet; the oldest are evicted first. Each
	// entry refers to a vote of up to MaxVoteHashes hashes (about 8 KiB),
	// shared with the vote's other entries.
	MaxCachedVotes int
	// RoundTimeout is how long, in ms, the first round of an election
	// lasts once its prevotes hold a quorum without a confirmation; each
	// later round lasts twice as long as the one before, up to 32 times
	// this. It trades how soon a split election is retried against how
	// many rounds slow links start.
	RoundTimeout int64
}

// EnsureDefaults sets every zero field to its default and returns p.
func (p *Params) EnsureDefaults() *Params {
	if p.OnlineWindow == 0 {
		p.OnlineWindow = DefaultOnlineWindow
	}
	if p.MaxElections == 0 {
		p.MaxElections = DefaultMaxElections
	}
	if p.MaxCachedVotes == 0 {
		p.MaxCachedVotes = DefaultMaxCachedVotes
	}
	if p.RoundTimeout == 0 {
		p.RoundTimeout = DefaultRoundTimeout
	}
	return p
}

// Validate reports the first field out of range, wrapping ErrInvalidParams.
// Call it after EnsureDefaults: a zero field is invalid here.
func (p *Params) Validate() error {
	switch {
	case p.Total.IsZero():
		return fmt.Errorf("%w: total weight is zero", ErrInvalidParams)
	case p.OnlineWindow <= 0:
		return fmt.Errorf("%w: online window %d ms, want a positive duration", ErrInvalidParams, p.OnlineWindow)
	case p.MaxElections <= 0:
		return fmt.Errorf("%w: max elections %d, want at least 1", ErrInvalidParams, p.MaxElections)
	case p.MaxCachedVotes <= 0:
		return fmt.Errorf("%w: max cached votes %d, want at least 1", ErrInvalidParams, p.MaxCachedVotes)
	case p.RoundTimeout <= 0 || p.RoundTimeout > 3_600_000:
		return fmt.Errorf("%w: round timeout %d ms, want 1 ms to an hour", ErrInvalidParams, p.RoundTimeout)
	}
	return nil
}

// Quorum returns the least weight that is more than two thirds of total:
// ⌊2·total/3⌋ + 1. Any two sets of representatives that each hold a quorum
// share more than total − quorum (about a third), so while
// representatives that sign contradicting votes (two of one kind in one
// round, or against their lock) hold at most total − quorum, no two
// contenders can both be confirmed (docs/protocol.md, "Why two contenders
// are never both confirmed"). A total beyond 2^127 saturates.
func Quorum(total ledger.Amount) ledger.Amount {
	q, err := total.MulDivCeil(2, 3)
	if err != nil {
		return maxAmount
	}
	// ⌈2t/3⌉ is ⌊2t/3⌋ + 1 unless 3 divides 2t, where it is 2t/3: exactly
	// two thirds is not more than two thirds.
	thrice := addSaturating(addSaturating(q, q), q)
	if thrice == addSaturating(total, total) {
		q = addSaturating(q, ledger.NewAmount(1))
	}
	return q
}
