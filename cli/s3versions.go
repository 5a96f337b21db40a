package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/latticenet/lattice/cloud/cloudclient"
	"github.com/latticenet/lattice/cloud/cloudwire"
)

// The versions of a bucket's objects (docs/cloud-api.md, "Object
// versions"): turning versioning on or suspending it, and listing them.

func runS3Versioning(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "versioning BUCKET [on|suspend]", `
Shows whether a bucket keeps versions of its objects, or sets it: on keeps
the object every write replaces, and makes a delete leave a delete marker;
suspend stops making versions (writes replace the null version) and keeps
those there are. A bucket that has kept versions cannot go back to never
versioned. List the versions with `+"`lattice s3 versions BUCKET`"+`.`, `  lattice s3 versioning drafts on
  lattice s3 versioning drafts
  lattice s3 versioning drafts suspend
`)
	if err := f.parse(args); err != nil {
		return err
	}
	if f.NArg() != 1 && f.NArg() != 2 {
		return usageErr("want a bucket, and on or suspend to set it; run `lattice s3 versioning -h`")
	}
	p, err := bucketArg(f.Arg(0))
	if err != nil {
		return err
	}
	status := ""
	if f.NArg() == 2 {
		switch strings.ToLower(f.Arg(1)) {
		case "on", "enable", "enabled":
			status = cloudwire.VersioningEnabled
		case "suspend", "suspended":
			status = cloudwire.VersioningSuspended
		case "off":
			return usageErr("versioning cannot be turned off, only suspended (versions kept stay): want on or suspend")
		default:
			return usageErr("want on or suspend, not %q", f.Arg(1))
		}
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	var b cloudwire.Bucket
	if status == "" {
		b, err = c.Bucket(ctx, p.bucket)
	} else {
		b, err = c.SetVersioning(ctx, p.bucket, status)
	}
	if err != nil {
		return explain(err, p)
	}
	if *f.json {
		return printJSON(e.stdout, b)
	}
	switch b.Versioning {
	case cloudwire.VersioningEnabled:
		fmt.Fprintf(e.stdout, "s3://%s keeps versions: a write keeps the object it replaces, a delete leaves a delete marker\n", b.Name)
	case cloudwire.VersioningSuspended:
		fmt.Fprintf(e.stdout, "s3://%s: versioning suspended: writes replace the null version; the versions kept stay\n", b.Name)
	default:
		fmt.Fprintf(e.stdout, "s3://%s has never kept versions: turn it on with `lattice s3 versioning %s on`\n", b.Name, b.Name)
	}
	if b.NoncurrentVersionCount != nil && b.NoncurrentSizeBytes != nil {
		fmt.Fprintf(e.stdout, "noncurrent versions (delete markers included): %d, %s\n", *b.NoncurrentVersionCount, humanBytes(*b.NoncurrentSizeBytes))
	}
	return nil
}

// removeVersions deletes every version and delete marker of a bucket that
// keeps or kept versions (what a delete there leaves behind), saying so for
// each unless quiet. A bucket never versioned has none: nothing is asked.
func removeVersions(ctx context.Context, e *env, c *cloudclient.Client, p s3Path, quiet bool) error {
	b, err := c.Bucket(ctx, p.bucket)
	if err != nil {
		return explain(err, p)
	}
	if b.Versioning == "" {
		return nil
	}
	// List first, then delete, as removeAll does.
	vs, err := allVersions(ctx, c, p)
	if err != nil {
		return err
	}
	for _, v := range vs {
		op := s3Path{p.bucket, v.Key}
		var ae *cloudclient.APIError
		if err := c.DeleteVersion(ctx, p.bucket, v.Key, v.VersionID); err != nil && !(errors.As(err, &ae) && ae.Code == "not_found") {
			return explain(err, op)
		}
		if !quiet {
			fmt.Fprintf(e.stdout, "delete: %s (version %s)\n", op, v.VersionID)
		}
	}
	return nil
}

// allVersions returns every version and delete marker under p's key,
// following the listing's markers.
func allVersions(ctx context.Context, c *cloudclient.Client, p s3Path) ([]cloudwire.ObjectVersion, error) {
	var all []cloudwire.ObjectVersion
	o := cloudclient.VersionOptions{Prefix: p.key, PerPage: cloudwire.MaxPerPage}
	for {
		l, err := c.Versions(ctx, p.bucket, o)
		if err != nil {
			return nil, explain(err, p)
		}
		all = append(all, l.Data...)
		if l.NextKeyMarker == "" {
			return all, nil
		}
		o.KeyMarker, o.VersionIDMarker = l.NextKeyMarker, l.NextVersionIDMarker
	}
}

func runS3Versions(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "versions BUCKET[/PREFIX] [--prefix P]", `
Lists every version and delete marker of a bucket's objects (those whose
keys begin with the prefix), by key and each key's newest first; LATEST
marks the key's current object, or the delete marker that hides it. A
bucket never versioned shows each object as its only version, null.
Download a version with the REST API's version_id (docs/cloud-api.md).`, `  lattice s3 versions drafts
  lattice s3 versions drafts --prefix essays/
  lattice s3 versions s3://drafts/essays/ --json
`)
	prefix := f.String("prefix", "", "only keys that begin with it")
	if err := f.parseN(args, 1, "a bucket"); err != nil {
		return err
	}
	p, err := parseS3Path(f.Arg(0))
	if err != nil {
		return err
	}
	if *prefix != "" {
		if p.key != "" {
			return usageErr("give the prefix once: in s3://BUCKET/PREFIX or with --prefix")
		}
		p.key = *prefix
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	all, err := allVersions(ctx, c, p)
	if err != nil {
		return err
	}
	if *f.json {
		return printJSON(e.stdout, nonNil(all))
	}
	if len(all) == 0 {
		fmt.Fprintf(e.stdout, "no versions under %s\n", p)
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "KEY\tVERSION\tLATEST\tSIZE\tMODIFIED")
	for _, v := range all {
		latest, size := "", humanBytes(v.Size)
		if v.IsLatest {
			latest = "yes"
		}
		if v.DeleteMarker {
			size = "(delete marker)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Key, v.VersionID, latest, size, localTime(v.LastModified))
	}
	return tw.Flush()
}
