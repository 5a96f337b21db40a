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
			if l := regexp.MustCompile(`(?m)^.*[ \t]$`).FindString(r.stdout); l != "" {
				t.Errorf("lattice %s %s: a help line ends in a blank: %q", path, h, l)
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

// TestConfigHelpListsKeys: the help of --config lists every key the file
// may hold, taken from the flags themselves (the hand-written lists had
// drifted: cloud's and dev's lacked the KMS and CDN DNS keys).
func TestConfigHelpListsKeys(t *testing.T) {
	cleanEnv(t)
	for _, tt := range []struct {
		path string
		want []string
	}{
		{"node", []string{"data", "genesis", "rep_key", "proxy_networks", "online_window", "relay", "log_format"}},
		{"cloud", []string{"data", "kms_master_key", "kms_previous_master_key", "cdn_verify_own_dns", "proxy_networks", "log_format"}},
		{"dev", []string{"data", "nodes", "kms_master_key", "kms_previous_master_key", "cdn_verify_own_dns", "vm_image", "log_format"}},
	} {
		out := mustRun(t, tt.path, "-h").stdout
		m := regexp.MustCompile(`(?s)\n  -config string\n\s+JSON config file with keys (.*?) \(env LATTICE_CONFIG\)`).FindStringSubmatch(out)
		if m == nil {
			t.Errorf("lattice %s -h: no list of --config's keys:\n%s", tt.path, out)
			continue
		}
		listed := map[string]bool{}
		for _, k := range strings.Split(strings.Join(strings.Fields(m[1]), " "), ", ") {
			if listed[k] {
				t.Errorf("lattice %s -h: --config lists %q twice", tt.path, k)
			}
			listed[k] = true
		}
		for _, k := range tt.want {
			if !listed[k] {
				t.Errorf("lattice %s -h: --config's keys lack %q: %s", tt.path, k, m[1])
			}
		}
	}
}
