// Package hostprog finds the host programs lattice runs (QEMU, mkfs.ext4,
// debugfs, mmdebstrap, the benchmarks' peers) where Debian installs them.
// Many live in /usr/sbin or /sbin, which an ordinary user's PATH leaves
// out although the programs work for anyone: looking on PATH alone told
// users to install packages they had.
package hostprog

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// AdminDirs are the directories searched after PATH, in order.
var AdminDirs = []string{"/usr/local/sbin", "/usr/sbin", "/sbin"}

// ErrNotFound is wrapped by Look's error when name is nowhere.
var ErrNotFound = errors.New("not found")

// Look returns the path of the program name: on PATH, or else in one of
// AdminDirs. A name with a slash is checked as it is.
func Look(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err == nil || strings.ContainsRune(name, '/') {
		return p, err
	}
	for _, dir := range AdminDirs {
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w on PATH nor in %s", name, ErrNotFound, strings.Join(AdminDirs, ", "))
}

// Env returns environ (as os.Environ gives it) with each of AdminDirs
// that PATH lacks appended to it, for a program that runs others in turn
// (mmdebstrap runs dpkg, which wants ldconfig from /sbin).
func Env(environ []string) []string {
	out := make([]string, 0, len(environ)+1)
	path, found := "", false
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path, found = v, true
			continue
		}
		out = append(out, kv)
	}
	if !found {
		path = os.Getenv("PATH")
	}
	have := map[string]bool{}
	for _, d := range filepath.SplitList(path) {
		have[filepath.Clean(d)] = true
	}
	for _, d := range AdminDirs {
		if !have[d] {
			if path != "" {
				path += string(filepath.ListSeparator)
			}
			path += d
		}
	}
	return append(out, "PATH="+path)
}
