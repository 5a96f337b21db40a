package s3cors

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
)

func rules(rs ...string) string {
	return "<CORSConfiguration>" + strings.Join(rs, "") + "</CORSConfiguration>"
}

func TestParseRefuses(t *testing.T) {
	ok := "<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
	many := strings.Repeat("<CORSRule>"+ok+"</CORSRule>", MaxRules+1)
	for _, tc := range []struct {
		name, doc string
		want      error
	}{
		{"not XML", "<CORSConfiguration>", ErrMalformed},
		{"another document", "<Tagging></Tagging>", ErrMalformed},
		{"no rule", rules(), ErrMalformed},
		{"no origin", rules("<CORSRule><AllowedMethod>GET</AllowedMethod></CORSRule>"), ErrMalformed},
		{"no method", rules("<CORSRule><AllowedOrigin>*</AllowedOrigin></CORSRule>"), ErrMalformed},
		{"a bad max age", rules("<CORSRule>" + ok + "<MaxAgeSeconds>soon</MaxAgeSeconds></CORSRule>"), ErrMalformed},
		{"a negative max age", rules("<CORSRule>" + ok + "<MaxAgeSeconds>-1</MaxAgeSeconds></CORSRule>"), ErrMalformed},
		{"101 rules", rules(many), ErrInvalid},
		{"an unsupported method", rules("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod></CORSRule>"), ErrInvalid},
		{"a lower-case method", rules("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>get</AllowedMethod></CORSRule>"), ErrInvalid},
		{"two wildcards in an origin", rules("<CORSRule><AllowedOrigin>https://*.*.example</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>"), ErrInvalid},
		{"an empty origin", rules("<CORSRule><AllowedOrigin></AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>"), ErrInvalid},
		{"two wildcards in a header", rules("<CORSRule>" + ok + "<AllowedHeader>x-*-*</AllowedHeader></CORSRule>"), ErrInvalid},
		{"a wildcard exposed", rules("<CORSRule>" + ok + "<ExposeHeader>*</ExposeHeader></CORSRule>"), ErrInvalid},
		{"a long ID", rules("<CORSRule><ID>" + strings.Repeat("i", 256) + "</ID>" + ok + "</CORSRule>"), ErrInvalid},
		{"too large", rules("<CORSRule>" + ok + strings.Repeat("<AllowedHeader>x</AllowedHeader>", MaxSize/30) + "</CORSRule>"), ErrInvalid},
	} {
		if _, err := Parse([]byte(tc.doc)); !errors.Is(err, tc.want) {
			t.Errorf("%s: Parse = %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := Parse([]byte(rules(strings.Repeat("<CORSRule>"+ok+"</CORSRule>", MaxRules)))); err != nil {
		t.Errorf("100 rules: %v", err)
	}
}

func TestMatch(t *testing.T) {
	c, err := Parse([]byte(rules(
		`<CORSRule><ID>app</ID><AllowedOrigin>https://app.example</AllowedOrigin><AllowedOrigin>https://*.app.example</AllowedOrigin>
			<AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod>
			<AllowedHeader>Content-Type</AllowedHeader><AllowedHeader>x-amz-*</AllowedHeader>
			<ExposeHeader>ETag</ExposeHeader><ExposeHeader>x-amz-request-id</ExposeHeader><MaxAgeSeconds>600</MaxAgeSeconds></CORSRule>`,
		`<CORSRule><ID>any</ID><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedMethod>HEAD</AllowedMethod></CORSRule>`,
	)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, origin, method string
		headers              []string
		want                 string // the rule's ID, "" for none
	}{
		{"exact origin", "https://app.example", "PUT", nil, "app"},
		{"wildcard origin", "https://eu.app.example", "PUT", nil, "app"},
		{"wildcard origin, nothing before the dot", "https://.app.example", "PUT", nil, "app"},
		{"origin differs in case", "https://APP.example", "PUT", nil, ""},
		{"origin with a port", "https://app.example:8443", "PUT", nil, ""},
		{"another origin, GET", "https://evil.example", "GET", nil, "any"},
		{"another origin, PUT", "https://evil.example", "PUT", nil, ""},
		{"a method no rule allows", "https://app.example", "DELETE", nil, ""},
		{"a method in lower case", "https://app.example", "put", nil, ""},
		{"allowed headers", "https://app.example", "PUT", []string{"content-type", "X-Amz-Date", "x-amz-content-sha256"}, "app"},
		{"a header not allowed", "https://app.example", "PUT", []string{"content-type", "authorization"}, ""},
		{"a header not allowed, GET falls to the next rule", "https://app.example", "GET", []string{"authorization"}, ""},
		{"no headers allowed by the second rule", "https://evil.example", "GET", []string{"x-amz-date"}, ""},
		{"HEAD", "https://evil.example", "HEAD", nil, "any"},
	} {
		r, ok := c.Match(tc.origin, tc.method, tc.headers)
		got := ""
		if ok {
			got = r.ID
		}
		if got != tc.want {
			t.Errorf("%s: Match(%q, %q, %q) = %q, want %q", tc.name, tc.origin, tc.method, tc.headers, got, tc.want)
		}
	}
	app, _ := c.Match("https://app.example", "PUT", nil)
	got := app.Headers("https://app.example", true, []string{"Content-Type", "x-amz-date"})
	want := map[string]string{"Access-Control-Allow-Origin": "https://app.example", "Access-Control-Allow-Credentials": "true",
		"Access-Control-Allow-Methods": "GET, PUT", "Access-Control-Allow-Headers": "content-type, x-amz-date",
		"Access-Control-Expose-Headers": "ETag, x-amz-request-id", "Access-Control-Max-Age": "600"}
	if !maps.Equal(got, want) {
		t.Errorf("preflight headers: got %v, want %v", got, want)
	}
	anyRule, _ := c.Match("https://evil.example", "GET", nil)
	got = anyRule.Headers("https://evil.example", false, nil)
	want = map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, HEAD"}
	if !maps.Equal(got, want) {
		t.Errorf("actual request headers: got %v, want %v", got, want)
	}
}

func TestXMLRoundTrip(t *testing.T) {
	in := rules(`<CORSRule><ID>a</ID><AllowedHeader>*</AllowedHeader><AllowedMethod>GET</AllowedMethod><AllowedOrigin>*</AllowedOrigin><MaxAgeSeconds>0</MaxAgeSeconds></CORSRule>`,
		`<CORSRule><AllowedMethod>PUT</AllowedMethod><AllowedOrigin>https://x</AllowedOrigin><ExposeHeader>ETag</ExposeHeader></CORSRule>`)
	c, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out := c.XML("http://s3.amazonaws.com/doc/2006-03-01/")
	again, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse(XML()) = %v; XML %s", err, out)
	}
	if fmt.Sprint(again.Rules[0].MaxAgeSeconds != nil, again.Rules[1].MaxAgeSeconds == nil) != "true true" ||
		fmt.Sprintf("%+v", again.Rules[1]) != fmt.Sprintf("%+v", c.Rules[1]) || again.Rules[0].ID != "a" {
		t.Errorf("round trip: got %+v, want %+v", again.Rules, c.Rules)
	}
}

func TestSplitHeaders(t *testing.T) {
	if got := strings.Join(SplitHeaders(" content-type ,x-amz-date,, "), "|"); got != "content-type|x-amz-date" {
		t.Errorf("SplitHeaders = %q", got)
	}
}

// FuzzParseCORS checks that a configuration either is refused with one of
// the two errors callers tell apart or keeps S3's rules, survives a
// round trip through XML, and matches without panicking.
func FuzzParseCORS(f *testing.F) {
	f.Add([]byte(rules(`<CORSRule><AllowedOrigin>https://*.x</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>*</AllowedHeader><MaxAgeSeconds>5</MaxAgeSeconds></CORSRule>`)), "https://a.x", "GET", "content-type")
	f.Add([]byte(rules(`<CORSRule><ID>i</ID><AllowedOrigin>*</AllowedOrigin><AllowedMethod>PUT</AllowedMethod><ExposeHeader>ETag</ExposeHeader></CORSRule>`)), "", "PUT", "")
	f.Add([]byte(`<CORSConfiguration/>`), "o", "m", "h")
	f.Fuzz(func(t *testing.T, doc []byte, origin, method, headers string) {
		c, err := Parse(doc)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) = %v, neither ErrMalformed nor ErrInvalid", doc, err)
			}
			return
		}
		if len(c.Rules) == 0 || len(c.Rules) > MaxRules {
			t.Fatalf("Parse(%q) gave %d rules", doc, len(c.Rules))
		}
		for _, r := range c.Rules {
			if err := r.check(); err != nil {
				t.Fatalf("Parse(%q) kept rule %+v, which check refuses: %v", doc, r, err)
			}
		}
		again, err := Parse(c.XML("ns"))
		if err != nil || len(again.Rules) != len(c.Rules) {
			t.Fatalf("Parse(%q): its XML %q parses to %v, %v", doc, c.XML("ns"), again, err)
		}
		if r, ok := c.Match(origin, method, SplitHeaders(headers)); ok {
			r.Headers(origin, true, SplitHeaders(headers))
		}
	})
}
