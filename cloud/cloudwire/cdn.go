package cloudwire

// Deployment is the CDN deployment resource: the edge answers for CNAME
// (and for the deployment's active custom domains) from Origin.
type Deployment struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Origin string `json:"origin"`
	CNAME  string `json:"cname"`
	// DefaultTTL is how long, in seconds, the edge keeps a response that
	// says nothing about its freshness (no Cache-Control max-age or
	// s-maxage, no Expires).
	DefaultTTL int    `json:"default_ttl"`
	CreatedAt  string `json:"created_at"` // RFC 3339
}

// DeploymentInput is the body that creates a deployment.
type DeploymentInput struct {
	Name       string `json:"name"`
	Origin     string `json:"origin"`
	DefaultTTL *int   `json:"default_ttl,omitempty"` // default cdnrules.DefaultTTL
}

// Domain types and states.
const (
	DomainDefault = "default" // the deployment's own name under the CDN domain
	DomainCustom  = "custom"

	DomainActive  = "active"  // the edge answers for it
	DomainPending = "pending" // waiting for its DNS to point at the deployment
)

// Domain is a host name the edge answers for a deployment.
type Domain struct {
	Name   string `json:"name"`
	Type   string `json:"type"`   // DomainDefault or DomainCustom
	Status string `json:"status"` // DomainActive or DomainPending
	// Verification says what DNS must hold for a pending custom domain
	// to become active: a CNAME from Name to the deployment's cname.
	Verification *DomainVerification `json:"verification,omitempty"`
	// Zone is the id of this platform's DNS zone where the CDN created
	// the CNAME itself (and removes it with the domain).
	Zone      string `json:"zone_id,omitempty"`
	CreatedAt string `json:"created_at,omitempty"`
}

// DomainVerification is the DNS record a custom domain needs.
type DomainVerification struct {
	Type  string `json:"type"` // "CNAME"
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Purge is a purge request: both lists empty purges everything.
type Purge struct {
	// Paths purges these exact paths ("/css/site.css"), each with any
	// query string and every variant.
	Paths []string `json:"paths,omitempty"`
	// Prefixes purges every path that begins with one ("/img/").
	Prefixes []string `json:"prefixes,omitempty"`
}

// PurgeResult answers a purge.
type PurgeResult struct {
	Purged int `json:"purged"` // cached responses removed
}

// CDNStats are a deployment's edge figures since the edge started.
type CDNStats struct {
	Since          string  `json:"since"` // RFC 3339: when the counting began
	Requests       int64   `json:"requests"`
	Hits           int64   `json:"hits"`
	Misses         int64   `json:"misses"`
	Stale          int64   `json:"stale"`
	HitRatio       float64 `json:"hit_ratio"`       // (hits + stale) / requests, 0 with no requests
	BytesServed    int64   `json:"bytes_served"`    // body bytes sent to clients
	OriginRequests int64   `json:"origin_requests"` // fetches and revalidations
	OriginBytes    int64   `json:"origin_bytes"`    // body bytes read from the origin
	OriginErrors   int64   `json:"origin_errors"`   // origin unreachable, timed out or 5xx
	CachedObjects  int64   `json:"cached_objects"`
	CachedBytes    int64   `json:"cached_bytes"`
}
