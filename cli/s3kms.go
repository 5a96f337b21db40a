package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/latticenet/lattice/cloud/cloudclient"
	"github.com/latticenet/lattice/cloud/cloudwire"
)

const s3KMSUsage = `Usage: lattice s3 kms COMMAND [ARGS] [flags]

Keys of the storage key service, for SSE-KMS: S3 writes that ask for
x-amz-server-side-encryption: aws:kms have their data key sealed under one,
and those that ask for aws:kms:dsse (dual-layer) their two data keys. The
header x-amz-server-side-encryption-aws-kms-key-id names the key by id,
name, alias/NAME or ARN; none is your account's default key, aws/s3, made
on first use. A disabled key's objects cannot be read until it is enabled
again; a rotated key seals new objects with new material and still opens
the old ones. Keys are never deleted.

Commands:
  create NAME [--description TEXT]   make a key
  list                               list your keys
  show KEY                           one key (by id or name)
  disable KEY                        refuse reads and writes under the key
  enable KEY                         allow them again
  rotate KEY                         new material for new objects

Every command takes --api URL (env LATTICE_API_URL, default
http://127.0.0.1:8090), --api-key KEY (env LATTICE_API_KEY) and --json.

Examples:
  lattice s3 kms create logs --description "for the log buckets"
  aws s3 cp app.log s3://logs/ --sse aws:kms --sse-kms-key-id alias/logs
  aws s3api put-object --bucket logs --key audit.log --body audit.log \
    --server-side-encryption aws:kms:dsse --ssekms-key-id alias/logs
  lattice s3 kms rotate logs

Run ` + "`lattice s3 kms COMMAND -h`" + ` for a command's flags.
`

var kmsCommands = []string{"create", "list", "show", "disable", "enable", "rotate"}

// runS3KMS is `lattice s3 kms ...`: the keys SSE-KMS seals data keys under.
func runS3KMS(ctx context.Context, e *env, args []string) error {
	const want = "want `lattice s3 kms create NAME`, `kms list`, or `kms show|disable|enable|rotate KEY`"
	if done, err := groupHelp(e, args, s3KMSUsage, want); done {
		return err
	}
	switch args[0] {
	case "create":
		return runS3KMSCreate(ctx, e, args[1:])
	case "list":
		return runS3KMSList(ctx, e, args[1:])
	case "show", "disable", "enable", "rotate":
		return runS3KMSKey(ctx, e, args[0], args[1:])
	}
	return usageErr("%s", want)
}

func runS3KMSCreate(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "kms create NAME [--description TEXT]", `
Makes a key of the storage key service. NAME is 1 to 250 letters, digits,
'/', '_' or '-' (not beginning aws/); S3 requests may name the key by it,
as alias/NAME, by its id or by its ARN.`, `  lattice s3 kms create logs
  lattice s3 kms create team/billing --description "invoices" --json
`)
	desc := f.String("description", "", "what the key is for")
	if err := f.parseN(args, 1, "one key NAME"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	k, err := c.CreateKMSKey(ctx, f.Arg(0), *desc)
	if err != nil {
		return explain(err, s3Path{})
	}
	if *f.json {
		return printJSON(e.stdout, k)
	}
	fmt.Fprintf(e.stdout, "%s\n", k.ARN)
	fmt.Fprintf(e.stderr, "key %s (%s) created; use it with x-amz-server-side-encryption-aws-kms-key-id: alias/%s\n", k.Name, k.ID, k.Name)
	return nil
}

func runS3KMSList(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "kms list", `
Lists your account's keys: id, name, state, versions and creation time.`, `  lattice s3 kms list
  lattice s3 kms list --json
`)
	if err := f.parseN(args, 0, "no arguments"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	all, err := allPages(func(page int) (cloudwire.List[cloudwire.KMSKey], error) {
		return c.KMSKeys(ctx, page, cloudwire.MaxPerPage)
	})
	if err != nil {
		return explain(err, s3Path{})
	}
	if *f.json {
		return printJSON(e.stdout, nonNil(all))
	}
	if len(all) == 0 {
		fmt.Fprintln(e.stderr, "no keys yet: make one with `lattice s3 kms create NAME` (SSE-KMS writes that name none make aws/s3)")
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tVERSIONS\tCREATED")
	for _, k := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", k.ID, k.Name, keyState(k), k.Versions, localTime(k.CreatedAt))
	}
	return tw.Flush()
}

func keyState(k cloudwire.KMSKey) string {
	if k.Enabled {
		return "enabled"
	}
	return "disabled"
}

// runS3KMSKey is show, disable, enable and rotate: one key by id or name.
func runS3KMSKey(ctx context.Context, e *env, action string, args []string) error {
	what := map[string]string{
		"show":    "Shows one key.",
		"disable": "Disables a key: objects sealed under it cannot be read, nor new ones written, until it is enabled again.",
		"enable":  "Enables a disabled key.",
		"rotate":  "Gives a key new material: objects written from now on use it; those written before still open.",
	}[action]
	f := newS3Flags(e, "kms "+action+" KEY", "\n"+what, "  lattice s3 kms "+action+" logs\n")
	if err := f.parseN(args, 1, "one KEY (its id or name)"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	ref := f.Arg(0)
	var k cloudwire.KMSKey
	if action == "show" {
		k, err = c.KMSKey(ctx, ref)
	} else {
		k, err = c.ChangeKMSKey(ctx, ref, action)
	}
	if err != nil {
		var ae *cloudclient.APIError
		if errors.As(err, &ae) && ae.Code == "not_found" {
			return &s3Error{fmt.Sprintf("key %q not found (a name with '/' is given by the key's id)", ref), err}
		}
		return explain(err, s3Path{})
	}
	if *f.json {
		return printJSON(e.stdout, k)
	}
	tw := table(e.stdout)
	fmt.Fprintf(tw, "ID\t%s\nARN\t%s\nNAME\t%s\nSTATE\t%s\nVERSIONS\t%d\nCREATED\t%s\n", k.ID, k.ARN, k.Name, keyState(k), k.Versions, localTime(k.CreatedAt))
	if k.RotatedAt != "" {
		fmt.Fprintf(tw, "ROTATED\t%s\n", localTime(k.RotatedAt))
	}
	if k.Description != "" {
		fmt.Fprintf(tw, "DESCRIPTION\t%s\n", k.Description)
	}
	return tw.Flush()
}
