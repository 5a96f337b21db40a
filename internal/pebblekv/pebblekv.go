// Package pebblekv holds what the node's and the platform's Pebble stores
// share about key ranges: the bounds of a prefix, and counting the keys
// under one.
package pebblekv

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Open opens the Pebble database in dir as pebble.Open does, once it has
// made sure that this process may create files in dir when dir exists.
// Pebble finds out otherwise only when it rotates its MANIFEST, in a
// background flush whose failure it treats as fatal (pebblelog panics,
// and the process dies with a stack): a store directory left owned by
// another user, as a restore by root may leave it, is then an error that
// names the directory before anything is written.
func Open(dir string, opts *pebble.Options) (*pebble.DB, error) {
	fs := opts.FS
	if fs == nil {
		fs = vfs.Default
	}
	if err := writable(fs, dir); err != nil {
		return nil, err
	}
	db, err := pebble.Open(dir, opts)
	if err != nil && (errors.Is(err, syscall.EAGAIN) || strings.Contains(err.Error(), "lock held by current process")) {
		// The callers name the directory.
		return nil, fmt.Errorf("%w (is a lattice server already running on this data directory?): %w", ErrInUse, err)
	}
	return db, err
}

// ErrInUse is Open's error for a database another process (or this one)
// holds open: Pebble's LOCK file is taken.
var ErrInUse = errors.New("in use by another process")

// writeCheck begins the name of the file writable creates and removes in
// a store's directory, which ends with the process's id (two starts at
// once each remove their own); Pebble ignores files whose names it does
// not know.
const writeCheck = ".lattice-write-check-"

// writable checks that a file can be created (and removed) in dir; a dir
// that does not exist yet passes, Pebble making it.
func writable(fs vfs.FS, dir string) error {
	name := fs.PathJoin(dir, fmt.Sprintf("%s%d", writeCheck, os.Getpid()))
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("this process (uid %d) cannot create files in %s (give it to the user lattice runs as): %w", os.Geteuid(), dir, err)
	}
	f.Close()
	if err := fs.Remove(name); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("the store directory %s: removing %s: %w", dir, name, err)
	}
	return nil
}

// PrefixEnd returns the smallest key greater than every key that starts
// with prefix, or nil (no upper bound) when prefix is empty or all 0xff.
func PrefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// Prefix returns iterator options that bound an iterator to the keys that
// start with prefix (every key, for an empty one).
func Prefix(prefix []byte) *pebble.IterOptions {
	if len(prefix) == 0 {
		return &pebble.IterOptions{} // Pebble takes no empty bound
	}
	return &pebble.IterOptions{LowerBound: prefix, UpperBound: PrefixEnd(prefix)}
}

// Count counts the keys of r that start with prefix, stopping at max when
// max > 0 (the answer is then min(keys, max)). r is a database, a
// snapshot or a batch that can be read.
func Count(r pebble.Reader, prefix []byte, max int) (int, error) {
	it, err := r.NewIter(Prefix(prefix))
	if err != nil {
		return 0, err
	}
	n := 0
	for it.First(); it.Valid() && (max <= 0 || n < max); it.Next() {
		n++
	}
	if err := it.Error(); err != nil {
		it.Close()
		return 0, err
	}
	return n, it.Close()
}
