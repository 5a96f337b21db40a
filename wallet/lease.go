package wallet

import (
	"fmt"

	"github.com/latticenet/lattice/ledger"
)

// LeaseSpec is what a consumer's lease block states.
type LeaseSpec struct {
	Provider                          ledger.Address
	VCPUs, MemoryMB, DiskGB, Duration uint32
	AccessKey                         ledger.Address
	// Cost is the quote at StateChainIndex (market.Quote).
	Cost            ledger.Amount
	StateChainIndex uint64
}

// Lease returns an unsigned, sealed lease block escrowing s.Cost.
func Lease(h Head, s LeaseSpec, now int64) (*ledger.Block, error) {
	b := h.block(ledger.TypeLease, ledger.Native, now)
	bal, err := b.Balance.Sub(s.Cost)
	if err != nil {
		return nil, fmt.Errorf("wallet: %w: the balance is %s native, the lease costs %s native", ledger.ErrInsufficientBalance, b.Balance.Units(), s.Cost.Units())
	}
	b.Balance, b.Destination, b.Amount = bal, s.Provider, s.Cost
	b.VCPUs, b.MemoryMB, b.DiskGB, b.Duration = s.VCPUs, s.MemoryMB, s.DiskGB, s.Duration
	b.AccessPubKey, b.StateChainIndex = s.AccessKey, s.StateChainIndex
	b.Seal()
	return b, nil
}

// LeaseAccept returns the provider's unsigned, sealed lease_accept of
// lease r, locking its stake, with the start attestations.
func LeaseAccept(h Head, r *ledger.LeaseRecord, certificate ledger.Hash, atts []ledger.Attestation, now int64) (*ledger.Block, error) {
	b := h.block(ledger.TypeLeaseAccept, ledger.Native, now)
	bal, err := b.Balance.Sub(r.Stake)
	if err != nil {
		return nil, fmt.Errorf("wallet: balance is %s native, the stake is %s", b.Balance.Units(), r.Stake.Units())
	}
	b.Balance, b.Source, b.Amount = bal, r.Hash, r.Stake
	b.CertificateHash, b.Attestations = certificate, append([]ledger.Attestation(nil), atts...)
	b.Seal()
	return b, nil
}

// The lease account's blocks (docs/protocol.md, section 24): unsigned,
// built by anyone from the lease's record, on the lease account's chain
// (h is its head; the zero Head for its first block). Each is stamped
// with the time its lease's course fixes, as the rules require.

// LeaseStart returns the block that starts accepted lease r, with the
// committee's attestations that the accept was in before the deadline
// ("started"): it takes the stake in. It is stamped with the attested
// start.
func LeaseStart(h Head, r *ledger.LeaseRecord, atts []ledger.Attestation) *ledger.Block {
	return settle(h, r.Accept, ledger.Amount{}, atts, r.StartTime)
}

// LeaseRefund returns the block that refunds lease r to its consumer, with
// expiry attestations; it is stamped with their time.
func LeaseRefund(h Head, r *ledger.LeaseRecord, atts []ledger.Attestation) *ledger.Block {
	return settle(h, r.Hash, r.Cost, atts, ledger.AttestedTime(atts))
}

// LeaseEnd returns the block that ends active lease r and pays its
// provider the cost and the stake, with end attestations; it is stamped
// with their time.
func LeaseEnd(h Head, r *ledger.LeaseRecord, atts []ledger.Attestation) (*ledger.Block, error) {
	total, err := r.Cost.Add(r.Stake)
	if err != nil {
		return nil, fmt.Errorf("wallet: cost and stake overflow")
	}
	return settle(h, r.Hash, total, atts, ledger.AttestedTime(atts)), nil
}

// LeaseEarlyEnd returns the block that ends active lease r at its
// consumer's notice (a send to the lease account), with the committee's
// attestations of when they had it ("ending"): it pays the provider the
// cost of the time served and the stake, and is stamped with their time.
func LeaseEarlyEnd(h Head, r *ledger.LeaseRecord, notice ledger.Hash, atts []ledger.Attestation) (*ledger.Block, error) {
	t := ledger.AttestedTime(atts)
	total, err := r.Earned(t).Add(r.Stake)
	if err != nil {
		return nil, fmt.Errorf("wallet: cost and stake overflow")
	}
	return settle(h, notice, total, atts, t), nil
}

// LeaseRemainder returns the block that pays the consumer of lease r,
// which ended early, what the lease still holds for it: the unserved cost
// and the notice's amount. It is stamped with the early end's time.
func LeaseRemainder(h Head, r *ledger.LeaseRecord) *ledger.Block {
	return settle(h, r.Hash, r.Refund, nil, r.EndTime)
}

// LeaseReturnStake returns the block that gives the stake of refunded
// lease r back to its provider, stamped with the time of the block it
// follows (h, the lease account's head: the refund, or a bounce).
func LeaseReturnStake(h Head, r *ledger.LeaseRecord) *ledger.Block {
	return settle(h, r.Accept, r.Stake, nil, h.Timestamp)
}

// LeaseBounce returns the block that sends p, a send pending at the
// account of lease r that r's course will not take in, back to its sender,
// once r ended or was refunded. It is stamped with the later of the
// lease account's head's time and the send's (sent, its timestamp).
func LeaseBounce(h Head, p ledger.Pending, sent int64) *ledger.Block {
	b := settle(h, p.Send, p.Amount, nil, max(h.Timestamp, sent))
	b.Asset = p.Asset
	b.Seal()
	return b
}

func settle(h Head, source ledger.Hash, amount ledger.Amount, atts []ledger.Attestation, ts int64) *ledger.Block {
	b := &ledger.Block{Type: ledger.TypeLeaseSettle, Account: h.Account, Previous: h.Frontier, Asset: ledger.Native, Timestamp: ts}
	b.Balance = ledger.Amount{}
	b.Source, b.Amount = source, amount
	b.Attestations = append([]ledger.Attestation(nil), atts...)
	b.Seal()
	return b
}
