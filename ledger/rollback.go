package ledger

// Rollback returns the Delta that removes the latest block of account a,
// restoring the state the previous block left. It is how the losing branch
// of a fork is undone, one frontier at a time.
//
// A send whose pending entry was already received cannot be rolled back
// until the receiving block is: Rollback then fails with ErrHasDependents
// naming it. The genesis block cannot be rolled back.
func Rollback(v View, a Address) (*Delta, error) {
	acct, found, err := v.Account(a)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ruleErr(ErrUnknownAccount, "%s", a)
	}
	e, found, err := v.Entry(acct.Frontier)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ruleErr(ErrGapPrevious, "frontier %s of %s is missing", acct.Frontier, a)
	}
	b := e.Block
	if IsGenesis(b) {
		return nil, ruleErr(ErrMalformed, "the genesis block cannot be rolled back")
	}
	d := &Delta{Remove: e}
	if e.Height == 1 {
		d.AccountRemoved = true
		d.Account = Account{Address: a}
	} else {
		prev, found, err := v.Entry(b.Previous)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, ruleErr(ErrGapPrevious, "previous %s of %s is missing", b.Previous, b.Hash)
		}
		d.Account = prev.After.Clone()
	}
	if rule := typeRules[b.Type].Rollback; rule != nil {
		if err := rule(v, b, d); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// rollbackSend deletes the send's pending entry, which must not have been
// received yet.
func rollbackSend(v View, b *Block, d *Delta) error {
	p, found, err := v.Pending(b.Destination, b.Hash)
	if err != nil {
		return err
	}
	if !found {
		r, _, err := v.Receiver(b.Hash)
		if err != nil {
			return err
		}
		return dependent(r, "send %s was received by block %s; roll that back first", b.Hash, r)
	}
	d.PendingDelete = &p
	return nil
}

// rollbackReceive restores the pending entry the receive took.
func rollbackReceive(v View, b *Block, d *Delta) error {
	src, found, err := v.Entry(b.Source)
	if err != nil {
		return err
	}
	if !found {
		return ruleErr(ErrGapSource, "source %s of %s is missing", b.Source, b.Hash)
	}
	d.PendingPut = &Pending{Send: b.Source, Source: src.Block.Account, Destination: b.Account, Amount: b.Amount, Asset: b.Asset}
	return nil
}
