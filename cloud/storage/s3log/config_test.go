package s3log_test

import (
	"errors"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/storage/s3log"
)

const ns = `xmlns="http://s3.amazonaws.com/doc/2006-03-01/"`

func TestParse(t *testing.T) {
	simple := &s3log.Config{TargetBucket: "logs", TargetPrefix: "src/"}
	tests := []struct {
		name string
		doc  string
		want *s3log.Config
		err  error
	}{
		{"off", `<BucketLoggingStatus ` + ns + `/>`, nil, nil},
		{"off without namespace", `<BucketLoggingStatus></BucketLoggingStatus>`, nil, nil},
		{"simple", `<BucketLoggingStatus ` + ns + `><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix>src/</TargetPrefix></LoggingEnabled></BucketLoggingStatus>`, simple, nil},
		{"simple format named", `<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix>src/</TargetPrefix>` +
			`<TargetObjectKeyFormat><SimplePrefix/></TargetObjectKeyFormat></LoggingEnabled></BucketLoggingStatus>`, simple, nil},
		{"empty prefix", `<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix/></LoggingEnabled></BucketLoggingStatus>`,
			&s3log.Config{TargetBucket: "logs"}, nil},
		{"empty target is the caller's to refuse", `<BucketLoggingStatus><LoggingEnabled><TargetBucket></TargetBucket><TargetPrefix></TargetPrefix></LoggingEnabled></BucketLoggingStatus>`,
			&s3log.Config{}, nil},
		{"partitioned by event time", `<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix>p/</TargetPrefix>` +
			`<TargetObjectKeyFormat><PartitionedPrefix><PartitionDateSource>EventTime</PartitionDateSource></PartitionedPrefix></TargetObjectKeyFormat></LoggingEnabled></BucketLoggingStatus>`,
			&s3log.Config{TargetBucket: "logs", TargetPrefix: "p/", Partitioned: true, DateSource: s3log.EventTime}, nil},
		{"partitioned, source defaults to event time", `<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix>p/</TargetPrefix>` +
			`<TargetObjectKeyFormat><PartitionedPrefix/></TargetObjectKeyFormat></LoggingEnabled></BucketLoggingStatus>`,
			&s3log.Config{TargetBucket: "logs", TargetPrefix: "p/", Partitioned: true, DateSource: s3log.EventTime}, nil},
		{"partitioned by delivery time", `<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix>p/</TargetPrefix>` +
			`<TargetObjectKeyFormat><PartitionedPrefix><PartitionDateSource>DeliveryTime</PartitionDateSource></PartitionedPrefix></TargetObjectKeyFormat></LoggingEnabled></BucketLoggingStatus>`,
			&s3log.Config{TargetBucket: "logs", TargetPrefix: "p/", Partitioned: true, DateSource: s3log.DeliveryTime}, nil},
		{"grants", `<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix>p/</TargetPrefix><TargetGrants><Grant/></TargetGrants></LoggingEnabled></BucketLoggingStatus>`,
			nil, s3log.ErrGrants},
		{"not XML", `logging please`, nil, s3log.ErrMalformed},
		{"another root", `<LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix/></LoggingEnabled>`, nil, s3log.ErrMalformed},
		{"s3cmd's namespace", `<BucketLoggingStatus xmlns="http://doc.s3.amazonaws.com/2006-03-01"><LoggingEnabled><TargetBucket>logs</TargetBucket>` +
			`<TargetPrefix>src/</TargetPrefix></LoggingEnabled></BucketLoggingStatus>`, simple, nil},
		{"unknown element", `<BucketLoggingStatus><Enabled/></BucketLoggingStatus>`, nil, s3log.ErrMalformed},
		{"unknown element inside", `<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix/><Extra/></LoggingEnabled></BucketLoggingStatus>`, nil, s3log.ErrMalformed},
		{"no target bucket", `<BucketLoggingStatus><LoggingEnabled><TargetPrefix>p/</TargetPrefix></LoggingEnabled></BucketLoggingStatus>`, nil, s3log.ErrMalformed},
		{"no target prefix", `<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket></LoggingEnabled></BucketLoggingStatus>`, nil, s3log.ErrMalformed},
		{"both key formats", `<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix/>` +
			`<TargetObjectKeyFormat><SimplePrefix/><PartitionedPrefix/></TargetObjectKeyFormat></LoggingEnabled></BucketLoggingStatus>`, nil, s3log.ErrMalformed},
		{"empty key format", `<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix/>` +
			`<TargetObjectKeyFormat></TargetObjectKeyFormat></LoggingEnabled></BucketLoggingStatus>`, nil, s3log.ErrMalformed},
		{"bad date source", `<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix/>` +
			`<TargetObjectKeyFormat><PartitionedPrefix><PartitionDateSource>Yesterday</PartitionDateSource></PartitionedPrefix></TargetObjectKeyFormat></LoggingEnabled></BucketLoggingStatus>`, nil, s3log.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s3log.Parse([]byte(tt.doc))
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if err != nil {
				return
			}
			// What GetBucketLogging answers reads back the same.
			again, err := s3log.Parse(got.XML())
			if err != nil || (again == nil) != (got == nil) || again != nil && *again != *got {
				t.Fatalf("XML %s reads back as %+v, %v", got.XML(), again, err)
			}
		})
	}
}

func TestKey(t *testing.T) {
	event := time.Date(2026, 11, 28, 23, 59, 58, 0, time.UTC)
	delivered := time.Date(2026, 11, 29, 0, 5, 7, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		c    s3log.Config
		want string
	}{
		{s3log.Config{TargetPrefix: "logs/"}, "logs/2026-11-28-23-05-07-0A1B"},
		{s3log.Config{}, "2026-11-28-23-05-07-0A1B"},
		{s3log.Config{TargetPrefix: "p/", Partitioned: true, DateSource: s3log.EventTime}, "p/acct/us-east-1/src/2026/11/28/2026-11-28-00-00-00-0A1B"},
		{s3log.Config{TargetPrefix: "p/", Partitioned: true, DateSource: s3log.DeliveryTime}, "p/acct/us-east-1/src/2026/11/28/2026-11-28-23-05-07-0A1B"},
	}
	for _, tt := range tests {
		if got := tt.c.Key("acct", "us-east-1", "src", event, delivered, "0A1B"); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.c, got, tt.want)
		}
	}
}

// FuzzParse: any document parses or is refused, without panicking, and
// what parses reads back the same from the XML GetBucketLogging answers.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix>a&amp;b</TargetPrefix>` +
		`<TargetObjectKeyFormat><PartitionedPrefix><PartitionDateSource>DeliveryTime</PartitionDateSource></PartitionedPrefix></TargetObjectKeyFormat></LoggingEnabled></BucketLoggingStatus>`))
	f.Add([]byte(`<BucketLoggingStatus/>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		c, err := s3log.Parse(doc)
		if err != nil {
			if !errors.Is(err, s3log.ErrMalformed) && !errors.Is(err, s3log.ErrGrants) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		again, err := s3log.Parse(c.XML())
		if err != nil || (again == nil) != (c == nil) || again != nil && *again != *c {
			t.Fatalf("%+v reads back as %+v, %v", c, again, err)
		}
	})
}
