package chatnet_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/node/chatnet"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/wallet"
)

// clock is a node's clock, offset from the real one.
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// startPair starts two chat services on their own hosts, B bootstrapping
// from A, each with its clock.
func startPair(t *testing.T, ca, cb *clock) (a, b *chatnet.Service, hb *p2p.Host) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	start := func(c *clock, bootstrap []string) (*chatnet.Service, *p2p.Host) {
		dir := t.TempDir()
		h, err := p2p.New(context.Background(), p2p.Config{Dir: filepath.Join(dir, "p2p"), Listen: []string{"/ip4/127.0.0.1/tcp/0"},
			Bootstrap: bootstrap, Network: "skewtest", Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		s, err := chatnet.Start(context.Background(), chatnet.Config{Dir: filepath.Join(dir, "chat"), Host: h, Key: wallet.NewKey(),
			Logger: log, Now: c.now, RetryMax: 100 * time.Millisecond, SyncInterval: time.Second})
		if err != nil {
			h.Close()
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(); h.Close() })
		return s, h
	}
	a, ha := start(ca, nil)
	b, hb = start(cb, ha.Addrs())
	return a, b, hb
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDeliveryToANodeWhoseClockIsBehind: a message stamped within the
// sending node's window but ahead of the receiving node's is retried, not
// given up, and arrives once the receiver's clock allows it.
func TestDeliveryToANodeWhoseClockIsBehind(t *testing.T) {
	var ca, cb clock
	cb.offset.Store(int64(-10 * time.Minute))
	a, b, hb := startPair(t, &ca, &cb)
	carol, alice := wallet.NewKey(), wallet.NewKey()
	r := &directory.Registration{NodePeer: hb.ID().String(), Timestamp: cb.now().UnixMilli()}
	r.Sign(carol.Private())
	if err := b.Register(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "A learns carol's registration", func() bool {
		_, found, _ := a.Lookup(carol.Address())
		return found
	})
	m := &chat.Message{To: carol.Address(), Message: "from the future, for B", Timestamp: ca.now().UnixMilli()}
	m.Sign(alice.Private())
	if err := a.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // several attempts, each refused as early
	if n := a.Outbox(); n != 1 {
		t.Fatalf("A's outbox while B's clock is 10 minutes behind: got %d, want 1 (retried, not given up)", n)
	}
	cb.offset.Store(0)
	waitUntil(t, "the message at B", func() bool {
		found := false
		b.Messages(carol.Address(), -1, func(got *chat.Message) error { found = got.Hash() == m.Hash(); return nil })
		return found
	})
	waitUntil(t, "A's outbox empty", func() bool { return a.Outbox() == 0 })
}

// TestOutboxBounded: past MaxOutbox waiting messages, Send refuses with
// ErrOutboxFull and stores nothing.
func TestOutboxBounded(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	h, err := p2p.New(context.Background(), p2p.Config{Dir: filepath.Join(dir, "p2p"), Listen: []string{"/ip4/127.0.0.1/tcp/0"}, Network: "outboxtest", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	s, err := chatnet.Start(context.Background(), chatnet.Config{Dir: filepath.Join(dir, "chat"), Host: h, Key: wallet.NewKey(), Logger: log, MaxOutbox: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	nobody := wallet.NewKey().Address() // never registered: messages to it wait
	for i := range 3 {
		m := &chat.Message{To: nobody, Message: "waiting " + string(rune('a'+i)), Timestamp: time.Now().UnixMilli()}
		m.Sign(wallet.NewKey().Private())
		err := s.Send(context.Background(), m)
		switch {
		case i < 2 && err != nil:
			t.Fatalf("message %d: %v", i, err)
		case i == 2 && err != chatnet.ErrOutboxFull:
			t.Fatalf("message %d past MaxOutbox 2: got %v, want ErrOutboxFull", i, err)
		}
	}
	n := 0
	s.Messages(nobody, -1, func(*chat.Message) error { n++; return nil })
	if n != 2 || s.Outbox() != 2 {
		t.Fatalf("stored %d, outbox %d: want 2 and 2", n, s.Outbox())
	}
}
