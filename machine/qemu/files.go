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
	f, err := os.Open(filepath.Join(dir, "vms", id, "console.log"))
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
