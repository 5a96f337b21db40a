package wallet

import (
	"context"
	"fmt"
	"sync"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/pow"
)

// Chains builds finished blocks (sealed, signed, with work) for a set of
// keys, keeping each chain's head as the blocks it built were accepted.
// Tests, benchmarks and `lattice dev` use it to write ledgers without a
// node to ask. Safe for concurrent use.
type Chains struct {
	work ledger.Work

	mu    sync.Mutex
	keys  map[ledger.Address]Key
	heads map[ledger.Address]Head
	now   int64
}

// NewChains starts from a network's genesis block, whose key is genesis,
// with the block timestamps starting after the genesis block's.
func NewChains(work ledger.Work, genesis Key, g *ledger.Block) *Chains {
	c := &Chains{work: work, keys: map[ledger.Address]Key{}, heads: map[ledger.Address]Head{}, now: g.Timestamp}
	c.keys[genesis.Address()] = genesis
	c.heads[genesis.Address()] = Head{Account: g.Account, Frontier: g.Hash, Balances: [2]ledger.Amount{g.Balance}, Timestamp: g.Timestamp}
	return c
}

// Add lets c build blocks for k, whose chain is empty or at head.
func (c *Chains) Add(k Key, head *Head) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys[k.Address()] = k
	if head != nil {
		c.heads[k.Address()] = *head
	} else if _, ok := c.heads[k.Address()]; !ok {
		c.heads[k.Address()] = Head{Account: k.Address()}
	}
}

// Head returns the head c holds for account a.
func (c *Chains) Head(a ledger.Address) Head {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heads[a]
}

// At moves a's head back to block b (one of a's blocks), to build a fork.
func (c *Chains) At(b *ledger.Block) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.heads[b.Account]
	h.Frontier, h.Timestamp = b.Hash, b.Timestamp
	h.Balances[b.Asset-1] = b.Balance
	c.heads[b.Account] = h
}

// Send builds a send of amount base units of native from one key to
// another address.
func (c *Chains) Send(from Key, to ledger.Address, amount uint64) (*ledger.Block, error) {
	return c.SendDelegating(from, to, amount, ledger.Address{})
}

// SendDelegating builds a send as Send does that also names rep as the
// sender's representative when rep is not zero: the sender's remaining
// balance moves to rep's weight in the same block.
func (c *Chains) SendDelegating(from Key, to ledger.Address, amount uint64, rep ledger.Address) (*ledger.Block, error) {
	c.mu.Lock()
	c.now++
	b, err := Send(c.heads[from.Address()], to, ledger.NewAmount(amount), ledger.Native, c.now)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return c.finish(b, rep)
}

// Receive builds to's receive of send, naming rep as its representative
// when rep is not zero.
func (c *Chains) Receive(to Key, send *ledger.Block, rep ledger.Address) (*ledger.Block, error) {
	c.mu.Lock()
	c.now++
	b, err := Receive(c.heads[to.Address()], ledger.Pending{Send: send.Hash, Source: send.Account,
		Destination: to.Address(), Amount: send.Amount, Asset: send.Asset}, c.now)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return c.finish(b, rep)
}

// finish names rep, signs b, finds its work and moves the head of its
// account to it.
func (c *Chains) finish(b *ledger.Block, rep ledger.Address) (*ledger.Block, error) {
	c.mu.Lock()
	k, ok := c.keys[b.Account]
	c.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("wallet: no key for account %s", b.Account)
	}
	if !rep.IsZero() {
		b.Representative = rep
		b.Seal()
	}
	b.Sign(k.Private())
	n, err := pow.Solve(context.Background(), b.Hash, c.work.For(b.Type))
	if err != nil {
		return nil, err
	}
	b.PowNonce = n
	c.At(b)
	return b, nil
}
