package s3log

import (
	"strconv"
	"time"
)

// Record is one request, as a server access log record has it (AWS's
// "Amazon S3 server access log format"). Empty strings, and the negative
// numbers the fields below name, are written "-": unknown or not
// applicable.
type Record struct {
	BucketOwner string    // the canonical id of the bucket's owner
	Bucket      string    // the bucket the request addressed
	Time        time.Time // when the request was received
	RemoteIP    string
	Requester   string // the requester's canonical id; "" when anonymous
	RequestID   string
	Operation   string // REST.METHOD.RESOURCE (see Operation)
	Key         string // the object key, written URL-encoded
	RequestURI  string // the request line: "GET /bucket/key?acl HTTP/1.1"
	Status      int
	ErrorCode   string
	BytesSent   int64         // response body bytes; 0 is written "-"
	ObjectSize  int64         // the object's whole size; -1 when not an object's
	TotalTime   time.Duration // from the request's first byte to the answer's last
	// TurnAround is from the request's last byte to the answer's first;
	// negative when the answer began before the body was read.
	TurnAround time.Duration
	Referer    string
	UserAgent  string
	VersionID  string
	HostID     string
	// SignatureVersion is SigV2 or SigV4 for a signed request.
	SignatureVersion string
	CipherSuite      string // the TLS cipher suite, by its standard name
	// AuthType is AuthHeader or QueryString (a presigned URL) for a
	// signed request.
	AuthType    string
	HostHeader  string
	TLSVersion  string // TLSv1.2, TLSv1.3
	ACLRequired bool   // whether an ACL (here, a bucket's public-read) was needed to allow the request
}

// Append appends r, one line ending in a newline, to dst. Every field is
// one token of printable ASCII: the unquoted ones never hold a space, the
// quoted ones (the request line, referer, user agent) never a double
// quote; any byte that could break a field (spaces, quotes, backslashes,
// control characters, bytes past ASCII) is percent-encoded, so a parser
// that splits on spaces and quoted runs reads every record whatever a
// client sent.
func (r *Record) Append(dst []byte) []byte {
	dst = field(dst, r.BucketOwner)
	dst = append(dst, ' ')
	dst = field(dst, r.Bucket)
	dst = append(dst, " ["...)
	dst = r.Time.UTC().AppendFormat(dst, "02/Jan/2006:15:04:05 +0000")
	dst = append(dst, "] "...)
	dst = field(dst, r.RemoteIP)
	dst = append(dst, ' ')
	dst = field(dst, r.Requester)
	dst = append(dst, ' ')
	dst = field(dst, r.RequestID)
	dst = append(dst, ' ')
	dst = field(dst, r.Operation)
	dst = append(dst, ' ')
	if r.Key == "" {
		dst = append(dst, '-')
	} else {
		dst = appendKey(dst, r.Key)
	}
	dst = append(dst, ' ')
	dst = quoted(dst, r.RequestURI)
	dst = append(dst, ' ')
	dst = number(dst, int64(r.Status), r.Status > 0)
	dst = append(dst, ' ')
	dst = field(dst, r.ErrorCode)
	dst = append(dst, ' ')
	dst = number(dst, r.BytesSent, r.BytesSent > 0)
	dst = append(dst, ' ')
	dst = number(dst, r.ObjectSize, r.ObjectSize >= 0)
	dst = append(dst, ' ')
	dst = number(dst, r.TotalTime.Milliseconds(), r.TotalTime >= 0)
	dst = append(dst, ' ')
	dst = number(dst, r.TurnAround.Milliseconds(), r.TurnAround >= 0)
	dst = append(dst, ' ')
	dst = quoted(dst, r.Referer)
	dst = append(dst, ' ')
	dst = quoted(dst, r.UserAgent)
	for _, f := range []string{r.VersionID, r.HostID, r.SignatureVersion, r.CipherSuite, r.AuthType, r.HostHeader, r.TLSVersion} {
		dst = append(dst, ' ')
		dst = field(dst, f)
	}
	dst = append(dst, " - "...) // the access point: there are none here
	if r.ACLRequired {
		dst = append(dst, "Yes"...)
	} else {
		dst = append(dst, '-')
	}
	return append(dst, '\n')
}

// Fields is how many fields Append writes, the time's brackets counting
// as one.
const Fields = 26

func number(dst []byte, n int64, known bool) []byte {
	if !known {
		return append(dst, '-')
	}
	return strconv.AppendInt(dst, n, 10)
}

const hexDigits = "0123456789ABCDEF"

func escape(dst []byte, c byte) []byte {
	return append(dst, '%', hexDigits[c>>4], hexDigits[c&15])
}

// field appends s as one unquoted token: "-" when empty, and every byte
// that is not printable ASCII, or is a space, a quote, a bracket or a
// backslash, percent-encoded.
func field(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, '-')
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c <= ' ' || c >= 0x7f || c == '"' || c == '[' || c == ']' || c == '\\':
			dst = escape(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// quoted appends s in double quotes: "-" when empty, and every byte that
// is not printable ASCII (or is a quote or a backslash) percent-encoded.
// Spaces stay, and so do percent signs: a request line is logged as it
// was sent.
func quoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	if s == "" {
		dst = append(dst, '-')
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < ' ' || c >= 0x7f || c == '"' || c == '\\':
			dst = escape(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// appendKey appends key URL-encoded as S3 encodes keys: unreserved
// characters and slashes as they are, every other byte percent-encoded.
func appendKey(dst []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' {
			dst = append(dst, c)
		} else {
			dst = escape(dst, c)
		}
	}
	return dst
}
