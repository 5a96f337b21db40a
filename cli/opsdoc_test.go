package cli

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestOperationsFlagTables holds docs/operations.md's flag tables to the
// commands themselves: every flag a command's -h lists has a row, every
// row is a flag, and each row's environment variable, config key and
// default are the flag's. (The tables had drifted: lattice dev's
// --log-level default was given as info, where it is warn.)
func TestOperationsFlagTables(t *testing.T) {
	home := cleanEnv(t)
	for _, v := range []string{"LATTICE_S3", "LATTICE_DNS", "LATTICE_CDN", "LATTICE_S3_WEBSITE", "LATTICE_P2P"} {
		t.Setenv(v, "") // the help shows the built-in defaults
	}
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	tables := opsFlagTables(string(doc))
	for _, cmd := range []string{"node", "dev", "cloud", "genesis new", "audit", "bench ledger"} {
		rows, ok := tables[cmd]
		if !ok {
			t.Errorf("docs/operations.md has no flag table for lattice %s", cmd)
			continue
		}
		help := mustRun(t, append(strings.Fields(cmd), "-h")...).stdout
		flags := helpFlags(help)
		var keys []string
		if m := regexp.MustCompile(`JSON config file with keys (.*?) \(env`).FindStringSubmatch(help); m != nil {
			keys = strings.Split(m[1], ", ")
		}
		for name, fl := range flags {
			row, ok := rows[name]
			if !ok {
				t.Errorf("lattice %s --%s: no row in docs/operations.md's table", cmd, name)
				continue
			}
			if row.env != fl.env {
				t.Errorf("lattice %s --%s: the table says environment variable %q, the flag has %q", cmd, name, row.env, fl.env)
			}
			if row.hasKey && row.key != "" && !slices.Contains(keys, row.key) {
				t.Errorf("lattice %s --%s: the table's config key %q is not among the keys --config takes", cmd, name, row.key)
			}
			// A default the flag applies itself when empty is in its
			// usage's words; a false boolean shows no default.
			if want, ok := row.literalDefault(); ok && want != strings.ReplaceAll(fl.def, home, "~") &&
				(fl.def != "" || !strings.Contains(fl.usage, want)) && (fl.def != "" || want != "false") {
				t.Errorf("lattice %s --%s: the table says default %q, the flag's is %q", cmd, name, want, fl.def)
			}
		}
		for name := range rows {
			if _, ok := flags[name]; !ok {
				t.Errorf("docs/operations.md's table for lattice %s has --%s, which -h does not list", cmd, name)
			}
		}
		for _, k := range keys {
			found := false
			for _, row := range rows {
				found = found || row.key == k
			}
			if !found {
				t.Errorf("lattice %s: config key %q is in no row of docs/operations.md's table", cmd, k)
			}
		}
	}
}

type opsRow struct {
	env, key, def string
	hasKey        bool // the table has a config-key column
}

// literalDefault is the row's default when it is one value in backquotes,
// or none; a default the table explains in words is not compared.
func (r opsRow) literalDefault() (string, bool) {
	switch d := r.def; {
	case d == "none":
		return "", true
	case d == "false" || d == "true":
		return d, true
	case regexp.MustCompile("^`[^`]*`$").MatchString(d):
		return strings.Trim(d, "`"), true
	case regexp.MustCompile(`^[0-9]+$`).MatchString(d):
		return d, true
	}
	return "", false
}

// opsFlagTables reads the flag tables of operations.md's "### `lattice X`"
// sections: command, then flag name, then its row.
func opsFlagTables(doc string) map[string]map[string]opsRow {
	tables := map[string]map[string]opsRow{}
	cmd, header := "", []string(nil)
	for _, line := range strings.Split(doc, "\n") {
		if m := regexp.MustCompile("^### `lattice ([a-z ]+)`$").FindStringSubmatch(line); m != nil {
			cmd, header = m[1], nil
			continue
		}
		if strings.HasPrefix(line, "#") {
			cmd = ""
			continue
		}
		if cmd == "" || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cells[0] == "Flag" {
			header = cells
			continue
		}
		m := regexp.MustCompile("^`--([a-z0-9-]+)").FindStringSubmatch(cells[0])
		if m == nil || len(cells) != len(header) {
			continue
		}
		row := opsRow{}
		for i, h := range header {
			v := cells[i]
			if v == "–" {
				v = ""
			}
			switch h {
			case "Environment variable":
				row.env = firstQuoted(v)
			case "Config key":
				row.key, row.hasKey = firstQuoted(v), true
			case "Default":
				row.def = cells[i]
			}
		}
		if tables[cmd] == nil {
			tables[cmd] = map[string]opsRow{}
		}
		tables[cmd][m[1]] = row
	}
	return tables
}

type helpFlag struct{ env, def, usage string }

// helpFlags reads the flags a -h text lists, with their environment
// variables and defaults.
func helpFlags(help string) map[string]helpFlag {
	flags := map[string]helpFlag{}
	re := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)(?: \S+)?\n    \t(.*)$`)
	for _, m := range re.FindAllStringSubmatch(help, -1) {
		f := helpFlag{usage: m[2]}
		if e := regexp.MustCompile(`\(env ([A-Z0-9_]+)\)`).FindStringSubmatch(m[2]); e != nil {
			f.env = e[1]
		}
		if d := regexp.MustCompile(`\(default (?:"(.*)"|([a-z0-9.]+))\)$`).FindStringSubmatch(m[2]); d != nil {
			f.def = d[1] + d[2]
		}
		flags[m[1]] = f
	}
	return flags
}

// firstQuoted is the first `...` of a cell ("`LATTICE_RELAY` (`true`/`false`)").
func firstQuoted(cell string) string {
	if m := regexp.MustCompile("^`([^`]*)`").FindStringSubmatch(cell); m != nil {
		return m[1]
	}
	return cell
}
