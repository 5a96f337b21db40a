package node

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/ledgerstore"
	"github.com/latticenet/lattice/node/workload"
	"github.com/latticenet/lattice/wallet"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func genWorkload(t *testing.T, accounts, perPair int) (*ledger.Block, *workload.Workload) {
	t.Helper()
	gk := wallet.NewKey()
	now := time.Now().UnixMilli()
	g := ledger.NewGenesis(gk.Private(), ledger.NewAmount(1e15), now)
	wl, err := workload.Generate(context.Background(), workload.Config{GenesisKey: gk, Genesis: g, Work: ledger.DevWork,
		Accounts: accounts, Fund: ledger.NewAmount(1e9), Claim: true, PerPair: perPair, Timestamp: now})
	if err != nil {
		t.Fatal(err)
	}
	return g, wl
}

// TestPowerLossKeepsAcknowledgedBlocks cuts the power, in effect, while
// blocks stream into the engine: it clones the file system keeping only
// what was fsync'd, reopens the ledger from the clone, and checks that every
// block acknowledged before the cut is there and the invariants hold.
// Syncs take a millisecond, as a disk's do, so that the cut is likely to
// fall while a group's fsync is in flight: an engine that answered a group
// before its fsync completed loses acknowledged blocks here.
func TestPowerLossKeepsAcknowledgedBlocks(t *testing.T) {
	g, wl := genWorkload(t, 16, 60)
	for trial := range 6 {
		fs := vfs.NewCrashableMem()
		st, err := ledgerstore.Open("ledger", ledgerstore.Options{FS: slowSyncFS{fs, time.Millisecond}, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Init(g, Network{Name: "t", Work: ledger.DevWork, Genesis: g}); err != nil {
			t.Fatal(err)
		}
		e := NewEngine(st, ledger.Fixed{Work: ledger.DevWork}, quiet, time.Now)
		ctx := context.Background()
		var mu sync.Mutex
		acked := map[ledger.Hash]bool{}
		submit := func(blocks []*ledger.Block) {
			for _, b := range blocks {
				if _, err := e.Submit(ctx, b); err != nil {
					if !errors.Is(err, ErrClosed) {
						t.Errorf("submit: %v", err)
					}
					return
				}
				mu.Lock()
				acked[b.Hash] = true
				mu.Unlock()
			}
		}
		submit(wl.Setup)
		var wg sync.WaitGroup
		for _, s := range wl.Streams {
			wg.Add(1)
			go func() { defer wg.Done(); submit(s) }()
		}
		// Cut the power part-way through the streams.
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
		mu.Lock()
		before := make(map[ledger.Hash]bool, len(acked))
		for h := range acked {
			before[h] = true
		}
		mu.Unlock()
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
		e.Close()
		wg.Wait()
		st.Close()

		st2, err := ledgerstore.Open("ledger", ledgerstore.Options{FS: crashed, Logger: quiet})
		if err != nil {
			t.Fatalf("trial %d: reopen after power loss: %v", trial, err)
		}
		for h := range before {
			if _, found, err := st2.Entry(h); err != nil || !found {
				t.Fatalf("trial %d: block %s acknowledged before the power cut is lost (%v)", trial, h, err)
			}
		}
		snap := st2.Snapshot()
		r, err := ledger.Audit(snap)
		snap.Close()
		if err != nil {
			t.Fatalf("trial %d: audit after power loss: %v", trial, err)
		}
		t.Logf("trial %d: %d blocks acknowledged before the cut, %d on disk after it", trial, len(before), r.Blocks)
		st2.Close()
	}
}

// openTestLedger opens a ledger on disk holding genesis g, closed when the
// test ends.
func openTestLedger(t *testing.T, g *ledger.Block) *ledgerstore.Store {
	t.Helper()
	st, err := ledgerstore.Open(t.TempDir(), ledgerstore.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Init(g, Network{Name: "t", Work: ledger.DevWork, Genesis: g}); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestEngineAnswers(t *testing.T) {
	g, wl := genWorkload(t, 2, 2)
	st := openTestLedger(t, g)
	e := NewEngine(st, ledger.Fixed{Work: ledger.DevWork}, quiet, time.Now)
	ctx := context.Background()
	for _, b := range wl.Setup {
		if _, err := e.Submit(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	// A duplicate answers like an acceptance and says so.
	res, err := e.Submit(ctx, wl.Setup[0])
	if err != nil || !res.Duplicate || res.Hash != wl.Setup[0].Hash {
		t.Errorf("duplicate: got %+v, %v; want Duplicate", res, err)
	}
	// A block out of order is a gap, not a crash.
	if _, err := e.Submit(ctx, wl.Streams[0][1]); !errors.Is(err, ledger.ErrGapSource) {
		t.Errorf("receive before its send: got %v, want ErrGapSource", err)
	}
	// A bad block is refused before it reaches the writer.
	bad := wl.Streams[0][0].Clone()
	bad.PowNonce++
	for ledger.DevWork.Send.Met(bad.Hash, bad.PowNonce) {
		bad.PowNonce++
	}
	if _, err := e.Submit(ctx, bad); !errors.Is(err, ledger.ErrInsufficientWork) {
		t.Errorf("bad work: got %v, want ErrInsufficientWork", err)
	}
	e.Close()
	if _, err := e.Submit(ctx, wl.Streams[0][0]); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: got %v, want ErrClosed", err)
	}
	// A cancelled context ends the wait.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	e2 := NewEngine(st, ledger.Fixed{Work: ledger.DevWork}, quiet, time.Now)
	defer e2.Close()
	if _, err := e2.Submit(cctx, wl.Streams[0][0]); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
}

// TestSyncFailureStopsTheEngine: once an fsync fails, nothing more is
// acknowledged, not even a resubmission of a block the database already
// shows (it may never reach the disk).
func TestSyncFailureStopsTheEngine(t *testing.T) {
	var failing atomic.Bool
	mem := vfs.NewCrashableMem()
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if failing.Load() && strings.HasSuffix(op.Path, ".log") &&
			(op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData || op.Kind == errorfs.OpFileSyncTo) {
			return errors.New("injected EIO")
		}
		return nil
	}))
	g, wl := genWorkload(t, 2, 3)
	st, err := ledgerstore.Open("ledger", ledgerstore.Options{FS: fs, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Init(g, Network{Name: "t", Work: ledger.DevWork, Genesis: g}); err != nil {
		t.Fatal(err)
	}
	e := NewEngine(st, ledger.Fixed{Work: ledger.DevWork}, quiet, time.Now)
	defer e.Close()
	ctx := context.Background()
	for _, b := range wl.Setup {
		if _, err := e.Submit(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	s := wl.Streams[0]
	failing.Store(true)
	if _, err := e.Submit(ctx, s[0]); !errors.Is(err, ErrFailed) {
		t.Fatalf("submit while syncs fail: got %v, want ErrFailed", err)
	}
	select {
	case <-e.Failed():
	default:
		t.Fatal("Failed() not closed after a sync failure")
	}
	for _, b := range []*ledger.Block{s[0], wl.Setup[0], s[1]} {
		if res, err := e.Submit(ctx, b); !errors.Is(err, ErrFailed) {
			t.Errorf("submit after the failure: got %+v, %v; want ErrFailed", res, err)
		}
	}
	if e.Err() == nil {
		t.Error("Err() is nil after a failure")
	}
}

// TestClaimRateLimitNearMaxTimestamp: the faucet's 24-hour window holds at
// the top of the int64 range (LastClaim + interval would overflow).
func TestClaimRateLimitNearMaxTimestamp(t *testing.T) {
	m := ledger.NewMem()
	k := wallet.NewKey()
	ts := int64(math.MaxInt64 - 1000)
	h := wallet.Head{Account: k.Address()}
	for i := range 2 {
		b, _ := wallet.Claim(h, ts)
		b.Sign(k.Private())
		d, err := ledger.Apply(m, b)
		if i == 0 {
			if err != nil {
				t.Fatal(err)
			}
			m.Commit(d)
			h = wallet.HeadOf(d.Account)
			continue
		}
		if !errors.Is(err, ledger.ErrClaimTooSoon) {
			t.Fatalf("second claim at the same timestamp near MaxInt64: got %v, want ErrClaimTooSoon", err)
		}
	}
}

// TestSubmitBatchedChecks submits many blocks at once, every fifth with a
// broken signature, so that the verifiers check them in batches: each
// caller must get its own block's answer, and the good blocks all land.
func TestSubmitBatchedChecks(t *testing.T) {
	g, wl := genWorkload(t, 64, 1)
	st := openTestLedger(t, g)
	e := NewEngine(st, ledger.Fixed{Work: ledger.DevWork}, quiet, time.Now)
	defer e.Close()
	ctx := context.Background()
	for _, b := range wl.Setup {
		if _, err := e.Submit(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	// The first block of each stream depends only on the setup.
	var blocks []*ledger.Block
	for _, s := range wl.Streams {
		blocks = append(blocks, s[0])
	}
	for round := range 3 {
		bad := make([]bool, len(blocks))
		submitted := make([]*ledger.Block, len(blocks))
		for i, b := range blocks {
			submitted[i] = b
			if (i+round)%5 == 0 {
				c := b.Clone()
				c.Signature[10] ^= 0x04
				submitted[i], bad[i] = c, true
			}
		}
		errs := make([]error, len(blocks))
		var start, wg sync.WaitGroup
		start.Add(1)
		for i := range submitted {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start.Wait()
				_, errs[i] = e.Submit(ctx, submitted[i])
			}()
		}
		start.Done()
		wg.Wait()
		for i, err := range errs {
			if bad[i] && !errors.Is(err, ledger.ErrBadSignature) {
				t.Errorf("round %d, block %d (bad signature): got %v, want ErrBadSignature", round, i, err)
			}
			if !bad[i] && err != nil {
				t.Errorf("round %d, block %d: got %v, want it applied", round, i, err)
			}
		}
	}
	for _, b := range blocks {
		if _, found, _ := st.Entry(b.Hash); !found {
			t.Errorf("block %s is not in the ledger", b.Hash)
		}
	}
}

// slowSyncFS makes every sync of a file take delay before it happens, as
// on a real disk (a sync of the in-memory file system is instantaneous).
type slowSyncFS struct {
	vfs.FS
	delay time.Duration
}

func (fs slowSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.Create(name, c))
}

func (fs slowSyncFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return fs.wrap(fs.FS.OpenReadWrite(name, c, opts...))
}

func (fs slowSyncFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.ReuseForWrite(oldname, newname, c))
}

func (fs slowSyncFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return slowSyncFile{f, fs.delay}, nil
}

type slowSyncFile struct {
	vfs.File
	delay time.Duration
}

func (f slowSyncFile) Sync() error     { time.Sleep(f.delay); return f.File.Sync() }
func (f slowSyncFile) SyncData() error { time.Sleep(f.delay); return f.File.SyncData() }
func (f slowSyncFile) SyncTo(n int64) (bool, error) {
	time.Sleep(f.delay)
	return f.File.SyncTo(n)
}

// TestCheckSplit checks a batch split between two goroutines, on an engine
// whose writer is not running so that what reaches it can be read: the
// good blocks reach the writer in the batch's order, whichever half they
// are in, and the bad ones (at both ends of both halves) are answered with
// their error. Once the engine is closing, the good ones are answered
// ErrClosed instead and check returns.
func TestCheckSplit(t *testing.T) {
	_, wl := genWorkload(t, 128, 1)
	var blocks []*ledger.Block
	for _, s := range wl.Streams {
		blocks = append(blocks, s[0])
	}
	if len(blocks) != 64 {
		t.Fatalf("%d blocks, want 64", len(blocks))
	}
	bad := map[int]bool{0: true, 31: true, 32: true, 63: true}
	requests := func() []*request {
		var rs []*request
		for i, b := range blocks {
			if bad[i] {
				b = b.Clone()
				b.Signature[3] ^= 0x10
			}
			rs = append(rs, &request{kind: opSubmit, b: b, done: make(chan struct{})})
		}
		return rs
	}
	checked := func(rs []*request) []*ledger.Block {
		bs := make([]*ledger.Block, len(rs))
		for i, r := range rs {
			bs[i] = r.b
		}
		return bs
	}

	for _, split := range []bool{true, false} {
		e := &Engine{params: ledger.Fixed{Work: ledger.DevWork}, in: make(chan *request, len(blocks)), quit: make(chan struct{})}
		rs := requests()
		e.check(rs, checked(rs), split)
		close(e.in)
		var got []*request
		for r := range e.in {
			got = append(got, r)
		}
		if want := len(blocks) - len(bad); len(got) != want {
			t.Fatalf("split %v: %d blocks reached the writer, want %d", split, len(got), want)
		}
		i := 0
		for j, r := range rs {
			if bad[j] {
				select {
				case <-r.done:
				default:
					t.Fatalf("split %v: bad block %d was not answered", split, j)
				}
				if !errors.Is(r.err, ledger.ErrBadSignature) {
					t.Errorf("split %v: bad block %d: got %v, want ErrBadSignature", split, j, r.err)
				}
				continue
			}
			if got[i] != r {
				t.Errorf("split %v: the writer's block %d is not the batch's block %d", split, i, j)
			}
			i++
		}
	}

	// Closing: no writer takes anything; every request is answered.
	e := &Engine{params: ledger.Fixed{Work: ledger.DevWork}, in: make(chan *request), quit: make(chan struct{})}
	close(e.quit)
	rs := requests()
	e.check(rs, checked(rs), true)
	for j, r := range rs {
		select {
		case <-r.done:
		default:
			t.Fatalf("closing: block %d was not answered", j)
		}
		if want := ErrClosed; bad[j] {
			if !errors.Is(r.err, ledger.ErrBadSignature) {
				t.Errorf("closing: bad block %d: got %v, want ErrBadSignature", j, r.err)
			}
		} else if !errors.Is(r.err, want) {
			t.Errorf("closing: block %d: got %v, want ErrClosed", j, r.err)
		}
	}
}
