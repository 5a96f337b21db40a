package s3policy

import (
	"errors"
	"strings"
	"testing"
)

// TestRequestTags evaluates s3:RequestObjectTag/… and
// s3:RequestObjectTagKeys with the set operators, as AWS's examples use
// them: uploads must carry a tag of given values, and only tags of given
// keys.
func TestRequestTags(t *testing.T) {
	// Anyone may upload with Project=blue or Project=green, and with tags
	// of the keys Project and Owner only; none without a Project tag.
	policy := mustParse(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*",
		 "Condition":{"StringEquals":{"s3:RequestObjectTag/Project":["blue","green"]},
		              "ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["Project","Owner"]}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObjectTagging","Resource":"arn:aws:s3:::site/*",
		 "Condition":{"ForAnyValue:StringLike":{"s3:RequestObjectTagKeys":"secret*"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/locked/*",
		 "Condition":{"ForAllValues:StringNotEquals":{"s3:RequestObjectTagKeys":["Owner"]}}}]}`)
	if !policy.NeedsRequestTags() {
		t.Fatal("NeedsRequestTags() = false for a policy that reads request tags")
	}
	if policy.NeedsObjectTags() {
		t.Error("NeedsObjectTags() = true for a policy reading only request tags")
	}
	req := func(action, key string, tags ...string) Request {
		r := Request{Action: action, Resource: "arn:aws:s3:::site/" + key, Anonymous: true}
		for i := 0; i+1 < len(tags); i += 2 {
			if r.RequestTags == nil {
				r.RequestTags = map[string][]string{}
			}
			k := strings.ToLower(tags[i])
			r.RequestTags[k] = append(r.RequestTags[k], tags[i+1])
			r.RequestTagKeys = append(r.RequestTagKeys, tags[i])
		}
		return r
	}
	for _, tc := range []struct {
		name string
		req  Request
		want Decision
	}{
		{"a Project tag of an allowed value", req("s3:PutObject", "a", "Project", "blue"), Allowed},
		{"with an Owner tag too", req("s3:PutObject", "a", "Project", "green", "Owner", "ann"), Allowed},
		{"a Project tag of another value", req("s3:PutObject", "a", "Project", "red"), None},
		{"the tag key matched whatever its case", req("s3:PutObject", "a", "project", "blue"), None}, // the key list is case-sensitive
		{"a tag of another key besides", req("s3:PutObject", "a", "Project", "blue", "Cost", "1"), None},
		{"no tags", req("s3:PutObject", "a"), None},
		{"ForAnyValue: one key matches", req("s3:PutObjectTagging", "a", "Project", "blue", "secret-level", "2"), Denied},
		{"ForAnyValue: none matches", req("s3:PutObjectTagging", "a", "Project", "blue"), None},
		{"ForAnyValue: no tags", req("s3:PutObjectTagging", "a"), None},
		{"ForAllValues negated: every key is not Owner", req("s3:PutObject", "locked/a", "Project", "blue"), Denied},
		{"ForAllValues negated: one key is Owner", req("s3:PutObject", "locked/a", "Project", "blue", "Owner", "ann"), Allowed},
		{"ForAllValues negated: no tags holds vacuously", req("s3:PutObject", "locked/a"), Denied},
	} {
		if got := policy.Evaluate(tc.req); got != tc.want {
			t.Errorf("%s: Evaluate = %v, want %v", tc.name, got, tc.want)
		}
	}

	// IfExists on ForAnyValue: a request without tags passes.
	ifExists := mustParse(t, `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*",
		"Condition":{"ForAnyValue:StringEqualsIfExists":{"s3:RequestObjectTagKeys":"Project"}}}}`)
	if got := ifExists.Evaluate(req("s3:PutObject", "a")); got != Allowed {
		t.Errorf("ForAnyValue…IfExists without tags: %v, want Allowed", got)
	}
	if got := ifExists.Evaluate(req("s3:PutObject", "a", "Other", "x")); got != None {
		t.Errorf("ForAnyValue…IfExists with another key: %v, want None", got)
	}
	// ForAnyValue with a negated operator: one key outside the list.
	anyOther := mustParse(t, `{"Statement":{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*",
		"Condition":{"ForAnyValue:StringNotEquals":{"s3:RequestObjectTagKeys":["Project","Owner"]}}}}`)
	for _, tc := range []struct {
		name string
		req  Request
		want Decision
	}{
		{"every key listed", req("s3:PutObject", "a", "Project", "x", "Owner", "y"), None},
		{"one key not listed", req("s3:PutObject", "a", "Project", "x", "Cost", "1"), Denied},
		{"no tags", req("s3:PutObject", "a"), None},
	} {
		if got := anyOther.Evaluate(tc.req); got != tc.want {
			t.Errorf("ForAnyValue:StringNotEquals, %s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// ForAllValues with IfExists holds without tags, as ForAllValues does.
	allIf := mustParse(t, `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*",
		"Condition":{"ForAllValues:StringLikeIfExists":{"s3:RequestObjectTagKeys":"p*"}}}}`)
	if allIf.Evaluate(req("s3:PutObject", "a")) != Allowed || allIf.Evaluate(req("s3:PutObject", "a", "pa", "1", "pb", "2")) != Allowed ||
		allIf.Evaluate(req("s3:PutObject", "a", "pa", "1", "q", "2")) != None {
		t.Error("ForAllValues:StringLikeIfExists: want Allowed without tags or with every key p*, None with another")
	}
	// A set operator on a single-valued key takes its value as a set of one.
	single := mustParse(t, `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::site",
		"Condition":{"ForAnyValue:StringLike":{"s3:prefix":["public/*","shared/*"]}}}}`)
	list := Request{Action: "s3:ListBucket", Resource: "arn:aws:s3:::site", Anonymous: true, Values: map[string]string{"s3:prefix": "shared/x"}}
	if got := single.Evaluate(list); got != Allowed {
		t.Errorf("ForAnyValue on s3:prefix: %v, want Allowed", got)
	}
	// Null tells whether the request sets tags.
	untagged := mustParse(t, `{"Statement":{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*",
		"Condition":{"Null":{"s3:RequestObjectTagKeys":"true"}}}}`)
	if untagged.Evaluate(req("s3:PutObject", "a")) != Denied || untagged.Evaluate(req("s3:PutObject", "a", "k", "v")) != None {
		t.Error("Null on s3:RequestObjectTagKeys does not tell a request with tags from one without")
	}
}

func TestRequestTagsParseRefuses(t *testing.T) {
	cond := func(c string) string {
		return `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*","Condition":` + c + `}}`
	}
	for _, tc := range []struct {
		name, doc string
		want      error
	}{
		{"a request tag key without a tag", cond(`{"StringEquals":{"s3:RequestObjectTag/":"x"}}`), ErrMalformed},
		{"a request tag with a Bool", cond(`{"Bool":{"s3:RequestObjectTag/a":"true"}}`), ErrMalformed},
		{"the tag keys without a set operator", cond(`{"StringEquals":{"s3:RequestObjectTagKeys":"a"}}`), ErrUnsupported},
		{"a set form of a Numeric operator", cond(`{"ForAnyValue:NumericLessThan":{"s3:max-keys":"10"}}`), ErrUnsupported},
		{"a set form of an Arn operator", cond(`{"ForAnyValue:ArnLike":{"aws:PrincipalArn":"arn:*"}}`), ErrUnsupported},
		{"a set operator on SourceIp", cond(`{"ForAnyValue:StringEquals":{"aws:SourceIp":"10.0.0.1"}}`), ErrMalformed},
		{"a set operator on an unknown key", cond(`{"ForAllValues:StringEquals":{"colour":"blue"}}`), ErrMalformed},
		{"a set operator on an unsupported key", cond(`{"ForAllValues:StringEquals":{"aws:TagKeys":"a"}}`), ErrUnsupported},
		{"an unknown qualifier", cond(`{"ForSomeValues:StringEquals":{"s3:prefix":"a"}}`), ErrMalformed},
		{"a set form of an unknown operator", cond(`{"ForAnyValue:StringSortOf":{"s3:prefix":"a"}}`), ErrMalformed},
	} {
		if _, err := Parse([]byte(tc.doc), "site"); !errors.Is(err, tc.want) {
			t.Errorf("%s: Parse = %v, want %v", tc.name, err, tc.want)
		}
	}
}
