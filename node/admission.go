package node

import (
	"math"
	"time"

	"github.com/latticenet/lattice/ledger"
)

// DefaultMaxClockSkew is the admission policy's default clock skew.
const DefaultMaxClockSkew = 10 * time.Minute

// Admission is the node's one policy for the timestamps of blocks that
// come from outside, whatever the door: the HTTP API, gossip or sync. One
// value (lattice node's --max-clock-skew) sets it for every door; each
// door applies it as its own traffic needs (docs/api.md, docs/protocol.md):
//
//   - a block stamped further ahead than MaxClockSkew is early: the API
//     refuses it, the network holds it until its time;
//   - a block stamped further behind is old: the API refuses it as a new
//     submission (a block already in the ledger is answered as known, so
//     a resubmission stays idempotent), the network takes it, since
//     history synced from peers is old by nature.
type Admission struct {
	MaxClockSkew time.Duration
}

// Skew is how far b's timestamp is from now: positive when ahead. A gap
// wider than a time.Duration holds (about 292 years either way) counts as
// the widest one it does: scaled to nanoseconds, such gaps would wrap
// around, and one of 2^58 ms would come out as none at all.
func (a Admission) Skew(b *ledger.Block, now time.Time) time.Duration {
	const widest uint64 = math.MaxInt64 / uint64(time.Millisecond)
	ms, n := b.Timestamp, now.UnixMilli()
	if ms >= n {
		// uint64 holds the exact difference of any two int64s.
		return time.Duration(min(uint64(ms)-uint64(n), widest)) * time.Millisecond
	}
	return -time.Duration(min(uint64(n)-uint64(ms), widest)) * time.Millisecond
}

// Early reports whether b is stamped further ahead of now than the policy
// allows.
func (a Admission) Early(b *ledger.Block, now time.Time) bool {
	return a.Skew(b, now) > a.MaxClockSkew
}

// Late reports whether b is stamped further behind now than the policy
// allows a new submission.
func (a Admission) Late(b *ledger.Block, now time.Time) bool {
	return -a.Skew(b, now) > a.MaxClockSkew
}

// HoldLimit is the latest timestamp (Unix milliseconds) the network takes
// at now; a later block waits until its time.
func (a Admission) HoldLimit(now time.Time) int64 {
	return now.Add(a.MaxClockSkew).UnixMilli()
}
