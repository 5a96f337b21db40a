package cloudstore

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/internal/pebblekv"
)

// MaxEvents is how many events a bucket's activity log keeps: each new
// event beyond it drops the oldest, in the same batch.
const MaxEvents = 10000

// Event types of the activity log.
const (
	EventBucketCreated = "bucket.created"
	EventBucketUpdated = "bucket.updated" // notes changed
	EventBucketPublic  = "bucket.made_public"
	EventBucketPrivate = "bucket.made_private"
	EventObjectCreated = "object.created" // upload, folder, overwrite
	EventObjectCopied  = "object.copied"
	EventObjectDeleted = "object.deleted"
	EventObjectExpired = "object.expired" // by a lifecycle rule
	EventRuleAdded     = "lifecycle.rule_added"
	EventRuleRemoved   = "lifecycle.rule_removed"
)

const (
	tEventSeq = 'N' // N | bucket -> the newest event's number (8 bytes, big-endian)
	tEvent    = 'E' // E | bucket | 0 | event number (8 bytes, big-endian) -> Event
)

// Event is one change to a bucket, recorded in the same batch as the
// change itself: whoever made it (the REST API, the S3 endpoint, the
// lifecycle sweeper), the log and the data never disagree.
type Event struct {
	// ID numbers the bucket's events from 1, without gaps; a bucket
	// deleted and created again starts over.
	ID   int64     `json:"id"`
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	Key  string    `json:"key,omitempty"`  // the object's key (the destination of a copy)
	Size int64     `json:"size,omitempty"` // the object's size
	// VersionID is the version made or deleted, in a bucket that keeps
	// versions ("null" or "" for the null version).
	VersionID string `json:"version_id,omitempty"`
	SourceKey string `json:"source_key,omitempty"` // of a copy
	// SourceBucket is a copy's source bucket, when it is another one.
	SourceBucket string `json:"source_bucket,omitempty"`
	RuleID       string `json:"rule_id,omitempty"` // of a rule event, or of the rule that expired an object
	Prefix       string `json:"prefix,omitempty"`  // of a rule event
	ExpireDays   int    `json:"expire_days,omitempty"`
}

func eventSeqKey(bucket string) []byte { return k(tEventSeq, bucket) }

func eventKey(bucket string, id int64) []byte {
	key := append(k(tEvent, bucket), 0)
	return binary.BigEndian.AppendUint64(key, uint64(id))
}

// eventPrefix bounds every event key of bucket.
func eventPrefix(bucket string) []byte { return append(k(tEvent, bucket), 0) }

// lastEvent reads bucket's newest event number (0 when it has none).
func lastEvent(r pebble.Reader, bucket string) (int64, error) {
	v, closer, err := r.Get(eventSeqKey(bucket))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cloudstore: %w", err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, errors.New("cloudstore: corrupt event sequence")
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// logEventsLocked adds evs to bucket's log in b, numbering them after the
// newest committed event and dropping the ones that fall out of the
// newest MaxEvents. s.mu must be held from here to the commit of b, so
// that no other batch takes the same numbers.
func (s *Store) logEventsLocked(b *pebble.Batch, bucket string, evs ...Event) error {
	last, err := lastEvent(s.db, bucket)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		last++
		ev.ID = last
		ev.Time = ev.Time.UTC()
		if err := setJSON(b, eventKey(bucket, ev.ID), ev); err != nil {
			return err
		}
		if old := ev.ID - s.maxEvents; old > 0 {
			if err := b.Delete(eventKey(bucket, old), nil); err != nil {
				return err
			}
		}
	}
	return b.Set(eventSeqKey(bucket), binary.BigEndian.AppendUint64(nil, uint64(last)), nil)
}

// deleteEvents drops bucket's whole log in b.
func deleteEvents(b *pebble.Batch, bucket string) error {
	if err := b.Delete(eventSeqKey(bucket), nil); err != nil {
		return err
	}
	p := eventPrefix(bucket)
	return b.DeleteRange(p, pebblekv.PrefixEnd(p), nil)
}

// Events returns account's bucket's events, newest first: skip the newest
// skip, then up to n. total is how many the log holds (at most
// MaxEvents).
func (s *Store) Events(account, bucket string, skip, n int) (evs []Event, total int, err error) {
	snap := s.db.NewSnapshot()
	defer snap.Close()
	var bk Bucket
	if err := getJSONFrom(snap, k(tBucket, bucket), &bk); err != nil {
		return nil, 0, err
	}
	if bk.Account != account {
		return nil, 0, ErrNotFound
	}
	last, err := lastEvent(snap, bucket)
	if err != nil {
		return nil, 0, err
	}
	oldest := max(1, last-s.maxEvents+1)
	total = int(last - oldest + 1)
	if last == 0 {
		total = 0
	}
	evs = []Event{}
	top := last - int64(skip) // the newest event of the answer
	if skip < 0 || n <= 0 || top < oldest {
		return evs, total, nil
	}
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: eventKey(bucket, oldest), UpperBound: eventKey(bucket, top+1)})
	if err != nil {
		return nil, 0, fmt.Errorf("cloudstore: %w", err)
	}
	defer it.Close()
	for ok := it.Last(); ok && len(evs) < n; ok = it.Prev() {
		var ev Event
		if err := json.Unmarshal(it.Value(), &ev); err != nil {
			return nil, 0, err
		}
		evs = append(evs, ev)
	}
	return evs, total, it.Error()
}
