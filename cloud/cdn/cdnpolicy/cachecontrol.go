package cdnpolicy

import (
	"net/http"
	"strings"
	"time"
)

// maxDelta is the largest delta-seconds a cache must represent (RFC 9111
// 1.2.2): larger values, and overflowing sums, clamp to it.
const maxDelta = (1 << 31) * time.Second

// CacheControl holds the Cache-Control directives a shared cache acts on.
//
// Parsing is tolerant: unknown directives are ignored, directive names are
// matched case-insensitively (ASCII only), and values may be tokens or
// quoted strings. When a directive appears more than once, its first
// occurrence counts (RFC 9111 4.2.1).
//
// A max-age or s-maxage whose value is missing, negative or not an integer
// is kept as present with a zero duration, so the response is stale on
// arrival: RFC 9111 4.2.1 encourages treating invalid freshness
// information as stale, and ignoring it instead would let an Expires or
// the default TTL make the response fresh against the origin's evident
// wish. An invalid stale-while-revalidate or stale-if-error is absent:
// they only grant permissions, and a garbled grant is none. Values over
// 2^31 seconds clamp to 2^31 seconds.
//
// no-cache and private may carry a list of field names; a shared cache
// here treats them as if unqualified (no-cache="Set-Cookie" revalidates
// every use, private="Set-Cookie" is not stored). Restrictive directives
// (no-store, no-cache, private, must-revalidate, proxy-revalidate) count
// whatever argument they carry; the permissive public and immutable count
// only in their bare form.
type CacheControl struct {
	MaxAge, SMaxAge                    time.Duration
	HasMaxAge, HasSMaxAge              bool
	NoStore, NoCache, Private, Public  bool
	MustRevalidate, ProxyRevalidate    bool
	Immutable                          bool
	StaleWhileRevalidate, StaleIfError time.Duration
	HasSWR, HasSIE                     bool
}

// ParseCacheControl parses every Cache-Control field line in h (h may be
// nil); comma-separated lists across several lines combine.
func ParseCacheControl(h http.Header) CacheControl {
	var cc CacheControl
	var seenSWR, seenSIE bool
	for _, line := range h.Values("Cache-Control") {
		scanDirectives(line, func(name, value string, hasValue, wellFormed bool) {
			switch name {
			case "max-age":
				if !cc.HasMaxAge {
					cc.MaxAge, _ = parseDelta(value, hasValue && wellFormed)
					cc.HasMaxAge = true
				}
			case "s-maxage":
				if !cc.HasSMaxAge {
					cc.SMaxAge, _ = parseDelta(value, hasValue && wellFormed)
					cc.HasSMaxAge = true
				}
			case "stale-while-revalidate":
				if !seenSWR {
					seenSWR = true
					cc.StaleWhileRevalidate, cc.HasSWR = parseDelta(value, hasValue && wellFormed)
				}
			case "stale-if-error":
				if !seenSIE {
					seenSIE = true
					cc.StaleIfError, cc.HasSIE = parseDelta(value, hasValue && wellFormed)
				}
			case "no-store":
				cc.NoStore = true
			case "no-cache":
				cc.NoCache = true
			case "private":
				cc.Private = true
			case "must-revalidate":
				cc.MustRevalidate = true
			case "proxy-revalidate":
				cc.ProxyRevalidate = true
			case "public":
				cc.Public = cc.Public || !hasValue
			case "immutable":
				cc.Immutable = cc.Immutable || !hasValue
			}
		})
	}
	return cc
}

// scanDirectives calls fn for each directive of one Cache-Control field
// line, with its name lower-cased and its value unquoted. wellFormed is
// false when a quoted value is unterminated or followed by stray
// characters before the next comma. Commas inside quoted strings (as in
// private="Set-Cookie, X-Id") do not split directives.
func scanDirectives(line string, fn func(name, value string, hasValue, wellFormed bool)) {
	i := 0
	for i < len(line) {
		// Name: up to '=' or ','.
		start := i
		for i < len(line) && line[i] != '=' && line[i] != ',' {
			i++
		}
		name := asciiLower(trimOWS(line[start:i]))
		if i == len(line) || line[i] == ',' {
			if name != "" {
				fn(name, "", false, true)
			}
			i++
			continue
		}
		i++ // '='
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		var value string
		wellFormed := true
		if i < len(line) && line[i] == '"' {
			var b strings.Builder
			i++
			closed := false
			for i < len(line) {
				c := line[i]
				if c == '\\' && i+1 < len(line) {
					b.WriteByte(line[i+1])
					i += 2
					continue
				}
				i++
				if c == '"' {
					closed = true
					break
				}
				b.WriteByte(c)
			}
			value = b.String()
			start = i
			for i < len(line) && line[i] != ',' {
				i++
			}
			wellFormed = closed && trimOWS(line[start:i]) == ""
		} else {
			start = i
			for i < len(line) && line[i] != ',' {
				i++
			}
			value = trimOWS(line[start:i])
		}
		i++ // ','
		if name != "" {
			fn(name, value, true, wellFormed)
		}
	}
}

// parseDelta parses delta-seconds (1*DIGIT), clamping at maxDelta. It
// reports false, with a zero duration, for anything else, including a
// sign.
func parseDelta(s string, ok bool) (time.Duration, bool) {
	if !ok || s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n <= 1<<31 {
			n = n*10 + int64(c-'0')
		}
	}
	if n > 1<<31 {
		n = 1 << 31
	}
	return time.Duration(n) * time.Second, true
}

// trimOWS trims HTTP optional whitespace (spaces and horizontal tabs).
func trimOWS(s string) string {
	return strings.Trim(s, " \t")
}

// asciiLower lower-cases ASCII letters only. strings.ToLower and
// strings.EqualFold also fold non-ASCII letters (the Kelvin sign to 'k',
// the long s to 's'), which would let "ſ-maxage" pass for "s-maxage".
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
