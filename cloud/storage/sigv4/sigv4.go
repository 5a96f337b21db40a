// Package sigv4 verifies AWS Signature Version 4 as S3 clients send it:
// in the Authorization header, in presigned query strings, and over the
// streaming aws-chunked payloads of current SDKs (signed chunks, unsigned
// chunks, with or without trailing checksums). It is pure: it reads the
// request it is given and the secret its caller looks up, and does no
// other I/O.
//
// Verification yields an Auth, whose Body wraps the request body so that
// reading it checks what the signature covers (a payload hash, chunk
// signatures, a trailing checksum); a body that fails its check ends in an
// *Error instead of io.EOF, so a store that commits only on EOF never
// keeps it.
package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Payload hash values that are not a hex SHA-256.
const (
	UnsignedPayload        = "UNSIGNED-PAYLOAD"
	StreamingSigned        = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	StreamingSignedTrailer = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	StreamingUnsignedTrail = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
)

const (
	algorithm  = "AWS4-HMAC-SHA256"
	timeFormat = "20060102T150405Z"
	dateFormat = "20060102"
	// EmptySHA256 is the hex SHA-256 of nothing.
	EmptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	// MaxSkew is how far a header-signed request's time may be from the
	// server's clock.
	MaxSkew = 15 * time.Minute
	// MaxExpires is the longest a presigned URL may live (7 days).
	MaxExpires = 7 * 24 * time.Hour
)

// Error is a verification failure, with the S3 error code that names it.
type Error struct {
	Code    string // S3 error code, e.g. "SignatureDoesNotMatch"
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func errorf(code, format string, args ...any) *Error {
	return &Error{code, fmt.Sprintf(format, args...)}
}

// ErrUnknownKey is what a secret lookup returns for an access key it does
// not know; Verify turns it into InvalidAccessKeyId.
var ErrUnknownKey = errors.New("sigv4: unknown access key")

// Lookup returns the secret of an access key id, or ErrUnknownKey.
type Lookup func(accessKeyID string) (secret string, err error)

// Auth is a verified request.
type Auth struct {
	AccessKeyID string
	Region      string
	Presigned   bool
	// PayloadHash is the x-amz-content-sha256 value (UNSIGNED-PAYLOAD for
	// presigned URLs).
	PayloadHash string

	time      time.Time
	scope     string
	key       []byte // signing key
	signature string // seed signature of chunked payloads
}

// Time is when the request says it was signed (x-amz-date, or
// X-Amz-Date of a presigned URL); zero when unknown.
func (a *Auth) Time() time.Time { return a.time }

// credential is the parsed Credential field: id/date/region/service/aws4_request.
type credential struct {
	id, date, region, service string
}

func (c credential) scope() string {
	return c.date + "/" + c.region + "/" + c.service + "/aws4_request"
}

func parseCredential(v string) (credential, error) {
	// The access key id itself never holds '/', so split from the right.
	parts := strings.Split(v, "/")
	if len(parts) < 5 || parts[len(parts)-1] != "aws4_request" {
		return credential{}, errorf("AuthorizationHeaderMalformed", "the credential %q is not ID/date/region/service/aws4_request", v)
	}
	n := len(parts)
	c := credential{strings.Join(parts[:n-4], "/"), parts[n-4], parts[n-3], parts[n-2]}
	if c.id == "" {
		return credential{}, errorf("AuthorizationHeaderMalformed", "the credential has no access key id")
	}
	if _, err := time.Parse(dateFormat, c.date); err != nil {
		return credential{}, errorf("AuthorizationHeaderMalformed", "the credential date %q is not YYYYMMDD", c.date)
	}
	if c.service != "s3" {
		return credential{}, errorf("AuthorizationHeaderMalformed", "the credential is for service %q; this endpoint is s3", c.service)
	}
	return c, nil
}

// IsSigned reports whether r carries a Signature V4, in its header or its
// query; a request without one is anonymous.
func IsSigned(r *http.Request) bool {
	return r.Header.Get("Authorization") != "" || r.URL.Query().Has("X-Amz-Signature") || r.URL.Query().Has("X-Amz-Algorithm")
}

// Verify checks r's signature, made with the secret lookup returns, at
// time now. The body is not read: read it through Auth.Body.
func Verify(r *http.Request, lookup Lookup, now time.Time) (*Auth, error) {
	if r.Header.Get("Authorization") != "" {
		return verifyHeader(r, lookup, now)
	}
	return verifyQuery(r, lookup, now)
}

func verifyHeader(r *http.Request, lookup Lookup, now time.Time) (*Auth, error) {
	h := r.Header.Get("Authorization")
	alg, rest, _ := strings.Cut(h, " ")
	if alg != algorithm {
		if strings.HasPrefix(h, "AWS ") {
			return nil, errorf("AccessDenied", "Signature Version 2 is not supported; sign with AWS4-HMAC-SHA256")
		}
		return nil, errorf("AuthorizationHeaderMalformed", "the authorization header must start with %s", algorithm)
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return nil, errorf("AuthorizationHeaderMalformed", "the authorization header field %q is not NAME=VALUE", f)
		}
		fields[name] = value
	}
	for _, name := range []string{"Credential", "SignedHeaders", "Signature"} {
		if fields[name] == "" {
			return nil, errorf("AuthorizationHeaderMalformed", "the authorization header has no %s", name)
		}
	}
	cred, err := parseCredential(fields["Credential"])
	if err != nil {
		return nil, err
	}
	stamp := r.Header.Get("X-Amz-Date")
	if stamp == "" {
		stamp = r.Header.Get("Date")
	}
	t, err := parseTime(stamp)
	if err != nil {
		return nil, errorf("AccessDenied", "the request has no valid X-Amz-Date: %v", err)
	}
	if d := now.Sub(t); d > MaxSkew || d < -MaxSkew {
		return nil, errorf("RequestTimeTooSkewed", "the request time %s is more than %s from the server time %s", t.Format(timeFormat), MaxSkew, now.UTC().Format(timeFormat))
	}
	if t.Format(dateFormat) != cred.date {
		return nil, errorf("AuthorizationHeaderMalformed", "the credential date %s is not the request date %s", cred.date, t.Format(dateFormat))
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		return nil, errorf("InvalidRequest", "the x-amz-content-sha256 header is required")
	}
	if !validPayloadHash(payload) {
		return nil, errorf("InvalidArgument", "x-amz-content-sha256 %q is neither a hex SHA-256 nor a known payload mode", payload)
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	a := &Auth{AccessKeyID: cred.id, Region: cred.region, PayloadHash: payload, time: t, scope: cred.scope()}
	if err := a.check(r, lookup, cred, signed, r.URL.Query(), payload, fields["Signature"]); err != nil {
		return nil, err
	}
	a.signature = fields["Signature"]
	return a, nil
}

func verifyQuery(r *http.Request, lookup Lookup, now time.Time) (*Auth, error) {
	q := r.URL.Query()
	if q.Get("X-Amz-Algorithm") != algorithm {
		return nil, errorf("AuthorizationQueryParametersError", "X-Amz-Algorithm must be %s", algorithm)
	}
	for _, name := range []string{"X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"} {
		if q.Get(name) == "" {
			return nil, errorf("AuthorizationQueryParametersError", "the presigned URL has no %s", name)
		}
	}
	cred, err := parseCredential(q.Get("X-Amz-Credential"))
	if err != nil {
		return nil, &Error{"AuthorizationQueryParametersError", err.(*Error).Message}
	}
	t, err := time.Parse(timeFormat, q.Get("X-Amz-Date"))
	if err != nil {
		return nil, errorf("AuthorizationQueryParametersError", "X-Amz-Date %q is not YYYYMMDDTHHMMSSZ", q.Get("X-Amz-Date"))
	}
	if t.Format(dateFormat) != cred.date {
		return nil, errorf("AuthorizationQueryParametersError", "the credential date %s is not X-Amz-Date's %s", cred.date, t.Format(dateFormat))
	}
	// 400s in S3's words. Its range starts at one second: a URL that
	// expires as it is made is a client's mistake worth telling.
	secs, err := strconv.ParseInt(q.Get("X-Amz-Expires"), 10, 64)
	if errors.Is(err, strconv.ErrRange) { // a number, past int64's range
		secs, err = math.MaxInt64, nil
		if strings.HasPrefix(q.Get("X-Amz-Expires"), "-") {
			secs = -1
		}
	}
	switch {
	case err != nil:
		return nil, errorf("AuthorizationQueryParametersError", "X-Amz-Expires should be a number")
	case secs < 0:
		return nil, errorf("AuthorizationQueryParametersError", "X-Amz-Expires must be non-negative")
	case secs < 1:
		return nil, errorf("AuthorizationQueryParametersError", "X-Amz-Expires must be a number of seconds from 1 to %d", int64(MaxExpires/time.Second))
	case secs > int64(MaxExpires/time.Second):
		return nil, errorf("AuthorizationQueryParametersError", "X-Amz-Expires must be less than a week (in seconds) that is %d", int64(MaxExpires/time.Second))
	}
	if t.Sub(now) > MaxSkew {
		return nil, errorf("AccessDenied", "the presigned URL is dated %s, in the future", t.Format(timeFormat))
	}
	if now.After(t.Add(time.Duration(secs) * time.Second)) {
		return nil, errorf("AccessDenied", "Request has expired: the presigned URL expired at %s", t.Add(time.Duration(secs)*time.Second).Format(time.RFC3339))
	}
	payload := UnsignedPayload
	if v := q.Get("X-Amz-Content-Sha256"); v != "" {
		payload = v
	}
	query := url.Values{}
	for k, v := range q {
		if k != "X-Amz-Signature" {
			query[k] = v
		}
	}
	signed := strings.Split(q.Get("X-Amz-SignedHeaders"), ";")
	a := &Auth{AccessKeyID: cred.id, Region: cred.region, Presigned: true, PayloadHash: payload, time: t, scope: cred.scope()}
	if err := a.check(r, lookup, cred, signed, query, payload, q.Get("X-Amz-Signature")); err != nil {
		return nil, err
	}
	return a, nil
}

// check computes the signature of r and compares it with want, setting
// a.key on success.
func (a *Auth) check(r *http.Request, lookup Lookup, cred credential, signed []string, query url.Values, payload, want string) error {
	if !sort.StringsAreSorted(signed) || !contains(signed, "host") {
		return errorf("AuthorizationHeaderMalformed", "SignedHeaders must be sorted and include host")
	}
	// As S3 does: every x-amz-* header must be signed, or whoever holds a
	// presigned URL could add, say, x-amz-copy-source to it.
	for name := range r.Header {
		lower := strings.ToLower(name)
		if strings.HasPrefix(lower, "x-amz-") && !contains(signed, lower) && !(a.Presigned && lower == "x-amz-content-sha256") {
			return errorf("AccessDenied", "There were headers present in the request which were not signed: %s", lower)
		}
	}
	secret, err := lookup(cred.id)
	if errors.Is(err, ErrUnknownKey) {
		return errorf("InvalidAccessKeyId", "the access key id %q does not exist", cred.id)
	}
	if err != nil {
		return err
	}
	key := SigningKey(secret, cred.date, cred.region, cred.service)
	headers := CanonicalHeaders(r, signed)
	for _, path := range candidatePaths(r) {
		creq := CanonicalRequest(r.Method, path, CanonicalQuery(query), headers, strings.Join(signed, ";"), payload)
		sts := StringToSign(a.time, a.scope, creq)
		if hmac.Equal([]byte(hex.EncodeToString(hmacSHA256(key, sts))), []byte(want)) {
			a.key = key
			return nil
		}
	}
	return errorf("SignatureDoesNotMatch", "the request signature we calculated does not match the signature you provided; check your secret access key and signing method")
}

// candidatePaths are the canonical URIs r may have been signed with: the
// path encoded the way S3 signers encode it, and, if different, the path
// exactly as it came on the wire.
func candidatePaths(r *http.Request) []string {
	p := EncodePath(r.URL.Path)
	if raw := r.URL.EscapedPath(); raw != p {
		return []string{p, raw}
	}
	return []string{p}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func validPayloadHash(v string) bool {
	switch v {
	case UnsignedPayload, StreamingSigned, StreamingSignedTrailer, StreamingUnsignedTrail:
		return true
	}
	if len(v) != 64 {
		return false
	}
	_, err := hex.DecodeString(v)
	return err == nil && strings.ToLower(v) == v
}

func parseTime(v string) (time.Time, error) {
	if t, err := time.Parse(timeFormat, v); err == nil {
		return t, nil
	}
	return http.ParseTime(v)
}

// SigningKey derives the key that signs a day's requests for one region
// and service.
func SigningKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, "aws4_request")
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func sha256Hex(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// CanonicalRequest is the canonical form of a request that SigV4 hashes.
func CanonicalRequest(method, path, query, headers, signedHeaders, payload string) string {
	return method + "\n" + path + "\n" + query + "\n" + headers + "\n" + signedHeaders + "\n" + payload
}

// StringToSign is what the signing key signs for a request.
func StringToSign(t time.Time, scope, canonicalRequest string) string {
	return algorithm + "\n" + t.UTC().Format(timeFormat) + "\n" + scope + "\n" + sha256Hex([]byte(canonicalRequest))
}

// CanonicalQuery encodes a query the SigV4 way: names and values
// URI-encoded, sorted by name then value.
func CanonicalQuery(q url.Values) string {
	type pair struct{ k, v string }
	pairs := make([]pair, 0, len(q))
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, pair{uriEncode(k, true), uriEncode(v, true)})
		}
	}
	// By name, then by value: sorting "name=value" strings whole would put
	// "a-b=2" before "a=1".
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k + "=" + p.v)
	}
	return b.String()
}

// CanonicalHeaders lists the signed headers of r as "name:value\n" lines,
// in the order given (sorted); values are trimmed, inner runs of spaces
// collapsed, and repeated headers joined with commas.
func CanonicalHeaders(r *http.Request, signed []string) string {
	var b strings.Builder
	for _, name := range signed {
		var values []string
		switch name {
		case "host":
			values = []string{r.Host}
		case "content-length":
			if v := r.Header.Values("Content-Length"); len(v) > 0 {
				values = v
			} else if r.ContentLength >= 0 && (r.ContentLength > 0 || r.Body != nil && r.Body != http.NoBody) {
				values = []string{strconv.FormatInt(r.ContentLength, 10)}
			}
		case "transfer-encoding":
			values = r.TransferEncoding
		default:
			values = r.Header.Values(name)
		}
		b.WriteString(name + ":")
		for i, v := range values {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strings.Join(strings.Fields(v), " "))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// EncodePath URI-encodes a path the way S3 signers do: every byte but
// the unreserved characters and '/' is percent-encoded, once.
func EncodePath(p string) string {
	if p == "" {
		return "/"
	}
	return uriEncode(p, false)
}

func uriEncode(s string, encodeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' && !encodeSlash {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// Sign signs r in its Authorization header with an access key, for
// region and service s3, at time t, declaring payloadHash (a hex SHA-256
// or UnsignedPayload) as x-amz-content-sha256. It signs the host, the
// x-amz-* headers and Content-Type and Content-MD5 when present. It is
// the client side of Verify, for our own clients and benchmarks.
func Sign(r *http.Request, id, secret, region, payloadHash string, t time.Time) {
	t = t.UTC()
	r.Header.Set("X-Amz-Date", t.Format(timeFormat))
	r.Header.Set("X-Amz-Content-Sha256", payloadHash)
	if r.Host == "" {
		r.Host = r.URL.Host
	}
	signed := []string{"host"}
	for name := range r.Header {
		lower := strings.ToLower(name)
		if strings.HasPrefix(lower, "x-amz-") || lower == "content-type" || lower == "content-md5" {
			signed = append(signed, lower)
		}
	}
	sort.Strings(signed)
	cred := credential{id, t.Format(dateFormat), region, "s3"}
	creq := CanonicalRequest(r.Method, EncodePath(r.URL.Path), CanonicalQuery(r.URL.Query()), CanonicalHeaders(r, signed), strings.Join(signed, ";"), payloadHash)
	key := SigningKey(secret, cred.date, region, "s3")
	sig := hex.EncodeToString(hmacSHA256(key, StringToSign(t, cred.scope(), creq)))
	r.Header.Set("Authorization", algorithm+" Credential="+id+"/"+cred.scope()+",SignedHeaders="+strings.Join(signed, ";")+",Signature="+sig)
}

// VerifyPolicy checks the Version 4 signature of an HTML form upload's
// policy (POST Object): signature is the hex HMAC-SHA256 of the base64
// policy text with the signing key of credential's day, region and
// service, and date (x-amz-date) must fall on credential's day. The
// policy's own expiration is its caller's to check. The Auth it returns
// has an unsigned payload: the policy bounds the file, not a hash.
func VerifyPolicy(policy, credential, date, signature string, lookup Lookup) (*Auth, error) {
	cred, err := parseCredential(credential)
	if err != nil {
		return nil, &Error{"InvalidArgument", err.(*Error).Message}
	}
	t, err := time.Parse(timeFormat, date)
	if err != nil {
		return nil, errorf("InvalidArgument", "x-amz-date %q is not YYYYMMDDTHHMMSSZ", date)
	}
	if t.Format(dateFormat) != cred.date {
		return nil, errorf("InvalidArgument", "the credential date %s is not x-amz-date's %s", cred.date, t.Format(dateFormat))
	}
	secret, err := lookup(cred.id)
	if errors.Is(err, ErrUnknownKey) {
		return nil, errorf("InvalidAccessKeyId", "the access key id %q does not exist", cred.id)
	}
	if err != nil {
		return nil, err
	}
	key := SigningKey(secret, cred.date, cred.region, cred.service)
	if !hmac.Equal([]byte(hex.EncodeToString(hmacSHA256(key, policy))), []byte(signature)) {
		return nil, errorf("SignatureDoesNotMatch", "the policy signature we calculated does not match the x-amz-signature you provided; check your secret access key and signing method")
	}
	return &Auth{AccessKeyID: cred.id, Region: cred.region, PayloadHash: UnsignedPayload, time: t, scope: cred.scope(), key: key}, nil
}
