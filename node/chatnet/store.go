package chatnet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/chat"
	"github.com/latticenet/lattice/directory"
	"github.com/latticenet/lattice/internal/pebblekv"
	"github.com/latticenet/lattice/internal/run/pebblelog"
	"github.com/latticenet/lattice/ledger"
)

// ErrUnavailable is returned by every write once a write has failed (a
// full disk, an I/O error): the store keeps serving reads, and a restart
// recovers what was synced.
var ErrUnavailable = errors.New("chatnet: the chat store failed a write and accepts no more")

// The store's tables, each a one-byte key prefix, declared once.
const (
	pMessage  byte = 'm' // hash → seq (8) || message (binary)
	pSeq      byte = 's' // seq (8) → hash: the order messages arrived in, for event ids
	pByAcct   byte = 'a' // account || timestamp (8) || hash → nothing: both directions
	pContact  byte = 'c' // account → timestamp (8) of its latest message
	pOutbox   byte = 'o' // hash → nothing: messages still to deliver
	pRegister byte = 'd' // account → registration (binary)
	pRank     byte = 'r' // account → its registration's rank (rankLen bytes)
	pEvict    byte = 'e' // rank || account → nothing: the eviction order, lowest first
)

// store keeps messages, the outbox and the directory in a Pebble database.
// Writes are serialised; all are synced before they return but those of
// registrations learned from peers (see arrival).
type store struct {
	db      *pebble.DB
	mu      sync.Mutex // serialises writes; seq, regs and floor change under it
	seq     uint64     // of the last message stored
	regs    int        // registrations held
	maxRegs int        // registrations held at most
	// floor is the eviction key of the last registration evicted: none
	// lower is held, so the search for the lowest starts there rather than
	// wading through the tombstones of the ones evicted before.
	floor  []byte
	failed atomic.Bool
	log    *slog.Logger
}

func openStore(dir string, fs vfs.FS, maxRegs int, log *slog.Logger) (*store, error) {
	db, err := pebblekv.Open(dir, &pebble.Options{FS: fs, Logger: pebblelog.New(log), FormatMajorVersion: pebble.FormatNewest})
	if err != nil {
		return nil, fmt.Errorf("chatnet: open %s: %w", dir, err)
	}
	s := &store{db: db, maxRegs: maxRegs, log: log}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{pSeq}, UpperBound: []byte{pSeq + 1}})
	if err != nil {
		db.Close()
		return nil, err
	}
	if it.Last() {
		s.seq = binary.BigEndian.Uint64(it.Key()[1:])
	}
	if err := it.Close(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.openDirectory(); err != nil {
		db.Close()
		return nil, fmt.Errorf("chatnet: open %s: the directory: %w", dir, err)
	}
	return s, nil
}

func (s *store) close() error { return s.db.Close() }

func key(prefix byte, parts ...[]byte) []byte {
	k := []byte{prefix}
	for _, p := range parts {
		k = append(k, p...)
	}
	return k
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// commit applies b durably. A failure (a panic in Pebble's WAL write
// included) turns the store read-only: the lock is always released.
func (s *store) commit(b *pebble.Batch, sync bool) (err error) {
	if s.failed.Load() {
		return ErrUnavailable
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("chatnet: write: %v", p)
		}
		if err != nil {
			s.failed.Store(true)
			s.log.Error("chat store write failed; accepting no more writes until restart", "err", err)
			err = fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}()
	opt := pebble.NoSync
	if sync {
		opt = pebble.Sync
	}
	return b.Commit(opt)
}

// addMessage stores m (already checked) unless a message with its hash is
// stored already, with it in the outbox when outbox is set. It returns the
// message's sequence number and whether it was new.
func (s *store) addMessage(m *chat.Message, outbox bool) (uint64, bool, error) {
	h := m.Hash()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, closer, err := s.db.Get(key(pMessage, h[:])); err == nil {
		closer.Close()
		return 0, false, nil
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return 0, false, err
	}
	seq := s.seq + 1
	b := s.db.NewBatch()
	defer b.Close()
	b.Set(key(pMessage, h[:]), m.AppendBinary(u64(seq)), nil)
	b.Set(key(pSeq, u64(seq)), h[:], nil)
	ts := u64(uint64(m.Timestamp))
	for _, a := range participants(m) {
		b.Set(key(pByAcct, a[:], ts, h[:]), nil, nil)
		if old, ok, err := s.contactTime(a); err != nil {
			return 0, false, err
		} else if !ok || old < m.Timestamp {
			b.Set(key(pContact, a[:]), ts, nil)
		}
	}
	if outbox {
		b.Set(key(pOutbox, h[:]), nil, nil)
	}
	if err := s.commit(b, true); err != nil {
		return 0, false, err
	}
	s.seq = seq
	return seq, true, nil
}

// participants returns m's accounts, once each.
func participants(m *chat.Message) []ledger.Address {
	if m.From == m.To {
		return []ledger.Address{m.From}
	}
	return []ledger.Address{m.From, m.To}
}

func (s *store) contactTime(a ledger.Address) (int64, bool, error) {
	v, closer, err := s.db.Get(key(pContact, a[:]))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer closer.Close()
	return int64(binary.BigEndian.Uint64(v)), true, nil
}

// delivered takes h out of the outbox. It is not synced: a message whose
// removal is lost is delivered again, and the recipient drops the copy.
func (s *store) delivered(h ledger.Hash) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	b.Delete(key(pOutbox, h[:]), nil)
	return s.commit(b, false)
}

// message returns the message with hash h and its sequence number.
func (s *store) message(h ledger.Hash) (*chat.Message, uint64, bool, error) {
	v, closer, err := s.db.Get(key(pMessage, h[:]))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	defer closer.Close()
	if len(v) < 8 {
		return nil, 0, false, fmt.Errorf("chatnet: message %s: a record of %d bytes", h, len(v))
	}
	m := new(chat.Message)
	if err := m.UnmarshalBinary(v[8:]); err != nil {
		return nil, 0, false, fmt.Errorf("chatnet: message %s: %w", h, err)
	}
	return m, binary.BigEndian.Uint64(v), true, nil
}

// lastSeq returns the sequence number of the newest message.
func (s *store) lastSeq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// since calls fn for the messages stored after sequence number after, up
// to and including upTo, in order. It reads a page at a time and calls fn
// with no iterator open, so a slow reader (an event stream's client)
// never pins the database; it stops at the first page after ctx ends,
// whether fn was called or not (a filter may match nothing for long).
func (s *store) since(ctx context.Context, after, upTo uint64, fn func(seq uint64, m *chat.Message) error) error {
	const page = 256
	for after < upTo {
		if err := ctx.Err(); err != nil {
			return err
		}
		var hashes []ledger.Hash
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: key(pSeq, u64(after+1)), UpperBound: key(pSeq, u64(upTo+1))})
		if err != nil {
			return err
		}
		for it.First(); it.Valid() && len(hashes) < page; it.Next() {
			hashes = append(hashes, ledger.Hash(it.Value()))
			after = binary.BigEndian.Uint64(it.Key()[1:])
		}
		err = it.Error()
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if len(hashes) == 0 {
			return nil
		}
		for _, h := range hashes {
			m, seq, found, err := s.message(h)
			if err != nil {
				return err
			}
			if found {
				if err := fn(seq, m); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// messages calls fn for account's messages with a timestamp after since,
// newest first.
func (s *store) messages(account ledger.Address, since int64, fn func(*chat.Message) error) error {
	lower := key(pByAcct, account[:], u64(uint64(max(since, -1)+1)))
	upper := key(pByAcct, account[:], bytes.Repeat([]byte{0xff}, 8+32+1))
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Last(); it.Valid(); it.Prev() {
		k := it.Key()
		m, _, found, err := s.message(ledger.Hash(k[len(k)-32:]))
		if err != nil {
			return err
		}
		if found {
			if err := fn(m); err != nil {
				return err
			}
		}
	}
	return it.Error()
}

// contact is an account with a conversation on this node.
type contact struct {
	account ledger.Address
	latest  int64
}

func (s *store) contacts() ([]contact, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pContact}, UpperBound: []byte{pContact + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []contact
	for it.First(); it.Valid(); it.Next() {
		out = append(out, contact{account: ledger.Address(it.Key()[1:]), latest: int64(binary.BigEndian.Uint64(it.Value()))})
	}
	return out, it.Error()
}

// outbox returns the messages still to deliver.
func (s *store) outbox() ([]*chat.Message, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pOutbox}, UpperBound: []byte{pOutbox + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []*chat.Message
	for it.First(); it.Valid(); it.Next() {
		m, _, found, err := s.message(ledger.Hash(it.Key()[1:]))
		if err != nil {
			return nil, err
		}
		if found {
			out = append(out, m)
		}
	}
	return out, it.Error()
}

// A registration's tier, the first part of its rank: what a full
// directory lets go last.
const (
	tierPeer  byte = iota // learned from a peer, by gossip or pull
	tierLocal             // submitted to this node (Register)
	tierOwn               // of the node's own account
)

// rankLen is the length of a rank: the tier, then the age (u64).
const rankLen = 1 + 8

// rank orders registrations for eviction, lowest first: by tier, then by
// age, the earlier of the registration's timestamp and its arrival here
// (Unix ms). A registration refreshed long ago goes first; one stamped
// ahead of this node's clock ranks no higher than one that came at the
// same time stamped right, so stamping ahead gains nothing.
func rank(tier byte, r *directory.Registration, arrived int64) []byte {
	return binary.BigEndian.AppendUint64([]byte{tier}, uint64(max(min(r.Timestamp, arrived), 0)))
}

// arrival says how a registration reaches the store.
type arrival struct {
	tier byte
	at   int64 // this node's clock, Unix ms
	// synced writes it with an fsync before register returns. Those
	// learned from peers are not synced: one lost in a crash is learned
	// again from the next pull, and a flood of them would otherwise cost
	// an fsync each.
	synced bool
	// admit, when set, is asked before the registration takes another's
	// place in a full directory: false keeps it out (errNotAdmitted).
	admit func() bool
}

// ErrDirectoryFull is returned by Register when the directory holds
// MaxRegistrations already, each ranking above the one submitted (see
// rank): a newer registration gets in.
var ErrDirectoryFull = errors.New("chatnet: the directory is full of registrations ranking above this one")

// errNotAdmitted is returned by register when arrival's admit refused the
// registration another's place.
var errNotAdmitted = errors.New("chatnet: a registration refused the place of another")

// register stores r (already checked) when it is newer than the account's
// registration, and reports whether it did. A new account takes a place
// of maxRegs: when they are all taken, r takes the place of the
// lowest-ranked registration if it ranks above it, and is refused with
// ErrDirectoryFull if not.
func (s *store) register(r *directory.Registration, a arrival) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, found, err := s.registration(r.Account)
	if err != nil {
		return false, err
	}
	if found && !directory.Newer(r, old) {
		return false, nil
	}
	data, err := r.MarshalBinary()
	if err != nil {
		return false, err
	}
	rk := rank(a.tier, r, a.at)
	b := s.db.NewBatch()
	defer b.Close()
	var evicted [][]byte
	if found {
		err = s.unrank(b, r.Account)
	} else if s.regs >= s.maxRegs {
		evicted, err = s.evict(b, rk, s.regs-s.maxRegs+1, a.admit)
	}
	if err != nil {
		return false, err
	}
	b.Set(key(pRegister, r.Account[:]), data, nil)
	b.Set(key(pRank, r.Account[:]), rk, nil)
	ek := key(pEvict, rk, r.Account[:])
	b.Set(ek, nil, nil)
	if err := s.commit(b, a.synced); err != nil {
		return false, err
	}
	if !found {
		s.regs += 1 - len(evicted)
	}
	if len(evicted) > 0 {
		s.floor = evicted[len(evicted)-1]
	} else if s.floor != nil && bytes.Compare(ek, s.floor) < 0 {
		s.floor = nil
	}
	return true, nil
}

// evict deletes in b the n lowest-ranked registrations, to make room for
// one ranked rk, which must rank above them all, and returns their
// eviction keys. Called with mu held.
func (s *store) evict(b *pebble.Batch, rk []byte, n int, admit func() bool) ([][]byte, error) {
	low, err := s.lowest(n)
	if err != nil {
		return nil, err
	}
	if len(low) == 0 || bytes.Compare(rk, low[len(low)-1][1:1+rankLen]) <= 0 {
		return nil, ErrDirectoryFull
	}
	if admit != nil && !admit() {
		return nil, errNotAdmitted
	}
	for _, ek := range low {
		account := ek[1+rankLen:]
		b.Delete(key(pRegister, account), nil)
		b.Delete(key(pRank, account), nil)
		b.Delete(ek, nil)
	}
	return low, nil
}

// lowest returns the eviction keys of the n lowest-ranked registrations.
func (s *store) lowest(n int) ([][]byte, error) {
	lower := s.floor
	if lower == nil {
		lower = []byte{pEvict}
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: []byte{pEvict + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out [][]byte
	for it.First(); it.Valid() && len(out) < n; it.Next() {
		out = append(out, bytes.Clone(it.Key()))
	}
	return out, it.Error()
}

// unrank deletes in b the eviction key of account's registration.
func (s *store) unrank(b *pebble.Batch, account ledger.Address) error {
	v, closer, err := s.db.Get(key(pRank, account[:]))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer closer.Close()
	return b.Delete(key(pEvict, v, account[:]), nil)
}

// registrationCount returns how many registrations are held.
func (s *store) registrationCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.regs
}

// openDirectory counts the registrations held and ranks those stored
// before ranks were (as learned from a peer, aged by their timestamp).
func (s *store) openDirectory() error {
	regs, err := pebblekv.Count(s.db, []byte{pRegister}, 0)
	if err != nil {
		return err
	}
	ranked, err := pebblekv.Count(s.db, []byte{pRank}, 0)
	if err != nil {
		return err
	}
	s.regs = regs
	if ranked == regs {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	err = s.registrations(func(r *directory.Registration) error {
		_, closer, err := s.db.Get(key(pRank, r.Account[:]))
		if err == nil {
			return closer.Close()
		}
		if !errors.Is(err, pebble.ErrNotFound) {
			return err
		}
		rk := rank(tierPeer, r, r.Timestamp)
		b.Set(key(pRank, r.Account[:]), rk, nil)
		return b.Set(key(pEvict, rk, r.Account[:]), nil, nil)
	})
	if err != nil {
		return err
	}
	return s.commit(b, true)
}

func (s *store) registration(a ledger.Address) (*directory.Registration, bool, error) {
	v, closer, err := s.db.Get(key(pRegister, a[:]))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer closer.Close()
	r := new(directory.Registration)
	if err := r.UnmarshalBinary(v); err != nil {
		return nil, false, fmt.Errorf("chatnet: registration of %s: %w", a, err)
	}
	return r, true, nil
}

// registrations calls fn for every registration, by account.
func (s *store) registrations(fn func(*directory.Registration) error) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pRegister}, UpperBound: []byte{pRegister + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		r := new(directory.Registration)
		if err := r.UnmarshalBinary(it.Value()); err != nil {
			return fmt.Errorf("chatnet: registration %x: %w", it.Key()[1:], err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return it.Error()
}
