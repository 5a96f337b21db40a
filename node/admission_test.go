package node

import (
	"math"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
)

// TestAdmissionSkew checks the skew at the edges of int64: a gap a
// time.Duration cannot hold counts as the widest one it can, never as a
// wrapped-around one (2^58 ms scaled to ns wraps to exactly 0).
func TestAdmissionSkew(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_767_225_600_000)
	adm := Admission{MaxClockSkew: 10 * time.Minute}
	const widest = time.Duration(math.MaxInt64/int64(time.Millisecond)) * time.Millisecond
	for _, tc := range []struct {
		name        string
		ts          int64
		skew        time.Duration
		early, late bool
	}{
		{"now", now.UnixMilli(), 0, false, false},
		{"at the bound ahead", now.UnixMilli() + 600_000, 10 * time.Minute, false, false},
		{"1 ms past the bound ahead", now.UnixMilli() + 600_001, 10*time.Minute + time.Millisecond, true, false},
		{"at the bound behind", now.UnixMilli() - 600_000, -10 * time.Minute, false, false},
		{"1 ms past the bound behind", now.UnixMilli() - 600_001, -10*time.Minute - time.Millisecond, false, true},
		{"2^58 ms ahead", now.UnixMilli() + 1<<58, widest, true, false},
		{"2^58 ms behind", now.UnixMilli() - 1<<58, -widest, false, true},
		{"the widest a Duration holds, ahead", now.UnixMilli() + int64(widest/time.Millisecond), widest, true, false},
		{"the largest timestamp", math.MaxInt64, widest, true, false},
		{"the smallest timestamp", math.MinInt64, -widest, false, true},
	} {
		b := &ledger.Block{Timestamp: tc.ts}
		if got := adm.Skew(b, now); got != tc.skew {
			t.Errorf("%s: skew %v, want %v", tc.name, got, tc.skew)
		}
		if got := adm.Early(b, now); got != tc.early {
			t.Errorf("%s: early %v, want %v", tc.name, got, tc.early)
		}
		if got := adm.Late(b, now); got != tc.late {
			t.Errorf("%s: late %v, want %v", tc.name, got, tc.late)
		}
	}
}
