package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/latticenet/lattice/machine/agent"
)

// TestMain lets the test binary stand in for lattice when a test runs it
// with LATTICE_TEST_AS_LATTICE set (a shell completion script calls
// lattice back).
func TestMain(m *testing.M) {
	agent.ServeIfAsked() // the VMs' images carry this binary as their agent
	if os.Getenv("LATTICE_TEST_AS_LATTICE") != "" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestCompleteWords(t *testing.T) {
	cleanEnv(t)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "words"}, []string{"chat", "s3", "ledger", "send", "completion"}},
		{[]string{"__complete", "words", "s3", "keys"}, []string{"create", "list", "delete"}},
		{[]string{"__complete", "flags", "chat", "send"}, []string{"--to", "--encrypt", "--node", "--key"}},
		{[]string{"__complete", "flags", "send"}, []string{"--to", "--amount"}},
		{[]string{"completion", "bash"}, []string{"complete -o default -F _lattice lattice"}},
		{[]string{"completion", "zsh"}, []string{"bashcompinit", "_lattice"}},
	} {
		out := mustRun(t, tt.args...).stdout
		for _, w := range tt.want {
			if !slices.Contains(strings.Split(strings.TrimSpace(out), "\n"), w) && !strings.Contains(out, w) {
				t.Errorf("lattice %s: output lacks %q:\n%s", strings.Join(tt.args, " "), w, out)
			}
		}
	}
	if out := mustRun(t, "__complete", "words").stdout; strings.Contains(out, "__complete") {
		t.Errorf("the hidden __complete command is offered for completion:\n%s", out)
	}
	wantFail(t, run(t, "completion", "fish"), 2, "bash", "zsh")
	// Every subcommand completion offers is a command.
	for path, subs := range commandTree() {
		for _, s := range subs {
			args := append(strings.Fields(path), s, "-h")
			if r := run(t, args...); strings.Contains(r.stdout+r.stderr, "unknown command") {
				t.Errorf("completion offers `lattice %s %s`, which is not a command", path, s)
			}
		}
	}
}

// TestBashCompletion runs the bash script for real: completing "lattice
// ch" offers chat and chain, and "lattice chat send --e" the flag.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bash is needed for this test in CI")
		}
		t.Skip("no bash")
	}
	cleanEnv(t)
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	shim := "#!/bin/sh\nLATTICE_TEST_AS_LATTICE=1 exec " + self + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "lattice"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "lattice.bash")
	if err := os.WriteFile(script, []byte(bashScript), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		words string
		want  []string
	}{
		{"lattice ch", []string{"chain", "chat"}},
		{"lattice chat se", []string{"send"}},
		{"lattice chat send --en", []string{"--encrypt"}},
		{"lattice s3 keys cr", []string{"create"}},
	} {
		words := strings.Fields(tt.words)
		program := "source " + script + "\nCOMP_WORDS=(" + tt.words + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_lattice\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command(bash, "--norc", "-c", program)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		got := strings.Fields(string(out))
		if !slices.Equal(got, tt.want) {
			t.Errorf("completing %q: got %q, want %q", tt.words, got, tt.want)
		}
	}
}

// TestEveryCommandTakesJSON: every command that prints lists --json (and
// so --output json), as its -h and completion show. Servers and the
// completion scripts print no result a program would read.
func TestEveryCommandTakesJSON(t *testing.T) {
	cleanEnv(t)
	exempt := map[string]string{
		"dev": "a server", "node": "a server", "cloud": "a server",
		"completion bash": "a shell script", "completion zsh": "a shell script",
	}
	tree := commandTree()
	var leaves []string
	var walk func(path string)
	walk = func(path string) {
		subs := tree[path]
		if len(subs) == 0 || path == "cloud" {
			leaves = append(leaves, path)
		}
		for _, s := range subs {
			walk(strings.TrimSpace(path + " " + s))
		}
	}
	for _, c := range commands() {
		walk(c.name)
	}
	if len(leaves) < 60 {
		t.Fatalf("walked %d commands, want every one (60 or more):\n%s", len(leaves), strings.Join(leaves, "\n"))
	}
	for _, path := range leaves {
		if _, ok := exempt[path]; ok {
			continue
		}
		flags := strings.Fields(mustRun(t, append([]string{"__complete", "flags"}, strings.Fields(path)...)...).stdout)
		if !slices.Contains(flags, "--json") {
			t.Errorf("lattice %s has no --json (its flags: %v)", path, flags)
		}
	}
}

// TestReadOnlyCommandsOfferNoKey: a command that reads what a node holds,
// and never an account of the user's, does not list --key, and still
// takes it (scripts pass it to every command).
func TestReadOnlyCommandsOfferNoKey(t *testing.T) {
	cleanEnv(t)
	for _, path := range []string{"block", "ledger info", "ledger pending", "ledger frontiers", "ledger conflicts", "ledger recent"} {
		flags := strings.Fields(mustRun(t, append([]string{"__complete", "flags"}, strings.Fields(path)...)...).stdout)
		if slices.Contains(flags, "--key") {
			t.Errorf("lattice %s lists --key, which it never uses", path)
		}
		args := append(strings.Fields(path), "--key", "/nonexistent.json", "--node", deadURL(t))
		if path == "block" {
			args = append(args, strings.Repeat("0", 64))
		}
		if r := run(t, args...); r.code == 2 {
			t.Errorf("lattice %s refuses --key as a usage error: %s", path, r.stderr)
		}
	}
}
