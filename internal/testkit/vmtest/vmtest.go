// Package vmtest holds what tests that boot real VMs share: whether this
// host can boot them (NeedHost), and one cache of built images per user,
// so that debian-12, whose build downloads Debian's packages, is built
// once per user and recipe rather than once per test.
package vmtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/latticenet/lattice/internal/testkit/tooltest"
	"github.com/latticenet/lattice/machine/qemu"
)

// ImageDirEnv names a directory for the images the tests build; default
// lattice-test-images in the user's cache directory (~/.cache).
const ImageDirEnv = "LATTICE_TEST_IMAGE_DIR"

// ImageDir is the tests' shared image directory.
func ImageDir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv(ImageDirEnv); dir != "" {
		return dir
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("no cache directory for the test images (set %s): %v", ImageDirEnv, err)
	}
	return filepath.Join(dir, "lattice-test-images")
}

// NeedHost skips t where this host cannot boot the tests' VMs (QEMU,
// qemu-img, mkfs.ext4, a guest kernel, a static busybox: qemu.HostMissing),
// saying which Debian package is missing; in CI (CI=true), which installs
// them, it fails t instead.
func NeedHost(t testing.TB) {
	t.Helper()
	if err := qemu.HostMissing(); err != nil {
		tooltest.Missing(t, err)
	}
}
