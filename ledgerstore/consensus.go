package ledgerstore

import (
	"encoding/binary"
	"fmt"
	"math/big"

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
func confirmRange(v chainView, a ledger.Address, old, height uint64, d weightDeltas) error {
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
		var before ledger.Amount
		if prev != nil {
			before = prev.Balance(ledger.Native)
		}
		after := e.After.Balance(ledger.Native)
		switch b := e.Block; {
		case b.Type == ledger.TypeSend && after.Cmp(before) < 0:
			sent, _ := before.Sub(after)
			d.add(b.Destination, sent, +1)
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

// writeConfirmedWeights applies d to the confirmed-weight table in w.
// written, when not nil, receives the new values, for the writer's cache
// (s.cweights, which only the writer uses) once the batch is committed.
func (s *Store) writeConfirmedWeights(w *pebble.Batch, d weightDeltas, written map[ledger.Address]ledger.Amount) error {
	for rep, delta := range d {
		if delta.Sign() == 0 {
			continue
		}
		cur, ok := s.cweights[rep]
		if !ok || written == nil {
			var err error
			if cur, err = s.ConfirmedWeight(rep); err != nil {
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
		return confirmRange(s.reader, a, 0, binary.BigEndian.Uint64(v), d)
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

// FinalVote returns the block this node's representatives cast their final
// vote for at (account, previous), if they did.
func (r reader) FinalVote(account ledger.Address, previous ledger.Hash) (ledger.Hash, bool, error) {
	return r.hashAt(key(pFinal, account[:], previous[:]))
}

// FinalVoteRecord is one final vote of this node's representatives: the
// block they voted for, at its place.
type FinalVoteRecord struct {
	Account  ledger.Address
	Previous ledger.Hash
	Hash     ledger.Hash
}

// RecordFinalVotes records final votes in the batch and returns them as
// they stand: a place that has a record (on disk or earlier in the batch)
// keeps it, and the returned record names the block recorded there, the
// only one this node's representatives may sign a final vote for. The
// caller signs nothing before the batch is durable.
func (b *Batch) RecordFinalVotes(recs []FinalVoteRecord) ([]FinalVoteRecord, error) {
	out := make([]FinalVoteRecord, 0, len(recs))
	for _, r := range recs {
		k := pendingKey{r.Account, r.Previous}
		old, found := b.finals[k]
		if !found {
			var err error
			if old, found, err = b.s.FinalVote(r.Account, r.Previous); err != nil {
				return nil, err
			}
		}
		if found {
			r.Hash = old
		} else {
			b.b.Set(key(pFinal, r.Account[:], r.Previous[:]), r.Hash[:], nil)
			b.n++
		}
		b.finals[k] = r.Hash
		out = append(out, r)
	}
	return out, nil
}
