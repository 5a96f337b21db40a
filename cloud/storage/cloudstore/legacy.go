package cloudstore

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Accounts and API keys lived in this store until they moved to a store of
// their own (package accounts). These are their old tables, read once at
// the first start of a newer version, to be moved, then dropped.
const (
	tLegacyKeyByHash = 'k'              // k | sha256(secret) -> the key record (JSON)
	tLegacyKeyByID   = 'i'              // i | key id -> sha256(secret)
	tLegacyAccount   = 'a'              // a | name -> the account record (JSON)
	legacyAdminKey   = "madmin-created" // -> the first admin key's id, once its secret was saved
)

// Legacy is what this store still holds of accounts and API keys.
type Legacy struct {
	Keys       map[string][]byte // key records (JSON) by the SHA-256 of their secret
	Accounts   [][]byte          // account records (JSON)
	AdminKeyID string            // the first admin key's id, "" when none was saved
}

// Legacy reads the old account tables.
func (s *Store) Legacy() (Legacy, error) {
	l := Legacy{Keys: map[string][]byte{}}
	err := s.scan([]byte{tLegacyKeyByHash}, func(k, v []byte) error {
		l.Keys[string(k[1:])] = append([]byte(nil), v...)
		return nil
	})
	if err == nil {
		err = s.scan([]byte{tLegacyAccount}, func(_, v []byte) error {
			l.Accounts = append(l.Accounts, append([]byte(nil), v...))
			return nil
		})
	}
	if err != nil {
		return Legacy{}, err
	}
	data, closer, err := s.db.Get([]byte(legacyAdminKey))
	switch {
	case err == nil:
		l.AdminKeyID = string(data)
		closer.Close()
	case !errors.Is(err, pebble.ErrNotFound):
		return Legacy{}, fmt.Errorf("cloudstore: %w", err)
	}
	return l, nil
}

// DropLegacy deletes the old account tables, once their rows are safe in
// the accounts store.
func (s *Store) DropLegacy() error {
	return s.durable(func() error {
		b := s.db.NewBatch()
		defer b.Close()
		for _, t := range []byte{tLegacyKeyByHash, tLegacyKeyByID, tLegacyAccount} {
			if err := b.DeleteRange([]byte{t}, []byte{t + 1}, nil); err != nil {
				return err
			}
		}
		if err := b.Delete([]byte(legacyAdminKey), nil); err != nil {
			return err
		}
		return b.Commit(pebble.Sync)
	})
}
