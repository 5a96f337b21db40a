// Package sigv2 verifies AWS Signature Version 2 as legacy S3 clients
// send it (AWS CLI v1's s3 presign, boto3's generate_presigned_url against
// a custom endpoint, s3cmd): an HMAC-SHA1 over a string-to-sign, in the
// Authorization header ("AWS AKID:signature") or in a presigned query
// (AWSAccessKeyId, Expires, Signature). It also signs HTML form (POST
// Object) policies the Version 2 way.
//
// Version 2 never covers the payload: a body is checked, if at all, by
// its Content-MD5, which the caller verifies as for any request. Like
// sigv4, the package is pure: it reads the request and the secret its
// caller looks up, and its failures are *sigv4.Error values carrying the
// S3 error code, so that one place maps both versions to answers.
package sigv2

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// subresources are the query parameters S3 signs in the canonicalized
// resource, and the disputed ones below; any other parameter is left out
// of the string to sign.
var subresources = map[string]bool{
	"accelerate": true, "acl": true, "analytics": true, "cors": true, "defaultObjectAcl": true, "delete": true,
	"encryption": true, "inventory": true, "legal-hold": true, "lifecycle": true, "location": true,
	"logging": true, "metrics": true, "notification": true, "object-lock": true, "ownershipControls": true, "partNumber": true,
	"policy": true, "policyStatus": true, "publicAccessBlock": true, "replication": true, "requestPayment": true, "restore": true, "retention": true,
	"select": true, "select-type": true, "storageClass": true,
	"tagging": true, "torrent": true, "uploadId": true, "uploads": true, "versionId": true,
	"versioning": true, "versions": true, "website": true,
	"response-cache-control": true, "response-content-disposition": true, "response-content-encoding": true,
	"response-content-language": true, "response-content-type": true, "response-expires": true,
}

// disputed are the subresources Version 2 signers disagree on, S3 having
// never listed them: botocore signs object-lock and leaves out
// encryption, legal-hold and retention; minio-go (mc --api S3v2) does the
// opposite. The last three name operations newer than Version 2, which
// no signer puts in the resource. A request naming one is checked both
// with it in the resource and without, so that both kinds of client
// work; but a signature that covers the request only without it covers
// the same request without the subresource too, another operation, so
// it is taken for reads alone (GET, HEAD): a write must sign what names
// it, or a signed DELETE /bucket could be replayed as DELETE
// /bucket?publicAccessBlock.
var disputed = []string{"encryption", "legal-hold", "object-lock", "retention", "publicAccessBlock", "ownershipControls", "policyStatus"}

// Auth is a verified Version 2 request.
type Auth struct {
	AccessKeyID string
	// Presigned is true for a query-signed request. Its x-amz-* (and
	// content-type, content-md5) query parameters were signed as if they
	// were headers, so the caller may honour them.
	Presigned bool
}

func errorf(code, format string, args ...any) *sigv4.Error {
	return &sigv4.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// IsSigned reports whether r claims a Version 2 signature, in its
// Authorization header or its query.
func IsSigned(r *http.Request) bool {
	if strings.HasPrefix(r.Header.Get("Authorization"), "AWS ") {
		return true
	}
	q := r.URL.Query()
	return q.Has("AWSAccessKeyId") || q.Has("Signature") && !q.Has("X-Amz-Signature")
}

// Verify checks r's Version 2 signature, made with the secret lookup
// returns, at time now. bucket is the bucket of a virtual-hosted-style
// request (whose path lacks it), "" for a path-style one.
//
// A header-signed request must be dated (x-amz-date, else Date) within
// sigv4.MaxSkew of now; a presigned one must not have expired and may
// not expire more than sigv4.MaxExpires from now.
func Verify(r *http.Request, bucket string, lookup sigv4.Lookup, now time.Time) (*Auth, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		return verifyHeader(r, h, bucket, lookup, now)
	}
	return verifyQuery(r, bucket, lookup, now)
}

func verifyHeader(r *http.Request, h, bucket string, lookup sigv4.Lookup, now time.Time) (*Auth, error) {
	cred, ok := strings.CutPrefix(h, "AWS ")
	i := strings.LastIndexByte(cred, ':')
	if !ok || i <= 0 || i == len(cred)-1 {
		return nil, errorf("InvalidArgument", "AWS authorization header is invalid: expected AWS AccessKeyId:Signature")
	}
	id, sig := cred[:i], cred[i+1:]
	stamp := r.Header.Get("X-Amz-Date")
	if stamp == "" {
		stamp = r.Header.Get("Date")
	}
	if stamp == "" {
		return nil, errorf("AccessDenied", "AWS authentication requires a valid Date or x-amz-date header")
	}
	t, err := parseTime(stamp)
	if err != nil {
		return nil, errorf("AccessDenied", "AWS authentication requires a valid Date or x-amz-date header: %q does not parse", stamp)
	}
	if d := now.Sub(t); d > sigv4.MaxSkew || d < -sigv4.MaxSkew {
		return nil, errorf("RequestTimeTooSkewed", "The difference between the request time %s and the server's time %s is too large.",
			t.UTC().Format(time.RFC1123), now.UTC().Format(time.RFC1123))
	}
	date := r.Header.Get("Date")
	if r.Header.Get("X-Amz-Date") != "" {
		// x-amz-date is signed among the x-amz-* headers; Date is then
		// left empty, as S3 defines it.
		date = ""
	}
	if err := check(r, r.Header, bucket, date, id, sig, lookup); err != nil {
		return nil, err
	}
	return &Auth{AccessKeyID: id}, nil
}

func verifyQuery(r *http.Request, bucket string, lookup sigv4.Lookup, now time.Time) (*Auth, error) {
	q := r.URL.Query()
	id, sig, exp := q.Get("AWSAccessKeyId"), q.Get("Signature"), q.Get("Expires")
	if id == "" || sig == "" || exp == "" {
		return nil, errorf("AccessDenied", "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters")
	}
	secs, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || secs < 0 {
		return nil, errorf("AccessDenied", "Expires %q is not a time in seconds since the epoch", exp)
	}
	if now.Unix() > secs {
		return nil, errorf("AccessDenied", "Request has expired: the presigned URL expired at %s", time.Unix(secs, 0).UTC().Format(time.RFC3339))
	}
	// In seconds: scaled to a Duration, an expiry centuries ahead would
	// wrap around to a short one.
	if secs-now.Unix() > int64(sigv4.MaxExpires/time.Second) {
		// Version 2 has no signing time, only the expiry: a URL that
		// would outlive a Version 4 one (7 days) is refused rather than
		// honoured for years.
		return nil, errorf("AuthorizationQueryParametersError", "Expires must be at most %d seconds (7 days) from now", int64(sigv4.MaxExpires/time.Second))
	}
	if err := check(r, queryHeaders(r), bucket, exp, id, sig, lookup); err != nil {
		return nil, err
	}
	return &Auth{AccessKeyID: id, Presigned: true}, nil
}

// queryHeaders are the headers a presigned request's string to sign
// covers: its own, with the x-amz-*, content-type and content-md5 query
// parameters added, which presigners (botocore's) move there from the
// headers they sign. A parameter the request also sends as a header with
// the same value counts once: S3 signs Version 2 URLs over the headers
// sent, so clients send the Content-Type the URL was made with.
func queryHeaders(r *http.Request) http.Header {
	h := r.Header.Clone()
	for name, values := range r.URL.Query() {
		lower := strings.ToLower(name)
		if strings.HasPrefix(lower, "x-amz-") || lower == "content-type" || lower == "content-md5" {
			if have, ok := r.Header[http.CanonicalHeaderKey(lower)]; ok && same(have, values) {
				continue
			}
			for _, v := range values {
				h.Add(lower, v)
			}
		}
	}
	return h
}

// same reports whether a header's values, trimmed, are a query
// parameter's.
func same(header, query []string) bool {
	if len(header) != len(query) {
		return false
	}
	for i := range header {
		if strings.TrimSpace(header[i]) != strings.TrimSpace(query[i]) {
			return false
		}
	}
	return true
}

// check compares want with the signature of r's string to sign, for
// each path r may have been signed with.
func check(r *http.Request, h http.Header, bucket, date, id, want string, lookup sigv4.Lookup) error {
	secret, err := lookup(id)
	if errors.Is(err, sigv4.ErrUnknownKey) {
		return errorf("InvalidAccessKeyId", "The AWS Access Key Id %q you provided does not exist in our records.", id)
	}
	if err != nil {
		return err
	}
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	var unsigned []string // what a signature of a write left out, if one matched without it
	for _, path := range append(candidatePaths(r, bucket), fixedQueryPaths(r, bucket)...) {
		for _, c := range candidateQueries(r.URL.Query()) {
			sts := StringToSign(r.Method, h, Resource(bucket, path, c.q), date)
			if !hmac.Equal([]byte(Sign(secret, sts)), []byte(want)) {
				continue
			}
			if len(c.left) == 0 || read {
				return nil
			}
			unsigned = c.left
		}
	}
	if unsigned != nil {
		return errorf("AccessDenied", "The Signature Version 2 signature does not cover ?%s, which names this %s request's operation: "+
			"without it the same signature would sign another operation. Put it in the resource signed, or sign with Signature Version 4.",
			strings.Join(unsigned, ", ?"), r.Method)
	}
	return errorf("SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method.")
}

// candidate is a query a request may have been signed with: its own, or
// its own without the disputed subresources left.
type candidate struct {
	q    url.Values
	left []string
}

// candidateQueries are the queries q may have been signed with: q, and
// q without each combination of the disputed subresources it holds.
func candidateQueries(q url.Values) []candidate {
	var present []string
	for _, name := range disputed {
		if q.Has(name) {
			present = append(present, name)
		}
	}
	out := []candidate{{q: q}}
	for mask := 1; mask < 1<<len(present); mask++ {
		c := candidate{q: url.Values{}}
		for k, v := range q {
			c.q[k] = v
		}
		for i, name := range present {
			if mask&(1<<i) != 0 {
				delete(c.q, name)
				c.left = append(c.left, name)
			}
		}
		out = append(out, c)
	}
	return out
}

// candidatePaths are the paths r may have been signed with: as it came
// on the wire, and, if different, encoded the way S3 signers encode it.
// A path-style request to a bucket (bucket is then "") is signed as
// "/bucket/" by botocore, and as "/bucket" by others: both are tried.
func candidatePaths(r *http.Request, bucket string) []string {
	out := wirePaths(r)
	if raw := out[0]; bucket == "" && len(raw) > 1 && !strings.Contains(raw[1:], "/") {
		out = append(out, raw+"/")
	}
	return out
}

// wirePaths are r's path as it came on the wire and, if different,
// encoded the way S3 signers encode it.
func wirePaths(r *http.Request) []string {
	raw := r.URL.EscapedPath()
	if raw == "" {
		raw = "/"
	}
	out := []string{raw}
	if p := sigv4.EncodePath(r.URL.Path); p != raw {
		out = append(out, p)
	}
	return out
}

// maxFixedQuery is the most parameters an S3 operation fixes in its
// query: SelectObjectContent's "select&select-type=2".
const maxFixedQuery = 2

// fixedQueryPaths are the further paths r may have been signed with by
// botocore from 1.28 until its 2023 fix (boto/botocore#2971), Debian 12's
// python3-botocore 1.29.27 among them. Those take the "path" of the
// canonicalized resource from the operation's request URI, the query it
// fixes included, and append the subresources after a second "?" as
// ever: ListObjectsV2 is signed as "/bucket?list-type=2", GetBucketAcl
// as "/bucket?acl?acl", CreateMultipartUpload as
// "/bucket/key?uploads?uploads". The fixed query is the first one or two
// parameters of the URL they send, as sent; a bucket's path then has no
// trailing slash, in either addressing style. Later botocore, like S3's
// definition, leave the fixed query out (candidatePaths).
func fixedQueryPaths(r *http.Request, bucket string) []string {
	if r.URL.RawQuery == "" {
		return nil
	}
	paths := wirePaths(r)
	if bucket != "" && paths[0] == "/" {
		// Virtual-hosted style, to the bucket: Resource then makes the
		// path "/bucket".
		paths = []string{""}
	}
	params := strings.SplitN(r.URL.RawQuery, "&", maxFixedQuery+1)
	var out []string
	for n := 1; n <= maxFixedQuery && n <= len(params); n++ {
		fixed := strings.Join(params[:n], "&")
		for _, p := range paths {
			out = append(out, p+"?"+fixed)
		}
	}
	return out
}

// StringToSign is what a Version 2 signature signs: the method, the
// Content-MD5, Content-Type and date lines (date is the Date header, ""
// when x-amz-date is sent, or a presigned URL's Expires), the x-amz-*
// headers of h, and the canonicalized resource.
func StringToSign(method string, h http.Header, resource, date string) string {
	var b strings.Builder
	b.WriteString(method + "\n")
	b.WriteString(strings.TrimSpace(h.Get("Content-Md5")) + "\n")
	b.WriteString(strings.TrimSpace(h.Get("Content-Type")) + "\n")
	b.WriteString(date + "\n")
	b.WriteString(AmzHeaders(h))
	b.WriteString(resource)
	return b.String()
}

// AmzHeaders canonicalizes the x-amz-* headers of h: lower-case names in
// order, each "name:value\n", the values of a repeated header joined by
// commas, each trimmed.
func AmzHeaders(h http.Header) string {
	merged := map[string][]string{}
	var names []string
	for name, values := range h {
		lower := strings.ToLower(name)
		if !strings.HasPrefix(lower, "x-amz-") {
			continue
		}
		if _, ok := merged[lower]; !ok {
			names = append(names, lower)
		}
		for _, v := range values {
			merged[lower] = append(merged[lower], strings.TrimSpace(v))
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		b.WriteString(name + ":" + strings.Join(merged[name], ",") + "\n")
	}
	return b.String()
}

// Resource canonicalizes the resource of a request: the bucket of a
// virtual-hosted-style request ("" for path style), the path as signed,
// and the subresources of the query S3 signs, sorted by name, their
// values decoded.
func Resource(bucket, path string, q url.Values) string {
	res := path
	if bucket != "" {
		res = "/" + bucket + path
	}
	type pair struct{ name, value string }
	var subs []pair
	for name, values := range q {
		if subresources[name] {
			for _, v := range values {
				subs = append(subs, pair{name, v})
			}
		}
	}
	if len(subs) == 0 {
		return res
	}
	// By name, then value: sorting "name=value" whole would put
	// "select-type" after "select=...".
	sort.Slice(subs, func(i, j int) bool {
		if subs[i].name != subs[j].name {
			return subs[i].name < subs[j].name
		}
		return subs[i].value < subs[j].value
	})
	parts := make([]string, len(subs))
	for i, p := range subs {
		parts[i] = p.name
		if p.value != "" {
			parts[i] += "=" + p.value
		}
	}
	return res + "?" + strings.Join(parts, "&")
}

// Sign is the base64 HMAC-SHA1 of a string to sign (or of a POST
// policy's base64 text) with secret.
func Sign(secret, stringToSign string) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(stringToSign))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func parseTime(v string) (time.Time, error) {
	if t, err := time.Parse("20060102T150405Z", v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC1123Z, v); err == nil {
		return t, nil // "+0000" rather than "GMT", as in S3's own examples
	}
	if t, err := time.Parse("Mon, 02 Jan 2006 15:04:05 UTC", v); err == nil {
		// "UTC" rather than "GMT": Go's time.RFC1123 of a UTC time, which
		// rclone's Version 2 signer (--s3-v2-auth) sends as its Date.
		// Only the literal zone UTC: another abbreviation would parse as
		// an unknown zone at offset 0 and be read hours off.
		return t, nil
	}
	return http.ParseTime(v)
}

// VerifyPolicy checks the Version 2 signature of an HTML form upload's
// policy (POST Object): signature is the base64 HMAC-SHA1 of the base64
// policy text with id's secret. The policy's expiration is its caller's
// to check.
func VerifyPolicy(policy, id, signature string, lookup sigv4.Lookup) (*Auth, error) {
	secret, err := lookup(id)
	if errors.Is(err, sigv4.ErrUnknownKey) {
		return nil, errorf("InvalidAccessKeyId", "The AWS Access Key Id %q you provided does not exist in our records.", id)
	}
	if err != nil {
		return nil, err
	}
	if !hmac.Equal([]byte(Sign(secret, policy)), []byte(signature)) {
		return nil, errorf("SignatureDoesNotMatch", "The policy signature we calculated does not match the signature you provided. Check your key and signing method.")
	}
	return &Auth{AccessKeyID: id}, nil
}
