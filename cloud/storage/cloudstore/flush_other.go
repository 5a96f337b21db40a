//go:build !linux

package cloudstore

// startWriteback is a no-op where sync_file_range does not exist: the
// final fsync does all the work.
func startWriteback(fd uintptr, off, n int64) {}
