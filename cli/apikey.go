package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/latticenet/lattice/cloud/cloudclient"
)

// runAPIKey is `lattice cloud apikey create|list|revoke`, run with an
// admin's --api and --api-key.
const apikeyUsage = `Usage: lattice cloud apikey COMMAND [flags]

API keys of the cloud platform's REST API: each belongs to an account and
authorizes ` + "`lattice s3`" + ` and the REST API for it. Managing them takes an admin
key (--api-key, env LATTICE_API_KEY), such as DATA/cloud/admin-api-key.

Commands:
  create --account NAME [--name LABEL]   create a key; prints its secret once
  list [--account NAME]                  list keys, of every account or one
  revoke ID                              revoke a key

Every command takes --api URL (env LATTICE_API_URL, default
http://127.0.0.1:8090), --api-key KEY and --json; under lattice dev, the
dev profile gives both (the admin key).

Examples:
  lattice cloud apikey create --account alice --name laptop
  lattice cloud apikey list --account alice
  lattice cloud apikey revoke key_4fQ9xT2mZ8rB1cLd

Run ` + "`lattice cloud apikey COMMAND -h`" + ` for a command's flags.
`

func runAPIKey(ctx context.Context, e *env, args []string) error {
	const want = "want `lattice cloud apikey create --account NAME [--name LABEL]`, `apikey list` or `apikey revoke ID`"
	if done, err := groupHelp(e, args, apikeyUsage, want); done {
		return err
	}
	if args[0] != "create" && args[0] != "list" && args[0] != "revoke" {
		return usageErr("%s", want)
	}
	op := args[0]
	var f *flags
	switch op {
	case "create":
		f = newHelpFlags(e, "cloud apikey create", "cloud apikey create --account NAME [--name LABEL] [flags]", `
Creates an API key for an account (the account is created if new) and
prints its secret, which is shown only once. Needs an admin --api-key.`, `  lattice cloud apikey create --account alice --name laptop
  lattice cloud apikey create --account alice --json --api-key $(cat ~/.lattice/dev/cloud/admin-api-key)
`)
	case "list":
		f = newHelpFlags(e, "cloud apikey list", "cloud apikey list [--account NAME] [flags]", `
Lists the API keys, of every account or of --account: ID, account, label,
secret prefix, creation time and whether revoked. Needs an admin --api-key.`, `  lattice cloud apikey list
  lattice cloud apikey list --account alice --json
`)
	default:
		f = newHelpFlags(e, "cloud apikey revoke", "cloud apikey revoke ID [flags]", `
Revokes the API key with this ID (as `+"`cloud apikey list`"+` shows it): requests
signed with it fail from then on. Needs an admin --api-key.`, `  lattice cloud apikey revoke key_4fQ9xT2mZ8rB1cLd
`)
	}
	apiURL := f.string("api", "LATTICE_API_URL", "", "http://127.0.0.1:8090", "cloud REST API URL")
	apiKey := f.string("api-key", "LATTICE_API_KEY", "", "", "an admin API key (required): the profile's, under lattice dev")
	asJSON := f.jsonFlag()
	account, name := new(string), new(string)
	switch op {
	case "create":
		account = f.String("account", "", "the account the key belongs to, created if new (required)")
		name = f.String("name", "", "a label for the key")
	case "list":
		account = f.String("account", "", "list only this account's keys")
	}
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	if op != "revoke" {
		// A label left unquoted (--name my laptop) once named a key "my".
		if err := noArgs(f); err != nil {
			return err
		}
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
		tw := table(e.stdout)
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
			return printJSON(e.stdout, nonNil(all))
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
