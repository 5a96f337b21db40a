// Package cloudclient is a Go client for the cloud platform's REST API.
package cloudclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

// APIError is an error answer of the API.
type APIError struct {
	StatusCode int
	Code       string // validation_error, unauthorized, not_found, ...
	Message    string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("cloud: %s: %s (HTTP %d)", e.Code, e.Message, e.StatusCode)
}

// Client talks to one API with one API key. It is safe for concurrent use.
type Client struct {
	base, key string
	hc        *http.Client
}

// New returns a client for the API at baseURL (such as
// http://127.0.0.1:8090, or 127.0.0.1:8090: an address without a scheme is
// taken as http) using apiKey. A nil hc means http.DefaultClient.
func New(baseURL, apiKey string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	if !strings.Contains(baseURL, "://") {
		baseURL = "http://" + baseURL
	}
	// The API never redirects; following one would resend the key to
	// wherever it points.
	own := *hc
	own.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{base: strings.TrimRight(baseURL, "/"), key: apiKey, hc: &own}
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := c.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// request returns a request of path (escaped, with its query) carrying the
// API key.
func (c *Client) request(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	return req, nil
}

// send sends req and returns a 2xx answer, whose body the caller closes;
// any other answer is read and returned as an *APIError.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		if req.Context().Err() != nil {
			return nil, fmt.Errorf("cloud API %s: %w", c.base, err)
		}
		return nil, fmt.Errorf("cannot reach the cloud API at %s (start one with `lattice dev`): %w", c.base, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err := wrongService(c.base, data); err != nil {
		return nil, err
	}
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	e := &APIError{StatusCode: resp.StatusCode, Message: strings.TrimSpace(string(data))}
	if json.Unmarshal(data, &env) == nil && env.Error.Code != "" {
		e.Code, e.Message = env.Error.Code, env.Error.Message
	}
	return nil, e
}

// ErrWrongService is wrapped by the error of a request answered by another
// Lattice service (a ledger node, the S3 endpoint) rather than the cloud
// API.
var ErrWrongService = errors.New("cloudclient: not the cloud API")

// wrongService recognises the answers of the other Lattice services: a
// node's {"error": "message"} and the S3 endpoint's XML errors.
func wrongService(base string, data []byte) error {
	var node struct {
		Error string `json:"error"`
	}
	switch {
	case json.Unmarshal(data, &node) == nil && node.Error != "":
		return fmt.Errorf("%w: %s answers as a Lattice ledger node; point --api (or LATTICE_API_URL) at the cloud API's URL, which `lattice dev` prints", ErrWrongService, base)
	case bytes.HasPrefix(bytes.TrimSpace(data), []byte("<?xml")) || bytes.Contains(data, []byte("<Error>")):
		return fmt.Errorf("%w: %s answers as the S3 endpoint; point --api (or LATTICE_API_URL) at the cloud REST API's URL, which `lattice dev` prints", ErrWrongService, base)
	}
	return nil
}

// CreateKey creates an API key for account (creating the account if new);
// the answer carries the secret, shown only this once. Admin only.
func (c *Client) CreateKey(ctx context.Context, account, name string) (cloudwire.APIKey, error) {
	var k cloudwire.APIKey
	return k, c.do(ctx, "POST", "/api/admin/keys", map[string]string{"account": account, "name": name}, &k)
}

// Keys lists API keys, of one account if account is not "". Admin only.
func (c *Client) Keys(ctx context.Context, account string, page, perPage int) (cloudwire.List[cloudwire.APIKey], error) {
	q := url.Values{}
	if account != "" {
		q.Set("account", account)
	}
	q.Set("page", fmt.Sprint(page))
	q.Set("per_page", fmt.Sprint(perPage))
	var l cloudwire.List[cloudwire.APIKey]
	return l, c.do(ctx, "GET", "/api/admin/keys?"+q.Encode(), nil, &l)
}

// RevokeKey revokes an API key. Admin only.
func (c *Client) RevokeKey(ctx context.Context, id string) (cloudwire.APIKey, error) {
	var k cloudwire.APIKey
	return k, c.do(ctx, "DELETE", "/api/admin/keys/"+url.PathEscape(id), nil, &k)
}

// CreateBucket creates a bucket.
func (c *Client) CreateBucket(ctx context.Context, name, notes string) (cloudwire.Bucket, error) {
	var b cloudwire.Bucket
	return b, c.do(ctx, "POST", "/api/storage/buckets", map[string]string{"name": name, "notes": notes}, &b)
}

// Bucket returns a bucket.
func (c *Client) Bucket(ctx context.Context, name string) (cloudwire.Bucket, error) {
	var b cloudwire.Bucket
	return b, c.do(ctx, "GET", "/api/storage/buckets/"+url.PathEscape(name), nil, &b)
}

// Buckets lists a page of the account's buckets.
func (c *Client) Buckets(ctx context.Context, page, perPage int) (cloudwire.List[cloudwire.Bucket], error) {
	var l cloudwire.List[cloudwire.Bucket]
	return l, c.do(ctx, "GET", fmt.Sprintf("/api/storage/buckets?page=%d&per_page=%d", page, perPage), nil, &l)
}

// SetPublic sets whether the bucket's objects download without
// credentials.
func (c *Client) SetPublic(ctx context.Context, name string, public bool) (cloudwire.Bucket, error) {
	var b cloudwire.Bucket
	return b, c.do(ctx, "PATCH", "/api/storage/buckets/"+url.PathEscape(name)+"/public", map[string]bool{"is_public": public}, &b)
}

// DeleteBucket deletes an empty bucket.
func (c *Client) DeleteBucket(ctx context.Context, name string) error {
	return c.do(ctx, "DELETE", "/api/storage/buckets/"+url.PathEscape(name), nil, nil)
}
