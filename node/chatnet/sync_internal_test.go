package chatnet

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/wallet"
)

// aPeer is a valid node_peer for the registrations of tests.
const aPeer = "12D3KooWRawPbxPtP1eZaJpumGnyWX2DcUyd3RQnydr3eAto4Az7"

var quiet = slog.New(slog.DiscardHandler)

// startService starts a service on a host of its own, its store on fs
// and its clock now.
func startService(t *testing.T, fs vfs.FS, now func() time.Time) *Service {
	t.Helper()
	dir := t.TempDir()
	h, err := p2p.New(context.Background(), p2p.Config{Dir: filepath.Join(dir, "p2p"), Network: "dirstoretest", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(context.Background(), Config{Dir: "chat", FS: fs, Host: h, Key: wallet.NewKey(), Logger: quiet, Now: now})
	if err != nil {
		h.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); h.Close() })
	return s
}

// TestLearnedRegistrationsAreNotSyncedEach: registrations gossiped by
// peers are written without an fsync each (a flood of fresh keys cost one
// per key), while one submitted to the node is synced before Register
// returns.
func TestLearnedRegistrationsAreNotSyncedEach(t *testing.T) {
	var syncs atomic.Int64
	fs := vfs.WithLogging(vfs.NewMem(), func(format string, args ...any) {
		if line := format; strings.HasPrefix(line, "sync") && len(args) > 0 && strings.HasSuffix(args[len(args)-1].(string), ".log") {
			syncs.Add(1)
		}
	})
	s := startService(t, fs, time.Now)
	from := s.self // any peer: deliverRegistration does not look
	const n = 100
	before := syncs.Load()
	for range n {
		r := &directory.Registration{NodePeer: aPeer, Timestamp: time.Now().UnixMilli()}
		r.Sign(wallet.NewKey().Private())
		data, _ := r.MarshalBinary()
		s.deliverRegistration(from, data)
	}
	held := 0
	s.Directory(func(*directory.Registration) error { held++; return nil })
	if got := held; got != n+1 {
		t.Fatalf("%d registrations held after %d delivered (and the node's own), want %d", got, n, n+1)
	}
	if got := syncs.Load() - before; got > n/10 {
		t.Errorf("%d registrations learned from a peer cost %d WAL syncs, want at most %d", n, got, n/10)
	}
	before = syncs.Load()
	r := &directory.Registration{NodePeer: aPeer, Timestamp: time.Now().UnixMilli()}
	r.Sign(wallet.NewKey().Private())
	if err := s.Register(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if syncs.Load() == before {
		t.Error("a registration submitted to the node was not synced before Register returned")
	}
}
