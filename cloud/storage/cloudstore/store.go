// Package cloudstore keeps the cloud platform's metadata in Pebble:
// accounts, API keys (only their hashes), buckets, objects, lifecycle rules,
// each bucket's activity log and its access metrics. Every write is fsync'd
// before it returns, except access metrics, which are gathered in memory
// and written every few seconds (see RecordAccess).
package cloudstore

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/latticenet/lattice/cloud/storage/kms"
	"github.com/latticenet/lattice/cloud/storage/s3acl"
	"github.com/latticenet/lattice/internal/pebblekv"
	"github.com/latticenet/lattice/internal/run/pebblelog"
)

// Errors callers tell apart.
var (
	ErrNotFound = errors.New("cloudstore: not found")
	ErrExists   = errors.New("cloudstore: already exists")
	ErrNotEmpty = errors.New("cloudstore: bucket not empty")
	// ErrPublicAccessBlocked: the bucket's Block Public Access settings
	// forbid the change (see UpdateBucket, SetBucketConfigChecked);
	// nothing was written.
	ErrPublicAccessBlocked = errors.New("cloudstore: blocked by the bucket's Block Public Access settings")
	// ErrACLGrantsOthers: the change would leave a bucket
	// BucketOwnerEnforced with an ACL granting others (UpdateBucket);
	// nothing was written.
	ErrACLGrantsOthers = errors.New("cloudstore: the bucket's ACL grants others, which BucketOwnerEnforced does not allow")
	// ErrQuota is a write past one of an account's limits
	// (MaxBucketsPerAccount, MaxS3KeysPerAccount).
	ErrQuota = errors.New("cloudstore: the account is at its limit")
)

// Bucket is a bucket's record.
type Bucket struct {
	Name      string    `json:"name"`
	Account   string    `json:"account"`
	Notes     string    `json:"notes"`
	Public    bool      `json:"is_public"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Objects   int64     `json:"object_count"` // current versions
	Bytes     int64     `json:"size_bytes"`   // of current versions
	// Versioning is the bucket's versioning state: "" (never versioned),
	// VersioningEnabled or VersioningSuspended. Versions and VersionBytes
	// count the versions that are not current (delete markers included)
	// and their bytes.
	Versioning string `json:"versioning,omitempty"`
	// Encryption is the bucket's default encryption of new objects:
	// SSES3, SSEKMS, SSEDSSE, or "" for none; with SSEKMS or SSEDSSE, EncryptionKey is the
	// key's id ("" for the owner's default key) and BucketKey the
	// configuration's BucketKeyEnabled.
	Encryption    string `json:"encryption,omitempty"`
	EncryptionKey string `json:"encryption_key,omitempty"`
	BucketKey     bool   `json:"bucket_key,omitempty"`
	Versions      int64  `json:"version_count,omitempty"`
	VersionBytes  int64  `json:"version_bytes,omitempty"`
	// Ownership is the bucket's S3 Object Ownership: "" for
	// BucketOwnerEnforced (the default: ACLs disabled, the bucket owner
	// owns every object), OwnershipPreferred, OwnershipWriter, or
	// OwnershipNone once its ownership controls were deleted (objects
	// owned by their writers, as under ObjectWriter).
	Ownership string `json:"ownership,omitempty"`
	// ACL is the bucket ACL's grants besides its owner's FULL_CONTROL
	// and the AllUsers READ that Public stands for. It takes effect while
	// ACLs are enabled (Ownership not ""), and is empty under
	// BucketOwnerEnforced, which UpdateBucket keeps so.
	ACL []s3acl.Grant `json:"acl,omitempty"`
	// ObjectLock is the bucket's Object Lock configuration, nil when it
	// has none (objectlock.go). Once set it stays, and Versioning stays
	// Enabled.
	ObjectLock *ObjectLock `json:"object_lock,omitempty"`
}

// Object Ownership settings other than BucketOwnerEnforced ("").
const (
	OwnershipPreferred = "BucketOwnerPreferred"
	OwnershipWriter    = "ObjectWriter"
	OwnershipNone      = "none"
)

// ACLsEnabled reports whether ACLs take effect in the bucket: its Object
// Ownership is not BucketOwnerEnforced.
func (b Bucket) ACLsEnabled() bool { return b.Ownership != "" }

// Per-account limits, so that no account fills the store for the others
// (docs/cloud-api.md, "Limits per account"). Buckets follow S3's default
// quota of general purpose buckets.
const (
	MaxBucketsPerAccount = 10000
	MaxS3KeysPerAccount  = 100
)

// Key prefixes of the Pebble tables.
const (
	tBucket = 'b' // b | name -> Bucket (bucket names are global, as in S3)
	tOwned  = 'o' // o | account | 0 | bucket name -> nothing (an account's buckets, in name order)
)

// Store is the metadata store. It is safe for concurrent use.
type Store struct {
	db      *pebble.DB
	mu      sync.Mutex  // serialises read-modify-write operations
	aead    cipher.AEAD // seals S3 secrets; set by OpenSecrets
	master  []byte      // the secret key, for DerivedKey; set by OpenSecrets
	kms     kms.Service // SSE-KMS's key service; set by OpenKMS or SetKMS
	fs      vfs.FS      // holds the body files: the OS's, or a test's
	blobDir string      // object bodies, in fs; set by OpenBlobs
	// pins counts the readers of body files that must outlive their last
	// reference for a while (parts being joined); under mu.
	pins map[string]int
	// unsynced counts the batches applied (seen by reads) whose fsync
	// their writer has not yet seen end: while it is not 0, a reference
	// count read may still be undone by a power loss (dropUnreferenced).
	unsynced int
	// doomed are body files nothing refers to, waiting for the writes in
	// flight to be durable before they are removed (dropUnreferenced).
	doomed []string
	// s3Cache maps access key ids to cachedS3Key.
	s3Cache sync.Map
	now     func() time.Time
	// maxEvents is MaxEvents; tests lower it.
	maxEvents int64

	meters    meters
	stopFlush chan struct{} // closed by Close
	flushed   chan struct{} // closed when the flusher has returned
	closeOnce sync.Once

	log     *slog.Logger
	failed  chan struct{} // closed by fail
	failure error         // set by fail before failed is closed
	failOne sync.Once
}

// ErrUnavailable is returned by every write once a write to the disk has
// failed (a full disk, an I/O error): the database may hold changes that
// are not durable, so the store takes no more writes until it is restarted
// on a disk that works. Reads go on. Nothing acknowledged was lost.
var ErrUnavailable = errors.New("cloudstore: a write to the disk failed (full disk?); the store is read-only until restarted")

// Err returns the failure that made the store read-only, or nil.
func (s *Store) Err() error {
	select {
	case <-s.failed:
		return s.failure
	default:
		return nil
	}
}

// fail makes the store read-only for good (until restarted) and returns
// the error writes answer from now on, which wraps ErrUnavailable.
func (s *Store) fail(cause error) error {
	s.failOne.Do(func() {
		s.failure = fmt.Errorf("%w: %v", ErrUnavailable, cause)
		s.log.Error("cloudstore: a write failed; taking no more writes, serving reads", "err", cause)
		close(s.failed)
	})
	return s.failure
}

// durable runs fn, which writes to the database, turning a failure of the
// write itself (an error, or the panic Pebble raises when its log cannot be
// written) into the store's failure. fn must not return rule errors.
func (s *Store) durable(fn func() error) (err error) {
	if err := s.Err(); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = s.fail(fmt.Errorf("%v", p))
		}
	}()
	if err := fn(); err != nil {
		return s.fail(err)
	}
	return nil
}

// Open opens or creates the store in dir.
func Open(dir string, log *slog.Logger) (*Store, error) { return open(dir, log, nil) }

// OpenDir opens or creates the whole store of a platform data directory,
// laid out as docs/operations.md describes: the metadata database in
// dir/meta, the secret key in dir/secret.key and object bodies under
// dir/objects (cleaned of what interrupted uploads left).
func OpenDir(dir string, log *slog.Logger) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cloudstore: %w", err)
	}
	s, err := Open(filepath.Join(dir, "meta"), log)
	if err != nil {
		return nil, err
	}
	if err := s.OpenSecrets(filepath.Join(dir, "secret.key")); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.OpenBlobs(filepath.Join(dir, "objects")); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// open is Open on a file system of Pebble's (nil: the OS's), which then
// holds the body files too; tests use a crashable in-memory one to
// simulate power loss.
func open(dir string, log *slog.Logger, fs vfs.FS) (*Store, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// A block cache big enough for the metadata of many objects: every
	// request reads a bucket and an object record.
	cache := pebble.NewCache(128 << 20)
	defer cache.Unref()
	db, err := pebblekv.Open(dir, &pebble.Options{Logger: pebblelog.New(log), FormatMajorVersion: pebble.FormatNewest, FS: fs, Cache: cache})
	if err != nil {
		return nil, fmt.Errorf("cloudstore: open %s: %w", dir, err)
	}
	bodies := fs
	if bodies == nil {
		// Pebble wraps the OS's file system in its disk-health checks;
		// body files do without them, as they always have.
		bodies = vfs.Default
	}
	s := &Store{db: db, fs: bodies, now: time.Now, pins: map[string]int{}, maxEvents: MaxEvents, stopFlush: make(chan struct{}), flushed: make(chan struct{}),
		log: log, failed: make(chan struct{})}
	go s.runFlusher(log)
	return s, nil
}

// SetClock makes the store read the time from now where a method takes no
// timestamp (DeleteObject, DeleteRule: the time of their events). Call it
// before the store is used.
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// Close writes the access metrics gathered in memory and closes the
// database.
func (s *Store) Close() error {
	var ferr error
	s.closeOnce.Do(func() {
		close(s.stopFlush)
		<-s.flushed
		if s.Err() == nil {
			ferr = s.flushMetrics()
		}
	})
	return errors.Join(ferr, s.db.Close())
}

func k(table byte, parts ...string) []byte {
	b := []byte{table}
	for i, p := range parts {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, p...)
	}
	return b
}

func (s *Store) getJSON(key []byte, v any) error { return getJSONFrom(s.db, key, v) }

func getJSONFrom(r pebble.Reader, key []byte, v any) error {
	data, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("cloudstore: %w", err)
	}
	defer closer.Close()
	return json.Unmarshal(data, v)
}

func setJSON(b *pebble.Batch, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Set(key, data, nil)
}

func (s *Store) commit(b *pebble.Batch) error {
	return s.durable(func() error { return b.Commit(pebble.Sync) })
}

// tx is what a write made under s.mu leaves for after the lock: the
// fsync of the batches it applied, and the body files it let go.
type tx struct {
	applied []*pebble.Batch
	drop    []string
}

// apply applies b where reads see it and starts its fsync; write waits for
// the fsync once s.mu is released. t owns b from then on.
func (s *Store) apply(t *tx, b *pebble.Batch) error {
	if err := s.durable(func() error { return s.db.ApplyNoSyncWait(b, pebble.Sync) }); err != nil {
		return err
	}
	s.unsynced++
	t.applied = append(t.applied, b)
	return nil
}

// closeUnapplied closes b unless it was applied (deferred by builders).
func (t *tx) closeUnapplied(b *pebble.Batch) {
	if !slices.Contains(t.applied, b) {
		b.Close()
	}
}

// dropLater removes a body file once the write is durable, if nothing
// refers to it then.
func (t *tx) dropLater(id string) {
	if id != "" {
		t.drop = append(t.drop, id)
	}
}

// write runs fn with s.mu held, then, with s.mu released, waits for the
// fsync of what fn applied, and only then answers: writers that overlap
// share one fsync (group commit) instead of queueing one fsync each behind
// the lock. Reads may see a write during its fsync; nobody is told it is
// done before it is durable. Body files fn let go are removed after the
// fsync, so that a crash can never leave a record naming a removed file.
func (s *Store) write(fn func(t *tx) error) error {
	if err := s.Err(); err != nil {
		return err
	}
	var t tx
	err := s.locked(func() error { return fn(&t) })
	for _, b := range t.applied {
		if serr := s.durable(b.SyncWait); serr != nil && err == nil {
			err = serr
		}
		b.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unsynced -= len(t.applied)
	if err != nil {
		return err
	}
	s.dropUnreferenced(t.drop...)
	return nil
}

// locked runs fn with s.mu held, and releases it whatever fn does: a
// panic (Pebble panics when it cannot write its log) fails the store
// rather than leaving every later request waiting for the lock.
func (s *Store) locked(fn func() error) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			err = s.fail(fmt.Errorf("%v", p))
		}
	}()
	return fn()
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func randomBase62(n int) string { return randomFrom(base62, n) }

// randomFrom returns n characters drawn uniformly from alphabet.
func randomFrom(alphabet string, n int) string {
	out := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range out {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic("cloudstore: no randomness: " + err.Error())
		}
		out[i] = alphabet[v.Int64()]
	}
	return string(out)
}

// CreateBucket creates a bucket owned by account. Bucket names are global:
// ErrExists whoever owns the name.
func (s *Store) CreateBucket(account, name, notes string, now time.Time) (Bucket, error) {
	return s.CreateBucketWith(account, name, notes, now, BucketOptions{})
}

// CreatePublicBucket is CreateBucket of a bucket public from the start
// (S3's CreateBucket with the canned ACL public-read), in one write: a
// new bucket has no Block Public Access settings of its own yet, and none
// can be put between its making and its being made public; its owner's
// account-wide settings are checked under the same lock
// (ErrPublicAccessBlocked).
func (s *Store) CreatePublicBucket(account, name, notes string, now time.Time) (Bucket, error) {
	return s.CreateBucketWith(account, name, notes, now, BucketOptions{Public: true})
}

// BucketOptions are what a new bucket may be made with besides its name
// (Bucket's fields of the same names).
type BucketOptions struct {
	Public    bool
	Ownership string
	ACL       []s3acl.Grant
	// ObjectLock makes the bucket with Object Lock (and so with
	// versioning Enabled), as S3's x-amz-bucket-object-lock-enabled.
	ObjectLock bool
}

// CreateBucketWith is CreateBucket of a bucket made as o says, in one
// write. An ACL granting others under BucketOwnerEnforced is
// ErrACLGrantsOthers; a public bucket or ACL while the account's own
// Block Public Access settings block public ACLs, ErrPublicAccessBlocked.
func (s *Store) CreateBucketWith(account, name, notes string, now time.Time, o BucketOptions) (Bucket, error) {
	if o.Ownership == "" && s3acl.GrantsOthers(o.ACL, account) {
		return Bucket{}, ErrACLGrantsOthers
	}
	public := o.Public
	s.mu.Lock()
	defer s.mu.Unlock()
	var old Bucket
	if err := s.getJSON(k(tBucket, name), &old); err == nil {
		return Bucket{}, ErrExists
	} else if !errors.Is(err, ErrNotFound) {
		return Bucket{}, err
	}
	if n, err := pebblekv.Count(s.db, append(k(tOwned, account), 0), MaxBucketsPerAccount); err != nil {
		return Bucket{}, err
	} else if n >= MaxBucketsPerAccount {
		return Bucket{}, fmt.Errorf("%w: it has %d buckets, the most an account may have", ErrQuota, n)
	}
	if public || s3acl.Public(o.ACL) {
		bpa, err := readPublicAccess(s.db, k(tAccountConfig, account, string(ConfigPublicAccessBlock)), "account "+account)
		if err != nil {
			return Bucket{}, err
		}
		if bpa != nil && bpa.BlockPublicAcls {
			return Bucket{}, fmt.Errorf("%w: the account's BlockPublicAcls", ErrPublicAccessBlocked)
		}
	}
	bk := Bucket{Name: name, Account: account, Notes: notes, Public: public, CreatedAt: now.UTC(), UpdatedAt: now.UTC(),
		Ownership: o.Ownership, ACL: o.ACL}
	if o.ObjectLock {
		bk.Versioning, bk.ObjectLock = VersioningEnabled, &ObjectLock{}
	}
	b := s.db.NewBatch()
	defer b.Close()
	if err := setJSON(b, k(tBucket, name), bk); err != nil {
		return Bucket{}, err
	}
	b.Set(k(tOwned, account, name), nil, nil)
	evs := []Event{{Type: EventBucketCreated, Time: now}}
	if public {
		evs = append(evs, Event{Type: EventBucketPublic, Time: now})
	}
	if err := s.logEventsLocked(b, name, evs...); err != nil {
		return Bucket{}, err
	}
	return bk, s.commit(b)
}

// PublicBucket returns the bucket called name, whoever owns it, if it is
// public and its Block Public Access settings do not ignore that
// (IgnorePublicAcls); a private or missing bucket is ErrNotFound alike, so that
// anonymous callers never learn which names exist.
func (s *Store) PublicBucket(name string) (Bucket, error) {
	bk, b, err := s.bucketPublicAccess(name)
	switch {
	case err != nil:
		return Bucket{}, err
	case !bk.Public:
		return Bucket{}, ErrNotFound
	case b != nil && b.IgnorePublicAcls:
		return Bucket{}, ErrNotFound // its settings, or its owner's, ignore the toggle
	}
	return bk, nil
}

// ServedPublicly reports whether the public toggle of bk, a bucket
// PublicBucket returned, serves obj to everyone (anonymous downloads, and
// the CDN and other accounts reading it through the toggle). The toggle
// is its owner's grant, so it covers the owner's objects alone: an object
// another account owns (the bucket's ACLs enabled) is served only when
// its own ACL grants everyone READ, as at the S3 endpoint. And an object
// encrypted with a key of the key service (SSE-KMS) never is: the key
// service opens data for those who sign as its owner.
func ServedPublicly(bk Bucket, obj Object) bool {
	switch {
	case obj.Encryption.UsesKMS():
		return false
	case !bk.ACLsEnabled() || obj.Owner == "" || obj.Owner == bk.Account:
		return true
	}
	return s3acl.Allows(obj.ACL, "", s3acl.Read)
}

// OwnerMayRead reports whether bk's owner may read obj where no S3 ACL
// evaluation runs (the REST API's downloads, ZIP archives and copies, a
// CDN deployment of the bucket): its own objects always, and an object
// another account owns (the bucket's ACLs enabled) only when that
// object's ACL grants the bucket's owner READ (bucket-owner-read,
// bucket-owner-full-control, a grant naming it, or a grant to all users
// or to every authenticated account),
// as at the S3 endpoint. The owner may still delete or overwrite it.
func OwnerMayRead(bk Bucket, obj Object) bool {
	if !bk.ACLsEnabled() || obj.Owner == "" || obj.Owner == bk.Account {
		return true
	}
	return s3acl.Allows(obj.ACL, bk.Account, s3acl.Read)
}

// ErrNotGranted is OwnerMayRead's refusal, as an error.
var ErrNotGranted = errors.New("cloudstore: the object is owned by another account, and its ACL does not grant the bucket's owner READ")

// Bucket returns account's bucket; another account's bucket is
// ErrNotFound, exactly like a missing one.
func (s *Store) Bucket(account, name string) (Bucket, error) {
	var bk Bucket
	if err := s.getJSON(k(tBucket, name), &bk); err != nil {
		return Bucket{}, err
	}
	if bk.Account != account {
		return Bucket{}, ErrNotFound
	}
	return bk, nil
}

// Buckets returns account's buckets in name order.
func (s *Store) Buckets(account string) ([]Bucket, error) {
	var out []Bucket
	prefix := append(k(tOwned, account), 0)
	err := s.scan(prefix, func(key, _ []byte) error {
		bk, err := s.Bucket(account, string(key[len(prefix):]))
		if errors.Is(err, ErrNotFound) {
			return nil // deleted while we listed
		}
		if err != nil {
			return err
		}
		out = append(out, bk)
		return nil
	})
	return out, err
}

// UpdateBucket changes account's bucket with fn, atomically. A change of
// Notes or Public is logged as an event; fn must change nothing but them,
// Ownership and ACL. Making the bucket public (Public, or an ACL granting
// AllUsers or AuthenticatedUsers) while its Block Public Access settings
// block public ACLs is ErrPublicAccessBlocked, and an ACL granting others
// under BucketOwnerEnforced is ErrACLGrantsOthers, both checked under the
// same lock as the write, so that settings put meanwhile are never
// overtaken.
func (s *Store) UpdateBucket(account, name string, now time.Time, fn func(*Bucket)) (Bucket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	bk, err := s.Bucket(account, name)
	if err != nil {
		return Bucket{}, err
	}
	old := bk
	fn(&bk)
	if !bk.ACLsEnabled() && s3acl.GrantsOthers(bk.ACL, bk.Account) {
		return Bucket{}, ErrACLGrantsOthers
	}
	if bk.Public && !old.Public || s3acl.Public(bk.ACL) && !s3acl.Public(old.ACL) {
		bpa, err := s.publicAccessNow(bk)
		if err != nil {
			return Bucket{}, err
		}
		if bpa != nil && bpa.BlockPublicAcls {
			return Bucket{}, fmt.Errorf("%w: BlockPublicAcls", ErrPublicAccessBlocked)
		}
	}
	bk.UpdatedAt = now.UTC()
	b := s.db.NewBatch()
	defer b.Close()
	if err := setJSON(b, k(tBucket, name), bk); err != nil {
		return Bucket{}, err
	}
	var evs []Event
	if bk.Notes != old.Notes {
		evs = append(evs, Event{Type: EventBucketUpdated, Time: now})
	}
	if bk.Public != old.Public {
		typ := EventBucketPrivate
		if bk.Public {
			typ = EventBucketPublic
		}
		evs = append(evs, Event{Type: typ, Time: now})
	}
	if len(evs) > 0 {
		if err := s.logEventsLocked(b, name, evs...); err != nil {
			return Bucket{}, err
		}
	}
	return bk, s.commit(b)
}

// DeleteBucket deletes account's bucket if it holds no objects.
func (s *Store) DeleteBucket(account, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	bk, err := s.Bucket(account, name)
	if err != nil {
		return err
	}
	if bk.Objects > 0 || bk.Versions > 0 {
		return ErrNotEmpty
	}
	b := s.db.NewBatch()
	defer b.Close()
	b.Delete(k(tBucket, name), nil)
	b.Delete(k(tOwned, account, name), nil)
	rules, err := s.rulesOf(name)
	if err != nil {
		return err
	}
	for _, r := range rules {
		b.Delete(k(tRule, name, r.ID), nil)
	}
	b.Delete(k(tBucketTags, name), nil)
	if err := deleteBucketConfigs(b, name); err != nil {
		return err
	}
	// Its log and metrics go with it: a bucket created later under the
	// name, perhaps by another account, starts with none.
	if err := deleteEvents(b, name); err != nil {
		return err
	}
	if err := deleteMetrics(b, name); err != nil {
		return err
	}
	if err := s.commit(b); err != nil {
		return err
	}
	s.dropPending(name)
	// Its unfinished multipart uploads go too, parts and all. Should this
	// fail, the lifecycle sweep aborts the uploads of buckets that are
	// gone.
	s.abortBucketUploads(account, name)
	return nil
}

func (s *Store) scan(prefix []byte, fn func(k, v []byte) error) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: pebblekv.PrefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("cloudstore: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}
