package cloudstore

import (
	"errors"
	"fmt"
	"time"
)

// Object Lock, as S3 has it: write-once-read-many protection of object
// versions in a bucket that keeps versions.
//
//   - A bucket is made with Object Lock (BucketOptions.ObjectLock), or a
//     bucket whose versioning is Enabled gets it (SetObjectLock); it is
//     never taken away, and versioning can no longer be suspended.
//   - A version may have a retention (a mode and a date) and a legal
//     hold. Until its retention's date, and while its legal hold is on,
//     the version cannot be deleted for good: not by a DeleteObject with
//     its versionId, not by DeleteObjects, not by a lifecycle rule. A
//     delete without a version id still makes a delete marker, as in
//     S3: the locked version stays, noncurrent.
//   - COMPLIANCE retention binds everyone: its date can only move later.
//     GOVERNANCE retention binds everyone who does not bypass it
//     (BypassGovernance); a bypass may shorten or remove it, or delete
//     the version. A legal hold has no date and binds everyone until it
//     is turned off.
//   - The bucket's default retention, if its configuration has one, is
//     given to each new version written without a retention of its own.
//
// The rules are checked under the store's lock, in the same atomic step
// as the write or delete they govern.

// The retention modes.
const (
	LockGovernance = "GOVERNANCE"
	LockCompliance = "COMPLIANCE"
)

// MaxRetentionDays bounds a default retention, as S3 does (100 years).
const MaxRetentionDays = 36500

var (
	// ErrNoObjectLock is returned for a lock asked of a bucket without
	// Object Lock; nothing changed.
	ErrNoObjectLock = errors.New("cloudstore: the bucket has no Object Lock configuration")
	// ErrObjectLocked is returned for a delete or a retention change
	// that the version's retention or legal hold forbids; nothing
	// changed.
	ErrObjectLocked = errors.New("cloudstore: the version is protected by Object Lock")
	// ErrLockNeedsVersioning is returned by SetObjectLock for a bucket
	// whose versioning is not Enabled.
	ErrLockNeedsVersioning = errors.New("cloudstore: Object Lock needs a bucket whose versioning is Enabled")
	// ErrLockedVersioning is returned by SetVersioning for a bucket with
	// Object Lock, whose versioning cannot be suspended.
	ErrLockedVersioning = errors.New("cloudstore: the bucket has Object Lock; its versioning cannot be changed")
)

// GovernanceError is ErrObjectLocked where GOVERNANCE retention alone is
// in the way: a bypass would have let the request through. errors.Is
// matches it to ErrObjectLocked.
type GovernanceError struct {
	Until time.Time // the retention's retain-until date
}

func (e *GovernanceError) Error() string {
	return fmt.Sprintf("%v: it is retained in %s mode until %s", ErrObjectLocked, LockGovernance, e.Until.Format(time.RFC3339))
}

// Is makes a GovernanceError ErrObjectLocked.
func (e *GovernanceError) Is(target error) bool { return target == ErrObjectLocked }

// locked is the refusal by retention r: a GovernanceError for GOVERNANCE.
func locked(r *Retention) error {
	if r.Mode == LockGovernance {
		return &GovernanceError{Until: r.Until}
	}
	return fmt.Errorf("%w: it is retained in %s mode until %s", ErrObjectLocked, r.Mode, r.Until.Format(time.RFC3339))
}

// Retention is a version's retention: until Until, the version cannot be
// deleted, in COMPLIANCE mode by anyone, in GOVERNANCE mode by anyone who
// does not bypass it. Until is kept to the millisecond, as S3 answers it,
// so that a date read back and written again is the same date.
type Retention struct {
	Mode  string    `json:"mode"`
	Until time.Time `json:"until"`
}

// normal is r with its date in UTC to the millisecond (nil for nil).
func (r *Retention) normal() *Retention {
	if r == nil {
		return nil
	}
	return &Retention{Mode: r.Mode, Until: r.Until.UTC().Truncate(time.Millisecond)}
}

// Active reports whether r binds at now.
func (r *Retention) Active(now time.Time) bool { return r != nil && now.Before(r.Until) }

// ObjectLock is a bucket's Object Lock configuration. Mode, with Days or
// Years (one of them), is the default retention of new versions; an
// empty Mode gives them none.
type ObjectLock struct {
	Mode  string `json:"mode,omitempty"`
	Days  int    `json:"days,omitempty"`
	Years int    `json:"years,omitempty"`
}

// Check reports whether l is a valid configuration.
func (l ObjectLock) Check() error {
	switch {
	case l.Mode == "" && (l.Days != 0 || l.Years != 0):
		return errors.New("cloudstore: a default retention period needs a mode")
	case l.Mode == "":
		return nil
	case l.Mode != LockGovernance && l.Mode != LockCompliance:
		return fmt.Errorf("cloudstore: retention mode %q is neither %s nor %s", l.Mode, LockGovernance, LockCompliance)
	case (l.Days == 0) == (l.Years == 0):
		return errors.New("cloudstore: a default retention has Days or Years, not both")
	case l.Days < 0 || l.Years < 0 || l.Days > MaxRetentionDays || l.Years > MaxRetentionDays/365:
		return fmt.Errorf("cloudstore: a default retention is 1 to %d days or 1 to %d years", MaxRetentionDays, MaxRetentionDays/365)
	}
	return nil
}

// defaultRetention is the retention l gives a version written at t, nil
// for none.
func (l *ObjectLock) defaultRetention(t time.Time) *Retention {
	if l == nil || l.Mode == "" {
		return nil
	}
	return (&Retention{Mode: l.Mode, Until: t.AddDate(l.Years, 0, l.Days)}).normal()
}

// Lock is what a write asks of a new version's Object Lock: its own
// retention (nil: the bucket's default, if any) and its legal hold,
// which LegalHoldSet tells was given (OFF, when LegalHold is not set).
type Lock struct {
	Retention    *Retention
	LegalHold    bool
	LegalHoldSet bool
}

// LegalHoldStatus is S3's name of the legal hold of o: "ON" or "OFF"
// for a version given one (by its upload or by SetLegalHold), "" for a
// version never given one. Versions written before LegalHoldSet was
// kept are known to have been given one only while it is ON.
func (o Object) LegalHoldStatus() string {
	switch {
	case o.LegalHold:
		return "ON"
	case o.LegalHoldSet:
		return "OFF"
	}
	return ""
}

// applyLock gives obj, about to be written to bk, the lock it asked for
// (nil: none) or the bucket's default retention. A lock asked of a
// bucket without Object Lock is ErrNoObjectLock.
func applyLock(bk Bucket, obj *Object, lock *Lock) error {
	obj.Retention, obj.LegalHold, obj.LegalHoldSet = nil, false, false
	if lock != nil {
		if bk.ObjectLock == nil {
			return ErrNoObjectLock
		}
		obj.Retention = lock.Retention.normal()
		obj.LegalHold, obj.LegalHoldSet = lock.LegalHold, lock.LegalHold || lock.LegalHoldSet
	}
	if obj.Retention == nil {
		obj.Retention = bk.ObjectLock.defaultRetention(obj.LastModified)
	}
	return nil
}

// protected reports why v cannot be deleted for good at now (nil: it
// can), bypassing GOVERNANCE retention when bypass is set.
func protected(v Object, now time.Time, bypass bool) error {
	switch {
	case v.DeleteMarker:
		return nil
	case v.LegalHold:
		return fmt.Errorf("%w: it has a legal hold", ErrObjectLocked)
	case v.Retention.Active(now) && (v.Retention.Mode == LockCompliance || !bypass):
		return locked(v.Retention)
	}
	return nil
}

// SetObjectLock gives account's bucket Object Lock with configuration l,
// or replaces its configuration. The bucket's versioning must be
// Enabled (ErrLockNeedsVersioning). The new default applies to versions
// written from now on.
func (s *Store) SetObjectLock(account, bucket string, l ObjectLock) error {
	if err := l.Check(); err != nil {
		return err
	}
	return s.write(func(t *tx) error {
		bk, err := s.Bucket(account, bucket)
		if err != nil {
			return err
		}
		if bk.Versioning != VersioningEnabled {
			return ErrLockNeedsVersioning
		}
		bk.ObjectLock = &l
		b := s.db.NewBatch()
		defer t.closeUnapplied(b)
		if err := setJSON(b, k(tBucket, bucket), bk); err != nil {
			return err
		}
		return s.apply(t, b)
	})
}

// SetRetention changes the retention of a version of account's object
// (id as ObjectVersion takes it; r nil removes it), as S3's
// PutObjectRetention does: a retention in force may move later in its
// mode; a GOVERNANCE one may be shortened, removed or given another mode
// (COMPLIANCE too: it binds the owner for good) only with bypass, a
// COMPLIANCE one never. Otherwise it is ErrObjectLocked (a
// GovernanceError where a bypass would have done). A bucket without
// Object Lock is ErrNoObjectLock. check, when not nil, judges the version under the lock that changes it
// (a caller's permission); its error refuses the change.
func (s *Store) SetRetention(account, bucket, key, id string, r *Retention, bypass bool, check func(Object) error) (Object, error) {
	r = r.normal()
	return s.updateLocked(account, bucket, key, id, check, func(o *Object) error {
		now := s.now()
		// Compared to the millisecond, as the dates a client reads are.
		if old := o.Retention.normal(); old.Active(now) {
			weaker := r == nil || r.Until.Before(old.Until) || r.Mode != old.Mode
			if weaker && (old.Mode == LockCompliance || !bypass) {
				return locked(old)
			}
		}
		o.Retention = r
		return nil
	})
}

// SetLegalHold turns the legal hold of a version of account's object on
// or off, with check as SetRetention's. A bucket without Object Lock is
// ErrNoObjectLock.
func (s *Store) SetLegalHold(account, bucket, key, id string, on bool, check func(Object) error) (Object, error) {
	return s.updateLocked(account, bucket, key, id, check, func(o *Object) error {
		o.LegalHold, o.LegalHoldSet = on, true
		return nil
	})
}

// updateLocked is updateVersion in a bucket that has Object Lock, after
// check. A bucket without it is ErrNoObjectLock, whatever the version:
// looked at before the version is, so that a missing key in such a
// bucket is ErrNoObjectLock too, as in S3, and again under the lock.
func (s *Store) updateLocked(account, bucket, key, id string, check func(Object) error, fn func(*Object) error) (Object, error) {
	bk, err := s.Bucket(account, bucket)
	if err != nil {
		return Object{}, err
	}
	if bk.ObjectLock == nil {
		return Object{}, ErrNoObjectLock
	}
	return s.updateVersion(account, bucket, key, id, func(o *Object) error {
		// A bucket deleted and made anew without Object Lock since.
		if bk, err := s.Bucket(account, bucket); err != nil {
			return err
		} else if bk.ObjectLock == nil {
			return ErrNoObjectLock
		}
		if check != nil {
			if err := check(*o); err != nil {
				return err
			}
		}
		return fn(o)
	})
}
