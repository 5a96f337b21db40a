package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestS3Sync syncs a folder to a prefix and back against a real API: only
// what differs is sent (a changed file of the same size too), --delete
// removes extras, --dry-run changes nothing.
func TestS3Sync(t *testing.T) {
	s := newS3Cloud(t)
	mustRun(t, "s3", "mb", "box")
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "index.html"), []byte("<h1>one</h1>"))
	if err := os.MkdirAll(filepath.Join(src, "css"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(src, "css", "site.css"), []byte("body{}"))

	if r := mustRun(t, "s3", "sync", src, "s3://box/site/"); !strings.Contains(r.stdout, "2 uploaded, 0 deleted") {
		t.Errorf("first sync: %q", r.stdout)
	}
	if keys := s.keys(t, "box"); !slices.Equal(keys, []string{"site/css/site.css", "site/index.html"}) {
		t.Errorf("after the first sync the bucket holds %v", keys)
	}
	if r := mustRun(t, "s3", "sync", src, "s3://box/site"); !strings.Contains(r.stdout, "already hold the same files (2)") {
		t.Errorf("a second sync: %q", r.stdout)
	}
	// Same size, other content: sent, by its MD5.
	writeFile(t, filepath.Join(src, "index.html"), []byte("<h1>two</h1>"))
	if r := mustRun(t, "s3", "sync", src, "s3://box/site/"); !strings.Contains(r.stdout, "1 uploaded, 0 deleted, 1 already the same") {
		t.Errorf("sync of a changed file of the same size: %q", r.stdout)
	}
	if b, _ := s.object(t, "box", "site/index.html"); string(b) != "<h1>two</h1>" {
		t.Errorf("site/index.html = %q after the sync", b)
	}
	// An extra object: kept without --delete, listed by --dry-run, then removed.
	writeFile(t, filepath.Join(src, "old.txt"), []byte("old"))
	mustRun(t, "s3", "cp", filepath.Join(src, "old.txt"), "s3://box/site/old.txt")
	os.Remove(filepath.Join(src, "old.txt"))
	mustRun(t, "s3", "sync", src, "s3://box/site/")
	if keys := s.keys(t, "box"); !slices.Contains(keys, "site/old.txt") {
		t.Errorf("sync without --delete removed an extra object: %v", keys)
	}
	if r := mustRun(t, "s3", "sync", src, "s3://box/site/", "--delete", "--dry-run"); !strings.Contains(r.stdout, "(dry run) delete old.txt") {
		t.Errorf("--dry-run: %q", r.stdout)
	}
	if keys := s.keys(t, "box"); !slices.Contains(keys, "site/old.txt") {
		t.Errorf("--dry-run deleted: %v", keys)
	}
	mustRun(t, "s3", "sync", src, "s3://box/site/", "--delete")
	if keys := s.keys(t, "box"); slices.Contains(keys, "site/old.txt") || len(keys) != 2 {
		t.Errorf("after sync --delete the bucket holds %v", keys)
	}

	// Back down, into a folder that does not exist yet.
	dst := filepath.Join(t.TempDir(), "restore")
	if r := mustRun(t, "s3", "sync", "s3://box/site/", dst); !strings.Contains(r.stdout, "2 downloaded, 0 deleted") {
		t.Errorf("sync down: %q", r.stdout)
	}
	for rel, want := range map[string]string{"index.html": "<h1>two</h1>", "css/site.css": "body{}"} {
		if b, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || string(b) != want {
			t.Errorf("%s after the sync down: %q, %v", rel, b, err)
		}
	}
	writeFile(t, filepath.Join(dst, "extra.txt"), []byte("x"))
	mustRun(t, "s3", "sync", "s3://box/site/", dst, "--delete")
	if _, err := os.Stat(filepath.Join(dst, "extra.txt")); !os.IsNotExist(err) {
		t.Errorf("sync down --delete left extra.txt (%v)", err)
	}

	wantFail(t, run(t, "s3", "sync", src, dst), 2, "s3://")
	wantFail(t, run(t, "s3", "sync", filepath.Join(src, "css", "site.css"), "s3://box/x/"), 2, "folder")
	wantFail(t, run(t, "s3", "sync", src, "s3://nosuch/"), 1, "nosuch")
}

// TestS3ParallelTransfers moves a folder of many files up and down with
// --parallel and checks every byte and the report.
func TestS3ParallelTransfers(t *testing.T) {
	s := newS3Cloud(t)
	mustRun(t, "s3", "mb", "many")
	src := t.TempDir()
	want := map[string]string{}
	for i := range 40 {
		rel := filepath.Join(fmt.Sprintf("d%d", i%4), fmt.Sprintf("f%02d.txt", i))
		body := strings.Repeat(fmt.Sprint(i), 100+i*37)
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(src, rel), []byte(body))
		want[filepath.ToSlash(rel)] = body
	}
	r := mustRun(t, "s3", "cp", src, "s3://many/up/", "--recursive", "--parallel", "8", "--json")
	var done []transfer
	if err := json.Unmarshal([]byte(r.stdout), &done); err != nil || len(done) != 40 {
		t.Fatalf("cp --parallel 8 --json: %d transfers, %v", len(done), err)
	}
	if !slices.IsSortedFunc(done, func(a, b transfer) int { return strings.Compare(a.Destination, b.Destination) }) {
		t.Errorf("the --json report is not in one order")
	}
	if keys := s.keys(t, "many"); len(keys) != 40 {
		t.Errorf("the bucket holds %d objects, want 40", len(keys))
	}
	dst := t.TempDir()
	mustRun(t, "s3", "cp", "s3://many/up/", dst, "--recursive", "--parallel", "6")
	for rel, body := range want {
		if b, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(rel))); err != nil || string(b) != body {
			t.Errorf("%s after the parallel download: %d bytes, %v", rel, len(b), err)
		}
	}
	// A sync up with --parallel sends only what changed.
	writeFile(t, filepath.Join(src, "d1", "f01.txt"), []byte("changed"))
	if r := mustRun(t, "s3", "sync", src, "s3://many/up/", "--parallel", "8"); !strings.Contains(r.stdout, "1 uploaded, 0 deleted, 39 already the same") {
		t.Errorf("sync --parallel: %q", r.stdout)
	}
	wantFail(t, run(t, "s3", "cp", src, "s3://many/x/", "-r", "--parallel", "0"), 2, "--parallel")
	wantFail(t, run(t, "s3", "sync", src, "s3://many/x/", "--parallel", "33"), 2, "--parallel")
	// A failure stops the transfers and is reported.
	wantFail(t, run(t, "s3", "cp", src, "s3://nosuch/", "-r", "--parallel", "4"), 1, "nosuch")
}
