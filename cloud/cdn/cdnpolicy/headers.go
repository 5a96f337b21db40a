package cdnpolicy

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// hopByHop lists, lower-cased, the fields that describe one connection
// rather than the message (RFC 9110 7.6.1), plus the proxy authentication
// fields a cache must not store (RFC 9111 3.1).
var hopByHop = []string{
	"connection", "keep-alive", "proxy-connection", "te", "trailer",
	"transfer-encoding", "upgrade",
	"proxy-authenticate", "proxy-authentication-info", "proxy-authorization",
}

// connectionFields returns the lower-cased names of h's hop-by-hop fields:
// the fixed ones and those its Connection field names.
func connectionFields(h http.Header) map[string]bool {
	set := make(map[string]bool, len(hopByHop)+2)
	for _, f := range hopByHop {
		set[f] = true
	}
	for k, vs := range h {
		if asciiLower(k) != "connection" {
			continue
		}
		for _, v := range vs {
			for _, name := range strings.Split(v, ",") {
				if name = asciiLower(trimOWS(name)); name != "" {
					set[name] = true
				}
			}
		}
	}
	return set
}

// HopByHop removes from h, in place, the hop-by-hop fields: Connection and
// every field it names, Keep-Alive, Proxy-Connection, TE, Trailer,
// Transfer-Encoding, Upgrade, and the proxy authentication fields
// Proxy-Authenticate, Proxy-Authentication-Info and Proxy-Authorization.
// Names match case-insensitively, so keys that were set without
// canonicalisation go too.
func HopByHop(h http.Header) {
	set := connectionFields(h)
	for k := range h {
		if set[asciiLower(k)] {
			delete(h, k)
		}
	}
}

// refreshSkipped lists, lower-cased, the fields a 304 never overwrites in
// a stored response, besides the hop-by-hop ones:
//   - Content-Length: required by RFC 9111 3.2; the stored body keeps its
//     length.
//   - Content-Range: processed per message (RFC 9111 3.2 lets caches skip
//     it).
//   - Content-Encoding: the stored body's bytes depend on it (RFC 9111
//     3.2); an origin that answers a gzip-accepting client's revalidation
//     with "Content-Encoding: gzip" must not relabel a stored identity
//     body.
//   - Set-Cookie: a cookie set in a 304 is for the client that triggered
//     the revalidation; merged into the entry it would go to everyone.
var refreshSkipped = []string{"content-length", "content-range", "content-encoding", "set-cookie"}

// Refresh applies a 304 Not Modified answer to a stored response (RFC 9111
// 4.3.4, 3.2). It returns a copy of stored in which each field of
// notModified replaces the stored one, except hop-by-hop fields and the
// fields in refreshSkipped. Neither argument is modified.
//
// Date and Age describe a message, not the representation: the merged
// header carries the 304's, and none when the 304 has none, so that the
// Freshness the caller recomputes from it (with the revalidation's
// request and response times) does not count the stored response's old
// age again. An edge serving a response without Date adds one, as RFC
// 9110 6.6.1 requires of a recipient with a clock.
//
// Which stored response a 304 applies to (matching validators, Vary) is
// the edge's decision; a 304 that changes Vary changes the entry's key.
func Refresh(stored, notModified http.Header) http.Header {
	out := stored.Clone()
	if out == nil {
		out = make(http.Header)
	}
	skip := connectionFields(notModified)
	for _, f := range refreshSkipped {
		skip[f] = true
	}
	replaced := map[string]bool{"date": true, "age": true}
	for k, vs := range notModified {
		if name := asciiLower(k); !skip[name] && len(vs) > 0 {
			replaced[name] = true
		}
	}
	for k := range out {
		if replaced[asciiLower(k)] {
			delete(out, k)
		}
	}
	for k, vs := range notModified {
		if name := asciiLower(k); !skip[name] && len(vs) > 0 {
			ck := http.CanonicalHeaderKey(k)
			out[ck] = append(out[ck], vs...)
		}
	}
	return out
}

// Conditional returns the header fields for revalidating a stored response
// with the origin: If-None-Match with the stored ETag, strong or weak as
// stored, when there is one, and If-Modified-Since with the stored
// Last-Modified when present. Both are sent when both exist; an origin
// that understands If-None-Match ignores the other (RFC 9110 13.1.3).
func Conditional(stored http.Header) http.Header {
	h := make(http.Header)
	if etag := trimOWS(stored.Get("ETag")); etag != "" {
		h.Set("If-None-Match", etag)
	}
	if lm := trimOWS(stored.Get("Last-Modified")); lm != "" {
		h.Set("If-Modified-Since", lm)
	}
	return h
}

// VaryFields returns the field names listed in resp's Vary (all lines,
// comma-separated), lower-cased, sorted and deduplicated; star reports
// "Vary: *", which the returned fields do not include.
func VaryFields(resp http.Header) (fields []string, star bool) {
	for _, line := range resp.Values("Vary") {
		for _, name := range strings.Split(line, ",") {
			switch name = asciiLower(trimOWS(name)); name {
			case "":
			case "*":
				star = true
			default:
				fields = append(fields, name)
			}
		}
	}
	slices.Sort(fields)
	return slices.Compact(fields), star
}

// VaryKey returns a string that is equal for two requests exactly when
// they match on fields (RFC 9111 4.1). fields are matched
// case-insensitively and in any order (they are normalised as VaryFields
// does). A request's value for a field is all its lines combined, with
// whitespace around commas removed: "gzip, br" and the two lines "gzip"
// and "br" match; case and order of the values still matter. A field
// absent from both requests matches; absent does not match present with
// an empty value, as RFC 9111 4.1 requires. The key names the fields, so
// entries with different Vary lists never collide; with no fields it is
// "".
func VaryKey(fields []string, req http.Header) string {
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		if f = asciiLower(trimOWS(f)); f != "" {
			names = append(names, f)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)

	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		// Quoting makes the encoding unambiguous whatever the names and
		// values contain; "absent" cannot be mistaken for a quoted value.
		b.WriteString(strconv.Quote(name))
		b.WriteByte(':')
		vs := req.Values(name)
		if len(vs) == 0 {
			b.WriteString("absent")
			continue
		}
		var parts []string
		for _, v := range vs {
			for _, p := range strings.Split(v, ",") {
				parts = append(parts, trimOWS(p))
			}
		}
		b.WriteString(strconv.Quote(strings.Join(parts, ",")))
	}
	return b.String()
}
