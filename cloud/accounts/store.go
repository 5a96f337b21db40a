// Package accounts keeps the cloud platform's accounts and their API keys,
// in a Pebble database of their own (DATA/accounts). Every service of the
// platform (storage, DNS, CDN, compute) authenticates its callers here.
//
// A key's secret is never stored, only its SHA-256, which is enough
// because secrets carry 238 bits of randomness. Every change is synced
// before it is acknowledged; after a failed write the store refuses every
// later one (ErrUnavailable) and goes on authenticating.
package accounts

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/cloud/storage/storagenames"
	"github.com/latticenet/lattice/internal/pebblekv"
	"github.com/latticenet/lattice/internal/run/failstop"
	"github.com/latticenet/lattice/internal/run/pebblelog"
)

// Errors callers tell apart.
var (
	ErrNotFound     = errors.New("accounts: not found")
	ErrUnauthorized = errors.New("accounts: unknown or revoked API key")
	ErrInvalid      = errors.New("accounts: invalid")
	// ErrUnavailable is returned by every write once a write to the disk
	// has failed; authentication goes on.
	ErrUnavailable = errors.New("accounts: a write to the disk failed (full disk?); no changes until restarted")
)

// KeyPrefix opens every API key.
const KeyPrefix = "lat_live_"

// Key is an API key's record.
type Key struct {
	ID        string    `json:"id"`
	Account   string    `json:"account"`
	Name      string    `json:"name"`
	Admin     bool      `json:"admin"`
	Prefix    string    `json:"prefix"` // the first characters, to tell keys apart
	CreatedAt time.Time `json:"created_at"`
	Revoked   bool      `json:"revoked"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
}

// Account is an account's record. An account comes into being with its
// first API key.
type Account struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// The tables. Each prefix is declared here once; a test checks that no
// prefix begins another.
const (
	tableKeyByHash = "key/"     // key/ ‖ sha256(secret) → Key
	tableKeyByID   = "keyid/"   // keyid/ ‖ id → sha256(secret)
	tableAccount   = "account/" // account/ ‖ name → Account
	tableMeta      = "meta/"    // meta/ ‖ name → the store's own facts
)

// Keys of tableMeta.
const (
	metaAdminCreated = tableMeta + "admin-created" // the first admin key's id, once its secret is saved
	metaImported     = tableMeta + "imported"      // set by Import
)

// Options configure a store.
type Options struct {
	FS     vfs.FS // default: the OS's
	Logger *slog.Logger
}

// Store is the accounts database. It is safe for concurrent use.
type Store struct {
	db      *pebble.DB
	mu      sync.Mutex // serialises writes
	adminMu sync.Mutex // serialises EnsureAdmin, which takes mu itself
	w       *failstop.Writer
}

// Open opens or creates the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	db, err := pebblekv.Open(dir, &pebble.Options{FS: opts.FS, Logger: pebblelog.New(opts.Logger), FormatMajorVersion: pebble.FormatNewest})
	if err != nil {
		return nil, fmt.Errorf("accounts: open %s: %w", dir, err)
	}
	return &Store{db: db, w: failstop.New(ErrUnavailable, opts.Logger,
		"accounts: a write failed; refusing account and key changes until restarted, still authenticating")}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// CreateKey makes a new API key for account, creating the account if it
// is new, and returns the record and the secret (shown once).
func (s *Store) CreateKey(account, name string, admin bool, now time.Time) (Key, string, error) {
	if err := storagenames.ValidAccountName(account); err != nil {
		return Key{}, "", fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if utf8.RuneCountInString(name) > 100 { // characters, as the API counts them
		return Key{}, "", fmt.Errorf("%w: key name is longer than 100 characters", ErrInvalid)
	}
	secret := KeyPrefix + randomBase62(40)
	key := Key{ID: "key_" + randomBase62(16), Account: account, Name: name, Admin: admin,
		Prefix: secret[:len(KeyPrefix)+4], CreatedAt: now.UTC()}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	var acct Account
	if err := s.getJSON(tableAccount+account, &acct); errors.Is(err, ErrNotFound) {
		failstop.SetJSON(b, tableAccount+account, Account{Name: account, CreatedAt: now.UTC()})
	} else if err != nil {
		return Key{}, "", err
	}
	h := hashSecret(secret)
	failstop.SetJSON(b, tableKeyByHash+string(h), key)
	b.Set([]byte(tableKeyByID+key.ID), h, nil)
	if err := s.w.Commit(b); err != nil {
		return Key{}, "", err
	}
	return key, secret, nil
}

// Account returns an account's record; ErrNotFound when there is none.
func (s *Store) Account(name string) (Account, error) {
	var a Account
	err := s.getJSON(tableAccount+name, &a)
	return a, err
}

// KeyByID returns an API key's record, revoked or not.
func (s *Store) KeyByID(id string) (Key, error) {
	key, _, err := s.keyByID(id)
	return key, err
}

// keyByID returns an API key's record and the hash it is stored under.
func (s *Store) keyByID(id string) (Key, []byte, error) {
	data, closer, err := s.db.Get([]byte(tableKeyByID + id))
	if errors.Is(err, pebble.ErrNotFound) {
		return Key{}, nil, ErrNotFound
	}
	if err != nil {
		return Key{}, nil, fmt.Errorf("accounts: %w", err)
	}
	h := bytes.Clone(data)
	closer.Close()
	var key Key
	if err := s.getJSON(tableKeyByHash+string(h), &key); err != nil {
		return Key{}, nil, err
	}
	return key, h, nil
}

// Authenticate returns the live key whose secret this is.
func (s *Store) Authenticate(secret string) (Key, error) {
	var key Key
	if err := s.getJSON(tableKeyByHash+string(hashSecret(secret)), &key); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Key{}, ErrUnauthorized
		}
		return Key{}, err
	}
	if key.Revoked {
		return Key{}, ErrUnauthorized
	}
	return key, nil
}

// Keys returns every key, or only account's when account is not "", newest
// first.
func (s *Store) Keys(account string) ([]Key, error) {
	var keys []Key
	err := s.scan(tableKeyByHash, func(_, v []byte) error {
		var key Key
		if err := json.Unmarshal(v, &key); err != nil {
			return fmt.Errorf("accounts: %w", err)
		}
		if account == "" || key.Account == account {
			keys = append(keys, key)
		}
		return nil
	})
	sort.Slice(keys, func(i, j int) bool {
		if !keys[i].CreatedAt.Equal(keys[j].CreatedAt) {
			return keys[i].CreatedAt.After(keys[j].CreatedAt)
		}
		return keys[i].ID < keys[j].ID
	})
	return keys, err
}

// RevokeKey revokes a key at once: the next request with it fails.
func (s *Store) RevokeKey(id string, now time.Time) (Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, h, err := s.keyByID(id)
	if err != nil {
		return Key{}, err
	}
	if !key.Revoked {
		key.Revoked, key.RevokedAt = true, now.UTC()
		b := s.db.NewBatch()
		defer b.Close()
		failstop.SetJSON(b, tableKeyByHash+string(h), key)
		if err := s.w.Commit(b); err != nil {
			return Key{}, err
		}
	}
	return key, nil
}

// EnsureAdmin creates the first admin key, for account "admin", if the
// store has never had one, and hands its secret to persist (which writes it
// where the operator will find it) before recording that it exists; if
// persist fails the key is revoked and the next start tries again. It
// returns the secret only when it creates it.
func (s *Store) EnsureAdmin(now time.Time, persist func(secret string) error) (Key, string, error) {
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	if _, closer, err := s.db.Get([]byte(metaAdminCreated)); err == nil {
		closer.Close()
		return Key{}, "", nil
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return Key{}, "", fmt.Errorf("accounts: %w", err)
	}
	// Without the marker, an admin key can only come from a first start
	// that crashed before recording it; its secret may have been shown
	// but was never saved, so it is revoked.
	stale, err := s.Keys("admin")
	if err != nil {
		return Key{}, "", err
	}
	for _, old := range stale {
		if old.Admin && !old.Revoked {
			if _, err := s.RevokeKey(old.ID, now); err != nil {
				return Key{}, "", err
			}
		}
	}
	key, secret, err := s.CreateKey("admin", "admin", true, now)
	if err != nil {
		return Key{}, "", err
	}
	if err := persist(secret); err != nil {
		if _, rerr := s.RevokeKey(key.ID, now); rerr != nil {
			return Key{}, "", errors.Join(err, rerr)
		}
		return Key{}, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	b.Set([]byte(metaAdminCreated), []byte(key.ID), nil)
	if err := s.w.Commit(b); err != nil {
		return Key{}, "", err
	}
	return key, secret, nil
}

func (s *Store) getJSON(key string, v any) error {
	data, closer, err := s.db.Get([]byte(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("accounts: %w", err)
	}
	defer closer.Close()
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("accounts: %s: %w", key, err)
	}
	return nil
}

// scan calls fn for every row of table, in key order.
func (s *Store) scan(table string, fn func(k, v []byte) error) error {
	it, err := s.db.NewIter(pebblekv.Prefix([]byte(table)))
	if err != nil {
		return fmt.Errorf("accounts: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randomBase62 returns n characters drawn uniformly from base62.
func randomBase62(n int) string {
	out := make([]byte, n)
	max := big.NewInt(int64(len(base62)))
	for i := range out {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic("accounts: no randomness: " + err.Error())
		}
		out[i] = base62[v.Int64()]
	}
	return string(out)
}

// Import moves in the accounts and keys an older version kept in the
// object store (cloudstore.Legacy): key records (JSON) by the SHA-256 of
// their secret, account records (JSON), and the first admin key's id when
// its secret was saved. It runs once: after the first Import, later calls
// do nothing, so the caller may drop the old copy once Import returns and
// call it again after a crash in between.
func (s *Store) Import(keys map[string][]byte, accounts [][]byte, adminKeyID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, closer, err := s.db.Get([]byte(metaImported)); err == nil {
		closer.Close()
		return nil
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("accounts: %w", err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	for h, data := range keys {
		var key Key
		if err := json.Unmarshal(data, &key); err != nil || key.ID == "" || len(h) != sha256.Size {
			return fmt.Errorf("accounts: import: a key record %q: %v", data, err)
		}
		failstop.SetJSON(b, tableKeyByHash+h, key)
		b.Set([]byte(tableKeyByID+key.ID), []byte(h), nil)
	}
	for _, data := range accounts {
		var a Account
		if err := json.Unmarshal(data, &a); err != nil || a.Name == "" {
			return fmt.Errorf("accounts: import: an account record %q: %v", data, err)
		}
		failstop.SetJSON(b, tableAccount+a.Name, a)
	}
	if adminKeyID != "" {
		b.Set([]byte(metaAdminCreated), []byte(adminKeyID), nil)
	}
	b.Set([]byte(metaImported), []byte(time.Now().UTC().Format(time.RFC3339)), nil)
	return s.w.Commit(b)
}
