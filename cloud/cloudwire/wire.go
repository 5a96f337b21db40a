// Package cloudwire holds the cloud REST API's JSON resources and the
// rules a client checks before it asks, shared by the server (cloudapi)
// and its clients (cloudclient) so that a client links no server: no
// handlers, no store, no Pebble. A test holds cloudclient to that.
package cloudwire

import (
	"fmt"
	"strings"

	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

// Pagination limits of every list endpoint (decisions.md).
const (
	DefaultPerPage = 20
	MaxPerPage     = 100
)

// Meta describes one page of a list.
type Meta struct {
	Total   int `json:"total"`
	Page    int `json:"page"`
	PerPage int `json:"per_page"`
}

// List is the envelope of every list answer.
type List[T any] struct {
	Data []T  `json:"data"`
	Meta Meta `json:"meta"`
}

// MaxNotes bounds a bucket's notes.
const MaxNotes = 1024

// Bucket is the Bucket resource.
type Bucket struct {
	Name        string `json:"name"`
	Notes       string `json:"notes"`
	IsPublic    bool   `json:"is_public"`
	ObjectCount int64  `json:"object_count"`
	SizeBytes   int64  `json:"size_bytes"`
	CreatedAt   string `json:"created_at"` // RFC 3339
	UpdatedAt   string `json:"updated_at"`
	// Versioning is VersioningEnabled or VersioningSuspended; "" (absent)
	// for a bucket never versioned, which has no noncurrent versions and
	// leaves the two counts out. The counts are of the versions that are
	// not current, delete markers included, and their bytes: they are
	// not in ObjectCount and SizeBytes.
	Versioning             string `json:"versioning,omitempty"`
	NoncurrentVersionCount *int64 `json:"noncurrent_version_count,omitempty"`
	NoncurrentSizeBytes    *int64 `json:"noncurrent_size_bytes,omitempty"`
}

// Versioning states of a bucket (Bucket.Versioning, and the body of PUT
// .../versioning), as S3 names them.
const (
	VersioningEnabled   = "Enabled"
	VersioningSuspended = "Suspended"
)

// NullVersion is the version id of an object written while its bucket
// did not keep versions.
const NullVersion = "null"

// APIKey is an API key as the admin endpoints show it; Secret is set only
// in the answer that creates the key.
type APIKey struct {
	ID        string `json:"id"`
	Account   string `json:"account"`
	Name      string `json:"name"`
	Admin     bool   `json:"admin"`
	Prefix    string `json:"prefix"`
	CreatedAt string `json:"created_at"`
	Revoked   bool   `json:"revoked"`
	RevokedAt string `json:"revoked_at,omitempty"`
	Secret    string `json:"secret,omitempty"`
}

// S3Key is the S3 access key resource. Secret is set only in the answer
// that creates the key.
type S3Key struct {
	ID          string `json:"id"`
	AccessKeyID string `json:"access_key_id"`
	Name        string `json:"name"`
	Permissions string `json:"permissions"`
	BucketScope string `json:"bucketScope"`
	CreatedAt   string `json:"created_at"`
	Secret      string `json:"secret_access_key,omitempty"`
}

// Usage is the answer of GET /api/storage/usage.
type Usage struct {
	TotalBytes   int64         `json:"total_bytes"`
	ObjectCount  int64         `json:"object_count"`
	BucketCount  int           `json:"bucket_count"`
	BucketsUsage []BucketUsage `json:"buckets"`
	// NoncurrentSizeBytes sums the buckets' noncurrent versions: set when
	// one of them keeps or kept versions, and not in TotalBytes, which is
	// the sum of the buckets' SizeBytes (current versions).
	NoncurrentSizeBytes *int64 `json:"noncurrent_size_bytes,omitempty"`
}

// BucketUsage is one bucket's line of Usage.
type BucketUsage struct {
	Name        string `json:"name"`
	ObjectCount int64  `json:"object_count"`
	SizeBytes   int64  `json:"size_bytes"`
	// NoncurrentSizeBytes is Bucket's: set for a bucket that keeps or
	// kept versions, and not in SizeBytes.
	NoncurrentSizeBytes *int64 `json:"noncurrent_size_bytes,omitempty"`
}

// ObjectInfo is the object resource.
type ObjectInfo struct {
	Key          string `json:"key"`
	Size         int64  `json:"size"`
	ETag         string `json:"etag"`
	ContentType  string `json:"content_type"`
	LastModified string `json:"last_modified"` // RFC 3339
}

// ValidRESTKey checks what the REST API adds to the store's key rules:
// object keys travel in URL paths, which routers clean, so a key with an
// empty, "." or ".." segment, or a leading "/", could not be addressed (a
// cleaned path would name another object). A trailing "/" is allowed.
// Such keys are refused here; the S3 endpoint carries them. Clients check
// keys with it before they address them.
func ValidRESTKey(key string) error {
	if err := storagenames.ValidObjectKey(key); err != nil {
		return err
	}
	segs := strings.Split(key, "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		if (seg == "" && !(last && i > 0)) || seg == "." || seg == ".." {
			return fmt.Errorf("object key %q has an empty, \".\" or \"..\" path segment, which URLs cannot carry", key)
		}
	}
	return nil
}

// ObjectList is the answer of GET .../objects: the list envelope, plus the
// common prefixes of a delimited listing and the marker to continue from.
type ObjectList struct {
	Data       []ObjectInfo `json:"data"`
	Prefixes   []string     `json:"prefixes"`
	NextMarker string       `json:"next_marker,omitempty"`
	Meta       Meta         `json:"meta"`
}

// ObjectVersion is an entry of GET .../versions: a version of an object,
// or a delete marker (DeleteMarker set; Size 0, ETag "" and no
// ContentType).
type ObjectVersion struct {
	Key          string `json:"key"`
	VersionID    string `json:"version_id"` // NullVersion for the null version
	IsLatest     bool   `json:"is_latest"`
	DeleteMarker bool   `json:"delete_marker"`
	Size         int64  `json:"size"`
	ETag         string `json:"etag"`
	ContentType  string `json:"content_type,omitempty"`
	LastModified string `json:"last_modified"` // RFC 3339
}

// VersionList is the answer of GET .../versions: the list envelope, plus
// the common prefixes of a delimited listing and the markers to continue
// from (both absent when nothing follows; NextVersionIDMarker also when the
// page ends with a common prefix).
type VersionList struct {
	Data                []ObjectVersion `json:"data"`
	Prefixes            []string        `json:"prefixes"`
	NextKeyMarker       string          `json:"next_key_marker,omitempty"`
	NextVersionIDMarker string          `json:"next_version_id_marker,omitempty"`
	Meta                Meta            `json:"meta"`
}

// PresignedURL is the answer of POST .../presign.
type PresignedURL struct {
	URL     string `json:"url"`
	Method  string `json:"method"`  // PUT for upload, GET for download
	Expires string `json:"expires"` // RFC 3339, whole seconds
}

// KMSKey is a key of the storage key service (SSE-KMS), as GET
// /api/storage/kms/keys lists them. Its material never leaves the service.
type KMSKey struct {
	ID          string `json:"id"`
	ARN         string `json:"arn"` // as the S3 endpoint answers it in x-amz-server-side-encryption-aws-kms-key-id
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Enabled     bool   `json:"enabled"`
	Versions    int    `json:"versions"`
	CreatedAt   string `json:"created_at"`
	RotatedAt   string `json:"rotated_at,omitempty"`
	Managed     bool   `json:"managed"` // the account's default key, aws/s3
}
