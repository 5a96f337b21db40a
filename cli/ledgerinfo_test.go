package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/latticenet/lattice/node/nettest"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/wallet"
)

// TestLedgerCommands: lattice ledger reads what a real node holds, as
// tables and as the API's JSON, and refuses bad arguments as usage errors.
func TestLedgerCommands(t *testing.T) {
	cleanEnv(t)
	c := nettest.Start(t, nettest.Options{Nodes: 1})
	node := c.Nodes[0].API.URL
	bob, carol := wallet.NewKey(), wallet.NewKey()
	open := c.Open(bob, 1_000_000)
	send := c.Must(c.Chains.Send(bob, carol.Address(), 250_000)) // carol never receives it
	c.Submit(0, send)

	ledgerRun := func(args ...string) result {
		return mustRun(t, append(append([]string{"ledger"}, args...), "--node", node)...)
	}
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"info", []string{"info"}, []string{"network  nettest", "account  " + c.Nodes[0].N.Key.Address().String(), "peer     " + c.Nodes[0].Host.ID().String()}},
		{"pending of carol", []string{"pending", carol.Address().String()}, []string{"SEND", send.Hash.String(), bob.Address().String(), "0.25 native"}},
		{"pending of bob", []string{"pending", bob.Address().String()}, []string{"no pending sends"}},
		{"frontiers", []string{"frontiers"}, []string{"ACCOUNT", bob.Address().String() + "  " + send.Hash.String(), c.Genesis.Address().String()}},
		{"conflicts", []string{"conflicts"}, []string{"no conflicts"}},
		{"recent", []string{"recent", "--limit", "2"}, []string{"TYPE", "send", send.Hash.String(), "receive", open.Hash.String()}},
	} {
		out := ledgerRun(tt.args...).stdout
		for _, want := range tt.want {
			if !strings.Contains(out, want) {
				t.Errorf("ledger %s: output lacks %q:\n%s", tt.name, want, out)
			}
		}
	}
	if n := strings.Count(ledgerRun("recent", "--limit", "2").stdout, "\n"); n != 3 {
		t.Errorf("ledger recent --limit 2: %d lines, want a header and 2 rows", n)
	}
	var ps []nodewire.PendingSend
	if err := json.Unmarshal([]byte(ledgerRun("pending", "--json").stdout), &ps); err != nil || len(ps) != 1 || ps[0].SendHash != send.Hash {
		t.Errorf("ledger pending --json: got %+v (%v), want the one send", ps, err)
	}

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"a bad address", []string{"pending", "bob"}, "ADDRESS \"bob\""},
		{"two addresses", []string{"conflicts", bob.Address().String(), carol.Address().String()}, "unexpected argument"},
		{"an argument to frontiers", []string{"frontiers", "x"}, "unexpected argument"},
		{"a limit of 0", []string{"recent", "--limit", "0"}, "--limit 0: want 1 to 1000"},
		{"an unknown command", []string{"blocks"}, "unknown command \"blocks\""},
	} {
		wantFail(t, run(t, append(append([]string{"ledger"}, tt.args...), "--node", node)...), 2, tt.want)
	}
	r := run(t, "ledger", "-h")
	if r.code != 0 || !strings.Contains(r.stdout, "pending [ADDRESS]") {
		t.Errorf("ledger -h: exit %d, stdout %q; want 0 and the commands", r.code, r.stdout)
	}
}
