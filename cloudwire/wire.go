// Package cloudwire holds the cloud REST API's JSON resources and the
// rules a client checks before it asks, shared by the server (cloudapi)
// and its clients (cloudclient) so that a client links no server: no
// handlers, no store, no Pebble. A test holds cloudclient to that.
package cloudwire

import (
	"fmt"
	"strings"

	"github.com/latticenet/lattice/storagenames"
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
}

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
}

// BucketUsage is one bucket's line of Usage.
type BucketUsage struct {
	Name        string `json:"name"`
	ObjectCount int64  `json:"object_count"`
	SizeBytes   int64  `json:"size_bytes"`
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

// PresignedURL is the answer of POST .../presign.
type PresignedURL struct {
	URL     string `json:"url"`
	Method  string `json:"method"`  // PUT for upload, GET for download
	Expires string `json:"expires"` // RFC 3339, whole seconds
}
