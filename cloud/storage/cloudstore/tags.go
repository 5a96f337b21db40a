package cloudstore

import (
	"errors"
	"fmt"
	"maps"
)

// Tag set limits, as in S3.
const (
	MaxObjectTags = 10 // tags of one object
	MaxBucketTags = 50 // tags of one bucket
)

// ErrTooManyTags is returned for a tag set over its limit; nothing was
// written. Callers check each tag's key and value themselves (the S3
// endpoint, with S3's rules and error codes); the store only bounds the
// count, so that no record grows without bound.
var ErrTooManyTags = errors.New("cloudstore: too many tags")

func checkTags(tags map[string]string, max int) error {
	if len(tags) > max {
		return fmt.Errorf("%w: %d, at most %d", ErrTooManyTags, len(tags), max)
	}
	return nil
}

// tagsOrNil is a copy of tags, nil when there are none, so that an empty
// set is not written.
func tagsOrNil(tags map[string]string) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	return maps.Clone(tags)
}

// SetObjectTags replaces the tag set of account's object (removes it,
// when tags is empty). The object is otherwise unchanged: its body, ETag
// and LastModified stay. A missing bucket or object is ErrNotFound.
func (s *Store) SetObjectTags(account, bucket, key string, tags map[string]string) (Object, error) {
	return s.SetVersionTags(account, bucket, key, "", tags)
}

// SetVersionTags is SetObjectTags of a version, named as ObjectVersion
// takes it ("" for the current one). A delete marker has no tags: it is a
// DeleteMarkerError.
func (s *Store) SetVersionTags(account, bucket, key, id string, tags map[string]string) (Object, error) {
	if err := checkTags(tags, MaxObjectTags); err != nil {
		return Object{}, err
	}
	var obj Object
	err := s.write(func(t *tx) error {
		var err error
		if obj, err = s.versionLocked(account, bucket, key, id); err != nil {
			return err
		}
		if obj.DeleteMarker {
			return &DeleteMarkerError{VersionID: obj.VersionID}
		}
		where := k(tObject, bucket, key)
		var cur Object
		if err := s.getJSON(where, &cur); err != nil || cur.VersionID != obj.VersionID {
			where = versionKey(bucket, obj) // not the current version
		}
		obj.Tags = tagsOrNil(tags)
		b := s.db.NewBatch()
		defer t.closeUnapplied(b)
		if err := setJSON(b, where, obj); err != nil {
			return err
		}
		return s.apply(t, b)
	})
	if err != nil {
		return Object{}, err
	}
	return obj, nil
}

const tBucketTags = 'g' // g | bucket -> its tag set (JSON object); none when untagged

// BucketTags returns the tag set of account's bucket: empty when it has
// none. A missing bucket, or another account's, is ErrNotFound.
func (s *Store) BucketTags(account, name string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.Bucket(account, name); err != nil {
		return nil, err
	}
	var tags map[string]string
	if err := s.getJSON(k(tBucketTags, name), &tags); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return tags, nil
}

// SetBucketTags replaces the tag set of account's bucket (removes it,
// when tags is empty). The tags are kept beside the bucket's record and
// deleted with the bucket. A missing bucket, or another account's, is
// ErrNotFound.
func (s *Store) SetBucketTags(account, name string, tags map[string]string) error {
	if err := checkTags(tags, MaxBucketTags); err != nil {
		return err
	}
	return s.write(func(t *tx) error {
		if _, err := s.Bucket(account, name); err != nil {
			return err
		}
		b := s.db.NewBatch()
		defer t.closeUnapplied(b)
		if len(tags) == 0 {
			if err := b.Delete(k(tBucketTags, name), nil); err != nil {
				return err
			}
		} else if err := setJSON(b, k(tBucketTags, name), tags); err != nil {
			return err
		}
		return s.apply(t, b)
	})
}
