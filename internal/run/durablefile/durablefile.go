// Package durablefile writes small files so that they survive a crash or
// a power cut whole or not at all: the data goes to a temporary file in the
// same directory, is fsync'd, then takes its name, and the directory is
// fsync'd so that the name itself is durable.
package durablefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrExists is returned by Create when the file is already there.
var ErrExists = fs.ErrExist

// Write replaces path with data, with permissions perm, creating parent
// directories (0700) as needed.
func Write(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, os.Rename)
}

// Create writes data to path, with permissions perm, only if path does not
// exist yet: it never replaces a file (errors.Is(err, fs.ErrExist) then).
func Create(path string, data []byte, perm os.FileMode) error {
	// A hard link, unlike a rename, fails when the target exists.
	return write(path, data, perm, os.Link)
}

func write(path string, data []byte, perm os.FileMode, place func(tmp, path string) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err = tmp.Chmod(perm); err == nil {
		if _, err = tmp.Write(data); err == nil {
			err = tmp.Sync()
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := place(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", path, fs.ErrExist)
		}
		return err
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory, making the names created in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
