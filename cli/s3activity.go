package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

// The commands for what the REST API keeps of a bucket beside its
// objects: lifecycle rules, the activity log, metrics; and a ZIP of many
// objects in one download.

// bucketArg reads a bucket argument: NAME, NAME/ or s3://NAME.
func bucketArg(arg string) (s3Path, error) {
	p, err := parseS3Path(strings.TrimSuffix(arg, "/"))
	if err != nil {
		return s3Path{}, err
	}
	if p.key != "" {
		return s3Path{}, usageErr("%q: want a bucket, not an object", arg)
	}
	return p, nil
}

func runS3Lifecycle(ctx context.Context, e *env, args []string) error {
	const want = "want `lattice s3 lifecycle ls BUCKET`, `lattice s3 lifecycle add BUCKET --expire-days N [--prefix P]` or `lattice s3 lifecycle rm BUCKET RULE_ID`"
	if done, err := groupHelp(e, args, s3LifecycleUsage, want); done {
		return err
	}
	switch args[0] {
	case "ls", "list":
		return runS3LifecycleList(ctx, e, args[1:])
	case "add":
		return runS3LifecycleAdd(ctx, e, args[1:])
	case "rm", "remove":
		return runS3LifecycleRemove(ctx, e, args[1:])
	}
	return usageErr("unknown command `s3 lifecycle %s`; %s", args[0], want)
}

const s3LifecycleUsage = `Usage: lattice s3 lifecycle ls|add|rm BUCKET ... [flags]

Lifecycle rules delete a bucket's objects some days after they were last
written: every object, or those under a prefix. A sweeper applies them
every 10 minutes.

Commands:
  ls BUCKET                                  list the bucket's rules
  add BUCKET --expire-days N [--prefix P]    add a rule
  rm BUCKET RULE_ID                          remove a rule

Examples:
  lattice s3 lifecycle add logs --expire-days 30 --prefix tmp/
  lattice s3 lifecycle ls logs
  lattice s3 lifecycle rm logs rule_3KqX0mAe

Run ` + "`lattice s3 lifecycle COMMAND -h`" + ` for a command's flags.
`

func lifecycleCommands() []string { return []string{"ls", "add", "rm"} }

func runS3LifecycleList(ctx context.Context, e *env, args []string) error {
	f := newAPIFlags(e, "s3 lifecycle ls", "s3 lifecycle ls BUCKET", `
Lists a bucket's lifecycle rules.`, `  lattice s3 lifecycle ls logs
`)
	if err := f.parseN(args, 1, "a bucket"); err != nil {
		return err
	}
	p, err := bucketArg(f.Arg(0))
	if err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	rules, err := allPages(func(page int) (cloudwire.List[cloudwire.LifecycleRule], error) {
		return c.Rules(ctx, p.bucket, page, cloudwire.MaxPerPage)
	})
	if err != nil {
		return explain(err, p)
	}
	if *f.json {
		return printJSON(e.stdout, nonNil(rules))
	}
	if len(rules) == 0 {
		fmt.Fprintf(e.stdout, "no lifecycle rules on s3://%s: add one with `lattice s3 lifecycle add %s --expire-days N`\n", p.bucket, p.bucket)
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "ID\tPREFIX\tEXPIRE DAYS\tCREATED")
	for _, r := range rules {
		prefix := r.Prefix
		if prefix == "" {
			prefix = "(every object)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", r.ID, prefix, r.ExpireDays, localTime(r.CreatedAt))
	}
	return tw.Flush()
}

func runS3LifecycleAdd(ctx context.Context, e *env, args []string) error {
	f := newAPIFlags(e, "s3 lifecycle add", "s3 lifecycle add BUCKET --expire-days N [--prefix P]", `
Adds a lifecycle rule: the bucket's objects (or those whose keys begin
with --prefix) are deleted --expire-days days after they were last
written.`, `  lattice s3 lifecycle add logs --expire-days 30
  lattice s3 lifecycle add photos --expire-days 7 --prefix tmp/
`)
	days := f.Int("expire-days", 0, "days after its last write that an object is deleted (required)")
	prefix := f.String("prefix", "", "only objects whose keys begin with this")
	if err := f.parseN(args, 1, "a bucket"); err != nil {
		return err
	}
	if *days < 1 {
		return usageErr("--expire-days is required: a number of days, 1 or more")
	}
	p, err := bucketArg(f.Arg(0))
	if err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	r, err := c.AddRule(ctx, p.bucket, *prefix, *days)
	if err != nil {
		return explain(err, p)
	}
	if *f.json {
		return printJSON(e.stdout, r)
	}
	what := "every object"
	if r.Prefix != "" {
		what = "objects under " + r.Prefix
	}
	fmt.Fprintf(e.stdout, "rule %s: %s of s3://%s expire %d days after they were written\n", r.ID, what, p.bucket, r.ExpireDays)
	return nil
}

func runS3LifecycleRemove(ctx context.Context, e *env, args []string) error {
	f := newAPIFlags(e, "s3 lifecycle rm", "s3 lifecycle rm BUCKET RULE_ID", `
Removes a lifecycle rule (its ID is in `+"`lattice s3 lifecycle ls`"+`).`, `  lattice s3 lifecycle rm logs rule_3KqX0mAe
`)
	if err := f.parseN(args, 2, "a bucket and a rule ID"); err != nil {
		return err
	}
	p, err := bucketArg(f.Arg(0))
	if err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	if err := c.DeleteRule(ctx, p.bucket, f.Arg(1)); err != nil {
		return explain(err, p)
	}
	if !*f.json {
		fmt.Fprintf(e.stdout, "rule %s removed from s3://%s\n", f.Arg(1), p.bucket)
	}
	return nil
}

func runS3Events(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "events BUCKET [--limit N] [--page N]", `
Shows a bucket's activity log, newest first: objects created, copied,
deleted or expired, and lifecycle rules added or removed, whoever made
the change (the REST API, the S3 endpoint, the lifecycle sweeper).`, `  lattice s3 events photos
  lattice s3 events photos --limit 100 --page 2 --json
`)
	limit := f.Int("limit", 20, "events per page, 1 to 100")
	page := f.Int("page", 1, "the page, from 1")
	if err := f.parseN(args, 1, "a bucket"); err != nil {
		return err
	}
	p, err := bucketArg(f.Arg(0))
	if err != nil {
		return err
	}
	if *limit < 1 || *limit > cloudwire.MaxPerPage || *page < 1 {
		return usageErr("--limit must be 1 to %d and --page 1 or more", cloudwire.MaxPerPage)
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	l, err := c.Events(ctx, p.bucket, *page, *limit)
	if err != nil {
		return explain(err, p)
	}
	if *f.json {
		return printJSON(e.stdout, l)
	}
	if len(l.Data) == 0 {
		fmt.Fprintf(e.stdout, "no events on page %d of s3://%s (%d in all)\n", *page, p.bucket, l.Meta.Total)
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "ID\tTIME\tEVENT\tDETAIL")
	for _, ev := range l.Data {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", ev.ID, localTime(ev.Time), ev.Type, eventDetail(ev))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if shown := (*page-1)*(*limit) + len(l.Data); shown < l.Meta.Total {
		fmt.Fprintf(e.stdout, "(%d of %d events; --page %d for more)\n", shown, l.Meta.Total, *page+1)
	}
	return nil
}

// eventDetail says what an event was about.
func eventDetail(ev cloudwire.Event) string {
	var parts []string
	if ev.Key != nil {
		parts = append(parts, *ev.Key)
	}
	if ev.Size != nil {
		parts = append(parts, humanBytes(*ev.Size))
	}
	if ev.SourceKey != "" {
		from := ev.SourceKey
		if ev.SourceBucket != "" {
			from = "s3://" + ev.SourceBucket + "/" + from
		}
		parts = append(parts, "from "+from)
	}
	if ev.RuleID != "" {
		parts = append(parts, "rule "+ev.RuleID)
	}
	if ev.Prefix != nil {
		prefix := *ev.Prefix
		if prefix == "" {
			prefix = "(every object)"
		}
		parts = append(parts, "prefix "+prefix+", "+strconv.Itoa(ev.ExpireDays)+" days")
	}
	return strings.Join(parts, "  ")
}

func runS3Metrics(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "metrics BUCKET [--hours N] [--hourly | --top | --types]", `
Shows a bucket's traffic: requests by kind, bytes in and out and errors
over the last --hours hours, with its size now; --hourly hour by hour,
--top its most requested objects, --types its objects by extension.`, `  lattice s3 metrics photos
  lattice s3 metrics photos --hours 168 --hourly
  lattice s3 metrics photos --top
  lattice s3 metrics photos --types --json
`)
	hours := f.Int("hours", 24, "hours to look back, 1 to 720")
	hourly := f.Bool("hourly", false, "one row per hour")
	top := f.Bool("top", false, "the most requested objects")
	types := f.Bool("types", false, "objects and bytes by file extension")
	if err := f.parseN(args, 1, "a bucket"); err != nil {
		return err
	}
	p, err := bucketArg(f.Arg(0))
	if err != nil {
		return err
	}
	n := 0
	for _, b := range []bool{*hourly, *top, *types} {
		if b {
			n++
		}
	}
	if n > 1 {
		return usageErr("--hourly, --top and --types are one view each: give one")
	}
	if *hours < 1 || *hours > 720 {
		return usageErr("--hours must be 1 to 720")
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	tw := table(e.stdout)
	switch {
	case *hourly:
		m, err := c.Metrics(ctx, p.bucket, *hours)
		if err != nil {
			return explain(err, p)
		}
		if *f.json {
			return printJSON(e.stdout, m)
		}
		fmt.Fprintln(tw, "HOUR\tGET\tPUT\tDELETE\tLIST\tOTHER\tIN\tOUT\tERRORS")
		for _, h := range m.Hourly {
			r := h.Requests
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%d\n", localTime(h.Hour), r.Get, r.Put, r.Delete, r.List, r.Other,
				humanBytes(h.BytesIn), humanBytes(h.BytesOut), h.Errors)
		}
	case *top:
		objs, err := allPages(func(page int) (cloudwire.List[cloudwire.TopObject], error) {
			return c.TopObjects(ctx, p.bucket, page, cloudwire.MaxPerPage)
		})
		if err != nil {
			return explain(err, p)
		}
		if *f.json {
			return printJSON(e.stdout, nonNil(objs))
		}
		fmt.Fprintln(tw, "KEY\tREQUESTS\tIN\tOUT\tLAST ACCESS")
		for _, o := range objs {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", o.Key, o.Requests, humanBytes(o.BytesIn), humanBytes(o.BytesOut), localTime(o.LastAccess))
		}
	case *types:
		fts, err := allPages(func(page int) (cloudwire.List[cloudwire.FileType], error) {
			return c.FileTypes(ctx, p.bucket, page, cloudwire.MaxPerPage)
		})
		if err != nil {
			return explain(err, p)
		}
		if *f.json {
			return printJSON(e.stdout, nonNil(fts))
		}
		fmt.Fprintln(tw, "EXTENSION\tOBJECTS\tSIZE")
		for _, ft := range fts {
			ext := ft.Extension
			if ext == "" {
				ext = "(none)"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\n", ext, ft.ObjectCount, humanBytes(ft.SizeBytes))
		}
	default:
		m, err := c.MetricsSummary(ctx, p.bucket, *hours)
		if err != nil {
			return explain(err, p)
		}
		if *f.json {
			return printJSON(e.stdout, m)
		}
		r := m.Requests
		fmt.Fprintf(tw, "bucket:\ts3://%s\n", m.Bucket)
		fmt.Fprintf(tw, "window:\tthe last %d hours (from %s)\n", m.Hours, localTime(m.From))
		fmt.Fprintf(tw, "requests:\t%d (%d get, %d put, %d delete, %d list, %d other)\n", r.Total, r.Get, r.Put, r.Delete, r.List, r.Other)
		fmt.Fprintf(tw, "bytes:\t%s in, %s out\n", humanBytes(m.BytesIn), humanBytes(m.BytesOut))
		fmt.Fprintf(tw, "errors:\t%d\n", m.Errors)
		fmt.Fprintf(tw, "stored now:\t%d objects, %s\n", m.ObjectCount, humanBytes(m.SizeBytes))
	}
	return tw.Flush()
}

// maxZipKeys is the API's limit of objects in one ZIP.
const maxZipKeys = 100

func runS3Zip(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "zip s3://BUCKET/[PREFIX] FILE|-", `
Downloads every object under PREFIX (at most 100) as one ZIP archive,
made by the platform, to FILE (- for stdout). Keys are the archive's
paths.`, `  lattice s3 zip s3://photos/2026/day1/ day1.zip
  lattice s3 zip s3://reports/ - > reports.zip
`)
	if err := f.parseN(args, 2, "an s3://BUCKET/[PREFIX] URL and a FILE (or -)"); err != nil {
		return err
	}
	if !isS3URL(f.Arg(0)) {
		return usageErr("%q: want an s3://BUCKET/[PREFIX] URL", f.Arg(0))
	}
	p, err := parseS3Path(f.Arg(0))
	if err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	objs, err := allObjects(ctx, c, p)
	if err != nil {
		return explain(err, p)
	}
	if len(objs) == 0 {
		return fmt.Errorf("no objects under %s", p)
	}
	if len(objs) > maxZipKeys {
		return fmt.Errorf("%d objects under %s: a ZIP holds at most %d; narrow the prefix", len(objs), p, maxZipKeys)
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	rc, err := c.DownloadZip(ctx, p.bucket, keys)
	if err != nil {
		return explain(err, p)
	}
	defer rc.Close()
	var w io.Writer = e.stdout
	out := f.Arg(1)
	var file *os.File
	if out != "-" {
		if file, err = os.CreateTemp(dirOf(out), ".lattice-zip-*"); err != nil {
			return err
		}
		defer os.Remove(file.Name())
		w = file
	}
	n, err := io.Copy(w, rc)
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(file.Name(), out)
		}
	}
	if err != nil {
		return fmt.Errorf("writing the ZIP of %s: %w", p, err)
	}
	if out != "-" && !*f.json {
		fmt.Fprintf(e.stderr, "%d objects of %s in %s (%s)\n", len(keys), p, out, humanBytes(n))
	}
	return nil
}

// dirOf is the directory a file is written in.
func dirOf(path string) string {
	if i := strings.LastIndexByte(path, os.PathSeparator); i >= 0 {
		return path[:i+1]
	}
	return "."
}

func runS3Move(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "mv SRC DST", `
Moves one object: copies it as `+"`lattice s3 cp`"+` does (an upload, a download,
or a copy within its bucket), then deletes the source (the local file for
an upload, the object otherwise) once the copy has succeeded.`, `  lattice s3 mv s3://photos/tmp/beach.jpg s3://photos/2026/beach.jpg
  lattice s3 mv report.pdf s3://docs/
  lattice s3 mv s3://docs/old.pdf .
`)
	if err := f.parseN(args, 2, "SRC and DST, one of them an s3://BUCKET/KEY URL"); err != nil {
		return err
	}
	src, dst := f.Arg(0), f.Arg(1)
	if src == "-" || dst == "-" {
		return usageErr("mv moves objects and files, not stdin or stdout: use `lattice s3 cp`")
	}
	if !isS3URL(src) && !isS3URL(dst) {
		return usageErr("one of SRC and DST must be an s3://BUCKET/KEY URL")
	}
	var from s3Path
	if isS3URL(src) {
		p, err := parseS3Path(src)
		if err != nil {
			return err
		}
		if p.key == "" || strings.HasSuffix(p.key, "/") {
			return usageErr("%q: mv moves one object; name its key", src)
		}
		from = p
	} else if st, err := os.Stat(src); err == nil && st.IsDir() {
		return usageErr("%q is a folder: mv moves one file", src)
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	// The copy, with the flags mv shares with cp.
	cpArgs := []string{src, dst, "--api", *f.api, "--api-key", *f.apiKey}
	if *f.json {
		cpArgs = append(cpArgs, "--json")
	}
	if err := copyObjects(ctx, e, cpArgs, "move"); err != nil {
		return err
	}
	if from.bucket != "" {
		if err := c.DeleteObject(ctx, from.bucket, from.key); err != nil {
			return fmt.Errorf("copied, but deleting %s failed: %w", from, explain(err, from))
		}
	} else if err := os.Remove(src); err != nil {
		return fmt.Errorf("uploaded, but removing %s failed: %w", src, err)
	}
	return nil
}
