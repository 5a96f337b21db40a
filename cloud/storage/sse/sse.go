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
	ChunkSize  = 64 << 10
	KeySize    = 32
	HeaderSize = 12
	tagSize    = 16
	magic      = "LSE1"
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

// chunks is the number of chunks of a body of n bytes (at least one).
func chunks(n int64) int64 {
	if n == 0 {
		return 1
	}
	return (n + ChunkSize - 1) / ChunkSize
}

// EncryptedSize is the size of the stream of a body of n bytes.
func EncryptedSize(n int64) int64 { return HeaderSize + n + chunks(n)*tagSize }

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
	aead   cipher.AEAD
	src    io.Reader
	prefix []byte
	i      int64
	buf    []byte // the plaintext of the next chunk, and one byte more
	have   int    // bytes of buf filled
	sealed []byte // the last chunk sealed, reused for every chunk
	iv     [12]byte
	out    []byte // ciphertext not yet read: the tail of sealed
	done   bool
	err    error
}

// NewEncrypter returns a reader of the stream encrypting src with key.
// Reading src's end ends the stream with its last chunk; an error from
// src is returned as it is, and no last chunk is made, so a stream cut
// short never decrypts.
func NewEncrypter(key []byte, src io.Reader) (*Encrypter, error) {
	prefix := make([]byte, 8)
	rand.Read(prefix)
	return newEncrypter(key, src, prefix)
}

// newEncrypter is NewEncrypter with a given nonce prefix (tests' vectors).
func newEncrypter(key []byte, src io.Reader, prefix []byte) (*Encrypter, error) {
	aead, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	e := &Encrypter{aead: aead, src: src, prefix: prefix, buf: make([]byte, ChunkSize+1),
		sealed: make([]byte, 0, ChunkSize+tagSize)}
	e.out = append([]byte(magic), e.prefix...)
	return e, nil
}

// Prefix is the stream's nonce prefix, which a reader may keep to know
// the stream again (Decrypter.Prefix): it is random, new for every
// stream, so it tells apart streams sealed under one key.
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
	e.sealed = e.aead.Seal(e.sealed[:0], e.iv[:], e.buf[:n], nil)
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
	aead   cipher.AEAD
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
// holds (EncryptedSize(size) bytes), encrypted with key.
func NewDecrypter(key []byte, src io.ReaderAt, size int64) (*Decrypter, error) {
	aead, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	if size < 0 || chunks(size) > MaxChunks {
		return nil, fmt.Errorf("sse: a body of %d bytes", size)
	}
	var h [HeaderSize]byte
	if _, err := src.ReadAt(h[:], 0); err != nil {
		return nil, fmt.Errorf("%w: reading the header: %v", ErrCorrupt, err)
	}
	if !bytes.Equal(h[:4], []byte(magic)) {
		return nil, fmt.Errorf("%w: not an encrypted body", ErrCorrupt)
	}
	return &Decrypter{aead: aead, src: src, prefix: bytes.Clone(h[4:]), size: size, chunk: -1,
		cbuf: make([]byte, ChunkSize+tagSize)}, nil
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
	c := d.cbuf[:n+tagSize]
	off := HeaderSize + i*(ChunkSize+tagSize)
	if m, err := d.src.ReadAt(c, off); m < len(c) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("%w: chunk %d: %v", ErrCorrupt, i, err)
	}
	nonce(&d.iv, d.prefix, i, last)
	plain, err := d.aead.Open(d.plain[:0], d.iv[:], c, nil)
	if err != nil {
		d.chunk = -1
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

// Prefix is the nonce prefix the stream's header holds.
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
// other, of bodies of sizes bytes each, all under key. It reads each
// stream's header.
func NewStreams(key []byte, src io.ReaderAt, sizes []int64) (*Streams, error) {
	d := &Streams{}
	var off int64
	for _, n := range sizes {
		seg, err := NewDecrypter(key, io.NewSectionReader(src, off, EncryptedSize(n)), n)
		if err != nil {
			return nil, err
		}
		d.segs = append(d.segs, seg)
		d.starts = append(d.starts, d.size)
		d.size += n
		off += EncryptedSize(n)
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
