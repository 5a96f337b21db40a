package p2p

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
)

// TestPunchTracer: libp2p's hole punching events become the counts of
// HolePunchStats, the last error kept.
func TestPunchTracer(t *testing.T) {
	tr := &punchTracer{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, ev := range []any{
		&holepunch.DirectDialEvt{Success: false, EllapsedTime: time.Second, Error: "dial timeout"},
		&holepunch.ProtocolErrorEvt{Error: "protocols not supported"},
		&holepunch.HolePunchAttemptEvt{Attempt: 1}, // not counted: a Start follows
		&holepunch.StartHolePunchEvt{RTT: time.Millisecond},
		&holepunch.EndHolePunchEvt{Success: false, Error: "punch failed"},
		&holepunch.StartHolePunchEvt{RTT: time.Millisecond},
		&holepunch.EndHolePunchEvt{Success: true},
		&holepunch.StartHolePunchEvt{RTT: time.Millisecond},
	} {
		tr.Trace(&holepunch.Event{Evt: ev})
	}
	want := HolePunchStats{DirectDials: 1, Punches: 3, PunchesOK: 1, Active: 1, ProtocolErrors: 1, LastError: "punch failed"}
	if got := tr.stats(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}
