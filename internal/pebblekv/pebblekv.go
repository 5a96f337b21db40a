// Package pebblekv holds what the node's and the platform's Pebble stores
// share about key ranges: the bounds of a prefix, and counting the keys
// under one.
package pebblekv

import (
	"bytes"

	"github.com/cockroachdb/pebble/v2"
)

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
