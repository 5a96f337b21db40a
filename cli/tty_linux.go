package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTTY reports whether f answers a terminal's ioctl.
func isTTY(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
