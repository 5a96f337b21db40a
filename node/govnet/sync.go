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

// The sync protocol (docs/protocol.md, section 21): a stream carries one
// request, from (u64) and to (u64), both included; the server answers its
// tip's index (u64), then the blocks it holds in that range, at most
// maxPerAnswer, each as its length (u32) and its binary form, and closes.
const (
	maxPerAnswer = 256
	maxFrame     = 16 << 10
	maxRounds    = 64 // answers one pull reads at most
)

// pull asks p for the blocks after this node's tip until it has p's tip.
// When p's next block does not follow this node's tip, the chains differ
// below it: the pull starts again from index 1, so that the first block
// that differs is met as evidence of a conflict, or is found rejected.
func (s *Service) pull(ctx context.Context, p peer.ID) error {
	rescanned := false
	from := s.Tip().Index + 1
	for range maxRounds {
		tip, blocks, err := s.request(ctx, p, from, from+maxPerAnswer-1)
		if err != nil {
			return err
		}
		diverged := false
		for _, b := range blocks {
			s.mu.Lock()
			res, err := s.observe(b)
			s.mu.Unlock()
			switch res {
			case refused:
				return fmt.Errorf("peer served an invalid block %d: %w", b.Index, err)
			case behind:
				diverged = true
			case evidence:
				s.publish(ctx, b)
			}
			if diverged {
				break
			}
		}
		switch {
		case diverged && !rescanned:
			rescanned, from = true, 1
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

// request asks p for the blocks from from to to.
func (s *Service) request(ctx context.Context, p peer.ID, from, to uint64) (uint64, []*statechain.Block, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	st, err := s.h.Open(ctx, p, protocolSync)
	if err != nil {
		return 0, nil, err
	}
	defer st.Close()
	stop := context.AfterFunc(ctx, func() { st.Reset() })
	defer stop()
	req := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, from), to)
	if _, err := st.Write(req); err != nil {
		st.Reset()
		return 0, nil, err
	}
	if err := st.CloseWrite(); err != nil {
		st.Reset()
		return 0, nil, err
	}
	r := bufio.NewReader(st)
	var head [8]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, nil, err
	}
	tip := binary.BigEndian.Uint64(head[:])
	var out []*statechain.Block
	for {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); errors.Is(err, io.EOF) {
			return tip, out, nil
		} else if err != nil {
			return 0, nil, err
		}
		n := binary.BigEndian.Uint32(size[:])
		if n > maxFrame || len(out) == maxPerAnswer {
			st.Reset()
			return 0, nil, fmt.Errorf("peer broke the sync protocol (a frame of %d bytes, or more than %d blocks)", n, maxPerAnswer)
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(r, data); err != nil {
			return 0, nil, err
		}
		b := new(statechain.Block)
		if err := b.UnmarshalBinary(data, s.cfg.Network); err != nil {
			st.Reset()
			return 0, nil, err
		}
		out = append(out, b)
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
	for _, b := range s.Range(from, to, maxPerAnswer) {
		data, err := b.MarshalBinary()
		if err != nil {
			st.Reset()
			return
		}
		w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
		w.Write(data)
	}
	if err := w.Flush(); err != nil {
		st.Reset()
	}
}
