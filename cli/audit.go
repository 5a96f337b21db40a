package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/ledgerstore"
	"github.com/latticenet/lattice/node/netaudit"
	"github.com/latticenet/lattice/node/nodeclient"
)

// runAudit checks a stopped node's ledger offline: it replays every chain
// and verifies the ledger's invariants (see ledger.Audit). With --nodes it
// compares running nodes through their APIs instead (see runNetworkAudit).
func runAudit(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "audit", "audit --data DIR | --nodes URL,URL,... [flags]", `
Checks a stopped node's ledger offline: replays every chain and verifies
the ledger's invariants (balances, supply, pending sends), and reports
what it found; it fails if any invariant is broken.

With --nodes it checks a network instead: it reads two or more running
nodes through their APIs (frontiers, then every account any of them has,
with its balances and its chain's confirmed blocks, and the governance
state chain's tip and conflicts) and prints one line per difference,
naming the account, the nodes and their values, worst first: CONFLICT
(two nodes hold different confirmed blocks at the same place of a chain:
confirmed is meant to be final and the same everywhere), then a state
chain halted on some nodes (statechain_halted) or tips that differ
(statechain_tip), accounts missing on some nodes, differing frontiers, block counts,
balances and confirmation heights, and frontiers not confirmed yet. A node
that cannot be read is named with the error. It exits 0, printing
"network OK: N nodes agree on M accounts", only when every node answered,
they all agree and every frontier is confirmed on every node; otherwise 1.
Each request has 10 s, 8 at a time per node; --timeout bounds the whole.`, `  lattice audit --data ~/.lattice/node
  lattice audit --data ./node1 --json
  lattice audit --nodes http://10.77.0.1:8080,http://10.77.0.2:8080,http://10.77.0.3:8080
  lattice audit --nodes http://127.0.0.1:8080,http://127.0.0.1:8081 --timeout 2m --json
`)
	data := f.string("data", "LATTICE_DATA", "", homeDir(".lattice", "node"), "node data directory (the node must be stopped)")
	nodes := f.String("nodes", "", "comma-separated API `URLs` of two or more running nodes to compare, instead of --data")
	timeout := f.Duration("timeout", 30*time.Second, "with --nodes, how long reading every node may take")
	asJSON := f.jsonFlag()
	if err := f.parse(args); err != nil {
		return err
	}
	if f.given["nodes"] {
		if f.given["data"] {
			return usageErr("--data audits one stopped node, --nodes a network of running ones: give one of them")
		}
		if f.NArg() > 0 { // "--nodes A B" would leave B out
			return usageErr("unexpected argument %q: --nodes takes its URLs comma-separated, without spaces", f.Arg(0))
		}
		return runNetworkAudit(ctx, e, *nodes, *timeout, *asJSON)
	}
	if f.given["timeout"] {
		return usageErr("--timeout bounds a network audit: give it with --nodes")
	}
	dir := filepath.Join(*data, "ledger")
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("no ledger in %s (is --data the node's data directory?): %w", *data, err)
	}
	st, err := ledgerstore.Open(dir, ledgerstore.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MustExist: true})
	if errors.Is(err, ledgerstore.ErrLocked) {
		return fmt.Errorf("the ledger in %s is in use by a running node; stop the node, then audit it", *data)
	}
	if err != nil {
		return fmt.Errorf("no ledger in %s (is --data the node's data directory?): %w", *data, err)
	}
	defer st.Close()
	if _, err := st.Genesis(); err != nil {
		return fmt.Errorf("%s holds no ledger: %w", *data, err)
	}
	snap := st.Snapshot()
	defer snap.Close()
	r, err := ledger.Audit(snap)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, map[string]any{"ok": true, "accounts": r.Accounts, "blocks": r.Blocks, "pending": r.Pending,
			"native_supply": r.Supply, "stable_minted": r.Minted})
	}
	fmt.Fprintf(e.stdout, "ledger OK: %d accounts, %d blocks, %d pending; native supply %s, stable minted %s\n",
		r.Accounts, r.Blocks, r.Pending, r.Supply.Units(), r.Minted.Units())
	return nil
}

// runNetworkAudit is `lattice audit --nodes`: it reads every node's
// snapshot, compares them, and prints the differences.
func runNetworkAudit(ctx context.Context, e *env, list string, timeout time.Duration, asJSON bool) error {
	urls := splitList(list)
	if len(urls) < 2 {
		return usageErr("--nodes: want the API URLs of two or more nodes, comma-separated, not %q", list)
	}
	if timeout <= 0 {
		return usageErr("--timeout must be positive")
	}
	// One transport, keeping as many idle connections per node as
	// requests run at once, so the requests reuse them.
	opts := netaudit.Options{}
	opts.EnsureDefaults()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = opts.Concurrency
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	seen := map[string]bool{}
	var clients []*nodeclient.Client
	for _, u := range urls {
		c := nodeclient.New(u, hc)
		if p, err := url.Parse(c.BaseURL()); err != nil || p.Host == "" || (p.Scheme != "http" && p.Scheme != "https") {
			return usageErr("--nodes: %q is not a node's API URL, such as http://10.77.0.1:8080", u)
		}
		if seen[c.BaseURL()] {
			return usageErr("--nodes: %s is named twice", c.BaseURL())
		}
		seen[c.BaseURL()] = true
		clients = append(clients, c)
	}
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := netaudit.Compare(netaudit.Fetch(fctx, clients, opts))
	if err := ctx.Err(); err != nil {
		return err // interrupted: what was read is incomplete, not a finding
	}
	late := ""
	if fctx.Err() != nil {
		late = fmt.Sprintf(" (--timeout %s passed before every node was read)", timeout)
	}
	if asJSON {
		if err := printJSON(e.stdout, struct {
			OK bool `json:"ok"`
			netaudit.Report
		}{r.OK(), r}); err != nil {
			return err
		}
	} else {
		for _, d := range r.Diffs {
			fmt.Fprintln(e.stdout, d)
		}
	}
	if !r.OK() {
		return fmt.Errorf("network differs: %s among %d nodes on %s: %s%s",
			plural(len(r.Diffs), "difference"), len(r.Nodes), plural(r.Accounts, "account"), r.Counts(), late)
	}
	if !asJSON {
		fmt.Fprintf(e.stdout, "network OK: %d nodes agree on %s\n", len(r.Nodes), plural(r.Accounts, "account"))
	}
	return nil
}

// plural returns "1 account" or "N accounts".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
