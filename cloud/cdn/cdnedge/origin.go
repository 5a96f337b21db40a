package cdnedge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/latticenet/lattice/cloud/cdn/cdnrules"
	"github.com/latticenet/lattice/cloud/cdn/cdnstore"
	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/kms"
)

// errPrivateOrigin is the dial error for an origin address the edge may
// not reach.
var errPrivateOrigin = errors.New("the origin's address is loopback, private or link-local, which this edge does not fetch from (--cdn-private-origins allows it)")

// newTransport is the edge's HTTP client side: bodies passed as they come
// (no transparent gzip), no proxy from the environment, and, unless
// private is set, a dialer that refuses loopback, private, link-local and
// other non-public addresses at connect time, after DNS, so that a
// deployment cannot make the edge fetch from inside the operator's network
// (a name that resolves to 10.0.0.1 is refused like the literal).
func newTransport(private bool, headerTimeout time.Duration) *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !private {
		d.ControlContext = func(_ context.Context, _, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return err
			}
			if !public(ap.Addr()) {
				return fmt.Errorf("%s: %w", ap.Addr(), errPrivateOrigin)
			}
			return nil
		}
	}
	return &http.Transport{
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		DisableCompression:    true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   128,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: headerTimeout,
		ExpectContinueTimeout: time.Second,
	}
}

// public reports whether a is an address on the public internet.
func public(a netip.Addr) bool {
	a = a.Unmap()
	if nat64.Contains(a) {
		// A NAT64 gateway (RFC 6052) reaches the IPv4 address in the
		// last 32 bits: 64:ff9b::a9fe:a9fe is 169.254.169.254.
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// nat64 is the well-known prefix of NAT64 (RFC 6052), whose addresses
// stand for the IPv4 addresses they end with.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// nonPublic are the special-purpose ranges IsPrivate and friends do not
// cover (RFC 6890 and successors).
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("100::/64"),
}

// CheckOrigin refuses, when private origins are not allowed, an http(s)
// origin whose host is a literal non-public address or "localhost": the
// API says so at once, rather than the edge at the first request. Names
// are checked again at every connection.
func CheckOrigin(o cdnrules.Origin, allowPrivate bool) error {
	if o.URL == nil || allowPrivate {
		return nil
	}
	host := o.URL.Hostname()
	if a, err := netip.ParseAddr(host); err == nil && !public(a) {
		return fmt.Errorf("origin %s: %w", o, errPrivateOrigin)
	}
	if h := strings.ToLower(host); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return fmt.Errorf("origin %s: %w", o, errPrivateOrigin)
	}
	return nil
}

// Buckets is what the CDN reads of the platform's object store for
// s3:// origins: three calls of *cloudstore.Store, declared here by their
// user so that the edge depends on what it reads, not on the store.
type Buckets interface {
	// Bucket returns account's bucket name.
	Bucket(account, name string) (cloudstore.Bucket, error)
	// PublicBucket returns the public bucket name, whoever owns it.
	PublicBucket(name string) (cloudstore.Bucket, error)
	// OpenObject opens an object's latest version for reading;
	// cloudstore.ErrNotFound when there is none.
	OpenObject(ctx context.Context, account, bucket, key string) (cloudstore.Object, cloudstore.Body, error)
}

var _ Buckets = (*cloudstore.Store)(nil)

// CheckBucket checks that account's deployment may read bucket: its own,
// or another account's public bucket.
func CheckBucket(st Buckets, account, bucket string) error {
	if _, err := st.Bucket(account, bucket); err == nil {
		return nil
	}
	if _, err := st.PublicBucket(bucket); err == nil {
		return nil
	}
	return fmt.Errorf("origin s3://%s: no bucket of yours, nor a public bucket, has that name", bucket)
}

// bucketResponse answers a GET for key of the bucket origin as an origin
// server would: the object with its ETag, Last-Modified and the standard
// headers stored with it (Cache-Control among them), 304 for a matching
// conditional request, 404 when there is no such object. The deployment
// reads its owner's buckets, private ones too, and public buckets of
// anyone, of which it serves what their toggle serves everyone
// (cloudstore.ServedPublicly); a bucket made private or deleted since,
// and an object the toggle does not serve, read as 404.
func bucketResponse(st Buckets, d cdnstore.Deployment, o cdnrules.Origin, urlPath string, req http.Header, at time.Time) *http.Response {
	key := strings.TrimPrefix(path.Clean("/"+urlPath), "/")
	if strings.HasSuffix(urlPath, "/") || key == "" {
		key = path.Join(key, "index.html")
	}
	if o.Prefix != "" {
		key = strings.TrimSuffix(o.Prefix, "/") + "/" + key
	}
	owner := d.Account
	var public *cloudstore.Bucket // another account's bucket, read through its public toggle
	own, err := st.Bucket(owner, o.Bucket)
	if err != nil {
		bk, err := st.PublicBucket(o.Bucket)
		if err != nil {
			return textResponse(http.StatusNotFound, "the origin bucket is gone or no longer public\n", at)
		}
		owner, public = bk.Account, &bk
	}
	// The deployment reads as its account: with that account's KMS keys
	// only, so another account's SSE-KMS objects are not found.
	obj, body, err := st.OpenObject(cloudstore.KMSRequester(context.Background(), d.Account), owner, o.Bucket, key)
	if errors.Is(err, cloudstore.ErrNotFound) || errors.Is(err, cloudstore.ErrKMSAccess) {
		return textResponse(http.StatusNotFound, "not found\n", at)
	}
	if errors.Is(err, kms.ErrDisabled) {
		// The owner disabled the object's key: refused, not stored (403
		// is not cacheable by default), until the owner enables it.
		return textResponse(http.StatusForbidden, "the object's encryption key is disabled\n", at)
	}
	if err != nil {
		return textResponse(http.StatusInternalServerError, "reading the origin bucket failed\n", at)
	}
	if public != nil && !cloudstore.ServedPublicly(*public, obj) || public == nil && !cloudstore.OwnerMayRead(own, obj) {
		// The toggle serves everyone what it serves an anonymous
		// download, no more: not an object another account owns
		// privately, nor one the key service encrypted. And the
		// deployment of an own bucket serves what its owner may read:
		// not an object another account wrote there without granting
		// the owner READ.
		body.Close()
		return textResponse(http.StatusNotFound, "not found\n", at)
	}
	h := http.Header{}
	for name, v := range obj.Meta {
		if !strings.HasPrefix(name, "x-amz-meta-") && name != cloudstore.MetaWebsiteRedirect {
			h.Set(name, v)
		}
	}
	etag := `"` + obj.ETag + `"`
	h.Set("Etag", etag)
	h.Set("Last-Modified", obj.LastModified.UTC().Format(http.TimeFormat))
	h.Set("Date", at.UTC().Format(http.TimeFormat))
	if obj.ContentType != "" {
		h.Set("Content-Type", obj.ContentType)
	}
	if notModified(req, etag, obj.LastModified) {
		body.Close()
		return &http.Response{StatusCode: http.StatusNotModified, Header: h, Body: http.NoBody, ContentLength: 0}
	}
	h.Set("Content-Length", strconv.FormatInt(obj.Size, 10))
	return &http.Response{StatusCode: http.StatusOK, Header: h, Body: body, ContentLength: obj.Size}
}

// notModified evaluates a revalidation's If-None-Match (else
// If-Modified-Since) against an object.
func notModified(req http.Header, etag string, modified time.Time) bool {
	if inm := req.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == etag {
				return true
			}
		}
		return false
	}
	if ims := req.Get("If-Modified-Since"); ims != "" {
		t, err := http.ParseTime(ims)
		return err == nil && !modified.Truncate(time.Second).After(t)
	}
	return false
}

func textResponse(status int, body string, at time.Time) *http.Response {
	h := http.Header{}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Date", at.UTC().Format(http.TimeFormat))
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}
}
