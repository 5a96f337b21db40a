package cloudstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// onLogSync calls fn before each fsync of Pebble's log on h while armed,
// with the count of those so far.
func onLogSync(h *hookFS, armed *atomic.Bool, fn func(n int)) {
	var n atomic.Int32
	h.hook = func(what string) {
		if armed.Load() && strings.HasPrefix(what, "sync") && strings.HasSuffix(what, ".log") {
			fn(int(n.Add(1)))
		}
	}
}

// reopen opens the store a crash left in img.
func reopen(t *testing.T, img *vfs.MemFS) *Store {
	t.Helper()
	r, err := open("db", nil, img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if err := r.OpenBlobs("objects"); err != nil {
		t.Fatal(err)
	}
	return r
}

// readable fails t unless key, if the crash kept it, reads back as body.
func readable(t *testing.T, s *Store, key string, body []byte) {
	t.Helper()
	_, b, err := s.OpenObject(t.Context(), "acme", "pics", key)
	if errors.Is(err, ErrNotFound) {
		return // its delete was durable: fine
	}
	if err != nil {
		t.Fatalf("after the crash %s is listed but cannot be read: %v", key, err)
	}
	got, err := io.ReadAll(b)
	b.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("after the crash %s reads %d bytes (%v), want its %d", key, len(got), err, len(body))
	}
}

// TestBodyOutlivesUndurableDelete: a body file is removed only once
// nothing refers to it durably. Reference counts are read where a write
// applied them, which may be before its fsync (writers share fsyncs), so
// another write's count could come back after a power loss. Here x and
// its copy y share one body; deleting both at once, the crash comes when
// the first delete is durable and answered and the second is not: y is
// still listed, and must still read.
func TestBodyOutlivesUndurableDelete(t *testing.T) {
	mem := vfs.NewCrashableMem()
	h := &hookFS{FS: mem}
	s := openWithBucket(t, h)
	defer s.Close()
	ctx := context.Background()
	body := bytes.Repeat([]byte("B"), InlineMax+1000) // a body file, not inline
	x, err := s.Put(ctx, "acme", "pics", "x", bytes.NewReader(body), PutOptions{ContentType: "x", Max: 1 << 20, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Copy(ctx, "acme", "pics", "x", "pics", "y", t0, CopyOptions{}); err != nil {
		t.Fatal(err)
	}
	var armed atomic.Bool
	var img *vfs.MemFS
	second := make(chan error, 1)
	onLogSync(h, &armed, func(n int) {
		switch n {
		case 1: // x's delete is in the log, not yet synced: y's is applied now
			go func() {
				_, err := s.Delete("acme", "pics", "y", DeleteOptions{})
				second <- err
			}()
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
				if _, err := s.Object("acme", "pics", "y"); errors.Is(err, ErrNotFound) {
					break
				}
				if time.Now().After(deadline) {
					t.Error("y's delete was not applied")
					return
				}
			}
		case 2: // x's delete synced; y's not: the power goes, once x's
			// delete had its time to let the body go (it must not: y's
			// delete, which would leave no reference, is not durable).
			for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if _, err := mem.Stat(s.blobPath(x.Blob)); err != nil {
					break
				}
			}
			// Any later fsync of the body's directory (the next body
			// renamed into it) would make a removal durable.
			if err := s.syncDir(s.fs.PathDir(s.blobPath(x.Blob))); err != nil {
				t.Error(err)
			}
			img = mem.CrashClone(vfs.CrashCloneCfg{})
		}
	})
	armed.Store(true)
	if _, err := s.Delete("acme", "pics", "x", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	armed.Store(false)
	if img == nil {
		t.Fatal("no second log sync: the crash point was not reached")
	}
	readable(t, reopen(t, img), "y", body)
}

// TestBodyOutlivesReadDuringDelete: a read of an object made of parts
// holds its part files while it runs; one that ends while a delete of
// the object is applied but not durable must leave the files, since the
// power may go before the delete is.
func TestBodyOutlivesReadDuringDelete(t *testing.T) {
	mem := vfs.NewCrashableMem()
	h := &hookFS{FS: mem}
	s := openWithBucket(t, h)
	defer s.Close()
	ctx := context.Background()
	body := bytes.Repeat([]byte("P"), 100<<10)
	u, err := s.CreateUpload(t.Context(), "acme", "pics", "k", PutOptions{ContentType: "x", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.PutPart(ctx, "acme", "pics", "k", u.ID, 1, bytes.NewReader(body), PartOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.CompleteUpload(ctx, "acme", "pics", "k", u.ID, []CompletedPart{{Number: 1, ETag: p.ETag}}, t0, Preconditions{})
	if err != nil {
		t.Fatal(err)
	}
	_, reading, err := s.OpenObject(t.Context(), "acme", "pics", "k")
	if err != nil {
		t.Fatal(err)
	}
	var armed atomic.Bool
	var img *vfs.MemFS
	release := make(chan struct{})
	reached := make(chan struct{})
	onLogSync(h, &armed, func(n int) {
		if n == 1 { // the delete is applied; hold its fsync
			close(reached)
			<-release
		}
	})
	armed.Store(true)
	deleted := make(chan error, 1)
	go func() {
		_, err := s.Delete("acme", "pics", "k", DeleteOptions{})
		deleted <- err
	}()
	<-reached
	closed := make(chan struct{})
	go func() { reading.Close(); close(closed) }() // the read ends now
	select {
	case <-closed:
	case <-time.After(200 * time.Millisecond): // waiting for the delete's fsync, as it should
	}
	if err := s.syncDir(s.fs.PathDir(s.blobPath(obj.Blobs[0]))); err != nil {
		t.Fatal(err)
	}
	img = mem.CrashClone(vfs.CrashCloneCfg{})
	close(release)
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	<-closed
	armed.Store(false)
	readable(t, reopen(t, img), "k", body)
}

// TestCompletionIsOneCommit: completing an upload records the object and
// ends the upload in one commit, so no crash leaves the object made with
// its upload still open (a retry would complete it again). The crash
// comes at every fsync of the log during the completion. The unlisted
// parts make the end of the upload slow to build, as on a loaded server,
// so that two commits would be synced apart.
func TestCompletionIsOneCommit(t *testing.T) {
	mem := vfs.NewCrashableMem()
	h := &hookFS{FS: mem}
	s := openWithBucket(t, h)
	defer s.Close()
	ctx := context.Background()
	u, err := s.CreateUpload(t.Context(), "acme", "pics", "k", PutOptions{ContentType: "x", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.PutPart(ctx, "acme", "pics", "k", u.ID, 1, bytes.NewReader(bytes.Repeat([]byte("P"), 1000)), PartOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 3000; i++ {
		if _, err := s.PutPart(ctx, "acme", "pics", "k", u.ID, i, bytes.NewReader([]byte("x")), PartOptions{Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	var armed atomic.Bool
	var imgs []*vfs.MemFS
	onLogSync(h, &armed, func(n int) {
		// Whatever the completion applied by now reaches the log's
		// flusher before the crash: let a second commit, if there is
		// one, be applied (the upload's record goes) first.
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if _, err := s.Upload("acme", "pics", "k", u.ID); errors.Is(err, ErrNotFound) {
				break
			}
		}
		imgs = append(imgs, mem.CrashClone(vfs.CrashCloneCfg{}))
	})
	armed.Store(true)
	if _, err := s.CompleteUpload(ctx, "acme", "pics", "k", u.ID, []CompletedPart{{Number: 1, ETag: p.ETag}}, t0, Preconditions{}); err != nil {
		t.Fatal(err)
	}
	armed.Store(false)
	if len(imgs) == 0 {
		t.Fatal("the completion synced no log")
	}
	for i, img := range imgs {
		r := reopen(t, img)
		_, oerr := r.Object("acme", "pics", "k")
		_, uerr := r.Upload("acme", "pics", "k", u.ID)
		if (oerr == nil) == (uerr == nil) {
			t.Errorf("crash at log sync %d: object %v, upload %v; want the one or the other", i+1, oerr, uerr)
		}
	}
}

// TestUnreferencedBodiesWait: while a write is in flight (applied, not
// yet durable), body files that lost their last reference wait rather
// than cost a log sync each under the store's lock; past maxDoomed
// waiting, one sync makes every write durable and they all go; and once
// nothing is in flight, a removal is immediate.
func TestUnreferencedBodiesWait(t *testing.T) {
	s := openWithBucket(t, vfs.NewMem())
	defer s.Close()
	ctx := context.Background()
	body := bytes.Repeat([]byte("W"), InlineMax+1)
	put := func(key string) string {
		t.Helper()
		o, err := s.Put(ctx, "acme", "pics", key, bytes.NewReader(body), PutOptions{ContentType: "x", Max: 1 << 20, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		return o.Blob
	}
	exists := func(blob string) bool {
		_, err := s.fs.Stat(s.blobPath(blob))
		return err == nil
	}
	s.mu.Lock()
	s.unsynced++ // another writer's batch, applied and waiting for its fsync
	s.mu.Unlock()
	var blobs []string
	for i := range maxDoomed - 1 {
		key := fmt.Sprintf("k%d", i)
		blobs = append(blobs, put(key))
		if _, err := s.Delete("acme", "pics", key, DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, b := range blobs {
		if !exists(b) {
			t.Fatalf("body %d removed while a write was in flight", i)
		}
	}
	last := put("last")
	if _, err := s.Delete("acme", "pics", "last", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, b := range append(blobs, last) {
		if exists(b) {
			t.Fatalf("body %d still there with %d waiting", i, maxDoomed)
		}
	}
	s.mu.Lock()
	s.unsynced--
	s.mu.Unlock()
	now := put("now")
	if _, err := s.Delete("acme", "pics", "now", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if exists(now) {
		t.Fatal("with nothing in flight, a body outlived its delete")
	}
}
