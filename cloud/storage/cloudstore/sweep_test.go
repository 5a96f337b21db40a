package cloudstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// sweepStore is a store with body files whose clock reads *clock, and an
// account "acme" with the bucket "b".
func sweepStore(t *testing.T, clock *time.Time) *Store {
	t.Helper()
	s := newStore(t)
	if err := s.OpenBlobs(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	s.SetClock(func() time.Time { return *clock })
	if _, err := s.CreateBucket("acme", "b", "", t0); err != nil {
		t.Fatal(err)
	}
	return s
}

func putAt(t *testing.T, s *Store, clock *time.Time, key string, at time.Time, size int, tags map[string]string) {
	t.Helper()
	*clock = at
	_, err := s.Put(context.Background(), "acme", "b", key, strings.NewReader(strings.Repeat("x", size)), PutOptions{Max: 1 << 20, Now: at, Tags: tags})
	if err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// day is midnight UTC n days after t0's day.
func day(n int) time.Time { return time.Date(2026, 11, 21+n, 0, 0, 0, 0, time.UTC) }

func sweepOnce(t *testing.T, s *Store, now time.Time, want int) {
	t.Helper()
	if n, err := s.Expire(context.Background(), now); err != nil || n != want {
		t.Fatalf("Expire at %v: %d, %v; want %d", now, n, err, want)
	}
}

func exists(s *Store, key string) bool {
	_, err := s.Object("acme", "b", key)
	return err == nil
}

// TestSweepS3Filters checks an S3 rule's filters (prefix, tags, sizes), its
// rounding to the next midnight UTC, and that a disabled rule does nothing.
func TestSweepS3Filters(t *testing.T) {
	clock := t0
	s := sweepStore(t, &clock)
	putAt(t, s, &clock, "logs/tagged", t0, 10, map[string]string{"class": "tmp", "x": "y"})
	putAt(t, s, &clock, "logs/untagged", t0, 10, nil)
	putAt(t, s, &clock, "logs/other-tag", t0, 10, map[string]string{"class": "keep"})
	putAt(t, s, &clock, "big/a", t0, 100, nil)
	putAt(t, s, &clock, "big/b", t0, 5, nil)
	rules := []Rule{
		{ID: "tags", S3: true, Filter: FilterAnd, Prefix: "logs/", Tags: map[string]string{"class": "tmp"}, ExpireDays: 1},
		{ID: "size", S3: true, Filter: FilterAnd, Prefix: "big/", SizeGreaterThan: ptr[int64](50), SizeLessThan: ptr[int64](1000), ExpireDays: 1},
		{ID: "off", S3: true, Disabled: true, Filter: FilterEmpty, ExpireDays: 1},
	}
	if _, err := s.SetRules("acme", "b", rules, t0); err != nil {
		t.Fatal(err)
	}
	// t0 is 12:00 on day 0: one day later is 12:00 on day 1, and S3 rounds
	// to the midnight after it, day 2.
	o, _ := s.Object("acme", "b", "logs/tagged")
	got, r, ok := Expiry(rules, o)
	if !ok || !got.Equal(day(2)) || r.ID != "tags" {
		t.Errorf("Expiry(logs/tagged) = %v, %q, %v; want %v, tags", got, r.ID, ok, day(2))
	}
	sweepOnce(t, s, day(2).Add(-time.Nanosecond), 0)
	sweepOnce(t, s, day(2), 2)
	for key, want := range map[string]bool{"logs/tagged": false, "logs/untagged": true, "logs/other-tag": true, "big/a": false, "big/b": true} {
		if got := exists(s, key); got != want {
			t.Errorf("after the sweep, %s exists = %v, want %v", key, got, want)
		}
	}
}

// TestSweepDate checks Expiration Date: every object it takes expires on
// that midnight, however new.
func TestSweepDate(t *testing.T) {
	clock := t0
	s := sweepStore(t, &clock)
	putAt(t, s, &clock, "a", t0, 1, nil)
	putAt(t, s, &clock, "b", day(4).Add(-time.Hour), 1, nil)
	if _, err := s.SetRules("acme", "b", []Rule{{ID: "d", S3: true, Filter: FilterEmpty, ExpireDate: day(4)}}, t0); err != nil {
		t.Fatal(err)
	}
	sweepOnce(t, s, day(4).Add(-time.Second), 0)
	sweepOnce(t, s, day(4), 2)
}

// TestSweepVersions checks, in a bucket that keeps versions, that expiring
// a current version leaves a delete marker, that noncurrent versions go
// NoncurrentDays after their successor was written (keeping the
// NewerNoncurrentVersions newest), and that a delete marker left alone is
// removed.
func TestSweepVersions(t *testing.T) {
	clock := t0
	s := sweepStore(t, &clock)
	if err := s.SetVersioning("acme", "b", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	// k: v1 at day 0 noon, v2 (v1 noncurrent from then) at day 3 noon, v3
	// (current) at day 5 noon.
	putAt(t, s, &clock, "k", t0, 1, nil)
	putAt(t, s, &clock, "k", t0.Add(3*24*time.Hour), 2, nil)
	putAt(t, s, &clock, "k", t0.Add(5*24*time.Hour), 3, nil)
	rules := []Rule{{ID: "nc", S3: true, Filter: FilterEmpty, NoncurrentDays: 2, NewerNoncurrentVersions: 1}}
	if _, err := s.SetRules("acme", "b", rules, t0); err != nil {
		t.Fatal(err)
	}
	versions := func() []ListedVersion {
		t.Helper()
		l, err := s.ListVersions("acme", "b", "", "", "", "", 100)
		if err != nil {
			t.Fatal(err)
		}
		return l.Versions
	}
	// v1 became noncurrent on day 3 at noon: 2 days later, rounded, is day
	// 6. Only v1 may go: v2 is the one newer noncurrent version kept.
	sweepOnce(t, s, day(6).Add(-time.Second), 0)
	sweepOnce(t, s, day(6), 1)
	if vs := versions(); len(vs) != 2 || vs[1].Size != 2 {
		t.Fatalf("after the noncurrent sweep: %d versions (%+v); want v3, v2", len(vs), vs)
	}
	sweepOnce(t, s, day(60), 0) // v2 stays: it is the newer noncurrent one

	// Expiring the current version makes a delete marker; then
	// noncurrent versions go, and the marker, once alone, too.
	rules = []Rule{
		{ID: "cur", S3: true, Filter: FilterEmpty, ExpireDays: 1},
		{ID: "nc", S3: true, Filter: FilterEmpty, NoncurrentDays: 1, ExpiredObjectDeleteMarker: ptr(true)},
	}
	if _, err := s.SetRules("acme", "b", rules, t0); err != nil {
		t.Fatal(err)
	}
	clock = day(70)
	// k's v3 gets a marker; v2, noncurrent since day 5, goes.
	sweepOnce(t, s, day(70), 2)
	if _, err := s.Object("acme", "b", "k"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("k after expiry: %v, want not found", err)
	}
	if vs := versions(); len(vs) != 2 || !vs[0].DeleteMarker || !vs[0].IsLatest || vs[1].Size != 3 {
		t.Fatalf("after expiring k in a versioned bucket: %+v; want a delete marker over v3", vs)
	}
	// v3 became noncurrent on day 70 at 00:00 (the marker's time): a day
	// later, rounded, is day 72.
	sweepOnce(t, s, day(72).Add(-time.Second), 0)
	sweepOnce(t, s, day(72), 2) // v3, then the marker left alone
	if vs := versions(); len(vs) != 0 {
		t.Fatalf("after the sweeps: %+v; want no versions", vs)
	}
	if bk, _ := s.Bucket("acme", "b"); bk.Objects != 0 || bk.Versions != 0 || bk.VersionBytes != 0 || bk.Bytes != 0 {
		t.Errorf("bucket counters: %+v; want all 0", bk)
	}
}

// TestSweepUploads checks AbortIncompleteMultipartUpload.
func TestSweepUploads(t *testing.T) {
	clock := t0
	s := sweepStore(t, &clock)
	ctx := context.Background()
	var ids []string
	for _, key := range []string{"tmp/a", "keep/a"} {
		u, err := s.CreateUpload(t.Context(), "acme", "b", key, PutOptions{Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutPart(ctx, "acme", "b", key, u.ID, 1, strings.NewReader(strings.Repeat("p", InlineMax+1)), PartOptions{Now: t0}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
	}
	rules := []Rule{{ID: "abort", S3: true, Filter: FilterPrefix, Prefix: "tmp/", AbortDays: 3}}
	if _, err := s.SetRules("acme", "b", rules, t0); err != nil {
		t.Fatal(err)
	}
	if at, r, ok := UploadAbort(rules, "tmp/a", t0); !ok || !at.Equal(day(4)) || r.ID != "abort" {
		t.Errorf("UploadAbort(tmp/a) = %v, %q, %v; want %v, abort", at, r.ID, ok, day(4))
	}
	if _, _, ok := UploadAbort(rules, "keep/a", t0); ok {
		t.Errorf("UploadAbort(keep/a) applies; want not")
	}
	sweepOnce(t, s, day(4).Add(-time.Second), 0)
	sweepOnce(t, s, day(4), 1)
	if _, _, err := s.Parts("acme", "b", "tmp/a", ids[0], 0, 10); !errors.Is(err, ErrNoSuchUpload) {
		t.Errorf("tmp/a's upload after the sweep: %v, want not found", err)
	}
	if _, _, err := s.Parts("acme", "b", "keep/a", ids[1], 0, 10); err != nil {
		t.Errorf("keep/a's upload after the sweep: %v, want kept", err)
	}
}

// TestSetRules checks that SetRules replaces REST and S3 rules alike in
// one go, keeps the order given, refuses duplicate ids and too many rules
// (changing nothing), and logs only what changed.
func TestSetRules(t *testing.T) {
	clock := t0
	s := sweepStore(t, &clock)
	rest, err := s.AddRule("acme", "b", "tmp/", 7, t0)
	if err != nil {
		t.Fatal(err)
	}
	later := t0.Add(time.Hour)
	set := []Rule{{ID: "z", S3: true, Filter: FilterEmpty, AbortDays: 1}, rest, {S3: true, Filter: FilterPrefix, Prefix: "a/", ExpireDays: 3}}
	kept, err := s.SetRules("acme", "b", set, later)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(kept[2].ID, "rule_") {
		t.Errorf("a rule given no id got %q, want rule_…", kept[2].ID)
	}
	got, _ := s.Rules("acme", "b")
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if want := []string{"z", rest.ID, kept[2].ID}; strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("rules after SetRules: %v, want %v (the order given)", ids, want)
	}
	evs, _, err := s.Events("acme", "b", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	added, removed := 0, 0
	for _, e := range evs {
		switch e.Type {
		case EventRuleAdded:
			added++
		case EventRuleRemoved:
			removed++
		}
	}
	// The REST rule's addition, then the two new rules; the REST rule was
	// given again unchanged and logs nothing.
	if added != 3 || removed != 0 {
		t.Errorf("rule events: %d added, %d removed; want 3, 0", added, removed)
	}
	for name, bad := range map[string][]Rule{
		"duplicate ids": {{ID: "x", ExpireDays: 1}, {ID: "x", ExpireDays: 2}},
		"too many":      make([]Rule, MaxRules+1),
		"long id":       {{ID: strings.Repeat("i", MaxRuleID+1), ExpireDays: 1}},
	} {
		if _, err := s.SetRules("acme", "b", bad, later); !errors.Is(err, ErrRules) {
			t.Errorf("SetRules(%s): %v, want ErrRules", name, err)
		}
	}
	if again, _ := s.Rules("acme", "b"); len(again) != 3 {
		t.Errorf("after refused sets: %d rules, want the 3 kept", len(again))
	}
	if _, err := s.SetRules("acme", "b", nil, later); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Rules("acme", "b"); len(again) != 0 {
		t.Errorf("after SetRules(nil): %d rules, want none", len(again))
	}
	if _, err := s.SetRules("other", "b", nil, later); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetRules on another account's bucket: %v, want ErrNotFound", err)
	}
}
