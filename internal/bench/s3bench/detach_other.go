//go:build !linux

package s3bench

import "os/exec"

// detach is a no-op outside Linux: there, the benchmark stops the server
// itself when it ends.
func detach(c *exec.Cmd) {}
