package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/nodeclient"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/wallet"
)

// resourceFlags are the flags of a resource request.
type resourceFlags struct {
	vcpus, memory, disk *int64
	duration            *string
}

// addResourceFlags adds the flags of a resource request. With
// durationRequired (lease create, which escrows the whole cost at once)
// --duration has no default: a forgotten flag must not buy an hour.
func addResourceFlags(f *flags, durationRequired bool) resourceFlags {
	const durationHelp = "how long: a Go duration (90m, 1h) or days (30d); 60 s to 365 days"
	r := resourceFlags{
		vcpus:  f.Int64("vcpus", 1, "vCPUs (at least 1)"),
		memory: f.Int64("memory", 512, "memory in MB (at least 512)"),
		disk:   f.Int64("disk", 5, "disk in GB (at least 5)"),
	}
	if durationRequired {
		r.duration = f.String("duration", "", durationHelp+" (required: the whole cost is escrowed at once)")
	} else {
		r.duration = f.String("duration", "1h", durationHelp)
	}
	return r
}

func (r resourceFlags) request() (market.Request, error) {
	if *r.duration == "" {
		return market.Request{}, usageErr("--duration is required: how long to lease, e.g. --duration 1h (the whole cost is escrowed at once)")
	}
	secs, err := parseLeaseDuration(*r.duration)
	if err != nil {
		return market.Request{}, usageErr("--duration %q: %v", *r.duration, err)
	}
	req := market.Request{VCPUs: *r.vcpus, MemoryMB: *r.memory, DiskGB: *r.disk, Duration: secs}
	if err := req.Check(); err != nil {
		return req, usageErr("invalid resource request: %s", market.Reason(err))
	}
	return req, nil
}

func runLeaseCreate(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "lease create", "lease create --duration D [--vcpus N] [--memory MB] [--disk GB] [--provider ADDRESS] [flags]", `
Leases resources from a provider: asks the providers the node knows for
offers, takes the cheapest (or the one of --provider), and signs a lease
block that escrows the offer's cost from your account, at the state-chain
index the offer was quoted at. Then it waits (--wait) until the provider's
node has accepted the lease, with the timekeepers' attestation of its
start, and every step is confirmed. The lease ends by itself when its
duration is up (the provider is then paid); if no provider accepts it in
time (lattice gov get lease.accept_timeout_ms), `+"`lattice lease settle`"+` refunds it.`+signOnlyAbout("lease"),
		"  lattice lease create --vcpus 1 --memory 512 --disk 5 --duration 1h\n  lattice lease create --vcpus 2 --memory 2048 --disk 20 --duration 30d --provider $PROVIDER --json\n")
	cf := addClientFlags(f, true)
	signOnlyBlock(f, "lease")
	res := addResourceFlags(f, true)
	provider := f.String("provider", "", "lease from this provider (default: the cheapest offer)")
	access := f.String("access-key", "", "the key that may use the machine (default: your account)")
	wait := f.Duration("wait", 30*time.Second, "how long to wait for the provider to accept (0: do not wait)")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	req, err := res.request()
	if err != nil {
		return err
	}
	var only *ledger.Address
	if *provider != "" {
		a, err := ledger.ParseAddress(*provider)
		if err != nil {
			return usageErr("--provider: %v", err)
		}
		only = &a
	}
	s, err := cf.connect(ctx, true)
	if err != nil {
		return err
	}
	accessKey := s.account
	if *access != "" {
		if accessKey, err = ledger.ParseAddress(*access); err != nil {
			return usageErr("--access-key: %v", err)
		}
	}
	offers, err := s.c.RequestOffers(ctx, req)
	if err != nil {
		return err
	}
	offer, err := pickOffer(offers, req, only)
	if err != nil {
		return err
	}
	h, err := s.c.Head(ctx, s.account)
	if err != nil {
		return err
	}
	b, err := wallet.Lease(h, offerLease(offer, req, accessKey), nowMS())
	if err != nil {
		return err
	}
	if err := s.finish(ctx, b, s.multisig()); err != nil {
		return err
	}
	if s.signOnly() {
		return printBody(e.stdout, b)
	}
	if *wait <= 0 {
		return report(e, *cf.json, b, "lease %s made: %s for %s from %s, %s native escrowed", b.Hash, req.Resources(),
			time.Duration(req.Duration)*time.Second, offer.Provider, offer.Cost.Units())
	}
	l, err := waitLease(ctx, s.c, b.Hash, *wait)
	if err != nil {
		return err
	}
	if *cf.json {
		return printJSON(e.stdout, l)
	}
	fmt.Fprintf(e.stdout, "lease %s %s by provider %s\n", l.LeaseHash, l.Status, l.Provider)
	printLease(e, l)
	return nil
}

// pickOffer is the cheapest of offers (they come cheapest first), or the
// one of provider only; without one, the error lists why each provider
// made none.
func pickOffer(offers nodewire.Offers, req market.Request, only *ledger.Address) (*market.Offer, error) {
	for i, o := range offers.Offers {
		if only == nil || o.Provider == *only {
			return &offers.Offers[i], nil
		}
	}
	msg := "no provider offered " + req.Resources().String()
	if only != nil {
		msg = fmt.Sprintf("provider %s made no offer for %s", *only, req.Resources())
	}
	answered := false
	for _, r := range offers.Refused {
		if only == nil || r.Provider == *only {
			msg += fmt.Sprintf("\n  %s: %s", r.Provider, r.Reason)
			answered = true
		}
	}
	if only != nil && !answered {
		msg += ": it did not answer; it is not a provider this node knows, or it is offline (lattice provider status lists the providers)"
	}
	return nil, errors.New(msg)
}

// offerLease is the lease of offer for req, whose machine accessKey may
// use.
func offerLease(offer *market.Offer, req market.Request, accessKey ledger.Address) wallet.LeaseSpec {
	return wallet.LeaseSpec{Provider: offer.Provider, VCPUs: uint32(req.VCPUs), MemoryMB: uint32(req.MemoryMB), DiskGB: uint32(req.DiskGB),
		Duration: uint32(req.Duration), AccessKey: accessKey, Cost: offer.Cost, StateChainIndex: offer.StateIndex}
}

// waitLease polls the lease until its provider has accepted and started
// it (or it is already over) and that is confirmed, or until wait passes.
// An accept comes a moment before its start: "accepted" is not yet done.
func waitLease(ctx context.Context, c *nodeclient.Client, h ledger.Hash, wait time.Duration) (nodewire.Lease, error) {
	deadline := time.Now().Add(wait)
	var l nodewire.Lease
	var err error
	for {
		l, err = c.Lease(ctx, h)
		if err == nil && l.Status != "open" && l.Status != "accepted" && l.Confirmed {
			return l, nil
		}
		if err != nil && !errors.Is(err, nodeclient.ErrNotFound) {
			return l, err
		}
		if time.Now().After(deadline) {
			if err != nil {
				return l, fmt.Errorf("lease %s is not in the node's ledger after %s: %w", h, wait, err)
			}
			return l, fmt.Errorf("lease %s is still %s (confirmed: %v) after %s; see it with `lattice lease show %s`", h, l.Status, l.Confirmed, wait, h)
		}
		select {
		case <-ctx.Done():
			return l, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func printLease(e *env, l nodewire.Lease) {
	tw := table(e.stdout)
	ms := func(v int64) string {
		if v == 0 {
			return "-"
		}
		return time.UnixMilli(v).UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(tw, "  resources\t%d vCPU, %d MB memory, %d GB disk for %s\t\n", l.VCPUs, l.MemoryMB, l.DiskGB, time.Duration(l.Duration)*time.Second)
	fmt.Fprintf(tw, "  consumer\t%s\t\n", l.Consumer)
	fmt.Fprintf(tw, "  provider\t%s\t\n", l.Provider)
	paid := "escrowed"
	switch {
	case l.Status == "ended" && !l.NoticeHash.IsZero():
		paid = fmt.Sprintf("ended early: %s native back to the consumer, its notice included; the rest paid to the provider", l.Refund.Units())
	case l.Status == "ended":
		paid = "paid to the provider"
	case l.Status == "refunded":
		paid = "refunded"
	}
	fmt.Fprintf(tw, "  cost\t%s native (%s)\t\n", l.Cost.Units(), paid)
	fmt.Fprintf(tw, "  stake\t%s native\t\n", l.Stake.Units())
	fmt.Fprintf(tw, "  status\t%s (confirmed: %v)\t\n", l.Status, l.Confirmed)
	fmt.Fprintf(tw, "  created\t%s; may be accepted until %s\t\n", ms(l.CreatedAt), ms(l.AcceptDeadline))
	// Nothing on the ledger says a provider will never accept or start
	// a lease (offline, full, or declining it): the deadline does.
	refund := fmt.Sprintf("`lattice lease settle %s` refunds it", l.LeaseHash)
	past := time.Now().UnixMilli() >= l.AcceptDeadline
	switch {
	case l.Status == "open" && !past:
		fmt.Fprintf(tw, "  if not accepted\tby then (its provider offline, full or declining it): %s after that, then `lattice receive`\t\n", refund)
	case l.Status == "open":
		fmt.Fprintf(tw, "  not accepted\tin time (its provider offline, full or declining it): %s now, then `lattice receive`\t\n", refund)
	case l.Status == "accepted" && past:
		fmt.Fprintf(tw, "  not started\tin time: %s now, then `lattice receive`\t\n", refund)
	}
	switch {
	case l.StartTime != 0 && !l.NoticeHash.IsZero():
		fmt.Fprintf(tw, "  ran\t%s to %s (attested; ended early, its term was to %s)\t\n", ms(l.StartTime), ms(l.EndTime), ms(l.EndsAt))
	case l.StartTime != 0:
		fmt.Fprintf(tw, "  runs\t%s to %s (attested)\t\n", ms(l.StartTime), ms(l.EndsAt))
	}
	if l.EndTime != 0 {
		fmt.Fprintf(tw, "  settled\t%s\t\n", ms(l.EndTime))
	}
	if !l.NoticeHash.IsZero() {
		fmt.Fprintf(tw, "  notice\t%s (its consumer's, to end it early)\t\n", l.NoticeHash)
	}
	fmt.Fprintf(tw, "  state index\t%d\t\n", l.StateChainIndex)
	fmt.Fprintf(tw, "  lease account\t%s\t\n", l.LeaseAccount)
	tw.Flush()
}

func runLeaseList(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "lease list", "lease list [--provider ADDRESS | --consumer ADDRESS | --all] [flags]", `
Lists leases, by lease hash: by default those your key's account made;
--consumer and --provider name another party, --all lists every lease.`,
		"  lattice lease list\n  lattice lease list --provider $PROVIDER --json\n  lattice lease list --all\n")
	cf := addClientFlags(f, false)
	consumer := f.String("consumer", "", "leases this account made")
	provider := f.String("provider", "", "leases of this provider")
	all := f.Bool("all", false, "every lease")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	var filter nodeclient.LeaseFilter
	set := 0
	for _, x := range []struct {
		name string
		v    string
		dst  **ledger.Address
	}{{"consumer", *consumer, &filter.Consumer}, {"provider", *provider, &filter.Provider}} {
		if x.v == "" {
			continue
		}
		a, err := ledger.ParseAddress(x.v)
		if err != nil {
			return usageErr("--%s: %v", x.name, err)
		}
		*x.dst = &a
		set++
	}
	if *all {
		set++
	}
	if set > 1 {
		return usageErr("give at most one of --consumer, --provider and --all")
	}
	if set == 0 {
		a, err := cf.target(nil)
		if err != nil {
			return err
		}
		filter.Consumer = &a
	}
	c := nodeclient.New(*cf.node, nil)
	var leases []nodewire.Lease
	for {
		page, err := c.Leases(ctx, filter)
		if err != nil {
			return unreachable(*cf.node, err)
		}
		leases = append(leases, page...)
		if len(page) < 100 {
			break
		}
		last := page[len(page)-1].LeaseHash
		filter.After = &last
	}
	if *cf.json {
		if leases == nil {
			leases = []nodewire.Lease{}
		}
		return printJSON(e.stdout, leases)
	}
	if len(leases) == 0 {
		fmt.Fprintln(e.stdout, "no lease")
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "LEASE\tSTATUS\tRESOURCES\tDURATION\tCOST\tPROVIDER\t")
	for _, l := range leases {
		fmt.Fprintf(tw, "%s\t%s\t%d vCPU/%d MB/%d GB\t%s\t%s native\t%s\t\n", l.LeaseHash, l.Status, l.VCPUs, l.MemoryMB, l.DiskGB,
			time.Duration(l.Duration)*time.Second, l.Cost.Units(), l.Provider)
	}
	return tw.Flush()
}

// leaseArg parses the one LEASE argument of a command.
func leaseArg(f *flags, cmd string) (ledger.Hash, error) {
	if f.NArg() != 1 {
		if f.NArg() == 0 {
			return ledger.Hash{}, usageErr("want the LEASE hash; run `lattice %s -h`", cmd)
		}
		return ledger.Hash{}, usageErr("unexpected argument %q: want one LEASE hash", f.Arg(1))
	}
	h, err := ledger.ParseHash(f.Arg(0))
	if err != nil {
		return h, usageErr("LEASE %q: %v", f.Arg(0), err)
	}
	return h, nil
}

func runLeaseShow(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "lease show", "lease show LEASE [flags]", `
Shows one lease: its resources, parties, cost and stake, status, and the
times its blocks and the timekeepers fixed.`, "  lattice lease show $LEASE\n  lattice lease show $LEASE --json\n")
	cf := addClientFlags(f, false)
	f.hide("key")
	if err := f.parse(args); err != nil {
		return err
	}
	h, err := leaseArg(f, "lease show")
	if err != nil {
		return err
	}
	l, err := nodeclient.New(*cf.node, nil).Lease(ctx, h)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	if *cf.json {
		return printJSON(e.stdout, l)
	}
	fmt.Fprintf(e.stdout, "lease %s\n", l.LeaseHash)
	printLease(e, l)
	return nil
}

func runLeaseSettle(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "lease settle", "lease settle LEASE [flags]", `
Has the node build and submit the block the lease needs now, on the
lease's own account (anyone may): the start of an accepted lease, the
refund of a lease no provider accepted in time, the end of a lease whose
time is up (its provider is paid the cost and gets its stake back), the
return of a refunded lease's stake, the early end of a lease whose
consumer sent its notice (lattice lease end), or the remainder that then
pays the consumer back. Once the lease ended or was refunded, a send to
its account that nothing of its course takes in (a notice that came too
late, anyone's send) is bounced: sent back to its sender, one each time.
The node gathers the timekeepers' attestations the block needs. The payee
takes the payout in with `+"`lattice receive`"+`.`, "  lattice lease settle $LEASE\n")
	cf := addClientFlags(f, false)
	f.hide("key")
	if err := f.parse(args); err != nil {
		return err
	}
	h, err := leaseArg(f, "lease settle")
	if err != nil {
		return err
	}
	res, err := nodeclient.New(*cf.node, nil).SettleLease(ctx, h)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	if *cf.json {
		return printJSON(e.stdout, res)
	}
	switch res.Kind {
	case "refund":
		fmt.Fprintf(e.stdout, "lease %s refunded: %s native pending for its consumer (lattice receive)\n", h, res.Block.Amount.Units())
	case "end":
		fmt.Fprintf(e.stdout, "lease %s ended: %s native pending for its provider\n", h, res.Block.Amount.Units())
	case "stake return":
		fmt.Fprintf(e.stdout, "lease %s: stake of %s native pending for its provider\n", h, res.Block.Amount.Units())
	case "early end":
		fmt.Fprintf(e.stdout, "lease %s ended early: %s native pending for its provider (the time served and its stake)\n", h, res.Block.Amount.Units())
	case "remainder":
		fmt.Fprintf(e.stdout, "lease %s: the rest of its cost, %s native, pending for its consumer (lattice receive)\n", h, res.Block.Amount.Units())
	case "bounce":
		fmt.Fprintf(e.stdout, "lease %s: send %s bounced, %s %s pending for its sender (lattice receive)\n", h, res.Block.Source, res.Block.Amount.Units(), res.Block.Asset)
	default:
		fmt.Fprintf(e.stdout, "lease %s started\n", h)
	}
	fmt.Fprintf(e.stdout, "block %s\n", res.Hash)
	return nil
}

const timekeeperUsage = `Usage: lattice timekeeper COMMAND [flags]

Timekeepers attest the times leases start, end and expire; a lease block
needs the attestations of a threshold of the committee the state chain
names (lattice gov get timekeepers). A node keeps time with
` + "`lattice node --timekeeper-key FILE`" + ` (every node of lattice dev does).

Commands:
  status
      the committee, where each member answers, and this node's part

Examples:
  lattice timekeeper status
  lattice timekeeper status --json
`

func runTimekeeper(ctx context.Context, e *env, args []string) error {
	if done, err := groupHelp(e, args, timekeeperUsage, "want status"); done {
		return err
	}
	if args[0] != "status" {
		return usageErr("unknown command %q%s; run `lattice timekeeper -h`", args[0], suggestion(args[0], []string{"status"}))
	}
	f := newHelpFlags(e, "timekeeper status", "timekeeper status [flags]", `
Shows the timekeeper committee at the state chain's tip (its threshold and
precision), each member's node as its announcement gives it and whether
this node heard of it recently, other timekeepers heard of, whether this
node is one (and how many attestations it signed), and the misbehaviour
it recorded.`, "  lattice timekeeper status\n  lattice timekeeper status --json\n")
	cf := addClientFlags(f, false)
	f.hide("key")
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	c := nodeclient.New(*cf.node, nil)
	tk, err := c.Timekeepers(ctx)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	ev, err := c.TimekeeperEvidence(ctx)
	if err != nil {
		return err
	}
	if *cf.json {
		return printJSON(e.stdout, map[string]any{"timekeepers": tk, "evidence": ev})
	}
	members := 0
	for _, t := range tk.Timekeepers {
		if t.InCommittee {
			members++
		}
	}
	if members == 0 {
		fmt.Fprintf(e.stdout, "the state chain names no timekeeper committee (index %d): leases cannot be accepted; set one with `lattice gov set timekeepers ...`\n", tk.Index)
	} else {
		fmt.Fprintf(e.stdout, "committee at state-chain index %d: %d keys, threshold %d, precision %d ms\n", tk.Index, members, tk.Threshold, tk.PrecisionMS)
	}
	if len(tk.Timekeepers) > 0 {
		tw := table(e.stdout)
		fmt.Fprintln(tw, "KEY\tCOMMITTEE\tHEARD\tNODE\t")
		for _, t := range tk.Timekeepers {
			fmt.Fprintf(tw, "%s\t%v\t%v\t%s\t\n", t.Key, t.InCommittee, t.Heard, t.NodePeer)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if !tk.ThisNode.IsZero() {
		fmt.Fprintf(e.stdout, "this node keeps time as %s and has signed %d attestations\n", tk.ThisNode, tk.Signed)
	} else {
		fmt.Fprintln(e.stdout, "this node keeps no time")
	}
	for _, x := range ev {
		fmt.Fprintf(e.stdout, "MISBEHAVIOUR: timekeeper %s signed two %s attestations for lease %s (times %d and %d)\n",
			x.Key, x.Purpose, x.Lease, x.Attestations[0].Timestamp, x.Attestations[1].Timestamp)
	}
	return nil
}

// noticeAmount is what a notice to end a lease early sends: one base
// unit, which the lease's remainder gives back.
var noticeAmount = ledger.NewAmount(1)

func runLeaseEnd(ctx context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "lease end", "lease end LEASE [flags]", `
Ends your running lease now rather than at its term. It sends the lease's
account a notice, a send of 0.000001 native from your account, which the
remainder gives back. The timekeepers date the notice when it reaches
them; the lease then ends at that time, and the provider's node stops
the VM within seconds. The provider
is paid the cost of the time served, pro rata, and gets its stake back,
and you get the rest of the cost back. Both payouts are pending entries:
take yours in with `+"`lattice receive`"+`. The provider's node makes
the blocks that follow the notice; this command asks the node for them too,
so the lease ends even when the provider's node is away. It waits (--wait)
until the lease has ended and you are paid back.`+signOnlyAbout("send"),
		"  lattice lease end $LEASE\n  lattice lease end $LEASE --json\n")
	cf := addClientFlags(f, true)
	signOnlyBlock(f, "send")
	wait := f.Duration("wait", time.Minute, "how long to wait for the lease to end (0: send the notice and return)")
	if err := f.parse(args); err != nil {
		return err
	}
	h, err := leaseArg(f, "lease end")
	if err != nil {
		return err
	}
	s, err := cf.connect(ctx, true)
	if err != nil {
		return err
	}
	l, err := s.c.Lease(ctx, h)
	if err != nil {
		return err
	}
	switch {
	case l.Consumer != s.account:
		return fmt.Errorf("lease %s was made by %s: only its consumer can end it early (this key's account is %s)", h, l.Consumer, s.account)
	case l.Status == "open" || l.Status == "accepted":
		return fmt.Errorf("lease %s has not started (%s): a lease that never starts is refunded, with `lattice lease settle %s` once its acceptance deadline %s has passed",
			h, l.Status, h, time.UnixMilli(l.AcceptDeadline).UTC().Format(time.RFC3339))
	case l.Status != "active":
		return fmt.Errorf("lease %s is %s already", h, l.Status)
	case nowMS() >= l.EndsAt:
		return fmt.Errorf("lease %s's term ended at %s: its provider ends it, or `lattice lease settle %s`", h, time.UnixMilli(l.EndsAt).UTC().Format(time.RFC3339), h)
	}
	account := ledger.LeaseAccount(h)
	notice, err := pendingNotice(ctx, s.c, h, s.account) // sent before: one is enough
	if err != nil {
		return err
	}
	if notice.IsZero() {
		head, err := s.c.Head(ctx, s.account)
		if err != nil {
			return err
		}
		b, err := wallet.Send(head, account, noticeAmount, ledger.Native, nowMS())
		if err != nil {
			return err
		}
		if err := s.finish(ctx, b, s.multisig()); err != nil {
			return err
		}
		if s.signOnly() {
			return printBody(e.stdout, b)
		}
		notice = b.Hash
	} else if s.signOnly() {
		return fmt.Errorf("your notice %s to end lease %s is in already: nothing to sign", notice, h)
	}
	if *wait <= 0 {
		if *cf.json {
			return printJSON(e.stdout, map[string]ledger.Hash{"lease_hash": h, "notice_hash": notice})
		}
		fmt.Fprintf(e.stdout, "notice %s sent: lease %s ends once the timekeepers have dated it (lattice lease show %s)\n", notice, h, h)
		return nil
	}
	if l, err = endEarly(ctx, s.c, h, *wait); err != nil {
		return fmt.Errorf("your notice %s is in: %w", notice, err)
	}
	if *cf.json {
		return printJSON(e.stdout, l)
	}
	if l.NoticeHash.IsZero() {
		fmt.Fprintf(e.stdout, "lease %s ended at its term before your notice: its provider was paid the cost\n", h)
		// The notice is a stray now: the lease account bounces it.
		if res, err := s.c.SettleLease(ctx, h); err == nil && res.Kind == "bounce" && res.Block.Source == notice {
			fmt.Fprintf(e.stdout, "your notice bounced: %s native is pending for you: `lattice receive` takes it in\n", res.Block.Amount.Units())
		} else {
			fmt.Fprintf(e.stdout, "your notice is sent back to you by a bounce (its provider's node makes it, or `lattice lease settle %s`)\n", h)
		}
		return nil
	}
	served := time.Duration(l.EndTime-l.StartTime) * time.Millisecond
	if served >= time.Second {
		served = served.Truncate(time.Second) // never "1m0s into its 1m0s" before the term
	}
	// The provider is paid the cost less what comes back, the notice's
	// amount aside: cost + notice − refund.
	nb, err := s.c.Block(ctx, l.NoticeHash)
	if err != nil {
		return err
	}
	paid, err := l.Cost.Add(nb.Amount)
	if err == nil {
		paid, err = paid.Sub(l.Refund)
	}
	if err != nil {
		return fmt.Errorf("lease %s: refund %s exceeds its cost %s and notice %s", h, l.Refund, l.Cost, nb.Amount)
	}
	fmt.Fprintf(e.stdout, "lease %s ended early at %s, %s into its %s: the provider is paid %s native for it (and its stake back)\n",
		h, time.UnixMilli(l.EndTime).UTC().Format(time.RFC3339), served, time.Duration(l.Duration)*time.Second, paid.Units())
	fmt.Fprintf(e.stdout, "%s native is pending for you: `lattice receive` takes it in\n", l.Refund.Units())
	return nil
}

// pendingNotice returns the notice from to end lease h that is pending at
// its lease account, or the zero hash when there is none.
func pendingNotice(ctx context.Context, c *nodeclient.Client, h ledger.Hash, from ledger.Address) (ledger.Hash, error) {
	account := ledger.LeaseAccount(h)
	pending, err := c.Pending(ctx, &account)
	if err != nil {
		return ledger.Hash{}, err
	}
	for _, p := range pending {
		if p.Source == from && p.Asset == ledger.Native {
			return p.SendHash, nil
		}
	}
	return ledger.Hash{}, nil
}

// endEarly waits until lease h has ended with its remainder made and
// confirmed, asking the node for the blocks that follow a notice (the
// provider's node makes them too: the timekeepers' once-signed
// attestations make the two the same block).
func endEarly(ctx context.Context, c *nodeclient.Client, h ledger.Hash, wait time.Duration) (nodewire.Lease, error) {
	deadline := time.Now().Add(wait)
	var last error
	// Not due here yet (the timekeepers have not all seen the notice),
	// busy, or the node briefly unreachable: asked again until the wait
	// is over; a lease the node does not know ends it.
	gone := func(err error) bool {
		var apiErr *nodeclient.APIError
		return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound
	}
	for {
		l, err := c.Lease(ctx, h)
		switch {
		case gone(err):
			return l, err
		case err != nil:
			last = err
		default:
			done := l.Status == "ended" && (l.NoticeHash.IsZero() || len(l.SettleHashes) == 3)
			if done && l.Confirmed {
				return l, nil
			}
			if !done {
				if _, err := c.SettleLease(ctx, h); gone(err) {
					return l, err
				} else if err != nil {
					last = err
				}
			}
		}
		if time.Now().After(deadline) {
			why := ""
			if last != nil {
				why = fmt.Sprintf(" (the node last said: %v)", last)
			}
			return l, fmt.Errorf("lease %s is still %s (confirmed: %v) after %s%s: it ends once the timekeepers have dated the notice; see it with `lattice lease show %s`", h, l.Status, l.Confirmed, wait, why, h)
		}
		select {
		case <-ctx.Done():
			return l, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
