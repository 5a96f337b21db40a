package cloudstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// within runs f and fails the test if it does not return in time: a full
// disk must never leave a call waiting for a lock.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return in 20 s", what)
	}
}

// TestFullDiskMakesTheStoreReadOnly fills the disk (every write of the
// file system fails with ENOSPC) under a running store: writes fail with
// ErrUnavailable or ENOSPC and never hang, reads of what was written
// before go on, the store stays read-only when space returns, closes, and
// after a restart has everything it acknowledged and takes writes again.
func TestFullDiskMakesTheStoreReadOnly(t *testing.T) {
	var full atomic.Bool
	mem := vfs.NewMem()
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if full.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return syscall.ENOSPC
		}
		return nil
	}))
	s, err := open("db", nil, fs)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.OpenBlobs("objects"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.CreateBucket("acme", "pics", "", t0); err != nil {
		t.Fatal(err)
	}
	small := []byte("written before the disk filled")
	large := bytes.Repeat([]byte("L"), InlineMax+1000)
	for key, body := range map[string][]byte{"small": small, "large": large} {
		if _, err := s.Put(ctx, "acme", "pics", key, bytes.NewReader(body), PutOptions{ContentType: "x", Max: 1 << 20, Now: t0}); err != nil {
			t.Fatal(err)
		}
	}

	full.Store(true)
	for i, body := range [][]byte{small, large, small, large} {
		within(t, "a PUT on a full disk", func() {
			_, err := s.Put(ctx, "acme", "pics", "new", bytes.NewReader(body), PutOptions{ContentType: "x", Max: 1 << 20, Now: t0})
			if !errors.Is(err, ErrUnavailable) && !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("PUT %d on a full disk: got %v, want ErrUnavailable or ENOSPC", i, err)
			}
		})
	}
	within(t, "creating a bucket on a full disk", func() {
		if _, err := s.CreateBucket("acme", "more", "", t0); !errors.Is(err, ErrUnavailable) {
			t.Errorf("CreateBucket on a full disk: got %v, want ErrUnavailable", err)
		}
	})
	if s.Err() == nil {
		t.Fatalf("the store did not become read-only")
	}
	readBack := func(s *Store) {
		t.Helper()
		for key, want := range map[string][]byte{"small": small, "large": large} {
			within(t, "a GET", func() {
				_, body, err := s.OpenObject(t.Context(), "acme", "pics", key)
				if err != nil {
					t.Errorf("GET %s: %v", key, err)
					return
				}
				got, err := io.ReadAll(body)
				body.Close()
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("GET %s: %d bytes, %v; want the %d written", key, len(got), err, len(want))
				}
			})
		}
	}
	readBack(s)

	full.Store(false)
	within(t, "a PUT after space returned", func() {
		if _, err := s.Put(ctx, "acme", "pics", "new", bytes.NewReader(small), PutOptions{ContentType: "x", Max: 1 << 20, Now: t0}); !errors.Is(err, ErrUnavailable) {
			t.Errorf("PUT after space returned, before a restart: got %v, want ErrUnavailable", err)
		}
	})
	within(t, "Close", func() { s.Close() })

	s2, err := open("db", nil, fs)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer s2.Close()
	if err := s2.OpenBlobs("objects"); err != nil {
		t.Fatal(err)
	}
	readBack(s2)
	if _, err := s2.Put(ctx, "acme", "pics", "new", bytes.NewReader(large), PutOptions{ContentType: "x", Max: 1 << 20, Now: t0}); err != nil {
		t.Errorf("PUT after the restart: %v", err)
	}
}

// TestPanicInAWriteReleasesTheLock: Pebble panics (through its logger's
// Fatalf) when it cannot write some of its files. The write that panicked
// fails the store, and the lock is free for the reads and refusals after.
func TestPanicInAWriteReleasesTheLock(t *testing.T) {
	s := newStore(t)
	err := s.write(func(*tx) error { panic("pebble: could not write the WAL: no space left on device") })
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a write that panicked: got %v, want ErrUnavailable", err)
	}
	if !s.mu.TryLock() {
		t.Fatalf("the store's lock is still held after the panic")
	}
	s.mu.Unlock()
	within(t, "a write after the panic", func() {
		if _, err := s.CreateBucket("acme", "after", "", t0); !errors.Is(err, ErrUnavailable) {
			t.Errorf("a write after the panic: got %v, want ErrUnavailable", err)
		}
	})
	within(t, "a read after the panic", func() {
		if _, err := s.Buckets("acme"); err != nil {
			t.Errorf("a read after the panic: %v", err)
		}
	})
}

// TestFailedSyncKeepsTheBody: when the database's log cannot be synced
// after a new object's record was written to it, the write fails, but the
// record may still be on the disk: its body file must stay, so that a
// restart that finds the record finds the body too (and one that does
// not, removes the file).
func TestFailedSyncKeepsTheBody(t *testing.T) {
	var failSync atomic.Bool
	mem := vfs.NewMem()
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if failSync.Load() && (op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData || op.Kind == errorfs.OpFileSyncTo) && strings.HasSuffix(op.Path, ".log") {
			return syscall.EIO
		}
		return nil
	}))
	s := openWithBucket(t, fs)
	large := bytes.Repeat([]byte("B"), InlineMax+1000)
	failSync.Store(true)
	within(t, "a PUT whose log sync fails", func() {
		if _, err := s.Put(context.Background(), "acme", "pics", "k", bytes.NewReader(large), PutOptions{ContentType: "x", Max: 1 << 20, Now: t0}); !errors.Is(err, ErrUnavailable) {
			t.Errorf("PUT: got %v, want ErrUnavailable", err)
		}
	})
	within(t, "Close", func() { s.Close() })
	failSync.Store(false)
	s2, err := open("db", nil, fs)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.OpenBlobs("objects"); err != nil {
		t.Fatal(err)
	}
	obj, body, err := s2.OpenObject(t.Context(), "acme", "pics", "k")
	if errors.Is(err, ErrNotFound) {
		return // the record did not survive: nothing names a body
	}
	if err != nil {
		t.Fatalf("the record survived the failed sync, but its object does not open: %v", err)
	}
	got, err := io.ReadAll(body)
	body.Close()
	if err != nil || !bytes.Equal(got, large) || obj.Size != int64(len(large)) {
		t.Fatalf("the record survived the failed sync: %d bytes, %v", len(got), err)
	}
}
