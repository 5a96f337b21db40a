package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// commandTree lists the subcommands of each group command, by path: the
// tree the help test walks and shell completion offers.
func commandTree() map[string][]string {
	names := func(cs []command) []string {
		var n []string
		for _, c := range cs {
			n = append(n, c.name)
		}
		return n
	}
	return map[string][]string{
		"s3":           names(s3Commands()),
		"s3 keys":      {"create", "list", "delete"},
		"s3 kms":       kmsCommands,
		"s3 lifecycle": lifecycleCommands(),
		"dns":          {"zone", "record"},
		"dns zone":     dnsZoneCommands(),
		"dns record":   dnsRecordCommands(),
		"cdn":          cdnCommands(),
		"compute":      computeCommands(),
		"cdn domain":   cdnDomainCommands(),
		"cloud":        {"apikey"},
		"cloud apikey": {"create", "list", "revoke"},
		"chat":         names(chatCommands()),
		"directory":    {"register", "show"},
		"ledger":       names(ledgerCommands()),
		"genesis":      {"new"},
		"key":          {"new", "show", "ssh"},
		"vm":           vmCommands,
		"multisig":     {"open", "update"},
		"gov":          govNames(),
		"lease":        leaseCommands,
		"timekeeper":   {"status"},
		"provider":     {"status"},
		"bench":        {"ledger", "network", "lease", "chat", "s3", "dns", "cdn", "compute"},
		"profile":      {"ls", "show", "use"},
		"completion":   {"bash", "zsh"},
	}
}

// bashScript completes lattice's commands, subcommands and flags in bash
// (and in zsh through bashcompinit). The words come from the binary
// itself (lattice __complete), so they never drift from it.
const bashScript = `# bash completion for lattice: source it, or put it in
# /etc/bash_completion.d/lattice (lattice completion bash > ...).
_lattice() {
    local cur="${COMP_WORDS[COMP_CWORD]}" path=() i w
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${COMP_WORDS[i]}"
        [[ $w == -* ]] && break
        path+=("$w")
    done
    local kind=words
    [[ $cur == -* ]] && kind=flags
    COMPREPLY=($(compgen -W "$(lattice __complete "$kind" "${path[@]}" 2>/dev/null)" -- "$cur"))
}
complete -o default -F _lattice lattice
`

const zshScript = `# zsh completion for lattice: source it from ~/.zshrc
# (source <(lattice completion zsh)).
autoload -U +X bashcompinit && bashcompinit
` + bashScript

func runCompletion(_ context.Context, e *env, args []string) error {
	usage := func(w io.Writer, of string) {
		fmt.Fprintf(w, `Usage: lattice completion %s

Prints a shell script that completes lattice's commands, subcommands and
flags. The words come from the lattice binary on PATH, so they follow it.

Commands:
  bash    the script for bash
  zsh     the script for zsh (through bashcompinit)

Flags:
  none

Examples:
  source <(lattice completion bash)                          # this bash session
  lattice completion bash > /etc/bash_completion.d/lattice   # every bash session
  lattice completion zsh > ~/.lattice-completion.zsh         # then: source it from ~/.zshrc
`, of)
	}
	switch {
	case len(args) >= 1 && isHelp(args[len(args)-1]):
		of := "bash|zsh"
		if len(args) == 2 {
			of = args[0]
		}
		usage(e.stdout, of)
	case len(args) == 1 && args[0] == "bash":
		io.WriteString(e.stdout, bashScript)
	case len(args) == 1 && args[0] == "zsh":
		io.WriteString(e.stdout, zshScript)
	default:
		usage(e.stderr, "bash|zsh")
		if len(args) > 1 {
			return usageErr("unexpected argument %q: want `lattice completion bash` or `lattice completion zsh`", args[1])
		}
		return usageErr("want `lattice completion bash` or `lattice completion zsh`")
	}
	return nil
}

var flagLine = regexp.MustCompile(`(?m)^\s+(-[A-Za-z][A-Za-z0-9-]*)`)

// runComplete is `lattice __complete words|flags PATH...`, which the
// completion scripts call: the subcommands of PATH (the top-level
// commands for none), or the flags its -h lists, one per line.
func runComplete(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usageErr("want `lattice __complete words|flags PATH...`")
	}
	kind, path := args[0], args[1:]
	switch kind {
	case "words":
		if len(path) == 0 {
			for _, c := range commands() {
				fmt.Fprintln(e.stdout, c.name)
			}
			return nil
		}
		for _, s := range commandTree()[strings.Join(path, " ")] {
			fmt.Fprintln(e.stdout, s)
		}
		return nil
	case "flags":
		if len(path) == 0 {
			return nil
		}
		var out, errOut bytes.Buffer
		mainContext(ctx, append(slices.Clone(path), "-h"), &out, &errOut)
		seen := map[string]bool{}
		for _, m := range flagLine.FindAllStringSubmatch(out.String()+errOut.String(), -1) {
			name := "-" + m[1] // Go's flags take -name and --name; people type --name
			if !seen[name] {
				seen[name] = true
				fmt.Fprintln(e.stdout, name)
			}
		}
		return nil
	}
	return usageErr("want `lattice __complete words|flags PATH...`")
}

func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "help" }
