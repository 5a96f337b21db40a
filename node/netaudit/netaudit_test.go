package netaudit

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/latticenet/lattice/ledger"
)

func addr(n byte) ledger.Address { return ledger.Address{n} }
func hash(n byte) ledger.Hash    { return ledger.Hash{n} }

// chain returns an account whose chain holds the blocks named by hs, the
// first confirmed of them confirmed, with a native balance.
func chain(confirmed int, native uint64, hs ...byte) Account {
	a := Account{BlockCount: uint64(len(hs)), Confirmed: uint64(confirmed),
		Balances: map[ledger.Asset]ledger.Amount{ledger.Native: ledger.NewAmount(native)}}
	for _, h := range hs {
		a.Chain = append(a.Chain, hash(h))
	}
	if len(hs) > 0 {
		a.Frontier = hash(hs[len(hs)-1])
	}
	return a
}

// node returns a snapshot of the node named name holding accts.
func node(name string, accts map[ledger.Address]Account) Snapshot {
	return Snapshot{Node: name, Accounts: accts}
}

func TestCompare(t *testing.T) {
	A, B := addr(0xa), addr(0xb)
	h := func(n byte) string { return hash(n).String() }
	stable := chain(2, 5, 1, 2)
	stable.Balances[ledger.Stable] = ledger.NewAmount(7)
	zeroStable := chain(2, 5, 1, 2)
	zeroStable.Balances[ledger.Stable] = ledger.Amount{}
	for _, tt := range []struct {
		name     string
		snaps    []Snapshot
		accounts int
		want     []string
	}{
		{
			name: "state chains: one node behind, one halted",
			snaps: []Snapshot{
				withState(node("n1", map[ledger.Address]Account{A: chain(2, 5, 1, 2)}), 3, 7, false),
				withState(node("n2", map[ledger.Address]Account{A: chain(2, 5, 1, 2)}), 2, 6, false),
				withState(node("n3", map[ledger.Address]Account{A: chain(2, 5, 1, 2)}), 3, 7, true),
			},
			accounts: 1,
			want: []string{
				"statechain_halted: running on n1, n2; halted on n3",
				"statechain_tip: index 3 " + h(7) + " on n1, n3; index 2 " + h(6) + " on n2",
			},
		},
		{
			name: "state chains that agree, and a node that serves none",
			snaps: []Snapshot{
				withState(node("n1", map[ledger.Address]Account{A: chain(2, 5, 1, 2)}), 3, 7, false),
				withState(node("n2", map[ledger.Address]Account{A: chain(2, 5, 1, 2)}), 3, 7, false),
				node("n3", map[ledger.Address]Account{A: chain(2, 5, 1, 2)}),
			},
			accounts: 1,
		},
		{
			name: "agreeing and confirmed",
			snaps: []Snapshot{
				node("n1", map[ledger.Address]Account{A: chain(2, 5, 1, 2), B: chain(1, 3, 9)}),
				node("n2", map[ledger.Address]Account{A: chain(2, 5, 1, 2), B: chain(1, 3, 9)}),
			},
			accounts: 2,
		},
		{
			name: "a zero balance left out is a zero balance",
			snaps: []Snapshot{
				node("n1", map[ledger.Address]Account{A: chain(2, 5, 1, 2)}),
				node("n2", map[ledger.Address]Account{A: zeroStable}),
			},
			accounts: 1,
		},
		{
			name: "agreeing but unconfirmed everywhere",
			snaps: []Snapshot{
				node("n1", map[ledger.Address]Account{A: chain(1, 5, 1, 2)}),
				node("n2", map[ledger.Address]Account{A: chain(1, 5, 1, 2)}),
			},
			accounts: 1,
			want:     []string{"unconfirmed account " + A.String() + ": frontier confirmed to height 1 of 2 on n1, n2"},
		},
		{
			name: "confirmed blocks differ: a conflict, at the fork only",
			snaps: []Snapshot{
				node("n1", map[ledger.Address]Account{A: chain(3, 5, 1, 2, 3)}),
				node("n2", map[ledger.Address]Account{A: chain(3, 4, 1, 4, 5)}),
			},
			accounts: 1,
			want: []string{
				"CONFLICT account " + A.String() + " at height 2: " + h(2) + " on n1; " + h(4) + " on n2",
				"frontier account " + A.String() + ": " + h(3) + " on n1; " + h(5) + " on n2",
				"balance account " + A.String() + " native: 5 on n1; 4 on n2",
			},
		},
		{
			name: "a fork confirmed on one node only is no conflict",
			snaps: []Snapshot{
				node("n1", map[ledger.Address]Account{A: chain(2, 5, 1, 2)}),
				node("n2", map[ledger.Address]Account{A: chain(1, 5, 1, 4)}),
			},
			accounts: 1,
			want: []string{
				"frontier account " + A.String() + ": " + h(2) + " on n1; " + h(4) + " on n2",
				"confirmation_height account " + A.String() + ": 2 on n1; 1 on n2",
				"unconfirmed account " + A.String() + ": frontier confirmed to height 1 of 2 on n2",
			},
		},
		{
			name: "a node behind, grouped with the others by value",
			snaps: []Snapshot{
				node("n1", map[ledger.Address]Account{A: chain(3, 5, 1, 2, 3)}),
				node("n2", map[ledger.Address]Account{A: chain(2, 6, 1, 2)}),
				node("n3", map[ledger.Address]Account{A: chain(3, 5, 1, 2, 3)}),
			},
			accounts: 1,
			want: []string{
				"frontier account " + A.String() + ": " + h(3) + " on n1, n3; " + h(2) + " on n2",
				"block_count account " + A.String() + ": 3 on n1, n3; 2 on n2",
				"balance account " + A.String() + " native: 5 on n1, n3; 6 on n2",
				"confirmation_height account " + A.String() + ": 3 on n1, n3; 2 on n2",
			},
		},
		{
			name: "a balance of another asset",
			snaps: []Snapshot{
				node("n1", map[ledger.Address]Account{A: chain(2, 5, 1, 2)}),
				node("n2", map[ledger.Address]Account{A: stable}),
			},
			accounts: 1,
			want:     []string{"balance account " + A.String() + " stable: 0 on n1; 7 on n2"},
		},
		{
			name: "an account missing on a node",
			snaps: []Snapshot{
				node("n1", map[ledger.Address]Account{A: chain(1, 5, 1), B: chain(1, 3, 9)}),
				node("n2", map[ledger.Address]Account{A: chain(1, 5, 1)}),
				node("n3", map[ledger.Address]Account{A: chain(1, 5, 1), B: chain(1, 3, 9)}),
			},
			accounts: 2,
			want:     []string{"missing account " + B.String() + ": present on n1, n3; missing on n2"},
		},
		{
			name: "an unreachable node is left out of the comparison",
			snaps: []Snapshot{
				node("n1", map[ledger.Address]Account{A: chain(1, 5, 1)}),
				{Node: "n2", Err: errors.New("connection refused"), Accounts: map[ledger.Address]Account{B: chain(1, 3, 9)}},
				node("n3", map[ledger.Address]Account{A: chain(1, 5, 1)}),
			},
			accounts: 1,
			want:     []string{"unreachable n2: connection refused"},
		},
		{
			name: "worst kind first, then by account",
			snaps: []Snapshot{
				node("n1", map[ledger.Address]Account{A: chain(1, 5, 1), B: chain(2, 3, 9, 8)}),
				node("n2", map[ledger.Address]Account{A: chain(0, 5, 1), B: chain(2, 3, 9, 7)}),
			},
			accounts: 2,
			want: []string{
				"CONFLICT account " + B.String() + " at height 2: " + h(8) + " on n1; " + h(7) + " on n2",
				"frontier account " + B.String() + ": " + h(8) + " on n1; " + h(7) + " on n2",
				"confirmation_height account " + A.String() + ": 1 on n1; 0 on n2",
				"unconfirmed account " + A.String() + ": frontier confirmed to height 0 of 1 on n2",
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := Compare(tt.snaps)
			var got []string
			for _, d := range r.Diffs {
				got = append(got, d.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Compare: got differences\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if r.Accounts != tt.accounts {
				t.Errorf("Compare: got %d accounts, want %d", r.Accounts, tt.accounts)
			}
			if got, want := r.OK(), len(tt.want) == 0; got != want {
				t.Errorf("OK() = %v, want %v", got, want)
			}
			if got, want := len(r.Nodes), len(tt.snaps); got != want {
				t.Errorf("Compare: got %d nodes, want %d", got, want)
			}
		})
	}
}

func TestReportCounts(t *testing.T) {
	r := Report{Diffs: []Diff{{Kind: Frontier}, {Kind: Conflict}, {Kind: Frontier}, {Kind: Unreachable}}}
	if got, want := r.Counts(), "1 unreachable, 1 conflict, 2 frontier"; got != want {
		t.Errorf("Counts() = %q, want %q", got, want)
	}
	if got := (Report{}).Counts(); got != "" {
		t.Errorf("Counts() of no differences = %q, want \"\"", got)
	}
}

// TestDiffJSON: the machine-readable form names the asset and height only
// where they apply, and no account for an unreachable node.
func TestDiffJSON(t *testing.T) {
	for _, tt := range []struct {
		d    Diff
		want string
	}{
		{Diff{Kind: Unreachable, Values: []Value{{"refused", []string{"n1"}}}},
			`{"kind":"unreachable","values":[{"value":"refused","nodes":["n1"]}]}`},
		{Diff{Kind: Balance, Account: addr(1), Asset: ledger.Stable, Values: []Value{{"1", []string{"n1"}}, {"2", []string{"n2"}}}},
			`{"kind":"balance","account":"` + addr(1).String() + `","asset":"stable","values":[{"value":"1","nodes":["n1"]},{"value":"2","nodes":["n2"]}]}`},
		{Diff{Kind: Conflict, Account: addr(1), Height: 3, Values: []Value{}},
			`{"kind":"conflict","account":"` + addr(1).String() + `","height":3,"values":[]}`},
	} {
		data, err := json.Marshal(tt.d)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != tt.want {
			t.Errorf("json.Marshal(%s diff) = %s, want %s", tt.d.Kind, data, tt.want)
		}
	}
}

func withState(s Snapshot, index uint64, tip byte, halted bool) Snapshot {
	s.State = &StateChain{Index: index, Tip: hash(tip), Halted: halted}
	return s
}
