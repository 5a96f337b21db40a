package cloudstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// modelVersion is a version as the reference model of S3 versioning
// below keeps it.
type modelVersion struct {
	id     string // the store's VersionID; "" is null
	marker bool
	body   int // which upload's body; copies share it
	size   int64
}

// versionModel is S3's versioning, written from its documentation as
// plainly as possible: each key's versions, newest first.
type versionModel struct {
	state string
	keys  map[string][]modelVersion
}

func (m *versionModel) add(key string, v modelVersion) {
	vs := m.keys[key]
	switch m.state {
	case "":
		vs = nil // one version only, the null one
	case VersioningSuspended:
		vs = slices.DeleteFunc(vs, func(o modelVersion) bool { return o.id == "" })
	}
	m.keys[key] = append([]modelVersion{v}, vs...)
	if len(m.keys[key]) == 1 && v.marker && m.state == "" {
		delete(m.keys, key)
	}
}

func (m *versionModel) current(key string) (modelVersion, bool) {
	vs := m.keys[key]
	if len(vs) == 0 || vs[0].marker {
		return modelVersion{}, false
	}
	return vs[0], true
}

// TestVersioningAgainstModel runs random puts, copies, deletes, deletes of
// versions and changes of the versioning state on a few keys, and after
// each checks the store against the model: every key's versions in
// order, the listing's pages, reads by version, the bucket's counters,
// and the body files on disk (shared by versions, removed with the last).
func TestVersioningAgainstModel(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			b := newBlobStore(t)
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(seed, 7))
			m := &versionModel{keys: map[string][]modelVersion{}}
			keys := []string{"a", "a/b", "a/c", "b"}
			bodies := 0
			clock := t0
			b.SetClock(func() time.Time { return clock })
			for step := range 150 {
				clock = clock.Add(time.Second)
				key := keys[rng.IntN(len(keys))]
				var what string
				switch op := rng.IntN(10); {
				case op < 4:
					bodies++
					size := int64(10 + rng.IntN(50))
					if rng.IntN(3) == 0 {
						size = InlineMax + 1 + int64(rng.IntN(1000))
					}
					what = fmt.Sprintf("put %s (body %d, %d bytes)", key, bodies, size)
					obj, err := b.Put(ctx, "acme", "pics", key, bytes.NewReader(modelBody(bodies, size)), PutOptions{Max: 1 << 20, Now: clock})
					if err != nil {
						t.Fatalf("step %d: %s: %v", step, what, err)
					}
					m.add(key, modelVersion{id: obj.VersionID, body: bodies, size: size})
				case op < 5:
					src := keys[rng.IntN(len(keys))]
					vs := m.keys[src]
					if len(vs) == 0 {
						continue
					}
					v := vs[rng.IntN(len(vs))]
					what = fmt.Sprintf("copy %s version %q to %s", src, v.id, key)
					obj, err := b.Copy(ctx, "acme", "pics", src, "pics", key, clock, CopyOptions{SourceVersion: nameOf(v.id)})
					if v.marker {
						var dm *DeleteMarkerError
						if !errors.As(err, &dm) {
							t.Fatalf("step %d: %s (a delete marker): %v, want a DeleteMarkerError", step, what, err)
						}
						continue
					}
					if err != nil {
						t.Fatalf("step %d: %s: %v", step, what, err)
					}
					m.add(key, modelVersion{id: obj.VersionID, body: v.body, size: v.size})
				case op < 7:
					what = "delete " + key
					del, err := b.Store.Delete("acme", "pics", key, DeleteOptions{})
					if m.state == "" {
						if _, ok := m.current(key); !ok {
							if !errors.Is(err, ErrNotFound) {
								t.Fatalf("step %d: %s (missing): %v", step, what, err)
							}
							continue
						}
					}
					if err != nil {
						t.Fatalf("step %d: %s: %v", step, what, err)
					}
					if m.state != "" {
						if !del.DeleteMarker || (del.VersionID == "") != (m.state == VersioningSuspended) {
							t.Fatalf("step %d: %s: %+v in a bucket %s", step, what, del, m.state)
						}
					}
					m.add(key, modelVersion{id: del.VersionID, marker: true})
				case op < 9:
					vs := m.keys[key]
					if len(vs) == 0 {
						continue
					}
					i := rng.IntN(len(vs))
					what = fmt.Sprintf("delete %s version %q", key, vs[i].id)
					del, err := b.DeleteVersion("acme", "pics", key, nameOf(vs[i].id))
					if err != nil {
						t.Fatalf("step %d: %s: %v", step, what, err)
					}
					if del.DeleteMarker != vs[i].marker {
						t.Fatalf("step %d: %s: says delete marker %v", step, what, del.DeleteMarker)
					}
					m.keys[key] = slices.Delete(vs, i, i+1)
					if len(m.keys[key]) == 0 {
						delete(m.keys, key)
					}
				default:
					state := []string{VersioningEnabled, VersioningSuspended}[rng.IntN(2)]
					what = "versioning " + state
					if err := b.SetVersioning("acme", "pics", state); err != nil {
						t.Fatal(err)
					}
					m.state = state
				}
				checkModel(t, b, m, fmt.Sprintf("step %d, after %s", step, what))
			}
			b.reopen()
			checkModel(t, b, m, "after a restart")
		})
	}
}

func nameOf(id string) string {
	if id == "" {
		return NullVersion
	}
	return id
}

func modelBody(n int, size int64) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("<body %d>", n)), int(size))[:size]
}

func checkModel(t *testing.T, b *blobStore, m *versionModel, when string) {
	t.Helper()
	var want []string
	objects, versions, bytes_, versionBytes := 0, 0, int64(0), int64(0)
	blobs := map[int]bool{}
	keys := make([]string, 0, len(m.keys))
	for k := range m.keys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		for i, v := range m.keys[key] {
			want = append(want, fmt.Sprintf("%s@%s marker=%v latest=%v size=%d", key, nameOf(v.id), v.marker, i == 0, v.size))
			if i == 0 && !v.marker {
				objects++
				bytes_ += v.size
			} else {
				versions++
				versionBytes += v.size
			}
			if v.size > InlineMax {
				blobs[v.body] = true
			}
		}
	}
	listed := func(l VersionListing) []string {
		var out []string
		for _, v := range l.Versions {
			out = append(out, fmt.Sprintf("%s@%s marker=%v latest=%v size=%d", v.Key, v.VersionName(), v.DeleteMarker, v.IsLatest, v.Size))
		}
		return out
	}
	l, err := b.ListVersions("acme", "pics", "", "", "", "", 1000)
	if err != nil {
		t.Fatalf("%s: ListVersions: %v", when, err)
	}
	if got := listed(l); !slices.Equal(got, want) {
		t.Fatalf("%s: versions\n%s\nwant\n%s", when, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The same, a page of two at a time.
	var paged []string
	km, vm := "", ""
	for range 1000 {
		l, err := b.ListVersions("acme", "pics", "", "", km, vm, 2)
		if err != nil {
			t.Fatalf("%s: ListVersions after %q %q: %v", when, km, vm, err)
		}
		paged = append(paged, listed(l)...)
		if l.NextKeyMarker == "" {
			break
		}
		km, vm = l.NextKeyMarker, l.NextVersionIDMarker
	}
	if !slices.Equal(paged, want) {
		t.Fatalf("%s: paged versions\n%s\nwant\n%s", when, strings.Join(paged, "\n"), strings.Join(want, "\n"))
	}
	// Reads: the current version, and each version by its id.
	for _, key := range []string{"a", "a/b", "a/c", "b"} {
		cur, hasCur := m.current(key)
		obj, body, err := b.OpenObjectVersion(t.Context(), "acme", "pics", key, "", nil)
		var dm *DeleteMarkerError
		switch {
		case hasCur:
			if err != nil {
				t.Fatalf("%s: read %s: %v", when, key, err)
			}
			checkBody(t, when, obj, body, cur)
		case len(m.keys[key]) > 0: // the latest is a marker
			if !errors.As(err, &dm) || dm.VersionID != m.keys[key][0].id || !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: read %s: %v, want its delete marker %q", when, key, err, m.keys[key][0].id)
			}
		default:
			if !errors.Is(err, ErrNotFound) || errors.As(err, &dm) {
				t.Fatalf("%s: read %s: %v, want not found", when, key, err)
			}
		}
		for _, v := range m.keys[key] {
			obj, body, err := b.OpenObjectVersion(t.Context(), "acme", "pics", key, nameOf(v.id), nil)
			if v.marker {
				if !errors.As(err, &dm) || !obj.DeleteMarker {
					t.Fatalf("%s: read %s@%s (a marker): %v", when, key, nameOf(v.id), err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: read %s@%s: %v", when, key, nameOf(v.id), err)
			}
			checkBody(t, when, obj, body, v)
		}
	}
	bk, err := b.Bucket("acme", "pics")
	if err != nil {
		t.Fatal(err)
	}
	if bk.Objects != int64(objects) || bk.Bytes != bytes_ || bk.Versions != int64(versions) || bk.VersionBytes != versionBytes {
		t.Fatalf("%s: bucket counts %d objects %d bytes, %d versions %d bytes; want %d %d %d %d", when,
			bk.Objects, bk.Bytes, bk.Versions, bk.VersionBytes, objects, bytes_, versions, versionBytes)
	}
	if n := b.blobFiles(); n != len(blobs) {
		t.Fatalf("%s: %d body files, %d bodies are referenced", when, n, len(blobs))
	}
}

func checkBody(t *testing.T, when string, obj Object, body Body, v modelVersion) {
	t.Helper()
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, modelBody(v.body, v.size)) || obj.VersionID != v.id {
		t.Fatalf("%s: %s@%s: %d bytes of body %q…, want body %d (%d bytes) of version %q", when, obj.Key, obj.VersionName(), len(data),
			data[:min(len(data), 12)], v.body, v.size, v.id)
	}
}

// TestVersioningRules checks the rules the model leaves implicit.
func TestVersioningRules(t *testing.T) {
	b := newBlobStore(t)
	ctx := context.Background()
	put := func(key, body string) Object {
		t.Helper()
		o, err := b.Put(ctx, "acme", "pics", key, strings.NewReader(body), PutOptions{Max: 1 << 20, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	legacy := put("k", "before versioning")
	if legacy.VersionID != "" {
		t.Fatalf("an unversioned bucket's object has version %q", legacy.VersionID)
	}
	if err := b.SetVersioning("acme", "pics", "Off"); err == nil {
		t.Fatal("versioning state Off accepted")
	}
	if err := b.SetVersioning("acme", "pics", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	v1 := put("k", "one")
	v2 := put("k", "two")
	if v1.VersionID == "" || v2.VersionID == "" || v1.VersionID == v2.VersionID || CheckVersionID(v1.VersionID) != nil {
		t.Fatalf("version ids %q %q", v1.VersionID, v2.VersionID)
	}
	// The object from before versioning is the null version.
	if o, err := b.ObjectVersion("acme", "pics", "k", NullVersion); err != nil || o.ETag != legacy.ETag {
		t.Fatalf("null version: %+v, %v", o, err)
	}
	// Ids that the store never gives are refused; well-formed unknown
	// ones are not found.
	for _, id := range []string{"x", strings.Repeat("A", 24), strings.Repeat("g", 24), strings.Repeat("0", 23)} {
		if _, err := b.ObjectVersion("acme", "pics", "k", id); !errors.Is(err, ErrBadVersion) {
			t.Errorf("version %q: %v, want ErrBadVersion", id, err)
		}
		if _, err := b.DeleteVersion("acme", "pics", "k", id); !errors.Is(err, ErrBadVersion) {
			t.Errorf("delete version %q: %v, want ErrBadVersion", id, err)
		}
	}
	if _, err := b.ObjectVersion("acme", "pics", "k", strings.Repeat("0", 24)); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown version: %v", err)
	}
	// Another account sees no bucket, versions or not.
	if _, err := b.ObjectVersion("other", "pics", "k", v1.VersionID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another account's read: %v", err)
	}
	if _, err := b.DeleteVersion("other", "pics", "k", v1.VersionID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another account's delete: %v", err)
	}
	if _, err := b.ListVersions("other", "pics", "", "", "", "", 10); !errors.Is(err, ErrNotFound) {
		t.Errorf("another account's listing: %v", err)
	}
	// Deleting a version that is not there succeeds and changes nothing.
	if del, err := b.DeleteVersion("acme", "pics", "k", strings.Repeat("0", 24)); err != nil || del.DeleteMarker {
		t.Errorf("delete unknown version: %+v, %v", del, err)
	}
	// A bucket holding versions, even with no current object, is not
	// empty.
	for _, id := range []string{v2.VersionID} {
		if _, err := b.DeleteVersion("acme", "pics", "k", id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Store.Delete("acme", "pics", "k", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if bk, _ := b.Bucket("acme", "pics"); bk.Objects != 0 || bk.Versions != 3 {
		t.Fatalf("counts %d objects, %d versions", bk.Objects, bk.Versions)
	}
	if err := b.DeleteBucket("acme", "pics"); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("delete a bucket of versions: %v", err)
	}
	// Once versioned, always versioned (or suspended).
	if bk, _ := b.Bucket("acme", "pics"); bk.Versioning != VersioningEnabled {
		t.Fatalf("state %q", bk.Versioning)
	}
	// A delimited listing rolls versions up like keys, markers included.
	put("d/1", "x")
	put("d/2", "y")
	l, err := b.ListVersions("acme", "pics", "", "/", "", "", 10)
	if err != nil || !slices.Equal(l.Prefixes, []string{"d/"}) || len(l.Versions) != 3 {
		t.Fatalf("delimited listing: %+v, %v", l, err)
	}
	// A page ending in a common prefix goes on after it.
	l, err = b.ListVersions("acme", "pics", "", "/", "", "", 1)
	if err != nil || !slices.Equal(l.Prefixes, []string{"d/"}) || l.NextKeyMarker != "d/" || l.NextVersionIDMarker != "" {
		t.Fatalf("first page: %+v, %v", l, err)
	}
	l, err = b.ListVersions("acme", "pics", "", "/", "d/", "", 10)
	if err != nil || len(l.Prefixes) != 0 || len(l.Versions) != 3 || l.Versions[0].Key != "k" {
		t.Fatalf("page after the prefix: %+v, %v", l, err)
	}
}

// TestListVersionsMarkerGone: a listing continued from a version marker
// whose version was deleted between the pages (by a client, or by the
// lifecycle sweep) goes on with the versions older than it, as if it were
// still there, rather than skipping the rest of its key.
func TestListVersionsMarkerGone(t *testing.T) {
	for _, gone := range []int{0, 1, 2} { // which of a's versions ends page 1
		t.Run(fmt.Sprint("version ", gone), func(t *testing.T) {
			b := newBlobStore(t)
			ctx := context.Background()
			if err := b.SetVersioning("acme", "pics", VersioningEnabled); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"a", "a", "a", "a", "b"} {
				if _, err := b.Put(ctx, "acme", "pics", key, strings.NewReader("x"), PutOptions{Max: 10, Now: t0}); err != nil {
					t.Fatal(err)
				}
			}
			all, err := b.ListVersions("acme", "pics", "", "", "", "", 100)
			if err != nil || len(all.Versions) != 5 {
				t.Fatalf("%d versions, %v", len(all.Versions), err)
			}
			page, err := b.ListVersions("acme", "pics", "", "", "", "", gone+1)
			if err != nil || page.NextKeyMarker != "a" || page.NextVersionIDMarker != all.Versions[gone].VersionName() {
				t.Fatalf("page 1: %+v, %v", page, err)
			}
			if _, err := b.DeleteVersion("acme", "pics", "a", page.NextVersionIDMarker); err != nil {
				t.Fatal(err)
			}
			rest, err := b.ListVersions("acme", "pics", "", "", page.NextKeyMarker, page.NextVersionIDMarker, 100)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, v := range rest.Versions {
				got = append(got, v.Key+" "+v.VersionName())
			}
			for _, v := range all.Versions[gone+1:] {
				want = append(want, v.Key+" "+v.VersionName())
			}
			if !slices.Equal(got, want) {
				t.Errorf("after the marker: %q, want %q", got, want)
			}
		})
	}
}

// TestListVersionsPaging pages through a bucket's versions with every
// page size, with and without a prefix and a delimiter, over keys that
// are prefixes of one another, and checks the pages join into the whole
// listing: nothing lost, nothing twice, markers in the middle of a key's
// versions and on common prefixes alike.
func TestListVersionsPaging(t *testing.T) {
	b := newBlobStore(t)
	ctx := context.Background()
	put := func(key string) {
		if _, err := b.Put(ctx, "acme", "pics", key, strings.NewReader(key), PutOptions{Max: 100, Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	put("a") // the null version
	if err := b.SetVersioning("acme", "pics", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a", "a", "a/", "a/b", "a/b", "a/c", "ab", "b/x/y", "b/x/z", "b/y", "é", "é/1"} {
		put(key)
	}
	for _, key := range []string{"a/c", "ab", "zz"} {
		if _, err := b.Store.Delete("acme", "pics", key, DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []struct{ prefix, delimiter string }{{"", ""}, {"", "/"}, {"a", ""}, {"a", "/"}, {"a/", "/"}, {"b/", "/"}, {"b", "x"}} {
		all, err := b.ListVersions("acme", "pics", q.prefix, q.delimiter, "", "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		want := entries(all)
		for size := 1; size <= len(want)+1; size++ {
			var got []string
			km, vm := "", ""
			for pages := 0; ; pages++ {
				if pages > len(want)+2 {
					t.Fatalf("%+v, pages of %d: does not end", q, size)
				}
				l, err := b.ListVersions("acme", "pics", q.prefix, q.delimiter, km, vm, size)
				if err != nil {
					t.Fatal(err)
				}
				if n := len(l.Versions) + len(l.Prefixes); n > size || n == 0 && l.NextKeyMarker != "" {
					t.Fatalf("%+v, pages of %d: a page of %d", q, size, n)
				}
				got = append(got, entries(l)...)
				if l.NextKeyMarker == "" {
					break
				}
				km, vm = l.NextKeyMarker, l.NextVersionIDMarker
			}
			if !slices.Equal(got, want) {
				t.Errorf("%+v, pages of %d:\n%q\nwant\n%q", q, size, got, want)
			}
		}
	}
}

// entries are a listing's versions and common prefixes in key order.
func entries(l VersionListing) []string {
	var out []string
	for _, v := range l.Versions {
		out = append(out, fmt.Sprintf("%s %s latest=%v marker=%v", v.Key, v.VersionName(), v.IsLatest, v.DeleteMarker))
	}
	for _, p := range l.Prefixes {
		out = append(out, p+" (prefix)")
	}
	slices.SortStableFunc(out, func(a, b string) int { return strings.Compare(strings.Fields(a)[0], strings.Fields(b)[0]) })
	return out
}
