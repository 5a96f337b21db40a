// Package netaudit compares what several running ledger nodes hold and
// names every difference: the network-wide counterpart of ledger.Audit,
// which checks one stopped node's ledger.
//
// Compare is pure: it takes one Snapshot per node and returns what
// differs. Fetch takes the Snapshots from running nodes through their HTTP
// APIs.
package netaudit

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/latticenet/lattice/ledger"
)

// Snapshot is what one node holds, as its API showed it.
type Snapshot struct {
	// Node names the node in differences: its API's URL.
	Node string
	// Err, when not nil, is why the node could not be read; Compare then
	// reports the node Unreachable and ignores its Accounts.
	Err error
	// Accounts holds every account the node has; an account it lacks is
	// absent.
	Accounts map[ledger.Address]Account
	// State is the node's governance state chain, nil when it serves
	// none.
	State *StateChain
}

// StateChain is what a node holds of the governance state chain.
type StateChain struct {
	Index  uint64
	Tip    ledger.Hash
	Halted bool // an unresolved conflict halts it
}

// Account is one account on one node.
type Account struct {
	Frontier   ledger.Hash
	BlockCount uint64
	// Balances may leave out zero balances.
	Balances map[ledger.Asset]ledger.Amount
	// Chain holds the account's block hashes, oldest first: Chain[h-1] is
	// the block at height h.
	Chain []ledger.Hash
	// Confirmed is the confirmation height: the node has confirmed the
	// blocks at heights 1 to Confirmed, which are final.
	Confirmed uint64
}

// Kind says what differs. The kinds are listed worst first.
type Kind string

// The kinds of differences, worst first.
const (
	// Unreachable: a node could not be read (Diff.Values holds the error).
	Unreachable Kind = "unreachable"
	// Conflict: nodes hold different confirmed blocks at the same height
	// of an account's chain. Confirmed means final and the same on every
	// node; a conflict means the network's safety is broken.
	Conflict Kind = "conflict"
	// StateHalted: nodes whose governance state chain is halted by two
	// blocks signed for one index (Diff.Values: "halted", "running").
	StateHalted Kind = "statechain_halted"
	// StateTip: nodes hold different state-chain tips ("index N hash H"):
	// behind, or, at one index, on two sides of a conflict.
	StateTip Kind = "statechain_tip"
	// Missing: some nodes lack an account that others have.
	Missing Kind = "missing"
	// Frontier: nodes hold different latest blocks of an account.
	Frontier Kind = "frontier"
	// BlockCount: nodes hold chains of different lengths.
	BlockCount Kind = "block_count"
	// Balance: nodes hold different balances of one asset.
	Balance Kind = "balance"
	// ConfirmationHeight: nodes have confirmed an account's chain to
	// different heights.
	ConfirmationHeight Kind = "confirmation_height"
	// Unconfirmed: an account's frontier is not confirmed yet on some
	// nodes (Diff.Values lists only those).
	Unconfirmed Kind = "unconfirmed"
)

// kinds orders the kinds, worst first.
var kinds = []Kind{Unreachable, Conflict, StateHalted, StateTip, Missing, Frontier, BlockCount, Balance, ConfirmationHeight, Unconfirmed}

// The Values of a Missing difference.
const (
	Present = "present"
	Absent  = "missing"
)

// Diff is one difference: what differs, where, and the nodes grouped by
// the value each holds.
type Diff struct {
	Kind Kind `json:"kind"`
	// Account is the account that differs; zero for Unreachable.
	Account ledger.Address `json:"account,omitzero"`
	// Asset is the asset of a Balance difference; zero otherwise.
	Asset ledger.Asset `json:"asset,omitzero"`
	// Height is, for a Conflict, the lowest height of the account's chain
	// where confirmed blocks differ (the heights above it follow the fork,
	// and are not reported again).
	Height uint64 `json:"height,omitzero"`
	// Values groups the nodes by the value they hold, each value once, in
	// the order of the first node that holds it.
	Values []Value `json:"values"`
}

// Value is a value some nodes hold: a hash, a count or a balance in base
// units, as the API writes it; for Missing, Present or Absent; for
// Unreachable, the error; for Unconfirmed, "C of N" (the confirmation
// height and the block count).
type Value struct {
	Value string   `json:"value"`
	Nodes []string `json:"nodes"`
}

// String formats d on one line: its kind (CONFLICT in capitals), the
// account, and each value with the nodes that hold it.
func (d Diff) String() string {
	var b strings.Builder
	if d.Kind == Conflict {
		b.WriteString("CONFLICT")
	} else {
		b.WriteString(string(d.Kind))
	}
	if d.Kind == Unreachable || d.Kind == StateHalted || d.Kind == StateTip {
		for i, v := range d.Values {
			sep := "; "
			if i == 0 {
				sep = ": "
			}
			if d.Kind == Unreachable {
				sep = " "
			}
			if d.Kind == Unreachable {
				fmt.Fprintf(&b, "%s%s: %s", sep, strings.Join(v.Nodes, ", "), v.Value)
			} else {
				fmt.Fprintf(&b, "%s%s on %s", sep, v.Value, strings.Join(v.Nodes, ", "))
			}
		}
		return b.String()
	}
	fmt.Fprintf(&b, " account %s", d.Account)
	switch d.Kind {
	case Balance:
		fmt.Fprintf(&b, " %s", d.Asset)
	case Conflict:
		fmt.Fprintf(&b, " at height %d", d.Height)
	case Unconfirmed:
		b.WriteString(": frontier confirmed to height")
	}
	for i, v := range d.Values {
		sep := "; "
		if i == 0 {
			sep = ": "
			if d.Kind == Unconfirmed {
				sep = " "
			}
		}
		fmt.Fprintf(&b, "%s%s on %s", sep, v.Value, strings.Join(v.Nodes, ", "))
	}
	return b.String()
}

// Report is what Compare found.
type Report struct {
	// Nodes names every node, in the order given.
	Nodes []string `json:"nodes"`
	// Accounts counts the accounts that any readable node has.
	Accounts int `json:"accounts"`
	// Diffs lists the differences, worst kind first, then by account.
	Diffs []Diff `json:"differences"`
}

// OK reports whether every node was read, they all agree, and every
// frontier is confirmed on every node.
func (r Report) OK() bool { return len(r.Diffs) == 0 }

// Counts returns how many differences of each kind r holds, worst first,
// as "1 conflict, 2 frontier", or "" when r is OK.
func (r Report) Counts() string {
	n := map[Kind]int{}
	for _, d := range r.Diffs {
		n[d.Kind]++
	}
	var parts []string
	for _, k := range kinds {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
		}
	}
	return strings.Join(parts, ", ")
}

// Compare compares the snapshots of a network's nodes and returns every
// difference. Nodes that could not be read are reported Unreachable and
// left out of the other comparisons; an account is compared among the
// nodes that have it.
func Compare(snaps []Snapshot) Report {
	r := Report{Diffs: []Diff{}}
	var ok []Snapshot
	for _, s := range snaps {
		r.Nodes = append(r.Nodes, s.Node)
		if s.Err != nil {
			r.Diffs = append(r.Diffs, Diff{Kind: Unreachable, Values: []Value{{Value: s.Err.Error(), Nodes: []string{s.Node}}}})
			continue
		}
		ok = append(ok, s)
	}
	seen := map[ledger.Address]bool{}
	var accounts []ledger.Address
	for _, s := range ok {
		for a := range s.Accounts {
			if !seen[a] {
				seen[a] = true
				accounts = append(accounts, a)
			}
		}
	}
	slices.SortFunc(accounts, func(a, b ledger.Address) int { return bytes.Compare(a[:], b[:]) })
	r.Accounts = len(accounts)
	for _, a := range accounts {
		r.Diffs = append(r.Diffs, compareAccount(a, ok)...)
	}
	r.Diffs = append(r.Diffs, compareState(ok)...)
	rank := func(k Kind) int { return slices.Index(kinds, k) }
	slices.SortStableFunc(r.Diffs, func(x, y Diff) int { return cmp.Compare(rank(x.Kind), rank(y.Kind)) })
	return r
}

// holding is one node's copy of an account.
type holding struct {
	node string
	acct Account
}

// compareAccount returns the differences of account a among snaps, in
// the order of kinds (Compare's stable sort keeps the account order
// within each kind).
func compareAccount(a ledger.Address, snaps []Snapshot) []Diff {
	var have []holding
	var missing group
	for _, s := range snaps {
		if acct, ok := s.Accounts[a]; ok {
			have = append(have, holding{s.Node, acct})
		} else {
			missing.add(Absent, s.Node)
		}
	}
	var out []Diff
	if h := conflictHeight(have); h > 0 {
		var g group
		for _, x := range have {
			if x.acct.Confirmed >= h && uint64(len(x.acct.Chain)) >= h {
				g.add(x.acct.Chain[h-1].String(), x.node)
			}
		}
		out = append(out, Diff{Kind: Conflict, Account: a, Height: h, Values: g.values})
	}
	if len(missing.values) > 0 {
		var present group
		for _, x := range have {
			present.add(Present, x.node)
		}
		out = append(out, Diff{Kind: Missing, Account: a, Values: append(present.values, missing.values...)})
	}
	differ := func(k Kind, value func(Account) string) {
		var g group
		for _, x := range have {
			g.add(value(x.acct), x.node)
		}
		if len(g.values) > 1 {
			out = append(out, Diff{Kind: k, Account: a, Values: g.values})
		}
	}
	differ(Frontier, func(x Account) string { return x.Frontier.String() })
	differ(BlockCount, func(x Account) string { return strconv.FormatUint(x.BlockCount, 10) })
	for _, asset := range ledger.Assets {
		var g group
		for _, x := range have {
			g.add(x.acct.Balances[asset].String(), x.node)
		}
		if len(g.values) > 1 {
			out = append(out, Diff{Kind: Balance, Account: a, Asset: asset, Values: g.values})
		}
	}
	differ(ConfirmationHeight, func(x Account) string { return strconv.FormatUint(x.Confirmed, 10) })
	var unconfirmed group
	for _, x := range have {
		if x.acct.Confirmed < x.acct.BlockCount {
			unconfirmed.add(fmt.Sprintf("%d of %d", x.acct.Confirmed, x.acct.BlockCount), x.node)
		}
	}
	if len(unconfirmed.values) > 0 {
		out = append(out, Diff{Kind: Unconfirmed, Account: a, Values: unconfirmed.values})
	}
	return out
}

// conflictHeight returns the lowest height at which two of have hold
// different confirmed blocks, or 0.
func conflictHeight(have []holding) uint64 {
	var top uint64
	for _, x := range have {
		top = max(top, min(x.acct.Confirmed, uint64(len(x.acct.Chain))))
	}
	for h := uint64(1); h <= top; h++ {
		var first *ledger.Hash
		for _, x := range have {
			if x.acct.Confirmed < h || uint64(len(x.acct.Chain)) < h {
				continue
			}
			if first == nil {
				first = &x.acct.Chain[h-1]
			} else if *first != x.acct.Chain[h-1] {
				return h
			}
		}
	}
	return 0
}

// group gathers nodes by value, in the order values first appear.
type group struct{ values []Value }

func (g *group) add(value, node string) {
	for i := range g.values {
		if g.values[i].Value == value {
			g.values[i].Nodes = append(g.values[i].Nodes, node)
			return
		}
	}
	g.values = append(g.values, Value{Value: value, Nodes: []string{node}})
}

// compareState returns the differences of the nodes' state chains, among
// the nodes that serve one.
func compareState(snaps []Snapshot) []Diff {
	var tips, halted group
	haltedSeen := false
	for _, s := range snaps {
		if s.State == nil {
			continue
		}
		tips.add(fmt.Sprintf("index %d %s", s.State.Index, s.State.Tip), s.Node)
		state := "running"
		if s.State.Halted {
			state, haltedSeen = "halted", true
		}
		halted.add(state, s.Node)
	}
	var out []Diff
	if haltedSeen {
		out = append(out, Diff{Kind: StateHalted, Values: halted.values})
	}
	if len(tips.values) > 1 {
		out = append(out, Diff{Kind: StateTip, Values: tips.values})
	}
	return out
}
