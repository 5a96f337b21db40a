package cloudstore

import "github.com/latticenet/lattice/cloud/storage/storagenames"

// The naming rules live in package storagenames, free of I/O, so that
// clients check names without linking the store; these are the store's
// names for them.

// ValidBucketName applies S3's bucket naming rules to a new bucket's name.
func ValidBucketName(name string) error { return storagenames.ValidBucketName(name) }

// ExistingBucketName checks a name that may belong to an existing bucket.
func ExistingBucketName(name string) error { return storagenames.ExistingBucketName(name) }

// ValidAccountName checks an account name.
func ValidAccountName(name string) error { return storagenames.ValidAccountName(name) }

// ValidObjectKey checks an object key.
func ValidObjectKey(key string) error { return storagenames.ValidObjectKey(key) }

// ErrInvalidKey matches (with errors.Is) every error of ValidObjectKey.
var ErrInvalidKey = storagenames.ErrInvalidKey
