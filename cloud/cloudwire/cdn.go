package cloudwire

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

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
	DefaultTTL *int   `json:"default_ttl,omitempty"` // default DefaultTTL
}

// Deployment limits.
const (
	DefaultTTL    = 3600        // seconds
	MaxDefaultTTL = 365 * 86400 // a year
	MaxPurgeItems = 100         // paths plus prefixes in one purge
)

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

// CheckDeploymentName checks a deployment's name, which is the first label
// of its cname and so must be a DNS label: 1 to 63 lower-case letters,
// digits and hyphens, neither first nor last a hyphen.
func CheckDeploymentName(name string) error {
	if name == "" || len(name) > 63 {
		return fmt.Errorf("name %q: want 1 to 63 characters", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("name %q: want lower-case letters, digits and hyphens only (it becomes a DNS label)", name)
		}
	}
	if name[0] == '-' || name[len(name)-1] == '-' {
		return fmt.Errorf("name %q: may not begin or end with a hyphen", name)
	}
	return nil
}

// Origin is a parsed deployment origin.
type Origin struct {
	// URL is an http(s) origin: the edge asks it for URL's path plus the
	// request's path. Nil for a bucket.
	URL *url.URL
	// Bucket (with an optional key Prefix) is a bucket of this platform,
	// written s3://BUCKET[/PREFIX].
	Bucket, Prefix string
}

// ParseOrigin parses an origin: http://HOST[:PORT][/PATH],
// https://HOST[:PORT][/PATH], or s3://BUCKET[/PREFIX] for a bucket of this
// platform. A URL may carry no user, query or fragment.
func ParseOrigin(s string) (Origin, error) {
	u, err := url.Parse(s)
	if err != nil || s == "" {
		return Origin{}, fmt.Errorf("origin %q: want http(s)://HOST[/PATH] or s3://BUCKET[/PREFIX]", s)
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" || u.Hostname() == "" {
			return Origin{}, fmt.Errorf("origin %q: no host", s)
		}
		if port := u.Port(); port != "" {
			if _, err := net.LookupPort("tcp", port); err != nil || strings.HasPrefix(port, "0") {
				return Origin{}, fmt.Errorf("origin %q: bad port %q", s, port)
			}
		}
		if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
			return Origin{}, fmt.Errorf("origin %q: a URL with no user, query or fragment, please", s)
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = ""
		return Origin{URL: u}, nil
	case "s3":
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || u.Port() != "" {
			return Origin{}, fmt.Errorf("origin %q: want s3://BUCKET[/PREFIX]", s)
		}
		if err := storagenames.ExistingBucketName(u.Host); err != nil {
			return Origin{}, fmt.Errorf("origin %q: %w", s, err)
		}
		return Origin{Bucket: u.Host, Prefix: strings.TrimPrefix(u.Path, "/")}, nil
	}
	return Origin{}, fmt.Errorf("origin %q: want http(s)://HOST[/PATH] or s3://BUCKET[/PREFIX]", s)
}

// String is the origin in its canonical form.
func (o Origin) String() string {
	if o.URL != nil {
		return o.URL.String()
	}
	if o.Prefix == "" {
		return "s3://" + o.Bucket
	}
	return "s3://" + o.Bucket + "/" + o.Prefix
}
