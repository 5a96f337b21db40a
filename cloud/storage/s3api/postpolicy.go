package s3api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/latticenet/lattice/internal/strictjson"
)

// A POST policy is the base64 JSON document an HTML form upload (POST
// Object) carries and signs: when it expires, and the conditions every
// field of the form must meet. S3 defines three kinds of condition:
// exact match ({"field": "value"} or ["eq", "$field", "value"]), prefix
// (["starts-with", "$field", "prefix"]) and the file's size
// (["content-length-range", min, max]).

// maxPolicy bounds a policy document's base64 text.
const maxPolicy = 20 << 10

// postPolicy is a parsed POST policy.
type postPolicy struct {
	expiration time.Time
	conditions []postCondition
	// minSize and maxSize bound the file, inclusive; maxSize is -1 when
	// the policy sets no content-length-range.
	minSize, maxSize int64
}

// postCondition is an eq or starts-with condition on a form field (its
// lower-case name, without the $).
type postCondition struct {
	op, field, value string
}

func (c postCondition) String() string {
	return fmt.Sprintf(`["%s", "$%s", %q]`, c.op, c.field, c.value)
}

func policyError(format string, args ...any) *Error {
	return s3err(http.StatusBadRequest, "InvalidPolicyDocument", "Invalid Policy: "+fmt.Sprintf(format, args...))
}

// parsePostPolicy decodes the base64 policy of a form. Anything but a
// well-formed policy is InvalidPolicyDocument.
func parsePostPolicy(b64 string) (*postPolicy, error) {
	if len(b64) > maxPolicy {
		return nil, policyError("the policy is over %d bytes", maxPolicy)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, policyError("the policy is not base64")
	}
	var doc struct {
		Expiration *string           `json:"expiration"`
		Conditions []json.RawMessage `json:"conditions"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&doc); err != nil {
		return nil, policyError("the policy is not a JSON object: %v", err)
	}
	if strictjson.End(dec) != nil {
		return nil, policyError("the policy holds more than one JSON value")
	}
	if doc.Expiration == nil {
		return nil, policyError("Policy missing expiration.")
	}
	p := &postPolicy{maxSize: -1}
	if p.expiration, err = time.Parse(time.RFC3339Nano, *doc.Expiration); err != nil {
		return nil, policyError("Invalid 'expiration' value: %q", *doc.Expiration)
	}
	if doc.Conditions == nil {
		return nil, policyError("Policy missing conditions.")
	}
	for _, c := range doc.Conditions {
		if err := p.addCondition(c); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *postPolicy) addCondition(raw json.RawMessage) error {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		if len(obj) != 1 {
			return policyError("a condition object must hold one field: %s", raw)
		}
		for name, v := range obj {
			var value string
			if err := json.Unmarshal(v, &value); err != nil {
				return policyError("the value of condition %q is not a string", name)
			}
			p.conditions = append(p.conditions, postCondition{"eq", strings.ToLower(name), value})
		}
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) != 3 {
		return policyError("a condition must be an object or a list of three: %s", raw)
	}
	var op string
	if err := json.Unmarshal(list[0], &op); err != nil {
		return policyError("a condition's operation is not a string: %s", raw)
	}
	switch strings.ToLower(op) {
	case "eq", "starts-with":
		var field, value string
		if json.Unmarshal(list[1], &field) != nil || json.Unmarshal(list[2], &value) != nil || !strings.HasPrefix(field, "$") || len(field) < 2 {
			return policyError("condition %s must be [%q, \"$field\", \"value\"]", raw, op)
		}
		p.conditions = append(p.conditions, postCondition{strings.ToLower(op), strings.ToLower(field[1:]), value})
	case "content-length-range":
		lo, err1 := policyInt(list[1])
		hi, err2 := policyInt(list[2])
		if err1 != nil || err2 != nil || lo < 0 || hi < lo {
			return policyError("content-length-range %s must be two sizes, the least first", raw)
		}
		p.minSize, p.maxSize = lo, hi
	default:
		return policyError("unknown condition %q", op)
	}
	return nil
}

// policyInt reads a size given as a JSON number or a string of digits,
// as clients differ.
func policyInt(raw json.RawMessage) (int64, error) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(raw)
	}
	return strconv.ParseInt(strings.TrimSpace(s), 10, 64)
}

// exempt reports whether a form field need not be named by a condition,
// as S3 lists them: the signature, the file, the policy and x-ignore-*.
func exempt(field string) bool {
	switch field {
	case "x-amz-signature", "signature", "awsaccesskeyid", "file", "policy":
		return true
	}
	return strings.HasPrefix(field, "x-ignore-")
}

// errPolicy is a form the policy does not allow.
func errPolicy(why string) *Error {
	return s3err(http.StatusForbidden, "AccessDenied", "Invalid according to Policy: "+why)
}

// check checks the form's fields (lower-case names, as sent; bucket the
// addressed bucket) against the policy at time now: it has not expired,
// every condition holds, and every field not exempt is named by one.
// The file's size is checked as it streams in (sizeCheck).
func (p *postPolicy) check(fields map[string]string, bucket string, now time.Time) error {
	if !now.Before(p.expiration) {
		return errPolicy("Policy expired.")
	}
	covered := map[string]bool{}
	for _, c := range p.conditions {
		covered[c.field] = true
		v, ok := fields[c.field]
		if c.field == "bucket" {
			v, ok = bucket, true
		}
		switch {
		case !ok && !(c.value == ""):
			return errPolicy("Policy Condition failed: " + c.String())
		case c.op == "eq" && v != c.value, c.op == "starts-with" && !strings.HasPrefix(v, c.value):
			return errPolicy("Policy Condition failed: " + c.String())
		}
	}
	for name := range fields {
		if !covered[name] && !exempt(name) {
			return errPolicy("Extra input fields: " + name)
		}
	}
	return nil
}
