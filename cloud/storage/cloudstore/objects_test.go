package cloudstore

// Tests of object storage against a real Pebble database and a real blob
// directory: small bodies inline, large ones as files named by random ids,
// shared by copies and reference-counted, bounded uploads that leave
// nothing behind, key rules, tenancy, listings with delimiters and markers,
// OpenBlobs' clean-up, and durability across Close and Open.

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

// blobStore is a store with a blob directory, laid out as `lattice cloud`
// lays out its data dir: root/meta and root/objects.
type blobStore struct {
	*Store
	t     *testing.T
	root  string
	meta  string
	blobs string
}

// newBlobStore opens a store with blobs under a fresh directory, with
// acme's bucket "pics"; it is closed when the test ends (reopen replaces
// it).
func newBlobStore(t *testing.T) *blobStore {
	t.Helper()
	root := t.TempDir()
	b := &blobStore{t: t, root: root, meta: filepath.Join(root, "meta"), blobs: filepath.Join(root, "objects")}
	b.Store = openStore(t, b.meta)
	if err := b.OpenBlobs(b.blobs); err != nil {
		t.Fatalf("OpenBlobs: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	if _, err := b.CreateBucket("acme", "pics", "", t0); err != nil {
		t.Fatal(err)
	}
	return b
}

// reopen closes the store and opens it again on the same directories.
func (b *blobStore) reopen() {
	b.t.Helper()
	if err := b.Close(); err != nil {
		b.t.Fatalf("Close: %v", err)
	}
	b.Store = openStore(b.t, b.meta)
	if err := b.OpenBlobs(b.blobs); err != nil {
		b.t.Fatalf("OpenBlobs after reopening: %v", err)
	}
}

// put stores body as key in acme's pics with a generous limit.
func (b *blobStore) put(key string, body []byte) Object {
	b.t.Helper()
	o, err := b.Store.Put(context.Background(), "acme", "pics", key, bytes.NewReader(body), PutOptions{ContentType: "application/test", Max: 10 << 20, Now: t0})
	if err != nil {
		b.t.Fatalf("PutObject(%q, %d bytes): %v", key, len(body), err)
	}
	return o
}

// read returns key's body from acme's pics.
func (b *blobStore) read(key string) []byte {
	b.t.Helper()
	_, body, err := b.OpenObject(b.t.Context(), "acme", "pics", key)
	if err != nil {
		b.t.Fatalf("OpenObject(%q): %v", key, err)
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		b.t.Fatalf("reading %q: %v", key, err)
	}
	return data
}

// wantBody checks key's body.
func (b *blobStore) wantBody(key string, want []byte) {
	b.t.Helper()
	if got := b.read(key); !bytes.Equal(got, want) {
		b.t.Errorf("body of %q: %d bytes (md5 %s), want %d bytes (md5 %s)", key, len(got), md5hex(got), len(want), md5hex(want))
	}
}

// wantCounts checks the bucket's object count and byte total.
func (b *blobStore) wantCounts(what string, objects, bytes int64) {
	b.t.Helper()
	bk, err := b.Bucket("acme", "pics")
	if err != nil {
		b.t.Fatalf("%s: Bucket: %v", what, err)
	}
	if bk.Objects != objects || bk.Bytes != bytes {
		b.t.Errorf("%s: bucket object_count %d size_bytes %d, want %d and %d", what, bk.Objects, bk.Bytes, objects, bytes)
	}
}

// files returns the body files under the blob directory (not tmp), as
// shard/name paths, sorted.
func (b *blobStore) files() []string {
	b.t.Helper()
	var out []string
	shards, err := os.ReadDir(b.blobs)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, sh := range shards {
		if sh.Name() == "tmp" {
			continue
		}
		if !sh.IsDir() {
			out = append(out, sh.Name())
			continue
		}
		files, err := os.ReadDir(filepath.Join(b.blobs, sh.Name()))
		if err != nil {
			b.t.Fatal(err)
		}
		for _, f := range files {
			out = append(out, sh.Name()+"/"+f.Name())
		}
	}
	slices.Sort(out)
	return out
}

// tmpFiles returns what is in the blob directory's tmp.
func (b *blobStore) tmpFiles() []string {
	b.t.Helper()
	es, err := os.ReadDir(filepath.Join(b.blobs, "tmp"))
	if err != nil {
		b.t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// wantFiles checks the number of body files and that tmp is empty.
func (b *blobStore) wantFiles(what string, n int) []string {
	b.t.Helper()
	names := b.files()
	if len(names) != n {
		b.t.Errorf("%s: %d body files %v, want %d", what, len(names), names, n)
	}
	if tmp := b.tmpFiles(); len(tmp) != 0 {
		b.t.Errorf("%s: tmp holds %v, want nothing", what, tmp)
	}
	return names
}

func md5hex(b []byte) string {
	h := md5.Sum(b)
	return hex.EncodeToString(h[:])
}

// randomBody returns n random bytes.
func randomBody(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), uint64(time.Now().UnixNano())))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

var blobIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestPutObjectInline(t *testing.T) {
	b := newBlobStore(t)
	var total int64
	for i, n := range []int{0, 1, 1000, InlineMax - 1, InlineMax} {
		key := fmt.Sprintf("small/%d", n)
		body := randomBody(n)
		// A clock in another zone: the store keeps UTC.
		now := t0.Add(time.Duration(i) * time.Second).In(time.FixedZone("X", 3600))
		o, err := b.Store.Put(context.Background(), "acme", "pics", key, bytes.NewReader(body), PutOptions{ContentType: "text/plain", Max: InlineMax, Now: now})
		if err != nil {
			t.Fatalf("PutObject(%d bytes): %v", n, err)
		}
		total += int64(n)
		if o.Key != key || o.Size != int64(n) || o.ETag != md5hex(body) || o.ContentType != "text/plain" {
			t.Errorf("PutObject(%d bytes) = key %q size %d etag %s type %q", n, o.Key, o.Size, o.ETag, o.ContentType)
		}
		if !o.LastModified.Equal(now) || o.LastModified.Location() != time.UTC {
			t.Errorf("PutObject(%d bytes): LastModified %v, want %v in UTC", n, o.LastModified, now)
		}
		if o.Blob != "" || !bytes.Equal(o.Inline, body) {
			t.Errorf("PutObject(%d bytes): blob %q, inline %d bytes; want inline", n, o.Blob, len(o.Inline))
		}
		got, err := b.Object("acme", "pics", key)
		if err != nil || got.Size != o.Size || got.ETag != o.ETag || got.Blob != "" || !got.LastModified.Equal(now) {
			t.Errorf("Object(%q) = %+v, %v", key, got, err)
		}
		b.wantBody(key, body)
	}
	b.wantFiles("after inline puts", 0)
	b.wantCounts("after inline puts", 5, total)
}

func TestPutObjectFile(t *testing.T) {
	b := newBlobStore(t)
	var total int64
	seen := map[string]bool{}
	for i, n := range []int{InlineMax + 1, 200 << 10, 1 << 20} {
		key := fmt.Sprintf("big-%d.bin", i)
		body := randomBody(n)
		o := b.put(key, body)
		total += int64(n)
		if o.Size != int64(n) || o.ETag != md5hex(body) || o.Inline != nil {
			t.Errorf("PutObject(%d bytes) = size %d etag %s inline %d bytes", n, o.Size, o.ETag, len(o.Inline))
		}
		if !blobIDPattern.MatchString(o.Blob) || seen[o.Blob] {
			t.Fatalf("PutObject(%d bytes): blob id %q, want a fresh 32-hex id", n, o.Blob)
		}
		seen[o.Blob] = true
		path := filepath.Join(b.blobs, o.Blob[:2], o.Blob)
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(data, body) {
			t.Errorf("body file %s: %d bytes, %v; want the body", path, len(data), err)
		}
		if n, err := b.refs(o.Blob); err != nil || n != 1 {
			t.Errorf("refs(%s) = %d, %v; want 1", o.Blob, n, err)
		}
		b.wantBody(key, body)
	}
	names := b.wantFiles("after large puts", 3)
	for _, f := range names {
		if strings.Contains(f, "big") || !blobIDPattern.MatchString(filepath.Base(f)) {
			t.Errorf("body file %s is not named by a random id", f)
		}
	}
	b.wantCounts("after large puts", 3, total)
}

// TestOpenObjectRanges reads a large body whole and in ranges, as GET
// with a Range header does (Seek, then read), from the OS's file system
// and from an in-memory one. On the OS's, the body must stay what a TCP
// connection's ReadFrom can send with sendfile(2): a syscall.Conn, as an
// *os.File is.
func TestOpenObjectRanges(t *testing.T) {
	body := randomBody(InlineMax + 100<<10)
	mem := openWithBucket(t, vfs.NewMem())
	defer mem.Close()
	for _, tc := range []struct {
		name     string
		s        *Store
		sendfile bool
	}{
		{"disk", newBlobStore(t).Store, true},
		{"memory", mem, false},
	} {
		if _, err := tc.s.Put(context.Background(), "acme", "pics", "big", bytes.NewReader(body), PutOptions{ContentType: "", Max: 1 << 20, Now: t0}); err != nil {
			t.Fatalf("%s: PutObject: %v", tc.name, err)
		}
		_, r, err := tc.s.OpenObject(t.Context(), "acme", "pics", "big")
		if err != nil {
			t.Fatalf("%s: OpenObject: %v", tc.name, err)
		}
		if _, ok := r.(syscall.Conn); ok != tc.sendfile {
			t.Errorf("%s: the body is a %T; syscall.Conn %v, want %v", tc.name, r, ok, tc.sendfile)
		}
		for _, rg := range [][2]int{{0, len(body)}, {1, 1}, {InlineMax, 4096}, {len(body) - 10, 10}, {len(body), 0}} {
			if _, err := r.Seek(int64(rg[0]), io.SeekStart); err != nil {
				t.Fatalf("%s: Seek(%d): %v", tc.name, rg[0], err)
			}
			got, err := io.ReadAll(io.LimitReader(r, int64(rg[1])))
			if want := body[rg[0] : rg[0]+rg[1]]; err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: bytes %d+%d: %d bytes (md5 %s), %v; want %d bytes (md5 %s)", tc.name, rg[0], rg[1], len(got), md5hex(got), err, len(want), md5hex(want))
			}
		}
		if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("%s: Read at the end = %d, %v; want 0, EOF", tc.name, n, err)
		}
		r.Close()
	}
}

func TestETagIsHexMD5(t *testing.T) {
	b := newBlobStore(t)
	for i, tc := range []struct{ body, want string }{
		{"", "d41d8cd98f00b204e9800998ecf8427e"},
		{"a", "0cc175b9c0f1b6a831c399e269772661"},
		{"abc", "900150983cd24fb0d6963f7d28e17f72"},
		{"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
	} {
		if o := b.put(fmt.Sprint("k", i), []byte(tc.body)); o.ETag != tc.want {
			t.Errorf("ETag of %q = %s, want %s", tc.body, o.ETag, tc.want)
		}
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), (InlineMax/16)+100)
	if o := b.put("big", big); o.ETag != md5hex(big) || o.Blob == "" {
		t.Errorf("ETag of a file body = %s, want %s", o.ETag, md5hex(big))
	}
	if o, _ := b.Object("acme", "pics", "big"); o.ETag != md5hex(big) {
		t.Errorf("stored ETag of a file body = %s, want %s", o.ETag, md5hex(big))
	}
}

func TestOverwriteObject(t *testing.T) {
	b := newBlobStore(t)
	b.put("other", []byte("12345"))

	b.put("k", []byte("small"))
	b.wantCounts("small", 2, 10)
	b.wantFiles("small", 0)

	big1 := randomBody(100 << 10)
	o1 := b.put("k", big1)
	b.wantCounts("small -> large", 2, 5+int64(len(big1)))
	b.wantFiles("small -> large", 1)
	b.wantBody("k", big1)

	big2 := randomBody(150 << 10)
	o2 := b.put("k", big2)
	b.wantCounts("large -> large", 2, 5+int64(len(big2)))
	names := b.wantFiles("large -> large", 1)
	if len(names) == 1 && names[0] != o2.Blob[:2]+"/"+o2.Blob {
		t.Errorf("body file %s, want the new body %s", names[0], o2.Blob)
	}
	if _, err := os.Stat(filepath.Join(b.blobs, o1.Blob[:2], o1.Blob)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the replaced body file: %v, want it removed", err)
	}
	if n, _ := b.refs(o1.Blob); n != 0 {
		t.Errorf("refs of the replaced body = %d, want 0", n)
	}
	b.wantBody("k", big2)

	later := t0.Add(time.Hour)
	o3, err := b.Store.Put(context.Background(), "acme", "pics", "k", strings.NewReader("tiny"), PutOptions{ContentType: "text/x", Max: 100, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	b.wantCounts("large -> small", 2, 5+4)
	b.wantFiles("large -> small", 0)
	b.wantBody("k", []byte("tiny"))
	if got, _ := b.Object("acme", "pics", "k"); got.ContentType != "text/x" || got.ETag != o3.ETag || !got.LastModified.Equal(later) {
		t.Errorf("Object after overwrite = %+v", got)
	}
	if bk, _ := b.Bucket("acme", "pics"); !bk.UpdatedAt.Equal(later) {
		t.Errorf("bucket updated_at %v, want the last write %v", bk.UpdatedAt, later)
	}
}

func TestDeleteObject(t *testing.T) {
	b := newBlobStore(t)
	small := []byte("hello")
	big := randomBody(300 << 10)
	b.put("small", small)
	o := b.put("big", big)
	b.wantCounts("before", 2, int64(len(small)+len(big)))

	if _, err := b.Delete("acme", "pics", "big", DeleteOptions{}); err != nil {
		t.Fatalf("DeleteObject(big): %v", err)
	}
	b.wantFiles("after deleting big", 0)
	if _, err := os.Stat(filepath.Join(b.blobs, o.Blob[:2], o.Blob)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("body file after delete: %v, want gone", err)
	}
	if n, _ := b.refs(o.Blob); n != 0 {
		t.Errorf("refs after delete = %d", n)
	}
	b.wantCounts("after deleting big", 1, int64(len(small)))
	if _, err := b.Object("acme", "pics", "big"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Object of a deleted key = %v, want ErrNotFound", err)
	}
	if _, _, err := b.OpenObject(t.Context(), "acme", "pics", "big"); !errors.Is(err, ErrNotFound) {
		t.Errorf("OpenObject of a deleted key = %v, want ErrNotFound", err)
	}
	if _, err := b.Delete("acme", "pics", "big", DeleteOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("second DeleteObject = %v, want ErrNotFound", err)
	}
	if _, err := b.Delete("acme", "pics", "never", DeleteOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteObject of a missing key = %v, want ErrNotFound", err)
	}
	if err := b.DeleteBucket("acme", "pics"); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("DeleteBucket with an object left = %v, want ErrNotEmpty", err)
	}
	if _, err := b.Delete("acme", "pics", "small", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.wantCounts("empty", 0, 0)
	if err := b.DeleteBucket("acme", "pics"); err != nil {
		t.Errorf("DeleteBucket once empty = %v", err)
	}
	if _, err := b.Store.Put(context.Background(), "acme", "pics", "x", strings.NewReader("x"), PutOptions{ContentType: "", Max: 10, Now: t0}); !errors.Is(err, ErrNotFound) {
		t.Errorf("PutObject into a deleted bucket = %v, want ErrNotFound", err)
	}
	b.wantFiles("after the bucket went", 0)
}

func TestCopyObjectSharesFile(t *testing.T) {
	b := newBlobStore(t)
	big := randomBody(200 << 10)
	src := b.put("src", big)
	later := t0.Add(time.Minute)
	dst, err := b.Copy(context.Background(), "acme", "pics", "src", "pics", "dir/dst", later, CopyOptions{KeepEncryption: true})
	if err != nil {
		t.Fatalf("CopyObject: %v", err)
	}
	if dst.Key != "dir/dst" || dst.Blob != src.Blob || dst.ETag != src.ETag || dst.Size != src.Size ||
		dst.ContentType != src.ContentType || !dst.LastModified.Equal(later) {
		t.Errorf("CopyObject = %+v, want src's body %s at %v", dst, src.Blob, later)
	}
	b.wantFiles("after copy", 1)
	if n, _ := b.refs(src.Blob); n != 2 {
		t.Errorf("refs after copy = %d, want 2", n)
	}
	b.wantCounts("after copy", 2, 2*int64(len(big)))
	b.wantBody("src", big)
	b.wantBody("dir/dst", big)

	if _, err := b.Delete("acme", "pics", "src", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.wantFiles("after deleting the source", 1)
	b.wantBody("dir/dst", big)
	if n, _ := b.refs(src.Blob); n != 1 {
		t.Errorf("refs after deleting one = %d, want 1", n)
	}
	if _, err := b.Delete("acme", "pics", "dir/dst", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.wantFiles("after deleting both", 0)
	if n, _ := b.refs(src.Blob); n != 0 {
		t.Errorf("refs after deleting both = %d, want 0", n)
	}
	b.wantCounts("after deleting both", 0, 0)
}

func TestCopyObjectMore(t *testing.T) {
	b := newBlobStore(t)
	small := []byte("small body")
	b.put("small", small)
	if o, err := b.Copy(context.Background(), "acme", "pics", "small", "pics", "small-copy", t0, CopyOptions{KeepEncryption: true}); err != nil || o.Blob != "" || o.ETag != md5hex(small) {
		t.Errorf("CopyObject of an inline object = %+v, %v", o, err)
	}
	b.wantBody("small-copy", small)
	b.wantFiles("inline copy", 0)

	// Copying onto an object with its own body file drops that file.
	own := b.put("dst", randomBody(100<<10))
	big := randomBody(120 << 10)
	src := b.put("src", big)
	if _, err := b.Copy(context.Background(), "acme", "pics", "src", "pics", "dst", t0, CopyOptions{KeepEncryption: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b.blobs, own.Blob[:2], own.Blob)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dst's old body file after a copy onto it: %v, want gone", err)
	}
	b.wantFiles("copy onto a large object", 1)
	b.wantBody("dst", big)
	b.wantCounts("copy onto a large object", 4, 2*int64(len(small))+2*int64(len(big)))

	// Errors.
	if _, err := b.Copy(context.Background(), "acme", "pics", "missing", "pics", "x", t0, CopyOptions{KeepEncryption: true}); !errors.Is(err, ErrNotFound) {
		t.Errorf("CopyObject of a missing source = %v, want ErrNotFound", err)
	}
	for _, bad := range []string{"", "a\x00b", strings.Repeat("k", MaxKeyLen+1), "\xff"} {
		if _, err := b.Copy(context.Background(), "acme", "pics", "src", "pics", bad, t0, CopyOptions{KeepEncryption: true}); err == nil {
			t.Errorf("CopyObject to %q succeeded", bad)
		}
	}
	if _, err := b.Copy(context.Background(), "globex", "pics", "src", "pics", "theirs", t0, CopyOptions{KeepEncryption: true}); !errors.Is(err, ErrNotFound) {
		t.Errorf("CopyObject in another account's bucket = %v, want ErrNotFound", err)
	}
	if n, _ := b.refs(src.Blob); n != 2 {
		t.Errorf("refs after failed copies = %d, want 2", n)
	}
	b.wantCounts("after failed copies", 4, 2*int64(len(small))+2*int64(len(big)))
}

// TestCopyObjectOntoSameBody copies an object onto itself, and onto a copy
// that already shares its body: the reference count must stay the number of
// objects using the body, so that deleting them all removes the file.
func TestCopyObjectOntoSameBody(t *testing.T) {
	b := newBlobStore(t)
	big := randomBody(100 << 10)
	o := b.put("a", big)

	if _, err := b.Copy(context.Background(), "acme", "pics", "a", "pics", "a", t0.Add(time.Second), CopyOptions{KeepEncryption: true}); err != nil {
		t.Fatalf("CopyObject onto itself: %v", err)
	}
	if n, _ := b.refs(o.Blob); n != 1 {
		t.Errorf("refs after copying an object onto itself = %d, want 1", n)
	}
	b.wantCounts("self copy", 1, int64(len(big)))
	b.wantBody("a", big)

	if _, err := b.Copy(context.Background(), "acme", "pics", "a", "pics", "b", t0, CopyOptions{KeepEncryption: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Copy(context.Background(), "acme", "pics", "a", "pics", "b", t0, CopyOptions{KeepEncryption: true}); err != nil {
		t.Fatalf("copying again onto a copy: %v", err)
	}
	if n, _ := b.refs(o.Blob); n != 2 {
		t.Errorf("refs with two objects after copying twice = %d, want 2", n)
	}
	b.wantCounts("copied twice", 2, 2*int64(len(big)))
	for _, k := range []string{"a", "b"} {
		if _, err := b.Delete("acme", "pics", k, DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	b.wantFiles("after deleting every object using the body", 0)
	b.reopen() // OpenBlobs must not be what saves the day: it keeps referenced files
	b.wantFiles("after reopening", 0)
}

func TestPutObjectTooLarge(t *testing.T) {
	b := newBlobStore(t)
	for _, tc := range []struct {
		max  int64
		size int
	}{{0, 1}, {100, 101}, {100, 5000}, {InlineMax, InlineMax + 1}, {InlineMax + 10, InlineMax + 11}, {200 << 10, 300 << 10}} {
		key := fmt.Sprintf("k-%d-%d", tc.max, tc.size)
		_, err := b.Store.Put(context.Background(), "acme", "pics", key, bytes.NewReader(randomBody(tc.size)), PutOptions{ContentType: "", Max: tc.max, Now: t0})
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("PutObject of %d bytes with max %d = %v, want ErrTooLarge", tc.size, tc.max, err)
		}
		if _, err := b.Object("acme", "pics", key); !errors.Is(err, ErrNotFound) {
			t.Errorf("object refused as too large: Object = %v, want ErrNotFound", err)
		}
	}
	b.wantFiles("after refusals", 0)
	b.wantCounts("after refusals", 0, 0)
	if l, _ := b.ListObjects("acme", "pics", "", "", "", 100); len(l.Objects) != 0 {
		t.Errorf("listing after refusals = %+v", l)
	}

	// Exactly max is allowed.
	for _, n := range []int{100, InlineMax + 10} {
		if _, err := b.Store.Put(context.Background(), "acme", "pics", fmt.Sprint("exact-", n), bytes.NewReader(randomBody(n)), PutOptions{ContentType: "", Max: int64(n), Now: t0}); err != nil {
			t.Errorf("PutObject of exactly max (%d) bytes = %v", n, err)
		}
	}
	b.wantFiles("exact puts", 1)

	// A refused overwrite keeps the object that was there.
	keep := randomBody(InlineMax + 10)
	b.put("keep", keep)
	if _, err := b.Store.Put(context.Background(), "acme", "pics", "keep", bytes.NewReader(randomBody(InlineMax+100)), PutOptions{ContentType: "", Max: InlineMax + 50, Now: t0}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too large overwrite = %v", err)
	}
	b.wantBody("keep", keep)
	b.wantFiles("after a refused overwrite", 2)
	b.wantCounts("after a refused overwrite", 3, 100+2*int64(InlineMax+10))
}

// failingReader returns n bytes, then an error.
type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errors.New("connection reset")
	}
	m := min(len(p), r.n)
	for i := range p[:m] {
		p[i] = 'x'
	}
	r.n -= m
	return m, nil
}

func TestPutObjectInterrupted(t *testing.T) {
	b := newBlobStore(t)
	// The client's failure, not the disk's (IncompleteBody, not a 500),
	// whether it cuts the inline head or the body file short.
	for _, n := range []int{0, 10, 200 << 10} {
		if _, err := b.Store.Put(context.Background(), "acme", "pics", "k", &failingReader{n}, PutOptions{ContentType: "", Max: 1 << 20, Now: t0}); !errors.Is(err, ErrBody) {
			t.Errorf("PutObject with a body failing after %d bytes: got %v, want ErrBody", n, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Store.Put(ctx, "acme", "pics", "k", bytes.NewReader(randomBody(100<<10)), PutOptions{ContentType: "", Max: 1 << 20, Now: t0}); !errors.Is(err, context.Canceled) {
		t.Errorf("PutObject with a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := b.Object("acme", "pics", "k"); !errors.Is(err, ErrNotFound) {
		t.Errorf("interrupted upload visible: %v", err)
	}
	b.wantFiles("after interrupted uploads", 0)
	b.wantCounts("after interrupted uploads", 0, 0)
}

func TestValidObjectKey(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"", false},
		{"a", true},
		{strings.Repeat("k", MaxKeyLen), true},
		{strings.Repeat("k", MaxKeyLen+1), false},
		{strings.Repeat("é", MaxKeyLen/2), true},        // 1024 bytes
		{strings.Repeat("é", MaxKeyLen/2) + "a", false}, // 1025 bytes
		{"a\x00b", false},
		{"a\nb", false},
		{"a\tb", false},
		{"\x1f", false},
		{"a\x7fb", false},
		{"\xff", false},
		{"a\xc3", false},           // truncated sequence
		{"\xed\xa0\x80", false},    // a surrogate
		{"a\u0085b", true},         // C1 controls are not refused
		{"../../etc/passwd", true}, // just a key
		{"/leading/slash", true},
		{"a//b", true},
		{"folder/", true},
		{"日本語/ファイル.txt", true},
		{"with space & ?#%", true},
		{".", true},
		{"..", true},
	} {
		err := storagenames.ValidObjectKey(tc.key)
		if (err == nil) != tc.ok {
			t.Errorf("ValidObjectKey(%q) = %v, want ok %v", tc.key, err, tc.ok)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "object key") {
			t.Errorf("ValidObjectKey(%q) error %q does not begin with \"object key\" (the API maps on it)", tc.key, err)
		}
	}
}

func TestPutObjectRefusesInvalidKeys(t *testing.T) {
	b := newBlobStore(t)
	for _, key := range []string{"", strings.Repeat("k", MaxKeyLen+1), "a\x00b", "line\nbreak", "del\x7f", "\xff\xfe", "a\xc3"} {
		for _, n := range []int{5, 100 << 10} {
			if _, err := b.Store.Put(context.Background(), "acme", "pics", key, bytes.NewReader(randomBody(n)), PutOptions{ContentType: "", Max: 1 << 20, Now: t0}); err == nil {
				t.Errorf("PutObject(%q) succeeded", key)
			}
		}
	}
	b.wantFiles("after invalid keys", 0)
	b.wantCounts("after invalid keys", 0, 0)
}

// TestKeysStayInsideTheBlobDir stores bodies under keys that look like
// paths: every file must be a body file named by id inside the blob
// directory, whatever the key.
func TestKeysStayInsideTheBlobDir(t *testing.T) {
	b := newBlobStore(t)
	keys := []string{"../../etc/passwd", "../../../../../../tmp/escape", "/etc/shadow", "..", ".", "a/../../b",
		"tmp/x", "tmp/../../x", "aa/bb", strings.Repeat("../", 300) + "deep"}
	bodies := map[string][]byte{}
	for _, k := range keys {
		bodies[k] = randomBody(InlineMax + 1 + len(k))
		b.put(k, bodies[k])
	}
	for _, k := range keys {
		b.wantBody(k, bodies[k])
	}
	b.wantFiles("after path-like keys", len(keys))
	// Nothing anywhere under root but the database and body files.
	err := filepath.WalkDir(b.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(b.root, path)
		parts := strings.Split(rel, string(filepath.Separator))
		switch {
		case parts[0] == "meta":
		case parts[0] == "objects" && len(parts) == 3 && blobIDPattern.MatchString(parts[2]) && parts[1] == parts[2][:2]:
		default:
			t.Errorf("unexpected file %s", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(b.root, "..", "etc"), filepath.Join(b.root, "..", "..", "etc", "passwd.lattice"), filepath.Join(b.root, "deep")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists", p)
		}
	}
	l, err := b.ListObjects("acme", "pics", "", "", "", 100)
	if err != nil || len(l.Objects) != len(keys) {
		t.Errorf("listing of path-like keys: %d objects, %v", len(l.Objects), err)
	}
}

func TestObjectTenancy(t *testing.T) {
	b := newBlobStore(t)
	big := randomBody(100 << 10)
	b.put("secret", big)
	if _, err := b.CreateBucket("globex", "theirs", "", t0); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, acct := range []string{"globex", "ACME", ""} {
		if _, err := b.Store.Put(ctx, acct, "pics", "secret", strings.NewReader("overwrite"), PutOptions{ContentType: "", Max: 100, Now: t0}); !errors.Is(err, ErrNotFound) {
			t.Errorf("%q: PutObject into acme's bucket = %v, want ErrNotFound", acct, err)
		}
		if _, err := b.Store.Put(ctx, acct, "pics", "large", bytes.NewReader(randomBody(100<<10)), PutOptions{ContentType: "", Max: 1 << 20, Now: t0}); !errors.Is(err, ErrNotFound) {
			t.Errorf("%q: large PutObject into acme's bucket = %v, want ErrNotFound", acct, err)
		}
		if _, err := b.Object(acct, "pics", "secret"); !errors.Is(err, ErrNotFound) {
			t.Errorf("%q: Object = %v, want ErrNotFound", acct, err)
		}
		if _, _, err := b.OpenObject(t.Context(), acct, "pics", "secret"); !errors.Is(err, ErrNotFound) {
			t.Errorf("%q: OpenObject = %v, want ErrNotFound", acct, err)
		}
		if _, err := b.Delete(acct, "pics", "secret", DeleteOptions{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("%q: DeleteObject = %v, want ErrNotFound", acct, err)
		}
		if _, err := b.Copy(context.Background(), acct, "pics", "secret", "pics", "mine", t0, CopyOptions{KeepEncryption: true}); !errors.Is(err, ErrNotFound) {
			t.Errorf("%q: CopyObject = %v, want ErrNotFound", acct, err)
		}
		if _, err := b.ListObjects(acct, "pics", "", "", "", 10); !errors.Is(err, ErrNotFound) {
			t.Errorf("%q: ListObjects = %v, want ErrNotFound", acct, err)
		}
	}
	// A missing bucket answers the same.
	if _, err := b.Store.Put(ctx, "acme", "nope", "k", strings.NewReader("x"), PutOptions{ContentType: "", Max: 10, Now: t0}); !errors.Is(err, ErrNotFound) {
		t.Errorf("PutObject into a missing bucket = %v", err)
	}
	if _, err := b.ListObjects("acme", "nope", "", "", "", 10); !errors.Is(err, ErrNotFound) {
		t.Errorf("ListObjects of a missing bucket = %v", err)
	}
	b.wantBody("secret", big)
	b.wantCounts("after another account's attempts", 1, int64(len(big)))
	b.wantFiles("after another account's attempts", 1)
	if bk, _ := b.Bucket("globex", "theirs"); bk.Objects != 0 {
		t.Errorf("globex's bucket = %+v", bk)
	}
}

// listingOf renders a listing as "key key prefix/ | next" for comparison.
func listingOf(l Listing) string {
	var parts []string
	for _, o := range l.Objects {
		parts = append(parts, o.Key)
	}
	for _, p := range l.Prefixes {
		parts = append(parts, "P:"+p)
	}
	return strings.Join(parts, " ") + " | " + l.NextMarker
}

var listKeys = []string{
	"a.txt",
	"photos/",
	"photos/2024/x.jpg",
	"photos/2024/y.jpg",
	"photos/2025/z.jpg",
	"photos/cover.jpg",
	"photos0",
	"videos/v.mp4",
	"videos/w/1.mp4",
	"z",
}

func newListStore(t *testing.T) *blobStore {
	b := newBlobStore(t)
	for i, k := range listKeys {
		body := []byte(k)
		if i%4 == 0 {
			body = randomBody(InlineMax + 1)
		}
		b.put(k, body)
	}
	// A neighbouring bucket whose name extends this one's must not leak in.
	if _, err := b.CreateBucket("acme", "pics-2", "", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.Put(context.Background(), "acme", "pics-2", "a.txt", strings.NewReader("other"), PutOptions{ContentType: "", Max: 100, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateBucket("acme", "pic", "", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.Put(context.Background(), "acme", "pic", "zzz", strings.NewReader("other"), PutOptions{ContentType: "", Max: 100, Now: t0}); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestListObjects(t *testing.T) {
	b := newListStore(t)
	for _, tc := range []struct {
		prefix, delim, marker string
		max                   int
		want                  string
	}{
		{"", "", "", 100, strings.Join(listKeys, " ") + " | "},
		{"photos/", "", "", 100, "photos/ photos/2024/x.jpg photos/2024/y.jpg photos/2025/z.jpg photos/cover.jpg | "},
		{"photos", "", "", 100, "photos/ photos/2024/x.jpg photos/2024/y.jpg photos/2025/z.jpg photos/cover.jpg photos0 | "},
		{"photos/2024/", "", "", 100, "photos/2024/x.jpg photos/2024/y.jpg | "},
		{"nothing", "", "", 100, " | "},
		{"", "/", "", 100, "a.txt photos0 z P:photos/ P:videos/ | "},
		{"photos/", "/", "", 100, "photos/ photos/cover.jpg P:photos/2024/ P:photos/2025/ | "},
		{"photos", "/", "", 100, "photos0 P:photos/ | "},
		{"videos/", "/", "", 100, "videos/v.mp4 P:videos/w/ | "},
		{"", ".", "", 100, "photos/ photos0 z P:a. P:photos/2024/x. P:photos/2024/y. P:photos/2025/z. P:photos/cover. P:videos/v. P:videos/w/1. | "},
		{"", "20", "", 100, "a.txt photos/ photos/cover.jpg photos0 videos/v.mp4 videos/w/1.mp4 z P:photos/20 | "},
		// max and NextMarker.
		{"", "", "", 3, "a.txt photos/ photos/2024/x.jpg | photos/2024/x.jpg"},
		{"", "", "", len(listKeys), strings.Join(listKeys, " ") + " | "},
		{"", "", "", len(listKeys) - 1, strings.Join(listKeys[:len(listKeys)-1], " ") + " | videos/w/1.mp4"},
		{"", "/", "", 2, "a.txt P:photos/ | photos/"},
		{"", "/", "", 4, "a.txt photos0 P:photos/ P:videos/ | videos/"},
		// Markers: strictly after.
		{"", "", "photos/2024/x.jpg", 2, "photos/2024/y.jpg photos/2025/z.jpg | photos/2025/z.jpg"},
		{"", "", "photos/2", 100, "photos/2024/x.jpg photos/2024/y.jpg photos/2025/z.jpg photos/cover.jpg photos0 videos/v.mp4 videos/w/1.mp4 z | "},
		{"", "", "z", 100, " | "},
		{"", "", "zz", 100, " | "},
		{"", "", "\x00", 100, strings.Join(listKeys, " ") + " | "},
		// A marker of 0xff bytes (no key holds one: keys are UTF-8) is
		// after every key, as a common prefix too.
		{"", "", "\xff", 100, " | "},
		{"", "\xff", "\xff", 100, " | "},
		{"", "\xff", "\xff\xff", 100, " | "},
		// A marker that is a common prefix skips everything under it.
		{"", "/", "photos/", 100, "photos0 z P:videos/ | "},
		{"", "/", "videos/", 100, "z | "},
		{"photos/", "/", "photos/2024/", 100, "photos/cover.jpg P:photos/2025/ | "},
		// A marker equal to the prefix is an object (a folder), not a
		// common prefix: what follows it is listed.
		{"photos/", "/", "photos/", 100, "photos/cover.jpg P:photos/2024/ P:photos/2025/ | "},
		// Without a delimiter the same marker is just a key.
		{"", "", "photos/", 2, "photos/2024/x.jpg photos/2024/y.jpg | photos/2024/y.jpg"},
		// A marker before the prefix lists the whole prefix; one after it nothing.
		{"photos/", "/", "a", 100, "photos/ photos/cover.jpg P:photos/2024/ P:photos/2025/ | "},
		{"photos/", "", "q", 100, " | "},
	} {
		l, err := b.ListObjects("acme", "pics", tc.prefix, tc.delim, tc.marker, tc.max)
		if err != nil {
			t.Errorf("ListObjects(%q, %q, %q, %d): %v", tc.prefix, tc.delim, tc.marker, tc.max, err)
			continue
		}
		if got := listingOf(l); got != tc.want {
			t.Errorf("ListObjects(prefix %q, delimiter %q, marker %q, max %d)\n got %s\nwant %s", tc.prefix, tc.delim, tc.marker, tc.max, got, tc.want)
		}
		for _, o := range l.Objects {
			if o.Inline != nil {
				t.Errorf("listed %q with its inline body", o.Key)
			}
			if o.ETag == "" || o.LastModified.IsZero() {
				t.Errorf("listed %q without metadata: %+v", o.Key, o)
			}
		}
	}
	if l, _ := b.ListObjects("acme", "pics-2", "", "", "", 100); listingOf(l) != "a.txt | " {
		t.Errorf("pics-2 = %s", listingOf(l))
	}
	if l, _ := b.ListObjects("acme", "pic", "", "", "", 100); listingOf(l) != "zzz | " {
		t.Errorf("pic = %s", listingOf(l))
	}
}

// TestListObjectsPaging walks every listing page by page, with the
// NextMarker of each page as the next marker: the pages must add up to the
// listing in one go, for every prefix, delimiter and page size.
func TestListObjectsPaging(t *testing.T) {
	b := newListStore(t)
	for _, prefix := range []string{"", "photos/", "photos", "videos/", "photos/2024/", "x"} {
		for _, delim := range []string{"", "/", "20"} {
			full, err := b.ListObjects("acme", "pics", prefix, delim, "", 1000)
			if err != nil {
				t.Fatal(err)
			}
			want := entriesOf(full)
			for max := 1; max <= 4; max++ {
				var got []string
				marker := ""
				for page := 0; ; page++ {
					if page > len(listKeys)+1 {
						t.Fatalf("prefix %q delimiter %q max %d: paging does not end", prefix, delim, max)
					}
					l, err := b.ListObjects("acme", "pics", prefix, delim, marker, max)
					if err != nil {
						t.Fatal(err)
					}
					if n := len(l.Objects) + len(l.Prefixes); n > max {
						t.Errorf("page of %d entries with max %d", n, max)
					}
					got = append(got, entriesOf(l)...)
					if l.NextMarker == "" {
						break
					}
					marker = l.NextMarker
				}
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("prefix %q delimiter %q, pages of %d:\n got %v\nwant %v", prefix, delim, max, got, want)
				}
			}
		}
	}
}

// entriesOf lists a page's objects and prefixes merged in key order.
func entriesOf(l Listing) []string {
	var out []string
	for _, o := range l.Objects {
		out = append(out, o.Key)
	}
	for _, p := range l.Prefixes {
		out = append(out, "P:"+p)
	}
	slices.SortFunc(out, func(a, b string) int {
		return strings.Compare(strings.TrimPrefix(a, "P:"), strings.TrimPrefix(b, "P:"))
	})
	return out
}

func TestOpenBlobsCleansUp(t *testing.T) {
	b := newBlobStore(t)
	big := randomBody(150 << 10)
	kept := b.put("kept", big)
	if _, err := b.Copy(context.Background(), "acme", "pics", "kept", "pics", "kept-copy", t0, CopyOptions{KeepEncryption: true}); err != nil {
		t.Fatal(err)
	}
	other := randomBody(80 << 10)
	otherObj := b.put("other", other)
	deleted := b.put("deleted", randomBody(70<<10))
	deletedPath := filepath.Join(b.blobs, deleted.Blob[:2], deleted.Blob)
	deletedBody, _ := os.ReadFile(deletedPath)
	if _, err := b.Delete("acme", "pics", "deleted", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	// What a crash leaves: uploads cut short in tmp, a body renamed into
	// place whose record never committed, a deleted object's file whose
	// removal never happened.
	plant := func(path string, data []byte) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	plant(filepath.Join(b.blobs, "tmp", "up-123456"), randomBody(1000))
	plant(filepath.Join(b.blobs, "tmp", "up-999"), nil)
	orphan := "ff" + strings.Repeat("0", 30)
	plant(filepath.Join(b.blobs, "ff", orphan), randomBody(100<<10))
	sameShard := kept.Blob[:2] + strings.Repeat("e", 30)
	plant(filepath.Join(b.blobs, kept.Blob[:2], sameShard), randomBody(100))
	plant(deletedPath, deletedBody)

	b.Store = openStore(t, b.meta)
	if err := b.OpenBlobs(b.blobs); err != nil {
		t.Fatalf("OpenBlobs: %v", err)
	}
	names := b.wantFiles("after OpenBlobs", 2)
	want := []string{kept.Blob[:2] + "/" + kept.Blob, otherObj.Blob[:2] + "/" + otherObj.Blob}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("body files after OpenBlobs = %v, want the referenced %v", names, want)
	}
	b.wantBody("kept", big)
	b.wantBody("kept-copy", big)
	b.wantBody("other", other)
	if n, _ := b.refs(kept.Blob); n != 2 {
		t.Errorf("refs of the shared body after reopening = %d, want 2", n)
	}
	// The tmp directory is still usable.
	b.put("after", randomBody(90<<10))
	b.wantFiles("after a put", 3)
}

func TestOpenBlobsOnFreshDir(t *testing.T) {
	root := t.TempDir()
	s := openStore(t, filepath.Join(root, "meta"))
	defer s.Close()
	dir := filepath.Join(root, "a", "b", "objects")
	if err := s.OpenBlobs(dir); err != nil {
		t.Fatalf("OpenBlobs on a missing directory: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "tmp")); err != nil || !fi.IsDir() {
		t.Errorf("tmp not created: %v", err)
	}
}

func TestObjectsSurviveReopen(t *testing.T) {
	b := newBlobStore(t)
	small := []byte("small")
	big := randomBody(250 << 10)
	replaced := randomBody(100 << 10)
	b.put("small", small)
	bigObj := b.put("big", big)
	if _, err := b.Copy(context.Background(), "acme", "pics", "big", "pics", "copy/of/big", t0.Add(time.Minute), CopyOptions{KeepEncryption: true}); err != nil {
		t.Fatal(err)
	}
	b.put("replaced", replaced)
	final := randomBody(90 << 10)
	finalObj, err := b.Store.Put(context.Background(), "acme", "pics", "replaced", bytes.NewReader(final), PutOptions{ContentType: "image/png", Max: 1 << 20, Now: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	b.put("gone", randomBody(100<<10))
	if _, err := b.Delete("acme", "pics", "gone", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.put("folder/", nil)
	wantBytes := int64(len(small) + 2*len(big) + len(final))

	b.reopen()
	b.wantCounts("after reopening", 5, wantBytes)
	b.wantFiles("after reopening", 2)
	b.wantBody("small", small)
	b.wantBody("big", big)
	b.wantBody("copy/of/big", big)
	b.wantBody("replaced", final)
	b.wantBody("folder/", nil)
	if o, err := b.Object("acme", "pics", "replaced"); err != nil || o.ContentType != "image/png" || o.ETag != finalObj.ETag ||
		!o.LastModified.Equal(t0.Add(time.Hour)) || o.Blob != finalObj.Blob || o.Size != int64(len(final)) {
		t.Errorf("Object(replaced) after reopening = %+v, %v", o, err)
	}
	if o, err := b.Object("acme", "pics", "copy/of/big"); err != nil || o.Blob != bigObj.Blob || !o.LastModified.Equal(t0.Add(time.Minute)) {
		t.Errorf("Object(copy) after reopening = %+v, %v", o, err)
	}
	if _, err := b.Object("acme", "pics", "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted object after reopening: %v", err)
	}
	if l, _ := b.ListObjects("acme", "pics", "", "/", "", 100); listingOf(l) != "big replaced small P:copy/ P:folder/ | " {
		t.Errorf("listing after reopening = %s", listingOf(l))
	}
	// The shared body's count survived: deleting one copy keeps the file.
	if _, err := b.Delete("acme", "pics", "big", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.wantBody("copy/of/big", big)
	b.reopen()
	b.wantBody("copy/of/big", big)
	if _, err := b.Delete("acme", "pics", "copy/of/big", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.wantFiles("after deleting both copies", 1)
	b.wantCounts("at the end", 3, int64(len(small)+len(final)))
}

// TestConcurrentPuts writes, overwrites, copies and deletes from many
// goroutines: the counters and reference counts must come out exact.
func TestConcurrentPuts(t *testing.T) {
	b := newBlobStore(t)
	const workers, each = 8, 12
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*2)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				key := fmt.Sprintf("shared-%d", i%3) // contended by every worker
				if i%2 == 0 {
					key = fmt.Sprintf("own-%d-%d", w, i)
				}
				n := 100 + w*10 + i
				if (w+i)%3 == 0 {
					n += InlineMax
				}
				if _, err := b.Store.Put(context.Background(), "acme", "pics", key, bytes.NewReader(randomBody(n)), PutOptions{ContentType: "", Max: 1 << 20, Now: t0}); err != nil {
					errs <- err
				}
				// Copy only keys no other goroutine writes: copies racing
				// writes of their source are TestCopyRaces' business.
				if i%4 == 2 {
					if _, err := b.Copy(context.Background(), "acme", "pics", key, "pics", fmt.Sprintf("copy-%d", w), t0, CopyOptions{KeepEncryption: true}); err != nil {
						errs <- err
					}
				}
				if i%6 == 4 {
					if _, err := b.Delete("acme", "pics", key, DeleteOptions{}); err != nil && !errors.Is(err, ErrNotFound) {
						errs <- err
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	l, err := b.ListObjects("acme", "pics", "", "", "", 10000)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	blobs := map[string]int{}
	for _, o := range l.Objects {
		total += o.Size
		full, err := b.Object("acme", "pics", o.Key)
		if err != nil {
			t.Fatal(err)
		}
		if full.Blob != "" {
			blobs[full.Blob]++
		}
		if got := b.read(o.Key); int64(len(got)) != o.Size || md5hex(got) != o.ETag {
			t.Errorf("%s: %d bytes md5 %s, want %d bytes md5 %s", o.Key, len(got), md5hex(got), o.Size, o.ETag)
		}
	}
	b.wantCounts("after concurrent writes", int64(len(l.Objects)), total)
	b.wantFiles("after concurrent writes", len(blobs))
	for id, n := range blobs {
		if got, _ := b.refs(id); got != n {
			t.Errorf("refs(%s) = %d, want %d", id, got, n)
		}
	}
}

// TestCopyRaces copies an object while another goroutine deletes or
// overwrites it: a copy that succeeds must be readable, whichever came
// first.
func TestCopyRaces(t *testing.T) {
	for _, race := range []string{"delete", "overwrite"} {
		t.Run(race, func(t *testing.T) {
			b := newBlobStore(t)
			body := randomBody(InlineMax + 1)
			for i := range 100 {
				b.put("src", body)
				var wg sync.WaitGroup
				wg.Add(2)
				var copyErr error
				// The copy starts once the other side is about to commit:
				// at once for a delete, when the body is read for an
				// overwrite (a small body: the old body's file goes as
				// soon as it commits).
				ready := make(chan struct{})
				go func() {
					defer wg.Done()
					<-ready
					_, copyErr = b.Copy(context.Background(), "acme", "pics", "src", "pics", "dst", t0, CopyOptions{KeepEncryption: true})
				}()
				go func() {
					defer wg.Done()
					if race == "delete" {
						close(ready)
						b.Delete("acme", "pics", "src", DeleteOptions{})
					} else {
						b.Store.Put(context.Background(), "acme", "pics", "src", &eofSignal{r: strings.NewReader("small"), eof: ready}, PutOptions{ContentType: "", Max: 1 << 20, Now: t0})
					}
				}()
				wg.Wait()
				if copyErr == nil {
					_, rd, err := b.OpenObject(t.Context(), "acme", "pics", "dst")
					if err != nil {
						t.Fatalf("round %d: the copy succeeded but its body is gone: %v", i, err)
					}
					rd.Close()
				}
			}
		})
	}
}

// eofSignal reads r and closes eof when r is done.
type eofSignal struct {
	r    io.Reader
	eof  chan struct{}
	done bool
}

func (e *eofSignal) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF && !e.done {
		e.done = true
		close(e.eof)
	}
	return n, err
}
