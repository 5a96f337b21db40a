package cli

// Tests of `lattice s3` against a real cloud API: cloudstore (with object
// bodies and S3-key secrets) in a temporary directory, cloudapi over
// loopback HTTP, and the command line as a user runs it.

import (
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/accounts"
	"github.com/latticenet/lattice/cloud/cloudapi"
	"github.com/latticenet/lattice/cloud/cloudclient"
	"github.com/latticenet/lattice/cloud/cloudwire"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/internal/testkit/apitest"
)

// s3Cloud is a cloud API with one account, "acme", whose API key is in
// LATTICE_API_KEY (and the URL in LATTICE_API_URL), so commands need no
// flags.
type s3Cloud struct {
	url, key string
	st       *cloudstore.Store
	acc      *accounts.Store
	c        *cloudclient.Client // acme's
}

func newS3Cloud(t *testing.T) *s3Cloud {
	t.Helper()
	cleanEnv(t)
	dir := t.TempDir()
	st, err := cloudstore.OpenDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.OpenKMS(bytes.Repeat([]byte{5}, 32), nil); err != nil {
		t.Fatal(err)
	}
	acc := apitest.Accounts(t)
	_, key, err := acc.CreateKey("acme", "", false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(cloudapi.New(st, acc, cloudapi.Options{RatePerSecond: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(func() {
		srv.Close()
		st.Close()
	})
	t.Setenv("LATTICE_API_URL", srv.URL)
	t.Setenv("LATTICE_API_KEY", key)
	return &s3Cloud{srv.URL, key, st, acc, cloudclient.New(srv.URL, key, nil)}
}

// object returns the body of an object, failing the test if it cannot.
func (s *s3Cloud) object(t *testing.T, bucket, key string) ([]byte, cloudwire.ObjectInfo) {
	t.Helper()
	rc, info, err := s.c.Download(t.Context(), bucket, key)
	if err != nil {
		t.Fatalf("download s3://%s/%s: %v", bucket, key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data, info
}

// keys lists every key of bucket.
func (s *s3Cloud) keys(t *testing.T, bucket string) []string {
	t.Helper()
	l, err := s.c.Objects(t.Context(), bucket, cloudclient.ListOptions{PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range l.Data {
		keys = append(keys, o.Key)
	}
	return keys
}

// pattern returns n bytes that differ from one KiB to the next, so that a
// misplaced block shows.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i) ^ byte(i>>10) ^ seed
	}
	return b
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree reads every file under dir: relative path (with "/") to content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// names lists a directory's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestS3Help(t *testing.T) {
	cleanEnv(t)
	for _, args := range [][]string{{"s3"}, {"s3", "help"}, {"s3", "-h"}, {"s3", "--help"}} {
		r := mustRun(t, args...)
		for _, c := range s3Commands() {
			if !strings.Contains(r.stdout, "\n  "+c.name+" ") {
				t.Errorf("%v does not list %s:\n%s", args, c.name, r.stdout)
			}
		}
	}
	if r := mustRun(t, "help"); !regexp.MustCompile(`\n  s3 +buckets and objects`).MatchString(r.stdout) {
		t.Errorf("lattice help does not list s3:\n%s", r.stdout)
	}
	wantFail(t, run(t, "s3", "bogus"), 2, `unknown command "bogus"`, "lattice s3 help")
	// A command's -h prints its usage line and flags.
	r := run(t, "s3", "cp", "-h")
	if r.code != 0 || !strings.Contains(r.stdout, "Usage: lattice s3 cp SRC DST") || !strings.Contains(r.stdout, "-no-progress") {
		t.Errorf("s3 cp -h: exit %d, stdout %q", r.code, r.stdout)
	}
}

func TestS3Buckets(t *testing.T) {
	s := newS3Cloud(t)
	r := mustRun(t, "s3", "ls")
	if r.stdout != "" || !strings.Contains(r.stderr, "no buckets yet") {
		t.Errorf("ls with no bucket: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	var buckets []cloudwire.Bucket
	decode(t, mustRun(t, "s3", "ls", "--json"), &buckets)
	if buckets == nil || len(buckets) != 0 {
		t.Errorf("ls --json with no bucket = %v, want []", buckets)
	}

	if r := mustRun(t, "s3", "mb", "photos", "--notes", "holiday 2026"); r.stdout != "make_bucket: photos\n" {
		t.Errorf("mb printed %q", r.stdout)
	}
	var b cloudwire.Bucket
	decode(t, mustRun(t, "s3", "mb", "--json", "s3://docs"), &b)
	if b.Name != "docs" || b.IsPublic {
		t.Errorf("mb --json = %+v", b)
	}
	if got, err := s.c.Bucket(t.Context(), "photos"); err != nil || got.Notes != "holiday 2026" {
		t.Errorf("the bucket made = %+v, %v", got, err)
	}

	// public on and off.
	if r := mustRun(t, "s3", "public", "photos", "on"); !strings.Contains(r.stdout, "s3://photos is public") {
		t.Errorf("public on printed %q", r.stdout)
	}
	decode(t, mustRun(t, "s3", "public", "s3://docs", "off", "--json"), &b)
	if b.Name != "docs" || b.IsPublic {
		t.Errorf("public off --json = %+v", b)
	}

	// ls: a table of every bucket, by name.
	r = mustRun(t, "s3", "ls")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "NAME OBJECTS SIZE ACCESS CREATED" {
		t.Fatalf("ls printed:\n%s", r.stdout)
	}
	if f := strings.Fields(lines[1]); f[0] != "docs" || f[1] != "0" || f[4] != "private" {
		t.Errorf("ls line %q", lines[1])
	}
	if f := strings.Fields(lines[2]); f[0] != "photos" || f[4] != "public" {
		t.Errorf("ls line %q", lines[2])
	}
	buckets = nil
	decode(t, mustRun(t, "s3", "ls", "--json"), &buckets)
	if len(buckets) != 2 || buckets[0].Name != "docs" || !buckets[1].IsPublic {
		t.Errorf("ls --json = %+v", buckets)
	}

	// usage counts what cp put.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), []byte("12345"))
	mustRun(t, "s3", "cp", filepath.Join(dir, "a.txt"), "s3://photos/")
	r = mustRun(t, "s3", "usage")
	want := regexp.MustCompile(`(?m)^BUCKET +OBJECTS +SIZE\ndocs +0 +0 B\nphotos +1 +5 B\ntotal \(2 buckets\) +1 +5 B\n$`)
	if !want.MatchString(r.stdout) {
		t.Errorf("usage printed:\n%s", r.stdout)
	}
	var u cloudwire.Usage
	decode(t, mustRun(t, "s3", "usage", "--json"), &u)
	if u.TotalBytes != 5 || u.ObjectCount != 1 || u.BucketCount != 2 {
		t.Errorf("usage --json = %+v", u)
	}

	// rb: refused while the bucket holds objects; --force empties it.
	wantFail(t, run(t, "s3", "rb", "photos"), 1, `bucket "photos" is not empty`, "rb --force")
	if r := mustRun(t, "s3", "rb", "docs"); r.stdout != "remove_bucket: docs\n" {
		t.Errorf("rb printed %q", r.stdout)
	}
	r = mustRun(t, "s3", "rb", "photos", "--force")
	if r.stdout != "delete: s3://photos/a.txt\nremove_bucket: photos\n" {
		t.Errorf("rb --force printed %q", r.stdout)
	}
	wantFail(t, run(t, "s3", "rb", "photos"), 1, `bucket "photos" not found`)
	if l, err := s.c.Buckets(t.Context(), 1, 20); err != nil || len(l.Data) != 0 {
		t.Errorf("buckets left: %+v, %v", l, err)
	}

	// mb of a taken name (by any account) or a bad one.
	mustRun(t, "s3", "mb", "taken")
	wantFail(t, run(t, "s3", "mb", "taken"), 1, `bucket name "taken" is taken`)
	wantFail(t, run(t, "s3", "mb", "Bad_Name"), 1, `"Bad_Name"`)
}

func TestS3CopyFile(t *testing.T) {
	s := newS3Cloud(t)
	mustRun(t, "s3", "mb", "photos")
	dir := t.TempDir()
	small := filepath.Join(dir, "notes.txt")
	writeFile(t, small, []byte("hello\n"))
	bigData := pattern(300<<10+17, 1) // over the 64 KiB kept inline, not a multiple of any buffer
	big := filepath.Join(dir, "beach.jpg")
	writeFile(t, big, bigData)

	// To a "folder": the file's own name; to a key: that key.
	r := mustRun(t, "s3", "cp", small, "s3://photos/")
	if want := "upload: " + small + " to s3://photos/notes.txt  6 B in "; !strings.HasPrefix(r.stdout, want) || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("cp up printed %q, want %q...", r.stdout, want)
	}
	if r.stderr != "" {
		t.Errorf("cp up without a terminal wrote %q to stderr", r.stderr)
	}
	mustRun(t, "s3", "cp", big, "s3://photos/2026/day 1/beach.jpg")
	mustRun(t, "s3", "cp", small, "s3://photos/2026/")
	var ts []transfer
	decode(t, mustRun(t, "s3", "cp", "--json", big, "s3://photos/copy.jpg"), &ts)
	sum := fmt.Sprintf("%x", md5.Sum(bigData))
	if len(ts) != 1 || ts[0] != (transfer{"upload", big, "s3://photos/copy.jpg", int64(len(bigData)), sum}) {
		t.Errorf("cp --json = %+v", ts)
	}
	if got, want := strings.Join(s.keys(t, "photos"), ","), "2026/day 1/beach.jpg,2026/notes.txt,copy.jpg,notes.txt"; got != want {
		t.Errorf("keys = %s, want %s", got, want)
	}
	data, info := s.object(t, "photos", "2026/day 1/beach.jpg")
	if !bytes.Equal(data, bigData) || info.ContentType != "image/jpeg" {
		t.Errorf("the uploaded big file: %d bytes, type %q", len(data), info.ContentType)
	}
	if _, info := s.object(t, "photos", "notes.txt"); !strings.HasPrefix(info.ContentType, "text/plain") {
		t.Errorf("notes.txt has type %q", info.ContentType)
	}

	// Downloads: to a file, into a folder, over an existing file, to
	// stdout; byte for byte, and no temporary file left behind.
	out := t.TempDir()
	r = mustRun(t, "s3", "cp", "s3://photos/2026/day 1/beach.jpg", filepath.Join(out, "b.jpg"))
	if want := "download: s3://photos/2026/day 1/beach.jpg to " + filepath.Join(out, "b.jpg") + "  300.0 KiB in "; !strings.HasPrefix(r.stdout, want) {
		t.Errorf("cp down printed %q, want %q...", r.stdout, want)
	}
	mustRun(t, "s3", "cp", "s3://photos/2026/day 1/beach.jpg", out)
	writeFile(t, filepath.Join(out, "notes.txt"), []byte("an older, longer version\n"))
	mustRun(t, "s3", "cp", "s3://photos/notes.txt", out+string(filepath.Separator))
	mustRun(t, "s3", "cp", "s3://photos/notes.txt", filepath.Join(out, "new", "dir", "n.txt"))
	want := map[string]string{"b.jpg": string(bigData), "beach.jpg": string(bigData), "notes.txt": "hello\n", "new/dir/n.txt": "hello\n"}
	if got := tree(t, out); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("downloaded files: %v", names(t, out))
		for name := range got {
			if got[name] != want[name] {
				t.Errorf("%s holds %d bytes, want %d", name, len(got[name]), len(want[name]))
			}
		}
	}
	if st, err := os.Stat(filepath.Join(out, "b.jpg")); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("a downloaded file's mode = %v, %v; want 0644", st.Mode().Perm(), err)
	}
	r = mustRun(t, "s3", "cp", "s3://photos/copy.jpg", "-")
	if !bytes.Equal([]byte(r.stdout), bigData) {
		t.Errorf("cp to - wrote %d bytes, want the object's %d", len(r.stdout), len(bigData))
	}
	decode(t, mustRun(t, "s3", "cp", "s3://photos/notes.txt", filepath.Join(out, "j.txt"), "--json"), &ts)
	if len(ts) != 1 || ts[0] != (transfer{"download", "s3://photos/notes.txt", filepath.Join(out, "j.txt"), 6, fmt.Sprintf("%x", md5.Sum([]byte("hello\n")))}) {
		t.Errorf("cp down --json = %+v", ts)
	}

	// A copy on the server, within the bucket.
	if r := mustRun(t, "s3", "cp", "s3://photos/notes.txt", "s3://photos/old/"); !strings.HasPrefix(r.stdout, "copy: s3://photos/notes.txt to s3://photos/old/notes.txt  6 B") {
		t.Errorf("cp s3 to s3 printed %q", r.stdout)
	}
	if data, _ := s.object(t, "photos", "old/notes.txt"); string(data) != "hello\n" {
		t.Errorf("the copy holds %q", data)
	}
}

func TestS3CopyFolder(t *testing.T) {
	s := newS3Cloud(t)
	mustRun(t, "s3", "mb", "site")
	src := filepath.Join(t.TempDir(), "public")
	files := map[string]string{
		"index.html":             "<h1>hi</h1>",
		"css/site.css":           "body{}",
		"img/logo.png":           string(pattern(70<<10, 2)),
		"img/photos/big one.jpg": string(pattern(200<<10, 3)),
		"ünï/cödé.txt":           "utf-8",
		"empty":                  "",
	}
	for name, data := range files {
		writeFile(t, filepath.Join(src, filepath.FromSlash(name)), []byte(data))
	}
	if err := os.MkdirAll(filepath.Join(src, "nothing", "here"), 0o755); err != nil {
		t.Fatal(err)
	}

	// Without --recursive, a folder is refused.
	wantFail(t, run(t, "s3", "cp", src, "s3://site/"), 2, "is a folder", "--recursive")

	// The prefix gets its "/"; keys are the relative paths.
	r := mustRun(t, "s3", "cp", src, "s3://site/v1", "--recursive")
	if strings.Count(r.stdout, "upload: ") != len(files) || !strings.Contains(r.stdout, fmt.Sprintf("%d files, ", len(files))) {
		t.Errorf("cp -r printed:\n%s", r.stdout)
	}
	var want []string
	for name := range files {
		want = append(want, "v1/"+name)
	}
	sort.Strings(want)
	if got := s.keys(t, "site"); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("keys = %v, want %v", got, want)
	}
	// A key beside the prefix, which a download of v1 must not take.
	writeFile(t, filepath.Join(src, "x"), []byte("x"))
	mustRun(t, "s3", "cp", filepath.Join(src, "x"), "s3://site/v1.txt")

	// ls: one folder level with names relative to it; -r every key.
	r = mustRun(t, "s3", "ls", "site/v1/")
	re := regexp.MustCompile(`^ +PRE  css/\n\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +0 B  empty\n +PRE  img/\n\S+ \S+ +11 B  index.html\n +PRE  ünï/\n$`)
	if !re.MatchString(r.stdout) {
		t.Errorf("ls site/v1/ printed:\n%s", r.stdout)
	}
	r = mustRun(t, "s3", "ls", "s3://site/v1/img/p")
	if !regexp.MustCompile(`^ +PRE  photos/\n$`).MatchString(r.stdout) {
		t.Errorf("ls of a partial name printed:\n%s", r.stdout)
	}
	r = mustRun(t, "s3", "ls", "site", "-r")
	if got := strings.Count(r.stdout, "\n"); got != len(files)+1 || !strings.Contains(r.stdout, " 200.0 KiB  v1/img/photos/big one.jpg\n") {
		t.Errorf("ls -r printed:\n%s", r.stdout)
	}
	var l struct {
		Objects  []cloudwire.ObjectInfo `json:"objects"`
		Prefixes []string               `json:"prefixes"`
	}
	decode(t, mustRun(t, "s3", "ls", "site", "--json"), &l)
	if len(l.Objects) != 1 || l.Objects[0].Key != "v1.txt" || strings.Join(l.Prefixes, ",") != "v1/" {
		t.Errorf("ls --json = %+v", l)
	}

	// Download the prefix into a new folder: the same tree, byte for byte.
	dst := filepath.Join(t.TempDir(), "copy")
	r = mustRun(t, "s3", "cp", "-r", "s3://site/v1", dst)
	if strings.Count(r.stdout, "download: ") != len(files) {
		t.Errorf("cp -r down printed:\n%s", r.stdout)
	}
	got := tree(t, dst)
	if len(got) != len(files) {
		t.Errorf("downloaded %d files, want %d: %v", len(got), len(files), names(t, dst))
	}
	for name, data := range files {
		if got[name] != data {
			t.Errorf("downloaded %s: %d bytes, want %d", name, len(got[name]), len(data))
		}
	}
	// Folder objects become folders; the whole bucket downloads too.
	if _, err := s.c.Upload(t.Context(), "site", "v1/docs/", "", strings.NewReader(""), 0); err != nil {
		t.Fatal(err)
	}
	all := t.TempDir()
	mustRun(t, "s3", "cp", "s3://site", all, "--recursive")
	if st, err := os.Stat(filepath.Join(all, "v1", "docs")); err != nil || !st.IsDir() {
		t.Errorf("a folder object did not become a folder: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(all, "v1.txt")); err != nil || string(data) != "x" {
		t.Errorf("v1.txt: %q, %v", data, err)
	}
	var ts []transfer
	decode(t, mustRun(t, "s3", "cp", "-r", "--json", "s3://site/v1/css/", t.TempDir()), &ts)
	if len(ts) != 1 || ts[0].Source != "s3://site/v1/css/site.css" || ts[0].Size != 6 {
		t.Errorf("cp -r --json = %+v", ts)
	}

	// A download of an empty prefix says so and writes nothing.
	empty := filepath.Join(t.TempDir(), "none")
	r = mustRun(t, "s3", "cp", "-r", "s3://site/nothing/", empty)
	if !strings.Contains(r.stderr, "no objects under s3://site/nothing/") {
		t.Errorf("cp -r of nothing: stderr %q", r.stderr)
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("cp -r of nothing made %s: %v", empty, err)
	}
}

func TestS3Remove(t *testing.T) {
	s := newS3Cloud(t)
	mustRun(t, "s3", "mb", "box")
	for _, k := range []string{"a.txt", "dir/1", "dir/2", "dir/sub/3", "dirt"} {
		if _, err := s.c.Upload(t.Context(), "box", k, "", strings.NewReader(k), int64(len(k))); err != nil {
			t.Fatal(err)
		}
	}
	if r := mustRun(t, "s3", "rm", "s3://box/a.txt"); r.stdout != "delete: s3://box/a.txt\n" {
		t.Errorf("rm printed %q", r.stdout)
	}
	wantFail(t, run(t, "s3", "rm", "s3://box/a.txt"), 1, "object s3://box/a.txt not found")
	wantFail(t, run(t, "s3", "rm", "s3://box"), 2, "--recursive")
	// A prefix without --recursive: not an object, and a hint.
	wantFail(t, run(t, "s3", "rm", "s3://box/dir"), 1, "is not an object, but objects are under it", "--recursive")
	// -r on "dir" means the folder dir/, not "dirt".
	r := mustRun(t, "s3", "rm", "-r", "box/dir")
	if r.stdout != "delete: s3://box/dir/1\ndelete: s3://box/dir/2\ndelete: s3://box/dir/sub/3\n" {
		t.Errorf("rm -r printed %q", r.stdout)
	}
	if got := strings.Join(s.keys(t, "box"), ","); got != "dirt" {
		t.Errorf("keys after rm -r = %s, want dirt", got)
	}
	r = mustRun(t, "s3", "rm", "-r", "s3://box/dir/")
	if r.stdout != "" || !strings.Contains(r.stderr, "nothing to delete") {
		t.Errorf("rm -r of nothing: %q, %q", r.stdout, r.stderr)
	}
	var out struct {
		Deleted []string `json:"deleted"`
	}
	decode(t, mustRun(t, "s3", "rm", "-r", "s3://box/", "--json"), &out)
	if strings.Join(out.Deleted, ",") != "dirt" {
		t.Errorf("rm -r --json = %+v", out)
	}
	wantFail(t, run(t, "s3", "rm", "-r", "s3://nobucket/"), 1, `bucket "nobucket" not found`)
}

func TestS3Keys(t *testing.T) {
	s := newS3Cloud(t)
	r := mustRun(t, "s3", "keys", "create", "--name", "ci", "--permissions", "read", "--bucket", "photos")
	m := regexp.MustCompile(`^Access key ID:     (LK[0-9A-Z]{18})\nSecret access key: ([0-9A-Za-z]{40})\n$`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("keys create printed %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "shown only once") || !strings.Contains(r.stderr, "read, bucket photos") {
		t.Errorf("keys create stderr %q", r.stderr)
	}
	if k, secret, err := s.st.S3Secret(m[1]); err != nil || secret != m[2] || k.Permissions != "read" || k.BucketScope != "photos" || k.Name != "ci" {
		t.Errorf("the key made = %+v, secret %q, %v; printed %q", k, secret, err, m[2])
	}
	var k cloudwire.S3Key
	decode(t, mustRun(t, "s3", "keys", "create", "--json"), &k)
	if k.Permissions != "readwrite" || k.BucketScope != "*" || len(k.Secret) != 40 {
		t.Errorf("keys create --json = %+v", k)
	}

	r = mustRun(t, "s3", "keys", "list")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "ACCESS KEY ID NAME PERMISSIONS BUCKETS CREATED" ||
		!strings.HasPrefix(lines[1], k.AccessKeyID+"  ") || !strings.Contains(lines[2], m[1]) || strings.Contains(r.stdout, m[2]) {
		t.Errorf("keys list printed:\n%s", r.stdout)
	}
	var keys []cloudwire.S3Key
	decode(t, mustRun(t, "s3", "keys", "list", "--json"), &keys)
	if len(keys) != 2 || keys[1].AccessKeyID != m[1] || keys[0].Secret != "" {
		t.Errorf("keys list --json = %+v", keys)
	}

	if r := mustRun(t, "s3", "keys", "delete", m[1]); r.stdout != "deleted S3 key "+m[1]+"\n" {
		t.Errorf("keys delete printed %q", r.stdout)
	}
	wantFail(t, run(t, "s3", "keys", "delete", m[1]), 1, fmt.Sprintf("S3 key %q not found", m[1]))
	mustRun(t, "s3", "keys", "delete", k.AccessKeyID)
	r = mustRun(t, "s3", "keys", "list")
	if r.stdout != "" || !strings.Contains(r.stderr, "no S3 keys yet") {
		t.Errorf("keys list of none: %q, %q", r.stdout, r.stderr)
	}
	wantFail(t, run(t, "s3", "keys"), 2, "keys create")
	wantFail(t, run(t, "s3", "keys", "create", "--permissions", "all"), 2, "--permissions")
	wantFail(t, run(t, "s3", "keys", "create", "--bucket", ""), 2, "--bucket is empty")
	wantFail(t, run(t, "s3", "keys", "create", "--bucket", "Bad_Name"), 1, "bucketScope")
}

func TestS3Progress(t *testing.T) {
	newS3Cloud(t)
	t.Setenv("COLUMNS", "100")
	mustRun(t, "s3", "mb", "box")
	file := filepath.Join(t.TempDir(), "f.bin")
	writeFile(t, file, pattern(1<<20, 4))

	// --progress draws on stderr even though it is no terminal, and clears
	// its line; the summary stays on stdout.
	r := mustRun(t, "s3", "cp", "--progress", file, "s3://box/f.bin")
	if !strings.Contains(r.stderr, "\r") || !strings.Contains(r.stderr, "100%") || !strings.Contains(r.stderr, "1.0 MiB/1.0 MiB") {
		t.Errorf("cp --progress drew %q", r.stderr)
	}
	if !strings.HasSuffix(r.stderr, "\r"+strings.Repeat(" ", 99)+"\r") {
		t.Errorf("cp --progress did not clear its line: %q", r.stderr[max(0, len(r.stderr)-120):])
	}
	if !strings.HasPrefix(r.stdout, "upload: ") {
		t.Errorf("cp --progress stdout %q", r.stdout)
	}
	r = mustRun(t, "s3", "cp", "s3://box/f.bin", t.TempDir(), "--progress")
	if !strings.Contains(r.stderr, "s3://box/f.bin [") || !strings.Contains(r.stderr, "100%") {
		t.Errorf("cp down --progress drew %q", r.stderr)
	}
	// Otherwise nothing is drawn where no terminal is.
	for _, args := range [][]string{{"s3", "cp", file, "s3://box/g.bin"}, {"s3", "cp", "--no-progress", file, "s3://box/g.bin"}} {
		if r := mustRun(t, args...); r.stderr != "" {
			t.Errorf("%v drew %q", args, r.stderr)
		}
	}
	wantFail(t, run(t, "s3", "cp", "--progress", "--no-progress", file, "s3://box/"), 2, "contradict")
}

func TestS3Errors(t *testing.T) {
	s := newS3Cloud(t)
	mustRun(t, "s3", "mb", "box")
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	writeFile(t, file, []byte("f"))
	mustRun(t, "s3", "cp", file, "s3://box/f.txt")
	out := t.TempDir()
	_, other, err := s.acc.CreateKey("globex", "", false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		msgs []string
	}{
		{"ls a missing bucket", []string{"ls", "nobucket"}, 1, []string{`lattice s3: bucket "nobucket" not found`}},
		{"ls another account's bucket", []string{"ls", "box", "--api-key", other}, 1, []string{`bucket "box" not found`}},
		{"upload to a missing bucket", []string{"cp", file, "s3://nobucket/f"}, 1, []string{`bucket "nobucket" not found`}},
		{"download from a missing bucket", []string{"cp", "s3://nobucket/f", out}, 1, []string{`bucket "nobucket" not found`}},
		{"download a missing key", []string{"cp", "s3://box/missing.txt", filepath.Join(out, "missing.txt")}, 1, []string{"object s3://box/missing.txt not found"}},
		{"delete from a missing bucket", []string{"rm", "s3://nobucket/f"}, 1, []string{`bucket "nobucket" not found`}},
		{"download a missing key into a folder", []string{"cp", "s3://box/missing.txt", out}, 1, []string{"object s3://box/missing.txt not found"}},
		{"upload a missing file", []string{"cp", filepath.Join(dir, "nope"), "s3://box/"}, 1, []string{"nope", "no such file"}},
		{"s3:// alone", []string{"cp", file, "s3://"}, 2, []string{`"s3://" names no bucket`}},
		{"s3:///key", []string{"cp", "s3:///key", out}, 2, []string{"names no bucket"}},
		{"a bad bucket name", []string{"cp", file, "s3://Bad_Bucket/x"}, 2, []string{`"s3://Bad_Bucket/x"`}},
		{"no s3 URL", []string{"cp", file, out}, 2, []string{"s3://BUCKET/KEY"}},
		{"a bucket path without s3://", []string{"cp", "box/f.txt", out}, 2, []string{"did you mean s3://box/f.txt?"}},
		{"a bad key", []string{"cp", file, "s3://box/a//b"}, 1, []string{"segment"}},
		{"download a prefix without -r", []string{"cp", "s3://box/dir/", out}, 2, []string{"--recursive"}},
		{"recursive to stdout", []string{"cp", "-r", "s3://box/", "-"}, 2, []string{"folder"}},
		{"json to stdout", []string{"cp", "--json", "s3://box/f.txt", "-"}, 2, []string{"--json"}},
		{"between buckets", []string{"cp", "s3://box/f.txt", "s3://cab/f.txt"}, 2, []string{"between buckets"}},
		{"copy a missing object", []string{"cp", "s3://box/nope", "s3://box/x"}, 1, []string{"object s3://box/nope not found"}},
		{"one argument", []string{"cp", file}, 2, []string{"SRC and DST"}},
		{"rb a key", []string{"rb", "s3://box/f.txt"}, 2, []string{"lattice s3 rm"}},
		{"public maybe", []string{"public", "box", "maybe"}, 2, []string{"on or off"}},
		{"public of a missing bucket", []string{"public", "nobucket", "on"}, 1, []string{`bucket "nobucket" not found`}},
		{"usage with an argument", []string{"usage", "box"}, 2, []string{"no arguments"}},
		{"ls two arguments", []string{"ls", "a", "b"}, 2, []string{"at most one"}},
		{"unknown flag", []string{"ls", "--bogus"}, 2, []string{"bogus"}},
		{"a bad API key", []string{"ls", "--api-key", "lat_live_nope"}, 1, []string{"missing or invalid API key", "--api-key"}},
		{"no API key", []string{"ls", "--api-key", ""}, 2, []string{"--api-key (or LATTICE_API_KEY) is required"}},
		{"no server", []string{"ls", "--api", deadURL(t)}, 1, []string{"127.0.0.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "no API key" {
				t.Setenv("LATTICE_API_KEY", "")
			}
			r := run(t, append([]string{"s3"}, tt.args...)...)
			wantFail(t, r, tt.code, tt.msgs...)
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
	// No failed download left a file, whole or partial.
	if got := names(t, out); len(got) != 0 {
		t.Errorf("failed downloads left %v", got)
	}
	if got := strings.Join(s.keys(t, "box"), ","); got != "f.txt" {
		t.Errorf("keys after the failures = %s", got)
	}
}

func TestS3Presign(t *testing.T) {
	s := newS3Cloud(t)
	mustRun(t, "s3", "mb", "box")
	if _, err := s.c.Upload(t.Context(), "box", "dir/f.txt", "", strings.NewReader("hello"), 5); err != nil {
		t.Fatal(err)
	}

	// The URL alone on stdout; what it is for on stderr.
	r := mustRun(t, "s3", "presign", "s3://box/dir/f.txt")
	url := strings.TrimSuffix(r.stdout, "\n")
	if !strings.HasPrefix(url, "http") || strings.Contains(url, "\n") || !strings.Contains(r.stderr, "download s3://box/dir/f.txt until") {
		t.Fatalf("presign printed %q, stderr %q", r.stdout, r.stderr)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "hello" {
		t.Errorf("GET the presigned URL = %d %q", resp.StatusCode, body)
	}

	var p cloudwire.PresignedURL
	decode(t, mustRun(t, "s3", "presign", "box/new.txt", "--upload", "--expires", "10m", "--json"), &p)
	exp, err := time.Parse(time.RFC3339, p.Expires)
	if err != nil || p.Method != "PUT" || exp.After(time.Now().Add(11*time.Minute)) {
		t.Errorf("presign --upload --json = %+v, %v", p, err)
	}
	req, _ := http.NewRequest(p.Method, p.URL, strings.NewReader("put"))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if data, _ := s.object(t, "box", "new.txt"); resp.StatusCode/100 != 2 || string(data) != "put" {
		t.Errorf("PUT the presigned URL = %d, object %q", resp.StatusCode, data)
	}

	wantFail(t, run(t, "s3", "presign", "s3://box/dir/f.txt", "--expires", "8d"), 1, "7d")
	wantFail(t, run(t, "s3", "presign", "s3://box/"), 2, "names no object")
	wantFail(t, run(t, "s3", "presign", "s3://nobucket/x"), 1, `bucket "nobucket" not found`)
}

// TestS3KeysOnlyS3CanAddress: keys with empty, "." or ".." segments (made
// over the S3 endpoint) are skipped by rm -r and cp -r, which say so and
// fail, and never act on the object a cleaned path would name.
func TestS3KeysOnlyS3CanAddress(t *testing.T) {
	s := newS3Cloud(t)
	mustRun(t, "s3", "mb", "bkt")
	for _, k := range []string{"a", "x/../a", "c/d", "c//d"} {
		if _, err := s.st.Put(t.Context(), "acme", "bkt", k, strings.NewReader("body of "+k), cloudstore.PutOptions{ContentType: "text/plain", Max: 1 << 20, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.c.DeleteObject(t.Context(), "bkt", "x/../a"); !errors.Is(err, cloudclient.ErrKeyNotAddressable) {
		t.Fatalf("DeleteObject(x/../a) = %v", err)
	}
	dst := t.TempDir()
	r := run(t, "s3", "cp", "-r", "s3://bkt/", dst)
	wantFail(t, r, 1, "2 object(s) skipped")
	if !strings.Contains(r.stderr, "skipping s3://bkt/x/../a") || !strings.Contains(r.stderr, "skipping s3://bkt/c//d") {
		t.Errorf("cp -r stderr = %q", r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dst, "a")); string(got) != "body of a" {
		t.Errorf("downloaded a = %q", got)
	}
	r = run(t, "s3", "rm", "-r", "s3://bkt/")
	wantFail(t, r, 1, "2 object(s) skipped")
	l, err := s.st.ListObjects("acme", "bkt", "", "", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, o := range l.Objects {
		left = append(left, o.Key)
	}
	if strings.Join(left, ",") != "c//d,x/../a" {
		t.Fatalf("after rm -r: %v, want the two keys only S3 can address", left)
	}
}
