// Command lattice is the Lattice node, cloud platform and their clients in
// one binary. Run `lattice help` for the commands.
package main

import (
	"os"

	"github.com/latticenet/lattice/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
