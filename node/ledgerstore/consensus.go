package ledgerstore

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/ledger"
)

// The tables of this file serve consensus: the weights that count in
// elections, which only confirmed blocks move, and the final votes of
// this node's representatives, which must survive a restart so that a
// representative never casts a second final vote for another contender.

// metaConfirmedWeights marks a store whose confirmed-weight table is
// built. Stores written before the table existed build it when opened.
const metaConfirmedWeights = "confirmed-weights"

// ConfirmedWeight returns the voting weight of representative rep in the
// confirmed ledger: the native balances, as of each account's latest
// confirmed block, of the accounts whose representative was rep there (its
// own included when it represents itself), plus the native amounts of
// confirmed sends to rep's own address that no confirmed receive has taken
// yet. Unconfirmed blocks never move it, so every node that has confirmed
// the same blocks counts the same weight, and the confirmed weights of all
// representatives add up to the supply (docs/protocol.md, "The quorum
// rule").
func (r reader) ConfirmedWeight(rep ledger.Address) (ledger.Amount, error) {
	v, found, err := r.get(key(pCWeight, rep[:]))
	if err != nil || !found {
		return ledger.Amount{}, err
	}
	return decodeAmount(v)
}

// ConfirmedWeight returns the voting weight of representative rep in the
// confirmed ledger, as reader.ConfirmedWeight does, from the table in
// memory: elections ask for it at every vote.
func (s *Store) ConfirmedWeight(rep ledger.Address) (ledger.Amount, error) {
	w, _ := s.cw.get(rep)
	return w, nil
}

// memTable is a table of the store kept whole in memory (the confirmed
// weights, as Nano keeps its representatives' weights, and the vote
// records of undecided places): loaded when the store opens and changed
// only by the one writer after each commit, so a reader on any goroutine
// sees a value as the database held it before or after the latest
// commit, as a read of the database at that moment would. A zero value
// is no entry, as its key is absent from the database.
type memTable[K, V comparable] struct {
	mu sync.RWMutex
	m  map[K]V
}

func (t *memTable[K, V]) get(k K) (V, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	v, ok := t.m[k]
	return v, ok
}

// replace makes m the table (at open).
func (t *memTable[K, V]) replace(m map[K]V) {
	t.mu.Lock()
	t.m = m
	t.mu.Unlock()
}

// set records the values a commit wrote; a zero value leaves the table.
func (t *memTable[K, V]) set(written map[K]V) {
	if len(written) == 0 {
		return
	}
	var zero V
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range written {
		if v == zero {
			delete(t.m, k)
		} else {
			t.m[k] = v
		}
	}
}

// loadConfirmedWeights reads the confirmed-weight table into memory.
func (s *Store) loadConfirmedWeights() error {
	m := make(map[ledger.Address]ledger.Amount)
	err := s.scan([]byte{pCWeight}, false, func(k, v []byte) error {
		if len(k) != 1+32 {
			return fmt.Errorf("ledgerstore: corrupt confirmed-weight key")
		}
		w, err := decodeAmount(v)
		if err != nil {
			return err
		}
		var a ledger.Address
		copy(a[:], k[1:])
		m[a] = w
		return nil
	})
	if err != nil {
		return fmt.Errorf("ledgerstore: loading the confirmed weights: %w", err)
	}
	s.cw.replace(m)
	return nil
}

// ConfirmedWeightTotal returns the sum of every representative's
// confirmed weight, which must be the native supply: every confirmed
// native unit is held by a confirmed account or in transit to an address.
// The audit checks it.
func (r reader) ConfirmedWeightTotal() (ledger.Amount, error) {
	var sum ledger.Amount
	err := r.scan([]byte{pCWeight}, false, func(_, v []byte) error {
		w, err := decodeAmount(v)
		if err != nil {
			return err
		}
		if sum, err = sum.Add(w); err != nil {
			return fmt.Errorf("ledgerstore: confirmed weights overflow")
		}
		return nil
	})
	return sum, err
}

// weightDeltas are signed changes of confirmed weight, by representative:
// within a batch a receive may be counted before the send it takes (the
// table is written only once the batch is complete).
type weightDeltas map[ledger.Address]*big.Int

func (d weightDeltas) add(rep ledger.Address, a ledger.Amount, sign int) {
	if a.IsZero() {
		return
	}
	v := amountInt(a)
	if sign < 0 {
		v.Neg(v)
	}
	if cur, ok := d[rep]; ok {
		cur.Add(cur, v)
		return
	}
	d[rep] = v
}

func amountInt(a ledger.Amount) *big.Int {
	hi, lo := a.Parts()
	v := new(big.Int).SetUint64(hi)
	v.Lsh(v, 64)
	return v.Or(v, new(big.Int).SetUint64(lo))
}

var maxAmountInt = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))

func intAmount(v *big.Int) (ledger.Amount, bool) {
	if v.Sign() < 0 || v.Cmp(maxAmountInt) > 0 {
		return ledger.Amount{}, false
	}
	lo := new(big.Int).And(v, new(big.Int).SetUint64(^uint64(0))).Uint64()
	hi := new(big.Int).Rsh(v, 64).Uint64()
	return ledger.AmountFromParts(hi, lo), true
}

// chainView is what confirmRange reads: the batch, or the store.
type chainView interface {
	ChainAt(a ledger.Address, height uint64) (ledger.Hash, bool, error)
	Entry(h ledger.Hash) (*ledger.Entry, bool, error)
}

// confirmRange adds to d what confirming a's blocks from height old+1 to
// height changes: the account's native balance leaves its representative
// as of height old and joins its representative as of height; each native
// send among them counts for its destination's address until a confirmed
// receive takes it; each native receive takes what its send counted for a.
//
// placed, when not nil, is told of every block confirmed (old+1 to height).
func confirmRange(v chainView, a ledger.Address, old, height uint64, d weightDeltas, placed func(*ledger.Entry)) error {
	var prev *ledger.Account
	for ht := old; ht <= height; ht++ {
		if ht == 0 {
			continue
		}
		h, found, err := v.ChainAt(a, ht)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("ledgerstore: no block at height %d of %s", ht, a)
		}
		e, found, err := v.Entry(h)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("ledgerstore: block %s of %s is missing", h, a)
		}
		if ht == old {
			prev = &e.After
			continue
		}
		if placed != nil {
			placed(e)
		}
		var before ledger.Amount
		if prev != nil {
			before = prev.Balance(ledger.Native)
		}
		after := e.After.Balance(ledger.Native)
		switch b := e.Block; {
		case b.Type == ledger.TypeSend && after.Cmp(before) < 0:
			sent, _ := before.Sub(after)
			d.add(b.Destination, sent, +1)
		case b.Type == ledger.TypeLease || b.Type == ledger.TypeLeaseAccept:
			// The escrow and the stake keep counting for the
			// representative their owner had when it paid them in (the
			// lease's consumer's, the accept's provider's) while the lease
			// holds them: weight nobody can vote with would drift toward
			// the third that stops confirmation as leases run.
			sent, _ := before.Sub(after)
			d.add(e.After.Rep(), sent, +1)
		case b.Type == ledger.TypeLeaseSettle && !b.Amount.IsZero() && b.Asset == ledger.Native:
			// A payout leaves those representatives for its payee's
			// address, until a receive takes it.
			moves, err := payout(v, b, d)
			if err != nil {
				return err
			}
			for _, m := range moves {
				d.add(m.rep, m.amount, -1)
			}
			d.add(moves[0].payee, b.Amount, +1)
		case b.Type == ledger.TypeReceive && !b.Source.IsZero() && after.Cmp(before) > 0:
			got, _ := after.Sub(before)
			d.add(a, got, -1)
		}
		if ht == old+1 && prev != nil {
			d.add(prev.Rep(), before, -1)
		}
		if ht == height {
			d.add(e.After.Rep(), after, +1)
		}
		prev = &e.After
	}
	return nil
}

// payoutMove is part of a lease account's payout: what leaves the
// representative it counted for, and who the payout is for.
type payoutMove struct {
	rep, payee ledger.Address
	amount     ledger.Amount
}

// payout says where a lease account's paying block takes its amount from
// (the escrow from the consumer's representative as of the lease block,
// the stake from the provider's as of the accept) and who it pays: the
// consumer for a refund (the first block, naming the lease) or a
// remainder (the third), the sender for a bounce (which gives back what
// counted for the lease account's address), the provider otherwise. An
// early end also takes its notice in: what the notice counted for the
// lease account's address joins the escrow at the consumer's
// representative (in d), which the remainder pays back.
func payout(v chainView, b *ledger.Block, d weightDeltas) ([]payoutMove, error) {
	entry := func(h ledger.Hash) (*ledger.Entry, error) {
		e, found, err := v.Entry(h)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, fmt.Errorf("ledgerstore: block %s of settle %s is missing", h, b.Hash)
		}
		return e, nil
	}
	src, err := entry(b.Source)
	if err != nil {
		return nil, err
	}
	if src.Block.Type == ledger.TypeLeaseAccept { // a stake return
		return []payoutMove{{rep: src.After.Rep(), payee: src.Block.Account, amount: b.Amount}}, nil
	}
	if src.Block.Type == ledger.TypeSend {
		start, err := entry(b.Previous)
		if err != nil {
			return nil, err
		}
		var accept *ledger.Entry
		if start.Block.Previous.IsZero() {
			if accept, err = entry(start.Block.Source); err != nil {
				return nil, err
			}
		}
		if accept == nil || accept.Block.Type != ledger.TypeLeaseAccept {
			// A bounce: the send counted for the lease account's
			// address, and goes back to its sender's.
			return []payoutMove{{rep: b.Account, payee: src.Block.Account, amount: b.Amount}}, nil
		}
		// An early end: the second block, after a start.
		lease, err := entry(accept.Block.Source)
		if err != nil {
			return nil, err
		}
		d.add(b.Account, src.Block.Amount, -1)
		d.add(lease.After.Rep(), src.Block.Amount, +1)
		earned, err := b.Amount.Sub(accept.Block.Amount)
		if err != nil {
			return nil, fmt.Errorf("ledgerstore: early end %s pays less than the stake", b.Hash)
		}
		return []payoutMove{
			{rep: lease.After.Rep(), payee: lease.Block.Destination, amount: earned},
			{rep: accept.After.Rep(), payee: lease.Block.Destination, amount: accept.Block.Amount},
		}, nil
	}
	lease := src
	if b.Previous.IsZero() { // a refund
		return []payoutMove{{rep: lease.After.Rep(), payee: lease.Block.Account, amount: b.Amount}}, nil
	}
	prev, err := entry(b.Previous)
	if err != nil {
		return nil, err
	}
	if !prev.Block.Previous.IsZero() { // a remainder, after an early end
		return []payoutMove{{rep: lease.After.Rep(), payee: lease.Block.Account, amount: b.Amount}}, nil
	}
	// An end: the escrow and the stake of the accept the start took in.
	accept, err := entry(prev.Block.Source)
	if err != nil {
		return nil, err
	}
	return []payoutMove{
		{rep: lease.After.Rep(), payee: lease.Block.Destination, amount: lease.Block.Amount},
		{rep: accept.After.Rep(), payee: lease.Block.Destination, amount: accept.Block.Amount},
	}, nil
}

// writeConfirmedWeights applies d to the confirmed-weight table in w.
// written, when not nil, receives the new values, for the table in memory
// (s.cw) once the batch is committed; when nil (before the table in memory
// is loaded) the current values are read from the database.
func (s *Store) writeConfirmedWeights(w *pebble.Batch, d weightDeltas, written map[ledger.Address]ledger.Amount) error {
	for rep, delta := range d {
		if delta.Sign() == 0 {
			continue
		}
		var cur ledger.Amount
		if written != nil {
			cur, _ = s.cw.get(rep)
		} else {
			var err error
			if cur, err = s.reader.ConfirmedWeight(rep); err != nil {
				return err
			}
		}
		nv, ok := intAmount(new(big.Int).Add(amountInt(cur), delta))
		if !ok {
			return fmt.Errorf("ledgerstore: confirmed weight of %s out of range (%s%+d)", rep, cur, delta)
		}
		if nv.IsZero() {
			w.Delete(key(pCWeight, rep[:]), nil)
		} else {
			w.Set(key(pCWeight, rep[:]), appendAmount(nil, nv), nil)
		}
		if written != nil {
			written[rep] = nv
		}
	}
	return nil
}

// buildConfirmedWeights fills the confirmed-weight table of a store
// written before it existed, from every account's confirmation record, in
// one synced batch.
func (s *Store) buildConfirmedWeights() error {
	if _, found, err := s.get(key(pMeta, []byte(metaConfirmedWeights))); err != nil || found {
		return err
	}
	if _, err := s.Genesis(); err != nil {
		return nil // an empty store: Init marks the table built
	}
	d := weightDeltas{}
	err := s.scan([]byte{pConfirm}, false, func(k, v []byte) error {
		if len(k) != 1+32 || len(v) != 40 {
			return fmt.Errorf("ledgerstore: corrupt confirmation record")
		}
		var a ledger.Address
		copy(a[:], k[1:])
		return confirmRange(s.reader, a, 0, binary.BigEndian.Uint64(v), d, nil)
	})
	if err != nil {
		return fmt.Errorf("ledgerstore: building the confirmed weights: %w", err)
	}
	w := s.db.NewBatch()
	defer w.Close()
	if err := s.writeConfirmedWeights(w, d, nil); err != nil {
		return err
	}
	w.Set(key(pMeta, []byte(metaConfirmedWeights)), []byte{1}, nil)
	return w.Commit(pebble.Sync)
}

// SignedVotes is what this node's representatives signed at one place (an
// account and previous): their latest prevote of a round above 0 and their
// latest final vote, each with its round; a zero hash for none. A prevote
// of round 0 is not recorded: it is for the block the ledger holds there.
type SignedVotes struct {
	Prevote      ledger.Hash
	PrevoteRound uint32
	Final        ledger.Hash
	FinalRound   uint32
}

// signedVotesSize is the length of a record: prevote round (4), prevote
// (32), final round (4), final (32). A record of the first layout is a
// final vote's hash alone, of round 0.
const signedVotesSize = 4 + 32 + 4 + 32

func (v SignedVotes) encode() []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 0, signedVotesSize), v.PrevoteRound)
	b = append(b, v.Prevote[:]...)
	b = binary.BigEndian.AppendUint32(b, v.FinalRound)
	return append(b, v.Final[:]...)
}

func decodeSignedVotes(b []byte) (SignedVotes, error) {
	var v SignedVotes
	switch len(b) {
	case 32:
		copy(v.Final[:], b)
	case signedVotesSize:
		v.PrevoteRound = binary.BigEndian.Uint32(b)
		copy(v.Prevote[:], b[4:])
		v.FinalRound = binary.BigEndian.Uint32(b[36:])
		copy(v.Final[:], b[40:])
	default:
		return v, fmt.Errorf("ledgerstore: corrupt vote record of %d bytes", len(b))
	}
	return v, nil
}

// SignedVotes returns what this node's representatives signed at
// (account, previous), if anything is recorded.
func (r reader) SignedVotes(account ledger.Address, previous ledger.Hash) (SignedVotes, bool, error) {
	b, found, err := r.get(key(pSigned, account[:], previous[:]))
	if err != nil || !found {
		return SignedVotes{}, false, err
	}
	v, err := decodeSignedVotes(b)
	return v, err == nil, err
}

// SignedVotes returns what this node's representatives signed at
// (account, previous), as reader.SignedVotes does, from the table in
// memory.
func (s *Store) SignedVotes(account ledger.Address, previous ledger.Hash) (SignedVotes, bool, error) {
	v, found := s.sv.get(pendingKey{account, previous})
	return v, found, nil
}

// The vote records are kept in memory, whole (Store.sv). A record is needed
// only while its place is undecided here: once a block is confirmed at a
// place, this node's representatives never vote there again (only
// attestations, which are not recorded), so the batch that confirms it
// deletes the record, and Open deletes those of places confirmed before
// this rule. The table then holds only places where a quorum prevoted
// (the only votes recorded are final votes, which need a polka, and
// prevotes of later rounds) and nothing is confirmed yet: few, even in a
// partition, where a side without quorum records nothing. Every new election
// asks for its record, without the database.
//
// loadSigned reads the vote records into memory and deletes, in one synced
// batch, those of places confirmed here (written before records were
// deleted at confirmation).
func (s *Store) loadSigned() error {
	m := make(map[pendingKey]SignedVotes)
	var done [][]byte
	err := s.scan([]byte{pSigned}, false, func(k, v []byte) error {
		if len(k) != 1+32+32 {
			return fmt.Errorf("ledgerstore: corrupt vote record key")
		}
		rec, err := decodeSignedVotes(v)
		if err != nil {
			return err
		}
		var pk pendingKey
		copy(pk.a[:], k[1:33])
		copy(pk.h[:], k[33:])
		decided, err := s.placeConfirmed(pk.a, pk.h)
		if err != nil {
			return err
		}
		if decided {
			done = append(done, slices.Clone(k))
			return nil
		}
		m[pk] = rec
		return nil
	})
	if err != nil {
		return fmt.Errorf("ledgerstore: loading the vote records: %w", err)
	}
	if len(done) > 0 {
		w := s.db.NewBatch()
		defer w.Close()
		for _, k := range done {
			w.Delete(k, nil)
		}
		if err := w.Commit(pebble.Sync); err != nil {
			return fmt.Errorf("ledgerstore: deleting the vote records of confirmed places: %w", err)
		}
	}
	s.sv.replace(m)
	return nil
}

// placeConfirmed reports whether a block at (a, previous) is confirmed
// here: a's confirmed height reaches the height after previous's.
func (s *Store) placeConfirmed(a ledger.Address, previous ledger.Hash) (bool, error) {
	height, _, found, err := s.reader.Confirmed(a)
	if err != nil || !found {
		return false, err
	}
	at := uint64(1)
	if !previous.IsZero() {
		e, found, err := s.reader.Entry(previous)
		if err != nil || !found {
			return false, err // a previous rolled back: undecided
		}
		if e.Block.Account != a {
			return false, nil
		}
		at = e.Height + 1
	}
	return height >= at, nil
}

// VoteRecord asks to record one vote of this node's representatives: a
// prevote or a final vote for Hash, in Round, at (Account, Previous).
type VoteRecord struct {
	Account  ledger.Address
	Previous ledger.Hash
	Round    uint32
	Final    bool
	Hash     ledger.Hash
}

// RecordVotes records votes in the batch and returns those it granted,
// the only ones the representatives may sign: a vote is granted when the
// record (on disk or earlier in the batch) holds no vote of its kind at
// that place, or one of an earlier round, or the same vote. A vote of the
// kind in a later round, or for another block in the same round, is
// refused: signing it could contradict what was signed before a restart.
// The caller signs nothing before the batch is durable.
func (b *Batch) RecordVotes(recs []VoteRecord) ([]VoteRecord, error) {
	out := make([]VoteRecord, 0, len(recs))
	for _, r := range recs {
		k := pendingKey{r.Account, r.Previous}
		cur, found := b.signed[k]
		if !found {
			cur, _ = b.s.sv.get(k)
		}
		hash, round := &cur.Prevote, &cur.PrevoteRound
		if r.Final {
			hash, round = &cur.Final, &cur.FinalRound
		}
		switch {
		case hash.IsZero(), r.Round > *round:
			*hash, *round = r.Hash, r.Round
			b.b.Set(key(pSigned, r.Account[:], r.Previous[:]), cur.encode(), nil)
			b.n++
		case r.Round == *round && r.Hash == *hash:
		default:
			b.signed[k] = cur
			continue
		}
		b.signed[k] = cur
		out = append(out, r)
	}
	return out, nil
}
