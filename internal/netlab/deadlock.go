package netlab

import (
	"context"
	"fmt"
	"strings"

	"github.com/latticenet/lattice/ledger"
)

// Deadlock is a fork whose final votes are split so that no contender can
// reach the quorum however the remaining weight votes: representatives
// cast their final votes for different contenders (each after seeing its
// contender agreed at its own node), and a final vote is never replaced.
// It is safe (nothing conflicting is confirmed) but the fork is never
// decided: the protocol's known liveness limit (docs/protocol.md, "What
// the network gives up").
type Deadlock struct {
	Node     int
	Account  ledger.Address
	Previous ledger.Hash
	Finals   []string // contender=final weight
}

func (d Deadlock) String() string {
	return fmt.Sprintf("node %d: fork of %s at %s deadlocked by split final votes: %s",
		d.Node, d.Account, d.Previous, strings.Join(d.Finals, " "))
}

// Deadlocks reads every running node's conflicts and returns the forks
// whose elections are deadlocked by split final votes.
func (c *Cluster) Deadlocks(ctx context.Context) ([]Deadlock, error) {
	var out []Deadlock
	for _, i := range c.Running() {
		nd := c.Nodes[i]
		info, err := nd.Client.Node(ctx)
		if err != nil {
			return nil, err
		}
		if info.Quorum == nil {
			continue
		}
		cs, err := nd.Client.Conflicts(ctx, nil)
		if err != nil {
			return nil, err
		}
		for _, cf := range cs {
			if cf.Election == nil {
				continue
			}
			var cast ledger.Amount
			var finals []string
			for _, tl := range cf.Election.Tallies {
				cast, _ = cast.Add(tl.Final)
				finals = append(finals, fmt.Sprintf("%s=%s", tl.Hash.String()[:12], tl.Final))
			}
			left, err := info.Quorum.Total.Sub(cast)
			if err != nil {
				continue
			}
			stuck := true
			for _, tl := range cf.Election.Tallies {
				if most, err := tl.Final.Add(left); err != nil || most.Cmp(info.Quorum.Quorum) >= 0 {
					stuck = false
				}
			}
			if stuck {
				out = append(out, Deadlock{Node: i, Account: cf.AccountAddress, Previous: cf.PreviousHash, Finals: finals})
			}
		}
	}
	return out, nil
}
