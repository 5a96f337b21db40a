package s3policy

import (
	"errors"
	"strings"
	"testing"
)

func TestVariablesParse(t *testing.T) {
	doc := func(resource, condition string) string {
		s := `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"` + resource + `"`
		if condition != "" {
			s += `,"Condition":` + condition
		}
		return s + `}}`
	}
	for _, tc := range []struct {
		name, doc string
		want      error
	}{
		{"a key's id", doc("arn:aws:s3:::site/home/${aws:username}/*", ""), nil},
		{"a default", doc("arn:aws:s3:::site/home/${aws:username, 'guest'}/*", ""), nil},
		{"a default with a quote and a brace", doc("arn:aws:s3:::site/${aws:username, 'it''s {x}'}/*", ""), nil},
		{"the escapes", doc("arn:aws:s3:::site/${*}${?}${$}", ""), nil},
		{"an object's tag", doc("arn:aws:s3:::site/${s3:ExistingObjectTag/team}/*", ""), nil},
		{"in a String condition", doc("arn:aws:s3:::site", `{"StringLike":{"s3:prefix":["home/${aws:PrincipalAccount}/*"]}}`), nil},
		{"in an Arn condition", doc("arn:aws:s3:::site/*", `{"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::${aws:PrincipalAccount}:*"}}`), nil},
		{"2008-10-17 has none", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/${oops"}}`, nil},
		{"in the bucket", doc("arn:aws:s3:::${aws:username}/*", ""), ErrMalformed},
		{"unterminated", doc("arn:aws:s3:::site/${aws:username/*", ""), ErrMalformed},
		{"empty", doc("arn:aws:s3:::site/${}/*", ""), ErrMalformed},
		{"a name with a space", doc("arn:aws:s3:::site/${aws: username}/*", ""), ErrMalformed},
		{"a tag key with a space", doc("arn:aws:s3:::site/${s3:ExistingObjectTag/cost centre}/*", ""), nil},
		{"a tag key without a tag", doc("arn:aws:s3:::site/${s3:ExistingObjectTag/}/*", ""), ErrMalformed},
		{"a default not closed by a quote", doc("arn:aws:s3:::site/${aws:username, 'x''}/*", ""), ErrMalformed},
		{"a default quoted at its end only", doc("arn:aws:s3:::site/${aws:username, x''}/*", ""), ErrMalformed},
		{"a default not quoted", doc("arn:aws:s3:::site/${aws:username, guest}/*", ""), ErrMalformed},
		{"a lone quote in a default", doc("arn:aws:s3:::site/${aws:username, 'a'b'}/*", ""), ErrMalformed},
		{"an unknown key", doc("arn:aws:s3:::site/${colour}/*", ""), ErrMalformed},
		{"a key of AWS's not evaluated", doc("arn:aws:s3:::site/${aws:PrincipalOrgID}/*", ""), ErrUnsupported},
		{"a date", doc("arn:aws:s3:::site/${aws:CurrentTime}/*", ""), ErrUnsupported},
		{"a multivalued key", doc("arn:aws:s3:::site/${s3:RequestObjectTagKeys}/*", ""), ErrMalformed},
		{"in a Numeric condition", doc("arn:aws:s3:::site", `{"NumericLessThan":{"s3:max-keys":"${s3:prefix}"}}`), ErrUnsupported},
		{"in an IpAddress condition", doc("arn:aws:s3:::site", `{"IpAddress":{"aws:SourceIp":"${aws:SourceIp}"}}`), ErrUnsupported},
		{"in a Date condition", doc("arn:aws:s3:::site", `{"DateLessThan":{"aws:CurrentTime":"${aws:CurrentTime}"}}`), ErrUnsupported},
		{"in a Bool condition", doc("arn:aws:s3:::site", `{"Bool":{"aws:SecureTransport":"${aws:SecureTransport}"}}`), ErrUnsupported},
		{"an unknown key's condition, with a variable", doc("arn:aws:s3:::site", `{"StringEquals":{"colour":"${aws:username}"}}`), ErrMalformed},
		{"a String operator on a Numeric key, with a variable", doc("arn:aws:s3:::site", `{"StringEquals":{"s3:max-keys":"${aws:username}"}}`), ErrMalformed},
		{"a bad variable in a String condition", doc("arn:aws:s3:::site", `{"StringEquals":{"s3:prefix":"${aws:username"}}`), ErrMalformed},
		{"a bad variable in an Arn condition", doc("arn:aws:s3:::site", `{"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::${nope}:root"}}`), ErrMalformed},
	} {
		_, err := Parse([]byte(tc.doc), "site")
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: Parse(%s) = %v, want %v", tc.name, tc.doc, err, tc.want)
		}
	}
}

// TestVariablesEvaluate: a policy variable stands for the request's value,
// matched as written; one the request lacks matches nothing, unless it has
// a default.
func TestVariablesEvaluate(t *testing.T) {
	alice := func(action, k string, values map[string]string) Request {
		return Request{Action: action, Resource: Resource("site", k), AccessKeyID: key, Account: "alice", Values: values}
	}
	anon := func(action, k string) Request {
		return Request{Action: action, Resource: Resource("site", k), Anonymous: true}
	}
	homes := mustParse(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::site/home/${aws:username}/*"},
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/teams/${aws:PrincipalAccount}/*"},
		{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::site",
		 "Condition":{"StringLike":{"s3:prefix":["home/${aws:username}/*","drop/${aws:username, 'anonymous'}/*"]}}},
		{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::site/drop/${aws:username, 'anonymous'}/*"},
		{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/${*}/*"},
		{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","NotResource":"arn:aws:s3:::site/home/${aws:username}/*"}]}`)
	for _, tc := range []struct {
		name string
		r    Request
		want Decision
	}{
		{"her home", alice("s3:PutObject", "home/"+key+"/notes", nil), Allowed},
		{"another key's home", alice("s3:PutObject", "home/"+other+"/notes", nil), None},
		{"her account's team", alice("s3:GetObject", "teams/alice/plan", nil), Allowed},
		{"another account's team", alice("s3:GetObject", "teams/bob/plan", nil), None},
		{"listing her home", alice("s3:ListBucket", "", map[string]string{"s3:prefix": "home/" + key + "/"}), Allowed},
		{"listing another home", alice("s3:ListBucket", "", map[string]string{"s3:prefix": "home/" + other + "/"}), None},
		{"anonymous: no home", anon("s3:GetObject", "home//notes"), None},
		{"anonymous: the default drop", anon("s3:PutObject", "drop/anonymous/f"), Allowed},
		{"alice: her own drop, not the default", alice("s3:PutObject", "drop/anonymous/f", nil), None},
		{"${*} is a star, not a wildcard: a key under *", alice("s3:GetObject", "*/x", nil), Denied},
		{"${*} is a star, not a wildcard: another key", alice("s3:GetObject", "teams/alice/x", nil), Allowed},
		{"a NotResource with her home: elsewhere", alice("s3:DeleteObject", "teams/alice/plan", nil), Denied},
		{"a NotResource with her home: in it", alice("s3:DeleteObject", "home/"+key+"/notes", nil), None},
		// A variable the request lacks matches nothing: the NotResource
		// excludes nothing, and the Deny holds for anonymous requests.
		{"a NotResource with no username", anon("s3:DeleteObject", "home//notes"), Denied},
	} {
		if got := homes.Evaluate(tc.r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}

	// An unresolved variable never widens an Allow, whatever its
	// operator, nor narrows a Deny.
	negated := mustParse(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*",
		 "Condition":{"ArnNotLike":{"aws:PrincipalArn":"arn:aws:iam::${aws:PrincipalAccount}:user/x"}}},
		{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","NotResource":"arn:aws:s3:::site/home/${aws:username}/*"},
		{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::site/*",
		 "Condition":{"StringNotEquals":{"s3:ExistingObjectTag/owner":"${aws:username}"}}}]}`)
	for _, tc := range []struct {
		name string
		r    Request
		want Decision
	}{
		{"an Allow's negated operator, resolved", alice("s3:GetObject", "a", nil), Allowed},
		{"an Allow's negated operator, unresolved", anon("s3:GetObject", "a"), None},
		{"an Allow's NotResource, resolved", alice("s3:PutObject", "public/a", nil), Allowed},
		{"an Allow's NotResource, unresolved", anon("s3:PutObject", "public/a"), None},
		{"a Deny's negated operator, unresolved", anon("s3:DeleteObject", "a"), Denied},
	} {
		if got := negated.Evaluate(tc.r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}

	// A key with several values (a tag in two cases) resolves no
	// variable, default or not.
	twoCase := Request{Action: "s3:GetObject", Resource: Resource("site", "public/x"), AccessKeyID: key, Account: "alice",
		ObjectTags: map[string][]string{"team": {"red", "Red"}}}
	defaulted := mustParse(t, `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject",
		"Resource":"arn:aws:s3:::site/${s3:ExistingObjectTag/team, 'public'}/*"}}`)
	for _, k := range []string{"public/x", "red/x", "Red/x"} {
		twoCase.Resource = Resource("site", k)
		if got := defaulted.Evaluate(twoCase); got != None {
			t.Errorf("a default for a key with two values, key %s: %v, want None", k, got)
		}
	}
	twoCase.Resource = Resource("site", "public/x")
	twoCase.ObjectTags = nil
	if got := defaulted.Evaluate(twoCase); got != Allowed {
		t.Errorf("a default for a key the request lacks: %v, want Allowed", got)
	}

	// A trailing ${*} is a star, never the wildcard's.
	star := mustParse(t, `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/a${*}"}}`)
	for k, want := range map[string]Decision{"a*": Allowed, "a": None, "ab": None} {
		if got := star.Evaluate(alice("s3:GetObject", k, nil)); got != want {
			t.Errorf("Resource site/a${*}, key %q: %v, want %v", k, got, want)
		}
	}

	// In conditions too, a variable's value is matched as written: an
	// s3:delimiter of * in a StringLike, an s3:prefix of * in an ArnLike.
	condLit := mustParse(t, `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::site","Condition":{"StringLike":{"s3:prefix":"home/${s3:delimiter}"}}},
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*","Condition":{"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::alice:user/${s3:prefix}"}}}]}`)
	for _, tc := range []struct {
		name string
		r    Request
		want Decision
	}{
		{"StringLike, the value itself", alice("s3:ListBucket", "", map[string]string{"s3:prefix": "home/*", "s3:delimiter": "*"}), Allowed},
		{"StringLike, another", alice("s3:ListBucket", "", map[string]string{"s3:prefix": "home/x", "s3:delimiter": "*"}), None},
		{"ArnLike, a * value", alice("s3:GetObject", "a", map[string]string{"s3:prefix": "*"}), None},
		{"ArnLike, the key's id", alice("s3:GetObject", "a", map[string]string{"s3:prefix": key}), Allowed},
	} {
		if got := condLit.Evaluate(tc.r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}

	// A value is matched as written: a username with a wildcard in it
	// (as an s3:prefix might have) matches only itself.
	prefixes := mustParse(t, `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/${s3:prefix}"}}`)
	for _, tc := range []struct {
		prefix, key string
		want        Decision
	}{
		{"a*", "a*", Allowed}, {"a*", "abc", None}, {"a?", "ab", None}, {"a?", "a?", Allowed},
	} {
		if got := prefixes.Evaluate(alice("s3:GetObject", tc.key, map[string]string{"s3:prefix": tc.prefix})); got != tc.want {
			t.Errorf("${s3:prefix} = %q on key %q: %v, want %v", tc.prefix, tc.key, got, tc.want)
		}
	}

	// In an Arn condition, variables stand in the parts of the ARN.
	arns := mustParse(t, `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*",
		"Condition":{"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::${aws:PrincipalAccount}:user/${aws:username}"}}}}`)
	if got := arns.Evaluate(alice("s3:GetObject", "a", nil)); got != Allowed {
		t.Errorf("ArnLike with the principal's own account and key: %v, want Allowed", got)
	}
	if got := arns.Evaluate(anon("s3:GetObject", "a")); got != None {
		t.Errorf("ArnLike with variables, anonymous: %v, want None", got)
	}

	// A grant with variables is not fixed to known requesters: public.
	fixed := mustParse(t, `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::site/*",
		"Condition":{"StringEquals":{"aws:PrincipalArn":"arn:aws:iam::alice:user/${aws:username}"}}}}`)
	if !fixed.Public() {
		t.Error("a grant to everyone held by a variable's value counts as not public")
	}
}

func TestTemplateResolve(t *testing.T) {
	r := Request{AccessKeyID: key, Account: "alice", Values: map[string]string{"s3:prefix": "p*"}}
	for _, tc := range []struct {
		in, want, lit string // lit: 1 for a byte matched as written
		ok            bool
	}{
		{"a/${aws:username}/*", "a/" + key + "/*", "00" + "11111111111111111111" + "00", true},
		{"${s3:prefix}*", "p**", "110", true},
		{"${ aws:username , 'x' }", key, "11111111111111111111", true},
		{"${s3:delimiter, 'it''s'}", "it's", "1111", true},
		{"${s3:delimiter}", "", "", false},
		{"${*}${?}${$}", "*?$", "111", true},
		{"${$}{aws:username}", "${aws:username}", "100000000000000", true}, // one round: no variable comes of a variable
	} {
		tm, err := parseTemplate(tc.in)
		if err != nil {
			t.Fatalf("parseTemplate(%q): %v", tc.in, err)
		}
		got, lit, ok := tm.resolve(r)
		var l []byte
		for _, b := range lit {
			l = append(l, map[bool]byte{true: '1', false: '0'}[b])
		}
		if got != tc.want || string(l) != tc.lit || ok != tc.ok {
			t.Errorf("%q resolved to %q (%s, %v), want %q (%s, %v)", tc.in, got, l, ok, tc.want, tc.lit, tc.ok)
		}
	}
}

// TestVariablesNeeds: a policy variable of a tag or lock key asks the
// caller for them as a condition on the key does.
func TestVariablesNeeds(t *testing.T) {
	stmt := func(resource, condition string) *Policy {
		s := `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:PutObject"],"Resource":"` + resource + `"`
		if condition != "" {
			s += `,"Condition":` + condition
		}
		return mustParse(t, s+`}}`)
	}
	teams := stmt("arn:aws:s3:::site/${s3:ExistingObjectTag/team}/*", "")
	if !teams.NeedsObjectTags() || teams.NeedsRequestTags() || teams.NeedsLockKeys() {
		t.Errorf("a Resource with ${s3:ExistingObjectTag/team}: needs object tags %v, request tags %v, lock keys %v; want only object tags",
			teams.NeedsObjectTags(), teams.NeedsRequestTags(), teams.NeedsLockKeys())
	}
	red := Request{Action: "s3:GetObject", AccessKeyID: key, Account: "alice", ObjectTags: map[string][]string{"team": {"red"}}}
	for k, want := range map[string]Decision{"red/x": Allowed, "blue/x": None} {
		red.Resource = Resource("site", k)
		if got := teams.Evaluate(red); got != want {
			t.Errorf("${s3:ExistingObjectTag/team} of a red object, key %s: %v, want %v", k, got, want)
		}
	}
	if p := stmt("arn:aws:s3:::site/*", `{"StringEquals":{"s3:prefix":"${s3:RequestObjectTag/a}"}}`); !p.NeedsRequestTags() || p.NeedsObjectTags() {
		t.Error("a condition value with ${s3:RequestObjectTag/a} does not ask for the request's tags alone")
	}
	if p := stmt("arn:aws:s3:::site/${s3:object-lock-mode}/*", ""); !p.NeedsLockKeys() {
		t.Error("a Resource with ${s3:object-lock-mode} does not ask for the lock keys")
	}
	if p := stmt("arn:aws:s3:::site/*", ""); p.NeedsObjectTags() || p.NeedsRequestTags() || p.NeedsLockKeys() {
		t.Error("a policy without keys or variables asks for tags or lock keys")
	}
}

func TestMatchLit(t *testing.T) {
	lits := func(s string) []bool {
		out := make([]bool, len(s))
		for i := range s {
			out[i] = s[i] == '1'
		}
		return out
	}
	for _, tc := range []struct {
		pattern, lit, s string
		want            bool
	}{
		{"a*", "01", "a", false}, {"a*", "01", "a*", true}, {"a*", "00", "a", true},
		{"a?c", "010", "abc", false}, {"a?c", "010", "a?c", true}, {"*?", "01", "xyz?", true}, {"*?", "01", "xyz", false},
		{"é?", "001", "é?", true}, {"é?", "000", "éx", true},
	} {
		if got := matchLit(tc.pattern, lits(tc.lit), tc.s); got != tc.want {
			t.Errorf("matchLit(%q, %s, %q) = %v, want %v", tc.pattern, tc.lit, tc.s, got, tc.want)
		}
	}
	// litStar marks the * of pattern literal.
	litStar := func(pattern string) []bool {
		l := make([]bool, len(pattern))
		l[strings.IndexByte(pattern, '*')] = true
		return l
	}
	user := "arn:aws:iam::alice:user/*"
	if !matchARN(user, make([]bool, len(user)), "arn:aws:iam::alice:user/LK1") || matchARN(user, litStar(user), "arn:aws:iam::alice:user/LK1") ||
		!matchARN(user, litStar(user), user) {
		t.Error("matchARN does not keep a literal * of the last part literal")
	}
	if root := "arn:aws:iam::*:root"; matchARN(root, litStar(root), "arn:aws:iam::alice:root") || !matchARN(root, litStar(root), root) {
		t.Error("matchARN does not keep a literal * of the account part literal")
	}
}

// FuzzMatchLit: with no byte literal, matchLit is match; with every byte
// literal, it is equality.
func FuzzMatchLit(f *testing.F) {
	f.Add("a*b?", "a*xb?")
	f.Add("*é?", "xxéy")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if matchLit(pattern, make([]bool, len(pattern)), s) != match(pattern, s) {
			t.Fatalf("matchLit(%q, none literal, %q) differs from match", pattern, s)
		}
		all := make([]bool, len(pattern))
		for i := range all {
			all[i] = true
		}
		if got := matchLit(pattern, all, s); got != (pattern == s) {
			t.Fatalf("matchLit(%q, all literal, %q) = %v", pattern, s, got)
		}
	})
}
