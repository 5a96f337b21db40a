package ledger

import "errors"

// ErrDuplicate is returned by Apply for a block that is already in the
// ledger. Resubmission is idempotent: callers answer it like an acceptance.
var ErrDuplicate = errors.New("ledger: block already in the ledger")

// Apply decides b against the ledger seen through v and returns the Delta
// that appends it. b must have passed Params.Check. Apply does not modify v:
// the caller persists the Delta, and must do so before applying a block that
// depends on it.
//
// Errors: ErrDuplicate when b is already in the ledger; a *ForkError when
// b's previous is already followed by another block; a *RuleError for every
// other invalid block (ErrGapPrevious and ErrGapSource mean a block it needs
// is not known yet, and it may become valid later); anything else is v's.
func Apply(v View, b *Block) (*Delta, error) {
	// No lookup of b.Hash: a block already in the ledger sits at its own
	// (account, previous) position, which checkPrevious inspects anyway, so
	// duplicates cost nothing on the hot path.
	acct, exists, err := v.Account(b.Account)
	if err != nil {
		return nil, err
	}
	// A block already in the ledger is a duplicate whoever controls the
	// account now. Otherwise authorisation comes before the fork verdict,
	// so that only the account's controller can make a fork of it (and a
	// conflict record).
	perr := checkPrevious(v, b, &acct, exists)
	if errors.Is(perr, ErrDuplicate) {
		return nil, ErrDuplicate
	}
	if err := authorise(b, &acct, exists); err != nil {
		return nil, err
	}
	var fe *ForkError
	if b.Type == TypeLeaseSettle && (perr == nil || errors.As(perr, &fe)) {
		// A lease account's blocks are unsigned: the rules are their
		// authorisation, so they are judged in full before any fork
		// verdict (checkSettle judges from what no competitor changes).
		// Only a valid contender is recorded and put to votes.
		if _, err := checkSettle(v, b); err != nil {
			return nil, err
		}
	}
	if perr != nil {
		return nil, perr
	}
	if !exists {
		acct = Account{Address: b.Account}
	}
	if b.Timestamp < acct.Timestamp {
		return nil, ruleErr(ErrTimestamp, "timestamp %d is before the previous block's %d", b.Timestamp, acct.Timestamp)
	}

	next := acct.Clone()
	next.Frontier = b.Hash
	next.Height = acct.Height + 1
	next.Timestamp = b.Timestamp
	if !b.Representative.IsZero() {
		next.Representative = b.Representative
	}
	d := &Delta{Add: &Entry{Block: b, Height: next.Height}}
	rule := typeRules[b.Type].Apply
	if rule == nil {
		return nil, ruleErr(ErrUnsupported, "%s blocks are not accepted", b.Type)
	}
	if err := rule(v, b, &acct, &next, d); err != nil {
		return nil, err
	}
	next.setBalance(b.Asset, b.Balance)
	d.Account = next
	d.Add.After = next
	return d, nil
}

// applySend takes the amount off the balance and makes it pending for the
// destination.
func applySend(_ View, b *Block, acct, _ *Account, d *Delta) error {
	before := acct.Balance(b.Asset)
	after, err := before.Sub(b.Amount)
	if err != nil {
		return ruleErr(ErrInsufficientBalance, "balance is %s %s, send is %s", before, b.Asset, b.Amount)
	}
	if b.Balance != after {
		return ruleErr(ErrBadBalance, "balance after sending %s from %s must be %s, block says %s", b.Amount, before, after, b.Balance)
	}
	d.PendingPut = &Pending{Send: b.Hash, Source: b.Account, Destination: b.Destination, Amount: b.Amount, Asset: b.Asset}
	return nil
}

// applyReceive takes exactly the pending send b names onto the balance.
func applyReceive(v View, b *Block, acct, _ *Account, d *Delta) error {
	before := acct.Balance(b.Asset)
	p, err := pendingFor(v, b)
	if err != nil {
		return err
	}
	if b.Asset != p.Asset {
		return ruleErr(ErrMalformed, "source sent %s, block says %s", p.Asset, b.Asset)
	}
	if b.Amount != p.Amount {
		return ruleErr(ErrBadAmount, "source sent %s, block says %s", p.Amount, b.Amount)
	}
	after, err := before.Add(b.Amount)
	if err != nil {
		return ruleErr(ErrBadBalance, "balance would overflow")
	}
	if b.Balance != after {
		return ruleErr(ErrBadBalance, "balance after receiving %s onto %s must be %s, block says %s", b.Amount, before, after, b.Balance)
	}
	d.PendingDelete = &p
	return nil
}

// applyClaim adds the faucet's amount, at most once per ClaimInterval.
func applyClaim(_ View, b *Block, acct, next *Account, _ *Delta) error {
	before := acct.Balance(b.Asset)
	// Subtraction, not LastClaim+ClaimInterval, which overflows for
	// timestamps near the top of int64 and would open the faucet.
	if acct.Claimed && b.Timestamp-acct.LastClaim < ClaimInterval {
		return ruleErr(ErrClaimTooSoon, "last claim at %d; the next is allowed from timestamp %d", acct.LastClaim, acct.LastClaim+ClaimInterval)
	}
	after, err := before.Add(b.Amount)
	if err != nil {
		return ruleErr(ErrBadBalance, "balance would overflow")
	}
	if b.Balance != after {
		return ruleErr(ErrBadBalance, "balance after claiming %s onto %s must be %s, block says %s", b.Amount, before, after, b.Balance)
	}
	next.Claimed, next.LastClaim = true, b.Timestamp
	return nil
}

// applyMultisigOpen gives the new account its keyset.
func applyMultisigOpen(_ View, b *Block, _, next *Account, _ *Delta) error {
	// Check has verified the keyset, the derived address and the
	// signatures; checkPrevious that the account is new.
	k := b.Keyset.Clone()
	next.Keyset = &k
	return nil
}

// applyMultisigUpdate replaces a multisig account's keyset, leaving its
// balance as it was.
func applyMultisigUpdate(_ View, b *Block, acct, next *Account, _ *Delta) error {
	before := acct.Balance(b.Asset)
	if acct.Keyset == nil {
		return ruleErr(ErrNotMultisig, "only multisig accounts can rotate their keyset")
	}
	if b.Balance != before {
		return ruleErr(ErrBadBalance, "multisig_update leaves the %s balance at %s, block says %s", b.Asset, before, b.Balance)
	}
	k := b.Keyset.Clone()
	next.Keyset = &k
	return nil
}

// checkPrevious tells a block that extends the chain from a gap (unknown
// previous), a fork (previous already followed) and a block that names
// another account's block.
func checkPrevious(v View, b *Block, acct *Account, exists bool) error {
	if exists && b.Hash == acct.Frontier {
		return ErrDuplicate
	}
	if exists && b.Previous == acct.Frontier {
		return nil
	}
	if !exists && b.Previous.IsZero() {
		return nil
	}
	if b.Previous.IsZero() {
		// The account exists, so its first block is taken.
		first, _, err := v.ChainAt(b.Account, 1)
		if err != nil {
			return err
		}
		return forkOrDuplicate(b, first)
	}
	e, found, err := v.Entry(b.Previous)
	if err != nil {
		return err
	}
	if !found {
		return ruleErr(ErrGapPrevious, "previous %s is not in the ledger", b.Previous)
	}
	if e.Block.Account != b.Account {
		return ruleErr(ErrWrongPrevious, "previous %s belongs to account %s", b.Previous, e.Block.Account)
	}
	next, _, err := v.ChainAt(b.Account, e.Height+1)
	if err != nil {
		return err
	}
	return forkOrDuplicate(b, next)
}

// forkOrDuplicate tells a resubmission of the block that follows b's
// previous from a competing block.
func forkOrDuplicate(b *Block, existing Hash) error {
	if existing == b.Hash {
		return ErrDuplicate
	}
	return &ForkError{Account: b.Account, Previous: b.Previous, Existing: existing, Block: b}
}

// authorise checks that the block is signed by whoever controls the account:
// its own key, or enough of its keyset.
func authorise(b *Block, acct *Account, exists bool) error {
	if b.Type == TypeMultisigOpen {
		// Check verified the keyset's signatures; checkPrevious that the
		// account is new (opening it twice is a fork of its first block).
		return nil
	}
	if exists && acct.Keyset != nil {
		if len(b.Signatures) == 0 {
			return ruleErr(ErrUnauthorized, "account %s is multisig: sign with signatures meeting its keyset", b.Account)
		}
		return meetsThreshold(b, *acct.Keyset)
	}
	if len(b.Signatures) > 0 {
		return ruleErr(ErrUnauthorized, "account %s is not multisig: sign with signature", b.Account)
	}
	return nil // Check verified the signature under the account key.
}

// pendingFor finds the pending entry a receive block takes, or explains why
// there is none.
func pendingFor(v View, b *Block) (Pending, error) {
	p, found, err := v.Pending(b.Account, b.Source)
	if err != nil || found {
		return p, err
	}
	e, found, err := v.Entry(b.Source)
	if err != nil {
		return Pending{}, err
	}
	if !found {
		return Pending{}, ruleErr(ErrGapSource, "source %s is not in the ledger", b.Source)
	}
	switch {
	case e.Block.Type == TypeLeaseSettle:
		if p, err := LeaseOutput(v, e.Block); err != nil || p == nil || p.Destination != b.Account {
			return Pending{}, ruleErr(ErrBadSource, "block %s pays nothing to %s", b.Source, b.Account)
		}
	case e.Block.Type != TypeSend || e.Block.Destination != b.Account:
		return Pending{}, ruleErr(ErrBadSource, "block %s is not a send to %s", b.Source, b.Account)
	}
	if r, found, err := v.Receiver(b.Source); err == nil && found {
		return Pending{}, ruleErr(ErrAlreadyReceived, "send %s was received by block %s", b.Source, r)
	}
	return Pending{}, ruleErr(ErrAlreadyReceived, "send %s is no longer pending", b.Source)
}
