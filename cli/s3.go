package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/cloudclient"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

// s3Commands are the subcommands of `lattice s3`, in the order of its
// usage text.
func s3Commands() []command {
	return []command{
		{"mb", "make a bucket", runS3MakeBucket},
		{"rb", "remove a bucket", runS3RemoveBucket},
		{"ls", "list buckets, or a bucket's objects and folders", runS3List},
		{"cp", "upload or download files and folders", runS3Copy},
		{"mv", "move an object: copy it, then delete the source", runS3Move},
		{"sync", "make a prefix hold what a folder holds, or the other way", runS3Sync},
		{"rm", "delete an object, or every object under a prefix", runS3Remove},
		{"public", "allow or stop downloads without credentials", runS3Public},
		{"versioning", "show, turn on or suspend a bucket's object versions", runS3Versioning},
		{"versions", "list the versions and delete markers of a bucket's objects", runS3Versions},
		{"usage", "show bytes and objects stored", runS3Usage},
		{"presign", "make a URL that downloads or uploads one object", runS3Presign},
		{"keys", "create, list or delete S3 access keys", runS3Keys},
		{"kms", "create, list, disable or rotate SSE-KMS keys", runS3KMS},
		{"lifecycle", "list, add or remove a bucket's lifecycle rules", runS3Lifecycle},
		{"events", "show a bucket's activity log", runS3Events},
		{"metrics", "show a bucket's traffic, top objects or file types", runS3Metrics},
		{"zip", "download every object under a prefix as one ZIP", runS3Zip},
	}
}

const s3Usage = `Usage: lattice s3 COMMAND [ARGS] [flags]

Buckets and objects of the cloud platform, over its REST API.

Buckets:
  mb BUCKET [--notes TEXT]              make a bucket
  rb BUCKET [--force]                   remove an empty bucket (--force: empty it first)
  ls                                    list your buckets
  ls BUCKET[/PREFIX] [--recursive]      list objects and folders (--recursive: every key)
  public BUCKET on|off                  allow or stop downloads without credentials
  versioning BUCKET [on|suspend]        keep a version of every write and delete, or stop making them
  versions BUCKET [--prefix P]          every version and delete marker, each key's newest first
  usage                                 bytes and objects, in total and per bucket
  lifecycle ls|add|rm BUCKET ...        rules that delete objects some days after their last write
  events BUCKET                         the activity log: objects created, copied, deleted, expired
  metrics BUCKET [--hourly|--top|--types]
                                        traffic, most requested objects, objects by extension

Objects (s3://BUCKET/KEY names an object, s3://BUCKET/PREFIX/ a folder):
  cp FILE s3://BUCKET/[KEY]             upload a file (to KEY, or under its own name)
  cp DIR s3://BUCKET/[PREFIX] -r        upload a folder: keys are PREFIX/relative/path
  cp - s3://BUCKET/KEY                  upload what comes on stdin
  cp s3://BUCKET/KEY FILE|DIR|-         download an object (- writes it to stdout)
  cp s3://BUCKET/[PREFIX] DIR -r        download every object under PREFIX
  cp s3://BUCKET/KEY s3://BUCKET/KEY2   copy an object within its bucket
  mv SRC DST                            move one object (cp, then delete the source)
  sync DIR s3://BUCKET/[PREFIX] [--delete]
                                        send what differs (either way); --dry-run to look first
  rm s3://BUCKET/KEY                    delete an object
  rm s3://BUCKET/[PREFIX] -r            delete every object under PREFIX
  presign s3://BUCKET/KEY [--upload] [--expires 1h]
                                        a URL that downloads (or uploads) without a key
  zip s3://BUCKET/[PREFIX] FILE|-       every object under PREFIX (at most 100) as one ZIP

S3 access keys, for S3 SDKs and tools:
  keys create [--name N] [--permissions read|write|readwrite] [--bucket BUCKET]
  keys list
  keys delete ACCESS_KEY_ID

SSE-KMS keys, which objects written with x-amz-server-side-encryption: aws:kms are sealed under:
  kms create NAME | list | show|disable|enable|rotate KEY

Every command takes --api URL (env LATTICE_API_URL, default http://127.0.0.1:8090),
--api-key KEY (env LATTICE_API_KEY) and --json; under lattice dev, the dev
profile gives both. Transfers draw a progress bar
when stderr is a terminal (--progress, --no-progress to choose). A recursive
cp and a sync move 4 files at once (--parallel N, 1 to 32), printing a line
as each is done.

Examples:
  lattice s3 mb photos
  lattice s3 cp ./holiday s3://photos/2026/ --recursive
  lattice s3 ls photos/2026/
  lattice s3 cp s3://photos/2026/beach.jpg .

Run ` + "`lattice s3 COMMAND -h`" + ` for a command's flags.
`

// runS3 is `lattice s3 COMMAND ...`.
func runS3(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		io.WriteString(e.stdout, s3Usage)
		return nil
	}
	for _, c := range s3Commands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	var names []string
	for _, c := range s3Commands() {
		names = append(names, c.name)
	}
	return usageErr("unknown command %q%s; run `lattice s3 help`", args[0], suggestion(args[0], names))
}

// s3Flags are the flags every s3 command takes.
type s3Flags struct {
	*flags
	api, apiKey *string
	json        *bool
}

// newS3Flags returns the flag set of `lattice s3 ` + usageLine, whose -h
// says what it does (about) and shows examples.
func newS3Flags(e *env, usageLine, about, examples string) *s3Flags {
	name, _, _ := strings.Cut(usageLine, " ")
	return newAPIFlags(e, "s3 "+name, "s3 "+usageLine, about, examples)
}

// newAPIFlags returns the flag set of the command name ("dns zone create")
// of the cloud's REST API, used as `lattice ` + usageLine.
func newAPIFlags(e *env, name, usageLine, about, examples string) *s3Flags {
	f := &s3Flags{flags: newHelpFlags(e, name, usageLine, about, examples)}
	f.api = f.string("api", "LATTICE_API_URL", "", "http://127.0.0.1:8090", "cloud REST API URL")
	f.apiKey = f.string("api-key", "LATTICE_API_KEY", "", "", "API key (required): the profile's, under lattice dev")
	f.json = f.jsonFlag()
	return f
}

// recursive defines --recursive and its short form -r.
func (f *s3Flags) recursive(usage string) *bool {
	r := f.Bool("recursive", false, usage)
	f.BoolVar(r, "r", false, "short for --recursive")
	return r
}

// parseN parses args and checks that n positional arguments came (want
// names them for the error).
func (f *s3Flags) parseN(args []string, n int, want string) error {
	if err := f.parse(args); err != nil {
		return err
	}
	if f.NArg() > n {
		return usageErr("unexpected argument %q: want %s; run `lattice %s -h`", f.Arg(n), want, f.Name())
	}
	if f.NArg() != n {
		return usageErr("want %s; run `lattice %s -h`", want, f.Name())
	}
	return nil
}

// client returns a client of the API, once the flags are parsed.
func (f *s3Flags) client() (*cloudclient.Client, error) {
	if *f.apiKey == "" {
		return nil, usageErr("--api-key (or LATTICE_API_KEY) is required: a key from `lattice cloud apikey create`, or the admin key `lattice dev` wrote to DATA/cloud/admin-api-key")
	}
	return cloudclient.New(*f.api, *f.apiKey, nil), nil
}

// s3Path is a bucket and a key (or a key prefix) in it.
type s3Path struct {
	bucket, key string
}

func (p s3Path) String() string { return "s3://" + p.bucket + "/" + p.key }

const s3Scheme = "s3://"

// isS3URL reports whether arg is an s3:// URL.
func isS3URL(arg string) bool {
	return len(arg) >= len(s3Scheme) && strings.EqualFold(arg[:len(s3Scheme)], s3Scheme)
}

// parseS3Path reads "s3://BUCKET/KEY"; "BUCKET/KEY" without the scheme is
// accepted too, for commands whose argument can only be remote.
func parseS3Path(arg string) (s3Path, error) {
	rest := arg
	if isS3URL(arg) {
		rest = arg[len(s3Scheme):]
	}
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return s3Path{}, usageErr("%q names no bucket: want s3://BUCKET/KEY", arg)
	}
	if err := storagenames.ExistingBucketName(bucket); err != nil {
		return s3Path{}, usageErr("%q: %v", arg, err)
	}
	return s3Path{bucket, key}, nil
}

// dirPrefix makes a key prefix name a folder: "photos" becomes "photos/",
// as aws s3 reads a recursive source.
func dirPrefix(prefix string) string {
	if prefix == "" || strings.HasSuffix(prefix, "/") {
		return prefix
	}
	return prefix + "/"
}

// s3Error is an API error put in words for the command line.
type s3Error struct {
	msg string
	err error
}

func (e *s3Error) Error() string { return e.msg }
func (e *s3Error) Unwrap() error { return e.err }

// explain words an error of the API for people: the server's own message,
// with the bucket or the object a "not found" is about. p names what the
// request was about; its key may be "".
func explain(err error, p s3Path) error {
	var ae *cloudclient.APIError
	if !errors.As(err, &ae) {
		return err
	}
	msg := ae.Message
	switch {
	case ae.Code == "not_found" && msg == "bucket not found":
		msg = fmt.Sprintf("bucket %q not found", p.bucket)
	case ae.Code == "not_found" && msg == "object not found":
		msg = fmt.Sprintf("object %s not found", p)
	case ae.Code == "unauthorized":
		msg += " (check --api-key or LATTICE_API_KEY)"
	case ae.Code == "bucket_not_empty":
		msg = fmt.Sprintf("bucket %q is not empty: delete its objects first (lattice s3 rm -r s3://%s/; in a bucket that keeps versions, every version too: lattice s3 versions %s), or use rb --force", p.bucket, p.bucket, p.bucket)
	case msg == "":
		msg = fmt.Sprintf("the API answered HTTP %d", ae.StatusCode)
	}
	return &s3Error{msg, err}
}

// explainObject is explain for an error about the object p: the API
// answers "object not found" also when the bucket is missing, so the
// bucket is looked up to say which.
func explainObject(ctx context.Context, c *cloudclient.Client, err error, p s3Path) error {
	var ae *cloudclient.APIError
	if errors.As(err, &ae) && ae.Code == "not_found" && ae.Message == "object not found" {
		if _, berr := c.Bucket(ctx, p.bucket); berr != nil {
			return explain(berr, p)
		}
	}
	return explain(err, p)
}

// listObjects calls fn with every page of a listing, following the
// markers.
func listObjects(ctx context.Context, c *cloudclient.Client, p s3Path, delimiter string, fn func(cloudwire.ObjectList) error) error {
	marker := ""
	for {
		l, err := c.Objects(ctx, p.bucket, cloudclient.ListOptions{Prefix: p.key, Delimiter: delimiter, Marker: marker, PerPage: cloudwire.MaxPerPage})
		if err != nil {
			return explain(err, p)
		}
		if err := fn(l); err != nil {
			return err
		}
		if l.NextMarker == "" {
			return nil
		}
		marker = l.NextMarker
	}
}

// allObjects returns every object under p's key.
func allObjects(ctx context.Context, c *cloudclient.Client, p s3Path) ([]cloudwire.ObjectInfo, error) {
	var all []cloudwire.ObjectInfo
	err := listObjects(ctx, c, p, "", func(l cloudwire.ObjectList) error {
		all = append(all, l.Data...)
		return nil
	})
	return all, err
}

// localTime renders an RFC 3339 time of the API in the local zone, to the
// second.
func localTime(rfc3339 string) string { return inLocal(rfc3339, "2006-01-02 15:04:05") }

// zonedTime is localTime with the zone.
func zonedTime(rfc3339 string) string { return inLocal(rfc3339, zonedLayout) }

// inLocal formats an RFC 3339 time in the local zone with layout, or
// gives it back as it is if it is not one.
func inLocal(rfc3339, layout string) string {
	t, err := time.Parse(time.RFC3339, rfc3339)
	if err != nil {
		return rfc3339
	}
	return t.Local().Format(layout)
}

func runS3MakeBucket(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "mb BUCKET [--notes TEXT]", `
Makes a bucket of your account, optionally with notes kept with it.`, `  lattice s3 mb photos
  lattice s3 mb backups --notes "nightly database dumps"
`)
	notes := f.String("notes", "", "free text kept with the bucket")
	if err := f.parseN(args, 1, "one bucket name"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	name := strings.TrimSuffix(strings.TrimPrefix(f.Arg(0), s3Scheme), "/")
	b, err := c.CreateBucket(ctx, name, *notes)
	if err != nil {
		var ae *cloudclient.APIError
		if errors.As(err, &ae) && ae.Code == "conflict" {
			return &s3Error{fmt.Sprintf("bucket name %q is taken (bucket names are global: try another)", name), err}
		}
		return explain(err, s3Path{bucket: name})
	}
	if *f.json {
		return printJSON(e.stdout, b)
	}
	fmt.Fprintf(e.stdout, "make_bucket: %s\n", b.Name)
	return nil
}

func runS3RemoveBucket(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "rb BUCKET [--force]", `
Removes an empty bucket; with --force, deletes every object in it first
and, in a bucket that keeps versions, every version and delete marker.`, `  lattice s3 rb photos
  lattice s3 rb scratch --force
`)
	force := f.Bool("force", false, "delete every object (and every version) in the bucket first")
	if err := f.parseN(args, 1, "one bucket name"); err != nil {
		return err
	}
	p, err := parseS3Path(f.Arg(0))
	if err != nil {
		return err
	}
	if p.key != "" {
		return usageErr("rb takes a bucket, not %s; delete objects with `lattice s3 rm`", p)
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	var deleted []string
	if *force {
		if deleted, err = removeAll(ctx, e, c, p, *f.json); err != nil {
			return err
		}
		if err := removeVersions(ctx, e, c, p, *f.json); err != nil {
			return err
		}
	}
	if err := c.DeleteBucket(ctx, p.bucket); err != nil {
		return explain(err, p)
	}
	if *f.json {
		return printJSON(e.stdout, map[string]any{"bucket": p.bucket, "deleted": nonNil(deleted)})
	}
	fmt.Fprintf(e.stdout, "remove_bucket: %s\n", p.bucket)
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func runS3List(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "ls [BUCKET[/PREFIX]] [--recursive]", `
Without an argument, lists your buckets; with BUCKET[/PREFIX], the objects
and folders one level under the prefix (--recursive: every key under it).`, `  lattice s3 ls
  lattice s3 ls photos/2026/
  lattice s3 ls s3://photos --recursive --json
`)
	recursive := f.recursive("list every key under the prefix instead of one folder level")
	if err := f.parse(args); err != nil {
		return err
	}
	if f.NArg() > 1 {
		return usageErr("unexpected argument %q: want at most one BUCKET[/PREFIX]", f.Arg(1))
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	if arg := f.Arg(0); arg != "" && !strings.EqualFold(arg, s3Scheme) {
		p, err := parseS3Path(arg)
		if err != nil {
			return err
		}
		return listKeys(ctx, e, c, p, *recursive, *f.json)
	}
	all, err := allPages(func(page int) (cloudwire.List[cloudwire.Bucket], error) {
		return c.Buckets(ctx, page, cloudwire.MaxPerPage)
	})
	if err != nil {
		return explain(err, s3Path{})
	}
	if *f.json {
		return printJSON(e.stdout, nonNil(all))
	}
	if len(all) == 0 {
		fmt.Fprintln(e.stderr, "no buckets yet: make one with `lattice s3 mb NAME`")
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "NAME\tOBJECTS\tSIZE\tACCESS\tCREATED")
	for _, b := range all {
		access := "private"
		if b.IsPublic {
			access = "public"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", b.Name, b.ObjectCount, humanBytes(b.SizeBytes), access, localTime(b.CreatedAt))
	}
	return tw.Flush()
}

// listKeys lists the objects under p: one folder level (with a "/"
// delimiter, names relative to the folder, as aws s3 ls shows them) or,
// when recursive, every key in full.
func listKeys(ctx context.Context, e *env, c *cloudclient.Client, p s3Path, recursive, asJSON bool) error {
	delimiter := "/"
	if recursive {
		delimiter = ""
	}
	folder := p.key[:strings.LastIndex(p.key, "/")+1]
	out := struct {
		Objects  []cloudwire.ObjectInfo `json:"objects"`
		Prefixes []string               `json:"prefixes"`
	}{[]cloudwire.ObjectInfo{}, []string{}}
	err := listObjects(ctx, c, p, delimiter, func(l cloudwire.ObjectList) error {
		if asJSON {
			out.Objects = append(out.Objects, l.Data...)
			out.Prefixes = append(out.Prefixes, l.Prefixes...)
			return nil
		}
		// A page holds objects and prefixes each in key order; merge them.
		i, j := 0, 0
		for i < len(l.Data) || j < len(l.Prefixes) {
			if j < len(l.Prefixes) && (i >= len(l.Data) || l.Prefixes[j] < l.Data[i].Key) {
				fmt.Fprintf(e.stdout, "%19s  %10s  %s\n", "", "PRE", strings.TrimPrefix(l.Prefixes[j], folder))
				j++
				continue
			}
			o := l.Data[i]
			name := o.Key
			if !recursive {
				name = strings.TrimPrefix(name, folder)
			}
			fmt.Fprintf(e.stdout, "%19s  %10s  %s\n", localTime(o.LastModified), humanBytes(o.Size), name)
			i++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(e.stdout, out)
	}
	return nil
}

func runS3Public(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "public BUCKET on|off", `
Allows (on) or stops (off) downloads of a bucket's objects without
credentials, at the S3 endpoint.`, `  lattice s3 public photos on
  lattice s3 public photos off
`)
	if err := f.parseN(args, 2, "a bucket and on or off"); err != nil {
		return err
	}
	p, err := parseS3Path(strings.TrimSuffix(f.Arg(0), "/"))
	if err != nil {
		return err
	}
	var public bool
	switch strings.ToLower(f.Arg(1)) {
	case "on", "true", "yes":
		public = true
	case "off", "false", "no":
	default:
		return usageErr("want on or off, not %q", f.Arg(1))
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	b, err := c.SetPublic(ctx, p.bucket, public)
	if err != nil {
		return explain(err, p)
	}
	if *f.json {
		return printJSON(e.stdout, b)
	}
	if b.IsPublic {
		fmt.Fprintf(e.stdout, "s3://%s is public: anyone may download its objects without a key\n", b.Name)
	} else {
		fmt.Fprintf(e.stdout, "s3://%s is private: downloads need a key or a presigned URL\n", b.Name)
	}
	return nil
}

func runS3Usage(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "usage", `
Shows the bytes and objects your account stores, in total and per bucket.`, `  lattice s3 usage
  lattice s3 usage --json
`)
	if err := f.parseN(args, 0, "no arguments"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	u, err := c.Usage(ctx)
	if err != nil {
		return explain(err, s3Path{})
	}
	if *f.json {
		return printJSON(e.stdout, u)
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "BUCKET\tOBJECTS\tSIZE")
	for _, b := range u.BucketsUsage {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", b.Name, b.ObjectCount, humanBytes(b.SizeBytes))
	}
	buckets := "buckets"
	if u.BucketCount == 1 {
		buckets = "bucket"
	}
	fmt.Fprintf(tw, "total (%d %s)\t%d\t%s\n", u.BucketCount, buckets, u.ObjectCount, humanBytes(u.TotalBytes))
	return tw.Flush()
}

func runS3Remove(ctx context.Context, e *env, args []string) error {
	f := newS3Flags(e, "rm s3://BUCKET/KEY [--recursive]", `
Deletes an object; with --recursive, every object under a prefix.`, `  lattice s3 rm s3://photos/2026/beach.jpg
  lattice s3 rm s3://photos/2025/ --recursive
`)
	recursive := f.recursive("delete every object under the prefix")
	if err := f.parseN(args, 1, "one s3://BUCKET/KEY"); err != nil {
		return err
	}
	p, err := parseS3Path(f.Arg(0))
	if err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	if *recursive {
		p.key = dirPrefix(p.key)
		deleted, err := removeAll(ctx, e, c, p, *f.json)
		if err != nil {
			return err
		}
		if *f.json {
			return printJSON(e.stdout, map[string]any{"deleted": nonNil(deleted)})
		}
		if len(deleted) == 0 {
			fmt.Fprintf(e.stderr, "nothing to delete under %s\n", p)
		}
		return nil
	}
	if p.key == "" {
		return usageErr("%s names a whole bucket: give a key, or --recursive to delete every object (then `lattice s3 rb` for the bucket)", p)
	}
	if err := c.DeleteObject(ctx, p.bucket, p.key); err != nil {
		var ae *cloudclient.APIError
		if errors.As(err, &ae) && ae.Code == "not_found" {
			// Not an object: perhaps a prefix the user meant to empty.
			if l, lerr := c.Objects(ctx, p.bucket, cloudclient.ListOptions{Prefix: p.key, PerPage: 1}); lerr == nil && len(l.Data) > 0 {
				return fmt.Errorf("%s is not an object, but objects are under it: add --recursive to delete every object under %s", p, p)
			}
		}
		return explainObject(ctx, c, err, p)
	}
	if *f.json {
		return printJSON(e.stdout, map[string]any{"deleted": []string{p.key}})
	}
	fmt.Fprintf(e.stdout, "delete: %s\n", p)
	return nil
}

// removeAll deletes every object under p's key, saying so for each unless
// quiet, and returns their keys.
func removeAll(ctx context.Context, e *env, c *cloudclient.Client, p s3Path, quiet bool) ([]string, error) {
	// List first, then delete: deleting while paging would shift the pages.
	objs, err := allObjects(ctx, c, p)
	if err != nil {
		return nil, err
	}
	var deleted []string
	skipped := 0
	for _, o := range objs {
		op := s3Path{p.bucket, o.Key}
		if cloudwire.ValidRESTKey(o.Key) != nil {
			fmt.Fprintf(e.stderr, "skipping %s: its key has an empty, \".\" or \"..\" segment, which only the S3 endpoint can address\n", op)
			skipped++
			continue
		}
		var ae *cloudclient.APIError
		if err := c.DeleteObject(ctx, p.bucket, o.Key); err != nil && !(errors.As(err, &ae) && ae.Code == "not_found") {
			return deleted, explain(err, op) // an object deleted meanwhile is no failure
		}
		deleted = append(deleted, o.Key)
		if !quiet {
			fmt.Fprintf(e.stdout, "delete: %s\n", op)
		}
	}
	if skipped > 0 {
		return deleted, fmt.Errorf("%d object(s) skipped (listed above); delete them through the S3 endpoint", skipped)
	}
	return deleted, nil
}

// allPages gathers every page of a list endpoint.
func allPages[T any](fetch func(page int) (cloudwire.List[T], error)) ([]T, error) {
	var all []T
	for page := 1; ; page++ {
		l, err := fetch(page)
		if err != nil {
			return nil, err
		}
		all = append(all, l.Data...)
		if len(l.Data) == 0 || page*l.Meta.PerPage >= l.Meta.Total {
			return all, nil
		}
	}
}
