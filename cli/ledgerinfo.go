package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/latticenet/lattice/ledger"
)

// ledgerCommands are the subcommands of `lattice ledger`: what a node
// holds, read through its API.
func ledgerCommands() []command {
	return []command{
		{"info", "the node: version, network, account, peer", runLedgerInfo},
		{"pending", "sends not received yet, of everyone or of one address", runLedgerPending},
		{"frontiers", "every account's latest block", runLedgerFrontiers},
		{"conflicts", "forks the node has seen, with their elections", runLedgerConflicts},
		{"recent", "the latest blocks, newest first", runLedgerRecent},
	}
}

const ledgerUsage = `Usage: lattice ledger COMMAND [ARGS] [flags]

What a node holds, read through its API (GET /node, /pending, /frontiers,
/conflicts, /blocks/recent), as tables, or as the API's JSON with --json.

Commands:
  info                    the node: version, network, account, peer
  pending [ADDRESS]       sends not received yet, of everyone or of one address
  frontiers               every account's latest block
  conflicts [ACCOUNT]     forks the node has seen, with their elections
  recent [--limit N]      the latest blocks, newest first

Every command takes --node URL (env LATTICE_NODE, or the profile's) and
--json.

Examples:
  lattice ledger info
  lattice ledger pending $(lattice key show)
  lattice ledger recent --limit 5 --node http://127.0.0.1:8081

Run ` + "`lattice ledger COMMAND -h`" + ` for a command's flags.
`

// runLedger is `lattice ledger COMMAND ...`.
func runLedger(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		io.WriteString(e.stderr, ledgerUsage)
		return usageErr("want info, pending, frontiers, conflicts or recent")
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		io.WriteString(e.stdout, ledgerUsage)
		return nil
	}
	for _, c := range ledgerCommands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	var names []string
	for _, c := range ledgerCommands() {
		names = append(names, c.name)
	}
	return usageErr("unknown command %q%s; run `lattice ledger -h`", args[0], suggestion(args[0], names))
}

// ledgerSession parses a ledger command's flags and its one optional
// address argument, named optional ("" when it takes none), and then
// connects to the node: a word that is not an address is refused before
// anything is asked.
func ledgerSession(ctx context.Context, e *env, name, usage, about, examples, optional string, args []string, extra func(*flags)) (*session, *ledger.Address, error) {
	f := newHelpFlags(e, "ledger "+name, usage, about, examples)
	cf := addClientFlags(f, false)
	// What a node holds is read without a key: --key is taken (scripts
	// pass it to every command) but not offered.
	f.hide("key")
	if extra != nil {
		extra(f)
	}
	if err := f.parse(args); err != nil {
		return nil, nil, err
	}
	var addr *ledger.Address
	switch {
	case optional == "" && f.NArg() > 0, f.NArg() > 1:
		return nil, nil, usageErr("unexpected argument %q; run `lattice ledger %s -h`", f.Arg(f.NArg()-1), name)
	case f.NArg() == 1:
		a, err := ledger.ParseAddress(f.Arg(0))
		if err != nil {
			return nil, nil, usageErr("%s %q: %v; run `lattice ledger %s -h`", optional, f.Arg(0), err, name)
		}
		addr = &a
	}
	s, err := cf.connect(ctx, false)
	return s, addr, err
}

func runLedgerInfo(ctx context.Context, e *env, args []string) error {
	s, _, err := ledgerSession(ctx, e, "info", "ledger info [flags]", "Shows the node you use: its software version, the network it is on, its own account (which votes when it has weight), its peer ID and addresses, and how long it has run.",
		"  lattice ledger info\n  lattice ledger info --node http://127.0.0.1:8081 --json\n", "", args, nil)
	if err != nil {
		return err
	}
	if *s.f.json {
		return printJSON(e.stdout, s.info)
	}
	tw := table(e.stdout)
	fmt.Fprintf(tw, "node\t%s\t\n", s.c.BaseURL())
	fmt.Fprintf(tw, "version\t%s\t\n", s.info.Version)
	fmt.Fprintf(tw, "network\t%s (genesis %s)\t\n", s.info.Network, s.info.Genesis)
	fmt.Fprintf(tw, "account\t%s\t\n", s.info.Account)
	fmt.Fprintf(tw, "peer\t%s\t\n", s.info.PeerID)
	for _, a := range s.info.P2PAddrs {
		fmt.Fprintf(tw, "address\t%s\t\n", a)
	}
	fmt.Fprintf(tw, "uptime\t%s\t\n", time.Duration(s.info.UptimeSeconds)*time.Second)
	return tw.Flush()
}

func runLedgerPending(ctx context.Context, e *env, args []string) error {
	s, dest, err := ledgerSession(ctx, e, "pending", "ledger pending [ADDRESS] [flags]",
		"Lists the sends the node holds that their destination has not received yet: all of them, or those to ADDRESS. `lattice receive` receives your own.",
		"  lattice ledger pending\n  lattice ledger pending $(lattice key show --key bob.json)\n", "ADDRESS", args, nil)
	if err != nil {
		return err
	}
	ps, err := s.c.Pending(ctx, dest)
	if err != nil {
		return unreachable(*s.f.node, err)
	}
	if *s.f.json {
		return printJSON(e.stdout, ps)
	}
	if len(ps) == 0 {
		fmt.Fprintln(e.stdout, "no pending sends")
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "SEND\tFROM\tTO\tAMOUNT\t")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s %s\t\n", p.SendHash, p.Source, p.Destination, p.Amount.Units(), p.Asset)
	}
	return tw.Flush()
}

func runLedgerFrontiers(ctx context.Context, e *env, args []string) error {
	s, _, err := ledgerSession(ctx, e, "frontiers", "ledger frontiers [flags]",
		"Lists every account the node knows with the hash of its latest block, by address.",
		"  lattice ledger frontiers\n  lattice ledger frontiers --json | jq length\n", "", args, nil)
	if err != nil {
		return err
	}
	fs, err := s.c.Frontiers(ctx)
	if err != nil {
		return unreachable(*s.f.node, err)
	}
	if *s.f.json {
		return printJSON(e.stdout, fs)
	}
	accts := make([]ledger.Address, 0, len(fs))
	for a := range fs {
		accts = append(accts, a)
	}
	slices.SortFunc(accts, func(a, b ledger.Address) int { return strings.Compare(a.String(), b.String()) })
	tw := table(e.stdout)
	fmt.Fprintln(tw, "ACCOUNT\tFRONTIER\t")
	for _, a := range accts {
		fmt.Fprintf(tw, "%s\t%s\t\n", a, fs[a])
	}
	return tw.Flush()
}

func runLedgerConflicts(ctx context.Context, e *env, args []string) error {
	s, acct, err := ledgerSession(ctx, e, "conflicts", "ledger conflicts [ACCOUNT] [flags]",
		"Lists the forks the node has seen (two or more blocks with the same account and previous block), of every account or of ACCOUNT, with the running election's tally while it is decided.",
		"  lattice ledger conflicts\n  lattice ledger conflicts $(lattice key show) --json\n", "ACCOUNT", args, nil)
	if err != nil {
		return err
	}
	cs, err := s.c.Conflicts(ctx, acct)
	if err != nil {
		return unreachable(*s.f.node, err)
	}
	if *s.f.json {
		return printJSON(e.stdout, cs)
	}
	if len(cs) == 0 {
		fmt.Fprintln(e.stdout, "no conflicts")
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "ACCOUNT\tPREVIOUS\tBLOCKS\tDETECTED\tELECTION\t")
	for _, c := range cs {
		election := "decided"
		if c.Election != nil {
			election = "running"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t\n", c.AccountAddress, c.PreviousHash, len(c.BlockHashes), c.DetectedAt, election)
	}
	return tw.Flush()
}

func runLedgerRecent(ctx context.Context, e *env, args []string) error {
	var limit *int
	s, _, err := ledgerSession(ctx, e, "recent", "ledger recent [--limit N] [flags]",
		"Lists the latest blocks the node applied, newest first, and whether each is confirmed.",
		"  lattice ledger recent\n  lattice ledger recent --limit 100 --json\n", "", args,
		func(f *flags) { limit = f.Int("limit", 20, "how many blocks, 1 to 1000") })
	if err != nil {
		return err
	}
	if *limit < 1 || *limit > 1000 {
		return usageErr("--limit %d: want 1 to 1000", *limit)
	}
	bs, err := s.c.Recent(ctx, *limit)
	if err != nil {
		return unreachable(*s.f.node, err)
	}
	if *s.f.json {
		return printJSON(e.stdout, bs)
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "TIME\tTYPE\tACCOUNT\tHASH\tCONFIRMED\t")
	for _, b := range bs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t\n", time.UnixMilli(b.Timestamp).Local().Format("2006-01-02 15:04:05"), b.Type, b.Account, b.Hash, b.Confirmed)
	}
	return tw.Flush()
}
