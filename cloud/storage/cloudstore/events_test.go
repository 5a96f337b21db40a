package cloudstore

// Tests of the activity log: every change is logged in the batch that
// makes it, numbered without gaps, trimmed to the newest events, paged
// newest first, kept across Close and Open, and deleted with its bucket.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// eventLine is an event in short: "id type key size", and the copy's
// source or the rule's prefix and days when they are set.
func eventLine(ev Event) string {
	s := fmt.Sprintf("%d %s %s %d", ev.ID, ev.Type, ev.Key, ev.Size)
	if ev.SourceKey != "" {
		s += " from " + ev.SourceBucket + "/" + ev.SourceKey
	}
	if ev.RuleID != "" && ev.Type != EventObjectExpired {
		s += fmt.Sprintf(" rule %q %d", ev.Prefix, ev.ExpireDays)
	}
	return s
}

func eventLines(t *testing.T, s *Store, account, bucket string) string {
	t.Helper()
	evs, total, err := s.Events(account, bucket, 0, 1000)
	if err != nil {
		t.Fatalf("Events(%s, %s): %v", account, bucket, err)
	}
	if total != len(evs) {
		t.Errorf("Events(%s, %s): total %d, %d events", account, bucket, total, len(evs))
	}
	var lines []string
	for _, ev := range evs {
		lines = append(lines, eventLine(ev))
	}
	return strings.Join(lines, "\n")
}

func TestEventsLogEveryChange(t *testing.T) {
	b := newBlobStore(t) // acme's bucket "pics", created at t0
	ctx := context.Background()
	clock := t0
	b.SetClock(func() time.Time { return clock })
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	steps := []func() error{
		func() error {
			_, err := b.UpdateBucket("acme", "pics", at(1), func(bk *Bucket) { bk.Notes = "n" })
			return err
		},
		func() error {
			_, err := b.UpdateBucket("acme", "pics", at(2), func(bk *Bucket) { bk.Public = true })
			return err
		},
		func() error { // no change: no event
			_, err := b.UpdateBucket("acme", "pics", at(3), func(bk *Bucket) { bk.Public = true })
			return err
		},
		func() error {
			_, err := b.UpdateBucket("acme", "pics", at(4), func(bk *Bucket) { bk.Public, bk.Notes = false, "m" })
			return err
		},
		func() error {
			_, err := b.Store.Put(ctx, "acme", "pics", "a.txt", strings.NewReader("hello"), PutOptions{ContentType: "text/plain", Max: 100, Now: at(5)})
			return err
		},
		func() error {
			_, err := b.Store.Put(ctx, "acme", "pics", "big", strings.NewReader(strings.Repeat("x", InlineMax+1)), PutOptions{ContentType: "", Max: 1 << 20, Now: at(6)})
			return err
		},
		func() error {
			_, err := b.Copy(context.Background(), "acme", "pics", "a.txt", "pics", "b.txt", at(7), CopyOptions{KeepEncryption: true})
			return err
		},
		func() error { clock = at(8); _, err := b.Delete("acme", "pics", "a.txt", DeleteOptions{}); return err },
		func() error {
			_, err := b.AddRule("acme", "pics", "b", 1, at(9))
			return err
		},
		func() error {
			_, err := b.Expire(ctx, at(9).Add(48*time.Hour)) // b.txt and big
			return err
		},
		func() error {
			rules, err := b.Rules("acme", "pics")
			if err != nil {
				return err
			}
			clock = at(10)
			return b.DeleteRule("acme", "pics", rules[0].ID)
		},
		// Failures log nothing.
		func() error {
			if _, err := b.Delete("acme", "pics", "nope", DeleteOptions{}); !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("delete of a missing object: %v", err)
			}
			if _, err := b.Copy(context.Background(), "acme", "pics", "nope", "pics", "x", at(11), CopyOptions{KeepEncryption: true}); !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("copy of a missing object: %v", err)
			}
			if _, err := b.Store.Put(ctx, "acme", "pics", "c", strings.NewReader("too long"), PutOptions{ContentType: "", Max: 2, Now: at(11)}); !errors.Is(err, ErrTooLarge) {
				return fmt.Errorf("oversized put: %v", err)
			}
			return nil
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := strings.Join([]string{
		`13 lifecycle.rule_removed  0 rule "b" 1`,
		`12 object.expired big 65537`,
		`11 object.expired b.txt 5`,
		`10 lifecycle.rule_added  0 rule "b" 1`,
		`9 object.deleted a.txt 5`,
		`8 object.copied b.txt 5 from /a.txt`,
		`7 object.created big 65537`,
		`6 object.created a.txt 5`,
		`5 bucket.made_private  0`,
		`4 bucket.updated  0`,
		`3 bucket.made_public  0`,
		`2 bucket.updated  0`,
		`1 bucket.created  0`,
	}, "\n")
	if got := eventLines(t, b.Store, "acme", "pics"); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
	evs, _, _ := b.Events("acme", "pics", 0, 100)
	wantTimes := []time.Time{at(10), at(9).Add(48 * time.Hour), at(9).Add(48 * time.Hour), at(9), at(8), at(7), at(6), at(5), at(4), at(4), at(2), at(1), t0}
	for i, ev := range evs {
		if !ev.Time.Equal(wantTimes[i]) || ev.Time.Location() != time.UTC {
			t.Errorf("event %d (%s): time %v, want %v in UTC", ev.ID, ev.Type, ev.Time, wantTimes[i])
		}
	}
	if evs[0].RuleID == "" || evs[1].RuleID != evs[0].RuleID {
		t.Errorf("rule ids: removed %q, expired by %q; want the same, set", evs[0].RuleID, evs[1].RuleID)
	}
}

func TestEventsCrossBucketCopy(t *testing.T) {
	b := newBlobStore(t)
	if _, err := b.CreateBucket("acme", "docs", "", t0); err != nil {
		t.Fatal(err)
	}
	b.put("a", []byte("abc"))
	if _, err := b.Copy(context.Background(), "acme", "pics", "a", "docs", "z", t0, CopyOptions{Replace: nil, KeepEncryption: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := eventLines(t, b.Store, "acme", "docs"), "2 object.copied z 3 from pics/a\n1 bucket.created  0"; got != want {
		t.Errorf("docs events:\n%s\nwant:\n%s", got, want)
	}
	if got, want := eventLines(t, b.Store, "acme", "pics"), "2 object.created a 3\n1 bucket.created  0"; got != want {
		t.Errorf("pics events:\n%s\nwant:\n%s", got, want)
	}
}

func TestEventsTrimmedAndPaged(t *testing.T) {
	b := newBlobStore(t)
	b.maxEvents = 5
	for i := range 8 { // events 2 to 9, after the bucket's creation
		b.put(fmt.Sprintf("k%d", i), []byte("x"))
	}
	tests := []struct {
		skip, n int
		want    string
	}{
		{0, 100, "9 8 7 6 5"},
		{0, 2, "9 8"},
		{2, 2, "7 6"},
		{4, 2, "5"},
		{5, 2, ""},
		{100, 2, ""},
		{0, 0, ""},
	}
	for _, tt := range tests {
		evs, total, err := b.Events("acme", "pics", tt.skip, tt.n)
		if err != nil {
			t.Fatalf("Events(skip %d, n %d): %v", tt.skip, tt.n, err)
		}
		var ids []string
		for _, ev := range evs {
			ids = append(ids, fmt.Sprint(ev.ID))
		}
		if got := strings.Join(ids, " "); got != tt.want || total != 5 {
			t.Errorf("Events(skip %d, n %d) = %q, total %d; want %q, total 5", tt.skip, tt.n, got, total, tt.want)
		}
	}
	// The trimmed events are gone from the database, not only hidden.
	n := 0
	b.scan(eventPrefix("pics"), func(_, _ []byte) error { n++; return nil })
	if n != 5 {
		t.Errorf("%d event records stored, want 5", n)
	}
}

func TestEventsSurviveReopen(t *testing.T) {
	b := newBlobStore(t)
	b.put("a", []byte("x"))
	b.reopen()
	b.put("b", []byte("y"))
	if got, want := eventLines(t, b.Store, "acme", "pics"), "3 object.created b 1\n2 object.created a 1\n1 bucket.created  0"; got != want {
		t.Errorf("events after reopen:\n%s\nwant:\n%s", got, want)
	}
}

func TestEventsGoWithTheBucket(t *testing.T) {
	b := newBlobStore(t)
	b.put("a", []byte("x"))
	if _, err := b.Delete("acme", "pics", "a", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteBucket("acme", "pics"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Events("acme", "pics", 0, 10); !errors.Is(err, ErrNotFound) {
		t.Errorf("Events of a deleted bucket: %v, want ErrNotFound", err)
	}
	if _, err := b.CreateBucket("other", "pics", "", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, want := eventLines(t, b.Store, "other", "pics"), "1 bucket.created  0"; got != want {
		t.Errorf("events of the new bucket:\n%s\nwant:\n%s", got, want)
	}
	if _, _, err := b.Events("acme", "pics", 0, 10); !errors.Is(err, ErrNotFound) {
		t.Errorf("Events of another account's bucket: %v, want ErrNotFound", err)
	}
	if _, _, err := b.Events("acme", "nope", 0, 10); !errors.Is(err, ErrNotFound) {
		t.Errorf("Events of a missing bucket: %v, want ErrNotFound", err)
	}
}
