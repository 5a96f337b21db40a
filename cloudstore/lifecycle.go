package cloudstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"
)

// MaxExpireDays bounds a lifecycle rule's expiry (100 years).
const MaxExpireDays = 36500

// Rule is a bucket's lifecycle rule: objects under Prefix expire
// ExpireDays days after they were last modified.
type Rule struct {
	ID         string    `json:"id"`
	Bucket     string    `json:"bucket"`
	Prefix     string    `json:"prefix"`
	ExpireDays int       `json:"expire_days"`
	CreatedAt  time.Time `json:"created_at"`
}

const tRule = 'L' // L | bucket | 0 | rule id -> Rule

// AddRule adds a lifecycle rule to account's bucket.
func (s *Store) AddRule(account, bucket, prefix string, days int, now time.Time) (Rule, error) {
	if days < 1 || days > MaxExpireDays {
		return Rule{}, fmt.Errorf("expire_days must be from 1 to %d", MaxExpireDays)
	}
	if len(prefix) > MaxKeyLen {
		return Rule{}, fmt.Errorf("prefix must be at most %d bytes", MaxKeyLen)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.Bucket(account, bucket); err != nil {
		return Rule{}, err
	}
	r := Rule{ID: "rule_" + randomBase62(12), Bucket: bucket, Prefix: prefix, ExpireDays: days, CreatedAt: now.UTC()}
	b := s.db.NewBatch()
	defer b.Close()
	if err := setJSON(b, k(tRule, bucket, r.ID), r); err != nil {
		return Rule{}, err
	}
	ev := Event{Type: EventRuleAdded, Time: now, RuleID: r.ID, Prefix: r.Prefix, ExpireDays: r.ExpireDays}
	if err := s.logEventsLocked(b, bucket, ev); err != nil {
		return Rule{}, err
	}
	return r, s.commit(b)
}

// Rules returns account's bucket's rules, oldest first.
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
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, err
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
	ev := Event{Type: EventRuleRemoved, Time: s.now(), RuleID: r.ID, Prefix: r.Prefix, ExpireDays: r.ExpireDays}
	if err := s.logEventsLocked(b, bucket, ev); err != nil {
		return err
	}
	return s.commit(b)
}

// Expire deletes every object that a lifecycle rule says has expired at
// now, and returns how many it deleted.
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
	deleted := 0
rules:
	for _, r := range rules {
		var bk Bucket
		if err := s.getJSON(k(tBucket, r.Bucket), &bk); err != nil || bk.CreatedAt.After(r.CreatedAt) {
			// The bucket went away (its rules go with it), or its name now
			// belongs to a newer bucket the rule was not made for.
			continue
		}
		cutoff := now.Add(-time.Duration(r.ExpireDays) * 24 * time.Hour)
		marker := ""
		for {
			if err := ctx.Err(); err != nil {
				return deleted, err
			}
			l, err := s.ListObjects(bk.Account, r.Bucket, r.Prefix, "", marker, 1000)
			if errors.Is(err, ErrNotFound) {
				break // the bucket was deleted during the sweep
			}
			if err != nil {
				return deleted, err
			}
			for _, o := range l.Objects {
				if !o.LastModified.After(cutoff) {
					// A rule deleted during the sweep stops at once.
					var still Rule
					if s.getJSON(k(tRule, r.Bucket, r.ID), &still) != nil {
						continue rules
					}
					ev := Event{Type: EventObjectExpired, Time: now, RuleID: r.ID}
					if _, err := s.deleteObject(bk.Account, r.Bucket, o.Key, ev); err == nil {
						deleted++
					} else if !errors.Is(err, ErrNotFound) { // deleted meanwhile: fine
						return deleted, err
					}
				}
			}
			if l.NextMarker == "" {
				break
			}
			marker = l.NextMarker
		}
	}
	return deleted, nil
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
