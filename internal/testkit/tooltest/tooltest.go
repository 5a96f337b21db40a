// Package tooltest finds the external programs a test drives (curl, jq,
// the AWS CLI, python3 with boto3): where one is missing the test is
// skipped on a developer's machine and fails in CI (CI=true), whose
// .ci/run installs it, so that a missing tool never hides a failure there.
package tooltest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/latticenet/lattice/internal/hostprog"
)

// Need returns the path of name on PATH or in /usr/sbin or /sbin
// (hostprog.Look, as lattice itself finds programs); with check, it also runs
// `name check...`, which must succeed (python3 -c "import boto3"). Where
// either fails, t is skipped, or failed when CI=true.
func Need(t testing.TB, name string, check ...string) string {
	t.Helper()
	path, err := hostprog.Look(name)
	if err == nil && len(check) > 0 {
		err = exec.Command(path, check...).Run()
	}
	if err != nil {
		Missing(t, fmt.Errorf("%s is not usable: %w", strings.Join(append([]string{name}, check...), " "), err))
	}
	return path
}

// Missing reports err, something a test needs that this host lacks: t is
// skipped, or failed when CI=true, since .ci/run installs what the tests
// need.
func Missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%v, and CI=true: .ci/run must install it", err)
	}
	skipped.Store(true)
	t.Skipf("%v; with CI=true this fails", err)
}

// skipped records that a test of this process was skipped for want of a
// tool.
var skipped atomic.Bool

// Skipped reports whether a test of this process was skipped for want of
// a tool (never in CI): checks over the whole package, such as
// openapitest's coverage, then know it did not all run.
func Skipped() bool { return skipped.Load() }

// AsUserEnv names the variable that marks a run of the suite made as an
// ordinary user on purpose: .ci/run sets it for its unprivileged pass,
// in which the tests that need root are skipped rather than failed.
const AsUserEnv = "LATTICE_TEST_AS_USER"

// RootListEnv names the variable that, in the ordinary user's pass, names
// a file to which NeedRoot appends each test it skips, one line of the
// test's package directory, a tab and its top-level name: .ci/run then
// runs exactly those tests as root, rather than the whole suite twice.
const RootListEnv = "LATTICE_TEST_ROOT_LIST"

// NeedRoot skips t unless the process runs as root (effective uid 0), for
// what, a short reason ("network namespaces"). In CI (CI=true) a test that
// needs root fails instead, except in the pass CI makes as an ordinary
// user (AsUserEnv=1), which lists the test in RootListEnv's file for CI
// to run as root.
func NeedRoot(t testing.TB, what string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	msg := what + " needs root (uid " + strconv.Itoa(os.Geteuid()) + ")"
	if os.Getenv("CI") == "true" && os.Getenv(AsUserEnv) != "1" {
		t.Fatalf("%s, and CI=true: CI runs the tests that need root as root (and the suite as a user with %s=1)", msg, AsUserEnv)
	}
	if list := os.Getenv(RootListEnv); list != "" {
		if err := appendRootTest(list, t.Name()); err != nil {
			t.Fatalf("%s, and it cannot be listed for the pass as root: %v", msg, err)
		}
	}
	t.Skip(msg)
}

// appendRootTest appends the line for the test named name (a subtest's
// top-level test) to the file list. Test processes of several packages
// append at once: one short O_APPEND write each keeps the lines whole.
func appendRootTest(list, name string) error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	top, _, _ := strings.Cut(name, "/")
	f, err := os.OpenFile(list, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(dir + "\t" + top + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
