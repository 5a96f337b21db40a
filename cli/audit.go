package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/ledgerstore"
)

// runAudit checks a stopped node's ledger offline: it replays every chain
// and verifies the ledger's invariants (see ledger.Audit).
func runAudit(_ context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "audit", "audit --data DIR [flags]", `
Checks a stopped node's ledger offline: replays every chain and verifies
the ledger's invariants (balances, supply, pending sends), and reports
what it found; it fails if any invariant is broken.`, `  lattice audit --data ~/.lattice/node
  lattice audit --data ./node1 --json
`)
	data := f.string("data", "LATTICE_DATA", "", homeDir(".lattice", "node"), "node data directory (the node must be stopped)")
	asJSON := f.jsonFlag()
	if err := f.parse(args); err != nil {
		return err
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
