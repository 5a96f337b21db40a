package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

func encrypt(t testing.TB, key, plain []byte) []byte {
	t.Helper()
	e, err := NewEncrypter(key, bytes.NewReader(plain))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(e)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func decrypt(key, stream []byte, size int64) ([]byte, error) {
	d, err := NewDecrypter(key, bytes.NewReader(stream), size)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(d)
}

func body(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

var sizes = []int{0, 1, 100, ChunkSize - 1, ChunkSize, ChunkSize + 1, 2 * ChunkSize, 3*ChunkSize + 5}

func TestRoundTrip(t *testing.T) {
	key := NewKey()
	for _, n := range sizes {
		plain := body(n)
		stream := encrypt(t, key, plain)
		if int64(len(stream)) != EncryptedSize(int64(n)) {
			t.Errorf("%d bytes: a stream of %d, EncryptedSize says %d", n, len(stream), EncryptedSize(int64(n)))
		}
		got, err := decrypt(key, stream, int64(n))
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("%d bytes: decrypted %d bytes, %v", n, len(got), err)
		}
		// Two encryptions of one body under one key share nothing.
		if n > 0 && bytes.Equal(stream[HeaderSize:], encrypt(t, key, plain)[HeaderSize:]) {
			t.Errorf("%d bytes: the same stream twice", n)
		}
		// The encrypter's reads of any size give the same stream length.
		e, _ := NewEncrypter(key, iotest.OneByteReader(bytes.NewReader(plain)))
		small, err := io.ReadAll(iotest.OneByteReader(e))
		if err != nil || len(small) != len(stream) {
			t.Fatalf("%d bytes, read a byte at a time: %d bytes, %v", n, len(small), err)
		}
	}
}

// TestRanges reads every kind of range through Seek: within a chunk,
// across chunks, to the end, and the last byte.
func TestRanges(t *testing.T) {
	key := NewKey()
	n := 3*ChunkSize + 5
	plain := body(n)
	stream := encrypt(t, key, plain)
	for _, r := range [][2]int{{0, 1}, {10, 100}, {ChunkSize - 3, 6}, {ChunkSize, ChunkSize}, {5, 2*ChunkSize + 7}, {n - 1, 1}, {n - 5, 5}, {0, n}} {
		src := &countingReaderAt{r: bytes.NewReader(stream)}
		d, err := NewDecrypter(key, src, int64(n))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Seek(int64(r[0]), io.SeekStart); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, r[1])
		if _, err := io.ReadFull(d, got); err != nil {
			t.Fatalf("range %v: %v", r, err)
		}
		if !bytes.Equal(got, plain[r[0]:r[0]+r[1]]) {
			t.Fatalf("range %v: wrong bytes", r)
		}
		// Only the chunks the range touches were read (and the header).
		first, last := r[0]/ChunkSize, (r[0]+r[1]-1)/ChunkSize
		if want := last - first + 2; src.reads != want {
			t.Errorf("range %v: %d reads of the stream, want %d", r, src.reads, want)
		}
	}
	d, _ := NewDecrypter(key, bytes.NewReader(stream), int64(n))
	if pos, err := d.Seek(-5, io.SeekEnd); err != nil || pos != int64(n-5) {
		t.Fatalf("seek from the end: %d %v", pos, err)
	}
	if _, err := d.Seek(-1, io.SeekStart); err == nil {
		t.Fatal("a seek before the start was allowed")
	}
}

type countingReaderAt struct {
	r     io.ReaderAt
	reads int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// TestTamper: every change of a stream fails to decrypt, never gives
// other bytes.
func TestTamper(t *testing.T) {
	key := NewKey()
	n := 2*ChunkSize + 10
	plain := body(n)
	stream := encrypt(t, key, plain)
	chunk := ChunkSize + tagSize
	swapped := bytes.Clone(stream)
	copy(swapped[HeaderSize:], stream[HeaderSize+chunk:HeaderSize+2*chunk])
	copy(swapped[HeaderSize+chunk:], stream[HeaderSize:HeaderSize+chunk])
	other := encrypt(t, key, plain)
	spliced := append(bytes.Clone(stream[:HeaderSize+chunk]), other[HeaderSize+chunk:]...)
	flip := func(i int) []byte { s := bytes.Clone(stream); s[i] ^= 1; return s }
	cases := []struct {
		name   string
		key    []byte
		stream []byte
		size   int64
	}{
		{"wrong key", NewKey(), stream, int64(n)},
		{"a bit of the first chunk", key, flip(HeaderSize + 5), int64(n)},
		{"a bit of a tag", key, flip(HeaderSize + chunk - 1), int64(n)},
		{"a bit of the last chunk", key, flip(len(stream) - 3), int64(n)},
		{"a bit of the nonce prefix", key, flip(6), int64(n)},
		{"the magic", key, flip(0), int64(n)},
		{"chunks swapped", key, swapped, int64(n)},
		{"chunks of another stream", key, spliced, int64(n)},
		{"the last chunk cut off", key, stream[:HeaderSize+2*chunk], 2 * ChunkSize},
		{"cut short", key, stream[:len(stream)-1], int64(n)},
		{"no header", key, stream[:5], int64(n)},
	}
	for _, tc := range cases {
		got, err := decrypt(tc.key, tc.stream, tc.size)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %d bytes, %v; want ErrCorrupt", tc.name, len(got), err)
		}
	}
	// An empty body is authenticated too: an empty stream's chunk is not
	// a longer stream's first.
	empty := encrypt(t, key, nil)
	if _, err := decrypt(key, stream, 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a longer stream read as empty: %v", err)
	}
	if got, err := decrypt(key, empty, 0); err != nil || len(got) != 0 {
		t.Errorf("the empty body: %q %v", got, err)
	}
}

// TestEncrypterPassesErrors: a body that fails to read gives no last
// chunk, so what was written of it never decrypts.
func TestEncrypterPassesErrors(t *testing.T) {
	boom := errors.New("connection reset")
	key := NewKey()
	e, _ := NewEncrypter(key, io.MultiReader(bytes.NewReader(body(ChunkSize+7)), iotest.ErrReader(boom)))
	out, err := io.ReadAll(e)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the body's", err)
	}
	if _, err := decrypt(key, out, ChunkSize); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("what was written decrypted: %v", err)
	}
}

func TestSealKey(t *testing.T) {
	kek, data := NewKey(), NewKey()
	sealed, err := SealKey(kek, data, []byte("ctx"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := OpenKey(kek, sealed, []byte("ctx")); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("OpenKey: %v", err)
	}
	for name, open := range map[string]func() ([]byte, error){
		"wrong kek":     func() ([]byte, error) { return OpenKey(NewKey(), sealed, []byte("ctx")) },
		"wrong context": func() ([]byte, error) { return OpenKey(kek, sealed, []byte("other")) },
		"cut short":     func() ([]byte, error) { return OpenKey(kek, sealed[:len(sealed)-1], []byte("ctx")) },
		"altered":       func() ([]byte, error) { s := bytes.Clone(sealed); s[20] ^= 1; return OpenKey(kek, s, []byte("ctx")) },
	} {
		if _, err := open(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := SealKey([]byte("short"), data, nil); err == nil {
		t.Error("a short kek was taken")
	}
}

// FuzzDecrypt: no stream, however made, panics the decrypter or
// decrypts under a key it was not made with.
func FuzzDecrypt(f *testing.F) {
	key := bytes.Repeat([]byte{7}, KeySize)
	f.Add(encrypt(f, key, []byte("hello")), int64(5), int64(0))
	f.Add(encrypt(f, key, body(ChunkSize+1)), int64(ChunkSize+1), int64(ChunkSize-1))
	f.Add([]byte("LSE1"), int64(0), int64(0))
	dual := bytes.Repeat([]byte{9}, DualKeySize)
	f.Add(encrypt(f, dual, []byte("hello")), int64(5), int64(1))
	f.Add([]byte("LSE2"), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, stream []byte, size, offset int64) {
		if size < 0 || size > 1<<20 || offset < 0 {
			return
		}
		for _, key := range [][]byte{NewKey(), append(NewKey(), NewKey()...)} {
			d, err := NewDecrypter(key, bytes.NewReader(stream), size)
			if err != nil {
				continue
			}
			d.Seek(offset, io.SeekStart)
			if got, err := io.ReadAll(d); err == nil && (size > offset) {
				t.Fatalf("%d bytes decrypted under a random key of %d layers", len(got), Layers(key))
			}
		}
	})
}

// FuzzRoundTrip: whatever the body, what is encrypted decrypts to it.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(""), uint16(0))
	f.Add([]byte("some body"), uint16(3))
	f.Fuzz(func(t *testing.T, plain []byte, at uint16) {
		key := NewKey()
		if at%2 == 1 { // the dual-layer format too
			key = append(key, NewKey()...)
		}
		stream := encrypt(t, key, plain)
		got, err := decrypt(key, stream, int64(len(plain)))
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("round trip of %d bytes: %v", len(plain), err)
		}
		if int(at) < len(plain) {
			d, _ := NewDecrypter(key, bytes.NewReader(stream), int64(len(plain)))
			d.Seek(int64(at), io.SeekStart)
			rest, err := io.ReadAll(d)
			if err != nil || !bytes.Equal(rest, plain[at:]) {
				t.Fatalf("from %d: %v", at, err)
			}
		}
	})
}

// TestStreams reads streams one after the other as one body, across
// their boundaries, and refuses a stream of another key among them; of
// one layer and of two, as a multipart object's parts are.
func TestStreams(t *testing.T) {
	for _, key := range [][]byte{NewKey(), append(NewKey(), NewKey()...)} {
		sizes := []int64{ChunkSize + 5, 10, 2*ChunkSize + 1}
		var all, stored []byte
		for i, n := range sizes {
			p := body(int(n) + i)[:n]
			all = append(all, p...)
			stored = append(stored, encrypt(t, key, p)...)
		}
		d, err := NewStreams(key, bytes.NewReader(stored), sizes)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(d); err != nil || !bytes.Equal(got, all) {
			t.Fatalf("%d layers, whole: %d bytes, %v", Layers(key), len(got), err)
		}
		for _, r := range [][2]int64{{ChunkSize, 10}, {ChunkSize + 3, 20}, {ChunkSize + 14, 2}, {int64(len(all)) - 1, 1}} {
			d.Seek(r[0], io.SeekStart)
			got := make([]byte, r[1])
			if _, err := io.ReadFull(d, got); err != nil || !bytes.Equal(got, all[r[0]:r[0]+r[1]]) {
				t.Fatalf("%d layers, range %v: %v", Layers(key), r, err)
			}
		}
		if ps := d.Prefixes(); len(ps) != 3 || len(ps[0]) != 8*Layers(key) {
			t.Fatalf("%d layers: prefixes %x", Layers(key), ps)
		}
		other := append(bytes.Clone(stored[:StreamSize(key, sizes[0])]), encrypt(t, append(NewKey(), key[KeySize:]...)[:len(key)], all[sizes[0]:sizes[0]+10])...)
		other = append(other, stored[StreamSize(key, sizes[0])+StreamSize(key, sizes[1]):]...)
		d, _ = NewStreams(key, bytes.NewReader(other), sizes)
		if _, err := io.ReadAll(d); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%d layers: a stream of another key among them: %v", Layers(key), err)
		}
	}
}

// TestEncrypterAllocations holds the encrypter to a fixed number of
// allocations whatever the body's length: sealing each chunk into a new
// slice made a large encrypted PUT spend as much CPU clearing memory as
// encrypting it.
func TestEncrypterAllocations(t *testing.T) {
	key := NewKey()
	small, large := body(ChunkSize+1), body(256*ChunkSize+1)
	buf := make([]byte, 32<<10)
	count := func(plain []byte) float64 {
		return testing.AllocsPerRun(5, func() {
			e, err := NewEncrypter(key, bytes.NewReader(plain))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{e}, buf); err != nil {
				t.Fatal(err)
			}
		})
	}
	// The large body has 255 more chunks: an allocation per chunk would
	// add 255, a buffer that doubles with the body about 8. One or two
	// either way are the runtime's, not the encrypter's (CI saw 10
	// against 11 under -race).
	if a, b := count(small), count(large); b > a+4 {
		t.Errorf("encrypting %d bytes allocated %v times, %d bytes %v times: allocations grow with the body", len(small), a, len(large), b)
	}
}

func BenchmarkEncrypt(b *testing.B) {
	plain := body(8 << 20)
	buf := make([]byte, 32<<10)
	for _, layers := range []int{1, 2} {
		b.Run(fmt.Sprintf("layers=%d", layers), func(b *testing.B) {
			key := NewKey()
			if layers == 2 {
				key = append(key, NewKey()...)
			}
			b.SetBytes(int64(len(plain)))
			for b.Loop() {
				e, _ := NewEncrypter(key, bytes.NewReader(plain))
				if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{e}, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
