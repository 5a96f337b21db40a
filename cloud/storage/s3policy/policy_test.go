package s3policy

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

const key = "LKAAAAAAAAAAAAAAAAAA" // an access key id of alice's
const other = "LKBBBBBBBBBBBBBBBBBB"

func TestParseRefuses(t *testing.T) {
	stmt := func(s string) string { return `{"Version":"2012-10-17","Statement":[` + s + `]}` }
	ok := `"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"`
	for _, tc := range []struct {
		name, doc string
		want      error
	}{
		{"not JSON", `{`, ErrMalformed},
		{"trailing data", stmt(`{`+ok+`}`) + `{}`, ErrMalformed},
		// A key given twice: a reader of the first would see another
		// policy than the one the map of the last enforces.
		{"Effect twice", stmt(`{"Effect":"Deny",` + ok + `}`), ErrMalformed},
		{"Statement twice", `{"Version":"2012-10-17","Statement":[{` + ok + `}],"Statement":[]}`, ErrMalformed},
		{"a condition key twice", stmt(`{` + ok + `,"Condition":{"StringEquals":{"aws:Referer":"a","aws:Referer":"b"}}}`), ErrMalformed},
		{"a list", `[]`, ErrMalformed},
		{"null", `null`, ErrMalformed},
		{"bad version", `{"Version":"2020-01-01","Statement":{` + ok + `}}`, ErrMalformed},
		{"unknown element", `{"Version":"2012-10-17","Statment":{` + ok + `}}`, ErrMalformed},
		{"no statement", `{"Version":"2012-10-17"}`, ErrMalformed},
		{"empty statement list", stmt(``), ErrMalformed},
		{"statement not an object", stmt(`"x"`), ErrMalformed},
		{"no effect", stmt(`{"Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"bad effect", stmt(`{"Effect":"allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"no principal", stmt(`{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"principal not *", stmt(`{"Effect":"Allow","Principal":"bob","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"bad key id", stmt(`{"Effect":"Allow","Principal":{"AWS":"AKIA123"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"bad arn", stmt(`{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::alice:group/x"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"unknown principal type", stmt(`{"Effect":"Allow","Principal":{"Robot":"*"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"federated principal", stmt(`{"Effect":"Allow","Principal":{"Federated":"accounts.google.com"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}`), ErrUnsupported},
		{"not a service", stmt(`{"Effect":"Allow","Principal":{"Service":"logging.example.com"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"bad canonical user", stmt(`{"Effect":"Allow","Principal":{"CanonicalUser":"a b"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"Principal and NotPrincipal", stmt(`{"Effect":"Deny","Principal":"*","NotPrincipal":{"AWS":"*"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"no action", stmt(`{"Effect":"Allow","Principal":"*","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"Action and NotAction", stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","NotAction":"s3:PutObject","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"other service's action", stmt(`{"Effect":"Allow","Principal":"*","Action":"ec2:RunInstances","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"unknown action", stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObjekt","Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"empty action list", stmt(`{"Effect":"Allow","Principal":"*","Action":[],"Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"action a number", stmt(`{"Effect":"Allow","Principal":"*","Action":3,"Resource":"arn:aws:s3:::site/*"}`), ErrMalformed},
		{"no resource", stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject"}`), ErrMalformed},
		{"another bucket", stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::other/*"}`), ErrMalformed},
		{"a bucket prefix", stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site*"}`), ErrMalformed},
		{"resource *", stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"*"}`), ErrMalformed},
		{"one of two resources another bucket's", stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":["arn:aws:s3:::site/*","arn:aws:s3:::sites/*"]}`), ErrMalformed},
		{"policy variable of a date", stmt(`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/${aws:CurrentTime}/*"}`), ErrUnsupported},
		{"duplicate sid", stmt(`{"Sid":"a",` + ok + `},{"Sid":"a",` + ok + `}`), ErrMalformed},
		{"unknown statement element", stmt(`{"Efect":"Allow",` + ok + `}`), ErrMalformed},
		{"unknown operator", stmt(`{` + ok + `,"Condition":{"StringSortOf":{"s3:prefix":"a"}}}`), ErrMalformed},
		{"a Numeric operator on a key it does not evaluate", stmt(`{` + ok + `,"Condition":{"NumericLessThan":{"aws:MultiFactorAuthAge":"10"}}}`), ErrUnsupported},
		{"a Numeric operator on a string key", stmt(`{` + ok + `,"Condition":{"NumericLessThan":{"s3:prefix":"10"}}}`), ErrMalformed},
		{"a String operator on s3:max-keys", stmt(`{` + ok + `,"Condition":{"StringEquals":{"s3:max-keys":"10"}}}`), ErrMalformed},
		{"a Numeric value not a number", stmt(`{` + ok + `,"Condition":{"NumericLessThan":{"s3:max-keys":"ten"}}}`), ErrMalformed},
		{"a Date value not a date", stmt(`{` + ok + `,"Condition":{"DateLessThan":{"aws:CurrentTime":"tomorrow"}}}`), ErrMalformed},
		{"a Date operator on s3:max-keys", stmt(`{` + ok + `,"Condition":{"DateLessThan":{"s3:max-keys":"2030-01-01"}}}`), ErrMalformed},
		{"a Numeric operator on s3:object-lock-mode", stmt(`{` + ok + `,"Condition":{"NumericLessThan":{"s3:object-lock-mode":"1"}}}`), ErrMalformed},
		{"a String operator on the remaining retention days", stmt(`{` + ok + `,"Condition":{"StringEquals":{"s3:object-lock-remaining-retention-days":"10"}}}`), ErrMalformed},
		{"remaining retention days not a number", stmt(`{` + ok + `,"Condition":{"NumericGreaterThan":{"s3:object-lock-remaining-retention-days":"ten"}}}`), ErrMalformed},
		{"a Numeric operator on the retain-until date", stmt(`{` + ok + `,"Condition":{"NumericGreaterThan":{"s3:object-lock-retain-until-date":"10"}}}`), ErrMalformed},
		{"a retain-until date not a date", stmt(`{` + ok + `,"Condition":{"DateGreaterThan":{"s3:object-lock-retain-until-date":"next year"}}}`), ErrMalformed},
		{"unsupported key", stmt(`{` + ok + `,"Condition":{"StringEquals":{"aws:PrincipalOrgID":"o-1"}}}`), ErrUnsupported},
		{"an object tag key without a tag", stmt(`{` + ok + `,"Condition":{"StringEquals":{"s3:ExistingObjectTag/":"x"}}}`), ErrMalformed},
		{"an object tag key with a Bool", stmt(`{` + ok + `,"Condition":{"Bool":{"s3:ExistingObjectTag/a":"true"}}}`), ErrMalformed},
		{"unknown key", stmt(`{` + ok + `,"Condition":{"StringEquals":{"colour":"blue"}}}`), ErrMalformed},
		{"bad bool", stmt(`{` + ok + `,"Condition":{"Bool":{"aws:SecureTransport":"maybe"}}}`), ErrMalformed},
		{"bool op on a string key", stmt(`{` + ok + `,"Condition":{"Bool":{"s3:prefix":"true"}}}`), ErrMalformed},
		{"bad CIDR", stmt(`{` + ok + `,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/33"}}}`), ErrMalformed},
		{"string op on SourceIp", stmt(`{` + ok + `,"Condition":{"StringEquals":{"aws:SourceIp":"10.0.0.1"}}}`), ErrMalformed},
		{"empty operator", stmt(`{` + ok + `,"Condition":{"StringEquals":{}}}`), ErrMalformed},
		{"Null not a boolean", stmt(`{` + ok + `,"Condition":{"Null":{"s3:x-amz-server-side-encryption":"yes"}}}`), ErrMalformed},
		{"Null of an unsupported key", stmt(`{` + ok + `,"Condition":{"Null":{"aws:PrincipalOrgID":"true"}}}`), ErrUnsupported},
		{"Null of an unknown key", stmt(`{` + ok + `,"Condition":{"Null":{"colour":"true"}}}`), ErrMalformed},
		{"an Arn operator on a string key", stmt(`{` + ok + `,"Condition":{"ArnLike":{"aws:UserAgent":"arn:*"}}}`), ErrMalformed},
		{"IfExists of a String operator on SourceIp", stmt(`{` + ok + `,"Condition":{"StringEqualsIfExists":{"aws:SourceIp":"10.0.0.1"}}}`), ErrMalformed},
		{"an unsupported key under IfExists", stmt(`{` + ok + `,"Condition":{"NumericLessThanIfExists":{"aws:MultiFactorAuthAge":"10"}}}`), ErrUnsupported},
		{"condition a list", stmt(`{` + ok + `,"Condition":[]}`), ErrMalformed},
		{"too large", `{"Id":"` + strings.Repeat("x", MaxSize) + `"}`, ErrMalformed},
		{"invalid UTF-8", "{\"Id\":\"\xff\"}", ErrMalformed},
	} {
		if _, err := Parse([]byte(tc.doc), "site"); !errors.Is(err, tc.want) {
			t.Errorf("%s: Parse(%.80s) = %v, want %v", tc.name, tc.doc, err, tc.want)
		}
	}
}

func mustParse(t *testing.T, doc string) *Policy {
	t.Helper()
	p, err := Parse([]byte(doc), "site")
	if err != nil {
		t.Fatalf("Parse(%s): %v", doc, err)
	}
	return p
}

func TestEvaluate(t *testing.T) {
	publicRead := `{"Version":"2012-10-17","Statement":{"Sid":"pub","Effect":"Allow","Principal":{"AWS":"*"},"Action":["s3:GetObject"],"Resource":"arn:aws:s3:::site/public/*"}}`
	listPrefix := `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::site",
		"Condition":{"StringLike":{"s3:prefix":["public/*",""]}}}]}`
	tlsOnly := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:Get*","Resource":"arn:aws:s3:::site/*"},
		{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::site","arn:aws:s3:::site/*"],"Condition":{"Bool":{"aws:SecureTransport":false}}}]}`
	perKey := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","Principal":{"AWS":["` + key + `"]},"Action":["s3:DeleteObject","s3:PutObject"],"Resource":"arn:aws:s3:::site/*"},
		{"Effect":"Deny","Principal":{"AWS":"arn:aws:iam::alice:user/` + other + `"},"NotAction":"s3:GetObject","Resource":"arn:aws:s3:::site/*"},
		{"Effect":"Deny","Principal":{"AWS":"arn:aws:iam::bob:root"},"Action":"*","NotResource":"arn:aws:s3:::site/bob/*"}]}`
	ipOnly := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","2001:db8::/32"]}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"},"StringNotLike":{"aws:UserAgent":"*monitor*"}}}]}`

	encrypted := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*","Condition":{"StringNotEqualsIfExists":{"s3:x-amz-server-side-encryption":"AES256"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/strict/*","Condition":{"Null":{"s3:x-amz-server-side-encryption":"true"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*","Condition":{"StringEquals":{"s3:x-amz-metadata-directive":"REPLACE"},"StringLike":{"s3:x-amz-copy-source":"site/locked/*"}}}]}`
	notPrincipal := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","NotPrincipal":{"AWS":["arn:aws:iam::alice:root"]},"Action":"s3:*","Resource":"arn:aws:s3:::site/*"},
		{"Effect":"Allow","Principal":{"Service":"logging.s3.amazonaws.com"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*"},
		{"Effect":"Allow","Principal":{"CanonicalUser":"bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}]}`
	canonical := `{"Statement":{"Effect":"Deny","Principal":{"CanonicalUser":"bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}}`
	arns := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::site/*","Condition":{"ArnNotLike":{"aws:PrincipalArn":"arn:aws:iam::alice:user/` + key + `"}}},
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::bob:*"}}}]}`

	tagged := `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"StringEquals":{"s3:ExistingObjectTag/Classification":"public"}}}}`
	notTagged := `{"Statement":{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"StringNotEquals":{"s3:ExistingObjectTag/Classification":"public"}}}}`
	notPrincipalAllow := `{"Statement":{"Effect":"Allow","NotPrincipal":{"AWS":"arn:aws:iam::bob:root"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}}`
	nullFalse := `{"Statement":{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*","Condition":{"Null":{"s3:x-amz-server-side-encryption":"False"}}}}`
	// As AWS documents it for server access log delivery.
	logDelivery := `{"Version":"2012-10-17","Statement":[{"Sid":"S3ServerAccessLogsPolicy","Effect":"Allow","Principal":{"Service":"logging.s3.amazonaws.com"},
		"Action":["s3:PutObject"],"Resource":"arn:aws:s3:::site/logs*","Condition":{"ArnLike":{"aws:SourceArn":"arn:aws:s3:::source-bucket"},"StringEquals":{"aws:SourceAccount":"alice"}}}]}`
	ifExists := `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"StringLikeIfExists":{"aws:Referer":"https://example.com/*"}}}}`
	// Pages of at most 100 for everyone (a number written as JSON's);
	// a page size above 1000, or none asked for, refused (IfExists holds
	// when the key is absent).
	maxKeys := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::site","Condition":{"NumericLessThanEquals":{"s3:max-keys":100}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::site","Condition":{"NumericGreaterThanIfExists":{"s3:max-keys":"1000"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:ListBucketVersions","Resource":"arn:aws:s3:::site","Condition":{"NumericNotEquals":{"s3:max-keys":["10","20"]}}}]}`
	// Reads only inside a window of time, as AWS's examples write one.
	window := `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*",
		"Condition":{"DateGreaterThan":{"aws:CurrentTime":"2026-01-01T00:00:00Z"},"DateLessThan":{"aws:EpochTime":"1893456000"}}}}`
	at := func(day string) func(*Request) {
		return func(r *Request) { r.Time, _ = time.Parse(time.DateOnly, day) }
	}
	listing := func(n string) func(*Request) {
		return func(r *Request) {
			if n != "" {
				r.Values = map[string]string{"s3:max-keys": n}
			}
		}
	}

	anon := func(action, res string) Request {
		return Request{Action: action, Resource: res, Anonymous: true, SourceIP: netip.MustParseAddr("192.0.2.1")}
	}
	signed := func(id, account, action, res string) Request {
		return Request{Action: action, Resource: res, AccessKeyID: id, Account: account, SecureTransport: true}
	}
	with := func(r Request, edit func(*Request)) Request { edit(&r); return r }
	for _, tc := range []struct {
		name, policy string
		req          Request
		want         Decision
	}{
		{"public prefix, anonymous GetObject", publicRead, anon("s3:GetObject", "arn:aws:s3:::site/public/a.txt"), Allowed},
		{"public prefix, action case-insensitive", publicRead, anon("S3:GETOBJECT", "arn:aws:s3:::site/public/a.txt"), Allowed},
		{"public prefix, another prefix", publicRead, anon("s3:GetObject", "arn:aws:s3:::site/private/a.txt"), None},
		{"public prefix, resource case-sensitive", publicRead, anon("s3:GetObject", "arn:aws:s3:::site/PUBLIC/a.txt"), None},
		{"public prefix, another action", publicRead, anon("s3:PutObject", "arn:aws:s3:::site/public/a.txt"), None},
		{"public prefix, a signed request too", publicRead, signed(key, "alice", "s3:GetObject", "arn:aws:s3:::site/public/a"), Allowed},
		{"list with an allowed prefix", listPrefix, with(anon("s3:ListBucket", "arn:aws:s3:::site"), func(r *Request) { r.Values = map[string]string{"s3:prefix": "public/x"} }), Allowed},
		{"list with the empty prefix", listPrefix, with(anon("s3:ListBucket", "arn:aws:s3:::site"), func(r *Request) { r.Values = map[string]string{"s3:prefix": ""} }), Allowed},
		{"list with another prefix", listPrefix, with(anon("s3:ListBucket", "arn:aws:s3:::site"), func(r *Request) { r.Values = map[string]string{"s3:prefix": "private/"} }), None},
		{"list without the key", listPrefix, anon("s3:ListBucket", "arn:aws:s3:::site"), None},
		{"TLS only, over TLS", tlsOnly, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), func(r *Request) { r.SecureTransport = true }), Allowed},
		{"TLS only, plain", tlsOnly, anon("s3:GetObject", "arn:aws:s3:::site/a"), Denied},
		{"TLS only, a plain signed write", tlsOnly, with(signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/a"), func(r *Request) { r.SecureTransport = false }), Denied},
		{"TLS only, a plain bucket request", tlsOnly, with(signed(key, "alice", "s3:ListBucket", "arn:aws:s3:::site"), func(r *Request) { r.SecureTransport = false }), Denied},
		{"TLS only, a signed write over TLS", tlsOnly, signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/a"), None},
		{"per key, the key's write", perKey, signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/a"), Denied},
		{"per key, the key's read", perKey, signed(key, "alice", "s3:GetObject", "arn:aws:s3:::site/a"), None},
		{"per key, another key's write", perKey, signed("LKCCCCCCCCCCCCCCCCCC", "alice", "s3:PutObject", "arn:aws:s3:::site/a"), None},
		{"per key, anonymous", perKey, anon("s3:PutObject", "arn:aws:s3:::site/a"), None},
		{"per key ARN, NotAction", perKey, signed(other, "alice", "s3:DeleteObject", "arn:aws:s3:::site/a"), Denied},
		{"per key ARN, the action excepted", perKey, signed(other, "alice", "s3:GetObject", "arn:aws:s3:::site/a"), None},
		{"per key ARN, another account's key of that id", perKey, signed(other, "mallory", "s3:DeleteObject", "arn:aws:s3:::site/a"), None},
		{"account root, outside NotResource", perKey, signed("LKDDDDDDDDDDDDDDDDDD", "bob", "s3:GetObject", "arn:aws:s3:::site/a"), Denied},
		{"account root, inside NotResource", perKey, signed("LKDDDDDDDDDDDDDDDDDD", "bob", "s3:GetObject", "arn:aws:s3:::site/bob/a"), None},
		{"source IP in range", ipOnly, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), func(r *Request) { r.SourceIP = netip.MustParseAddr("10.1.2.3") }), Allowed},
		{"source IPv6 in range", ipOnly, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), func(r *Request) { r.SourceIP = netip.MustParseAddr("2001:db8::1") }), Denied},
		{"source IPv4-mapped in range", ipOnly, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), func(r *Request) { r.SourceIP = netip.MustParseAddr("::ffff:10.0.0.1") }), Allowed},
		{"source IP out of range", ipOnly, anon("s3:GetObject", "arn:aws:s3:::site/a"), Denied},
		{"source IP out of range, a monitor", ipOnly, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), func(r *Request) {
			r.Values = map[string]string{"aws:useragent": "uptime-monitor/1"}
		}), None},
		{"source IP unknown", ipOnly, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), func(r *Request) { r.SourceIP = netip.Addr{} }), None},
		{"SSE header AES256", encrypted, with(signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/a"), func(r *Request) {
			r.Values = map[string]string{"s3:x-amz-server-side-encryption": "AES256"}
		}), None},
		{"SSE header another value", encrypted, with(signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/a"), func(r *Request) {
			r.Values = map[string]string{"s3:x-amz-server-side-encryption": "aws:kms"}
		}), Denied},
		// IfExists matches a request without the key; so does a negated
		// operator without it, as in IAM.
		{"no SSE header, IfExists", encrypted, signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/a"), Denied},
		{"no SSE header, Null", encrypted, signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/strict/a"), Denied},
		{"a copy replacing metadata from a locked prefix", encrypted, with(signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/b"), func(r *Request) {
			r.Values = map[string]string{"s3:x-amz-metadata-directive": "REPLACE", "s3:x-amz-copy-source": "site/locked/a"}
		}), Denied},
		{"a copy keeping metadata", encrypted, with(signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/b"), func(r *Request) {
			r.Values = map[string]string{"s3:x-amz-copy-source": "site/locked/a", "s3:x-amz-server-side-encryption": "AES256"}
		}), None},
		{"IfExists, no referer", ifExists, anon("s3:GetObject", "arn:aws:s3:::site/a"), Allowed},
		{"an object tagged public", tagged, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), func(r *Request) {
			r.ObjectTags = map[string][]string{"classification": {"public"}}
		}), Allowed},
		{"an object tagged otherwise", tagged, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), func(r *Request) {
			r.ObjectTags = map[string][]string{"classification": {"secret"}}
		}), None},
		{"tag keys in two cases, one matching", tagged, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), func(r *Request) {
			r.ObjectTags = map[string][]string{"classification": {"secret", "public"}}
		}), Allowed},
		{"tag keys in two cases, a negated operator", notTagged, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), func(r *Request) {
			r.ObjectTags = map[string][]string{"classification": {"secret", "public"}}
		}), None},
		{"tag keys in two cases, a negated operator, none matching", notTagged, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), func(r *Request) {
			r.ObjectTags = map[string][]string{"classification": {"secret", "internal"}}
		}), Denied},
		{"NotPrincipal Allow, anonymous", notPrincipalAllow, anon("s3:GetObject", "arn:aws:s3:::site/a"), Allowed},
		{"NotPrincipal Allow, the account excepted", notPrincipalAllow, signed(key, "bob", "s3:GetObject", "arn:aws:s3:::site/a"), None},
		{"Null false, the key present", nullFalse, with(signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/a"), func(r *Request) {
			r.Values = map[string]string{"s3:x-amz-server-side-encryption": "aws:kms"}
		}), Denied},
		{"Null false, the key absent", nullFalse, signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/a"), None},
		{"AWS's log delivery grant applies to no request", logDelivery, signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/logs/a"), None},
		{"an object without the tag", tagged, anon("s3:GetObject", "arn:aws:s3:::site/a"), None},
		{"IfExists, the referer allowed", ifExists, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), func(r *Request) {
			r.Values = map[string]string{"aws:referer": "https://example.com/page"}
		}), Allowed},
		{"IfExists, another referer", ifExists, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), func(r *Request) {
			r.Values = map[string]string{"aws:referer": "https://elsewhere.test/"}
		}), None},
		{"NotPrincipal, the account named", notPrincipal, signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/a"), None},
		{"NotPrincipal, another account", notPrincipal, signed(other, "mallory", "s3:PutObject", "arn:aws:s3:::site/a"), Denied},
		{"NotPrincipal, anonymous", notPrincipal, anon("s3:GetObject", "arn:aws:s3:::site/a"), Denied},
		{"a service principal applies to no request", notPrincipal, signed(key, "alice", "s3:PutObject", "arn:aws:s3:::site/a"), None},
		{"canonical user", canonical, signed(other, "bob", "s3:GetObject", "arn:aws:s3:::site/a"), Denied},
		{"canonical user, another account", canonical, signed(other, "carol", "s3:GetObject", "arn:aws:s3:::site/a"), None},
		{"PrincipalArn, the key named", arns, signed(key, "alice", "s3:DeleteObject", "arn:aws:s3:::site/a"), None},
		{"PrincipalArn, another key", arns, signed(other, "alice", "s3:DeleteObject", "arn:aws:s3:::site/a"), Denied},
		{"PrincipalArn, anonymous (absent: a negated operator holds)", arns, anon("s3:DeleteObject", "arn:aws:s3:::site/a"), Denied},
		{"PrincipalArn like an account's", arns, signed(other, "bob", "s3:GetObject", "arn:aws:s3:::site/a"), Allowed},
		{"PrincipalArn like, another account", arns, signed(other, "carol", "s3:GetObject", "arn:aws:s3:::site/a"), None},
		{"max-keys under the limit", maxKeys, with(anon("s3:ListBucket", "arn:aws:s3:::site"), listing("50")), Allowed},
		{"max-keys at the limit", maxKeys, with(anon("s3:ListBucket", "arn:aws:s3:::site"), listing("100")), Allowed},
		{"max-keys over the limit", maxKeys, with(anon("s3:ListBucket", "arn:aws:s3:::site"), listing("101")), None},
		{"max-keys over the Deny's", maxKeys, with(anon("s3:ListBucket", "arn:aws:s3:::site"), listing("5000")), Denied},
		{"max-keys absent: the Allow does not hold, the IfExists Deny does", maxKeys, with(anon("s3:ListBucket", "arn:aws:s3:::site"), listing("")), Denied},
		{"max-keys not a number matches no value", maxKeys, with(anon("s3:ListBucket", "arn:aws:s3:::site"), listing("ten")), None},
		{"NumericNotEquals, one of the values", maxKeys, with(anon("s3:ListBucketVersions", "arn:aws:s3:::site"), listing("20")), None},
		{"NumericNotEquals, none of them", maxKeys, with(anon("s3:ListBucketVersions", "arn:aws:s3:::site"), listing("30")), Denied},
		{"NumericNotEquals, the key absent", maxKeys, anon("s3:ListBucketVersions", "arn:aws:s3:::site"), Denied},
		{"inside the window", window, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), at("2027-06-01")), Allowed},
		{"before the window", window, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), at("2025-12-31")), None},
		{"after the window", window, with(anon("s3:GetObject", "arn:aws:s3:::site/a"), at("2030-01-02")), None},
		{"no time known", window, anon("s3:GetObject", "arn:aws:s3:::site/a"), None},
	} {
		p := mustParse(t, tc.policy)
		if got := p.Evaluate(tc.req); got != tc.want {
			t.Errorf("%s: Evaluate(%+v) = %v, want %v", tc.name, tc.req, got, tc.want)
		}
	}
}

// TestLockKeys: the Object Lock condition keys, each with the operators
// of its type, on the values the S3 endpoint gives them (a date in epoch
// seconds to the millisecond); absent keys as IAM treats them.
func TestLockKeys(t *testing.T) {
	p := mustParse(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Deny","Principal":"*","Action":["s3:PutObject","s3:PutObjectRetention"],"Resource":"arn:aws:s3:::site/cap/*","Condition":{"NumericGreaterThan":{"s3:object-lock-remaining-retention-days":"10"}}},
		{"Effect":"Deny","Principal":"*","Action":["s3:PutObject","s3:PutObjectRetention"],"Resource":"arn:aws:s3:::site/gov/*","Condition":{"StringEquals":{"s3:object-lock-mode":"COMPLIANCE"}}},
		{"Effect":"Deny","Principal":"*","Action":["s3:PutObject","s3:PutObjectLegalHold"],"Resource":"arn:aws:s3:::site/nohold/*","Condition":{"StringEquals":{"s3:object-lock-legal-hold":"ON"}}},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/date/*","Condition":{"DateGreaterThan":{"s3:object-lock-retain-until-date":"2030-01-01T00:00:00Z"}}},
		{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/min/*","Condition":{"NumericGreaterThanEquals":{"s3:object-lock-remaining-retention-days":"365"}}}]}`)
	if !p.NeedsLockKeys() {
		t.Fatal("NeedsLockKeys: false for a policy that reads them")
	}
	if mustParse(t, `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}}`).NeedsLockKeys() {
		t.Fatal("NeedsLockKeys: true for a policy without conditions")
	}
	jan1 := "1893456000" // 2030-01-01T00:00:00Z
	for _, tc := range []struct {
		name, action, key string
		values            map[string]string
		want              Decision
	}{
		{"10 days", "s3:PutObjectRetention", "cap/a", map[string]string{LockRemainingDaysKey: "10"}, None},
		{"11 days", "s3:PutObjectRetention", "cap/a", map[string]string{LockRemainingDaysKey: "11"}, Denied},
		{"no retention asked", "s3:PutObject", "cap/a", map[string]string{}, None},
		{"GOVERNANCE under gov/", "s3:PutObject", "gov/a", map[string]string{LockModeKey: "GOVERNANCE"}, None},
		{"COMPLIANCE under gov/", "s3:PutObject", "gov/a", map[string]string{LockModeKey: "COMPLIANCE"}, Denied},
		{"a legal hold under nohold/", "s3:PutObjectLegalHold", "nohold/a", map[string]string{LockLegalHoldKey: "ON"}, Denied},
		{"a hold lifted under nohold/", "s3:PutObjectLegalHold", "nohold/a", map[string]string{LockLegalHoldKey: "OFF"}, None},
		{"until the date itself", "s3:PutObject", "date/a", map[string]string{LockRetainUntilKey: jan1}, None},
		{"a millisecond past the date", "s3:PutObject", "date/a", map[string]string{LockRetainUntilKey: jan1 + ".001"}, Denied},
		{"a year's minimum met", "s3:PutObject", "min/a", map[string]string{LockRemainingDaysKey: "365"}, Allowed},
		{"a year's minimum short", "s3:PutObject", "min/a", map[string]string{LockRemainingDaysKey: "364"}, None},
		{"a minimum without a retention", "s3:PutObject", "min/a", map[string]string{}, None},
	} {
		r := Request{Action: tc.action, Resource: Resource("site", tc.key), Anonymous: true, Values: tc.values}
		if got := p.Evaluate(r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPublic(t *testing.T) {
	for _, tc := range []struct {
		name, policy string
		want         bool
	}{
		{"everyone reads", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}}`, true},
		{"everyone, with a prefix condition", `{"Statement":{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::site","Condition":{"StringLike":{"s3:prefix":"a*"}}}}`, true},
		{"everyone from fixed addresses", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}}`, false},
		{"one key", `{"Statement":{"Effect":"Allow","Principal":{"AWS":"` + key + `"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}}`, false},
		{"everyone denied", `{"Statement":{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::site/*"}}`, false},
		{"everyone but one account", `{"Statement":{"Effect":"Allow","NotPrincipal":{"AWS":"arn:aws:iam::bob:root"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}}`, true},
		{"a service", `{"Statement":{"Effect":"Allow","Principal":{"Service":"logging.s3.amazonaws.com"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*"}}`, false},
		{"everyone from every address", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","0.0.0.0/0"]}}}}`, true},
		{"everyone, for a fixed source", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*","Condition":{"ArnEquals":{"aws:SourceArn":"arn:aws:s3:::logs"}}}}`, false},
		{"everyone, for a fixed account", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"StringEquals":{"aws:SourceAccount":"alice"}}}}`, false},
		{"everyone, a principal ARN fixed", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::bob:user/LKAAAAAAAAAAAAAAAAAA"}}}}`, false},
		{"everyone, a principal ARN with a wildcard", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::*:user/*"}}}}`, true},
		{"everyone, a fixed source only if present", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"StringEqualsIfExists":{"aws:SourceAccount":"alice"}}}}`, true},
		{"everyone, in a fixed principal account", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"StringEquals":{"aws:PrincipalAccount":"bob"}}}}`, false},
		{"everyone, all but one source", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"StringNotEquals":{"aws:SourceAccount":"mallory"}}}}`, true},
	} {
		if got := mustParse(t, tc.policy).Public(); got != tc.want {
			t.Errorf("%s: Public() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestNeedsObjectTags(t *testing.T) {
	if mustParse(t, `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}}`).NeedsObjectTags() {
		t.Error("a policy without tag conditions needs object tags")
	}
	if !mustParse(t, `{"Statement":{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::site/*","Condition":{"Null":{"s3:ExistingObjectTag/keep":"false"}}}}`).NeedsObjectTags() {
		t.Error("a policy with a Null of a tag does not need object tags")
	}
}

func TestGrants(t *testing.T) {
	p := mustParse(t, `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:Get*","Resource":"arn:aws:s3:::site/*"},
		{"Effect":"Allow","Principal":{"AWS":"`+key+`"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*"}]}`)
	for action, want := range map[string]bool{"s3:GetObject": true, "s3:GetBucketAcl": true, "s3:PutObject": false, "s3:DeleteObject": false} {
		if got := p.Grants(action); got != want {
			t.Errorf("Grants(%s) = %v, want %v", action, got, want)
		}
	}
	// Everyone but one account, anonymous requests included; a service
	// makes no requests.
	p = mustParse(t, `{"Statement":[{"Effect":"Allow","NotPrincipal":{"AWS":"arn:aws:iam::bob:root"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::site/*"},
		{"Effect":"Allow","Principal":{"Service":"logging.s3.amazonaws.com"},"Action":"s3:DeleteObject","Resource":"arn:aws:s3:::site/*"}]}`)
	if !p.Grants("s3:PutObject") || p.Grants("s3:DeleteObject") {
		t.Errorf("Grants with NotPrincipal and a service: PutObject %v, DeleteObject %v", p.Grants("s3:PutObject"), p.Grants("s3:DeleteObject"))
	}
}

func TestMatchARN(t *testing.T) {
	for _, tc := range []struct {
		pattern, arn string
		want         bool
	}{
		{"arn:aws:iam::alice:user/LK1", "arn:aws:iam::alice:user/LK1", true},
		{"arn:aws:iam::*:user/LK1", "arn:aws:iam::alice:user/LK1", true},
		{"arn:aws:iam::alice:*", "arn:aws:iam::alice:user/LK1", true},
		{"arn:*", "arn:aws:iam::alice:user/LK1", false}, // six parts, each matched apart
		{"arn:aws:iam::ali*", "arn:aws:iam::alice:user/LK1", false},
		{"arn:aws:iam::alice:user/*", "arn:aws:iam::bob:user/LK1", false},
		{"arn:aws:s3:::site/a:b", "arn:aws:s3:::site/a:b", true},
		{"arn:aws:iam::alice:user/LK1", "not an arn", false},
	} {
		if got := matchARN(tc.pattern, nil, tc.arn); got != tc.want {
			t.Errorf("matchARN(%q, %q) = %v, want %v", tc.pattern, tc.arn, got, tc.want)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true}, {"", "a", false}, {"*", "", true}, {"*", "anything", true},
		{"a*", "abc", true}, {"a*c", "abc", true}, {"a*c", "abd", false}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"a?c", "aéc", true}, {"*é", "xxé", true}, {"a**b", "ab", true}, {"*a*a*a*a*b", strings.Repeat("a", 200), false},
		{"public/*", "public/", true}, {"public/*", "public", false}, {"s3:get*", "s3:getobject", true},
		// A * in s is the wildcard's to take: a key named *x is under site/*.
		{"site/*", "site/*x", true}, {"a*b", "a*xb", true}, {"a*", "a*", true}, {"*", "*", true}, {"a?c", "a*c", true},
	} {
		if got := match(tc.pattern, tc.s); got != tc.want {
			t.Errorf("match(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

// FuzzParsePolicy checks that a policy either is refused with one of the
// two errors callers tell apart or parses into statements that keep the
// rules Parse states, and that evaluating it does not panic.
func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(`{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*"}}`), "s3:GetObject", "a")
	f.Add([]byte(`{"Statement":[{"Sid":"x","Effect":"Deny","Principal":{"AWS":["LKAAAAAAAAAAAAAAAAAA","arn:aws:iam::alice:root"]},"NotAction":"s3:Get*","NotResource":"arn:aws:s3:::site/p?*",
		"Condition":{"Bool":{"aws:SecureTransport":false},"IpAddress":{"aws:SourceIp":["10.0.0.0/8","::1"]},"StringNotLike":{"s3:prefix":"*"}}}]}`), "s3:PutObject", "p/q")
	f.Add([]byte(`{"Statement":[]}`), "", "")
	f.Add([]byte(`{"Statement":[{"Effect":"Deny","NotPrincipal":{"AWS":"arn:aws:iam::alice:root","Service":"logging.s3.amazonaws.com","CanonicalUser":"bob"},"Action":"s3:*","Resource":"arn:aws:s3:::site/*",
		"Condition":{"Null":{"s3:x-amz-server-side-encryption":"true"},"ArnNotLike":{"aws:PrincipalArn":"arn:aws:iam::*:user/LK*"},"StringEqualsIfExists":{"s3:x-amz-metadata-directive":"COPY"}}}]}`), "s3:PutObject", "k")
	f.Add([]byte(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::site",
		"Condition":{"NumericLessThanEquals":{"s3:max-keys":[100, "2.5e1"]},"DateGreaterThanIfExists":{"aws:CurrentTime":["2026-01-01","1700000000"]}}}]}`), "s3:ListBucket", "")
	// AWS's example of the tags a request sets.
	f.Add([]byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":["s3:PutObject","s3:PutObjectTagging"],"Resource":"arn:aws:s3:::site/*",
		"Condition":{"StringEquals":{"s3:RequestObjectTag/Project":"blue"},"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["Project","Owner"]},
		"ForAnyValue:StringNotLikeIfExists":{"s3:RequestObjectTagKeys":"secret*"}}}]}`), "s3:PutObject", "Project")
	// A cap on Object Lock retention, as compliance policies write it.
	f.Add([]byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":["s3:PutObject","s3:PutObjectRetention"],"Resource":"arn:aws:s3:::site/*",
		"Condition":{"NumericGreaterThan":{"s3:object-lock-remaining-retention-days":"10"},"StringNotEquals":{"s3:object-lock-mode":"GOVERNANCE"},
		"DateGreaterThanIfExists":{"s3:object-lock-retain-until-date":"2030-01-01"},"Null":{"s3:object-lock-legal-hold":"false"}}}]}`), "s3:PutObjectRetention", "a")
	// Policy variables: a home per key, a default, the escapes.
	f.Add([]byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::site/home/${aws:username}/*","arn:aws:s3:::site/${s3:prefix, 'it''s'}${*}"],
		"Condition":{"StringLike":{"s3:prefix":"${aws:PrincipalAccount}/${?}*"},"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::${aws:PrincipalAccount}:user/${aws:username}"}}}]}`), "s3:GetObject", "home/k/a")
	f.Fuzz(func(t *testing.T, doc []byte, action, key string) {
		p, err := Parse(doc, "site")
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Parse(%q) = %v, neither ErrMalformed nor ErrUnsupported", doc, err)
			}
			return
		}
		if len(p.Statements) == 0 {
			t.Fatalf("Parse(%q) gave no statements", doc)
		}
		for _, st := range p.Statements {
			if st.Effect != Allow && st.Effect != Deny || len(st.Actions) == 0 || len(st.Resources) == 0 {
				t.Fatalf("Parse(%q) gave statement %+v", doc, st)
			}
			for _, r := range st.Resources {
				if r != "arn:aws:s3:::site" && !strings.HasPrefix(r, "arn:aws:s3:::site/") {
					t.Fatalf("Parse(%q) kept resource %q of another bucket", doc, r)
				}
			}
		}
		for _, anonymous := range []bool{true, false} {
			p.Evaluate(Request{Action: action, Resource: Resource("site", key), Anonymous: anonymous, AccessKeyID: key, Account: key,
				SourceIP: netip.MustParseAddr("10.0.0.1"), Values: map[string]string{"s3:prefix": key},
				RequestTags: map[string][]string{strings.ToLower(key): {key}}, RequestTagKeys: []string{key}})
		}
		p.Public()
	})
}
