package cloudclient

import (
	"context"
	"fmt"
	"net/url"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

// S3KeyOptions describe a new S3 access key; zero fields take the
// server's defaults (permissions readwrite, every bucket of the account).
type S3KeyOptions struct {
	Name        string
	Permissions string // read, write or readwrite
	BucketScope string // one bucket name, or "*"
}

// CreateS3Key creates an S3 access key; the answer carries the secret,
// shown only this once.
func (c *Client) CreateS3Key(ctx context.Context, o S3KeyOptions) (cloudwire.S3Key, error) {
	in := map[string]string{}
	if o.Name != "" {
		in["name"] = o.Name
	}
	if o.Permissions != "" {
		in["permissions"] = o.Permissions
	}
	if o.BucketScope != "" {
		in["bucketScope"] = o.BucketScope
	}
	var k cloudwire.S3Key
	return k, c.do(ctx, "POST", "/api/storage/keys", in, &k)
}

// S3Keys lists a page of the account's S3 access keys, newest first.
func (c *Client) S3Keys(ctx context.Context, page, perPage int) (cloudwire.List[cloudwire.S3Key], error) {
	var l cloudwire.List[cloudwire.S3Key]
	return l, c.do(ctx, "GET", fmt.Sprintf("/api/storage/keys?page=%d&per_page=%d", page, perPage), nil, &l)
}

// DeleteS3Key deletes an S3 access key by its ID.
func (c *Client) DeleteS3Key(ctx context.Context, id string) error {
	return c.do(ctx, "DELETE", "/api/storage/keys/"+url.PathEscape(id), nil, nil)
}

// Usage returns the account's storage totals and a line per bucket.
func (c *Client) Usage(ctx context.Context) (cloudwire.Usage, error) {
	var u cloudwire.Usage
	return u, c.do(ctx, "GET", "/api/storage/usage", nil, &u)
}
