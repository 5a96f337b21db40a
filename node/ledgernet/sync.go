package ledgernet

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/latticenet/lattice/consensus"
	"github.com/latticenet/lattice/ledger"
)

// serveTimeout bounds one sync request on the serving side, and
// maxServing how many a single peer may have open at once.
const (
	serveTimeout = 30 * time.Second
	maxServing   = 2
)

// serveSync answers one sync request on s (see wire.go).
func (s *Service) serveSync(st network.Stream) {
	defer st.Close()
	p := st.Conn().RemotePeer()
	if !s.serving.enter(p) {
		st.Reset()
		return
	}
	defer s.serving.leave(p)
	st.SetDeadline(time.Now().Add(serveTimeout))
	var buf []byte
	kind, body, err := readFrame(st, &buf)
	if err != nil {
		st.Reset()
		return
	}
	req, err := parseRequest(append([]byte{kind}, body...))
	if err != nil {
		s.log.Debug("bad sync request", "peer", p, "err", err)
		st.Reset()
		return
	}
	w := bufio.NewWriterSize(st, 64<<10)
	if err := s.answer(req, w); err != nil {
		s.log.Debug("sync answer failed", "peer", p, "err", err)
		st.Reset()
		return
	}
	if err := w.Flush(); err != nil {
		st.Reset()
	}
}

func (s *Service) answer(req *request, w io.Writer) error {
	st := s.n.Store
	block := func(seq uint64, b *ledger.Block) error {
		return writeFrame(w, frameBlock, b.AppendBinary(binary.BigEndian.AppendUint64(nil, seq)))
	}
	end := func(next uint64) error {
		body := binary.BigEndian.AppendUint64(nil, next)
		return writeFrame(w, frameEnd, binary.BigEndian.AppendUint64(body, st.LastSeq()))
	}
	switch req.kind {
	case reqLog:
		next := req.after
		err := st.Log(req.after, req.limit, func(seq uint64, e *ledger.Entry) error {
			next = seq
			s.stats.served.Add(1)
			return block(seq, e.Block)
		})
		if err != nil {
			return err
		}
		return end(next)
	case reqFrontiers:
		n := 0
		err := st.AccountsFrom(req.start, func(a ledger.Account) error {
			if n == req.limit {
				return errStop
			}
			n++
			body := append(append(a.Address[:0:0], a.Address[:]...), a.Frontier[:]...)
			return writeFrame(w, frameFrontier, binary.BigEndian.AppendUint64(body, a.Height))
		})
		if err != nil && !errors.Is(err, errStop) {
			return err
		}
		more := uint64(0)
		if n == req.limit {
			more = 1
		}
		return end(more)
	case reqChain:
		for i := range uint64(req.limit) {
			h, found, err := st.ChainAt(req.start, req.height+i)
			if err != nil {
				return err
			}
			if !found {
				break
			}
			e, found, err := st.Entry(h)
			if err != nil || !found {
				return err
			}
			if err := block(0, e.Block); err != nil {
				return err
			}
		}
		return end(0)
	case reqBlocks:
		for _, h := range req.hashes {
			b, err := s.lookup(h)
			if err != nil {
				return err
			}
			if b != nil {
				if err := block(0, b); err != nil {
					return err
				}
			}
		}
		return end(0)
	case reqVotes:
		votes, err := s.answerVotes(req.hashes)
		if err != nil {
			return err
		}
		for _, v := range votes {
			if err := writeFrame(w, frameVote, mustBinary(v)); err != nil {
				return err
			}
		}
		return end(0)
	}
	return fmt.Errorf("%w: kind %q", errBadRequest, req.kind)
}

var errStop = errors.New("stop")

// maxAnswerVotes bounds the server's own votes in one answer to a vote
// request, and apart from them the votes of others; maxVoteFrames, the
// frames of the whole answer, is what a client reads of one at most.
const (
	maxAnswerVotes = 4096
	maxVoteFrames  = 2 * maxAnswerVotes
)

// answerVotes gathers what a vote request about hashes gets, signing
// nothing this node's representatives have not signed before:
//
//   - where the node runs an election: their prevote in their round and
//     their latest final vote, and the prevotes of the highest polka the
//     node has seen (others' votes: the evidence that moves a locked
//     representative on);
//   - for a block confirmed here: its certificate, the final votes of a
//     quorum that confirmed it, as stored (none when it was confirmed as
//     the ancestor of another), and their attestation of it, a final vote
//     in consensus.ConfirmedRound, which lets a node whose weights differ
//     from those the certificate was counted with confirm it too;
//   - for a block in the ledger that is in no election here: their prevote
//     of round 0 for it, and what the record says they signed at its place;
//   - for the genesis block: a heartbeat, which counts them online.
func (s *Service) answerVotes(hashes []ledger.Hash) ([]*consensus.Vote, error) {
	type kind struct {
		round uint32
		final bool
	}
	groups := map[kind][]ledger.Hash{}
	var order []kind
	add := func(round uint32, final bool, h ledger.Hash) {
		k := kind{round, final}
		hs, ok := groups[k]
		if !ok {
			order = append(order, k)
		}
		if !slices.Contains(hs, h) {
			groups[k] = append(hs, h)
		}
	}
	var others []*consensus.Vote
	seen := map[*consensus.Vote]bool{}
	addOthers := func(vs []*consensus.Vote) {
		for _, v := range vs {
			if !seen[v] && len(others) < maxAnswerVotes {
				seen[v] = true
				others = append(others, v)
			}
		}
	}
	st := s.n.Store
	for _, h := range hashes {
		if h == s.network {
			add(s.heartbeatRound(), false, h)
			continue
		}
		if a, ok := s.choices.answerFor(h); ok {
			if a.prevote {
				add(a.prevoteRound, false, a.prevoteHash)
			}
			if a.final {
				add(a.fround, true, a.fhash)
			}
			addOthers(a.polka)
			continue
		}
		e, found, confirmed, err := st.EntryConfirmed(h)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if confirmed {
			cert, err := s.certificateVotes(h)
			if err != nil {
				return nil, err
			}
			add(consensus.ConfirmedRound, true, h)
			addOthers(cert)
			continue
		}
		add(0, false, h)
		rec, found, err := st.SignedVotes(e.Block.Account, e.Block.Previous)
		if err != nil {
			return nil, err
		}
		if found && !rec.Prevote.IsZero() {
			add(rec.PrevoteRound, false, rec.Prevote)
		}
		if found && !rec.Final.IsZero() {
			add(rec.FinalRound, true, rec.Final)
		}
	}
	var out []*consensus.Vote
	for _, k := range order {
		for chunk := range slices.Chunk(groups[k], consensus.MaxVoteHashes) {
			if len(out) >= maxAnswerVotes {
				break // a client reads no more (maxVoteFrames)
			}
			out = append(out, s.signVotes(chunk, k.round, k.final)...)
		}
	}
	return append(out[:min(len(out), maxAnswerVotes)], others...), nil
}

// certificateVotes returns the votes of confirmed block h's stored
// certificate (see certificate), or none when it has none (the genesis
// block, a block confirmed as the ancestor of another).
func (s *Service) certificateVotes(h ledger.Hash) ([]*consensus.Vote, error) {
	cert, found, err := s.n.Store.Certificate(h)
	if err != nil || !found {
		return nil, err
	}
	if len(cert) < 2 || len(cert) != 2+64*int(binary.BigEndian.Uint16(cert)) {
		return nil, fmt.Errorf("ledgernet: corrupt certificate of %s", h)
	}
	var out []*consensus.Vote
	for i := 2; i < len(cert); i += 64 {
		var d ledger.Hash
		copy(d[:], cert[i+32:i+64])
		b, found, err := s.n.Store.Vote(d)
		if err != nil {
			return nil, err
		}
		v := new(consensus.Vote)
		if !found || v.UnmarshalBinary(b) != nil {
			continue // a certificate is evidence, not a promise
		}
		out = append(out, v)
	}
	return out, nil
}

// lookup finds a block in the ledger or among refused fork contenders.
func (s *Service) lookup(h ledger.Hash) (*ledger.Block, error) {
	e, found, err := s.n.Store.Entry(h)
	if err != nil {
		return nil, err
	}
	if found {
		return e.Block, nil
	}
	b, found, err := s.n.Store.ForkBlock(h)
	if err != nil || !found {
		return nil, err
	}
	return b, nil
}

// exchange sends req to p and calls fn for every answer frame before the
// end frame, whose next and last it returns. An answer that holds more
// frames than req asked for (answerFrames), or a frame fn refuses, is an
// errBadAnswer: a peer that sends what was not asked for is not read any
// further, for every frame read costs memory and some a signature check.
func (s *Service) exchange(ctx context.Context, p peer.ID, req *request, fn func(kind byte, body []byte) error) (next, last uint64, err error) {
	st, err := s.h.Open(ctx, p, protocolSync)
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		// A failed answer resets the stream: the peer stops sending at
		// once rather than into a stream nobody reads.
		if err != nil {
			st.Reset()
			if errors.Is(err, errBadAnswer) {
				s.h.Misbehaved(p)
			}
			return
		}
		st.Close()
	}()
	if dl, ok := ctx.Deadline(); ok {
		st.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { st.Reset() })
	defer stop()
	m := req.marshal()
	if err := writeFrame(st, m[0], m[1:]); err != nil {
		return 0, 0, err
	}
	if err := st.CloseWrite(); err != nil {
		return 0, 0, err
	}
	r := bufio.NewReaderSize(st, 64<<10)
	var buf []byte
	for n, most := 0, req.answerFrames(); ; n++ {
		kind, body, err := readFrame(r, &buf)
		if err != nil {
			return 0, 0, fmt.Errorf("ledgernet: sync answer from %s: %w", p, err)
		}
		if kind == frameEnd {
			if len(body) != 16 {
				return 0, 0, fmt.Errorf("%w: end frame of %d bytes from %s", errBadAnswer, len(body), p)
			}
			return binary.BigEndian.Uint64(body), binary.BigEndian.Uint64(body[8:]), nil
		}
		if n == most {
			return 0, 0, fmt.Errorf("%w: %s sent more than the %d frames a %q request asks for", errBadAnswer, p, most, req.kind)
		}
		if err := fn(kind, body); err != nil {
			return 0, 0, fmt.Errorf("%w: from %s: %w", errBadAnswer, p, err)
		}
	}
}

// decodeBlockFrame decodes a block frame's body.
func decodeBlockFrame(body []byte) (uint64, *ledger.Block, error) {
	if len(body) < 8 {
		return 0, nil, errors.New("ledgernet: short block frame")
	}
	b := new(ledger.Block)
	if err := b.UnmarshalBinary(body[8:]); err != nil {
		return 0, nil, fmt.Errorf("ledgernet: block frame: %w", err)
	}
	return binary.BigEndian.Uint64(body), b, nil
}

// requestBlocks asks p for blocks by hash.
func (s *Service) requestBlocks(ctx context.Context, p peer.ID, hashes []ledger.Hash) ([]*ledger.Block, error) {
	var out []*ledger.Block
	_, _, err := s.exchange(ctx, p, &request{kind: reqBlocks, hashes: hashes}, func(kind byte, body []byte) error {
		if kind != frameBlock {
			return fmt.Errorf("unexpected frame %q", kind)
		}
		_, b, err := decodeBlockFrame(body)
		if err != nil {
			return err
		}
		out = append(out, b)
		return nil
	})
	return out, err
}

// requestVotes asks p's representatives to vote on hashes, and returns
// the votes that verify.
func (s *Service) requestVotes(ctx context.Context, p peer.ID, hashes []ledger.Hash) ([]*consensus.Vote, error) {
	var out []*consensus.Vote
	_, _, err := s.exchange(ctx, p, &request{kind: reqVotes, hashes: hashes}, func(kind byte, body []byte) error {
		if kind != frameVote {
			return fmt.Errorf("unexpected frame %q", kind)
		}
		v := new(consensus.Vote)
		if err := v.UnmarshalBinary(body); err != nil {
			return err
		}
		if err := v.Verify(s.network); err != nil {
			return err
		}
		// Only weight counts: a vote of an account without any would
		// only grow the tally's memory. The tally counts confirmed
		// weight, which lags the ledger's on a node that lags: a key
		// that holds weight in either may matter.
		if w, err := s.n.Store.ConfirmedWeight(v.Representative); err == nil && !w.IsZero() {
			out = append(out, v)
		} else if w, err := s.n.Store.Weight(v.Representative); err == nil && !w.IsZero() {
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

// syncLoop pulls, from every peer in turn, the blocks it committed since
// the last pull, on start, every SyncInterval, and at once when a new peer
// connects. A peer is pulled from for at most SyncBudget a pass; when one
// had more than that, the next pass starts at once: a long sync goes on
// at full speed, and every peer has its turn in it.
func (s *Service) syncLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.SyncInterval)
	defer t.Stop()
	known := map[peer.ID]bool{}
	for {
		again := false
		for _, p := range s.h.Peers() {
			known[p] = true
			more, err := s.syncFrom(ctx, p)
			if err != nil && ctx.Err() == nil {
				s.log.Debug("sync from peer", "peer", p, "err", err)
			}
			again = again || more
		}
		if again && ctx.Err() == nil {
			continue
		}
		// Wait for the interval, or less when a new peer shows up.
		for wait := true; wait; {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				wait = false
			case <-time.After(250 * time.Millisecond):
				for _, p := range s.h.Peers() {
					if !known[p] {
						wait = false
					}
				}
			}
		}
	}
}

// syncFrom pulls p's log from the cursor kept for p, in batches applied
// through the engine with group commit; the cursor is stored after each
// batch is durable, so a sync cut by a crash resumes where it was. more
// says the pull stopped at its budget (SyncBudget) with more to pull.
func (s *Service) syncFrom(ctx context.Context, p peer.ID) (more bool, err error) {
	cursorName := "sync/" + p.String()
	var cursor uint64
	if v, found, err := s.n.Store.Meta(cursorName); err != nil {
		return false, err
	} else if found && len(v) == 8 {
		cursor = binary.BigEndian.Uint64(v)
	}
	// One goroutine pulls the next batch while this one applies the last:
	// the pull waits on the network and the peer, the apply on this node's
	// cores and disk.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan logBatch, 2)
	go s.pullLog(ctx, p, cursor, time.Now().Add(s.cfg.SyncBudget), batches)
	for b := range batches {
		if b.err != nil {
			return false, b.err
		}
		if b.restart {
			cursor = 0
			continue
		}
		if len(b.blocks) > 0 {
			s.applySynced(ctx, p, b.blocks)
		}
		if b.next != cursor {
			cursor = b.next
			if err := s.n.Store.SetMeta(cursorName, binary.BigEndian.AppendUint64(nil, cursor)); err != nil {
				return false, err
			}
		}
		more = b.more
	}
	return more && ctx.Err() == nil, ctx.Err()
}

// logBatch is one answer to a log request: its blocks and the cursor after
// them, and whether the pull stopped after it with more to pull; or an
// error, or word that the peer's log restarted.
type logBatch struct {
	blocks  []*ledger.Block
	next    uint64
	more    bool
	restart bool
	err     error
}

// pullLog sends p's log from cursor on as batches, until it has all of it,
// ctx ends or it is past budget, and closes out. The budget is checked
// before each request, not during one, so that every pass gets at least
// one answer, however slow the peer: a peer whose log never ends (or
// whose answers claim it never does) holds the pass for at most the
// budget and one answer, and is pulled from again in the next pass.
func (s *Service) pullLog(ctx context.Context, p peer.ID, cursor uint64, budget time.Time, out chan<- logBatch) {
	defer close(out)
	send := func(b logBatch) bool {
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		blocks, next, last, err := s.pullBatch(ctx, p, cursor)
		if err != nil {
			send(logBatch{err: err})
			return
		}
		if cursor > last {
			// The peer's log is shorter than our cursor: its ledger was
			// started again. Pull it from the beginning, budget or not:
			// the restart is not stored, so a pass that stopped here
			// would meet it again every time.
			if !send(logBatch{restart: true}) {
				return
			}
			cursor = 0
			continue
		}
		done := next == cursor || next >= last
		more := time.Now().After(budget)
		if !send(logBatch{blocks: blocks, next: next, more: more && !done}) || done || more {
			return
		}
		cursor = next
	}
}

// pullBatch asks p for the blocks of its log after cursor, and holds the
// answer to what a log answer means (docs/protocol.md, "Answers"): blocks
// in log order, each numbered after the one before and after cursor, then
// an end frame whose next is the number of the last block, or cursor when
// none came. Any other answer is an errBadAnswer: a next that runs ahead
// of the blocks sent would keep the pull going forever on nothing.
func (s *Service) pullBatch(ctx context.Context, p peer.ID, cursor uint64) (blocks []*ledger.Block, next, last uint64, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	seq := cursor
	next, last, err = s.exchange(ctx, p, &request{kind: reqLog, after: cursor, limit: MaxLogBlocks}, func(kind byte, body []byte) error {
		if kind != frameBlock {
			return fmt.Errorf("unexpected frame %q", kind)
		}
		n, b, err := decodeBlockFrame(body)
		if err != nil {
			return err
		}
		if n <= seq {
			return fmt.Errorf("block numbered %d after %d", n, seq)
		}
		seq = n
		blocks = append(blocks, b)
		return nil
	})
	if err != nil {
		return nil, 0, 0, err
	}
	if next != seq {
		s.h.Misbehaved(p)
		return nil, 0, 0, fmt.Errorf("%w: %s's log after %d ends at %d, its last block at %d", errBadAnswer, p, cursor, next, seq)
	}
	return blocks, next, last, nil
}

// applySynced applies a batch of blocks from p's log and starts elections
// for the frontiers it moved.
func (s *Service) applySynced(ctx context.Context, p peer.ID, blocks []*ledger.Block) {
	for _, b := range blocks {
		s.fromNet.add(b.Hash)
	}
	// Most of a live peer's log came by gossip already: a point read
	// costs far less than the signature check the engine would make
	// before finding the block a duplicate.
	var todo []*ledger.Block
	limit := s.holdLimit()
	for _, b := range blocks {
		if ledger.IsGenesis(b) {
			continue
		}
		if _, found, err := s.n.Store.Entry(b.Hash); err == nil && found {
			continue
		}
		if s.hold(inBlock{b: b, from: p}, limit) {
			continue // its successors wait for it among the unchecked
		}
		todo = append(todo, b)
	}
	res, errs := s.n.Engine.SubmitAll(ctx, todo)
	touched := map[ledger.Address]bool{}
	for i, b := range todo {
		if errs[i] == nil && !res[i].Duplicate {
			s.stats.synced.Add(1)
			touched[b.Account] = true
		}
		if errs[i] != nil {
			s.afterSubmit(ctx, inBlock{b: b, from: p}, errs[i])
		}
	}
	if len(touched) == 0 {
		return
	}
	accts := make([]ledger.Address, 0, len(touched))
	for a := range touched {
		accts = append(accts, a)
	}
	select {
	case s.frontiers <- accts:
	case <-ctx.Done():
	}
}

// servingGate bounds the sync requests each peer has open at once.
type servingGate struct {
	mu sync.Mutex
	n  map[peer.ID]int
}

func (g *servingGate) enter(p peer.ID) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n == nil {
		g.n = make(map[peer.ID]int)
	}
	if g.n[p] >= maxServing {
		return false
	}
	g.n[p]++
	return true
}

func (g *servingGate) leave(p peer.ID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n[p]--; g.n[p] <= 0 {
		delete(g.n, p)
	}
}

// heldBlocks keeps blocks stamped ahead of this node's clock until their
// time, bounded in count (the earliest-due are kept).
type heldBlocks struct {
	mu     sync.Mutex
	max    int
	blocks map[ledger.Hash]inBlock
}

func newHeldBlocks(max int) *heldBlocks {
	return &heldBlocks{max: max, blocks: make(map[ledger.Hash]inBlock)}
}

// add keeps in (whose checked says whether its signature was verified
// already) and reports whether it was not kept before.
func (h *heldBlocks) add(in inBlock) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := in.b
	if _, ok := h.blocks[b.Hash]; ok {
		return false
	}
	if len(h.blocks) >= h.max {
		var latest ledger.Hash
		var ts int64
		for k, v := range h.blocks {
			if v.b.Timestamp > ts {
				latest, ts = k, v.b.Timestamp
			}
		}
		if b.Timestamp >= ts {
			return false
		}
		delete(h.blocks, latest)
	}
	h.blocks[b.Hash] = in
	return true
}

// due removes and returns the blocks stamped at or before limit.
func (h *heldBlocks) due(limit int64) []inBlock {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []inBlock
	for k, v := range h.blocks {
		if v.b.Timestamp <= limit {
			out = append(out, v)
			delete(h.blocks, k)
		}
	}
	return out
}
