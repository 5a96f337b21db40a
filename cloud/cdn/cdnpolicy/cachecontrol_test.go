package cdnpolicy

import (
	"net/http"
	"testing"
	"time"
)

// hdr builds a header from name, value pairs; a name may repeat to make
// several field lines.
func hdr(kv ...string) http.Header {
	h := make(http.Header)
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestParseCacheControl(t *testing.T) {
	const s = time.Second
	tests := []struct {
		lines []string
		want  CacheControl
	}{
		{nil, CacheControl{}},
		{[]string{""}, CacheControl{}},
		{[]string{"max-age=60"}, CacheControl{MaxAge: 60 * s, HasMaxAge: true}},
		{[]string{"MAX-AGE=60"}, CacheControl{MaxAge: 60 * s, HasMaxAge: true}},
		{[]string{`max-age="60"`}, CacheControl{MaxAge: 60 * s, HasMaxAge: true}},
		{[]string{`max-age="6\0"`}, CacheControl{MaxAge: 60 * s, HasMaxAge: true}}, // quoted-pair
		{[]string{" max-age = 60 ,\tpublic "}, CacheControl{MaxAge: 60 * s, HasMaxAge: true, Public: true}},
		{[]string{"max-age=0"}, CacheControl{HasMaxAge: true}},
		// The first occurrence counts (RFC 9111 4.2.1).
		{[]string{"max-age=60, max-age=10"}, CacheControl{MaxAge: 60 * s, HasMaxAge: true}},
		{[]string{"max-age=60", "max-age=10"}, CacheControl{MaxAge: 60 * s, HasMaxAge: true}},
		// Invalid max-age and s-maxage are present and zero: stale.
		{[]string{"max-age=abc"}, CacheControl{HasMaxAge: true}},
		{[]string{"max-age=-1"}, CacheControl{HasMaxAge: true}},
		{[]string{"max-age=+60"}, CacheControl{HasMaxAge: true}},
		{[]string{"max-age=6 0"}, CacheControl{HasMaxAge: true}},
		{[]string{"max-age=1.5"}, CacheControl{HasMaxAge: true}},
		{[]string{"max-age"}, CacheControl{HasMaxAge: true}},
		{[]string{"max-age="}, CacheControl{HasMaxAge: true}},
		{[]string{`max-age="60`}, CacheControl{HasMaxAge: true}},   // unterminated
		{[]string{`max-age="60"x`}, CacheControl{HasMaxAge: true}}, // stray text
		{[]string{"max-age=abc, max-age=60"}, CacheControl{HasMaxAge: true}},
		{[]string{"s-maxage=oops"}, CacheControl{HasSMaxAge: true}},
		// Clamping at 2^31 seconds (RFC 9111 1.2.2).
		{[]string{"max-age=2147483647"}, CacheControl{MaxAge: 2147483647 * s, HasMaxAge: true}},
		{[]string{"max-age=2147483648"}, CacheControl{MaxAge: 2147483648 * s, HasMaxAge: true}},
		{[]string{"max-age=2147483649"}, CacheControl{MaxAge: 2147483648 * s, HasMaxAge: true}},
		{[]string{"max-age=99999999999999999999999999"}, CacheControl{MaxAge: 2147483648 * s, HasMaxAge: true}},
		{[]string{"s-maxage=30, max-age=60"}, CacheControl{SMaxAge: 30 * s, HasSMaxAge: true, MaxAge: 60 * s, HasMaxAge: true}},
		{[]string{"no-store"}, CacheControl{NoStore: true}},
		{[]string{"No-Cache"}, CacheControl{NoCache: true}},
		{[]string{`no-cache="Set-Cookie"`}, CacheControl{NoCache: true}},
		{[]string{"private"}, CacheControl{Private: true}},
		// The comma inside the quoted field list does not end the directive.
		{[]string{`private="Set-Cookie, X-Id", max-age=5`}, CacheControl{Private: true, MaxAge: 5 * s, HasMaxAge: true}},
		{[]string{"public"}, CacheControl{Public: true}},
		{[]string{"public=yes"}, CacheControl{}}, // permissive directives count only bare
		{[]string{"must-revalidate"}, CacheControl{MustRevalidate: true}},
		{[]string{"proxy-revalidate"}, CacheControl{ProxyRevalidate: true}},
		{[]string{"immutable"}, CacheControl{Immutable: true}},
		{[]string{"immutable=1"}, CacheControl{}},
		{[]string{"stale-while-revalidate=30"}, CacheControl{StaleWhileRevalidate: 30 * s, HasSWR: true}},
		{[]string{"stale-if-error=600"}, CacheControl{StaleIfError: 600 * s, HasSIE: true}},
		{[]string{"stale-while-revalidate=0"}, CacheControl{HasSWR: true}},
		// Invalid grants are absent, and the first occurrence still counts.
		{[]string{"stale-while-revalidate=x"}, CacheControl{}},
		{[]string{"stale-if-error=-5"}, CacheControl{}},
		{[]string{"stale-if-error"}, CacheControl{}},
		{[]string{"stale-while-revalidate=x, stale-while-revalidate=30"}, CacheControl{}},
		// Lines combine.
		{[]string{"max-age=60", "no-cache", "stale-if-error=5"}, CacheControl{MaxAge: 60 * s, HasMaxAge: true, NoCache: true, StaleIfError: 5 * s, HasSIE: true}},
		// Unknown directives and empty elements are ignored.
		{[]string{"foo, bar=baz, ,,max-age=10,"}, CacheControl{MaxAge: 10 * s, HasMaxAge: true}},
		{[]string{`ext="a,b=c", max-age=10`}, CacheControl{MaxAge: 10 * s, HasMaxAge: true}},
		// Case-insensitivity is ASCII only: these are not s-maxage and no-store.
		{[]string{"ſ-maxage=10, no-ſtore"}, CacheControl{}},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.lines == nil {
			h = nil
		}
		for _, l := range tt.lines {
			h.Add("Cache-Control", l)
		}
		if got := ParseCacheControl(h); got != tt.want {
			t.Errorf("ParseCacheControl(%q):\n got %+v\nwant %+v", tt.lines, got, tt.want)
		}
	}
}
