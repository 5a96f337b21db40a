// Package s3policy parses S3 bucket policies and evaluates them against a
// request, as IAM does: an explicit Deny wins over any Allow, an Allow
// grants, and a request no statement applies to is left to the caller's
// other checks. It is pure: no I/O, no clock, no network; the S3 endpoint
// (package s3api) reads the policy from the store, parses it once, and
// builds a Request from each HTTP request.
//
// The grammar kept is the part of the IAM policy language a bucket policy
// uses, less what this implementation cannot honour: a policy that needs
// something it does not evaluate (a Federated principal, policy
// variables of a number or date, a condition operator or key not listed in Parse's doc) is
// refused with ErrUnsupported rather than kept and ignored.
package s3policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxSize is the largest policy document S3 accepts, in bytes.
const MaxSize = 20 << 10

// Errors callers tell apart: ErrMalformed for a document S3 would refuse
// (the S3 endpoint answers 400 MalformedPolicy), ErrUnsupported for valid
// grammar this package does not evaluate (501 NotImplemented).
var (
	ErrMalformed   = errors.New("s3policy: malformed policy")
	ErrUnsupported = errors.New("s3policy: unsupported policy element")
)

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// Effect is a statement's effect.
type Effect string

// The two effects.
const (
	Allow Effect = "Allow"
	Deny  Effect = "Deny"
)

// Decision is what a policy says of a request.
type Decision int

// Decisions. None means no statement applies: the policy neither grants
// nor refuses.
const (
	None Decision = iota
	Allowed
	Denied
)

func (d Decision) String() string {
	switch d {
	case Allowed:
		return "Allowed"
	case Denied:
		return "Denied"
	}
	return "None"
}

// Policy is a parsed bucket policy. It is immutable and safe for
// concurrent use.
type Policy struct {
	Version    string
	Statements []Statement
}

// Statement is one statement of a policy.
type Statement struct {
	Sid    string
	Effect Effect
	// Principal: Everyone, or the access key ids and account names of
	// Keys and Accounts (see Parse for how a principal names them), and
	// Services, AWS services, which make no requests here. NotPrincipal
	// inverts them: the statement applies to every request but those.
	NotPrincipal bool
	Services     []string
	Everyone     bool
	Keys         []string // access key ids, bare or from arn:aws:iam::ACCOUNT:user/ID (with the ACCOUNT in KeyAccounts)
	// KeyAccounts[i] is the account Keys[i] was named under, "" for a
	// bare id.
	KeyAccounts []string
	Accounts    []string // arn:aws:iam::ACCOUNT:root: every key of ACCOUNT
	// Actions are patterns (s3:Get*), lower-cased; NotAction inverts them.
	Actions   []string
	NotAction bool
	// Resources are ARN patterns; NotResource inverts them. In a
	// 2012-10-17 policy they may hold policy variables (variables.go),
	// resTmpls[i] Resources[i]'s (nil without any).
	Resources   []string
	NotResource bool
	Conditions  []Condition
	resTmpls    []template
}

// Condition is one operator applied to one key: the key's value must
// match one of Values (for a negated operator, none of them).
type Condition struct {
	Operator string // as written, e.g. StringLike
	Key      string // lower-cased, e.g. aws:sourceip
	Values   []string
	tmpls    []template     // the String and Arn operators' values' variables (variables.go), nil without any
	prefixes []netip.Prefix // IpAddress, NotIpAddress
	numbers  []float64      // the Numeric operators' values
	times    []time.Time    // the Date operators'
}

// Request is what a policy is evaluated against.
type Request struct {
	Action   string // e.g. s3:GetObject
	Resource string // arn:aws:s3:::bucket or arn:aws:s3:::bucket/key
	// Anonymous is an unsigned request; otherwise AccessKeyID and Account
	// name the signer.
	Anonymous   bool
	AccessKeyID string
	Account     string
	// The request's aws:PrincipalArn is
	// arn:aws:iam::ACCOUNT:user/ACCESSKEYID for a signed request, absent
	// for an anonymous one.

	// SecureTransport is aws:SecureTransport: the request came over TLS.
	SecureTransport bool
	SourceIP        netip.Addr // aws:SourceIp; invalid when unknown
	// Values are the other condition keys, lower-cased (s3:prefix,
	// aws:useragent, ...); a key absent from the map is absent from the
	// request.
	Values map[string]string
	// Time is when the request is evaluated: aws:CurrentTime and
	// aws:EpochTime (absent when zero).
	Time time.Time
	// ObjectTags are the tags of the object the request addresses, by
	// key lower-cased (condition keys are not case-sensitive): a key may
	// have several values, S3's tag keys being case-sensitive. The
	// caller fills it when NeedsObjectTags.
	ObjectTags map[string][]string
	// RequestTags are the tags the request sets on an object
	// (s3:RequestObjectTag/…), by key lower-cased as ObjectTags, and
	// RequestTagKeys their keys as sent (s3:RequestObjectTagKeys). The
	// caller fills them when NeedsRequestTags.
	RequestTags    map[string][]string
	RequestTagKeys []string
}

// Evaluate decides r, as IAM does: Denied if a Deny statement applies,
// else Allowed if an Allow statement does, else None.
func (p *Policy) Evaluate(r Request) Decision {
	d := None
	for i := range p.Statements {
		st := &p.Statements[i]
		if !st.applies(r) {
			continue
		}
		if st.Effect == Deny {
			return Denied
		}
		d = Allowed
	}
	return d
}

// NeedsObjectTags reports whether a condition of p reads the tags of the
// object a request addresses (s3:ExistingObjectTag/…, in a condition or a
// policy variable): only then must the
// caller look them up, into Request.Values under ObjectTagKey+TAGKEY
// (the tag key lower-cased: condition keys are not case-sensitive).
func (p *Policy) NeedsObjectTags() bool { return p.reads(isObjectTagKey) }

// reads reports whether a condition of p, or a policy variable in it,
// reads a key for which is returns true.
func (p *Policy) reads(is func(key string) bool) bool {
	variable := func(tmpls []template) bool {
		return slices.ContainsFunc(tmpls, func(t template) bool {
			return slices.ContainsFunc(t, func(pc piece) bool { return pc.key != "" && is(pc.key) })
		})
	}
	for _, st := range p.Statements {
		if variable(st.resTmpls) {
			return true
		}
		for _, c := range st.Conditions {
			if is(c.Key) || variable(c.tmpls) {
				return true
			}
		}
	}
	return false
}

// NeedsRequestTags reports whether a condition of p reads the tags a
// request sets (s3:RequestObjectTag/…, s3:RequestObjectTagKeys): only
// then must the caller read them, into Request.RequestTags and
// RequestTagKeys.
func (p *Policy) NeedsRequestTags() bool {
	return p.reads(func(k string) bool { return isRequestTagKey(k) || k == RequestTagKeysKey })
}

// NeedsLockKeys reports whether a condition of p reads the Object Lock a
// request asks for (s3:object-lock-*): only then must the caller read a
// PutObjectRetention's or PutObjectLegalHold's body before evaluating p.
func (p *Policy) NeedsLockKeys() bool {
	return p.reads(func(k string) bool {
		return k == LockModeKey || k == LockLegalHoldKey || k == LockRetainUntilKey || k == LockRemainingDaysKey
	})
}

// Public reports whether the policy grants anything to everyone,
// anonymous requests included, as S3's GetBucketPolicyStatus (and Block
// Public Access) judge it: an Allow statement whose principal takes in
// everyone, unless a condition holds it to requesters S3 counts as fixed
// (fixesRequester).
func (p *Policy) Public() bool {
	for _, st := range p.Statements {
		if st.Effect != Allow || !st.coversAnonymous() {
			continue
		}
		if !slices.ContainsFunc(st.Conditions, Condition.fixesRequester) {
			return true
		}
	}
	return false
}

// fixedKeys are the condition keys whose fixed values make a grant to
// everyone non-public, as S3 lists them (those of them this evaluates):
// the source an AWS service acts for, the principal's ARN or account, and
// the SSE-KMS key a write names.
var fixedKeys = []string{"aws:sourcearn", "aws:sourceaccount", "aws:principalarn", "aws:principalaccount", "s3:x-amz-server-side-encryption-aws-kms-key-id"}

// fixesRequester reports whether c holds a statement to requesters S3
// counts as fixed: source addresses in CIDR blocks (none of them every
// address), or fixed values (no wildcard) of fixedKeys, with an operator
// that must match them (not negated, not IfExists, which a request
// without the key passes).
func (c Condition) fixesRequester() bool {
	if c.Operator == "IpAddress" && c.Key == "aws:sourceip" {
		return !slices.ContainsFunc(c.prefixes, func(p netip.Prefix) bool { return p.Bits() == 0 })
	}
	switch c.Operator {
	case "StringEquals", "StringEqualsIgnoreCase", "StringLike", "ArnEquals", "ArnLike":
	default:
		return false
	}
	return slices.Contains(fixedKeys, c.Key) && len(c.Values) > 0 && c.tmpls == nil &&
		!slices.ContainsFunc(c.Values, func(v string) bool { return strings.ContainsAny(v, "*?") || v == "" })
}

// Grants reports whether an Allow statement of p may apply to an
// anonymous request for action: what the S3 endpoint checks to refuse
// grants it cannot honour (anonymous writes).
func (p *Policy) Grants(action string) bool {
	for _, st := range p.Statements {
		if st.Effect == Allow && st.coversAnonymous() && st.matchesAction(action) {
			return true
		}
	}
	return false
}

func (st *Statement) applies(r Request) bool {
	return st.matchesPrincipal(r) && st.matchesAction(r.Action) && st.matchesResource(r) && st.matchesConditions(r) &&
		(st.Effect != Allow || !st.unresolved(r)) // variables.go: an unresolved variable grants nothing
}

// coversAnonymous reports whether the statement's principal takes in
// anonymous requests: Principal "*", or a NotPrincipal that does not
// name everyone.
func (st *Statement) coversAnonymous() bool { return st.Everyone != st.NotPrincipal }

func (st *Statement) matchesPrincipal(r Request) bool {
	return st.names(r) != st.NotPrincipal
}

// names reports whether the statement's principal list names r's signer.
func (st *Statement) names(r Request) bool {
	if st.Everyone {
		return true
	}
	if r.Anonymous {
		return false
	}
	for i, id := range st.Keys {
		if id == r.AccessKeyID && (st.KeyAccounts[i] == "" || st.KeyAccounts[i] == r.Account) {
			return true
		}
	}
	return slices.Contains(st.Accounts, r.Account)
}

func (st *Statement) matchesAction(action string) bool {
	action = strings.ToLower(action)
	m := slices.ContainsFunc(st.Actions, func(p string) bool { return match(p, action) })
	return m != st.NotAction
}

func (st *Statement) matchesResource(r Request) bool {
	m := false
	for i := range st.Resources {
		if p, lit, ok := pattern(st.Resources, st.resTmpls, i, r); ok && matchLit(p, lit, r.Resource) {
			m = true
			break
		}
	}
	return m != st.NotResource
}

func (st *Statement) matchesConditions(r Request) bool {
	for _, c := range st.Conditions {
		if !c.matches(r) {
			return false
		}
	}
	return true
}

// values are the request's values of key: none when it lacks the key.
func (r Request) values(key string) []string {
	switch key {
	case "aws:securetransport":
		return []string{fmt.Sprint(r.SecureTransport)}
	case "aws:sourceip":
		if !r.SourceIP.IsValid() {
			return nil
		}
		return []string{r.SourceIP.String()}
	case "aws:principalarn":
		if r.Anonymous {
			return nil
		}
		return []string{"arn:aws:iam::" + r.Account + ":user/" + r.AccessKeyID}
	case "aws:username":
		// The user of aws:PrincipalArn: the signing key's id.
		if r.Anonymous {
			return nil
		}
		return []string{r.AccessKeyID}
	case "aws:principalaccount":
		if r.Anonymous {
			return nil
		}
		return []string{r.Account}
	case "aws:currenttime", "aws:epochtime":
		if r.Time.IsZero() {
			return nil
		}
		return []string{strconv.FormatInt(r.Time.Unix(), 10)}
	}
	if tag, ok := strings.CutPrefix(key, ObjectTagKey); ok {
		return r.ObjectTags[tag]
	}
	if tag, ok := strings.CutPrefix(key, RequestTagKey); ok {
		return r.RequestTags[tag]
	}
	if key == RequestTagKeysKey {
		return r.RequestTagKeys
	}
	if v, ok := r.Values[key]; ok {
		return []string{v}
	}
	return nil
}

func (c Condition) matches(r Request) bool {
	vals := r.values(c.Key)
	present := len(vals) > 0
	if c.Operator == "Null" {
		return slices.ContainsFunc(c.Values, func(v string) bool { return strings.EqualFold(v, fmt.Sprint(!present)) })
	}
	set, _ := splitSet(c.Operator)
	if strings.HasSuffix(c.Operator, "IfExists") {
		if !present {
			return true // IfExists: a key the request lacks does not count
		}
		c.Operator = strings.TrimSuffix(c.Operator, "IfExists")
	}
	if set != "" {
		return c.matchesSet(set, vals, r)
	}
	switch c.Key {
	case "aws:securetransport":
		want := fmt.Sprint(r.SecureTransport)
		return slices.ContainsFunc(c.Values, func(v string) bool { return strings.EqualFold(v, want) })
	case "aws:sourceip":
		in := r.SourceIP.IsValid() && slices.ContainsFunc(c.prefixes, func(p netip.Prefix) bool { return p.Contains(r.SourceIP.Unmap()) })
		if c.Operator == "NotIpAddress" {
			return r.SourceIP.IsValid() && !in
		}
		return in
	}
	negated := strings.Contains(c.Operator, "Not")
	if !present {
		// As IAM: a key the request lacks matches no value, so a negated
		// operator holds and a positive one does not.
		return negated
	}
	if c.numbers != nil || c.times != nil {
		return c.compare(vals[0])
	}
	// Any of the request's values (several only for a tag key in two
	// cases) matching any of the condition's: a negated operator holds
	// when none does.
	return slices.ContainsFunc(vals, func(v string) bool { return c.hit(v, r) }) != negated
}

// matchesSet evaluates a set operator (ForAllValues:…, ForAnyValue:…, the
// qualifier given as set) on the request's values, as IAM does: each
// value satisfies a positive operator when it matches one of the
// condition's values and a negated one when it matches none;
// ForAllValues holds when every value does (so, also when the request
// has none), ForAnyValue when one does.
func (c Condition) matchesSet(set string, vals []string, r Request) bool {
	_, base := splitSet(c.Operator)
	c.Operator = base
	negated := strings.Contains(base, "Not")
	satisfies := func(v string) bool { return c.hit(v, r) != negated }
	if set == "ForAllValues:" {
		return !slices.ContainsFunc(vals, func(v string) bool { return !satisfies(v) })
	}
	return slices.ContainsFunc(vals, satisfies)
}

// hit reports whether the request's value v matches one of the
// condition's values (resolved for r) under its String or Arn operator,
// negation aside.
func (c Condition) hit(v string, r Request) bool {
	var eq func(pattern string, lit []bool, v string) bool
	switch op := strings.Replace(c.Operator, "Not", "", 1); strings.TrimPrefix(op, "String") {
	case "ArnEquals", "ArnLike":
		eq = matchARN
	case "Equals":
		eq = func(p string, _ []bool, v string) bool { return p == v }
	case "EqualsIgnoreCase":
		eq = func(p string, _ []bool, v string) bool { return strings.EqualFold(p, v) }
	case "Like":
		eq = matchLit
	default:
		return false
	}
	for i := range c.Values {
		if p, lit, ok := pattern(c.Values, c.tmpls, i, r); ok && eq(p, lit, v) {
			return true
		}
	}
	return false
}

// compare evaluates a Numeric or Date operator on the request's value v
// (a number; for a date, epoch seconds, to the millisecond): true when v stands in the
// operator's relation to any of the condition's values, or, for
// NotEquals, to none.
func (c Condition) compare(v string) bool {
	got, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return false // not a number: matches no value, not even NotEquals
	}
	want := c.numbers
	if c.times != nil {
		want = make([]float64, len(c.times))
		for i, t := range c.times {
			want[i] = float64(t.UnixMilli()) / 1000
		}
	}
	op := strings.TrimPrefix(strings.TrimPrefix(c.Operator, "Numeric"), "Date")
	if op == "NotEquals" {
		return !slices.Contains(want, got)
	}
	return slices.ContainsFunc(want, func(w float64) bool {
		switch op {
		case "Equals":
			return got == w
		case "LessThan":
			return got < w
		case "LessThanEquals":
			return got <= w
		case "GreaterThan":
			return got > w
		case "GreaterThanEquals":
			return got >= w
		}
		return false
	})
}

// matchARN reports whether arn matches pattern (with lit as matchLit
// takes it) as IAM's Arn operators match: each of the six
// colon-separated parts on its own, with wildcards that do not cross a
// colon (the last part, a resource, may hold colons of its own).
func matchARN(pattern string, lit []bool, arn string) bool {
	ap := strings.SplitN(arn, ":", 6)
	if len(ap) != 6 {
		return false
	}
	for i := range 6 {
		end := len(pattern)
		if i < 5 {
			if end = strings.IndexByte(pattern, ':'); end < 0 {
				return false
			}
		}
		var l []bool
		if lit != nil {
			l, lit = lit[:end], lit[min(end+1, len(lit)):]
		}
		if !matchLit(pattern[:end], l, ap[i]) {
			return false
		}
		pattern = pattern[min(end+1, len(pattern)):]
	}
	return true
}

// match reports whether s matches pattern, where * matches any run of
// characters and ? any one character.
func match(pattern, s string) bool { return matchLit(pattern, nil, s) }

// matchLit is match where lit (nil, or one flag per byte of pattern)
// marks the bytes of pattern that match only themselves: a policy
// variable's value, never a wildcard. It runs in
// O(len(pattern)*len(s)) at worst, whatever the pattern.
func matchLit(pattern string, lit []bool, s string) bool {
	wild := func(p int, c byte) bool { return pattern[p] == c && (lit == nil || !lit[p]) }
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && wild(p, '*'):
			// Before the literal case: a * in s is matched by the
			// wildcard, which may take more than it.
			star, mark = p, i
			p++
		case p < len(pattern) && (wild(p, '?') || pattern[p] == s[i]):
			// ? matches one byte; a multi-byte character is several, as
			// IAM compares runes, so step it whole.
			if wild(p, '?') && s[i] >= 0x80 {
				i += runeLen(s[i:])
			} else {
				i++
			}
			p++
		case star >= 0:
			p = star + 1
			mark += runeLen(s[mark:])
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && wild(p, '*') {
		p++
	}
	return p == len(pattern)
}

func runeLen(s string) int {
	for i := 1; i < len(s) && i < 4; i++ {
		if s[i]&0xc0 != 0x80 {
			return i
		}
	}
	return min(len(s), 4)
}

// Resource is the ARN of a bucket (key "") or of one of its objects.
func Resource(bucket, key string) string {
	if key == "" {
		return "arn:aws:s3:::" + bucket
	}
	return "arn:aws:s3:::" + bucket + "/" + key
}

// marshal-free helpers for Parse.

// stringOrList reads a JSON string or array of strings.
func stringOrList(raw json.RawMessage, what string) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, malformed("%s must be a string or a list of strings", what)
	}
	if len(list) == 0 {
		return nil, malformed("%s must not be empty", what)
	}
	return list, nil
}
