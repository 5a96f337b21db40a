package cloudapi

import "github.com/latticenet/lattice/cloud/cloudwire"

// The API's resources are package cloudwire's, which clients share
// without linking the server.
type (
	Meta          = cloudwire.Meta
	List[T any]   = cloudwire.List[T]
	Bucket        = cloudwire.Bucket
	APIKey        = cloudwire.APIKey
	S3Key         = cloudwire.S3Key
	Usage         = cloudwire.Usage
	BucketUsage   = cloudwire.BucketUsage
	ObjectInfo    = cloudwire.ObjectInfo
	ObjectList    = cloudwire.ObjectList
	ObjectVersion = cloudwire.ObjectVersion
	VersionList   = cloudwire.VersionList
	PresignedURL  = cloudwire.PresignedURL

	Event          = cloudwire.Event
	Requests       = cloudwire.Requests
	HourMetrics    = cloudwire.HourMetrics
	Metrics        = cloudwire.Metrics
	MetricsSummary = cloudwire.MetricsSummary
	TopObject      = cloudwire.TopObject
	FileType       = cloudwire.FileType
	LifecycleRule  = cloudwire.LifecycleRule
)

// Pagination limits of every list endpoint (decisions.md), and a bucket's
// notes.
const (
	DefaultPerPage = cloudwire.DefaultPerPage
	MaxPerPage     = cloudwire.MaxPerPage
	MaxNotes       = cloudwire.MaxNotes
)

// ValidRESTKey checks what the REST API adds to the store's key rules
// (see cloudwire.ValidRESTKey).
func ValidRESTKey(key string) error { return cloudwire.ValidRESTKey(key) }
