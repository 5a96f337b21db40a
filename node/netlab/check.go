package netlab

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodeclient"
)

// snapshotLimit bounds the reading of one node's snapshot.
const snapshotLimit = 30 * time.Second

// Snapshot is what one node's HTTP API said of its ledger: its frontiers
// (GET /frontiers), balances (GET /accounts) and, for every account, its
// chain with each block's confirmation (GET /accounts/{a}/chain). The
// reads are not atomic: a ledger that moves while they run can look
// inconsistent, which the checks read as a difference to wait out.
type Snapshot struct {
	Node  int       // the node's index
	Taken time.Time // when the reads began
	// Err is why the node could not be read; the rest is then empty.
	Err       error
	Frontiers map[ledger.Address]ledger.Hash       // GET /frontiers
	Balances  map[ledger.Address]map[string]string // by account, then asset (GET /accounts)
	Chains    map[ledger.Address][]ChainBlock      // every account's chain, oldest first
}

// ChainBlock is one block of a chain, oldest first in Snapshot.Chains.
type ChainBlock struct {
	Hash      ledger.Hash
	Confirmed bool // as the node answered: final once true
}

// TakeSnapshot reads node's ledger through client. A chain that prev (an
// earlier snapshot of the same node, or nil) held wholly confirmed, up to
// the frontier the node still reports, is taken from prev rather than
// read again: a chain is fixed by its frontier's hash, and confirmation
// is final.
func TakeSnapshot(ctx context.Context, node int, client *nodeclient.Client, prev *Snapshot) Snapshot {
	ctx, cancel := context.WithTimeout(ctx, snapshotLimit)
	defer cancel()
	s := Snapshot{Node: node, Taken: time.Now()}
	fail := func(err error) Snapshot {
		return Snapshot{Node: node, Taken: s.Taken, Err: err}
	}
	fr, err := client.Frontiers(ctx)
	if err != nil {
		return fail(fmt.Errorf("netlab: frontiers of node %d: %w", node, err))
	}
	accounts, err := client.Accounts(ctx)
	if err != nil {
		return fail(fmt.Errorf("netlab: accounts of node %d: %w", node, err))
	}
	s.Frontiers = fr
	s.Balances = make(map[ledger.Address]map[string]string, len(accounts))
	for _, a := range accounts {
		s.Balances[a.Address] = a.Balances
	}
	s.Chains = make(map[ledger.Address][]ChainBlock, len(fr))
	for a, h := range fr {
		if prev != nil && prev.Err == nil {
			if old := prev.Chains[a]; len(old) > 0 && old[len(old)-1].Hash == h && allConfirmed(old) {
				s.Chains[a] = old
				continue
			}
		}
		blocks, err := client.Chain(ctx, a)
		if err != nil {
			return fail(fmt.Errorf("netlab: chain of %s on node %d: %w", a, node, err))
		}
		chain := make([]ChainBlock, len(blocks))
		for k, b := range blocks {
			chain[k] = ChainBlock{Hash: b.Hash, Confirmed: b.Confirmed}
		}
		s.Chains[a] = chain
	}
	return s
}

// Snapshots reads the ledger of each node of nodes at once. prev, if not
// nil, holds earlier snapshots (of any nodes) to reuse confirmed chains
// from.
func (c *Cluster) Snapshots(ctx context.Context, nodes []int, prev []Snapshot) []Snapshot {
	out := make([]Snapshot, len(nodes))
	var wg sync.WaitGroup
	for k, i := range nodes {
		var p *Snapshot
		for j := range prev {
			if prev[j].Node == i {
				p = &prev[j]
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[k] = TakeSnapshot(ctx, i, c.Nodes[i].Client, p)
		}()
	}
	wg.Wait()
	return out
}

// Conflict is a place of a chain where nodes hold different confirmed
// blocks: a confirmed block is final, so two of them at one place mean the
// network confirmed both sides of a fork.
type Conflict struct {
	Account ledger.Address
	Height  int // 1 for an account's first block
	// Blocks are the confirmed blocks, each with the nodes seen holding it
	// confirmed.
	Blocks map[ledger.Hash][]int
}

// String describes c for a failure message.
func (c Conflict) String() string {
	var parts []string
	for _, h := range slices.SortedFunc(maps.Keys(c.Blocks), compareHash) {
		parts = append(parts, fmt.Sprintf("%s confirmed on nodes %v", short(h), c.Blocks[h]))
	}
	return fmt.Sprintf("account %s height %d: %s", short(c.Account), c.Height, strings.Join(parts, ", "))
}

// confirmations records which confirmed block each node held at each
// place, over one or many snapshots.
type confirmations map[place]map[ledger.Hash][]int

type place struct {
	account ledger.Address
	height  int
}

// add records the confirmed blocks of s.
func (cs confirmations) add(s Snapshot) {
	for a, chain := range s.Chains {
		for k, b := range chain {
			if !b.Confirmed {
				continue
			}
			p := place{a, k + 1}
			m := cs[p]
			if m == nil {
				m = map[ledger.Hash][]int{}
				cs[p] = m
			}
			if !slices.Contains(m[b.Hash], s.Node) {
				m[b.Hash] = append(m[b.Hash], s.Node)
				slices.Sort(m[b.Hash])
			}
		}
	}
}

// conflicts returns the places holding more than one confirmed block, in
// order of account and height.
func (cs confirmations) conflicts() []Conflict {
	var out []Conflict
	for p, m := range cs {
		if len(m) > 1 {
			out = append(out, Conflict{Account: p.account, Height: p.height, Blocks: maps.Clone(m)})
		}
	}
	slices.SortFunc(out, func(a, b Conflict) int {
		if c := compareHash(ledger.Hash(a.Account), ledger.Hash(b.Account)); c != 0 {
			return c
		}
		return a.Height - b.Height
	})
	return out
}

// ConflictingConfirmations returns every place of a chain where two of the
// snapshots hold different confirmed blocks. It must always be empty,
// during a partition too. Snapshots of one node taken at different times
// count as well: a node that confirmed one block and later another at the
// same place rolled back a confirmed block.
func ConflictingConfirmations(snaps []Snapshot) []Conflict {
	cs := confirmations{}
	for _, s := range snaps {
		cs.add(s)
	}
	return cs.conflicts()
}

// Difference is one way in which nodes' snapshots disagree.
type Difference struct {
	// Account is the account concerned; zero for a node that could not be
	// read.
	Account ledger.Address
	// Kind is what differs: unreachable, frontier, balance, confirmation,
	// or unconfirmed (a frontier not confirmed yet, from Unconfirmed).
	Kind string
	// Detail says where, such as the block and height of a confirmation.
	Detail string
	// Values are what each node has, in the order of the snapshots.
	Values []string
}

// String describes d for a failure message.
func (d Difference) String() string {
	var b strings.Builder
	if !d.Account.IsZero() {
		fmt.Fprintf(&b, "account %s ", short(d.Account))
	}
	b.WriteString(d.Kind)
	if d.Detail != "" {
		fmt.Fprintf(&b, " (%s)", d.Detail)
	}
	b.WriteString(": ")
	b.WriteString(strings.Join(d.Values, " "))
	return b.String()
}

// Diff lists every difference between the snapshots: nodes that could not
// be read, and accounts whose frontier, balances, or confirmation of a
// block they share differ. Snapshots that agree give none.
func Diff(snaps []Snapshot) []Difference {
	var out []Difference
	var ok []Snapshot
	for _, s := range snaps {
		if s.Err != nil {
			out = append(out, Difference{Kind: "unreachable", Values: []string{fmt.Sprintf("node%d=%v", s.Node, s.Err)}})
			continue
		}
		ok = append(ok, s)
	}
	if len(ok) < 2 {
		return out
	}
	accounts := map[ledger.Address]bool{}
	for _, s := range ok {
		for a := range s.Frontiers {
			accounts[a] = true
		}
	}
	values := func(f func(s Snapshot) string) ([]string, bool) {
		var vs []string
		same := true
		for k, s := range ok {
			v := f(s)
			vs = append(vs, fmt.Sprintf("node%d=%s", s.Node, v))
			if k > 0 && v != f(ok[0]) {
				same = false
			}
		}
		return vs, same
	}
	for _, a := range slices.SortedFunc(maps.Keys(accounts), compareAddress) {
		if vs, same := values(func(s Snapshot) string {
			if h, ok := s.Frontiers[a]; ok {
				return short(h)
			}
			return "(none)"
		}); !same {
			out = append(out, Difference{Account: a, Kind: "frontier", Values: vs})
		}
		if vs, same := values(func(s Snapshot) string { return formatBalances(s.Balances[a]) }); !same {
			out = append(out, Difference{Account: a, Kind: "balance", Values: vs})
		}
		// Confirmation of the blocks the nodes share, place by place.
		confirmedOn := map[ledger.Hash]map[int]bool{}
		height := map[ledger.Hash]int{}
		for _, s := range ok {
			for k, b := range s.Chains[a] {
				if confirmedOn[b.Hash] == nil {
					confirmedOn[b.Hash] = map[int]bool{}
				}
				confirmedOn[b.Hash][s.Node] = b.Confirmed
				height[b.Hash] = k + 1
			}
		}
		for _, h := range slices.SortedFunc(maps.Keys(confirmedOn), func(x, y ledger.Hash) int { return height[x] - height[y] }) {
			on := confirmedOn[h]
			if len(on) < 2 {
				continue // held by one node only: the frontier differs already
			}
			var vs []string
			yes, no := 0, 0
			for _, s := range ok {
				c, held := on[s.Node]
				switch {
				case !held:
					vs = append(vs, fmt.Sprintf("node%d=absent", s.Node))
				case c:
					yes++
					vs = append(vs, fmt.Sprintf("node%d=confirmed", s.Node))
				default:
					no++
					vs = append(vs, fmt.Sprintf("node%d=unconfirmed", s.Node))
				}
			}
			if yes > 0 && no > 0 {
				out = append(out, Difference{Account: a, Kind: "confirmation",
					Detail: fmt.Sprintf("block %s at height %d", short(h), height[h]), Values: vs})
			}
		}
	}
	return out
}

// Unconfirmed lists the frontiers that are not confirmed, node by node.
func Unconfirmed(snaps []Snapshot) []Difference {
	var out []Difference
	for _, s := range snaps {
		for _, a := range slices.SortedFunc(maps.Keys(s.Chains), compareAddress) {
			chain := s.Chains[a]
			if len(chain) > 0 && !chain[len(chain)-1].Confirmed {
				out = append(out, Difference{Account: a, Kind: "unconfirmed",
					Detail: fmt.Sprintf("frontier %s at height %d", short(chain[len(chain)-1].Hash), len(chain)),
					Values: []string{fmt.Sprintf("node%d", s.Node)}})
			}
		}
	}
	return out
}

// WaitOneLedger polls the running nodes until they all hold the same
// ledger (Diff finds nothing) with every frontier confirmed, and returns
// how long that took. Unreachable nodes are polled again. Once bound has
// passed it fails, naming the differences of the last round of reads
// (which may end up to one snapshot's limit after bound); it fails at
// once when ctx ends. Once it sees conflicting confirmations, which only
// a rollback of a confirmed block could undo, it waits at most
// conflictGrace more.
func (c *Cluster) WaitOneLedger(ctx context.Context, bound time.Duration) (time.Duration, error) {
	const conflictGrace = 15 * time.Second
	began := time.Now()
	deadline := began.Add(bound)
	seen := confirmations{}
	var snaps []Snapshot
	for {
		snaps = c.Snapshots(ctx, c.Running(), snaps)
		for _, s := range snaps {
			seen.add(s)
		}
		if len(seen.conflicts()) > 0 && time.Until(deadline) > conflictGrace {
			deadline = time.Now().Add(conflictGrace)
		}
		diffs := append(Diff(snaps), Unconfirmed(snaps)...)
		if len(diffs) == 0 && len(snaps) > 0 {
			return time.Since(began), nil
		}
		if ctx.Err() != nil {
			return time.Since(began), fmt.Errorf("netlab: waiting for one ledger: %w", ctx.Err())
		}
		if time.Now().After(deadline) {
			const most = 20
			var lines []string
			for k, d := range diffs {
				if k == most {
					lines = append(lines, fmt.Sprintf("... and %d more", len(diffs)-most))
					break
				}
				lines = append(lines, d.String())
			}
			for _, cf := range seen.conflicts() {
				lines = append(lines, "conflicting confirmations: "+cf.String())
			}
			return time.Since(began), fmt.Errorf("netlab: no single confirmed ledger on nodes %v after %s; %d differences:\n  %s",
				c.Running(), time.Since(began).Round(time.Second), len(diffs), strings.Join(lines, "\n  "))
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

func allConfirmed(chain []ChainBlock) bool {
	for _, b := range chain {
		if !b.Confirmed {
			return false
		}
	}
	return true
}

func formatBalances(m map[string]string) string {
	if m == nil {
		return "(none)"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+":"+m[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// short abbreviates a hash or address for messages.
func short[T ledger.Hash | ledger.Address](h T) string {
	s := fmt.Sprintf("%x", h[:])
	return s[:12]
}

func compareHash(a, b ledger.Hash) int {
	return strings.Compare(string(a[:]), string(b[:]))
}

func compareAddress(a, b ledger.Address) int {
	return strings.Compare(string(a[:]), string(b[:]))
}
