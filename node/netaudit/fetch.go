package netaudit

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/node/nodewire"
)

// Options bound Fetch.
type Options struct {
	// RequestTimeout bounds each request, its body included. Default 10 s.
	RequestTimeout time.Duration
	// Concurrency is how many requests to one node run at once. Default 8.
	Concurrency int
}

// EnsureDefaults fills the zero fields of o with their defaults.
func (o *Options) EnsureDefaults() {
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 10 * time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
}

// Fetch reads a Snapshot of each node, all nodes at once: first each
// node's frontiers (GET /frontiers), then, from every node, each account
// that any node listed (GET /accounts/{address} and its chain). An account
// a node answers 404 for is absent from its Snapshot. A node that fails a
// request gets the error in its Snapshot and is read no further; so does
// every node still being read when ctx ends. Fetch returns the snapshots
// in the order of nodes once every request has ended.
//
// The nodes keep running while they are read, so a block that arrives
// meanwhile may show as a difference: one that persists over a second
// Fetch is real.
func Fetch(ctx context.Context, nodes []*nodeclient.Client, opts Options) []Snapshot {
	opts.EnsureDefaults()
	snaps := make([]Snapshot, len(nodes))
	frontiers := make([]map[ledger.Address]ledger.Hash, len(nodes))
	each(len(nodes), func(i int) {
		snaps[i].Node = nodes[i].BaseURL()
		var err error
		if frontiers[i], err = within(ctx, opts.RequestTimeout, nodes[i].Frontiers); err != nil {
			snaps[i].Err = fmt.Errorf("GET /frontiers: %w", short(err))
		}
	})
	seen := map[ledger.Address]bool{}
	var accounts []ledger.Address
	for _, f := range frontiers {
		for a := range f {
			if !seen[a] {
				seen[a] = true
				accounts = append(accounts, a)
			}
		}
	}
	each(len(nodes), func(i int) {
		if snaps[i].Err != nil {
			return
		}
		snaps[i].Accounts, snaps[i].Err = fetchAccounts(ctx, nodes[i], accounts, opts)
		if snaps[i].Err == nil {
			snaps[i].State, snaps[i].Err = fetchState(ctx, nodes[i], opts)
		}
	})
	return snaps
}

// fetchState reads c's state-chain tip and whether a conflict halts it;
// nil when c serves no state chain (404).
func fetchState(ctx context.Context, c *nodeclient.Client, opts Options) (*StateChain, error) {
	tip, err := within(ctx, opts.RequestTimeout, c.StateTip)
	var apiErr *nodeclient.APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode == 404 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("GET /statechain/tip: %w", short(err))
	}
	conflicts, err := within(ctx, opts.RequestTimeout, c.StateConflicts)
	if err != nil {
		return nil, fmt.Errorf("GET /statechain/conflicts: %w", short(err))
	}
	st := &StateChain{Index: tip.Index, Tip: tip.Hash}
	for _, cf := range conflicts {
		st.Halted = st.Halted || !cf.Resolved
	}
	return st, nil
}

// fetchAccounts reads accounts from c, opts.Concurrency at a time, and
// stops at the first error.
func fetchAccounts(ctx context.Context, c *nodeclient.Client, accounts []ledger.Address, opts Options) (map[ledger.Address]Account, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu  sync.Mutex
		out = make(map[ledger.Address]Account, len(accounts))
	)
	work := make(chan ledger.Address)
	each(opts.Concurrency, func(int) {
		for a := range work {
			acct, found, err := fetchAccount(ctx, c, a, opts.RequestTimeout)
			if err != nil {
				cancel(err) // the first cause is kept
				continue    // drain work
			}
			if found {
				mu.Lock()
				out[a] = acct
				mu.Unlock()
			}
		}
	}, func() {
		defer close(work)
		for _, a := range accounts {
			select {
			case work <- a:
			case <-ctx.Done():
				return
			}
		}
	})
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// fetchAccount reads account a and its chain from c; found is false when
// c has no such account.
func fetchAccount(ctx context.Context, c *nodeclient.Client, a ledger.Address, timeout time.Duration) (acct Account, found bool, err error) {
	res, err := within(ctx, timeout, func(ctx context.Context) (nodewire.Account, error) { return c.Account(ctx, a) })
	if errors.Is(err, nodeclient.ErrNotFound) {
		return acct, false, nil
	}
	if err != nil {
		return acct, false, fmt.Errorf("GET /accounts/%s: %w", a, short(err))
	}
	acct = Account{Frontier: res.Frontier, BlockCount: res.BlockCount, Balances: map[ledger.Asset]ledger.Amount{}}
	for name, v := range res.Balances {
		asset, err := ledger.ParseAsset(name)
		if err != nil {
			return acct, false, fmt.Errorf("GET /accounts/%s: %w", a, err)
		}
		if acct.Balances[asset], err = ledger.ParseAmount(v); err != nil {
			return acct, false, fmt.Errorf("GET /accounts/%s: balance of %s: %w", a, name, err)
		}
	}
	chain, err := within(ctx, timeout, func(ctx context.Context) ([]nodewire.Block, error) { return c.Chain(ctx, a) })
	if errors.Is(err, nodeclient.ErrNotFound) {
		return acct, false, nil // its only block was rolled back meanwhile
	}
	if err != nil {
		return acct, false, fmt.Errorf("GET /accounts/%s/chain: %w", a, short(err))
	}
	acct.Chain = make([]ledger.Hash, len(chain))
	for i, b := range chain {
		acct.Chain[i] = b.Hash
		if b.Confirmed {
			// Confirming a block confirms the blocks before it.
			acct.Confirmed = uint64(i + 1)
		}
	}
	return acct, true, nil
}

// within runs one request, bounded by timeout.
func within[T any](ctx context.Context, timeout time.Duration, req func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return req(ctx)
}

// short drops what a transport error repeats of the node's URL, which
// the Snapshot names already: nodeclient's "node URL: Get "URL/path":
// dial tcp ..." becomes "dial tcp ...".
func short(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// each runs fn(0) to fn(n-1) and then extra, each on its own goroutine,
// and waits for them all.
func each(n int, fn func(i int), extra ...func()) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { fn(i) })
	}
	for _, f := range extra {
		wg.Go(f)
	}
	wg.Wait()
}
