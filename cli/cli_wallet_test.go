package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodewire"
)

// balanceJSON is the output of `balance --json`.
type balanceJSON struct {
	Address  string            `json:"address"`
	Balances map[string]string `json:"balances"`
	Pending  []struct {
		SendHash    string `json:"send_hash"`
		Source      string `json:"source"`
		Destination string `json:"destination"`
		Amount      string `json:"amount"`
		Asset       string `json:"asset"`
	} `json:"pending"`
}

// balanceText is the output of `balance` without --json.
type balanceText struct {
	account string
	units   map[string]string // asset name -> amount in units
	pending []string          // "1.5 native from ADDRESS"
	hint    string            // the line after the pending receipts
}

func parseBalance(t *testing.T, out string) balanceText {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "account ") {
		t.Fatalf("balance output %q: want an account line and one line per asset", out)
	}
	b := balanceText{account: strings.TrimPrefix(lines[0], "account "), units: map[string]string{}}
	for _, l := range lines[1:3] {
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("balance line %q: want AMOUNT ASSET", l)
		}
		b.units[f[1]] = f[0]
	}
	if len(lines) == 3 {
		return b
	}
	var n int
	if _, err := fmt.Sscanf(lines[3], "%d pending receipt(s):", &n); err != nil {
		t.Fatalf("balance line %q: want the pending count (%v)", lines[3], err)
	}
	if len(lines) != 4+n+1 {
		t.Fatalf("balance output %q: want %d pending lines and a hint", out, n)
	}
	for _, l := range lines[4 : 4+n] {
		b.pending = append(b.pending, strings.TrimPrefix(l, "  "))
	}
	b.hint = lines[4+n]
	return b
}

// blockOf decodes the one block a --json command printed.
func blockOf(t *testing.T, r result) *ledger.Block {
	t.Helper()
	var nb nodewire.Block
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&nb); err != nil || nb.Block == nil {
		t.Fatalf("decode block from %q: %v", r.stdout, err)
	}
	b := nb.Block
	if b.ComputeHash() != b.Hash {
		t.Errorf("printed block's hash %s does not match its contents", b.Hash)
	}
	return b
}

// rawFields decodes JSON output into generic values, to check the wire
// form of fields.
func rawFields(t *testing.T, r result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("decode %q: %v", r.stdout, err)
	}
	return m
}

var blockLine = regexp.MustCompile(`(?m)^block ([0-9a-f]{64})$`)

// printedBlock returns the block hash a text-mode command printed.
func printedBlock(t *testing.T, r result) string {
	t.Helper()
	m := blockLine.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("output %q has no `block HASH` line", r.stdout)
	}
	return m[1]
}

func TestBalance(t *testing.T) {
	tn := newTestNode(t)
	gaddr := tn.genesis.Address().String()

	b := parseBalance(t, tn.mustAs(tn.gkey, "balance").stdout)
	if b.account != gaddr || b.units["native"] != genesisUnits || b.units["stable"] != "0" || b.pending != nil {
		t.Errorf("own balance = %+v, want %s native, 0 stable, nothing pending for %s", b, genesisUnits, gaddr)
	}
	var bj balanceJSON
	decode(t, tn.mustAs(tn.gkey, "balance", "--json"), &bj)
	if bj.Address != gaddr || len(bj.Balances) != 1 || bj.Balances["native"] != "1000000000" || bj.Pending == nil || len(bj.Pending) != 0 {
		t.Errorf("own balance --json = %+v, want native 1000000000 base units and pending []", bj)
	}

	// An account the ledger has never seen: zeros, and its pending
	// receipts once something is sent to it.
	_, x := tn.newKey("x")
	b = parseBalance(t, tn.mustAs(tn.gkey, "balance", x).stdout)
	if b.account != x || b.units["native"] != "0" || b.units["stable"] != "0" || b.pending != nil {
		t.Errorf("balance of unknown %s = %+v, want zeros", x, b)
	}
	bj = balanceJSON{}
	decode(t, tn.mustAs(tn.gkey, "balance", "--json", x), &bj)
	if bj.Address != x || len(bj.Balances) != 0 || bj.Balances == nil || len(bj.Pending) != 0 {
		t.Errorf("balance --json of unknown = %+v, want {} balances", bj)
	}
	send := tn.mustAs(tn.gkey, "send", "--to", x, "--amount", "1.5")
	sendHash := printedBlock(t, send)
	b = parseBalance(t, tn.mustAs(tn.gkey, "balance", x).stdout)
	if want := []string{"1.5 native from " + gaddr}; b.units["native"] != "0" || len(b.pending) != 1 || b.pending[0] != want[0] {
		t.Errorf("balance of %s after a send = %+v, want 0 native and pending %q", x, b, want)
	}
	// Someone else's receipts are theirs to take, not ours.
	if want := "the account's owner takes them with `lattice receive` and their key"; b.hint != want {
		t.Errorf("hint for another's account = %q, want %q", b.hint, want)
	}
	xkey := filepath.Join(tn.keys, "x.json")
	if b := parseBalance(t, tn.mustAs(xkey, "balance").stdout); b.hint != "run `lattice receive` to take them" {
		t.Errorf("hint for one's own account = %q, want run `lattice receive`", b.hint)
	}
	bj = balanceJSON{}
	decode(t, tn.mustAs(tn.gkey, "balance", "--json", x), &bj)
	if len(bj.Pending) != 1 {
		t.Fatalf("balance --json pending = %+v, want one", bj.Pending)
	}
	p := bj.Pending[0]
	if p.SendHash != sendHash || p.Source != gaddr || p.Destination != x || p.Amount != "1500000" || p.Asset != "native" {
		t.Errorf("pending = %+v, want send %s of 1500000 native from %s to %s", p, sendHash, gaddr, x)
	}

	// The key file is not needed when an ADDRESS is given.
	missing := filepath.Join(t.TempDir(), "none.json")
	if b := parseBalance(t, tn.mustAs(missing, "balance", gaddr).stdout); b.units["native"] != "998.5" {
		t.Errorf("balance ADDRESS with no key file = %+v, want 998.5 native", b)
	}
}

func TestClaim(t *testing.T) {
	tn := newTestNode(t)
	r := tn.mustAs(tn.gkey, "claim")
	if got, want := strings.Split(r.stdout, "\n")[0], "claimed 100 stable; stable balance 100"; got != want {
		t.Errorf("claim printed %q, want %q", got, want)
	}
	h := printedBlock(t, r)
	blk := blockOf(t, tn.mustAs(tn.gkey, "block", "--json", h))
	if blk.Type != ledger.TypeClaim || blk.Account != tn.genesis.Address() || blk.Amount != ledger.NewAmount(ledger.FaucetAmount) {
		t.Errorf("claim block = %+v", blk)
	}
	wantFail(t, tn.as(tn.gkey, "claim"), 1, "one claim a day", "the next is allowed at 20", " UTC (in 2")
	if b := parseBalance(t, tn.mustAs(tn.gkey, "balance").stdout); b.units["stable"] != "100" {
		t.Errorf("stable after a refused second claim = %s, want 100", b.units["stable"])
	}

	// A brand-new account may claim as its first block; --json prints the
	// block.
	k, addr := tn.newKey("new")
	r = tn.mustAs(k, "claim", "--json")
	blk = blockOf(t, r)
	if blk.Type != ledger.TypeClaim || blk.Account.String() != addr || !blk.Previous.IsZero() || blk.Asset != ledger.Stable {
		t.Errorf("claim --json block = %+v, want the first block of %s", blk, addr)
	}
	m := rawFields(t, r)
	if m["amount"] != "100000000" || m["balance"] != "100000000" || m["asset"] != "stable" || m["type"] != "claim" {
		t.Errorf("claim --json fields = %v, want amount and balance \"100000000\" of stable", m)
	}
	wantFail(t, tn.as(k, "claim", "--json"), 1, "one claim a day")
}

func TestSendAndReceive(t *testing.T) {
	tn := newTestNode(t)
	gaddr := tn.genesis.Address().String()
	xkey, x := tn.newKey("x")

	r := tn.mustAs(tn.gkey, "send", "--to", x, "--amount", "1.5", "--asset", "native")
	if got, want := strings.Split(r.stdout, "\n")[0], "sent 1.5 native to "+x+"; native balance 998.5"; got != want {
		t.Errorf("send printed %q, want %q", got, want)
	}
	send1 := printedBlock(t, r)

	// --json prints the block as submitted; --remote-pow asks the node for
	// the work.
	r = tn.mustAs(tn.gkey, "send", "--json", "--remote-pow", "--to", x, "--amount", "0.000001")
	blk := blockOf(t, r)
	if blk.Type != ledger.TypeSend || blk.Destination.String() != x || blk.Amount != ledger.NewAmount(1) ||
		blk.Asset != ledger.Native || blk.Balance != ledger.NewAmount(998_499_999) {
		t.Errorf("send --json block = %+v", blk)
	}
	if !ledger.DevWork.Max().Met(blk.Hash, blk.PowNonce) {
		t.Errorf("--remote-pow nonce %d does not meet the network's highest threshold", blk.PowNonce)
	}
	m := rawFields(t, r)
	if m["amount"] != "1" || m["balance"] != "998499999" || m["asset"] != "native" || m["destination"] != x || m["previous"] != send1 {
		t.Errorf("send --json fields = %v", m)
	}
	send2 := blk.Hash.String()

	// Stable, after a claim.
	tn.mustAs(tn.gkey, "claim")
	r = tn.mustAs(tn.gkey, "send", "--to", x, "--amount", "0.25", "--asset", "stable")
	if got, want := strings.Split(r.stdout, "\n")[0], "sent 0.25 stable to "+x+"; stable balance 99.75"; got != want {
		t.Errorf("send stable printed %q, want %q", got, want)
	}
	send3 := printedBlock(t, r)

	b := parseBalance(t, tn.mustAs(tn.gkey, "balance").stdout)
	if b.units["native"] != "998.499999" || b.units["stable"] != "99.75" {
		t.Errorf("sender balance = %v, want 998.499999 native, 99.75 stable", b.units)
	}

	// receive takes every pending entry, one block each.
	r = tn.mustAs(xkey, "receive")
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("receive printed %q, want three lines", r.stdout)
	}
	got := map[string]bool{}
	re := regexp.MustCompile(`^received (\S+ \S+) from ([0-9a-f]{64}) \(block [0-9a-f]{64}\)$`)
	for _, l := range lines {
		m := re.FindStringSubmatch(l)
		if m == nil || m[2] != gaddr {
			t.Errorf("receive line %q: want `received AMOUNT ASSET from %s (block HASH)`", l, gaddr)
			continue
		}
		got[m[1]] = true
	}
	for _, want := range []string{"1.5 native", "0.000001 native", "0.25 stable"} {
		if !got[want] {
			t.Errorf("receive did not report %q: %q", want, r.stdout)
		}
	}
	b = parseBalance(t, tn.mustAs(xkey, "balance").stdout)
	if b.units["native"] != "1.500001" || b.units["stable"] != "0.25" || b.pending != nil {
		t.Errorf("receiver balance = %+v, want 1.500001 native, 0.25 stable, nothing pending", b)
	}
	if r := tn.mustAs(xkey, "receive"); r.stdout != "nothing pending\n" {
		t.Errorf("second receive printed %q, want \"nothing pending\"", r.stdout)
	}
	if r := tn.mustAs(xkey, "receive", "--json"); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("receive --json with nothing pending printed %q, want []", r.stdout)
	}

	// receive --json prints the blocks it made, and the chain holds them.
	tn.mustAs(tn.gkey, "send", "--to", x, "--amount", "2")
	r = tn.mustAs(xkey, "receive", "--json")
	var recv []*ledger.Block
	decode(t, r, &recv)
	if len(recv) != 1 || recv[0].Type != ledger.TypeReceive || recv[0].Amount != ledger.NewAmount(2_000_000) ||
		recv[0].Balance != ledger.NewAmount(3_500_001) {
		t.Errorf("receive --json = %+v, want one receive of 2000000 leaving 3500001", recv)
	}

	var chain []nodewire.Block
	decode(t, tn.mustAs(xkey, "chain", "--json"), &chain)
	if len(chain) != 4 {
		t.Fatalf("chain --json of %s has %d blocks, want 4", x, len(chain))
	}
	sources := map[string]bool{}
	for i, b := range chain {
		if b.Type != ledger.TypeReceive || b.Account.String() != x {
			t.Errorf("chain[%d] = %s of %s, want a receive of %s", i, b.Type, b.Account, x)
		}
		if i > 0 && b.Previous != chain[i-1].Hash {
			t.Errorf("chain[%d].previous = %s, want %s (oldest first)", i, b.Previous, chain[i-1].Hash)
		}
		sources[b.Source.String()] = true
	}
	for _, s := range []string{send1, send2, send3} {
		if !sources[s] {
			t.Errorf("no receive of send %s in the chain", s)
		}
	}
	if chain[3].Hash != recv[0].Hash {
		t.Errorf("last chain block %s, want the receive just made %s", chain[3].Hash, recv[0].Hash)
	}
}

func TestChain(t *testing.T) {
	tn := newTestNode(t)
	gaddr := tn.genesis.Address().String()
	_, x := tn.newKey("x")
	send := printedBlock(t, tn.mustAs(tn.gkey, "send", "--to", x, "--amount", "2.5"))
	claim := printedBlock(t, tn.mustAs(tn.gkey, "claim"))

	r := tn.mustAs(tn.gkey, "chain")
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("chain printed %q, want a header and three blocks", r.stdout)
	}
	if got, want := strings.Fields(lines[0]), []string{"#", "TYPE", "AMOUNT", "BALANCE", "TIME", "HASH", "CONFIRMED"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("chain header = %q, want %q", got, want)
	}
	want := [][]string{
		{"1", "receive", "+1000", "1000", "native", tn.gblock.Hash.String()},
		{"2", "send", "-2.5", "997.5", "native", send},
		{"3", "claim", "+100", "100", "stable", claim},
	}
	for i, w := range want {
		f := strings.Fields(lines[i+1])
		// # TYPE AMOUNT BALANCE ASSET DATE TIME HASH CONFIRMED
		if len(f) != 9 {
			t.Errorf("chain line %q: want 9 fields", lines[i+1])
			continue
		}
		got := []string{f[0], f[1], f[2], f[3], f[4], f[7]}
		if strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("chain line %d = %q, want %q", i+1, got, w)
		}
	}

	var chain []nodewire.Block
	decode(t, tn.mustAs(tn.gkey, "chain", "--json"), &chain)
	if len(chain) != 3 || chain[0].Hash != tn.gblock.Hash || chain[1].Hash.String() != send || chain[2].Hash.String() != claim {
		t.Errorf("chain --json = %+v, want genesis, send, claim", chain)
	}

	// Of an ADDRESS argument, without a key file.
	decode(t, tn.mustAs(filepath.Join(t.TempDir(), "none.json"), "chain", "--json", gaddr), &chain)
	if len(chain) != 3 {
		t.Errorf("chain --json ADDRESS has %d blocks, want 3", len(chain))
	}
}

func TestBlock(t *testing.T) {
	tn := newTestNode(t)
	_, x := tn.newKey("x")
	send := printedBlock(t, tn.mustAs(tn.gkey, "send", "--to", x, "--amount", "3"))

	r := tn.mustAs(tn.gkey, "block", "--json", send)
	b := blockOf(t, r)
	if b.Hash.String() != send || b.Type != ledger.TypeSend || b.Destination.String() != x ||
		b.Amount != ledger.NewAmount(3_000_000) || b.Previous != tn.gblock.Hash {
		t.Errorf("block --json = %+v", b)
	}
	m := rawFields(t, r)
	if m["hash"] != send || m["type"] != "send" || m["amount"] != "3000000" || m["balance"] != "997000000" {
		t.Errorf("block --json fields = %v", m)
	}
	// Text is for a person: units, the asset, a date, whether confirmed.
	text := tn.mustAs(tn.gkey, "block", send).stdout
	for _, want := range []string{`(?m)^block +` + send + `$`, `(?m)^type +send$`, `(?m)^to +` + x + `$`,
		`(?m)^amount +3 native$`, `(?m)^balance +997 native$`, `(?m)^time +20\d\d-\d\d-\d\d [0-9:.]+ UTC$`, `(?m)^confirmed +(yes|no)`} {
		if !regexp.MustCompile(want).MatchString(text) {
			t.Errorf("block text does not match %s:\n%s", want, text)
		}
	}
	if b := blockOf(t, tn.mustAs(tn.gkey, "block", "--json", tn.gblock.Hash.String())); b.Hash != tn.gblock.Hash || !ledger.IsGenesis(b) {
		t.Errorf("block GENESIS = %+v, want the genesis block", b)
	}

	unknown := strings.Repeat("ab", 32)
	wantFail(t, tn.as(tn.gkey, "block", unknown), 1, "not found", unknown)
}

// TestCommandLineEdges covers bugs found in review, kept as regression
// tests.
func TestCommandLineEdges(t *testing.T) {
	tn := newTestNode(t)
	gaddr := tn.genesis.Address().String()

	// Flags may follow the argument, as the usage lines show ("block HASH
	// [flags]").
	for _, args := range [][]string{
		{"block", tn.gblock.Hash.String(), "--node", tn.url},
		{"balance", gaddr, "--node", tn.url},
		{"chain", gaddr, "--node", tn.url},
	} {
		t.Run("flags after the argument: "+args[0], func(t *testing.T) {
			if r := run(t, args...); r.code != 0 {
				t.Errorf("`lattice %s %s ...` exits %d: %s", args[0], args[1][:8], r.code, strings.TrimSpace(r.stderr))
			}
		})
	}

	// Without a node, chain and block suggest `lattice dev` as the other
	// commands do.
	dead := deadURL(t)
	for _, args := range [][]string{{"chain", "--node", dead, gaddr}, {"block", "--node", dead, tn.gblock.Hash.String()}} {
		t.Run("no node hint: "+args[0], func(t *testing.T) {
			if r := run(t, args...); !strings.Contains(r.stderr, "lattice dev") {
				t.Errorf("`lattice %s` with no node does not suggest `lattice dev`: %s", args[0], strings.TrimSpace(r.stderr))
			}
		})
	}

	// A bad --account on the read commands is a usage error (exit 2) like
	// a bad ADDRESS.
	for _, cmd := range []string{"balance", "chain"} {
		t.Run("bad --account: "+cmd, func(t *testing.T) {
			if r := tn.as(tn.gkey, cmd, "--account", "nothex"); r.code != 2 {
				t.Errorf("`lattice %s --account nothex` exits %d, want 2: %s", cmd, r.code, strings.TrimSpace(r.stderr))
			}
		})
	}

	// A refused genesis new leaves no new key file behind.
	t.Run("refused genesis new writes nothing", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "genesis.json")
		mustRun(t, "genesis", "new", "--key", filepath.Join(dir, "k1.json"), "--network", "n", "--out", out)
		k2 := filepath.Join(dir, "k2.json")
		wantFail(t, run(t, "genesis", "new", "--key", k2, "--network", "n", "--out", out), 1, "not overwriting")
		if _, err := os.Stat(k2); err == nil {
			t.Errorf("a refused `genesis new` created its --key file %s", k2)
		}
	})

	// A number in the config file keeps its digits.
	t.Run("numbers in the config file", func(t *testing.T) {
		conf := filepath.Join(t.TempDir(), "c.json")
		if err := os.WriteFile(conf, []byte(`{"n": 12345678}`), 0o600); err != nil {
			t.Fatal(err)
		}
		f := newFlags(&env{stdout: io.Discard, stderr: io.Discard}, "test", "test")
		n := f.string("n", "", "n", "", "")
		f.string("config", "", "", "", "")
		if err := f.parse([]string{"--config", conf}); err != nil {
			t.Fatal(err)
		}
		if *n != "12345678" {
			t.Errorf("config value 12345678 reads as %q", *n)
		}
	})
}

func TestUsageErrors(t *testing.T) {
	tn := newTestNode(t)
	_, x := tn.newKey("x")
	tests := []struct {
		name string
		args []string // after the command and --node, --key
		cmd  string
		want string
	}{
		{"too many decimals", []string{"--to", x, "--amount", "1.0000001"}, "send", `--amount "1.0000001"`},
		{"negative amount", []string{"--to", x, "--amount", "-1"}, "send", `--amount "-1"`},
		{"not a number", []string{"--to", x, "--amount", "abc"}, "send", `--amount "abc"`},
		{"zero", []string{"--to", x, "--amount", "0"}, "send", `--amount "0"`},
		{"zero with decimals", []string{"--to", x, "--amount", "0.000000"}, "send", `--amount "0.000000"`},
		{"exponent", []string{"--to", x, "--amount", "1e3"}, "send", `--amount "1e3"`},
		{"no amount", []string{"--to", x}, "send", "--amount is required"},
		{"bad --to", []string{"--to", "nothex", "--amount", "1"}, "send", "--to"},
		{"short --to", []string{"--to", x[:62], "--amount", "1"}, "send", "--to"},
		{"no --to", []string{"--amount", "1"}, "send", "--to is required"},
		{"bad --asset", []string{"--to", x, "--amount", "1", "--asset", "gold"}, "send", "--asset"},
		{"unknown flag", []string{"--bogus"}, "send", "bogus"},
		{"bad --representative", []string{"--to", x, "--amount", "1", "--representative", "node-1"}, "send", "--representative"},
		{"bad --representative of a receive", []string{"--representative", x[:10]}, "receive", "--representative"},
		{"block without hash", nil, "block", "want one block HASH"},
		{"block with two hashes", []string{tn.gblock.Hash.String(), tn.gblock.Hash.String()}, "block", "want one block HASH"},
		{"block with bad hash", []string{"xyz"}, "block", "lattice block"},
		{"balance of two addresses", []string{x, x}, "balance", "at most one ADDRESS"},
		{"balance of a bad address", []string{"nothex"}, "balance", "lattice balance"},
		{"chain of a bad address", []string{"nothex"}, "chain", "lattice chain"},
		{"signers without account", []string{"--signers", tn.gkey}, "claim", "--signers needs --account"},
		{"account without signers", []string{"--account", x}, "claim", "--account needs --signers"},
		{"multisig without op", nil, "multisig", "multisig open"},
		{"multisig bad keys", []string{"--keys", "nothex", "--threshold", "1", "--signers", tn.gkey}, "multisig open", "--keys"},
		{"multisig threshold too high", []string{"--keys", x, "--threshold", "2", "--signers", tn.gkey}, "multisig open", "lattice multisig"},
		{"multisig threshold zero", []string{"--keys", x, "--threshold", "0", "--signers", tn.gkey}, "multisig open", "lattice multisig"},
		{"multisig without threshold", []string{"--keys", x, "--signers", tn.gkey}, "multisig open", "--threshold must be 1 to 1: how many of the keys must sign"},
		{"multisig without keys", []string{"--threshold", "1", "--signers", tn.gkey}, "multisig open", "--keys is required"},
		{"multisig key twice", []string{"--keys", x + "," + x, "--threshold", "2", "--signers", tn.gkey}, "multisig open", x + " is listed twice"},
		{"multisig update without account", []string{"--keys", x, "--threshold", "1", "--signers", tn.gkey}, "multisig update", "--account is required"},
		{"multisig without signers", []string{"--keys", x, "--threshold", "1"}, "multisig open", "--signers is required"},
		{"multisig open for another account", []string{"--keys", x, "--threshold", "1", "--signers", tn.gkey, "--account", tn.genesis.Address().String()}, "multisig open", "leave --account out"},
		{"genesis without op", nil, "genesis", "genesis new"},
		{"bench without op", nil, "bench", "bench ledger"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tn.as(tn.gkey, tt.cmd, tt.args...)
			wantFail(t, r, 2, tt.want)
			if !strings.Contains(r.stderr, "lattice "+strings.Fields(tt.cmd)[0]) {
				t.Errorf("stderr %q does not name the command", r.stderr)
			}
		})
	}
	// Commands without the client flags.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "ledger", "--accounts", "1"}, "--accounts"},
		{[]string{"bench", "ledger", "--blocks", "0"}, "--blocks"},
		{[]string{"audit", "--bogus"}, "bogus"},
		{[]string{"dev", "--bogus"}, "bogus"},
		{[]string{"node", "--bogus"}, "bogus"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			wantFail(t, run(t, tt.args...), 2, tt.want, "lattice "+tt.args[0])
		})
	}

	// Nothing was sent.
	if b := parseBalance(t, tn.mustAs(tn.gkey, "balance").stdout); b.units["native"] != genesisUnits {
		t.Errorf("balance after usage errors = %s, want %s", b.units["native"], genesisUnits)
	}
}

func TestNodeErrorsShown(t *testing.T) {
	tn := newTestNode(t)
	_, x := tn.newKey("x")

	t.Run("send more than the balance", func(t *testing.T) {
		r := tn.as(tn.gkey, "send", "--to", x, "--amount", "1000.000001")
		wantFail(t, r, 1, "balance", "1000")
		xk, _ := tn.newKey("poor")
		wantFail(t, tn.as(xk, "send", "--to", x, "--amount", "1"), 1, "balance is 0 native")
	})

	t.Run("node refuses a block", func(t *testing.T) {
		// The node, not the wallet, refuses a send to oneself.
		wantFail(t, tn.as(tn.gkey, "send", "--to", tn.genesis.Address().String(), "--amount", "1"), 1, "destination must differ")
	})

	dead := deadURL(t)
	for _, tt := range []struct {
		name string
		args []string // after the command, which is the first word of name
	}{
		{"balance", []string{"--key", tn.gkey}},
		{"balance ADDRESS", []string{"--key", tn.gkey, x}},
		{"claim", []string{"--key", tn.gkey}},
		{"send", []string{"--key", tn.gkey, "--to", x, "--amount", "1"}},
		{"receive", []string{"--key", tn.gkey}},
		{"multisig open", []string{"--keys", x, "--threshold", "1", "--signers", tn.gkey}},
	} {
		t.Run("no node: "+tt.name, func(t *testing.T) {
			cmd := strings.Fields(tt.name)[0]
			if cmd == "multisig" {
				cmd = "multisig open"
			}
			full := append(append(strings.Fields(cmd), "--node", dead), tt.args...)
			wantFail(t, run(t, full...), 1, "cannot reach the node at "+dead, "lattice dev")
		})
	}
	for _, args := range [][]string{
		{"chain", "--key", tn.gkey},
		{"block", tn.gblock.Hash.String()},
	} {
		t.Run("no node: "+args[0], func(t *testing.T) {
			wantFail(t, run(t, append([]string{args[0], "--node", dead}, args[1:]...)...), 1, dead)
		})
	}

	missing := filepath.Join(t.TempDir(), "none.json")
	for _, cmd := range []string{"claim", "send", "receive", "balance", "chain"} {
		t.Run("missing key: "+cmd, func(t *testing.T) {
			var args []string
			if cmd == "send" {
				args = []string{"--to", x, "--amount", "1"}
			}
			wantFail(t, tn.as(missing, cmd, args...), 1, "lattice key new")
		})
	}

	t.Run("key file readable by others", func(t *testing.T) {
		k, _ := tn.newKey("open")
		if err := os.Chmod(k, 0o640); err != nil {
			t.Fatal(err)
		}
		wantFail(t, tn.as(k, "claim"), 1, "chmod 600")
	})
}

func TestClientEnv(t *testing.T) {
	tn := newTestNode(t)
	gaddr := tn.genesis.Address().String()
	xkey, x := tn.newKey("x")

	// LATTICE_NODE and LATTICE_KEY alone are enough.
	t.Setenv("LATTICE_NODE", tn.url)
	t.Setenv("LATTICE_KEY", tn.gkey)
	var bj balanceJSON
	decode(t, mustRun(t, "balance", "--json"), &bj)
	if bj.Address != gaddr {
		t.Errorf("balance with LATTICE_KEY = %s, want %s", bj.Address, gaddr)
	}
	mustRun(t, "send", "--to", x, "--amount", "1")

	// --key beats LATTICE_KEY.
	bj = balanceJSON{}
	decode(t, mustRun(t, "balance", "--json", "--key", xkey), &bj)
	if bj.Address != x || len(bj.Pending) != 1 {
		t.Errorf("balance --key with LATTICE_KEY set = %+v, want %s with one pending", bj, x)
	}

	// --node beats LATTICE_NODE.
	t.Setenv("LATTICE_NODE", deadURL(t))
	mustRun(t, "balance", "--node", tn.url)
	wantFail(t, run(t, "balance"), 1, "cannot reach the node")
	t.Setenv("LATTICE_NODE", tn.url)
	wantFail(t, run(t, "balance", "--node", deadURL(t)), 1, "cannot reach the node")

	// The defaults: $HOME/.lattice/key.json.
	t.Setenv("LATTICE_KEY", "")
	wantFail(t, run(t, "claim"), 1, "lattice key new", ".lattice")
	mustRun(t, "key", "new")
	r := mustRun(t, "claim")
	if !strings.HasPrefix(r.stdout, "claimed 100 stable") {
		t.Errorf("claim with the default key printed %q", r.stdout)
	}
}

func TestMultisig(t *testing.T) {
	tn := newTestNode(t)
	f1, a := tn.newKey("a")
	f2, b := tn.newKey("b")
	f3, c := tn.newKey("c")
	f4, d := tn.newKey("d")
	_, x := tn.newKey("x")

	r := run(t, "multisig", "open", "--node", tn.url, "--keys", a+","+b+","+c, "--threshold", "2", "--signers", f1+","+f2)
	ok(t, r, "multisig open")
	m := regexp.MustCompile(`^multisig account ([0-9a-f]{64}): keyset of 3 keys, threshold 2\n`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("multisig open printed %q", r.stdout)
	}
	ms := m[1]
	aa, _ := ledger.ParseAddress(a)
	ba, _ := ledger.ParseAddress(b)
	ca, _ := ledger.ParseAddress(c)
	if want := ledger.MultisigAddress(ledger.NewKeyset(2, aa, ba, ca)).String(); ms != want {
		t.Errorf("multisig address = %s, want %s (derived from the keyset)", ms, want)
	}
	open := blockOf(t, tn.mustAs(tn.gkey, "block", "--json", printedBlock(t, r)))
	if open.Type != ledger.TypeMultisigOpen || open.Account.String() != ms || len(open.Signatures) != 2 {
		t.Errorf("multisig_open block = %+v", open)
	}

	tn.mustAs(tn.gkey, "send", "--to", ms, "--amount", "10")
	// The balance of a multisig account with pending sends says how its
	// signers take them, not how an owner's key would.
	if out := tn.mustAs(tn.gkey, "balance", ms).stdout; !strings.Contains(out, "lattice receive --account "+ms+" --signers") {
		t.Errorf("balance of the multisig account with a pending send: %q, want the --account --signers hint", out)
	}
	r = ok(t, run(t, "receive", "--node", tn.url, "--account", ms, "--signers", f1+","+f3), "receive --account")
	if !strings.HasPrefix(r.stdout, "received 10 native from "+tn.genesis.Address().String()) {
		t.Errorf("multisig receive printed %q", r.stdout)
	}
	r = ok(t, run(t, "send", "--node", tn.url, "--account", ms, "--signers", f2+","+f3, "--to", x, "--amount", "1", "--json"), "send --account")
	if blk := blockOf(t, r); blk.Account.String() != ms || len(blk.Signatures) != 2 || !blk.Signature.IsZero() {
		t.Errorf("multisig send = %+v, want two keyset signatures and no plain signature", blk)
	}

	// One signer is below the threshold.
	wantFail(t, run(t, "send", "--node", tn.url, "--account", ms, "--signers", f1, "--to", x, "--amount", "1"), 1, "threshold is 2")
	// One key signing twice.
	wantFail(t, run(t, "send", "--node", tn.url, "--account", ms, "--signers", f1+","+f1, "--to", x, "--amount", "1"), 1, "signs twice")
	// A key outside the keyset.
	wantFail(t, run(t, "send", "--node", tn.url, "--account", ms, "--signers", f1+","+f4, "--to", x, "--amount", "1"), 1, "not in the account's keyset")

	r = run(t, "multisig", "update", "--node", tn.url, "--account", ms, "--keys", d, "--threshold", "1", "--signers", f1+","+f2, "--json")
	ok(t, r, "multisig update")
	up := blockOf(t, r)
	if up.Type != ledger.TypeMultisigUpdate || up.Account.String() != ms || up.Keyset == nil || up.Keyset.Threshold != 1 || len(up.Keyset.Keys) != 1 || up.Keyset.Keys[0].String() != d {
		t.Errorf("multisig update block = %+v", up)
	}

	// The old signers are refused; the new key alone works.
	wantFail(t, run(t, "send", "--node", tn.url, "--account", ms, "--signers", f1+","+f2, "--to", x, "--amount", "1"), 1, "not in the account's keyset")
	ok(t, run(t, "send", "--node", tn.url, "--account", ms, "--signers", f4, "--to", x, "--amount", "1"), "send --signers D")

	bal := parseBalance(t, ok(t, run(t, "balance", "--node", tn.url, "--account", ms), "balance --account").stdout)
	if bal.account != ms || bal.units["native"] != "8" || bal.units["stable"] != "0" {
		t.Errorf("balance --account = %+v, want 8 native", bal)
	}
	var bj balanceJSON
	decode(t, ok(t, run(t, "balance", "--node", tn.url, "--account", ms, "--json"), "balance --account --json"), &bj)
	if bj.Address != ms || bj.Balances["native"] != "8000000" {
		t.Errorf("balance --account --json = %+v, want 8000000 native", bj)
	}
	var chain []nodewire.Block
	decode(t, ok(t, run(t, "chain", "--node", tn.url, "--account", ms, "--json"), "chain --account"), &chain)
	var types []string
	for _, b := range chain {
		types = append(types, b.Type.String())
	}
	if got, want := strings.Join(types, " "), "multisig_open receive send multisig_update send"; got != want {
		t.Errorf("multisig chain = %s, want %s", got, want)
	}

	// Updating an account that has no blocks.
	_, y := tn.newKey("y")
	wantFail(t, run(t, "multisig", "update", "--node", tn.url, "--account", y, "--keys", d, "--threshold", "1", "--signers", f4), 1, "has no blocks")
}

// TestDelegate: --representative on send, receive and claim puts the
// address in the block's representative field, which the node takes and
// keeps (the chain shows it), and a block without it names none.
func TestDelegate(t *testing.T) {
	tn := newTestNode(t)
	xkey, x := tn.newKey("x")
	_, rep := tn.newKey("rep")
	send := blockOf(t, tn.mustAs(tn.gkey, "send", "--json", "--to", x, "--amount", "2", "--representative", rep))
	if send.Representative.String() != rep {
		t.Errorf("send --representative: the block names %s, want %s", send.Representative, rep)
	}
	r := tn.mustAs(xkey, "receive", "--json", "--representative", rep)
	var got []ledger.Block
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 1 || got[0].Representative.String() != rep {
		t.Fatalf("receive --representative: %v %s", err, r.stdout)
	}
	wantFail(t, tn.as(xkey, "receive", "--representative", rep), 1, "nothing pending, so no receive block carries --representative")
	claim := blockOf(t, tn.mustAs(xkey, "claim", "--json"))
	if !claim.Representative.IsZero() {
		t.Errorf("a claim without --representative names %s", claim.Representative)
	}
	for _, h := range []ledger.Hash{send.Hash, got[0].Hash} {
		if b := blockOf(t, tn.mustAs(xkey, "block", "--json", h.String())); b.Representative.String() != rep {
			t.Errorf("the node's block %s names representative %s, want %s", h, b.Representative, rep)
		}
	}
}
