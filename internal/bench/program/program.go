// Package program finds the external programs the benchmarks and their
// tests run (nginx, wrk, NSD, PowerDNS, dnsperf).
package program

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Find resolves a program: the path given, or name on PATH or in
// /usr/sbin (where Debian puts servers, often not on a user's PATH); pkg
// names what to install when it is missing.
func Find(given, name, pkg string) (string, error) {
	if given != "" {
		return given, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found: install %s (apt-get install ...) or give its path", name, pkg)
}
