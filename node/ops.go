package node

import (
	"errors"
	"fmt"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/ledgerstore"
)

// confirmAll carries out an opConfirm: every confirmation, then the votes.
func confirmAll(batch *ledgerstore.Batch, r *request) error {
	for i, c := range r.confirms {
		r.results[i].Hash = c.Hash
		done, err := confirm(batch, c.Hash, c.Certificate)
		if errors.Is(err, ledger.ErrNotInLedger) {
			r.errs[i] = err // found before any write: the rest goes on
			continue
		}
		if err != nil {
			return err
		}
		r.results[i].Confirmed = done
		r.res.Confirmed = append(r.res.Confirmed, done...)
	}
	for digest, v := range r.votes {
		batch.PutVote(digest, v)
	}
	return nil
}

// confirm confirms block h and everything it depends on in the batch
// (ledger.Confirm), ends the conflicts at the places it decided, stores
// h's certificate, and returns the hashes that became confirmed,
// dependencies first within each chain.
func confirm(batch *ledgerstore.Batch, h ledger.Hash, cert []byte) ([]ledger.Hash, error) {
	entries, err := ledger.Confirm(batch, h)
	if err != nil {
		return nil, err
	}
	confirmed := make([]ledger.Hash, len(entries))
	for i, e := range entries {
		confirmed[i] = e.Block.Hash
		// A fork at a confirmed place is decided: the block there won.
		if err := batch.EndConflict(e.Block.Account, e.Block.Previous); err != nil {
			return nil, err
		}
	}
	if cert != nil {
		batch.PutCertificate(h, cert)
	}
	return confirmed, nil
}

// placeConfirmed reports whether the block a fork contends with is
// confirmed.
func placeConfirmed(batch *ledgerstore.Batch, fe *ledger.ForkError) (bool, error) {
	e, found, err := batch.Entry(fe.Existing)
	if err != nil || !found {
		return false, err
	}
	return batch.IsConfirmed(e)
}

// resolve switches the fork at b's place to b (see Engine.Resolve).
func (e *Engine) resolve(batch *ledgerstore.Batch, r *request) {
	b := r.b
	r.res.Hash = b.Hash
	height := uint64(1)
	if !b.Previous.IsZero() {
		prev, found, err := batch.Entry(b.Previous)
		if err != nil {
			r.err = err
			return
		}
		if !found || prev.Block.Account != b.Account {
			e.append(batch, r, b) // a gap or a wrong previous: Apply says which
			return
		}
		height = prev.Height + 1
	}
	inPlace, found, err := batch.ChainAt(b.Account, height)
	switch {
	case err != nil:
		r.err = err
		return
	case !found:
		e.append(batch, r, b)
		return
	case inPlace == b.Hash:
		r.res.Duplicate = true
		return
	}
	done, _, _, err := batch.Confirmed(b.Account)
	if err != nil {
		r.err = err
		return
	}
	if done >= height {
		r.err = fmt.Errorf("%w: %s holds %s's place at height %d", ledger.ErrConfirmed, inPlace, b.Account, height)
		return
	}
	if r.res.RolledBack, r.err = ledger.RollbackTo(batch, b.Account, height-1); r.err != nil {
		return
	}
	d, err := ledger.Apply(e.view(batch), b)
	if err != nil {
		r.err = fmt.Errorf("node: contender %s does not apply after the rollback: %w", b.Hash, err)
		return
	}
	if r.err = batch.Apply(d); r.err != nil {
		return
	}
	r.applied = d.Add
	r.err = batch.EndConflict(b.Account, b.Previous)
	e.log.Info("fork resolved", "account", b.Account, "previous", b.Previous, "winner", b.Hash,
		"rolled_back", len(r.res.RolledBack))
}
