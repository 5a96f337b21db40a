package s3bench

import (
	"os/exec"
	"syscall"
)

// detach puts the server in a process group of its own, so that Ctrl-C
// reaches only the benchmark, which then stops the server itself; and has
// the kernel kill the server if the benchmark dies without doing so.
// (Pdeathsig fires when the thread that started the child exits; Go's
// runtime keeps its threads for the life of the process.)
func detach(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
