package s3log_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latticenet/lattice/cloud/storage/s3log"
)

// logLine is the record's grammar as log parsers read it (written from
// AWS's field list, as its Athena table reads records), a line at a time:
// space-separated tokens, the time in brackets, the request line,
// referer and user agent in double quotes. Package s3api's tests read
// delivered records with it too.
var logLine = func() *regexp.Regexp {
	data, err := os.ReadFile("testdata/record.regex")
	if err != nil {
		panic(err)
	}
	return regexp.MustCompile(strings.TrimSpace(string(data)))
}()

func TestRecordFormat(t *testing.T) {
	r := s3log.Record{
		BucketOwner: "alice", Bucket: "photos", Time: time.Date(2026, 2, 6, 0, 0, 38, 0, time.FixedZone("X", 7200)),
		RemoteIP: "192.0.2.3", Requester: "alice", RequestID: "3E57427F3EXAMPLE", Operation: "REST.GET.OBJECT",
		Key: "2026/cat & dog.jpg", RequestURI: "GET /photos/2026/cat%20&%20dog.jpg HTTP/1.1", Status: 200,
		BytesSent: 113, ObjectSize: 113, TotalTime: 7 * time.Millisecond, TurnAround: 3 * time.Millisecond,
		UserAgent: `aws-sdk-go-v2/1.30 "quoted"`, SignatureVersion: "SigV4", AuthType: "AuthHeader",
		HostHeader: "127.0.0.1:9000",
	}
	want := `alice photos [05/Feb/2026:22:00:38 +0000] 192.0.2.3 alice 3E57427F3EXAMPLE REST.GET.OBJECT 2026/cat%20%26%20dog.jpg ` +
		`"GET /photos/2026/cat%20&%20dog.jpg HTTP/1.1" 200 - 113 113 7 3 "-" "aws-sdk-go-v2/1.30 %22quoted%22" - - SigV4 - AuthHeader 127.0.0.1:9000 - - -` + "\n"
	if got := string(r.Append(nil)); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	anon := s3log.Record{Bucket: "photos", Status: 403, ErrorCode: "AccessDenied", ObjectSize: -1, TurnAround: -1, ACLRequired: true}
	got := string(anon.Append(nil))
	m := logLine.FindStringSubmatch(strings.TrimSuffix(got, "\n"))
	if m == nil {
		t.Fatalf("%q does not parse", got)
	}
	if m[5] != "-" || m[10] != "403" || m[11] != "AccessDenied" || m[12] != "-" || m[13] != "-" || m[15] != "-" || m[26] != "Yes" {
		t.Fatalf("anonymous record %q", got)
	}
}

// FuzzRecord: whatever a client puts in the fields it controls (key,
// request line, referer, user agent, host), the record is one line of
// exactly the documented fields that a log parser reads, and the fields
// a client does not control come out as they went in.
func FuzzRecord(f *testing.F) {
	f.Add("a b/c", "GET /b/a%20b HTTP/1.1", "", "curl/8", "h:1", "req-1")
	f.Add("\x00\n\"[]%", "\"\"", "\\", "\xff\xfe", " ", "")
	f.Fuzz(func(t *testing.T, key, uri, referer, agent, host, id string) {
		r := s3log.Record{BucketOwner: "alice", Bucket: "b", Time: time.Unix(1_800_000_000, 0), RemoteIP: "127.0.0.1",
			RequestID: id, Operation: "REST.PUT.OBJECT", Key: key, RequestURI: uri, Status: 200, ObjectSize: 5,
			Referer: referer, UserAgent: agent, HostHeader: host}
		line := string(r.Append(nil))
		m := logLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
		if m == nil || len(m) != s3log.Fields+1 {
			t.Fatalf("%q does not parse", line)
		}
		if strings.Count(line, "\n") != 1 {
			t.Fatalf("%q is not one line", line)
		}
		if m[1] != "alice" || m[2] != "b" || m[3] != "15/Jan/2027:08:00:00 +0000" || m[7] != "REST.PUT.OBJECT" || m[10] != "200" || m[13] != "5" {
			t.Fatalf("fields moved: %q", line)
		}
	})
}
