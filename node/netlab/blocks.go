package netlab

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/pow"
	"github.com/latticenet/lattice/wallet"
)

// seal signs b with k and finds its proof of work.
func (c *Cluster) seal(ctx context.Context, b *ledger.Block, k wallet.Key) error {
	b.Sign(k.Private())
	n, err := pow.Solve(ctx, b.Hash, c.Work.For(b.Type))
	if err != nil {
		return fmt.Errorf("netlab: proof of work: %w", err)
	}
	b.PowNonce = n
	return nil
}

// advance returns h moved to its next block b.
func advance(h wallet.Head, b *ledger.Block) wallet.Head {
	h.Frontier, h.Timestamp = b.Hash, b.Timestamp
	h.Balances[b.Asset-1] = b.Balance
	return h
}

// submit posts b to node i.
func (c *Cluster) submit(ctx context.Context, i int, b *ledger.Block) error {
	ctx, cancel := context.WithTimeout(ctx, requestLimit)
	defer cancel()
	if _, err := c.Nodes[i].Client.Submit(ctx, b); err != nil {
		return fmt.Errorf("netlab: submit %s %s to node %d: %w", b.Type, b.Hash, i, err)
	}
	return nil
}

// head reads a's chain head from node i.
func (c *Cluster) head(ctx context.Context, i int, a ledger.Address) (wallet.Head, error) {
	ctx, cancel := context.WithTimeout(ctx, requestLimit)
	defer cancel()
	h, err := c.Nodes[i].Client.Head(ctx, a)
	if err != nil {
		return h, fmt.Errorf("netlab: head of %s on node %d: %w", a, i, err)
	}
	return h, nil
}

// Send sends amount base units of native from from's account to to: the
// block extends the chain head node i holds, and is submitted to node i.
func (c *Cluster) Send(ctx context.Context, i int, from wallet.Key, to ledger.Address, amount uint64) (*ledger.Block, error) {
	b, err := c.buildSend(ctx, i, from, to, amount)
	if err != nil {
		return nil, err
	}
	if err := c.submit(ctx, i, b); err != nil {
		return nil, err
	}
	return b, nil
}

// buildSend builds Send's block without submitting it.
func (c *Cluster) buildSend(ctx context.Context, i int, from wallet.Key, to ledger.Address, amount uint64) (*ledger.Block, error) {
	h, err := c.head(ctx, i, from.Address())
	if err != nil {
		return nil, err
	}
	b, err := wallet.Send(h, to, ledger.NewAmount(amount), ledger.Native, time.Now().UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("netlab: %w", err)
	}
	if err := c.seal(ctx, b, from); err != nil {
		return nil, err
	}
	return b, nil
}

// Fork is a set of valid sends from one account that all claim the same
// previous block: contender k went to node Nodes[k].
type Fork struct {
	Account  ledger.Address  // the forked account
	Previous ledger.Hash     // the block every contender claims to follow
	Blocks   []*ledger.Block // the contenders
	Nodes    []int           // the node each contender was submitted to
	To       []wallet.Key    // the recipient of each contender
	// Errs holds each submission's error, nil where the node accepted its
	// contender. A node that already had another contender (by gossip)
	// refuses its own as a fork, which is no failure of the harness.
	Errs []error
}

// Fork builds one send per node in nodes, all on the chain head of from's
// account that nodes[0] holds (every other node must hold the same head),
// each to a fresh address and of a different amount, and submits them at
// once, contender k to nodes[k]. It fails when the heads differ or no
// node accepted its contender.
func (c *Cluster) Fork(ctx context.Context, from wallet.Key, nodes ...int) (*Fork, error) {
	if len(nodes) < 2 {
		return nil, fmt.Errorf("netlab: a fork needs two nodes or more, got %v", nodes)
	}
	h, err := c.head(ctx, nodes[0], from.Address())
	if err != nil {
		return nil, err
	}
	for _, i := range nodes[1:] {
		o, err := c.head(ctx, i, from.Address())
		if err != nil {
			return nil, err
		}
		if o.Frontier != h.Frontier {
			return nil, fmt.Errorf("netlab: fork of %s: node %d is at %s, node %d at %s", from.Address(), nodes[0], h.Frontier, i, o.Frontier)
		}
	}
	f := &Fork{Account: from.Address(), Previous: h.Frontier, Nodes: nodes, Errs: make([]error, len(nodes))}
	now := time.Now().UnixMilli()
	for k := range nodes {
		to := wallet.NewKey()
		b, err := wallet.Send(h, to.Address(), ledger.NewAmount(uint64(k+1)), ledger.Native, now)
		if err != nil {
			return nil, fmt.Errorf("netlab: %w", err)
		}
		if err := c.seal(ctx, b, from); err != nil {
			return nil, err
		}
		f.Blocks = append(f.Blocks, b)
		f.To = append(f.To, to)
	}
	var wg sync.WaitGroup
	for k, i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.Errs[k] = c.submit(ctx, i, f.Blocks[k])
		}()
	}
	wg.Wait()
	for _, err := range f.Errs {
		if err == nil {
			return f, nil
		}
	}
	return f, fmt.Errorf("netlab: no node accepted a contender of the fork of %s: %w", f.Account, errors.Join(f.Errs...))
}

// ReceiveAll has each contender's recipient receive it at the node the
// contender went to, at once, while the fork is still undecided: the
// receive of a contender that loses is rolled back with it, and none may
// confirm its send past the send's own election (docs/protocol.md,
// "Dependencies first"). It returns the receives a node accepted; a node
// that holds another contender at the send's place refuses the receive
// for want of its send, which is no failure of the harness.
func (c *Cluster) ReceiveAll(ctx context.Context, f *Fork) []*ledger.Block {
	var accepted []*ledger.Block
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k, s := range f.Blocks {
		to := f.To[k]
		b, err := wallet.Receive(wallet.Head{Account: to.Address()}, ledger.Pending{Send: s.Hash, Source: s.Account,
			Destination: to.Address(), Amount: s.Amount, Asset: s.Asset}, time.Now().UnixMilli())
		if err != nil || c.seal(ctx, b, to) != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c.submit(ctx, f.Nodes[k], b) == nil {
				mu.Lock()
				accepted = append(accepted, b)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return accepted
}

// Winner returns the index of the contender node i holds confirmed, or
// -1 when it holds none confirmed (yet).
func (c *Cluster) Winner(ctx context.Context, f *Fork, i int) (int, error) {
	for k, b := range f.Blocks {
		ok, err := c.confirmed(ctx, i, b.Hash)
		if err != nil {
			return -1, err
		}
		if ok {
			return k, nil
		}
	}
	return -1, nil
}

// confirmed reports whether node i holds block h confirmed.
func (c *Cluster) confirmed(ctx context.Context, i int, h ledger.Hash) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, requestLimit)
	defer cancel()
	b, err := c.Nodes[i].Client.Block(ctx, h)
	if errors.Is(err, nodeclient.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("netlab: block %s on node %d: %w", h, i, err)
	}
	return b.Confirmed, nil
}

// WaitConfirmed waits until every node of nodes holds block h confirmed
// and returns how long that took. An unreachable node is asked again;
// ctx bounds the wait.
func (c *Cluster) WaitConfirmed(ctx context.Context, h ledger.Hash, nodes ...int) (time.Duration, error) {
	began := time.Now()
	done := make([]bool, len(nodes))
	var last error
	for {
		left := 0
		for k, i := range nodes {
			if done[k] {
				continue
			}
			ok, err := c.confirmed(ctx, i, h)
			if err != nil {
				last = err
			}
			done[k] = ok
			if !ok {
				left++
			}
		}
		if left == 0 {
			return time.Since(began), nil
		}
		if ctx.Err() != nil {
			var missing []int
			for k, i := range nodes {
				if !done[k] {
					missing = append(missing, i)
				}
			}
			return time.Since(began), fmt.Errorf("netlab: block %s not confirmed on nodes %v after %s (last error: %v)",
				h, missing, time.Since(began).Round(time.Millisecond), last)
		}
		sleep(ctx, pollEvery)
	}
}

// LoadOptions configure a Load.
type LoadOptions struct {
	// From is the sending account's key. Only this load may spend from it.
	From wallet.Key
	// Node is the node the sends are submitted to.
	Node int
	// Watch are the nodes whose confirmation a send waits for. Default:
	// Node alone.
	Watch []int
	// MaxWait bounds the wait for each send's confirmation. Default 10 s.
	MaxWait time.Duration
	// Pause is the time between a send's end and the next send. Default
	// 200 ms.
	Pause time.Duration
}

func (o *LoadOptions) ensureDefaults() {
	if o.Watch == nil {
		o.Watch = []int{o.Node}
	}
	if o.MaxWait == 0 {
		o.MaxWait = 10 * time.Second
	}
	if o.Pause == 0 {
		o.Pause = 200 * time.Millisecond
	}
}

// Sent is what became of one send of a Load.
type Sent struct {
	Hash      ledger.Hash
	At        time.Time     // when it was submitted
	Latency   time.Duration // from submission to confirmed on every watched node
	Confirmed bool          // within MaxWait
	Err       error         // the submission's error; the send is not in any ledger then
}

// Load sends 1 base unit at a time from one account through one node, to
// fresh addresses, each send once the one before it confirmed on the
// watched nodes or MaxWait passed, and records how long each took.
type Load struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	sent []Sent
}

// StartLoad starts a Load, stopped by Stop or at the test's cleanup.
func (c *Cluster) StartLoad(opts LoadOptions) *Load {
	opts.ensureDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	l := &Load{cancel: cancel, done: make(chan struct{})}
	go l.run(ctx, c, opts)
	c.t.Cleanup(func() { l.Stop() })
	return l
}

func (l *Load) run(ctx context.Context, c *Cluster, opts LoadOptions) {
	defer close(l.done)
	for ctx.Err() == nil {
		s := c.sendAndWait(ctx, opts)
		if ctx.Err() != nil {
			return // stopped while it ran: the send's fate is not known
		}
		l.add(s)
		sleep(ctx, opts.Pause)
	}
}

// MeasureSends makes n sends as a Load would, one after the other, and
// returns what became of each. Pause is ignored.
func (c *Cluster) MeasureSends(ctx context.Context, opts LoadOptions, n int) []Sent {
	opts.ensureDefaults()
	var out []Sent
	for range n {
		if ctx.Err() != nil {
			break
		}
		out = append(out, c.sendAndWait(ctx, opts))
	}
	return out
}

// sendAndWait makes one send of a load and waits for its confirmation.
func (c *Cluster) sendAndWait(ctx context.Context, opts LoadOptions) Sent {
	b, err := c.buildSend(ctx, opts.Node, opts.From, wallet.NewKey().Address(), 1)
	at := time.Now()
	if err == nil {
		err = c.submit(ctx, opts.Node, b)
	}
	if err != nil {
		return Sent{At: at, Err: err}
	}
	wctx, cancel := context.WithTimeout(ctx, opts.MaxWait)
	defer cancel()
	_, err = c.WaitConfirmed(wctx, b.Hash, opts.Watch...)
	return Sent{Hash: b.Hash, At: at, Latency: time.Since(at), Confirmed: err == nil}
}

func (l *Load) add(s Sent) {
	l.mu.Lock()
	l.sent = append(l.sent, s)
	l.mu.Unlock()
}

// Stop stops the load, waits for its goroutine and returns every send it
// made whose outcome it knows.
func (l *Load) Stop() []Sent {
	l.cancel()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Sent(nil), l.sent...)
}
