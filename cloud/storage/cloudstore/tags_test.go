package cloudstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"testing"
)

// tagStore is a store with blobs and one bucket of alice's holding "obj".
func tagStore(t *testing.T) *Store {
	t.Helper()
	s := newStore(t)
	if err := s.OpenBlobs(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBucket("alice", "tags", "", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(context.Background(), "alice", "tags", "obj", strings.NewReader("body"), PutOptions{Max: 1 << 20, Now: t0}); err != nil {
		t.Fatal(err)
	}
	return s
}

func tenTags() map[string]string {
	m := map[string]string{}
	for i := range MaxObjectTags {
		m[fmt.Sprint("k", i)] = "v"
	}
	return m
}

// TestObjectTags: SetObjectTags replaces the set and nothing else; a set
// over the limit, a missing object and another account's bucket change
// nothing.
func TestObjectTags(t *testing.T) {
	s := tagStore(t)
	before, err := s.Object("alice", "tags", "obj")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tags map[string]string
		want map[string]string
	}{
		{"two", map[string]string{"a": "1", "b": ""}, map[string]string{"a": "1", "b": ""}},
		{"ten", tenTags(), tenTags()},
		{"none", nil, nil},
		{"empty", map[string]string{}, nil},
		{"one", map[string]string{"kept": "yes"}, map[string]string{"kept": "yes"}},
	} {
		if _, err := s.SetObjectTags("alice", "tags", "obj", tc.tags); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := s.Object("alice", "tags", "obj")
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got.Tags, tc.want) || (got.Tags == nil) != (tc.want == nil) {
			t.Errorf("%s: got %v, want %v", tc.name, got.Tags, tc.want)
		}
		if got.ETag != before.ETag || !got.LastModified.Equal(before.LastModified) || got.Size != before.Size {
			t.Errorf("%s: got %+v, want the object unchanged but for its tags: %+v", tc.name, got, before)
		}
	}
	eleven := tenTags()
	eleven["k10"] = "v"
	for _, tc := range []struct {
		name, account, bucket, key string
		tags                       map[string]string
		want                       error
	}{
		{"11 tags", "alice", "tags", "obj", eleven, ErrTooManyTags},
		{"a missing key", "alice", "tags", "none", map[string]string{"a": "b"}, ErrNotFound},
		{"another account's bucket", "bob", "tags", "obj", map[string]string{"a": "b"}, ErrNotFound},
		{"a missing bucket", "alice", "nope", "obj", map[string]string{"a": "b"}, ErrNotFound},
	} {
		if _, err := s.SetObjectTags(tc.account, tc.bucket, tc.key, tc.tags); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if got, _ := s.Object("alice", "tags", "obj"); !maps.Equal(got.Tags, map[string]string{"kept": "yes"}) {
			t.Errorf("%s changed the tags: got %v, want %v", tc.name, got.Tags, "kept=yes")
		}
	}
	if _, err := s.Object("alice", "tags", "none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("tagging a missing key: got %v, want %v", err, ErrNotFound)
	}
	// Listings carry the tags (for lifecycle rules that filter by tag).
	l, err := s.ListObjects("alice", "tags", "", "", "", 10)
	if err != nil || len(l.Objects) != 1 || l.Objects[0].Tags["kept"] != "yes" {
		t.Errorf("ListObjects: got %+v, %v, want obj with its tags", l.Objects, err)
	}
}

// TestObjectTagsWithWrites: Put sets the tags of the new object (none
// when it asks for none), Copy keeps or replaces them, and a completed
// upload takes those it was created with.
func TestObjectTagsWithWrites(t *testing.T) {
	s := tagStore(t)
	ctx := context.Background()
	if _, err := s.SetObjectTags("alice", "tags", "obj", map[string]string{"src": "1"}); err != nil {
		t.Fatal(err)
	}
	check := func(name, key string, want map[string]string) {
		t.Helper()
		got, err := s.Object("alice", "tags", key)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !maps.Equal(got.Tags, want) {
			t.Errorf("%s: got %v, want %v", name, got.Tags, want)
		}
	}
	if _, err := s.Copy(context.Background(), "alice", "tags", "obj", "tags", "copied", t0, CopyOptions{KeepEncryption: true}); err != nil {
		t.Fatal(err)
	}
	check("CopyObject", "copied", map[string]string{"src": "1"})
	if _, err := s.Copy(context.Background(), "alice", "tags", "obj", "tags", "replaced", t0, CopyOptions{ReplaceTags: true, Tags: map[string]string{"new": "2"}}); err != nil {
		t.Fatal(err)
	}
	check("Copy, ReplaceTags", "replaced", map[string]string{"new": "2"})
	if _, err := s.Copy(context.Background(), "alice", "tags", "obj", "tags", "cleared", t0, CopyOptions{ReplaceTags: true}); err != nil {
		t.Fatal(err)
	}
	check("Copy, ReplaceTags without tags", "cleared", nil)
	eleven := tenTags()
	eleven["k10"] = "v"
	if _, err := s.Copy(context.Background(), "alice", "tags", "obj", "tags", "refused", t0, CopyOptions{ReplaceTags: true, Tags: eleven}); !errors.Is(err, ErrTooManyTags) {
		t.Errorf("Copy with 11 tags: got %v, want %v", err, ErrTooManyTags)
	}
	if _, err := s.Put(ctx, "alice", "tags", "refused", strings.NewReader("x"), PutOptions{Max: 10, Now: t0, Tags: eleven}); !errors.Is(err, ErrTooManyTags) {
		t.Errorf("Put with 11 tags: got %v, want %v", err, ErrTooManyTags)
	}
	if _, err := s.Object("alice", "tags", "refused"); !errors.Is(err, ErrNotFound) {
		t.Errorf("refused writes stored the object: got %v, want %v", err, ErrNotFound)
	}
	// A large body (a file, not inline) keeps its tags too.
	big := bytes.Repeat([]byte("x"), InlineMax+1)
	if _, err := s.Put(ctx, "alice", "tags", "big", bytes.NewReader(big), PutOptions{Max: 1 << 20, Now: t0, Tags: map[string]string{"size": "big"}}); err != nil {
		t.Fatal(err)
	}
	check("Put of a body file", "big", map[string]string{"size": "big"})
	if _, err := s.Put(ctx, "alice", "tags", "big", strings.NewReader("small"), PutOptions{Max: 1 << 20, Now: t0}); err != nil {
		t.Fatal(err)
	}
	check("Put over a tagged object", "big", nil)

	if _, err := s.CreateUpload(t.Context(), "alice", "tags", "up", PutOptions{Now: t0, Tags: eleven}); !errors.Is(err, ErrTooManyTags) {
		t.Errorf("CreateUpload with 11 tags: got %v, want %v", err, ErrTooManyTags)
	}
	u, err := s.CreateUpload(t.Context(), "alice", "tags", "up", PutOptions{Now: t0, Tags: map[string]string{"from": "upload"}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.PutPart(ctx, "alice", "tags", "up", u.ID, 1, strings.NewReader("part"), PartOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompleteUpload(ctx, "alice", "tags", "up", u.ID, []CompletedPart{{Number: 1, ETag: p.ETag}}, t0, Preconditions{}); err != nil {
		t.Fatal(err)
	}
	check("CompleteUpload", "up", map[string]string{"from": "upload"})
}

// TestRecordWithoutTags: a record written before tags were kept (no
// "tags" field) reads as an untagged object, and can be tagged.
func TestRecordWithoutTags(t *testing.T) {
	s := tagStore(t)
	old := `{"key":"old","size":3,"etag":"acbd18db4cc2f85cedef654fccc4a4d8","content_type":"text/plain","last_modified":"2025-01-02T03:04:05Z","inline":"Zm9v"}`
	if err := s.db.Set(k(tObject, "tags", "old"), []byte(old), nil); err != nil {
		t.Fatal(err)
	}
	obj, body, err := s.OpenObject(t.Context(), "alice", "tags", "old")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(body)
	body.Close()
	if obj.Tags != nil || string(data) != "foo" {
		t.Errorf("an old record: got tags %v, body %q, want none and %q", obj.Tags, data, "foo")
	}
	if _, err := s.SetObjectTags("alice", "tags", "old", map[string]string{"a": "b"}); err != nil {
		t.Fatal(err)
	}
	if obj, _ := s.Object("alice", "tags", "old"); obj.Tags["a"] != "b" || obj.ETag != "acbd18db4cc2f85cedef654fccc4a4d8" {
		t.Errorf("an old record tagged: got %+v, want tags a=b and its ETag", obj)
	}
}

// TestBucketTags: a bucket's tag set, another account's refused, and tags
// that go with the bucket.
func TestBucketTags(t *testing.T) {
	s := tagStore(t)
	if tags, err := s.BucketTags("alice", "tags"); err != nil || len(tags) != 0 {
		t.Fatalf("an untagged bucket: got %v, %v, want none", tags, err)
	}
	want := map[string]string{"team": "storage", "empty": ""}
	if err := s.SetBucketTags("alice", "tags", want); err != nil {
		t.Fatal(err)
	}
	if tags, err := s.BucketTags("alice", "tags"); err != nil || !maps.Equal(tags, want) {
		t.Errorf("BucketTags: got %v, %v, want %v", tags, err, want)
	}
	fifty := map[string]string{}
	for i := range MaxBucketTags + 1 {
		fifty[fmt.Sprint("k", i)] = "v"
	}
	for _, tc := range []struct {
		name, account, bucket string
		tags                  map[string]string
		want                  error
	}{
		{"51 tags", "alice", "tags", fifty, ErrTooManyTags},
		{"another account's bucket", "bob", "tags", map[string]string{"a": "b"}, ErrNotFound},
		{"a missing bucket", "alice", "nope", map[string]string{"a": "b"}, ErrNotFound},
		{"another account's bucket, cleared", "bob", "tags", nil, ErrNotFound},
	} {
		if err := s.SetBucketTags(tc.account, tc.bucket, tc.tags); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if tags, _ := s.BucketTags("alice", "tags"); !maps.Equal(tags, want) {
			t.Errorf("%s changed the tags: got %v, want %v", tc.name, tags, want)
		}
	}
	if _, err := s.BucketTags("bob", "tags"); !errors.Is(err, ErrNotFound) {
		t.Errorf("bob's BucketTags of alice's bucket: got %v, want %v", err, ErrNotFound)
	}
	if err := s.SetBucketTags("alice", "tags", nil); err != nil {
		t.Fatal(err)
	}
	if tags, _ := s.BucketTags("alice", "tags"); len(tags) != 0 {
		t.Errorf("cleared: got %v, want none", tags)
	}
	// Deleted with the bucket: the name taken again, by another account,
	// has none.
	if err := s.SetBucketTags("alice", "tags", want); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete("alice", "tags", "obj", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket("alice", "tags"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateBucket("bob", "tags", "", t0); err != nil {
		t.Fatal(err)
	}
	if tags, err := s.BucketTags("bob", "tags"); err != nil || len(tags) != 0 {
		t.Errorf("the name taken again: got %v, %v, want no tags", tags, err)
	}
}
