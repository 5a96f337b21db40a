package ledger

import "fmt"

// Account is the state of one account chain after its latest block.
type Account struct {
	Address   Address
	Frontier  Hash      // hash of the latest block
	Height    uint64    // number of blocks in the chain (block_count)
	Balances  [2]Amount // indexed by Asset-1
	Timestamp int64     // timestamp of the latest block
	Claimed   bool      // whether the account has ever claimed from the faucet
	LastClaim int64     // timestamp of the latest claim, when Claimed
	Keyset    *Keyset   // the controlling keyset, for multisig accounts only
	// Representative is the latest representative the chain named, or
	// zero when none was (the account then represents itself).
	Representative Address
}

// Rep returns the representative that a's native balance gives its voting
// weight to: the latest one its chain named, or a itself when none was.
func (a *Account) Rep() Address {
	if a.Representative.IsZero() {
		return a.Address
	}
	return a.Representative
}

// Balance returns the account's balance of asset.
func (a *Account) Balance(asset Asset) Amount {
	if !asset.Valid() {
		return Amount{}
	}
	return a.Balances[asset-1]
}

func (a *Account) setBalance(asset Asset, v Amount) { a.Balances[asset-1] = v }

// Clone returns a deep copy of a.
func (a Account) Clone() Account {
	if a.Keyset != nil {
		k := a.Keyset.Clone()
		a.Keyset = &k
	}
	return a
}

// Pending is an unreceived send: an amount waiting for its destination's
// receive block.
type Pending struct {
	Send        Hash // hash of the send block
	Source      Address
	Destination Address
	Amount      Amount
	Asset       Asset
}

// Entry is a block in the ledger, with its position in its chain and the
// account state it produced (which lets the next block be rolled back).
type Entry struct {
	Block  *Block
	Height uint64
	After  Account
}

// View is read access to the ledger that Apply and Rollback decide against.
// Implementations return found=false, not an error, for what is absent; an
// error means the ledger could not be read.
type View interface {
	// Account returns the state of an account.
	Account(a Address) (acct Account, found bool, err error)
	// Entry returns the ledger entry of a block.
	Entry(h Hash) (e *Entry, found bool, err error)
	// ChainAt returns the hash of the block at height (1-based) in a's chain.
	ChainAt(a Address, height uint64) (h Hash, found bool, err error)
	// Pending returns the unreceived send sendHash addressed to dest.
	Pending(dest Address, sendHash Hash) (p Pending, found bool, err error)
	// Receiver returns the hash of the receive block that took sendHash.
	Receiver(sendHash Hash) (h Hash, found bool, err error)
	// State returns a value of a block type's own state (StateChange).
	State(table, key string) (value []byte, found bool, err error)
}

// MaxStateTable bounds the name of a state table.
const MaxStateTable = 32

// Check reports a change that no store can hold: a table name empty or
// longer than MaxStateTable.
func (c StateChange) Check() error {
	if c.Table == "" || len(c.Table) > MaxStateTable {
		return fmt.Errorf("ledger: state table %q: want 1 to %d bytes", c.Table, MaxStateTable)
	}
	return nil
}

// StateChange is one change of the state a block type keeps besides
// accounts and pending entries (escrows, stakes, leases): a value by table
// and key, which the type's rules read through View.State and change
// through Delta.State, so a new type needs no new field in Delta, View or
// the stores. A table is named for the type that owns it ("lease"); the
// key and value are the type's to encode. Apply records the values its
// block sets; the type's Rollback must restore the values before it from
// the block and the state after it, since the ledger keeps no undo log: a
// type whose block overwrites a value it cannot derive again (a lease's
// status moves between known values; a free-form value would not) keeps
// the previous value inside the one it writes.
type StateChange struct {
	Table string
	Key   string
	Value []byte // nil deletes the key
}

// Delta is the whole effect of applying or rolling back one block. Writing
// it atomically keeps the ledger consistent; the store derives its indexes
// (chain by height, receivers, recent blocks) from Add and Remove.
type Delta struct {
	Add            *Entry   // block appended, or nil
	Remove         *Entry   // block rolled back, or nil
	Account        Account  // the account's state after the change
	AccountRemoved bool     // the account has no blocks left
	PendingPut     *Pending // pending entry created (send, or receive rolled back)
	PendingDelete  *Pending // pending entry consumed (receive, or send rolled back)
	// State holds the block type's changes of its own state, in order.
	State []StateChange
}
