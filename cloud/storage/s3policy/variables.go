package s3policy

import (
	"slices"
	"strings"
)

// A policy variable, as IAM writes one in a 2012-10-17 policy's Resource
// and its String and Arn conditions' values: ${KEY} stands for the
// request's value of condition key KEY (${aws:username} for a per-key
// home directory), ${KEY, 'DEFAULT'} for that or, when the request lacks
// the key, DEFAULT ('' writes a quote in it), and ${*}, ${?} and ${$}
// for the characters *, ? and $ themselves. What a variable stands for
// is matched as written, never as a wildcard: a key whose value holds a
// * matches only a *. A variable is unresolved when the request lacks its
// key (and it has no default) or has several values of it (a tag key in
// two cases). An unresolved variable never widens a grant nor narrows a
// refusal: an Allow statement with one grants nothing, whatever its
// operators; in a Deny, the value holding it matches nothing, so that a
// Resource entry matches no resource, a NotResource entry leaves nothing
// out, a positive operator's value fails and a negated one's holds.

// template is a Resource entry or condition value with variables: its
// pieces in order.
type template []piece

// piece is text as written, whose * and ? are wildcards (key ""; lit
// false), a character written ${*}, ${?} or ${$} (text; lit), or a
// variable (key, with its default when hasDefault).
type piece struct {
	text       string
	lit        bool
	key        string
	def        string
	hasDefault bool
}

// parseTemplate reads s's variables: nil when it has none.
func parseTemplate(s string) (template, error) {
	if !strings.Contains(s, "${") {
		return nil, nil
	}
	var t template
	for s != "" {
		i := strings.Index(s, "${")
		if i < 0 {
			t = append(t, piece{text: s})
			break
		}
		if i > 0 {
			t = append(t, piece{text: s[:i]})
		}
		end := variableEnd(s, i+2)
		if end < 0 {
			return nil, malformed("Policy has an unterminated policy variable: %q", s[i:])
		}
		p, err := parseVariable(s[i+2 : end])
		if err != nil {
			return nil, err
		}
		t = append(t, p)
		s = s[end+1:]
	}
	return t, nil
}

// variableEnd is the index of the } that closes the variable whose body
// starts at from in s (a } in a quoted default does not), -1 if none.
func variableEnd(s string, from int) int {
	quoted := false
	for i := from; i < len(s); i++ {
		switch {
		case s[i] == '\'':
			quoted = !quoted // '' in a default toggles twice: still quoted
		case s[i] == '}' && !quoted:
			return i
		}
	}
	return -1
}

// parseVariable reads the body of ${...}.
func parseVariable(body string) (piece, error) {
	switch b := strings.TrimSpace(body); b {
	case "*", "?", "$":
		return piece{text: b, lit: true}, nil
	}
	name, def, hasDefault := strings.Cut(body, ",")
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || strings.Contains(name, "'") ||
		strings.ContainsAny(name, " \t") && !isObjectTagKey(name) && !isRequestTagKey(name) { // a tag key may hold a space
		return piece{}, malformed("Policy has an invalid policy variable: ${%s}", body)
	}
	p := piece{key: name, hasDefault: hasDefault}
	if hasDefault {
		def = strings.TrimSpace(def)
		if len(def) < 2 || def[0] != '\'' || def[len(def)-1] != '\'' {
			return piece{}, malformed("Policy has an invalid policy variable: ${%s}: a default is written in single quotes", body)
		}
		inner := def[1 : len(def)-1]
		if strings.Contains(strings.ReplaceAll(inner, "''", ""), "'") {
			return piece{}, malformed("Policy has an invalid policy variable: ${%s}: a quote in a default is written ''", body)
		}
		p.def = strings.ReplaceAll(inner, "''", "'")
	}
	return p, variableKey(name)
}

// variableKey checks that the request's value of condition key k can
// stand for a variable: a key this evaluates with one value.
func variableKey(k string) error {
	switch {
	case k == ObjectTagKey || k == RequestTagKey:
		return malformed("Policy has an invalid policy variable: ${%s} names no tag", k)
	case k == RequestTagKeysKey:
		return malformed("Policy has an invalid policy variable: ${%s} is multivalued", k)
	case isStringKey(k) || k == "aws:sourceip" || k == "aws:securetransport":
		return nil
	case knownKey(k):
		return unsupported("policy variable ${%s}: numbers and dates are not supported as variables here", k)
	}
	return unknownKey(k)
}

// resolve is t for request r: the pattern, with lit marking its bytes that
// match only themselves (the variables' values and ${*}, ${?}, ${$}); ok
// is false when a variable is unresolved: r lacks its key and it has no
// default, or r has several values of it.
func (t template) resolve(r Request) (pattern string, lit []bool, ok bool) {
	var b strings.Builder
	add := func(s string, l bool) {
		b.WriteString(s)
		for range len(s) {
			lit = append(lit, l)
		}
	}
	for _, p := range t {
		if p.key == "" {
			add(p.text, p.lit)
			continue
		}
		switch vals := r.values(p.key); {
		case len(vals) == 1:
			add(vals[0], true)
		case len(vals) == 0 && p.hasDefault:
			add(p.def, true)
		default:
			return "", nil, false // absent, or several values: none stands for it
		}
	}
	return b.String(), lit, true
}

// parseTemplates reads the variables of each of values: nil when none has
// any.
func parseTemplates(values []string) ([]template, error) {
	var out []template
	for i, v := range values {
		t, err := parseTemplate(v)
		if err != nil {
			return nil, err
		}
		if t == nil {
			continue
		}
		if out == nil {
			out = make([]template, len(values))
		}
		out[i] = t
	}
	return out, nil
}

// pattern is values[i] for r, resolved through its template if it has
// one: ok is false when it matches nothing for r.
func pattern(values []string, tmpls []template, i int, r Request) (p string, lit []bool, ok bool) {
	if tmpls == nil || tmpls[i] == nil {
		return values[i], nil, true
	}
	return tmpls[i].resolve(r)
}

// unresolved reports whether a policy variable of the statement is
// unresolved for r: an Allow statement with one grants r nothing.
func (st *Statement) unresolved(r Request) bool {
	bad := func(tmpls []template) bool {
		return slices.ContainsFunc(tmpls, func(t template) bool {
			if t == nil {
				return false
			}
			_, _, ok := t.resolve(r)
			return !ok
		})
	}
	if bad(st.resTmpls) {
		return true
	}
	return slices.ContainsFunc(st.Conditions, func(c Condition) bool { return bad(c.tmpls) })
}
