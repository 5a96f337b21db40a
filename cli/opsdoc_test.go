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
	for _, kv := range os.Environ() {
		if v, _, _ := strings.Cut(kv, "="); strings.HasPrefix(v, "LATTICE_") {
			t.Setenv(v, "") // the help shows the built-in defaults
		}
	}
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	tables, malformed := opsFlagTables(string(doc))
	for _, line := range malformed {
		t.Errorf("docs/operations.md: a flag row whose cells do not match its table's header: %s", line)
	}
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
			// Every config key is its flag's name with _ for -: a row's
			// key is the flag's when it is that and --config takes it.
			key := strings.ReplaceAll(name, "-", "_")
			switch takes := slices.Contains(keys, key); {
			case row.hasKey && row.key != "" && (row.key != key || !takes):
				t.Errorf("lattice %s --%s: the table's config key %q is not the flag's (%q, if --config takes it: %v)", cmd, name, row.key, key, takes)
			case row.hasKey && row.key == "" && takes:
				t.Errorf("lattice %s --%s: the table gives no config key, --config takes %q", cmd, name, key)
			}
			// A default the flag applies itself when empty is named in its
			// usage ("replace the defaults X"); a false boolean shows no
			// default.
			want, ok := row.literalDefault()
			namedInUsage := regexp.MustCompile(`\bdefaults? ` + regexp.QuoteMeta(want)).MatchString(fl.usage)
			if ok && want != strings.ReplaceAll(fl.def, home, "~") && (fl.def != "" || !namedInUsage) && (fl.def != "" || want != "false") {
				t.Errorf("lattice %s --%s: the table says default %q, the flag's is %q", cmd, name, want, fl.def)
			}
		}
		for name := range rows {
			if _, ok := flags[name]; !ok {
				t.Errorf("docs/operations.md's table for lattice %s has --%s, which -h does not list", cmd, name)
			}
		}
		for _, k := range keys {
			if _, ok := flags[strings.ReplaceAll(k, "_", "-")]; !ok {
				t.Errorf("lattice %s: --config takes %q, which is no flag's name with _ for -", cmd, k)
			}
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
// sections: command, then flag name, then its row; and the flag rows it
// could not read.
func opsFlagTables(doc string) (tables map[string]map[string]opsRow, malformed []string) {
	tables = map[string]map[string]opsRow{}
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
		if m == nil {
			continue
		}
		if len(cells) != len(header) {
			malformed = append(malformed, line)
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
	return tables, malformed
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
