// Package ledgerstore keeps the ledger on disk in Pebble.
//
// A Store is a ledger.View over what is committed. Changes go through a
// Batch, which is itself a ledger.View of the committed state plus the
// batch's own changes, so a writer can decide many blocks against each other
// and commit them with a single fsync (group commit). Either all of a batch
// is on disk after Commit or none of it is.
//
// Reads never scan: every query the node answers walks an index whose key
// order is the answer's order (chain by height, recent blocks by sequence,
// pending by destination, conflicts by account).
package ledgerstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/internal/pebblekv"
	"github.com/latticenet/lattice/internal/run/pebblelog"
	"github.com/latticenet/lattice/ledger"
)

// ErrNotInitialised is returned by Genesis before Init has run.
var ErrNotInitialised = errors.New("ledgerstore: ledger has no genesis")

// Conflict records two or more valid blocks that claim the same previous of
// an account. Blocks[0] is the block the ledger kept.
type Conflict struct {
	Account    ledger.Address
	Previous   ledger.Hash
	Blocks     []ledger.Hash
	DetectedAt int64 // Unix ms when the first contender was refused
}

// MaxContenders bounds the blocks a conflict records (the kept block and
// the refused ones).
const MaxContenders = 16

// Store is a ledger kept in a Pebble database. Its read methods are safe for
// concurrent use; at most one Batch may be open at a time.
type Store struct {
	db     *pebble.DB
	seq    atomic.Uint64 // next sequence number for the recent-blocks index
	closed atomic.Bool
	reader
	// accounts and weights cache account states and representatives'
	// weights for the write path; only the one open Batch reads and
	// updates them (see batch.go).
	accounts map[ledger.Address]ledger.Account
	weights  map[ledger.Address]ledger.Amount
	// cw holds the whole confirmed-weight table in memory, for the
	// writer and for readers on any goroutine (consensus.go).
	cw memTable[ledger.Address, ledger.Amount]
	// sv holds the vote records of undecided places (consensus.go).
	sv memTable[pendingKey, SignedVotes]
	// entries and chain remember what the latest batches wrote, and
	// confirmed the confirmation records read or written, for the same
	// single writer (recent.go).
	entries   recent[ledger.Hash, entryAt]
	chain     recent[chainPos, ledger.Hash]
	confirmed map[ledger.Address]confirmedAt
	// conflicts counts the recorded conflicts, so that the writer does
	// not look for one at every block it confirms when there are none.
	conflicts int
}

// ErrFormat is returned by Open for a data directory written in another
// record layout.
var ErrFormat = errors.New("ledgerstore: the ledger was written by an incompatible version")

// ErrLocked is returned by Open when the store is open already, in a
// running node or elsewhere in this process: Pebble's LOCK file is held.
var ErrLocked = errors.New("ledgerstore: the ledger is in use by a running node")

// lockHeld reports whether err is Pebble's refusal to open a locked store:
// flock's EAGAIN from another process, or Pebble's own message for a lock
// this process holds (Pebble has no sentinel for it; TestOpenLocked notices
// if the message changes).
func lockHeld(err error) bool {
	return err != nil && (errors.Is(err, syscall.EAGAIN) || strings.Contains(err.Error(), "lock held by current process"))
}

// Options configure a Store. The zero value is ready to use.
type Options struct {
	// Logger receives Pebble's messages; nil means slog.Default().
	Logger *slog.Logger
	// FS is the file system; nil means the operating system's. Tests use
	// vfs.NewCrashableMem to simulate power loss.
	FS vfs.FS
	// MustExist refuses to create a new, empty store.
	MustExist bool
}

// Open opens or creates the store in dir.
func Open(dir string, o Options) (*Store, error) {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	opts := &pebble.Options{
		FS:                 o.FS,
		ErrorIfNotExists:   o.MustExist,
		Logger:             pebblelog.New(log),
		FormatMajorVersion: pebble.FormatNewest,
		// A larger memtable absorbs bursts of small blocks without stalls.
		MemTableSize: 64 << 20,
	}
	// Most point reads on the write path are of keys that may not exist
	// (pending entries, new accounts); bloom filters answer those without
	// touching data blocks.
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	db, err := pebblekv.Open(dir, opts)
	if lockHeld(err) {
		// pebblekv's own words for it would say it twice.
		return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("ledgerstore: open %s: %w", dir, err)
	}
	s := &Store{db: db, reader: reader{db}}
	s.resetCache()
	if err := s.checkFormat(); err != nil {
		db.Close()
		return nil, err
	}
	// Counted by key, not decoded: a damaged record fails where it is
	// read, as before, not every start.
	if err := s.scan([]byte{pConflict}, false, func(_, _ []byte) error { s.conflicts++; return nil }); err != nil {
		db.Close()
		return nil, fmt.Errorf("ledgerstore: counting conflicts: %w", err)
	}
	last, err := s.lastSeq()
	if err != nil {
		db.Close()
		return nil, err
	}
	s.seq.Store(last + 1)
	if err := s.buildConfirmedWeights(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.loadConfirmedWeights(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.loadSigned(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database; later calls do nothing. Reads in progress must
// have finished.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.db.Close()
}

// checkFormat refuses an initialised store of another record layout.
func (s *Store) checkFormat() error {
	if _, err := s.Genesis(); errors.Is(err, ErrNotInitialised) {
		return nil
	} else if err != nil {
		return err
	}
	v, found, err := s.get(key(pMeta, []byte("format")))
	if err != nil {
		return err
	}
	if !found || len(v) != 8 || binary.BigEndian.Uint64(v) != formatVersion {
		return fmt.Errorf("%w (this version reads format %d): move the directory away and let the node sync from its peers", ErrFormat, formatVersion)
	}
	return nil
}

func (s *Store) lastSeq() (uint64, error) {
	it, err := s.db.NewIter(prefixBounds([]byte{pRecent}))
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var last uint64
	if it.Last() {
		last = binary.BigEndian.Uint64(it.Key()[1:])
	} else if err := it.Error(); err != nil {
		return 0, err
	}
	// The latest blocks may have been rolled back: the high-water mark
	// each commit records keeps their numbers from being given out again,
	// which would let a peer's sync cursor skip the blocks that reuse them.
	v, found, err := s.get(key(pMeta, []byte("seq")))
	if err != nil {
		return 0, err
	}
	if found && len(v) == 8 {
		last = max(last, binary.BigEndian.Uint64(v))
	}
	return last, nil
}

// Genesis returns the hash of the ledger's genesis block.
func (s *Store) Genesis() (ledger.Hash, error) {
	v, found, err := s.get(key(pMeta, []byte("genesis")))
	if err != nil {
		return ledger.Hash{}, err
	}
	if !found {
		return ledger.Hash{}, ErrNotInitialised
	}
	var h ledger.Hash
	copy(h[:], v)
	return h, nil
}

// Init starts an empty ledger with genesis block g and records the network
// description net (any JSON-encodable value) beside it.
func (s *Store) Init(g *ledger.Block, net any) error {
	if _, err := s.Genesis(); err == nil {
		return errors.New("ledgerstore: ledger already has a genesis")
	}
	if err := ledger.CheckGenesis(g); err != nil {
		return err
	}
	netJSON, err := json.Marshal(net)
	if err != nil {
		return err
	}
	b := s.NewBatch()
	defer b.Close()
	if err := b.Apply(ledger.GenesisDelta(g)); err != nil {
		return err
	}
	if err := b.SetConfirmed(g.Account, 1, g.Hash); err != nil {
		return err
	}
	b.b.Set(key(pMeta, []byte("network")), netJSON, nil)
	b.b.Set(key(pMeta, []byte("genesis")), g.Hash[:], nil)
	b.b.Set(key(pMeta, []byte("format")), u64(formatVersion), nil)
	b.b.Set(key(pMeta, []byte(metaConfirmedWeights)), []byte{1}, nil)
	return b.Commit()
}

// Network decodes the network description recorded by Init into v.
func (s *Store) Network(v any) error {
	data, found, err := s.get(key(pMeta, []byte("network")))
	if err != nil {
		return err
	}
	if !found {
		return ErrNotInitialised
	}
	return json.Unmarshal(data, v)
}

// Snapshot returns a consistent, point-in-time ledger.Snapshot. Close it
// when done.
func (s *Store) Snapshot() *Snapshot {
	snap := s.db.NewSnapshot()
	return &Snapshot{reader{snap}, snap}
}

// Snapshot is a point-in-time view of the store.
type Snapshot struct {
	reader
	snap *pebble.Snapshot
}

// Close releases the snapshot.
func (s *Snapshot) Close() error { return s.snap.Close() }

// reader implements ledger.View and the store's queries over any Pebble
// reader: the DB or a snapshot.
type reader struct{ r pebble.Reader }

var _ ledger.Snapshot = reader{}

func (r reader) get(k []byte) ([]byte, bool, error) {
	v, closer, err := r.r.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("ledgerstore: %w", err)
	}
	out := bytes.Clone(v)
	closer.Close()
	return out, true, nil
}

// Account implements ledger.View.
func (r reader) Account(a ledger.Address) (ledger.Account, bool, error) {
	v, found, err := r.get(key(pAccount, a[:]))
	if err != nil || !found {
		return ledger.Account{}, false, err
	}
	acct, err := decodeAccount(v)
	return acct, err == nil, err
}

// Entry implements ledger.View.
func (r reader) Entry(h ledger.Hash) (*ledger.Entry, bool, error) {
	e, _, found, err := r.entrySeq(h)
	return e, found, err
}

func (r reader) entrySeq(h ledger.Hash) (*ledger.Entry, uint64, bool, error) {
	v, found, err := r.get(key(pBlock, h[:]))
	if err != nil || !found {
		return nil, 0, false, err
	}
	e, seq, err := decodeEntry(v)
	return e, seq, err == nil, err
}

// ChainAt implements ledger.View.
func (r reader) ChainAt(a ledger.Address, height uint64) (ledger.Hash, bool, error) {
	return r.hashAt(key(pChain, a[:], u64(height)))
}

// Pending implements ledger.View.
func (r reader) Pending(dest ledger.Address, send ledger.Hash) (ledger.Pending, bool, error) {
	k := key(pPending, dest[:], send[:])
	v, found, err := r.get(k)
	if err != nil || !found {
		return ledger.Pending{}, false, err
	}
	p, err := decodePending(k, v)
	return p, err == nil, err
}

// Receiver implements ledger.View.
// State implements ledger.View.
func (r reader) State(table, key string) ([]byte, bool, error) {
	return r.get(stateKey(table, key))
}

func (r reader) Receiver(send ledger.Hash) (ledger.Hash, bool, error) {
	return r.hashAt(key(pReceiver, send[:]))
}

func (r reader) hashAt(k []byte) (ledger.Hash, bool, error) {
	v, found, err := r.get(k)
	var h ledger.Hash
	if err != nil || !found {
		return h, false, err
	}
	if len(v) != len(h) {
		return h, false, fmt.Errorf("ledgerstore: corrupt index entry")
	}
	copy(h[:], v)
	return h, true, nil
}

// ForkBlock returns a block refused as a fork contender.
func (r reader) ForkBlock(h ledger.Hash) (*ledger.Block, bool, error) {
	v, found, err := r.get(key(pFork, h[:]))
	if err != nil || !found {
		return nil, false, err
	}
	b := new(ledger.Block)
	if err := b.UnmarshalBinary(v); err != nil {
		return nil, false, fmt.Errorf("ledgerstore: corrupt fork block: %w", err)
	}
	return b, true, nil
}

// Log calls fn, in commit order, for up to limit blocks committed after
// sequence number after. Sequence numbers grow with every block applied;
// a rolled-back block leaves a gap. Because a block is applied only after
// what it depends on, the log is an order in which every block can be
// applied: sync serves it to peers.
func (r reader) Log(after uint64, limit int, fn func(seq uint64, e *ledger.Entry) error) error {
	it, err := r.r.NewIter(&pebble.IterOptions{LowerBound: key(pRecent, u64(after+1)), UpperBound: []byte{pRecent + 1}})
	if err != nil {
		return fmt.Errorf("ledgerstore: %w", err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok && n < limit; ok = it.Next() {
		n++
		seq := binary.BigEndian.Uint64(it.Key()[1:])
		if err := r.entryFn(it.Value(), func(e *ledger.Entry) error { return fn(seq, e) }); err != nil {
			return err
		}
	}
	return it.Error()
}

// LastSeq returns the sequence number of the latest block in the log.
func (s *Store) LastSeq() uint64 { return s.seq.Load() - 1 }

// Meta returns the value an operation stored under name with SetMeta.
func (r reader) Meta(name string) ([]byte, bool, error) {
	return r.get(key(pMeta, []byte("x/"+name)))
}

// SetMeta durably stores value under name, beside the ledger but outside
// it (sync cursors, for example). Names never collide with the store's own
// metadata.
func (s *Store) SetMeta(name string, value []byte) error {
	if err := s.db.Set(key(pMeta, []byte("x/"+name)), value, pebble.Sync); err != nil {
		return fmt.Errorf("ledgerstore: %w", err)
	}
	return nil
}

// Weight returns the voting weight of representative rep: the native
// balances of the accounts that name it, its own included when it
// represents itself.
func (r reader) Weight(rep ledger.Address) (ledger.Amount, error) {
	w, err := r.delegated(rep)
	if err != nil {
		return w, err
	}
	acct, found, err := r.Account(rep)
	if err != nil || !found || acct.Rep() != rep {
		return w, err
	}
	if w, err = w.Add(acct.Balance(ledger.Native)); err != nil {
		return w, fmt.Errorf("ledgerstore: weight of %s overflows", rep)
	}
	return w, nil
}

// delegated returns the native balance of the accounts that name rep as
// their representative, not counting rep's own. Only these are kept in
// the weight table: most accounts represent themselves, and their weight
// is their balance, which the account record holds already.
func (r reader) delegated(rep ledger.Address) (ledger.Amount, error) {
	v, found, err := r.get(key(pWeight, rep[:]))
	if err != nil || !found {
		return ledger.Amount{}, err
	}
	return decodeAmount(v)
}

// Confirmed returns the height and hash of the latest confirmed block of
// account a. Every block of the chain up to that height is confirmed and is
// never rolled back. found is false for an account with none confirmed.
func (r reader) Confirmed(a ledger.Address) (height uint64, h ledger.Hash, found bool, err error) {
	v, found, err := r.get(key(pConfirm, a[:]))
	if err != nil || !found {
		return 0, h, false, err
	}
	if len(v) != 40 {
		return 0, h, false, fmt.Errorf("ledgerstore: corrupt confirmation record")
	}
	copy(h[:], v[8:])
	return binary.BigEndian.Uint64(v), h, true, nil
}

// IsConfirmed reports whether e, an entry of the ledger, is confirmed.
func (r reader) IsConfirmed(e *ledger.Entry) (bool, error) {
	height, _, _, err := r.Confirmed(e.Block.Account)
	return e.Height <= height, err
}

// EntryConfirmed returns the entry of block h and whether it is
// confirmed, both read from one snapshot. Read apart, a block rolled back
// between the two reads (the loser of a fork) would be reported confirmed
// once the winner at its height was, since confirmation is kept as a
// height per account.
func (s *Store) EntryConfirmed(h ledger.Hash) (e *ledger.Entry, found, confirmed bool, err error) {
	snap := s.Snapshot()
	defer snap.Close()
	e, found, err = snap.Entry(h)
	if err != nil || !found {
		return nil, false, false, err
	}
	confirmed, err = snap.IsConfirmed(e)
	return e, true, confirmed, err
}

// Certificate returns the votes stored with a confirmed block, as the
// engine's caller encoded them.
func (r reader) Certificate(h ledger.Hash) ([]byte, bool, error) {
	return r.get(key(pCert, h[:]))
}

// Vote returns a vote stored with PutVote.
func (r reader) Vote(digest ledger.Hash) ([]byte, bool, error) {
	return r.get(key(pVote, digest[:]))
}

// errStop ends an iteration early without error.
var errStop = ledger.ErrStop // ends a scan early; callers of the reader may return it too

// scan calls fn for each key/value under prefix, in key order or reversed.
func (r reader) scan(prefix []byte, reverse bool, fn func(k, v []byte) error) error {
	it, err := r.r.NewIter(prefixBounds(prefix))
	if err != nil {
		return fmt.Errorf("ledgerstore: %w", err)
	}
	defer it.Close()
	var ok bool
	if reverse {
		ok = it.Last()
	} else {
		ok = it.First()
	}
	for ; ok; ok = step(it, reverse) {
		if err := fn(it.Key(), it.Value()); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
	}
	return it.Error()
}

func step(it *pebble.Iterator, reverse bool) bool {
	if reverse {
		return it.Prev()
	}
	return it.Next()
}

// States implements ledger.Snapshot: a state table's values by key prefix,
// in key order, after the key after.
func (r reader) States(table, prefix, after string, fn func(string, []byte) error) error {
	base := len(stateKey(table, ""))
	opts := prefixBounds(stateKey(table, prefix))
	if after != "" {
		if lo := append(stateKey(table, after), 0); bytes.Compare(lo, opts.LowerBound) > 0 {
			if opts.UpperBound != nil && bytes.Compare(lo, opts.UpperBound) >= 0 {
				return nil
			}
			opts.LowerBound = lo
		}
	}
	it, err := r.r.NewIter(opts)
	if err != nil {
		return fmt.Errorf("ledgerstore: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := fn(string(it.Key()[base:]), bytes.Clone(it.Value())); err != nil {
			if errors.Is(err, ledger.ErrStop) {
				return nil
			}
			return err
		}
	}
	return it.Error()
}

// Accounts implements ledger.Snapshot: every account, in address order.
func (r reader) Accounts(fn func(ledger.Account) error) error {
	return r.scan([]byte{pAccount}, false, func(_, v []byte) error {
		a, err := decodeAccount(v)
		if err != nil {
			return err
		}
		return fn(a)
	})
}

// AccountsFrom calls fn for every account from address start on, in
// address order, until fn returns an error.
func (r reader) AccountsFrom(start ledger.Address, fn func(ledger.Account) error) error {
	it, err := r.r.NewIter(&pebble.IterOptions{LowerBound: key(pAccount, start[:]), UpperBound: []byte{pAccount + 1}})
	if err != nil {
		return fmt.Errorf("ledgerstore: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		a, err := decodeAccount(it.Value())
		if err != nil {
			return err
		}
		if err := fn(a); err != nil {
			return err
		}
	}
	return it.Error()
}

// Pendings implements ledger.Snapshot: every pending entry, by destination.
func (r reader) Pendings(fn func(ledger.Pending) error) error {
	return r.scan([]byte{pPending}, false, func(k, v []byte) error {
		p, err := decodePending(k, v)
		if err != nil {
			return err
		}
		return fn(p)
	})
}

// PendingTo calls fn for every pending entry addressed to dest.
func (r reader) PendingTo(dest ledger.Address, fn func(ledger.Pending) error) error {
	return r.scan(key(pPending, dest[:]), false, func(k, v []byte) error {
		p, err := decodePending(k, v)
		if err != nil {
			return err
		}
		return fn(p)
	})
}

// Chain calls fn for every block of a's chain, oldest first.
func (r reader) Chain(a ledger.Address, fn func(*ledger.Entry) error) error {
	return r.scan(key(pChain, a[:]), false, func(_, v []byte) error {
		return r.entryFn(v, fn)
	})
}

// Recent calls fn for up to limit blocks across all accounts, newest first.
func (r reader) Recent(limit int, fn func(*ledger.Entry) error) error {
	n := 0
	return r.scan([]byte{pRecent}, true, func(_, v []byte) error {
		if n >= limit {
			return errStop
		}
		n++
		return r.entryFn(v, fn)
	})
}

func (r reader) entryFn(hash []byte, fn func(*ledger.Entry) error) error {
	var h ledger.Hash
	copy(h[:], hash)
	e, found, err := r.Entry(h)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("ledgerstore: index names missing block %s", h)
	}
	return fn(e)
}

// Conflicts calls fn for every recorded conflict, by account, or only for
// account a's when a is non-nil.
func (r reader) Conflicts(a *ledger.Address, fn func(Conflict) error) error {
	prefix := []byte{pConflict}
	if a != nil {
		prefix = key(pConflict, a[:])
	}
	return r.scan(prefix, false, func(k, v []byte) error {
		c, err := decodeConflict(k, v)
		if err != nil {
			return err
		}
		return fn(c)
	})
}

func prefixBounds(prefix []byte) *pebble.IterOptions {
	upper := bytes.Clone(prefix)
	for i := len(upper) - 1; i >= 0; i-- {
		if upper[i] < 0xff {
			upper[i]++
			return &pebble.IterOptions{LowerBound: prefix, UpperBound: upper[:i+1]}
		}
	}
	return &pebble.IterOptions{LowerBound: prefix}
}

var _ io.Closer = (*Store)(nil)

// DiskUsage returns the bytes the database takes on disk (its tables, WAL
// and manifests), as Pebble counts them.
func (s *Store) DiskUsage() uint64 { return s.db.Metrics().DiskSpaceUsage() }
