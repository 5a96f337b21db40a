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
	// Takes says that a block of the type takes the pending entry of the
	// send its Source names: the stores index the send's receiver, and a
	// block is confirmed only after that send.
	Takes bool
}

// typeRules holds the rules of every block type.
var typeRules = map[BlockType]TypeRules{
	TypeSend:           {Check: checkSend, Apply: applySend, Rollback: rollbackSend},
	TypeReceive:        {Apply: applyReceive, Rollback: rollbackReceive, Takes: true},
	TypeClaim:          {Check: checkClaim, Apply: applyClaim},
	TypeMultisigOpen:   {Check: checkMultisigOpen, Apply: applyMultisigOpen},
	TypeMultisigUpdate: {Apply: applyMultisigUpdate},
	// The compute marketplace's types are checked for shape; the ledger
	// accepts them when their rules arrive.
	TypeLease: {Check: checkLeaseResources},
}

// Takes returns the send whose pending entry b takes, if its type takes
// one (TypeRules.Takes).
func (b *Block) Takes() (send Hash, ok bool) {
	if typeRules[b.Type].Takes && !b.Source.IsZero() {
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
