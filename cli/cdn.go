package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/latticenet/lattice/cloud/cdn/cdnrules"
	"github.com/latticenet/lattice/cloud/cloudclient"
	"github.com/latticenet/lattice/cloud/cloudwire"
)

const cdnUsage = `Usage: lattice cdn COMMAND [ARGS] [flags]

CDN deployments: the platform's caching edge (` + "`lattice dev`" + ` runs it on
127.0.0.1:8088) answers for NAME.cdn.localhost, and for the custom domains
you attach, from an origin: an http(s) server or a bucket (s3://BUCKET).

Commands:
  create NAME --origin URL [--default-ttl SECONDS]
                                 create a deployment in front of an origin
  ls                             list your deployments
  show DEPLOYMENT                a deployment, its domains and its edge figures
  rm DEPLOYMENT                  delete a deployment, its custom domains and its cache
  domains DEPLOYMENT             list a deployment's domains
  domain add|verify|rm DEPLOYMENT DOMAIN
                                 attach, verify or detach a custom domain
  purge DEPLOYMENT [PATH...] [--prefix P]...
                                 drop cached responses (with no PATH or --prefix, all)

DEPLOYMENT is a deployment's name or ID. Every command takes --api URL (env
LATTICE_API_URL, default http://127.0.0.1:8090), --api-key KEY (env
LATTICE_API_KEY) and --json.

Examples:
  lattice s3 mb site && lattice s3 cp index.html s3://site/
  lattice cdn create site --origin s3://site
  curl -i http://site.cdn.localhost:8088/      # X-Cache: MISS, then HIT
  lattice cdn purge site /                     # that URL again from the origin (or: purge site, for all)
  lattice cdn show site

Run ` + "`lattice cdn COMMAND -h`" + ` for a command's flags.
`

const cdnDomainUsage = `Usage: lattice cdn domain COMMAND DEPLOYMENT DOMAIN [flags]

The custom domains of a deployment. A domain in a zone of yours on the
platform's DNS (` + "`lattice dns`" + `) gets its CNAME made at once and is active;
any other stays pending until its DNS holds a CNAME to the deployment's
cname and verify finds it.

Commands:
  add DEPLOYMENT DOMAIN      attach a custom domain
  verify DEPLOYMENT DOMAIN   look a pending domain's CNAME up and activate it
  rm DEPLOYMENT DOMAIN       detach a custom domain

Examples:
  lattice cdn domain add site www.example.com
  lattice cdn domain verify site www.example.com
  lattice cdn domain rm site www.example.com

Run ` + "`lattice cdn domain COMMAND -h`" + ` for a command's flags.
`

const (
	cdnWant       = "want `lattice cdn create|ls|show|rm|domains|domain|purge ...`"
	cdnDomainWant = "want `lattice cdn domain add|verify|rm DEPLOYMENT DOMAIN`"
)

func cdnCommands() []string {
	return []string{"create", "ls", "show", "rm", "domains", "domain", "purge"}
}
func cdnDomainCommands() []string { return []string{"add", "verify", "rm"} }

// runCDN is `lattice cdn ...`.
func runCDN(ctx context.Context, e *env, args []string) error {
	if done, err := groupHelp(e, args, cdnUsage, cdnWant); done {
		return err
	}
	switch args[0] {
	case "create":
		return runCDNCreate(ctx, e, args[1:])
	case "ls", "list":
		return runCDNList(ctx, e, args[1:])
	case "show":
		return runCDNShow(ctx, e, args[1:])
	case "rm", "delete":
		return runCDNRemove(ctx, e, args[1:])
	case "domains":
		return runCDNDomains(ctx, e, args[1:])
	case "domain":
		if done, err := groupHelp(e, args[1:], cdnDomainUsage, cdnDomainWant); done {
			return err
		}
		switch args[1] {
		case "add":
			return runCDNDomainAdd(ctx, e, args[2:])
		case "verify":
			return runCDNDomainVerify(ctx, e, args[2:])
		case "rm", "delete":
			return runCDNDomainRemove(ctx, e, args[2:])
		}
		return usageErr("unknown command `cdn domain %s`%s; %s", args[1], suggestion(args[1], []string{"add", "verify", "rm"}), cdnDomainWant)
	case "purge":
		return runCDNPurge(ctx, e, args[1:])
	}
	return usageErr("unknown command %q%s; %s", args[0], suggestion(args[0], []string{"create", "ls", "show", "rm", "domains", "domain", "purge"}), cdnWant)
}

func newCDNFlags(e *env, name, args, about, examples string) *s3Flags {
	return newAPIFlags(e, "cdn "+name, strings.TrimSpace("cdn "+name+" "+args), about, examples)
}

// findDeployment resolves a deployment's name (or cname) or ID through
// the list of the account's deployments; names come first, being what
// people type.
func findDeployment(ctx context.Context, c *cloudclient.Client, ref string) (cloudwire.Deployment, error) {
	all, err := c.Deployments(ctx)
	if err != nil {
		return cloudwire.Deployment{}, explainCDN(err, ref, "")
	}
	name := strings.ToLower(strings.TrimSuffix(ref, "."))
	for _, d := range all {
		if d.Name == name || d.CNAME == name {
			return d, nil
		}
	}
	for _, d := range all {
		if d.ID == ref {
			return d, nil
		}
	}
	return cloudwire.Deployment{}, fmt.Errorf("no deployment %s in your account: `lattice cdn ls` lists yours", ref)
}

// explainCDN words the API's errors for the cdn commands; dep and domain
// name what the request was about (domain may be "").
func explainCDN(err error, dep, domain string) error {
	var ae *cloudclient.APIError
	if !errors.As(err, &ae) {
		return err
	}
	switch {
	case ae.Code == "not_found" && ae.Message == "deployment not found":
		return &s3Error{fmt.Sprintf("deployment %s not found: `lattice cdn ls` lists yours", dep), err}
	case ae.Code == "not_found" && ae.Message == "domain not found":
		return &s3Error{fmt.Sprintf("%s is not a custom domain of %s: `lattice cdn domains %s` lists them", domain, dep, dep), err}
	}
	return explain(err, s3Path{})
}

// deploymentRef parses the arguments of a command on one deployment
// (DEPLOYMENT and n-1 more), then finds the deployment.
func deploymentRef(ctx context.Context, f *s3Flags, args []string, n int, want string) (*cloudclient.Client, cloudwire.Deployment, error) {
	if err := f.parseN(args, n, want); err != nil {
		return nil, cloudwire.Deployment{}, err
	}
	c, err := f.client()
	if err != nil {
		return nil, cloudwire.Deployment{}, err
	}
	d, err := findDeployment(ctx, c, f.Arg(0))
	return c, d, err
}

func runCDNCreate(ctx context.Context, e *env, args []string) error {
	f := newCDNFlags(e, "create", "NAME --origin URL [--default-ttl SECONDS]", `
Creates a deployment: the edge answers for NAME under the CDN domain
(NAME.cdn.localhost with `+"`lattice dev`"+`) from the origin, caching what it
fetches as RFC 9111 says. NAME is a DNS label (lower-case letters, digits
and hyphens), one per platform. The origin is an http(s) URL, whose path
is put before the request's, or s3://BUCKET[/PREFIX]: a bucket of yours,
private or public, or another account's public bucket.`, `  lattice cdn create site --origin s3://site
  lattice cdn create docs --origin s3://site/docs --default-ttl 300
  lattice cdn create api --origin https://api.example.com/v1
`)
	origin := f.String("origin", "", "where the edge fetches from: http(s)://HOST[/PATH] or s3://BUCKET[/PREFIX] (required)")
	ttl := f.Int("default-ttl", cdnrules.DefaultTTL, fmt.Sprintf("seconds the edge keeps a response that says nothing of its freshness, 0 to %d", cdnrules.MaxDefaultTTL))
	if err := f.parseN(args, 1, "one deployment name, such as site"); err != nil {
		return err
	}
	if *origin == "" {
		return usageErr("--origin is required: http(s)://HOST[/PATH], or s3://BUCKET[/PREFIX] for a bucket")
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	in := cloudwire.DeploymentInput{Name: f.Arg(0), Origin: *origin}
	if f.given["default-ttl"] {
		in.DefaultTTL = ttl
	}
	d, err := c.CreateDeployment(ctx, in)
	if err != nil {
		return explainCDN(err, f.Arg(0), "")
	}
	if *f.json {
		return printJSON(e.stdout, d)
	}
	fmt.Fprintf(e.stdout, "deployment %s created (id %s)\n", d.Name, d.ID)
	tw := table(e.stdout)
	fmt.Fprintf(tw, "origin:\t%s\nanswers at:\t%s\ndefault ttl:\t%ds\n", d.Origin, d.CNAME, d.DefaultTTL)
	if err := tw.Flush(); err != nil {
		return err
	}
	if strings.HasSuffix(d.CNAME, ".localhost") {
		fmt.Fprintf(e.stderr, "try it on the edge of `lattice dev` (port 8088 unless its --cdn says otherwise): curl -i http://%s:8088/\n", d.CNAME)
	}
	return nil
}

func runCDNList(ctx context.Context, e *env, args []string) error {
	f := newCDNFlags(e, "ls", "", `
Lists your deployments: name, ID, origin, the name the edge answers for,
default TTL and creation time.`, `  lattice cdn ls
  lattice cdn ls --json
`)
	if err := f.parseN(args, 0, "no arguments"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	all, err := c.Deployments(ctx)
	if err != nil {
		return explainCDN(err, "", "")
	}
	if *f.json {
		return printJSON(e.stdout, nonNil(all))
	}
	if len(all) == 0 {
		fmt.Fprintln(e.stderr, "no deployments yet: create one with `lattice cdn create site --origin s3://BUCKET`")
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "NAME\tID\tORIGIN\tCNAME\tTTL\tCREATED")
	for _, d := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", d.Name, d.ID, d.Origin, d.CNAME, d.DefaultTTL, localTime(d.CreatedAt))
	}
	return tw.Flush()
}

// deploymentView is what `cdn show --json` prints.
type deploymentView struct {
	Deployment cloudwire.Deployment `json:"deployment"`
	Domains    []cloudwire.Domain   `json:"domains"`
	Stats      cloudwire.CDNStats   `json:"stats"`
}

func runCDNShow(ctx context.Context, e *env, args []string) error {
	f := newCDNFlags(e, "show", "DEPLOYMENT", `
Shows a deployment, its domains (its cname first, then its custom domains,
with the DNS record a pending one needs) and its edge figures since the
edge started: requests, hits and misses, bytes served, origin fetches and
what is cached.`, `  lattice cdn show site
  lattice cdn show 6451b24ccec9cb9a --json
`)
	c, d, err := deploymentRef(ctx, f, args, 1, "one deployment name or ID")
	if err != nil {
		return err
	}
	doms, err := c.Domains(ctx, d.ID)
	if err != nil {
		return explainCDN(err, f.Arg(0), "")
	}
	st, err := c.CDNStats(ctx, d.ID)
	if err != nil {
		return explainCDN(err, f.Arg(0), "")
	}
	if *f.json {
		return printJSON(e.stdout, deploymentView{d, nonNil(doms), st})
	}
	tw := table(e.stdout)
	fmt.Fprintf(tw, "name:\t%s\nid:\t%s\norigin:\t%s\ncname:\t%s\ndefault ttl:\t%ds\ncreated:\t%s\n",
		d.Name, d.ID, d.Origin, d.CNAME, d.DefaultTTL, localTime(d.CreatedAt))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout)
	if err := domainTable(e.stdout, doms, zoneNames(ctx, c, doms)); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout)
	return statsTable(e.stdout, st)
}

// zoneNames names the platform zones that domains' CNAMEs were made in,
// by zone id; a zone that cannot be read keeps its id.
func zoneNames(ctx context.Context, c *cloudclient.Client, doms []cloudwire.Domain) map[string]string {
	names := map[string]string{}
	for _, d := range doms {
		if d.Zone == "" || names[d.Zone] != "" {
			continue
		}
		names[d.Zone] = d.Zone
		if z, err := c.Zone(ctx, d.Zone); err == nil {
			names[d.Zone] = z.Name
		}
	}
	return names
}

// domainTable prints domains as a table; zones names their zones.
func domainTable(w io.Writer, doms []cloudwire.Domain, zones map[string]string) error {
	tw := table(w)
	fmt.Fprintln(tw, "DOMAIN\tTYPE\tSTATUS\tDNS")
	for _, d := range doms {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Name, d.Type, d.Status, domainDNS(d, zones))
	}
	return tw.Flush()
}

// domainDNS says where a domain's DNS stands.
func domainDNS(d cloudwire.Domain, zones map[string]string) string {
	switch {
	case d.Type == cloudwire.DomainDefault:
		return "the CDN domain's"
	case d.Verification != nil && d.Zone != "":
		return "CNAME made in your zone " + zones[d.Zone] + "; waits for the zone's delegation to this platform, then `cdn domain verify`"
	case d.Verification != nil:
		return fmt.Sprintf("wants %s %s %s, then `cdn domain verify`", d.Verification.Name, d.Verification.Type, d.Verification.Value)
	case d.Zone != "":
		return "CNAME made in your zone " + zones[d.Zone]
	}
	return "CNAME verified"
}

// statsTable prints a deployment's edge figures.
func statsTable(w io.Writer, s cloudwire.CDNStats) error {
	if s.Since == "" {
		_, err := fmt.Fprintln(w, "no edge figures: the platform runs no CDN edge")
		return err
	}
	tw := table(w)
	fmt.Fprintf(tw, "edge since:\t%s\n", localTime(s.Since))
	fmt.Fprintf(tw, "requests:\t%d (%d hits, %d stale, %d misses; hit ratio %.1f%%)\n", s.Requests, s.Hits, s.Stale, s.Misses, 100*s.HitRatio)
	fmt.Fprintf(tw, "served:\t%s\n", humanBytes(s.BytesServed))
	fmt.Fprintf(tw, "origin:\t%d requests, %s, %d errors\n", s.OriginRequests, humanBytes(s.OriginBytes), s.OriginErrors)
	fmt.Fprintf(tw, "cached:\t%d responses, %s\n", s.CachedObjects, humanBytes(s.CachedBytes))
	return tw.Flush()
}

func runCDNRemove(ctx context.Context, e *env, args []string) error {
	f := newCDNFlags(e, "rm", "DEPLOYMENT", `
Deletes a deployment with its custom domains (and the CNAMEs the platform
made for them) and its cached responses: the edge stops answering for it
at once.`, `  lattice cdn rm site
`)
	c, d, err := deploymentRef(ctx, f, args, 1, "one deployment name or ID")
	if err != nil {
		return err
	}
	if err := c.DeleteDeployment(ctx, d.ID); err != nil {
		return explainCDN(err, f.Arg(0), "")
	}
	if *f.json {
		return printJSON(e.stdout, d)
	}
	fmt.Fprintf(e.stderr, "deployment %s deleted\n", d.Name)
	return nil
}

func runCDNDomains(ctx context.Context, e *env, args []string) error {
	f := newCDNFlags(e, "domains", "DEPLOYMENT", `
Lists the host names a deployment answers for: its cname, then its custom
domains, active or pending (with the CNAME a pending one needs).`, `  lattice cdn domains site
  lattice cdn domains site --json
`)
	c, d, err := deploymentRef(ctx, f, args, 1, "one deployment name or ID")
	if err != nil {
		return err
	}
	doms, err := c.Domains(ctx, d.ID)
	if err != nil {
		return explainCDN(err, f.Arg(0), "")
	}
	if *f.json {
		return printJSON(e.stdout, nonNil(doms))
	}
	return domainTable(e.stdout, doms, zoneNames(ctx, c, doms))
}

// domainArg is a domain as the API keys it: lower case, no final dot.
func domainArg(s string) string { return strings.ToLower(strings.TrimSuffix(s, ".")) }

func runCDNDomainAdd(ctx context.Context, e *env, args []string) error {
	f := newCDNFlags(e, "domain add", "DEPLOYMENT DOMAIN", `
Attaches a custom domain to a deployment. In a zone of yours on the
platform's DNS the platform adds the CNAME DOMAIN → the deployment's cname
itself, and the domain is active at once (removing the domain removes the
record). Elsewhere the domain is pending: create the CNAME it prints at
the domain's DNS provider, then run `+"`lattice cdn domain verify`"+`.`, `  lattice cdn domain add site www.example.com
`)
	c, d, err := deploymentRef(ctx, f, args, 2, "a deployment name or ID and a domain")
	if err != nil {
		return err
	}
	dom, err := c.AddDomain(ctx, d.ID, f.Arg(1))
	if err != nil {
		return explainCDN(err, f.Arg(0), f.Arg(1))
	}
	if *f.json {
		return printJSON(e.stdout, dom)
	}
	fmt.Fprintf(e.stdout, "domain %s added to %s: %s\n", dom.Name, d.Name, dom.Status)
	switch {
	case dom.Verification != nil && dom.Zone != "":
		zone := zoneNames(ctx, c, []cloudwire.Domain{dom})[dom.Zone]
		fmt.Fprintf(e.stdout, "the CNAME %s → %s is in your zone %s, but DNS does not give it yet: a zone held here proves nothing of the domain "+
			"until the domain is delegated to this platform's name servers; once it is, run `lattice cdn domain verify %s %s`\n",
			dom.Name, d.CNAME, zone, d.Name, dom.Name)
	case dom.Verification != nil:
		fmt.Fprintf(e.stdout, "create this record at the domain's DNS provider, then run `lattice cdn domain verify %s %s`:\n  %s %s %s\n",
			d.Name, dom.Name, dom.Verification.Name, dom.Verification.Type, dom.Verification.Value)
	case dom.Zone != "":
		fmt.Fprintf(e.stdout, "the CNAME %s → %s is in your zone %s\n", dom.Name, d.CNAME, zoneNames(ctx, c, []cloudwire.Domain{dom})[dom.Zone])
	}
	return nil
}

func runCDNDomainVerify(ctx context.Context, e *env, args []string) error {
	f := newCDNFlags(e, "domain verify", "DEPLOYMENT DOMAIN", `
Has the platform look a pending domain's CNAME up in DNS and activate the
domain when it names the deployment's cname; fails saying what DNS gave
otherwise (DNS changes may take the record's TTL to show). An active
domain stays as it is.`, `  lattice cdn domain verify site www.example.com
`)
	c, d, err := deploymentRef(ctx, f, args, 2, "a deployment name or ID and a domain")
	if err != nil {
		return err
	}
	dom, err := c.VerifyDomain(ctx, d.ID, domainArg(f.Arg(1)))
	if err != nil {
		return explainCDN(err, f.Arg(0), f.Arg(1))
	}
	if *f.json {
		return printJSON(e.stdout, dom)
	}
	fmt.Fprintf(e.stdout, "domain %s of %s is %s: the edge answers for it\n", dom.Name, d.Name, dom.Status)
	return nil
}

func runCDNDomainRemove(ctx context.Context, e *env, args []string) error {
	f := newCDNFlags(e, "domain rm", "DEPLOYMENT DOMAIN", `
Detaches a custom domain from a deployment, with the CNAME the platform
made for it (a record you made yourself stays).`, `  lattice cdn domain rm site www.example.com
`)
	c, d, err := deploymentRef(ctx, f, args, 2, "a deployment name or ID and a domain")
	if err != nil {
		return err
	}
	if err := c.RemoveDomain(ctx, d.ID, domainArg(f.Arg(1))); err != nil {
		return explainCDN(err, f.Arg(0), f.Arg(1))
	}
	fmt.Fprintf(e.stderr, "domain %s removed from %s\n", domainArg(f.Arg(1)), d.Name)
	return nil
}

// purgePath reads a purge path: a path ("/css/site.css", "css/site.css")
// or a URL of the edge, whose path it takes.
func purgePath(s string) (string, error) {
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return "", fmt.Errorf("%q: want a path, such as /css/site.css, or a URL", s)
		}
		s = u.EscapedPath()
	}
	if !strings.HasPrefix(s, "/") {
		s = "/" + s
	}
	return s, nil
}

func runCDNPurge(ctx context.Context, e *env, args []string) error {
	f := newCDNFlags(e, "purge", "DEPLOYMENT [PATH...] [--prefix P]...", `
Drops cached responses of a deployment: each PATH exactly (with any query
string and every variant), every path that begins with a --prefix, or,
with neither, everything it has cached. The next request for a purged
path goes to the origin. At most 100 paths and prefixes in one purge.`, `  lattice cdn purge site
  lattice cdn purge site /index.html /css/site.css
  lattice cdn purge site --prefix /img/ --prefix /fonts/
`)
	var p cloudwire.Purge
	f.Func("prefix", "purge every path that begins with `P`, such as /img/ (repeatable)", func(s string) error {
		v, err := purgePath(s)
		p.Prefixes = append(p.Prefixes, v)
		return err
	})
	if err := f.parse(args); err != nil {
		return err
	}
	if f.NArg() < 1 {
		return usageErr("want a deployment name or ID, then any paths; run `lattice %s -h`", f.Name())
	}
	for _, a := range f.Args()[1:] {
		v, err := purgePath(a)
		if err != nil {
			return usageErr("%v", err)
		}
		p.Paths = append(p.Paths, v)
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	d, err := findDeployment(ctx, c, f.Arg(0))
	if err != nil {
		return err
	}
	r, err := c.Purge(ctx, d.ID, p)
	if err != nil {
		return explainCDN(err, f.Arg(0), "")
	}
	if *f.json {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "purged %s of %s (%s)\n", plural(r.Purged, "cached response"), d.Name, purgeWhat(p))
	return nil
}

// purgeWhat names what a purge asked for as the API received it, each
// path and prefix with the slash the CLI may have added (`--prefix img`
// purges /img), the first few in full.
func purgeWhat(p cloudwire.Purge) string {
	if len(p.Paths)+len(p.Prefixes) == 0 {
		return "everything it had cached"
	}
	names := slices.Clone(p.Paths)
	for _, s := range p.Prefixes {
		names = append(names, "prefix "+s)
	}
	const shown = 3
	if len(names) > shown {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
	}
	return strings.Join(names, ", ")
}
