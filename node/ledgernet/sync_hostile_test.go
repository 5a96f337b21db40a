package ledgernet_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/ledgernet"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/p2p"
	"github.com/latticenet/lattice/wallet"
)

// TestSyncAnswerHeldToWhatWasAsked: a peer that answers a sync request
// with more frames than it asked for is cut off at the first frame too
// many, the stream reset, whatever the request: the log of the sync loop
// (L), a block by hash (H), votes (V). Before, every frame was kept until
// the peer sent the end frame or the deadline came (30 s for L), and a
// peer that answered L with one block again and again grew a node's heap
// by 3 GiB in 18 s. An answer of just what was asked for is taken.
func TestSyncAnswerHeldToWhatWasAsked(t *testing.T) {
	c := nettest.Start(t, nettest.Options{Nodes: 1})
	victim := c.Nodes[0]
	genesis := c.Network.Genesis
	// Any vote that verifies will do: it costs the node a signature check.
	vote := &consensus.Vote{Round: 1, Hashes: []ledger.Hash{genesis.Hash}}
	vote.Sign(genesis.Hash, wallet.NewKey().Private())
	voteBin, err := vote.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}

	var over atomic.Bool    // H and V: one frame more than asked for
	var logOver atomic.Bool // L: one block more than asked for, until the log subtest has seen it cut
	logOver.Store(true)
	cut := map[byte]chan struct{}{'L': make(chan struct{}, 1), 'H': make(chan struct{}, 1), 'V': make(chan struct{}, 1)}
	stop := make(chan struct{})
	h := hostileHost(t, c, 0, func(s network.Stream, kind byte, body []byte) {
		defer s.Close()
		var n int
		var frame func(i int) []byte // the i-th frame of the answer, whole
		switch kind {
		case 'L':
			after := binary.BigEndian.Uint64(body)
			if !logOver.Load() {
				// Nothing after the node's cursor: an honest answer, which
				// counts toward no ban while the other subtests run.
				w := bufio.NewWriter(s)
				if writeFrame(w, 'E', endBody(after, after)) != nil || w.Flush() != nil {
					signal(cut[kind])
				}
				return
			}
			n = int(binary.BigEndian.Uint16(body[8:])) + 1
			frame = func(i int) []byte { return appendFrame(nil, 'B', blockFrame(after+1+uint64(i), genesis)) }
		case 'H':
			n = int(binary.BigEndian.Uint16(body))
			b := appendFrame(nil, 'B', blockFrame(0, genesis))
			frame = func(int) []byte { return b }
		case 'V':
			n = ledgernet.MaxVoteFrames
			v := appendFrame(nil, 'V', voteBin)
			frame = func(int) []byte { return v }
		default:
			s.Reset()
			return
		}
		if kind != 'L' && over.Load() {
			n++
		}
		w := bufio.NewWriterSize(s, 64<<10)
		for i := range n {
			if _, err := w.Write(frame(i)); err != nil {
				signal(cut[kind])
				return
			}
		}
		if kind != 'L' && !over.Load() {
			if writeFrame(w, 'E', endBody(0, 0)) != nil || w.Flush() != nil {
				signal(cut[kind])
			}
			return
		}
		// Then more, slowly, until the node resets the stream.
		for i := n; ; i++ {
			if _, err := w.Write(frame(i)); err != nil || w.Flush() != nil {
				signal(cut[kind])
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	t.Cleanup(func() { close(stop) }) // before the host closes

	t.Run("log", func(t *testing.T) {
		select {
		case <-cut['L']:
		case <-time.After(10 * time.Second):
			t.Fatal("the node read on past the 1024 blocks it asked for")
		}
		logOver.Store(false)
	})
	t.Run("blocks by hash", func(t *testing.T) {
		hashes := []ledger.Hash{genesis.Hash, {1}}
		over.Store(false)
		blocks, err := request(t, func(ctx context.Context) (int, error) {
			b, err := ledgernet.RequestBlocks(victim.Svc, ctx, h.ID(), hashes)
			return len(b), err
		})
		if err != nil || blocks != len(hashes) {
			t.Fatalf("an answer of %d blocks to %d hashes: got %d blocks, %v", len(hashes), len(hashes), blocks, err)
		}
		over.Store(true)
		if _, err := request(t, func(ctx context.Context) (int, error) {
			b, err := ledgernet.RequestBlocks(victim.Svc, ctx, h.ID(), hashes)
			return len(b), err
		}); !errors.Is(err, ledgernet.ErrBadAnswer) {
			t.Fatalf("an answer of %d blocks to %d hashes: got %v, want a bad answer", len(hashes)+1, len(hashes), err)
		}
		waitCut(t, cut['H'])
	})
	t.Run("votes", func(t *testing.T) {
		hashes := []ledger.Hash{genesis.Hash}
		over.Store(false)
		if _, err := request(t, func(ctx context.Context) (int, error) {
			v, err := ledgernet.RequestVotes(victim.Svc, ctx, h.ID(), hashes)
			return len(v), err
		}); err != nil {
			t.Fatalf("an answer of %d votes: %v", ledgernet.MaxVoteFrames, err)
		}
		over.Store(true)
		if _, err := request(t, func(ctx context.Context) (int, error) {
			v, err := ledgernet.RequestVotes(victim.Svc, ctx, h.ID(), hashes)
			return len(v), err
		}); !errors.Is(err, ledgernet.ErrBadAnswer) {
			t.Fatalf("an answer of %d votes: got %v, want a bad answer", ledgernet.MaxVoteFrames+1, err)
		}
		waitCut(t, cut['V'])
	})
	// No honest peer answers so: each bad answer counts toward a ban
	// (a quarter of the reject limit), and a peer that keeps answering
	// so is banned, its connection closed.
	t.Run("banned", func(t *testing.T) {
		over.Store(true)
		for i := 0; !victim.Host.Banned(h.ID()); i++ {
			if i == 4 {
				t.Fatal("four more bad answers and the peer is not banned")
			}
			_, err := request(t, func(ctx context.Context) (int, error) {
				b, err := ledgernet.RequestBlocks(victim.Svc, ctx, h.ID(), []ledger.Hash{genesis.Hash})
				return len(b), err
			})
			if err == nil {
				t.Fatal("a bad answer taken")
			}
		}
	})
}

// TestSyncNotHeldByEndlessLog: a peer whose log answers never end the
// pull does not keep the node from syncing from its other peers. The sync
// loop pulls from one peer at a time; before, a peer answering every log
// request with next = after+1 and last = 2^64-1 held it forever.
func TestSyncNotHeldByEndlessLog(t *testing.T) {
	t.Run("next ahead of the blocks", func(t *testing.T) {
		// No block, yet next moves on: what a log answer cannot mean. The
		// budget is too long to matter: the rule alone ends the pull.
		syncPastEndlessPeer(t, time.Minute, func(w io.Writer, after uint64, _ *ledger.Block) error {
			return writeFrame(w, 'E', endBody(after+1, math.MaxUint64))
		})
	})
	t.Run("one block at a time", func(t *testing.T) {
		// A well-formed answer of one block, from a log that claims to
		// have no end: only the budget ends the pull.
		syncPastEndlessPeer(t, time.Second, func(w io.Writer, after uint64, g *ledger.Block) error {
			if err := writeFrame(w, 'B', blockFrame(after+1, g)); err != nil {
				return err
			}
			return writeFrame(w, 'E', endBody(after+1, math.MaxUint64))
		})
	})
}

// syncPastEndlessPeer has node 0 of two pull from a hostile peer that
// answers every log request with answer, and checks that a block only
// node 1 has reaches node 0 by sync all the same.
func syncPastEndlessPeer(t *testing.T, budget time.Duration, answer func(w io.Writer, after uint64, genesis *ledger.Block) error) {
	c := nettest.Start(t, nettest.Options{Nodes: 2, Net: ledgernet.Config{SyncBudget: budget}})
	victim, honest := c.Nodes[0], c.Nodes[1]
	var served atomic.Int64
	hostileHost(t, c, 0, func(s network.Stream, kind byte, body []byte) {
		if kind != 'L' {
			s.Reset()
			return
		}
		served.Add(1)
		if answer(s, binary.BigEndian.Uint64(body), c.Network.Genesis) != nil {
			s.Reset()
			return
		}
		s.Close()
	})
	waitUntil(t, "the node to pull from the hostile peer", 10*time.Second, func() bool { return served.Load() >= 2 })

	// A block node 0 can only get by sync: made while it is cut off from
	// node 1, and gossiped then.
	victim.Host.Isolate(honest.Host.ID())
	bob := wallet.NewKey()
	c.Chains.Add(bob, nil)
	send := c.Must(c.Chains.Send(c.Genesis, bob.Address(), 1000))
	if _, err := honest.N.Engine.Submit(t.Context(), send); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	victim.Host.Heal()
	start := time.Now()
	waitUntil(t, "the node to sync node 1's block", 15*time.Second, func() bool {
		_, found, _ := victim.N.Store.Entry(send.Hash)
		return found
	})
	t.Logf("synced %s after the heal; the hostile peer served %d log requests", time.Since(start).Round(time.Millisecond), served.Load())
}

// hostileHost starts a bare host of c's network that dials node i and
// answers every sync request with serve, which owns the stream; it is
// closed when the test ends.
func hostileHost(t *testing.T, c *nettest.Cluster, i int, serve func(s network.Stream, kind byte, body []byte)) *p2p.Host {
	t.Helper()
	h, err := p2p.New(t.Context(), p2p.Config{Dir: t.TempDir(), Listen: []string{"/ip4/127.0.0.1/tcp/0"},
		Bootstrap: c.Nodes[i].Host.Addrs(), Network: c.Network.Genesis.Hash.String(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	h.Handle("sync/2", func(s network.Stream) {
		kind, body, err := readRequest(s)
		if err != nil {
			s.Reset()
			return
		}
		serve(s, kind, body)
	})
	waitUntil(t, "the hostile peer to connect", 10*time.Second, func() bool {
		return slices.Contains(c.Nodes[i].Host.Peers(), h.ID())
	})
	return h
}

// request runs one request of the node's to the hostile peer, bounded.
func request(t *testing.T, do func(ctx context.Context) (int, error)) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return do(ctx)
}

// waitCut waits for the hostile peer to find its answer's stream reset.
func waitCut(t *testing.T, cut <-chan struct{}) {
	t.Helper()
	select {
	case <-cut:
	case <-time.After(5 * time.Second):
		t.Fatal("the node failed the answer but did not reset the stream")
	}
}

func signal(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The sync protocol's framing (docs/protocol.md, section 17), written
// again here as a hostile peer would.

func readRequest(r io.Reader) (byte, []byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > 1<<16 {
		return 0, nil, fmt.Errorf("request of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, nil, err
	}
	return b[0], b[1:], nil
}

func appendFrame(dst []byte, kind byte, body []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(body)+1))
	return append(append(dst, kind), body...)
}

func writeFrame(w io.Writer, kind byte, body []byte) error {
	_, err := w.Write(appendFrame(nil, kind, body))
	return err
}

func blockFrame(seq uint64, b *ledger.Block) []byte {
	return b.AppendBinary(binary.BigEndian.AppendUint64(nil, seq))
}

func endBody(next, last uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, next), last)
}
