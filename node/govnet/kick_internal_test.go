package govnet

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

// TestKicksPerPeer: a peer's kick is honoured only while no pull it
// kicked is queued or running, and no sooner than an interval after the
// last one ended; each peer's kicks are its own; peers whose interval
// has passed are forgotten once many are remembered.
func TestKicksPerPeer(t *testing.T) {
	k := newKicks(time.Second)
	t0 := time.Unix(1_767_225_600, 0)
	a, b := peer.ID("a"), peer.ID("b")
	check := func(what string, got, want bool) {
		t.Helper()
		if got != want {
			t.Errorf("%s: honoured %v, want %v", what, got, want)
		}
	}
	check("a's first kick", k.take(a, t0), true)
	check("a's kick while its pull runs", k.take(a, t0.Add(5*time.Second)), false)
	check("b's kick meanwhile", k.take(b, t0), true)
	k.release(a, t0.Add(5*time.Second))
	check("a's kick just after its pull ended", k.take(a, t0.Add(5500*time.Millisecond)), false)
	check("a's kick an interval after", k.take(a, t0.Add(6*time.Second)), true)

	for i := range maxKickPeers {
		p := peer.ID(fmt.Sprint("flood-", i))
		k.take(p, t0)
		k.release(p, t0)
	}
	k.take(peer.ID("late"), t0.Add(time.Minute))
	if n := len(k.peers); n != 3 { // a and b, still busy, and the late one
		t.Errorf("%d peers remembered after pruning, want 3", n)
	}
}

// TestForgedBlockAheadPullsNothing: gossip of a block ahead of the tip
// whose signatures no keyset could accept (none, or one that does not
// verify under its own key) is rejected, so that it counts against its
// sender, and asks for no pull; one validly signed, by a key this node
// cannot yet tell from a keyholder's, is ignored and asks for one pull
// from its sender, and that sender's further blocks ask for no other
// while it is queued.
func TestForgedBlockAheadPullsNothing(t *testing.T) {
	network, gov := ledger.Hash{9}, wallet.NewKey()
	genesis := statechain.Genesis(network, ledger.NewKeyset(1, gov.Address()), time.Now().Add(-time.Hour).UnixMilli())
	// No Host: the service runs no sync loops, so kicks stay queued for
	// the test to see; the host is given after, for validate alone.
	s, err := Start(context.Background(), Config{Dir: "sc", FS: vfs.NewMem(), Network: network, Genesis: genesis})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h, err := p2p.New(context.Background(), p2p.Config{Dir: t.TempDir(), Network: "govtest", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	s.h = h

	ahead := func(index uint64, by ...wallet.Key) *statechain.Block {
		b := &statechain.Block{Index: index, Operation: statechain.OpSet, Key: "x.a", Value: "1", Timestamp: time.Now().UnixMilli()}
		b.Seal(network)
		for _, k := range by {
			b.Sign(k.Private())
		}
		return b
	}
	broken := func(b *statechain.Block, i int) *statechain.Block {
		b.Signatures[i].Signature[0] ^= 1
		return b
	}
	stranger, other := wallet.NewKey(), wallet.NewKey()
	from := peer.ID("sender")
	for _, c := range []struct {
		name  string
		b     *statechain.Block
		want  p2p.Verdict
		kicks int // queued after it
	}{
		{"unsigned", ahead(5), p2p.Reject, 0},
		{"a signature that does not verify", broken(ahead(6, stranger), 0), p2p.Reject, 0},
		{"one good signature, one that does not verify", broken(ahead(7, stranger, other), 1), p2p.Reject, 0},
		{"a stranger's valid signature", ahead(8, stranger), p2p.Ignore, 1},
		{"the same sender again, its pull queued", ahead(9, stranger), p2p.Ignore, 1},
	} {
		data, err := c.b.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if got := s.validate(context.Background(), from, data); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
		if n := len(s.kick); n != c.kicks {
			t.Errorf("%s: %d pulls queued, want %d", c.name, n, c.kicks)
		}
	}
}
