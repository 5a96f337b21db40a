// Package s3log is the pure core of S3 server access logging: a bucket's
// logging configuration (the BucketLoggingStatus of PutBucketLogging), the
// space-delimited record AWS documents for each request, and the keys of
// the log objects delivered to the target bucket. The S3 endpoint (package
// s3api) keeps the configuration, takes a record of each request and
// delivers them; nothing here touches the network or the store.
package s3log

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strings"
	"unicode/utf8"
)

// MaxSize bounds a BucketLoggingStatus document.
const MaxSize = 64 << 10

// Errors callers tell apart: ErrMalformed for a document that is not a
// BucketLoggingStatus as S3's schema has it (S3 answers MalformedXML), and
// ErrGrants for TargetGrants, which buckets whose object ownership is
// BucketOwnerEnforced (every bucket here) do not take (S3 answers
// AccessControlListNotSupported).
var (
	ErrMalformed = errors.New("s3log: malformed BucketLoggingStatus")
	ErrGrants    = errors.New("s3log: target grants are not allowed for bucket owner enforced buckets")
)

// The partition date sources of the partitioned key format.
const (
	EventTime    = "EventTime"
	DeliveryTime = "DeliveryTime"
)

// Config is a bucket's logging configuration: where its records go.
type Config struct {
	TargetBucket string
	TargetPrefix string
	// Partitioned selects the partitioned key format
	// (PREFIX ACCOUNT/REGION/BUCKET/YYYY/MM/DD/...); DateSource is then
	// EventTime or DeliveryTime, the date the partition names.
	Partitioned bool
	DateSource  string
}

// document is BucketLoggingStatus as S3's schema has it; the Unknown
// fields catch any element the schema does not have.
type document struct {
	XMLName xml.Name  `xml:"BucketLoggingStatus"`
	Enabled *enabled  `xml:"LoggingEnabled"`
	Unknown []unknown `xml:",any"`
}

type enabled struct {
	TargetBucket *string    `xml:"TargetBucket"`
	TargetPrefix *string    `xml:"TargetPrefix"`
	TargetGrants *unknown   `xml:"TargetGrants"`
	KeyFormat    *keyFormat `xml:"TargetObjectKeyFormat"`
	Unknown      []unknown  `xml:",any"`
}

type keyFormat struct {
	Simple      *unknown     `xml:"SimplePrefix"`
	Partitioned *partitioned `xml:"PartitionedPrefix"`
	Unknown     []unknown    `xml:",any"`
}

type partitioned struct {
	DateSource *string   `xml:"PartitionDateSource"`
	Unknown    []unknown `xml:",any"`
}

type unknown struct {
	XMLName xml.Name
	Inner   []byte `xml:",innerxml"`
}

// Parse reads a BucketLoggingStatus. Without LoggingEnabled it turns
// logging off: Parse returns nil and no error. LoggingEnabled must hold a
// TargetBucket and a TargetPrefix (either may be empty; an empty target
// is for the caller to refuse, as S3 refuses a bucket that does not
// exist), may hold a TargetObjectKeyFormat with one of SimplePrefix and
// PartitionedPrefix (whose PartitionDateSource, EventTime when absent,
// is EventTime or DeliveryTime), and must not hold TargetGrants
// (ErrGrants). Anything else, or text that is not XML, is ErrMalformed.
// The namespace is not checked: s3cmd sends an old one
// (http://doc.s3.amazonaws.com/2006-03-01), which S3 takes.
func Parse(data []byte) (*Config, error) {
	var d document
	if err := xml.Unmarshal(data, &d); err != nil || len(d.Unknown) > 0 {
		return nil, ErrMalformed
	}
	e := d.Enabled
	if e == nil {
		return nil, nil
	}
	if len(e.Unknown) > 0 || e.TargetBucket == nil || e.TargetPrefix == nil {
		return nil, ErrMalformed
	}
	if !utf8.ValidString(*e.TargetBucket) || !utf8.ValidString(*e.TargetPrefix) {
		return nil, ErrMalformed
	}
	if e.TargetGrants != nil {
		return nil, ErrGrants
	}
	c := &Config{TargetBucket: strings.TrimSpace(*e.TargetBucket), TargetPrefix: *e.TargetPrefix}
	if f := e.KeyFormat; f != nil {
		switch {
		case len(f.Unknown) > 0, (f.Simple == nil) == (f.Partitioned == nil):
			return nil, ErrMalformed
		case f.Partitioned != nil:
			p := f.Partitioned
			if len(p.Unknown) > 0 {
				return nil, ErrMalformed
			}
			c.Partitioned, c.DateSource = true, EventTime
			if p.DateSource != nil {
				switch *p.DateSource {
				case EventTime, DeliveryTime:
					c.DateSource = *p.DateSource
				default:
					return nil, ErrMalformed
				}
			}
		}
	}
	return c, nil
}

// Namespace is S3's XML namespace.
const Namespace = "http://s3.amazonaws.com/doc/2006-03-01/"

// XML returns the BucketLoggingStatus that GetBucketLogging answers for
// c; a nil c is logging off, an empty document.
func (c *Config) XML() []byte {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<BucketLoggingStatus xmlns="` + Namespace + `">`)
	if c != nil {
		b.WriteString("<LoggingEnabled><TargetBucket>")
		xml.EscapeText(&b, []byte(c.TargetBucket))
		b.WriteString("</TargetBucket><TargetPrefix>")
		xml.EscapeText(&b, []byte(c.TargetPrefix))
		b.WriteString("</TargetPrefix>")
		if c.Partitioned {
			b.WriteString("<TargetObjectKeyFormat><PartitionedPrefix><PartitionDateSource>" + c.DateSource +
				"</PartitionDateSource></PartitionedPrefix></TargetObjectKeyFormat>")
		}
		b.WriteString("</LoggingEnabled>")
	}
	b.WriteString("</BucketLoggingStatus>")
	return b.Bytes()
}
