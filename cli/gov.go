package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/statechain"
	"github.com/latticenet/lattice/wallet"
)

const govUsage = `Usage: lattice gov COMMAND [flags]

The governance state chain: one chain for the whole network whose blocks
set or delete keys, or replace the keyset that governs it. THRESHOLD of the
keyset's keys must sign each block. The network's parameters (timekeepers,
lease prices, the provider stake ratio, the lease acceptance timeout) are
keys of it; every value is checked when a change is made.

A change that needs more than your signature is a proposal file: each
other keyholder adds a signature with ` + "`gov sign`" + `, offline if they like,
and anyone submits it with ` + "`gov submit`" + `.

Commands:
  show                       the tip, the keyset, the parameters and every key
  get KEY                    one key's value (JSON)
  set KEY VALUE              set KEY to VALUE (JSON: quote strings, '"text"')
  delete KEY                 delete KEY (a parameter goes back to its default)
  keyset [--keys A,B --threshold N]
                             show the keyset, or propose a new one
  sign FILE                  add your signature to a proposal file
  submit FILE                post a proposal file's block to the node

Examples:
  lattice gov show
  lattice gov set lease.stake_ratio 0.25
  lattice gov set lease.prices '{"vcpu":"100","memory_mb":"1","disk_gb":"1"}' --out prices.json
  lattice gov sign prices.json --key alice.json
  lattice gov submit prices.json
  lattice gov keyset --keys $A,$B,$C --threshold 2
`

type govCommand struct {
	name string
	run  func(ctx context.Context, e *env, args []string) error
}

func govCommands() []govCommand {
	return []govCommand{
		{"show", runGovShow},
		{"get", runGovGet},
		{"set", runGovSet},
		{"delete", runGovDelete},
		{"keyset", runGovKeyset},
		{"sign", runGovSign},
		{"submit", runGovSubmit},
	}
}

func govNames() []string {
	var out []string
	for _, c := range govCommands() {
		out = append(out, c.name)
	}
	return out
}

func runGov(ctx context.Context, e *env, args []string) error {
	const want = "want show, get, set, delete, keyset, sign or submit"
	if done, err := groupHelp(e, args, govUsage, want); done {
		return err
	}
	for _, c := range govCommands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	return usageErr("unknown command %q%s; run `lattice gov -h`", args[0], suggestion(args[0], govNames()))
}

// govFlags parses a gov command's flags and wants exactly nargs
// positional arguments, named by names.
func govFlags(e *env, name, usage, about, examples string, args []string, nargs int, names string, extra func(f *flags)) (*flags, *clientFlags, error) {
	f := newHelpFlags(e, "gov "+name, usage, about, examples)
	cf := addClientFlags(f, false)
	if extra != nil {
		extra(f)
	}
	if err := f.parse(args); err != nil {
		return nil, nil, err
	}
	switch {
	case f.NArg() > nargs:
		return nil, nil, usageErr("unexpected argument %q; run `lattice gov %s -h`", f.Arg(nargs), name)
	case f.NArg() < nargs:
		return nil, nil, usageErr("want %s; run `lattice gov %s -h`", names, name)
	}
	return f, cf, nil
}

// proposal is a proposal file: a state-chain block and the network it is
// bound to, so that a keyholder can check, offline, that the hash they
// sign is the block's.
type proposal struct {
	Network ledger.Hash       `json:"network"`
	Block   *statechain.Block `json:"block"`
}

func readProposal(path string) (*proposal, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p proposal
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || p.Block == nil {
		return nil, fmt.Errorf("%s is not a proposal file (want {\"network\": ..., \"block\": ...}): %v", path, err)
	}
	if h := p.Block.ComputeHash(p.Network); h != p.Block.Hash {
		return nil, fmt.Errorf("%s: the block's contents hash to %s, not to the %s it says: it was changed after it was made; do not sign or submit it", path, h, p.Block.Hash)
	}
	if err := statechain.CheckAlone(p.Block, p.Network); err != nil {
		return nil, fmt.Errorf("%s: no node would take this block: %w", path, err)
	}
	return &p, nil
}

// describe says in words what a block does.
func describe(b *statechain.Block) string {
	switch b.Operation {
	case statechain.OpSet:
		return fmt.Sprintf("set %s = %s", b.Key, b.Value)
	case statechain.OpDelete:
		return "delete " + b.Key
	}
	return "replace the keyset with " + b.Value
}

// propose makes the block after the node's tip, signs it with the key
// file when it is a member of the keyset, and submits it when that is
// enough signatures; otherwise, or with --out, it writes a proposal file.
func propose(ctx context.Context, e *env, cf *clientFlags, out string, op statechain.Operation, key, value string) error {
	c := nodeclient.New(*cf.node, nil)
	info, err := c.Node(ctx)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	tip, err := c.StateTip(ctx)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	ks, err := c.StateKeyset(ctx)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	// While halted, no node takes a change, and one made now may follow a
	// block that the resolution drops.
	conflicts, err := c.StateConflicts(ctx)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	for _, sc := range conflicts {
		if !sc.Resolved {
			return fmt.Errorf("the state chain is halted: two blocks were signed for index %d, and no node takes a change until every node drops one (docs/operations.md, \"A state-chain conflict\")", sc.Index)
		}
	}
	b := &statechain.Block{Index: tip.Index + 1, Previous: tip.Hash, Operation: op, Key: key, Value: value,
		Timestamp: max(nowMS(), tip.Timestamp)}
	b.Seal(info.Genesis)
	signer, err := wallet.LoadKey(*cf.key)
	switch {
	case err == nil && ks.Contains(signer.Address()):
		b.Sign(signer.Private())
	case err == nil:
		fmt.Fprintf(e.stderr, "your key %s is not in the governance keyset: the proposal carries no signature of yours\n", signer.Address())
	case errors.Is(err, fs.ErrNotExist) && cf.flags.given["key"]:
		return fmt.Errorf("no key file at %s (--key)", *cf.key) // a typo, not a wish to sign nothing
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(e.stderr, "no key file at %s: the proposal carries no signature\n", *cf.key)
	default:
		return err
	}
	if out == "" && len(b.Signatures) >= ks.Threshold {
		h, err := c.SubmitState(ctx, b)
		if err != nil {
			return unreachable(*cf.node, err)
		}
		if *cf.json {
			return printJSON(e.stdout, map[string]any{"index": b.Index, "hash": h})
		}
		fmt.Fprintf(e.stdout, "state chain index %d: %s (block %s)\n", b.Index, describe(b), h)
		return nil
	}
	if out == "" {
		out = fmt.Sprintf("gov-proposal-%d.json", b.Index)
	}
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists; choose another file with --out", out)
	}
	if err := writeFileAtomic(out, proposal{Network: info.Genesis, Block: b}, 0o644); err != nil {
		return err
	}
	if *cf.json {
		return printJSON(e.stdout, map[string]any{"proposal": out, "index": b.Index, "hash": b.Hash, "signatures": len(b.Signatures), "threshold": ks.Threshold})
	}
	fmt.Fprintf(e.stdout, "proposal for state chain index %d written to %s: %s\n", b.Index, out, describe(b))
	if len(b.Signatures) >= ks.Threshold {
		fmt.Fprintf(e.stdout, "It has the signatures it needs (%d of %d): anyone runs\n  lattice gov submit %s\n", len(b.Signatures), ks.Threshold, out)
		return nil
	}
	fmt.Fprintf(e.stdout, "%d of the %d signatures it needs. Each other keyholder runs\n  lattice gov sign %s --key THEIR_KEY\nthen anyone runs\n  lattice gov submit %s\n",
		len(b.Signatures), ks.Threshold, out, out)
	return nil
}

func outFlag(f *flags) *string {
	return f.String("out", "", "write a proposal file here instead of submitting, even when your signature is enough (default when it is not: gov-proposal-INDEX.json)")
}

func runGovSet(ctx context.Context, e *env, args []string) error {
	var out *string
	f, cf, err := govFlags(e, "set", "gov set KEY VALUE [flags]", `
Sets KEY to VALUE, a JSON value, in a block after the state chain's tip,
signed with --key. When your signature meets the keyset's threshold the
block is submitted; otherwise it is written to a proposal file for the
other keyholders to sign (gov sign) and anyone to submit (gov submit).
Parameters are checked here and again by every node: `+paramList()+`.
Keys of your own start with "x." and take any JSON value.`,
		`  lattice gov set lease.accept_timeout_ms 300000
  lattice gov set timekeepers '{"keys":["`+strings.Repeat("ab", 32)+`"],"threshold":1}'
  lattice gov set x.motd '"maintenance on Sunday"' --out motd.json
`, args, 2, "KEY VALUE", func(f *flags) { out = outFlag(f) })
	if err != nil {
		return err
	}
	key, value := f.Arg(0), f.Arg(1)
	if !json.Valid([]byte(value)) {
		return usageErr("VALUE %q is not JSON; quote a string as '\"%s\"'", value, value)
	}
	canonical, err := statechain.CanonicalValue(key, value)
	if err != nil {
		return usageErr("%v", err)
	}
	if canonical != value {
		fmt.Fprintf(e.stderr, "the value in its canonical form, the one every node reads alike: %s\n", canonical)
	}
	return propose(ctx, e, cf, *out, statechain.OpSet, key, canonical)
}

func paramList() string {
	var ks []string
	for _, p := range statechain.Parameters {
		ks = append(ks, p.Key)
	}
	return strings.Join(ks, ", ")
}

func runGovDelete(ctx context.Context, e *env, args []string) error {
	var out *string
	f, cf, err := govFlags(e, "delete", "gov delete KEY [flags]", `
Deletes KEY from the state chain; a parameter goes back to its default.
Signed and submitted, or written to a proposal file, as gov set.`,
		"  lattice gov delete x.motd\n  lattice gov delete lease.stake_ratio --out ratio.json\n", args, 1, "KEY", func(f *flags) { out = outFlag(f) })
	if err != nil {
		return err
	}
	if err := statechain.CheckKey(f.Arg(0)); err != nil {
		return usageErr("%v", err)
	}
	// Deleting what is not set is a change no node takes.
	var apiErr *nodeclient.APIError
	if _, err := nodeclient.New(*cf.node, nil).StateValue(ctx, f.Arg(0)); errors.As(err, &apiErr) && apiErr.StatusCode == 404 {
		return fmt.Errorf("%s is not set on the state chain: nothing to delete", f.Arg(0))
	} else if err != nil {
		return unreachable(*cf.node, err)
	}
	return propose(ctx, e, cf, *out, statechain.OpDelete, f.Arg(0), "")
}

func runGovKeyset(ctx context.Context, e *env, args []string) error {
	var out, keys *string
	var threshold *int
	_, cf, err := govFlags(e, "keyset", "gov keyset [--keys ADDRESSES --threshold N] [flags]", `
Shows the keyset that governs the state chain. With --keys and
--threshold, proposes to replace it: signed by the current keyset, as
gov set; the new keyset signs every block after it.`,
		"  lattice gov keyset\n  lattice gov keyset --keys $A,$B,$C --threshold 2 --out keyset.json\n", args, 0, "no argument",
		func(f *flags) {
			out = outFlag(f)
			keys = f.String("keys", "", "comma-separated addresses of the new keyset")
			threshold = f.Int("threshold", 0, "how many of the new keys must sign")
		})
	if err != nil {
		return err
	}
	if *keys == "" && *threshold == 0 {
		c := nodeclient.New(*cf.node, nil)
		ks, err := c.StateKeyset(ctx)
		if err != nil {
			return unreachable(*cf.node, err)
		}
		if *cf.json {
			return printJSON(e.stdout, ks)
		}
		fmt.Fprintf(e.stdout, "%d of these %d keys sign each block:\n", ks.Threshold, len(ks.Keys))
		for _, k := range ks.Keys {
			fmt.Fprintf(e.stdout, "  %s\n", k)
		}
		return nil
	}
	ks, err := parseKeyset("--keys", "--threshold", *keys, *threshold)
	if err != nil {
		return err
	}
	return propose(ctx, e, cf, *out, statechain.OpUpdateKeyset, "", statechain.KeysetValue(ks))
}

func runGovSign(ctx context.Context, e *env, args []string) error {
	var yes *bool
	f, cf, err := govFlags(e, "sign", "gov sign FILE [flags]", `
Adds the signature of --key to the proposal in FILE. It first checks what
it can without a node (the block's contents hash to the hash it says, its
value is one its key accepts, in canonical form) and shows the network,
the index, the block it follows and the change; on a terminal it asks
before signing, elsewhere it needs --yes. It needs no node: a keyholder
may sign on a machine that is offline. The file is rewritten.`,
		"  lattice gov sign gov-proposal-4.json --key alice.json\n  lattice gov sign gov-proposal-4.json --key alice.json --yes\n", args, 1, "FILE",
		func(f *flags) {
			// Signing needs no node: --node is accepted (a script may
			// pass the same flags to every gov command) but not offered.
			f.hide("node")
			yes = f.Bool("yes", false, "sign without asking")
		})
	if err != nil {
		return err
	}
	path := f.Arg(0)
	p, err := readProposal(path)
	if err != nil {
		return err
	}
	k, err := wallet.LoadKey(*cf.key)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no key file at %s: pass the keyholder's key with --key", *cf.key)
	}
	if err != nil {
		return err
	}
	b := p.Block
	fmt.Fprintf(e.stderr, "network   %s (the ledger's genesis block)\nindex     %d, after block %s\ntimestamp %d (%s)\nchange    %s\n",
		p.Network, b.Index, b.Previous, b.Timestamp, time.UnixMilli(b.Timestamp).UTC().Format("2006-01-02 15:04:05 UTC"), describe(b))
	for _, sg := range b.Signatures {
		fmt.Fprintf(e.stderr, "signed by %s\n", sg.PublicKey)
	}
	if !*yes {
		if !isTTY(os.Stdin) {
			return usageErr("gov sign asks before it signs: read the change above, then add --yes")
		}
		fmt.Fprintf(e.stderr, "Sign this change with %s? [y/N] ", k.Address())
		var answer string
		fmt.Fscanln(os.Stdin, &answer)
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return errors.New("not signed")
		}
	}
	already := false
	for _, sg := range b.Signatures {
		already = already || sg.PublicKey == k.Address()
	}
	b.Sign(k.Private())
	if err := writeFileAtomic(path, p, 0o644); err != nil {
		return err
	}
	if *cf.json {
		return printJSON(e.stdout, map[string]any{"proposal": path, "index": b.Index, "hash": b.Hash, "signatures": len(b.Signatures)})
	}
	verb := "signed"
	if already {
		verb = "already signed by this key:"
	}
	// Offline, the keyset is not known here: submit keeps the signatures
	// of its keys and leaves out the others, saying whose.
	fmt.Fprintf(e.stdout, "%s state chain index %d (%s); %d signatures now (gov submit counts those of the governance keyset's keys)\n",
		verb, b.Index, describe(b), len(b.Signatures))
	return nil
}

// wouldBeEvidence reports whether b, a block for an index the node holds
// another block at, is what a node takes as evidence that the keyholders
// signed two blocks for one index (docs/protocol.md §21.7): valid after
// the block before it, signed by a threshold of the keyset in force
// there. The chain up to there is replayed from the node (it is short);
// signatures by keys outside that keyset are left out, as submit would.
func wouldBeEvidence(ctx context.Context, c *nodeclient.Client, network ledger.Hash, b *statechain.Block) (bool, error) {
	if b.Index == 0 {
		return false, nil
	}
	var chain []*statechain.Block
	for from := uint64(0); from < b.Index; {
		got, err := c.StateBlocks(ctx, from, b.Index-1)
		if err != nil {
			return false, err
		}
		if len(got) == 0 {
			return false, fmt.Errorf("the node answered no state-chain block from index %d", from)
		}
		chain = append(chain, got...)
		from += uint64(len(got))
	}
	st, err := statechain.New(network, chain[0])
	if err != nil {
		return false, nil // another network's proposal: refused, no evidence
	}
	if st, err = st.ApplyAll(chain[1:]); err != nil {
		return false, fmt.Errorf("replaying the node's state chain: %w", err)
	}
	ks := st.Keyset()
	b = b.Clone()
	b.Signatures = slices.DeleteFunc(b.Signatures, func(s ledger.MultisigSignature) bool { return !ks.Contains(s.PublicKey) })
	return st.Check(b) == nil, nil
}

// proposeAgain is what to do with a stale proposal.
const proposeAgain = "make the proposal again with `lattice gov set|delete|keyset`, and have it signed"

func runGovSubmit(ctx context.Context, e *env, args []string) error {
	f, cf, err := govFlags(e, "submit", "gov submit FILE [flags]", `
Posts the block of the proposal in FILE to the node, which checks it
against the state chain's tip and the keyset and spreads it to every node.`,
		"  lattice gov submit gov-proposal-4.json\n", args, 1, "FILE", func(f *flags) { f.hide("key") })
	if err != nil {
		return err
	}
	p, err := readProposal(f.Arg(0))
	if err != nil {
		return err
	}
	c := nodeclient.New(*cf.node, nil)
	// A proposal whose index another change took since it was made is
	// stale. Submitted, it would be two blocks the keyholders signed for one
	// index, which halts governance on every node (that is how a node
	// meets a real conflict): refuse it here instead.
	tip, err := c.StateTip(ctx)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	if i := p.Block.Index; i <= tip.Index {
		held, err := c.StateBlock(ctx, i)
		if err != nil {
			return unreachable(*cf.node, err)
		}
		if held.Hash == p.Block.Hash {
			fmt.Fprintf(e.stderr, "state chain index %d already holds this block: nothing to submit\n", i)
			if *cf.json {
				return printJSON(e.stdout, map[string]any{"index": i, "hash": held.Hash})
			}
			fmt.Fprintf(e.stdout, "state chain index %d: %s (block %s)\n", i, describe(held), held.Hash)
			return nil
		}
		// Only a block valid where it stands is evidence; any other would
		// just be refused, so say what halts only when it would.
		evidence, err := wouldBeEvidence(ctx, c, p.Network, p.Block)
		if err != nil {
			return unreachable(*cf.node, err)
		}
		halts := ""
		if evidence {
			halts = ": submitting this one would halt governance on every node, as evidence that the keyholders signed two blocks for one index"
		}
		return fmt.Errorf("this proposal is stale: state chain index %d is taken by another change (%s, block %s); %s%s",
			i, describe(held), held.Hash, proposeAgain, halts)
	}
	if p.Block.Index == tip.Index+1 && p.Block.Previous != tip.Hash {
		return fmt.Errorf("this proposal is stale: it follows block %s, but state chain index %d is block %s; %s",
			p.Block.Previous, tip.Index, tip.Hash, proposeAgain)
	}
	ks, err := c.StateKeyset(ctx)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	// A signature by a key outside the keyset would spoil the block:
	// signatures are not part of its hash, so leaving one out changes
	// nothing else.
	kept := p.Block.Signatures[:0]
	for _, sg := range p.Block.Signatures {
		if ks.Contains(sg.PublicKey) {
			kept = append(kept, sg)
		} else {
			fmt.Fprintf(e.stderr, "leaving out the signature of %s, not a member of the governance keyset\n", sg.PublicKey)
		}
	}
	p.Block.Signatures = kept
	h, err := c.SubmitState(ctx, p.Block)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	if *cf.json {
		return printJSON(e.stdout, map[string]any{"index": p.Block.Index, "hash": h})
	}
	fmt.Fprintf(e.stdout, "state chain index %d: %s (block %s)\n", p.Block.Index, describe(p.Block), h)
	return nil
}

func runGovGet(ctx context.Context, e *env, args []string) error {
	f, cf, err := govFlags(e, "get", "gov get KEY [flags]", `
Prints KEY's value, as JSON. A parameter that is not set prints its
default, saying so on stderr; any other key that is not set is an error.`,
		"  lattice gov get lease.prices\n  lattice gov get timekeepers --json\n", args, 1, "KEY", func(f *flags) { f.hide("key") })
	if err != nil {
		return err
	}
	key := f.Arg(0)
	c := nodeclient.New(*cf.node, nil)
	kv, err := c.StateValue(ctx, key)
	var apiErr *nodeclient.APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode == 404 {
		for _, p := range statechain.Parameters {
			if p.Key == key {
				fmt.Fprintf(e.stderr, "%s is not set: its default is in force\n", key)
				if *cf.json {
					return printJSON(e.stdout, map[string]any{"key": key, "value": json.RawMessage(p.Default), "set": false})
				}
				fmt.Fprintln(e.stdout, p.Default)
				return nil
			}
		}
	}
	if err != nil {
		return unreachable(*cf.node, err)
	}
	if *cf.json {
		return printJSON(e.stdout, kv)
	}
	fmt.Fprintln(e.stdout, string(kv.Value))
	return nil
}

func runGovShow(ctx context.Context, e *env, args []string) error {
	_, cf, err := govFlags(e, "show", "gov show [flags]", `
Shows the state chain on the node: its tip, the keyset that signs the next
block, the parameters in force (set, or their defaults), the other keys
set, and any conflict that halts it.`, "  lattice gov show\n  lattice gov show --json | jq .parameters\n", args, 0, "no argument",
		func(f *flags) { f.hide("key") })
	if err != nil {
		return err
	}
	c := nodeclient.New(*cf.node, nil)
	tip, err := c.StateTip(ctx)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	ks, err := c.StateKeyset(ctx)
	if err != nil {
		return err
	}
	params, err := c.StateParams(ctx)
	if err != nil {
		return err
	}
	kv, err := c.StateKV(ctx)
	if err != nil {
		return err
	}
	conflicts, err := c.StateConflicts(ctx)
	if err != nil {
		return err
	}
	if *cf.json {
		return printJSON(e.stdout, map[string]any{"tip": tip, "keyset": ks, "parameters": params.Parameters, "kv": kv, "conflicts": conflicts})
	}
	w := e.stdout
	fmt.Fprintf(w, "tip      index %d, block %s\n", tip.Index, tip.Hash)
	fmt.Fprintf(w, "keyset   %d of %d keys\n", ks.Threshold, len(ks.Keys))
	for _, k := range ks.Keys {
		fmt.Fprintf(w, "         %s\n", k)
	}
	for _, cfl := range conflicts {
		if !cfl.Resolved {
			fmt.Fprintf(w, "HALTED   two blocks were signed for index %d (%s, %s): no change is taken until the operator resolves it (docs/operations.md)\n",
				cfl.Index, cfl.Hashes[0], cfl.Hashes[1])
		}
	}
	fmt.Fprintln(w)
	tw := table(w)
	fmt.Fprintln(tw, "PARAMETER\tVALUE\tSET AT\t")
	for _, p := range params.Parameters {
		at := "default"
		if p.Index != nil {
			at = "index " + strconv.FormatUint(*p.Index, 10)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", p.Key, p.Value, at)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var own []string
	for k := range kv {
		if strings.HasPrefix(k, statechain.UserPrefix) {
			own = append(own, k)
		}
	}
	if len(own) > 0 {
		fmt.Fprintln(w)
		tw = table(w)
		fmt.Fprintln(tw, "KEY\tVALUE\t")
		slices.Sort(own)
		for _, k := range own {
			fmt.Fprintf(tw, "%s\t%s\t\n", k, kv[k])
		}
		return tw.Flush()
	}
	return nil
}
