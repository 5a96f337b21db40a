package cloudclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/cloudwire"
)

// objectPath is the path of key under bucket's endpoint op ("download",
// "objects"): every segment escaped on its own, so that the slashes of
// the key stay path separators and nothing else in it ("?", "#", "%")
// changes the URL.
// ErrKeyNotAddressable wraps the refusal of a key the REST API cannot
// address (see cloudwire.ValidRESTKey); the S3 endpoint can.
var ErrKeyNotAddressable = errors.New("cloudclient: object key not addressable over the REST API")

// checkKey refuses, before anything is sent, a key whose URL path would
// be cleaned into another object's.
func checkKey(key string) error {
	if err := cloudwire.ValidRESTKey(key); err != nil {
		return fmt.Errorf("%w: %w", ErrKeyNotAddressable, err)
	}
	return nil
}

func objectPath(bucket, op, key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/api/storage/buckets/" + url.PathEscape(bucket) + "/" + op + "/" + strings.Join(segs, "/")
}

// ListOptions select a page of an object listing.
type ListOptions struct {
	Prefix    string // only keys that begin with Prefix
	Delimiter string // roll keys holding Delimiter after Prefix up into common prefixes
	Marker    string // start after this key (a listing's NextMarker)
	Page      int    // from 1; 0 means the server's default
	PerPage   int    // 0 means the server's default
}

// Objects lists a page of a bucket's objects and, with a delimiter, its
// common prefixes. A NextMarker in the answer continues the listing.
func (c *Client) Objects(ctx context.Context, bucket string, o ListOptions) (cloudwire.ObjectList, error) {
	q := url.Values{}
	for name, v := range map[string]string{"prefix": o.Prefix, "delimiter": o.Delimiter, "marker": o.Marker} {
		if v != "" {
			q.Set(name, v)
		}
	}
	if o.Page != 0 {
		q.Set("page", fmt.Sprint(o.Page))
	}
	if o.PerPage != 0 {
		q.Set("per_page", fmt.Sprint(o.PerPage))
	}
	p := "/api/storage/buckets/" + url.PathEscape(bucket) + "/objects"
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	var l cloudwire.ObjectList
	return l, c.do(ctx, "GET", p, nil, &l)
}

// Upload stores body as the object key of bucket, streaming it as a raw
// body. size is body's length, or -1 if unknown (the body is then sent
// chunked); contentType "" lets the server choose
// (application/octet-stream). An existing object is replaced.
func (c *Client) Upload(ctx context.Context, bucket, key, contentType string, body io.Reader, size int64) (cloudwire.ObjectInfo, error) {
	if size == 0 {
		body = http.NoBody // a zero ContentLength with a body would mean "unknown"
	}
	req, err := c.request(ctx, "POST", "/api/storage/buckets/"+url.PathEscape(bucket)+"/upload?"+url.Values{"key": {key}}.Encode(), body)
	if err != nil {
		return cloudwire.ObjectInfo{}, err
	}
	req.ContentLength = size
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.send(req)
	if err != nil {
		return cloudwire.ObjectInfo{}, err
	}
	defer resp.Body.Close()
	var out struct {
		Objects []cloudwire.ObjectInfo `json:"objects"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return cloudwire.ObjectInfo{}, fmt.Errorf("cloud API %s: upload answer: %w", c.base, err)
	}
	if len(out.Objects) != 1 {
		return cloudwire.ObjectInfo{}, fmt.Errorf("cloud API %s: upload answered %d objects, want 1", c.base, len(out.Objects))
	}
	return out.Objects[0], nil
}

// Download opens the object key of bucket. The caller reads and closes the
// body; the ObjectInfo comes from the answer's headers (Size is -1 if the
// server did not send a length, LastModified is "" if it sent no date).
func (c *Client) Download(ctx context.Context, bucket, key string) (io.ReadCloser, cloudwire.ObjectInfo, error) {
	if err := checkKey(key); err != nil {
		return nil, cloudwire.ObjectInfo{}, err
	}
	req, err := c.request(ctx, "GET", objectPath(bucket, "download", key), nil)
	if err != nil {
		return nil, cloudwire.ObjectInfo{}, err
	}
	resp, err := c.send(req)
	if err != nil {
		return nil, cloudwire.ObjectInfo{}, err
	}
	info := cloudwire.ObjectInfo{
		Key:         key,
		Size:        resp.ContentLength,
		ETag:        strings.Trim(resp.Header.Get("ETag"), `"`),
		ContentType: resp.Header.Get("Content-Type"),
	}
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		info.LastModified = t.UTC().Format(time.RFC3339)
	}
	return resp.Body, info, nil
}

// DeleteObject deletes the object key of bucket.
func (c *Client) DeleteObject(ctx context.Context, bucket, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return c.do(ctx, "DELETE", objectPath(bucket, "objects", key), nil, nil)
}

// CopyObject copies the object src of bucket to dst in the same bucket.
func (c *Client) CopyObject(ctx context.Context, bucket, src, dst string) (cloudwire.ObjectInfo, error) {
	var o cloudwire.ObjectInfo
	return o, c.do(ctx, "POST", "/api/storage/buckets/"+url.PathEscape(bucket)+"/copy", map[string]string{"source_key": src, "dest_key": dst}, &o)
}

// Presign asks for a URL that lets whoever holds it download (action
// "download", method GET) or upload (action "upload", method PUT) the
// object key of bucket without an API key. expires is a duration such
// as "30m", "1h" or "7d"; "" means the server's default (1h).
func (c *Client) Presign(ctx context.Context, bucket, key, action, expires string) (cloudwire.PresignedURL, error) {
	in := map[string]string{"key": key, "action": action}
	if expires != "" {
		in["expires"] = expires
	}
	var p cloudwire.PresignedURL
	return p, c.do(ctx, "POST", "/api/storage/buckets/"+url.PathEscape(bucket)+"/presign", in, &p)
}
