// Package workload generates valid streams of signed blocks, for tests and
// benchmarks that need realistic traffic: a setup that funds many accounts
// from the genesis, then pairs of accounts paying each other back and forth.
package workload

import (
	"context"
	"runtime"
	"sync"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/pow"
	"github.com/latticenet/lattice/wallet"
)

// Config describes a workload.
type Config struct {
	GenesisKey wallet.Key    // controls the genesis account
	Genesis    *ledger.Block // the network's genesis block
	Work       ledger.Work   // thresholds the blocks must meet
	Accounts   int           // funded accounts, paired up (rounded down to even)
	Fund       ledger.Amount // native each account receives in setup
	Claim      bool          // each account also claims from the faucet in setup
	PerPair    int           // send+receive rounds in each pair's stream
	Timestamp  int64         // block timestamp (Unix ms) for every block
	From       *wallet.Head  // the genesis account's head to build on; nil: the genesis block
}

// Workload is a generated set of blocks. Setup must be applied first, in
// order (it extends the genesis chain). Each stream must then be applied in
// order; streams are independent of each other.
type Workload struct {
	Setup   []*ledger.Block
	Streams [][]*ledger.Block
}

// Len returns the number of blocks in the workload.
func (w *Workload) Len() int {
	n := len(w.Setup)
	for _, s := range w.Streams {
		n += len(s)
	}
	return n
}

// Generate builds the workload, signing and finding work on every core.
func Generate(ctx context.Context, c Config) (*Workload, error) {
	g := &gen{ctx: ctx, c: c}
	w := &Workload{}
	gh := wallet.Head{Account: c.GenesisKey.Address(), Frontier: c.Genesis.Hash, Timestamp: c.Genesis.Timestamp}
	gh.Balances[ledger.Native-1] = c.Genesis.Balance
	if c.From != nil {
		gh = *c.From
	}
	n := c.Accounts &^ 1
	keys := make([]wallet.Key, n)
	heads := make([]wallet.Head, n)
	for i := range keys {
		keys[i] = wallet.NewKey()
		s, err := wallet.Send(gh, keys[i].Address(), c.Fund, ledger.Native, c.Timestamp)
		if err != nil {
			return nil, err
		}
		gh = g.seal(s, c.GenesisKey, gh)
		heads[i] = wallet.Head{Account: keys[i].Address()}
		r, _ := wallet.Receive(heads[i], PendingOf(s), c.Timestamp)
		heads[i] = g.seal(r, keys[i], heads[i])
		w.Setup = append(w.Setup, s, r)
		if c.Claim {
			cl, _ := wallet.Claim(heads[i], c.Timestamp)
			heads[i] = g.seal(cl, keys[i], heads[i])
			w.Setup = append(w.Setup, cl)
		}
	}
	w.Streams = make([][]*ledger.Block, n/2)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for p := range w.Streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			w.Streams[p] = g.pair(keys[2*p:2*p+2], heads[2*p:2*p+2])
		}()
	}
	wg.Wait()
	if g.err != nil {
		return nil, g.err
	}
	return w, nil
}

type gen struct {
	ctx  context.Context
	c    Config
	once sync.Once
	err  error
}

func (g *gen) fail(err error) { g.once.Do(func() { g.err = err }) }

// seal signs b with k, finds its work on one core (callers parallelise
// across blocks) and returns the head b leads to.
func (g *gen) seal(b *ledger.Block, k wallet.Key, h wallet.Head) wallet.Head {
	b.Sign(k.Private())
	n, err := pow.SolveN(g.ctx, b.Hash, g.c.Work.For(b.Type), 1)
	if err != nil {
		g.fail(err)
	}
	b.PowNonce = n
	h.Frontier, h.Timestamp = b.Hash, b.Timestamp
	h.Balances[b.Asset-1] = b.Balance
	return h
}

// pair builds one stream: the two accounts take turns sending to each other
// and receiving, alternating assets when both have some.
func (g *gen) pair(keys []wallet.Key, heads []wallet.Head) []*ledger.Block {
	var out []*ledger.Block
	for i := range g.c.PerPair {
		from, to := i%2, 1-i%2
		asset := ledger.Native
		if g.c.Claim && i%4 >= 2 {
			asset = ledger.Stable
		}
		s, err := wallet.Send(heads[from], keys[to].Address(), ledger.NewAmount(uint64(1+i%7)), asset, g.c.Timestamp)
		if err != nil {
			g.fail(err)
			return nil
		}
		heads[from] = g.seal(s, keys[from], heads[from])
		r, _ := wallet.Receive(heads[to], PendingOf(s), g.c.Timestamp)
		heads[to] = g.seal(r, keys[to], heads[to])
		out = append(out, s, r)
	}
	return out
}

// PendingOf returns the pending entry a send block creates.
func PendingOf(s *ledger.Block) ledger.Pending {
	return ledger.Pending{Send: s.Hash, Source: s.Account, Destination: s.Destination, Amount: s.Amount, Asset: s.Asset}
}
