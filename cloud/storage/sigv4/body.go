package sigv4

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Limits of the aws-chunked framing.
const (
	maxChunkLine = 4096     // a chunk header: hex size and signature
	maxTrailer   = 16 << 10 // every trailing header together
	// MaxChunkSize bounds one chunk. SDKs send 64 KiB to 8 MiB chunks;
	// data streams through, so this bounds nothing in memory.
	MaxChunkSize = 1 << 30
)

// Body wraps r's body so that reading it checks what the signature
// covers: the payload hash, or each chunk's signature and the trailing
// checksum of an aws-chunked payload, any x-amz-checksum-* header, and
// Content-MD5.
// It returns the payload's decoded length, or -1 if unknown. A payload
// that fails a check ends in an *Error rather than io.EOF.
//
// The x-amz-checksum-* headers are checked only when the body is the
// object's data (checksums true): on CompleteMultipartUpload they describe
// the whole object, not the request's XML.
func (a *Auth) Body(r *http.Request, checksums bool) (io.Reader, int64, error) {
	body, size, _, err := a.BodyChecksums(r, checksums)
	return body, size, err
}

// Checksums are the x-amz-checksum-* values of a body, in its headers or
// its trailer.
type Checksums struct {
	list []*checksum
	done bool // the body was read to its end: every check passed
}

// Algorithms names the body's checksums (crc32, crc32c, crc64nvme, sha1,
// sha256), as its headers and x-amz-trailer declare them.
func (c *Checksums) Algorithms() []string {
	var out []string
	for _, cs := range c.list {
		out = append(out, cs.alg)
	}
	return out
}

// Values returns the body's checksums, base64 by algorithm, once the body
// was read to its end, which it reaches only if every one matched; nil
// before.
func (c *Checksums) Values() map[string]string {
	if c == nil || !c.done || len(c.list) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, cs := range c.list {
		out[cs.alg] = base64.StdEncoding.EncodeToString(cs.h.Sum(nil))
	}
	return out
}

// ended marks its Checksums done when the body ends without error.
type ended struct {
	r io.Reader
	c *Checksums
}

func (e ended) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.c.done = true
	}
	return n, err
}

// BodyChecksums is Body that also returns the body's checksums, whose
// values are known once the body is read.
func (a *Auth) BodyChecksums(r *http.Request, checksums bool) (io.Reader, int64, *Checksums, error) {
	body, size, sums, err := a.body(r, checksums)
	if err != nil {
		return nil, 0, nil, err
	}
	return ended{body, sums}, size, sums, nil
}

func (a *Auth) body(r *http.Request, checksums bool) (io.Reader, int64, *Checksums, error) {
	size := r.ContentLength
	var body io.Reader = r.Body
	if body == nil {
		body = http.NoBody
	}
	var sums, trailers []*checksum
	if checksums {
		var err error
		if sums, err = headerChecksums(r.Header); err != nil {
			return nil, 0, nil, err
		}
	}
	var err error
	switch a.PayloadHash {
	case UnsignedPayload:
	case StreamingSigned, StreamingSignedTrailer, StreamingUnsignedTrail:
		c := &chunked{r: bufio.NewReaderSize(body, 64<<10), a: a, prev: a.signature,
			signed: a.PayloadHash != StreamingUnsignedTrail}
		if a.PayloadHash != StreamingSigned {
			for _, name := range strings.Split(r.Header.Get("X-Amz-Trailer"), ",") {
				if name = strings.ToLower(strings.TrimSpace(name)); name == "" {
					continue
				}
				cs, err := newChecksum(name, "")
				if err != nil {
					return nil, 0, nil, err
				}
				cs.trailing = true
				c.trailers = append(c.trailers, cs)
			}
		}
		size = -1
		if v := r.Header.Get("X-Amz-Decoded-Content-Length"); v != "" {
			if size, err = strconv.ParseInt(v, 10, 64); err != nil || size < 0 {
				return nil, 0, nil, errorf("InvalidArgument", "x-amz-decoded-content-length %q is not a length", v)
			}
		} else if a.PayloadHash == StreamingSigned {
			return nil, 0, nil, errorf("MissingContentLength", "x-amz-decoded-content-length is required with %s", StreamingSigned)
		}
		c.want = size
		body, trailers = c, c.trailers
	default:
		want, _ := hex.DecodeString(a.PayloadHash)
		body = &verified{r: body, h: sha256.New(), want: want, err: &Error{"XAmzContentSHA256Mismatch", "the body's SHA-256 is not the x-amz-content-sha256 the request was signed with"}}
	}
	for _, cs := range sums {
		body = &verified{r: body, h: cs.h, want: cs.want, err: cs.mismatch()}
	}
	// Content-MD5 is always of the request body, whatever it holds.
	if vs, ok := r.Header["Content-Md5"]; ok && (len(vs) != 1 || vs[0] == "") {
		// Present but empty (or repeated): S3 refuses it rather than
		// taking it for absent.
		return nil, 0, nil, errorf("InvalidDigest", "the Content-MD5 header is empty; send the body's base64 MD5, or no header")
	}
	if v := r.Header.Get("Content-MD5"); v != "" {
		want, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(want) != md5.Size {
			return nil, 0, nil, errorf("InvalidDigest", "the Content-MD5 %q is not a base64 MD5", v)
		}
		body = &verified{r: body, h: md5.New(), want: want, err: errorf("BadDigest", "The Content-MD5 you specified did not match what we received.")}
	}
	return body, size, &Checksums{list: append(sums, trailers...)}, nil
}

// verified passes a body through a hash and, at its end, returns err
// instead of io.EOF unless the hash is want.
type verified struct {
	r    io.Reader
	h    hash.Hash
	want []byte
	err  error
}

func (v *verified) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	if err == io.EOF && !bytes.Equal(v.h.Sum(nil), v.want) {
		return n, v.err
	}
	return n, err
}

// checksum is one of the x-amz-checksum-* algorithms S3 accepts.
type checksum struct {
	name     string // header name, e.g. x-amz-checksum-crc32
	alg      string
	h        hash.Hash
	want     []byte // decoded expected value, when known
	trailing bool   // the value comes in the trailer of an aws-chunked body
}

var crc64NVME = crc64.MakeTable(0x9a6c9329ac4bc9b5) // CRC-64/NVME, reflected

// newChecksum sets up the header name's algorithm with value (base64,
// possibly "" when it comes in a trailer).
func newChecksum(name, value string) (*checksum, error) {
	alg := strings.TrimPrefix(name, "x-amz-checksum-")
	if alg == name {
		return nil, errorf("InvalidArgument", "trailing header %q is not an x-amz-checksum-* header", name)
	}
	cs := &checksum{name: name, alg: alg}
	switch alg {
	case "crc32":
		cs.h = crc32.NewIEEE()
	case "crc32c":
		cs.h = crc32.New(crc32.MakeTable(crc32.Castagnoli))
	case "crc64nvme":
		cs.h = crc64.New(crc64NVME)
	case "sha1":
		cs.h = sha1.New()
	case "sha256":
		cs.h = sha256.New()
	default:
		return nil, errorf("InvalidArgument", "checksum algorithm %q is not supported (crc32, crc32c, crc64nvme, sha1, sha256)", alg)
	}
	if value != "" {
		if err := cs.expect(value); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// expect takes value, the checksum a request names, as the one the body
// must have. A value that cannot be one (not base64, or not the size of
// the algorithm's sum) is S3's InvalidRequest, with its message; one
// that can but does not match the body is BadDigest (mismatch).
func (cs *checksum) expect(value string) error {
	want, err := base64.StdEncoding.DecodeString(value)
	if err != nil || len(want) != cs.h.Size() {
		if cs.trailing {
			return errorf("InvalidRequest", "Value for %s trailing header is invalid.", cs.name)
		}
		return errorf("InvalidRequest", "Value for %s header is invalid.", cs.name)
	}
	cs.want = want
	return nil
}

// mismatch is the error of a body whose checksum is not the one named,
// in S3's words.
func (cs *checksum) mismatch() error {
	return errorf("BadDigest", "The %s you specified did not match the calculated checksum.", strings.ToUpper(cs.alg))
}

// headerChecksums are the x-amz-checksum-* headers of a request.
func headerChecksums(h http.Header) ([]*checksum, error) {
	var out []*checksum
	for name, values := range h {
		name = strings.ToLower(name)
		// Only the checksum values: x-amz-checksum-mode (GetObject),
		// -algorithm and -type are not checksums.
		switch strings.TrimPrefix(name, "x-amz-checksum-") {
		case "crc32", "crc32c", "crc64nvme", "sha1", "sha256":
		default:
			continue
		}
		cs, err := newChecksum(name, values[0])
		if err != nil {
			return nil, err
		}
		out = append(out, cs)
	}
	return out, nil
}

// chunked decodes an aws-chunked payload, checking chunk signatures (when
// signed), the trailing checksums and the decoded length as it goes.
type chunked struct {
	r        *bufio.Reader
	a        *Auth
	signed   bool
	prev     string // previous signature; the seed for the first chunk
	trailers []*checksum

	left     int64  // bytes of the current chunk still to read
	chunkSig string // the current chunk's declared signature
	sum      hash.Hash
	inChunk  bool
	n, want  int64 // decoded bytes so far; expected total, or -1
	err      error // sticky
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for c.left == 0 {
		if err := c.next(); err != nil {
			c.err = err
			return 0, err
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	c.n += int64(n)
	if c.signed {
		c.sum.Write(p[:n])
	}
	for _, t := range c.trailers {
		t.h.Write(p[:n])
	}
	if err == io.EOF || err == nil && n == 0 {
		c.err = errorf("IncompleteBody", "the chunked body ended inside a chunk")
		return n, c.err
	}
	if err != nil {
		c.err = err
	}
	return n, err
}

// next finishes the current chunk and starts the next; at the final
// chunk it checks the trailer and returns io.EOF.
func (c *chunked) next() error {
	if c.inChunk {
		if line, err := c.line(); err != nil || line != "" {
			return errorf("IncompleteBody", "a chunk's data is not followed by CRLF")
		}
		if err := c.checkChunk(); err != nil {
			return err
		}
	}
	line, err := c.line()
	if err != nil {
		return errorf("IncompleteBody", "the chunked body ended before its final chunk")
	}
	sizeHex, ext, _ := strings.Cut(line, ";")
	size, err := strconv.ParseInt(sizeHex, 16, 64)
	if err != nil || size < 0 || size > MaxChunkSize {
		return errorf("InvalidRequest", "malformed chunk header %q", truncate(line))
	}
	if c.signed {
		sig, ok := strings.CutPrefix(ext, "chunk-signature=")
		if !ok || len(sig) != 64 {
			return errorf("InvalidRequest", "chunk header %q has no chunk-signature", truncate(line))
		}
		c.chunkSig = sig
		if c.sum == nil {
			c.sum = sha256.New()
		}
		c.sum.Reset()
	}
	c.inChunk, c.left = true, size
	if size > 0 {
		return nil
	}
	if err := c.checkChunk(); err != nil {
		return err
	}
	if err := c.trailer(); err != nil {
		return err
	}
	if c.want >= 0 && c.n != c.want {
		return errorf("IncompleteBody", "the body holds %d bytes; x-amz-decoded-content-length says %d", c.n, c.want)
	}
	return io.EOF
}

// checkChunk checks the signature of the chunk just read.
func (c *chunked) checkChunk() error {
	if !c.signed {
		return nil
	}
	sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + c.a.time.UTC().Format(timeFormat) + "\n" + c.a.scope + "\n" +
		c.prev + "\n" + EmptySHA256 + "\n" + hex.EncodeToString(c.sum.Sum(nil))
	got := hex.EncodeToString(hmacSHA256(c.a.key, sts))
	if !hmac.Equal([]byte(got), []byte(c.chunkSig)) {
		return errorf("SignatureDoesNotMatch", "chunk %d bytes into the body has a wrong chunk-signature", c.n)
	}
	c.prev = got
	return nil
}

// trailer reads what follows the final chunk: the trailing checksum
// headers and, for signed trailers, their signature. Lines may end in
// CRLF or LF, and blank lines between them are skipped, as clients
// differ there.
func (c *chunked) trailer() error {
	rest, err := io.ReadAll(io.LimitReader(c.r, maxTrailer+1))
	if err != nil {
		return errorf("IncompleteBody", "reading the trailer: %v", err)
	}
	if len(rest) > maxTrailer {
		return errorf("InvalidRequest", "the trailer is over %d bytes", maxTrailer)
	}
	var canonical strings.Builder
	var sig string
	got := map[string]string{}
	for _, line := range strings.Split(string(rest), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return errorf("InvalidRequest", "malformed trailer line %q", truncate(line))
		}
		name, value = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(value)
		if name == "x-amz-trailer-signature" {
			sig = value
			continue
		}
		canonical.WriteString(name + ":" + value + "\n")
		got[name] = value
		if strings.HasPrefix(name, "x-amz-checksum-") && !slices.ContainsFunc(c.trailers, func(t *checksum) bool { return t.name == name }) {
			return errorf("InvalidRequest", "the trailer holds %s, which x-amz-trailer does not name", name)
		}
	}
	if c.a.PayloadHash == StreamingSignedTrailer {
		sts := "AWS4-HMAC-SHA256-TRAILER\n" + c.a.time.UTC().Format(timeFormat) + "\n" + c.a.scope + "\n" +
			c.prev + "\n" + sha256Hex([]byte(canonical.String()))
		if !hmac.Equal([]byte(hex.EncodeToString(hmacSHA256(c.a.key, sts))), []byte(sig)) {
			return errorf("SignatureDoesNotMatch", "the trailer signature is wrong")
		}
	}
	for _, t := range c.trailers {
		v, ok := got[t.name]
		if !ok {
			return errorf("InvalidRequest", "x-amz-trailer names %s, but the trailer does not hold it", t.name)
		}
		if err := t.expect(v); err != nil {
			return err
		}
		if !bytes.Equal(t.h.Sum(nil), t.want) {
			return t.mismatch()
		}
	}
	return nil
}

// line reads one CRLF- (or LF-) terminated line of at most maxChunkLine.
func (c *chunked) line() (string, error) {
	var b []byte
	for {
		part, err := c.r.ReadSlice('\n')
		b = append(b, part...)
		if len(b) > maxChunkLine {
			return "", errors.New("line too long")
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return "", err
		}
		return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
	}
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// ChecksumValue computes the base64 value of an x-amz-checksum-ALG header
// for data, for clients and tests.
func ChecksumValue(alg string, data []byte) (string, error) {
	cs, err := newChecksum("x-amz-checksum-"+alg, "")
	if err != nil {
		return "", err
	}
	cs.h.Write(data)
	return base64.StdEncoding.EncodeToString(cs.h.Sum(nil)), nil
}
