// Package program finds the external programs the benchmarks and their
// tests run (nginx, wrk, NSD, PowerDNS, dnsperf).
package program

import (
	"fmt"

	"github.com/latticenet/lattice/internal/hostprog"
)

// Find resolves a program: the path given, or name on PATH or in the
// directories Debian puts servers in (/usr/sbin, often not on a user's
// PATH: hostprog.Look); pkg names what to install when it is missing.
func Find(given, name, pkg string) (string, error) {
	if given != "" {
		return given, nil
	}
	if p, err := hostprog.Look(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found: install %s (apt-get install ...) or give its path", name, pkg)
}
