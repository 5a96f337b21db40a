package ledgernet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/latticenet/lattice/ledger"
)

// The sync protocol (docs/protocol.md, "Sync"): a stream carries one
// request, then the answer as a sequence of frames. A frame is a u32
// big-endian length, then that many bytes: a kind byte and its fields.

// Request kinds.
const (
	reqLog       = 'L' // after u64 | limit u16: blocks in the server's commit order
	reqFrontiers = 'F' // start address | limit u16: accounts from start, in address order
	reqChain     = 'C' // account | from height u64 | limit u16: a chain ascending
	reqBlocks    = 'H' // count u16 | hashes: blocks by hash (ledger or fork contenders)
	reqVotes     = 'V' // count u16 | hashes: the server's representatives vote on them
)

// Answer frame kinds.
const (
	frameBlock    = 'B' // seq u64 | block binary
	frameFrontier = 'F' // address | frontier hash | height u64
	frameVote     = 'V' // vote binary
	frameEnd      = 'E' // next u64 | last u64: the cursor to continue from and the server's latest
)

// Bounds a server applies to every request, whatever the client asks.
const (
	MaxLogBlocks   = 1024
	MaxFrontiers   = 1000
	MaxChainBlocks = 1024
	MaxHashes      = 255
	// maxFrame bounds any frame: the largest block is well under 64 KiB.
	maxFrame = ledger.MaxBlockJSON + 64
)

var errBadRequest = errors.New("ledgernet: malformed request")

// errBadAnswer is a sync answer that breaks the protocol: it fails the
// exchange, and the peer is not listened to further on that stream (and,
// in a sync pass, not pulled from again until the next pass).
var errBadAnswer = errors.New("ledgernet: sync answer breaks the protocol")

// request is a parsed sync request.
type request struct {
	kind   byte
	after  uint64         // reqLog
	start  ledger.Address // reqFrontiers, reqChain (account)
	height uint64         // reqChain: first height
	limit  int
	hashes []ledger.Hash // reqBlocks, reqVotes
}

func (r *request) marshal() []byte {
	b := []byte{r.kind}
	switch r.kind {
	case reqLog:
		b = binary.BigEndian.AppendUint64(b, r.after)
		b = binary.BigEndian.AppendUint16(b, uint16(r.limit))
	case reqFrontiers:
		b = append(b, r.start[:]...)
		b = binary.BigEndian.AppendUint16(b, uint16(r.limit))
	case reqChain:
		b = append(b, r.start[:]...)
		b = binary.BigEndian.AppendUint64(b, r.height)
		b = binary.BigEndian.AppendUint16(b, uint16(r.limit))
	case reqBlocks, reqVotes:
		b = binary.BigEndian.AppendUint16(b, uint16(len(r.hashes)))
		for _, h := range r.hashes {
			b = append(b, h[:]...)
		}
	}
	return b
}

// answerFrames is the most frames an answer to r holds before its end
// frame: what r asked for, which the server never exceeds (see answer).
// As no frame is longer than maxFrame, it bounds the answer's bytes too:
// a client reads no more than it asked for, whatever the peer sends.
func (r *request) answerFrames() int {
	switch r.kind {
	case reqBlocks:
		return len(r.hashes) // one block per hash at most
	case reqVotes:
		return maxVoteFrames
	}
	return r.limit // reqLog, reqFrontiers, reqChain: limit items, one a frame
}

// parseRequest decodes a request strictly: an unknown kind, a short or
// long body, a zero limit or too many hashes is an error. Limits above the
// server's bounds are lowered, not refused.
func parseRequest(b []byte) (*request, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: empty", errBadRequest)
	}
	r := &request{kind: b[0]}
	body := b[1:]
	want := 0
	switch r.kind {
	case reqLog:
		want = 10
	case reqFrontiers:
		want = 34
	case reqChain:
		want = 42
	case reqBlocks, reqVotes:
		if len(body) < 2 {
			return nil, fmt.Errorf("%w: short", errBadRequest)
		}
		n := int(binary.BigEndian.Uint16(body))
		if n == 0 || n > MaxHashes {
			return nil, fmt.Errorf("%w: %d hashes, want 1 to %d", errBadRequest, n, MaxHashes)
		}
		want = 2 + 32*n
	default:
		return nil, fmt.Errorf("%w: unknown kind %q", errBadRequest, r.kind)
	}
	if len(body) != want {
		return nil, fmt.Errorf("%w: %q body of %d bytes, want %d", errBadRequest, r.kind, len(body), want)
	}
	switch r.kind {
	case reqLog:
		r.after = binary.BigEndian.Uint64(body)
		r.limit = int(binary.BigEndian.Uint16(body[8:]))
		r.limit = min(r.limit, MaxLogBlocks)
	case reqFrontiers:
		copy(r.start[:], body)
		r.limit = min(int(binary.BigEndian.Uint16(body[32:])), MaxFrontiers)
	case reqChain:
		copy(r.start[:], body)
		r.height = binary.BigEndian.Uint64(body[32:])
		r.limit = min(int(binary.BigEndian.Uint16(body[40:])), MaxChainBlocks)
	case reqBlocks, reqVotes:
		n := int(binary.BigEndian.Uint16(body))
		r.hashes = make([]ledger.Hash, n)
		for i := range r.hashes {
			copy(r.hashes[i][:], body[2+32*i:])
		}
		return r, nil
	}
	if r.limit == 0 {
		return nil, fmt.Errorf("%w: limit 0", errBadRequest)
	}
	return r, nil
}

// writeFrame writes one length-prefixed frame.
func writeFrame(w io.Writer, kind byte, body []byte) error {
	var hdr [5]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(body)+1))
	hdr[4] = kind
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(body)
	return err
}

// readFrame reads one frame into buf (grown as needed) and returns its kind
// and body, which is valid until the next call.
func readFrame(r io.Reader, buf *[]byte) (byte, []byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > maxFrame {
		return 0, nil, fmt.Errorf("ledgernet: frame of %d bytes", n)
	}
	if cap(*buf) < int(n) {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return b[0], b[1:], nil
}

// Gossip messages of the blocks topic carry one or more blocks: a u16
// count, then for each block a u32 length and its binary encoding. A
// message holds at most maxGossipBlocks blocks and maxGossipBytes bytes.
const (
	maxGossipBlocks = 256
	maxGossipBytes  = 256 << 10
)

// encodeBlocks encodes as many of blocks as fit in one message and says
// how many it took (at least one).
func encodeBlocks(blocks []*ledger.Block) ([]byte, int) {
	data := make([]byte, 2, 4096)
	n := 0
	for _, b := range blocks {
		if n == maxGossipBlocks {
			break
		}
		start := len(data)
		data = append(data, 0, 0, 0, 0)
		data = b.AppendBinary(data)
		if n > 0 && len(data) > maxGossipBytes {
			data = data[:start]
			break
		}
		binary.BigEndian.PutUint32(data[start:], uint32(len(data)-start-4))
		n++
	}
	binary.BigEndian.PutUint16(data, uint16(n))
	return data, n
}

// decodeBlocks decodes a blocks message strictly: a count of 0 or above the
// bound, a short or oversized entry, an entry that is not one block, or
// trailing bytes is an error.
func decodeBlocks(data []byte) ([]*ledger.Block, error) {
	if len(data) < 2 || len(data) > maxGossipBytes+maxFrame {
		return nil, fmt.Errorf("ledgernet: blocks message of %d bytes", len(data))
	}
	n := int(binary.BigEndian.Uint16(data))
	if n == 0 || n > maxGossipBlocks {
		return nil, fmt.Errorf("ledgernet: blocks message of %d blocks", n)
	}
	rest := data[2:]
	blocks := make([]*ledger.Block, 0, n)
	for range n {
		if len(rest) < 4 {
			return nil, errors.New("ledgernet: truncated blocks message")
		}
		size := int(binary.BigEndian.Uint32(rest))
		rest = rest[4:]
		if size > len(rest) || size > maxFrame {
			return nil, errors.New("ledgernet: truncated blocks message")
		}
		b := new(ledger.Block)
		if err := b.UnmarshalBinary(rest[:size]); err != nil {
			return nil, fmt.Errorf("ledgernet: blocks message: %w", err)
		}
		blocks = append(blocks, b)
		rest = rest[size:]
	}
	if len(rest) != 0 {
		return nil, errors.New("ledgernet: bytes after the last block")
	}
	return blocks, nil
}
