package cloudclient

import (
	"context"
	"fmt"
	"net/url"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

// SetVersioning sets a bucket's versioning: cloudwire.VersioningEnabled or
// cloudwire.VersioningSuspended.
func (c *Client) SetVersioning(ctx context.Context, bucket, status string) (cloudwire.Bucket, error) {
	var b cloudwire.Bucket
	return b, c.do(ctx, "PUT", bucketPath(bucket)+"/versioning", map[string]string{"status": status}, &b)
}

// VersionOptions select a page of a versions listing.
type VersionOptions struct {
	Prefix    string // only keys that begin with Prefix
	Delimiter string // roll keys holding Delimiter after Prefix up into common prefixes
	// KeyMarker and VersionIDMarker start after that key, or after that
	// version of it (a listing's NextKeyMarker and NextVersionIDMarker).
	KeyMarker, VersionIDMarker string
	PerPage                    int // 0 means the server's default
}

// Versions lists a page of a bucket's object versions and delete markers.
// A NextKeyMarker in the answer continues the listing.
func (c *Client) Versions(ctx context.Context, bucket string, o VersionOptions) (cloudwire.VersionList, error) {
	q := url.Values{}
	for name, v := range map[string]string{"prefix": o.Prefix, "delimiter": o.Delimiter, "key_marker": o.KeyMarker, "version_id_marker": o.VersionIDMarker} {
		if v != "" {
			q.Set(name, v)
		}
	}
	if o.PerPage != 0 {
		q.Set("per_page", fmt.Sprint(o.PerPage))
	}
	p := bucketPath(bucket) + "/versions"
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	var l cloudwire.VersionList
	return l, c.do(ctx, "GET", p, nil, &l)
}

// DeleteVersion deletes one version of the object key of bucket, or one
// delete marker, for good: id is a listing's VersionID ("null" included).
func (c *Client) DeleteVersion(ctx context.Context, bucket, key, id string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return c.do(ctx, "DELETE", objectPath(bucket, "objects", key)+"?version_id="+url.QueryEscape(id), nil, nil)
}
