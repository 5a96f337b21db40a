package s3api

import (
	"encoding/base64"
	"mime"
	"strings"
	"unicode/utf8"
)

// User metadata is Unicode, but HTTP headers carry bytes. As S3 does, a
// value is read as RFC 2047 encoded words where it has them (decoded
// before it is stored), and a value that is not US-ASCII is sent back as
// one RFC 2047 encoded word ("=?UTF-8?B?...?=", base64 of its UTF-8), which
// any header can carry (the SDKs hand them over as they are; the client
// decodes them, as it must S3's). Raw bytes past ASCII are
// read as UTF-8 when they are valid UTF-8, and as ISO-8859-1 (HTTP's
// charset for header bytes, what boto3 sends) otherwise. S3 reads every
// raw byte as ISO-8859-1, so a client that sends UTF-8 gets its text
// back double-encoded there; this endpoint gives it back as sent.

var metaWords = new(mime.WordDecoder) // UTF-8, ISO-8859-1 and US-ASCII words

// metaIn is the stored form of a user metadata value as a header (or a
// presigned URL's query) carried it.
func metaIn(v string) string {
	if strings.Contains(v, "=?") {
		if d, err := metaWords.DecodeHeader(v); err == nil {
			v = d
		}
	}
	if utf8.ValidString(v) { // US-ASCII too
		return v
	}
	r := make([]rune, len(v))
	for i := 0; i < len(v); i++ {
		r[i] = rune(v[i]) // ISO-8859-1: each byte is its code point
	}
	return string(r)
}

// metaOut is the header form of a stored user metadata value: as it is
// when it is printable US-ASCII, else one RFC 2047 word of its UTF-8, as
// S3 sends non-ASCII values. Control characters (a decoded word may hold
// them) go encoded too: no header can carry them raw.
func metaOut(v string) string {
	if printable(v) {
		return v
	}
	return "=?UTF-8?B?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// printable reports whether s is printable US-ASCII (tabs and spaces
// included), which a header value carries as it is.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '\t' && (c < ' ' || c > '~') {
			return false
		}
	}
	return true
}
