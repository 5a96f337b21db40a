// Package cdnrules holds the pure rules of CDN deployments: names, which
// become DNS labels; origins, a URL or a bucket of this platform; the
// default TTL's bounds and the size of a purge. The store, the edge, the
// REST endpoints and the clients all apply them from here.
package cdnrules

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

// Deployment limits.
const (
	DefaultTTL    = 3600        // seconds
	MaxDefaultTTL = 365 * 86400 // a year
	MaxPurgeItems = 100         // paths plus prefixes in one purge
)

// CheckDefaultTTL checks a deployment's default TTL, in seconds.
func CheckDefaultTTL(ttl int) error {
	if ttl < 0 || ttl > MaxDefaultTTL {
		return fmt.Errorf("default_ttl %d: want 0 to %d seconds", ttl, MaxDefaultTTL)
	}
	return nil
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
		u.Path = strings.TrimRight(u.Path, "/") // the canonical form has none, so it parses to itself
		u.RawPath = ""
		return Origin{URL: u}, nil
	case "s3":
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || u.Port() != "" {
			return Origin{}, fmt.Errorf("origin %q: want s3://BUCKET[/PREFIX]", s)
		}
		if err := storagenames.ExistingBucketName(u.Host); err != nil {
			return Origin{}, fmt.Errorf("origin %q: %w", s, err)
		}
		o := Origin{Bucket: u.Host, Prefix: strings.TrimPrefix(u.Path, "/")}
		// The prefix is written as it is (String): one whose characters a
		// URL would need escaped (a NUL, a space, "%", "?") would not read
		// back the same.
		if back, err := url.Parse(o.String()); err != nil || back.Host != o.Bucket || strings.TrimPrefix(back.Path, "/") != o.Prefix ||
			back.RawQuery != "" || back.Fragment != "" || strings.ContainsAny(o.Prefix, "%?# ") {
			return Origin{}, fmt.Errorf("origin %q: the prefix may hold no control characters, spaces, %%, ? or #", s)
		}
		return o, nil
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
