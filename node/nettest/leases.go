package nettest

import (
	"context"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/pow"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

// Govern appends a state-chain block setting key to value, signed by the
// genesis key (the governance of a cluster started without a Governance
// keyset), submits it at node 0 and waits until every running node holds
// it. It returns the block.
func (c *Cluster) Govern(key, value string) *statechain.Block {
	c.t.Helper()
	gov := c.Nodes[0].Gov
	tip := gov.Tip()
	b := &statechain.Block{Index: tip.Index + 1, Previous: tip.Hash, Operation: statechain.OpSet, Key: key, Value: value,
		Timestamp: max(c.now().UnixMilli(), tip.Timestamp)}
	b.Seal(c.Network.Genesis.Hash)
	b.Sign(c.Genesis.Private())
	if _, err := gov.Submit(context.Background(), b); err != nil {
		c.t.Fatalf("nettest: state-chain block %s=%s: %v", key, value, err)
	}
	c.WaitFor("state-chain block "+key, 20*time.Second, func(i int) bool {
		return c.Nodes[i].Gov.Tip().Index >= b.Index
	})
	return b
}

// now is the cluster's clock (Options.Now, or the time).
func (c *Cluster) now() time.Time {
	if c.opts.Now != nil {
		return c.opts.Now()
	}
	return time.Now()
}

// SetCommittee names the cluster's timekeepers (Options.Timekeepers) as
// the timekeeper committee, with the default threshold, and returns the
// state-chain block.
func (c *Cluster) SetCommittee() *statechain.Block {
	c.t.Helper()
	var keys []ledger.Address
	for i := range c.opts.Timekeepers {
		keys = append(keys, c.tkKeys[i].Address())
	}
	return c.Govern("timekeepers", statechain.TimekeepersValue(keys))
}

// Head returns account a's chain as node i's ledger has it.
func (c *Cluster) Head(i int, a ledger.Address) wallet.Head {
	c.t.Helper()
	acct, found, err := c.Nodes[i].N.Store.Account(a)
	if err != nil {
		c.t.Fatal(err)
	}
	if !found {
		return wallet.Head{Account: a}
	}
	return wallet.HeadOf(acct)
}

// Lease builds consumer's lease of req from provider, at node 0's
// state-chain tip and the cluster's clock, signed and with its work
// done; access is its access key. Submit it where the test likes.
func (c *Cluster) Lease(consumer wallet.Key, provider ledger.Address, access ledger.Address, req market.Request) *ledger.Block {
	c.t.Helper()
	nd := c.Nodes[0]
	tip := nd.Gov.Tip().Index
	terms, err := market.Terms{Network: c.Network.Genesis.Hash, StateAt: nd.Gov.StateAt}.LeaseTerms(tip,
		uint32(req.VCPUs), uint32(req.MemoryMB), uint32(req.DiskGB), uint32(req.Duration))
	if err != nil {
		c.t.Fatal(err)
	}
	spec := wallet.LeaseSpec{Provider: provider, VCPUs: uint32(req.VCPUs), MemoryMB: uint32(req.MemoryMB),
		DiskGB: uint32(req.DiskGB), Duration: uint32(req.Duration), AccessKey: access, Cost: terms.Cost, StateChainIndex: tip}
	b, err := wallet.Lease(c.Head(0, consumer.Address()), spec, c.now().UnixMilli())
	if err != nil {
		c.t.Fatal(err)
	}
	return c.Finish(b, consumer)
}

// Finish signs b with k and does its work.
func (c *Cluster) Finish(b *ledger.Block, k wallet.Key) *ledger.Block {
	c.t.Helper()
	b.Sign(k.Private())
	nonce, err := pow.Solve(context.Background(), b.Hash, c.Network.Work.For(b.Type))
	if err != nil {
		c.t.Fatal(err)
	}
	b.PowNonce = nonce
	return b
}

// CommitteeHeard reports whether nd has heard of every member of the
// timekeeper committee at its state chain's tip, a committee of n
// (timekeepers heard of outside the committee, as after it shrank, do
// not count).
func CommitteeHeard(nd *Node, n int) bool {
	tk, err := nd.Leases.Timekeepers(nd.Gov.Tip().Index)
	if err != nil {
		return false
	}
	members := 0
	for _, k := range tk.Timekeepers {
		if !k.InCommittee {
			continue
		}
		if !k.Heard {
			return false
		}
		members++
	}
	return members == n
}

// WaitCommitteeHeard waits until every running node has heard of every
// member of a timekeeper committee of n (CommitteeHeard): before that, a
// node cannot gather the committee's attestations.
func (c *Cluster) WaitCommitteeHeard(n int, timeout time.Duration) {
	c.t.Helper()
	c.WaitFor("every timekeeper heard of", timeout, func(i int) bool { return CommitteeHeard(c.Nodes[i], n) })
}
