package cloudstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestConditionalWrites: If-None-Match: * creates only, If-Match replaces
// only the version named, for inline and file-backed bodies and for
// multipart completion; a failed condition writes nothing.
func TestConditionalWrites(t *testing.T) {
	s := newBlobStore(t)
	ctx := context.Background()
	put := func(key string, size int, pre Preconditions) (Object, error) {
		return s.Put(ctx, "acme", "pics", key, bytes.NewReader(bytes.Repeat([]byte{'x'}, size)), PutOptions{Max: 1 << 30, Now: t0, If: pre})
	}
	for _, size := range []int{10, InlineMax + 10} {
		key := fmt.Sprint("k", size)
		first, err := put(key, size, Preconditions{IfNoneMatch: "*"})
		if err != nil {
			t.Fatalf("create %s: %v", key, err)
		}
		if _, err := put(key, size+1, Preconditions{IfNoneMatch: "*"}); !errors.Is(err, ErrPrecondition) {
			t.Errorf("create %s again: got %v, want ErrPrecondition", key, err)
		}
		if _, err := put(key, size+2, Preconditions{IfMatch: "0123456789abcdef0123456789abcdef"}); !errors.Is(err, ErrPrecondition) {
			t.Errorf("replace %s with a wrong If-Match: got %v, want ErrPrecondition", key, err)
		}
		if got, _ := s.Object("acme", "pics", key); got.Size != int64(size) {
			t.Errorf("%s holds %d bytes after refused writes, want %d", key, got.Size, size)
		}
		if _, err := put(key, size+3, Preconditions{IfMatch: first.ETag}); err != nil {
			t.Errorf("replace %s with the right If-Match: %v", key, err)
		}
		if _, err := put(key+"-none", size, Preconditions{IfMatch: "*"}); !errors.Is(err, ErrPrecondition) || !errors.Is(err, ErrNotFound) {
			t.Errorf("If-Match on a missing key: got %v, want ErrPrecondition and ErrNotFound", err)
		}
	}

	// Of many concurrent creators, exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := put("race", InlineMax+100, Preconditions{IfNoneMatch: "*"})
			switch {
			case err == nil:
				mu.Lock()
				won++
				mu.Unlock()
			case !errors.Is(err, ErrPrecondition):
				t.Errorf("a concurrent create: %v", err)
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Errorf("%d of 16 concurrent creates succeeded, want exactly 1", won)
	}

	// Multipart completion honours them too, and a failed one leaves the
	// upload to be completed or aborted.
	u, err := s.CreateUpload(t.Context(), "acme", "pics", "k10", PutOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Store.PutPart(ctx, "acme", "pics", "k10", u.ID, 1, bytes.NewReader([]byte("part")), PartOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	list := []CompletedPart{{Number: 1, ETag: p.ETag}}
	if _, err := s.CompleteUpload(ctx, "acme", "pics", "k10", u.ID, list, t0, Preconditions{IfNoneMatch: "*"}); !errors.Is(err, ErrPrecondition) {
		t.Errorf("complete onto an existing object with If-None-Match: *: got %v, want ErrPrecondition", err)
	}
	cur, _ := s.Object("acme", "pics", "k10")
	if _, err := s.CompleteUpload(ctx, "acme", "pics", "k10", u.ID, list, t0, Preconditions{IfMatch: cur.ETag}); err != nil {
		t.Errorf("complete with the right If-Match after a refusal: %v", err)
	}
}

// TestPreconditionRefusedBeforeTheBody: a write whose precondition
// already fails is refused before a byte of its body is read, so that a
// client is not made to send gigabytes only to hear 412 (the commit checks
// again, atomically, for a write that raced).
func TestPreconditionRefusedBeforeTheBody(t *testing.T) {
	s := newBlobStore(t)
	ctx := context.Background()
	old, err := s.Put(ctx, "acme", "pics", "there", bytes.NewReader([]byte("v1")), PutOptions{Max: 1 << 20, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, key string
		pre       Preconditions
	}{
		{"If-None-Match: * on an object", "there", Preconditions{IfNoneMatch: "*"}},
		{"If-Match: * on no object", "missing", Preconditions{IfMatch: "*"}},
		{"If-Match of another ETag", "there", Preconditions{IfMatch: old.ETag[1:] + "0"}},
	} {
		for _, size := range []int{10, InlineMax + 10} {
			body := &countingReader{r: bytes.NewReader(bytes.Repeat([]byte{'x'}, size))}
			_, err := s.Put(ctx, "acme", "pics", tc.key, body, PutOptions{Max: 1 << 20, Now: t0, If: tc.pre})
			if !errors.Is(err, ErrPrecondition) {
				t.Errorf("%s, %d bytes: got %v, want ErrPrecondition", tc.name, size, err)
			}
			if body.n != 0 {
				t.Errorf("%s, %d bytes: bytes of the body read: got %d, want 0", tc.name, size, body.n)
			}
		}
	}
	s.wantFiles("after the refused writes", 0)
}
