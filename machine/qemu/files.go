package qemu

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// A VM's files (its disk, console log, sockets) live in Dir/vms/ID from
// its first start until Delete; they outlive its QEMU process, so that a
// VM powered off and on again keeps its disk.

// Console returns VM id's console log: what its guest wrote on the
// serial console in its latest boot, kept after QEMU exits (empty before
// its first boot).
func (d *Driver) Console(id string) ([]byte, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%w: id %q", ErrSpec, id)
	}
	b, err := os.ReadFile(filepath.Join(d.cfg.Dir, "vms", id, "console.log"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// Delete removes VM id's files, its disk with them. The VM must not be
// running.
func (d *Driver) Delete(id string) error {
	if !validID(id) {
		return fmt.Errorf("%w: id %q", ErrSpec, id)
	}
	return os.RemoveAll(filepath.Join(d.cfg.Dir, "vms", id))
}
