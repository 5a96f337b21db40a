package govnet

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/internal/pebblekv"
	"github.com/latticenet/lattice/internal/run/pebblelog"
	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/statechain"
)

// The store's tables, each a one-byte key prefix.
const (
	pBlock    byte = 'b' // index (u64) → block (binary form)
	pConflict byte = 'c' // index (u64) || hash → conflict record (JSON)
	pReject   byte = 'r' // hash → nothing: a block the operator rejected
)

// store keeps the state chain in a Pebble database (DATA/statechain):
// every block by index, and the evidence of conflicts. Every write is
// synced before it returns.
type store struct {
	db      *pebble.DB
	network ledger.Hash
}

func openStore(dir string, fs vfs.FS, network ledger.Hash, log *slog.Logger) (*store, error) {
	db, err := pebblekv.Open(dir, &pebble.Options{FS: fs, Logger: pebblelog.New(log), FormatMajorVersion: pebble.FormatNewest})
	if err != nil {
		return nil, fmt.Errorf("govnet: open %s: %w", dir, err)
	}
	return &store{db: db, network: network}, nil
}

func (s *store) close() error { return s.db.Close() }

func blockKey(i uint64) []byte { return binary.BigEndian.AppendUint64([]byte{pBlock}, i) }

// blocks returns every stored block, in index order.
func (s *store) blocks() ([]*statechain.Block, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pBlock}, UpperBound: []byte{pBlock + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []*statechain.Block
	for it.First(); it.Valid(); it.Next() {
		b := new(statechain.Block)
		if err := b.UnmarshalBinary(it.Value(), s.network); err != nil {
			return nil, fmt.Errorf("govnet: stored block %d: %w", binary.BigEndian.Uint64(it.Key()[1:]), err)
		}
		if want := binary.BigEndian.Uint64(it.Key()[1:]); b.Index != want || want != uint64(len(out)) {
			return nil, fmt.Errorf("govnet: stored block at %d has index %d after %d blocks", want, b.Index, len(out))
		}
		out = append(out, b)
	}
	return out, it.Error()
}

// put stores b at its index, synced.
func (s *store) put(b *statechain.Block) error {
	data, err := b.MarshalBinary()
	if err != nil {
		return err
	}
	return s.db.Set(blockKey(b.Index), data, pebble.Sync)
}

// truncate removes the blocks from index from on, synced.
func (s *store) truncate(from uint64) error {
	return s.db.DeleteRange(blockKey(from), []byte{pBlock + 1}, pebble.Sync)
}

// Conflict is the evidence that the keyholders signed two different
// blocks for one index of the state chain: both blocks, valid under the
// keyset in force before that index.
type Conflict struct {
	Index      uint64               `json:"index"`
	Blocks     [2]*statechain.Block `json:"blocks"` // the one held first, then the other
	DetectedAt time.Time            `json:"detected_at"`
	// Resolved says an operator's --statechain-reject named one of them.
	Resolved bool `json:"resolved"`
}

func conflictKey(c *Conflict) []byte {
	k := binary.BigEndian.AppendUint64([]byte{pConflict}, c.Index)
	return append(k, c.Blocks[1].Hash[:]...)
}

func (s *store) putConflict(c *Conflict) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return s.db.Set(conflictKey(c), data, pebble.Sync)
}

func (s *store) conflicts() ([]*Conflict, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pConflict}, UpperBound: []byte{pConflict + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []*Conflict
	for it.First(); it.Valid(); it.Next() {
		c := new(Conflict)
		if err := json.Unmarshal(it.Value(), c); err != nil || c.Blocks[0] == nil || c.Blocks[1] == nil {
			return nil, errors.Join(fmt.Errorf("govnet: a stored conflict record is damaged"), err)
		}
		out = append(out, c)
	}
	return out, it.Error()
}

// putRejects records hashes the operator rejected, synced: a rejection
// outlives the flag that named it.
func (s *store) putRejects(hashes []ledger.Hash) error {
	if len(hashes) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, h := range hashes {
		if err := b.Set(append([]byte{pReject}, h[:]...), nil, nil); err != nil {
			return err
		}
	}
	return b.Commit(pebble.Sync)
}

// rejects returns every hash the operator ever rejected.
func (s *store) rejects() ([]ledger.Hash, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pReject}, UpperBound: []byte{pReject + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []ledger.Hash
	for it.First(); it.Valid(); it.Next() {
		var h ledger.Hash
		copy(h[:], it.Key()[1:])
		out = append(out, h)
	}
	return out, it.Error()
}
