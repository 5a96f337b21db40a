package cdnedge

import (
	"bytes"
	"net/http"
	"net/textproto"
	"strings"
)

// hitRequest is a request the fast path may answer from the cache: GET or
// HEAD over HTTP/1.1, without a body, a Range or validators, written
// exactly as RFC 9112 says. Anything else is left to net/http.
type hitRequest struct {
	head  bool   // HEAD rather than GET
	host  string // the Host header's name, lower case, without port or final dot
	key   string // the cache key: the escaped path and, if not empty, "?" and the query
	close bool   // Connection: close
	// fields are the header lines, name and value, for Vary.
	fields [][2]string
}

// header builds the request's header, for a resource that varies on some
// of its fields.
func (r *hitRequest) header() http.Header {
	h := make(http.Header, len(r.fields))
	for _, f := range r.fields {
		k := textproto.CanonicalMIMEHeaderKey(f[0])
		h[k] = append(h[k], f[1])
	}
	return h
}

// Parse outcomes.
const (
	parseOK   = iota // a hit candidate of n bytes
	parseMore        // the header is not complete yet
	parseSlow        // net/http must answer it
)

// parseHit reads one request from the start of b. It is strict: every
// request it accepts, net/http reads the same way (same method, host,
// cache key and length: a fuzz test holds it to that), and anything
// unusual (other methods and versions, bodies, Range, validators, an
// Expect, Upgrade or Pragma, bare LF, folded lines, characters net/http
// would re-escape or refuse) is parseSlow, for net/http to answer.
func parseHit(b []byte) (r hitRequest, n int, outcome int) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	scan := b
	if end >= 0 {
		scan = b[:end+4]
	}
	for i, c := range scan {
		// A bare LF ends lines for net/http, and a bare CR is refused:
		// either is net/http's business.
		if c == '\n' && (i == 0 || scan[i-1] != '\r') || c == '\r' && i+1 < len(scan) && scan[i+1] != '\n' {
			return r, 0, parseSlow
		}
	}
	if end < 0 {
		return r, 0, parseMore
	}
	n = end + 4
	block := b[:end+2] // every line with its CRLF
	eol := bytes.Index(block, []byte("\r\n"))
	line := block[:eol]
	block = block[eol+2:]

	// The request line: METHOD SP TARGET SP HTTP/1.1.
	switch {
	case bytes.HasPrefix(line, []byte("GET ")):
		line = line[4:]
	case bytes.HasPrefix(line, []byte("HEAD ")):
		r.head = true
		line = line[5:]
	default:
		return r, 0, parseSlow
	}
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 || string(line[sp+1:]) != "HTTP/1.1" {
		return r, 0, parseSlow
	}
	target := line[:sp]
	if !validTarget(target) {
		return r, 0, parseSlow
	}
	r.key = string(target)
	if q := bytes.IndexByte(target, '?'); q == len(target)-1 {
		r.key = r.key[:q] // an empty query is no query (but "/a?b?" has the query "b?")
	}

	hosts := 0
	for len(block) > 0 {
		eol := bytes.Index(block, []byte("\r\n"))
		line := block[:eol]
		block = block[eol+2:]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !validName(line[:colon]) {
			return r, 0, parseSlow // folded lines, spaces before the colon, bad names
		}
		name, value := line[:colon], trimOWS(line[colon+1:])
		if !validValue(value) {
			return r, 0, parseSlow
		}
		switch {
		case equalFold(name, "host"):
			hosts++
			host, ok := hostName(value)
			if !ok {
				return r, 0, parseSlow
			}
			r.host = host
			continue // net/http takes Host out of the header too
		case equalFold(name, "connection"):
			for _, tok := range bytes.Split(value, []byte(",")) {
				if equalFold(trimOWS(tok), "close") {
					r.close = true
				}
			}
		case equalFold(name, "content-length"), equalFold(name, "transfer-encoding"),
			equalFold(name, "expect"), equalFold(name, "upgrade"), equalFold(name, "range"),
			equalFold(name, "if-range"), equalFold(name, "if-none-match"), equalFold(name, "if-modified-since"),
			equalFold(name, "if-match"), equalFold(name, "if-unmodified-since"),
			equalFold(name, "pragma"): // net/http turns Pragma: no-cache into Cache-Control, which Vary may name
			return r, 0, parseSlow
		}
		r.fields = append(r.fields, [2]string{string(name), string(value)})
	}
	if hosts != 1 || r.host == "" {
		return r, 0, parseSlow
	}
	return r, n, parseOK
}

// validTarget reports whether t is an origin-form target whose path
// net/http's URL.EscapedPath gives back unchanged: the characters it
// keeps as they are and well-formed %XX escapes, then an optional query
// of visible ASCII without '#'.
func validTarget(t []byte) bool {
	if len(t) == 0 || t[0] != '/' {
		return false
	}
	i := 0
	for ; i < len(t) && t[i] != '?'; i++ {
		c := t[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~!$&'()*+,;=:@/", c) >= 0:
		case c == '%':
			if i+2 >= len(t) || !isHex(t[i+1]) || !isHex(t[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	for ; i < len(t); i++ {
		if c := t[i]; c <= ' ' || c >= 0x7f || c == '#' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validName reports whether a header name is a token (RFC 9110 5.1).
func validName(b []byte) bool {
	for _, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validValue reports whether a header value holds visible ASCII, spaces
// and tabs only (obs-text and controls are left to net/http).
func validValue(b []byte) bool {
	for _, c := range b {
		if (c < ' ' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// hostName returns the name of a Host value, lower case, without its port
// and final dot, as ServeHTTP routes it; false for anything but a plain
// DNS name with an optional numeric port.
func hostName(v []byte) (string, bool) {
	if i := bytes.IndexByte(v, ':'); i >= 0 {
		port := v[i+1:]
		if len(port) == 0 || len(port) > 5 {
			return "", false
		}
		for _, c := range port {
			if c < '0' || c > '9' {
				return "", false
			}
		}
		v = v[:i]
	}
	v = bytes.TrimSuffix(v, []byte("."))
	if len(v) == 0 {
		return "", false
	}
	out := make([]byte, len(v))
	for i, c := range v {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		default:
			return "", false
		}
		out[i] = c
	}
	return string(out), true
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold compares an ASCII header name with a lower-case one.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
