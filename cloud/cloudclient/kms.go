package cloudclient

import (
	"context"
	"fmt"
	"net/url"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

// CreateKMSKey makes a key of the storage key service, for SSE-KMS.
func (c *Client) CreateKMSKey(ctx context.Context, name, description string) (cloudwire.KMSKey, error) {
	var k cloudwire.KMSKey
	return k, c.do(ctx, "POST", "/api/storage/kms/keys", map[string]string{"name": name, "description": description}, &k)
}

// KMSKeys lists a page of the account's keys, in name order.
func (c *Client) KMSKeys(ctx context.Context, page, perPage int) (cloudwire.List[cloudwire.KMSKey], error) {
	var l cloudwire.List[cloudwire.KMSKey]
	return l, c.do(ctx, "GET", fmt.Sprintf("/api/storage/kms/keys?page=%d&per_page=%d", page, perPage), nil, &l)
}

// KMSKey returns one key, by id or name.
func (c *Client) KMSKey(ctx context.Context, ref string) (cloudwire.KMSKey, error) {
	var k cloudwire.KMSKey
	return k, c.do(ctx, "GET", "/api/storage/kms/keys/"+url.PathEscape(ref), nil, &k)
}

// ChangeKMSKey enables, disables or rotates a key (action "enable",
// "disable" or "rotate").
func (c *Client) ChangeKMSKey(ctx context.Context, ref, action string) (cloudwire.KMSKey, error) {
	var k cloudwire.KMSKey
	return k, c.do(ctx, "POST", "/api/storage/kms/keys/"+url.PathEscape(ref)+"/"+url.PathEscape(action), nil, &k)
}
