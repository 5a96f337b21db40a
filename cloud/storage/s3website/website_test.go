package s3website

import (
	"errors"
	"strings"
	"testing"
)

func doc(inner string) []byte {
	return []byte(`<WebsiteConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` + inner + `</WebsiteConfiguration>`)
}

const index = `<IndexDocument><Suffix>index.html</Suffix></IndexDocument>`

func rules(rs ...string) string {
	return index + `<RoutingRules>` + strings.Join(rs, "") + `</RoutingRules>`
}

func TestParseRefuses(t *testing.T) {
	many := make([]string, MaxRules+1)
	for i := range many {
		many[i] = `<RoutingRule><Redirect><HostName>x</HostName></Redirect></RoutingRule>`
	}
	for _, tc := range []struct {
		name string
		doc  []byte
		want error
	}{
		{"not xml", []byte(`{"IndexDocument":1}`), ErrMalformed},
		{"other root", []byte(`<CORSConfiguration/>`), ErrMalformed},
		{"empty", doc(``), ErrInvalid},
		{"no suffix", doc(`<IndexDocument/>`), ErrInvalid},
		{"empty suffix", doc(`<IndexDocument><Suffix></Suffix></IndexDocument>`), ErrInvalid},
		{"slash in suffix", doc(`<IndexDocument><Suffix>a/index.html</Suffix></IndexDocument>`), ErrInvalid},
		{"empty error key", doc(index + `<ErrorDocument><Key></Key></ErrorDocument>`), ErrInvalid},
		{"redirect all and index", doc(`<RedirectAllRequestsTo><HostName>x</HostName></RedirectAllRequestsTo>` + index), ErrInvalid},
		{"redirect all without host", doc(`<RedirectAllRequestsTo><Protocol>https</Protocol></RedirectAllRequestsTo>`), ErrInvalid},
		{"redirect all to a URL", doc(`<RedirectAllRequestsTo><HostName>https://x/</HostName></RedirectAllRequestsTo>`), ErrInvalid},
		{"redirect all by ftp", doc(`<RedirectAllRequestsTo><HostName>x</HostName><Protocol>ftp</Protocol></RedirectAllRequestsTo>`), ErrInvalid},
		{"no rules in RoutingRules", doc(rules()), ErrMalformed},
		{"too many rules", doc(rules(many...)), ErrInvalid},
		{"rule without redirect", doc(rules(`<RoutingRule><Condition><KeyPrefixEquals>a</KeyPrefixEquals></Condition></RoutingRule>`)), ErrInvalid},
		{"empty redirect", doc(rules(`<RoutingRule><Redirect></Redirect></RoutingRule>`)), ErrInvalid},
		{"empty condition", doc(rules(`<RoutingRule><Condition/><Redirect><HostName>x</HostName></Redirect></RoutingRule>`)), ErrInvalid},
		{"error code 200", doc(rules(`<RoutingRule><Condition><HttpErrorCodeReturnedEquals>200</HttpErrorCodeReturnedEquals></Condition><Redirect><HostName>x</HostName></Redirect></RoutingRule>`)), ErrInvalid},
		{"error code word", doc(rules(`<RoutingRule><Condition><HttpErrorCodeReturnedEquals>four</HttpErrorCodeReturnedEquals></Condition><Redirect><HostName>x</HostName></Redirect></RoutingRule>`)), ErrInvalid},
		{"redirect code 200", doc(rules(`<RoutingRule><Redirect><HttpRedirectCode>200</HttpRedirectCode></Redirect></RoutingRule>`)), ErrInvalid},
		{"redirect code 304", doc(rules(`<RoutingRule><Redirect><HttpRedirectCode>304</HttpRedirectCode></Redirect></RoutingRule>`)), ErrInvalid},
		{"both replacements", doc(rules(`<RoutingRule><Redirect><ReplaceKeyWith>a</ReplaceKeyWith><ReplaceKeyPrefixWith>b</ReplaceKeyPrefixWith></Redirect></RoutingRule>`)), ErrInvalid},
		{"empty protocol", doc(rules(`<RoutingRule><Redirect><Protocol></Protocol></Redirect></RoutingRule>`)), ErrInvalid},
		{"host with a path", doc(rules(`<RoutingRule><Redirect><HostName>x/y</HostName></Redirect></RoutingRule>`)), ErrInvalid},
		{"host with a user", doc(rules(`<RoutingRule><Redirect><HostName>evil@x</HostName></Redirect></RoutingRule>`)), ErrInvalid},
		{"too large", doc(index + strings.Repeat(" ", MaxSize)), ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.doc)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Parse = %+v, %v; want %v", c, err, tc.want)
			}
		})
	}
}

func TestParseRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  []byte
		want string // in the XML answered
	}{
		{"index", doc(index), `<IndexDocument><Suffix>index.html</Suffix></IndexDocument>`},
		{"error document", doc(index + `<ErrorDocument><Key>404.html</Key></ErrorDocument>`), `<ErrorDocument><Key>404.html</Key></ErrorDocument>`},
		{"redirect all", doc(`<RedirectAllRequestsTo><HostName>example.com</HostName><Protocol>https</Protocol></RedirectAllRequestsTo>`),
			`<RedirectAllRequestsTo><HostName>example.com</HostName><Protocol>https</Protocol></RedirectAllRequestsTo>`},
		{"rule", doc(rules(`<RoutingRule><Condition><KeyPrefixEquals>docs/</KeyPrefixEquals></Condition><Redirect><ReplaceKeyPrefixWith></ReplaceKeyPrefixWith><HttpRedirectCode>302</HttpRedirectCode></Redirect></RoutingRule>`)),
			`<RoutingRules><RoutingRule><Condition><KeyPrefixEquals>docs/</KeyPrefixEquals></Condition><Redirect><HttpRedirectCode>302</HttpRedirectCode><ReplaceKeyPrefixWith></ReplaceKeyPrefixWith></Redirect></RoutingRule></RoutingRules>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			out := string(c.XML("ns"))
			if !strings.Contains(out, tc.want) {
				t.Fatalf("XML = %s; want it to hold %s", out, tc.want)
			}
			again, err := Parse([]byte(out))
			if err != nil || string(again.XML("ns")) != out {
				t.Fatalf("the XML answered does not parse to itself: %v\n%s", err, out)
			}
		})
	}
}

func TestKey(t *testing.T) {
	c := &Config{Index: "index.html"}
	for path, want := range map[string]string{
		"/": "index.html", "": "index.html", "/a.html": "a.html", "/docs/": "docs/index.html", "/docs": "docs", "/a b/c": "a b/c",
	} {
		if got := c.Key(PathKey(path)); got != want {
			t.Errorf("Key(PathKey(%q)) = %q, want %q", path, got, want)
		}
	}
}

func TestRoute(t *testing.T) {
	c, err := Parse(doc(rules(
		`<RoutingRule><Condition><KeyPrefixEquals>docs/</KeyPrefixEquals></Condition><Redirect><ReplaceKeyPrefixWith>documents/</ReplaceKeyPrefixWith></Redirect></RoutingRule>`,
		`<RoutingRule><Condition><KeyPrefixEquals>old.html</KeyPrefixEquals></Condition><Redirect><ReplaceKeyWith>new.html</ReplaceKeyWith><HttpRedirectCode>302</HttpRedirectCode></Redirect></RoutingRule>`,
		`<RoutingRule><Condition><HttpErrorCodeReturnedEquals>404</HttpErrorCodeReturnedEquals></Condition><Redirect><HostName>backup.example.com</HostName><Protocol>https</Protocol><ReplaceKeyPrefixWith>report-404/</ReplaceKeyPrefixWith></Redirect></RoutingRule>`,
		`<RoutingRule><Condition><KeyPrefixEquals>img/</KeyPrefixEquals><HttpErrorCodeReturnedEquals>403</HttpErrorCodeReturnedEquals></Condition><Redirect><ReplaceKeyWith>denied.html</ReplaceKeyWith></Redirect></RoutingRule>`,
	)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		key      string
		status   int // 0: before the read
		location string
		code     int
	}{
		{"prefix replaced", "docs/a/b.html", 0, "http://site.test/documents/a/b.html", 301},
		{"key replaced", "old.html", 0, "http://site.test/new.html", 302},
		{"no rule before", "other.html", 0, "", 0},
		{"error rules wait for the error", "img/x.png", 0, "", 0},
		{"after a 404", "gone/page.html", 404, "https://backup.example.com/report-404/gone/page.html", 301},
		{"403 with the prefix", "img/x.png", 403, "http://site.test/denied.html", 301},
		{"403 without the prefix", "css/x.css", 403, "", 0},
		{"escaped", "docs/a b?.html", 0, "http://site.test/documents/a%20b%3F.html", 301},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Before(tc.key)
			if tc.status != 0 {
				r = c.After(tc.key, tc.status)
			}
			if r == nil {
				if tc.location != "" {
					t.Fatalf("no rule; want a redirect to %s", tc.location)
				}
				return
			}
			loc, code := r.Location(tc.key, "http", "site.test")
			if loc != tc.location || code != tc.code {
				t.Fatalf("Location = %s %d, want %s %d", loc, code, tc.location, tc.code)
			}
		})
	}
}

func TestRuleWithoutCondition(t *testing.T) {
	c, err := Parse(doc(rules(`<RoutingRule><Redirect><Protocol>https</Protocol></Redirect></RoutingRule>`)))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Before("any/key")
	if r == nil {
		t.Fatal("a rule without a Condition applies to every request")
	}
	if loc, code := r.Location("any/key", "http", "site.test:9080"); loc != "https://site.test:9080/any/key" || code != 301 {
		t.Fatalf("Location = %s %d", loc, code)
	}
	if c.After("any/key", 404) != nil {
		t.Fatal("a rule without an error code applied after an error")
	}
	// An empty KeyPrefixEquals alone is every key: answered as no
	// Condition, which parses again.
	c, err = Parse(doc(rules(`<RoutingRule><Condition><KeyPrefixEquals></KeyPrefixEquals></Condition><Redirect><Protocol>https</Protocol></Redirect></RoutingRule>`)))
	if err != nil || c.Rules[0].Condition != nil || c.Before("x") == nil {
		t.Fatalf("Parse = %+v, %v", c, err)
	}
	if _, err := Parse(c.XML("ns")); err != nil {
		t.Fatalf("its XML does not parse: %v\n%s", err, c.XML("ns"))
	}
}

func TestRedirectAll(t *testing.T) {
	c, err := Parse(doc(`<RedirectAllRequestsTo><HostName>www.example.com</HostName></RedirectAllRequestsTo>`))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.RedirectAll.Location("/a/b?x=1", "https"); got != "https://www.example.com/a/b?x=1" {
		t.Fatalf("Location = %s", got)
	}
	c.RedirectAll.Protocol = "http"
	if got := c.RedirectAll.Location("/", "https"); got != "http://www.example.com/" {
		t.Fatalf("Location = %s", got)
	}
}

func TestCheckRedirectLocation(t *testing.T) {
	for v, ok := range map[string]bool{
		"/other.html": true, "http://example.com/": true, "https://example.com/a?b": true,
		"other.html": false, "ftp://x": false, "javascript:alert(1)": false, "//evil.test": true,
		"/" + strings.Repeat("a", MaxRedirectLocation): false, "/a\x00b": false,
	} {
		err := CheckRedirectLocation(v)
		if (err == nil) != ok || (err != nil && !errors.Is(err, ErrRedirectLocation)) {
			t.Errorf("CheckRedirectLocation(%q) = %v", v, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(doc(index+`<ErrorDocument><Key>e.html</Key></ErrorDocument>`), "docs/x", 404)
	f.Add(doc(`<RedirectAllRequestsTo><HostName>h</HostName></RedirectAllRequestsTo>`), "", 0)
	f.Add(doc(rules(`<RoutingRule><Condition><KeyPrefixEquals>a</KeyPrefixEquals><HttpErrorCodeReturnedEquals>404</HttpErrorCodeReturnedEquals></Condition><Redirect><ReplaceKeyPrefixWith>b</ReplaceKeyPrefixWith></Redirect></RoutingRule>`)), "ab", 404)
	f.Fuzz(func(t *testing.T, data []byte, key string, status int) {
		c, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) = %v, neither ErrMalformed nor ErrInvalid", data, err)
			}
			return
		}
		if (c.RedirectAll == nil) == (c.Index == "") || len(c.Rules) > MaxRules {
			t.Fatalf("Parse(%q) = %+v", data, c)
		}
		again, err := Parse(c.XML("ns"))
		if err != nil || string(again.XML("ns")) != string(c.XML("ns")) {
			t.Fatalf("Parse(%q): its XML %q parses to %+v, %v", data, c.XML("ns"), again, err)
		}
		if c.RedirectAll != nil {
			c.RedirectAll.Location("/"+key, "http")
			return
		}
		for _, r := range []*Rule{c.Before(key), c.After(key, status)} {
			if r == nil {
				continue
			}
			loc, code := r.Location(key, "http", "h")
			if !redirectCode(code) || !strings.HasPrefix(loc, "http") {
				t.Fatalf("rule %+v sends %q to %q %d", r, key, loc, code)
			}
		}
	})
}
