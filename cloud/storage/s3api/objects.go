package s3api

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// maxMeta bounds the user metadata of an object, as S3 does (2 KiB).
const maxMeta = 2 << 10

// storedHeaders are the standard headers an object keeps and returns.
var storedHeaders = []string{"Cache-Control", "Content-Disposition", "Content-Encoding", "Content-Language", "Expires"}

// overridable are the headers a signed GET may set with response-* query
// parameters: the stored ones and Content-Type.
var overridable = append(storedHeaders[:len(storedHeaders):len(storedHeaders)], "Content-Type")

// putOptions reads an upload's content type and metadata from its
// headers.
func (s *Server) putOptions(h http.Header) (cloudstore.PutOptions, error) {
	o := cloudstore.PutOptions{ContentType: h.Get("Content-Type"), Now: s.opts.Now()}
	if o.ContentType == "" {
		o.ContentType = "binary/octet-stream" // S3's default
	}
	size := 0
	for name, values := range h {
		lower := strings.ToLower(name)
		if strings.HasPrefix(lower, "x-amz-meta-") {
			if o.Meta == nil {
				o.Meta = map[string]string{}
			}
			o.Meta[lower] = metaIn(strings.Join(values, ","))
			size += len(lower) + len(o.Meta[lower])
		}
	}
	for _, name := range storedHeaders {
		v := h.Get(name)
		if name == "Content-Encoding" {
			v = objectEncoding(h.Values(name))
		}
		if v != "" {
			if o.Meta == nil {
				o.Meta = map[string]string{}
			}
			o.Meta[name] = v
		}
	}
	if loc, err := websiteRedirect(h); err != nil {
		return o, err
	} else if loc != "" {
		if o.Meta == nil {
			o.Meta = map[string]string{}
		}
		o.Meta[cloudstore.MetaWebsiteRedirect] = loc
	}
	if size > maxMeta {
		return o, s3err(http.StatusBadRequest, "MetadataTooLarge", fmt.Sprintf("Your metadata headers exceed the maximum allowed metadata size of %d bytes.", maxMeta))
	}
	return o, nil
}

// unkeptWriteHeaders refuses the headers of an object write (PutObject,
// CopyObject, CreateMultipartUpload) that ask for what this endpoint does
// not do and whose loss would go unnoticed: x-amz-write-offset-bytes, an
// append in S3's directory buckets, which ignored would replace the
// object with the appended bytes alone.
func unkeptWriteHeaders(h http.Header) error {
	if h.Get("X-Amz-Write-Offset-Bytes") != "" {
		return s3err(http.StatusNotImplemented, "NotImplemented", "Appending to an object (x-amz-write-offset-bytes) is not supported.")
	}
	return nil
}

func validKey(key string) error {
	if len(key) > cloudstore.MaxKeyLen {
		return s3err(http.StatusBadRequest, "KeyTooLongError", fmt.Sprintf("Your key is too long: the limit is %d bytes.", cloudstore.MaxKeyLen))
	}
	return nil
}

// objectEncoding is the Content-Encoding an object keeps of an upload's
// Content-Encoding header lines: as sent, but for aws-chunked, which
// describes the transfer and not the object (S3 drops it too). Several
// lines are one list, as HTTP reads them.
func objectEncoding(lines []string) string {
	var kept []string
	for _, line := range lines {
		for _, e := range strings.Split(line, ",") {
			if t := strings.TrimSpace(e); t != "" && !strings.EqualFold(t, "aws-chunked") {
				kept = append(kept, e)
			}
		}
	}
	return strings.TrimLeft(strings.Join(kept, ","), " \t")
}

// uploadBody checks an upload's length and returns its checked body. A
// body of unknown length (sent with HTTP's chunked transfer coding, as
// boto3 does when told to, and S3 takes; streamed over HTTP/2; or
// aws-chunked with a trailer) is taken too: the store reads it up to
// limit and refuses it at the first byte past.
func (s *Server) uploadBody(r *request, limit int64) (io.Reader, error) {
	if r.size > limit {
		return nil, errTooLarge
	}
	return r.body, nil
}

func (s *Server) putObject(w http.ResponseWriter, r *request) error {
	if err := validKey(r.key); err != nil {
		return err
	}
	if err := unkeptWriteHeaders(r.Header); err != nil {
		return err
	}
	owner, acl, err := s.objectACL(r)
	if err != nil {
		return err
	}
	if err := checkStorageClass(r.Header.Get("X-Amz-Storage-Class")); err != nil {
		return err
	}
	o, err := s.putOptions(r.Header)
	if err != nil {
		return err
	}
	o.Owner, o.ACL = owner, acl
	if o.Tags, err = requestTags(r); err != nil {
		return err
	}
	if o.Lock, err = lockHeaders(r); err != nil {
		return err
	}
	if o.Lock != nil {
		if err := lockChecksum(r); err != nil {
			return err
		}
	}
	if o.If, err = writePreconditions(r.Header); err != nil {
		return err
	}
	if o.Checksum, err = uploadChecksum(r, cloudstore.FullObject); err != nil {
		return err
	}
	var keyMD5 string
	if o.Encrypt, keyMD5, err = s.writeEncryption(r); err != nil {
		return err
	}
	body, err := s.uploadBody(r, s.opts.MaxObjectSize)
	if err != nil {
		return err
	}
	o.Max = s.opts.MaxObjectSize
	obj, err := s.st.Put(r.Context(), r.account, r.bucket, r.key, body, o)
	switch {
	case errors.Is(err, cloudstore.ErrPrecondition) && errors.Is(err, cloudstore.ErrNotFound):
		return errNoSuchKey // If-Match, and no object to match
	case errors.Is(err, cloudstore.ErrNotFound):
		return errNoSuchBucket // Put checks the bucket before reading the body
	case errors.Is(err, cloudstore.ErrNoObjectLock):
		return errNoObjectLock // and its Object Lock
	}
	if err != nil {
		return bodyError(err)
	}
	w.Header().Set("ETag", `"`+obj.ETag+`"`)
	setChecksumHeaders(w.Header(), obj.Checksum)
	setVersionHeader(w.Header(), obj)
	s.setEncryptionHeaders(w.Header(), obj.Encryption, keyMD5)
	s.setExpiration(w.Header(), r, obj)
	w.WriteHeader(http.StatusOK)
	return nil
}

// writePreconditions reads the conditions of a write (PutObject,
// CopyObject's destination, CompleteMultipartUpload), as S3 takes them: If-None-Match: * (create
// only), If-Match: ETag (replace only that version). Another
// If-None-Match value is refused: S3 does not implement it on writes.
func writePreconditions(h http.Header) (cloudstore.Preconditions, error) {
	var p cloudstore.Preconditions
	if v, ok := h["If-None-Match"]; ok {
		if len(v) != 1 || strings.TrimSpace(v[0]) != "*" {
			return p, s3err(http.StatusNotImplemented, "NotImplemented", "If-None-Match on a write takes only *, to create the object only if it does not exist.")
		}
		p.IfNoneMatch = "*"
	}
	if v := strings.TrimSpace(h.Get("If-Match")); v != "" {
		p.IfMatch = strings.Trim(v, `"`)
	}
	return p, nil
}

// bodyError turns a failure to read an upload's body (the store's
// ErrBody) into the S3 error it is: the check that failed while the body
// was read (a wrong signature, checksum or length), or, when the body
// simply ended early or stalled, the client's IncompleteBody or
// RequestTimeout, never an internal error.
func bodyError(err error) error {
	var e *Error
	var se *sigv4.Error
	var ne net.Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &se):
		return se
	case errors.Is(err, cloudstore.ErrTooLarge) || !errors.Is(err, cloudstore.ErrBody):
		return err
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return errRequestTimeout
	}
	return errIncompleteBody
}

// partRead is a read of one part of an object (partNumber).
type partRead struct {
	first, length int64
	count         int // parts to report in x-amz-mp-parts-count; 0 for none
	number        int
}

// readPart reads the partNumber of a GET or HEAD, if there is one, as S3
// does: part N of an object completed from a multipart upload is its
// bytes within the object; an object uploaded whole has one part, the
// whole object, and reports no part count. An object completed before
// the store kept its part sizes is read the same way as one part: its
// ETag still says how many parts it was made of, but not where they
// lie. A number past the last part is 416 InvalidPartNumber.
func readPart(r *request, obj cloudstore.Object) (*partRead, error) {
	q := r.URL.Query()
	if !q.Has("partNumber") {
		return nil, nil
	}
	n, err := strconv.Atoi(q.Get("partNumber"))
	if err != nil || n < 1 || n > cloudstore.MaxPartNumber {
		return nil, s3err(http.StatusBadRequest, "InvalidArgument", fmt.Sprintf("Part number must be an integer between 1 and %d, inclusive", cloudstore.MaxPartNumber))
	}
	if r.Header.Get("Range") != "" {
		return nil, s3err(http.StatusBadRequest, "InvalidRequest", "Cannot specify both Range header and partNumber query parameter")
	}
	if len(obj.PartSizes) > 0 {
		first, length, ok := obj.Part(n)
		if !ok {
			return nil, errInvalidPartNumber
		}
		return &partRead{first, length, len(obj.PartSizes), n}, nil
	}
	if n != 1 {
		return nil, errInvalidPartNumber
	}
	return &partRead{0, obj.Size, 0, n}, nil
}

var errInvalidPartNumber = s3err(http.StatusRequestedRangeNotSatisfiable, "InvalidPartNumber", "The requested partnumber is not satisfiable")

// getObject answers GetObject and HeadObject: conditional requests, one
// byte range, the stored headers and metadata, and the response-*
// overrides of a signed request.
func (s *Server) getObject(w http.ResponseWriter, r *request) error {
	id, err := versionParam(r)
	if err != nil {
		return err
	}
	ck, keyMD5, err := readEncryption(r)
	if err != nil {
		return err
	}
	obj, body, err := s.st.OpenObjectVersion(r.Context(), r.account, r.bucket, r.key, id, ck)
	if err != nil {
		return s.lookupError(w, r, r.bucket, id, err)
	}
	defer body.Close()
	if g := r.gate(); g != nil {
		if err := g.check(obj); err != nil {
			return err // another object than admitObject judged
		}
	}
	if obj.Encryption.UsesKMS() && (r.auth == nil || r.v2) {
		// As S3: an SSE-KMS object is read only by requests signed with
		// Signature Version 4, never anonymously (a public bucket's).
		return errKMSSigV2
	}
	part, err := readPart(r, obj)
	if err != nil {
		return err
	}
	h := w.Header()
	etag := `"` + obj.ETag + `"`
	h.Set("ETag", etag)
	h.Set("Last-Modified", obj.LastModified.UTC().Format(http.TimeFormat))
	h.Set("Accept-Ranges", "bytes")
	setVersionHeader(h, obj)
	s.setLockHeaders(h, r, obj, id)
	s.setEncryptionHeaders(h, obj.Encryption, keyMD5)
	if id == "" {
		s.setExpiration(h, r, obj)
	}
	if v := obj.Meta[cloudstore.MetaWebsiteRedirect]; v != "" {
		// On a 304 too: the website endpoint redirects on it, not on a
		// body the browser kept from before the redirect was set.
		h.Set(cloudstore.MetaWebsiteRedirect, v)
	}
	if err := checkConditions(r.Header, "", etag, obj.LastModified); err != nil {
		return err
	}
	h.Set("Content-Type", obj.ContentType)
	h.Set("X-Content-Type-Options", "nosniff") // the type stored is the type served
	for name, v := range obj.Meta {
		if strings.HasPrefix(name, "x-amz-meta-") {
			// As S3 sends them: lower case. h.Set would canonicalise
			// the name to X-Amz-Meta-..., and SDKs that strip the
			// prefix as written then see the key capitalised. A value
			// that is not printable US-ASCII goes as one RFC 2047 word
			// (metadata.go).
			h[name] = []string{metaOut(v)}
		} else {
			h.Set(name, v)
		}
	}
	if len(obj.Tags) > 0 && r.auth != nil {
		// As S3 sends it to whoever may read the tags: not to an
		// anonymous reader of a public bucket.
		h.Set("X-Amz-Tagging-Count", strconv.Itoa(len(obj.Tags)))
	}
	if r.auth != nil {
		q := r.URL.Query()
		for _, name := range overridable {
			if v := q.Get("response-" + strings.ToLower(name)); v != "" {
				h.Set(name, v)
			}
		}
	}
	start, length := int64(0), obj.Size
	status := http.StatusOK
	if checksumMode(r) && r.Header.Get("Range") == "" {
		// The checksum of what is sent: the object's, or the part's.
		// A byte range has none, as in S3.
		switch {
		case part == nil || len(obj.PartSizes) == 0 && obj.MultipartCount() == 0:
			setChecksumHeaders(h, obj.Checksum)
		default:
			setChecksumHeaders(h, partChecksum(obj, part.number))
		}
	}
	if part != nil {
		// A part is a range of the object: 206 with its Content-Range,
		// unless it is empty, which no Content-Range can name.
		start, length = part.first, part.length
		if part.count > 0 {
			h.Set("X-Amz-Mp-Parts-Count", strconv.Itoa(part.count))
		}
		if length > 0 {
			status = http.StatusPartialContent
			h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, start+length-1, obj.Size))
		}
	} else if rng := r.Header.Get("Range"); rng != "" {
		first, last, ok, err := parseRange(rng, obj.Size)
		if err != nil {
			h.Set("Content-Range", fmt.Sprintf("bytes */%d", obj.Size))
			return err
		}
		if ok {
			start, length, status = first, last-first+1, http.StatusPartialContent
			h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, obj.Size))
		}
	}
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return nil
	}
	if _, err := body.Seek(start, io.SeekStart); err != nil {
		return err
	}
	_, err = io.CopyN(w, body, length)
	return err
}

var errInvalidRange = s3err(http.StatusRequestedRangeNotSatisfiable, "InvalidRange", "The requested range is not satisfiable")

// parseRange reads a single "bytes=" range against size. A header that is
// not a single byte range is ignored (ok false), as RFC 9110 allows; a
// range that starts beyond the object is InvalidRange.
func parseRange(v string, size int64) (first, last int64, ok bool, err error) {
	spec, found := strings.CutPrefix(v, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false, nil
	}
	a, b, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false, nil
	}
	switch {
	case a == "": // the last b bytes
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, false, nil
		}
		if n == 0 || size == 0 {
			return 0, 0, false, errInvalidRange
		}
		return max(size-n, 0), size - 1, true, nil
	default:
		first, err := strconv.ParseInt(a, 10, 64)
		if err != nil || first < 0 {
			return 0, 0, false, nil
		}
		last := size - 1
		if b != "" {
			if last, err = strconv.ParseInt(b, 10, 64); err != nil || last < first {
				return 0, 0, false, nil
			}
			last = min(last, size-1)
		}
		if first >= size {
			return 0, 0, false, errInvalidRange
		}
		return first, last, true, nil
	}
}

// checkConditions evaluates If-Match, If-Unmodified-Since, If-None-Match
// and If-Modified-Since (each under prefix, "x-amz-copy-source-" for a
// copy's source) in RFC 9110's order.
func checkConditions(h http.Header, prefix, etag string, modified time.Time) error {
	get := func(name string) string { return h.Get(prefix + name) }
	modified = modified.Truncate(time.Second)
	if v := get("If-Match"); v != "" {
		if !etagMatches(v, etag) {
			return errPrecondition
		}
	} else if t, err := http.ParseTime(get("If-Unmodified-Since")); err == nil && modified.After(t) {
		return errPrecondition
	}
	notModified := errNotModified
	if prefix != "" {
		notModified = errPrecondition // a copy has no 304
	}
	if v := get("If-None-Match"); v != "" {
		if etagMatches(v, etag) {
			return notModified
		}
	} else if t, err := http.ParseTime(get("If-Modified-Since")); err == nil && !modified.After(t) {
		return notModified
	}
	return nil
}

var errNotModified = s3err(http.StatusNotModified, "NotModified", "Not Modified")

func etagMatches(list, etag string) bool {
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimPrefix(strings.TrimSpace(v), "W/")
		if v == "*" || v == etag || `"`+v+`"` == etag {
			return true
		}
	}
	return false
}

// deleteObject answers DeleteObject: of a version, with versionId; in a
// bucket that keeps versions, otherwise, it makes a delete marker. With
// If-Match, x-amz-if-match-size or x-amz-if-match-last-modified-time it
// is S3's conditional delete.
func (s *Server) deleteObject(w http.ResponseWriter, r *request) error {
	id, err := versionParam(r)
	if err != nil {
		return err
	}
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return errNoSuchBucket
	}
	pre := cloudstore.Preconditions{IfMatch: strings.Trim(strings.TrimSpace(r.Header.Get("If-Match")), `"`)}
	if v := r.Header.Get("X-Amz-If-Match-Size"); v != "" {
		n, ok := parseSize(v)
		if !ok {
			return s3err(http.StatusBadRequest, "InvalidArgument", fmt.Sprintf("x-amz-if-match-size %q is not a size in bytes.", v))
		}
		pre.IfMatchSize = &n
	}
	if v := r.Header.Get("X-Amz-If-Match-Last-Modified-Time"); v != "" {
		t, err := http.ParseTime(v)
		if err != nil {
			return s3err(http.StatusBadRequest, "InvalidArgument", fmt.Sprintf("x-amz-if-match-last-modified-time %q is not an HTTP date.", v))
		}
		pre.IfMatchModified = &t
	}
	if err := s.conditionalDelete(r, id, pre); err != nil {
		return err
	}
	by, err := s.lockBypass(r, r.key, id)
	if err != nil {
		return err
	}
	del, err := s.deleteOne(r.account, r.bucket, r.key, id, pre, by)
	if err != nil {
		return err
	}
	h := w.Header()
	if del.DeleteMarker {
		h.Set("X-Amz-Delete-Marker", "true")
	}
	if del.Versioned || id != "" {
		h.Set("X-Amz-Version-Id", cloudstore.Object{VersionID: del.VersionID}.VersionName())
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// conditionalDelete checks that a delete's conditions (pre: If-Match,
// unquoted, "" for none; the size and the last modification time) can be
// honoured: S3 evaluates them against the current version only, so they
// are refused with a version id rather than applied to the wrong one;
// and, as S3 asks s3:GetObject of them, conditions whose answer tells
// something of the object (an ETag, a size, a time: all but If-Match: *)
// need a key that may read.
func (s *Server) conditionalDelete(r *request, id string, pre cloudstore.Preconditions) error {
	if pre == (cloudstore.Preconditions{}) {
		return nil
	}
	if id != "" {
		return s3err(http.StatusNotImplemented, "NotImplemented", "A conditional delete (If-Match, x-amz-if-match-size, x-amz-if-match-last-modified-time) applies to the current version; it is not supported with versionId.")
	}
	telling := pre.IfMatch != "" && pre.IfMatch != "*" || pre.IfMatchSize != nil || pre.IfMatchModified != nil
	if telling && r.s3key.Permissions == cloudstore.PermWrite {
		return s3err(http.StatusForbidden, "AccessDenied", "A conditional delete with an ETag, a size or a time needs a key that may also read the object.")
	}
	return nil
}

// parseSize reads a size in bytes: decimal digits only, no sign.
func parseSize(v string) (int64, bool) {
	if v == "" || v[0] < '0' || v[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// deleteOne deletes key, or its version id if not "". Deleting a missing
// key succeeds, as in S3, unless pre's IfMatch (an ETag, or * for any
// object) asks for an object: then the current one must match, checked
// in the same step as the delete (412 PreconditionFailed, or 404
// NoSuchKey when there is none), as must its size and modification time
// when pre names them (412; they hold when there is no object). A version
// Object Lock protects stays (403 AccessDenied), but for GOVERNANCE
// retention when bypass is set.
func (s *Server) deleteOne(account, bucket, key, id string, pre cloudstore.Preconditions, by bypass) (cloudstore.Deletion, error) {
	if id != "" {
		del, err := s.st.DeleteVersionWith(account, bucket, key, id, cloudstore.VersionDeleteOptions{BypassGovernance: by.on})
		return del, lockRefusal(err, by)
	}
	del, err := s.st.Delete(account, bucket, key, cloudstore.DeleteOptions{If: pre})
	if errors.Is(err, cloudstore.ErrPrecondition) && errors.Is(err, cloudstore.ErrNotFound) {
		return del, errNoSuchKey
	}
	if pre.IfMatch == "" && errors.Is(err, cloudstore.ErrNotFound) {
		if _, berr := s.st.Bucket(account, bucket); berr == nil {
			return cloudstore.Deletion{}, nil
		}
	}
	return del, err
}

// copySource parses x-amz-copy-source: "[/]bucket/key[?versionId=id]",
// the bucket and key URL-encoded.
func copySource(r *request) (bucket, key, version string, err error) {
	v := r.Header.Get("X-Amz-Copy-Source")
	if i := strings.Index(v, "?"); i >= 0 {
		q, err := url.ParseQuery(v[i+1:])
		if err != nil || len(q) != 1 || len(q["versionId"]) != 1 {
			return "", "", "", s3err(http.StatusBadRequest, "InvalidArgument", "x-amz-copy-source may carry only ?versionId=")
		}
		if version = q.Get("versionId"); cloudstore.CheckVersionID(version) != nil {
			return "", "", "", errInvalidVersion
		}
		v = v[:i]
	}
	v, err = url.PathUnescape(strings.TrimPrefix(v, "/"))
	if err != nil {
		return "", "", "", s3err(http.StatusBadRequest, "InvalidArgument", "x-amz-copy-source is not URL-encoded correctly")
	}
	bucket, key, _ = strings.Cut(v, "/")
	if bucket == "" || key == "" {
		return "", "", "", s3err(http.StatusBadRequest, "InvalidArgument", "x-amz-copy-source must be bucket/key")
	}
	return bucket, key, version, nil
}

func copySourceBucket(r *request) []string {
	b, _, _, err := copySource(r)
	if err != nil {
		return nil
	}
	return []string{b}
}

func (s *Server) copyObject(w http.ResponseWriter, r *request) error {
	srcBucket, srcKey, srcVersion, err := copySource(r)
	if err != nil {
		return err
	}
	if err := unkeptWriteHeaders(r.Header); err != nil {
		return err
	}
	if err := validKey(r.key); err != nil {
		return err
	}
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return errNoSuchBucket
	}
	owner, acl, err := s.objectACL(r)
	if err != nil {
		return err
	}
	if err := checkStorageClass(r.Header.Get("X-Amz-Storage-Class")); err != nil {
		return err
	}
	gate, err := s.sourceGate(r)
	if err != nil {
		return err
	}
	check := sourceCheck(r, gate)
	src, err := s.st.ObjectVersion(r.sourceAccount(), srcBucket, srcKey, srcVersion)
	if err != nil {
		return s.copySourceError(gate.lookupError(err), r.sourceAccount(), srcBucket, srcVersion)
	}
	// Judged before anything is told of the source (its ETag, by a
	// precondition); again on the version copied, under its lock.
	if err := check(src); err != nil {
		return err
	}
	if err := checkConditions(r.Header, "X-Amz-Copy-Source-", `"`+src.ETag+`"`, src.LastModified); err != nil {
		return err
	}
	replaceTags, err := taggingDirective(r.Header)
	if err != nil {
		return err
	}
	co := cloudstore.CopyOptions{ReplaceTags: replaceTags, SourceVersion: srcVersion, Owner: owner, ACL: acl, SourceAccount: r.sourceAccount(),
		CheckSource: check}
	if co.Lock, err = lockHeaders(r); err != nil {
		return err
	}
	if co.If, err = writePreconditions(r.Header); err != nil {
		return err
	}
	var keyMD5 string
	if co.Encrypt, keyMD5, err = s.writeEncryption(r); err != nil {
		return err
	}
	if co.SourceKey, _, err = customerKey(r, hCopySSEC); err != nil {
		return err
	}
	if replaceTags {
		if co.Tags, err = requestTags(r); err != nil {
			return err
		}
	}
	switch d := r.Header.Get("X-Amz-Metadata-Directive"); d {
	case "", "COPY":
		// The source's website redirect is not copied, as in S3; the
		// request's own is the copy's.
		redirect, err := websiteRedirect(r.Header)
		if err != nil {
			return err
		}
		co.WebsiteRedirect = &redirect
		// Replacing the tags alone is a change, as it is in S3; so is
		// setting a website redirect.
		if srcBucket == r.bucket && srcKey == r.key && srcVersion == "" && !replaceTags && co.Encrypt == nil && redirect == "" {
			return s3err(http.StatusBadRequest, "InvalidRequest", "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.")
		}
	case "REPLACE":
		o, err := s.putOptions(r.Header)
		if err != nil {
			return err
		}
		co.Replace = &o
	default:
		return s3err(http.StatusBadRequest, "InvalidArgument", "Unknown metadata directive.")
	}
	obj, err := s.st.Copy(r.Context(), r.account, srcBucket, srcKey, r.bucket, r.key, s.opts.Now(), co)
	switch {
	case errors.Is(err, cloudstore.ErrPrecondition) && errors.Is(err, cloudstore.ErrNotFound):
		return errNoSuchKey // If-Match, and no object at the destination to match
	case errors.Is(err, cloudstore.ErrPrecondition):
		return errPrecondition
	case err != nil:
		return s.copySourceError(gate.lookupError(err), r.sourceAccount(), srcBucket, srcVersion)
	}
	setCopyVersionHeaders(w.Header(), src, srcVersion)
	setVersionHeader(w.Header(), obj)
	s.setEncryptionHeaders(w.Header(), obj.Encryption, keyMD5)
	s.setExpiration(w.Header(), r, obj)
	writeCopyResult(w, "CopyObjectResult", obj.LastModified, obj.ETag, nil)
	return nil
}

// copySourceError answers a copy whose source could not be read: a
// missing bucket, key or version, or a delete marker, which S3 refuses as
// an invalid source when named by its id and as a missing key otherwise.
func (s *Server) copySourceError(err error, account, bucket, version string) error {
	var dm *cloudstore.DeleteMarkerError
	switch {
	case errors.As(err, &dm) && version != "":
		return s3err(http.StatusBadRequest, "InvalidRequest", "The source of a copy request may not specifically refer to a delete marker by version id.")
	case errors.Is(err, cloudstore.ErrBadVersion):
		return errInvalidVersion
	case errors.Is(err, cloudstore.ErrNotFound):
		if _, berr := s.st.Bucket(account, bucket); berr != nil {
			return errNoSuchBucket
		}
		if version != "" {
			return errNoSuchVersion
		}
		return errNoSuchKey
	}
	return err
}

// setCopyVersionHeaders names the version a copy read, as S3 does when
// the source's bucket keeps versions or a version was asked for.
func setCopyVersionHeaders(h http.Header, src cloudstore.Object, asked string) {
	if src.Versioned || asked != "" {
		h.Set("X-Amz-Copy-Source-Version-Id", src.VersionName())
	}
}

// writeCopyResult answers a copy (CopyObjectResult, CopyPartResult): the
// copy's time and quoted ETag under the root element named root.
func writeCopyResult(w http.ResponseWriter, root string, modified time.Time, etag string, sum *cloudstore.Checksum) {
	type result struct {
		XMLName      xml.Name // root, set below
		Xmlns        string   `xml:"xmlns,attr"`
		LastModified string
		ETag         string
		checksumXML
	}
	res := result{XMLName: xml.Name{Local: root}, Xmlns: xmlns, LastModified: s3Time(modified), ETag: `"` + etag + `"`}
	if sum != nil {
		res.checksumXML = checksumOf(sum.Algorithm, sum.Value, "")
	}
	writeXML(w, http.StatusOK, res)
}

// deleteObjects answers DeleteObjects: up to 1000 keys, or versions of
// keys, each deleted on its own; missing keys count as deleted, as in S3.
func (s *Server) deleteObjects(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return errNoSuchBucket
	}
	data, err := readBody(r.body, 2<<20)
	if err != nil {
		return err
	}
	var req struct {
		Quiet   bool
		Objects []struct {
			Key       string
			VersionID string `xml:"VersionId"`
			// ETag makes the delete of this key conditional, as
			// If-Match does DeleteObject's.
			ETag             string
			LastModifiedTime string
			Size             string
		} `xml:"Object"`
	}
	if err := xml.Unmarshal(data, &req); err != nil || len(req.Objects) == 0 || len(req.Objects) > 1000 {
		return errMalformedXML
	}
	pres := make([]cloudstore.Preconditions, len(req.Objects))
	for i, o := range req.Objects {
		pres[i].IfMatch = strings.Trim(strings.TrimSpace(o.ETag), `"`)
		if o.Size != "" {
			n, ok := parseSize(strings.TrimSpace(o.Size))
			if !ok {
				return errMalformedXML
			}
			pres[i].IfMatchSize = &n
		}
		if v := strings.TrimSpace(o.LastModifiedTime); v != "" {
			// S3's model sends this one as an HTTP date, unlike the
			// other times in its XML; an ISO 8601 time is taken too.
			t, err := http.ParseTime(v)
			if err != nil {
				if t, err = time.Parse(time.RFC3339Nano, v); err != nil {
					return errMalformedXML
				}
			}
			pres[i].IfMatchModified = &t
		}
	}
	type deleted struct {
		Key                   string
		VersionID             string `xml:"VersionId,omitempty"`
		DeleteMarker          bool   `xml:",omitempty"`
		DeleteMarkerVersionID string `xml:"DeleteMarkerVersionId,omitempty"`
	}
	type failed struct {
		Key       string
		VersionID string `xml:"VersionId,omitempty"`
		Code      string
		Message   string
	}
	type result struct {
		XMLName xml.Name `xml:"DeleteResult"`
		Xmlns   string   `xml:"xmlns,attr"`
		Deleted []deleted
		Error   []failed
	}
	res := result{Xmlns: xmlns}
	for i, o := range req.Objects {
		if s.deleteDenied(r, o.Key, o.VersionID) {
			res.Error = append(res.Error, failed{o.Key, o.VersionID, errPolicyDenied.Code, errPolicyDenied.Message})
			continue
		}
		if o.VersionID != "" && cloudstore.CheckVersionID(o.VersionID) != nil {
			res.Error = append(res.Error, failed{o.Key, o.VersionID, errNoSuchVersion.Code, errNoSuchVersion.Message})
			continue
		}
		if err := s.conditionalDelete(r, o.VersionID, pres[i]); err != nil {
			e := toError(err, errNoSuchKey)
			res.Error = append(res.Error, failed{o.Key, o.VersionID, e.Code, e.Message})
			continue
		}
		by, err := s.lockBypass(r, o.Key, o.VersionID)
		if err == nil {
			var del cloudstore.Deletion
			del, err = s.deleteOne(r.account, r.bucket, o.Key, o.VersionID, pres[i], by)
			if err == nil && !req.Quiet {
				d := deleted{Key: o.Key, VersionID: o.VersionID, DeleteMarker: del.DeleteMarker}
				if del.DeleteMarker {
					d.DeleteMarkerVersionID = cloudstore.Object{VersionID: del.VersionID}.VersionName()
				}
				res.Deleted = append(res.Deleted, d)
			}
		}
		if err != nil {
			e := toError(err, errNoSuchKey)
			res.Error = append(res.Error, failed{o.Key, o.VersionID, e.Code, e.Message})
		}
	}
	writeXML(w, http.StatusOK, res)
	return nil
}
