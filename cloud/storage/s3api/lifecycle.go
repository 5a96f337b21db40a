package s3api

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// Bucket lifecycle configuration, over the same rules the REST API keeps
// (cloudstore.Rule): PUT, GET and DELETE of ?lifecycle on a bucket
// (PutBucketLifecycleConfiguration, GetBucketLifecycleConfiguration,
// DeleteBucketLifecycle); x-amz-expiration on PutObject, CopyObject,
// CompleteMultipartUpload, GetObject and HeadObject; x-amz-abort-date and
// x-amz-abort-rule-id on CreateMultipartUpload. Transitions move objects
// between storage classes, and this endpoint has one: a document asking
// for one is refused with 501 NotImplemented.

// maxLifecycleBody bounds a PutBucketLifecycleConfiguration body: 1000
// rules of long ids, prefixes and tags fit.
const maxLifecycleBody = 8 << 20

var (
	errNoSuchLifecycle = s3err(http.StatusNotFound, "NoSuchLifecycleConfiguration", "The lifecycle configuration does not exist")
	errLifecycleMD5    = s3err(http.StatusBadRequest, "InvalidRequest", "Missing required header for this request: Content-MD5")
	errTransition      = s3err(http.StatusNotImplemented, "NotImplemented",
		"Lifecycle transitions (Transition, NoncurrentVersionTransition) are not supported by this endpoint: it keeps every object "+
			"in one storage class, STANDARD. Expiration, NoncurrentVersionExpiration and AbortIncompleteMultipartUpload are.")
)

func invalidArgument(msg string) *Error { return s3err(http.StatusBadRequest, "InvalidArgument", msg) }
func invalidRequest(msg string) *Error  { return s3err(http.StatusBadRequest, "InvalidRequest", msg) }

// lifecycleRoute returns the operation of a request for ?lifecycle, if r
// is one.
func lifecycleRoute(r *request, q url.Values) (operation, bool) {
	if !q.Has("lifecycle") {
		return operation{}, false
	}
	if r.key != "" {
		return notImplemented("Unsupported:lifecycle"), true
	}
	switch r.Method {
	case http.MethodGet:
		return operation{name: "GetBucketLifecycleConfiguration", read: true, run: (*Server).getBucketLifecycle}, true
	case http.MethodPut:
		return operation{name: "PutBucketLifecycleConfiguration", write: true, run: (*Server).putBucketLifecycle}, true
	case http.MethodDelete:
		return operation{name: "DeleteBucketLifecycle", write: true, run: (*Server).deleteBucketLifecycle}, true
	}
	return methodNotAllowed("BucketLifecycle"), true
}

// The lifecycle document, as S3's XML has it. Pointers tell an element
// left out from one given empty or zero.
type lifecycleXML struct {
	XMLName xml.Name  `xml:"LifecycleConfiguration"`
	Xmlns   string    `xml:"xmlns,attr,omitempty"`
	Rules   []ruleXML `xml:"Rule"`
}

type ruleXML struct {
	ID                             *string        `xml:"ID"`
	Prefix                         *string        `xml:"Prefix"` // the rule's own, before Filter existed
	Filter                         *filterXML     `xml:"Filter"`
	Status                         *string        `xml:"Status"`
	Expiration                     *expirationXML `xml:"Expiration"`
	NoncurrentVersionExpiration    *noncurrentXML `xml:"NoncurrentVersionExpiration"`
	AbortIncompleteMultipartUpload *abortXML      `xml:"AbortIncompleteMultipartUpload"`
	Transitions                    []struct{}     `xml:"Transition"`
	NoncurrentVersionTransitions   []struct{}     `xml:"NoncurrentVersionTransition"`
}

type filterXML struct {
	Prefix                *string    `xml:"Prefix"`
	Tag                   *tagPtrXML `xml:"Tag"`
	ObjectSizeGreaterThan *int64     `xml:"ObjectSizeGreaterThan"`
	ObjectSizeLessThan    *int64     `xml:"ObjectSizeLessThan"`
	And                   *andXML    `xml:"And"`
}

type andXML struct {
	Prefix                *string     `xml:"Prefix"`
	Tags                  []tagPtrXML `xml:"Tag"`
	ObjectSizeGreaterThan *int64      `xml:"ObjectSizeGreaterThan"`
	ObjectSizeLessThan    *int64      `xml:"ObjectSizeLessThan"`
}

type tagPtrXML struct {
	Key   *string `xml:"Key"`
	Value *string `xml:"Value"`
}

type expirationXML struct {
	Date                      *string `xml:"Date"`
	Days                      *int    `xml:"Days"`
	ExpiredObjectDeleteMarker *bool   `xml:"ExpiredObjectDeleteMarker"`
}

type noncurrentXML struct {
	NoncurrentDays          *int `xml:"NoncurrentDays"`
	NewerNoncurrentVersions *int `xml:"NewerNoncurrentVersions,omitempty"`
}

type abortXML struct {
	DaysAfterInitiation *int `xml:"DaysAfterInitiation"`
}

// lifecycleDate is how S3 writes an Expiration Date.
const lifecycleDate = "2006-01-02T15:04:05.000Z"

// parseLifecycle reads a LifecycleConfiguration document into the rules it
// sets, checked as S3 checks them: MalformedXML for what breaks S3's schema
// (a rule without Status, with both or neither of Prefix and Filter, a
// Filter or Expiration naming more than one thing), InvalidArgument and
// InvalidRequest with S3's messages for the rest, NotImplemented for a
// transition.
func parseLifecycle(data []byte) ([]cloudstore.Rule, error) {
	var doc lifecycleXML
	if err := xml.Unmarshal(data, &doc); err != nil || len(doc.Rules) == 0 {
		return nil, errMalformedXML
	}
	if len(doc.Rules) > cloudstore.MaxRules {
		return nil, invalidRequest(fmt.Sprintf("The number of lifecycle rules must not exceed the allowed limit of %d rules", cloudstore.MaxRules))
	}
	ids := map[string]bool{}
	rules := make([]cloudstore.Rule, 0, len(doc.Rules))
	for _, x := range doc.Rules {
		r, err := parseRule(x)
		if err != nil {
			return nil, err
		}
		if r.ID != "" {
			if ids[r.ID] {
				return nil, invalidArgument("Rule ID must be unique. Found same ID for more than one rule")
			}
			ids[r.ID] = true
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func parseRule(x ruleXML) (cloudstore.Rule, error) {
	r := cloudstore.Rule{S3: true}
	if x.Status == nil || (*x.Status != "Enabled" && *x.Status != "Disabled") {
		return r, errMalformedXML
	}
	r.Disabled = *x.Status == "Disabled"
	if x.ID != nil {
		if len(*x.ID) > cloudstore.MaxRuleID {
			return r, invalidArgument(fmt.Sprintf("ID length should not exceed allowed limit of %d", cloudstore.MaxRuleID))
		}
		r.ID = *x.ID
	}
	if (x.Prefix == nil) == (x.Filter == nil) {
		return r, errMalformedXML
	}
	if x.Prefix != nil {
		r.Filter, r.Prefix = cloudstore.FilterLegacy, *x.Prefix
	} else if err := parseFilter(*x.Filter, &r); err != nil {
		return r, err
	}
	if len(r.Prefix) > cloudstore.MaxKeyLen {
		return r, invalidArgument(fmt.Sprintf("The maximum size of a prefix is %d.", cloudstore.MaxKeyLen))
	}
	if len(x.Transitions) > 0 || len(x.NoncurrentVersionTransitions) > 0 {
		return r, errTransition
	}
	if x.Expiration == nil && x.NoncurrentVersionExpiration == nil && x.AbortIncompleteMultipartUpload == nil {
		return r, invalidRequest("At least one action needs to be specified in a rule")
	}
	if e := x.Expiration; e != nil {
		if err := parseExpiration(*e, &r); err != nil {
			return r, err
		}
	}
	if n := x.NoncurrentVersionExpiration; n != nil {
		if n.NoncurrentDays == nil || *n.NoncurrentDays <= 0 {
			return r, invalidArgument("'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer")
		}
		if err := checkDays("NoncurrentDays", *n.NoncurrentDays); err != nil {
			return r, err
		}
		r.NoncurrentDays = *n.NoncurrentDays
		if v := n.NewerNoncurrentVersions; v != nil {
			if *v < 1 || *v > cloudstore.MaxNewerNoncurrent {
				return r, invalidArgument(fmt.Sprintf("'NewerNoncurrentVersions' for NoncurrentVersionExpiration action must be from 1 to %d", cloudstore.MaxNewerNoncurrent))
			}
			r.NewerNoncurrentVersions = *v
		}
	}
	if a := x.AbortIncompleteMultipartUpload; a != nil {
		if a.DaysAfterInitiation == nil || *a.DaysAfterInitiation <= 0 {
			return r, invalidArgument("'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer")
		}
		if err := checkDays("DaysAfterInitiation", *a.DaysAfterInitiation); err != nil {
			return r, err
		}
		if len(r.Tags) > 0 {
			return r, invalidRequest("AbortIncompleteMultipartUpload cannot be specified with Tags.")
		}
		if r.SizeGreaterThan != nil || r.SizeLessThan != nil {
			return r, invalidRequest("AbortIncompleteMultipartUpload cannot be specified with an object size filter.")
		}
		r.AbortDays = *a.DaysAfterInitiation
	}
	return r, nil
}

// checkDays refuses a day count beyond what the store keeps (S3 sets no
// such bound).
func checkDays(name string, days int) error {
	if days > cloudstore.MaxExpireDays {
		return invalidArgument(fmt.Sprintf("'%s' must be at most %d on this endpoint", name, cloudstore.MaxExpireDays))
	}
	return nil
}

func parseFilter(f filterXML, r *cloudstore.Rule) error {
	n := 0
	for _, set := range []bool{f.Prefix != nil, f.Tag != nil, f.ObjectSizeGreaterThan != nil, f.ObjectSizeLessThan != nil, f.And != nil} {
		if set {
			n++
		}
	}
	if n > 1 {
		return errMalformedXML
	}
	var tags []tagPtrXML
	gt, lt := f.ObjectSizeGreaterThan, f.ObjectSizeLessThan
	switch {
	case n == 0:
		r.Filter = cloudstore.FilterEmpty
	case f.Prefix != nil:
		r.Filter, r.Prefix = cloudstore.FilterPrefix, *f.Prefix
	case f.Tag != nil:
		r.Filter, tags = cloudstore.FilterTag, []tagPtrXML{*f.Tag}
	case gt != nil:
		r.Filter = cloudstore.FilterSizeGT
	case lt != nil:
		r.Filter = cloudstore.FilterSizeLT
	default:
		a := f.And
		if a.Prefix == nil && len(a.Tags) == 0 && a.ObjectSizeGreaterThan == nil && a.ObjectSizeLessThan == nil {
			return errMalformedXML
		}
		r.Filter, tags, gt, lt = cloudstore.FilterAnd, a.Tags, a.ObjectSizeGreaterThan, a.ObjectSizeLessThan
		if a.Prefix != nil {
			r.Prefix = *a.Prefix
		}
	}
	for _, t := range tags {
		if t.Key == nil || t.Value == nil {
			return errMalformedXML
		}
		if err := checkTag(*t.Key, *t.Value); err != nil {
			return err
		}
		if _, dup := r.Tags[*t.Key]; dup {
			return invalidRequest("Duplicate Tag Keys are not allowed.")
		}
		if r.Tags == nil {
			r.Tags = map[string]string{}
		}
		r.Tags[*t.Key] = *t.Value
	}
	if len(r.Tags) > cloudstore.MaxObjectTags {
		return errTooManyTags(cloudstore.MaxObjectTags)
	}
	if gt != nil && *gt < 0 {
		return invalidArgument("'ObjectSizeGreaterThan' must be a non-negative integer")
	}
	if lt != nil && *lt <= 0 {
		return invalidArgument("'ObjectSizeLessThan' must be a positive integer")
	}
	if gt != nil && lt != nil && *gt >= *lt {
		return invalidArgument("'ObjectSizeGreaterThan' must be less than 'ObjectSizeLessThan'")
	}
	r.SizeGreaterThan, r.SizeLessThan = gt, lt
	return nil
}

func parseExpiration(e expirationXML, r *cloudstore.Rule) error {
	n := 0
	for _, set := range []bool{e.Days != nil, e.Date != nil, e.ExpiredObjectDeleteMarker != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errMalformedXML
	}
	switch {
	case e.Days != nil:
		if *e.Days <= 0 {
			return invalidArgument("'Days' for Expiration action must be a positive integer")
		}
		if err := checkDays("Days", *e.Days); err != nil {
			return err
		}
		r.ExpireDays = *e.Days
	case e.Date != nil:
		d, err := parseLifecycleDate(strings.TrimSpace(*e.Date))
		if err != nil {
			return err
		}
		r.ExpireDate = d
	default:
		if *e.ExpiredObjectDeleteMarker && len(r.Tags) > 0 {
			return invalidRequest("ExpiredObjectDeleteMarker cannot be specified with tags.")
		}
		r.ExpiredObjectDeleteMarker = e.ExpiredObjectDeleteMarker
	}
	return nil
}

// parseLifecycleDate reads an ISO 8601 date, which must be a midnight UTC.
func parseLifecycleDate(s string) (time.Time, error) {
	errDate := invalidArgument("'Date' must be at midnight GMT")
	var t time.Time
	var err error
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err = time.Parse(layout, s); err == nil {
			break
		}
	}
	if err != nil {
		return time.Time{}, errMalformedXML
	}
	t = t.UTC()
	if !t.Equal(t.Truncate(24*time.Hour)) || t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}, errDate
	}
	return t, nil
}

// ruleDoc writes r as the S3 document has it.
func ruleDoc(r cloudstore.Rule) ruleXML {
	status := "Enabled"
	if r.Disabled {
		status = "Disabled"
	}
	x := ruleXML{ID: &r.ID, Status: &status}
	prefix := r.Prefix
	switch r.Filter {
	case cloudstore.FilterLegacy:
		x.Prefix = &prefix
	case cloudstore.FilterEmpty:
		x.Filter = &filterXML{}
	case cloudstore.FilterTag:
		for k, v := range r.Tags {
			x.Filter = &filterXML{Tag: &tagPtrXML{&k, &v}}
		}
	case cloudstore.FilterSizeGT:
		x.Filter = &filterXML{ObjectSizeGreaterThan: r.SizeGreaterThan}
	case cloudstore.FilterSizeLT:
		x.Filter = &filterXML{ObjectSizeLessThan: r.SizeLessThan}
	case cloudstore.FilterAnd:
		a := &andXML{ObjectSizeGreaterThan: r.SizeGreaterThan, ObjectSizeLessThan: r.SizeLessThan}
		if prefix != "" || (len(r.Tags) == 0 && a.ObjectSizeGreaterThan == nil && a.ObjectSizeLessThan == nil) {
			a.Prefix = &prefix // an And of an empty Prefix alone keeps it
		}
		keys := make([]string, 0, len(r.Tags))
		for k := range r.Tags {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v := r.Tags[k]
			a.Tags = append(a.Tags, tagPtrXML{&k, &v})
		}
		x.Filter = &filterXML{And: a}
	default: // a REST rule, or a Filter of a Prefix
		x.Filter = &filterXML{Prefix: &prefix}
	}
	switch {
	case r.ExpireDays > 0:
		x.Expiration = &expirationXML{Days: &r.ExpireDays}
	case !r.ExpireDate.IsZero():
		d := r.ExpireDate.UTC().Format(lifecycleDate)
		x.Expiration = &expirationXML{Date: &d}
	case r.ExpiredObjectDeleteMarker != nil:
		x.Expiration = &expirationXML{ExpiredObjectDeleteMarker: r.ExpiredObjectDeleteMarker}
	}
	if r.NoncurrentDays > 0 {
		x.NoncurrentVersionExpiration = &noncurrentXML{NoncurrentDays: &r.NoncurrentDays}
		if r.NewerNoncurrentVersions > 0 {
			x.NoncurrentVersionExpiration.NewerNoncurrentVersions = &r.NewerNoncurrentVersions
		}
	}
	if r.AbortDays > 0 {
		x.AbortIncompleteMultipartUpload = &abortXML{DaysAfterInitiation: &r.AbortDays}
	}
	return x
}

func (s *Server) getBucketLifecycle(w http.ResponseWriter, r *request) error {
	rules, err := s.st.Rules(r.account, r.bucket)
	if err != nil {
		return err
	}
	if len(rules) == 0 {
		return errNoSuchLifecycle
	}
	doc := lifecycleXML{Xmlns: xmlns}
	for _, rl := range rules {
		doc.Rules = append(doc.Rules, ruleDoc(rl))
	}
	writeXML(w, http.StatusOK, doc)
	return nil
}

// hasBodyChecksum reports whether r carries what S3 requires of a
// PutBucketLifecycleConfiguration: Content-MD5 or an x-amz-checksum-* (in
// a header or the trailer), which the body is checked against as it is
// read.
func hasBodyChecksum(r *request) bool {
	return r.Header.Get("Content-Md5") != "" || (r.sums != nil && len(r.sums.Algorithms()) > 0)
}

func (s *Server) putBucketLifecycle(w http.ResponseWriter, r *request) error {
	if _, err := s.st.Bucket(r.account, r.bucket); err != nil {
		return err
	}
	if !hasBodyChecksum(r) {
		return errLifecycleMD5
	}
	data, err := readBody(r.body, maxLifecycleBody)
	if err != nil {
		return err
	}
	rules, err := parseLifecycle(data)
	if err != nil {
		return err
	}
	if _, err := s.st.SetRules(r.account, r.bucket, rules, s.opts.Now()); err != nil {
		if errors.Is(err, cloudstore.ErrRules) {
			return invalidArgument(strings.TrimPrefix(err.Error(), "cloudstore: "))
		}
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteBucketLifecycle(w http.ResponseWriter, r *request) error {
	if _, err := s.st.SetRules(r.account, r.bucket, nil, s.opts.Now()); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ruleTime writes t as an HTTP date, rounded up to the second (a REST
// rule's expiry is exact, and must not be told earlier than it is).
func ruleTime(t time.Time) string {
	if u := t.Truncate(time.Second); !u.Equal(t) {
		t = u.Add(time.Second)
	}
	return t.UTC().Format(http.TimeFormat)
}

// setExpiration sends x-amz-expiration for obj, the current version of its
// key, when a lifecycle rule will expire it.
func (s *Server) setExpiration(h http.Header, r *request, obj cloudstore.Object) {
	rules, err := s.st.Rules(r.account, r.bucket)
	if err != nil || len(rules) == 0 {
		return
	}
	if at, rl, ok := cloudstore.Expiry(rules, obj); ok {
		h.Set("X-Amz-Expiration", fmt.Sprintf(`expiry-date="%s", rule-id="%s"`, ruleTime(at), rl.ID))
	}
}

// setAbortDate sends x-amz-abort-date and x-amz-abort-rule-id for an
// upload a lifecycle rule will abort.
func (s *Server) setAbortDate(h http.Header, r *request, u cloudstore.Upload) {
	rules, err := s.st.Rules(r.account, r.bucket)
	if err != nil || len(rules) == 0 {
		return
	}
	if at, rl, ok := cloudstore.UploadAbort(rules, u.Key, u.Initiated); ok {
		h.Set("X-Amz-Abort-Date", ruleTime(at))
		h.Set("X-Amz-Abort-Rule-Id", rl.ID)
	}
}
