package cloudstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/latticenet/lattice/internal/pebblekv"
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
	// ConfigWebsite is the bucket's static website (package s3website's
	// WebsiteConfiguration).
	ConfigWebsite ConfigKind = "website"
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

// PublicAccessBlock returns the Block Public Access settings that hold
// for the bucket called name, whoever owns it: its own combined with its
// owner's account-wide settings (SetAccountPublicAccessBlock), the most
// restrictive of the two as in S3; nil when neither has any.
func (s *Store) PublicAccessBlock(name string) (*PublicAccessBlock, error) {
	_, b, err := s.bucketPublicAccess(name)
	return b, err
}

// bucketPublicAccess reads the bucket called name and the settings that
// hold for it (PublicAccessBlock) from one snapshot.
func (s *Store) bucketPublicAccess(name string) (Bucket, *PublicAccessBlock, error) {
	snap := s.db.NewSnapshot()
	defer snap.Close()
	var bk Bucket
	if err := getJSONFrom(snap, k(tBucket, name), &bk); err != nil {
		return Bucket{}, nil, err
	}
	b, err := effectivePublicAccess(snap, bk)
	return bk, b, err
}

// BucketPublicAccessBlock returns the bucket's own Block Public Access
// settings (what GetPublicAccessBlock answers), nil when it has none.
func (s *Store) BucketPublicAccessBlock(name string) (*PublicAccessBlock, error) {
	_, data, err := s.BucketWithConfig(name, ConfigPublicAccessBlock)
	if err != nil {
		return nil, err
	}
	return parsePublicAccessBlock("bucket "+name, data)
}

// publicAccessNow is PublicAccessBlock read from the database as it is
// (callers hold s.mu, and have read bk).
func (s *Store) publicAccessNow(bk Bucket) (*PublicAccessBlock, error) {
	return effectivePublicAccess(s.db, bk)
}

// effectivePublicAccess reads bk's settings and its owner's account-wide
// ones from r, and combines them.
func effectivePublicAccess(r pebble.Reader, bk Bucket) (*PublicAccessBlock, error) {
	own, err := readPublicAccess(r, k(tBucketConfig, bk.Name, string(ConfigPublicAccessBlock)), "bucket "+bk.Name)
	if err != nil {
		return nil, err
	}
	acct, err := readPublicAccess(r, k(tAccountConfig, bk.Account, string(ConfigPublicAccessBlock)), "account "+bk.Account)
	if err != nil {
		return nil, err
	}
	return own.or(acct), nil
}

// readPublicAccess reads settings stored under key; nil when none are.
func readPublicAccess(r pebble.Reader, key []byte, of string) (*PublicAccessBlock, error) {
	data, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cloudstore: %w", err)
	}
	defer closer.Close()
	return parsePublicAccessBlock(of, data)
}

// or is the most restrictive combination of b and c: a setting holds when
// either holds it; nil when both are.
func (b *PublicAccessBlock) or(c *PublicAccessBlock) *PublicAccessBlock {
	switch {
	case b == nil:
		return c
	case c == nil:
		return b
	}
	return &PublicAccessBlock{BlockPublicAcls: b.BlockPublicAcls || c.BlockPublicAcls, IgnorePublicAcls: b.IgnorePublicAcls || c.IgnorePublicAcls,
		BlockPublicPolicy: b.BlockPublicPolicy || c.BlockPublicPolicy, RestrictPublicBuckets: b.RestrictPublicBuckets || c.RestrictPublicBuckets}
}

// tAccountConfig holds account-wide settings, as tBucketConfig holds a
// bucket's: today the account's Block Public Access settings.
const tAccountConfig = 'A' // A | account | 0 | kind -> the document; none when unset

// AccountPublicAccessBlock returns account's account-wide Block Public
// Access settings (S3 Control's GetPublicAccessBlock), nil when it has
// none.
func (s *Store) AccountPublicAccessBlock(account string) (*PublicAccessBlock, error) {
	return readPublicAccess(s.db, k(tAccountConfig, account, string(ConfigPublicAccessBlock)), "account "+account)
}

// SetAccountPublicAccessBlock sets account's account-wide Block Public
// Access settings, which hold for every bucket it owns besides the
// bucket's own, or removes them (b nil); synced before it returns. Like a
// bucket's, they are written under the lock that the writes they guard
// check them under.
func (s *Store) SetAccountPublicAccessBlock(account string, b *PublicAccessBlock) error {
	return s.write(func(t *tx) error {
		batch := s.db.NewBatch()
		defer t.closeUnapplied(batch)
		key := k(tAccountConfig, account, string(ConfigPublicAccessBlock))
		if b == nil {
			if err := batch.Delete(key, nil); err != nil {
				return err
			}
		} else {
			data, _ := json.Marshal(b)
			if err := batch.Set(key, data, nil); err != nil {
				return err
			}
		}
		return s.apply(t, batch)
	})
}

// parsePublicAccessBlock reads stored settings of a bucket or an account
// ("bucket NAME", "account NAME"); nil data is none.
func parsePublicAccessBlock(of string, data []byte) (*PublicAccessBlock, error) {
	if data == nil {
		return nil, nil
	}
	var b PublicAccessBlock
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("cloudstore: %s: Block Public Access settings: %w", of, err)
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
	if !slices.Contains([]ConfigKind{ConfigPolicy, ConfigCORS, ConfigLogging, ConfigPublicAccessBlock, ConfigWebsite}, kind) {
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
		bk, err := s.Bucket(account, name)
		if err != nil {
			return err
		}
		if check != nil {
			bpa, err := s.publicAccessNow(bk)
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
	return b.DeleteRange(prefix, pebblekv.PrefixEnd(prefix), nil)
}
