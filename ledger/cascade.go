package ledger

import (
	"errors"
	"fmt"
)

// ErrNotInLedger is returned by Confirm for a block the ledger does not
// hold.
var ErrNotInLedger = errors.New("ledger: block is not in the ledger")

// ErrConfirmed is returned by RollbackTo when it would remove a confirmed
// block: confirmation is final.
var ErrConfirmed = errors.New("ledger: the block in place is confirmed")

// A Batch is a ledger being written that reads its own writes: a View that
// takes Deltas and keeps each account's confirmed height. The cascades of
// this file run on any Batch: Mem, and the durable store's batch.
type Batch interface {
	View
	// Apply writes a Delta from Apply or Rollback.
	Apply(d *Delta) error
	// Confirmed returns the height and hash of a's latest confirmed
	// block; found is false when none is.
	Confirmed(a Address) (height uint64, h Hash, found bool, err error)
	// SetConfirmed records that a's blocks up to height, the last h, are
	// confirmed.
	SetConfirmed(a Address, height uint64, h Hash) error
}

// Confirm marks block h and everything it depends on as confirmed in b,
// and returns the entries that became confirmed, dependencies first
// within each chain. A block depends on the earlier blocks of its chain
// and, when it takes a send (TypeRules.Takes), on that send: confirmation
// never leaves a confirmed block resting on an unconfirmed one, which is
// what lets a rollback of unconfirmed blocks never reach a confirmed one.
// A block not in the ledger is ErrNotInLedger, before any write.
func Confirm(b Batch, h Hash) ([]*Entry, error) {
	e, found, err := b.Entry(h)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: %s", ErrNotInLedger, h)
	}
	var confirmed []*Entry
	stack := []*Entry{e}
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		a := top.Block.Account
		done, _, _, err := b.Confirmed(a)
		if err != nil {
			return nil, err
		}
		if top.Height <= done {
			stack = stack[:len(stack)-1]
			continue
		}
		// Walk up from the confirmed prefix. At a block whose send is not
		// confirmed yet, confirm what was walked, confirm the send's chain
		// first, and come back: every block is walked once, where walking
		// the whole range again on every return was quadratic in a pair of
		// chains that pay each other back and forth.
		var (
			walked []*Entry
			dep    *Entry
		)
		for height := done + 1; height <= top.Height && dep == nil; height++ {
			ce := top
			if height < top.Height {
				if ce, err = chainEntry(b, a, height); err != nil {
					return nil, err
				}
			}
			if send, ok := ce.Block.DependsOn(); ok {
				se, found, err := b.Entry(send)
				if err != nil {
					return nil, err
				}
				if !found {
					return nil, fmt.Errorf("ledger: source %s of %s is missing", send, ce.Block.Hash)
				}
				sdone, _, _, err := b.Confirmed(se.Block.Account)
				if err != nil {
					return nil, err
				}
				if se.Height > sdone {
					dep = se
					break
				}
			}
			walked = append(walked, ce)
		}
		if n := len(walked); n > 0 {
			if err := b.SetConfirmed(a, done+uint64(n), walked[n-1].Block.Hash); err != nil {
				return nil, err
			}
			confirmed = append(confirmed, walked...)
		}
		if dep != nil {
			stack = append(stack, dep)
		} else {
			stack = stack[:len(stack)-1]
		}
	}
	return confirmed, nil
}

// chainEntry returns the entry of the block at height in a's chain, which
// must be there.
func chainEntry(b Batch, a Address, height uint64) (*Entry, error) {
	h, found, err := b.ChainAt(a, height)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("ledger: chain of %s has no block at height %d", a, height)
	}
	e, found, err := b.Entry(h)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("ledger: block %s of %s's chain is missing", h, a)
	}
	return e, nil
}

// RollbackTo removes the blocks of a's chain above height keep, and first
// whatever depends on them (the receivers of its sends, and theirs), and
// returns the blocks removed, in order. It refuses, with ErrConfirmed, to
// remove a confirmed block; what it removed before then stays removed in
// b, which the caller then discards.
func RollbackTo(b Batch, a Address, keep uint64) ([]*Block, error) {
	var removed []*Block
	for {
		acct, found, err := b.Account(a)
		if err != nil {
			return removed, err
		}
		if !found || acct.Height <= keep {
			return removed, nil
		}
		done, _, _, err := b.Confirmed(a)
		if err != nil {
			return removed, err
		}
		if acct.Height <= done {
			return removed, fmt.Errorf("%w: %s at height %d of %s", ErrConfirmed, acct.Frontier, acct.Height, a)
		}
		d, err := Rollback(b, a)
		var dep *DependentError
		if errors.As(err, &dep) {
			// Another block rests on the frontier (the receive of a send,
			// a lease's accept or settle): undo its chain down to below
			// it first.
			r := dep.Block
			re, found, err := b.Entry(r)
			if err != nil {
				return removed, err
			}
			if !found {
				return removed, fmt.Errorf("ledger: dependent block %s is missing", r)
			}
			more, err := RollbackTo(b, re.Block.Account, re.Height-1)
			removed = append(removed, more...)
			if err != nil {
				return removed, err
			}
			continue
		}
		if err != nil {
			return removed, err
		}
		if err := b.Apply(d); err != nil {
			return removed, err
		}
		removed = append(removed, d.Remove.Block)
	}
}
