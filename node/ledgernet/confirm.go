package ledgernet

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node"
)

// certificate encodes the evidence that a block won its election: a u16
// count, then for each vote the representative and the vote's digest. The
// votes themselves are stored once each, by digest: one vote names up to
// 255 blocks, and a copy in every block's certificate was most of the
// bytes a node wrote.
func certificate(votes []*consensus.Vote, digest func(*consensus.Vote) ledger.Hash) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(votes)))
	for _, v := range votes {
		d := digest(v)
		b = append(append(b, v.Representative[:]...), d[:]...)
	}
	return b
}

// confirmJob asks the confirm loop to make winner the confirmed block of
// root.
type confirmJob struct {
	root   consensus.Root
	winner ledger.Hash
	votes  []*consensus.Vote // the final votes that confirmed it
}

type confirmOutcome struct {
	root   consensus.Root
	winner ledger.Hash
	err    error
}

// confirmLoop carries out confirmations through the engine, as many as are
// waiting in one atomic commit: the winner is confirmed where it is in the
// ledger, or switched in first when it is a refused contender or must be
// fetched from peers.
func (s *Service) confirmLoop(ctx context.Context) {
	for {
		jobs, ok := takeBatch(ctx, s.confirmQ, 1024)
		if !ok {
			return
		}
		errs := s.confirmWinners(ctx, jobs)
		for i, j := range jobs {
			if errs[i] != nil && ctx.Err() == nil {
				s.log.Debug("confirmation not done yet", "root", j.root, "winner", j.winner, "err", errs[i])
			}
			select {
			case s.confirmed <- confirmOutcome{root: j.root, winner: j.winner, err: errs[i]}:
			case <-ctx.Done():
				return
			}
		}
	}
}

// confirmWinners confirms the winners of jobs, switching forks first where
// a winner is not in the ledger.
func (s *Service) confirmWinners(ctx context.Context, jobs []confirmJob) []error {
	digests := map[*consensus.Vote]ledger.Hash{}
	votes := map[ledger.Hash][]byte{}
	digest := func(v *consensus.Vote) ledger.Hash {
		d, ok := digests[v]
		if !ok {
			d = v.Digest(s.network)
			digests[v] = d
			votes[d] = mustBinary(v)
		}
		return d
	}
	cs := make([]node.Confirmation, len(jobs))
	for i, j := range jobs {
		cs[i] = node.Confirmation{Hash: j.winner, Certificate: certificate(j.votes, digest)}
	}
	_, errs := s.n.Engine.ConfirmAll(ctx, cs, votes)
	for i, j := range jobs {
		if !errors.Is(errs[i], ledger.ErrNotInLedger) {
			continue
		}
		errs[i] = s.switchTo(ctx, j.winner)
		if errs[i] == nil {
			_, errs[i] = s.n.Engine.Confirm(ctx, j.winner, cs[i].Certificate)
		}
	}
	return errs
}

// switchTo makes winner, a block not in the ledger, the block at its place:
// a refused fork contender this node keeps, or one fetched from peers.
func (s *Service) switchTo(ctx context.Context, winner ledger.Hash) error {
	b, found, err := s.n.Store.ForkBlock(winner)
	if err != nil {
		return err
	}
	if !found {
		if b = s.fetchAny(ctx, winner); b == nil {
			return errors.New("ledgernet: the winner is not known here and no peer gave it")
		}
	}
	res, err := s.n.Engine.Resolve(ctx, b)
	if err != nil {
		return err
	}
	if len(res.RolledBack) > 0 {
		s.stats.resolved.Add(1)
	}
	return nil
}

// fetchAny asks connected peers, one after another, for block h.
func (s *Service) fetchAny(ctx context.Context, h ledger.Hash) *ledger.Block {
	for _, p := range s.h.Peers() {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		blocks, err := s.requestBlocks(cctx, p, []ledger.Hash{h})
		cancel()
		if err == nil && len(blocks) == 1 && blocks[0].Hash == h {
			if params, err := s.n.Engine.Params(); err == nil && params.Check(blocks[0]) == nil {
				return blocks[0]
			}
		}
	}
	return nil
}
