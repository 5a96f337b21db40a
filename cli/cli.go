// Package cli implements the lattice command line: the servers (node, dev)
// and the client commands people use against them.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/latticenet/lattice/machine/agent"
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

// env is what every command writes to.
type env struct {
	stdout, stderr io.Writer
	profile        string // --profile, for this run; "" for LATTICE_PROFILE or the current one
	// origins records where the run's flags not on the command line got
	// their values, for its usage errors (nil: not recorded).
	origins *flagOrigins
}

// flagOrigins records, by flag name, where a value that was not given on
// the command line came from: an environment variable, a profile or a
// config file's key. A usage error about such a flag says so, since the
// user who typed no --max-clock-skew looks for it in the wrong place.
type flagOrigins struct {
	mu sync.Mutex
	by map[string]string
}

func (o *flagOrigins) set(name, origin string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.by == nil {
		o.by = map[string]string{}
	}
	o.by[name] = origin
}

// forget drops name's origin: it was given on the command line.
func (o *flagOrigins) forget(name string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.by, name)
}

// flagInMessage finds the flags a message names: "--" and the longest
// flag name that follows.
var flagInMessage = regexp.MustCompile(`--([a-z0-9]+(?:-[a-z0-9]+)*)`)

// explain adds to a usage error where the values of the flags it names
// came from, when not from the command line.
func (o *flagOrigins) explain(err error) error {
	if o == nil || !errors.Is(err, ErrUsage) {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var notes []string
	seen := map[string]bool{}
	for _, m := range flagInMessage.FindAllStringSubmatch(err.Error(), -1) {
		name := m[1]
		if origin, ok := o.by[name]; ok && !seen[name] {
			seen[name] = true
			notes = append(notes, "--"+name+" is set by "+origin)
		}
	}
	if len(notes) == 0 {
		return err
	}
	return fmt.Errorf("%w (%s)", err, strings.Join(notes, "; "))
}

// synced returns e with writers safe for the concurrent use of servers,
// whose listeners and logger write from several goroutines.
func (e *env) synced() *env {
	var mu sync.Mutex
	return &env{stdout: &lockedWriter{mu: &mu, w: e.stdout}, stderr: &lockedWriter{mu: &mu, w: e.stderr}, profile: e.profile, origins: e.origins}
}

// lockedWriter serialises writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func commands() []command {
	return []command{
		{"dev", "start a network of one node (or --nodes N) and the cloud on this machine, with a funded key", runDev},
		{"node", "run a ledger node from a data directory and a genesis file", runNode},
		{"cloud", "run the cloud platform (REST API, S3 endpoint, DNS server, CDN edge, compute VMs); `cloud apikey` manages API keys", runCloud},
		{"s3", "buckets and objects: mb, rb, ls, cp (with progress), mv, sync, rm, public, versioning, versions, usage, presign, zip, lifecycle, events, metrics, keys, kms", runS3},
		{"dns", "DNS zones and records, served by the platform's DNS server (dns zone create|ls|rm, dns record add|ls|set|rm)", runDNS},
		{"cdn", "CDN deployments in front of an origin or a bucket, served by the platform's caching edge (cdn create|ls|show|rm|domains|domain|purge)", runCDN},
		{"compute", "virtual machines on the platform's host, with SSH and a console log (compute create|ls|show|power|ssh|logs|rm|images|usage)", runCompute},
		{"genesis", "create a network's genesis file (genesis new)", runGenesis},
		{"key", "create or show a key file, or write it as an SSH key (key new | key show | key ssh)", runKey},
		{"balance", "show an account's balances and pending receipts", runBalance},
		{"claim", "claim 100 stable from the faucet (once per 24 h)", runClaim},
		{"send", "send native or stable to an address", runSend},
		{"receive", "receive every pending send to your account", runReceive},
		{"chain", "list an account's blocks, oldest first", runChain},
		{"block", "show one block", runBlock},
		{"multisig", "open a multisig account or rotate its keyset (multisig open | update)", runMultisig},
		{"gov", "the governance state chain: parameters, keys and the keyset, changed by signed proposals (gov show | get | set | delete | keyset | sign | submit)", runGov},
		{"lease", "compute leases: offers, create, list, show, end, settle", runLease},
		{"vm", "the machines of leases: list, show, and run commands in one (vm list | show | exec LEASE -- COMMAND)", runVM},
		{"tunnel", "forward a local port to a port of a lease's machine, over the peer-to-peer network (tunnel LEASE --port 22)", runTunnel},
		{"provider", "compute providers the node knows: resources in all, free, active leases (provider status)", runProvider},
		{"timekeeper", "lease timekeepers: the committee and this node's part (timekeeper status)", runTimekeeper},
		{"chat", "send, read and follow signed messages, optionally end-to-end encrypted (chat send | read | follow | contacts)", runChat},
		{"directory", "register your account at the node you use, or show where an account is registered (directory register | show)", runDirectory},
		{"ledger", "what a node holds: info, pending sends, frontiers, conflicts, recent blocks (ledger info | pending | frontiers | conflicts | recent)", runLedger},
		{"completion", "print a bash or zsh script that completes lattice's commands and flags (completion bash | zsh)", runCompletion},
		{"audit", "check a stopped node's ledger invariants offline, or compare running nodes and name every difference (--nodes)", runAudit},
		{"bench", "measure ledger ingestion (bench ledger), the ledger network (bench network), leases (bench lease), chat (bench chat), S3 against MinIO (bench s3), DNS against NSD and PowerDNS (bench dns), the CDN edge against nginx (bench cdn), VMs (bench compute) or a provider's VMs over the network (bench provider)", runBench},
		{"version", "print the version", runVersion},
		{"profile", "list, show or choose the named client settings `lattice dev` writes (ls, show, use)", runProfile},
	}
}

// ErrUsage marks errors that the command line itself is wrong.
var ErrUsage = errors.New("usage")

// Main runs the command line args and returns the process exit code. An
// interrupt (Ctrl-C) or SIGTERM ends the command's context.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return mainContext(ctx, args, stdout, stderr)
}

// mainContext is Main, with the command's context given: tests end
// long-running commands with it.
func mainContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, origins: &flagOrigins{}}
	if len(args) > 1 && args[0] == "help" {
		// help CMD [SUB...] is CMD [SUB...] -h.
		if !isCommand(args[1]) {
			fmt.Fprintf(stderr, "lattice help: unknown command %q%s; `lattice help` lists them all\n", args[1], suggestion(args[1], commandNames()))
			return 2
		}
		args = append(append([]string{}, args[1:]...), "-h")
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...) // version refuses what it does not take
	}
	if args[0] == agent.Command { // inside a VM's image, run by its init; not for people
		return agent.GuestMain()
	}
	if args[0] == "__complete" { // the completion scripts' call back, not for people
		if err := runComplete(ctx, e, args[1:]); err != nil {
			fmt.Fprintf(stderr, "lattice: %v\n", err)
			return 2
		}
		return 0
	}
	args, profile, err := takeProfileFlag(args)
	e.profile = profile
	if err != nil {
		fmt.Fprintf(stderr, "lattice: %v\n", err)
		return 2
	}
	if len(args) == 0 {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := e.origins.explain(c.run(ctx, e, args[1:]))
		code := 1
		var passed *exitCodeError
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &passed):
			return passed.code // a program run for the user (ssh) said its own error
		case errors.Is(err, ErrUsage):
			code = 2
		}
		if wantsJSON(args[1:]) {
			// A script that asked for JSON gets its errors as JSON too.
			json.NewEncoder(stderr).Encode(map[string]any{"command": c.name, "error": err.Error(), "exit_status": code})
		} else {
			fmt.Fprintf(stderr, "lattice %s: %v\n", c.name, err)
		}
		return code
	}
	fmt.Fprintf(stderr, "lattice: unknown command %q%s; `lattice help` lists them all\n", args[0], suggestion(args[0], commandNames()))
	return 2
}

// exitCodeError is the exit status of a program a command ran in the
// user's place (ssh), which has said what went wrong itself: lattice
// exits with the same status and adds nothing.
type exitCodeError struct{ code int }

func (e *exitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// commandNames lists the top-level commands.
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

func isCommand(name string) bool { return slices.Contains(commandNames(), name) }

// suggestion returns ": did you mean X?" (or "X or Y") for the names
// nearest to a mistyped one: those a prefix of it or it of them, or at
// most two edits away (one for names of up to four letters). It returns ""
// when none is near.
func suggestion(typed string, names []string) string {
	var near []string
	for _, n := range names {
		limit := 2
		if len(n) <= 4 {
			limit = 1
		}
		if (len(typed) >= 2 && (strings.HasPrefix(n, typed) || strings.HasPrefix(typed, n))) || editDistance(typed, n) <= limit {
			near = append(near, n)
		}
	}
	switch len(near) {
	case 0:
		return ""
	case 1:
		return ": did you mean " + near[0] + "?"
	}
	return ": did you mean " + strings.Join(near[:len(near)-1], ", ") + " or " + near[len(near)-1] + "?"
}

// editDistance is the number of edits between a and b, in bytes: an
// insertion, a deletion, a change or two neighbours swapped (sned, send)
// each count one (the optimal string alignment distance).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// isProfiled reports whether a flag's environment variable is one a
// profile can set.
func isProfiled(envVar string) bool {
	switch envVar {
	case "LATTICE_NODE", "LATTICE_KEY", "LATTICE_API_URL", "LATTICE_API_KEY":
		return true
	}
	return false
}

// wantsJSON reports whether a command line asks for --json output.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		switch a {
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "lattice: a decentralized cloud on one binary: a block-lattice ledger node, the cloud platform (storage, S3, DNS, CDN) and their clients.")
	fmt.Fprintln(w, "\nUsage: lattice COMMAND [flags]\n\nCommands:")
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun `lattice COMMAND -h` for a command's flags. Quick start: `lattice dev`.")
}

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// flags is a flag set whose flags may also come from an environment
// variable or a key of a JSON config file. Precedence: flag, environment,
// config file, default.
type flags struct {
	*flag.FlagSet
	bound      []binding
	positional []string
	profile    string // the --profile of the run, if any
	// textAfterFlags makes every argument from the first positional one
	// on positional: a message's words are never read as flags.
	textAfterFlags bool
	// dashAt is the number of positional arguments before "--" once
	// parsed (vm exec's LEASE -- COMMAND), -1 with no "--".
	dashAt int
	// given holds the flags given on the command line (not filled from
	// the environment or a profile), once parsed.
	given map[string]bool
	// stdout receives the help a user asks for with -h.
	stdout io.Writer
	// origins records where the flags not given got their values.
	origins *flagOrigins
	// hidden flags are accepted but not listed in the help: a flag the
	// command does not need, that scripts pass to every command.
	hidden map[string]bool
	// configKeys makes the help of --config list the keys the file may
	// hold, from the flags themselves (configFile).
	configKeys bool
}

// hide keeps flag name out of the help.
func (f *flags) hide(name string) {
	if f.hidden == nil {
		f.hidden = map[string]bool{}
	}
	f.hidden[name] = true
}

// PrintDefaults lists the flags as flag.FlagSet does, but the hidden
// ones, and with the default that applies: a flag a profile or an
// environment variable sets shows that value and says where it comes
// from, instead of a built-in default that does not apply (API keys
// shortened, as `profile show` prints them).
func (f *flags) PrintDefaults() {
	shown := flag.NewFlagSet(f.Name(), flag.ContinueOnError)
	shown.SetOutput(f.Output())
	bindingOf := map[string]binding{}
	for _, b := range f.bound {
		bindingOf[b.name] = b
	}
	profName, prof, _ := activeProfile(f.profile) // a broken profile file is reported when the command runs
	f.VisitAll(func(fl *flag.Flag) {
		if f.hidden[fl.Name] {
			return
		}
		def, usage := fl.DefValue, fl.Usage
		b := bindingOf[fl.Name]
		if fl.Name == "config" && f.configKeys {
			usage += " with keys " + strings.Join(f.confKeys(), ", ") + " (env " + b.env + ")"
		}
		env := b.env
		now, from := "", ""
		switch {
		case env == "":
		case os.Getenv(env) != "":
			now, from = os.Getenv(env), env
		case isProfiled(env) && !b.noProfile && prof.value(env) != "":
			now, from = prof.value(env), "profile "+profName
		}
		if now != "" {
			if env == "LATTICE_API_KEY" && len(now) > 13 {
				now = now[:13] + "…"
			}
			def, usage = "", fmt.Sprintf("%s; now %q, from %s", usage, now, from)
		}
		shown.Var(fl.Value, fl.Name, usage)
		shown.Lookup(fl.Name).DefValue = def
	})
	shown.PrintDefaults()
}

type binding struct {
	name, env, confKey string
	noProfile          bool // the profile never fills it (see unprofiled)
}

// unprofiled keeps the client profile from filling the flag name, which
// still takes its environment variable: for a value that must be named on
// purpose (genesis new's --key owns a new network's supply; the profile's
// is lattice dev's throw-away key).
func (f *flags) unprofiled(name string) {
	for i := range f.bound {
		if f.bound[i].name == name {
			f.bound[i].noProfile = true
		}
	}
}

func newFlags(e *env, name, usageLine string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	f := &flags{FlagSet: fs, profile: e.profile, stdout: e.stdout, origins: e.origins}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: lattice %s\n\nFlags:\n", usageLine)
		f.PrintDefaults()
	}
	return f
}

// string defines a string flag with an environment variable (may be "")
// and config-file key (may be "").
func (f *flags) string(name, envVar, confKey, def, usage string) *string {
	if envVar != "" {
		usage += " (env " + envVar + ")"
	}
	p := f.String(name, def, usage)
	f.bound = append(f.bound, binding{name: name, env: envVar, confKey: confKey})
	return p
}

// configFile defines --config, the JSON file of flag values; its help
// lists the keys of every flag that has one, so the list cannot drift
// from the flags (it did: three keys were missing from two commands').
func (f *flags) configFile() {
	f.String("config", "", "JSON config file")
	f.bound = append(f.bound, binding{name: "config", env: "LATTICE_CONFIG"})
	f.configKeys = true
}

// confKeys are the config-file keys of the flags, in the order the flags
// were defined.
func (f *flags) confKeys() []string {
	var keys []string
	for _, b := range f.bound {
		if b.confKey != "" && !f.hidden[b.name] {
			keys = append(keys, b.confKey)
		}
	}
	return keys
}

// boolean defines a boolean flag ("--relay", "--relay=false") with an
// environment variable (may be "") and config-file key (may be ""), which
// take true or false.
func (f *flags) boolean(name, envVar, confKey, usage string) *bool {
	if envVar != "" {
		usage += " (env " + envVar + ")"
	}
	p := f.Bool(name, false, usage)
	f.bound = append(f.bound, binding{name: name, env: envVar, confKey: confKey})
	return p
}

// parse parses args, then fills unset flags from the environment and from
// the config file named by the flag "config", if the set has one. Flags
// may come before or after positional arguments ("block HASH --json"); a
// "--" ends the flags.
// jsonFlag defines --json and --output FORMAT (table, the default, or
// json), the words of kubectl and doctl for the same choice; the last one
// given wins. It reports whether to print JSON.
func (f *flags) jsonFlag() *bool {
	asJSON := f.Bool("json", false, "print machine-readable JSON (same as --output json)")
	f.Func("output", "`FORMAT` of the output: table (the default) or json", func(s string) error {
		switch s {
		case "json":
			*asJSON = true
		case "table", "text":
			*asJSON = false
		default:
			return fmt.Errorf("want table or json, not %q", s)
		}
		return nil
	})
	return asJSON
}

// flagInText refuses a text that holds one of the command's own flags
// ("hello --encrypt"): sent as words, it would do silently what the user
// did not mean (a message in the clear). "--" before the text sends it as
// it is.
func (f *flags) flagInText(words []string) error {
	for _, w := range words {
		if len(w) < 2 || w[0] != '-' {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(w, "-"), "-"), "=")
		if name != "" && f.Lookup(name) != nil {
			return usageErr("the text holds %s, a flag of this command: put flags before the text; to send %s as text, put -- before the text", w, w)
		}
	}
	return nil
}

func (f *flags) parse(args []string) error {
	f.dashAt = -1
	for {
		// The flag package prints the usage on every error; a mistyped
		// flag gets the one-line error and a pointer to -h instead, and
		// asked-for help goes to stdout, where a pager can read it.
		out := f.Output()
		f.SetOutput(io.Discard)
		err := f.Parse(args)
		f.SetOutput(out)
		if err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.SetOutput(f.stdout)
				f.Usage()
				f.SetOutput(out)
				return err
			}
			return fmt.Errorf("%w: %v; run `lattice %s -h`", ErrUsage, err, f.Name())
		}
		rest := f.FlagSet.Args()
		dashes := len(args) > len(rest) && args[len(args)-len(rest)-1] == "--"
		if len(rest) == 0 {
			if dashes {
				f.dashAt = len(f.positional)
			}
			break
		}
		if f.textAfterFlags && !dashes {
			if err := f.flagInText(rest); err != nil {
				return err
			}
		}
		if dashes {
			f.dashAt = len(f.positional)
		}
		if f.textAfterFlags || dashes {
			f.positional = append(f.positional, rest...)
			break
		}
		f.positional = append(f.positional, rest[0])
		args = rest[1:]
	}
	set := map[string]bool{}
	var negative error
	f.Visit(func(fl *flag.Flag) {
		set[fl.Name] = true
		// No wait, timeout or period of any command runs backwards: a
		// negative one is a mistake, not "none" (lease end --wait -5s
		// would send its notice and return).
		if g, ok := fl.Value.(flag.Getter); ok && negative == nil {
			if d, ok := g.Get().(time.Duration); ok && d < 0 {
				negative = usageErr("--%s %s: want a duration of 0 or more; run `lattice %s -h`", fl.Name, fl.Value, f.Name())
			}
		}
	})
	if negative != nil {
		return negative
	}
	f.given = maps.Clone(set)
	for name := range f.given {
		f.origins.forget(name)
	}
	for _, b := range f.bound {
		if set[b.name] || b.env == "" {
			continue
		}
		if v, ok := os.LookupEnv(b.env); ok && v != "" {
			if err := f.Set(b.name, v); err != nil {
				if bf, ok := f.Lookup(b.name).Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
					return usageErr("the environment variable %s: %q is not a boolean: want true or false", b.env, v)
				}
				return usageErr("the environment variable %s: %v", b.env, err)
			}
			set[b.name] = true
			f.origins.set(b.name, "the environment variable "+b.env)
		}
	}
	// Then the profile in use, for the client settings it keeps.
	var prof *profile
	var profName string
	for _, b := range f.bound {
		if set[b.name] || !isProfiled(b.env) || b.noProfile {
			continue
		}
		if prof == nil {
			name, p, err := activeProfile(f.profile)
			if err != nil {
				return err
			}
			prof, profName = &p, name
		}
		if v := prof.value(b.env); v != "" {
			if err := f.Set(b.name, v); err != nil {
				return usageErr("the profile %q's %s: %v", profName, b.env, err)
			}
			set[b.name] = true
			f.origins.set(b.name, fmt.Sprintf("the profile %q", profName))
		}
	}
	cf := f.Lookup("config")
	if cf == nil || cf.Value.String() == "" {
		return nil
	}
	data, err := os.ReadFile(cf.Value.String())
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var conf map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // 12345678 stays "12345678", not "1.2345678e+07"
	if err := dec.Decode(&conf); err != nil {
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return fmt.Errorf("config %s: want one JSON object of keys and values, such as {\"data\": \"/var/lib/lattice/node\"}", cf.Value)
		}
		return fmt.Errorf("config %s: %w", cf.Value, err)
	}
	known := map[string]bool{}
	for _, b := range f.bound {
		if b.confKey == "" {
			continue
		}
		known[b.confKey] = true
		v, ok := conf[b.confKey]
		if !ok || set[b.name] {
			continue
		}
		if err := f.Set(b.name, fmt.Sprint(v)); err != nil {
			if bf, ok := f.Lookup(b.name).Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
				return fmt.Errorf("config %s: key %q: %q is not a boolean: want true or false", cf.Value, b.confKey, fmt.Sprint(v))
			}
			return fmt.Errorf("config %s: key %q: %w", cf.Value, b.confKey, err)
		}
		f.origins.set(b.name, fmt.Sprintf("the key %q of config %s", b.confKey, cf.Value))
	}
	var unknown []string
	for k := range conf {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("config %s: unknown keys %s", cf.Value, strings.Join(unknown, ", "))
	}
	return nil
}

// Args returns the positional arguments, wherever they stood among the
// flags.
func (f *flags) Args() []string { return f.positional }

// NArg returns the number of positional arguments.
func (f *flags) NArg() int { return len(f.positional) }

// Arg returns the i'th positional argument, or "".
func (f *flags) Arg(i int) string {
	if i < 0 || i >= len(f.positional) {
		return ""
	}
	return f.positional[i]
}

func homeDir(parts ...string) string {
	h, err := os.UserHomeDir()
	if err != nil {
		h = "."
	}
	return filepath.Join(append([]string{h}, parts...)...)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func runVersion(_ context.Context, e *env, args []string) error {
	f := newHelpFlags(e, "version", "version [--json]", `
Prints the version of lattice (also `+"`lattice --version`"+`).`, `  lattice version
  lattice --version
  lattice version --json
`)
	asJSON := f.jsonFlag()
	if err := f.parse(args); err != nil {
		return err
	}
	if err := noArgs(f); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, map[string]string{"version": version()})
	}
	fmt.Fprintln(e.stdout, "lattice", version())
	return nil
}
