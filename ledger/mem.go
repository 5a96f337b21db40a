package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Mem is an in-memory ledger: a View and Snapshot that Commit updates. It is
// the reference implementation the durable store is tested against, and a
// real fake for tests of code that drives the core. Not safe for concurrent
// use.
type Mem struct {
	accounts  map[Address]Account
	entries   map[Hash]*Entry
	chains    map[Address][]Hash
	pending   map[Address]map[Hash]Pending
	receivers map[Hash]Hash
	confirmed map[Address]confirmedAt
	state     map[string]map[string][]byte
}

type confirmedAt struct {
	height uint64
	hash   Hash
}

var _ Batch = (*Mem)(nil)

// NewMem returns an empty in-memory ledger.
func NewMem() *Mem {
	return &Mem{
		accounts:  make(map[Address]Account),
		entries:   make(map[Hash]*Entry),
		chains:    make(map[Address][]Hash),
		pending:   make(map[Address]map[Hash]Pending),
		receivers: make(map[Hash]Hash),
		confirmed: make(map[Address]confirmedAt),
		state:     make(map[string]map[string][]byte),
	}
}

// Account implements View.
func (m *Mem) Account(a Address) (Account, bool, error) {
	acct, ok := m.accounts[a]
	return acct.Clone(), ok, nil
}

// Entry implements View.
func (m *Mem) Entry(h Hash) (*Entry, bool, error) {
	e, ok := m.entries[h]
	return e, ok, nil
}

// ChainAt implements View.
func (m *Mem) ChainAt(a Address, height uint64) (Hash, bool, error) {
	c := m.chains[a]
	if height < 1 || height > uint64(len(c)) {
		return Hash{}, false, nil
	}
	return c[height-1], true, nil
}

// Pending implements View.
func (m *Mem) Pending(dest Address, send Hash) (Pending, bool, error) {
	p, ok := m.pending[dest][send]
	return p, ok, nil
}

// Receiver implements View.
func (m *Mem) Receiver(send Hash) (Hash, bool, error) {
	h, ok := m.receivers[send]
	return h, ok, nil
}

// State implements View.
func (m *Mem) State(table, key string) ([]byte, bool, error) {
	v, ok := m.state[table][key]
	return bytes.Clone(v), ok, nil
}

// Accounts implements Snapshot.
func (m *Mem) Accounts(fn func(Account) error) error {
	keys := make([]Address, 0, len(m.accounts))
	for a := range m.accounts {
		keys = append(keys, a)
	}
	slices.SortFunc(keys, func(a, b Address) int { return bytes.Compare(a[:], b[:]) })
	for _, a := range keys {
		if err := fn(m.accounts[a]); err != nil {
			return err
		}
	}
	return nil
}

// Pendings implements Snapshot.
func (m *Mem) Pendings(fn func(Pending) error) error {
	for _, ps := range m.pending {
		for _, p := range ps {
			if err := fn(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// States implements Snapshot.
func (m *Mem) States(table, prefix, after string, fn func(string, []byte) error) error {
	var keys []string
	for k := range m.state[table] {
		if strings.HasPrefix(k, prefix) && k > after {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := fn(k, bytes.Clone(m.state[table][k])); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// Apply implements Batch: it commits d, refusing, whole, a delta with a
// state change no store can hold.
func (m *Mem) Apply(d *Delta) error {
	for _, c := range d.State {
		if err := c.Check(); err != nil {
			return err
		}
	}
	m.Commit(d)
	return nil
}

// Confirmed implements Batch.
func (m *Mem) Confirmed(a Address) (uint64, Hash, bool, error) {
	c, ok := m.confirmed[a]
	return c.height, c.hash, ok, nil
}

// SetConfirmed implements Batch. Like the store, it never lowers a
// confirmed height, and refuses a hash that is not a's block at height.
func (m *Mem) SetConfirmed(a Address, height uint64, h Hash) error {
	if c := m.confirmed[a]; height <= c.height {
		return nil
	}
	if at, found, _ := m.ChainAt(a, height); !found || at != h {
		return fmt.Errorf("ledger: confirmation of %s at height %d names %s, not its block there", a, height, h)
	}
	m.confirmed[a] = confirmedAt{height, h}
	return nil
}

// Commit applies d, which must come from Apply, Rollback or GenesisDelta
// against m's current state.
func (m *Mem) Commit(d *Delta) {
	a := d.Account.Address
	if d.Add != nil {
		b := d.Add.Block
		m.entries[b.Hash] = d.Add
		m.chains[a] = append(m.chains[a], b.Hash)
		if send, ok := b.Takes(); ok {
			m.receivers[send] = b.Hash
		}
	}
	if d.Remove != nil {
		b := d.Remove.Block
		delete(m.entries, b.Hash)
		m.chains[a] = m.chains[a][:len(m.chains[a])-1]
		if send, ok := b.Takes(); ok {
			delete(m.receivers, send)
		}
	}
	if d.AccountRemoved {
		delete(m.accounts, a)
		delete(m.chains, a)
	} else {
		m.accounts[a] = d.Account.Clone()
	}
	if p := d.PendingDelete; p != nil {
		delete(m.pending[p.Destination], p.Send)
		if len(m.pending[p.Destination]) == 0 {
			delete(m.pending, p.Destination)
		}
	}
	if p := d.PendingPut; p != nil {
		if m.pending[p.Destination] == nil {
			m.pending[p.Destination] = make(map[Hash]Pending)
		}
		m.pending[p.Destination][p.Send] = *p
	}
	for _, c := range d.State {
		if c.Value == nil {
			delete(m.state[c.Table], c.Key)
			if len(m.state[c.Table]) == 0 {
				delete(m.state, c.Table)
			}
			continue
		}
		if m.state[c.Table] == nil {
			m.state[c.Table] = make(map[string][]byte)
		}
		m.state[c.Table][c.Key] = bytes.Clone(c.Value)
	}
}
