package cloudclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

func bucketPath(bucket string) string { return "/api/storage/buckets/" + url.PathEscape(bucket) }

// Rules lists a bucket's lifecycle rules.
func (c *Client) Rules(ctx context.Context, bucket string, page, perPage int) (cloudwire.List[cloudwire.LifecycleRule], error) {
	var l cloudwire.List[cloudwire.LifecycleRule]
	return l, c.do(ctx, "GET", fmt.Sprintf("%s/lifecycle?page=%d&per_page=%d", bucketPath(bucket), page, perPage), nil, &l)
}

// AddRule adds a lifecycle rule: objects under prefix ("" for all) expire
// expireDays days after they were last written.
func (c *Client) AddRule(ctx context.Context, bucket, prefix string, expireDays int) (cloudwire.LifecycleRule, error) {
	var r cloudwire.LifecycleRule
	return r, c.do(ctx, "POST", bucketPath(bucket)+"/lifecycle", map[string]any{"prefix": prefix, "expire_days": expireDays}, &r)
}

// DeleteRule removes a lifecycle rule.
func (c *Client) DeleteRule(ctx context.Context, bucket, id string) error {
	return c.do(ctx, "DELETE", bucketPath(bucket)+"/lifecycle/"+url.PathEscape(id), nil, nil)
}

// Events lists a bucket's activity log, newest first.
func (c *Client) Events(ctx context.Context, bucket string, page, perPage int) (cloudwire.List[cloudwire.Event], error) {
	var l cloudwire.List[cloudwire.Event]
	return l, c.do(ctx, "GET", fmt.Sprintf("%s/events?page=%d&per_page=%d", bucketPath(bucket), page, perPage), nil, &l)
}

// Metrics returns a bucket's traffic hour by hour over the last hours
// hours (0: the server's default).
func (c *Client) Metrics(ctx context.Context, bucket string, hours int) (cloudwire.Metrics, error) {
	var m cloudwire.Metrics
	return m, c.do(ctx, "GET", bucketPath(bucket)+"/metrics"+hoursQuery(hours), nil, &m)
}

// MetricsSummary returns a bucket's traffic over the last hours hours (0:
// the server's default) and its size now.
func (c *Client) MetricsSummary(ctx context.Context, bucket string, hours int) (cloudwire.MetricsSummary, error) {
	var m cloudwire.MetricsSummary
	return m, c.do(ctx, "GET", bucketPath(bucket)+"/metrics/summary"+hoursQuery(hours), nil, &m)
}

func hoursQuery(hours int) string {
	if hours == 0 {
		return ""
	}
	return fmt.Sprintf("?hours=%d", hours)
}

// TopObjects lists a bucket's most requested objects.
func (c *Client) TopObjects(ctx context.Context, bucket string, page, perPage int) (cloudwire.List[cloudwire.TopObject], error) {
	var l cloudwire.List[cloudwire.TopObject]
	return l, c.do(ctx, "GET", fmt.Sprintf("%s/metrics/top-objects?page=%d&per_page=%d", bucketPath(bucket), page, perPage), nil, &l)
}

// FileTypes lists a bucket's objects by extension.
func (c *Client) FileTypes(ctx context.Context, bucket string, page, perPage int) (cloudwire.List[cloudwire.FileType], error) {
	var l cloudwire.List[cloudwire.FileType]
	return l, c.do(ctx, "GET", fmt.Sprintf("%s/metrics/file-types?page=%d&per_page=%d", bucketPath(bucket), page, perPage), nil, &l)
}

// DownloadZip returns a ZIP archive of the named objects of a bucket (at
// most 100); the caller closes it.
func (c *Client) DownloadZip(ctx context.Context, bucket string, keys []string) (io.ReadCloser, error) {
	body, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		return nil, err
	}
	req, err := c.request(ctx, "POST", bucketPath(bucket)+"/download-zip", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
