package cloudstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"
)

// Expire applies every enabled lifecycle rule at now, and returns how many
// things it did: current versions expired (deleted, or in a bucket that
// keeps versions given a delete marker, exactly as a DELETE would),
// noncurrent versions and lone delete markers removed, multipart uploads
// aborted. Each action re-checks, in its own write, that what it acts on
// is still what the sweep saw, and a rule removed or replaced during the
// sweep stops at once.
func (s *Store) Expire(ctx context.Context, now time.Time) (int, error) {
	var rules []Rule
	err := s.scan([]byte{tRule}, func(_, v []byte) error {
		var r Rule
		if err := json.Unmarshal(v, &r); err != nil {
			return err
		}
		rules = append(rules, r)
		return nil
	})
	if err != nil {
		return 0, err
	}
	done := 0
	for _, r := range rules {
		if r.Disabled {
			continue
		}
		var bk Bucket
		if err := s.getJSON(k(tBucket, r.Bucket), &bk); err != nil || bk.CreatedAt.After(r.CreatedAt) {
			// The bucket went away (its rules go with it), or its name now
			// belongs to a newer bucket the rule was not made for.
			continue
		}
		sw := sweep{s: s, bk: bk, r: r, now: now}
		for _, step := range []func(context.Context) error{sw.current, sw.versions, sw.uploads} {
			err := step(ctx)
			done += sw.done
			sw.done = 0
			if errors.Is(err, errRuleGone) {
				break
			}
			if err != nil {
				return done, err
			}
		}
	}
	return done, nil
}

// errRuleGone stops the sweep of a rule removed or replaced meanwhile.
var errRuleGone = errors.New("cloudstore: the rule is gone")

// sweep applies one rule to its bucket.
type sweep struct {
	s    *Store
	bk   Bucket
	r    Rule
	now  time.Time
	done int
}

// still checks that the rule is still there, unchanged.
func (w *sweep) still() error {
	var r Rule
	if w.s.getJSON(k(tRule, w.r.Bucket, w.r.ID), &r) != nil || !r.CreatedAt.Equal(w.r.CreatedAt) {
		return errRuleGone
	}
	return nil
}

func (w *sweep) event() Event {
	return Event{Type: EventObjectExpired, Time: w.now, RuleID: w.r.ID}
}

// current expires the current versions the rule's Expiration takes.
func (w *sweep) current(ctx context.Context) error {
	if w.r.ExpireDays == 0 && w.r.ExpireDate.IsZero() {
		return nil
	}
	marker := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := w.s.ListObjects(w.bk.Account, w.bk.Name, w.r.Prefix, "", marker, 1000)
		if errors.Is(err, ErrNotFound) {
			return nil // the bucket was deleted during the sweep
		}
		if err != nil {
			return err
		}
		for _, o := range l.Objects {
			if at, ok := w.r.ExpiresAt(o); !ok || w.now.Before(at) {
				continue
			}
			if err := w.still(); err != nil {
				return err
			}
			ok, err := w.s.expireCurrent(w.bk.Account, w.bk.Name, o, w.event())
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			if ok {
				w.done++
			}
		}
		if l.NextMarker == "" {
			return nil
		}
		marker = l.NextMarker
	}
}

// expireCurrent deletes o, the current version of its key as listed, as a
// DELETE would, unless it was replaced or deleted meanwhile.
func (s *Store) expireCurrent(account, bucket string, o Object, ev Event) (bool, error) {
	done := false
	err := s.write(func(t *tx) error {
		var cur Object
		if err := s.getJSON(k(tObject, bucket, o.Key), &cur); err != nil {
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			return err
		}
		if !cur.LastModified.Equal(o.LastModified) || cur.ETag != o.ETag {
			return nil
		}
		_, err := s.deleteObjectTx(t, account, bucket, o.Key, ev, Preconditions{})
		done = err == nil
		return err
	})
	return done, err
}

// versions removes the noncurrent versions the rule's
// NoncurrentVersionExpiration takes, and the lone delete markers its
// ExpiredObjectDeleteMarker takes.
func (w *sweep) versions(ctx context.Context) error {
	markers := w.r.ExpiredObjectDeleteMarker != nil && *w.r.ExpiredObjectDeleteMarker
	if w.bk.Versioning == "" || (w.r.NoncurrentDays == 0 && !markers) {
		return nil
	}
	// A key's versions may span pages: each key is done once all of them
	// were read, so the listing's markers (on later keys) are never
	// versions this sweep removed.
	var key string
	var vs []ListedVersion
	keyMarker, idMarker := "", ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := w.s.ListVersions(w.bk.Account, w.bk.Name, w.r.Prefix, "", keyMarker, idMarker, 1000)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, v := range l.Versions {
			if v.Key != key {
				if err := w.versionsOf(vs, markers); err != nil {
					return err
				}
				key, vs = v.Key, nil
			}
			vs = append(vs, v)
		}
		if l.NextKeyMarker == "" {
			return w.versionsOf(vs, markers)
		}
		keyMarker, idMarker = l.NextKeyMarker, l.NextVersionIDMarker
	}
}

// versionsOf applies the rule to one key's versions, newest first.
func (w *sweep) versionsOf(vs []ListedVersion, markers bool) error {
	if len(vs) == 0 {
		return nil
	}
	left := len(vs)
	if w.r.NoncurrentDays > 0 {
		for i := 1; i < len(vs); i++ {
			v := vs[i].Object
			// i-1 newer noncurrent versions; the successor's LastModified
			// is when v became noncurrent.
			if i <= w.r.NewerNoncurrentVersions || !w.r.Matches(v) ||
				w.now.Before(w.r.after(vs[i-1].LastModified, w.r.NoncurrentDays)) {
				continue
			}
			if err := w.still(); err != nil {
				return err
			}
			ok, err := w.s.expireVersion(w.bk.Account, w.bk.Name, v, w.event(), noncurrent)
			if err != nil {
				return err
			}
			if ok {
				w.done++
				left--
			}
		}
	}
	if markers && left == 1 && vs[0].IsLatest && vs[0].DeleteMarker && w.r.Matches(vs[0].Object) {
		if err := w.still(); err != nil {
			return err
		}
		ok, err := w.s.expireVersion(w.bk.Account, w.bk.Name, vs[0].Object, w.event(), loneMarker)
		if err != nil {
			return err
		}
		if ok {
			w.done++
		}
	}
	return nil
}

// noncurrent and loneMarker are the conditions expireVersion checks, given
// the key's current version (nil for none) and its versions in the version
// table, newest first, which hold the version at i.
func noncurrent(cur *Object, vs []Object, i int) bool { return cur != nil || i > 0 }

func loneMarker(cur *Object, vs []Object, i int) bool {
	return cur == nil && len(vs) == 1 && vs[0].DeleteMarker
}

// expireVersion removes v, a version in the version table, for good, if
// it is still there, cond holds of it and Object Lock does not protect
// it (a protected version is left for a later sweep, as S3's lifecycle
// leaves it).
func (s *Store) expireVersion(account, bucket string, v Object, ev Event, cond func(cur *Object, vs []Object, i int) bool) (bool, error) {
	_, done, err := s.deleteVersion(account, bucket, v.Key, v.VersionName(), ev, func(cur *Object, vs []Object) bool {
		i := slices.IndexFunc(vs, func(o Object) bool { return o.VersionID == v.VersionID })
		return i >= 0 && vs[i].seq() == v.seq() && cond(cur, vs, i)
	}, false)
	if errors.Is(err, ErrObjectLocked) {
		return false, nil
	}
	return done, err
}

// uploads aborts the multipart uploads the rule's
// AbortIncompleteMultipartUpload takes.
func (w *sweep) uploads(ctx context.Context) error {
	if w.r.AbortDays == 0 {
		return nil
	}
	var stale []Upload
	err := w.s.scan(append(append(k(tUploadBy, w.bk.Name), 0), w.r.Prefix...), func(key, _ []byte) error {
		id := string(key[bytes.LastIndexByte(key, 0)+1:])
		var u Upload
		if err := w.s.getJSON(k(tUpload, id), &u); err != nil {
			return nil // completed or aborted meanwhile
		}
		if u.Account == w.bk.Account && !w.now.Before(w.r.after(u.Initiated, w.r.AbortDays)) {
			stale = append(stale, u)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, u := range stale {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := w.still(); err != nil {
			return err
		}
		ok, err := w.s.abortStale(u)
		if err != nil {
			return err
		}
		if ok {
			w.done++
		}
	}
	return nil
}

// abortStale aborts u unless it ended meanwhile.
func (s *Store) abortStale(u Upload) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var now Upload
	if err := s.getJSON(k(tUpload, u.ID), &now); errors.Is(err, ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, s.dropUpload(now)
}
