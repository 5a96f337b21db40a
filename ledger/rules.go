package ledger

// The block types' own rules, registered in one place. Every block passes
// the rules all blocks share (shape, hash, work, signatures in Check;
// duplicate, authorisation, fork or gap, timestamp in Apply); what a type
// adds is a TypeRules here. Adding a block type is adding its entry (and
// its fields to the encoding), the API's list of accepted types and the
// docs: no layer above switches on the type.

// TypeRules is what one block type adds to the shared rules.
type TypeRules struct {
	// Check checks what the type alone requires of a block's contents,
	// without the ledger (Params.Check runs it after the shared shape
	// checks). Nil when the type adds nothing.
	Check func(b *Block) error
	// Apply decides b against the ledger seen through v: it checks b
	// against acct, the account before b, and fills in what the type
	// changes in next, the account after b, and in d. Apply then sets
	// next's balance of b.Asset to b.Balance, so a rule only checks that
	// balance. Nil for a type the ledger does not accept yet: Apply refuses
	// its blocks as unsupported.
	Apply func(v View, b *Block, acct, next *Account, d *Delta) error
	// Rollback fills in d with what undoing b, the latest block of its
	// account, restores besides the account's state (which Rollback
	// restores from the previous block). Nil when there is nothing more.
	Rollback func(v View, b *Block, d *Delta) error
	// Takes says that a block of the type takes what its Source names
	// (the pending entry of a send, or a lease's course): the stores index
	// the block as its Source's receiver, so one block at most takes each,
	// and a block is confirmed only after its Source.
	Takes bool
	// Needs says that a block of the type is confirmed only after the
	// block its Source names, though it takes nothing from it.
	Needs bool
}

// typeRules holds the rules of every block type.
var typeRules = map[BlockType]TypeRules{
	TypeSend:           {Check: checkSend, Apply: applySend, Rollback: rollbackSend},
	TypeReceive:        {Apply: applyReceive, Rollback: rollbackReceive, Takes: true},
	TypeClaim:          {Check: checkClaim, Apply: applyClaim},
	TypeMultisigOpen:   {Check: checkMultisigOpen, Apply: applyMultisigOpen},
	TypeMultisigUpdate: {Apply: applyMultisigUpdate},
	TypeLease:          {Check: checkLease, Apply: applyLease, Rollback: rollbackLease},
	TypeLeaseAccept:    {Check: checkLeaseAccept, Apply: applyLeaseAccept, Rollback: rollbackLeaseAccept, Needs: true},
	TypeLeaseSettle:    {Check: checkLeaseSettle, Apply: applyLeaseSettle, Rollback: rollbackLeaseSettle, Takes: true},
}

// Takes returns the send whose pending entry b takes, if its type takes
// one (TypeRules.Takes).
func (b *Block) Takes() (send Hash, ok bool) {
	if typeRules[b.Type].Takes && !b.Source.IsZero() {
		return b.Source, true
	}
	return Hash{}, false
}

// DependsOn returns the block b rests on besides its chain: the one its
// Source names, for types that take it or need it. Confirmation never
// leaves b confirmed while that block is not.
func (b *Block) DependsOn() (Hash, bool) {
	r := typeRules[b.Type]
	if (r.Takes || r.Needs) && !b.Source.IsZero() {
		return b.Source, true
	}
	return Hash{}, false
}

// AcceptedTypes lists the block types the ledger applies, by wire code.
func AcceptedTypes() []BlockType {
	var out []BlockType
	for t := TypeSend; t.Valid(); t++ {
		if typeRules[t].Apply != nil {
			out = append(out, t)
		}
	}
	return out
}
