package ledgernet

import (
	"testing"
	"time"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
)

// TestVoteDelayGrowsWhenBusy: a quiet node gathers hashes for VoteDelay,
// so a lone fork is decided fast; one with busyElections open gathers for
// BusyVoteDelay, so votes under load carry more hashes each.
func TestVoteDelayGrowsWhenBusy(t *testing.T) {
	cfg := Config{}
	cfg.setDefaults()
	if cfg.VoteDelay != 5*time.Millisecond || cfg.BusyVoteDelay != 20*time.Millisecond {
		t.Fatalf("defaults %v and %v, want 5ms and 20ms", cfg.VoteDelay, cfg.BusyVoteDelay)
	}
	l := &electionLoop{s: &Service{cfg: cfg}, tally: consensus.NewTally(consensus.Params{Total: ledger.NewAmount(1000)})}
	for i := range busyElections + 1 {
		want := cfg.VoteDelay
		if i >= busyElections {
			want = cfg.BusyVoteDelay
		}
		if got := l.voteDelay(); got != want {
			t.Fatalf("with %d elections open: %v, want %v", i, got, want)
		}
		root := consensus.Root{Account: ledger.Address{byte(i), 1}}
		if err := l.tally.Start(root, ledger.Hash{byte(i), 2}, 0); err != nil {
			t.Fatal(err)
		}
	}

	set := Config{VoteDelay: time.Millisecond}
	set.setDefaults()
	if set.BusyVoteDelay != 4*time.Millisecond {
		t.Errorf("BusyVoteDelay %v with VoteDelay 1ms, want 4ms", set.BusyVoteDelay)
	}
}
