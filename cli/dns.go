package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/latticenet/lattice/cloud/cloudclient"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/dns/dnszone"
)

const dnsUsage = `Usage: lattice dns zone|record COMMAND [ARGS] [flags]

DNS zones and their records, served at once by the platform's
authoritative DNS server (` + "`lattice dev`" + ` runs it on 127.0.0.1:8053).

Commands:
  zone create NAME                 create a zone, with NS records for the platform's servers
  zone ls                          list your zones
  zone rm ZONE                     delete a zone and its records
  record add ZONE TYPE NAME VALUE  add a record (A, AAAA, CNAME, MX, TXT, NS, SRV, CAA)
  record ls ZONE                   list a zone's records
  record set ZONE ID TYPE NAME VALUE
                                   replace a record
  record rm ZONE ID                delete a record

ZONE is a zone's name or ID. NAME is relative to the zone ("www", "@" for
the apex) or a full name in it. Every command takes --api URL (env
LATTICE_API_URL, default http://127.0.0.1:8090), --api-key KEY (env
LATTICE_API_KEY) and --json.

Examples:
  lattice dns zone create example.com
  lattice dns record add example.com A www 192.0.2.10
  lattice dns record add example.com MX @ mail.example.com --priority 10
  lattice dns record ls example.com
  dig @127.0.0.1 -p 8053 www.example.com

Run ` + "`lattice dns zone COMMAND -h`" + ` or ` + "`lattice dns record COMMAND -h`" + ` for a command's flags.
`

const dnsZoneUsage = `Usage: lattice dns zone COMMAND [ARGS] [flags]

Your DNS zones.

Commands:
  create NAME   create a zone, with NS records for the platform's servers
  ls            list your zones
  rm ZONE       delete a zone and its records

Examples:
  lattice dns zone create example.com
  lattice dns zone ls
  lattice dns zone rm example.com

Run ` + "`lattice dns zone COMMAND -h`" + ` for a command's flags.
`

const dnsRecordUsage = `Usage: lattice dns record COMMAND [ARGS] [flags]

The records of a zone (A, AAAA, CNAME, MX, TXT, NS, SRV, CAA). ZONE is a
zone's name or ID; NAME is relative to the zone ("www", "@" for the apex)
or a full name in it.

Commands:
  add ZONE TYPE NAME VALUE      add a record
  ls ZONE                       list a zone's records
  set ZONE ID TYPE NAME VALUE   replace a record
  rm ZONE ID                    delete a record

Examples:
  lattice dns record add example.com A www 192.0.2.10
  lattice dns record ls example.com --type A
  lattice dns record rm example.com 3f2a9c0d1e4b5a6f

Run ` + "`lattice dns record COMMAND -h`" + ` for a command's flags.
`

const (
	dnsWant       = "want `lattice dns zone create|ls|rm ...` or `lattice dns record add|ls|set|rm ...`"
	dnsZoneWant   = "want `lattice dns zone create NAME`, `zone ls` or `zone rm ZONE`"
	dnsRecordWant = "want `lattice dns record add ZONE TYPE NAME VALUE`, `record ls ZONE`, `record set ZONE ID TYPE NAME VALUE` or `record rm ZONE ID`"
)

func dnsZoneCommands() []string   { return []string{"create", "ls", "rm"} }
func dnsRecordCommands() []string { return []string{"add", "ls", "set", "rm"} }

// runDNS is `lattice dns zone ...` and `lattice dns record ...`.
func runDNS(ctx context.Context, e *env, args []string) error {
	if done, err := groupHelp(e, args, dnsUsage, dnsWant); done {
		return err
	}
	switch args[0] {
	case "zone", "zones":
		if done, err := groupHelp(e, args[1:], dnsZoneUsage, dnsZoneWant); done {
			return err
		}
		switch args[1] {
		case "create":
			return runZoneCreate(ctx, e, args[2:])
		case "ls", "list":
			return runZoneList(ctx, e, args[2:])
		case "rm", "delete":
			return runZoneRemove(ctx, e, args[2:])
		}
		return usageErr("unknown command `dns zone %s`%s; %s", args[1], suggestion(args[1], []string{"create", "ls", "rm"}), dnsZoneWant)
	case "record", "records":
		if done, err := groupHelp(e, args[1:], dnsRecordUsage, dnsRecordWant); done {
			return err
		}
		switch args[1] {
		case "add":
			return runRecordAdd(ctx, e, args[2:])
		case "ls", "list":
			return runRecordList(ctx, e, args[2:])
		case "set":
			return runRecordSet(ctx, e, args[2:])
		case "rm", "delete":
			return runRecordRemove(ctx, e, args[2:])
		}
		return usageErr("unknown command `dns record %s`%s; %s", args[1], suggestion(args[1], []string{"add", "ls", "set", "rm"}), dnsRecordWant)
	}
	return usageErr("unknown command %q%s; %s", args[0], suggestion(args[0], []string{"zone", "record"}), dnsWant)
}

func newDNSFlags(e *env, name, args, about, examples string) *s3Flags {
	return newAPIFlags(e, "dns "+name, "dns "+name+" "+args, about, examples)
}

// findZone resolves a zone's name or ID to the zone.
func findZone(ctx context.Context, c *cloudclient.Client, ref string) (dnszone.ZoneInfo, error) {
	name := strings.ToLower(strings.TrimSuffix(ref, "."))
	if strings.Contains(name, ".") {
		all, err := allPages(func(page int) (cloudwire.List[dnszone.ZoneInfo], error) {
			return c.Zones(ctx, page, cloudwire.MaxPerPage)
		})
		if err != nil {
			return dnszone.ZoneInfo{}, explainDNS(err, ref)
		}
		for _, z := range all {
			if z.Name == name {
				return z, nil
			}
		}
		return dnszone.ZoneInfo{}, fmt.Errorf("no zone %s in your account: create it with `lattice dns zone create %s`", name, name)
	}
	z, err := c.Zone(ctx, ref)
	return z, explainDNS(err, ref)
}

// explainDNS words the API's errors for the dns commands.
func explainDNS(err error, zone string) error {
	var ae *cloudclient.APIError
	if !errors.As(err, &ae) {
		return err
	}
	switch {
	case ae.Code == "not_found" && ae.Message == "zone not found":
		return fmt.Errorf("zone %s not found: `lattice dns zone ls` lists yours", zone)
	case ae.Code == "not_found" && ae.Message == "record not found":
		return fmt.Errorf("no such record in zone %s: `lattice dns record ls %s` lists its records", zone, zone)
	}
	return explain(err, s3Path{})
}

func runZoneCreate(ctx context.Context, e *env, args []string) error {
	f := newDNSFlags(e, "zone create", "NAME", `
Creates a DNS zone with NS records at its apex for the platform's name
servers, and prints them: delegate the domain to them at its registrar.
A name belongs to one account.`, `  lattice dns zone create example.com
`)
	if err := f.parseN(args, 1, "one zone name, such as example.com"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	z, err := c.CreateZone(ctx, f.Arg(0))
	if err != nil {
		return explainDNS(err, f.Arg(0))
	}
	if *f.json {
		return printJSON(e.stdout, z)
	}
	fmt.Fprintf(e.stdout, "zone %s created (id %s, serial %d)\nname servers: %s\n", z.Name, z.ID, z.Serial, strings.Join(z.Nameservers, ", "))
	return nil
}

func runZoneList(ctx context.Context, e *env, args []string) error {
	f := newDNSFlags(e, "zone ls", "", `
Lists your DNS zones: name, ID, serial and record count.`, `  lattice dns zone ls
  lattice dns zone ls --json
`)
	if err := f.parseN(args, 0, "no arguments"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	all, err := allPages(func(page int) (cloudwire.List[dnszone.ZoneInfo], error) {
		return c.Zones(ctx, page, cloudwire.MaxPerPage)
	})
	if err != nil {
		return explainDNS(err, "")
	}
	if *f.json {
		return printJSON(e.stdout, nonNil(all))
	}
	if len(all) == 0 {
		fmt.Fprintln(e.stderr, "no zones yet: create one with `lattice dns zone create example.com`")
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "NAME\tID\tSERIAL\tRECORDS\tCREATED")
	for _, z := range all {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", z.Name, z.ID, z.Serial, z.Records, localTime(z.CreatedAt))
	}
	return tw.Flush()
}

func runZoneRemove(ctx context.Context, e *env, args []string) error {
	f := newDNSFlags(e, "zone rm", "ZONE", `
Deletes a zone and all its records: the DNS server stops answering for it
at once.`, `  lattice dns zone rm example.com
`)
	if err := f.parseN(args, 1, "one zone name or ID"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	z, err := findZone(ctx, c, f.Arg(0))
	if err != nil {
		return err
	}
	if err := c.DeleteZone(ctx, z.ID); err != nil {
		return explainDNS(err, f.Arg(0))
	}
	if *f.json {
		return printJSON(e.stdout, z)
	}
	fmt.Fprintf(e.stderr, "zone %s deleted\n", z.Name)
	return nil
}

// recordCommand parses the arguments of record add and set, named by want
// ("ZONE [ID] TYPE NAME VALUE"), builds the record from TYPE NAME VALUE
// (the last three names; VALUE takes every argument left) and the flags,
// and finds ZONE.
func recordCommand(ctx context.Context, f *s3Flags, args []string, want string) (*cloudclient.Client, dnszone.ZoneInfo, dnszone.Input, error) {
	rf := addRecordFlags(f)
	if err := f.parse(args); err != nil {
		return nil, dnszone.ZoneInfo{}, dnszone.Input{}, quoteHint(err)
	}
	lead := len(strings.Fields(want)) - 3 // ZONE, and ID for set
	if f.NArg() < lead+3 {
		return nil, dnszone.ZoneInfo{}, dnszone.Input{}, usageErr("want %s; run `lattice %s -h`", want, f.Name())
	}
	in, err := rf.input(f.Arg(lead), f.Arg(lead+1), recordValue(f.Args()[lead+2:]))
	if err != nil {
		return nil, dnszone.ZoneInfo{}, dnszone.Input{}, err
	}
	c, err := f.client()
	if err != nil {
		return nil, dnszone.ZoneInfo{}, dnszone.Input{}, err
	}
	z, err := findZone(ctx, c, f.Arg(0))
	return c, z, in, err
}

// recordFlags are the optional fields of a record.
type recordFlags struct {
	ttl, priority, weight, port *string
}

func addRecordFlags(f *s3Flags) recordFlags {
	return recordFlags{
		ttl:      f.String("ttl", "", fmt.Sprintf("time to live in seconds, %d to %d (default %d)", dnszone.MinTTL, dnszone.MaxTTL, dnszone.DefaultTTL)),
		priority: f.String("priority", "", "MX and SRV: the preference, 0 to 65535 (default 10)"),
		weight:   f.String("weight", "", "SRV: the weight, 0 to 65535 (default 0)"),
		port:     f.String("port", "", "SRV: the port, 0 to 65535 (required)"),
	}
}

// input builds a record from the positional TYPE NAME VALUE and the flags.
func (r recordFlags) input(typ, name, value string) (dnszone.Input, error) {
	in := dnszone.Input{Type: typ, Name: name, Value: value}
	for _, n := range []struct {
		flag string
		v    *string
		to   **int64
	}{{"ttl", r.ttl, &in.TTL}, {"priority", r.priority, &in.Priority}, {"weight", r.weight, &in.Weight}, {"port", r.port, &in.Port}} {
		if *n.v == "" {
			continue
		}
		v, err := strconv.ParseInt(*n.v, 10, 64)
		if err != nil {
			return in, usageErr("--%s %q: want a whole number", n.flag, *n.v)
		}
		*n.to = &v
	}
	return in, nil
}

// quoteHint adds to an unknown-flag error the likely cause: a value with
// words beginning with "-" (TXT "v=spf1 mx -all") not in quotes.
func quoteHint(err error) error {
	if strings.Contains(err.Error(), "flag provided but not defined") {
		return fmt.Errorf("%w (a VALUE with spaces goes in quotes: lattice dns record add example.com TXT @ \"v=spf1 mx -all\")", err)
	}
	return err
}

// recordValue joins the VALUE arguments: a TXT or CAA value may come as
// several words without quotes.
func recordValue(args []string) string { return strings.Join(args, " ") }

func runRecordAdd(ctx context.Context, e *env, args []string) error {
	f := newDNSFlags(e, "record add", "ZONE TYPE NAME VALUE [--ttl S] [--priority N] [--weight N] [--port N]", `
Adds a record to a zone; the DNS server answers with it at once. NAME is
relative to the zone ("www", "@" for the apex) or a full name in it; a
name without a final dot that does not end in the zone's name is relative,
as in a zone file ("www.example.org" in example.com is
www.example.org.example.com). VALUE
is an address (A, AAAA), a host name (CNAME, NS, MX, SRV), text (TXT) or
flags, tag and value (CAA).`, `  lattice dns record add example.com A www 192.0.2.10
  lattice dns record add example.com AAAA www 2001:db8::10 --ttl 300
  lattice dns record add example.com CNAME blog www.example.com
  lattice dns record add example.com MX @ mail.example.com --priority 10
  lattice dns record add example.com TXT @ "v=spf1 mx -all"
  lattice dns record add example.com SRV _sip._tcp sip.example.com --port 5060
  lattice dns record add example.com CAA @ '0 issue "letsencrypt.org"'
`)
	c, z, in, err := recordCommand(ctx, f, args, "ZONE TYPE NAME VALUE")
	if err != nil {
		return err
	}
	r, err := c.AddRecord(ctx, z.ID, in)
	if err != nil {
		return explainDNS(err, f.Arg(0))
	}
	if *f.json {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "%s\n", r.ID)
	fmt.Fprintf(e.stderr, "added %s %s %s (ttl %d)\n", r.Name, r.Type, recordData(r), r.TTL)
	return nil
}

// recordData is a record's data as a zone file writes it.
func recordData(r dnszone.Record) string {
	switch {
	case r.Type == "SRV" && r.Priority != nil && r.Weight != nil && r.Port != nil:
		return fmt.Sprintf("%d %d %d %s", *r.Priority, *r.Weight, *r.Port, r.Value)
	case r.Priority != nil:
		return fmt.Sprintf("%d %s", *r.Priority, r.Value)
	case r.Type == "TXT":
		return strconv.Quote(r.Value)
	}
	return r.Value
}

func runRecordList(ctx context.Context, e *env, args []string) error {
	f := newDNSFlags(e, "record ls", "ZONE [--type T] [--name N]", `
Lists a zone's records: ID, name, type, TTL and data.`, `  lattice dns record ls example.com
  lattice dns record ls example.com --type MX
  lattice dns record ls example.com --name www --json
`)
	typ := f.String("type", "", "only records of this type")
	name := f.String("name", "", `only records of this name ("www", "@", or full)`)
	if err := f.parseN(args, 1, "one zone name or ID"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	z, err := findZone(ctx, c, f.Arg(0))
	if err != nil {
		return err
	}
	all, err := allPages(func(page int) (cloudwire.List[dnszone.Record], error) {
		return c.Records(ctx, z.ID, cloudclient.RecordFilter{Name: *name, Type: *typ}, page, cloudwire.MaxPerPage)
	})
	if err != nil {
		return explainDNS(err, f.Arg(0))
	}
	if *f.json {
		return printJSON(e.stdout, nonNil(all))
	}
	if len(all) == 0 {
		fmt.Fprintf(e.stderr, "no records match in zone %s\n", z.Name)
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "ID\tNAME\tTYPE\tTTL\tDATA")
	for _, r := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", r.ID, r.Name, r.Type, r.TTL, recordData(r))
	}
	return tw.Flush()
}

func runRecordSet(ctx context.Context, e *env, args []string) error {
	f := newDNSFlags(e, "record set", "ZONE ID TYPE NAME VALUE [--ttl S] [--priority N] [--weight N] [--port N]", `
Replaces a record's type, name and value (its ID stays). Its TTL, priority,
weight and port stay as they were unless given, when the type stays the
same; for a new type, those not given take their defaults.`, `  lattice dns record set example.com 3f2a9c0d1e4b5a6f A www 192.0.2.20
  lattice dns record set example.com 3f2a9c0d1e4b5a6f A www 192.0.2.20 --ttl 60
`)
	c, z, in, err := recordCommand(ctx, f, args, "ZONE ID TYPE NAME VALUE")
	if err != nil {
		return err
	}
	// What the flags leave out stays as it was, for a record of the same
	// type (the API replaces a record whole).
	if old, err := c.Record(ctx, z.ID, f.Arg(1)); err != nil {
		return explainDNS(err, f.Arg(0))
	} else if strings.EqualFold(old.Type, in.Type) {
		keep := func(to **int64, v *uint16) {
			if *to == nil && v != nil {
				n := int64(*v)
				*to = &n
			}
		}
		if in.TTL == nil {
			ttl := int64(old.TTL)
			in.TTL = &ttl
		}
		keep(&in.Priority, old.Priority)
		keep(&in.Weight, old.Weight)
		keep(&in.Port, old.Port)
	}
	r, err := c.UpdateRecord(ctx, z.ID, f.Arg(1), in)
	if err != nil {
		return explainDNS(err, f.Arg(0))
	}
	if *f.json {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stderr, "record %s is now %s %s %s (ttl %d)\n", r.ID, r.Name, r.Type, recordData(r), r.TTL)
	return nil
}

func runRecordRemove(ctx context.Context, e *env, args []string) error {
	f := newDNSFlags(e, "record rm", "ZONE ID", `
Deletes a record of a zone. The zone's last NS record at its apex stays.`, `  lattice dns record rm example.com 3f2a9c0d1e4b5a6f
`)
	if err := f.parseN(args, 2, "a zone name or ID and a record ID"); err != nil {
		return err
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	z, err := findZone(ctx, c, f.Arg(0))
	if err != nil {
		return err
	}
	if err := c.DeleteRecord(ctx, z.ID, f.Arg(1)); err != nil {
		return explainDNS(err, f.Arg(0))
	}
	fmt.Fprintf(e.stderr, "record %s deleted from %s\n", f.Arg(1), z.Name)
	return nil
}
