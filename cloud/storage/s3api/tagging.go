package s3api

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// Object and bucket tagging, as S3 keeps them: a tag set of up to 10 tags
// per object and 50 per bucket, each a key of 1 to 128 and a value of 0
// to 256 Unicode characters (counted in UTF-16 code units, as S3 counts
// them) of letters, numbers, spaces and _ . : / = + - @, keys unique and
// not prefixed with "aws:", which S3 reserves for its own tags.
//
// The requests: GET, PUT and DELETE of ?tagging on an object
// (GetObjectTagging, PutObjectTagging, DeleteObjectTagging) and on a
// bucket (GetBucketTagging, PutBucketTagging, DeleteBucketTagging);
// x-amz-tagging on PutObject, CreateMultipartUpload (the tags are given
// to the object when the upload completes) and CopyObject (with
// x-amz-tagging-directive REPLACE); x-amz-tagging-count on GetObject and
// HeadObject.

const (
	maxTagKey   = 128
	maxTagValue = 256
	// maxTaggingBody bounds a Put*Tagging body: 50 tags of the longest
	// keys and values, escaped, fit with room to spare.
	maxTaggingBody = 256 << 10
)

var (
	errTagKey       = s3err(http.StatusBadRequest, "InvalidTag", "The TagKey you have provided is invalid")
	errTagValue     = s3err(http.StatusBadRequest, "InvalidTag", "The TagValue you have provided is invalid")
	errTagDuplicate = s3err(http.StatusBadRequest, "InvalidTag", "Cannot provide multiple Tags with the same key")
	errTagReserved  = s3err(http.StatusBadRequest, "InvalidTag", "Your TagKey cannot be prefixed with aws:")
	errTagHeader    = s3err(http.StatusBadRequest, "InvalidArgument",
		"The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates.")
	errNoSuchTagSet = s3err(http.StatusNotFound, "NoSuchTagSet", "The TagSet does not exist")
)

// errTooManyTags is S3's answer to a tag set over its limit: BadRequest,
// not InvalidTag.
func errTooManyTags(max int) *Error {
	what := "Object"
	if max == cloudstore.MaxBucketTags {
		what = "Bucket"
	}
	return s3err(http.StatusBadRequest, "BadRequest", fmt.Sprintf("%s tags cannot be greater than %d", what, max))
}

// tagText reports whether s is a valid tag key or value: min to max
// UTF-16 code units of the characters S3 allows.
func tagText(s string, min, max int) bool {
	if !utf8.ValidString(s) {
		return false
	}
	n := 0
	for _, c := range s {
		n += utf16Len(c)
		if !(unicode.IsLetter(c) || unicode.IsNumber(c) || unicode.Is(unicode.Zs, c) || strings.ContainsRune("_.:/=+-@", c)) {
			return false
		}
	}
	return n >= min && n <= max
}

func utf16Len(c rune) int {
	if c > 0xffff {
		return 2
	}
	return 1
}

// checkTag checks one tag's key and value.
func checkTag(key, value string) error {
	if !tagText(key, 1, maxTagKey) {
		return errTagKey
	}
	if strings.HasPrefix(strings.ToLower(key), "aws:") {
		return errTagReserved
	}
	if !tagText(value, 0, maxTagValue) {
		return errTagValue
	}
	return nil
}

// parseTagging reads a Tagging document (PutObjectTagging,
// PutBucketTagging) of at most max tags. Tagging, TagSet and each Tag's
// Key and Value are required (MalformedXML without them); an empty TagSet
// is an empty tag set.
func parseTagging(data []byte, max int) (map[string]string, error) {
	var doc struct {
		XMLName xml.Name `xml:"Tagging"`
		TagSet  *struct {
			Tags []struct {
				Key   *string
				Value *string
			} `xml:"Tag"`
		}
	}
	if err := xml.Unmarshal(data, &doc); err != nil || doc.TagSet == nil {
		return nil, errMalformedXML
	}
	for _, t := range doc.TagSet.Tags {
		if t.Key == nil || t.Value == nil {
			return nil, errMalformedXML
		}
	}
	if len(doc.TagSet.Tags) > max {
		return nil, errTooManyTags(max)
	}
	tags := make(map[string]string, len(doc.TagSet.Tags))
	for _, t := range doc.TagSet.Tags {
		if err := checkTag(*t.Key, *t.Value); err != nil {
			return nil, err
		}
		if _, dup := tags[*t.Key]; dup {
			return nil, errTagDuplicate
		}
		tags[*t.Key] = *t.Value
	}
	return tags, nil
}

// parseTagHeader reads x-amz-tagging: URL query parameters, key=value
// joined by &, "+" a space; a key without "=" has the empty value.
func parseTagHeader(v string) (map[string]string, error) {
	if v == "" {
		return nil, nil
	}
	q, err := url.ParseQuery(v)
	if err != nil {
		return nil, errTagHeader
	}
	for _, values := range q {
		if len(values) > 1 {
			return nil, errTagHeader
		}
	}
	if len(q) > cloudstore.MaxObjectTags {
		return nil, errTooManyTags(cloudstore.MaxObjectTags)
	}
	tags := make(map[string]string, len(q))
	for key, values := range q {
		if err := checkTag(key, values[0]); err != nil {
			return nil, err
		}
		tags[key] = values[0]
	}
	return tags, nil
}

// requestTags reads the tags an upload asks for: x-amz-tagging, in the
// header or, on a presigned URL whose signer moved it there, the query.
func requestTags(r *request) (map[string]string, error) {
	v, ok := r.Header["X-Amz-Tagging"]
	if !ok {
		q := r.URL.Query()
		v, ok = q["x-amz-tagging"]
		if !ok {
			v = q["X-Amz-Tagging"]
		}
	}
	if len(v) > 1 {
		return nil, errTagHeader
	}
	if len(v) == 0 {
		return nil, nil
	}
	return parseTagHeader(v[0])
}

// taggingDirective reads CopyObject's x-amz-tagging-directive: whether
// the copy takes the tags of the request (REPLACE) or of its source
// (COPY, the default).
func taggingDirective(h http.Header) (replace bool, err error) {
	switch h.Get("X-Amz-Tagging-Directive") {
	case "", "COPY":
		return false, nil
	case "REPLACE":
		return true, nil
	}
	return false, s3err(http.StatusBadRequest, "InvalidArgument", "Unknown tagging directive.")
}

// taggingRoute returns the operation of a request for ?tagging, if r is
// one: on an object (of a version, with versionId) or a bucket, GET, PUT
// or DELETE.
func taggingRoute(r *request, q url.Values) (operation, bool) {
	if !q.Has("tagging") {
		return operation{}, false
	}
	if r.key != "" {
		switch r.Method {
		case http.MethodGet:
			return operation{name: "GetObjectTagging", read: true, run: (*Server).getObjectTagging}, true
		case http.MethodPut:
			return operation{name: "PutObjectTagging", write: true, run: (*Server).putObjectTagging}, true
		case http.MethodDelete:
			return operation{name: "DeleteObjectTagging", write: true, run: (*Server).deleteObjectTagging}, true
		}
		return methodNotAllowed("ObjectTagging"), true
	}
	switch r.Method {
	case http.MethodGet:
		return operation{name: "GetBucketTagging", read: true, run: (*Server).getBucketTagging}, true
	case http.MethodPut:
		return operation{name: "PutBucketTagging", write: true, run: (*Server).putBucketTagging}, true
	case http.MethodDelete:
		return operation{name: "DeleteBucketTagging", write: true, run: (*Server).deleteBucketTagging}, true
	}
	return methodNotAllowed("BucketTagging"), true
}

type tagXML struct {
	Key   string
	Value string
}

// writeTagging answers a tag set, in key order. An empty set is an empty
// TagSet element, as S3 sends it.
func writeTagging(w http.ResponseWriter, tags map[string]string) {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	doc := struct {
		XMLName xml.Name `xml:"Tagging"`
		Xmlns   string   `xml:"xmlns,attr"`
		TagSet  struct {
			Tags []tagXML `xml:"Tag"`
		}
	}{Xmlns: xmlns}
	for _, k := range keys {
		doc.TagSet.Tags = append(doc.TagSet.Tags, tagXML{k, tags[k]})
	}
	writeXML(w, http.StatusOK, doc)
}

func (s *Server) getObjectTagging(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return errNoSuchBucket
	}
	id, err := versionParam(r)
	if err != nil {
		return err
	}
	obj, err := s.st.ObjectVersion(r.account, r.bucket, r.key, id)
	if err == nil && obj.DeleteMarker {
		err = &cloudstore.DeleteMarkerError{VersionID: obj.VersionID}
	}
	if err != nil {
		return s.lookupError(w, r, r.bucket, id, err)
	}
	if g := r.gate(); g != nil {
		if err := g.check(obj); err != nil {
			return err // another object than admitObject judged
		}
	}
	setVersionHeader(w.Header(), obj)
	writeTagging(w, obj.Tags)
	return nil
}

func (s *Server) putObjectTagging(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return errNoSuchBucket
	}
	data, err := readBody(r.body, maxTaggingBody)
	if err != nil {
		return err
	}
	tags, err := parseTagging(data, cloudstore.MaxObjectTags)
	if err != nil {
		return err
	}
	return s.setObjectTags(w, r, tags, http.StatusOK)
}

// setObjectTags gives r's object (its version, with versionId) tags, and
// answers status.
func (s *Server) setObjectTags(w http.ResponseWriter, r *request, tags map[string]string, status int) error {
	id, err := versionParam(r)
	if err != nil {
		return err
	}
	var check func(cloudstore.Object) error
	if g := r.gate(); g != nil {
		check = g.check // on the version it changes, under its lock
	}
	obj, err := s.st.SetVersionTagsChecked(r.account, r.bucket, r.key, id, tags, check)
	if err != nil {
		return s.lookupError(w, r, r.bucket, id, err)
	}
	setVersionHeader(w.Header(), obj)
	w.WriteHeader(status)
	return nil
}

func (s *Server) deleteObjectTagging(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return errNoSuchBucket
	}
	return s.setObjectTags(w, r, nil, http.StatusNoContent)
}

func (s *Server) getBucketTagging(w http.ResponseWriter, r *request) error {
	tags, err := s.st.BucketTags(r.account, r.bucket)
	if err != nil {
		return err
	}
	if len(tags) == 0 {
		return errNoSuchTagSet
	}
	writeTagging(w, tags)
	return nil
}

func (s *Server) putBucketTagging(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	data, err := readBody(r.body, maxTaggingBody)
	if err != nil {
		return err
	}
	tags, err := parseTagging(data, cloudstore.MaxBucketTags)
	if err != nil {
		return err
	}
	if err := s.st.SetBucketTags(r.account, r.bucket, tags); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteBucketTagging(w http.ResponseWriter, r *request) error {
	if err := s.st.SetBucketTags(r.account, r.bucket, nil); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
