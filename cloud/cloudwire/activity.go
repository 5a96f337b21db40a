package cloudwire

// The resources of a bucket's activity: its events, its metrics and its
// lifecycle rules (docs/cloud-api.md).

// Event is the activity log's resource. Which optional fields are set
// depends on the type (docs/cloud-api.md).
type Event struct {
	ID           int64   `json:"id"`
	Type         string  `json:"type"`
	Time         string  `json:"time"` // RFC 3339
	Key          *string `json:"key,omitempty"`
	Size         *int64  `json:"size,omitempty"`
	SourceKey    string  `json:"source_key,omitempty"`
	SourceBucket string  `json:"source_bucket,omitempty"`
	RuleID       string  `json:"rule_id,omitempty"`
	Prefix       *string `json:"prefix,omitempty"`
	ExpireDays   int     `json:"expire_days,omitempty"`
}

// Requests counts requests by kind.
type Requests struct {
	Get    int64 `json:"get"`
	Put    int64 `json:"put"`
	Delete int64 `json:"delete"`
	List   int64 `json:"list"`
	Other  int64 `json:"other"`
	Total  int64 `json:"total"`
}

// HourMetrics is one hour of a bucket's traffic.
type HourMetrics struct {
	Hour     string   `json:"hour"` // the hour's start, RFC 3339
	Requests Requests `json:"requests"`
	BytesIn  int64    `json:"bytes_in"`
	BytesOut int64    `json:"bytes_out"`
	Errors   int64    `json:"errors"`
}

// Metrics is the answer of GET .../metrics.
type Metrics struct {
	Bucket string        `json:"bucket"`
	Hours  int           `json:"hours"`
	From   string        `json:"from"` // the first hour's start
	To     string        `json:"to"`   // now
	Hourly []HourMetrics `json:"hourly"`
}

// MetricsSummary is the answer of GET .../metrics/summary.
type MetricsSummary struct {
	Bucket      string   `json:"bucket"`
	Hours       int      `json:"hours"`
	From        string   `json:"from"`
	To          string   `json:"to"`
	Requests    Requests `json:"requests"`
	BytesIn     int64    `json:"bytes_in"`
	BytesOut    int64    `json:"bytes_out"`
	Errors      int64    `json:"errors"`
	ObjectCount int64    `json:"object_count"` // now
	SizeBytes   int64    `json:"size_bytes"`   // now
}

// TopObject is an entry of GET .../metrics/top-objects.
type TopObject struct {
	Key        string `json:"key"`
	Requests   int64  `json:"requests"`
	BytesIn    int64  `json:"bytes_in"`
	BytesOut   int64  `json:"bytes_out"`
	LastAccess string `json:"last_access"` // RFC 3339
}

// FileType is an entry of GET .../metrics/file-types.
type FileType struct {
	Extension   string `json:"extension"` // lowercase, without the dot; "" for none
	ObjectCount int64  `json:"object_count"`
	SizeBytes   int64  `json:"size_bytes"`
}

// LifecycleRule is the lifecycle rule resource. ExpireDays is 0 (left out)
// only for a rule made over S3 that expires no current versions by age; S3
// is set for every rule made over S3.
type LifecycleRule struct {
	ID         string           `json:"id"`
	Prefix     string           `json:"prefix"`
	ExpireDays int              `json:"expire_days,omitempty"`
	CreatedAt  string           `json:"created_at"`
	S3         *LifecycleRuleS3 `json:"s3,omitempty"`
}

// LifecycleRuleS3 is what a rule made over S3's
// PutBucketLifecycleConfiguration holds beyond a prefix and expire_days
// (docs/cloud-api.md, "Lifecycle rules").
type LifecycleRuleS3 struct {
	Status                    string            `json:"status"` // Enabled or Disabled
	Tags                      map[string]string `json:"tags,omitempty"`
	ObjectSizeGreaterThan     *int64            `json:"object_size_greater_than,omitempty"`
	ObjectSizeLessThan        *int64            `json:"object_size_less_than,omitempty"`
	ExpirationDate            string            `json:"expiration_date,omitempty"`
	ExpiredObjectDeleteMarker bool              `json:"expired_object_delete_marker,omitempty"`
	NoncurrentDays            int               `json:"noncurrent_days,omitempty"`
	NewerNoncurrentVersions   int               `json:"newer_noncurrent_versions,omitempty"`
	AbortIncompleteUploadDays int               `json:"abort_incomplete_upload_days,omitempty"`
}
