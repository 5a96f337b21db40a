package kms

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Local is the built-in key service: keys kept in a Pebble database (the
// platform's metadata database, under one key prefix), their material
// sealed under a master key the operator provides, and held opened in
// memory while the service runs. Every change is synced before it is
// answered. Keys are never deleted: an object sealed under a deleted key
// could never be read again.
type Local struct {
	db       *pebble.DB
	prefix   byte
	master   cipher.AEAD
	masterFP string
	resealed int // keys OpenLocal sealed again under master

	mu     sync.Mutex
	byID   map[string]*entry
	byName map[string]map[string]string // account -> name -> id
}

type entry struct {
	rec      record
	material [][]byte // opened, by version - 1
}

// record is a key as stored.
type record struct {
	Key
	Master   string   `json:"master"`   // Fingerprint of the master key Material is sealed under
	Material [][]byte `json:"material"` // sealMaterial of each version, oldest first
}

// OpenLocal opens the keys stored in db under prefix. master seals them;
// previous, when not nil, is the master key being rotated out: keys still
// sealed under it are sealed again under master (in one synced batch)
// before OpenLocal returns. A key sealed under neither is an error: the
// operator gave the wrong master key.
func OpenLocal(db *pebble.DB, prefix byte, master, previous []byte) (*Local, error) {
	aead, err := gcm(master)
	if err != nil {
		return nil, fmt.Errorf("kms: master key: %w", err)
	}
	l := &Local{db: db, prefix: prefix, master: aead, masterFP: Fingerprint(master),
		byID: map[string]*entry{}, byName: map[string]map[string]string{}}
	var prev cipher.AEAD
	var prevFP string
	if previous != nil {
		if prev, err = gcm(previous); err != nil {
			return nil, fmt.Errorf("kms: previous master key: %w", err)
		}
		prevFP = Fingerprint(previous)
	}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}})
	if err != nil {
		return nil, fmt.Errorf("kms: %w", err)
	}
	var rewrap []*entry
	for it.First(); it.Valid(); it.Next() {
		var rec record
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			it.Close()
			return nil, fmt.Errorf("kms: corrupt key record %q: %w", it.Key(), err)
		}
		with := aead
		switch rec.Master {
		case l.masterFP:
		case prevFP:
			with = prev
		default:
			it.Close()
			return nil, fmt.Errorf("%w: key %s (%s of account %s) is sealed under master key %s; this service was given %s",
				ErrMasterKey, rec.ID, rec.Name, rec.Account, rec.Master, l.masterFP)
		}
		e := &entry{rec: rec}
		for i, sealed := range rec.Material {
			m, err := openMaterial(with, rec.ID, i+1, sealed)
			if err != nil {
				it.Close()
				return nil, fmt.Errorf("%w: key %s, version %d does not open (altered?)", err, rec.ID, i+1)
			}
			e.material = append(e.material, m)
		}
		if with != aead {
			rewrap = append(rewrap, e)
		}
		l.index(e)
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("kms: %w", err)
	}
	if len(rewrap) > 0 {
		b := db.NewBatch()
		defer b.Close()
		for _, e := range rewrap {
			next := e.rec
			next.Master, next.Material = l.masterFP, nil
			for i, m := range e.material {
				next.Material = append(next.Material, sealMaterial(aead, next.ID, i+1, m))
			}
			if err := l.put(b, &next); err != nil {
				return nil, err
			}
			e.rec = next
		}
		if err := b.Commit(pebble.Sync); err != nil {
			return nil, fmt.Errorf("kms: sealing keys under the new master key: %w", err)
		}
		l.resealed = len(rewrap)
	}
	return l, nil
}

// MasterFingerprint is Fingerprint of the master key in use.
func (l *Local) MasterFingerprint() string { return l.masterFP }

// Resealed is how many keys OpenLocal found sealed under the previous
// master key and sealed again under the new one.
func (l *Local) Resealed() int { return l.resealed }

func (l *Local) index(e *entry) {
	l.byID[e.rec.ID] = e
	names := l.byName[e.rec.Account]
	if names == nil {
		names = map[string]string{}
		l.byName[e.rec.Account] = names
	}
	names[e.rec.Name] = e.rec.ID
}

func (l *Local) put(b *pebble.Batch, rec *record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return b.Set(append([]byte{l.prefix}, rec.ID...), data, nil)
}

// save writes rec durably, then makes it the service's.
func (l *Local) save(rec record, material [][]byte) (Key, error) {
	b := l.db.NewBatch()
	defer b.Close()
	if err := l.put(b, &rec); err != nil {
		return Key{}, err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return Key{}, fmt.Errorf("kms: %w", err)
	}
	l.index(&entry{rec: rec, material: material})
	return rec.Key, nil
}

// create makes a key; l.mu is held.
func (l *Local) create(account, name, description string, managed bool) (Key, error) {
	if _, ok := l.byName[account][name]; ok {
		return Key{}, fmt.Errorf("%w: %q", ErrExists, name)
	}
	id := newID()
	m := make([]byte, materialSize)
	rand.Read(m)
	rec := record{Key: Key{ID: id, Account: account, Name: name, Description: description, Enabled: true, Versions: 1,
		CreatedAt: time.Now().UTC().Truncate(time.Second), Managed: managed},
		Master: l.masterFP, Material: [][]byte{sealMaterial(l.master, id, 1, m)}}
	return l.save(rec, [][]byte{m})
}

// MaxDescription bounds a key's description, as AWS's 8,192 characters.
const MaxDescription = 8192

// Create makes a key named name in account.
func (l *Local) Create(_ context.Context, account, name, description string) (Key, error) {
	if err := ValidName(name); err != nil {
		return Key{}, err
	}
	if len(description) > MaxDescription {
		return Key{}, fmt.Errorf("kms: a description is at most %d bytes", MaxDescription)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.byName[account]); n >= MaxKeysPerAccount {
		return Key{}, fmt.Errorf("%w: the account has %d keys, the most it may have (keys are never deleted)", ErrLimit, n)
	}
	return l.create(account, name, description, false)
}

// Limits of the key service: keys are held in memory and never deleted,
// and a key's record (every version's sealed material) is rewritten at
// each change. The default key (aws/s3) is made when needed, past the
// limit too.
const (
	MaxKeysPerAccount = 1000
	MaxVersions       = 100
)

// List returns account's keys in name order.
func (l *Local) List(_ context.Context, account string) []Key {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Key
	for _, id := range l.byName[account] {
		out = append(out, l.byID[id].rec.Key)
	}
	slices.SortFunc(out, func(a, b Key) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// lookup finds account's key ref (not the default); l.mu is held.
func (l *Local) lookup(account, ref string) (*entry, error) {
	id, name := ParseRef(ref)
	if name != "" {
		id = l.byName[account][name]
	}
	e := l.byID[id]
	if e == nil || e.rec.Account != account {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, ref)
	}
	return e, nil
}

// Get returns account's key ref (an id, a name, alias/NAME or an ARN).
func (l *Local) Get(_ context.Context, account, ref string) (Key, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, err := l.lookup(account, ref)
	if err != nil {
		return Key{}, err
	}
	return e.rec.Key, nil
}

// SetEnabled enables or disables account's key ref. While a key is
// disabled, nothing sealed under it opens and nothing new is sealed.
func (l *Local) SetEnabled(_ context.Context, account, ref string, enabled bool) (Key, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, err := l.lookup(account, ref)
	if err != nil {
		return Key{}, err
	}
	if e.rec.Managed && !enabled {
		return Key{}, ErrManaged
	}
	if e.rec.Enabled == enabled {
		return e.rec.Key, nil
	}
	rec := e.rec
	rec.Enabled = enabled
	return l.save(rec, e.material)
}

// Rotate gives account's key ref new material: data keys sealed from now
// on use it; those sealed before still open with theirs.
func (l *Local) Rotate(_ context.Context, account, ref string) (Key, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, err := l.lookup(account, ref)
	if err != nil {
		return Key{}, err
	}
	if !e.rec.Enabled {
		return Key{}, fmt.Errorf("%w: %s", ErrDisabled, e.rec.Name)
	}
	if e.rec.Versions >= MaxVersions {
		return Key{}, fmt.Errorf("%w: %s has %d versions, the most a key may have: make a new key for new data", ErrLimit, e.rec.Name, e.rec.Versions)
	}
	m := make([]byte, materialSize)
	rand.Read(m)
	rec := e.rec
	rec.Versions++
	rec.RotatedAt = time.Now().UTC().Truncate(time.Second)
	rec.Material = append(slices.Clip(rec.Material), sealMaterial(l.master, rec.ID, rec.Versions, m))
	return l.save(rec, append(slices.Clip(e.material), m))
}

// Resolve implements Service.
func (l *Local) Resolve(_ context.Context, account, ref string) (Key, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ref == "" || ref == "alias/"+DefaultKeyName {
		if id, ok := l.byName[account][DefaultKeyName]; ok {
			return l.byID[id].rec.Key, nil
		}
		return l.create(account, DefaultKeyName, "Default key for SSE-KMS of this account's buckets", true)
	}
	e, err := l.lookup(account, ref)
	if err != nil {
		return Key{}, err
	}
	return e.rec.Key, nil
}

// usable returns key id's entry if it may seal and open; l.mu is held.
func (l *Local) usable(id string) (*entry, error) {
	e := l.byID[id]
	switch {
	case e == nil:
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	case !e.rec.Enabled:
		return nil, fmt.Errorf("%w: %s", ErrDisabled, id)
	}
	return e, nil
}

// GenerateDataKey implements Service.
func (l *Local) GenerateDataKey(_ context.Context, id string, encCtx []byte) ([]byte, []byte, error) {
	l.mu.Lock()
	e, err := l.usable(id)
	var m []byte
	var version int
	if err == nil {
		version = len(e.material)
		m = e.material[version-1]
	}
	l.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	plain := make([]byte, dataKeySize)
	rand.Read(plain)
	sealed, err := sealDataKey(m, id, version, plain, encCtx)
	if err != nil {
		return nil, nil, err
	}
	return plain, sealed, nil
}

// Decrypt implements Service.
func (l *Local) Decrypt(_ context.Context, id string, sealed, encCtx []byte) ([]byte, error) {
	version, err := sealedVersion(sealed)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	e, err := l.usable(id)
	var m []byte
	if err == nil {
		if version < 1 || version > len(e.material) {
			err = ErrInvalidCiphertext
		} else {
			m = e.material[version-1]
		}
	}
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return openDataKey(m, id, sealed, encCtx)
}

var _ Service = (*Local)(nil)

// Stored tells whether db holds keys under prefix: a service that has
// keys must not be given a new master key in place of a lost one.
func Stored(db *pebble.DB, prefix byte) (bool, error) {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}})
	if err != nil {
		return false, fmt.Errorf("kms: %w", err)
	}
	found := it.First()
	return found, it.Close()
}
