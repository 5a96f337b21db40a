package s3policy

import (
	"bytes"
	"encoding/json"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/latticenet/lattice/internal/strictjson"
)

// Parse reads the policy of bucket, checking everything S3 checks and
// refusing what this package cannot evaluate:
//
//   - Version "2012-10-17" or "2008-10-17" (absent: 2008-10-17), an
//     optional Id, and Statement: one statement or a non-empty list;
//     nothing else.
//   - Each statement: an optional Sid (unique in the policy), Effect
//     Allow or Deny, a Principal or a NotPrincipal (every request but
//     those of the principals it names), Action or NotAction, Resource
//     or NotResource, an optional Condition.
//   - Principal: "*", or {"AWS": VALUE or [VALUES]} where a value is "*"
//     (everyone, anonymous requests included), an S3 access key id
//     (LK...), arn:aws:iam::ACCOUNT:user/ACCESSKEYID (that key, if it is
//     ACCOUNT's) or arn:aws:iam::ACCOUNT:root (every key of ACCOUNT);
//     {"CanonicalUser": ACCOUNT}; {"Service": NAME.amazonaws.com}, kept
//     and matching no request (no AWS service calls this endpoint).
//     Federated is ErrUnsupported.
//   - Action: "*", or s3:NAME patterns with * and ? wildcards, matched
//     case-insensitively; a pattern that matches no S3 action is
//     malformed, as in S3.
//   - Resource: arn:aws:s3:::BUCKET or arn:aws:s3:::BUCKET/KEYPATTERN,
//     BUCKET exactly the policy's bucket (another bucket's resource is
//     malformed, as in S3); * and ? wildcards in the key pattern.
//   - Condition: Bool on aws:SecureTransport; IpAddress and NotIpAddress
//     on aws:SourceIp (addresses or CIDR prefixes, IPv4 or IPv6); the
//     String operators (StringEquals, StringNotEquals,
//     StringEqualsIgnoreCase, StringNotEqualsIgnoreCase, StringLike,
//     StringNotLike) on the string keys (stringKeys) and
//     s3:ExistingObjectTag/TAGKEY and s3:RequestObjectTag/TAGKEY; the
//     Arn operators on aws:PrincipalArn and aws:SourceArn; the IfExists
//     form of each; the set forms of the String operators
//     (ForAllValues:…, ForAnyValue:…) on the same keys and on the
//     multivalued s3:RequestObjectTagKeys, which takes only them; Null on
//     any of these keys. Other operators and keys S3 knows are ErrUnsupported; ones it
//     does not know, malformed.
//   - Policy variables in a 2012-10-17 policy (variables.go): ${KEY} and
//     ${KEY, 'DEFAULT'} for the request's value of a String key (of
//     aws:SourceIp and aws:SecureTransport too), and ${*}, ${?}, ${$}, in
//     Resource's key patterns and the String and Arn operators' values;
//     a variable of a Numeric or Date key, or in another operator's
//     values, is ErrUnsupported; one that does not close, or names no
//     key, malformed.
func Parse(data []byte, bucket string) (*Policy, error) {
	if len(data) > MaxSize {
		return nil, malformed("Policies must be less than %d bytes", MaxSize)
	}
	if !utf8.Valid(data) {
		return nil, malformed("This policy contains invalid Json")
	}
	var doc map[string]json.RawMessage
	if err := strictJSON(data, &doc); err != nil || doc == nil {
		return nil, malformed("This policy contains invalid Json")
	}
	// The maps below keep the last of a key given twice: a reviewer, or
	// a tool, reading the first "Effect" would see another policy than
	// the one enforced.
	if err := strictjson.Keys(data, nil); err != nil {
		return nil, malformed("This policy contains invalid Json: %v", err)
	}
	p := &Policy{Version: "2008-10-17"}
	for name, raw := range doc {
		switch name {
		case "Version":
			if err := json.Unmarshal(raw, &p.Version); err != nil || p.Version != "2012-10-17" && p.Version != "2008-10-17" {
				return nil, malformed("The policy must contain a valid version string")
			}
		case "Id":
			var id string
			if err := json.Unmarshal(raw, &id); err != nil {
				return nil, malformed("Id must be a string")
			}
		case "Statement":
		default:
			return nil, malformed("Policy has an invalid element: %s", name)
		}
	}
	raw, ok := doc["Statement"]
	if !ok {
		return nil, malformed("Missing required field Statement")
	}
	var list []json.RawMessage
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		list = []json.RawMessage{raw}
	} else if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return nil, malformed("Statement must be a statement or a non-empty list of them")
	}
	sids := map[string]bool{}
	for _, raw := range list {
		st, err := parseStatement(raw, bucket, p.Version)
		if err != nil {
			return nil, err
		}
		if st.Sid != "" {
			if sids[st.Sid] {
				return nil, malformed("Statement IDs (SID) in a single policy must be unique")
			}
			sids[st.Sid] = true
		}
		p.Statements = append(p.Statements, st)
	}
	return p, nil
}

// strictJSON decodes data into v, refusing trailing data.
func strictJSON(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return malformed("trailing data")
	}
	if _, err := d.Token(); err == nil {
		return malformed("trailing data")
	}
	return nil
}

func parseStatement(raw json.RawMessage, bucket, version string) (Statement, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return Statement{}, malformed("A statement must be a JSON object")
	}
	var st Statement
	for name, v := range fields {
		var err error
		switch name {
		case "Sid":
			if json.Unmarshal(v, &st.Sid) != nil {
				err = malformed("Sid must be a string")
			}
		case "Effect":
			var e string
			if json.Unmarshal(v, &e) != nil || e != string(Allow) && e != string(Deny) {
				err = malformed("Invalid effect: Effect must be Allow or Deny")
			}
			st.Effect = Effect(e)
		case "Principal", "NotPrincipal":
			st.NotPrincipal = name == "NotPrincipal"
			err = st.parsePrincipal(v)
		case "Action", "NotAction":
			st.NotAction = name == "NotAction"
			st.Actions, err = parseActions(v, name)
		case "Resource", "NotResource":
			st.NotResource = name == "NotResource"
			st.Resources, st.resTmpls, err = parseResources(v, name, bucket, version)
		case "Condition":
			st.Conditions, err = parseConditions(v, version)
		default:
			err = malformed("Statement has an invalid element: %s", name)
		}
		if err != nil {
			return Statement{}, err
		}
	}
	switch {
	case st.Effect == "":
		return Statement{}, malformed("Missing required field Effect")
	case (fields["Principal"] == nil) == (fields["NotPrincipal"] == nil):
		return Statement{}, malformed("A statement must have exactly one of Principal and NotPrincipal")
	case (fields["Action"] == nil) == (fields["NotAction"] == nil):
		return Statement{}, malformed("A statement must have exactly one of Action and NotAction")
	case (fields["Resource"] == nil) == (fields["NotResource"] == nil):
		return Statement{}, malformed("A statement must have exactly one of Resource and NotResource")
	}
	return st, nil
}

var (
	accessKeyID = regexp.MustCompile(`^LK[0-9A-Z]{18}$`)
	// An account's name is any run of what a name may hold here; the
	// store checks names where accounts are made.
	userARN     = regexp.MustCompile(`^arn:aws:iam::([A-Za-z0-9._-]{1,64}):(root|user/(LK[0-9A-Z]{18}))$`)
	accountName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	serviceName = regexp.MustCompile(`^[a-z0-9-]+(\.[a-z0-9-]+)*\.amazonaws\.com$`)
)

func (st *Statement) parsePrincipal(raw json.RawMessage) error {
	var star string
	if json.Unmarshal(raw, &star) == nil {
		if star != "*" {
			return malformed("Invalid principal in policy: a string principal must be \"*\"")
		}
		st.Everyone = true
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) == 0 {
		return malformed("Invalid principal in policy")
	}
	for typ, v := range m {
		values, err := stringOrList(v, "Principal")
		if err != nil {
			return err
		}
		switch typ {
		case "AWS":
		case "Service":
			// An AWS service acting for the bucket's owner (S3's log
			// delivery, CloudFront): none makes requests here, so the
			// statement is kept and applies to no request.
			for _, svc := range values {
				if !serviceName.MatchString(svc) {
					return malformed("Invalid principal in policy: service %q", svc)
				}
			}
			st.Services = append(st.Services, values...)
			continue
		case "CanonicalUser":
			// An account's canonical id is its name here (ListBuckets'
			// Owner ID).
			for _, id := range values {
				if !accountName.MatchString(id) {
					return malformed("Invalid principal in policy: canonical user %q", id)
				}
			}
			st.Accounts = append(st.Accounts, values...)
			continue
		case "Federated":
			return unsupported("Principal Federated is not supported: there are no identity providers here; name S3 keys with AWS")
		default:
			return malformed("Invalid principal in policy: unknown type %s", typ)
		}
		for _, id := range values {
			switch {
			case id == "*":
				st.Everyone = true
			case accessKeyID.MatchString(id):
				st.Keys, st.KeyAccounts = append(st.Keys, id), append(st.KeyAccounts, "")
			default:
				m := userARN.FindStringSubmatch(id)
				switch {
				case m == nil:
					return malformed("Invalid principal in policy: %q", id)
				case m[2] == "root":
					st.Accounts = append(st.Accounts, m[1])
				default:
					st.Keys, st.KeyAccounts = append(st.Keys, m[3]), append(st.KeyAccounts, m[1])
				}
			}
		}
	}
	return nil
}

func parseActions(raw json.RawMessage, name string) ([]string, error) {
	values, err := stringOrList(raw, name)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(values))
	for _, a := range values {
		a = strings.ToLower(a)
		if a != "*" {
			rest, ok := strings.CutPrefix(a, "s3:")
			if !ok || rest == "" || !slices.ContainsFunc(actions, func(known string) bool { return match(a, known) }) {
				return nil, malformed("Policy has invalid action: %q", a)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// parseResources reads a statement's Resource or NotResource (name), and
// in a 2012-10-17 policy its entries' variables, which may stand in the
// key pattern only: the bucket is the policy's.
func parseResources(raw json.RawMessage, name, bucket, version string) ([]string, []template, error) {
	values, err := stringOrList(raw, name)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range values {
		rest, ok := strings.CutPrefix(r, "arn:aws:s3:::")
		b, _, _ := strings.Cut(rest, "/")
		if !ok || b != bucket {
			return nil, nil, malformed("Policy has invalid resource: %q is not bucket %s or one of its objects", r, bucket)
		}
	}
	if version != "2012-10-17" {
		return values, nil, nil // 2008-10-17 has no variables: ${ is text
	}
	tmpls, err := parseTemplates(values)
	return values, tmpls, err
}

// noVariables refuses a policy variable in the values of an operator that
// does not take them here (the Numeric, Date, IpAddress and Bool ones).
func (c *Condition) noVariables(version string) error {
	if version == "2012-10-17" && slices.ContainsFunc(c.Values, func(v string) bool { return strings.Contains(v, "${") }) {
		return unsupported("policy variables in %s's values are not supported: they are taken in Resource and in the String and Arn operators' values", c.Operator)
	}
	return nil
}

// variables reads the policy variables of c's values, for a String or
// Arn operator in a 2012-10-17 policy.
func (c *Condition) variables(version string) error {
	if version != "2012-10-17" {
		return nil
	}
	var err error
	c.tmpls, err = parseTemplates(c.Values)
	return err
}

// Condition keys and operators: those evaluated, then those S3 knows
// that are refused as unsupported.
var (
	// aws:SourceArn and aws:SourceAccount name the resource an AWS
	// service acts for; no service calls this endpoint, so requests
	// never have them (the policies AWS documents for its log delivery
	// name them).
	stringKeys = []string{"s3:prefix", "s3:delimiter", "aws:useragent", "aws:referer", "aws:principalarn",
		"aws:username", "aws:principalaccount",
		"aws:sourcearn", "aws:sourceaccount",
		"s3:x-amz-server-side-encryption", "s3:x-amz-server-side-encryption-customer-algorithm",
		"s3:x-amz-server-side-encryption-aws-kms-key-id",
		"s3:x-amz-copy-source", "s3:x-amz-metadata-directive",
		"s3:authtype", "s3:signatureversion", "s3:x-amz-content-sha256", "s3:x-amz-acl", "s3:x-amz-storage-class", "s3:versionid",
		LockModeKey, LockLegalHoldKey}
	// numericKeys take the Numeric operators: s3:max-keys, the page size
	// a ListObjects(V2) or ListObjectVersions asks for (absent when it
	// asks none); s3:signatureAge, the milliseconds since a Signature
	// Version 4 request says it was signed; s3:TlsVersion, the TLS
	// version of a request over TLS (1.2, 1.3); and
	// s3:object-lock-remaining-retention-days. dateKeys take the Date
	// operators: the time the request is evaluated, as ISO 8601
	// (aws:CurrentTime) or epoch seconds (aws:EpochTime), either taking a
	// value in either form; and s3:object-lock-retain-until-date.
	numericKeys = []string{"s3:max-keys", "s3:signatureage", "s3:tlsversion", LockRemainingDaysKey}
	dateKeys    = []string{"aws:currenttime", "aws:epochtime", LockRetainUntilKey}
	arnOps      = []string{"ArnEquals", "ArnLike", "ArnNotEquals", "ArnNotLike"}
	stringOps   = []string{"StringEquals", "StringNotEquals", "StringEqualsIgnoreCase", "StringNotEqualsIgnoreCase", "StringLike", "StringNotLike"}
	cmpOps      = []string{"Equals", "NotEquals", "LessThan", "LessThanEquals", "GreaterThan", "GreaterThanEquals"}
)

// The Object Lock condition keys, lower-cased: the lock a request asks
// for (an upload's x-amz-object-lock-* headers or form fields, a
// PutObjectRetention's or PutObjectLegalHold's body). The retain-until
// date is a Date key (its value in Request.Values in epoch seconds), the
// remaining retention days a Numeric one (whole days from the request to
// that date, a part of a day counted as a day); each is absent when the
// request asks for no such lock.
const (
	LockModeKey          = "s3:object-lock-mode"
	LockLegalHoldKey     = "s3:object-lock-legal-hold"
	LockRetainUntilKey   = "s3:object-lock-retain-until-date"
	LockRemainingDaysKey = "s3:object-lock-remaining-retention-days"
)

// ObjectTagKey is the prefix of s3:ExistingObjectTag/TAGKEY, lower-cased:
// the value of the tag TAGKEY of the object a request addresses (absent
// when it has none, or the request addresses no object).
const ObjectTagKey = "s3:existingobjecttag/"

func isObjectTagKey(k string) bool {
	return len(k) > len(ObjectTagKey) && strings.HasPrefix(k, ObjectTagKey)
}

// RequestTagKey is the prefix of s3:RequestObjectTag/TAGKEY, lower-cased:
// the value of the tag TAGKEY a request sets on an object (PutObject's
// x-amz-tagging, a form's tagging, PutObjectTagging's tag set); absent
// when it sets none. RequestTagKeysKey is s3:RequestObjectTagKeys, the
// multivalued key of all the tag keys a request sets.
const (
	RequestTagKey     = "s3:requestobjecttag/"
	RequestTagKeysKey = "s3:requestobjecttagkeys"
)

func isRequestTagKey(k string) bool {
	return len(k) > len(RequestTagKey) && strings.HasPrefix(k, RequestTagKey)
}

// isStringKey reports whether k takes the String operators.
func isStringKey(k string) bool {
	return slices.Contains(stringKeys, k) || isObjectTagKey(k) || isRequestTagKey(k) || k == RequestTagKeysKey
}

// setQualifiers qualify an operator for a multivalued key: the condition
// holds when every value of the request's (ForAllValues; also when it
// has none) or any of them (ForAnyValue) satisfies the operator.
var setQualifiers = []string{"ForAllValues:", "ForAnyValue:"}

// splitSet returns op without its set qualifier, and the qualifier ("" for
// none).
func splitSet(op string) (qualifier, base string) {
	for _, q := range setQualifiers {
		if rest, ok := strings.CutPrefix(op, q); ok {
			return q, rest
		}
	}
	return "", op
}

func isNumericOp(op string) bool {
	rest, ok := strings.CutPrefix(op, "Numeric")
	return ok && slices.Contains(cmpOps, rest)
}

func isDateOp(op string) bool {
	rest, ok := strings.CutPrefix(op, "Date")
	return ok && slices.Contains(cmpOps, rest)
}

// knownKey reports whether this evaluates condition key k.
func knownKey(k string) bool {
	return isStringKey(k) || slices.Contains(numericKeys, k) || slices.Contains(dateKeys, k) ||
		k == "aws:securetransport" || k == "aws:sourceip"
}

// unknownKey is the error for a condition key this does not evaluate:
// unsupported for a key of AWS's or S3's own, malformed otherwise.
func unknownKey(k string) error {
	if strings.HasPrefix(k, "aws:") || strings.HasPrefix(k, "s3:") {
		return unsupported("condition key %s is not supported", k)
	}
	return malformed("Policy has an invalid condition key: %s", k)
}

// parseDate reads a Date operator's value as IAM does: ISO 8601 (a date,
// or a date and time with a zone) or seconds since the epoch.
func parseDate(v string) (time.Time, bool) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// knownOp reports whether op is an operator of the IAM policy language.
func knownOp(op string) bool {
	op = strings.TrimPrefix(strings.TrimPrefix(op, "ForAllValues:"), "ForAnyValue:")
	op = strings.TrimSuffix(op, "IfExists")
	if slices.Contains(stringOps, op) || slices.Contains([]string{"Bool", "BinaryEquals", "IpAddress", "NotIpAddress", "Null",
		"ArnEquals", "ArnLike", "ArnNotEquals", "ArnNotLike"}, op) {
		return true
	}
	for _, family := range []string{"Numeric", "Date"} {
		if rest, ok := strings.CutPrefix(op, family); ok && slices.Contains(cmpOps, rest) {
			return true
		}
	}
	return false
}

func parseConditions(raw json.RawMessage, version string) ([]Condition, error) {
	var ops map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &ops); err != nil {
		return nil, malformed("Condition must map operators to maps of keys and values")
	}
	var out []Condition
	for op, keys := range ops {
		if set, base := splitSet(strings.TrimSuffix(op, "IfExists")); set != "" {
			// The set forms are taken for the String operators.
			if !slices.Contains(stringOps, base) {
				if knownOp(op) {
					return nil, unsupported("condition operator %s is not supported: the set forms are taken for the String operators", op)
				}
				return nil, malformed("Invalid Condition type: %s", op)
			}
		} else if !slices.Contains(stringOps, base) && !slices.Contains(arnOps, base) &&
			!isNumericOp(base) && !isDateOp(base) &&
			base != "Bool" && base != "IpAddress" && base != "NotIpAddress" && op != "Null" {
			if knownOp(op) {
				return nil, unsupported("condition operator %s is not supported", op)
			}
			return nil, malformed("Invalid Condition type: %s", op)
		}
		if len(keys) == 0 {
			return nil, malformed("Condition %s names no key", op)
		}
		for key, v := range keys {
			c := Condition{Operator: op, Key: strings.ToLower(key)}
			var err error
			if c.Values, err = conditionValues(v); err != nil {
				return nil, err
			}
			if err := c.check(version); err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	// Map order is random; keep the statement's conditions in one order.
	slices.SortFunc(out, func(a, b Condition) int { return strings.Compare(a.Operator+"\x00"+a.Key, b.Operator+"\x00"+b.Key) })
	return out, nil
}

func conditionValues(raw json.RawMessage) ([]string, error) {
	// Numbers, as the Numeric operators' values may be written.
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&n) == nil && n != "" {
		return []string{n.String()}, nil
	}
	var ns []json.Number
	dec = json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&ns) == nil && len(ns) > 0 {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = n.String()
		}
		return out, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return []string{map[bool]string{true: "true", false: "false"}[b]}, nil
	}
	var bs []bool
	if json.Unmarshal(raw, &bs) == nil && len(bs) > 0 {
		out := make([]string, len(bs))
		for i, b := range bs {
			out[i] = map[bool]string{true: "true", false: "false"}[b]
		}
		return out, nil
	}
	return stringOrList(raw, "A condition's value")
}

// check checks that c's operator applies to its key and that its values
// suit both.
func (c *Condition) check(version string) error {
	set, op := splitSet(strings.TrimSuffix(c.Operator, "IfExists"))
	switch {
	case set != "" && !isStringKey(c.Key):
		if knownKey(c.Key) {
			return malformed("%s takes no set operator (%s): it has one value", c.Key, c.Operator)
		}
		return unknownKey(c.Key)
	case set == "" && c.Key == RequestTagKeysKey && c.Operator != "Null":
		// IAM would take a plain operator on a multivalued key, with
		// results policy authors rarely mean; S3's examples always
		// qualify it.
		return unsupported("s3:RequestObjectTagKeys is multivalued: it takes ForAllValues: or ForAnyValue: with a String operator here, not %s", c.Operator)
	}
	if c.Operator == "Null" {
		// Null asks whether the key is absent (true) or present (false),
		// of any key this evaluates.
		for _, v := range c.Values {
			if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
				return malformed("Null takes true or false, not %q", v)
			}
		}
		if !knownKey(c.Key) {
			if strings.HasPrefix(c.Key, "aws:") || strings.HasPrefix(c.Key, "s3:") {
				return unsupported("condition key %s is not supported", c.Key)
			}
			return malformed("Policy has an invalid condition key: %s", c.Key)
		}
		return nil
	}
	switch {
	case c.Key == "aws:securetransport":
		if op != "Bool" {
			return malformed("aws:SecureTransport takes the Bool operator, not %s", c.Operator)
		}
		if err := c.noVariables(version); err != nil {
			return err
		}
		for _, v := range c.Values {
			if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
				return malformed("Bool takes true or false, not %q", v)
			}
		}
	case c.Key == "aws:sourceip":
		if op != "IpAddress" && op != "NotIpAddress" {
			return malformed("aws:SourceIp takes IpAddress or NotIpAddress, not %s", c.Operator)
		}
		if err := c.noVariables(version); err != nil {
			return err
		}
		for _, v := range c.Values {
			p, err := netip.ParsePrefix(v)
			if err != nil {
				a, aerr := netip.ParseAddr(v)
				if aerr != nil || a.Zone() != "" {
					return malformed("Invalid IP address or CIDR prefix in aws:SourceIp: %q", v)
				}
				p = netip.PrefixFrom(a, a.BitLen())
			}
			c.prefixes = append(c.prefixes, p.Masked())
		}
	case slices.Contains(arnOps, op):
		if c.Key != "aws:principalarn" && c.Key != "aws:sourcearn" {
			return malformed("%s is not an ARN: it takes a String operator, not %s", c.Key, c.Operator)
		}
		return c.variables(version)
	case isNumericOp(op) || slices.Contains(numericKeys, c.Key):
		if !slices.Contains(numericKeys, c.Key) && !knownKey(c.Key) {
			return unknownKey(c.Key)
		}
		if !isNumericOp(op) || !slices.Contains(numericKeys, c.Key) {
			return malformed("%s does not take %s: the Numeric operators take %s", c.Key, c.Operator, strings.Join(numericKeys, ", "))
		}
		if err := c.noVariables(version); err != nil {
			return err
		}
		for _, v := range c.Values {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
				return malformed("%s takes numbers, not %q", c.Operator, v)
			}
			c.numbers = append(c.numbers, n)
		}
	case isDateOp(op) || slices.Contains(dateKeys, c.Key):
		if !slices.Contains(dateKeys, c.Key) && !knownKey(c.Key) {
			return unknownKey(c.Key)
		}
		if !isDateOp(op) || !slices.Contains(dateKeys, c.Key) {
			return malformed("%s does not take %s: the Date operators take %s", c.Key, c.Operator, strings.Join(dateKeys, ", "))
		}
		if err := c.noVariables(version); err != nil {
			return err
		}
		for _, v := range c.Values {
			t, ok := parseDate(v)
			if !ok {
				return malformed("%s takes ISO 8601 dates or epoch seconds, not %q", c.Operator, v)
			}
			c.times = append(c.times, t)
		}
	case isStringKey(c.Key):
		if !slices.Contains(stringOps, op) {
			return malformed("%s takes a String operator, not %s", c.Key, c.Operator)
		}
		return c.variables(version)
	case c.Key == ObjectTagKey || c.Key == RequestTagKey:
		return malformed("Policy has an invalid condition key: %s names no tag", c.Key)
	case strings.HasPrefix(c.Key, "aws:") || strings.HasPrefix(c.Key, "s3:"):
		return unsupported("condition key %s is not supported", c.Key)
	default:
		return malformed("Policy has an invalid condition key: %s", c.Key)
	}
	return nil
}
