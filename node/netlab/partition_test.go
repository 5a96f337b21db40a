package netlab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/wallet"
)

// testSet is how hard the scenarios push: the short set runs under plain
// `go test` in a few minutes, with a short online window; the full set
// (LATTICE_PARTITION=full) keeps the nodes' default window and holds every
// cut past it.
type testSet struct {
	name string
	// window is the nodes' --online-window; 0 keeps their default.
	window time.Duration
	// hold is how long a cut lasts: past the online window (three of
	// them in the short set, whose window is short).
	hold time.Duration
	// forks are made in each partition scenario, half at the cut and half
	// once the online window has run out; impairForks under impairment.
	forks, impairForks int
	// flapFor is how long a link flaps, down for flapDown and up for
	// flapUp in turn.
	flapFor, flapDown, flapUp time.Duration
	// sends are measured for each latency figure.
	sends int
	// oneLedger bounds the time from the heal to one confirmed ledger.
	oneLedger time.Duration
	// majority bounds the confirmation of a send on a side holding at
	// least 67% of the weight, cut off from the rest.
	majority time.Duration
	// sample is the interval of the background conflict check.
	sample time.Duration
}

var testSets = map[string]testSet{
	"short": {name: "short", window: 3 * time.Second, hold: 10 * time.Second, forks: 4, impairForks: 20,
		flapFor: 20 * time.Second, flapDown: 2 * time.Second, flapUp: 3 * time.Second,
		sends: 10, oneLedger: 60 * time.Second, majority: 10 * time.Second, sample: time.Second},
	"full": {name: "full", hold: 6 * time.Minute, forks: 10, impairForks: 60,
		flapFor: 3 * time.Minute, flapDown: 4 * time.Second, flapUp: 6 * time.Second,
		sends: 50, oneLedger: 60 * time.Second, majority: 10 * time.Second, sample: 3 * time.Second},
}

// currentSet returns the set LATTICE_PARTITION names (default short), and
// skips scenario tests under -short: they start real nodes.
func currentSet(t *testing.T) testSet {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real nodes; runs without -short")
	}
	name := os.Getenv("LATTICE_PARTITION")
	if name == "" || name == "figures" {
		name = "short"
	}
	s, ok := testSets[name]
	if !ok {
		t.Fatalf("LATTICE_PARTITION=%q: want short, full or figures", name)
	}
	return s
}

// startScenario starts a cluster for set with users spare accounts and a
// background conflict check, and says when the hold does not outlast the
// nodes' online window (a binary without --online-window).
func startScenario(t *testing.T, set testSet, shares []int, users int) (*Cluster, *Watch) {
	t.Helper()
	c := StartCluster(t, ClusterOptions{Shares: shares, Users: users, OnlineWindow: set.window})
	if w := c.OnlineWindow(); set.hold <= w {
		t.Logf("netlab: NOTE the hold of %s does not outlast the online window (%s): this run checks safety within the window only", set.hold, w)
	}
	return c, c.Watch(set.sample)
}

// cutScenario is a partition held past the protocol's timeouts, with forks
// across it and ordinary sends on every side, then healed.
type cutScenario struct {
	name   string
	shares []int   // nil: equal
	groups [][]int // the sides
	// majority is the side holding at least 67% of the weight, whose sends
	// must keep confirming within seconds; -1 for none.
	majority int
	// kill is a node killed with SIGKILL during the cut and restarted
	// after the heal; -1 for none. Never the first node of its side,
	// where the side's load submits.
	kill int
}

var cutScenarios = []cutScenario{
	{name: "cut-3-2", groups: [][]int{{0, 1, 2}, {3, 4}}, majority: -1, kill: -1},
	{name: "cut-2-2-1", groups: [][]int{{0, 1}, {2, 3}, {4}}, majority: -1, kill: -1},
	{name: "cut-4-1", groups: [][]int{{0, 1, 2, 3}, {4}}, majority: 0, kill: -1},
	{name: "cut-3-2-weighted-70", shares: []int{30, 20, 20, 15, 15}, groups: [][]int{{0, 1, 2}, {3, 4}}, majority: 0, kill: -1},
	{name: "cut-3-2-kill", groups: [][]int{{0, 1, 2}, {3, 4}}, majority: -1, kill: 1},
}

// TestPartition runs every cut scenario. After each, no two nodes ever
// held different confirmed blocks at one place (checked throughout), the
// nodes hold one confirmed ledger within the set's bound, and the network
// audit passes.
func TestPartition(t *testing.T) {
	set := currentSet(t)
	for _, sc := range cutScenarios {
		t.Run(sc.name, func(t *testing.T) { runCut(t, set, sc) })
	}
}

func runCut(t *testing.T, set testSet, sc cutScenario) {
	// Users: the forks, then one load account per side.
	c, w := startScenario(t, set, sc.shares, set.forks+len(sc.groups))
	ctx := context.Background()
	forkers, loaders := c.Users[:set.forks], c.Users[set.forks:]

	healthy := c.MeasureSends(ctx, LoadOptions{From: loaders[0], Node: 0, Watch: c.All()}, set.sends)
	t.Log(LatencyFigure("confirm-healthy/"+sc.name, healthy))

	c.Lab.Partition(sc.groups...)
	cut := time.Now()
	var loads []*Load
	for g, side := range sc.groups {
		wait := 5 * time.Second
		if g == sc.majority {
			wait = set.majority
		}
		// The node killed during the cut confirms nothing: the side's
		// sends are watched on the others.
		watch := slices.DeleteFunc(slices.Clone(side), func(n int) bool { return n == sc.kill })
		loads = append(loads, c.StartLoad(LoadOptions{From: loaders[g], Node: side[0], Watch: watch, MaxWait: wait}))
	}
	var forks []*Fork
	made := 0
	makeForks := func(from []wallet.Key) {
		for _, k := range from {
			made++
			f, err := c.Fork(ctx, k, forkNodes(sc.groups, made-1, c.Running())...)
			if err != nil {
				t.Errorf("fork %d: %v", made-1, err)
				continue
			}
			forks = append(forks, f)
		}
	}
	makeForks(forkers[:len(forkers)/2])
	if sc.kill >= 0 {
		sleep(ctx, set.hold/3)
		kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := c.Kill(kctx, sc.kill); err != nil {
			t.Error(err)
		}
		cancel()
	}
	// The second half of the forks starts its elections once the online
	// window has run out (half-way between its end and the heal), when
	// the hold outlasts it.
	second := set.hold * 2 / 3
	if win := c.OnlineWindow(); win < set.hold {
		second = win + (set.hold-win)/2
	}
	sleep(ctx, time.Until(cut.Add(second)))
	makeForks(forkers[len(forkers)/2:])
	sleep(ctx, time.Until(cut.Add(set.hold)))
	for g, l := range loads {
		sent := l.Stop()
		t.Log(LatencyFigure(fmt.Sprintf("confirm-side-%d/%s", g, sc.name), sent))
		if g == sc.majority {
			checkMajority(t, sc.groups[g], sent, set.majority)
		}
	}

	c.Lab.Heal()
	if sc.kill >= 0 {
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		if err := c.StartNode(sctx, sc.kill); err != nil {
			t.Error(err)
		}
		cancel()
	}
	settle(t, c, w, set, sc.name, forks)
}

// forkNodes picks the node of each side that gets its contender of fork
// number f, turning through the side's running nodes.
func forkNodes(groups [][]int, f int, running []int) []int {
	var nodes []int
	for _, side := range groups {
		up := slices.DeleteFunc(slices.Clone(side), func(n int) bool { return !slices.Contains(running, n) })
		if len(up) > 0 {
			nodes = append(nodes, up[f%len(up)])
		}
	}
	return nodes
}

// checkMajority fails t unless the side's sends kept being confirmed on
// all its nodes within bound.
func checkMajority(t *testing.T, side []int, sent []Sent, bound time.Duration) {
	t.Helper()
	confirmed := 0
	for _, s := range sent {
		switch {
		case s.Err != nil:
			t.Errorf("majority side %v: a send was refused: %v", side, s.Err)
		case !s.Confirmed:
			t.Errorf("majority side %v: send %s, submitted at %s, not confirmed within %s", side, s.Hash, s.At.Format("15:04:05.000"), bound)
		default:
			confirmed++
		}
	}
	if confirmed < 3 {
		t.Errorf("majority side %v: %d sends confirmed during the cut, want at least 3", side, confirmed)
	}
}

// settle checks the end of a scenario: one confirmed ledger within the
// set's bound (the time it took is a figure), no conflicting confirmation
// ever, which contender of each fork won, and the network audit.
func settle(t *testing.T, c *Cluster, w *Watch, set testSet, name string, forks []*Fork) {
	t.Helper()
	ctx := context.Background()
	d, err := c.WaitOneLedger(ctx, set.oneLedger)
	if err != nil {
		t.Logf("figure: one-ledger-after-heal/%s t=never bound=%s", name, set.oneLedger)
		t.Error(err)
		if keep := os.Getenv("LATTICE_NETLAB_KEEP"); keep != "" {
			// The nodes' data and logs outlive the test for reading.
			dst := filepath.Join(keep, strings.ReplaceAll(t.Name(), "/", "_"))
			for i, src := range []string{c.dir, c.Lab.logDir} {
				if out, err := exec.Command("cp", "-r", src, fmt.Sprintf("%s-%d", dst, i)).CombinedOutput(); err != nil {
					t.Logf("keeping the nodes' files: %v %s", err, out)
				}
			}
			t.Logf("the nodes' data and logs are kept in %s-0 and -1", dst)
		}
	} else {
		t.Log(DurationFigure("one-ledger-after-heal/"+name, d))
	}
	w.Sample(ctx)
	w.Close()
	samples, unreached := w.Samples()
	conflicts := w.Conflicts()
	t.Logf("conflict check: %d samples (%d node reads failed), %d conflicting confirmations", samples, unreached, len(conflicts))
	for _, cf := range conflicts {
		t.Errorf("conflicting confirmations: %s", cf)
	}
	wins := map[int]int{}
	for _, f := range forks {
		k, err := c.Winner(ctx, f, 0)
		if err != nil {
			t.Error(err)
		}
		wins[k]++
	}
	if len(forks) > 0 {
		t.Logf("forks: %d; won by contender (index of its node in the fork, -1 none confirmed on node 0): %v", len(forks), wins)
	}
	audit(t, c)
	t.Logf("switch: %s", c.Lab.Stats())
}

// audit runs the network audit, when the binary has it.
func audit(t *testing.T, c *Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := c.Audit(ctx)
	switch {
	case errors.Is(err, ErrNoNetworkAudit):
		t.Log("netlab: NOTE lattice audit has no --nodes yet: the network audit was skipped")
	case err != nil:
		t.Error(err)
	default:
		t.Logf("lattice audit --nodes: %s", out)
	}
}

// TestFlappingLink takes one node's link down and up in turn, with a fork
// between it and another node each time it comes back.
func TestFlappingLink(t *testing.T) {
	set := currentSet(t)
	const flapper = 4
	rounds := int(set.flapFor / (set.flapDown + set.flapUp))
	c, w := startScenario(t, set, nil, rounds)
	ctx := context.Background()
	var forks []*Fork
	for r := range rounds {
		if err := c.Lab.SetLinkUp(ctx, flapper, false); err != nil {
			t.Fatal(err)
		}
		sleep(ctx, set.flapDown)
		if err := c.Lab.SetLinkUp(ctx, flapper, true); err != nil {
			t.Fatal(err)
		}
		up := time.Now()
		f, err := c.Fork(ctx, c.Users[r], flapper, r%flapper)
		if err != nil {
			t.Logf("fork %d: %v", r, err) // the node may not have answered yet: not the network's fault
		} else {
			forks = append(forks, f)
		}
		sleep(ctx, time.Until(up.Add(set.flapUp)))
	}
	if len(forks) < rounds/2 {
		t.Errorf("only %d of %d forks could be made", len(forks), rounds)
	}
	settle(t, c, w, set, "flapping", forks)
}

// TestImpairedForks makes dozens of forks, contenders on two nodes each,
// on links of 100 ms ± 20 ms, with and without loss.
func TestImpairedForks(t *testing.T) {
	set := currentSet(t)
	for _, tt := range []struct {
		name string
		loss float64
	}{
		{"delay-100ms", 0},
		{"delay-100ms-loss-5pct", 0.05},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, w := startScenario(t, set, nil, set.impairForks+1)
			ctx := context.Background()
			c.Lab.Impair(100*time.Millisecond, 20*time.Millisecond, tt.loss)
			sent := c.MeasureSends(ctx, LoadOptions{From: c.Users[set.impairForks], Node: 0, Watch: c.All(), MaxWait: 30 * time.Second}, set.sends)
			t.Log(LatencyFigure("confirm-impaired/"+tt.name, sent))
			var forks []*Fork
			receives := 0
			n := len(c.Nodes)
			for f := range set.impairForks {
				a := f % n
				b := (a + 1 + (f/n)%(n-1)) % n
				fk, err := c.Fork(ctx, c.Users[f], a, b)
				if err != nil {
					t.Errorf("fork %d: %v", f, err)
					continue
				}
				forks = append(forks, fk)
				// Each contender received at once where it was submitted:
				// a final vote for a receive would confirm its send, so
				// none may be cast before the send is settled.
				receives += len(c.ReceiveAll(ctx, fk))
			}
			t.Logf("receives of undecided contenders accepted: %d", receives)
			settle(t, c, w, set, tt.name, forks)
			c.Lab.ClearImpairment()
		})
	}
}
