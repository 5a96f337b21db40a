package cloudstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

// Lifecycle rule limits.
const (
	// MaxExpireDays bounds every day count of a rule (100 years).
	MaxExpireDays = 36500
	// MaxRules bounds the rules SetRules takes, as S3 bounds a lifecycle
	// configuration.
	MaxRules = 1000
	// MaxRuleID bounds a rule's id, as S3 bounds it.
	MaxRuleID = 255
	// MaxNewerNoncurrent bounds NewerNoncurrentVersions, as S3 does.
	MaxNewerNoncurrent = 100
)

// Rule is a bucket's lifecycle rule.
//
// The REST API makes rules of a Prefix and ExpireDays: objects under Prefix
// expire ExpireDays days after they were last modified. S3's
// PutBucketLifecycleConfiguration makes rules (S3 set) that may also be
// disabled, filter by tags and size, expire current versions on a date,
// expire noncurrent versions and lone delete markers, and abort multipart
// uploads. Both kinds are one set: each API sees the other's. Records
// written before the S3 fields existed read as REST rules.
type Rule struct {
	ID     string `json:"id"`
	Bucket string `json:"bucket"`
	Prefix string `json:"prefix"`
	// ExpireDays expires current versions that many days after they were
	// last modified; 0 (only in a rule made over S3) does not.
	ExpireDays int       `json:"expire_days"`
	CreatedAt  time.Time `json:"created_at"`

	// S3 marks a rule made over S3: its day counts end at the midnight UTC
	// that follows, as S3 counts them (a REST rule's ExpireDays are
	// exact). Order keeps the place it had in its S3 document.
	S3    bool `json:"s3,omitempty"`
	Order int  `json:"order,omitempty"`
	// Disabled rules are kept but do nothing (S3's Status Disabled).
	Disabled bool `json:"disabled,omitempty"`
	// Filter records how the S3 document gave the rule's filter (one of
	// the Filter* constants), so that it reads back in the same shape;
	// "" for a REST rule.
	Filter string `json:"filter,omitempty"`
	// Tags, SizeGreaterThan and SizeLessThan narrow the filter further:
	// an object must carry every tag, and be larger and smaller than the
	// sizes given.
	Tags            map[string]string `json:"tags,omitempty"`
	SizeGreaterThan *int64            `json:"size_greater_than,omitempty"`
	SizeLessThan    *int64            `json:"size_less_than,omitempty"`
	// ExpireDate expires current versions from that midnight UTC on.
	ExpireDate time.Time `json:"expire_date,omitzero"`
	// ExpiredObjectDeleteMarker, when true, removes a delete marker that
	// is the only version left of its key. It is a pointer because S3
	// keeps (and reads back) an explicit false.
	ExpiredObjectDeleteMarker *bool `json:"expired_object_delete_marker,omitempty"`
	// NoncurrentDays removes a noncurrent version that many days after it
	// became noncurrent (when its successor was written), keeping the
	// NewerNoncurrentVersions newest noncurrent versions whatever their age.
	NoncurrentDays          int `json:"noncurrent_days,omitempty"`
	NewerNoncurrentVersions int `json:"newer_noncurrent_versions,omitempty"`
	// AbortDays aborts multipart uploads under Prefix that many days after
	// they were initiated.
	AbortDays int `json:"abort_days,omitempty"`
}

// How an S3 document gave a rule's filter (Rule.Filter).
const (
	FilterLegacy = "legacy" // the rule's own Prefix element, no Filter
	FilterEmpty  = "empty"  // an empty Filter: every object
	FilterPrefix = "prefix"
	FilterTag    = "tag"
	FilterAnd    = "and"
	FilterSizeGT = "size_gt" // ObjectSizeGreaterThan alone
	FilterSizeLT = "size_lt" // ObjectSizeLessThan alone
)

const tRule = 'L' // L | bucket | 0 | rule id -> Rule

// Matches reports whether r's filter takes o (a version; a delete marker
// has size 0 and no tags). Whether r is enabled is not its concern.
func (r Rule) Matches(o Object) bool {
	if !strings.HasPrefix(o.Key, r.Prefix) {
		return false
	}
	for k, v := range r.Tags {
		if got, ok := o.Tags[k]; !ok || got != v {
			return false
		}
	}
	if r.SizeGreaterThan != nil && o.Size <= *r.SizeGreaterThan {
		return false
	}
	if r.SizeLessThan != nil && o.Size >= *r.SizeLessThan {
		return false
	}
	return true
}

// after is days days after t, as r counts them: exactly for a REST rule;
// for an S3 rule, the midnight UTC that follows, as S3 rounds.
func (r Rule) after(t time.Time, days int) time.Time {
	t = t.UTC().Add(time.Duration(days) * 24 * time.Hour)
	if !r.S3 {
		return t
	}
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
}

// ExpiresAt returns when r expires o as the current version of its key,
// if it does.
func (r Rule) ExpiresAt(o Object) (time.Time, bool) {
	if r.Disabled || o.DeleteMarker || !r.Matches(o) {
		return time.Time{}, false
	}
	switch {
	case r.ExpireDays > 0:
		return r.after(o.LastModified, r.ExpireDays), true
	case !r.ExpireDate.IsZero():
		return r.ExpireDate, true
	}
	return time.Time{}, false
}

// Expiry returns the earliest time one of rules expires o, the current
// version of its key, and that rule (S3's x-amz-expiration).
func Expiry(rules []Rule, o Object) (time.Time, Rule, bool) {
	var at time.Time
	var by Rule
	found := false
	for _, r := range rules {
		if t, ok := r.ExpiresAt(o); ok && (!found || t.Before(at)) {
			at, by, found = t, r, true
		}
	}
	return at, by, found
}

// UploadAbort returns the earliest time one of rules aborts a multipart
// upload of key initiated at initiated, and that rule (S3's
// x-amz-abort-date).
func UploadAbort(rules []Rule, key string, initiated time.Time) (time.Time, Rule, bool) {
	var at time.Time
	var by Rule
	found := false
	for _, r := range rules {
		if r.Disabled || r.AbortDays == 0 || !strings.HasPrefix(key, r.Prefix) {
			continue
		}
		if t := r.after(initiated, r.AbortDays); !found || t.Before(at) {
			at, by, found = t, r, true
		}
	}
	return at, by, found
}

// AddRule adds a lifecycle rule to account's bucket, which may hold at
// most MaxRules.
func (s *Store) AddRule(account, bucket, prefix string, days int, now time.Time) (Rule, error) {
	if days < 1 || days > MaxExpireDays {
		return Rule{}, fmt.Errorf("expire_days must be from 1 to %d", MaxExpireDays)
	}
	if err := storagenames.ValidKeyPrefix(prefix); err != nil {
		return Rule{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.Bucket(account, bucket); err != nil {
		return Rule{}, err
	}
	// The bound SetRules keeps (and S3 a configuration): a bucket holding
	// more could no longer be written back over S3.
	if rules, err := s.rulesOf(bucket); err != nil {
		return Rule{}, err
	} else if len(rules) >= MaxRules {
		return Rule{}, fmt.Errorf("%w: a bucket has at most %d lifecycle rules", ErrRules, MaxRules)
	}
	r := Rule{ID: newRuleID(), Bucket: bucket, Prefix: prefix, ExpireDays: days, CreatedAt: now.UTC()}
	b := s.db.NewBatch()
	defer b.Close()
	if err := setJSON(b, k(tRule, bucket, r.ID), r); err != nil {
		return Rule{}, err
	}
	if err := s.logEventsLocked(b, bucket, ruleEvent(EventRuleAdded, r, now)); err != nil {
		return Rule{}, err
	}
	return r, s.commit(b)
}

func newRuleID() string { return "rule_" + randomBase62(12) }

func ruleEvent(typ string, r Rule, now time.Time) Event {
	return Event{Type: typ, Time: now, RuleID: r.ID, Prefix: r.Prefix, ExpireDays: r.ExpireDays}
}

// Rules returns account's bucket's rules, oldest first (the rules of one
// S3 document in its order).
func (s *Store) Rules(account, bucket string) ([]Rule, error) {
	if _, err := s.Bucket(account, bucket); err != nil {
		return nil, err
	}
	return s.rulesOf(bucket)
}

func (s *Store) rulesOf(bucket string) ([]Rule, error) {
	var out []Rule
	err := s.scan(append(k(tRule, bucket), 0), func(_, v []byte) error {
		var r Rule
		if err := json.Unmarshal(v, &r); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	sortRules(out)
	return out, err
}

func sortRules(rules []Rule) {
	sort.Slice(rules, func(i, j int) bool {
		a, b := rules[i], rules[j]
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.Before(b.CreatedAt)
		}
		if a.Order != b.Order {
			return a.Order < b.Order
		}
		return a.ID < b.ID
	})
}

// checkRule checks what the store needs of a rule given to SetRules; the
// S3 endpoint checks the rest, with S3's answers.
func checkRule(r Rule) error {
	if len(r.ID) > MaxRuleID {
		return fmt.Errorf("cloudstore: rule id longer than %d bytes", MaxRuleID)
	}
	if len(r.Prefix) > MaxKeyLen {
		return fmt.Errorf("cloudstore: rule prefix longer than %d bytes", MaxKeyLen)
	}
	for _, d := range []int{r.ExpireDays, r.NoncurrentDays, r.AbortDays} {
		if d < 0 || d > MaxExpireDays {
			return fmt.Errorf("cloudstore: a rule's days must be from 1 to %d", MaxExpireDays)
		}
	}
	if r.NewerNoncurrentVersions < 0 || r.NewerNoncurrentVersions > MaxNewerNoncurrent {
		return fmt.Errorf("cloudstore: NewerNoncurrentVersions must be from 0 to %d", MaxNewerNoncurrent)
	}
	return nil
}

// ErrRules is wrapped by SetRules' refusals of a set of rules, and by
// AddRule's of one past MaxRules.
var ErrRules = errors.New("cloudstore: invalid lifecycle rules")

// SetRules replaces every lifecycle rule of account's bucket (whichever API
// made them) with rules, in one batch, and returns them as kept: at most
// MaxRules, ids unique (a rule without one is given one, as the REST API
// gives them), made now in the order given. A rule that did not change
// logs no event; the others log their removal and addition. No rules
// removes them all (S3's DeleteBucketLifecycle).
func (s *Store) SetRules(account, bucket string, rules []Rule, now time.Time) ([]Rule, error) {
	if len(rules) > MaxRules {
		return nil, fmt.Errorf("%w: more than %d rules", ErrRules, MaxRules)
	}
	kept := make([]Rule, len(rules))
	ids := map[string]bool{}
	for i, r := range rules {
		if r.ID == "" {
			r.ID = newRuleID()
		}
		if ids[r.ID] {
			return nil, fmt.Errorf("%w: rule id %q given twice", ErrRules, r.ID)
		}
		ids[r.ID] = true
		if err := checkRule(r); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrRules, err)
		}
		r.Bucket, r.CreatedAt, r.Order = bucket, now.UTC(), i+1
		r.Tags = maps.Clone(r.Tags)
		kept[i] = r
	}
	err := s.write(func(t *tx) error {
		if _, err := s.Bucket(account, bucket); err != nil {
			return err
		}
		old, err := s.rulesOf(bucket)
		if err != nil {
			return err
		}
		b := s.db.NewBatch()
		defer t.closeUnapplied(b)
		var events []Event
		was := map[string]Rule{}
		for _, r := range old {
			was[r.ID] = r
			if nr, ok := findRule(kept, r.ID); !ok || !sameRule(r, nr) {
				events = append(events, ruleEvent(EventRuleRemoved, r, now))
			}
			if err := b.Delete(k(tRule, bucket, r.ID), nil); err != nil {
				return err
			}
		}
		for _, r := range kept {
			if or, ok := was[r.ID]; !ok || !sameRule(or, r) {
				events = append(events, ruleEvent(EventRuleAdded, r, now))
			}
			if err := setJSON(b, k(tRule, bucket, r.ID), r); err != nil {
				return err
			}
		}
		if err := s.logEventsLocked(b, bucket, events...); err != nil {
			return err
		}
		return s.apply(t, b)
	})
	if err != nil {
		return nil, err
	}
	return kept, nil
}

func findRule(rules []Rule, id string) (Rule, bool) {
	for _, r := range rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// sameRule reports whether two rules do the same, wherever they sit.
func sameRule(a, b Rule) bool {
	a.CreatedAt, b.CreatedAt, a.Order, b.Order = time.Time{}, time.Time{}, 0, 0
	if len(a.Tags) == 0 && len(b.Tags) == 0 {
		a.Tags, b.Tags = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

// DeleteRule removes a rule from account's bucket.
func (s *Store) DeleteRule(account, bucket, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.Bucket(account, bucket); err != nil {
		return err
	}
	var r Rule
	if err := s.getJSON(k(tRule, bucket, id), &r); err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	b.Delete(k(tRule, bucket, id), nil)
	if err := s.logEventsLocked(b, bucket, ruleEvent(EventRuleRemoved, r, s.now())); err != nil {
		return err
	}
	return s.commit(b)
}

// RunLifecycle runs Expire every interval until ctx ends, reading time
// from now; errors are logged and the next round tries again.
func (s *Store) RunLifecycle(ctx context.Context, interval time.Duration, now func() time.Time, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.Expire(ctx, now())
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("lifecycle sweep failed", "err", err)
		case n > 0:
			log.Info("lifecycle sweep", "expired", n)
		}
		// Multipart uploads left unfinished for a week are aborted, as
		// S3's AbortIncompleteMultipartUpload rule would, so their parts
		// do not hold disk space forever.
		if n, err := s.ExpireUploads(now().Add(-UploadMaxAge)); err != nil {
			log.Error("aborting stale multipart uploads failed", "err", err)
		} else if n > 0 {
			log.Info("lifecycle sweep", "aborted_uploads", n)
		}
	}
}

// UploadMaxAge is how long a multipart upload may stay unfinished.
const UploadMaxAge = 7 * 24 * time.Hour
