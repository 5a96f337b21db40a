package cli

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/govnet"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/statechain"
)

// newGovNode is newTestNode with the state chain, governed by the genesis
// key alone, as lattice dev's is.
func newGovNode(t *testing.T) *testNode {
	t.Helper()
	tn := newTestNode(t)
	svc, err := govnet.Start(context.Background(), govnet.Config{Dir: t.TempDir(), Network: tn.gblock.Hash,
		Genesis: statechain.Genesis(tn.gblock.Hash, ledger.NewKeyset(1, tn.genesis.Address()), tn.gblock.Timestamp)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(nodeapi.New(tn.n, nodeapi.Options{StateChain: svc}))
	t.Cleanup(func() { srv.Close(); svc.Close() })
	tn.url = srv.URL
	return tn
}

// TestGovCommands walks the governance flow: a change the genesis key
// makes alone, a keyset of two keys, then a proposal signed offline by
// the second key and submitted by anyone.
func TestGovCommands(t *testing.T) {
	tn := newGovNode(t)
	alice, aliceAddr := tn.newKey("alice")
	g := tn.gkey
	if out := tn.mustAs(g, "gov show").stdout; !strings.Contains(out, "index 0") || !strings.Contains(out, "1 of 1 keys") ||
		!strings.Contains(out, "lease.stake_ratio") || !strings.Contains(out, "default") {
		t.Fatalf("gov show:\n%s", out)
	}
	if out := tn.mustAs(g, "gov set", "lease.stake_ratio", "0.25").stdout; !strings.Contains(out, "state chain index 1: set lease.stake_ratio = 0.25") {
		t.Fatalf("gov set: %s", out)
	}
	if out := tn.mustAs(g, "gov get", "lease.stake_ratio").stdout; out != "0.25\n" {
		t.Fatalf("gov get: %q", out)
	}
	r := tn.mustAs(g, "gov get", "lease.accept_timeout_ms")
	if r.stdout != "600000\n" || !strings.Contains(r.stderr, "not set") {
		t.Fatalf("gov get of a default: %+v", r)
	}
	wantFail(t, tn.as(g, "gov get", "x.nothing"), 1, "not set")
	wantFail(t, tn.as(g, "gov set", "lease.stake_ratio", "abc"), 2, "not JSON")
	wantFail(t, tn.as(g, "gov set", "lease.price", "1"), 2, "not a parameter")
	wantFail(t, tn.as(g, "gov set", "lease.accept_timeout_ms", "5"), 2, "1000 to 604800000")
	// A value in another form is written in its canonical one.
	r = tn.mustAs(g, "gov set", "lease.prices", `{ "disk_gb": "2", "vcpu": "7", "memory_mb": "1" }`)
	if !strings.Contains(r.stderr, `{"vcpu":"7","memory_mb":"1","disk_gb":"2"}`) {
		t.Fatalf("gov set did not say the canonical form: %+v", r)
	}
	wantFail(t, tn.as(g, "gov show", "stray"), 2, "stray")

	// With --out, a proposal the one keyholder signed needs only submitting.
	if out := tn.mustAs(g, "gov set", "x.z", "1", "--out", filepath.Join(t.TempDir(), "z.json")).stdout; !strings.Contains(out, "It has the signatures it needs (1 of 1): anyone runs") {
		t.Fatalf("a fully signed proposal: %s", out)
	}

	tn.mustAs(g, "gov keyset", "--keys", tn.genesis.Address().String()+","+aliceAddr, "--threshold", "2")
	if out := tn.mustAs(g, "gov keyset").stdout; !strings.Contains(out, "2 of these 2 keys") || !strings.Contains(out, aliceAddr) {
		t.Fatalf("gov keyset: %s", out)
	}

	// One signature of two: a proposal file, and the chain does not move.
	dir := t.TempDir()
	file := filepath.Join(dir, "motd.json")
	out := tn.mustAs(g, "gov set", "x.motd", `"hello"`, "--out", file).stdout
	if !strings.Contains(out, "1 of the 2 signatures") || !strings.Contains(out, "lattice gov sign "+file) {
		t.Fatalf("proposal: %s", out)
	}
	wantFail(t, tn.as(g, "gov set", "x.motd", `"again"`, "--out", file), 1, "exists")
	wantFail(t, tn.as(g, "gov submit", file), 1, "1 of the keyset's keys signed; its threshold is 2")

	// A proposal changed after it was made is never signed.
	data, _ := os.ReadFile(file)
	tampered := filepath.Join(dir, "tampered.json")
	os.WriteFile(tampered, []byte(strings.Replace(string(data), `hello`, `HELLO`, 1)), 0o644)
	wantFail(t, run(t, "gov", "sign", tampered, "--key", alice, "--yes"), 1, "changed after it was made")

	// Alice reads what she would sign; without a terminal she must say yes.
	r = run(t, "gov", "sign", file, "--key", alice)
	wantFail(t, r, 2, "add --yes")
	if !strings.Contains(r.stderr, `set x.motd = "hello"`) || !strings.Contains(r.stderr, "index     4") {
		t.Fatalf("gov sign did not show the change first:\n%s", r.stderr)
	}
	// Alice signs offline: no node at all, and the help offers none.
	if h := run(t, "gov", "sign", "-h"); !strings.Contains(h.stdout+h.stderr, "-yes") || strings.Contains(h.stdout+h.stderr, "-node") {
		t.Fatalf("gov sign -h should offer --yes and not --node:\n%s%s", h.stdout, h.stderr)
	}
	if out := ok(t, run(t, "gov", "sign", file, "--key", alice, "--yes", "--node", deadURL(t))).stdout; !strings.Contains(out, "2 signatures now") {
		t.Fatalf("gov sign: %s", out)
	}
	// A stranger's signature is left out at submission, not fatal.
	stranger, _ := tn.newKey("stranger")
	ok(t, run(t, "gov", "sign", file, "--key", stranger, "--yes"))
	r = tn.mustAs(g, "gov submit", file)
	if !strings.Contains(r.stdout, "state chain index 4: set x.motd") || !strings.Contains(r.stderr, "not a member of the governance keyset") {
		t.Fatalf("gov submit: %+v", r)
	}
	// A block held already answers its hash again, and says so.
	if r := tn.mustAs(g, "gov submit", file); !strings.Contains(r.stderr, "already holds this block") {
		t.Fatalf("gov submit of a held block: %+v", r)
	}
	if out := tn.mustAs(g, "gov get", "x.motd").stdout; out != "\"hello\"\n" {
		t.Fatalf("gov get x.motd: %q", out)
	}
	var shown struct {
		Tip        statechain.Block `json:"tip"`
		Keyset     ledger.Keyset    `json:"keyset"`
		Parameters []struct {
			Key   string `json:"key"`
			Set   bool   `json:"set"`
			Value any    `json:"value"`
			Index *int   `json:"index"`
			Doc   string `json:"doc"`
		} `json:"parameters"`
		KV        map[string]any `json:"kv"`
		Conflicts []any          `json:"conflicts"`
	}
	decode(t, tn.mustAs(g, "gov show", "--json"), &shown)
	if shown.Tip.Index != 4 || shown.Keyset.Threshold != 2 || shown.KV["x.motd"] != "hello" || len(shown.Conflicts) != 0 {
		t.Fatalf("gov show --json: %+v", shown)
	}
	// Without the keyholder's key the proposal carries no signature.
	r = tn.as(stranger, "gov delete", "x.motd", "--out", filepath.Join(dir, "delete.json"))
	if r.code != 0 || !strings.Contains(r.stderr, "not in the governance keyset") || !strings.Contains(r.stdout, "0 of the 2 signatures") {
		t.Fatalf("a stranger's proposal: %+v", r)
	}

	// A --key that names no file is a typo, not a wish to sign nothing;
	// deleting a key not set is a change no node takes.
	wantFail(t, tn.as(g, "gov set", "x.c", "3", "--out", filepath.Join(dir, "c.json"), "--key", filepath.Join(dir, "nokey.json")), 1, "no key file at")
	wantFail(t, tn.as(g, "gov delete", "x.nothing"), 1, "x.nothing is not set on the state chain")

	// Two proposals made before either is submitted take one index. The
	// second, fully signed, is stale once the first lands: gov submit
	// refuses it, so the node never sees two signed blocks for one index
	// (which would halt governance everywhere).
	first, second := filepath.Join(dir, "first.json"), filepath.Join(dir, "second.json")
	tn.mustAs(g, "gov set", "x.a", "1", "--out", first)
	tn.mustAs(g, "gov set", "x.b", "2", "--out", second)
	short := filepath.Join(dir, "short.json") // one of two signatures, never completed
	if data, err := os.ReadFile(second); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(short, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{first, second} {
		ok(t, run(t, "gov", "sign", f, "--key", alice, "--yes"))
	}
	// wantStale submits a stale proposal, which must be refused, saying it
	// would halt governance exactly when halts.
	wantStale := func(file, msg string, halts bool) {
		t.Helper()
		r := tn.as(g, "gov submit", file)
		wantFail(t, r, 1, "this proposal is stale: "+msg)
		if strings.Contains(r.stderr, "would halt governance") != halts {
			t.Errorf("gov submit %s: %q; want it to say it would halt governance: %v", filepath.Base(file), r.stderr, halts)
		}
	}
	tn.mustAs(g, "gov submit", first)
	wantStale(second, "state chain index 5 is taken by another change (set x.a = 1", true)
	// Short of the threshold it would only be refused: no talk of a halt.
	wantStale(short, "state chain index 5", false)
	decode(t, tn.mustAs(g, "gov show", "--json"), &shown)
	if shown.Tip.Index != 5 || len(shown.Conflicts) != 0 || shown.KV["x.b"] != nil {
		t.Fatalf("after a stale proposal: tip %d, conflicts %v, x.b %v", shown.Tip.Index, shown.Conflicts, shown.KV["x.b"])
	}

	// A stale proposal is judged by the keyset in force at its index, not
	// today's: signed by g and Alice for index 6, it would still halt
	// every node after a change at 6 rotates Alice out.
	_, carolAddr := tn.newKey("carol")
	rotated, keyset := filepath.Join(dir, "rotated.json"), filepath.Join(dir, "keyset.json")
	tn.mustAs(g, "gov set", "x.r", "1", "--out", rotated)
	tn.mustAs(g, "gov keyset", "--keys", tn.genesis.Address().String()+","+carolAddr, "--threshold", "2", "--out", keyset)
	for _, f := range []string{rotated, keyset} {
		ok(t, run(t, "gov", "sign", f, "--key", alice, "--yes"))
	}
	tn.mustAs(g, "gov submit", keyset)
	wantStale(rotated, "state chain index 6 is taken by another change (replace the keyset", true)

	// Posted past gov submit, the stale block is two signed blocks for one
	// index: the chain halts, and gov set refuses to make a change no node
	// would take.
	p, err := readProposal(second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nodeclient.New(tn.url, nil).SubmitState(context.Background(), p.Block); err == nil || !strings.Contains(err.Error(), "halted") {
		t.Fatalf("posting the stale block: %v, want the chain halted", err)
	}
	wantFail(t, tn.as(g, "gov set", "x.c", "3", "--out", filepath.Join(dir, "during-halt.json")), 1, "the state chain is halted: two blocks were signed for index 5")
	if _, err := os.Stat(filepath.Join(dir, "during-halt.json")); err == nil {
		t.Errorf("gov set wrote a proposal while the chain is halted")
	}
}
