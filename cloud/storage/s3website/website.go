// Package s3website parses S3 bucket website configurations and decides,
// as S3's website endpoints do, what a request to a bucket's website
// reads or where it is redirected. It is pure: the S3 endpoint (package
// s3api) keeps the configuration, reads the objects and answers.
package s3website

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Limits, as in S3.
const (
	MaxRules = 50
	MaxSize  = 64 << 10 // bytes of a configuration document
	// MaxRedirectLocation bounds an object's x-amz-website-redirect-location.
	MaxRedirectLocation = 2 << 10
)

// Errors callers tell apart: ErrMalformed for a document that is not a
// WebsiteConfiguration (S3 answers MalformedXML), ErrInvalid for one that
// breaks a rule (S3 answers InvalidArgument, with the message after the
// prefix), ErrRedirectLocation for an object's redirect that is not a
// path or an http(s) URL (S3 answers InvalidRedirectLocation).
var (
	ErrMalformed        = errors.New("s3website: malformed website configuration")
	ErrInvalid          = errors.New("s3website: invalid website configuration")
	ErrRedirectLocation = errors.New("s3website: invalid redirect location")
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Host is a RedirectAllRequestsTo: every request goes to HostName, by
// Protocol ("" keeps the request's).
type Host struct {
	HostName string `xml:"HostName"`
	Protocol string `xml:"Protocol,omitempty"`
}

// Condition is when a routing rule applies: to keys that begin with
// KeyPrefixEquals, and, when HTTPErrorCode is set, only once reading the
// key has failed with that status.
type Condition struct {
	KeyPrefixEquals string `xml:"KeyPrefixEquals,omitempty"`
	HTTPErrorCode   int    `xml:"HttpErrorCodeReturnedEquals,omitempty"`
}

// Redirect is where a routing rule sends a request. Fields left empty keep
// the request's: its host, its protocol, its key; the status is 301
// unless HTTPRedirectCode says otherwise.
type Redirect struct {
	HostName             string  `xml:"HostName,omitempty"`
	HTTPRedirectCode     int     `xml:"HttpRedirectCode,omitempty"`
	Protocol             string  `xml:"Protocol,omitempty"`
	ReplaceKeyPrefixWith *string `xml:"ReplaceKeyPrefixWith,omitempty"`
	ReplaceKeyWith       *string `xml:"ReplaceKeyWith,omitempty"`
}

// Rule is one RoutingRule; a nil Condition applies to every request.
type Rule struct {
	Condition *Condition `xml:"Condition,omitempty"`
	Redirect  Redirect   `xml:"Redirect"`
}

// Config is a parsed website configuration: either RedirectAll, or an
// index document suffix with an optional error document and routing
// rules (the first that matches applies). It is immutable and safe for
// concurrent use.
type Config struct {
	RedirectAll *Host
	Index       string // IndexDocument's Suffix
	ErrorKey    string // ErrorDocument's Key; "" for S3's own error page
	Rules       []Rule
}

// The document as sent: pointers tell an element that is absent from
// one that is empty.
type (
	docConfig struct {
		XMLName     xml.Name  `xml:"WebsiteConfiguration"`
		RedirectAll *docHost  `xml:"RedirectAllRequestsTo"`
		Index       *docIndex `xml:"IndexDocument"`
		Error       *docError `xml:"ErrorDocument"`
		Rules       *docRules `xml:"RoutingRules"`
	}
	docHost struct {
		HostName *string `xml:"HostName"`
		Protocol string  `xml:"Protocol"`
	}
	docIndex struct {
		Suffix *string `xml:"Suffix"`
	}
	docError struct {
		Key *string `xml:"Key"`
	}
	docRules struct {
		Rules []docRule `xml:"RoutingRule"`
	}
	docRule struct {
		Condition *struct {
			KeyPrefixEquals *string `xml:"KeyPrefixEquals"`
			Code            *string `xml:"HttpErrorCodeReturnedEquals"`
		} `xml:"Condition"`
		Redirect *struct {
			HostName             *string `xml:"HostName"`
			Code                 *string `xml:"HttpRedirectCode"`
			Protocol             *string `xml:"Protocol"`
			ReplaceKeyPrefixWith *string `xml:"ReplaceKeyPrefixWith"`
			ReplaceKeyWith       *string `xml:"ReplaceKeyWith"`
		} `xml:"Redirect"`
	}
)

// Parse reads a WebsiteConfiguration. It holds either
// RedirectAllRequestsTo alone (a HostName, and a Protocol of http or
// https), or an IndexDocument whose Suffix is not empty and has no
// slash, an optional ErrorDocument with a Key, and 1 to MaxRules
// RoutingRule elements. A rule's Condition, when given, names a
// KeyPrefixEquals or an HttpErrorCodeReturnedEquals (4xx or 5xx), or
// both; its Redirect names at least one of HostName, Protocol,
// HttpRedirectCode (301, 302, 303, 307 or 308), ReplaceKeyPrefixWith and
// ReplaceKeyWith, not both of the last two.
func Parse(data []byte) (*Config, error) {
	if len(data) > MaxSize {
		return nil, invalid("The website configuration must be at most %d bytes", MaxSize)
	}
	var doc docConfig
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if doc.RedirectAll != nil {
		return redirectAll(doc)
	}
	c := &Config{}
	if doc.Index == nil {
		return nil, invalid("A value for IndexDocument Suffix must be provided if RedirectAllRequestsTo is empty")
	}
	if doc.Index.Suffix == nil || *doc.Index.Suffix == "" || strings.Contains(*doc.Index.Suffix, "/") {
		return nil, invalid("The IndexDocument Suffix is not well formed: it must not be empty or contain a slash")
	}
	c.Index = *doc.Index.Suffix
	if doc.Error != nil {
		if doc.Error.Key == nil || *doc.Error.Key == "" {
			return nil, invalid("The ErrorDocument Key is not well formed: it must not be empty")
		}
		c.ErrorKey = *doc.Error.Key
	}
	if doc.Rules == nil {
		return c, nil
	}
	if len(doc.Rules.Rules) == 0 {
		return nil, fmt.Errorf("%w: RoutingRules holds no RoutingRule", ErrMalformed)
	}
	if len(doc.Rules.Rules) > MaxRules {
		return nil, invalid("The number of routing rules must not exceed the allowed limit of %d rules", MaxRules)
	}
	for _, r := range doc.Rules.Rules {
		rule, err := r.rule()
		if err != nil {
			return nil, err
		}
		c.Rules = append(c.Rules, rule)
	}
	return c, nil
}

func redirectAll(doc docConfig) (*Config, error) {
	if doc.Index != nil || doc.Error != nil || doc.Rules != nil {
		return nil, invalid("RedirectAllRequestsTo cannot be provided in conjunction with other Routing/Redirect configurations.")
	}
	if doc.RedirectAll.HostName == nil {
		return nil, invalid("RedirectAllRequestsTo must name a HostName")
	}
	h := &Host{HostName: strings.TrimSpace(*doc.RedirectAll.HostName), Protocol: doc.RedirectAll.Protocol}
	if err := checkHost(h.HostName); err != nil {
		return nil, err
	}
	if h.Protocol != "" {
		if err := checkProtocol(h.Protocol); err != nil {
			return nil, err
		}
	}
	return &Config{RedirectAll: h}, nil
}

func (r docRule) rule() (Rule, error) {
	var rule Rule
	if c := r.Condition; c != nil {
		if c.KeyPrefixEquals == nil && c.Code == nil {
			return rule, invalid("Condition cannot be empty. To redirect all requests without a condition, the condition element shouldn't be present.")
		}
		rule.Condition = &Condition{}
		if c.KeyPrefixEquals != nil {
			rule.Condition.KeyPrefixEquals = *c.KeyPrefixEquals
		}
		if c.Code != nil {
			n, err := strconv.Atoi(strings.TrimSpace(*c.Code))
			if err != nil || n < 400 || n > 599 {
				return rule, invalid("The provided HTTP error code (%s) is not valid. Valid codes are 4XX or 5XX.", *c.Code)
			}
			rule.Condition.HTTPErrorCode = n
		}
		if *rule.Condition == (Condition{}) {
			// An empty KeyPrefixEquals alone: every key, as no Condition.
			rule.Condition = nil
		}
	}
	rd := r.Redirect
	if rd == nil {
		return rule, invalid("A RoutingRule must have a Redirect")
	}
	if rd.HostName == nil && rd.Code == nil && rd.Protocol == nil && rd.ReplaceKeyPrefixWith == nil && rd.ReplaceKeyWith == nil {
		return rule, invalid("Redirect cannot be empty: name at least one of HostName, Protocol, HttpRedirectCode, ReplaceKeyPrefixWith and ReplaceKeyWith")
	}
	if rd.ReplaceKeyPrefixWith != nil && rd.ReplaceKeyWith != nil {
		return rule, invalid("You can only define ReplaceKeyPrefix or ReplaceKey but not both.")
	}
	if rd.HostName != nil {
		rule.Redirect.HostName = strings.TrimSpace(*rd.HostName)
		if err := checkHost(rule.Redirect.HostName); err != nil {
			return rule, err
		}
	}
	if rd.Protocol != nil {
		if err := checkProtocol(*rd.Protocol); err != nil {
			return rule, err
		}
		rule.Redirect.Protocol = *rd.Protocol
	}
	if rd.Code != nil {
		n, err := strconv.Atoi(strings.TrimSpace(*rd.Code))
		if err != nil || !redirectCode(n) {
			return rule, invalid("The provided HTTP redirect code (%s) is not valid. Valid codes are 301, 302, 303, 307 and 308.", *rd.Code)
		}
		rule.Redirect.HTTPRedirectCode = n
	}
	rule.Redirect.ReplaceKeyPrefixWith, rule.Redirect.ReplaceKeyWith = rd.ReplaceKeyPrefixWith, rd.ReplaceKeyWith
	return rule, nil
}

func redirectCode(n int) bool {
	switch n {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// checkHost takes a host name, with a port or not, and nothing else: no
// scheme, path, user or space, which would make the Location header
// another URL than the one configured.
func checkHost(h string) error {
	if h == "" || len(h) > 255 || strings.ContainsAny(h, "/\\@?# \t\r\n") {
		return invalid("The HostName %q is not valid: give a host name, with a port or not, and no scheme or path", h)
	}
	return nil
}

func checkProtocol(p string) error {
	if p != "http" && p != "https" {
		return invalid("Invalid protocol, protocol can be http or https. If not defined the protocol will be selected automatically.")
	}
	return nil
}

// XML is the configuration as GetBucketWebsite answers it.
func (c *Config) XML(xmlns string) []byte {
	type index struct {
		Suffix string `xml:"Suffix"`
	}
	type errorDoc struct {
		Key string `xml:"Key"`
	}
	type rules struct {
		Rules []Rule `xml:"RoutingRule"`
	}
	doc := struct {
		XMLName     xml.Name  `xml:"WebsiteConfiguration"`
		Xmlns       string    `xml:"xmlns,attr"`
		RedirectAll *Host     `xml:"RedirectAllRequestsTo,omitempty"`
		Index       *index    `xml:"IndexDocument,omitempty"`
		Error       *errorDoc `xml:"ErrorDocument,omitempty"`
		Rules       *rules    `xml:"RoutingRules,omitempty"`
	}{Xmlns: xmlns, RedirectAll: c.RedirectAll}
	if c.Index != "" {
		doc.Index = &index{c.Index}
	}
	if c.ErrorKey != "" {
		doc.Error = &errorDoc{c.ErrorKey}
	}
	if len(c.Rules) > 0 {
		doc.Rules = &rules{c.Rules}
	}
	data, _ := xml.Marshal(doc) // strings and ints only: cannot fail
	return append([]byte(xml.Header), data...)
}

// PathKey is the key a request's path names: the path (decoded, as
// net/http's URL.Path is) without its leading slash. Routing rules match
// it; Key adds the index document.
func PathKey(path string) string { return strings.TrimPrefix(path, "/") }

// Key is the object a website request for pathKey reads: the index
// document of the folder when it is the root or ends in a slash.
func (c *Config) Key(pathKey string) string {
	if pathKey == "" || strings.HasSuffix(pathKey, "/") {
		return pathKey + c.Index
	}
	return pathKey
}

// Before is the first routing rule that redirects a request for pathKey
// before any object is read: one whose Condition names no error code, and
// whose prefix, if any, begins pathKey.
func (c *Config) Before(pathKey string) *Rule {
	for i := range c.Rules {
		r := &c.Rules[i]
		if r.Condition == nil {
			return r
		}
		if r.Condition.HTTPErrorCode == 0 && strings.HasPrefix(pathKey, r.Condition.KeyPrefixEquals) {
			return r
		}
	}
	return nil
}

// After is the first routing rule that redirects a request for pathKey
// whose read failed with status: one whose Condition names that code, and
// whose prefix, if any, begins pathKey.
func (c *Config) After(pathKey string, status int) *Rule {
	for i := range c.Rules {
		r := &c.Rules[i]
		if r.Condition != nil && r.Condition.HTTPErrorCode == status && strings.HasPrefix(pathKey, r.Condition.KeyPrefixEquals) {
			return r
		}
	}
	return nil
}

// Location is where r sends a request for pathKey that came by scheme
// ("http" or "https") to host, and the status of the redirect.
func (r *Rule) Location(pathKey, scheme, host string) (string, int) {
	rd := r.Redirect
	if rd.Protocol != "" {
		scheme = rd.Protocol
	}
	if rd.HostName != "" {
		host = rd.HostName
	}
	key := pathKey
	switch {
	case rd.ReplaceKeyWith != nil:
		key = *rd.ReplaceKeyWith
	case rd.ReplaceKeyPrefixWith != nil:
		prefix := ""
		if r.Condition != nil {
			prefix = r.Condition.KeyPrefixEquals
		}
		key = *rd.ReplaceKeyPrefixWith + strings.TrimPrefix(key, prefix)
	}
	code := rd.HTTPRedirectCode
	if code == 0 {
		code = 301
	}
	u := url.URL{Scheme: scheme, Host: host, Path: "/" + key}
	return u.String(), code
}

// Location is where a RedirectAllRequestsTo sends a request for
// requestURI (its path and query, as sent) that came by scheme.
func (h *Host) Location(requestURI, scheme string) string {
	if h.Protocol != "" {
		scheme = h.Protocol
	}
	if !strings.HasPrefix(requestURI, "/") {
		requestURI = "/" + requestURI
	}
	return scheme + "://" + h.HostName + requestURI
}

// CheckRedirectLocation checks an object's x-amz-website-redirect-location:
// a path on the website (beginning with a slash) or an http or https URL,
// of at most MaxRedirectLocation bytes, without control characters.
func CheckRedirectLocation(v string) error {
	if len(v) > MaxRedirectLocation {
		return fmt.Errorf("%w: the redirect location is longer than %d bytes", ErrRedirectLocation, MaxRedirectLocation)
	}
	if !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
		return fmt.Errorf("%w: the website redirect location must have a prefix of 'http://' or 'https://' or '/'", ErrRedirectLocation)
	}
	for _, c := range []byte(v) {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("%w: the website redirect location holds a control character", ErrRedirectLocation)
		}
	}
	return nil
}
