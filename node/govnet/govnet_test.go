package govnet_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/govnet"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

// gov is a state chain governed by 2 of 3 keys, on a fixed network.
type gov struct {
	network ledger.Hash
	genesis *statechain.Block
	keys    []wallet.Key
}

func newGov() *gov {
	g := &gov{network: ledger.Hash{7}}
	var as []ledger.Address
	for range 3 {
		k := wallet.NewKey()
		g.keys = append(g.keys, k)
		as = append(as, k.Address())
	}
	g.genesis = statechain.Genesis(g.network, ledger.NewKeyset(2, as...), time.Now().Add(-time.Hour).UnixMilli())
	return g
}

// block makes a block after prev, signed by the keys at idx.
func (g *gov) block(prev *statechain.Block, op statechain.Operation, key, value string, idx ...int) *statechain.Block {
	b := &statechain.Block{Index: prev.Index + 1, Previous: prev.Hash, Operation: op, Key: key, Value: value, Timestamp: time.Now().UnixMilli()}
	b.Seal(g.network)
	for _, i := range idx {
		b.Sign(g.keys[i].Private())
	}
	return b
}

func (g *gov) start(t *testing.T, dir string, fs vfs.FS, reject ...ledger.Hash) *govnet.Service {
	t.Helper()
	s, err := govnet.Start(context.Background(), govnet.Config{Dir: dir, FS: fs, Network: g.network, Genesis: g.genesis, Reject: reject})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSubmitAndRestart(t *testing.T) {
	g, fs := newGov(), vfs.NewMem()
	s := g.start(t, "sc", fs)
	ctx := context.Background()
	b1 := g.block(g.genesis, statechain.OpSet, statechain.KeyAcceptTimeout, "120000", 0, 1)
	if h, err := s.Submit(ctx, b1); err != nil || h != b1.Hash {
		t.Fatalf("Submit: %s, %v", h, err)
	}
	if h, err := s.Submit(ctx, b1); err != nil || h != b1.Hash {
		t.Fatalf("a block held already: %s, %v", h, err)
	}
	refusals := []struct {
		name string
		b    *statechain.Block
		want error
	}{
		{"one signature", g.block(b1, statechain.OpSet, "x.a", "1", 2), statechain.ErrUnauthorized},
		{"ahead of the tip", g.block(g.block(b1, statechain.OpSet, "x.a", "1", 0, 1), statechain.OpSet, "x.b", "1", 0, 1), statechain.ErrGap},
		{"invalid value", g.block(b1, statechain.OpSet, statechain.KeyStakeRatio, "-1", 0, 1), statechain.ErrInvalidValue},
		{"stamped in the future", func() *statechain.Block {
			b := &statechain.Block{Index: 2, Previous: b1.Hash, Operation: statechain.OpSet, Key: "x.a", Value: "1", Timestamp: time.Now().Add(time.Hour).UnixMilli()}
			b.Seal(g.network)
			b.Sign(g.keys[0].Private())
			b.Sign(g.keys[1].Private())
			return b
		}(), govnet.ErrEarly},
	}
	for _, r := range refusals {
		if _, err := s.Submit(ctx, r.b); !errors.Is(err, r.want) {
			t.Errorf("%s: %v, want %v", r.name, err, r.want)
		}
	}
	if s.Tip().Hash != b1.Hash {
		t.Fatal("a refused block moved the tip")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = g.start(t, "sc", fs)
	defer s.Close()
	if s.Tip().Hash != b1.Hash {
		t.Fatalf("after a restart the tip is %d", s.Tip().Index)
	}
	if p, _ := s.State().Params(); p.AcceptTimeoutMS != 120000 {
		t.Fatalf("params after a restart: %+v", p)
	}
}

// TestConflictHaltsUntilRejected: two blocks signed for one index halt the
// chain, across restarts, until the operator rejects one of them.
func TestConflictHaltsUntilRejected(t *testing.T) {
	g, fs := newGov(), vfs.NewMem()
	ctx := context.Background()
	s := g.start(t, "sc", fs)
	a := g.block(g.genesis, statechain.OpSet, "x.side", `"a"`, 0, 1)
	b := g.block(g.genesis, statechain.OpSet, "x.side", `"b"`, 1, 2)
	if _, err := s.Submit(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(ctx, b); !errors.Is(err, govnet.ErrHalted) {
		t.Fatalf("the conflicting block: %v", err)
	}
	next := g.block(a, statechain.OpSet, "x.more", "1", 0, 1)
	if _, err := s.Submit(ctx, next); !errors.Is(err, govnet.ErrHalted) || !s.Halted() {
		t.Fatalf("a halted chain took a block: %v", err)
	}
	cs := s.Conflicts()
	if len(cs) != 1 || cs[0].Index != 1 || cs[0].Blocks[0].Hash != a.Hash || cs[0].Blocks[1].Hash != b.Hash || cs[0].Resolved {
		t.Fatalf("conflicts: %+v", cs)
	}
	// Evidence recorded once is not news; a block that could never have
	// followed block 0 is no evidence at all, however well signed.
	if _, err := s.Submit(ctx, b); !errors.Is(err, govnet.ErrHalted) {
		t.Fatalf("the recorded conflicting block again: %v", err)
	}
	for _, bad := range []struct {
		b    *statechain.Block
		want error
	}{
		{g.block(g.genesis, statechain.OpSet, "x.side", `"c"`, 0), statechain.ErrUnauthorized},
		{g.block(g.genesis, statechain.OpSet, statechain.KeyStakeRatio, `-1`, 0, 1), statechain.ErrInvalidValue},
		{g.block(g.genesis, statechain.OpDelete, "x.never", "", 0, 1), statechain.ErrInvalidValue},
		{g.block(g.genesis, "rename", "x.side", `1`, 0, 1), statechain.ErrMalformed},
	} {
		if _, err := s.Submit(ctx, bad.b); !errors.Is(err, bad.want) || len(s.Conflicts()) != 1 {
			t.Fatalf("a block that could not follow block 0 counted as evidence: %v (conflicts %d)", err, len(s.Conflicts()))
		}
	}
	s.Close()

	s = g.start(t, "sc", fs)
	if !s.Halted() {
		t.Fatal("the halt did not survive a restart")
	}
	s.Close()

	// The operator drops the block it holds: the chain rewinds and takes
	// the other side, from its own evidence.
	s = g.start(t, "sc", fs, a.Hash)
	if s.Halted() || s.Tip().Hash != b.Hash || !s.Conflicts()[0].Resolved {
		t.Fatalf("after rejecting a: halted %v, tip %d %s", s.Halted(), s.Tip().Index, s.Tip().Hash)
	}
	if _, err := s.Submit(ctx, a); !errors.Is(err, govnet.ErrRejected) {
		t.Fatalf("a rejected block came back: %v", err)
	}
	if h, err := s.Submit(ctx, b); err != nil || h != b.Hash {
		t.Fatalf("the side kept: %v", err)
	}
	if _, err := s.Submit(ctx, g.block(b, statechain.OpSet, "x.more", "1", 0, 2)); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// The rejection outlives the flag.
	s = g.start(t, "sc", fs)
	if _, err := s.Submit(ctx, a); !errors.Is(err, govnet.ErrRejected) || s.Tip().Index != 2 || s.Halted() {
		t.Fatalf("after a restart without the flag: %v, tip %d", err, s.Tip().Index)
	}
	s.Close()
	// Block 0 is the genesis file's: never rejected, and nothing changes.
	if _, err := govnet.Start(ctx, govnet.Config{Dir: "sc", FS: fs, Network: g.network, Genesis: g.genesis, Reject: []ledger.Hash{g.genesis.Hash}}); err == nil {
		t.Fatal("block 0 was rejected")
	}
	s = g.start(t, "sc", fs, ledger.Hash{1, 2, 3}) // in no conflict: a warning
	if s.Tip().Index != 2 {
		t.Fatalf("tip %d after rejecting an unknown hash", s.Tip().Index)
	}
	s.Close()
}

// TestClosedIgnores: a block that reaches a closed service (gossip keeps
// delivering until the host closes, after the modules) is refused, not a
// crash.
func TestClosedIgnores(t *testing.T) {
	g := newGov()
	s := g.start(t, "sc", vfs.NewMem())
	s.Close()
	if _, err := s.Submit(context.Background(), g.block(g.genesis, statechain.OpSet, "x.a", "1", 0, 1)); !errors.Is(err, govnet.ErrClosed) {
		t.Fatalf("Submit after Close: %v", err)
	}
}

func TestStartRefusesAnotherChain(t *testing.T) {
	g, fs := newGov(), vfs.NewMem()
	g.start(t, "sc", fs).Close()
	other := newGov()
	other.network = g.network
	if _, err := govnet.Start(context.Background(), govnet.Config{Dir: "sc", FS: fs, Network: g.network, Genesis: other.genesis}); err == nil {
		t.Fatal("a store of another keyset opened")
	}
}

// TestPowerLoss: every block Submit acknowledged is there after the
// machine loses power at any point after the answer (a crash image that
// keeps nothing unsynced), and the chain replays to the same state.
func TestPowerLoss(t *testing.T) {
	g, fs := newGov(), vfs.NewCrashableMem()
	s := g.start(t, "sc", fs)
	ctx := context.Background()
	prev := g.genesis
	var images []vfs.FS
	var tips []ledger.Hash
	for i := range 5 {
		b := g.block(prev, statechain.OpSet, "x.n", strconv.Itoa(i), 0, 2)
		if _, err := s.Submit(ctx, b); err != nil {
			t.Fatal(err)
		}
		images = append(images, fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}))
		tips = append(tips, b.Hash)
		prev = b
	}
	s.Close()
	for i, img := range images {
		r := g.start(t, "sc", img)
		if tip := r.Tip(); tip.Index != uint64(i+1) || tip.Hash != tips[i] {
			t.Errorf("image %d: tip %d %s, want %d %s", i, tip.Index, tip.Hash, i+1, tips[i])
		}
		if e, ok := r.State().Get("x.n"); !ok || e.Value != strconv.Itoa(i) {
			t.Errorf("image %d: x.n = %+v", i, e)
		}
		r.Close()
	}
}
