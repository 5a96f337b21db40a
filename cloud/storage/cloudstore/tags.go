package cloudstore

import (
	"errors"
	"fmt"
	"maps"

	"github.com/latticenet/lattice/cloud/storage/s3acl"
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
	return s.SetVersionTagsChecked(account, bucket, key, id, tags, nil)
}

// SetVersionTagsChecked is SetVersionTags once check, if not nil, passes
// the version, under the lock of the write: a caller's permission judged
// on the version it changes, not on one read before.
func (s *Store) SetVersionTagsChecked(account, bucket, key, id string, tags map[string]string, check func(Object) error) (Object, error) {
	if err := checkTags(tags, MaxObjectTags); err != nil {
		return Object{}, err
	}
	return s.updateVersion(account, bucket, key, id, func(obj *Object) error {
		if check != nil {
			if err := check(*obj); err != nil {
				return err
			}
		}
		obj.Tags = tagsOrNil(tags)
		return nil
	})
}

// SetVersionACL replaces the ACL of account's object, or of one of its
// versions (id as ObjectVersion takes it), with what build makes of the
// version, under the lock of the write (build may refuse it); its owner
// and all else stay. A delete marker has no ACL: it is a
// DeleteMarkerError.
func (s *Store) SetVersionACL(account, bucket, key, id string, build func(Object) ([]s3acl.Grant, error)) (Object, error) {
	return s.updateVersion(account, bucket, key, id, func(obj *Object) error {
		acl, err := build(*obj)
		if err != nil {
			return err
		}
		if acl == nil {
			acl = []s3acl.Grant{} // set, if to nothing: not the default
		}
		obj.ACL = acl
		return nil
	})
}

// updateVersion changes a version's record (not its body) with fn.
func (s *Store) updateVersion(account, bucket, key, id string, fn func(*Object) error) (Object, error) {
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
		if err := fn(&obj); err != nil {
			return err
		}
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
