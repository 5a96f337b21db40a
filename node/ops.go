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
		if errors.Is(err, ErrNotInLedger) {
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

// confirm marks block h and everything it depends on as confirmed in the
// batch, and returns the hashes that became confirmed, dependencies first
// within each chain. A block depends on the earlier blocks of its chain and,
// when it receives, on the send it receives: confirmation never leaves a
// confirmed block resting on an unconfirmed one, which is what lets a
// rollback of unconfirmed blocks never reach a confirmed one.
func confirm(batch *ledgerstore.Batch, h ledger.Hash, cert []byte) ([]ledger.Hash, error) {
	e, found, err := batch.Entry(h)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: %s", ErrNotInLedger, h)
	}
	var confirmed []ledger.Hash
	stack := []*ledger.Entry{e}
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		a := top.Block.Account
		done, _, _, err := batch.Confirmed(a)
		if err != nil {
			return nil, err
		}
		if top.Height <= done {
			stack = stack[:len(stack)-1]
			continue
		}
		// Walk up from the confirmed prefix. At a receive whose send is
		// not confirmed yet, confirm what was walked, confirm the send's
		// chain first, and come back: every block is walked once, where
		// walking the whole range again on every return was quadratic in
		// a pair of chains that pay each other back and forth.
		var (
			hashes, prevs []ledger.Hash
			dep           *ledger.Entry
		)
		for height := done + 1; height <= top.Height && dep == nil; height++ {
			ch, ce := top.Block.Hash, top
			if height < top.Height {
				if ch, ce, err = chainEntry(batch, a, height); err != nil {
					return nil, err
				}
			}
			if src := ce.Block.Source; !src.IsZero() && ce.Block.Type == ledger.TypeReceive {
				se, found, err := batch.Entry(src)
				if err != nil {
					return nil, err
				}
				if !found {
					return nil, fmt.Errorf("node: source %s of %s is missing", src, ch)
				}
				sdone, _, _, err := batch.Confirmed(se.Block.Account)
				if err != nil {
					return nil, err
				}
				if se.Height > sdone {
					dep = se
					break
				}
			}
			hashes = append(hashes, ch)
			prevs = append(prevs, ce.Block.Previous)
		}
		if n := len(hashes); n > 0 {
			if err := batch.SetConfirmed(a, done+uint64(n), hashes[n-1]); err != nil {
				return nil, err
			}
			// A fork at a confirmed place is decided: the block there won.
			for _, prev := range prevs {
				if err := batch.EndConflict(a, prev); err != nil {
					return nil, err
				}
			}
			confirmed = append(confirmed, hashes...)
		}
		if dep != nil {
			stack = append(stack, dep)
		} else {
			stack = stack[:len(stack)-1]
		}
	}
	if cert != nil {
		batch.PutCertificate(h, cert)
	}
	return confirmed, nil
}

// chainEntry returns the hash and entry of the block at height in a's
// chain, which must be there.
func chainEntry(batch *ledgerstore.Batch, a ledger.Address, height uint64) (ledger.Hash, *ledger.Entry, error) {
	h, found, err := batch.ChainAt(a, height)
	if err != nil {
		return h, nil, err
	}
	if !found {
		return h, nil, fmt.Errorf("node: chain of %s has no block at height %d", a, height)
	}
	e, found, err := batch.Entry(h)
	if err != nil {
		return h, nil, err
	}
	if !found {
		return h, nil, fmt.Errorf("node: block %s of %s's chain is missing", h, a)
	}
	return h, e, nil
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
		r.err = fmt.Errorf("%w: %s holds %s's place at height %d", ErrConfirmed, inPlace, b.Account, height)
		return
	}
	if r.res.RolledBack, r.err = rollbackTo(batch, b.Account, height-1); r.err != nil {
		return
	}
	d, err := ledger.Apply(batch, b)
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

// rollbackTo removes blocks of a's chain above height keep, and first
// whatever depends on them. It refuses to remove a confirmed block.
func rollbackTo(batch *ledgerstore.Batch, a ledger.Address, keep uint64) ([]*ledger.Block, error) {
	var removed []*ledger.Block
	for {
		acct, found, err := batch.Account(a)
		if err != nil {
			return removed, err
		}
		if !found || acct.Height <= keep {
			return removed, nil
		}
		done, _, _, err := batch.Confirmed(a)
		if err != nil {
			return removed, err
		}
		if acct.Height <= done {
			return removed, fmt.Errorf("%w: %s at height %d of %s", ErrConfirmed, acct.Frontier, acct.Height, a)
		}
		d, err := ledger.Rollback(batch, a)
		if errors.Is(err, ledger.ErrHasDependents) {
			// The frontier is a send already received: undo the
			// receiving chain down to below that receive first.
			r, found, err := batch.Receiver(acct.Frontier)
			if err != nil {
				return removed, err
			}
			if !found {
				return removed, fmt.Errorf("node: send %s has no receiver, yet cannot be rolled back", acct.Frontier)
			}
			re, found, err := batch.Entry(r)
			if err != nil {
				return removed, err
			}
			if !found {
				return removed, fmt.Errorf("node: receive %s is missing", r)
			}
			more, err := rollbackTo(batch, re.Block.Account, re.Height-1)
			removed = append(removed, more...)
			if err != nil {
				return removed, err
			}
			continue
		}
		if err != nil {
			return removed, err
		}
		if err := batch.Apply(d); err != nil {
			return removed, err
		}
		removed = append(removed, d.Remove.Block)
	}
}
