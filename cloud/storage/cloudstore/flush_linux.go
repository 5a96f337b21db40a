package cloudstore

import "golang.org/x/sys/unix"

// startWriteback asks the kernel to start writing a range of the file
// with descriptor fd to disk now, without waiting: the fsync at the end
// of an upload then finds little left to write, instead of all of it.
func startWriteback(fd uintptr, off, n int64) {
	unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
