package chatnet_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/wallet"
)

// TestDirectoryConflict: one account registered at two nodes at once, each
// pointing to the node it was submitted to, ends with the same
// registration on every node: the later one, or of two stamped alike the
// one with the greater digest (directory.Newer).
func TestDirectoryConflict(t *testing.T) {
	c := nettest.Start(t, nettest.Options{Nodes: 3})
	for _, tc := range []struct {
		name string
		dt   int64 // node 2's timestamp minus node 0's
	}{
		{"node 2's is later", 1},
		{"node 0's is later", -1},
		{"same timestamp", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := wallet.NewKey()
			ts := time.Now().UnixMilli()
			regs := [2]*directory.Registration{
				{NodePeer: c.Nodes[0].Host.ID().String(), Timestamp: ts},
				{NodePeer: c.Nodes[2].Host.ID().String(), Timestamp: ts + tc.dt},
			}
			for _, r := range regs {
				r.Sign(k.Private())
			}
			want := regs[0]
			if directory.Newer(regs[1], regs[0]) {
				want = regs[1]
			}
			var errs [2]error
			var wg sync.WaitGroup
			for i, via := range []int{0, 2} {
				wg.Go(func() { errs[i] = c.Nodes[via].Chat.Register(context.Background(), regs[i]) })
			}
			wg.Wait()
			for i, via := range []int{0, 2} {
				// The loser may be refused when the winner reached its
				// node first: that is the rule, not a failure.
				if err := errs[i]; err != nil && (regs[i] == want || !errors.Is(err, directory.ErrInvalid)) {
					t.Fatalf("register at node %d: %v", via, err)
				}
			}
			waitRegistered(t, c, want)
			// And it stays: no node flips back.
			time.Sleep(300 * time.Millisecond)
			for i, nd := range c.Nodes {
				if r, _, err := nd.Chat.Lookup(k.Address()); err != nil || r.Hash() != want.Hash() {
					t.Errorf("node %d: got registration %+v (%v), want %+v", i, r, err, want)
				}
			}
		})
	}
}
