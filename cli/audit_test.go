package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/wallet"
)

// TestAuditNetwork: lattice audit --nodes reads real nodes through their
// APIs. A network whose nodes agree passes. Two networks that share a
// genesis, each side of a partition confirming its own send from the
// genesis account (as if both had a quorum), fail with the conflict and
// everything else that differs; a node that stopped is named unreachable.
func TestAuditNetwork(t *testing.T) {
	cleanEnv(t)
	c := nettest.Start(t, nettest.Options{Nodes: 2})
	c.Open(wallet.NewKey(), 1_000_000)
	both := c.Nodes[0].API.URL + "," + c.Nodes[1].API.URL
	// The genesis account, node 1's and the new one.
	if got, want := mustRun(t, "audit", "--nodes", both).stdout, "network OK: 2 nodes agree on 3 accounts\n"; got != want {
		t.Errorf("audit of an agreeing network printed %q, want %q", got, want)
	}
	var rep struct {
		OK          bool              `json:"ok"`
		Nodes       []string          `json:"nodes"`
		Accounts    int               `json:"accounts"`
		Differences []json.RawMessage `json:"differences"`
	}
	decode(t, mustRun(t, "audit", "--nodes", both, "--json"), &rep)
	if !rep.OK || len(rep.Nodes) != 2 || rep.Accounts != 3 || len(rep.Differences) != 0 {
		t.Errorf("audit --json of an agreeing network = %+v, want ok, 2 nodes, 3 accounts, no differences", rep)
	}

	a := nettest.Start(t, nettest.Options{Nodes: 1})
	b := nettest.Start(t, nettest.Options{Nodes: 1, GenesisOf: a})
	aURL, bURL := a.Nodes[0].API.URL, b.Nodes[0].API.URL
	pair := aURL + "," + bURL
	if got, want := mustRun(t, "audit", "--nodes", pair).stdout, "network OK: 2 nodes agree on 1 account\n"; got != want {
		t.Fatalf("audit of two networks at their shared genesis printed %q, want %q", got, want)
	}
	carol, dave := wallet.NewKey(), wallet.NewKey()
	toCarol := a.Must(a.Chains.Send(a.Genesis, carol.Address(), 1_000))
	a.Chains.Add(carol, nil)
	open := a.Must(a.Chains.Receive(carol, toCarol, ledger.Address{}))
	a.Submit(0, toCarol, open)
	a.WaitConfirmed(open.Hash, 10*time.Second)
	toDave := b.Must(b.Chains.Send(b.Genesis, dave.Address(), 2_000))
	b.Submit(0, toDave)
	b.WaitConfirmed(toDave.Hash, 10*time.Second)

	r := run(t, "audit", "--nodes", pair)
	wantFail(t, r, 1, "lattice audit: network differs: 4 differences among 2 nodes on 2 accounts: 1 conflict, 1 missing, 1 frontier, 1 balance")
	g := a.Genesis.Address()
	for _, want := range []string{
		"CONFLICT account " + g.String() + " at height 2: " + toCarol.Hash.String() + " on " + aURL + "; " + toDave.Hash.String() + " on " + bURL + "\n",
		"missing account " + carol.Address().String() + ": present on " + aURL + "; missing on " + bURL + "\n",
		"frontier account " + g.String() + ": " + toCarol.Hash.String() + " on " + aURL + "; " + toDave.Hash.String() + " on " + bURL + "\n",
		"balance account " + g.String() + " native: ",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("audit of a partitioned network: output lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.HasPrefix(r.stdout, "CONFLICT ") {
		t.Errorf("audit of a partitioned network: the conflict is not first:\n%s", r.stdout)
	}

	r = run(t, "audit", "--nodes", pair, "--json")
	var diverged struct {
		OK          bool `json:"ok"`
		Differences []struct {
			Kind    string `json:"kind"`
			Account string `json:"account"`
			Height  uint64 `json:"height"`
			Values  []struct {
				Value string   `json:"value"`
				Nodes []string `json:"nodes"`
			} `json:"values"`
		} `json:"differences"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &diverged); err != nil {
		t.Fatalf("audit --json: %v\n%s", err, r.stdout)
	}
	if d := diverged.Differences; r.code != 1 || diverged.OK || len(d) != 4 || d[0].Kind != "conflict" || d[0].Account != g.String() ||
		d[0].Height != 2 || len(d[0].Values) != 2 || d[0].Values[1].Value != toDave.Hash.String() || d[0].Values[1].Nodes[0] != bURL {
		t.Errorf("audit --json of a partitioned network: exit %d, %+v; want 1, not ok, the conflict first", r.code, diverged)
	}
	var jerr struct {
		Error      string `json:"error"`
		ExitStatus int    `json:"exit_status"`
	}
	if err := json.Unmarshal([]byte(r.stderr), &jerr); err != nil || jerr.ExitStatus != 1 || !strings.Contains(jerr.Error, "1 conflict") {
		t.Errorf("audit --json: stderr %q, want the JSON error with exit status 1", r.stderr)
	}

	b.Stop(0)
	r = run(t, "audit", "--nodes", pair, "--timeout", "20s")
	wantFail(t, r, 1, "1 unreachable")
	if want := "unreachable " + bURL + ": GET /frontiers: "; !strings.HasPrefix(r.stdout, want) {
		t.Errorf("audit with a stopped node printed %q, want it to start with %q", r.stdout, want)
	}
	if strings.Contains(r.stdout, "CONFLICT") {
		t.Errorf("audit with a stopped node compared it still:\n%s", r.stdout)
	}
}

// TestAuditUsage: the two modes do not mix, and --nodes wants two or more
// distinct URLs; each mistake is a usage error.
func TestAuditUsage(t *testing.T) {
	cleanEnv(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", "http://127.0.0.1:1"}, "two or more nodes"},
		{[]string{"--nodes", ""}, "two or more nodes"},
		{[]string{"--nodes", "http://127.0.0.1:1,127.0.0.1:1"}, "http://127.0.0.1:1 is named twice"},
		{[]string{"--nodes", "http://127.0.0.1:1", "http://127.0.0.1:2"}, "comma-separated, without spaces"},
		{[]string{"--nodes", "http://127.0.0.1:1,ftp://x"}, `"ftp://x" is not a node's API URL`},
		{[]string{"--nodes", "http://127.0.0.1:1,http://127.0.0.1:2", "--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"--nodes", "http://127.0.0.1:1,http://127.0.0.1:2", "--data", t.TempDir()}, "give one of them"},
		{[]string{"--timeout", "1s", "--data", t.TempDir()}, "--timeout bounds a network audit"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			wantFail(t, run(t, append([]string{"audit"}, tt.args...)...), 2, tt.want)
		})
	}
}

// TestAuditNetworkTimeout: --timeout bounds the whole audit; nodes that
// never answer are named unreachable, and the summary says why.
func TestAuditNetworkTimeout(t *testing.T) {
	cleanEnv(t)
	var urls []string
	for range 2 {
		hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		t.Cleanup(hang.Close)
		urls = append(urls, hang.URL)
	}
	start := time.Now()
	r := run(t, "audit", "--nodes", strings.Join(urls, ","), "--timeout", "200ms")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("audit with --timeout 200ms took %s", took)
	}
	wantFail(t, r, 1, "2 unreachable", "(--timeout 200ms passed before every node was read)")
	for _, u := range urls {
		if want := "unreachable " + u + ": GET /frontiers: context deadline exceeded\n"; !strings.Contains(r.stdout, want) {
			t.Errorf("audit of nodes that never answer: output lacks %q:\n%s", want, r.stdout)
		}
	}
}
