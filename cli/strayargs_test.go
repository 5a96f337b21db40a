package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStrayArgumentRefused walks every command with a word it does not
// take and checks that the word is refused by name, with the usage exit
// status, before anything happens: a command that ignored a word once
// acted on the wrong key (`lattice receive bob.json` received for the dev
// account) and `lattice send --to X --amount 1 2 3` sent.
func TestStrayArgumentRefused(t *testing.T) {
	cleanEnv(t)
	t.Setenv("HOME", t.TempDir())
	const stray = "strayword"
	addr := strings.Repeat("ab", 32)
	hash := strings.Repeat("cd", 32)
	for _, args := range [][]string{
		{"dev", stray},
		{"node", stray},
		{"cloud", stray},
		{"genesis", "new", stray},
		{"key", "new", stray},
		{"key", "show", "a.json", stray},
		{"balance", addr, stray},
		{"claim", stray},
		{"send", "--to", addr, "--amount", "1", stray},
		{"receive", stray},
		{"chain", addr, stray},
		{"block", hash, stray},
		{"multisig", "open", stray},
		{"multisig", "update", stray},
		{"directory", "show", addr, stray},
		{"chat", "contacts", stray},
		{"ledger", "info", stray},
		{"ledger", "pending", strings.Repeat("ab", 32), stray},
		{"audit", "--nodes", "http://127.0.0.1:1", stray},
		{"bench", "ledger", stray},
		{"bench", "network", stray},
		{"bench", "chat", stray},
		{"bench", "s3", stray},
		{"bench", "dns", stray},
		{"bench", "cdn", stray},
		{"s3", "ls", "s3://bucket", stray},
		{"s3", "mb", "s3://bucket", stray},
		{"dns", "zone", "ls", stray},
		{"dns", "zone", "create", "example.com", stray},
		{"cdn", "ls", stray},
		{"version", stray},
		{"--version", stray},
		{"cloud", "apikey", "create", "--account", "acme", "--name", "my", stray},
		{"cloud", "apikey", "list", stray},
		{"ledger", "conflicts", stray},
		{"ledger", "pending", stray},
		{"profile", "ls", stray},
		{"completion", "bash", stray},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := run(t, args...)
			if r.code != 2 || !strings.Contains(r.stderr, stray) {
				t.Errorf("lattice %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(args, " "), r.code, r.stderr, stray)
			}
		})
	}
}

// TestNegativeDurationRefused: a negative wait or timeout is a usage
// error before anything is done (lease end --wait -5s sent its notice
// and returned).
func TestNegativeDurationRefused(t *testing.T) {
	cleanEnv(t)
	t.Setenv("HOME", t.TempDir())
	hash := strings.Repeat("cd", 32)
	for _, args := range [][]string{
		{"lease", "end", hash, "--wait", "-5s", "--node", "http://127.0.0.1:1"},
		{"lease", "create", "--provider", strings.Repeat("ab", 32), "--wait=-1ms", "--node", "http://127.0.0.1:1"},
		{"audit", "--nodes", "http://127.0.0.1:1", "--timeout", "-1s"},
	} {
		wantFail(t, run(t, args...), 2, "want a duration of 0 or more")
	}
}

// TestStrayArgumentHints: the refusal names the flag a word probably
// belongs to.
func TestStrayArgumentHints(t *testing.T) {
	cleanEnv(t)
	t.Setenv("HOME", t.TempDir())
	addr := strings.Repeat("ab", 32)
	wantFail(t, run(t, "receive", "bob.json"), 2, `unexpected argument "bob.json"`, "did you mean --key bob.json?")
	wantFail(t, run(t, "send", "--to", addr, "--amount", "1", "2", "3"), 2, `unexpected argument "2"`, "did you mean --amount 2?")
	wantFail(t, run(t, "send", "--amount", "1", addr), 2, "did you mean --to "+addr+"?")
}

// TestProfileJSON: the profile commands that print honour --json wherever
// it comes (profile ls --json printed the table, profile show --json dev
// took --json for a profile's name).
func TestProfileJSON(t *testing.T) {
	cleanEnv(t)
	pf := `{"current":"dev","profiles":{"dev":{"node":"http://127.0.0.1:8080","key":"/k.json","api":"http://127.0.0.1:8090","api_key":"lat_live_0123456789abcdef"}}}`
	writeProfiles(t, pf)
	var list []map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, "profile", "ls", "--json").stdout), &list); err != nil || len(list) != 1 || list[0]["name"] != "dev" || list[0]["current"] != true {
		t.Errorf("profile ls --json = %v, %v", list, err)
	}
	for _, args := range [][]string{{"profile", "show", "--json", "dev"}, {"profile", "show", "dev", "--json"}} {
		var one map[string]any
		if err := json.Unmarshal([]byte(mustRun(t, args...).stdout), &one); err != nil || one["name"] != "dev" || one["node"] != "http://127.0.0.1:8080" || one["api_key"] != "lat_live_0123…" {
			t.Errorf("%v = %v, %v", args, one, err)
		}
	}
	wantFail(t, run(t, "profile", "ls", "--bogus"), 2, "--bogus")
}

// TestReadOnlyListsNoKey: a command that needs no key does not offer one.
func TestReadOnlyListsNoKey(t *testing.T) {
	cleanEnv(t)
	r := mustRun(t, "block", "-h")
	if strings.Contains(r.stdout+r.stderr, "-key") || !strings.Contains(r.stdout, "-node") {
		t.Errorf("lattice block -h lists --key, or not --node:\n%s", r.stdout)
	}
}

// TestSubcommandSuggestion: a mistyped subcommand gets the nearest names
// too, in every command group.
func TestSubcommandSuggestion(t *testing.T) {
	cleanEnv(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"s3", "lss"}, "did you mean ls?"},
		{[]string{"dns", "zone", "craete"}, "did you mean create?"},
		{[]string{"dns", "recrod"}, "did you mean record?"},
		{[]string{"chat", "sedn"}, "did you mean send?"},
		{[]string{"directory", "shwo"}, "did you mean show?"},
		{[]string{"ledger", "pendng"}, "did you mean pending?"},
		{[]string{"cdn", "purg"}, "did you mean purge?"},
		{[]string{"cdn", "domain", "verfy"}, "did you mean verify?"},
	} {
		wantFail(t, run(t, tt.args...), 2, "unknown command", tt.want)
	}
}

// TestHelpShowsProfileValues: a flag's help shows the value the profile
// or the environment gives it, not a built-in default that does not apply,
// and never a whole API key.
func TestHelpShowsProfileValues(t *testing.T) {
	cleanEnv(t)
	pf := `{"current":"staging","profiles":{"staging":{"node":"http://127.0.0.1:18080","key":"/k/staging.json","api":"http://127.0.0.1:18090","api_key":"lat_live_0123456789abcdef"}}}`
	writeProfiles(t, pf)
	for _, tt := range []struct {
		args        []string
		env         map[string]string
		want, avoid []string
	}{
		{[]string{"balance", "-h"}, nil,
			[]string{`now "http://127.0.0.1:18080", from profile staging`, `now "/k/staging.json", from profile staging`},
			[]string{`(default "http://127.0.0.1:8080")`}},
		{[]string{"s3", "ls", "-h"}, nil,
			[]string{`now "http://127.0.0.1:18090", from profile staging`, `now "lat_live_0123…", from profile staging`},
			[]string{"lat_live_0123456789abcdef", `(default "http://127.0.0.1:8090")`}},
		{[]string{"balance", "-h"}, map[string]string{"LATTICE_NODE": "http://127.0.0.1:28080"},
			[]string{`now "http://127.0.0.1:28080", from LATTICE_NODE`}, nil},
	} {
		for k, v := range tt.env {
			t.Setenv(k, v)
		}
		r := run(t, tt.args...)
		for _, w := range tt.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("lattice %s: help lacks %q:\n%s", strings.Join(tt.args, " "), w, r.stdout)
			}
		}
		for _, a := range tt.avoid {
			if strings.Contains(r.stdout+r.stderr, a) {
				t.Errorf("lattice %s: help shows %q:\n%s", strings.Join(tt.args, " "), a, r.stdout)
			}
		}
		for k := range tt.env {
			t.Setenv(k, "")
		}
	}
}

// writeProfiles makes pf the profiles file of a new config directory.
func writeProfiles(t *testing.T, pf string) {
	t.Helper()
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	if err := os.MkdirAll(filepath.Join(cfg, "lattice"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "lattice", "profiles.json"), []byte(pf), 0o600); err != nil {
		t.Fatal(err)
	}
}
