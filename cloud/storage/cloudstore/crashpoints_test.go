package cloudstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// hookFS calls hook before every change a crash could cut short: a
// file's or directory's sync, a create, rename or remove. A test takes a
// crash image of the disk there, so that it sees the store as a power
// loss at that instant would leave it.
type hookFS struct {
	vfs.FS
	hook func(what string)
}

func (h *hookFS) at(what string) {
	if h.hook != nil {
		h.hook(what)
	}
}

func (h *hookFS) wrap(f vfs.File, name string, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return hookFile{File: f, h: h, name: name}, nil
}

func (h *hookFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	h.at("create " + name)
	f, err := h.FS.Create(name, c)
	return h.wrap(f, name, err)
}

func (h *hookFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := h.FS.OpenReadWrite(name, c, opts...)
	return h.wrap(f, name, err)
}

func (h *hookFS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	h.at("reuse " + name)
	f, err := h.FS.ReuseForWrite(old, name, c)
	return h.wrap(f, name, err)
}

func (h *hookFS) OpenDir(name string) (vfs.File, error) {
	f, err := h.FS.OpenDir(name)
	return h.wrap(f, name, err)
}

func (h *hookFS) Remove(name string) error {
	h.at("remove " + name)
	return h.FS.Remove(name)
}

func (h *hookFS) Rename(old, name string) error {
	h.at("rename " + name)
	return h.FS.Rename(old, name)
}

type hookFile struct {
	vfs.File
	h    *hookFS
	name string
}

func (f hookFile) Sync() error {
	f.h.at("sync " + f.name)
	return f.File.Sync()
}

func (f hookFile) SyncData() error {
	f.h.at("syncdata " + f.name)
	return f.File.SyncData()
}

func (f hookFile) SyncTo(n int64) (bool, error) {
	f.h.at("syncto " + f.name)
	return f.File.SyncTo(n)
}

// crashPoints runs op on a store on a crashable disk, taking a crash
// image before every sync, create, rename and remove op makes (and one
// after it), and checks each image: the store it opens is consistent
// (checkConsistent), and the key's versions are as they were before op
// or as op left them. setup prepares the store first, uncut.
func crashPoints(t *testing.T, key string, setup func(s *Store), op func(s *Store) error) {
	t.Helper()
	mem := vfs.NewCrashableMem()
	h := &hookFS{FS: mem}
	s := openWithBucket(t, h)
	s.master = bytes.Repeat([]byte{7}, 32)
	setup(s)
	before := versionState(t, s, key)
	var (
		mu     sync.Mutex
		images []*vfs.MemFS
		what   []string
		armed  atomic.Bool
	)
	h.hook = func(w string) {
		if armed.Load() {
			img := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
			mu.Lock()
			images, what = append(images, img), append(what, w)
			mu.Unlock()
		}
	}
	armed.Store(true)
	if err := op(s); err != nil {
		t.Fatal(err)
	}
	armed.Store(false)
	after := versionState(t, s, key)
	images, what = append(images, mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})), append(what, "after")
	checkConsistent(t, s, "before the crash")
	s.Close()
	if before == after {
		t.Fatalf("op changed nothing: %s", before)
	}
	sawAfter := false
	for i, img := range images {
		r, err := open("db", nil, img)
		if err != nil {
			t.Fatalf("image %d (%s): %v", i, what[i], err)
		}
		if err := r.OpenBlobs("objects"); err != nil {
			t.Fatal(err)
		}
		r.master = s.master
		checkConsistent(t, r, fmt.Sprintf("crash at %d (%s)", i, what[i]))
		got := versionState(t, r, key)
		switch got {
		case before:
		case after:
			sawAfter = true
		default:
			t.Errorf("crash at %d (%s): %s is\n%s\nneither as before\n%s\nnor as after\n%s", i, what[i], key, got, before, after)
		}
		r.Close()
	}
	if !sawAfter {
		t.Errorf("no image holds the write's result")
	}
}

// versionState tells the versions of key, newest first, with their
// bodies' MD5.
func versionState(t *testing.T, s *Store, key string) string {
	t.Helper()
	l, err := s.ListVersions("acme", "pics", key, "", "", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, v := range l.Versions {
		if v.Key != key {
			continue
		}
		fmt.Fprintf(&b, "%s latest=%v marker=%v etag=%s size=%d", v.VersionName(), v.IsLatest, v.DeleteMarker, v.ETag, v.Size)
		if !v.DeleteMarker {
			_, body, err := s.OpenObjectVersion(t.Context(), "acme", "pics", key, v.VersionName(), nil)
			if err != nil {
				t.Fatalf("%s version %s: %v", key, v.VersionName(), err)
			}
			h := md5.New()
			_, err = io.Copy(h, body)
			body.Close()
			if err != nil {
				t.Fatalf("%s version %s: %v", key, v.VersionName(), err)
			}
			fmt.Fprintf(&b, " md5=%x", h.Sum(nil))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// checkConsistent checks what the store records against itself: the
// bucket's counters against its objects and versions, every body file's
// reference count against the records naming it (objects, versions,
// parts), that every file named exists and every file there is named,
// and the order of each key's versions.
func checkConsistent(t *testing.T, s *Store, when string) {
	t.Helper()
	var bk Bucket
	if err := s.getJSON(k(tBucket, "pics"), &bk); err != nil {
		t.Fatal(err)
	}
	refs := map[string]int{}
	var objects, bytes_, versions, versionBytes int64
	cur := map[string]Object{}
	err := s.scan(append(k(tObject, "pics"), 0), func(_, v []byte) error {
		var o Object
		if err := json.Unmarshal(v, &o); err != nil {
			return err
		}
		objects++
		bytes_ += o.Size
		for _, id := range o.bodyFiles() {
			refs[id]++
		}
		cur[o.Key] = o
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	table := map[string][]Object{}
	err = s.scan(append(k(tVersion, "pics"), 0), func(_, v []byte) error {
		var o Object
		if err := json.Unmarshal(v, &o); err != nil {
			return err
		}
		versions++
		versionBytes += o.Size
		for _, id := range o.bodyFiles() {
			refs[id]++
		}
		table[o.Key] = append(table[o.Key], o)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.scan([]byte{tPart}, func(_, v []byte) error {
		var p Part
		if err := json.Unmarshal(v, &p); err != nil {
			return err
		}
		refs[p.Blob]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	delete(refs, "")
	if bk.Objects != objects || bk.Bytes != bytes_ || bk.Versions != versions || bk.VersionBytes != versionBytes {
		t.Errorf("%s: bucket counts %d objects, %d bytes, %d versions, %d version bytes; records hold %d, %d, %d, %d",
			when, bk.Objects, bk.Bytes, bk.Versions, bk.VersionBytes, objects, bytes_, versions, versionBytes)
	}
	counted := map[string]int{}
	err = s.scan([]byte{tBlob}, func(key, v []byte) error {
		n, err := strconv.Atoi(string(v))
		counted[string(key[1:])] = n
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, n := range refs {
		if counted[id] != n {
			t.Errorf("%s: body %s: reference count %d, %d records name it", when, id, counted[id], n)
		}
		if _, err := s.fs.Stat(s.blobPath(id)); err != nil {
			t.Errorf("%s: body %s is named but gone: %v", when, id, err)
		}
	}
	for id, n := range counted {
		if refs[id] == 0 {
			t.Errorf("%s: body %s: reference count %d, no record names it", when, id, n)
		}
	}
	for i := range 256 {
		names, _ := s.fs.List(s.fs.PathJoin(s.blobDir, shardName(i)))
		for _, name := range names {
			if refs[name] == 0 && s.pins[name] == 0 {
				t.Errorf("%s: body file %s is left, named by nothing", when, name)
			}
		}
	}
	for key, vs := range table {
		c, hasCur := cur[key]
		for i, v := range vs {
			if hasCur && v.seq() >= c.seq() {
				t.Errorf("%s: %s: version %s is not older than the current one", when, key, v.VersionName())
			}
			if i > 0 && v.seq() >= vs[i-1].seq() {
				t.Errorf("%s: %s: versions out of order", when, key)
			}
		}
		if !hasCur && !vs[0].DeleteMarker {
			t.Errorf("%s: %s: no current version, and the latest is not a delete marker", when, key)
		}
	}
}

func mustPut(t *testing.T, s *Store, key string, body []byte, enc *SSE) Object {
	t.Helper()
	o, err := s.Put(context.Background(), "acme", "pics", key, bytes.NewReader(body), PutOptions{Max: 1 << 30, Now: t0, Encrypt: enc})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestCrashPointsOfVersions cuts versioned writes and deletes at every
// sync, create, rename and remove, and checks that each leaves the store
// consistent and the write done wholly or not at all.
func TestCrashPointsOfVersions(t *testing.T) {
	sse3 := &SSE{Mode: SSES3}
	cases := []struct {
		name  string
		setup func(t *testing.T, s *Store)
		op    func(s *Store) error
	}{
		{"overwrite", func(t *testing.T, s *Store) {
			mustPut(t, s, "k", bodyOf("v0", 100<<10), nil)
			s.SetVersioning("acme", "pics", VersioningEnabled)
			mustPut(t, s, "k", bodyOf("v1", 100<<10), nil)
		}, func(s *Store) error {
			_, err := s.Put(context.Background(), "acme", "pics", "k", bytes.NewReader(bodyOf("v2", 90<<10)), PutOptions{Max: 1 << 30, Now: t0})
			return err
		}},
		{"encrypted overwrite", func(t *testing.T, s *Store) {
			s.SetVersioning("acme", "pics", VersioningEnabled)
			mustPut(t, s, "k", bodyOf("v1", 100<<10), sse3)
		}, func(s *Store) error {
			_, err := s.Put(context.Background(), "acme", "pics", "k", bytes.NewReader(bodyOf("v2", 90<<10)), PutOptions{Max: 1 << 30, Now: t0, Encrypt: sse3})
			return err
		}},
		{"suspended overwrite of the null version", func(t *testing.T, s *Store) {
			s.SetVersioning("acme", "pics", VersioningEnabled)
			mustPut(t, s, "k", bodyOf("v1", 100<<10), nil)
			s.SetVersioning("acme", "pics", VersioningSuspended)
			mustPut(t, s, "k", bodyOf("null", 100<<10), nil)
		}, func(s *Store) error {
			_, err := s.Put(context.Background(), "acme", "pics", "k", bytes.NewReader(bodyOf("null2", 80<<10)), PutOptions{Max: 1 << 30, Now: t0})
			return err
		}},
		{"suspended delete of the null version", func(t *testing.T, s *Store) {
			mustPut(t, s, "k", bodyOf("null", 100<<10), nil)
			s.SetVersioning("acme", "pics", VersioningEnabled)
			mustPut(t, s, "k", bodyOf("v1", 100<<10), nil)
			s.SetVersioning("acme", "pics", VersioningSuspended)
		}, func(s *Store) error {
			_, err := s.Delete("acme", "pics", "k", DeleteOptions{})
			return err
		}},
		{"delete of the current version, promoting", func(t *testing.T, s *Store) {
			s.SetVersioning("acme", "pics", VersioningEnabled)
			mustPut(t, s, "k", bodyOf("v1", 100<<10), nil)
			mustPut(t, s, "k", bodyOf("v2", 100<<10), sse3)
		}, func(s *Store) error {
			o, err := s.Object("acme", "pics", "k")
			if err != nil {
				return err
			}
			_, err = s.DeleteVersion("acme", "pics", "k", o.VersionID)
			return err
		}},
		{"delete of a delete marker, promoting", func(t *testing.T, s *Store) {
			s.SetVersioning("acme", "pics", VersioningEnabled)
			mustPut(t, s, "k", bodyOf("v1", 100<<10), nil)
			if _, err := s.Delete("acme", "pics", "k", DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, func(s *Store) error {
			l, err := s.ListVersions("acme", "pics", "k", "", "", "", 10)
			if err != nil {
				return err
			}
			_, err = s.DeleteVersion("acme", "pics", "k", l.Versions[0].VersionName())
			return err
		}},
		{"delete of a noncurrent version sharing its body", func(t *testing.T, s *Store) {
			s.SetVersioning("acme", "pics", VersioningEnabled)
			mustPut(t, s, "k", bodyOf("v1", 100<<10), nil)
			if _, err := s.Copy(context.Background(), "acme", "pics", "k", "pics", "k", t0, CopyOptions{ReplaceTags: true}); err != nil {
				t.Fatal(err)
			}
		}, func(s *Store) error {
			l, err := s.ListVersions("acme", "pics", "k", "", "", "", 10)
			if err != nil {
				return err
			}
			_, err = s.DeleteVersion("acme", "pics", "k", l.Versions[1].VersionName())
			return err
		}},
		{"suspended copy of the noncurrent null version onto its key", func(t *testing.T, s *Store) {
			mustPut(t, s, "k", bodyOf("null", 100<<10), sse3)
			s.SetVersioning("acme", "pics", VersioningEnabled)
			mustPut(t, s, "k", bodyOf("v1", 100<<10), nil)
			s.SetVersioning("acme", "pics", VersioningSuspended)
		}, func(s *Store) error {
			_, err := s.Copy(context.Background(), "acme", "pics", "k", "pics", "k", t0, CopyOptions{SourceVersion: NullVersion, KeepEncryption: true})
			return err
		}},
		{"encrypted multipart completion", func(t *testing.T, s *Store) {
			s.SetVersioning("acme", "pics", VersioningEnabled)
			mustPut(t, s, "k", bodyOf("v1", 100<<10), nil)
		}, func(s *Store) error {
			ctx := context.Background()
			u, err := s.CreateUpload(t.Context(), "acme", "pics", "k", PutOptions{Now: t0, Encrypt: sse3})
			if err != nil {
				return err
			}
			var list []CompletedPart
			for i, n := range []int{MinPartSize, 70 << 10} {
				p, err := s.PutPart(ctx, "acme", "pics", "k", u.ID, i+1, bytes.NewReader(bodyOf(fmt.Sprint("part", i), n)), PartOptions{Now: t0})
				if err != nil {
					return err
				}
				list = append(list, CompletedPart{Number: p.Number, ETag: p.ETag})
			}
			_, err = s.CompleteUpload(ctx, "acme", "pics", "k", u.ID, list, t0, Preconditions{})
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			crashPoints(t, "k", func(s *Store) { c.setup(t, s) }, c.op)
		})
	}
}
