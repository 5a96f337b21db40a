package cloudstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

// blobFiles counts the body files under the blob directory's shards.
func (b *blobStore) blobFiles() int {
	b.t.Helper()
	n := 0
	shards, _ := os.ReadDir(b.blobs)
	for _, sh := range shards {
		if sh.Name() == "tmp" {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(b.blobs, sh.Name()))
		n += len(files)
	}
	return n
}

// TestMultipartSurvivesRestart uploads parts, restarts the store (which
// removes unreferenced files at start) and completes the upload: parts
// are kept, joined in order, and removed once the object exists.
func TestMultipartSurvivesRestart(t *testing.T) {
	b := newBlobStore(t)
	ctx := context.Background()
	u, err := b.CreateUpload(t.Context(), "acme", "pics", "movie", PutOptions{ContentType: "video/mp4", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	p1 := bytes.Repeat([]byte("1"), MinPartSize)
	p2 := []byte("the end")
	var etags []string
	for i, body := range [][]byte{p1, p2} {
		p, err := b.Store.PutPart(ctx, "acme", "pics", "movie", u.ID, i+1, bytes.NewReader(body), PartOptions{Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		etags = append(etags, p.ETag)
	}
	// Re-uploading a part replaces it and frees the old body.
	if _, err := b.Store.PutPart(ctx, "acme", "pics", "movie", u.ID, 2, bytes.NewReader(p2), PartOptions{Now: t0}); err != nil {
		t.Fatal(err)
	}
	if n := b.blobFiles(); n != 2 {
		t.Fatalf("%d body files for two parts", n)
	}
	b.reopen()
	if n := b.blobFiles(); n != 2 {
		t.Fatalf("a restart left %d body files of two parts", n)
	}
	parts, more, err := b.Parts("acme", "pics", "movie", u.ID, 0, 1)
	if err != nil || len(parts) != 1 || !more || parts[0].Number != 1 {
		t.Fatalf("Parts page = %+v, %v, %v", parts, more, err)
	}
	obj, err := b.CompleteUpload(ctx, "acme", "pics", "movie", u.ID,
		[]CompletedPart{{Number: 1, ETag: `"` + etags[0] + `"`}, {Number: 2, ETag: etags[1]}}, t0.Add(time.Minute), Preconditions{})
	if err != nil {
		t.Fatal(err)
	}
	var sums []byte
	for _, e := range etags {
		s, _ := hex.DecodeString(e)
		sums = append(sums, s...)
	}
	want := md5.Sum(sums)
	if obj.ETag != hex.EncodeToString(want[:])+"-2" || obj.Size != int64(len(p1)+len(p2)) || obj.ContentType != "video/mp4" {
		t.Fatalf("completed object = %+v", obj)
	}
	_, body, err := b.OpenObject(t.Context(), "acme", "pics", "movie")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(body)
	body.Close()
	if !bytes.Equal(got, append(bytes.Clone(p1), p2...)) {
		t.Fatalf("joined body holds %d bytes", len(got))
	}
	if n := b.blobFiles(); n != 2 {
		t.Fatalf("%d body files after completion, want the object's two: its parts', kept as they are", n)
	}
	if _, _, err := b.Parts("acme", "pics", "movie", u.ID, 0, 10); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("the completed upload is still there: %v", err)
	}
}

func TestMultipartRefusals(t *testing.T) {
	b := newBlobStore(t)
	if _, err := b.CreateBucket("other", "theirs", "", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateUpload(t.Context(), "acme", "theirs", "k", PutOptions{Now: t0}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("upload into another account's bucket: %v", err)
	}
	if _, err := b.CreateUpload(t.Context(), "acme", "pics", "", PutOptions{Now: t0}); !errors.Is(err, storagenames.ErrInvalidKey) {
		t.Fatalf("upload with an empty key: %v", err)
	}
	u, _ := b.CreateUpload(t.Context(), "acme", "pics", "k", PutOptions{Now: t0})
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"part 0", put(b, u, "k", 0), ErrBadPartNumber},
		{"part 10001", put(b, u, "k", 10001), ErrBadPartNumber},
		{"another key", put(b, u, "other", 1), ErrNoSuchUpload},
		{"no parts", complete(b, u), ErrNoParts},
		{"unknown part", complete(b, u, CompletedPart{Number: 1, ETag: "x"}), ErrInvalidPart},
		{"parts out of order", complete(b, u, CompletedPart{Number: 2, ETag: "x"}, CompletedPart{Number: 1, ETag: "x"}), ErrPartOrder},
		{"a part listed twice", complete(b, u, CompletedPart{Number: 1, ETag: "x"}, CompletedPart{Number: 1, ETag: "x"}), ErrPartOrder},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.err, tt.want)
		}
	}
	if _, _, err := b.Parts("other", "pics", "k", u.ID, 0, 10); !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("another account listing the parts: %v", err)
	}
	if err := b.AbortUpload("acme", "pics", "k", u.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.AbortUpload("acme", "pics", "k", u.ID); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("second abort: %v", err)
	}
}

func put(b *blobStore, u Upload, key string, n int) error {
	_, err := b.Store.PutPart(context.Background(), "acme", "pics", key, u.ID, n, bytes.NewReader([]byte("x")), PartOptions{Now: t0})
	return err
}

func complete(b *blobStore, u Upload, parts ...CompletedPart) error {
	_, err := b.CompleteUpload(context.Background(), "acme", "pics", u.Key, u.ID, parts, t0, Preconditions{})
	return err
}

func TestUploadsListingAndExpiry(t *testing.T) {
	b := newBlobStore(t)
	ctx := context.Background()
	for i, key := range []string{"a/1", "a/2", "b", "b", "c/d/e"} {
		u, err := b.CreateUpload(t.Context(), "acme", "pics", key, PutOptions{Now: t0.Add(time.Duration(i) * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Store.PutPart(ctx, "acme", "pics", key, u.ID, 1, bytes.NewReader([]byte(fmt.Sprint(i))), PartOptions{Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := b.Uploads("acme", "pics", "", "/", "", "", 1000)
	if err != nil || len(l.Uploads) != 2 || fmt.Sprint(l.Prefixes) != "[a/ c/]" || l.Truncated {
		t.Fatalf("Uploads with a delimiter = %+v, %v", l, err)
	}
	var seen []string
	key, id := "", ""
	for {
		l, err := b.Uploads("acme", "pics", "", "", key, id, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range l.Uploads {
			seen = append(seen, u.Key)
		}
		if !l.Truncated {
			break
		}
		key, id = l.NextKeyMarker, l.NextIDMarker
	}
	if fmt.Sprint(seen) != "[a/1 a/2 b b c/d/e]" {
		t.Fatalf("paged uploads = %v", seen)
	}
	// Uploads started before the cutoff are aborted with their parts.
	n, err := b.ExpireUploads(t0.Add(150 * time.Minute))
	if err != nil || n != 3 {
		t.Fatalf("ExpireUploads = %d, %v", n, err)
	}
	if files := b.blobFiles(); files != 2 {
		t.Fatalf("%d body files left for two uploads", files)
	}
	// Deleting the bucket aborts the rest, and a new owner of the name
	// sees none of them.
	if err := b.DeleteBucket("acme", "pics"); err != nil {
		t.Fatal(err)
	}
	if files := b.blobFiles(); files != 0 {
		t.Fatalf("%d body files left after the bucket went", files)
	}
	if n, err := b.ExpireUploads(t0); err != nil || n != 0 {
		t.Fatalf("ExpireUploads after the bucket went = %d, %v", n, err)
	}
	if _, err := b.CreateBucket("other", "pics", "", t0); err != nil {
		t.Fatal(err)
	}
	if l, err := b.Uploads("other", "pics", "", "", "", "", 1000); err != nil || len(l.Uploads) != 0 {
		t.Fatalf("the new owner's uploads = %+v, %v", l, err)
	}
}

// TestPinnedPartOutlivesAbort: a part being joined (pinned) keeps its
// file through an abort, and loses it when unpinned.
func TestPinnedPartOutlivesAbort(t *testing.T) {
	b := newBlobStore(t)
	u, _ := b.CreateUpload(t.Context(), "acme", "pics", "k", PutOptions{Now: t0})
	p, err := b.Store.PutPart(context.Background(), "acme", "pics", "k", u.ID, 1, bytes.NewReader([]byte("part")), PartOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	b.pins[p.Blob]++
	b.mu.Unlock()
	if err := b.AbortUpload("acme", "pics", "k", u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(b.blobPath(p.Blob)); err != nil {
		t.Fatalf("a pinned part was removed by the abort: %v", err)
	}
	b.unpin([]string{p.Blob})
	if _, err := os.Stat(b.blobPath(p.Blob)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the part survived its unpinning: %v", err)
	}
	if len(b.pins) != 0 {
		t.Fatalf("pins left: %v", b.pins)
	}
}

// TestListPageMatchesFullListing: every page of ListPage is the matching
// window of the full listing, with its total and next marker.
func TestListPageMatchesFullListing(t *testing.T) {
	b := newBlobStore(t)
	for _, k := range []string{"a", "b/1", "b/2", "b/c/3", "c", "d/", "d/e", "f/g/h", "z"} {
		b.put(k, []byte(k))
	}
	for _, delim := range []string{"", "/"} {
		for _, prefix := range []string{"", "b/", "d"} {
			full, err := b.ListObjects("acme", "pics", prefix, delim, "", 1000)
			if err != nil {
				t.Fatal(err)
			}
			var entries []string
			for _, o := range full.Objects {
				entries = append(entries, o.Key)
			}
			entries = append(entries, full.Prefixes...)
			slices.Sort(entries)
			for per := 1; per <= 4; per++ {
				for skip := 0; skip <= len(entries); skip += per {
					l, total, err := b.ListPage("acme", "pics", prefix, delim, "", skip, per)
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for _, o := range l.Objects {
						got = append(got, o.Key)
					}
					got = append(got, l.Prefixes...)
					slices.Sort(got)
					end := min(skip+per, len(entries))
					want := entries[skip:end]
					wantNext := ""
					if end < len(entries) {
						wantNext = entries[end-1]
					}
					if total != len(entries) || !slices.Equal(got, want) || l.NextMarker != wantNext {
						t.Fatalf("prefix %q delim %q skip %d per %d: %v total %d next %q; want %v total %d next %q",
							prefix, delim, skip, per, got, total, l.NextMarker, want, len(entries), wantNext)
					}
				}
			}
		}
	}
}
