package cloudstore

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestLifecycleExpiresObjects(t *testing.T) {
	s := openStore(t, t.TempDir())
	if err := s.OpenBlobs(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.CreateBucket("acme", "logs", "", t0); err != nil {
		t.Fatal(err)
	}
	put := func(key string, at time.Time, size int) {
		t.Helper()
		if _, err := s.Put(ctx, "acme", "logs", key, strings.NewReader(strings.Repeat("x", size)), PutOptions{ContentType: "text/plain", Max: 1 << 20, Now: at}); err != nil {
			t.Fatal(err)
		}
	}
	put("tmp/old", t0, 10)
	put("tmp/big-old", t0, InlineMax+1) // a body file too
	put("tmp/new", t0.Add(12*time.Hour), 10)
	put("keep/old", t0, 10)
	r, err := s.AddRule("acme", "logs", "tmp/", 1, t0)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Expire(ctx, t0.Add(23*time.Hour)); err != nil || n != 0 {
		t.Fatalf("Expire before a day has passed: %d, %v; want 0", n, err)
	}
	if n, err := s.Expire(ctx, t0.Add(25*time.Hour)); err != nil || n != 2 {
		t.Fatalf("Expire after a day: %d, %v; want 2 (tmp/old, tmp/big-old)", n, err)
	}
	for key, want := range map[string]bool{"tmp/old": false, "tmp/big-old": false, "tmp/new": true, "keep/old": true} {
		_, err := s.Object("acme", "logs", key)
		if got := err == nil; got != want {
			t.Errorf("after the sweep, %s exists = %v, want %v", key, got, want)
		}
	}
	if bk, _ := s.Bucket("acme", "logs"); bk.Objects != 2 || bk.Bytes != 20 {
		t.Errorf("bucket counters after expiry: %d objects, %d bytes; want 2, 20", bk.Objects, bk.Bytes)
	}
	// Another account sees neither the bucket nor its rules.
	if _, err := s.Rules("other", "logs"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Rules of another account's bucket: %v, want ErrNotFound", err)
	}
	if err := s.DeleteRule("acme", "logs", r.ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Expire(ctx, t0.Add(48*time.Hour)); n != 0 {
		t.Errorf("Expire after deleting the rule removed %d objects", n)
	}
	for _, days := range []int{0, -1, MaxExpireDays + 1} {
		if _, err := s.AddRule("acme", "logs", "", days, t0); err == nil {
			t.Errorf("AddRule with %d days accepted", days)
		}
	}
	// Deleting a bucket takes its rules along.
	s.AddRule("acme", "logs", "", 1, t0)
	for _, k := range []string{"tmp/new", "keep/old"} {
		s.Delete("acme", "logs", k, DeleteOptions{})
	}
	if err := s.DeleteBucket("acme", "logs"); err != nil {
		t.Fatal(err)
	}
	if rules, _ := s.rulesOf("logs"); len(rules) != 0 {
		t.Errorf("%d rules outlive their bucket", len(rules))
	}
}

// TestRunLifecycle: the sweeper runs on its own, with the injected clock,
// and stops with its context.
func TestRunLifecycle(t *testing.T) {
	s := openStore(t, t.TempDir())
	if err := s.OpenBlobs(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.CreateBucket("acme", "logs", "", t0)
	s.Put(ctx, "acme", "logs", "a", strings.NewReader("x"), PutOptions{ContentType: "", Max: 10, Now: t0})
	s.AddRule("acme", "logs", "", 1, t0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.RunLifecycle(ctx, 5*time.Millisecond, func() time.Time { return t0.Add(48 * time.Hour) },
			slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := s.Object("acme", "logs", "a"); errors.Is(err, ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweeper did not expire the object within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RunLifecycle did not stop with its context")
	}
}
