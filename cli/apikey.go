package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/latticenet/lattice/cloudclient"
)

// runAPIKey is `lattice cloud apikey create|list|revoke`, run with an
// admin's --api and --api-key.
func runAPIKey(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "list" && args[0] != "revoke") {
		return usageErr("want `lattice cloud apikey create --account NAME [--name LABEL]`, `apikey list` or `apikey revoke ID`")
	}
	op := args[0]
	f := newFlags(e, "cloud apikey "+op, "cloud apikey "+op+" [flags]")
	apiURL := f.string("api", "LATTICE_API_URL", "", "http://127.0.0.1:8090", "cloud REST API URL")
	apiKey := f.string("api-key", "LATTICE_API_KEY", "", "", "an admin API key")
	asJSON := f.Bool("json", false, "print machine-readable JSON")
	account := f.String("account", "", "the account the key belongs to (created if new)")
	name := f.String("name", "", "a label for the key")
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	if *apiKey == "" {
		return usageErr("--api-key (or LATTICE_API_KEY) is required: an admin key, such as the one in DATA/cloud/admin-api-key")
	}
	c := cloudclient.New(*apiURL, *apiKey, nil)
	switch op {
	case "create":
		if *account == "" {
			return usageErr("--account is required")
		}
		k, err := c.CreateKey(ctx, *account, *name)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, k)
		}
		fmt.Fprintf(e.stdout, "%s\n", k.Secret)
		fmt.Fprintf(e.stderr, "API key %s for account %s created; the secret above is shown only once\n", k.ID, k.Account)
	case "list":
		var all []any
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		if !*asJSON {
			fmt.Fprintln(tw, "ID\tACCOUNT\tNAME\tPREFIX\tCREATED\tSTATE")
		}
		for page := 1; ; page++ {
			l, err := c.Keys(ctx, *account, page, 100)
			if err != nil {
				return err
			}
			for _, k := range l.Data {
				all = append(all, k)
				state := "active"
				if k.Revoked {
					state = "revoked"
				}
				if k.Admin {
					state += ", admin"
				}
				created := k.CreatedAt
				if t, err := time.Parse(time.RFC3339Nano, created); err == nil {
					created = t.UTC().Format("2006-01-02 15:04:05 UTC")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s…\t%s\t%s\n", k.ID, k.Account, k.Name, k.Prefix, created, state)
			}
			if page*l.Meta.PerPage >= l.Meta.Total {
				break
			}
		}
		if *asJSON {
			if all == nil {
				all = []any{}
			}
			return printJSON(e.stdout, all)
		}
		return tw.Flush()
	case "revoke":
		if f.NArg() != 1 {
			return usageErr("want one key ID")
		}
		k, err := c.RevokeKey(ctx, f.Arg(0))
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, k)
		}
		fmt.Fprintf(e.stdout, "revoked %s (account %s)\n", k.ID, k.Account)
	}
	return nil
}
