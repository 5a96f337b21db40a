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
}

// AuditReport sums up a ledger that passed Audit.
type AuditReport struct {
	Accounts int
	Blocks   uint64
	Pending  int
	Supply   Amount    // native minted by genesis
	Minted   Amount    // stable minted by claims
	Totals   [2]Amount // balances plus pending, per asset
}

// ErrAudit reports a broken ledger invariant.
var ErrAudit = errors.New("ledger: audit failed")

// Audit replays every chain of s and checks the ledger's invariants:
// every balance equals the replay of its chain; native in balances plus
// pending equals the genesis supply; stable in balances plus pending equals
// what claims minted; every send is either pending or received exactly once,
// by its destination, for its amount. It reads the whole ledger.
func Audit(s Snapshot) (AuditReport, error) {
	var r AuditReport
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrAudit, fmt.Sprintf(format, args...))
	}
	received := make(map[Hash]bool)
	sends := 0
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
			case b.Type == TypeSend:
				sends++
				next, err2 = cur.Sub(b.Amount)
			case b.Type == TypeReceive:
				if received[b.Source] {
					return fail("send %s received twice", b.Source)
				}
				received[b.Source] = true
				src, found, err := s.Entry(b.Source)
				if err != nil {
					return err
				}
				if !found || src.Block.Type != TypeSend || src.Block.Destination != b.Account ||
					src.Block.Amount != b.Amount || src.Block.Asset != b.Asset {
					return fail("receive %s does not match its source %s", hash, b.Source)
				}
				next, err2 = cur.Add(b.Amount)
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
		if received[p.Send] {
			return fail("send %s is both pending and received", p.Send)
		}
		e, found, err := s.Entry(p.Send)
		if err != nil {
			return err
		}
		if !found || e.Block.Type != TypeSend || e.Block.Destination != p.Destination ||
			e.Block.Amount != p.Amount || e.Block.Asset != p.Asset || e.Block.Account != p.Source {
			return fail("pending %s does not match its send block", p.Send)
		}
		if r.Totals[p.Asset-1], err = r.Totals[p.Asset-1].Add(p.Amount); err != nil {
			return fail("total of %s overflows", p.Asset)
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	if sends != len(received)+r.Pending {
		return r, fail("%d sends, but %d received and %d pending", sends, len(received), r.Pending)
	}
	if r.Totals[Native-1] != r.Supply {
		return r, fail("native in balances and pending is %s, genesis minted %s", r.Totals[Native-1], r.Supply)
	}
	if r.Totals[Stable-1] != r.Minted {
		return r, fail("stable in balances and pending is %s, claims minted %s", r.Totals[Stable-1], r.Minted)
	}
	return r, nil
}
