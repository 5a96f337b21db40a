package ledgerstore

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/ledger"
)

// maxCachedAccounts bounds the write path's account cache; past it the
// cache starts over. 256k accounts take about 50 MB.
const maxCachedAccounts = 1 << 18

// recentEntries is how many entries (and chain positions) of the latest
// batches the write path remembers per generation: 32k entries of about
// 400 bytes, 13 MB, up to twice that with the older generation; more than
// a burst of blocks applied before their elections end.
const recentEntries = 1 << 15

// Batch is a set of changes committed atomically. It is a ledger.View of the
// database plus its own changes, which it keeps in maps beside a plain Pebble
// batch: cheaper than an indexed batch, whose every write also goes into a
// skiplist of its own, and the reads a writer makes (accounts, pending
// entries, chain positions) are found there first. Account states also come
// from a cache kept across batches, so the writer seldom reads an account
// from Pebble. One goroutine builds batches, one at a time; an earlier
// batch may still be waiting in SyncWait on another goroutine.
type Batch struct {
	s *Store
	b *pebble.Batch
	n int

	accounts  map[ledger.Address]*ledger.Account // nil: removed
	entries   map[ledger.Hash]*entryAt           // nil: removed
	chain     map[chainPos]ledger.Hash           // zero: removed
	pending   map[pendingKey]*ledger.Pending     // nil: removed
	receivers map[ledger.Hash]ledger.Hash        // zero: removed
	conflicts map[pendingKey]*Conflict           // by (account, previous); nil: removed
	weights   map[ledger.Address]ledger.Amount
	cweights  weightDeltas                     // changes of confirmed weight, written at commit
	cwritten  map[ledger.Address]ledger.Amount // the confirmed weights written, for the table in memory
	confirmed map[ledger.Address]confirmedAt
	signed    map[pendingKey]SignedVotes // votes recorded in the batch, by (account, previous)
	state     map[stateID][]byte         // block types' state written in the batch; nil when deleted
	// conflictsAdded is how many conflicts the batch records, less those
	// it ends.
	conflictsAdded int
}

type confirmedAt struct {
	height uint64
	hash   ledger.Hash
}

type entryAt struct {
	e   *ledger.Entry
	seq uint64
}

type chainPos struct {
	a      ledger.Address
	height uint64
}

type pendingKey struct {
	a ledger.Address
	h ledger.Hash
}

// NewBatch starts a batch. The caller must Close it.
func (s *Store) NewBatch() *Batch {
	return &Batch{
		s: s, b: s.db.NewBatch(),
		accounts:  make(map[ledger.Address]*ledger.Account),
		entries:   make(map[ledger.Hash]*entryAt),
		chain:     make(map[chainPos]ledger.Hash),
		pending:   make(map[pendingKey]*ledger.Pending),
		receivers: make(map[ledger.Hash]ledger.Hash),
		conflicts: make(map[pendingKey]*Conflict),
		weights:   make(map[ledger.Address]ledger.Amount),
		cweights:  weightDeltas{},
		confirmed: make(map[ledger.Address]confirmedAt),
		signed:    make(map[pendingKey]SignedVotes),
		state:     make(map[stateID][]byte),
	}
}

// Len returns the number of deltas and conflicts written to the batch.
func (b *Batch) Len() int { return b.n }

// Account implements ledger.View.
func (b *Batch) Account(a ledger.Address) (ledger.Account, bool, error) {
	if acct, ok := b.accounts[a]; ok {
		if acct == nil {
			return ledger.Account{}, false, nil
		}
		return acct.Clone(), true, nil
	}
	if acct, ok := b.s.accounts[a]; ok {
		return acct.Clone(), true, nil
	}
	acct, found, err := b.s.Account(a)
	if err == nil && found {
		b.s.cacheAccount(acct)
	}
	return acct, found, err
}

// Entry implements ledger.View.
func (b *Batch) Entry(h ledger.Hash) (*ledger.Entry, bool, error) {
	e, _, found, err := b.entrySeq(h)
	return e, found, err
}

func (b *Batch) entrySeq(h ledger.Hash) (*ledger.Entry, uint64, bool, error) {
	if at, ok := b.entries[h]; ok {
		if at == nil {
			return nil, 0, false, nil
		}
		return at.e, at.seq, true, nil
	}
	if at, ok := b.s.entries.get(h); ok {
		return at.e, at.seq, true, nil
	}
	return b.s.entrySeq(h)
}

// ChainAt implements ledger.View.
func (b *Batch) ChainAt(a ledger.Address, height uint64) (ledger.Hash, bool, error) {
	if h, ok := b.chain[chainPos{a, height}]; ok {
		return h, !h.IsZero(), nil
	}
	if h, ok := b.s.chain.get(chainPos{a, height}); ok {
		return h, true, nil
	}
	return b.s.ChainAt(a, height)
}

// Pending implements ledger.View.
func (b *Batch) Pending(dest ledger.Address, send ledger.Hash) (ledger.Pending, bool, error) {
	if p, ok := b.pending[pendingKey{dest, send}]; ok {
		if p == nil {
			return ledger.Pending{}, false, nil
		}
		return *p, true, nil
	}
	return b.s.Pending(dest, send)
}

// Receiver implements ledger.View.
func (b *Batch) Receiver(send ledger.Hash) (ledger.Hash, bool, error) {
	if h, ok := b.receivers[send]; ok {
		return h, !h.IsZero(), nil
	}
	return b.s.Receiver(send)
}

// Apply writes d, which must have been computed against this batch's view.
// Everything that can fail (the checks and the reads) comes before the
// first write, so a failed Apply leaves the batch as it was.
func (b *Batch) Apply(d *ledger.Delta) error {
	for _, c := range d.State {
		if err := c.Check(); err != nil {
			return err
		}
	}
	w := b.b
	addr := d.Account.Address
	var removedSeq uint64
	if e := d.Remove; e != nil {
		_, seq, found, err := b.entrySeq(e.Block.Hash)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("ledgerstore: rollback of missing block %s", e.Block.Hash)
		}
		removedSeq = seq
	}
	weights, err := b.weightMoves(addr, d)
	if err != nil {
		return err
	}
	if e := d.Add; e != nil {
		h := e.Block.Hash
		seq := b.s.seq.Add(1) - 1
		if err := w.Set(key(pBlock, h[:]), encodeEntry(e, seq), nil); err != nil {
			return err
		}
		w.Set(key(pChain, addr[:], u64(e.Height)), h[:], nil)
		w.Set(key(pRecent, u64(seq)), h[:], nil)
		b.entries[h] = &entryAt{e, seq}
		b.chain[chainPos{addr, e.Height}] = h
		if send, ok := e.Block.Takes(); ok {
			w.Set(key(pReceiver, send[:]), h[:], nil)
			b.receivers[send] = h
		}
	}
	if e := d.Remove; e != nil {
		h := e.Block.Hash
		w.Delete(key(pBlock, h[:]), nil)
		w.Delete(key(pChain, addr[:], u64(e.Height)), nil)
		w.Delete(key(pRecent, u64(removedSeq)), nil)
		b.entries[h] = nil
		b.chain[chainPos{addr, e.Height}] = ledger.Hash{}
		if send, ok := e.Block.Takes(); ok {
			w.Delete(key(pReceiver, send[:]), nil)
			b.receivers[send] = ledger.Hash{}
		}
	}
	for _, m := range weights {
		b.setWeight(m.rep, m.weight)
	}
	if d.AccountRemoved {
		w.Delete(key(pAccount, addr[:]), nil)
		b.accounts[addr] = nil
	} else {
		w.Set(key(pAccount, addr[:]), appendAccount(nil, &d.Account), nil)
		acct := d.Account.Clone()
		b.accounts[addr] = &acct
	}
	if p := d.PendingDelete; p != nil {
		w.Delete(key(pPending, p.Destination[:], p.Send[:]), nil)
		b.pending[pendingKey{p.Destination, p.Send}] = nil
	}
	if p := d.PendingPut; p != nil {
		w.Set(key(pPending, p.Destination[:], p.Send[:]), encodePending(p), nil)
		q := *p
		b.pending[pendingKey{p.Destination, p.Send}] = &q
	}
	for _, c := range d.State {
		k := stateKey(c.Table, c.Key)
		if c.Value == nil {
			w.Delete(k, nil)
		} else {
			w.Set(k, c.Value, nil)
		}
		b.state[stateID{c.Table, c.Key}] = bytes.Clone(c.Value)
	}
	b.n++
	return nil
}

// State implements ledger.View, reading the batch's own writes.
func (b *Batch) State(table, key string) ([]byte, bool, error) {
	if v, ok := b.state[stateID{table, key}]; ok {
		return bytes.Clone(v), v != nil, nil
	}
	return b.s.State(table, key)
}

// weightMove is a representative's delegated weight after a delta.
type weightMove struct {
	rep    ledger.Address
	weight ledger.Amount
}

// weightMoves returns what keeps the weight table equal to the native
// balances that accounts delegate to another representative, as d changes
// the account's state; it only reads. An account that represents itself
// adds nothing to the table (see reader.delegated): its weight is read
// from its balance.
func (b *Batch) weightMoves(addr ledger.Address, d *ledger.Delta) ([]weightMove, error) {
	before, existed, err := b.Account(addr)
	if err != nil {
		return nil, err
	}
	var oldRep, newRep ledger.Address // zero: nothing delegated
	var oldW, newW ledger.Amount
	if existed && before.Rep() != addr {
		oldRep, oldW = before.Rep(), before.Balance(ledger.Native)
	}
	if !d.AccountRemoved && d.Account.Rep() != addr {
		newRep, newW = d.Account.Rep(), d.Account.Balance(ledger.Native)
	}
	if oldRep == newRep && oldW == newW {
		return nil, nil
	}
	var moves []weightMove
	if !oldRep.IsZero() && !oldW.IsZero() {
		w, err := b.delegated(oldRep)
		if err != nil {
			return nil, err
		}
		if w, err = w.Sub(oldW); err != nil {
			return nil, fmt.Errorf("ledgerstore: weight of %s below the balance it holds for %s", oldRep, addr)
		}
		moves = append(moves, weightMove{oldRep, w})
	}
	if !newRep.IsZero() && !newW.IsZero() {
		w, err := b.delegated(newRep)
		if err != nil {
			return nil, err
		}
		if len(moves) == 1 && moves[0].rep == newRep {
			w = moves[0].weight // the same representative, its balance changed
		}
		if w, err = w.Add(newW); err != nil {
			return nil, fmt.Errorf("ledgerstore: weight of %s overflows", newRep)
		}
		moves = append(moves, weightMove{newRep, w})
	}
	return moves, nil
}

func (b *Batch) delegated(rep ledger.Address) (ledger.Amount, error) {
	if w, ok := b.weights[rep]; ok {
		return w, nil
	}
	if w, ok := b.s.weights[rep]; ok {
		return w, nil
	}
	return b.s.delegated(rep)
}

func (b *Batch) setWeight(rep ledger.Address, w ledger.Amount) {
	b.weights[rep] = w
	if w.IsZero() {
		b.b.Delete(key(pWeight, rep[:]), nil)
		return
	}
	b.b.Set(key(pWeight, rep[:]), appendAmount(nil, w), nil)
}

// Confirmed is the batch's view of Store.Confirmed.
func (b *Batch) Confirmed(a ledger.Address) (uint64, ledger.Hash, bool, error) {
	if c, ok := b.confirmed[a]; ok {
		return c.height, c.hash, !c.hash.IsZero(), nil
	}
	if c, ok := b.s.confirmed[a]; ok {
		return c.height, c.hash, !c.hash.IsZero(), nil
	}
	height, h, found, err := b.s.Confirmed(a)
	if err == nil {
		b.s.cacheConfirmed(a, confirmedAt{height, h})
	}
	return height, h, found, err
}

// IsConfirmed is the batch's view of Store.IsConfirmed.
func (b *Batch) IsConfirmed(e *ledger.Entry) (bool, error) {
	height, _, _, err := b.Confirmed(e.Block.Account)
	return e.Height <= height, err
}

// SetConfirmed records that a's chain is confirmed up to height, whose
// block is h. It never lowers a confirmation: a lower height is ignored.
func (b *Batch) SetConfirmed(a ledger.Address, height uint64, h ledger.Hash) error {
	if h.IsZero() {
		// The write path's memory reads a zero hash as "no record".
		return fmt.Errorf("ledgerstore: confirmation of %s at height %d names no block", a, height)
	}
	old, _, _, err := b.Confirmed(a)
	if err != nil {
		return err
	}
	if height <= old {
		return nil
	}
	if at, found, err := b.ChainAt(a, height); err != nil {
		return err
	} else if !found || at != h {
		return fmt.Errorf("ledgerstore: confirmation of %s at height %d names %s, not its block there", a, height, h)
	}
	// A confirmed place needs its vote record no more (signedTable).
	forget := func(e *ledger.Entry) {
		k := pendingKey{a, e.Block.Previous}
		cur, found := b.signed[k]
		if !found {
			cur, found = b.s.sv.get(k)
		}
		if found && cur != (SignedVotes{}) {
			b.b.Delete(key(pSigned, a[:], e.Block.Previous[:]), nil)
			b.signed[k] = SignedVotes{}
			b.n++
		}
	}
	if err := confirmRange(b, a, old, height, b.cweights, forget); err != nil {
		return err
	}
	b.confirmed[a] = confirmedAt{height, h}
	b.b.Set(key(pConfirm, a[:]), append(u64(height), h[:]...), nil)
	b.n++
	return nil
}

// PutCertificate stores the votes that confirmed block h.
func (b *Batch) PutCertificate(h ledger.Hash, votes []byte) {
	b.b.Set(key(pCert, h[:]), votes, nil)
	b.n++
}

// PutVote stores a vote under its digest, for certificates to name.
func (b *Batch) PutVote(digest ledger.Hash, vote []byte) {
	b.b.Set(key(pVote, digest[:]), vote, nil)
	b.n++
}

// Conflict returns the conflict recorded at (account, previous), if any.
func (b *Batch) Conflict(a ledger.Address, previous ledger.Hash) (*Conflict, bool, error) {
	ck := pendingKey{a, previous}
	if c, ok := b.conflicts[ck]; ok {
		return c, c != nil, nil
	}
	if b.s.conflicts == 0 {
		return nil, false, nil
	}
	k := key(pConflict, a[:], previous[:])
	v, found, err := b.s.get(k)
	if err != nil || !found {
		return nil, false, err
	}
	c, err := decodeConflict(k, v)
	return &c, err == nil, err
}

// EndConflict removes the conflict at (account, previous) once consensus
// has decided it, with the refused contenders it kept.
func (b *Batch) EndConflict(a ledger.Address, previous ledger.Hash) error {
	c, found, err := b.Conflict(a, previous)
	if err != nil || !found {
		return err
	}
	for _, h := range c.Blocks {
		b.b.Delete(key(pFork, h[:]), nil)
	}
	b.b.Delete(key(pConflict, a[:], previous[:]), nil)
	b.conflicts[pendingKey{a, previous}] = nil
	b.conflictsAdded--
	b.n++
	return nil
}

// AddConflict records a refused fork contender: the conflict at
// (account, previous) gains the block, and the block itself is kept so that
// consensus can later switch to it.
func (b *Batch) AddConflict(fe *ledger.ForkError, detectedAt int64) error {
	ck := pendingKey{fe.Account, fe.Previous}
	k := key(pConflict, fe.Account[:], fe.Previous[:])
	c, found, err := b.Conflict(fe.Account, fe.Previous)
	if err != nil {
		return err
	}
	if !found {
		c = &Conflict{Account: fe.Account, Previous: fe.Previous, Blocks: []ledger.Hash{fe.Existing}, DetectedAt: detectedAt}
	}
	for _, h := range c.Blocks {
		if h == fe.Block.Hash {
			return nil
		}
	}
	if len(c.Blocks) >= MaxContenders {
		// Enough to prove the fork and let consensus choose; more would
		// only let the account's owner grow the record without bound.
		return nil
	}
	c.Blocks = append(c.Blocks, fe.Block.Hash)
	b.conflicts[ck] = c
	if !found {
		b.conflictsAdded++
	}
	b.b.Set(k, encodeConflict(c), nil)
	b.b.Set(key(pFork, fe.Block.Hash[:]), fe.Block.AppendBinary(nil), nil)
	b.n++
	return nil
}

// Commit writes the batch durably: when it returns nil, every change is on
// disk (fsync). On error nothing of the batch is visible.
func (b *Batch) Commit() error {
	b.cwritten = make(map[ledger.Address]ledger.Amount, len(b.cweights))
	if err := b.s.writeConfirmedWeights(b.b, b.cweights, b.cwritten); err != nil {
		return err
	}
	b.markSeq()
	if err := b.b.Commit(pebble.Sync); err != nil {
		b.s.resetCache()
		return fmt.Errorf("ledgerstore: commit: %w", err)
	}
	b.publish()
	return nil
}

// CommitNoSyncWait applies the batch to the database, where reads see it,
// and starts its fsync without waiting for it. SyncWait must follow before
// the batch is closed; only after it returns nil is the batch durable. This
// lets a writer prepare the next batch while this one syncs.
func (b *Batch) CommitNoSyncWait() error {
	b.cwritten = make(map[ledger.Address]ledger.Amount, len(b.cweights))
	if err := b.s.writeConfirmedWeights(b.b, b.cweights, b.cwritten); err != nil {
		return err
	}
	b.markSeq()
	if err := b.s.db.ApplyNoSyncWait(b.b, pebble.Sync); err != nil {
		b.s.resetCache()
		return fmt.Errorf("ledgerstore: commit: %w", err)
	}
	b.publish()
	return nil
}

// markSeq records the sequence high-water mark with the batch's changes.
func (b *Batch) markSeq() {
	if b.n > 0 {
		b.b.Set(key(pMeta, []byte("seq")), u64(b.s.seq.Load()-1), nil)
	}
}

// SyncWait waits for the fsync started by CommitNoSyncWait. It may run
// on another goroutine than the one building the next batch, so it leaves
// the account cache alone; after a sync failure the store must not be
// written again (the caller stops, and a restart recovers what was synced).
func (b *Batch) SyncWait() error {
	if err := b.b.SyncWait(); err != nil {
		return fmt.Errorf("ledgerstore: sync: %w", err)
	}
	return nil
}

// Close releases the batch; uncommitted changes are dropped.
func (b *Batch) Close() { b.b.Close() }

// publish moves what the batch wrote (entries, chain positions,
// confirmations, the conflict count, account states and weights) into the
// write path's memory once the database holds it.
func (b *Batch) publish() {
	for h, at := range b.entries {
		if at == nil {
			b.s.entries.remove(h)
		} else {
			b.s.entries.put(h, *at)
		}
	}
	for pos, h := range b.chain {
		if h.IsZero() {
			b.s.chain.remove(pos)
		} else {
			b.s.chain.put(pos, h)
		}
	}
	for a, c := range b.confirmed {
		b.s.cacheConfirmed(a, c)
	}
	b.s.conflicts += b.conflictsAdded
	for a, acct := range b.accounts {
		if acct == nil {
			delete(b.s.accounts, a)
		} else {
			b.s.cacheAccount(*acct)
		}
	}
	if len(b.s.weights)+len(b.weights) > maxCachedAccounts {
		b.s.weights = make(map[ledger.Address]ledger.Amount)
	}
	for rep, w := range b.weights {
		b.s.weights[rep] = w
	}
	b.s.cw.set(b.cwritten)
	b.s.sv.set(b.signed)
}

func (s *Store) cacheAccount(a ledger.Account) {
	if len(s.accounts) >= maxCachedAccounts {
		// Only this cache and the weights start over (as they always
		// did); what the latest batches wrote is still worth keeping.
		s.accounts = make(map[ledger.Address]ledger.Account)
		s.weights = make(map[ledger.Address]ledger.Amount)
	}
	s.accounts[a.Address] = a
}

func (s *Store) cacheConfirmed(a ledger.Address, c confirmedAt) {
	if len(s.confirmed) >= maxCachedAccounts {
		s.confirmed = make(map[ledger.Address]confirmedAt)
	}
	s.confirmed[a] = c
}

// resetCache forgets everything the write path remembers of the database
// after a failed commit. Pebble applies nothing of a failed batch, so this
// is caution, not repair; the conflict count, which only a published
// commit changes, stays.
func (s *Store) resetCache() {
	s.accounts = make(map[ledger.Address]ledger.Account)
	s.weights = make(map[ledger.Address]ledger.Amount)
	s.entries = newRecent[ledger.Hash, entryAt](recentEntries)
	s.chain = newRecent[chainPos, ledger.Hash](recentEntries)
	s.confirmed = make(map[ledger.Address]confirmedAt)
}
