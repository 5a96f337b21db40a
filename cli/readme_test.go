package cli

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"
)

// groups are the commands whose first argument is a subcommand.
var groups = map[string]bool{"s3": true, "chat": true, "directory": true, "ledger": true, "key": true,
	"genesis": true, "multisig": true, "bench": true, "profile": true, "cdn": true, "gov": true, "lease": true, "provider": true, "vm": true}

// readmeCommands returns the lattice command lines of the README's sh
// blocks, with continuations joined, comments cut, `cmd && cmd` split,
// and `go run ./cmd/lattice` read as `lattice`.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	in, cont := false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
			continue
		case strings.HasPrefix(line, "```"):
			in = false
			continue
		case !in:
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if strings.HasSuffix(line, `\`) {
			cont += strings.TrimSuffix(line, `\`) + " "
			continue
		}
		line, cont = cont+line, ""
		line = strings.ReplaceAll(line, "go run ./cmd/lattice", "lattice")
		for _, part := range strings.Split(line, "&&") {
			if part = strings.TrimSpace(part); strings.HasPrefix(part, "lattice ") {
				out = append(out, part)
			}
		}
	}
	return out
}

var (
	substitution = regexp.MustCompile(`\$\([^)]*\)`)
	placeholder  = regexp.MustCompile(`<[^>]*>`)
)

// TestREADMECommandsExist: every lattice command the README shows names a
// command and subcommand that exist, with flags that their -h lists, so
// the README cannot drift from the CLI.
func TestREADMECommandsExist(t *testing.T) {
	cleanEnv(t)
	cmds := readmeCommands(t)
	if len(cmds) < 20 {
		t.Fatalf("found %d commands in the README's sh blocks, want at least 20: is the parser still right?", len(cmds))
	}
	for _, line := range cmds {
		words := strings.Fields(placeholder.ReplaceAllString(substitution.ReplaceAllString(line, "X"), "X"))[1:]
		if words[0] == "--version" {
			if r := run(t, "--version"); r.code != 0 {
				t.Errorf("README: %s: exit %d", line, r.code)
			}
			continue
		}
		path := []string{words[0]}
		if groups[words[0]] && len(words) > 1 {
			path = append(path, words[1])
			if words[0] == "s3" && words[1] == "keys" && len(words) > 2 {
				path = append(path, words[2])
			}
		}
		r := run(t, append(path, "-h")...)
		help := r.stdout + r.stderr
		if strings.Contains(help, "unknown command") {
			t.Errorf("README: %s: `lattice %s` is not a command:\n%s", line, strings.Join(path, " "), help)
			continue
		}
		for _, w := range words[len(path):] {
			if w == "--" {
				break // the rest is text
			}
			if !strings.HasPrefix(w, "-") {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
			if !strings.Contains(help, "-"+name+" ") && !strings.Contains(help, "-"+name+"\n") {
				t.Errorf("README: %s: `lattice %s -h` does not list the flag -%s:\n%s", line, strings.Join(path, " "), name, help)
			}
		}
	}
}
