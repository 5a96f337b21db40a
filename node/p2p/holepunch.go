package p2p

import (
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/protocol/holepunch"
)

// HolePunchStats counts this host's attempts at a direct connection to a
// peer that reached it through a relay (libp2p's DCUtR), since start.
type HolePunchStats struct {
	// Ready: libp2p serves DCUtR on this host, which it starts to do only
	// once it knows a public address of its own to punch from (one that a
	// peer observed, through identify). Until then a relayed connection
	// gets no try at a direct one, at either end.
	Ready bool
	// DirectDials: dials to a public address the peer announced, tried
	// before any hole punch; DirectDialsOK of them connected.
	DirectDials, DirectDialsOK int64
	// Punches: simultaneous dials coordinated over the relayed
	// connection (up to three per relayed connection); PunchesOK of them
	// connected.
	Punches, PunchesOK int64
	// Active: punches started and not yet ended.
	Active int64
	// ProtocolErrors: coordinations that failed before any dial (the
	// relayed connection closed, the peer has no public address, …).
	ProtocolErrors int64
	// LastError is the last failed dial's or coordination's error.
	LastError string
}

// punchTracer is libp2p's hole punching event sink: it logs each step
// (the outcome of a dial at Info, so an operator sees why peers behind
// NAT stay relayed) and counts them for HolePunchStats.
type punchTracer struct {
	log                        *slog.Logger
	directDials, directDialsOK atomic.Int64
	punches, punchesOK, active atomic.Int64
	protocolErrors             atomic.Int64
	lastError                  atomic.Pointer[string]
}

func (t *punchTracer) Trace(e *holepunch.Event) {
	switch ev := e.Evt.(type) {
	case *holepunch.DirectDialEvt:
		t.directDials.Add(1)
		t.ended("direct dial to a relayed peer", e.Remote, ev.Success, ev.EllapsedTime, ev.Error, &t.directDialsOK)
	case *holepunch.StartHolePunchEvt:
		t.punches.Add(1)
		t.active.Add(1)
		t.log.Debug("hole punch", "peer", e.Remote, "their_addrs", ev.RemoteAddrs, "rtt", ev.RTT)
	case *holepunch.EndHolePunchEvt:
		t.active.Add(-1)
		t.ended("hole punch", e.Remote, ev.Success, ev.EllapsedTime, ev.Error, &t.punchesOK)
	case *holepunch.ProtocolErrorEvt:
		t.protocolErrors.Add(1)
		err := ev.Error
		t.lastError.Store(&err)
		t.log.Info("hole punch not coordinated", "peer", e.Remote, "err", err)
	}
}

// ended logs a dial's outcome and counts a success in ok, or keeps the
// error.
func (t *punchTracer) ended(msg string, p peer.ID, success bool, took time.Duration, err string, ok *atomic.Int64) {
	took = took.Round(time.Millisecond)
	if success {
		ok.Add(1)
		t.log.Info(msg, "peer", p, "ok", true, "took", took.String())
		return
	}
	t.lastError.Store(&err)
	t.log.Info(msg, "peer", p, "ok", false, "took", took.String(), "err", err)
}

func (t *punchTracer) stats() HolePunchStats {
	s := HolePunchStats{
		DirectDials: t.directDials.Load(), DirectDialsOK: t.directDialsOK.Load(),
		Punches: t.punches.Load(), PunchesOK: t.punchesOK.Load(), Active: t.active.Load(),
		ProtocolErrors: t.protocolErrors.Load(),
	}
	if p := t.lastError.Load(); p != nil {
		s.LastError = *p
	}
	return s
}

// HolePunches returns the host's hole punching counts since it started.
func (h *Host) HolePunches() HolePunchStats {
	s := h.punch.stats()
	s.Ready = slices.Contains(h.host.Mux().Protocols(), holepunch.Protocol)
	return s
}
