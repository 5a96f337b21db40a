package s3api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3api"
)

func loggingTo(target, prefix string) *types.BucketLoggingStatus {
	return &types.BucketLoggingStatus{LoggingEnabled: &types.LoggingEnabled{TargetBucket: aws.String(target), TargetPrefix: aws.String(prefix)}}
}

// TestBucketLoggingConfig: PutBucketLogging and GetBucketLogging through
// the AWS SDK for Go, with every refusal S3 gives, each changing nothing.
func TestBucketLoggingConfig(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	for _, b := range []string{"src", "logs"} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	bobID, bobSecret := e.key(t, "bob", cloudstore.PermReadWrite, "*")
	bob := e.sdk(bobID, bobSecret)
	if _, err := bob.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bobs")}); err != nil {
		t.Fatal(err)
	}
	get := func() *types.LoggingEnabled {
		t.Helper()
		out, err := c.GetBucketLogging(ctx, &s3.GetBucketLoggingInput{Bucket: aws.String("src")})
		if err != nil {
			t.Fatal(err)
		}
		return out.LoggingEnabled
	}
	if le := get(); le != nil {
		t.Fatalf("a new bucket logs to %+v", le)
	}
	put := func(client *s3.Client, bucket string, st *types.BucketLoggingStatus) error {
		_, err := client.PutBucketLogging(ctx, &s3.PutBucketLoggingInput{Bucket: aws.String(bucket), BucketLoggingStatus: st})
		return err
	}
	if err := put(c, "src", loggingTo("logs", "src/")); err != nil {
		t.Fatal(err)
	}
	if le := get(); aws.ToString(le.TargetBucket) != "logs" || aws.ToString(le.TargetPrefix) != "src/" || le.TargetObjectKeyFormat != nil {
		t.Fatalf("GetBucketLogging: %+v", le)
	}

	roID, roSecret := e.key(t, "alice", cloudstore.PermRead, "*")
	scopedID, scopedSecret := e.key(t, "alice", cloudstore.PermReadWrite, "src")
	grants := loggingTo("logs", "g/")
	grants.LoggingEnabled.TargetGrants = []types.TargetGrant{{Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String("bob")}, Permission: types.BucketLogsPermissionRead}}
	refusals := []struct {
		name   string
		client *s3.Client
		bucket string
		st     *types.BucketLoggingStatus
		code   string
		status int
	}{
		{"a target that does not exist", c, "src", loggingTo("nowhere", ""), "InvalidTargetBucketForLogging", 400},
		{"an empty target", c, "src", loggingTo("", ""), "InvalidTargetBucketForLogging", 400},
		{"another owner's target", c, "src", loggingTo("bobs", ""), "InvalidTargetBucketForLogging", 400},
		{"target grants", c, "src", grants, "AccessControlListNotSupported", 400},
		{"a prefix too long for keys", c, "src", loggingTo("logs", strings.Repeat("p", 1000)), "InvalidArgument", 400},
		{"a read-only key", e.sdk(roID, roSecret), "src", loggingTo("logs", "x/"), "AccessDenied", 403},
		{"a key scoped to the source", e.sdk(scopedID, scopedSecret), "src", loggingTo("logs", "x/"), "AccessDenied", 403},
		{"another account", bob, "src", loggingTo("bobs", "x/"), "AccessDenied", 403},
	}
	for _, r := range refusals {
		err := put(r.client, r.bucket, r.st)
		if apiCode(err) != r.code || httpStatus(err) != r.status {
			t.Errorf("%s: %v, want %d %s", r.name, err, r.status, r.code)
		}
	}
	if le := get(); aws.ToString(le.TargetBucket) != "logs" || aws.ToString(le.TargetPrefix) != "src/" {
		t.Fatalf("a refused PutBucketLogging changed the configuration: %+v", le)
	}
	if _, err := bob.GetBucketLogging(ctx, &s3.GetBucketLoggingInput{Bucket: aws.String("src")}); apiCode(err) != "AccessDenied" {
		t.Errorf("another account's GetBucketLogging: %v", err)
	}
	// The scoped key may log its bucket into itself.
	if err := put(e.sdk(scopedID, scopedSecret), "src", loggingTo("src", "self/")); err != nil {
		t.Errorf("a scoped key logging its bucket into itself: %v", err)
	}

	// What the SDK cannot send: a document that is not one, and ?logging
	// on an object.
	for _, body := range []string{"<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket></LoggingEnabled></BucketLoggingStatus>", "not xml"} {
		if status, e := do(t, e.signed(t, "PUT", "/src?logging", strings.NewReader(body), sha(body), nil)); status != 400 || e.Code != "MalformedXML" {
			t.Errorf("PUT ?logging %q: %d %s, want 400 MalformedXML", body, status, e.Code)
		}
	}
	if status, e := do(t, e.signed(t, "GET", "/src/k?logging", nil, "", nil)); status != 501 || e.Code != "NotImplemented" {
		t.Errorf("GET ?logging on an object: %d %s", status, e.Code)
	}
	if status, e := do(t, e.signed(t, "DELETE", "/src?logging", nil, "", nil)); status != 405 {
		t.Errorf("DELETE ?logging: %d %s", status, e.Code)
	}

	partitioned := loggingTo("logs", "p/")
	partitioned.LoggingEnabled.TargetObjectKeyFormat = &types.TargetObjectKeyFormat{PartitionedPrefix: &types.PartitionedPrefix{PartitionDateSource: types.PartitionDateSourceDeliveryTime}}
	if err := put(c, "src", partitioned); err != nil {
		t.Fatal(err)
	}
	if le := get(); le.TargetObjectKeyFormat == nil || le.TargetObjectKeyFormat.PartitionedPrefix == nil ||
		le.TargetObjectKeyFormat.PartitionedPrefix.PartitionDateSource != types.PartitionDateSourceDeliveryTime {
		t.Fatalf("partitioned configuration read back as %+v", le)
	}
	// An empty status turns logging off.
	if err := put(c, "src", &types.BucketLoggingStatus{}); err != nil {
		t.Fatal(err)
	}
	if le := get(); le != nil {
		t.Fatalf("logging still on after it was turned off: %+v", le)
	}
	// A bucket deleted and made again starts without logging.
	if err := put(c, "logs", loggingTo("logs", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("logs")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("logs")}); err != nil {
		t.Fatal(err)
	}
	if out, err := c.GetBucketLogging(ctx, &s3.GetBucketLoggingInput{Bucket: aws.String("logs")}); err != nil || out.LoggingEnabled != nil {
		t.Fatalf("a bucket made again kept its old logging: %+v, %v", out, err)
	}
}

// record is a delivered record's fields, read with the grammar log
// parsers use (package s3log's testdata), not with this code's own.
type record []string

func (r record) op() string     { return r[7] }
func (r record) key() string    { return r[8] }
func (r record) status() string { return r[10] }
func (r record) code() string   { return r[11] }

var recordLine = func() *regexp.Regexp {
	data, err := os.ReadFile("../s3log/testdata/record.regex")
	if err != nil {
		panic(err)
	}
	return regexp.MustCompile(strings.TrimSpace(string(data)))
}()

// delivered waits until the objects under prefix of bucket hold at least
// n records, and returns them and the objects' keys.
func delivered(t *testing.T, c *s3.Client, bucket, prefix string, n int) ([]record, []string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var recs []record
		var keys []string
		out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out.Contents {
			keys = append(keys, aws.ToString(o.Key))
			obj, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: o.Key})
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(obj.Body)
			obj.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if aws.ToString(obj.ContentType) != "text/plain" {
				t.Errorf("log object %s is %s", aws.ToString(o.Key), aws.ToString(obj.ContentType))
			}
			for _, line := range strings.SplitAfter(string(data), "\n") {
				if line == "" {
					continue
				}
				m := recordLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
				if m == nil || !strings.HasSuffix(line, "\n") {
					t.Fatalf("a record a log parser cannot read: %q", line)
				}
				recs = append(recs, record(m))
			}
		}
		if len(recs) >= n {
			return recs, keys
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d records delivered under %s/%s after 15 s, want %d: %v", len(recs), bucket, prefix, n, recs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAccessLogDelivery: requests to a logging bucket, signed, anonymous
// and another account's, refused or not, arrive as records in AWS's
// format in objects of the target bucket, named as S3 names them.
func TestAccessLogDelivery(t *testing.T) {
	e := startEnv(t, false, s3api.Options{AccessLogInterval: 100 * time.Millisecond})
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	for _, b := range []string{"src", "logs", "part"} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.PutBucketLogging(ctx, &s3.PutBucketLoggingInput{Bucket: aws.String("src"), BucketLoggingStatus: loggingTo("logs", "src-logs/")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("src"), Key: aws.String("a b.txt"), Body: bytes.NewReader([]byte("hello"))}); err != nil {
		t.Fatal(err)
	}
	obj, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("src"), Key: aws.String("a b.txt"), Range: aws.String("bytes=1-2")})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, obj.Body)
	obj.Body.Close()
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("src"), Key: aws.String("missing")}); httpStatus(err) != 404 {
		t.Fatalf("HEAD of a missing key: %v", err)
	}
	if _, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("src")}); err != nil {
		t.Fatal(err)
	}
	if status, _ := e.anonymous(t, "GET", "/src/a%20b.txt", nil); status != 403 {
		t.Fatalf("anonymous GET of a private bucket: %d", status)
	}
	bobID, bobSecret := e.key(t, "bob", cloudstore.PermReadWrite, "*")
	if _, err := e.sdk(bobID, bobSecret).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("src"), Key: aws.String("a b.txt")}); apiCode(err) != "AccessDenied" {
		t.Fatalf("another account's GET: %v", err)
	}
	pre, err := s3.NewPresignClient(c).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("src"), Key: aws.String("a b.txt")})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.loopbackClient().Get(pre.URL)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("presigned GET: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("src"), Key: aws.String("a b.txt")}); err != nil {
		t.Fatal(err)
	}

	recs, keys := delivered(t, c, "logs", "src-logs/", 8)
	name := regexp.MustCompile(`^src-logs/\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d-[0-9A-F]{16}$`)
	for _, k := range keys {
		if !name.MatchString(k) {
			t.Errorf("log object key %q is not PREFIX YYYY-mm-DD-HH-MM-SS-UNIQUE", k)
		}
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i][3] < recs[j][3] })
	type want struct{ op, key, status, code, requester, bytes, size, sig, auth string }
	wants := []want{
		{"REST.PUT.OBJECT", "a%20b.txt", "200", "-", "alice", "-", "5", "SigV4", "AuthHeader"},
		{"REST.GET.OBJECT", "a%20b.txt", "206", "-", "alice", "2", "5", "SigV4", "AuthHeader"},
		{"REST.HEAD.OBJECT", "missing", "404", "NoSuchKey", "alice", "-", "-", "SigV4", "AuthHeader"},
		{"REST.GET.BUCKET", "-", "200", "-", "alice", "", "-", "SigV4", "AuthHeader"},
		{"REST.GET.OBJECT", "a%20b.txt", "403", "AccessDenied", "-", "", "-", "-", "-"},
		{"REST.GET.OBJECT", "a%20b.txt", "403", "AccessDenied", "bob", "", "-", "SigV4", "AuthHeader"},
		{"REST.GET.OBJECT", "a%20b.txt", "200", "-", "alice", "5", "5", "SigV4", "QueryString"},
		{"REST.DELETE.OBJECT", "a%20b.txt", "204", "-", "alice", "-", "-", "SigV4", "AuthHeader"},
	}
	if len(recs) != len(wants) {
		t.Fatalf("%d records, want %d: %v", len(recs), len(wants), recs)
	}
	// Records come in the order the requests were made, within a second;
	// match each to the first unmatched want of its operation and status.
	used := make([]bool, len(recs))
	for _, w := range wants {
		found := false
		for i, r := range recs {
			if used[i] || r.op() != w.op || r.status() != w.status || r[5] != w.requester {
				continue
			}
			used[i], found = true, true
			if r.key() != w.key || r.code() != w.code || r[13] != w.size || r[20] != w.sig || r[22] != w.auth {
				t.Errorf("%s %s: record %q, want %+v", w.op, w.status, r[0], w)
			}
			if w.bytes != "" && r[12] != w.bytes {
				t.Errorf("%s %s: bytes sent %s, want %s", w.op, w.status, r[12], w.bytes)
			}
			if r[1] != "alice" || r[2] != "src" || r[4] != "127.0.0.1" || r[6] == "-" || !strings.Contains(r[9], " HTTP/1.1") || r[23] != e.addr() {
				t.Errorf("record %q: owner, bucket, address, request id, request line or host wrong", r[0])
			}
			if w.auth == "QueryString" {
				if !strings.Contains(r[9], "X-Amz-Signature=REDACTED") || strings.Contains(r[9], pre.URL[strings.Index(pre.URL, "X-Amz-Signature=")+16:]) {
					t.Errorf("presigned request line %q: the signature is not redacted", r[9])
				}
				continue
			}
			if !strings.Contains(r[17], "aws-sdk-go-v2") && w.requester != "-" {
				t.Errorf("record %q: user agent %q", r[0], r[17])
			}
		}
		if !found {
			t.Errorf("no record of %+v in %v", w, recs)
		}
	}

	// A bucket may log into itself: its deliveries are not requests and
	// make no records of their own.
	if _, err := c.PutBucketLogging(ctx, &s3.PutBucketLoggingInput{Bucket: aws.String("logs"), BucketLoggingStatus: loggingTo("logs", "self/")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("logs"), Key: aws.String("note"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	self, _ := delivered(t, c, "logs", "self/", 1)
	time.Sleep(300 * time.Millisecond) // more deliveries, had they made records
	// The reads of the log objects by delivered are logged too: only
	// GETs and LISTs may follow the PUT.
	self, _ = delivered(t, c, "logs", "self/", 1)
	for _, r := range self {
		if r.op() == "REST.PUT.OBJECT" && r.key() != "note" {
			t.Errorf("a delivery was logged: %q", r[0])
		}
	}

	// The partitioned format, by the events' day.
	part := loggingTo("logs", "p/")
	part.LoggingEnabled.TargetObjectKeyFormat = &types.TargetObjectKeyFormat{PartitionedPrefix: &types.PartitionedPrefix{PartitionDateSource: types.PartitionDateSourceEventTime}}
	if _, err := c.PutBucketLogging(ctx, &s3.PutBucketLoggingInput{Bucket: aws.String("part"), BucketLoggingStatus: part}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("part")}); err != nil {
		t.Fatal(err)
	}
	recs, keys = delivered(t, c, "logs", "p/", 1)
	day, err := time.Parse("02/Jan/2006:15:04:05 -0700", recs[0][3])
	if err != nil {
		t.Fatal(err)
	}
	wantKey := regexp.MustCompile(`^p/alice/us-east-1/part/` + day.Format("2006/01/02/2006-01-02") + `-00-00-00-[0-9A-F]{16}$`)
	for _, k := range keys {
		if !wantKey.MatchString(k) {
			t.Errorf("partitioned log object key %q, want %s", k, wantKey)
		}
	}
}

// TestAccessLogWait: records not yet delivered when the endpoint stops
// are delivered by Wait, and a target deleted meanwhile loses its records
// without harm.
func TestAccessLogWait(t *testing.T) {
	e := startEnv(t, false, s3api.Options{AccessLogInterval: time.Hour})
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	for _, b := range []string{"src", "logs", "gone", "src2"} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	for src, target := range map[string]string{"src": "logs", "src2": "gone"} {
		if _, err := c.PutBucketLogging(ctx, &s3.PutBucketLoggingInput{Bucket: aws.String(src), BucketLoggingStatus: loggingTo(target, "")}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(src)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("gone")}); err != nil {
		t.Fatal(err)
	}
	// Another account takes the deleted target's name: alice's records
	// must not reach it.
	bobID, bobSecret := e.key(t, "bob", cloudstore.PermReadWrite, "*")
	if _, err := e.sdk(bobID, bobSecret).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("gone")}); err != nil {
		t.Fatal(err)
	}
	// The request that turns logging off is made while it is on: logged.
	if _, err := c.PutBucketLogging(ctx, &s3.PutBucketLoggingInput{Bucket: aws.String("src"), BucketLoggingStatus: &types.BucketLoggingStatus{}}); err != nil {
		t.Fatal(err)
	}
	list, err := e.st.ListObjects("alice", "logs", "", "", "", 100)
	if err != nil || len(list.Objects) != 0 {
		t.Fatalf("delivered before the interval: %+v, %v", list, err)
	}
	e.srv.Close()
	e.api.Wait()
	list, err = e.st.ListObjects("alice", "logs", "", "", "", 100)
	if err != nil || len(list.Objects) != 1 {
		t.Fatalf("after Wait: %+v, %v", list, err)
	}
	_, body, err := e.st.OpenObject(t.Context(), "alice", "logs", list.Objects[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	data, _ := io.ReadAll(body)
	if !bytes.Contains(data, []byte(" REST.GET.BUCKET ")) || !bytes.Contains(data, []byte(" REST.PUT.LOGGING_STATUS ")) || bytes.Count(data, []byte("\n")) != 2 {
		t.Fatalf("delivered at Wait: %q", data)
	}
	if l, err := e.st.ListObjects("bob", "gone", "", "", "", 100); err != nil || len(l.Objects) != 0 {
		t.Fatalf("bob's bucket of the deleted target's name got alice's records: %+v, %v", l, err)
	}

	// An endpoint started again on the store logs what the store says
	// logs, from its first request.
	if err := e.st.SetBucketConfig("alice", "src", cloudstore.ConfigLogging,
		[]byte(`<BucketLoggingStatus><LoggingEnabled><TargetBucket>logs</TargetBucket><TargetPrefix>again/</TargetPrefix></LoggingEnabled></BucketLoggingStatus>`)); err != nil {
		t.Fatal(err)
	}
	again := s3api.New(e.st, s3api.Options{AccessLogInterval: time.Hour})
	srv := httptest.NewServer(again)
	resp, err := http.Get(srv.URL + "/src?list-type=2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.Close()
	again.Wait()
	list, err = e.st.ListObjects("alice", "logs", "again/", "", "", 100)
	if err != nil || len(list.Objects) != 1 {
		t.Fatalf("after a restart: %+v, %v", list, err)
	}
}
