package qemu

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCachedBuildsOnce: concurrent builders of one image, each with its
// own lock file descriptor as separate processes would have, build it
// once; the others wait and take it. A failed build leaves nothing, and
// the next caller builds again.
func TestCachedBuildsOnce(t *testing.T) {
	dir := t.TempDir()
	var builds atomic.Int32
	build := func(ctx context.Context, tmp string) error {
		builds.Add(1)
		time.Sleep(300 * time.Millisecond)
		return os.WriteFile(filepath.Join(tmp, "f"), []byte("built"), 0o644)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			out, err := cached(t.Context(), dir, "img-1", build)
			if err != nil {
				t.Error(err)
				return
			}
			if b, err := os.ReadFile(filepath.Join(out, "f")); err != nil || string(b) != "built" {
				t.Errorf("built file = %q, %v", b, err)
			}
		})
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("%d builds, want 1", n)
	}

	failing := func(ctx context.Context, tmp string) error {
		os.WriteFile(filepath.Join(tmp, "half"), nil, 0o644)
		return context.Canceled
	}
	if _, err := cached(t.Context(), dir, "img-2", failing); err == nil {
		t.Fatal("a failed build gave an image")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "img-2*")); len(left) != 1 || filepath.Base(left[0]) != "img-2.lock" {
		t.Errorf("after a failed build: %v, want only the lock file", left)
	}
	if _, err := cached(t.Context(), dir, "img-2", build); err != nil {
		t.Errorf("a build after a failed one: %v", err)
	}
}

// TestCachedWaitHonoursContext: a builder waiting for another's lock
// gives up when its context ends.
func TestCachedWaitHonoursContext(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockFile(t.Context(), filepath.Join(dir, "img.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = cached(ctx, dir, "img", func(context.Context, string) error { return nil })
	if err == nil || ctx.Err() == nil {
		t.Errorf("cached while another holds the lock = %v, want the context's end", err)
	}
}

// TestUntar: a root file system's tar stream unpacks with its modes
// (setuid, a directory without write permission, set last), symlinks and
// hard links, returns the entries owned by others than root, and refuses
// an entry outside the tree.
func TestUntar(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []tar.Header{
		{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./usr/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./usr/bin/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./usr/bin/su", Typeflag: tar.TypeReg, Mode: 0o4755, Size: 2},
		{Name: "./usr/bin/su2", Typeflag: tar.TypeLink, Linkname: "./usr/bin/su"},
		{Name: "./bin", Typeflag: tar.TypeSymlink, Linkname: "usr/bin"},
		{Name: "./proc/", Typeflag: tar.TypeDir, Mode: 0o555},
		{Name: "./etc/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./etc/shadow", Typeflag: tar.TypeReg, Mode: 0o640, Gid: 42, Size: 0},
		{Name: "./dev/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./dev/null", Typeflag: tar.TypeChar, Mode: 0o666, Devmajor: 1, Devminor: 3},
	} {
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte("su"))
		}
	}
	tw.Close()
	tree := filepath.Join(t.TempDir(), "tree")
	owners, err := untar(&buf, tree)
	if err != nil {
		t.Fatal(err)
	}
	defer removeTree(tree)
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{
		{"usr/bin/su", 0o755 | os.ModeSetuid},
		{"proc", 0o555 | os.ModeDir},
		{"etc/shadow", 0o640},
	} {
		st, err := os.Lstat(filepath.Join(tree, c.path))
		if err != nil || st.Mode() != c.mode {
			t.Errorf("%s: mode %v, %v; want %v", c.path, st.Mode(), err, c.mode)
		}
	}
	if target, err := os.Readlink(filepath.Join(tree, "bin")); err != nil || target != "usr/bin" {
		t.Errorf("bin -> %q, %v; want usr/bin", target, err)
	}
	a, _ := os.Stat(filepath.Join(tree, "usr/bin/su"))
	b, _ := os.Stat(filepath.Join(tree, "usr/bin/su2"))
	if a == nil || b == nil || !os.SameFile(a, b) {
		t.Error("su2 is not a hard link of su")
	}
	if _, err := os.Lstat(filepath.Join(tree, "dev/null")); !os.IsNotExist(err) {
		t.Errorf("dev/null unpacked (%v): device nodes are left out", err)
	}
	if len(owners) != 1 || owners[0] != (owner{"/etc/shadow", 0, 42}) {
		t.Errorf("owners = %+v, want /etc/shadow 0:42", owners)
	}

	buf.Reset()
	tw = tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o644})
	tw.Close()
	if _, err := untar(&buf, filepath.Join(t.TempDir(), "tree")); err == nil {
		t.Error("an entry outside the tree was unpacked")
	}
}

// TestPruneBoot: the initramfs directories of earlier agents go once they
// are old; the current one, recent ones and builds in progress stay.
func TestPruneBoot(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{"boot-cur", "boot-old", "boot-old.lock", "boot-new", "boot-x.tmp-1", "minimal-1"} {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if name != "boot-new" {
			os.Chtimes(p, old, old)
		}
	}
	pruneBoot(dir, "boot-cur")
	for name, want := range map[string]bool{"boot-cur": true, "boot-old": false, "boot-old.lock": false, "boot-new": true, "boot-x.tmp-1": true, "minimal-1": true} {
		_, err := os.Stat(filepath.Join(dir, name))
		if got := err == nil; got != want {
			t.Errorf("%s kept %v, want %v", name, got, want)
		}
	}
}

// TestRootBuildShared: a root image's build belongs to everyone waiting
// for it. The caller that began it may give up (its lease ended) while
// another waits on: the build goes on and is done once. When every caller
// has given up, the build is abandoned and the next caller begins again.
func TestRootBuildShared(t *testing.T) {
	d := &Driver{cfg: Config{ImageDir: t.TempDir()}, log: slog.New(slog.DiscardHandler),
		building: make(chan struct{}, 1), roots: map[string]string{}, builds: map[string]*rootBuild{}}
	var builds, abandoned atomic.Int32
	release := make(chan struct{})
	img := imageInfo{ImageInfo: ImageInfo{Name: "slow"}, buildRoot: func(ctx context.Context, dir string, _ *slog.Logger) (string, error) {
		builds.Add(1)
		select {
		case <-release:
			return filepath.Join(dir, "root.img"), nil
		case <-ctx.Done():
			abandoned.Add(1)
			return "", ctx.Err()
		}
	}}
	waiters := func() int {
		d.mu.Lock()
		defer d.mu.Unlock()
		if b := d.builds[img.Name]; b != nil {
			return b.waiters
		}
		return 0
	}
	eventually := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("after 5 s: not %s", what)
			}
		}
	}
	type result struct {
		root string
		err  error
	}
	call := func(ctx context.Context) chan result {
		out := make(chan result, 1)
		go func() {
			root, err := d.rootImage(ctx, img)
			out <- result{root, err}
		}()
		return out
	}

	first, endFirst := context.WithCancel(t.Context())
	firstDone := call(first)
	eventually("building", func() bool { return builds.Load() == 1 })
	secondDone := call(t.Context())
	eventually("two waiting", func() bool { return waiters() == 2 })
	endFirst()
	if r := <-firstDone; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("the caller that gave up: %v, want its context's end", r.err)
	}
	close(release)
	want := filepath.Join(d.cfg.ImageDir, "root.img")
	if r := <-secondDone; r.err != nil || r.root != want {
		t.Fatalf("the caller that waited on: %q, %v; want %q", r.root, r.err, want)
	}
	if root, err := d.rootImage(t.Context(), img); err != nil || root != want {
		t.Fatalf("once built: %q, %v", root, err)
	}
	if n, a := builds.Load(), abandoned.Load(); n != 1 || a != 0 {
		t.Fatalf("%d builds, %d abandoned; want 1 and 0", n, a)
	}

	// Every caller gives up: the build ends, and the next one begins again.
	img.Name, release = "abandoned", make(chan struct{})
	only, endOnly := context.WithCancel(t.Context())
	onlyDone := call(only)
	eventually("building again", func() bool { return builds.Load() == 2 })
	endOnly()
	<-onlyDone
	eventually("the build abandoned", func() bool { return abandoned.Load() == 1 })
	close(release)
	if r := <-call(t.Context()); r.err != nil || r.root != want {
		t.Fatalf("after an abandoned build: %q, %v", r.root, r.err)
	}
	if n := builds.Load(); n != 3 {
		t.Fatalf("%d builds, want 3", n)
	}
}
