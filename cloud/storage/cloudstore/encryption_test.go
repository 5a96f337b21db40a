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
	"strings"
	"testing"

	"github.com/latticenet/lattice/cloud/storage/sse"
)

// newSecretStore is newBlobStore with the secret key that SSE-S3 needs.
func newSecretStore(t *testing.T) *blobStore {
	t.Helper()
	b := newBlobStore(t)
	if err := b.OpenSecrets(filepath.Join(b.root, "secret.key")); err != nil {
		t.Fatal(err)
	}
	return b
}

// plaintext is a body whose every 16 bytes say where they are, so that a
// search of the disk for any of it finds it.
func plaintext(n int) []byte {
	var buf bytes.Buffer
	for buf.Len() < n {
		fmt.Fprintf(&buf, "PLAIN%010d|", buf.Len())
	}
	return buf.Bytes()[:n]
}

// onDisk is everything the store wrote: its database and body files.
func (b *blobStore) onDisk() []byte {
	b.t.Helper()
	var all []byte
	filepath.Walk(b.root, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			data, _ := os.ReadFile(path)
			all = append(all, data...)
		}
		return nil
	})
	return all
}

func (b *blobStore) readVersion(key, version string, customerKey []byte) ([]byte, Object, error) {
	obj, body, err := b.OpenObjectVersion(b.t.Context(), "acme", "pics", key, version, customerKey)
	if err != nil {
		return nil, obj, err
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	return data, obj, err
}

var customerKey = bytes.Repeat([]byte{0x42}, 32)

// TestEncryptedObjects writes objects of every size class in both modes
// and reads them back, whole and in ranges, and checks that no plaintext
// reaches the disk and that the keys are asked for as they must be.
func TestEncryptedObjects(t *testing.T) {
	b := newSecretStore(t)
	ctx := context.Background()
	for _, mode := range []string{SSES3, SSEC} {
		for _, n := range []int{0, 10, InlineMax, InlineMax + 1, sse.ChunkSize*3 + 7} {
			key := fmt.Sprintf("%s/%d", mode, n)
			plain := plaintext(n)
			enc := &SSE{Mode: mode}
			var ck []byte
			if mode == SSEC {
				enc.CustomerKey, ck = customerKey, customerKey
			}
			obj, err := b.Put(ctx, "acme", "pics", key, bytes.NewReader(plain), PutOptions{Max: 1 << 20, Now: t0, Encrypt: enc})
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			sum := md5.Sum(plain)
			if (obj.ETag == hex.EncodeToString(sum[:])) != (mode == SSES3) {
				t.Errorf("%s: ETag %s; the plaintext's MD5 is %x (SSE-S3 gives it, SSE-C must not)", key, obj.ETag, sum)
			}
			if obj.Size != int64(n) || obj.Encryption == nil || obj.Encryption.Mode != mode {
				t.Fatalf("%s: %+v", key, obj)
			}
			got, _, err := b.readVersion(key, "", ck)
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("%s: read %d bytes, %v", key, len(got), err)
			}
			// Ranges, across chunk boundaries too.
			if n > 100 {
				_, body, err := b.OpenObjectVersion(b.t.Context(), "acme", "pics", key, "", ck)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range [][2]int{{0, 1}, {n / 2, n / 3}, {n - 1, 1}, {sse.ChunkSize - 5, 10}} {
					if r[0]+r[1] > n {
						continue
					}
					body.Seek(int64(r[0]), io.SeekStart)
					part := make([]byte, r[1])
					if _, err := io.ReadFull(body, part); err != nil || !bytes.Equal(part, plain[r[0]:r[0]+r[1]]) {
						t.Fatalf("%s: range %v: %v", key, r, err)
					}
				}
				body.Close()
			}
		}
	}
	if disk := b.onDisk(); bytes.Contains(disk, []byte("PLAIN00000")) {
		t.Fatal("plaintext on disk")
	}
	// The keys asked for.
	if _, err := b.Put(ctx, "acme", "pics", "plain", strings.NewReader("not secret"), PutOptions{Max: 100, Now: t0}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		ck   []byte
		want error
	}{
		{"SSE-C/10", nil, ErrKeyRequired},
		{"SSE-C/10", bytes.Repeat([]byte{1}, 32), ErrWrongKey},
		{fmt.Sprintf("SSE-C/%d", InlineMax+1), bytes.Repeat([]byte{1}, 32), ErrWrongKey},
		{"AES256/10", customerKey, ErrKeyNotApplicable},
		{"plain", customerKey, ErrKeyNotApplicable},
	} {
		if _, _, err := b.readVersion(tc.key, "", tc.ck); !errors.Is(err, tc.want) {
			t.Errorf("read %s with key %x…: %v, want %v", tc.key, tc.ck[:min(len(tc.ck), 2)], err, tc.want)
		}
	}
	// After a restart, with the same secret key, everything reads.
	b.reopen()
	if err := b.OpenSecrets(filepath.Join(b.root, "secret.key")); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"AES256/65537", "SSE-C/65537"} {
		var ck []byte
		if strings.HasPrefix(key, "SSE-C") {
			ck = customerKey
		}
		if got, _, err := b.readVersion(key, "", ck); err != nil || !bytes.Equal(got, plaintext(InlineMax+1)) {
			t.Fatalf("%s after a restart: %v", key, err)
		}
	}
}

// TestEncryptedBodyTampered: a changed byte of an encrypted body file is
// an error, never other bytes.
func TestEncryptedBodyTampered(t *testing.T) {
	b := newSecretStore(t)
	obj, err := b.Put(context.Background(), "acme", "pics", "k", bytes.NewReader(plaintext(200<<10)), PutOptions{Max: 1 << 20, Now: t0, Encrypt: &SSE{Mode: SSES3}})
	if err != nil {
		t.Fatal(err)
	}
	path := b.blobPath(obj.Blob)
	data, _ := os.ReadFile(path)
	data[len(data)/2] ^= 1
	os.WriteFile(path, data, 0o600)
	if _, _, err := b.readVersion("k", "", nil); !errors.Is(err, sse.ErrCorrupt) {
		t.Fatalf("read of a changed body: %v", err)
	}
}

// TestBucketDefaultEncryption: a bucket's default encrypts new objects and
// uploads; the REST API's reads see plaintext.
func TestBucketDefaultEncryption(t *testing.T) {
	b := newSecretStore(t)
	ctx := context.Background()
	if err := b.SetBucketEncryption("acme", "pics", DefaultEncryption{Mode: SSEKMS}); !errors.Is(err, ErrNoKMS) {
		t.Fatalf("a KMS default without a key service: %v", err)
	}
	if err := b.SetBucketEncryption("acme", "pics", DefaultEncryption{Mode: "aws:kms:triple"}); !errors.Is(err, ErrBadEncryption) {
		t.Fatalf("an unknown default: %v", err)
	}
	if err := b.SetBucketEncryption("other", "pics", DefaultEncryption{Mode: SSES3}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another account's bucket: %v", err)
	}
	if err := b.SetBucketEncryption("acme", "pics", DefaultEncryption{Mode: SSES3}); err != nil {
		t.Fatal(err)
	}
	obj, err := b.Store.Put(ctx, "acme", "pics", "k", bytes.NewReader(plaintext(100)), PutOptions{ContentType: "text/plain", Max: 1000, Now: t0})
	if err != nil || obj.Encryption == nil || obj.Encryption.Mode != SSES3 {
		t.Fatalf("a put into a bucket encrypting by default: %+v %v", obj.Encryption, err)
	}
	_, body, err := b.OpenObject(t.Context(), "acme", "pics", "k")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(body)
	body.Close()
	if !bytes.Equal(got, plaintext(100)) {
		t.Fatalf("OpenObject gave %q", got)
	}
	u, err := b.CreateUpload(t.Context(), "acme", "pics", "mp", PutOptions{Now: t0})
	if err != nil || u.Encryption == nil {
		t.Fatalf("an upload into a bucket encrypting by default: %+v %v", u, err)
	}
	if err := b.SetBucketEncryption("acme", "pics", DefaultEncryption{}); err != nil {
		t.Fatal(err)
	}
	if obj, _ := b.Store.Put(ctx, "acme", "pics", "k2", strings.NewReader("x"), PutOptions{ContentType: "", Max: 10, Now: t0}); obj.Encryption != nil {
		t.Fatal("encrypted after the default was removed")
	}
	// Objects written meanwhile stay encrypted.
	if got, obj, err := b.readVersion("k", "", nil); err != nil || obj.Encryption == nil || !bytes.Equal(got, plaintext(100)) {
		t.Fatalf("k after the default went: %v", err)
	}
}

// TestEncryptedMultipart: parts are encrypted as they come, joined without
// the key, and read back across their boundaries.
func TestEncryptedMultipart(t *testing.T) {
	for _, mode := range []string{SSES3, SSEC} {
		t.Run(mode, func(t *testing.T) {
			b := newSecretStore(t)
			ctx := context.Background()
			enc := &SSE{Mode: mode}
			var ck []byte
			if mode == SSEC {
				enc.CustomerKey, ck = customerKey, customerKey
			}
			u, err := b.CreateUpload(t.Context(), "acme", "pics", "mp", PutOptions{Now: t0, Encrypt: enc})
			if err != nil {
				t.Fatal(err)
			}
			plain := plaintext(2*MinPartSize + 1000)
			parts := [][]byte{plain[:MinPartSize], plain[MinPartSize : 2*MinPartSize], plain[2*MinPartSize:]}
			var list []CompletedPart
			for i, p := range parts {
				if mode == SSEC {
					if _, err := b.PutPart(ctx, "acme", "pics", "mp", u.ID, i+1, bytes.NewReader(p), PartOptions{Now: t0}); !errors.Is(err, ErrKeyRequired) {
						t.Fatalf("a part without the key: %v", err)
					}
					if _, err := b.PutPart(ctx, "acme", "pics", "mp", u.ID, i+1, bytes.NewReader(p), PartOptions{Now: t0, CustomerKey: bytes.Repeat([]byte{9}, 32)}); !errors.Is(err, ErrWrongKey) {
						t.Fatalf("a part with another key: %v", err)
					}
				}
				part, err := b.PutPart(ctx, "acme", "pics", "mp", u.ID, i+1, bytes.NewReader(p), PartOptions{Now: t0, CustomerKey: ck})
				if err != nil {
					t.Fatal(err)
				}
				if part.Size != int64(len(p)) {
					t.Fatalf("part %d: size %d", i+1, part.Size)
				}
				list = append(list, CompletedPart{Number: i + 1, ETag: part.ETag})
			}
			// Completion takes no key: the parts are joined as they are.
			obj, err := b.CompleteUpload(ctx, "acme", "pics", "mp", u.ID, list, t0, Preconditions{})
			if err != nil {
				t.Fatal(err)
			}
			if obj.Encryption == nil || obj.Size != int64(len(plain)) || obj.MultipartCount() != 3 {
				t.Fatalf("completed: %+v", obj)
			}
			got, _, err := b.readVersion("mp", "", ck)
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("read: %d bytes, %v", len(got), err)
			}
			_, body, _ := b.OpenObjectVersion(b.t.Context(), "acme", "pics", "mp", "", ck)
			defer body.Close()
			body.Seek(MinPartSize-10, io.SeekStart)
			across := make([]byte, MinPartSize+20) // from the end of part 1 into part 3
			if _, err := io.ReadFull(body, across); err != nil || !bytes.Equal(across, plain[MinPartSize-10:2*MinPartSize+10]) {
				t.Fatalf("a read across parts: %v", err)
			}
			if bytes.Contains(b.onDisk(), []byte("PLAIN00000")) {
				t.Fatal("plaintext on disk")
			}
		})
	}
}

// TestEncryptedCopies: a copy encrypted as its source shares the body; any
// other is decrypted and written anew, and reads back the same.
func TestEncryptedCopies(t *testing.T) {
	b := newSecretStore(t)
	ctx := context.Background()
	plain := plaintext(InlineMax + 500)
	otherKey := bytes.Repeat([]byte{7}, 32)
	if _, err := b.Put(ctx, "acme", "pics", "s3", bytes.NewReader(plain), PutOptions{Max: 1 << 20, Now: t0, Encrypt: &SSE{Mode: SSES3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "acme", "pics", "c", bytes.NewReader(plain), PutOptions{Max: 1 << 20, Now: t0, Encrypt: &SSE{Mode: SSEC, CustomerKey: customerKey}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "acme", "pics", "p", bytes.NewReader(plain), PutOptions{Max: 1 << 20, Now: t0}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, src string
		o         CopyOptions
		shared    bool
		mode      string // of the copy; "" none
		readKey   []byte
		err       error
	}{
		{"SSE-S3 to SSE-S3", "s3", CopyOptions{Encrypt: &SSE{Mode: SSES3}}, true, SSES3, nil, nil},
		{"SSE-S3 kept (the REST API's copy)", "s3", CopyOptions{KeepEncryption: true}, true, SSES3, nil, nil},
		{"SSE-S3 to none", "s3", CopyOptions{}, false, "", nil, nil},
		{"none to SSE-C", "p", CopyOptions{Encrypt: &SSE{Mode: SSEC, CustomerKey: otherKey}}, false, SSEC, otherKey, nil},
		{"SSE-C to SSE-C, same key", "c", CopyOptions{SourceKey: customerKey, Encrypt: &SSE{Mode: SSEC, CustomerKey: customerKey}}, true, SSEC, customerKey, nil},
		{"SSE-C to SSE-C, another key", "c", CopyOptions{SourceKey: customerKey, Encrypt: &SSE{Mode: SSEC, CustomerKey: otherKey}}, false, SSEC, otherKey, nil},
		{"SSE-C to SSE-S3", "c", CopyOptions{SourceKey: customerKey, Encrypt: &SSE{Mode: SSES3}}, false, SSES3, nil, nil},
		{"SSE-C without its key", "c", CopyOptions{Encrypt: &SSE{Mode: SSES3}}, false, "", nil, ErrKeyRequired},
		{"SSE-C with a wrong key", "c", CopyOptions{SourceKey: otherKey}, false, "", nil, ErrWrongKey},
		{"SSE-C kept without its key", "c", CopyOptions{KeepEncryption: true}, false, "", nil, ErrKeyRequired},
	} {
		obj, err := b.Copy(ctx, "acme", "pics", tc.src, "pics", "copy", t0, tc.o)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		src, _ := b.Object("acme", "pics", tc.src)
		if shared := obj.Blob == src.Blob; shared != tc.shared {
			t.Errorf("%s: body shared %v", tc.name, shared)
		}
		if mode := func() string {
			if obj.Encryption == nil {
				return ""
			}
			return obj.Encryption.Mode
		}(); mode != tc.mode {
			t.Errorf("%s: the copy is encrypted %q", tc.name, mode)
		}
		got, _, err := b.readVersion("copy", "", tc.readKey)
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("%s: read the copy: %v", tc.name, err)
		}
	}
}

// TestEncryptedPartCopy: UploadPartCopy decrypts its source and encrypts
// the part as the upload asks.
func TestEncryptedPartCopy(t *testing.T) {
	b := newSecretStore(t)
	ctx := context.Background()
	plain := plaintext(MinPartSize + 100)
	if _, err := b.Put(ctx, "acme", "pics", "src", bytes.NewReader(plain), PutOptions{Max: 1 << 30, Now: t0, Encrypt: &SSE{Mode: SSEC, CustomerKey: customerKey}}); err != nil {
		t.Fatal(err)
	}
	u, err := b.CreateUpload(t.Context(), "acme", "pics", "dst", PutOptions{Now: t0, Encrypt: &SSE{Mode: SSES3}})
	if err != nil {
		t.Fatal(err)
	}
	span := func(first, n int64) func(Object) (int64, int64, error) {
		return func(Object) (int64, int64, error) { return first, n, nil }
	}
	if _, err := b.CopyPart(ctx, "acme", "pics", "dst", u.ID, 1, PartSource{Bucket: "pics", Key: "src"}, span(0, MinPartSize), t0); !errors.Is(err, ErrKeyRequired) {
		t.Fatalf("a copy from an SSE-C source without its key: %v", err)
	}
	p1, err := b.CopyPart(ctx, "acme", "pics", "dst", u.ID, 1, PartSource{Bucket: "pics", Key: "src", CustomerKey: customerKey}, span(0, MinPartSize), t0)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := b.CopyPart(ctx, "acme", "pics", "dst", u.ID, 2, PartSource{Bucket: "pics", Key: "src", CustomerKey: customerKey}, span(MinPartSize, 100), t0)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(plain[:MinPartSize])
	if p1.ETag != hex.EncodeToString(sum[:]) {
		t.Errorf("an SSE-S3 part's ETag is its plaintext's MD5 (as S3 gives it): %s", p1.ETag)
	}
	if _, err := b.CompleteUpload(ctx, "acme", "pics", "dst", u.ID, []CompletedPart{{Number: 1, ETag: p1.ETag}, {Number: 2, ETag: p2.ETag}}, t0, Preconditions{}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := b.readVersion("dst", "", nil); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("the copied object: %v", err)
	}
}

// TestEncryptedPartsSpliced: the parts of an encrypted multipart object
// share its data key, each a stream of its own. Someone who can write the
// body files must not be able to make a read return other bytes without
// an error by moving whole part streams: swapping two parts of one size,
// or putting back an earlier upload of a part (same number, same size).
func TestEncryptedPartsSpliced(t *testing.T) {
	for _, mode := range []string{SSES3, SSEC} {
		t.Run(mode, func(t *testing.T) {
			b := newSecretStore(t)
			ctx := context.Background()
			enc := &SSE{Mode: mode}
			var ck []byte
			if mode == SSEC {
				enc.CustomerKey, ck = customerKey, customerKey
			}
			u, err := b.CreateUpload(t.Context(), "acme", "pics", "mp", PutOptions{Now: t0, Encrypt: enc})
			if err != nil {
				t.Fatal(err)
			}
			plain := plaintext(2 * MinPartSize)
			parts := [][]byte{plain[:MinPartSize], plain[MinPartSize:]}
			// Part 2 is uploaded twice: the first stream is kept aside, as
			// an attacker with a copy of the disk would keep it.
			stale := bytes.Repeat([]byte("STALE"), MinPartSize/5)
			p, err := b.PutPart(ctx, "acme", "pics", "mp", u.ID, 2, bytes.NewReader(stale), PartOptions{Now: t0, CustomerKey: ck})
			if err != nil {
				t.Fatal(err)
			}
			staleStream, err := os.ReadFile(b.blobPath(p.Blob))
			if err != nil {
				t.Fatal(err)
			}
			var list []CompletedPart
			for i, p := range parts {
				part, err := b.PutPart(ctx, "acme", "pics", "mp", u.ID, i+1, bytes.NewReader(p), PartOptions{Now: t0, CustomerKey: ck})
				if err != nil {
					t.Fatal(err)
				}
				list = append(list, CompletedPart{Number: i + 1, ETag: part.ETag})
			}
			obj, err := b.CompleteUpload(ctx, "acme", "pics", "mp", u.ID, list, t0, Preconditions{})
			if err != nil {
				t.Fatal(err)
			}
			// The object is its parts' files, as they were uploaded.
			if len(obj.Blobs) != 2 {
				t.Fatalf("the object names %d body files, want its 2 parts'", len(obj.Blobs))
			}
			paths := []string{b.blobPath(obj.Blobs[0]), b.blobPath(obj.Blobs[1])}
			var orig [2][]byte
			for i, path := range paths {
				if orig[i], err = os.ReadFile(path); err != nil {
					t.Fatal(err)
				}
			}
			n := int(sse.EncryptedSize(MinPartSize))
			if len(orig[0]) != n || len(orig[1]) != n || len(staleStream) != n {
				t.Fatalf("streams of %d, %d and %d bytes", len(orig[0]), len(orig[1]), len(staleStream))
			}
			for _, c := range []struct {
				name   string
				bodies [2][]byte
			}{
				{"parts swapped", [2][]byte{orig[1], orig[0]}},
				{"part 1 twice", [2][]byte{orig[0], orig[0]}},
				{"an earlier upload of part 2", [2][]byte{orig[0], staleStream}},
			} {
				for i, path := range paths {
					if err := os.WriteFile(path, c.bodies[i], 0o600); err != nil {
						t.Fatal(err)
					}
				}
				got, _, err := b.readVersion("mp", "", ck)
				if err == nil {
					t.Errorf("%s: read %d bytes without an error (same as written: %v)", c.name, len(got), bytes.Equal(got, plain))
				} else if !errors.Is(err, sse.ErrCorrupt) {
					t.Errorf("%s: %v, want ErrCorrupt", c.name, err)
				}
			}
			for i, path := range paths {
				os.WriteFile(path, orig[i], 0o600)
			}
			if got, _, err := b.readVersion("mp", "", ck); err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("the body as written: %d bytes, %v", len(got), err)
			}
		})
	}
}
