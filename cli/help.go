package cli

import "io"

// groupHelp handles what every group command does before it looks up its
// subcommand: with none it prints usage to stderr and fails with want (exit
// 2); with help, -h or --help it prints usage to stdout (exit 0). done
// reports whether it handled args.
func groupHelp(e *env, args []string, usage, want string) (done bool, err error) {
	if len(args) == 0 {
		io.WriteString(e.stderr, usage)
		return true, usageErr("%s", want)
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		io.WriteString(e.stdout, usage)
		return true, nil
	}
	return false, nil
}

// wantsHelp reports whether args, up to a "--", ask for help: -h, -help
// or --help.
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}
