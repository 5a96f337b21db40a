package ledger

import (
	"errors"
	"fmt"
)

// Snapshot is a consistent, iterable view of a whole ledger, for Audit.
type Snapshot interface {
	View
	// Accounts calls fn for every account, in address order.
	Accounts(fn func(Account) error) error
	// Pendings calls fn for every pending entry.
	Pendings(fn func(Pending) error) error
	// States calls fn for the values of a state table whose keys start
	// with prefix and sort after after ("" for all), in key order, until
	// fn returns ErrStop (which States then answers as nil) or another
	// error.
	States(table, prefix, after string, fn func(key string, value []byte) error) error
}

// ErrStop ends a Snapshot iteration early without error.
var ErrStop = errors.New("ledger: stop iterating")

// AuditReport sums up a ledger that passed Audit.
type AuditReport struct {
	Accounts int
	Blocks   uint64
	Pending  int
	Leases   int
	Supply   Amount    // native minted by genesis
	Minted   Amount    // stable minted by claims
	Totals   [2]Amount // balances plus pending, per asset
}

// ErrAudit reports a broken ledger invariant.
var ErrAudit = errors.New("ledger: audit failed")

// Audit replays every chain of s and checks the ledger's invariants:
// every balance equals the replay of its chain; native in balances,
// pending entries and leases (escrow and stake, LeaseRecord.Held) equals
// the genesis supply; stable in balances plus pending equals what claims
// minted; every pending entry a block created (a send's, an accept's
// stake, a lease account's payout) is either pending or taken exactly
// once, by its destination, for its amount; every lease's record agrees
// with the blocks it names, and no lease is settled twice. It reads the
// whole ledger.
func Audit(s Snapshot) (AuditReport, error) {
	var r AuditReport
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrAudit, fmt.Sprintf(format, args...))
	}
	taken := make(map[Hash]bool) // outputs taken, by the block that created them
	outputs := 0
	// output returns the pending entry block b created, if any.
	output := func(b *Block) (*Pending, error) {
		switch b.Type {
		case TypeSend:
			return &Pending{Send: b.Hash, Source: b.Account, Destination: b.Destination, Amount: b.Amount, Asset: b.Asset}, nil
		case TypeLeaseAccept, TypeLeaseSettle:
			return LeaseOutput(s, b)
		}
		return nil, nil
	}
	take := func(by *Block, src Hash, dest Address, amount Amount, asset Asset) error {
		if taken[src] {
			return fail("the output of %s is taken twice", src)
		}
		taken[src] = true
		e, found, err := s.Entry(src)
		if err != nil {
			return err
		}
		if !found {
			return fail("%s takes %s, which is not in the ledger", by.Hash, src)
		}
		p, err := output(e.Block)
		if err != nil {
			return err
		}
		if p == nil || p.Destination != dest || p.Amount != amount || p.Asset != asset {
			return fail("%s does not match the output of %s", by.Hash, src)
		}
		return nil
	}
	err := s.Accounts(func(acct Account) error {
		r.Accounts++
		var bal [2]Amount
		var prev Hash
		for h := uint64(1); h <= acct.Height; h++ {
			hash, found, err := s.ChainAt(acct.Address, h)
			if err != nil {
				return err
			}
			if !found {
				return fail("%s: no block at height %d of %d", acct.Address, h, acct.Height)
			}
			e, found, err := s.Entry(hash)
			if err != nil {
				return err
			}
			if !found {
				return fail("%s: block %s at height %d is missing", acct.Address, hash, h)
			}
			b := e.Block
			if b.Account != acct.Address || b.Previous != prev || e.Height != h {
				return fail("%s: block %s out of place at height %d", acct.Address, hash, h)
			}
			if p, err := output(b); err != nil {
				return err
			} else if p != nil {
				outputs++
			}
			cur := bal[b.Asset-1]
			var next Amount
			var err2 error
			switch {
			case IsGenesis(b):
				if !r.Supply.IsZero() {
					return fail("second genesis block %s", hash)
				}
				r.Supply = b.Amount
				next, err2 = cur.Add(b.Amount)
			case b.Type == TypeSend, b.Type == TypeLease, b.Type == TypeLeaseAccept:
				next, err2 = cur.Sub(b.Amount)
			case b.Type == TypeReceive:
				if err := take(b, b.Source, b.Account, b.Amount, b.Asset); err != nil {
					return err
				}
				next, err2 = cur.Add(b.Amount)
			case b.Type == TypeLeaseSettle:
				if src, found, err := s.Entry(b.Source); err != nil {
					return err
				} else if found && (src.Block.Type == TypeLeaseAccept || src.Block.Type == TypeSend) {
					// A start or a stake return takes the stake in, an
					// early end its consumer's notice.
					if err := take(b, b.Source, b.Account, src.Block.Amount, src.Block.Asset); err != nil {
						return err
					}
				}
				next = cur
			case b.Type == TypeClaim:
				if r.Minted, err2 = r.Minted.Add(b.Amount); err2 == nil {
					next, err2 = cur.Add(b.Amount)
				}
			default:
				next = cur
			}
			if err2 != nil {
				return fail("%s: balance out of range at block %s", acct.Address, hash)
			}
			if next != b.Balance {
				return fail("%s: block %s says balance %s, replay gives %s", acct.Address, hash, b.Balance, next)
			}
			bal[b.Asset-1] = next
			prev = hash
			r.Blocks++
		}
		if acct.Frontier != prev || acct.Balances != bal {
			return fail("%s: account state disagrees with its chain", acct.Address)
		}
		for i := range bal {
			var err error
			if r.Totals[i], err = r.Totals[i].Add(bal[i]); err != nil {
				return fail("total of %s overflows", Assets[i])
			}
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	err = s.Pendings(func(p Pending) error {
		r.Pending++
		if taken[p.Send] {
			return fail("the output of %s is both pending and taken", p.Send)
		}
		e, found, err := s.Entry(p.Send)
		if err != nil {
			return err
		}
		var want *Pending
		if found {
			if want, err = output(e.Block); err != nil {
				return err
			}
		}
		if want == nil || *want != p {
			return fail("pending %s does not match the block that created it", p.Send)
		}
		if r.Totals[p.Asset-1], err = r.Totals[p.Asset-1].Add(p.Amount); err != nil {
			return fail("total of %s overflows", p.Asset)
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	if outputs != len(taken)+r.Pending {
		return r, fail("%d outputs, but %d taken and %d pending", outputs, len(taken), r.Pending)
	}
	if err := auditLeases(s, &r, fail); err != nil {
		return r, err
	}
	if r.Totals[Native-1] != r.Supply {
		return r, fail("native in balances, pending and leases is %s, genesis minted %s", r.Totals[Native-1], r.Supply)
	}
	if r.Totals[Stable-1] != r.Minted {
		return r, fail("stable in balances and pending is %s, claims minted %s", r.Totals[Stable-1], r.Minted)
	}
	return r, nil
}

// auditLeases checks every lease record against the blocks it names and
// adds what the leases hold to the native total.
func auditLeases(s Snapshot, r *AuditReport, fail func(string, ...any) error) error {
	return s.States(LeaseTable, "", "", func(key string, raw []byte) error {
		var l LeaseRecord
		if err := l.UnmarshalBinary(raw); err != nil {
			return fail("lease record %x: %v", key, err)
		}
		r.Leases++
		e, found, err := s.Entry(l.Hash)
		if err != nil {
			return err
		}
		if !found || string(l.Hash[:]) != key || e.Block.Type != TypeLease || e.Block.Account != l.Consumer ||
			e.Block.Destination != l.Provider || e.Block.Amount != l.Cost {
			return fail("lease %s: record does not match its lease block", l.Hash)
		}
		if l.Accepted() {
			a, found, err := s.Entry(l.Accept)
			if err != nil {
				return err
			}
			if !found || a.Block.Type != TypeLeaseAccept || a.Block.Source != l.Hash || a.Block.Account != l.Provider {
				return fail("lease %s: accept %s is not its provider's accept", l.Hash, l.Accept)
			}
		}
		acct, found, err := s.Account(LeaseAccount(l.Hash))
		if err != nil {
			return err
		}
		var height uint64
		if found {
			height = acct.Height
		}
		want := uint64(0)
		for _, h := range []Hash{l.First, l.Second, l.Third} {
			if !h.IsZero() {
				want++
			}
		}
		named, bounces, err := leaseChain(s, &l, height)
		if err != nil {
			return err
		}
		if named != want || height != named+bounces || (l.Stage == StageOpen) != l.First.IsZero() {
			return fail("lease %s: its account has %d blocks (%d bounces), its record says %s with %d", l.Hash, height, bounces, l.Status(), want)
		}
		if l.EndedEarly() {
			n, found, err := s.Entry(l.Notice)
			if err != nil {
				return err
			}
			if l.Stage != StageEnded || !found || n.Block.Type != TypeSend || n.Block.Account != l.Consumer || n.Block.Destination != LeaseAccount(l.Hash) {
				return fail("lease %s: notice %s is not a send of its consumer's to its account", l.Hash, l.Notice)
			}
		} else if !l.Third.IsZero() || !l.Refund.IsZero() {
			return fail("lease %s: a third block or a refund without a notice", l.Hash)
		}
		if r.Totals[Native-1], err = r.Totals[Native-1].Add(l.Held()); err != nil {
			return fail("total of native overflows")
		}
		return nil
	})
}

// leaseChain counts, among the first height blocks of l's account, those
// its record names and the bounces: later blocks that name a send other
// than the record's notice.
func leaseChain(s Snapshot, l *LeaseRecord, height uint64) (named, bounces uint64, err error) {
	for ht := uint64(1); ht <= height; ht++ {
		h, found, err := s.ChainAt(LeaseAccount(l.Hash), ht)
		if err != nil || !found {
			return named, bounces, err
		}
		if h == l.First || h == l.Second || h == l.Third {
			named++
			continue
		}
		e, found, err := s.Entry(h)
		if err != nil || !found {
			return named, bounces, err
		}
		src, found, err := s.Entry(e.Block.Source)
		if err != nil {
			return named, bounces, err
		}
		if found && src.Block.Type == TypeSend && e.Block.Source != l.Notice && ht > 1 {
			bounces++
		}
	}
	return named, bounces, nil
}
