package qemu

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// A VM's files (its disk, console log, sockets) live in Dir/vms/ID from
// its first start until Delete; they outlive its QEMU process, so that a
// VM powered off and on again keeps its disk.

// Console returns the last max bytes of VM id's console log: what its
// guest wrote on the serial console in its latest boot, kept after QEMU
// exits (empty before its first boot).
func (d *Driver) Console(id string, max int64) ([]byte, error) {
	return ReadConsole(d.cfg.Dir, id, max)
}

// Delete removes VM id's files, its disk with them. The VM must not be
// running.
func (d *Driver) Delete(id string) error { return DeleteFiles(d.cfg.Dir, id) }

// ReadConsole is Driver.Console for the driver of Config.Dir dir, which
// need not be running: a VM's files outlive its QEMU and its driver.
func ReadConsole(dir, id string, max int64) ([]byte, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%w: id %q", ErrSpec, id)
	}
	return readConsole(filepath.Join(dir, "vms", id), max)
}

// ConsoleLimit bounds what a VM's console takes on the host's disk: the
// guest writes as much as it likes, the host keeps its last 4 to 8 MiB
// (console.log, and console.log.1 before it).
const ConsoleLimit = 8 << 20

// consoleLog is where QEMU's serial output goes: console.log, renamed
// console.log.1 (replacing the one before) once it holds half of
// ConsoleLimit. A VM's start begins a new one.
type consoleLog struct {
	path string
	f    *os.File
	n    int64
}

func newConsoleLog(dir string) (*consoleLog, error) {
	path := filepath.Join(dir, "console.log")
	os.Remove(path + ".1")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &consoleLog{path: path, f: f}, nil
}

func (c *consoleLog) Write(p []byte) (int, error) {
	if c.n+int64(len(p)) > ConsoleLimit/2 {
		c.f.Close()
		if err := os.Rename(c.path, c.path+".1"); err != nil {
			return 0, err
		}
		f, err := os.Create(c.path)
		if err != nil {
			return 0, err
		}
		c.f, c.n = f, 0
	}
	n, err := c.f.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *consoleLog) Close() error { return c.f.Close() }

// readConsole is the last max bytes of the console in a VM's directory:
// of console.log, after the end of console.log.1 if it is short.
func readConsole(vmDir string, max int64) ([]byte, error) {
	cur, err := tailOf(filepath.Join(vmDir, "console.log"), max)
	if err != nil || int64(len(cur)) >= max {
		return cur, err
	}
	prev, err := tailOf(filepath.Join(vmDir, "console.log.1"), max-int64(len(cur)))
	if err != nil {
		return nil, err
	}
	return append(prev, cur...), nil
}

// tailOf is the last max bytes of a file; nothing if it does not exist.
func tailOf(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > max {
		if _, err := f.Seek(st.Size()-max, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// DeleteFiles is Driver.Delete for the driver of Config.Dir dir, which
// need not be running.
func DeleteFiles(dir, id string) error {
	if !validID(id) {
		return fmt.Errorf("%w: id %q", ErrSpec, id)
	}
	return os.RemoveAll(filepath.Join(dir, "vms", id))
}
