package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/latticenet/lattice/internal/run/durablefile"
)

// A profile is a named set of client settings (the node's URL, a key
// file, the cloud API's URL and an API key), kept in the user's config
// directory as aws, doctl and mc keep theirs, so that commands need no
// flags or exports. `lattice dev` writes the profile "dev". Precedence:
// flag, environment variable, profile, default. The profile in use is
// --profile NAME (before or after the command), else LATTICE_PROFILE, else
// the file's current one.
type profile struct {
	Node   string `json:"node,omitempty"`
	Key    string `json:"key,omitempty"`
	API    string `json:"api,omitempty"`
	APIKey string `json:"api_key,omitempty"`
	// Data is the data directory of the `lattice dev` that wrote it.
	Data string `json:"data,omitempty"`
}

// value returns the profile's setting for a flag's environment variable.
func (p profile) value(envVar string) string {
	switch envVar {
	case "LATTICE_NODE":
		return p.Node
	case "LATTICE_KEY":
		return p.Key
	case "LATTICE_API_URL":
		return p.API
	case "LATTICE_API_KEY":
		return p.APIKey
	}
	return ""
}

type profileFile struct {
	Current  string             `json:"current,omitempty"`
	Profiles map[string]profile `json:"profiles"`
}

// profilesPath is where the profiles live: lattice/profiles.json under
// the user's config directory ($XDG_CONFIG_HOME, else ~/.config on Linux).
func profilesPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "lattice", "profiles.json"), nil
}

// loadProfiles reads the profiles; no file is no profiles.
func loadProfiles() (profileFile, string, error) {
	pf := profileFile{Profiles: map[string]profile{}}
	path, err := profilesPath()
	if err != nil {
		return pf, "", err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return pf, path, nil
	}
	if err != nil {
		return pf, path, err
	}
	if err := json.Unmarshal(data, &pf); err != nil {
		return pf, path, fmt.Errorf("profiles %s: %w", path, err)
	}
	if pf.Profiles == nil {
		pf.Profiles = map[string]profile{}
	}
	return pf, path, nil
}

// save writes the profiles whole, mode 0600: a profile may hold an API key.
func (pf profileFile) save(path string) error {
	data, err := json.MarshalIndent(pf, "", "  ")
	if err != nil {
		return err
	}
	return durablefile.Write(path, append(data, '\n'), 0o600)
}

// activeProfile returns the profile commands use now, if any: named, else
// LATTICE_PROFILE's, else the file's current one.
func activeProfile(named string) (string, profile, error) {
	name := named
	if name == "" {
		name = os.Getenv("LATTICE_PROFILE")
	}
	pf, path, err := loadProfiles()
	if err != nil {
		if name == "" {
			return "", profile{}, nil // a broken file does not stop a command that names none
		}
		return "", profile{}, err
	}
	if name == "" {
		name = pf.Current
	}
	if name == "" {
		return "", profile{}, nil
	}
	p, ok := pf.Profiles[name]
	if !ok {
		return "", profile{}, usageErr("profile %q is not in %s (`lattice profile ls` lists them)", name, path)
	}
	return name, p, nil
}

// takeProfileFlag removes --profile NAME (or --profile=NAME) from args,
// wherever it is, and returns NAME, the profile in use for this run.
func takeProfileFlag(args []string) (rest []string, name string, err error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		switch {
		case a == "--profile" || a == "-profile":
			if i+1 >= len(args) {
				return nil, "", usageErr("--profile needs a NAME")
			}
			name = args[i+1]
			i++
		case strings.HasPrefix(a, "--profile=") || strings.HasPrefix(a, "-profile="):
			_, name, _ = strings.Cut(a, "=")
		default:
			out = append(out, a)
		}
	}
	return out, name, nil
}

// devProfileName is the profile `lattice dev` writes for a data directory:
// "dev" for the default one, for the first, and for the one that wrote it;
// for another, "dev-" and the directory's name, so that a second,
// throwaway dev network (a walkthrough's) never takes over the settings of
// the one the user keeps running.
func devProfileName(data string) string {
	data, _ = filepath.Abs(data)
	pf, _, err := loadProfiles()
	if err != nil {
		return "dev"
	}
	if prev, ok := pf.Profiles["dev"]; !ok || prev.Data == "" && data == filepath.Clean(homeDir(".lattice", "dev")) || prev.Data == data {
		return "dev"
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, filepath.Base(filepath.Clean(data)))
	return "dev-" + name
}

// saveDevProfile records the dev network's settings as the profile name,
// and makes it the current profile unless another is.
func saveDevProfile(name, data, nodeURL, keyPath, apiURL, adminKeyPath string) (string, error) {
	pf, path, err := loadProfiles()
	if err != nil {
		return "", err
	}
	key, _ := filepath.Abs(keyPath)
	data, _ = filepath.Abs(data)
	p := profile{Node: nodeURL, Key: key, API: apiURL, Data: data}
	if data, err := os.ReadFile(adminKeyPath); err == nil {
		p.APIKey = strings.TrimSpace(string(data))
	}
	pf.Profiles[name] = p
	if pf.Current == "" {
		pf.Current = name
	}
	return path, pf.save(path)
}

const profileUsage = `Usage: lattice profile COMMAND [NAME]

Named client settings (node URL, key file, cloud API URL and key), which
` + "`lattice dev`" + ` writes to lattice/profiles.json in the user's config directory
(~/.config on Linux); select one for a command with --profile NAME or
LATTICE_PROFILE, or for every command with ` + "`lattice profile use`" + `. Flags and
environment variables override its settings.

Commands:
  ls            list the profiles; * marks the current one
  show [NAME]   show a profile's settings (default: the one in use)
  use NAME      make NAME the current profile

Examples:
  lattice profile ls
  lattice profile show dev
  lattice profile use dev
  lattice --profile staging balance

Run ` + "`lattice profile COMMAND -h`" + ` for a command's help.
`

// profileHelp is the -h of each profile command: usage line, what it does,
// examples. Each takes --json, none another flag.
var profileHelp = map[string][3]string{
	"ls": {"profile ls [--json]", "Lists the profiles, with their node and cloud API URLs; * marks the\ncurrent one. --json prints them as a JSON array.", "  lattice profile ls\n  lattice profile ls --json\n"},
	"show": {"profile show [NAME] [--json]", "Shows a profile's node URL, key file, cloud API URL and the start of its\nAPI key: of NAME, or by default of the profile in use (--profile,\nLATTICE_PROFILE, else the current one). --json prints it as a JSON object.",
		"  lattice profile show\n  lattice profile show dev\n  lattice profile show --json dev\n  lattice --profile staging profile show\n"},
	"use": {"profile use NAME [--json]", "Makes NAME the current profile: the one commands use without --profile\nor LATTICE_PROFILE. --json prints {\"current\": NAME}.", "  lattice profile use dev\n"},
}

func runProfile(_ context.Context, e *env, args []string) error {
	usage := "profile ls | profile show [NAME] | profile use NAME"
	if done, err := groupHelp(e, args, profileUsage, "want ls, show or use"); done {
		return err
	}
	if h, ok := profileHelp[args[0]]; ok && wantsHelp(args[1:]) {
		// The flag as Go's flag package lists it, which completion reads.
		fmt.Fprintf(e.stdout, "Usage: lattice %s\n\n%s\n\nFlags:\n  -json\n    \tprint machine-readable JSON\n\nExamples:\n%s", h[0], h[1], h[2])
		return nil
	}
	// --json, wherever it comes.
	asJSON := false
	if _, ok := profileHelp[args[0]]; ok {
		rest := args[:1]
		for _, a := range args[1:] {
			if a == "--json" || a == "-json" {
				asJSON = true
				continue
			}
			if strings.HasPrefix(a, "-") {
				return usageErr("flag provided but not defined: %s; run `lattice profile %s -h`", a, args[0])
			}
			rest = append(rest, a)
		}
		args = rest
	}
	pf, path, err := loadProfiles()
	if err != nil {
		return err
	}
	if max := map[string]int{"ls": 1, "show": 2, "use": 2}[args[0]]; max > 0 && len(args) > max {
		return usageErr("unexpected argument %q: want `lattice %s`", args[max], usage)
	}
	switch args[0] {
	case "ls":
		names := make([]string, 0, len(pf.Profiles))
		for n := range pf.Profiles {
			names = append(names, n)
		}
		sort.Strings(names)
		if asJSON {
			out := make([]map[string]any, 0, len(names))
			for _, n := range names {
				p := pf.Profiles[n]
				out = append(out, map[string]any{"name": n, "current": n == pf.Current, "node": p.Node, "api": p.API, "key": p.Key})
			}
			return printJSON(e.stdout, out)
		}
		if len(names) == 0 {
			fmt.Fprintf(e.stdout, "no profiles in %s: `lattice dev` writes one\n", path)
			return nil
		}
		tw := table(e.stdout)
		fmt.Fprintln(tw, "\tNAME\tNODE\tAPI")
		for _, n := range names {
			mark := ""
			if n == pf.Current {
				mark = "*"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", mark, n, pf.Profiles[n].Node, pf.Profiles[n].API)
		}
		return tw.Flush()
	case "show":
		name := e.profile
		if name == "" {
			name = os.Getenv("LATTICE_PROFILE")
		}
		if name == "" {
			name = pf.Current
		}
		if len(args) > 1 {
			name = args[1]
		}
		p, ok := pf.Profiles[name]
		if !ok {
			return fmt.Errorf("profile %q is not in %s", name, path)
		}
		apiKey := p.APIKey
		if len(apiKey) > 13 {
			apiKey = apiKey[:13] + "…"
		}
		if asJSON {
			return printJSON(e.stdout, map[string]any{"name": name, "node": p.Node, "key": p.Key, "api": p.API, "api_key": apiKey, "data": p.Data})
		}
		fmt.Fprintf(e.stdout, "profile  %s\nnode     %s\nkey      %s\napi      %s\napi key  %s\n", name, p.Node, p.Key, p.API, apiKey)
		return nil
	case "use":
		if len(args) != 2 {
			return usageErr("want `lattice profile use NAME`")
		}
		if _, ok := pf.Profiles[args[1]]; !ok {
			return fmt.Errorf("profile %q is not in %s", args[1], path)
		}
		pf.Current = args[1]
		if err := pf.save(path); err != nil {
			return err
		}
		if asJSON {
			return printJSON(e.stdout, map[string]string{"current": args[1]})
		}
		fmt.Fprintf(e.stdout, "commands now use profile %s\n", args[1])
		return nil
	}
	return usageErr("want %s", usage)
}
