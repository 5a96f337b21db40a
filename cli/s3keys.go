package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/latticenet/lattice/cloud/cloudclient"
	"github.com/latticenet/lattice/cloud/cloudwire"
)

const s3KeysUsage = `Usage: lattice s3 keys COMMAND [ARGS] [flags]

S3 access keys of your account, for S3 SDKs and tools (aws, rclone, ...)
that sign their requests to the S3 endpoint. A key may read, write or both,
in every bucket of the account or in one.

Commands:
  create [--name N] [--permissions read|write|readwrite] [--bucket BUCKET]
                            create a key; prints its secret once
  list                      list your S3 keys
  delete ACCESS_KEY_ID      delete a key

Every command takes --api URL (env LATTICE_API_URL, default
http://127.0.0.1:8090), --api-key KEY (env LATTICE_API_KEY) and --json.

Examples:
  lattice s3 keys create --name backup --permissions write --bucket backups
  lattice s3 keys list
  lattice s3 keys delete LK0A1B2C3D4E5F6G7H8I

Run ` + "`lattice s3 keys COMMAND -h`" + ` for a command's flags.
`

// runS3Keys is `lattice s3 keys create|list|delete`: the S3 access keys
// that S3 SDKs sign their requests with.
func runS3Keys(ctx context.Context, e *env, args []string) error {
	const want = "want `lattice s3 keys create [--name N] [--permissions read|write|readwrite] [--bucket BUCKET]`, `keys list` or `keys delete ACCESS_KEY_ID`"
	if done, err := groupHelp(e, args, s3KeysUsage, want); done {
		return err
	}
	if args[0] != "create" && args[0] != "list" && args[0] != "delete" {
		return usageErr("%s", want)
	}
	switch args[0] {
	case "create":
		return runS3KeysCreate(ctx, e, args[1:])
	case "list":
		return runS3KeysList(ctx, e, args[1:])
	}
	return runS3KeysDelete(ctx, e, args[1:])
}

// scopeText says which buckets an S3 key may use.
func scopeText(scope string) string {
	if scope == "" || scope == "*" {
		return "every bucket"
	}
	return "bucket " + scope
}

func runS3KeysCreate(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "keys create [--name N] [--permissions read|write|readwrite] [--bucket BUCKET]", `
Creates an S3 access key of your account and prints its ID and secret; the
secret is shown only once.`, `  lattice s3 keys create --name laptop
  lattice s3 keys create --name backup --permissions write --bucket backups --json
`)
	name := f.String("name", "", "a label for the key")
	perms := f.String("permissions", "readwrite", "what the key may do: read, write or readwrite")
	scope := f.String("bucket", "*", "the one bucket the key may use, or * for every bucket of the account")
	if err := f.parseN(args, 0, "no arguments besides the flags"); err != nil {
		return err
	}
	switch *perms {
	case "read", "write", "readwrite":
	default:
		return usageErr("--permissions must be read, write or readwrite, not %q", *perms)
	}
	if *scope == "" {
		// --bucket "$B" with B unset: never a key to every bucket.
		return usageErr("--bucket is empty: name a bucket, or * for every bucket of the account")
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	k, err := c.CreateS3Key(ctx, cloudclient.S3KeyOptions{Name: *name, Permissions: *perms, BucketScope: *scope})
	if err != nil {
		return explain(err, s3Path{})
	}
	if *f.json {
		return printJSON(e.stdout, k)
	}
	fmt.Fprintf(e.stdout, "Access key ID:     %s\nSecret access key: %s\n", k.AccessKeyID, k.Secret)
	fmt.Fprintf(e.stderr, "S3 key %s (%s, %s) created; the secret above is shown only once\n", k.AccessKeyID, k.Permissions, scopeText(k.BucketScope))
	return nil
}

func runS3KeysList(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "keys list", `
Lists your account's S3 access keys: ID, label, permissions, buckets and
creation time (never the secrets).`, `  lattice s3 keys list
  lattice s3 keys list --json
`)
	if err := f.parseN(args, 0, "no arguments"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	all, err := allPages(func(page int) (cloudwire.List[cloudwire.S3Key], error) {
		return c.S3Keys(ctx, page, cloudwire.MaxPerPage)
	})
	if err != nil {
		return explain(err, s3Path{})
	}
	if *f.json {
		return printJSON(e.stdout, nonNil(all))
	}
	if len(all) == 0 {
		fmt.Fprintln(e.stderr, "no S3 keys yet: make one with `lattice s3 keys create`")
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "ACCESS KEY ID\tNAME\tPERMISSIONS\tBUCKETS\tCREATED")
	for _, k := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.AccessKeyID, k.Name, k.Permissions, k.BucketScope, localTime(k.CreatedAt))
	}
	return tw.Flush()
}

func runS3KeysDelete(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "keys delete ACCESS_KEY_ID", `
Deletes an S3 access key: requests signed with it fail from then on.`, `  lattice s3 keys delete LK0A1B2C3D4E5F6G7H8I
`)
	if err := f.parseN(args, 1, "one access key ID"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	id := f.Arg(0)
	if err := c.DeleteS3Key(ctx, id); err != nil {
		var ae *cloudclient.APIError
		if errors.As(err, &ae) && ae.Code == "not_found" {
			return &s3Error{fmt.Sprintf("S3 key %q not found", id), err}
		}
		return explain(err, s3Path{})
	}
	if *f.json {
		return printJSON(e.stdout, map[string]string{"deleted": id})
	}
	fmt.Fprintf(e.stdout, "deleted S3 key %s\n", id)
	return nil
}

func runS3Presign(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "presign s3://BUCKET/KEY [--upload] [--expires 1h]", `
Prints a URL that downloads the object (or with --upload, uploads it with
PUT) without a key, until it expires.`, `  lattice s3 presign s3://photos/2026/beach.jpg
  lattice s3 presign s3://inbox/report.pdf --upload --expires 2d
  curl -T report.pdf "$(lattice s3 presign s3://inbox/report.pdf --upload)"
`)
	upload := f.Bool("upload", false, "a URL that uploads (PUT) the object instead of downloading it")
	expires := f.String("expires", "1h", "how long the URL works: a number with s, m, h or d (at most 7d)")
	if err := f.parseN(args, 1, "one s3://BUCKET/KEY"); err != nil {
		return err
	}
	p, err := parseS3Path(f.Arg(0))
	if err != nil {
		return err
	}
	if p.key == "" || strings.HasSuffix(p.key, "/") {
		return usageErr("%s names no object: want s3://BUCKET/KEY", p)
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	action := "download"
	if *upload {
		action = "upload"
	}
	u, err := c.Presign(ctx, p.bucket, p.key, action, *expires)
	if err != nil {
		if !*upload {
			return explainObject(ctx, c, err, p)
		}
		return explain(err, p)
	}
	if *f.json {
		return printJSON(e.stdout, u)
	}
	fmt.Fprintln(e.stdout, u.URL)
	if *upload {
		fmt.Fprintf(e.stderr, "anyone with this URL can upload %s (%s, such as curl -T FILE URL) until %s\n", p, u.Method, localTime(u.Expires))
	} else {
		fmt.Fprintf(e.stderr, "anyone with this URL can download %s until %s\n", p, localTime(u.Expires))
	}
	return nil
}
