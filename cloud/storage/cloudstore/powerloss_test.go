package cloudstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestPowerLossKeepsAcknowledgedObjects uploads objects of every size
// from many goroutines, on a crashable in-memory file system that holds
// the database and the body files alike: small objects kept inline, large
// ones in body files, multipart ones from parts joined into a body file
// (one of them over writebackEvery). It takes a crash image of the disk
// (unsynced data dropped) while they run, with a PUT and a part held
// halfway through their bodies, and opens the store on the image. Every
// object acknowledged before the image must be there whole, with its size
// and ETag; every part acknowledged must be listed and join into its
// object; an object may be visible only if its upload had begun, and then
// whole; the held uploads and half-written bodies must leave nothing. It
// fails if a write is answered before its fsync: the database's, a body
// file's, or that of the directory entry naming it.
func TestPowerLossKeepsAcknowledgedObjects(t *testing.T) {
	for round := range 3 {
		if powerLossRound(t, round); t.Failed() {
			return
		}
	}
}

// wantObject is what an upload should leave: a size, an ETag and the MD5
// of the body.
type wantObject struct {
	size int64
	etag string
	sum  [md5.Size]byte
}

// multipartUpload is an upload of the test's and its acknowledged parts.
type multipartUpload struct {
	id    string
	sizes []int // of every part the upload will have
	want  wantObject
	parts []Part // acknowledged
}

// crashRun is what the uploaders have done, under mu.
type crashRun struct {
	mu      sync.Mutex
	started map[string]wantObject       // objects whose upload (or completion) has begun
	acked   map[string]wantObject       // objects acknowledged
	uploads map[string]*multipartUpload // by object key, once created
	kinds   [3]int                      // objects acknowledged, by kind
}

// Kinds of upload.
const (
	kindInline = iota
	kindFile
	kindMultipart
)

func (c *crashRun) start(key string, w wantObject) {
	c.mu.Lock()
	c.started[key] = w
	c.mu.Unlock()
}

func (c *crashRun) ack(key string, w wantObject, kind int) {
	c.mu.Lock()
	c.acked[key] = w
	c.kinds[kind]++
	c.mu.Unlock()
}

// bodyOf returns n bytes that depend on key alone.
func bodyOf(key string, n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8(sha256.Sum256([]byte(key))).Read(b)
	return b
}

func wantOf(body []byte, etag string) wantObject {
	sum := md5.Sum(body)
	if etag == "" {
		etag = hex.EncodeToString(sum[:])
	}
	return wantObject{size: int64(len(body)), etag: etag, sum: sum}
}

// multipartETag is S3's ETag of an object joined from parts of these
// sizes cut from body.
func multipartETag(body []byte, sizes []int) string {
	var sums []byte
	off := 0
	for _, n := range sizes {
		s := md5.Sum(body[off : off+n])
		sums = append(sums, s[:]...)
		off += n
	}
	s := md5.Sum(sums)
	return fmt.Sprintf("%s-%d", hex.EncodeToString(s[:]), len(sizes))
}

// gate is a body's middle: it calls reached once the bytes before it
// have been read, and ends once release is closed.
type gate struct {
	reached func()
	release <-chan struct{}
}

func (g gate) Read([]byte) (int, error) {
	g.reached()
	<-g.release
	return 0, io.EOF
}

// heldBody is body whose reader stops halfway until release is closed.
func heldBody(body []byte, reached func(), release <-chan struct{}) io.Reader {
	half := len(body) / 2
	return io.MultiReader(bytes.NewReader(body[:half]), gate{reached, release}, bytes.NewReader(body[half:]))
}

// crashImage is a crash image of a store's disk and what had been done
// when it was taken.
type crashImage struct {
	fs      *vfs.MemFS
	acked   map[string]wantObject      // objects acknowledged before the image
	started map[string]wantObject      // objects begun before the image (and a few after)
	uploads map[string]multipartUpload // with the parts acknowledged before the image
	held    string                     // the id of the upload whose part was held
	kinds   [3]int                     // objects acknowledged before the image, by kind
}

func powerLossRound(t *testing.T, round int) {
	img := uploadUntilCrash(t, round)
	after, err := open("db", nil, img.fs)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if err := after.OpenBlobs("objects"); err != nil {
		t.Fatal(err)
	}
	visible := wantObjectsAfterCrash(t, round, after, img)
	completed := wantPartsAfterCrash(t, round, after, img, visible)
	t.Logf("round %d: %v inline, file and multipart objects acknowledged before the image, %d objects after the crash, %d uploads completed after it",
		round, img.kinds, len(visible), completed)
}

// uploadUntilCrash uploads objects of every kind from many goroutines,
// takes a crash image while they run, then stops them.
func uploadUntilCrash(t *testing.T, round int) crashImage {
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	s := openWithBucket(t, fs)
	defer s.Close()
	run := &crashRun{started: map[string]wantObject{}, acked: map[string]wantObject{}, uploads: map[string]*multipartUpload{}}
	var (
		stop    atomic.Bool
		wg      sync.WaitGroup
		reached = make(chan struct{}, 2)
		release = make(chan struct{})
	)
	defer func() {
		stop.Store(true)
		close(release)
		wg.Wait()
	}()

	// A PUT and a part that stop halfway through their bodies, their
	// first half (more than InlineMax) written to a temporary file, until
	// the crash image is taken.
	heldUpload, err := s.CreateUpload(t.Context(), "acme", "pics", "held/part", PutOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	held := func(what string, body []byte, put func(io.Reader) error) {
		defer wg.Done()
		var once sync.Once
		signal := func() { once.Do(func() { reached <- struct{}{} }) }
		defer signal() // should it fail before halfway
		if err := put(heldBody(body, signal, release)); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	wg.Add(2)
	go held("held put", bodyOf(fmt.Sprintf("held-put-%d", round), 1<<20), func(r io.Reader) error {
		_, err := s.Put(ctx, "acme", "pics", "held/put", r, PutOptions{ContentType: "", Max: 2 << 20, Now: t0})
		return err
	})
	go held("held part", bodyOf(fmt.Sprintf("held-part-%d", round), 1<<20), func(r io.Reader) error {
		_, err := s.PutPart(ctx, "acme", "pics", "held/part", heldUpload.ID, 1, r, PartOptions{Now: t0})
		return err
	})
	<-reached
	<-reached

	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				key := fmt.Sprintf("w%02d/%05d", w, i)
				var err error
				switch {
				case w < 6:
					err = putOne(ctx, s, run, key, 100+(w*131+i*37)%1000, kindInline)
				case w < 11:
					err = putOne(ctx, s, run, key, InlineMax+1+(w*7919+i*4099)%(32<<10), kindFile)
				case w == 11:
					// Parts of 5 MiB cost much memory here: one upload
					// only, joining into more than writebackEvery.
					if i > 0 {
						time.Sleep(time.Millisecond)
						continue
					}
					err = putMultipart(ctx, s, run, key, []int{MinPartSize, writebackEvery - MinPartSize + 1<<20})
				case w < 14:
					// One part: a body file, or inline once joined.
					err = putMultipart(ctx, s, run, key, []int{InlineMax/2 + (w*7919+i*4099)%(InlineMax/2+(32<<10))})
				default:
					// Never completed, so that parts alone are tested.
					_, _, err = putParts(ctx, s, run, key, []int{InlineMax + 1 + (i*4099)%(32<<10)})
				}
				if err != nil {
					t.Errorf("%s: %v", key, err)
					return
				}
			}
		}()
	}

	// Take the image once enough of every kind is acknowledged (more each
	// round), the object of 5 MiB parts among them, however fast the
	// machine (or -race) is.
	const big = "w11/00000"
	wantKinds := [3]int{50 * (round + 1), 20 * (round + 1), 5 * (round + 1)}
	enough := func() bool {
		_, ok := run.acked[big]
		k := run.kinds
		return ok && k[0] >= wantKinds[0] && k[1] >= wantKinds[1] && k[2] >= wantKinds[2]
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		run.mu.Lock()
		ok := enough()
		run.mu.Unlock()
		if ok || t.Failed() {
			break
		}
	}
	img := crashImage{held: heldUpload.ID, uploads: map[string]multipartUpload{}}
	run.mu.Lock()
	ok := enough()
	img.acked, img.kinds = maps.Clone(run.acked), run.kinds
	for k, u := range run.uploads {
		img.uploads[k] = multipartUpload{id: u.id, sizes: u.sizes, want: u.want, parts: slices.Clone(u.parts)}
	}
	run.mu.Unlock()
	img.fs = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	run.mu.Lock()
	img.started = maps.Clone(run.started)
	run.mu.Unlock()
	if !ok && !t.Failed() {
		t.Fatalf("round %d: %v objects of each kind acknowledged before the crash image, want %v and %s", round, img.kinds, wantKinds, big)
	}
	if t.Failed() {
		t.FailNow()
	}
	return img
}

// wantObjectsAfterCrash checks the objects of the store opened on img:
// every acknowledged one is there, and every one there is whole and was
// begun. It returns the keys of those there.
func wantObjectsAfterCrash(t *testing.T, round int, after *Store, img crashImage) map[string]bool {
	l, err := after.ListObjects("acme", "pics", "", "", "", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	visible := map[string]bool{}
	for _, o := range l.Objects {
		visible[o.Key] = true
		want, ok := img.started[o.Key]
		switch {
		case o.Key == "held/put":
			t.Errorf("round %d: the PUT held halfway is visible after the crash", round)
		case !ok:
			t.Errorf("round %d: %s is visible after the crash, but its upload never began", round, o.Key)
		default:
			wantWhole(t, after, round, o.Key, want)
		}
	}
	for key, want := range img.acked {
		if !visible[key] {
			t.Errorf("round %d: acknowledged object %s (%d bytes) lost in the crash", round, key, want.size)
		}
	}
	bk, err := after.Bucket("acme", "pics")
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(l.Objects)) != bk.Objects {
		t.Errorf("round %d: the bucket counts %d objects and lists %d", round, bk.Objects, len(l.Objects))
	}
	// Nothing else is left: no temporary file, no body file that neither
	// an object nor a part refers to.
	referenced := map[string]bool{}
	for _, o := range l.Objects {
		for _, id := range o.bodyFiles() {
			referenced[id] = true
		}
	}
	ul, err := after.Uploads("acme", "pics", "", "", "", "", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range ul.Uploads {
		ps, _, err := after.Parts("acme", "pics", u.Key, u.ID, 0, MaxPartNumber)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			referenced[p.Blob] = true
		}
		if u.ID == img.held && len(ps) > 0 {
			t.Errorf("round %d: the part held halfway is listed after the crash", round)
		}
	}
	files := 0
	for i := range 256 {
		names, err := img.fs.List(img.fs.PathJoin("objects", shardName(i)))
		if err != nil {
			t.Fatal(err)
		}
		files += len(names)
	}
	if tmp, _ := img.fs.List(img.fs.PathJoin("objects", "tmp")); files != len(referenced) || len(tmp) > 0 {
		t.Errorf("round %d: %d body files and %d temporary files after the crash, want the %d referenced", round, files, len(tmp), len(referenced))
	}
	return visible
}

// wantPartsAfterCrash checks that every part acknowledged before img was
// taken is listed as it was acknowledged and, once its upload has them
// all, joins into its object, unless the upload had been completed. It
// returns how many uploads it completed.
func wantPartsAfterCrash(t *testing.T, round int, after *Store, img crashImage, visible map[string]bool) int {
	completed := 0
	for key, u := range img.uploads {
		if len(u.parts) == 0 {
			continue
		}
		ps, _, err := after.Parts("acme", "pics", key, u.id, 0, MaxPartNumber)
		if errors.Is(err, ErrNoSuchUpload) {
			if !visible[key] {
				t.Errorf("round %d: upload %s with %d acknowledged parts is gone after the crash, and no object was made of it", round, key, len(u.parts))
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got := map[int]Part{}
		for _, p := range ps {
			got[p.Number] = p
		}
		var list []CompletedPart
		for _, p := range u.parts {
			if g := got[p.Number]; g.ETag != p.ETag || g.Size != p.Size {
				t.Errorf("round %d: part %d of %s is %d bytes, ETag %q after the crash; acknowledged as %d bytes, ETag %q", round, p.Number, key, g.Size, g.ETag, p.Size, p.ETag)
			}
			list = append(list, CompletedPart{Number: p.Number, ETag: p.ETag})
		}
		if len(u.parts) < len(u.sizes) {
			continue
		}
		if _, err := after.CompleteUpload(context.Background(), "acme", "pics", key, u.id, list, t0, Preconditions{}); err != nil {
			t.Errorf("round %d: completing %s after the crash: %v", round, key, err)
			continue
		}
		wantWhole(t, after, round, key, u.want)
		completed++
	}
	return completed
}

// putOne PUTs an object of n bytes.
func putOne(ctx context.Context, s *Store, run *crashRun, key string, n, kind int) error {
	body := bodyOf(key, n)
	want := wantOf(body, "")
	run.start(key, want)
	o, err := s.Put(ctx, "acme", "pics", key, bytes.NewReader(body), PutOptions{ContentType: "", Max: 1 << 20, Now: t0})
	if err != nil {
		return err
	}
	if o.Size != want.size || o.ETag != want.etag {
		return fmt.Errorf("PutObject: %d bytes, ETag %s; want %d, %s", o.Size, o.ETag, want.size, want.etag)
	}
	run.ack(key, want, kind)
	return nil
}

// putParts creates an upload and PUTs parts of these sizes, and returns
// the upload and the parts to complete it with.
func putParts(ctx context.Context, s *Store, run *crashRun, key string, sizes []int) (*multipartUpload, []CompletedPart, error) {
	u, err := s.CreateUpload(ctx, "acme", "pics", key, PutOptions{Now: t0})
	if err != nil {
		return nil, nil, err
	}
	total := 0
	for _, n := range sizes {
		total += n
	}
	body := bodyOf(key, total)
	mu := &multipartUpload{id: u.ID, sizes: sizes, want: wantOf(body, multipartETag(body, sizes))}
	run.mu.Lock()
	run.uploads[key] = mu
	run.mu.Unlock()
	var list []CompletedPart
	off := 0
	for i, n := range sizes {
		p, err := s.PutPart(ctx, "acme", "pics", key, u.ID, i+1, bytes.NewReader(body[off:off+n]), PartOptions{Now: t0})
		if err != nil {
			return nil, nil, err
		}
		off += n
		run.mu.Lock()
		mu.parts = append(mu.parts, p)
		run.mu.Unlock()
		list = append(list, CompletedPart{Number: p.Number, ETag: p.ETag})
	}
	return mu, list, nil
}

// putMultipart uploads an object in parts of these sizes.
func putMultipart(ctx context.Context, s *Store, run *crashRun, key string, sizes []int) error {
	u, list, err := putParts(ctx, s, run, key, sizes)
	if err != nil {
		return err
	}
	want := u.want // set before u was shared, never changed
	run.start(key, want)
	o, err := s.CompleteUpload(ctx, "acme", "pics", key, u.id, list, t0, Preconditions{})
	if err != nil {
		return err
	}
	if o.Size != want.size || o.ETag != want.etag {
		return fmt.Errorf("CompleteUpload: %d bytes, ETag %s; want %d, %s", o.Size, o.ETag, want.size, want.etag)
	}
	run.ack(key, want, kindMultipart)
	return nil
}

// wantWhole checks that key reads back as want: its size, its ETag and
// every byte.
func wantWhole(t *testing.T, s *Store, round int, key string, want wantObject) {
	t.Helper()
	o, body, err := s.OpenObject(t.Context(), "acme", "pics", key)
	if err != nil {
		t.Errorf("round %d: %s: %v", round, key, err)
		return
	}
	defer body.Close()
	h := md5.New()
	n, err := io.Copy(h, body)
	if err != nil || o.Size != want.size || n != want.size || o.ETag != want.etag || !bytes.Equal(h.Sum(nil), want.sum[:]) {
		t.Errorf("round %d: %s after the crash: size %d, %d bytes read (%v), ETag %s, MD5 %x; want %d bytes, ETag %s, MD5 %x",
			round, key, o.Size, n, err, o.ETag, h.Sum(nil), want.size, want.etag, want.sum)
	}
}

// afterPowerLoss takes a crash image of fs, in which what was not synced
// is lost, closes s and opens the image; the test's cleanup closes it.
func afterPowerLoss(t *testing.T, fs *vfs.MemFS, s *Store) *Store {
	t.Helper()
	img := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	s.Close()
	after, err := open("db", nil, img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { after.Close() })
	return after
}

// openWithBucket opens a store, its database and body files on fs, with
// the bucket pics of acme. The caller closes it.
func openWithBucket(t *testing.T, fs vfs.FS) *Store {
	t.Helper()
	s, err := open("db", nil, fs)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.OpenBlobs("objects"); err != nil {
		s.Close()
		t.Fatal(err)
	}
	if _, err := s.CreateBucket("acme", "pics", "", t0); err != nil {
		s.Close()
		t.Fatal(err)
	}
	return s
}
