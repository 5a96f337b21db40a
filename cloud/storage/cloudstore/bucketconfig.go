package cloudstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// ConfigKind names a bucket configuration kept as a document: the S3
// endpoint's bucket policy (JSON) and CORS configuration (XML). The store
// keeps the bytes as given; the S3 endpoint checks them before it stores
// them and parses them when it reads them.
type ConfigKind string

// The configurations kept.
const (
	ConfigPolicy ConfigKind = "policy"
	ConfigCORS   ConfigKind = "cors"
	// ConfigLogging is the bucket's server access logging (package
	// s3log's BucketLoggingStatus).
	ConfigLogging ConfigKind = "logging"
	// ConfigPublicAccessBlock is the bucket's Block Public Access
	// settings: a PublicAccessBlock as JSON (SetPublicAccessBlock).
	ConfigPublicAccessBlock ConfigKind = "publicAccessBlock"
)

// PublicAccessBlock is a bucket's Block Public Access settings, S3's
// PublicAccessBlockConfiguration: what it blocks of the access that
// anyone (anonymous requests) could otherwise be given.
type PublicAccessBlock struct {
	// BlockPublicAcls refuses requests that would make the bucket or an
	// object public by ACL: S3's public-read ACLs and the REST API's
	// public toggle.
	BlockPublicAcls bool `json:"block_public_acls"`
	// IgnorePublicAcls ignores the bucket's public toggle (its
	// AllUsers READ grant): no anonymous read through it, on the S3
	// endpoint, the REST API's downloads and the CDN's bucket origins.
	IgnorePublicAcls bool `json:"ignore_public_acls"`
	// BlockPublicPolicy refuses a bucket policy that is public.
	BlockPublicPolicy bool `json:"block_public_policy"`
	// RestrictPublicBuckets ignores what a public policy grants to
	// anonymous requests (its Deny still applies).
	RestrictPublicBuckets bool `json:"restrict_public_buckets"`
}

// PublicAccessBlock returns the Block Public Access settings of the
// bucket called name, whoever owns it, nil when it has none.
func (s *Store) PublicAccessBlock(name string) (*PublicAccessBlock, error) {
	_, data, err := s.BucketWithConfig(name, ConfigPublicAccessBlock)
	if err != nil {
		return nil, err
	}
	return parsePublicAccessBlock(name, data)
}

// publicAccessNow reads the Block Public Access settings of the bucket
// called name from the database as it is (callers hold s.mu); nil when
// it has none.
func (s *Store) publicAccessNow(name string) (*PublicAccessBlock, error) {
	data, closer, err := s.db.Get(k(tBucketConfig, name, string(ConfigPublicAccessBlock)))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cloudstore: %w", err)
	}
	defer closer.Close()
	return parsePublicAccessBlock(name, data)
}

// parsePublicAccessBlock reads stored settings; nil data is none.
func parsePublicAccessBlock(name string, data []byte) (*PublicAccessBlock, error) {
	if data == nil {
		return nil, nil
	}
	var b PublicAccessBlock
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("cloudstore: bucket %s: Block Public Access settings: %w", name, err)
	}
	return &b, nil
}

// SetPublicAccessBlock sets the Block Public Access settings of account's
// bucket, or removes them (b nil); synced before it returns.
func (s *Store) SetPublicAccessBlock(account, name string, b *PublicAccessBlock) error {
	var data []byte
	if b != nil {
		data, _ = json.Marshal(b)
	}
	return s.SetBucketConfig(account, name, ConfigPublicAccessBlock, data)
}

// MaxConfigSize bounds one configuration document, so that no record
// grows without bound (S3's own limits are lower: 20 KiB for a policy,
// 64 KiB for a CORS configuration).
const MaxConfigSize = 256 << 10

// ErrConfigTooLarge is returned for a document over MaxConfigSize; nothing
// was written.
var ErrConfigTooLarge = errors.New("cloudstore: configuration too large")

const tBucketConfig = 'C' // C | bucket | 0 | kind -> the document; none when unset

func checkConfig(kind ConfigKind, data []byte) error {
	if !slices.Contains([]ConfigKind{ConfigPolicy, ConfigCORS, ConfigLogging, ConfigPublicAccessBlock}, kind) {
		return fmt.Errorf("cloudstore: unknown bucket configuration %q", kind)
	}
	if len(data) > MaxConfigSize {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrConfigTooLarge, len(data), MaxConfigSize)
	}
	return nil
}

// BucketConfig returns the kind configuration of account's bucket, nil
// when it has none. A missing bucket, or another account's, is
// ErrNotFound.
func (s *Store) BucketConfig(account, name string, kind ConfigKind) ([]byte, error) {
	bk, data, err := s.BucketWithConfig(name, kind)
	if err != nil {
		return nil, err
	}
	if bk.Account != account {
		return nil, ErrNotFound
	}
	return data, nil
}

// BucketWithConfig returns the bucket called name, whoever owns it, and
// its kind configuration (nil when it has none), read from one snapshot.
// It is for the S3 endpoint's authorisation of requests that may not be
// the owner's (anonymous ones, CORS preflights), which must answer a
// missing bucket and another's alike.
func (s *Store) BucketWithConfig(name string, kind ConfigKind) (Bucket, []byte, error) {
	if err := checkConfig(kind, nil); err != nil {
		return Bucket{}, nil, err
	}
	snap := s.db.NewSnapshot()
	defer snap.Close()
	var bk Bucket
	if err := getJSONFrom(snap, k(tBucket, name), &bk); err != nil {
		return Bucket{}, nil, err
	}
	data, closer, err := snap.Get(k(tBucketConfig, name, string(kind)))
	if err != nil {
		if errors.Is(err, pebble.ErrNotFound) {
			return bk, nil, nil
		}
		return Bucket{}, nil, fmt.Errorf("cloudstore: %w", err)
	}
	defer closer.Close()
	return bk, slices.Clone(data), nil
}

// BucketsWithConfig returns the names of the buckets that have a kind
// configuration, in name order.
func (s *Store) BucketsWithConfig(kind ConfigKind) ([]string, error) {
	if err := checkConfig(kind, nil); err != nil {
		return nil, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{tBucketConfig}, UpperBound: []byte{tBucketConfig + 1}})
	if err != nil {
		return nil, fmt.Errorf("cloudstore: %w", err)
	}
	defer it.Close()
	var names []string
	for it.First(); it.Valid(); it.Next() {
		bucket, k, ok := bytes.Cut(it.Key()[1:], []byte{0})
		if ok && string(k) == string(kind) {
			names = append(names, string(bucket))
		}
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("cloudstore: %w", err)
	}
	return names, nil
}

// SetBucketConfig replaces the kind configuration of account's bucket
// (removes it, when data is empty), with a synced commit. It is kept
// beside the bucket's record and deleted with the bucket. A missing
// bucket, or another account's, is ErrNotFound.
func (s *Store) SetBucketConfig(account, name string, kind ConfigKind, data []byte) error {
	return s.SetBucketConfigChecked(account, name, kind, data, nil)
}

// SetBucketConfigChecked is SetBucketConfig after check, when not nil,
// accepts the bucket's Block Public Access settings (nil: none), read
// under the lock the write holds: a check against settings read earlier
// could be overtaken by a PutPublicAccessBlock in between. An error of
// check is returned as it is, and nothing is written.
func (s *Store) SetBucketConfigChecked(account, name string, kind ConfigKind, data []byte, check func(*PublicAccessBlock) error) error {
	if err := checkConfig(kind, data); err != nil {
		return err
	}
	return s.write(func(t *tx) error {
		if _, err := s.Bucket(account, name); err != nil {
			return err
		}
		if check != nil {
			bpa, err := s.publicAccessNow(name)
			if err != nil {
				return err
			}
			if err := check(bpa); err != nil {
				return err
			}
		}
		b := s.db.NewBatch()
		defer t.closeUnapplied(b)
		key := k(tBucketConfig, name, string(kind))
		if len(data) == 0 {
			if err := b.Delete(key, nil); err != nil {
				return err
			}
		} else if err := b.Set(key, data, nil); err != nil {
			return err
		}
		return s.apply(t, b)
	})
}

// deleteBucketConfigs deletes every configuration of bucket in b.
func deleteBucketConfigs(b *pebble.Batch, bucket string) error {
	prefix := append(k(tBucketConfig, bucket), 0)
	return b.DeleteRange(prefix, successor(prefix), nil)
}
