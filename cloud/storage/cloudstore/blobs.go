package cloudstore

// Object bodies larger than InlineMax live in files of their own, the
// blobs: written and fsync'd before the record naming them is committed,
// shared by copies and counted by reference, removed when the last record
// naming them goes. This file holds their life cycle; objects.go the
// records that name them.

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// OpenBlobs sets the directory for object bodies and removes what an
// interrupted upload left there: temporary files, and body files that no
// object refers to. Every body file is reached through the store's file
// system, like the database, so that a crash test sees every fsync.
func (s *Store) OpenBlobs(dir string) error {
	if err := s.fs.MkdirAll(s.fs.PathJoin(dir, "tmp"), 0o700); err != nil {
		return fmt.Errorf("cloudstore: %w", err)
	}
	// Every shard exists, durably, before any upload: a body renamed into
	// one never depends on a directory entry that is not yet synced.
	for i := range 256 {
		if err := s.fs.MkdirAll(s.fs.PathJoin(dir, shardName(i)), 0o700); err != nil {
			return fmt.Errorf("cloudstore: %w", err)
		}
	}
	if err := s.syncDir(dir); err != nil {
		return fmt.Errorf("cloudstore: %w", err)
	}
	if err := s.syncDir(s.fs.PathDir(dir)); err != nil {
		return fmt.Errorf("cloudstore: %w", err)
	}
	s.blobDir = dir
	tmp := s.fs.PathJoin(dir, "tmp")
	names, _ := s.fs.List(tmp)
	for _, name := range names {
		s.fs.Remove(s.fs.PathJoin(tmp, name))
	}
	for i := range 256 {
		shard := s.fs.PathJoin(dir, shardName(i))
		names, _ := s.fs.List(shard)
		for _, name := range names {
			if n, err := s.refs(name); err == nil && n == 0 {
				s.fs.Remove(s.fs.PathJoin(shard, name))
			}
		}
	}
	return nil
}

// shardName is the name of the i-th of the 256 shards: the first two hex
// digits of the ids of the bodies it holds.
func shardName(i int) string { return fmt.Sprintf("%02x", i) }

// blobPath is where a body lives: named by a random id, never by the key,
// so no key can reach outside the directory.
func (s *Store) blobPath(id string) string { return s.fs.PathJoin(s.blobDir, id[:2], id) }

// newBlobID returns a random body file id: 32 hex digits.
func newBlobID() string {
	var id [16]byte
	rand.Read(id[:])
	return hex.EncodeToString(id[:])
}

// discardBlob removes the body file of a write that failed with err,
// unless the failure was the disk's: then the record naming the file may
// still have reached the disk, and the file stays for OpenBlobs to remove
// at the next start if nothing names it.
func (s *Store) discardBlob(id string, err error) {
	if !errors.Is(err, ErrUnavailable) {
		s.removeBlob(id)
	}
}

// removeBlob removes a body file, if it is there ("" is none).
func (s *Store) removeBlob(id string) {
	if id != "" {
		s.fs.Remove(s.blobPath(id))
	}
}

// syncDir fsyncs a directory, making the names created in it durable.
func (s *Store) syncDir(dir string) error {
	d, err := s.fs.OpenDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (s *Store) refs(id string) (int, error) {
	v, closer, err := s.db.Get(k(tBlob, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	var n int
	_, err = fmt.Sscan(string(v), &n)
	return n, err
}

// storedBody is a body as the store keeps it: inline or in a body file.
type storedBody struct {
	inline []byte
	blob   string
	size   int64  // of the plaintext
	etag   string // hex MD5: of the plaintext, or as writeEncrypted says
	prefix []byte // an encrypted body's nonce prefix
}

// storeBody reads body, at most max bytes, and keeps it: encrypted with
// key when enc is not nil; inline when it fits and inline allows, else in
// a new body file. A body over max is ErrTooLarge, one that cannot be
// read wraps ErrBody; on any error nothing is left.
func (s *Store) storeBody(ctx context.Context, body io.Reader, max int64, enc *Encryption, key []byte, inline bool) (storedBody, error) {
	if enc != nil {
		sb, err := s.writeEncrypted(ctx, body, max, enc.Mode, key, inline)
		if err != nil {
			return storedBody{}, err
		}
		return storedBody{inline: sb.inline, blob: sb.blob, size: sb.size, etag: hex.EncodeToString(sb.md5), prefix: sb.prefix}, nil
	}
	h := md5.New()
	if !inline {
		blob, size, err := s.writeBlob(ctx, body, max, h)
		if err != nil {
			return storedBody{}, err
		}
		return storedBody{blob: blob, size: size, etag: hex.EncodeToString(h.Sum(nil))}, nil
	}
	body = io.LimitReader(ctxReader{ctx, body}, max+1)
	head := make([]byte, min(max+1, InlineMax+1))
	n, err := readUpTo(body, head)
	if err != nil {
		return storedBody{}, fmt.Errorf("%w: %w", ErrBody, err)
	}
	if int64(n) > max {
		return storedBody{}, ErrTooLarge
	}
	if n <= InlineMax {
		h.Write(head[:n])
		return storedBody{inline: head[:n:n], size: int64(n), etag: hex.EncodeToString(h.Sum(nil))}, nil
	}
	blob, size, err := s.writeBlob(ctx, io.MultiReader(bytes.NewReader(head[:n]), body), max, h)
	if err != nil {
		return storedBody{}, err
	}
	return storedBody{blob: blob, size: size, etag: hex.EncodeToString(h.Sum(nil))}, nil
}

// readUpTo reads into p until p is full or r ends. Unlike io.ReadFull,
// it tells a body that simply ends (no error) from a reader's own
// io.ErrUnexpectedEOF, which a multipart part cut off mid-file returns.
func readUpTo(r io.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// writeBlob writes body, at most max bytes, to a new body file and returns
// its id and size; sum, if not nil, sees every byte. The bytes go to a
// temporary file whose writeback starts as they come, which is fsync'd
// and renamed into its shard (keepBlob). On any error nothing is left: a
// body over max is ErrTooLarge, one that cannot be read wraps ErrBody.
func (s *Store) writeBlob(ctx context.Context, body io.Reader, max int64, sum io.Writer) (string, int64, error) {
	tmp := s.fs.PathJoin(s.blobDir, "tmp", "up-"+newBlobID())
	f, err := s.fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return "", 0, fmt.Errorf("cloudstore: %w", err)
	}
	renamed := false
	defer func() {
		f.Close()
		if !renamed { // once renamed, the name may already be another upload's
			s.fs.Remove(tmp)
		}
	}()
	var dst io.Writer = &bodyWriter{f: f, fd: f.Fd()}
	if sum != nil {
		// sum first: a vfs.File may modify what it is given to write.
		dst = io.MultiWriter(sum, dst)
	}
	src := &readFailure{r: io.LimitReader(ctxReader{ctx, body}, max+1)}
	size, err := io.Copy(dst, src)
	switch {
	case src.err != nil:
		return "", 0, fmt.Errorf("%w: %w", ErrBody, src.err) // the client's
	case err != nil:
		return "", 0, fmt.Errorf("cloudstore: writing a body file: %w", err) // the disk's (ENOSPC, EIO)
	}
	if size > max {
		return "", 0, ErrTooLarge
	}
	blob, err := s.keepBlob(f, tmp)
	if err != nil {
		return "", 0, err
	}
	renamed = true
	return blob, size, nil
}

// readFailure remembers the error its reader returned, other than io.EOF,
// so that a copy's failure can be put down to the body or to the disk.
type readFailure struct {
	r   io.Reader
	err error
}

func (r *readFailure) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// keepBlob makes f, the temporary file tmp, a body file: fsync'd, renamed
// to a random id in its shard, the shard's entry synced. It returns the
// id. On error the file is still tmp, for the caller to remove.
func (s *Store) keepBlob(f vfs.File, tmp string) (string, error) {
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("cloudstore: %w", err)
	}
	blob := newBlobID()
	path := s.blobPath(blob)
	if err := s.fs.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("cloudstore: %w", err)
	}
	if err := s.syncDir(s.fs.PathDir(path)); err != nil {
		s.fs.Rename(path, tmp)
		return "", fmt.Errorf("cloudstore: %w", err)
	}
	return blob, nil
}

func (s *Store) ref(b *pebble.Batch, id string, delta int) error {
	if id == "" {
		return nil
	}
	n, err := s.refs(id)
	if err != nil {
		return err
	}
	if n+delta <= 0 {
		return b.Delete(k(tBlob, id), nil)
	}
	return b.Set(k(tBlob, id), []byte(fmt.Sprint(n+delta)), nil)
}

// dropUnreferenced removes the body files of ids, and of those it put
// off before, that nothing refers to any more (s.mu held). The counts it
// reads may come from writes applied but not yet durable, another
// writer's waiting in its group commit: a power loss before their fsync
// would undo them and need the files again. So while any write applied is
// not yet durable the files wait (s.doomed), to go with the next call
// that finds none; past maxDoomed waiting, it syncs the log, which makes
// every write applied durable (s.mu keeps others from applying), rather
// than let the disk fill under a steady load.
func (s *Store) dropUnreferenced(ids ...string) {
	for _, id := range ids {
		if id != "" && !slices.Contains(s.doomed, id) {
			s.doomed = append(s.doomed, id)
		}
	}
	if len(s.doomed) == 0 || s.Err() != nil {
		return // failed, a write's count may never reach the disk: Open sorts it out
	}
	if s.unsynced > 0 {
		if len(s.doomed) < maxDoomed {
			return
		}
		if err := s.durable(func() error { return s.db.LogData(nil, pebble.Sync) }); err != nil {
			return // the files stay; Open removes what nothing names
		}
	}
	doomed := s.doomed
	s.doomed = nil
	for _, id := range doomed {
		if s.pins[id] > 0 {
			continue // a completion or a read holds it; unpin brings it back
		}
		if n, err := s.refs(id); err == nil && n == 0 {
			s.removeBlob(id)
		}
	}
}

// maxDoomed is how many unreferenced body files may wait for the writes
// in flight to be durable before a removal syncs the log itself.
const maxDoomed = 64

// openBody opens body file id, size bytes long, for reading. A file of
// the OS's is handed over as it is: underneath it is an *os.File, whose
// SyscallConn lets a TCP connection's ReadFrom send it with sendfile(2),
// as it could send the *os.File handed over before. Any other (a test's
// in-memory file) is read through a section reader, which gives it Seek.
func (s *Store) openBody(id string, size int64) (Body, error) {
	f, err := s.fs.Open(s.blobPath(id))
	if err != nil {
		return nil, err
	}
	if b, ok := f.(interface {
		Body
		syscall.Conn
	}); ok {
		return b, nil
	}
	return sectionBody{io.NewSectionReader(f, 0, size), f}, nil
}

// sectionBody reads a body file that is not the OS's.
type sectionBody struct {
	*io.SectionReader
	io.Closer
}
