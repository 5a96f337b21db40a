package cli

// End-to-end tests of the command line: every test drives Main with real
// arguments against a real node (Pebble ledger in a temporary directory,
// write engine, nodeapi over loopback HTTP), and checks what a user sees on
// stdout and stderr and the exit code.
//
// No test calls t.Parallel: TestDev and TestNodeConfig stop servers with a
// SIGINT to the test process, which every Main running at that moment would
// also receive.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
	"github.com/latticenet/lattice/node/nodeapi"
	"github.com/latticenet/lattice/wallet"
)

// genesisUnits is the test network's native supply, in units.
const genesisUnits = "1000"

// result is what one run of the command line produced.
type result struct {
	code           int
	stdout, stderr string
}

// run runs the command line with args.
func run(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(args, &stdout, &stderr)
	return result{code, stdout.String(), stderr.String()}
}

// ok fails the test unless r succeeded, and returns r.
func ok(t *testing.T, r result, args ...string) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("lattice %s: exit %d, want 0\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// mustRun runs args and fails the test unless they succeed.
func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	return ok(t, run(t, args...), args...)
}

// wantFail checks that r exited with code and that its stderr holds every
// one of msgs.
func wantFail(t *testing.T, r result, code int, msgs ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code = %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
	for _, m := range msgs {
		if !strings.Contains(r.stderr, m) {
			t.Errorf("stderr = %q, want it to mention %q", r.stderr, m)
		}
	}
}

// decode parses the JSON output of a command into v.
func decode(t *testing.T, r result, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode JSON output %q: %v", r.stdout, err)
	}
}

// cleanEnv isolates a test from the user's environment: HOME is a fresh
// directory (so default paths never touch the real home) and every LATTICE_
// variable the commands read is empty, which the commands treat as unset.
func cleanEnv(t *testing.T) (home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"LATTICE_NODE", "LATTICE_KEY", "LATTICE_DATA", "LATTICE_HTTP", "LATTICE_CONFIG",
		"LATTICE_LOG_LEVEL", "LATTICE_GENESIS", "LATTICE_MAX_CLOCK_SKEW", "LATTICE_PROFILE", "LATTICE_API_URL",
		"LATTICE_API_KEY", "XDG_CONFIG_HOME", "LATTICE_DNS_NS", "LATTICE_DNS_NOTIFY", "LATTICE_DNS_TRANSFER_FROM",
		"LATTICE_COMPUTE_ACCEL", "LATTICE_COMPUTE_QUOTA", "LATTICE_COMPUTE_CAPACITY", "LATTICE_COMPUTE_IMAGES", "LATTICE_COMPUTE_OUTBOUND"} {
		t.Setenv(v, "")
	}
	// Servers started by tests never take the real S3 port.
	t.Setenv("LATTICE_S3", "127.0.0.1:0")
	t.Setenv("LATTICE_DNS", "127.0.0.1:0")          // nor the real DNS port
	t.Setenv("LATTICE_CDN", "127.0.0.1:0")          // nor the real CDN edge port
	t.Setenv("LATTICE_S3_WEBSITE", "127.0.0.1:0")   // nor the real S3 website port
	t.Setenv("LATTICE_P2P", "/ip4/127.0.0.1/tcp/0") // nor lattice dev's peer port
	return home
}

// testNode is a real node served over loopback HTTP, with a genesis key
// saved where the command line can use it.
type testNode struct {
	t       *testing.T
	n       *node.Node
	srv     *httptest.Server
	url     string
	dataDir string
	keys    string // directory for key files
	gkey    string // path of the genesis key file
	genesis wallet.Key
	gblock  *ledger.Block
	closed  bool
}

func newTestNode(t *testing.T) *testNode {
	t.Helper()
	cleanEnv(t)
	tn := &testNode{t: t, dataDir: t.TempDir(), keys: t.TempDir(), genesis: wallet.NewKey()}
	tn.gkey = filepath.Join(tn.keys, "genesis.json")
	if err := wallet.SaveKey(tn.gkey, tn.genesis); err != nil {
		t.Fatal(err)
	}
	supply, err := ledger.ParseUnits(genesisUnits)
	if err != nil {
		t.Fatal(err)
	}
	tn.gblock = ledger.NewGenesis(tn.genesis.Private(), supply, time.Now().Add(-time.Hour).UnixMilli())
	tn.n, err = node.Open(node.Config{
		DataDir: tn.dataDir,
		Network: &node.Network{Name: "clitest", Work: ledger.DevWork, Genesis: tn.gblock},
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatalf("node.Open: %v", err)
	}
	tn.srv = httptest.NewServer(nodeapi.New(tn.n, nodeapi.Options{}))
	tn.url = tn.srv.URL
	t.Cleanup(tn.close)
	return tn
}

// close stops the HTTP server, then the node. It may be called early (to
// audit the stopped node's data directory); later calls do nothing.
func (tn *testNode) close() {
	if tn.closed {
		return
	}
	tn.closed = true
	tn.srv.Close()
	if err := tn.n.Close(); err != nil {
		tn.t.Errorf("node.Close: %v", err)
	}
}

// newKey saves a fresh key as keys/name.json and returns its path and
// address.
func (tn *testNode) newKey(name string) (path, addr string) {
	tn.t.Helper()
	k := wallet.NewKey()
	path = filepath.Join(tn.keys, name+".json")
	if err := wallet.SaveKey(path, k); err != nil {
		tn.t.Fatal(err)
	}
	return path, k.Address().String()
}

// as runs a client command against the node with key file key: cmd is the
// command and its subcommand ("send", "multisig open"); --node and --key
// come right after it, then args.
func (tn *testNode) as(key, cmd string, args ...string) result {
	tn.t.Helper()
	full := append(strings.Fields(cmd), "--node", tn.url, "--key", key)
	return run(tn.t, append(full, args...)...)
}

// mustAs is as, failing the test unless the command succeeds.
func (tn *testNode) mustAs(key, cmd string, args ...string) result {
	tn.t.Helper()
	r := tn.as(key, cmd, args...)
	full := append(append(strings.Fields(cmd), "--key", key), args...)
	return ok(tn.t, r, full...)
}

// deadURL returns the URL of a loopback port where nothing listens.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func TestHelpAndVersion(t *testing.T) {
	cleanEnv(t)
	for _, args := range [][]string{nil, {"help"}, {"-h"}, {"--help"}} {
		r := run(t, args...)
		if r.code != 0 {
			t.Errorf("lattice %v: exit %d, want 0", args, r.code)
		}
		for _, cmd := range []string{"dev", "node", "genesis", "key", "balance", "claim", "send", "receive",
			"chain", "block", "multisig", "chat", "directory", "audit", "bench", "version"} {
			if !strings.Contains(r.stdout, "  "+cmd+" ") {
				t.Errorf("lattice %v: usage does not list %q:\n%s", args, cmd, r.stdout)
			}
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := mustRun(t, args...)
		if got, want := r.stdout, "lattice "+node.Version+"\n"; got != want {
			t.Errorf("lattice %v printed %q, want %q", args, got, want)
		}
	}
	// -h on a command prints its flags on stdout and succeeds.
	r := run(t, "send", "-h")
	if r.code != 0 || !strings.Contains(r.stdout, "-to") || !strings.Contains(r.stdout, "LATTICE_NODE") {
		t.Errorf("send -h: exit %d, stdout %q; want 0 and the flags", r.code, r.stdout)
	}
	// A mistyped flag gets one line that says so and where help is, not
	// the whole help.
	r = run(t, "send", "--bogus")
	if want := "lattice send: usage: flag provided but not defined: -bogus; run `lattice send -h`\n"; r.code != 2 || r.stderr != want || r.stdout != "" {
		t.Errorf("send --bogus: exit %d, stdout %q, stderr %q; want 2 and stderr %q", r.code, r.stdout, r.stderr, want)
	}
}

func TestKeyNewAndShow(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "k.json")

	r := mustRun(t, "key", "new", "--out", path)
	addr := strings.TrimSpace(r.stdout)
	if _, err := ledger.ParseAddress(addr); err != nil || r.stdout != addr+"\n" {
		t.Fatalf("key new printed %q, want one address line (%v)", r.stdout, err)
	}
	if !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, "0600") {
		t.Errorf("key new stderr = %q, want the path and mode", r.stderr)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o600 {
		t.Errorf("key file mode = %04o, want 0600", got)
	}
	k, err := wallet.LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := k.Address().String(); got != addr {
		t.Errorf("key file holds %s, key new printed %s", got, addr)
	}

	// Never overwrites.
	before, _ := os.ReadFile(path)
	wantFail(t, run(t, "key", "new", "--out", path), 1, "already exists", path, "--out FILE")
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("key new --out of an existing file changed it")
	}

	r = mustRun(t, "key", "show", "--key", path)
	if got, want := r.stdout, addr+"\n"; got != want {
		t.Errorf("key show printed %q, want %q", got, want)
	}

	// --json variants.
	var shown struct{ Address, File string }
	decode(t, mustRun(t, "key", "show", "--key", path, "--json"), &shown)
	if shown.Address != addr || shown.File != path {
		t.Errorf("key show --json = %+v, want address %s file %s", shown, addr, path)
	}
	path2 := filepath.Join(dir, "k2.json")
	r = mustRun(t, "key", "new", "--out", path2, "--json")
	var made struct{ Address, File string }
	decode(t, r, &made)
	k2, err := wallet.LoadKey(path2)
	if err != nil {
		t.Fatal(err)
	}
	if made.Address != k2.Address().String() || made.File != path2 {
		t.Errorf("key new --json = %+v, want address %s file %s", made, k2.Address(), path2)
	}
	if made.Address == addr {
		t.Errorf("two key new runs made the same key %s", addr)
	}
}

func TestKeyDefaultPathAndEnv(t *testing.T) {
	home := cleanEnv(t)
	def := filepath.Join(home, ".lattice", "key.json")

	// Without --out or --key, key new writes $HOME/.lattice/key.json.
	addr := strings.TrimSpace(mustRun(t, "key", "new").stdout)
	if k, err := wallet.LoadKey(def); err != nil || k.Address().String() != addr {
		t.Fatalf("default key file %s: %v; want address %s", def, err, addr)
	}
	if got := strings.TrimSpace(mustRun(t, "key", "show").stdout); got != addr {
		t.Errorf("key show (default path) = %s, want %s", got, addr)
	}

	other := filepath.Join(t.TempDir(), "other.json")
	otherAddr := strings.TrimSpace(mustRun(t, "key", "new", "--key", other).stdout)

	t.Setenv("LATTICE_KEY", other)
	if got := strings.TrimSpace(mustRun(t, "key", "show").stdout); got != otherAddr {
		t.Errorf("key show with LATTICE_KEY = %s, want %s", got, otherAddr)
	}
	if got := strings.TrimSpace(mustRun(t, "key", "show", "--key", def).stdout); got != addr {
		t.Errorf("key show --key with LATTICE_KEY set = %s, want the flag's %s", got, addr)
	}
}

func TestKeyRefusesOpenFile(t *testing.T) {
	cleanEnv(t)
	path := filepath.Join(t.TempDir(), "k.json")
	mustRun(t, "key", "new", "--out", path)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	wantFail(t, run(t, "key", "show", "--key", path), 1, "chmod 600 "+path, "0644")
}

func TestKeyUsage(t *testing.T) {
	cleanEnv(t)
	for _, args := range [][]string{{"key"}, {"key", "rotate"}, {"key", "new", "--bogus"}} {
		wantFail(t, run(t, args...), 2, "lattice key")
	}
	wantFail(t, run(t, "key", "show", "--key", filepath.Join(t.TempDir(), "none.json")), 1, "no such file")
}

func TestUnknownCommand(t *testing.T) {
	cleanEnv(t)
	r := run(t, "frobnicate")
	wantFail(t, r, 2, `unknown command "frobnicate"`, "lattice help")
	if r.stdout != "" || strings.Contains(r.stderr, "did you mean") {
		t.Errorf("unknown command printed %q on stdout, %q on stderr (nothing is near frobnicate)", r.stdout, r.stderr)
	}
	// A mistyped command gets the nearest names.
	for typed, want := range map[string]string{"sned": "did you mean send?", "blok": "did you mean block?", "keys": "did you mean key?"} {
		wantFail(t, run(t, typed), 2, `unknown command "`+typed+`"`, want)
	}
}

// TestHelpCommand: help CMD prints CMD's help; help of an unknown command
// is an error with the nearest names, not the global help.
func TestHelpCommand(t *testing.T) {
	cleanEnv(t)
	for _, args := range [][]string{{"help", "send"}, {"help", "dns", "zone"}} {
		r := run(t, args...)
		own := run(t, append(args[1:], "-h")...)
		if r.code != 0 || r.stdout+r.stderr != own.stdout+own.stderr || !strings.Contains(r.stdout+r.stderr, "Usage: lattice "+strings.Join(args[1:], " ")) {
			t.Errorf("lattice %s: exit %d, %q; want lattice %s -h's help", strings.Join(args, " "), r.code, r.stdout+r.stderr, strings.Join(args[1:], " "))
		}
	}
	wantFail(t, run(t, "help", "nosuch"), 2, `unknown command "nosuch"`)
	wantFail(t, run(t, "help", "sned"), 2, "did you mean send?")
	if r := run(t, "help"); r.code != 0 || !strings.Contains(r.stdout, "Usage: lattice COMMAND") {
		t.Errorf("lattice help: exit %d, %q", r.code, r.stdout)
	}
}

func TestSuggestion(t *testing.T) {
	names := []string{"send", "receive", "block", "blocks", "key", "s3", "dns"}
	for _, tt := range []struct{ typed, want string }{
		{"sned", ": did you mean send?"},
		{"recieve", ": did you mean receive?"},
		{"blck", ": did you mean block or blocks?"},
		{"blo", ": did you mean block or blocks?"},
		{"zzz", ""},
		{"dsn", ": did you mean dns?"},
	} {
		if got := suggestion(tt.typed, names); got != tt.want {
			t.Errorf("suggestion(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}

// TestFlagsPrecedence checks the flags type every command uses: flag beats
// environment beats config file beats default.
func TestFlagsPrecedence(t *testing.T) {
	cleanEnv(t)
	conf := filepath.Join(t.TempDir(), "conf.json")
	if err := os.WriteFile(conf, []byte(`{"addr": "from-config", "other": "o-config"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		env      string // LATTICE_TEST_ADDR
		confEnv  string // LATTICE_TEST_CONFIG
		want     string
		wantConf string // the value of "other"
	}{
		{"default", nil, "", "", "def", "o-def"},
		{"config", []string{"--config", conf}, "", "", "from-config", "o-config"},
		{"config from env", nil, "", conf, "from-config", "o-config"},
		{"env beats config", []string{"--config", conf}, "from-env", "", "from-env", "o-config"},
		{"flag beats env and config", []string{"--config", conf, "--addr", "from-flag"}, "from-env", "", "from-flag", "o-config"},
		{"flag beats env", []string{"--addr", "from-flag"}, "from-env", "", "from-flag", "o-def"},
		{"env", nil, "from-env", "", "from-env", "o-def"},
		{"empty env is unset", nil, "", "", "def", "o-def"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LATTICE_TEST_ADDR", tt.env)
			t.Setenv("LATTICE_TEST_CONFIG", tt.confEnv)
			var stderr bytes.Buffer
			f := newFlags(&env{stdout: io.Discard, stderr: &stderr}, "test", "test [flags]")
			addr := f.string("addr", "LATTICE_TEST_ADDR", "addr", "def", "an address")
			other := f.string("other", "", "other", "o-def", "no environment variable")
			f.string("config", "LATTICE_TEST_CONFIG", "", "", "config file")
			if err := f.parse(tt.args); err != nil {
				t.Fatalf("parse(%q): %v", tt.args, err)
			}
			if *addr != tt.want {
				t.Errorf("addr = %q, want %q", *addr, tt.want)
			}
			if *other != tt.wantConf {
				t.Errorf("other = %q, want %q", *other, tt.wantConf)
			}
		})
	}
}

func TestFlagsConfigErrors(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, conf, want string
	}{
		{"unknown keys", write("unknown.json", `{"addr": "x", "zeta": 1, "alpha": true}`), "unknown keys alpha, zeta"},
		{"not JSON", write("bad.json", `addr = "x"`), "bad.json"},
		{"an array", write("array.json", `[{"addr": "x"}]`), "want one JSON object of keys and values"},
		{"a bool that is not", write("yes.json", `{"relay": "yes"}`), `key "relay": "yes" is not a boolean: want true or false`},
		{"missing file", filepath.Join(dir, "missing.json"), "missing.json"},
		// A flag without a config key cannot be set from the file.
		{"key of a flag without config key", write("nokey.json", `{"noconf": "x"}`), "unknown keys noconf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFlags(&env{stdout: io.Discard, stderr: io.Discard}, "test", "test [flags]")
			f.string("addr", "", "addr", "def", "")
			f.string("noconf", "", "", "def", "")
			f.boolean("relay", "", "relay", "")
			f.string("config", "", "", "", "")
			err := f.parse([]string{"--config", tt.conf})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parse with config %s: error %v, want one mentioning %q", tt.conf, err, tt.want)
			}
		})
	}

	// A bad flag is a usage error (exit 2), -h is not an error at all.
	f := newFlags(&env{stdout: io.Discard, stderr: io.Discard}, "test", "test [flags]")
	f.string("addr", "", "addr", "def", "")
	if err := f.parse([]string{"--nope"}); !errors.Is(err, ErrUsage) {
		t.Errorf("parse(--nope) = %v, want a usage error", err)
	}

	// A boolean's environment variable that is not one is refused, not
	// ignored (the flag kept its default and nothing said so).
	t.Setenv("LATTICE_TEST_RELAY", "yes")
	f = newFlags(&env{stdout: io.Discard, stderr: io.Discard}, "test", "test [flags]")
	f.boolean("relay", "LATTICE_TEST_RELAY", "relay", "")
	if err := f.parse(nil); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), `the environment variable LATTICE_TEST_RELAY: "yes" is not a boolean: want true or false`) {
		t.Errorf("parse with LATTICE_TEST_RELAY=yes: %v, want a usage error naming it", err)
	}
}

// TestFlagOriginsExplain: a usage error about a flag whose value came
// from the environment, a profile or a config file says where; one about
// a flag given on the command line, or an error that is not a usage
// error, is left as it is.
func TestFlagOriginsExplain(t *testing.T) {
	o := &flagOrigins{}
	o.set("data", "the key \"data\" of config a.json")
	o.set("node", "the profile \"dev\"")
	for _, tt := range []struct {
		err  error
		want string
	}{
		{usageErr("--data %q: not a folder", "x"), `usage: --data "x": not a folder (--data is set by the key "data" of config a.json)`},
		{usageErr("--data-dir %q: not a folder", "x"), `usage: --data-dir "x": not a folder`},
		{usageErr("--node and --data disagree; --node wins"), `usage: --node and --data disagree; --node wins (--node is set by the profile "dev"; --data is set by the key "data" of config a.json)`},
		{usageErr("--http %q: want host:port", "x"), `usage: --http "x": want host:port`},
		{fmt.Errorf("--data %q: permission denied", "x"), `--data "x": permission denied`},
	} {
		if got := o.explain(tt.err).Error(); got != tt.want {
			t.Errorf("explain(%q) = %q, want %q", tt.err, got, tt.want)
		}
	}
	var none *flagOrigins
	if got := none.explain(usageErr("--data")).Error(); got != "usage: --data" {
		t.Errorf("no origins recorded: %q", got)
	}

	// A flag given on the command line has no origin elsewhere, whatever
	// the environment holds, even after a flag set of the same run (the
	// second here) took it from there.
	t.Setenv("LATTICE_TEST_ADDR", "from-env")
	e := &env{stdout: io.Discard, stderr: io.Discard, origins: &flagOrigins{}}
	for _, args := range [][]string{nil, {"--addr", "typed"}} {
		f := newFlags(e, "test", "test [flags]")
		f.string("addr", "LATTICE_TEST_ADDR", "addr", "def", "")
		f.string("other", "LATTICE_TEST_ADDR", "other", "def", "")
		if err := f.parse(args); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := e.origins.explain(usageErr("--addr and --other")).Error(), `usage: --addr and --other (--other is set by the environment variable LATTICE_TEST_ADDR)`; got != want {
		t.Errorf("after --addr typed: %q, want %q", got, want)
	}
}
