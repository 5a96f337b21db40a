package s3api

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/storagenames"
)

const xmlns = "http://s3.amazonaws.com/doc/2006-03-01/"

// s3Time is S3's timestamp format in XML.
func s3Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

type owner struct {
	ID          string
	DisplayName string
}

func ownerOf(account string) owner { return owner{ID: account, DisplayName: account} }

// maxBuckets is the largest page of ListBuckets, and its default.
const maxBuckets = 10000

// listBuckets answers ListBuckets, in name order, with its paging
// parameters: prefix, max-buckets (1 to 10000) and continuation-token (the
// ContinuationToken of the previous page: the base64 of the last name it
// gave); bucket-region keeps only the buckets of a region (all of them are
// in this endpoint's).
func (s *Server) listBuckets(w http.ResponseWriter, r *request) error {
	type bucket struct {
		Name         string
		CreationDate string
		BucketRegion string
	}
	type result struct {
		XMLName           xml.Name `xml:"ListAllMyBucketsResult"`
		Xmlns             string   `xml:"xmlns,attr"`
		Owner             owner
		Buckets           []bucket `xml:"Buckets>Bucket"`
		ContinuationToken string   `xml:",omitempty"`
		Prefix            string   `xml:",omitempty"`
	}
	q := r.URL.Query()
	limit := maxBuckets
	if q.Has("max-buckets") {
		n, err := strconv.Atoi(q.Get("max-buckets"))
		if err != nil || n < 1 || n > maxBuckets {
			return s3err(http.StatusBadRequest, "InvalidArgument", fmt.Sprintf("max-buckets must be an integer from 1 to %d", maxBuckets))
		}
		limit = n
	}
	var after string
	if tok := q.Get("continuation-token"); tok != "" {
		name, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			return s3err(http.StatusBadRequest, "InvalidArgument", "The continuation token provided is incorrect")
		}
		after = string(name)
	}
	prefix := q.Get("prefix")
	res := result{Xmlns: xmlns, Owner: ownerOf(r.account), Buckets: []bucket{}, Prefix: prefix}
	if region := q.Get("bucket-region"); region != "" && region != s.opts.Region {
		writeXML(w, http.StatusOK, res)
		return nil
	}
	all, err := s.st.Buckets(r.account)
	if err != nil {
		return err
	}
	for _, b := range all {
		if r.s3key.BucketScope != "*" && b.Name != r.s3key.BucketScope {
			continue // a scoped key sees only its bucket
		}
		if b.Name <= after || !strings.HasPrefix(b.Name, prefix) {
			continue
		}
		if len(res.Buckets) == limit {
			res.ContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(res.Buckets[limit-1].Name))
			break
		}
		res.Buckets = append(res.Buckets, bucket{b.Name, s3Time(b.CreatedAt), s.opts.Region})
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

func (s *Server) createBucket(w http.ResponseWriter, r *request) error {
	if err := storagenames.ValidBucketName(r.bucket); err != nil {
		return s3err(http.StatusBadRequest, "InvalidBucketName", err.Error())
	}
	bo, err := createBucketACL(r.Header, r.account)
	if err != nil {
		return err
	}
	if err := s.knownGrantees(bo.ACL); err != nil {
		return err
	}
	switch v := strings.TrimSpace(r.Header.Get("X-Amz-Bucket-Object-Lock-Enabled")); {
	case strings.EqualFold(v, "true"):
		bo.ObjectLock = true // and so versioning, as in S3
	case v != "" && !strings.EqualFold(v, "false"):
		return s3err(http.StatusBadRequest, "InvalidArgument", "x-amz-bucket-object-lock-enabled is true or false")
	}
	body, err := readBody(r.body, 64<<10)
	if err != nil {
		return err
	}
	if len(body) > 0 {
		var conf struct {
			LocationConstraint string
		}
		if err := xml.Unmarshal(body, &conf); err != nil {
			return errMalformedXML
		}
		if conf.LocationConstraint != "" && conf.LocationConstraint != s.opts.Region {
			return s3err(http.StatusBadRequest, "IllegalLocationConstraintException",
				"The "+conf.LocationConstraint+" location constraint is incompatible with the region of this endpoint, "+s.opts.Region+".")
		}
	}
	if _, err := s.st.Bucket(r.account, r.bucket); err == nil {
		return s3err(http.StatusConflict, "BucketAlreadyOwnedByYou", "Your previous request to create the named bucket succeeded and you already own it.")
	}
	// Made public (x-amz-acl: public-read), with its Object Ownership and
	// ACL, in the same write.
	if _, err := s.st.CreateBucketWith(r.account, r.bucket, "", s.opts.Now(), bo); errors.Is(err, cloudstore.ErrExists) {
		return s3err(http.StatusConflict, "BucketAlreadyExists", "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.")
	} else if err != nil {
		return err
	}
	w.Header().Set("Location", "/"+r.bucket)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) headBucket(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	w.Header().Set("X-Amz-Bucket-Region", s.opts.Region)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteBucket(w http.ResponseWriter, r *request) error {
	if err := s.st.DeleteBucket(r.account, r.bucket); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) bucketLocation(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	type result struct {
		XMLName  xml.Name `xml:"LocationConstraint"`
		Xmlns    string   `xml:"xmlns,attr"`
		Location string   `xml:",chardata"`
	}
	loc := s.opts.Region
	if loc == "us-east-1" {
		loc = "" // as S3 answers for its first region
	}
	writeXML(w, http.StatusOK, result{Xmlns: xmlns, Location: loc})
	return nil
}

type content struct {
	Key          string
	LastModified string
	ETag         string
	Size         int64
	StorageClass string
	Owner        *owner `xml:",omitempty"`
}

type commonPrefix struct {
	Prefix string
}

// listParams are what both ListObjects versions take.
type listParams struct {
	prefix, delimiter, encoding string
	maxKeys                     int
}

func parseListParams(q url.Values) (listParams, error) {
	p := listParams{prefix: q.Get("prefix"), delimiter: q.Get("delimiter"), encoding: q.Get("encoding-type"), maxKeys: 1000}
	if v := q.Get("max-keys"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return p, s3err(http.StatusBadRequest, "InvalidArgument", "max-keys must be a non-negative integer")
		}
		p.maxKeys = min(n, 1000)
	}
	if p.encoding != "" && p.encoding != "url" {
		return p, s3err(http.StatusBadRequest, "InvalidArgument", "Invalid Encoding Method specified in Request")
	}
	return p, nil
}

// name encodes a key for a listing answer, as encoding-type=url asks.
func (p listParams) name(s string) string {
	if p.encoding == "url" {
		return s3URLEncode(s)
	}
	return s
}

// s3URLEncode encodes a name for encoding-type=url: percent-encoding
// every byte but letters, digits, '-', '_', '.', '/' and '*' (clients that
// do not decode NextMarker rely on '/' staying as is). A space is %20, as
// the S3 conformance tests expect, not '+': %20 decodes to a space under
// every decoder (JavaScript's decodeURIComponent as well as Python's
// unquote_plus), and '+' does not.
func s3URLEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9',
			c == '-' || c == '_' || c == '.' || c == '/' || c == '*':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// readBody reads a small XML request body whole, at most limit bytes. It
// reads to the body's end, so the checks that run there (payload hash,
// chunk signatures, Content-MD5) always run: a body cut at the limit
// would skip them.
func readBody(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, bodyError(err)
	}
	if int64(len(data)) > limit {
		return nil, s3err(http.StatusBadRequest, "MaxMessageLengthExceeded", fmt.Sprintf("Your request was too big: at most %d bytes.", limit))
	}
	return data, nil
}

// list runs one listing page.
func (s *Server) list(r *request, p listParams, marker string, owners bool) (cloudstore.Listing, []content, []commonPrefix, error) {
	var l cloudstore.Listing
	if p.maxKeys > 0 {
		var err error
		if l, err = s.st.ListObjects(r.account, r.bucket, p.prefix, p.delimiter, marker, p.maxKeys); err != nil {
			return l, nil, nil, err
		}
	} else if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return l, nil, nil, err
	}
	contents := make([]content, 0, len(l.Objects))
	for _, o := range l.Objects {
		c := content{Key: p.name(o.Key), LastModified: s3Time(o.LastModified), ETag: `"` + o.ETag + `"`, Size: o.Size, StorageClass: "STANDARD"}
		if owners {
			own := ownerOf(r.ownerOf(o))
			c.Owner = &own
		}
		contents = append(contents, c)
	}
	var prefixes []commonPrefix
	for _, cp := range l.Prefixes {
		prefixes = append(prefixes, commonPrefix{p.name(cp)})
	}
	return l, contents, prefixes, nil
}

func (s *Server) listObjectsV1(w http.ResponseWriter, r *request) error {
	q := r.URL.Query()
	p, err := parseListParams(q)
	if err != nil {
		return err
	}
	l, contents, prefixes, err := s.list(r, p, q.Get("marker"), true)
	if err != nil {
		return err
	}
	type result struct {
		XMLName        xml.Name `xml:"ListBucketResult"`
		Xmlns          string   `xml:"xmlns,attr"`
		Name           string
		Prefix         string
		Marker         string
		NextMarker     string `xml:",omitempty"`
		MaxKeys        int
		Delimiter      string `xml:",omitempty"`
		IsTruncated    bool
		Contents       []content
		CommonPrefixes []commonPrefix
		EncodingType   string `xml:",omitempty"`
	}
	res := result{Xmlns: xmlns, Name: r.bucket, Prefix: p.name(p.prefix), Marker: p.name(q.Get("marker")), MaxKeys: p.maxKeys,
		Delimiter: p.name(p.delimiter), IsTruncated: l.NextMarker != "", Contents: contents, CommonPrefixes: prefixes, EncodingType: p.encoding}
	if res.IsTruncated {
		res.NextMarker = p.name(l.NextMarker)
	}
	writeXML(w, http.StatusOK, res)
	return nil
}

func (s *Server) listObjectsV2(w http.ResponseWriter, r *request) error {
	q := r.URL.Query()
	p, err := parseListParams(q)
	if err != nil {
		return err
	}
	token, startAfter := q.Get("continuation-token"), q.Get("start-after")
	marker := startAfter
	if q.Has("continuation-token") {
		m, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil || len(m) == 0 {
			return s3err(http.StatusBadRequest, "InvalidArgument", "The continuation token provided is incorrect")
		}
		marker = string(m)
	}
	l, contents, prefixes, err := s.list(r, p, marker, q.Get("fetch-owner") == "true")
	if err != nil {
		return err
	}
	type result struct {
		XMLName               xml.Name `xml:"ListBucketResult"`
		Xmlns                 string   `xml:"xmlns,attr"`
		Name                  string
		Prefix                string
		KeyCount              int
		MaxKeys               int
		Delimiter             string `xml:",omitempty"`
		IsTruncated           bool
		ContinuationToken     string `xml:",omitempty"`
		NextContinuationToken string `xml:",omitempty"`
		StartAfter            string `xml:",omitempty"`
		Contents              []content
		CommonPrefixes        []commonPrefix
		EncodingType          string `xml:",omitempty"`
	}
	res := result{Xmlns: xmlns, Name: r.bucket, Prefix: p.name(p.prefix), KeyCount: len(contents) + len(prefixes), MaxKeys: p.maxKeys,
		Delimiter: p.name(p.delimiter), IsTruncated: l.NextMarker != "", ContinuationToken: token, StartAfter: p.name(startAfter),
		Contents: contents, CommonPrefixes: prefixes, EncodingType: p.encoding}
	if res.IsTruncated {
		res.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(l.NextMarker))
	}
	writeXML(w, http.StatusOK, res)
	return nil
}
