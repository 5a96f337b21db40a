package cdnpolicy

import (
	"net/http"
	"testing"
)

// FuzzParseCacheControl feeds arbitrary field values to the parser: it
// must never panic, its durations must stay within [0, 2^31 s] and be zero
// for absent directives, and flipping the ASCII case of the input (names
// are case-insensitive, and the values that matter are digits) must not
// change the result.
func FuzzParseCacheControl(f *testing.F) {
	for _, seed := range []string{
		"max-age=60",
		"public, max-age=31536000, immutable",
		"s-maxage=30, max-age=60, stale-while-revalidate=30, stale-if-error=86400",
		`private="Set-Cookie, X-Id", no-cache="a", must-revalidate, proxy-revalidate`,
		`max-age="6\0"`,
		`max-age="60`,
		"max-age=99999999999999999999999, s-maxage=-1",
		"no-store,,, ,NO-CACHE",
		"ſ-maxage=10",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cc := ParseCacheControl(http.Header{"Cache-Control": {s}})
		durations := []struct {
			name string
			d    int64
			has  bool
		}{
			{"max-age", int64(cc.MaxAge), cc.HasMaxAge},
			{"s-maxage", int64(cc.SMaxAge), cc.HasSMaxAge},
			{"stale-while-revalidate", int64(cc.StaleWhileRevalidate), cc.HasSWR},
			{"stale-if-error", int64(cc.StaleIfError), cc.HasSIE},
		}
		for _, d := range durations {
			if d.d < 0 || d.d > int64(maxDelta) {
				t.Errorf("ParseCacheControl(%q): %s = %v, out of [0, 2^31s]", s, d.name, d.d)
			}
			if !d.has && d.d != 0 {
				t.Errorf("ParseCacheControl(%q): absent %s has duration %v", s, d.name, d.d)
			}
		}
		for _, flipped := range []string{asciiUpper(s), asciiLower(s)} {
			if got := ParseCacheControl(http.Header{"Cache-Control": {flipped}}); got != cc {
				t.Errorf("ParseCacheControl(%q) = %+v\nbut ParseCacheControl(%q) = %+v", s, cc, flipped, got)
			}
		}
	})
}

func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}
