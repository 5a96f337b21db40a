package govnet

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/statechain"
)

// The sync protocol (docs/protocol.md, section 21.6): a stream carries
// one request, from (u64) and to (u64), both included. The server answers
// its tip's index (u64), then frames, each a length (u32, counting what
// follows), a kind (1 byte) and a block's binary form: kind 'B' for each
// block of its chain in the range, at most maxPerAnswer, then kind 'X' for
// both blocks of every unresolved conflict it recorded, at most
// maxEvidence; then it closes.
const (
	maxPerAnswer = 256
	maxEvidence  = 64
	maxFrame     = 16 << 10
	maxRounds    = 64 // answers one pull reads at most
	frameBlock   = 'B'
	frameProof   = 'X'
)

// pull asks p for the blocks from this node's tip on (the tip itself
// included, so that a different block at the same index is met as
// evidence) until it has p's tip, and takes the evidence p holds. When
// p's blocks do not follow this node's, the chains differ below: the pull
// starts again from block 0, so that the first block that differs is met
// as evidence, or found rejected, and a peer governed by another keyset
// is named.
func (s *Service) pull(ctx context.Context, p peer.ID) error {
	rescanned := false
	from := s.Tip().Index
	for range maxRounds {
		tip, blocks, proofs, err := s.request(ctx, p, from, from+maxPerAnswer-1)
		if err != nil {
			return err
		}
		if from == 0 && len(blocks) > 0 && blocks[0].Hash != s.cfg.Genesis.Hash {
			s.warnForeign.Do(func() {
				s.log.Warn("a peer's state chain starts from another block 0: its genesis file names another governance keyset", "peer", p, "its_block_0", blocks[0].Hash)
			})
			return fmt.Errorf("peer %s is governed by another keyset", p)
		}
		diverged := false
		for _, b := range blocks {
			if s.take(ctx, b) == behind {
				diverged = true
				break
			}
		}
		for _, b := range proofs {
			s.take(ctx, b)
		}
		switch {
		case diverged && !rescanned:
			rescanned, from = true, 0
			continue
		case diverged, len(blocks) == 0:
			return nil
		}
		last := blocks[len(blocks)-1].Index
		if last >= tip {
			return nil
		}
		from = last + 1
	}
	return nil
}

// take observes a block from a peer's sync answer, spreading evidence it
// makes.
func (s *Service) take(ctx context.Context, b *statechain.Block) outcome {
	s.mu.Lock()
	res, _ := s.observe(b)
	s.mu.Unlock()
	if res == evidence {
		s.publish(ctx, b)
	}
	return res
}

// request asks p for the blocks from from to to, and its evidence.
func (s *Service) request(ctx context.Context, p peer.ID, from, to uint64) (tip uint64, blocks, proofs []*statechain.Block, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	st, err := s.h.Open(ctx, p, protocolSync)
	if err != nil {
		return 0, nil, nil, err
	}
	defer st.Close()
	stop := context.AfterFunc(ctx, func() { st.Reset() })
	defer stop()
	req := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, from), to)
	if _, err := st.Write(req); err != nil {
		st.Reset()
		return 0, nil, nil, err
	}
	if err := st.CloseWrite(); err != nil {
		st.Reset()
		return 0, nil, nil, err
	}
	r := bufio.NewReader(st)
	var head [8]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, nil, nil, err
	}
	tip = binary.BigEndian.Uint64(head[:])
	broke := func(why string, args ...any) error {
		st.Reset()
		return fmt.Errorf("peer broke the sync protocol: "+why, args...)
	}
	for {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); errors.Is(err, io.EOF) {
			return tip, blocks, proofs, nil
		} else if err != nil {
			return 0, nil, nil, err
		}
		n := binary.BigEndian.Uint32(size[:])
		if n < 1 || n > maxFrame {
			return 0, nil, nil, broke("a frame of %d bytes", n)
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(r, data); err != nil {
			return 0, nil, nil, err
		}
		b := new(statechain.Block)
		if err := b.UnmarshalBinary(data[1:], s.cfg.Network); err != nil {
			return 0, nil, nil, broke("%v", err)
		}
		switch {
		case data[0] == frameBlock && len(proofs) == 0 && len(blocks) < maxPerAnswer &&
			b.Index >= from && b.Index <= to && (len(blocks) == 0 || b.Index == blocks[len(blocks)-1].Index+1):
			blocks = append(blocks, b)
		case data[0] == frameProof && len(proofs) < 2*maxEvidence:
			proofs = append(proofs, b)
		default:
			return 0, nil, nil, broke("a frame of kind %q out of place (block %d)", data[0], b.Index)
		}
	}
}

// serveSync answers one request.
func (s *Service) serveSync(st network.Stream) {
	defer st.Close()
	var req [16]byte
	if _, err := io.ReadFull(st, req[:]); err != nil {
		st.Reset()
		return
	}
	from, to := binary.BigEndian.Uint64(req[:8]), binary.BigEndian.Uint64(req[8:])
	if to < from {
		st.Reset()
		return
	}
	tip := s.Tip().Index
	w := bufio.NewWriter(st)
	w.Write(binary.BigEndian.AppendUint64(nil, tip))
	write := func(kind byte, b *statechain.Block) bool {
		data, err := b.MarshalBinary()
		if err != nil {
			return false
		}
		w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data)+1)))
		w.WriteByte(kind)
		_, err = w.Write(data)
		return err == nil
	}
	for _, b := range s.Range(from, to, maxPerAnswer) {
		if !write(frameBlock, b) {
			st.Reset()
			return
		}
	}
	proofs := s.evidence()
	for _, b := range proofs[:min(len(proofs), 2*maxEvidence)] {
		if !write(frameProof, b) {
			st.Reset()
			return
		}
	}
	if err := w.Flush(); err != nil {
		st.Reset()
	}
}
