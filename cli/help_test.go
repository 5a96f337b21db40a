package cli

import (
	"regexp"
	"strings"
	"testing"
)

// TestHelpTree walks the whole command tree: every command and subcommand
// answers -h with exit 0, its usage line and examples; every group lists
// its subcommands and also answers --help and help.
func TestHelpTree(t *testing.T) {
	cleanEnv(t)
	groups := commandTree()
	top := mustRun(t, "help").stdout
	var walk func(path string)
	walk = func(path string) {
		args := strings.Fields(path)
		subs, isGroup := groups[path]
		hs := []string{"-h"}
		if isGroup {
			hs = []string{"-h", "--help", "help"}
		}
		for _, h := range hs {
			r := run(t, append(args, h)...)
			out := r.stdout + r.stderr
			if r.stderr != "" {
				t.Errorf("lattice %s %s: got stderr %q, want the help on stdout alone, where a pager reads it", path, h, r.stderr)
			}
			if r.code != 0 || !strings.Contains(out, "Usage: lattice "+path) || !strings.Contains(out, "\nExamples:\n") ||
				!strings.Contains(out, "\n  lattice "+path) {
				t.Errorf("lattice %s %s: exit %d, want 0, \"Usage: lattice %s\" and examples of it:\n%s", path, h, r.code, path, out)
			}
			if !isGroup && !strings.Contains(out, "\nFlags:") {
				t.Errorf("lattice %s %s shows no flags:\n%s", path, h, out)
			}
			for _, s := range subs {
				if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(s) + `\b`).MatchString(out) {
					t.Errorf("lattice %s %s does not list %s:\n%s", path, h, s, out)
				}
			}
		}
		// With no subcommand a group prints its usage to stderr and fails
		// (s3 prints it as help; cloud with none runs the server).
		if isGroup && path != "s3" && path != "cloud" {
			r := run(t, args...)
			if r.code != 2 || !strings.Contains(r.stderr, "Usage: lattice "+path) {
				t.Errorf("lattice %s: exit %d, stderr %q; want 2 and the usage", path, r.code, r.stderr)
			}
		}
		for _, s := range subs {
			walk(path + " " + s)
		}
	}
	seen := 0
	for _, c := range commands() {
		if strings.HasPrefix(c.name, "_") {
			continue // hidden
		}
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(c.name) + ` +\S`).MatchString(top) {
			t.Errorf("lattice help does not list %s:\n%s", c.name, top)
		}
		walk(c.name)
		seen++
	}
	for path := range groups {
		if !strings.Contains(top, "\n  "+strings.Fields(path)[0]+" ") {
			t.Errorf("group %s is not a command of lattice help", path)
		}
	}
	if seen < 20 {
		t.Errorf("walked %d top-level commands, want every one of commands()", seen)
	}
}

// TestHelpFlags: required flags say so, and a command's -h shows its own
// flags only.
func TestHelpFlags(t *testing.T) {
	cleanEnv(t)
	help := func(path string) string {
		r := run(t, append(strings.Fields(path), "-h")...)
		return r.stdout + r.stderr
	}
	// flagLine returns the usage of flag name in a -h text.
	flagLine := func(out, name string) string {
		m := regexp.MustCompile(`(?m)^  -` + name + `\b.*\n((?:    .*\n)*)`).FindString(out)
		return m
	}
	for _, tt := range []struct{ path, flag string }{
		{"genesis new", "key"}, {"genesis new", "network"},
		{"multisig open", "keys"}, {"multisig open", "threshold"}, {"multisig open", "signers"},
		{"multisig update", "account"}, {"multisig update", "keys"}, {"multisig update", "threshold"}, {"multisig update", "signers"},
		{"send", "to"}, {"send", "amount"},
		{"chat send", "to"},
		{"cloud apikey create", "account"}, {"cloud apikey create", "api-key"},
	} {
		if l := flagLine(help(tt.path), tt.flag); !strings.Contains(l, "(required)") {
			t.Errorf("lattice %s -h: --%s is not marked required: %q", tt.path, tt.flag, l)
		}
	}
	for _, tt := range []struct {
		path        string
		has, hasNot []string
	}{
		{"key new", []string{"-out", "-key"}, nil},
		{"key show", []string{"-key"}, []string{"-out"}},
		{"cloud apikey create", []string{"-account", "-name"}, nil},
		{"cloud apikey list", []string{"-account"}, []string{"-name"}},
		{"cloud apikey revoke", []string{"-api-key"}, []string{"-account", "-name"}},
	} {
		out := help(tt.path)
		for _, f := range tt.has {
			if flagLine(out, f[1:]) == "" {
				t.Errorf("lattice %s -h lacks %s:\n%s", tt.path, f, out)
			}
		}
		for _, f := range tt.hasNot {
			if flagLine(out, f[1:]) != "" {
				t.Errorf("lattice %s -h shows %s, which it does not take:\n%s", tt.path, f, out)
			}
		}
	}
}
