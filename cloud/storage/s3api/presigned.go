package s3api

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/latticenet/lattice/cloud/storage/sigv2"
	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// Presigners put some of what a client would send as headers in the
// query, where the signature covers it: the JS SDK v3 its checksum and
// metadata, botocore's Signature Version 2 presigner every x-amz-*
// header and Content-Type. A presigned request's metadata (and, under
// Version 2, its Content-Type and Content-MD5) are taken as its headers
// (hoistQuery), once its signature is verified. Its checksum parameters
// are accepted and ignored, as S3 ignores them: a presigner has no body
// to hash, and the JS SDK v3 (since 3.729) signs the CRC32 of an empty
// body into every presigned PUT, which no upload of a file would match.
// A checksum sent as a header is verified as on any request.

// queryHeader reports whether a query parameter of a presigned request
// stands for a header.
func queryHeader(name string) bool {
	lower := strings.ToLower(name)
	if strings.HasPrefix(lower, "x-amz-meta-") {
		return true
	}
	switch lower {
	case "x-amz-checksum-crc32", "x-amz-checksum-crc32c", "x-amz-checksum-crc64nvme", "x-amz-checksum-sha1",
		"x-amz-checksum-sha256", "x-amz-sdk-checksum-algorithm", "x-amz-checksum-algorithm",
		"content-type", "content-md5":
		return true
	}
	return false
}

// presignedQuery reports whether q claims a presigned signature of
// either version.
func presignedQuery(q url.Values) bool {
	return q.Has("X-Amz-Signature") || q.Has("AWSAccessKeyId") || q.Has("Signature")
}

// queryChecksum reports whether a query parameter (lower-case) names a
// checksum or its algorithm, which a presigned request's query may hold
// but S3 does not take from there.
func queryChecksum(lower string) bool {
	return strings.HasPrefix(lower, "x-amz-checksum-") || lower == "x-amz-sdk-checksum-algorithm"
}

// hoistQuery adds the query parameters of a verified presigned request
// that stand for headers to its headers, but for its checksums (see
// above). Content-Type and Content-MD5 count only under Signature
// Version 2, whose string to sign holds them; Version 4 signs them as
// headers. A name both in the headers and the query is taken once when
// both say the same (a client that sends the Content-Type the URL was
// signed with, as S3 asks of Version 2 URLs), and refused when they
// differ: one of the two would be ignored.
func hoistQuery(r *http.Request, v2 bool) error {
	for name, values := range r.URL.Query() {
		if !queryHeader(name) {
			continue
		}
		lower := strings.ToLower(name)
		if queryChecksum(lower) || !v2 && (lower == "content-type" || lower == "content-md5") {
			continue
		}
		key := http.CanonicalHeaderKey(lower)
		if have, ok := r.Header[key]; ok {
			if sameValues(have, values) {
				continue
			}
			return s3err(http.StatusBadRequest, "InvalidRequest", lower+" is both a header and a query parameter of the presigned request, with different values; send it once.")
		}
		for _, v := range values {
			r.Header.Add(lower, v)
		}
	}
	return nil
}

// sameValues reports whether a header's values are a query parameter's,
// each trimmed as signatures trim them.
func sameValues(header, query []string) bool {
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

// unsignedQuery refuses the x-amz-* query parameters of a request signed
// with Signature Version 2 in its header, whose string to sign leaves
// them out: honouring one (x-amz-tagging) would take what nobody signed.
func unsignedQuery(q url.Values) error {
	for name := range q {
		if strings.HasPrefix(strings.ToLower(name), "x-amz-") {
			return s3err(http.StatusForbidden, "AccessDenied", "Signature Version 2 does not sign the query parameter "+name+"; send it as a header, which it signs.")
		}
	}
	return nil
}

var errOneAuth = s3err(http.StatusBadRequest, "InvalidArgument", "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified")

// verifyV2 checks a Signature Version 2 request and returns it as an
// Auth whose body is unsigned, as Version 2 never signs the payload
// (Content-MD5 and x-amz-checksum-* headers are still checked).
func (s *Server) verifyV2(req *request) (*sigv4.Auth, error) {
	bucket := ""
	if req.vhost {
		bucket = req.bucket
	}
	a, err := sigv2.Verify(req.Request, bucket, s.lookup, s.opts.Now())
	if err != nil {
		return nil, err
	}
	return &sigv4.Auth{AccessKeyID: a.AccessKeyID, Region: s.opts.Region, Presigned: a.Presigned, PayloadHash: sigv4.UnsignedPayload}, nil
}

// authMechanisms counts the signatures r claims: its Authorization
// header, a Version 4 presigned query, a Version 2 presigned query.
func authMechanisms(r *http.Request) int {
	q := r.URL.Query()
	n := 0
	if r.Header.Get("Authorization") != "" {
		n++
	}
	if q.Has("X-Amz-Signature") || q.Has("X-Amz-Algorithm") || q.Has("X-Amz-Credential") {
		n++
	}
	if q.Has("AWSAccessKeyId") || q.Has("Signature") {
		n++
	}
	return n
}
