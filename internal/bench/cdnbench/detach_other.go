//go:build !linux

package cdnbench

import (
	"os/exec"
	"syscall"
)

// detach puts a server in a process group of its own, so that Ctrl-C
// reaches only the benchmark, which then stops the server itself.
func detach(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
