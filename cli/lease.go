package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/nodeclient"
)

const leaseUsage = `Usage: lattice lease COMMAND [flags]

Compute leases: a consumer leases a provider's resources for a time,
paying the whole cost into escrow up front; the provider's node accepts
it, locking a stake, with the timekeepers' attestation of the start; when
its time is up the provider is paid the cost and gets its stake back. A
lease its provider does not accept in time is refunded. Its consumer may
end a running lease early: the provider is then paid for the time served.

Commands:
  offers --vcpus N --memory MB --disk GB --duration D
      ask every provider the node knows for a signed offer, cheapest first
  create --vcpus N --memory MB --disk GB --duration D [--provider ADDRESS]
      lease from the cheapest offer (or from --provider), and wait until it is accepted
  list [--provider ADDRESS | --consumer ADDRESS | --all]
      your leases (or a provider's, a consumer's, every lease)
  show LEASE
      one lease: its resources, cost, stake, status and times
  end LEASE
      end your running lease now: you pay for the time it ran and get the rest back
  settle LEASE
      have the node build the block the lease needs now: start, refund, end, stake return, early end or remainder

Examples:
  lattice lease offers --vcpus 1 --memory 512 --disk 5 --duration 1h
  lattice lease create --vcpus 1 --memory 512 --disk 5 --duration 1h
  lattice lease list
  lattice lease show 3f1c...
  lattice lease end 3f1c...
  lattice lease settle 3f1c...
`

var leaseCommands = []string{"offers", "create", "list", "show", "end", "settle"}

func runLease(ctx context.Context, e *env, args []string) error {
	if done, err := groupHelp(e, args, leaseUsage, "want "+strings.Join(leaseCommands, ", ")); done {
		return err
	}
	switch args[0] {
	case "offers":
	case "create":
		return runLeaseCreate(ctx, e, args[1:])
	case "list":
		return runLeaseList(ctx, e, args[1:])
	case "show":
		return runLeaseShow(ctx, e, args[1:])
	case "end":
		return runLeaseEnd(ctx, e, args[1:])
	case "settle":
		return runLeaseSettle(ctx, e, args[1:])
	default:
		return usageErr("unknown command %q%s; run `lattice lease -h`", args[0], suggestion(args[0], leaseCommands))
	}
	f := newHelpFlags(e, "lease offers", "lease offers --duration D [--vcpus N] [--memory MB] [--disk GB] [flags]", `
Asks every provider the node knows for a signed offer on these resources
for this long, and lists the offers that came back within the node's
bound (3 seconds), cheapest first, and why the other providers made none.
The cost is the network's price (lattice gov get lease.prices) for the
whole duration, escrowed when the lease is made; the stake is what the
provider locks beside it.`, "  lattice lease offers --vcpus 1 --memory 512 --disk 5 --duration 1h\n  lattice lease offers --vcpus 2 --memory 2048 --disk 20 --duration 30d --json\n")
	cf := addClientFlags(f, false)
	f.hide("key")
	res := addResourceFlags(f, false)
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	req, err := res.request()
	if err != nil {
		return err
	}
	secs := req.Duration
	c := nodeclient.New(*cf.node, nil)
	got, err := c.RequestOffers(ctx, req)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	if *cf.json {
		return printJSON(e.stdout, got)
	}
	if got.Asked == 0 {
		fmt.Fprintln(e.stdout, "no provider is known to this node")
		return nil
	}
	if len(got.Offers) > 0 {
		tw := table(e.stdout)
		fmt.Fprintln(tw, "PROVIDER\tCOST\tSTAKE\tSTATE INDEX\tEXPIRES\t")
		for _, o := range got.Offers {
			fmt.Fprintf(tw, "%s\t%s native\t%s native\t%d\t%s\t\n", o.Provider, o.Cost.Units(), o.Stake.Units(), o.StateIndex,
				time.UnixMilli(o.Expiry).UTC().Format(time.RFC3339))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, r := range got.Refused {
		fmt.Fprintf(e.stdout, "no offer from %s: %s\n", r.Provider, r.Reason)
	}
	fmt.Fprintf(e.stdout, "%d of %d providers offered %s for %s\n", len(got.Offers), got.Asked, req.Resources(), time.Duration(secs)*time.Second)
	return nil
}

// parseLeaseDuration reads a Go duration or a number of days ("30d"),
// in whole seconds.
func parseLeaseDuration(s string) (int64, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n <= 0 || n > 365 {
			return 0, fmt.Errorf("want a whole number of days, 1 to 365")
		}
		return n * 86400, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d%time.Second != 0 || d <= 0 {
		return 0, fmt.Errorf("want a duration with its unit, in whole seconds, such as 60s, 90m or 1h, or days such as 30d")
	}
	return int64(d / time.Second), nil
}

const providerUsage = `Usage: lattice provider COMMAND [flags]

Compute providers: nodes that lease their machines' resources. A node
becomes one with ` + "`lattice node --provider-key FILE --capacity vcpus=N,memory_mb=N,disk_gb=N`" + `
(lattice dev makes its last node one).

Commands:
  status [ACCOUNT]
      every provider the node knows (or one): its resources in all, free, and active leases

Examples:
  lattice provider status
  lattice provider status --json
`

func runProvider(ctx context.Context, e *env, args []string) error {
	if done, err := groupHelp(e, args, providerUsage, "want status"); done {
		return err
	}
	if args[0] != "status" {
		return usageErr("unknown command %q%s; run `lattice provider -h`", args[0], suggestion(args[0], []string{"status"}))
	}
	f := newHelpFlags(e, "provider status", "provider status [ACCOUNT] [flags]", `
Lists every provider the node heard of (or the one ACCOUNT names): what
its record says its machines have in all, what is free (computed from the
leases on the ledger), its active leases, and the node it takes requests
at.`, "  lattice provider status\n  lattice provider status --json\n")
	cf := addClientFlags(f, false)
	f.hide("key")
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	if f.NArg() > 1 {
		return usageErr("unexpected argument %q; run `lattice provider status -h`", f.Arg(1))
	}
	var only *ledger.Address
	if f.NArg() == 1 {
		a, err := ledger.ParseAddress(f.Arg(0))
		if err != nil {
			return usageErr("ACCOUNT %q: %v", f.Arg(0), err)
		}
		only = &a
	}
	c := nodeclient.New(*cf.node, nil)
	ps, err := c.Providers(ctx)
	if err != nil {
		return unreachable(*cf.node, err)
	}
	if only != nil {
		var one []market.Provider
		for _, p := range ps {
			if p.Account == *only {
				one = append(one, p)
			}
		}
		if len(one) == 0 {
			return fmt.Errorf("%s is no provider this node knows", *only)
		}
		ps = one
	}
	if *cf.json {
		if ps == nil {
			ps = []market.Provider{}
		}
		return printJSON(e.stdout, ps)
	}
	if len(ps) == 0 {
		fmt.Fprintln(e.stdout, "no provider is known to this node")
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "PROVIDER\tTOTAL\tFREE\tLEASES\tNODE\t")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t\n", p.Account, p.Total, p.Free, p.ActiveLeases, p.NodePeer)
	}
	return tw.Flush()
}
