// Package sse encrypts object bodies at rest: a body is split into chunks
// of 64 KiB, each sealed on its own with AES-256-GCM, so that a read of a
// byte range decrypts only the chunks it touches (as MinIO's DARE format
// does), and a truncated, reordered or altered body fails to decrypt.
//
// An encrypted body (a stream) is a header and then the chunks:
//
//	header: "LSE1" | nonce prefix (8 random bytes)            12 bytes
//	chunk i: AES-256-GCM(key, nonce(i), plaintext i)          ≤ 64 KiB + 16
//
// nonce(i) is the stream's nonce prefix followed by i as a 32-bit
// big-endian number whose top bit is set for the last chunk. Every chunk
// but the last holds exactly ChunkSize bytes of plaintext; an empty body
// is one empty last chunk, so that even emptiness is authenticated. The
// random prefix makes every stream's nonces its own, so one key may seal
// many streams (the parts of a multipart upload). A stream authenticates
// only itself: streams sealed under one key can be swapped for one another
// whole, so a caller that joins several keeps their prefixes (Encrypter's
// and Decrypter's Prefix) to know them again, as package cloudstore does.
//
// A dual-layer stream (S3's DSSE-KMS) seals every chunk twice, under two
// independent keys, so that the body stays secret if one layer's key
// leaks:
//
//	header: "LSE2" | inner prefix (8) | outer prefix (8)     20 bytes
//	chunk i: AES-256-GCM(outer key, nonce'(i),
//	             AES-256-GCM(inner key, nonce(i), plaintext i))  ≤ 64 KiB + 32
//
// nonce(i) is made of the inner prefix, nonce'(i) of the outer one, as
// above. A data key of KeySize bytes seals one layer; one of DualKeySize
// bytes, the inner key then the outer key, seals two (Layers).
//
// Each object has its own random data key; the package also seals data
// keys under a key-encryption key (SealKey, OpenKey). It does no I/O of
// its own beyond the readers it is given.
package sse

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
)

// Sizes of the format.
const (
	ChunkSize = 64 << 10
	KeySize   = 32
	// DualKeySize is a dual-layer stream's data key: two keys.
	DualKeySize = 2 * KeySize
	// HeaderSize is a single-layer stream's header; a dual-layer
	// stream's has a second prefix (headerSize).
	HeaderSize = 12
	prefixSize = 8
	tagSize    = 16
	magic      = "LSE1"
	magicDual  = "LSE2"
	lastFlag   = 1 << 31
	// MaxChunks bounds a stream: the chunk number must fit in 31 bits.
	MaxChunks = lastFlag - 1
)

// ErrCorrupt is returned for a stream or sealed key that does not decrypt:
// a wrong key, or bytes that were changed.
var ErrCorrupt = errors.New("sse: the data does not decrypt (wrong key, or altered)")

// NewKey returns a random data key.
func NewKey() []byte {
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		panic("sse: no randomness: " + err.Error())
	}
	return k
}

func newGCM(key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("sse: a key is %d bytes, not %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// SealKey seals a data key under kek, bound to context (which OpenKey
// must be given again): a random nonce, then the sealed key.
func SealKey(kek, dataKey, context []byte) ([]byte, error) {
	aead, err := newGCM(kek)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(dataKey)+aead.Overhead())
	rand.Read(nonce)
	return aead.Seal(nonce, nonce, dataKey, context), nil
}

// OpenKey opens a data key sealed by SealKey; ErrCorrupt when kek or
// context is not the one it was sealed with.
func OpenKey(kek, sealed, context []byte) ([]byte, error) {
	aead, err := newGCM(kek)
	if err != nil {
		return nil, err
	}
	if len(sealed) != aead.NonceSize()+KeySize+aead.Overhead() {
		return nil, ErrCorrupt
	}
	key, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], context)
	if err != nil {
		return nil, ErrCorrupt
	}
	return key, nil
}

// Layers is the number of layers a data key seals: 1 for a key of
// KeySize bytes, 2 for one of DualKeySize, 0 for any other length.
func Layers(key []byte) int {
	switch len(key) {
	case KeySize:
		return 1
	case DualKeySize:
		return 2
	}
	return 0
}

// headerSize is the header of a stream of so many layers.
func headerSize(layers int) int64 { return 4 + int64(layers)*prefixSize }

// layerAEADs returns the ciphers of key's layers, the inner first.
func layerAEADs(key []byte) ([]cipher.AEAD, error) {
	layers := Layers(key)
	if layers == 0 {
		return nil, fmt.Errorf("sse: a data key is %d or %d bytes, not %d", KeySize, DualKeySize, len(key))
	}
	aeads := make([]cipher.AEAD, layers)
	for i := range aeads {
		a, err := newGCM(key[i*KeySize : (i+1)*KeySize])
		if err != nil {
			return nil, err
		}
		aeads[i] = a
	}
	return aeads, nil
}

// chunks is the number of chunks of a body of n bytes (at least one).
func chunks(n int64) int64 {
	if n == 0 {
		return 1
	}
	return (n + ChunkSize - 1) / ChunkSize
}

// EncryptedSize is the size of the single-layer stream of a body of n
// bytes.
func EncryptedSize(n int64) int64 { return layeredSize(1, n) }

// StreamSize is the size of the stream of a body of n bytes sealed with
// key, of one layer or two (Layers).
func StreamSize(key []byte, n int64) int64 { return layeredSize(max(Layers(key), 1), n) }

func layeredSize(layers int, n int64) int64 {
	return headerSize(layers) + n + chunks(n)*int64(layers)*tagSize
}

// nonce sets n to the nonce of chunk i. n is the caller's field, not a
// local: a local given to cipher.AEAD escapes, an allocation per chunk.
func nonce(n *[12]byte, prefix []byte, i int64, last bool) {
	copy(n[:], prefix)
	v := uint32(i)
	if last {
		v |= lastFlag
	}
	binary.BigEndian.PutUint32(n[8:], v)
}

// Encrypter reads plaintext from a reader and gives the stream.
type Encrypter struct {
	aeads  []cipher.AEAD // the layers, the inner first
	src    io.Reader
	prefix []byte // the layers' nonce prefixes, 8 bytes each
	i      int64
	buf    []byte // the plaintext of the next chunk, and one byte more
	have   int    // bytes of buf filled
	sealed []byte // the last chunk sealed (every layer), reused for every chunk
	iv     [12]byte
	out    []byte // ciphertext not yet read: the tail of sealed
	done   bool
	err    error
}

// NewEncrypter returns a reader of the stream encrypting src with key, of
// one layer or two (Layers). Reading src's end ends the stream with its
// last chunk; an error from src is returned as it is, and no last chunk is
// made, so a stream cut short never decrypts.
func NewEncrypter(key []byte, src io.Reader) (*Encrypter, error) {
	prefix := make([]byte, max(Layers(key), 1)*prefixSize)
	rand.Read(prefix)
	return newEncrypter(key, src, prefix)
}

// newEncrypter is NewEncrypter with given nonce prefixes (tests' vectors).
func newEncrypter(key []byte, src io.Reader, prefix []byte) (*Encrypter, error) {
	aeads, err := layerAEADs(key)
	if err != nil {
		return nil, err
	}
	if len(prefix) != len(aeads)*prefixSize {
		return nil, fmt.Errorf("sse: %d bytes of nonce prefix for %d layers", len(prefix), len(aeads))
	}
	e := &Encrypter{aeads: aeads, src: src, prefix: prefix, buf: make([]byte, ChunkSize+1),
		sealed: make([]byte, 0, ChunkSize+len(aeads)*tagSize)}
	m := magic
	if len(aeads) == 2 {
		m = magicDual
	}
	e.out = append([]byte(m), e.prefix...)
	return e, nil
}

// Prefix is the stream's nonce prefixes (8 bytes a layer), which a reader
// may keep to know the stream again (Decrypter.Prefix): they are random,
// new for every stream, so they tell apart streams sealed under one key.
func (e *Encrypter) Prefix() []byte { return bytes.Clone(e.prefix) }

// Read implements io.Reader.
func (e *Encrypter) Read(p []byte) (int, error) {
	for len(e.out) == 0 {
		if e.err != nil {
			return 0, e.err
		}
		if e.done {
			return 0, io.EOF
		}
		e.fill()
	}
	n := copy(p, e.out)
	e.out = e.out[n:]
	return n, nil
}

// fill seals the next chunk into out. A chunk is the last when the byte
// after it cannot be read: one byte is read ahead to know.
func (e *Encrypter) fill() {
	for e.have < len(e.buf) {
		n, err := e.src.Read(e.buf[e.have:])
		e.have += n
		if err == io.EOF {
			break
		}
		if err != nil {
			e.err = err
			return
		}
	}
	if e.i >= MaxChunks {
		e.err = errors.New("sse: the body is too large to encrypt")
		return
	}
	last := e.have <= ChunkSize
	n := min(e.have, ChunkSize)
	// Sealed into the one buffer (out, the previous chunk, has been read
	// whole): a 64 KiB allocation per chunk cost as much CPU as AES-GCM.
	nonce(&e.iv, e.prefix, e.i, last)
	e.sealed = e.aeads[0].Seal(e.sealed[:0], e.iv[:], e.buf[:n], nil)
	for l := 1; l < len(e.aeads); l++ {
		// In place: Seal may reuse its plaintext's storage.
		nonce(&e.iv, e.prefix[l*prefixSize:], e.i, last)
		e.sealed = e.aeads[l].Seal(e.sealed[:0], e.iv[:], e.sealed, nil)
	}
	e.out = e.sealed
	e.i++
	if last {
		e.done = true
		return
	}
	// The byte read ahead starts the next chunk.
	e.buf[0] = e.buf[ChunkSize]
	e.have = 1
}

// Decrypter reads a body from its stream, which it reads at any offset:
// it seeks, and a read decrypts only the chunks it needs.
type Decrypter struct {
	aeads  []cipher.AEAD // the layers, the inner first
	src    io.ReaderAt
	prefix []byte
	size   int64 // plaintext bytes
	pos    int64
	chunk  int64 // the chunk in plain, or -1
	plain  []byte
	cbuf   []byte
	iv     [12]byte
}

// NewDecrypter returns a reader of the body of size bytes whose stream src
// holds (StreamSize(key, size) bytes), encrypted with key: a stream of as
// many layers as the key seals.
func NewDecrypter(key []byte, src io.ReaderAt, size int64) (*Decrypter, error) {
	aeads, err := layerAEADs(key)
	if err != nil {
		return nil, err
	}
	if size < 0 || chunks(size) > MaxChunks {
		return nil, fmt.Errorf("sse: a body of %d bytes", size)
	}
	h := make([]byte, headerSize(len(aeads)))
	if _, err := src.ReadAt(h, 0); err != nil {
		return nil, fmt.Errorf("%w: reading the header: %v", ErrCorrupt, err)
	}
	switch string(h[:4]) {
	case magic, magicDual:
		if (string(h[:4]) == magicDual) != (len(aeads) == 2) {
			return nil, fmt.Errorf("%w: a stream of other layers than the key's", ErrCorrupt)
		}
	default:
		return nil, fmt.Errorf("%w: not an encrypted body", ErrCorrupt)
	}
	return &Decrypter{aeads: aeads, src: src, prefix: h[4:], size: size, chunk: -1,
		cbuf: make([]byte, ChunkSize+len(aeads)*tagSize)}, nil
}

// load decrypts chunk i into plain.
func (d *Decrypter) load(i int64) error {
	if d.chunk == i {
		return nil
	}
	n := int64(ChunkSize)
	last := i == chunks(d.size)-1
	if last {
		n = d.size - i*ChunkSize
	}
	layers := int64(len(d.aeads))
	c := d.cbuf[:n+layers*tagSize]
	off := headerSize(len(d.aeads)) + i*(ChunkSize+layers*tagSize)
	if m, err := d.src.ReadAt(c, off); m < len(c) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("%w: chunk %d: %v", ErrCorrupt, i, err)
	}
	d.chunk = -1
	for l := len(d.aeads) - 1; l > 0; l-- { // the outer layers, in place
		nonce(&d.iv, d.prefix[l*prefixSize:], i, last)
		inner, err := d.aeads[l].Open(c[:0], d.iv[:], c, nil)
		if err != nil {
			return fmt.Errorf("%w: chunk %d", ErrCorrupt, i)
		}
		c = inner
	}
	nonce(&d.iv, d.prefix, i, last)
	plain, err := d.aeads[0].Open(d.plain[:0], d.iv[:], c, nil)
	if err != nil {
		return fmt.Errorf("%w: chunk %d", ErrCorrupt, i)
	}
	d.plain, d.chunk = plain, i
	return nil
}

// Read implements io.Reader.
func (d *Decrypter) Read(p []byte) (int, error) {
	if d.pos >= d.size {
		if d.size == 0 && d.chunk != 0 {
			// Even an empty body proves it is whole.
			if err := d.load(0); err != nil {
				return 0, err
			}
		}
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && d.pos < d.size {
		i := d.pos / ChunkSize
		if err := d.load(i); err != nil {
			return n, err
		}
		m := copy(p[n:], d.plain[d.pos-i*ChunkSize:])
		n += m
		d.pos += int64(m)
	}
	return n, nil
}

// Seek implements io.Seeker, in the plaintext's offsets.
func (d *Decrypter) Seek(offset int64, whence int) (int64, error) {
	return seek(&d.pos, d.size, offset, whence)
}

// seek moves *pos, in a body of size bytes, as io.Seeker says.
func seek(pos *int64, size, offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += *pos
	case io.SeekEnd:
		offset += size
	default:
		return 0, errors.New("sse: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("sse: seek before the start")
	}
	*pos = offset
	return offset, nil
}

// Prefix is the nonce prefixes the stream's header holds.
func (d *Decrypter) Prefix() []byte { return bytes.Clone(d.prefix) }

// Size is the body's size.
func (d *Decrypter) Size() int64 { return d.size }

// Streams reads streams stored one after the other (the parts of an
// object completed from a multipart upload) as one body, seeking across
// them.
type Streams struct {
	segs   []*Decrypter
	starts []int64 // each stream's first byte in the body
	size   int64
	pos    int64
}

// NewStreams returns a reader of the streams src holds one after the
// other, of bodies of sizes bytes each, all under key (of one layer or
// two, Layers). It reads each stream's header.
func NewStreams(key []byte, src io.ReaderAt, sizes []int64) (*Streams, error) {
	d := &Streams{}
	var off int64
	for _, n := range sizes {
		seg, err := NewDecrypter(key, io.NewSectionReader(src, off, StreamSize(key, n)), n)
		if err != nil {
			return nil, err
		}
		d.segs = append(d.segs, seg)
		d.starts = append(d.starts, d.size)
		d.size += n
		off += StreamSize(key, n)
	}
	return d, nil
}

// Prefixes are the streams' nonce prefixes, in order.
func (d *Streams) Prefixes() [][]byte {
	out := make([][]byte, len(d.segs))
	for i, seg := range d.segs {
		out[i] = seg.Prefix()
	}
	return out
}

// Read implements io.Reader.
func (d *Streams) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && d.pos < d.size {
		i := sort.Search(len(d.starts), func(i int) bool { return d.starts[i] > d.pos }) - 1
		seg := d.segs[i]
		if _, err := seg.Seek(d.pos-d.starts[i], io.SeekStart); err != nil {
			return n, err
		}
		m, err := seg.Read(p[n:])
		n += m
		d.pos += int64(m)
		if err != nil && err != io.EOF {
			return n, err
		}
		if m == 0 && err == io.EOF {
			break
		}
	}
	if n == 0 && d.pos >= d.size {
		if d.size == 0 && len(d.segs) == 1 {
			// An empty body proves it is whole.
			if _, err := d.segs[0].Read(nil); err != nil && err != io.EOF {
				return 0, err
			}
		}
		return 0, io.EOF
	}
	return n, nil
}

// Seek implements io.Seeker, in the body's offsets.
func (d *Streams) Seek(offset int64, whence int) (int64, error) {
	return seek(&d.pos, d.size, offset, whence)
}
