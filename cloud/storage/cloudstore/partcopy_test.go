package cloudstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// whole is a CopyPart span of the whole source.
func whole(src Object) (int64, int64, error) { return 0, src.Size, nil }

// bytesOf is a CopyPart span of length bytes from first.
func bytesOf(first, length int64) func(Object) (int64, int64, error) {
	return func(Object) (int64, int64, error) { return first, length, nil }
}

// etagOfParts is S3's ETag of an object made of parts with these MD5s.
func etagOfParts(etags ...string) string {
	var sums []byte
	for _, e := range etags {
		s, _ := hex.DecodeString(e)
		sums = append(sums, s...)
	}
	sum := md5.Sum(sums)
	return fmt.Sprintf("%s-%d", hex.EncodeToString(sum[:]), len(etags))
}

// TestCopyPartSharesWholeBody: a whole single-part object copied into a
// part shares its body file; the part outlives the source's deletion and
// a restart, completes like an uploaded part, and the shared file goes
// once nothing refers to it.
func TestCopyPartSharesWholeBody(t *testing.T) {
	b := newBlobStore(t)
	ctx := context.Background()
	if _, err := b.CreateBucket("acme", "other", "", t0); err != nil {
		t.Fatal(err)
	}
	body := randomBody(MinPartSize + 100)
	src := b.put("src", body)
	b.wantFiles("the source", 1)
	u, err := b.CreateUpload(t.Context(), "acme", "other", "dst", PutOptions{ContentType: "application/x-dst", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.CopyPart(ctx, "acme", "other", "dst", u.ID, 1, PartSource{Bucket: "pics", Key: "src"}, whole, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if p.ETag != src.ETag || p.Blob != src.Blob || p.Size != src.Size || !p.LastModified.Equal(t0.Add(time.Minute)) {
		t.Fatalf("whole-object part = %+v, source %+v", p, src)
	}
	b.wantFiles("a shared part", 1)
	// Copying the same body into the same number again keeps one
	// reference, not two or none.
	if _, err := b.CopyPart(ctx, "acme", "other", "dst", u.ID, 1, PartSource{Bucket: "pics", Key: "src"}, whole, t0); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.refs(src.Blob); n != 2 {
		t.Fatalf("the shared body has %d references, want 2 (the object, the part)", n)
	}
	if _, err := b.Delete("acme", "pics", "src", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.reopen()
	b.wantFiles("the part after the source's deletion and a restart", 1)
	tail := []byte("and the tail")
	p2, err := b.Store.PutPart(ctx, "acme", "other", "dst", u.ID, 2, bytes.NewReader(tail), PartOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := b.CompleteUpload(ctx, "acme", "other", "dst", u.ID, []CompletedPart{{Number: 1, ETag: p.ETag}, {Number: 2, ETag: p2.ETag}}, t0, Preconditions{})
	if err != nil {
		t.Fatal(err)
	}
	want := append(bytes.Clone(body), tail...)
	if obj.ETag != etagOfParts(p.ETag, p2.ETag) || obj.Size != int64(len(want)) || obj.ContentType != "application/x-dst" {
		t.Fatalf("completed object = %+v", obj)
	}
	_, rc, err := b.OpenObject(t.Context(), "acme", "other", "dst")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	got.ReadFrom(rc)
	rc.Close()
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("completed body: %d bytes, want %d", got.Len(), len(want))
	}
	// The object is its parts' files: the shared body, now named by the
	// object alone, and the tail's.
	b.wantFiles("after completion (the parts' files, now the object's)", 2)
	if n, _ := b.refs(src.Blob); n != 1 {
		t.Fatalf("the shared body has %d references after completion, want 1 (the object)", n)
	}
	if _, err := b.Delete("acme", "other", "dst", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(b.blobPath(src.Blob)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the shared body outlived every reference: %v", err)
	}
}

// TestCopyPartIntoSeveralParts: one object copied whole into two part
// numbers shares its body with both; ending the upload, by abort or by
// completion, releases both references, so that deleting the source then
// removes the body file.
func TestCopyPartIntoSeveralParts(t *testing.T) {
	for _, end := range []string{"abort", "complete"} {
		t.Run(end, func(t *testing.T) {
			b := newBlobStore(t)
			ctx := context.Background()
			src := b.put("src", randomBody(MinPartSize+100))
			u, err := b.CreateUpload(t.Context(), "acme", "pics", "dst", PutOptions{Now: t0})
			if err != nil {
				t.Fatal(err)
			}
			var list []CompletedPart
			for n := 1; n <= 2; n++ {
				p, err := b.CopyPart(ctx, "acme", "pics", "dst", u.ID, n, PartSource{Bucket: "pics", Key: "src"}, whole, t0)
				if err != nil {
					t.Fatal(err)
				}
				list = append(list, CompletedPart{Number: n, ETag: p.ETag})
			}
			if got, _ := b.refs(src.Blob); got != 3 {
				t.Fatalf("after two copies: got %d references, want 3 (the object, two parts)", got)
			}
			if end == "abort" {
				err = b.AbortUpload("acme", "pics", "dst", u.ID)
			} else {
				_, err = b.CompleteUpload(ctx, "acme", "pics", "dst", u.ID, list, t0, Preconditions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			// After an abort only the source names the body; after a
			// completion the new object does too, twice (its two parts).
			want := map[string]int{"abort": 1, "complete": 3}[end]
			if got, _ := b.refs(src.Blob); got != want {
				t.Fatalf("after %s: got %d references, want %d", end, got, want)
			}
			if _, err := b.Delete("acme", "pics", "src", DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if end == "complete" {
				if _, err := b.Delete("acme", "pics", "dst", DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := os.Stat(b.blobPath(src.Blob)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("after %s and deleting the objects: got %v, want the body file gone", end, err)
			}
		})
	}
}

// TestCopyPartRanges: ranges of inline, file and multipart objects, and
// whole inline and multipart objects, are copied byte for byte with the
// MD5 of the bytes as ETag, into parts of their own files.
func TestCopyPartRanges(t *testing.T) {
	b := newBlobStore(t)
	ctx := context.Background()
	small := []byte("a small inline object")
	b.put("small", small)
	big := randomBody(MinPartSize + 3000)
	bigObj := b.put("big", big)

	// A multipart source.
	mu, _ := b.CreateUpload(t.Context(), "acme", "pics", "multi", PutOptions{Now: t0})
	mp1, err := b.Store.PutPart(ctx, "acme", "pics", "multi", mu.ID, 1, bytes.NewReader(big), PartOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	mp2, err := b.Store.PutPart(ctx, "acme", "pics", "multi", mu.ID, 2, bytes.NewReader(small), PartOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	multi, err := b.CompleteUpload(ctx, "acme", "pics", "multi", mu.ID, []CompletedPart{{Number: 1, ETag: mp1.ETag}, {Number: 2, ETag: mp2.ETag}}, t0, Preconditions{})
	if err != nil {
		t.Fatal(err)
	}
	multiBody := append(bytes.Clone(big), small...)

	u, _ := b.CreateUpload(t.Context(), "acme", "pics", "dst", PutOptions{Now: t0})
	type tc struct {
		src           string
		first, length int64
		want          []byte
	}
	cases := []tc{
		{"big", 1000, MinPartSize, big[1000 : 1000+MinPartSize]}, // a range of a file
		{"multi", 0, int64(len(multiBody)), multiBody},           // a whole multipart object: bytes copied
		{"small", 2, 5, small[2:7]},                              // a range of an inline object
		{"big", int64(len(big)) - 1, 1, big[len(big)-1:]},        // the last byte
		{"small", 0, int64(len(small)), small},                   // a whole inline object
		{"big", 10, 0, nil},                                      // nothing
	}
	var etags []string
	for i, c := range cases {
		p, err := b.CopyPart(ctx, "acme", "pics", "dst", u.ID, i+1, PartSource{Bucket: "pics", Key: c.src}, bytesOf(c.first, c.length), t0)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if p.ETag != md5hex(c.want) || p.Size != int64(len(c.want)) || p.Blob == "" || p.Blob == bigObj.Blob || p.Blob == multi.Blob {
			t.Fatalf("case %d: part %+v, want %d bytes of MD5 %s in a file of its own", i, p, len(c.want), md5hex(c.want))
		}
		etags = append(etags, p.ETag)
	}
	// Every part is a file; the sources' three files (big's, and
	// multi's two parts) are untouched.
	b.wantFiles("the copied parts", 3+len(cases))
	// The first three complete into one object, byte for byte.
	obj, err := b.CompleteUpload(ctx, "acme", "pics", "dst", u.ID,
		[]CompletedPart{{Number: 1, ETag: etags[0]}, {Number: 2, ETag: etags[1]}, {Number: 3, ETag: etags[2]}}, t0, Preconditions{})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Concat(cases[0].want, cases[1].want, cases[2].want)
	if obj.ETag != etagOfParts(etags[:3]...) {
		t.Fatalf("ETag %s, want %s", obj.ETag, etagOfParts(etags[:3]...))
	}
	b.wantBody("dst", want)
	b.wantBody("big", big)
	b.wantBody("multi", multiBody)
	b.wantFiles("after completion (dst's three parts, big's, multi's two)", 6)
}

// TestCopyPartRefusals: every refusal leaves the upload's parts and the
// files as they were.
func TestCopyPartRefusals(t *testing.T) {
	b := newBlobStore(t)
	ctx := context.Background()
	body := randomBody(InlineMax + 10)
	b.put("src", body)
	if _, err := b.CreateBucket("mallory", "theirs", "", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.Put(ctx, "mallory", "theirs", "src", bytes.NewReader(body), PutOptions{ContentType: "", Max: 1 << 20, Now: t0}); err != nil {
		t.Fatal(err)
	}
	u, _ := b.CreateUpload(t.Context(), "acme", "pics", "dst", PutOptions{Now: t0})
	if _, err := b.Store.PutPart(ctx, "acme", "pics", "dst", u.ID, 1, bytes.NewReader([]byte("kept")), PartOptions{Now: t0}); err != nil {
		t.Fatal(err)
	}
	errCondition := errors.New("the copy condition does not hold")
	size := int64(len(body))
	for _, c := range []struct {
		name           string
		id             string
		n              int
		srcBucket, src string
		span           func(Object) (int64, int64, error)
		want           error
	}{
		{"past the end", u.ID, 1, "pics", "src", bytesOf(size-5, 6), ErrCopyRange},
		{"before the start", u.ID, 1, "pics", "src", bytesOf(-1, 6), ErrCopyRange},
		{"negative length", u.ID, 1, "pics", "src", bytesOf(0, -1), ErrCopyRange},
		{"condition", u.ID, 1, "pics", "src", func(Object) (int64, int64, error) { return 0, 0, errCondition }, errCondition},
		{"missing source", u.ID, 1, "pics", "nothing", whole, ErrNotFound},
		{"another account's source", u.ID, 1, "theirs", "src", whole, ErrNotFound},
		{"missing bucket", u.ID, 1, "gone", "src", whole, ErrNotFound},
		{"unknown upload", "0123", 1, "pics", "src", whole, ErrNoSuchUpload},
		{"part 0", u.ID, 0, "pics", "src", whole, ErrBadPartNumber},
		{"part 10001", u.ID, MaxPartNumber + 1, "pics", "src", whole, ErrBadPartNumber},
	} {
		_, err := b.CopyPart(ctx, "acme", "pics", "dst", c.id, c.n, PartSource{Bucket: c.srcBucket, Key: c.src}, c.span, t0)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// mallory cannot copy into acme's upload either.
	if _, err := b.CopyPart(ctx, "mallory", "pics", "dst", u.ID, 1, PartSource{Bucket: "theirs", Key: "src"}, whole, t0); !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrNoSuchUpload) {
		t.Errorf("another account's copy into the upload: %v", err)
	}
	parts, _, err := b.Parts("acme", "pics", "dst", u.ID, 0, 10)
	if err != nil || len(parts) != 1 || parts[0].ETag != md5hex([]byte("kept")) {
		t.Fatalf("parts after the refusals = %+v, %v", parts, err)
	}
	b.wantFiles("after the refusals", 3) // acme's source, mallory's, the part
}

// TestCopyPartSurvivesPowerLoss: once CopyPart has answered, its part is
// on disk, shared or copied: a crash image taken right then (every
// unsynced byte lost) completes into the right object.
func TestCopyPartSurvivesPowerLoss(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	s := openWithBucket(t, fs)
	defer s.Close()
	body := randomBody(MinPartSize + 5000)
	if _, err := s.Put(ctx, "acme", "pics", "src", bytes.NewReader(body), PutOptions{ContentType: "", Max: 10 << 20, Now: t0}); err != nil {
		t.Fatal(err)
	}
	u, err := s.CreateUpload(t.Context(), "acme", "pics", "dst", PutOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	p1, err := s.CopyPart(ctx, "acme", "pics", "dst", u.ID, 1, PartSource{Bucket: "pics", Key: "src"}, whole, t0)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := s.CopyPart(ctx, "acme", "pics", "dst", u.ID, 2, PartSource{Bucket: "pics", Key: "src"}, bytesOf(7, 4000), t0)
	if err != nil {
		t.Fatal(err)
	}
	after, err := open("db", nil, fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}))
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if err := after.OpenBlobs("objects"); err != nil {
		t.Fatal(err)
	}
	if _, err := after.Delete("acme", "pics", "src", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	obj, err := after.CompleteUpload(ctx, "acme", "pics", "dst", u.ID, []CompletedPart{{Number: 1, ETag: p1.ETag}, {Number: 2, ETag: p2.ETag}}, t0, Preconditions{})
	if err != nil {
		t.Fatalf("completing the copied parts after the crash: %v", err)
	}
	_, rc, err := after.OpenObject(t.Context(), "acme", "pics", "dst")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var got bytes.Buffer
	got.ReadFrom(rc)
	if want := slices.Concat(body, body[7:4007]); !bytes.Equal(got.Bytes(), want) || obj.ETag != etagOfParts(md5hex(body), md5hex(body[7:4007])) {
		t.Fatalf("after the crash: %d bytes, ETag %s; want %d bytes", got.Len(), obj.ETag, len(want))
	}
}
