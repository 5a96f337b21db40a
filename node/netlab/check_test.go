package netlab

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
)

// snap builds a snapshot of node from chains written as "a:h1+,h2" (account
// a, block h1 confirmed, then h2 unconfirmed), one account per string;
// names are single characters turned into addresses and hashes.
func snap(node int, chains ...string) Snapshot {
	s := Snapshot{Node: node, Frontiers: map[ledger.Address]ledger.Hash{},
		Balances: map[ledger.Address]map[string]string{}, Chains: map[ledger.Address][]ChainBlock{}}
	for _, c := range chains {
		name, blocks, _ := strings.Cut(c, ":")
		a := addr(name)
		for _, b := range strings.Split(blocks, ",") {
			confirmed := strings.HasSuffix(b, "+")
			h := hash(strings.TrimSuffix(b, "+"))
			s.Chains[a] = append(s.Chains[a], ChainBlock{Hash: h, Confirmed: confirmed})
			s.Frontiers[a] = h
		}
		s.Balances[a] = map[string]string{"native": "1"}
	}
	return s
}

// addr is the address named by one character.
func addr(name string) ledger.Address { return ledger.Address{name[0]} }

// hash is the hash named by one character.
func hash(name string) ledger.Hash { return ledger.Hash{name[0]} }

func TestConflictingConfirmations(t *testing.T) {
	tests := []struct {
		name  string
		snaps []Snapshot
		want  []string // "account height hash:[nodes] hash:[nodes]"
	}{
		{"identical", []Snapshot{snap(0, "a:1+,2+"), snap(1, "a:1+,2+")}, nil},
		{"fork, one side confirmed", []Snapshot{snap(0, "a:1+,2+"), snap(1, "a:1+,3")}, nil},
		{"fork, neither confirmed", []Snapshot{snap(0, "a:1+,2"), snap(1, "a:1+,3")}, nil},
		{"fork, both sides confirmed", []Snapshot{snap(0, "a:1+,2+"), snap(1, "a:1+,3+"), snap(2, "a:1+,3+")},
			[]string{"a 2 2:[0] 3:[1 2]"}},
		{"one node over time", []Snapshot{snap(3, "a:1+,2+"), snap(3, "a:1+,3+,4")}, []string{"a 2 2:[3] 3:[3]"}},
		{"other account unaffected", []Snapshot{snap(0, "a:1+", "b:5+,6+"), snap(1, "a:1+", "b:5+,7+")},
			[]string{"b 2 6:[0] 7:[1]"}},
		{"first block", []Snapshot{snap(0, "a:1+"), snap(1, "a:9+")}, []string{"a 1 1:[0] 9:[1]"}},
		{"an unreachable node counts for nothing", []Snapshot{snap(0, "a:1+"), {Node: 1, Err: errors.New("down")}}, nil},
	}
	for _, tt := range tests {
		var got []string
		for _, c := range ConflictingConfirmations(tt.snaps) {
			s := fmt.Sprintf("%c %d", c.Account[0], c.Height)
			for _, h := range slices.SortedFunc(maps.Keys(c.Blocks), compareHash) {
				s += fmt.Sprintf(" %c:%v", h[0], c.Blocks[h])
			}
			got = append(got, s)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: conflicts %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDiff(t *testing.T) {
	rich := snap(1, "a:1+,2+")
	rich.Balances[addr("a")] = map[string]string{"native": "2"}
	tests := []struct {
		name  string
		snaps []Snapshot
		want  []string // kinds, in order
	}{
		{"identical", []Snapshot{snap(0, "a:1+,2+", "b:3"), snap(1, "a:1+,2+", "b:3")}, nil},
		{"one snapshot", []Snapshot{snap(0, "a:1+")}, nil},
		{"frontier", []Snapshot{snap(0, "a:1+,2"), snap(1, "a:1+")}, []string{"frontier"}},
		{"missing account", []Snapshot{snap(0, "a:1+", "b:2+"), snap(1, "a:1+")}, []string{"frontier", "balance"}},
		{"balance", []Snapshot{snap(0, "a:1+,2+"), rich}, []string{"balance"}},
		{"confirmation", []Snapshot{snap(0, "a:1+,2+"), snap(1, "a:1+,2")}, []string{"confirmation"}},
		{"fork", []Snapshot{snap(0, "a:1+,2"), snap(1, "a:1+,3")}, []string{"frontier"}},
		{"unreachable", []Snapshot{snap(0, "a:1+"), {Node: 1, Err: errors.New("down")}, snap(2, "a:1+")}, []string{"unreachable"}},
	}
	for _, tt := range tests {
		var got []string
		for _, d := range Diff(tt.snaps) {
			got = append(got, d.Kind)
			if d.String() == "" {
				t.Errorf("%s: empty description of %+v", tt.name, d)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: differences %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestUnconfirmed(t *testing.T) {
	got := Unconfirmed([]Snapshot{snap(0, "a:1+,2", "b:3+"), snap(1, "a:1+,2+", "b:3+,4")})
	var s []string
	for _, d := range got {
		s = append(s, string(rune(d.Account[0]))+" "+d.Values[0])
	}
	if want := []string{"a node0", "b node1"}; !slices.Equal(s, want) {
		t.Errorf("unconfirmed %q, want %q", s, want)
	}
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{[]time.Duration{5}, 99, 5},
		{[]time.Duration{3, 1, 2}, 50, 2},
		{[]time.Duration{1, 2, 3, 4}, 50, 2},
		{[]time.Duration{1, 2, 3, 4}, 99, 4},
		{[]time.Duration{1, 2, 3, 4}, 100, 4},
	}
	for _, tt := range tests {
		if got := Percentile(tt.in, tt.p); got != tt.want {
			t.Errorf("Percentile(%v, %g) = %d, want %d", tt.in, tt.p, got, tt.want)
		}
	}
}

func TestLatencyFigure(t *testing.T) {
	sent := []Sent{{Confirmed: true, Latency: 100 * time.Millisecond}, {Confirmed: true, Latency: 300 * time.Millisecond},
		{Latency: 10 * time.Second}, {Err: errors.New("refused")}}
	want := "figure: healthy p50=100ms p99=300ms max=300ms n=2 unconfirmed=1 failed=1"
	if got := LatencyFigure("healthy", sent); got != want {
		t.Errorf("LatencyFigure = %q, want %q", got, want)
	}
}
