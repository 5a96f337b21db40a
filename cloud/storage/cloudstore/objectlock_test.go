package cloudstore

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// lockStore is sweepStore's store with bucket "b" given Object Lock.
func lockStore(t *testing.T, clock *time.Time, l ObjectLock) *Store {
	t.Helper()
	s := sweepStore(t, clock)
	if err := s.SetObjectLock("acme", "b", l); !errors.Is(err, ErrLockNeedsVersioning) {
		t.Fatalf("SetObjectLock on a bucket that keeps no versions: %v, want ErrLockNeedsVersioning", err)
	}
	if err := s.SetVersioning("acme", "b", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	if err := s.SetObjectLock("acme", "b", l); err != nil {
		t.Fatal(err)
	}
	return s
}

func putLocked(t *testing.T, s *Store, key string, at time.Time, lock *Lock) Object {
	t.Helper()
	obj, err := s.Put(context.Background(), "acme", "b", key, strings.NewReader("body"), PutOptions{Max: 1 << 20, Now: at, Lock: lock})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestObjectLockDeletes: a version under retention or a legal hold stays
// whatever deletes it: by version id, with a bypass (but for GOVERNANCE),
// and by a lifecycle rule; once its retention has passed it goes. A delete
// without a version id still makes a delete marker.
func TestObjectLockDeletes(t *testing.T) {
	clock := t0
	s := lockStore(t, &clock, ObjectLock{Mode: LockGovernance, Days: 1})
	gov := putLocked(t, s, "gov", t0, nil) // the bucket's default: a day of GOVERNANCE
	if r := gov.Retention; r == nil || r.Mode != LockGovernance || !r.Until.Equal(t0.Add(24*time.Hour).Truncate(time.Millisecond)) {
		t.Fatalf("default retention: %+v, want GOVERNANCE until a day after %v", r, t0)
	}
	comp := putLocked(t, s, "comp", t0, &Lock{Retention: &Retention{Mode: LockCompliance, Until: t0.Add(48 * time.Hour)}})
	hold := putLocked(t, s, "hold", t0, &Lock{LegalHold: true})
	if hold.Retention == nil || !hold.LegalHold {
		t.Fatalf("a legal hold alone: %+v; want it and the default retention", hold)
	}

	tests := []struct {
		obj    Object
		bypass bool
	}{{gov, false}, {comp, false}, {comp, true}, {hold, true}}
	for _, tt := range tests {
		if _, err := s.DeleteVersionWith("acme", "b", tt.obj.Key, tt.obj.VersionID, VersionDeleteOptions{BypassGovernance: tt.bypass}); !errors.Is(err, ErrObjectLocked) {
			t.Errorf("delete %s (bypass %v): %v, want ErrObjectLocked", tt.obj.Key, tt.bypass, err)
		}
		if _, err := s.ObjectVersion("acme", "b", tt.obj.Key, tt.obj.VersionID); err != nil {
			t.Errorf("%s after a refused delete: %v", tt.obj.Key, err)
		}
	}
	// A delete marker hides the version; the version stays.
	del, err := s.Delete("acme", "b", "gov", DeleteOptions{})
	if err != nil || !del.DeleteMarker {
		t.Fatalf("delete without a version id: %+v, %v; want a delete marker", del, err)
	}
	if _, err := s.ObjectVersion("acme", "b", "gov", gov.VersionID); err != nil {
		t.Fatalf("the locked version after the marker: %v", err)
	}
	// A lifecycle rule leaves noncurrent locked versions alone. The rule
	// is judged at the sweep's time (day 10: long noncurrent); the lock
	// at the store's clock, half a day after t0, when it still holds.
	if _, err := s.SetRules("acme", "b", []Rule{{ID: "nc", S3: true, Filter: FilterEmpty, NoncurrentDays: 1}}, t0); err != nil {
		t.Fatal(err)
	}
	clock = t0.Add(12 * time.Hour)
	if _, err := s.Expire(context.Background(), day(10)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ObjectVersion("acme", "b", "gov", gov.VersionID); err != nil {
		t.Fatalf("a lifecycle rule removed a locked version: %v", err)
	}
	// A bypass removes GOVERNANCE retention.
	if _, err := s.DeleteVersionWith("acme", "b", "gov", gov.VersionID, VersionDeleteOptions{BypassGovernance: true}); err != nil {
		t.Fatalf("delete of a GOVERNANCE version with a bypass: %v", err)
	}
	// Past its date, a version goes like any other; a legal hold stays
	// until it is lifted.
	clock = t0.Add(49 * time.Hour)
	if _, err := s.DeleteVersion("acme", "b", "comp", comp.VersionID); err != nil {
		t.Fatalf("delete past the retention: %v", err)
	}
	if _, err := s.DeleteVersion("acme", "b", "hold", hold.VersionID); !errors.Is(err, ErrObjectLocked) {
		t.Fatalf("delete under a legal hold: %v, want ErrObjectLocked", err)
	}
	if gov.LegalHoldStatus() != "" || hold.LegalHoldStatus() != "ON" {
		t.Errorf("legal hold status: %q never held, %q held; want none and ON", gov.LegalHoldStatus(), hold.LegalHoldStatus())
	}
	lifted, err := s.SetLegalHold("acme", "b", "hold", hold.VersionID, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.ObjectVersion("acme", "b", "hold", hold.VersionID); err != nil || lifted.LegalHoldStatus() != "OFF" || again.LegalHoldStatus() != "OFF" {
		t.Errorf("a lifted hold: %q, read back %q, %v; want OFF", lifted.LegalHoldStatus(), again.LegalHoldStatus(), err)
	}
	if _, err := s.DeleteVersion("acme", "b", "hold", hold.VersionID); err != nil {
		t.Fatalf("delete once the hold is lifted: %v", err)
	}
	// Versioning cannot be suspended any more.
	if err := s.SetVersioning("acme", "b", VersioningSuspended); !errors.Is(err, ErrLockedVersioning) {
		t.Errorf("suspending versioning: %v, want ErrLockedVersioning", err)
	}
	if bk, _ := s.Bucket("acme", "b"); bk.Versioning != VersioningEnabled {
		t.Errorf("versioning %q after the refusal", bk.Versioning)
	}
}

// TestSetRetention: COMPLIANCE only lengthens; GOVERNANCE may become
// COMPLIANCE or lengthen, and be shortened or removed with a bypass; a
// retention past its date is free to change.
func TestSetRetention(t *testing.T) {
	clock := t0
	s := lockStore(t, &clock, ObjectLock{})
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	tests := []struct {
		name   string
		from   *Retention
		to     *Retention
		bypass bool
		now    time.Time
		ok     bool
	}{
		{"set on none", nil, &Retention{LockGovernance, at(10)}, false, t0, true},
		{"compliance longer", &Retention{LockCompliance, at(10)}, &Retention{LockCompliance, at(20)}, false, t0, true},
		{"compliance shorter", &Retention{LockCompliance, at(10)}, &Retention{LockCompliance, at(5)}, true, t0, false},
		{"compliance to governance", &Retention{LockCompliance, at(10)}, &Retention{LockGovernance, at(20)}, true, t0, false},
		{"compliance removed", &Retention{LockCompliance, at(10)}, nil, true, t0, false},
		{"compliance past its date", &Retention{LockCompliance, at(10)}, nil, false, at(11), true},
		{"governance longer", &Retention{LockGovernance, at(10)}, &Retention{LockGovernance, at(20)}, false, t0, true},
		{"compliance, the date read back", &Retention{LockCompliance, at(10)}, &Retention{LockCompliance, at(10).Truncate(time.Millisecond)}, false, t0, true},
		{"governance to compliance", &Retention{LockGovernance, at(10)}, &Retention{LockCompliance, at(20)}, false, t0, false},
		{"governance to compliance, bypassed", &Retention{LockGovernance, at(10)}, &Retention{LockCompliance, at(10)}, true, t0, true},
		{"governance shorter", &Retention{LockGovernance, at(10)}, &Retention{LockGovernance, at(5)}, false, t0, false},
		{"governance shorter, bypassed", &Retention{LockGovernance, at(10)}, &Retention{LockGovernance, at(5)}, true, t0, true},
		{"governance removed", &Retention{LockGovernance, at(10)}, nil, false, t0, false},
		{"governance removed, bypassed", &Retention{LockGovernance, at(10)}, nil, true, t0, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock = t0
			key := string(rune('a' + i))
			obj := putLocked(t, s, key, t0, &Lock{Retention: tt.from})
			clock = tt.now
			got, err := s.SetRetention("acme", "b", key, obj.VersionID, tt.to, tt.bypass, nil)
			if tt.ok != (err == nil) || err != nil && !errors.Is(err, ErrObjectLocked) {
				t.Fatalf("SetRetention: %v, want ok %v (or ErrObjectLocked)", err, tt.ok)
			}
			var ge *GovernanceError
			if err != nil && errors.As(err, &ge) != (tt.from.Mode == LockGovernance) {
				t.Errorf("SetRetention: %v (%T): a GovernanceError only where a bypass would do", err, err)
			}
			after, _ := s.ObjectVersion("acme", "b", key, obj.VersionID)
			want := tt.from.normal() // kept to the millisecond
			if tt.ok {
				want = tt.to.normal()
				if (got.Retention == nil) != (want == nil) {
					t.Errorf("returned retention %+v, want %+v", got.Retention, want)
				}
			}
			if (after.Retention == nil) != (want == nil) || want != nil && *after.Retention != *want {
				t.Errorf("retention now %+v, want %+v", after.Retention, want)
			}
		})
	}
}

// TestObjectLockNeedsTheBucket: a lock asked of a bucket without Object
// Lock changes nothing, nor does asking for one of a missing version.
func TestObjectLockNeedsTheBucket(t *testing.T) {
	clock := t0
	s := sweepStore(t, &clock)
	ctx := context.Background()
	lock := &Lock{LegalHold: true}
	if _, err := s.Put(ctx, "acme", "b", "k", strings.NewReader("x"), PutOptions{Max: 10, Now: t0, Lock: lock}); !errors.Is(err, ErrNoObjectLock) {
		t.Errorf("Put with a lock: %v, want ErrNoObjectLock", err)
	}
	if _, err := s.CreateUpload(t.Context(), "acme", "b", "k", PutOptions{Now: t0, Lock: lock}); !errors.Is(err, ErrNoObjectLock) {
		t.Errorf("CreateUpload with a lock: %v, want ErrNoObjectLock", err)
	}
	if _, err := s.Put(ctx, "acme", "b", "k", strings.NewReader("x"), PutOptions{Max: 10, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Copy(ctx, "acme", "b", "k", "b", "copy", t0, CopyOptions{Lock: lock}); !errors.Is(err, ErrNoObjectLock) {
		t.Errorf("Copy with a lock: %v, want ErrNoObjectLock", err)
	}
	if _, err := s.SetLegalHold("acme", "b", "k", "", true, nil); !errors.Is(err, ErrNoObjectLock) {
		t.Errorf("SetLegalHold: %v, want ErrNoObjectLock", err)
	}
	if obj, _ := s.Object("acme", "b", "k"); obj.LegalHold || obj.Retention != nil || exists(s, "copy") {
		t.Errorf("refused locks changed something: %+v, copy exists %v", obj, exists(s, "copy"))
	}
	for _, l := range []ObjectLock{{Mode: "STRICT", Days: 1}, {Mode: LockGovernance}, {Mode: LockGovernance, Days: 1, Years: 1},
		{Mode: LockCompliance, Days: -1}, {Days: 3}, {Mode: LockCompliance, Years: 101}} {
		if l.Check() == nil {
			t.Errorf("%+v passes Check", l)
		}
	}
}

// TestCopyTakesNoLock: a copy gets the destination's lock (its own
// headers, or the bucket's default), never its source's.
func TestCopyTakesNoLock(t *testing.T) {
	clock := t0
	s := lockStore(t, &clock, ObjectLock{Mode: LockGovernance, Years: 1})
	ctx := context.Background()
	putLocked(t, s, "src", t0, &Lock{Retention: &Retention{LockCompliance, t0.Add(time.Hour)}, LegalHold: true})
	cp, err := s.Copy(ctx, "acme", "b", "src", "b", "dst", t0.Add(time.Minute), CopyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cp.LegalHold || cp.Retention == nil || cp.Retention.Mode != LockGovernance || !cp.Retention.Until.Equal(t0.Add(time.Minute).AddDate(1, 0, 0).Truncate(time.Millisecond)) {
		t.Errorf("the copy's lock: hold %v, %+v; want the bucket's default alone", cp.LegalHold, cp.Retention)
	}
}

// TestObjectLockLifecycleLater: a version a lifecycle rule passed by while
// it was locked goes at a sweep after its retention has passed.
func TestObjectLockLifecycleLater(t *testing.T) {
	clock := t0
	s := lockStore(t, &clock, ObjectLock{Mode: LockCompliance, Days: 2})
	old := putLocked(t, s, "k", t0, nil)
	putLocked(t, s, "k", t0.Add(time.Hour), nil) // old is noncurrent from here
	if _, err := s.SetRules("acme", "b", []Rule{{ID: "nc", S3: true, Filter: FilterEmpty, NoncurrentDays: 1}}, t0); err != nil {
		t.Fatal(err)
	}
	// The rule is due from day(2) (noncurrent a day, to the next
	// midnight); the retention holds until t0 plus two days.
	clock = day(2).Add(time.Minute)
	sweepOnce(t, s, clock, 0)
	clock = day(3)
	sweepOnce(t, s, clock, 1)
	if _, err := s.ObjectVersion("acme", "b", "k", old.VersionID); !errors.Is(err, ErrNotFound) {
		t.Errorf("the version past its retention after the sweep: %v, want gone", err)
	}
}

// TestObjectLockNullVersion: a bucket that kept versions, was suspended
// (so a key has a null version), then enabled and locked: the null
// version's retention and legal hold protect it through overwrites,
// copies onto its key, deletes and lifecycle sweeps, and the bucket
// cannot be deleted.
func TestObjectLockNullVersion(t *testing.T) {
	for _, hold := range []bool{false, true} {
		name := "retention"
		if hold {
			name = "legal hold"
		}
		t.Run(name, func(t *testing.T) { testLockedNullVersion(t, hold) })
	}
}

// testLockedNullVersion is TestObjectLockNullVersion with one protection:
// a legal hold, or (hold false) a COMPLIANCE retention of a year.
func testLockedNullVersion(t *testing.T, hold bool) {
	clock := t0
	s := sweepStore(t, &clock)
	ctx := context.Background()
	for _, state := range []string{VersioningEnabled, VersioningSuspended} {
		if err := s.SetVersioning("acme", "b", state); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(ctx, "acme", "b", "k", strings.NewReader("null body"), PutOptions{Max: 100, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetVersioning("acme", "b", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	if err := s.SetObjectLock("acme", "b", ObjectLock{}); err != nil {
		t.Fatal(err)
	}
	var err error
	if hold {
		_, err = s.SetLegalHold("acme", "b", "k", "null", true, nil)
	} else {
		_, err = s.SetRetention("acme", "b", "k", "null", &Retention{LockCompliance, t0.AddDate(1, 0, 0)}, false, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	putLocked(t, s, "k", t0.Add(time.Minute), nil)
	if _, err := s.Copy(ctx, "acme", "b", "k", "b", "k", t0.Add(2*time.Minute), CopyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete("acme", "b", "k", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteVersionWith("acme", "b", "k", "null", VersionDeleteOptions{BypassGovernance: true}); !errors.Is(err, ErrObjectLocked) {
		t.Errorf("delete of the locked null version: %v, want ErrObjectLocked", err)
	}
	if _, err := s.SetRules("acme", "b", []Rule{{ID: "nc", S3: true, Filter: FilterEmpty, NoncurrentDays: 1}}, t0); err != nil {
		t.Fatal(err)
	}
	clock = t0.Add(24 * time.Hour)
	if _, err := s.Expire(ctx, day(20)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBucket("acme", "b"); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("DeleteBucket: %v, want ErrNotEmpty", err)
	}
	_, body, err := s.OpenObjectVersion(t.Context(), "acme", "b", "k", "null", nil)
	if err != nil {
		t.Fatalf("the null version after it all: %v", err)
	}
	defer body.Close()
	if got, _ := io.ReadAll(body); string(got) != "null body" {
		t.Errorf("the null version's body: %q", got)
	}
}
