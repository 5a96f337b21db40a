package qemu

import (
	"errors"
	"strings"
	"testing"

	"github.com/latticenet/lattice/internal/hostprog"
)

// TestPreflightNamesTheMissingProgram: on a host without QEMU's
// programs (PATH and the admin directories empty), Preflight refuses,
// naming the program and its Debian package.
func TestPreflightNamesTheMissingProgram(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	saved := hostprog.AdminDirs
	hostprog.AdminDirs = []string{t.TempDir()}
	t.Cleanup(func() { hostprog.AdminDirs = saved })
	err := NewLazy(Config{}).Preflight()
	if !errors.Is(err, ErrHostPackage) || !strings.Contains(err.Error(), "qemu-system-x86_64: install the Debian package qemu-system-x86") {
		t.Fatalf("Preflight = %v", err)
	}
}
