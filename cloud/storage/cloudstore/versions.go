package cloudstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/internal/pebblekv"
)

// Versioning states of a bucket, as S3 names them. A bucket that was never
// versioned has none ("").
const (
	VersioningEnabled   = "Enabled"
	VersioningSuspended = "Suspended"
)

// NullVersion is the id S3 gives the version an object has when it was
// written while its bucket was not versioning: the store keeps it as an
// empty VersionID.
const NullVersion = "null"

// How versions are kept. The current version of a key stays where an
// unversioned object is, in the object table, so that reads, listings and
// every write of an unversioned bucket are what they were. Versions that
// are not current, and delete markers (current or not), are in the version
// table, under the key and then an order that sorts the newest first:
//
//	V | bucket | 0 | key | 0 | order -> Object
//
// order is 16 hex digits of the version's sequence number inverted (so an
// ascending walk meets the newest first), then the version id. A key's
// current version, when it has one, is always newer than all of its
// versions in the table. Bodies are shared, never copied: a version keeps
// the body file it had as the current object, and a body file's reference
// count counts every version naming it.
const tVersion = 'V'

// ErrBadVersion is returned for a version id this store never gives; a
// well-formed id it does not hold is ErrNotFound.
var ErrBadVersion = errors.New("cloudstore: invalid version id")

// DeleteMarkerError is returned (wrapping ErrNotFound) for a read of a key
// whose latest version is a delete marker, or of a version that is one.
type DeleteMarkerError struct {
	VersionID string // the marker's; "" is the null version
}

func (e *DeleteMarkerError) Error() string {
	return "cloudstore: not found: the version is a delete marker"
}

// Is makes the error match ErrNotFound.
func (e *DeleteMarkerError) Is(target error) bool { return target == ErrNotFound }

// versionIDLen is the length of the version ids this store gives: the
// order's 16 hex digits and 8 random ones.
const versionIDLen = 24

// CheckVersionID tells whether id could name a version ("null" included).
func CheckVersionID(id string) error {
	if id == NullVersion {
		return nil
	}
	if len(id) != versionIDLen || strings.ToLower(id) != id {
		return fmt.Errorf("%w: %q", ErrBadVersion, id)
	}
	if _, err := hex.DecodeString(id); err != nil {
		return fmt.Errorf("%w: %q", ErrBadVersion, id)
	}
	return nil
}

// storedID is the VersionID field of the version a client names with id.
func storedID(id string) string {
	if id == NullVersion {
		return ""
	}
	return id
}

// VersionName is the id a client sees for a version: "null" for the null
// version.
func (o Object) VersionName() string {
	if o.VersionID == "" {
		return NullVersion
	}
	return o.VersionID
}

// seq is the version's sequence number. Objects written before the store
// kept one order by their time.
func (o Object) seq() uint64 {
	if o.Seq != 0 {
		return o.Seq
	}
	return uint64(o.LastModified.UnixNano())
}

// newVersionID gives a version of sequence number seq its id.
func newVersionID(seq uint64) string {
	var r [4]byte
	rand.Read(r[:])
	return fmt.Sprintf("%016x", ^seq) + hex.EncodeToString(r[:])
}

// versionPrefix is where the versions of bucket's key are.
func versionPrefix(bucket, key string) []byte { return append(k(tVersion, bucket, key), 0) }

// versionKey is where o, a version of bucket's o.Key, is kept.
func versionKey(bucket string, o Object) []byte {
	return append(versionPrefix(bucket, o.Key), fmt.Sprintf("%016x%s", ^o.seq(), o.VersionID)...)
}

// versionsOf returns the versions of bucket's key in the version table,
// newest first.
func versionsOf(r pebble.Reader, bucket, key string) ([]Object, error) {
	prefix := versionPrefix(bucket, key)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: pebblekv.PrefixEnd(prefix)})
	if err != nil {
		return nil, fmt.Errorf("cloudstore: %w", err)
	}
	defer it.Close()
	var out []Object
	for ok := it.First(); ok; ok = it.Next() {
		var o Object
		if err := json.Unmarshal(it.Value(), &o); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, it.Error()
}

// findVersion looks up the version of bucket's key with the stored id
// (VersionID; "" for null) in the version table.
func findVersion(r pebble.Reader, bucket, key, id string) (Object, error) {
	if id != "" {
		seq, err := strconv.ParseUint(id[:16], 16, 64)
		if err != nil {
			return Object{}, ErrNotFound
		}
		var o Object
		err = getJSONFrom(r, append(versionPrefix(bucket, key), fmt.Sprintf("%016x%s", seq, id)...), &o)
		return o, err
	}
	vs, err := versionsOf(r, bucket, key)
	if err != nil {
		return Object{}, err
	}
	for _, v := range vs {
		if v.VersionID == "" {
			return v, nil
		}
	}
	return Object{}, ErrNotFound
}

// latestVersion returns the newest version of bucket's key in the version
// table, if it has one.
func latestVersion(r pebble.Reader, bucket, key string) (Object, bool, error) {
	prefix := versionPrefix(bucket, key)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: pebblekv.PrefixEnd(prefix)})
	if err != nil {
		return Object{}, false, fmt.Errorf("cloudstore: %w", err)
	}
	defer it.Close()
	if !it.First() {
		return Object{}, false, it.Error()
	}
	var o Object
	if err := json.Unmarshal(it.Value(), &o); err != nil {
		return Object{}, false, err
	}
	return o, true, nil
}

// refDeltas gathers the changes of body reference counts of one batch, so
// that each body is adjusted once: the counts are read from the database,
// and two adjustments of one body in a batch would overwrite each other.
type refDeltas map[string]int

func (d refDeltas) add(id string, n int) {
	if id != "" {
		d[id] += n
	}
}

// addFiles adds n to the counts of every body file of o.
func (d refDeltas) addFiles(o Object, n int) {
	for _, id := range o.bodyFiles() {
		d.add(id, n)
	}
}

// write adds the changes to b, and says which bodies may have lost their
// last reference, for the caller to drop once b is durable.
func (d refDeltas) write(s *Store, b *pebble.Batch, t *tx) error {
	for id, n := range d {
		if n == 0 {
			continue
		}
		if err := s.ref(b, id, n); err != nil {
			return err
		}
		if n < 0 {
			t.dropLater(id)
		}
	}
	return nil
}

// versionWrite is one write to a key of a bucket that keeps versions: what
// happens to the current version and to the null version when a new
// version (an object or a delete marker) becomes the latest.
type versionWrite struct {
	s    *Store
	b    *pebble.Batch
	bk   *Bucket
	refs refDeltas
}

// retire makes room for a new latest version of key in a versioned
// bucket: the current version, if there is one, becomes a noncurrent
// version, except that in a suspended bucket the null version (current or
// not) is replaced for good. It returns the sequence number the new
// version takes, after every version the key has.
func (w versionWrite) retire(key string, cur Object, hasCur bool) (uint64, error) {
	bucket := w.bk.Name
	newest := uint64(0)
	if hasCur {
		newest = cur.seq()
		if cur.VersionID == "" && w.bk.Versioning == VersioningSuspended {
			w.dropCurrent(cur)
		} else {
			if err := w.keep(cur); err != nil {
				return 0, err
			}
			w.bk.Objects--
			w.bk.Bytes -= cur.Size
		}
		if err := w.b.Delete(k(tObject, bucket, key), nil); err != nil {
			return 0, err
		}
	} else if v, ok, err := latestVersion(w.s.db, bucket, key); err != nil {
		return 0, err
	} else if ok {
		newest = v.seq()
	}
	if w.bk.Versioning == VersioningSuspended {
		if err := w.dropNull(key); err != nil {
			return 0, err
		}
	}
	seq := uint64(w.s.now().UnixNano())
	if seq <= newest {
		seq = newest + 1
	}
	return seq, nil
}

// keep writes v to the version table.
func (w versionWrite) keep(v Object) error {
	w.bk.Versions++
	w.bk.VersionBytes += v.Size
	return setJSON(w.b, versionKey(w.bk.Name, v), v)
}

// dropCurrent forgets the current version cur for good.
func (w versionWrite) dropCurrent(cur Object) {
	w.bk.Objects--
	w.bk.Bytes -= cur.Size
	w.refs.addFiles(cur, -1)
}

// promote makes v, a version in the version table, the current version.
func (w versionWrite) promote(v Object) error {
	if err := w.b.Delete(versionKey(w.bk.Name, v), nil); err != nil {
		return err
	}
	w.bk.Versions--
	w.bk.VersionBytes -= v.Size
	w.bk.Objects++
	w.bk.Bytes += v.Size
	return setJSON(w.b, k(tObject, w.bk.Name, v.Key), v)
}

// dropNull removes the null version of key from the version table, if it
// is there.
func (w versionWrite) dropNull(key string) error {
	v, err := findVersion(w.s.db, w.bk.Name, key, "")
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return w.drop(v)
}

// drop removes v from the version table for good.
func (w versionWrite) drop(v Object) error {
	w.bk.Versions--
	w.bk.VersionBytes -= v.Size
	w.refs.addFiles(v, -1)
	return w.b.Delete(versionKey(w.bk.Name, v), nil)
}

// SetVersioning sets the versioning state of account's bucket: Enabled or
// Suspended. A bucket that has versioned never goes back to unversioned,
// as in S3.
func (s *Store) SetVersioning(account, bucket, state string) error {
	if state != VersioningEnabled && state != VersioningSuspended {
		return fmt.Errorf("cloudstore: versioning state %q is neither %s nor %s", state, VersioningEnabled, VersioningSuspended)
	}
	return s.write(func(t *tx) error {
		bk, err := s.Bucket(account, bucket)
		if err != nil {
			return err
		}
		if bk.Versioning == state {
			return nil
		}
		if bk.ObjectLock != nil {
			return ErrLockedVersioning
		}
		bk.Versioning = state
		b := s.db.NewBatch()
		defer t.closeUnapplied(b)
		if err := setJSON(b, k(tBucket, bucket), bk); err != nil {
			return err
		}
		return s.apply(t, b)
	})
}

// ObjectVersion returns a version of account's object: id "" is the
// current version (a DeleteMarkerError when the latest is a delete
// marker), "null" the null version, any other id the version of that id.
// A version that is a delete marker is returned with DeleteMarker set.
func (s *Store) ObjectVersion(account, bucket, key, id string) (Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.versionLocked(account, bucket, key, id)
}

func (s *Store) versionLocked(account, bucket, key, id string) (Object, error) {
	if id != "" {
		if err := CheckVersionID(id); err != nil {
			return Object{}, err
		}
	}
	bk, err := s.Bucket(account, bucket)
	if err != nil {
		return Object{}, err
	}
	obj, err := s.versionIn(bucket, key, id)
	obj.Versioned = bk.Versioning != ""
	return obj, err
}

// versionIn looks a version up in bucket, whose owner was checked.
func (s *Store) versionIn(bucket, key, id string) (Object, error) {
	var obj Object
	err := s.getJSON(k(tObject, bucket, key), &obj)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Object{}, err
	}
	if err == nil && (id == "" || obj.VersionID == storedID(id)) {
		return obj, nil
	}
	if id != "" {
		return findVersion(s.db, bucket, key, storedID(id))
	}
	// No current version: the latest may be a delete marker.
	v, ok, err := latestVersion(s.db, bucket, key)
	if err != nil {
		return Object{}, err
	}
	if ok && v.DeleteMarker {
		return Object{}, &DeleteMarkerError{VersionID: v.VersionID}
	}
	return Object{}, ErrNotFound
}

// OpenObjectVersion is OpenObject of a version (id as ObjectVersion
// takes it), with the customer key of an object encrypted with SSE-C (nil
// for none). A delete marker has no body: it is a DeleteMarkerError.
func (s *Store) OpenObjectVersion(ctx context.Context, account, bucket, key, id string, customerKey []byte) (Object, Body, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, err := s.versionLocked(account, bucket, key, id)
	if err != nil {
		return Object{}, nil, err
	}
	if obj.DeleteMarker {
		return obj, nil, &DeleteMarkerError{VersionID: obj.VersionID}
	}
	return s.openLocked(ctx, bucket, obj, customerKey)
}

// Deletion says what a delete did.
type Deletion struct {
	// VersionID is the version deleted, or the delete marker made ("" for
	// a null one); DeleteMarker says it is a marker.
	VersionID    string
	DeleteMarker bool
	// Versioned is whether the bucket keeps versions (so the id means
	// something to the client).
	Versioned bool
}

// DeleteVersion deletes one version of account's object for good, as S3's
// DeleteObject with a versionId does: an object version, or a delete
// marker. When it was the current version, the newest remaining version
// becomes current. Deleting a version that is not there succeeds, as in
// S3; a malformed id is ErrBadVersion.
// A version that Object Lock protects is ErrObjectLocked, and stays.
func (s *Store) DeleteVersion(account, bucket, key, id string) (Deletion, error) {
	return s.DeleteVersionWith(account, bucket, key, id, VersionDeleteOptions{})
}

// VersionDeleteOptions are a delete's of one version.
type VersionDeleteOptions struct {
	// BypassGovernance lets the delete remove a version under GOVERNANCE
	// retention (S3's x-amz-bypass-governance-retention); COMPLIANCE
	// retention and legal holds still protect theirs.
	BypassGovernance bool
}

// DeleteVersionWith is DeleteVersion as o says.
func (s *Store) DeleteVersionWith(account, bucket, key, id string, o VersionDeleteOptions) (Deletion, error) {
	del, _, err := s.deleteVersion(account, bucket, key, id, Event{Type: EventObjectDeleted}, nil, o.BypassGovernance)
	return del, err
}

// deleteVersion is DeleteVersion logging ev (its Key and VersionID set
// here; its Time, when zero, now), and only if cond, when not nil, holds
// of the key's current version (nil for none) and its versions in the
// version table; it says whether it deleted anything. A version Object
// Lock protects (bypass: but for GOVERNANCE retention) is ErrObjectLocked.
func (s *Store) deleteVersion(account, bucket, key, id string, ev Event, cond func(cur *Object, vs []Object) bool, bypass bool) (Deletion, bool, error) {
	if err := CheckVersionID(id); err != nil {
		return Deletion{}, false, err
	}
	del := Deletion{VersionID: storedID(id)}
	done := false
	err := s.write(func(t *tx) error {
		bk, err := s.Bucket(account, bucket)
		if err != nil {
			return err
		}
		del.Versioned = bk.Versioning != ""
		b := s.db.NewBatch()
		defer t.closeUnapplied(b)
		w := versionWrite{s: s, b: b, bk: &bk, refs: refDeltas{}}
		var cur Object
		err = s.getJSON(k(tObject, bucket, key), &cur)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		hasCur := err == nil
		vs, err := versionsOf(s.db, bucket, key)
		if err != nil {
			return err
		}
		if cond != nil {
			curp := &cur
			if !hasCur {
				curp = nil
			}
			if !cond(curp, vs) {
				return nil
			}
		}
		if hasCur && cur.VersionID == del.VersionID {
			if err := protected(cur, s.now(), bypass); err != nil {
				return err
			}
			w.dropCurrent(cur)
			hasCur = false
			if err := b.Delete(k(tObject, bucket, key), nil); err != nil {
				return err
			}
			if err := b.Delete(topKey(bucket, key), nil); err != nil {
				return err
			}
		} else {
			i := slices.IndexFunc(vs, func(v Object) bool { return v.VersionID == del.VersionID })
			if i < 0 {
				return nil // nothing to delete: done, as in S3
			}
			if err := protected(vs[i], s.now(), bypass); err != nil {
				return err
			}
			del.DeleteMarker = vs[i].DeleteMarker
			if err := w.drop(vs[i]); err != nil {
				return err
			}
			vs = slices.Delete(vs, i, i+1)
		}
		if !hasCur && len(vs) > 0 && !vs[0].DeleteMarker {
			// The newest remaining version becomes current. A delete
			// marker stays the latest where it is.
			if err := w.promote(vs[0]); err != nil {
				return err
			}
		}
		if err := w.refs.write(s, b, t); err != nil {
			return err
		}
		if err := setJSON(b, k(tBucket, bucket), bk); err != nil {
			return err
		}
		ev.Key, ev.VersionID = key, del.VersionID
		if ev.Time.IsZero() {
			ev.Time = s.now()
		}
		if err := s.logEventsLocked(b, bucket, ev); err != nil {
			return err
		}
		done = true
		return s.apply(t, b)
	})
	return del, done && err == nil, err
}

// VersionListing is one page of a bucket's versions.
type VersionListing struct {
	// Versions are object versions and delete markers (DeleteMarker set),
	// by key, each key's newest first; IsLatest tells the latest of a key.
	// Inline is cleared.
	Versions []ListedVersion
	Prefixes []string
	// NextKeyMarker and NextVersionIDMarker continue the listing when more
	// follow ("" when done); NextVersionIDMarker is "" when the page ended
	// with a common prefix.
	NextKeyMarker, NextVersionIDMarker string
}

// ListedVersion is a version in a listing.
type ListedVersion struct {
	Object
	IsLatest bool
}

// ListVersions lists the versions of account's bucket whose keys start
// with prefix, after the key and version markers (as S3 reads them: with
// no version marker, after every version of keyMarker; with one, after
// that version), at most max entries (versions, delete markers and common
// prefixes), as S3's ListObjectVersions does. A bucket never versioned
// lists each object as its only, null, version.
func (s *Store) ListVersions(account, bucket, prefix, delimiter, keyMarker, versionMarker string, max int) (VersionListing, error) {
	if versionMarker != "" {
		if err := CheckVersionID(versionMarker); err != nil {
			return VersionListing{}, err
		}
	}
	snap := s.db.NewSnapshot()
	defer snap.Close()
	var bk Bucket
	if err := getJSONFrom(snap, k(tBucket, bucket), &bk); err != nil {
		return VersionListing{}, err
	}
	if bk.Account != account {
		return VersionListing{}, ErrNotFound
	}
	keys := &keyWalk{r: snap, bucket: bucket, prefix: prefix}
	if err := keys.open(); err != nil {
		return VersionListing{}, err
	}
	defer keys.close()
	var l VersionListing
	from := prefix
	if keyMarker > from {
		from = keyMarker
	}
	full := false
	last := func(key, id string) { l.NextKeyMarker, l.NextVersionIDMarker = key, id }
	for key, ok := keys.seek(from); ok; {
		if delimiter != "" {
			if i := strings.Index(key[len(prefix):], delimiter); i >= 0 {
				cp := key[:len(prefix)+i+len(delimiter)]
				if cp != keyMarker { // a common prefix is the marker of the page after it
					if full {
						return l, keys.err()
					}
					l.Prefixes = append(l.Prefixes, cp)
					last(cp, "")
					full = len(l.Versions)+len(l.Prefixes) >= max
				}
				key, ok = keys.skipPrefix(cp)
				continue
			}
		}
		vs, err := keys.versions(key)
		if err != nil {
			return l, err
		}
		start := 0
		if key == keyMarker {
			start = len(vs) // no version marker: after every version
			if versionMarker != "" {
				start = afterVersion(vs, versionMarker)
			}
		}
		for _, v := range vs[start:] {
			if full {
				return l, keys.err()
			}
			v.Object.Inline = nil
			l.Versions = append(l.Versions, v)
			last(key, v.VersionName())
			full = len(l.Versions)+len(l.Prefixes) >= max
		}
		key, ok = keys.next()
	}
	l.NextKeyMarker, l.NextVersionIDMarker = "", ""
	return l, keys.err()
}

// afterVersion is the index in vs, a key's versions newest first, of the
// first version after the version marker id. A marker whose version is
// gone (deleted between two pages) still has its place: an id other than
// null says its order (versionKey's), so the listing goes on with the
// versions older than it rather than skipping the rest of the key. A gone
// null version has no known place: the key is done.
func afterVersion(vs []ListedVersion, id string) int {
	for i, v := range vs {
		if v.VersionName() == id {
			return i + 1
		}
	}
	if id == NullVersion {
		return len(vs)
	}
	for i, v := range vs {
		if fmt.Sprintf("%016x%s", ^v.seq(), v.VersionID) > id {
			return i
		}
	}
	return len(vs)
}

// keyWalk walks the keys of a bucket that have a current version or
// versions in the version table, or both, in key order.
type keyWalk struct {
	r              pebble.Reader
	bucket, prefix string
	cur, ver       *pebble.Iterator
	curOK, verOK   bool
	curBase        []byte
	verBase        []byte
	key            string
}

func (w *keyWalk) open() error {
	w.curBase = append(k(tObject, w.bucket), 0)
	w.verBase = append(k(tVersion, w.bucket), 0)
	var err error
	lower := append(bytes.Clone(w.curBase), w.prefix...)
	if w.cur, err = w.r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: pebblekv.PrefixEnd(lower)}); err != nil {
		return fmt.Errorf("cloudstore: %w", err)
	}
	lower = append(bytes.Clone(w.verBase), w.prefix...)
	if w.ver, err = w.r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: pebblekv.PrefixEnd(lower)}); err != nil {
		w.cur.Close()
		return fmt.Errorf("cloudstore: %w", err)
	}
	return nil
}

func (w *keyWalk) close() {
	w.cur.Close()
	w.ver.Close()
}

func (w *keyWalk) err() error { return errors.Join(w.cur.Error(), w.ver.Error()) }

// curKey and verKey are the keys the iterators are at.
func (w *keyWalk) curKey() string { return string(w.cur.Key()[len(w.curBase):]) }

func (w *keyWalk) verKey() string {
	rest := w.ver.Key()[len(w.verBase):]
	if i := bytes.IndexByte(rest, 0); i >= 0 {
		rest = rest[:i]
	}
	return string(rest)
}

// seek moves to the first key at or after from.
func (w *keyWalk) seek(from string) (string, bool) {
	w.curOK = w.cur.SeekGE(append(bytes.Clone(w.curBase), from...))
	w.verOK = w.ver.SeekGE(append(bytes.Clone(w.verBase), from...))
	return w.pick()
}

// pick settles on the smaller of the two iterators' keys.
func (w *keyWalk) pick() (string, bool) {
	switch {
	case w.curOK && w.verOK:
		w.key = min(w.curKey(), w.verKey())
	case w.curOK:
		w.key = w.curKey()
	case w.verOK:
		w.key = w.verKey()
	default:
		return "", false
	}
	return w.key, true
}

// next moves past every entry of the current key: its versions are under
// key|0|..., and no other key holds a byte below 0x20.
func (w *keyWalk) next() (string, bool) {
	return w.seekAfter(append([]byte(w.key), 1))
}

// skipPrefix moves past every key starting with cp.
func (w *keyWalk) skipPrefix(cp string) (string, bool) {
	return w.seekAfter(pebblekv.PrefixEnd([]byte(cp)))
}

// seekAfter moves both iterators to the first key at or after the bytes
// given (a key's successor).
func (w *keyWalk) seekAfter(after []byte) (string, bool) {
	if w.curOK {
		w.curOK = w.cur.SeekGE(append(bytes.Clone(w.curBase), after...))
	}
	if w.verOK {
		w.verOK = w.ver.SeekGE(append(bytes.Clone(w.verBase), after...))
	}
	w.key = ""
	return w.pick()
}

// versions returns every version of key, the current one first.
func (w *keyWalk) versions(key string) ([]ListedVersion, error) {
	var out []ListedVersion
	if w.curOK && w.curKey() == key {
		var o Object
		if err := json.Unmarshal(w.cur.Value(), &o); err != nil {
			return nil, err
		}
		out = append(out, ListedVersion{Object: o, IsLatest: true})
	}
	vs, err := versionsOf(w.r, w.bucket, key)
	if err != nil {
		return nil, err
	}
	for i, v := range vs {
		out = append(out, ListedVersion{Object: v, IsLatest: i == 0 && len(out) == 0})
	}
	return out, nil
}
