// Package s3cors parses S3 bucket CORS configurations and matches
// requests against them, as S3 does. It is pure: the S3 endpoint (package
// s3api) keeps the configuration, parses it once, and turns a match into
// response headers.
package s3cors

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Limits, as in S3.
const (
	MaxRules = 100
	MaxSize  = 64 << 10 // bytes of a configuration document
	maxID    = 255
)

// Methods are the methods a rule may allow.
var Methods = []string{"GET", "PUT", "POST", "DELETE", "HEAD"}

// Errors callers tell apart: ErrMalformed for a document that is not a
// CORSConfiguration (S3 answers MalformedXML), ErrInvalid for one that
// breaks a rule (S3 answers InvalidRequest, with the message after the
// prefix).
var (
	ErrMalformed = errors.New("s3cors: malformed CORS configuration")
	ErrInvalid   = errors.New("s3cors: invalid CORS configuration")
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Rule is one CORSRule.
type Rule struct {
	ID             string   `xml:"ID,omitempty"`
	AllowedHeaders []string `xml:"AllowedHeader"`
	AllowedMethods []string `xml:"AllowedMethod"`
	AllowedOrigins []string `xml:"AllowedOrigin"`
	ExposeHeaders  []string `xml:"ExposeHeader"`
	MaxAgeSeconds  *int     `xml:"MaxAgeSeconds,omitempty"`
}

// Config is a parsed CORS configuration: its rules in order, the first
// that matches a request being the one applied. It is immutable and safe
// for concurrent use.
type Config struct {
	Rules []Rule
}

// Parse reads a CORSConfiguration of 1 to MaxRules CORSRule elements,
// each with at least one AllowedOrigin (at most one * wildcard in each)
// and one AllowedMethod (of Methods, in capitals), AllowedHeader values
// with at most one * each, ExposeHeader values, an optional
// MaxAgeSeconds (a non-negative integer) and an optional ID of at most
// 255 characters.
func Parse(data []byte) (*Config, error) {
	if len(data) > MaxSize {
		return nil, invalid("The CORS configuration must be at most %d bytes", MaxSize)
	}
	var doc struct {
		XMLName xml.Name `xml:"CORSConfiguration"`
		Rules   []struct {
			ID             string   `xml:"ID"`
			AllowedHeaders []string `xml:"AllowedHeader"`
			AllowedMethods []string `xml:"AllowedMethod"`
			AllowedOrigins []string `xml:"AllowedOrigin"`
			ExposeHeaders  []string `xml:"ExposeHeader"`
			MaxAge         *string  `xml:"MaxAgeSeconds"`
		} `xml:"CORSRule"`
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if len(doc.Rules) == 0 {
		return nil, fmt.Errorf("%w: no CORSRule", ErrMalformed)
	}
	if len(doc.Rules) > MaxRules {
		return nil, invalid("The number of CORS rules should not exceed allowed limit of %d rules.", MaxRules)
	}
	c := &Config{}
	for _, r := range doc.Rules {
		rule := Rule{ID: r.ID, AllowedHeaders: r.AllowedHeaders, AllowedMethods: r.AllowedMethods, AllowedOrigins: r.AllowedOrigins, ExposeHeaders: r.ExposeHeaders}
		if r.MaxAge != nil {
			n, err := strconv.Atoi(strings.TrimSpace(*r.MaxAge))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: MaxAgeSeconds %q is not a non-negative integer", ErrMalformed, *r.MaxAge)
			}
			rule.MaxAgeSeconds = &n
		}
		if err := rule.check(); err != nil {
			return nil, err
		}
		c.Rules = append(c.Rules, rule)
	}
	return c, nil
}

func (r *Rule) check() error {
	if len(r.AllowedOrigins) == 0 || len(r.AllowedMethods) == 0 {
		return fmt.Errorf("%w: a CORSRule needs an AllowedOrigin and an AllowedMethod", ErrMalformed)
	}
	if len(r.ID) > maxID {
		return invalid("The ID of a CORS rule must be at most %d characters", maxID)
	}
	for _, m := range r.AllowedMethods {
		if !slices.Contains(Methods, m) {
			return invalid("Found unsupported HTTP method in CORS config. Unsupported method is %s", m)
		}
	}
	for _, o := range r.AllowedOrigins {
		if strings.Count(o, "*") > 1 {
			return invalid("AllowedOrigin \"%s\" can not have more than one wildcard.", o)
		}
		if o == "" {
			return invalid("An AllowedOrigin must not be empty")
		}
	}
	for _, h := range r.AllowedHeaders {
		if strings.Count(h, "*") > 1 {
			return invalid("AllowedHeader \"%s\" can not have more than one wildcard.", h)
		}
	}
	for _, h := range r.ExposeHeaders {
		if strings.ContainsAny(h, "* \t\r\n,") || h == "" {
			return invalid("ExposeHeader \"%s\" contains wildcard. We currently do not support wildcard for ExposeHeader.", h)
		}
	}
	return nil
}

// XML is the configuration as GetBucketCors answers it.
func (c *Config) XML(xmlns string) []byte {
	doc := struct {
		XMLName xml.Name `xml:"CORSConfiguration"`
		Xmlns   string   `xml:"xmlns,attr"`
		Rules   []Rule   `xml:"CORSRule"`
	}{Xmlns: xmlns, Rules: c.Rules}
	data, _ := xml.Marshal(doc) // strings and ints only: cannot fail
	return append([]byte(xml.Header), data...)
}

// wildcard reports whether s matches pattern, which holds at most one *
// standing for any run of characters.
func wildcard(pattern, s string) bool {
	before, after, ok := strings.Cut(pattern, "*")
	if !ok {
		return pattern == s
	}
	return len(s) >= len(before)+len(after) && strings.HasPrefix(s, before) && strings.HasSuffix(s, after)
}

// Match returns the first rule that allows origin to make a request of
// method sending headers (for a preflight, its
// Access-Control-Request-Method and -Headers; for an actual request, its
// method and no headers). Origins and methods are compared exactly,
// header names case-insensitively.
func (c *Config) Match(origin, method string, headers []string) (*Rule, bool) {
	for i := range c.Rules {
		r := &c.Rules[i]
		if !slices.Contains(r.AllowedMethods, method) {
			continue
		}
		if !slices.ContainsFunc(r.AllowedOrigins, func(o string) bool { return wildcard(o, origin) }) {
			continue
		}
		allHeaders := true
		for _, h := range headers {
			h = strings.ToLower(h)
			if !slices.ContainsFunc(r.AllowedHeaders, func(p string) bool { return wildcard(strings.ToLower(p), h) }) {
				allHeaders = false
				break
			}
		}
		if allHeaders {
			return r, true
		}
	}
	return nil, false
}

// Headers are the response headers a matched request gets, by name: the
// origin allowed ("*" when the rule allows any origin, and then no
// credentials), the rule's methods, for a preflight the headers asked
// for, the headers exposed, and the age a preflight may be cached.
func (r *Rule) Headers(origin string, preflight bool, requested []string) map[string]string {
	h := map[string]string{
		"Access-Control-Allow-Methods": strings.Join(r.AllowedMethods, ", "),
	}
	if slices.Contains(r.AllowedOrigins, "*") {
		h["Access-Control-Allow-Origin"] = "*"
	} else {
		h["Access-Control-Allow-Origin"] = origin
		h["Access-Control-Allow-Credentials"] = "true"
	}
	if preflight && len(requested) > 0 {
		lower := make([]string, len(requested))
		for i, v := range requested {
			lower[i] = strings.ToLower(v)
		}
		h["Access-Control-Allow-Headers"] = strings.Join(lower, ", ")
	}
	if len(r.ExposeHeaders) > 0 {
		h["Access-Control-Expose-Headers"] = strings.Join(r.ExposeHeaders, ", ")
	}
	if r.MaxAgeSeconds != nil {
		h["Access-Control-Max-Age"] = strconv.Itoa(*r.MaxAgeSeconds)
	}
	return h
}

// SplitHeaders splits an Access-Control-Request-Headers value into its
// header names.
func SplitHeaders(v string) []string {
	var out []string
	for _, h := range strings.Split(v, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}
