package cli

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/pow"
	"github.com/latticenet/lattice/wallet"
	"golang.org/x/crypto/ssh"
)

// clientFlags are the flags every wallet command takes.
type clientFlags struct {
	flags                       *flags
	node, key, account, signers *string
	json, remotePow, signOnly   *bool
	representative              *string // delegateFlag's, on the commands that take it
}

// delegateFlag adds --representative to a command that signs one of the
// account's own ordinary blocks (send, receive, claim): the block names
// the representative the account's native balance gives its voting weight
// to from then on (docs/protocol.md §18). A block of any type may carry
// one, and there is no block whose only purpose is to change it, so this
// is how an account delegates.
func (c *clientFlags) delegateFlag() {
	c.representative = c.flags.String("representative", "", "delegate this account's voting weight to this representative's address (a node's account, GET /node) with this block, and from it on")
}

// delegate sets b's representative from --representative, if given, and
// seals b again; it is checked before any block is made.
func (c *clientFlags) delegate(b *ledger.Block) {
	if c.representative == nil || *c.representative == "" {
		return
	}
	rep, _ := ledger.ParseAddress(*c.representative)
	b.Representative = rep
	b.Seal()
}

// checkDelegate refuses a --representative that is not an address.
func (c *clientFlags) checkDelegate() error {
	if c.representative == nil || *c.representative == "" {
		return nil
	}
	if _, err := ledger.ParseAddress(*c.representative); err != nil {
		return usageErr("--representative: %v", err)
	}
	return nil
}

func addClientFlags(f *flags, signing bool) *clientFlags {
	c := &clientFlags{
		flags: f,
		node:  f.string("node", "LATTICE_NODE", "", "http://127.0.0.1:8080", "node API URL"),
		key:   f.string("key", "LATTICE_KEY", "", homeDir(".lattice", "key.json"), "key file: the profile's (the dev key, under lattice dev), else this default"),
		json:  f.jsonFlag(),
	}
	if signing {
		c.remotePow = f.Bool("remote-pow", false, "ask the node's POST /pow for proof of work instead of computing it on every local core")
		c.account = f.String("account", "", "act for this multisig account; sign with --signers")
		c.signers = f.String("signers", "", "comma-separated key files that sign for a multisig account")
		c.signOnly = signOnlyFlag(f, "the signed block, the JSON body of POST /blocks/TYPE,")
	}
	return c
}

// signOnlyFlag defines --sign-only (Solana's name for the same thing): the
// command prints the signed body it would submit, one line of JSON, and
// submits nothing, so that any HTTP client can post it.
func signOnlyFlag(f *flags, what string) *bool {
	return f.Bool("sign-only", false, "print "+what+" on one line and submit nothing")
}

// signOnlyBlock names the block type of a command's --sign-only.
func signOnlyBlock(f *flags, typ string) {
	what := "the signed block, the JSON body of POST /blocks/" + typ + ", on one line"
	if typ == "receive" {
		what = "the signed blocks, the JSON bodies of POST /blocks/receive, one a line in the order to post them,"
	}
	f.Lookup("sign-only").Usage = "print " + what + " and submit nothing"
}

// printBody writes v as one line of compact JSON: a request body, as
// --sign-only prints it.
func printBody(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// session is a connected wallet: a client, the node's info and, for
// signing commands, the keys that sign.
type session struct {
	f       *clientFlags
	c       *nodeclient.Client
	info    nodewire.NodeInfo
	account ledger.Address
	key     wallet.Key   // signs ordinary accounts
	signers []wallet.Key // sign multisig accounts
}

// sameFlags returns the --node and --key flags given on the command line,
// as " --node URL --key FILE", for a command line that suggests another
// command to the same person at the same node.
func (f *clientFlags) sameFlags() string {
	var b strings.Builder
	if f.flags.given["node"] {
		fmt.Fprintf(&b, " --node %s", *f.node)
	}
	if f.flags.given["key"] {
		fmt.Fprintf(&b, " --key %s", *f.key)
	}
	return b.String()
}

func (f *clientFlags) connect(ctx context.Context, needKey bool) (*session, error) {
	s := &session{f: f, c: nodeclient.New(*f.node, nil)}
	info, err := s.c.Node(ctx)
	if err != nil {
		return nil, unreachable(*f.node, err)
	}
	s.info = info
	if f.signers != nil && *f.signers != "" {
		if f.account == nil || *f.account == "" {
			return nil, usageErr("--signers needs --account, the multisig account")
		}
		for _, p := range strings.Split(*f.signers, ",") {
			k, err := wallet.LoadKey(strings.TrimSpace(p))
			if err != nil {
				return nil, err
			}
			s.signers = append(s.signers, k)
		}
	}
	if f.account != nil && *f.account != "" {
		if s.account, err = ledger.ParseAddress(*f.account); err != nil {
			return nil, usageErr("--account: %v", err)
		}
		if len(s.signers) == 0 && needKey {
			return nil, usageErr("--account needs --signers, the key files that sign for it")
		}
		return s, nil
	}
	if !needKey {
		return s, nil
	}
	if s.key, err = wallet.LoadKey(*f.key); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no key file at %s: create one with `lattice key new` or pass --key", *f.key)
		}
		return nil, err
	}
	s.account = s.key.Address()
	return s, nil
}

// unreachable explains a failure to talk to the node; answers from the
// node (API errors) pass through unchanged.
func unreachable(node string, err error) error {
	var apiErr *nodeclient.APIError
	if errors.As(err, &apiErr) || errors.Is(err, nodeclient.ErrWrongService) {
		return err // the node answered, or something else did: it is reachable
	}
	return fmt.Errorf("cannot reach the node at %s (start one with `lattice dev`): %w", node, err)
}

// target resolves the account a read command is about: the argument, or
// --account, or the key's.
func (f *clientFlags) target(args []string) (ledger.Address, error) {
	if len(args) > 1 {
		return ledger.Address{}, usageErr("unexpected argument %q: want at most one ADDRESS", args[1])
	}
	if len(args) == 1 {
		a, err := ledger.ParseAddress(args[0])
		if err != nil {
			return a, usageErr("%v", err)
		}
		return a, nil
	}
	if f.account != nil && *f.account != "" {
		a, err := ledger.ParseAddress(*f.account)
		if err != nil {
			return a, usageErr("--account: %v", err)
		}
		return a, nil
	}
	k, err := wallet.LoadKey(*f.key)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ledger.Address{}, fmt.Errorf("no key file at %s: give an ADDRESS, or create a key with `lattice key new` (or name yours with --key)", *f.key)
		}
		return ledger.Address{}, err
	}
	return k.Address(), nil
}

// finish signs b, finds its proof of work and submits it, unless the
// command only signs (--sign-only).
func (s *session) finish(ctx context.Context, b *ledger.Block, multisig bool) error {
	s.f.delegate(b)
	if multisig {
		for _, k := range s.signers {
			b.AddSignature(k.Private())
		}
	} else {
		b.Sign(s.key.Private())
	}
	var err error
	if *s.f.remotePow {
		b.PowNonce, err = s.c.PoW(ctx, b.Hash)
	} else {
		b.PowNonce, err = pow.Solve(ctx, b.Hash, s.info.Work.For(b.Type))
	}
	if err != nil {
		return fmt.Errorf("proof of work: %w", err)
	}
	if s.signOnly() {
		return nil
	}
	_, err = s.c.Submit(ctx, b)
	return err
}

func (s *session) multisig() bool { return len(s.signers) > 0 }

// signOnlyAbout is the paragraph of a block command's -h on --sign-only;
// typ is the block's type, the last segment of its endpoint.
func signOnlyAbout(typ string) string {
	return `

With --sign-only it prints the signed block, the JSON body of POST
/blocks/` + typ + `, on one line and submits nothing: post it within 10 minutes,
the node's clock window, and before the account signs another block.`
}

// signOnly reports whether the command prints its signed block rather than
// submitting it.
func (s *session) signOnly() bool { return s.f.signOnly != nil && *s.f.signOnly }

// report says what a submitted block did; with --sign-only it prints the
// signed block instead, the body of POST /blocks/TYPE.
func (s *session) report(e *env, b *ledger.Block, format string, args ...any) error {
	if s.signOnly() {
		return printBody(e.stdout, b)
	}
	return report(e, *s.f.json, b, format, args...)
}

func nowMS() int64 { return time.Now().UnixMilli() }

const keyUsage = `Usage: lattice key COMMAND [flags]

A key file holds an account's private key (mode 0600); its address is the
account. Commands that sign use --key FILE (env LATTICE_KEY, or the
profile's; default ~/.lattice/key.json).

Commands:
  new [--out FILE]    create a key file and print its address
  show [FILE]         print a key file's address (FILE, or --key's)
  ssh [--out FILE]    write the key as an OpenSSH key, to log in to leased VMs

Examples:
  lattice key new --out alice.json
  lattice key show --key alice.json
  BOB=$(lattice key show --key bob.json)
  lattice key ssh

Run ` + "`lattice key COMMAND -h`" + ` for a command's flags.
`

func runKey(_ context.Context, e *env, args []string) error {
	if done, err := groupHelp(e, args, keyUsage, "want `lattice key new [--out FILE]`, `lattice key show [FILE]` or `lattice key ssh`"); done {
		return err
	}
	if args[0] == "ssh" {
		return runKeySSH(e, args[1:])
	}
	if args[0] != "new" && args[0] != "show" {
		return usageErr("want `lattice key new [--out FILE]`, `lattice key show [FILE]` or `lattice key ssh`")
	}
	var f *flags
	if args[0] == "new" {
		f = newHelpFlags(e, "key new", "key new [--out FILE] [flags]", `
Creates a new key file (mode 0600) and prints its address; the file is
--out, or --key if --out is not given. Keep the file safe: it is the
account.`, `  lattice key new --out alice.json
  lattice key new --key ~/.lattice/key.json --json
`)
	} else {
		f = newHelpFlags(e, "key show", "key show [FILE | --key FILE] [flags]", `
Prints the address of the account whose key is in FILE (or --key).`, `  lattice key show
  lattice key show bob.json
  lattice key show --key alice.json --json
  BOB=$(lattice key show --key bob.json)
`)
	}
	key := f.string("key", "LATTICE_KEY", "", homeDir(".lattice", "key.json"), "key file: the profile's (the dev key, under lattice dev), else this default")
	out := new(string)
	if args[0] == "new" {
		out = f.String("out", "", "where to write the new key (default: --key)")
	}
	asJSON := f.jsonFlag()
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	path := *key
	if args[0] == "show" && f.NArg() > 1 {
		return usageErr("unexpected argument %q: lattice key show takes one key file; run `lattice key show -h`", f.Arg(1))
	}
	if args[0] == "show" && f.NArg() == 1 {
		// key show FILE, as a person would expect: the file, not the
		// profile's key.
		if f.given["key"] {
			return usageErr("both --key %s and %s: name the key file once", *key, f.Arg(0))
		}
		path = f.Arg(0)
	} else if err := noArgs(f); err != nil {
		return err
	}
	var k wallet.Key
	if args[0] == "new" {
		if *out != "" {
			path = *out
		}
		k = wallet.NewKey()
		if err := wallet.SaveKey(path, k); errors.Is(err, wallet.ErrKeyExists) {
			// Most often the profile's own key (the dev key under lattice
			// dev): say how to write a new one beside it.
			return fmt.Errorf("%w; it is never overwritten: write the new key elsewhere with --out FILE (for example lattice key new --out bob.json)", err)
		} else if err != nil {
			return err
		}
	} else {
		var err error
		if k, err = wallet.LoadKey(path); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(e.stdout, map[string]string{"address": k.Address().String(), "file": path})
	}
	fmt.Fprintln(e.stdout, k.Address())
	if args[0] == "new" {
		fmt.Fprintf(e.stderr, "key written to %s (mode 0600); keep it safe\n", path)
	}
	return nil
}

// accountCommand parses the flags of a command that reads one account
// and resolves which account that is.
func accountCommand(e *env, name, about, examples string, args []string) (*clientFlags, ledger.Address, error) {
	f := newHelpFlags(e, name, name+" [ADDRESS] [flags]", about, examples)
	cf := addClientFlags(f, false)
	cf.account = f.String("account", "", "show this account (default: the key's)")
	if err := f.parse(args); err != nil {
		return nil, ledger.Address{}, err
	}
	addr, err := cf.target(f.Args())
	return cf, addr, err
}

func runBalance(ctx context.Context, e *env, args []string) error {
	cf, addr, err := accountCommand(e, "balance", `
Shows an account's balances of every asset and the sends to it not yet
received: of ADDRESS, or --account, or by default the account of your key.`, `  lattice balance
  lattice balance $(lattice key show --key bob.json)
  lattice balance --node http://127.0.0.1:8081 --json
`, args)
	if err != nil {
		return err
	}
	s, err := cf.connect(ctx, false)
	if err != nil {
		return err
	}
	bal, err := s.c.Balance(ctx, addr)
	if err != nil && !errors.Is(err, nodeclient.ErrNotFound) {
		return err
	}
	pending, err := s.c.Pending(ctx, &addr)
	if err != nil {
		return err
	}
	if *cf.json {
		if bal == nil {
			bal = map[string]string{}
		}
		return printJSON(e.stdout, map[string]any{"address": addr, "balances": bal, "pending": pending})
	}
	fmt.Fprintf(e.stdout, "account %s\n", addr)
	tw := tableRight(e.stdout)
	for _, asset := range ledger.Assets {
		amt, _ := ledger.ParseAmount(orZero(bal[asset.String()]))
		fmt.Fprintf(tw, "%s\t%s\t\n", amt.Units(), asset)
	}
	tw.Flush()
	if len(pending) > 0 {
		fmt.Fprintf(e.stdout, "%d pending receipt(s):\n", len(pending))
		for _, p := range pending {
			fmt.Fprintf(e.stdout, "  %s %s from %s\n", p.Amount.Units(), p.Asset, p.Source)
		}
		if own, err := wallet.LoadKey(*cf.key); err == nil && own.Address() == addr {
			fmt.Fprintln(e.stdout, "run `lattice receive` to take them")
		} else if _, kerr := s.c.Keyset(ctx, addr); kerr == nil {
			fmt.Fprintf(e.stdout, "its signers take them with `lattice receive --account %s --signers FILE,FILE`\n", addr)
		} else {
			fmt.Fprintln(e.stdout, "the account's owner takes them with `lattice receive` and their key")
		}
	}
	return nil
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// signingCommand parses a signing command that has no flags of its own and
// connects to the node.
func signingCommand(ctx context.Context, e *env, name, about, examples string, args []string) (*session, error) {
	f := newHelpFlags(e, name, name+" [flags]", about, examples)
	cf := addClientFlags(f, true)
	signOnlyBlock(f, name)
	cf.delegateFlag()
	if err := f.parse(args); err != nil {
		return nil, err
	}
	if err := noArgs(f); err != nil {
		return nil, err
	}
	if err := cf.checkDelegate(); err != nil {
		return nil, err
	}
	return cf.connect(ctx, true)
}

func runClaim(ctx context.Context, e *env, args []string) error {
	s, err := signingCommand(ctx, e, "claim", `
Claims 100 stable from the faucet for your account (or the multisig
--account), once per 24 hours: signs a claim block, computes its proof of
work and submits it.`+signOnlyAbout("claim"), `  lattice claim
  lattice claim --key alice.json --node http://127.0.0.1:8081
  lattice claim --account $MULTISIG --signers a.json,b.json
  lattice claim --sign-only > claim.json      # then: curl --data-binary @claim.json $NODE/blocks/claim
`, args)
	if err != nil {
		return err
	}
	h, err := s.c.Head(ctx, s.account)
	if err != nil {
		return err
	}
	now := nowMS()
	if err := claimAllowed(ctx, s.c, s.account, now); err != nil {
		return err
	}
	b, err := wallet.Claim(h, now)
	if err != nil {
		return err
	}
	if err := s.finish(ctx, b, s.multisig()); err != nil {
		return err
	}
	return s.report(e, b, "claimed %s stable; stable balance %s", b.Amount.Units(), b.Balance.Units())
}

// claimAllowed checks the faucet's window before the work of a claim is
// done, and says when the next claim is allowed as a date and a wait
// rather than a timestamp. The node still judges the block.
func claimAllowed(ctx context.Context, c *nodeclient.Client, a ledger.Address, now int64) error {
	chain, err := c.Chain(ctx, a)
	if errors.Is(err, nodeclient.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for i := len(chain) - 1; i >= 0; i-- {
		b := chain[i].Block
		if b.Type != ledger.TypeClaim {
			continue
		}
		if next := b.Timestamp + ledger.ClaimInterval; now < next {
			return fmt.Errorf("the faucet gives one claim a day: the last was at %s; the next is allowed at %s",
				when(b.Timestamp, now), when(next, now))
		}
		return nil
	}
	return nil
}

// when shows a block timestamp (ms) as a UTC date and its distance from
// now: "2026-11-25 21:03:07 UTC (in 23h59m)".
func when(ms, now int64) string {
	t := time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05 UTC")
	// Clamped to what a Duration holds (about 292 years), which scaling
	// to nanoseconds would otherwise wrap around.
	const widest = math.MaxInt64 / int64(time.Millisecond)
	d := time.Duration(max(-widest, min(ms-now, widest))) * time.Millisecond
	switch {
	case d > 0:
		return fmt.Sprintf("%s (in %s)", t, roundDuration(d))
	case d < 0:
		return fmt.Sprintf("%s (%s ago)", t, roundDuration(-d))
	}
	return t + " (now)"
}

// roundDuration rounds d to what a person reads: minutes past an hour,
// seconds below.
func roundDuration(d time.Duration) string {
	if d >= time.Hour {
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
	return d.Round(time.Second).String()
}

func runSend(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "send", "send --to ADDRESS --amount N [--asset native|stable] [flags]", `
Sends native or stable from your account (or the multisig --account) to
an address: signs a send block, computes its proof of work and submits it.
The recipient takes it with `+"`lattice receive`"+`.`+signOnlyAbout("send"), `  lattice send --to $(lattice key show --key bob.json) --amount 12.5
  lattice send --to $BOB --amount 0.5 --asset stable --json
  lattice send --to $BOB --amount 1 --account $MULTISIG --signers a.json,b.json
  lattice send --to $BOB --amount 1 --sign-only > send.json   # then: curl --data-binary @send.json $NODE/blocks/send
`)
	cf := addClientFlags(f, true)
	signOnlyBlock(f, "send")
	cf.delegateFlag()
	to := f.String("to", "", "recipient address (required)")
	amount := f.String("amount", "", "amount in units, up to 6 decimals (1.5 = 1500000 base units) (required)")
	assetName := f.String("asset", "native", "native or stable")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	switch {
	case *to == "":
		return usageErr("--to is required: the recipient's address")
	case *amount == "":
		return usageErr("--amount is required: how much to send, in units, like 12 or 0.5")
	}
	dest, err := ledger.ParseAddress(*to)
	if err != nil {
		return usageErr("--to: %v", err)
	}
	amt, err := ledger.ParseUnits(*amount)
	if err != nil || amt.IsZero() {
		return usageErr("--amount %q: want a positive amount in units, with at most 6 decimals, like 12 or 0.5", *amount)
	}
	asset, err := ledger.ParseAsset(*assetName)
	if err != nil {
		return usageErr("--asset: %v", err)
	}
	if err := cf.checkDelegate(); err != nil {
		return err
	}
	s, err := cf.connect(ctx, true)
	if err != nil {
		return err
	}
	h, err := s.c.Head(ctx, s.account)
	if err != nil {
		return err
	}
	b, err := wallet.Send(h, dest, amt, asset, nowMS())
	if err != nil {
		return err
	}
	if err := s.finish(ctx, b, s.multisig()); err != nil {
		return err
	}
	return s.report(e, b, "sent %s %s to %s; %s balance %s", amt.Units(), asset, dest, asset, b.Balance.Units())
}

func runReceive(ctx context.Context, e *env, args []string) error {
	s, err := signingCommand(ctx, e, "receive", `
Receives every pending send to your account (or the multisig --account):
one signed receive block for each, with its proof of work.

With --sign-only it prints the signed blocks, the JSON bodies of POST
/blocks/receive, one a line in the order to post them (each builds on the
one before), and submits nothing: post them within 10 minutes, the node's
clock window, and before the account signs another block.`, `  lattice receive
  lattice receive --key bob.json --json
  lattice receive --key bob.json --sign-only > receive.json   # then: curl --data-binary @receive.json $NODE/blocks/receive
`, args)
	if err != nil {
		return err
	}
	pending, err := s.c.Pending(ctx, &s.account)
	if err != nil {
		return err
	}
	if len(pending) == 0 && *s.f.representative != "" {
		return errors.New("nothing pending, so no receive block carries --representative: name it with your next send (lattice send ... --representative ADDRESS) or claim")
	}
	h, err := s.c.Head(ctx, s.account)
	if err != nil {
		return err
	}
	var done []*ledger.Block
	for _, p := range pending {
		b, err := wallet.Receive(h, ledger.Pending{Send: p.SendHash, Source: p.Source, Destination: p.Destination, Amount: p.Amount, Asset: p.Asset}, nowMS())
		if err != nil {
			return err
		}
		if err := s.finish(ctx, b, s.multisig()); err != nil {
			return fmt.Errorf("receiving %s: %w", p.SendHash, err)
		}
		h.Frontier, h.Timestamp = b.Hash, b.Timestamp
		h.Balances[b.Asset-1] = b.Balance
		done = append(done, b)
		if s.signOnly() {
			// One body a line, in the order to post them: each builds on
			// the one before.
			if err := printBody(e.stdout, b); err != nil {
				return err
			}
			continue
		}
		if !*s.f.json {
			fmt.Fprintf(e.stdout, "received %s %s from %s (block %s)\n", b.Amount.Units(), b.Asset, p.Source, b.Hash)
		}
	}
	switch {
	case s.signOnly():
		if len(done) == 0 {
			fmt.Fprintln(e.stderr, "nothing pending: no block to sign")
		}
		return nil
	case *s.f.json:
		if done == nil {
			done = []*ledger.Block{}
		}
		return printJSON(e.stdout, done)
	}
	if len(done) == 0 {
		fmt.Fprintln(e.stdout, "nothing pending")
	}
	return nil
}

func report(e *env, asJSON bool, b *ledger.Block, format string, args ...any) error {
	if asJSON {
		return printJSON(e.stdout, b)
	}
	fmt.Fprintf(e.stdout, format+"\n", args...)
	fmt.Fprintf(e.stdout, "block %s\n", b.Hash)
	return nil
}

func runChain(ctx context.Context, e *env, args []string) error {
	cf, addr, err := accountCommand(e, "chain", `
Lists an account's blocks, oldest first, with amounts, balances, times and
whether each is confirmed: of ADDRESS, or --account, or by default the
account of your key.`, `  lattice chain
  lattice chain $(lattice key show --key bob.json) --json
`, args)
	if err != nil {
		return err
	}
	c := nodeclient.New(*cf.node, nil)
	blocks, err := c.Chain(ctx, addr)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	if *cf.json {
		return printJSON(e.stdout, blocks)
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "#\tTYPE\tAMOUNT\tBALANCE\tTIME\tHASH\tCONFIRMED")
	for i, b := range blocks {
		amt := ""
		switch b.Type {
		case ledger.TypeSend:
			amt = "-" + b.Amount.Units()
		case ledger.TypeReceive, ledger.TypeClaim:
			amt = "+" + b.Amount.Units()
		case ledger.TypeLease, ledger.TypeLeaseAccept:
			amt = "-" + b.Amount.Units() // the escrowed cost, the locked stake
		case ledger.TypeLeaseSettle:
			if !b.Amount.IsZero() {
				amt = "-" + b.Amount.Units() // what the lease account pays out
			}
		}
		confirmed := "no"
		if b.Confirmed {
			confirmed = "yes"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s %s\t%s\t%s\t%s\n", i+1, b.Type, amt, b.Balance.Units(), b.Asset,
			time.UnixMilli(b.Timestamp).UTC().Format(time.DateTime), b.Hash, confirmed)
	}
	return tw.Flush()
}

func runBlock(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "block", "block HASH [flags]", `
Shows one block by its hash: type, account, amounts, balance, time and
whether it is confirmed.`, `  HASH=...    # a block hash: 64 hex digits, as `+"`lattice chain`"+` lists them
  lattice block $HASH
  lattice block $HASH --json --node http://127.0.0.1:8081
`)
	// Reading a block needs no key: --key is taken (scripts pass it to
	// every command) but not offered.
	node := f.string("node", "LATTICE_NODE", "", "http://127.0.0.1:8080", "node API URL")
	f.string("key", "LATTICE_KEY", "", homeDir(".lattice", "key.json"), "unused: a block is read without a key")
	f.hide("key")
	asJSON := f.jsonFlag()
	if err := f.parse(args); err != nil {
		return err
	}
	if f.NArg() > 1 {
		return usageErr("unexpected argument %q: want one block HASH", f.Arg(1))
	}
	if f.NArg() != 1 {
		return usageErr("want one block HASH")
	}
	h, err := ledger.ParseHash(f.Arg(0))
	if err != nil {
		return usageErr("%v", err)
	}
	b, err := nodeclient.New(*node, nil).Block(ctx, h)
	if err != nil {
		return unreachable(*node, err)
	}
	if *asJSON {
		return printJSON(e.stdout, b)
	}
	printBlock(e.stdout, b)
	return nil
}

// printBlock shows a block for a person: its set fields, one a line,
// amounts in units with their asset, times as UTC dates.
func printBlock(w io.Writer, b nodewire.Block) {
	tw := table(w)
	line := func(name, v string) { fmt.Fprintf(tw, "%s\t%s\n", name, v) }
	line("block", b.Hash.String())
	line("type", b.Type.String())
	line("account", b.Account.String())
	if !b.Previous.IsZero() {
		line("previous", b.Previous.String())
	}
	if !b.Destination.IsZero() {
		line("to", b.Destination.String())
	}
	if !b.Source.IsZero() {
		line("source", b.Source.String())
	}
	if !b.Amount.IsZero() {
		line("amount", b.Amount.Units()+" "+b.Asset.String())
	}
	line("balance", b.Balance.Units()+" "+b.Asset.String())
	if !b.Representative.IsZero() {
		line("representative", b.Representative.String())
	}
	line("time", time.UnixMilli(b.Timestamp).UTC().Format("2006-01-02 15:04:05.000 UTC"))
	confirmed := "no (the network may still settle it otherwise)"
	if b.Confirmed {
		confirmed = "yes"
	}
	line("confirmed", confirmed)
	if len(b.Signatures) > 0 {
		line("signatures", fmt.Sprintf("%d of the keyset", len(b.Signatures)))
	}
	tw.Flush()
}

const multisigUsage = `Usage: lattice multisig COMMAND [flags]

A multisig account belongs to a keyset: its blocks need the signatures of
THRESHOLD of its keys. Its address derives from the keyset it was opened
with. Other commands act for it with --account ADDRESS --signers FILES.

Commands:
  open --keys A,B,C --threshold N --signers FILES
      open the account of a keyset
  update --account ADDRESS --keys A,B,C --threshold N --signers FILES
      replace a multisig account's keyset

Examples:
  lattice multisig open --keys $A,$B,$C --threshold 2 --signers a.json,b.json
  lattice multisig update --account $MULTISIG --keys $A,$B,$D --threshold 2 --signers a.json,b.json
  lattice send --account $MULTISIG --signers a.json,c.json --to $BOB --amount 5

Run ` + "`lattice multisig COMMAND -h`" + ` for a command's flags.
`

func runMultisig(ctx context.Context, e *env, args []string) error {
	const want = "want `lattice multisig open --keys A,B,C --threshold N --signers FILES` or `lattice multisig update --account ADDRESS --keys ... --threshold N --signers FILES`"
	if done, err := groupHelp(e, args, multisigUsage, want); done {
		return err
	}
	if args[0] != "open" && args[0] != "update" {
		return usageErr("%s", want)
	}
	op := args[0]
	var f *flags
	if op == "open" {
		f = newHelpFlags(e, "multisig open", "multisig open --keys ADDRESSES --threshold N --signers FILES [flags]", `
Opens the multisig account of a keyset: THRESHOLD of the keys in --keys
must sign its blocks. The account's address derives from the keyset and is
printed; --signers are key files of the keyset that sign the open block.`+signOnlyAbout("multisig_open"), `  lattice multisig open --keys $A,$B,$C --threshold 2 --signers a.json,b.json
  lattice multisig open --keys $A,$B --threshold 1 --signers a.json --json
  lattice multisig open --keys $A,$B --threshold 1 --signers a.json --sign-only > open.json
`)
	} else {
		f = newHelpFlags(e, "multisig update", "multisig update --account ADDRESS --keys ADDRESSES --threshold N --signers FILES [flags]", `
Replaces the keyset of the multisig account --account with --keys and
--threshold; --signers are the key files that sign the update for the
account.`+signOnlyAbout("multisig_update"), `  lattice multisig update --account $MULTISIG --keys $A,$B,$D --threshold 2 --signers a.json,b.json
  lattice multisig update --account $MULTISIG --keys $A,$D --threshold 1 --signers a.json,b.json --sign-only > update.json
`)
	}
	cf := addClientFlags(f, true)
	signOnlyBlock(f, "multisig_"+op)
	if op == "update" {
		f.Lookup("account").Usage = "the multisig account whose keyset to replace (required)"
	} else {
		f.Lookup("account").Usage = "not needed: the account's address derives from --keys and --threshold; if given, it must be that address"
	}
	f.Lookup("signers").Usage += " (required)"
	keys := f.String("keys", "", "comma-separated addresses of the keyset (required)")
	threshold := f.Int("threshold", 0, "how many keys must sign (required)")
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	if op == "update" && *cf.account == "" {
		return usageErr("--account is required: the multisig account whose keyset to replace")
	}
	ks, err := parseKeyset("--keys", "--threshold", *keys, *threshold)
	if err != nil {
		return err
	}
	if op == "open" {
		// The account is derived from the keyset.
		derived := ledger.MultisigAddress(ks).String()
		if *cf.account != "" && !strings.EqualFold(*cf.account, derived) {
			return usageErr("--account %s: multisig open opens the keyset's own account, %s; leave --account out", *cf.account, derived)
		}
		*cf.account = derived
	}
	if *cf.signers == "" {
		return usageErr("--signers is required: the key files that sign")
	}
	s, err := cf.connect(ctx, true)
	if err != nil {
		return err
	}
	var b *ledger.Block
	if op == "open" {
		b = wallet.MultisigOpen(ks, nowMS())
	} else {
		h, err := s.c.Head(ctx, s.account)
		if err != nil {
			return err
		}
		if h.Frontier.IsZero() {
			return fmt.Errorf("account %s has no blocks", s.account)
		}
		b = wallet.MultisigUpdate(h, ks, nowMS())
	}
	if err := s.finish(ctx, b, true); err != nil {
		return err
	}
	return s.report(e, b, "multisig account %s: keyset of %d keys, threshold %d", b.Account, len(ks.Keys), ks.Threshold)
}

// parseKeyset reads a keyset from a flag of comma-separated addresses
// and a threshold (their flags named in errors), and validates it.
func parseKeyset(flag, thresholdFlag, keys string, threshold int) (ledger.Keyset, error) {
	if keys == "" {
		return ledger.Keyset{}, usageErr("%s is required: the keyset's addresses, comma-separated", flag)
	}
	var addrs []ledger.Address
	for _, k := range strings.Split(keys, ",") {
		a, err := ledger.ParseAddress(strings.TrimSpace(k))
		if err != nil {
			return ledger.Keyset{}, usageErr("%s: %v", flag, err)
		}
		if slices.Contains(addrs, a) {
			// Counted once, a key named twice made a keyset smaller than
			// the one asked for.
			return ledger.Keyset{}, usageErr("%s: %s is listed twice", flag, a)
		}
		addrs = append(addrs, a)
	}
	if threshold == 0 {
		return ledger.Keyset{}, usageErr("%s must be 1 to %d: how many of the keys must sign", thresholdFlag, len(addrs))
	}
	ks := ledger.NewKeyset(threshold, addrs...)
	if err := ks.Validate(); err != nil {
		return ledger.Keyset{}, usageErr("%v", err)
	}
	return ks, nil
}

// runKeySSH writes a key file's ed25519 key as an OpenSSH private key
// (and its .pub beside it): the account key that signs a lease is also
// the key its VM lets log in.
func runKeySSH(e *env, args []string) error {
	f := newHelpFlags(e, "key ssh", "key ssh [--key FILE] [--out FILE] [flags]", `
Writes the key of --key as an OpenSSH private key (mode 0600) to --out,
and its public key to --out.pub, and prints the public key. A lease's VM
of the debian-12 image lets its access key log in as root, so with a
tunnel to port 22 (lattice tunnel LEASE --port 22) ssh -i FILE logs in.
An existing file is never overwritten. The file can sign for the account:
never add it to an ssh-agent you forward (ssh -A) into a VM. To keep the
machine's key apart from the account's, make one (lattice key new --out
vm.json), name it in lattice lease create --access-key, and write it with
lattice key ssh --key vm.json.`, `  lattice key ssh
  lattice key ssh --key alice.json --out ~/.ssh/id_lattice_alice
`)
	key := f.string("key", "LATTICE_KEY", "", homeDir(".lattice", "key.json"), "key file: the profile's (the dev key, under lattice dev), else this default")
	out := f.String("out", homeDir(".lattice", "id_lattice"), "where to write the OpenSSH private key")
	asJSON := f.jsonFlag()
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	k, err := wallet.LoadKey(*key)
	if err != nil {
		return err
	}
	block, err := ssh.MarshalPrivateKey(k.Private(), "lattice "+k.Address().String()[:16])
	if err != nil {
		return err
	}
	pub, err := ssh.NewPublicKey(k.Private().Public())
	if err != nil {
		return err
	}
	line := ssh.MarshalAuthorizedKey(pub)
	for _, p := range []string{*out, *out + ".pub"} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s exists and is never overwritten: choose another --out", p)
		}
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o700); err != nil {
		return err
	}
	if err := writeFileExcl(*out, pem.EncodeToMemory(block), 0o600); err != nil {
		return err
	}
	if err := writeFileExcl(*out+".pub", line, 0o644); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, map[string]string{"public_key": strings.TrimSpace(string(line)), "file": *out, "public_file": *out + ".pub"})
	}
	fmt.Fprintf(e.stdout, "%s", line)
	fmt.Fprintf(e.stderr, "OpenSSH key written to %s (mode 0600) and %s.pub; it can sign for the account: never forward it with ssh -A\n", *out, *out)
	return nil
}
