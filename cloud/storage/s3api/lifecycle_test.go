package s3api_test

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// lifecycleString is a lifecycle configuration read over S3, one rule a
// line, for comparisons ("error CODE" when the read fails).
func lifecycleString(t *testing.T, c *s3.Client, bucket string) string {
	t.Helper()
	out, err := c.GetBucketLifecycleConfiguration(context.Background(), &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(bucket)})
	if err != nil {
		return "error " + apiCode(err)
	}
	var lines []string
	for _, r := range out.Rules {
		l := fmt.Sprintf("%s %s", aws.ToString(r.ID), r.Status)
		if r.Prefix != nil {
			l += " prefix=" + *r.Prefix
		}
		if f := r.Filter; f != nil {
			l += " filter("
			if f.Prefix != nil {
				l += "prefix=" + *f.Prefix
			}
			if f.Tag != nil {
				l += "tag=" + tagString([]types.Tag{*f.Tag})
			}
			if f.ObjectSizeGreaterThan != nil {
				l += fmt.Sprintf("gt=%d", *f.ObjectSizeGreaterThan)
			}
			if f.ObjectSizeLessThan != nil {
				l += fmt.Sprintf("lt=%d", *f.ObjectSizeLessThan)
			}
			if a := f.And; a != nil {
				l += fmt.Sprintf("and(prefix=%s tags=%s gt=%d lt=%d)", aws.ToString(a.Prefix), tagString(a.Tags), aws.ToInt64(a.ObjectSizeGreaterThan), aws.ToInt64(a.ObjectSizeLessThan))
			}
			l += ")"
		}
		if e := r.Expiration; e != nil {
			switch {
			case e.Days != nil:
				l += fmt.Sprintf(" days=%d", *e.Days)
			case e.Date != nil:
				l += " date=" + e.Date.UTC().Format("2006-01-02")
			case e.ExpiredObjectDeleteMarker != nil:
				l += fmt.Sprintf(" markers=%v", *e.ExpiredObjectDeleteMarker)
			}
		}
		if n := r.NoncurrentVersionExpiration; n != nil {
			l += fmt.Sprintf(" noncurrent=%d/%d", aws.ToInt32(n.NoncurrentDays), aws.ToInt32(n.NewerNoncurrentVersions))
		}
		if a := r.AbortIncompleteMultipartUpload; a != nil {
			l += fmt.Sprintf(" abort=%d", aws.ToInt32(a.DaysAfterInitiation))
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

func putLifecycle(c *s3.Client, bucket string, rules ...types.LifecycleRule) error {
	_, err := c.PutBucketLifecycleConfiguration(context.Background(), &s3.PutBucketLifecycleConfigurationInput{
		Bucket: aws.String(bucket), LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: rules}})
	return err
}

func days(n int32) *types.LifecycleExpiration { return &types.LifecycleExpiration{Days: aws.Int32(n)} }

func prefixFilter(p string) *types.LifecycleRuleFilter {
	return &types.LifecycleRuleFilter{Prefix: aws.String(p)}
}

// TestLifecycleConfiguration puts, reads and deletes lifecycle
// configurations over S3, and checks that they are the REST API's rules.
func TestLifecycleConfiguration(t *testing.T) {
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "logs")
	if got := lifecycleString(t, c, "logs"); got != "error NoSuchLifecycleConfiguration" {
		t.Fatalf("a bucket without rules: got %v, want error NoSuchLifecycleConfiguration", got)
	}
	date := time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)
	rules := []types.LifecycleRule{
		{ID: aws.String("tmp"), Status: types.ExpirationStatusEnabled, Filter: prefixFilter("tmp/"), Expiration: days(7)},
		{ID: aws.String("tagged"), Status: types.ExpirationStatusDisabled, Filter: &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String("class"), Value: aws.String("scratch")}}, Expiration: &types.LifecycleExpiration{Date: &date}},
		{ID: aws.String("and"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{
			Prefix: aws.String("big/"), Tags: tagSet("a", "1", "b", "2"), ObjectSizeGreaterThan: aws.Int64(100), ObjectSizeLessThan: aws.Int64(1 << 30)}}, Expiration: days(30)},
		{ID: aws.String("versions"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{},
			Expiration:                  &types.LifecycleExpiration{ExpiredObjectDeleteMarker: aws.Bool(true)},
			NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(10), NewerNoncurrentVersions: aws.Int32(3)}},
		{ID: aws.String("uploads"), Status: types.ExpirationStatusEnabled, Prefix: aws.String("up/"), AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(2)}},
		{ID: aws.String("small"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{ObjectSizeLessThan: aws.Int64(10)}, Expiration: days(1)},
	}
	if err := putLifecycle(c, "logs", rules...); err != nil {
		t.Fatalf("PutBucketLifecycleConfiguration: %v", err)
	}
	want := strings.Join([]string{
		"tmp Enabled filter(prefix=tmp/) days=7",
		"tagged Disabled filter(tag=class=scratch) date=2030-01-02",
		"and Enabled filter(and(prefix=big/ tags=a=1,b=2 gt=100 lt=1073741824)) days=30",
		"versions Enabled filter() markers=true noncurrent=10/3",
		"uploads Enabled prefix=up/ abort=2",
		"small Enabled filter(lt=10) days=1",
	}, "\n")
	if got := lifecycleString(t, c, "logs"); got != want {
		t.Errorf("read back:\n%s\nwant:\n%s", got, want)
	}
	// The REST API keeps the same rules: it sees the S3 ones, and S3 sees
	// one it adds, in the order made.
	stored, err := e.st.Rules("alice", "logs")
	if err != nil || len(stored) != len(rules) || stored[0].ID != "tmp" || stored[0].Prefix != "tmp/" || stored[0].ExpireDays != 7 {
		t.Fatalf("the store's rules: %+v, %v; want the 6 put, tmp first", stored, err)
	}
	rest, err := e.st.AddRule("alice", "logs", "old/", 90, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want += "\n" + rest.ID + " Enabled filter(prefix=old/) days=90"
	if got := lifecycleString(t, c, "logs"); got != want {
		t.Errorf("after a REST rule was added:\n%s\nwant:\n%s", got, want)
	}
	// A rule given no id gets one; a new document replaces every rule,
	// the REST API's too.
	if err := putLifecycle(c, "logs", types.LifecycleRule{Status: types.ExpirationStatusEnabled, Filter: prefixFilter(""), Expiration: days(3)}); err != nil {
		t.Fatal(err)
	}
	stored, _ = e.st.Rules("alice", "logs")
	if len(stored) != 1 || !strings.HasPrefix(stored[0].ID, "rule_") {
		t.Fatalf("after replacing: %+v; want one rule with an id made for it", stored)
	}
	if _, err := c.DeleteBucketLifecycle(context.Background(), &s3.DeleteBucketLifecycleInput{Bucket: aws.String("logs")}); err != nil {
		t.Fatalf("DeleteBucketLifecycle: %v", err)
	}
	if got := lifecycleString(t, c, "logs"); got != "error NoSuchLifecycleConfiguration" {
		t.Errorf("after DeleteBucketLifecycle: got %v", got)
	}
	if got := apiCode(putLifecycle(c, "nosuch", rules[0])); got != "NoSuchBucket" {
		t.Errorf("a missing bucket: got %v, want NoSuchBucket", got)
	}
}

// TestLifecycleRefusals checks that what S3 refuses is refused with S3's
// answer, and changes nothing.
func TestLifecycleRefusals(t *testing.T) {
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "logs")
	keep := types.LifecycleRule{ID: aws.String("keep"), Status: types.ExpirationStatusEnabled, Filter: prefixFilter("k/"), Expiration: days(5)}
	if err := putLifecycle(c, "logs", keep); err != nil {
		t.Fatal(err)
	}
	before := lifecycleString(t, c, "logs")
	rule := func(edit func(r *types.LifecycleRule)) types.LifecycleRule {
		r := types.LifecycleRule{ID: aws.String("r"), Status: types.ExpirationStatusEnabled, Filter: prefixFilter("")}
		edit(&r)
		return r
	}
	tags := &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String("k"), Value: aws.String("v")}}
	many := make([]types.LifecycleRule, 1001)
	for i := range many {
		many[i] = rule(func(r *types.LifecycleRule) { r.ID = aws.String(fmt.Sprint(i)); r.Expiration = days(1) })
	}
	for _, tc := range []struct {
		name  string
		rules []types.LifecycleRule
		want  string
	}{
		{"Days 0", []types.LifecycleRule{rule(func(r *types.LifecycleRule) { r.Expiration = days(0) })}, "InvalidArgument"},
		{"Days -1", []types.LifecycleRule{rule(func(r *types.LifecycleRule) { r.Expiration = days(-1) })}, "InvalidArgument"},
		{"Days and Date", []types.LifecycleRule{rule(func(r *types.LifecycleRule) {
			r.Expiration = &types.LifecycleExpiration{Days: aws.Int32(1), Date: aws.Time(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))}
		})}, "MalformedXML"},
		{"a Date not at midnight", []types.LifecycleRule{rule(func(r *types.LifecycleRule) {
			r.Expiration = &types.LifecycleExpiration{Date: aws.Time(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))}
		})}, "InvalidArgument"},
		{"no action", []types.LifecycleRule{rule(func(r *types.LifecycleRule) {})}, "InvalidRequest"},
		{"duplicate ids", []types.LifecycleRule{rule(func(r *types.LifecycleRule) { r.Expiration = days(1) }), rule(func(r *types.LifecycleRule) { r.Expiration = days(2) })}, "InvalidArgument"},
		{"an id of 256 characters", []types.LifecycleRule{rule(func(r *types.LifecycleRule) { r.ID = aws.String(strings.Repeat("i", 256)); r.Expiration = days(1) })}, "InvalidArgument"},
		{"a Status neither Enabled nor Disabled", []types.LifecycleRule{rule(func(r *types.LifecycleRule) { r.Status = "Paused"; r.Expiration = days(1) })}, "MalformedXML"},
		{"both Prefix and Filter", []types.LifecycleRule{rule(func(r *types.LifecycleRule) { r.Prefix = aws.String("x/"); r.Expiration = days(1) })}, "MalformedXML"},
		{"a Filter of two things", []types.LifecycleRule{rule(func(r *types.LifecycleRule) {
			r.Filter = &types.LifecycleRuleFilter{Prefix: aws.String("a"), ObjectSizeLessThan: aws.Int64(5)}
			r.Expiration = days(1)
		})}, "MalformedXML"},
		{"NoncurrentDays 0", []types.LifecycleRule{rule(func(r *types.LifecycleRule) {
			r.NoncurrentVersionExpiration = &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(0)}
		})}, "InvalidArgument"},
		{"DaysAfterInitiation 0", []types.LifecycleRule{rule(func(r *types.LifecycleRule) {
			r.AbortIncompleteMultipartUpload = &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(0)}
		})}, "InvalidArgument"},
		{"aborting uploads by tag", []types.LifecycleRule{rule(func(r *types.LifecycleRule) {
			r.Filter = tags
			r.AbortIncompleteMultipartUpload = &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(1)}
		})}, "InvalidRequest"},
		{"expired delete markers by tag", []types.LifecycleRule{rule(func(r *types.LifecycleRule) {
			r.Filter = tags
			r.Expiration = &types.LifecycleExpiration{ExpiredObjectDeleteMarker: aws.Bool(true)}
		})}, "InvalidRequest"},
		{"an invalid tag", []types.LifecycleRule{rule(func(r *types.LifecycleRule) {
			r.Filter = &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String("aws:x"), Value: aws.String("v")}}
			r.Expiration = days(1)
		})}, "InvalidTag"},
		{"sizes crossed", []types.LifecycleRule{rule(func(r *types.LifecycleRule) {
			r.Filter = &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{ObjectSizeGreaterThan: aws.Int64(10), ObjectSizeLessThan: aws.Int64(10)}}
			r.Expiration = days(1)
		})}, "InvalidArgument"},
		{"a transition", []types.LifecycleRule{rule(func(r *types.LifecycleRule) {
			r.Transitions = []types.Transition{{Days: aws.Int32(30), StorageClass: types.TransitionStorageClassGlacier}}
		})}, "NotImplemented"},
		{"a noncurrent transition", []types.LifecycleRule{rule(func(r *types.LifecycleRule) {
			r.Expiration = days(60)
			r.NoncurrentVersionTransitions = []types.NoncurrentVersionTransition{{NoncurrentDays: aws.Int32(30), StorageClass: types.TransitionStorageClassStandardIa}}
		})}, "NotImplemented"},
		{"1001 rules", many, "InvalidRequest"},
	} {
		if got := apiCode(putLifecycle(c, "logs", tc.rules...)); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		if got := lifecycleString(t, c, "logs"); got != before {
			t.Errorf("%s changed the rules: %v", tc.name, got)
		}
	}

	// S3 requires Content-MD5 or an x-amz-checksum-* of the document.
	doc := `<LifecycleConfiguration><Rule><ID>raw</ID><Prefix>old/</Prefix><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`
	if status, got := do(t, e.signed(t, "PUT", "/logs?lifecycle", strings.NewReader(doc), "", nil)); status != http.StatusBadRequest || got.Code != "InvalidRequest" || !strings.Contains(got.Message, "Content-MD5") {
		t.Errorf("without Content-MD5: %d %+v; want 400 InvalidRequest naming Content-MD5", status, got)
	}
	bad := md5.Sum([]byte("something else"))
	if status, got := do(t, e.signed(t, "PUT", "/logs?lifecycle", strings.NewReader(doc), "", map[string]string{"Content-MD5": base64.StdEncoding.EncodeToString(bad[:])})); status != http.StatusBadRequest {
		t.Errorf("with a wrong Content-MD5: %d %+v; want 400", status, got)
	}
	empty := `<LifecycleConfiguration></LifecycleConfiguration>`
	emptySum := md5.Sum([]byte(empty))
	if status, got := do(t, e.signed(t, "PUT", "/logs?lifecycle", strings.NewReader(empty), "", map[string]string{"Content-MD5": base64.StdEncoding.EncodeToString(emptySum[:])})); status != http.StatusBadRequest || got.Code != "MalformedXML" {
		t.Errorf("a document of no rules: %d %+v; want 400 MalformedXML", status, got)
	}
	if got := lifecycleString(t, c, "logs"); got != before {
		t.Errorf("refused raw puts changed the rules: %v", got)
	}
	// With one, the rule's own Prefix (S3's first form) is taken, and read
	// back as given.
	sum := md5.Sum([]byte(doc))
	if status, got := do(t, e.signed(t, "PUT", "/logs?lifecycle", strings.NewReader(doc), "", map[string]string{"Content-MD5": base64.StdEncoding.EncodeToString(sum[:])})); status != http.StatusOK {
		t.Fatalf("with Content-MD5: %d %+v", status, got)
	}
	if got := lifecycleString(t, c, "logs"); got != "raw Enabled prefix=old/ days=1" {
		t.Errorf("a rule with its own Prefix read back as %v", got)
	}
	// ?lifecycle of an object is nothing S3 has.
	if status, got := do(t, e.signed(t, "GET", "/logs/key?lifecycle", nil, "", nil)); status != http.StatusNotImplemented {
		t.Errorf("GET ?lifecycle of an object: %d %+v; want 501", status, got)
	}
}

// TestLifecycleHeaders checks x-amz-expiration on writes and reads, and
// x-amz-abort-date on CreateMultipartUpload.
func TestLifecycleHeaders(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "logs")
	err := putLifecycle(c, "logs",
		types.LifecycleRule{ID: aws.String("week"), Status: types.ExpirationStatusEnabled, Filter: prefixFilter("tmp/"), Expiration: days(7)},
		types.LifecycleRule{ID: aws.String("day"), Status: types.ExpirationStatusEnabled, Filter: prefixFilter("tmp/daily/"), Expiration: days(1)},
		types.LifecycleRule{ID: aws.String("off"), Status: types.ExpirationStatusDisabled, Filter: prefixFilter(""), Expiration: days(1)},
		types.LifecycleRule{ID: aws.String("uploads"), Status: types.ExpirationStatusEnabled, Filter: prefixFilter("tmp/"), AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(2)}},
	)
	if err != nil {
		t.Fatal(err)
	}
	// S3 adds the days to LastModified and rounds up to the next midnight
	// UTC.
	want := func(lastModified time.Time, days int, id string) string {
		d := lastModified.UTC().AddDate(0, 0, days)
		at := time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, time.UTC)
		return fmt.Sprintf(`expiry-date="%s", rule-id="%s"`, at.Format(http.TimeFormat), id)
	}
	for _, tc := range []struct {
		key  string
		days int
		id   string
	}{{"tmp/a", 7, "week"}, {"tmp/daily/a", 1, "day"}, {"keep/a", 0, ""}} {
		put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("logs"), Key: aws.String(tc.key), Body: strings.NewReader("x")})
		if err != nil {
			t.Fatal(err)
		}
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("logs"), Key: aws.String(tc.key)})
		if err != nil {
			t.Fatal(err)
		}
		get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("logs"), Key: aws.String(tc.key)})
		if err != nil {
			t.Fatal(err)
		}
		get.Body.Close()
		w := ""
		if tc.id != "" {
			w = want(aws.ToTime(head.LastModified), tc.days, tc.id)
		}
		for op, got := range map[string]*string{"PutObject": put.Expiration, "HeadObject": head.Expiration, "GetObject": get.Expiration} {
			if aws.ToString(got) != w {
				t.Errorf("%s %s: x-amz-expiration %q, want %q", op, tc.key, aws.ToString(got), w)
			}
		}
	}
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("logs"), Key: aws.String("tmp/big")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(up.AbortRuleId) != "uploads" || up.AbortDate == nil || up.AbortDate.Hour() != 0 || time.Until(*up.AbortDate) < 48*time.Hour || time.Until(*up.AbortDate) > 72*time.Hour {
		t.Errorf("CreateMultipartUpload under tmp/: abort rule %q, date %v; want uploads, a midnight 2 to 3 days away", aws.ToString(up.AbortRuleId), up.AbortDate)
	}
	up, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("logs"), Key: aws.String("keep/big")})
	if err != nil {
		t.Fatal(err)
	}
	if up.AbortRuleId != nil || up.AbortDate != nil {
		t.Errorf("CreateMultipartUpload elsewhere: abort rule %v, date %v; want none", up.AbortRuleId, up.AbortDate)
	}
}

// TestLifecyclePolicyDeny: the bucket policy governs the lifecycle
// operations as S3's actions name them (s3:GetLifecycleConfiguration,
// s3:PutLifecycleConfiguration, which DeleteBucketLifecycle asks too): a
// key denied s3:* may not schedule the deletion of what it may not
// delete, nor read or remove the rules, and its refusals change nothing;
// the owner's other keys still may.
func TestLifecyclePolicyDeny(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "site")
	agentID, agentSecret := e.key(t, "alice", "readwrite", "*")
	agent := e.sdk(agentID, agentSecret)
	if err := putPolicy(c, "site", `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":{"AWS":"`+agentID+`"},
		"Action":"s3:*","Resource":["arn:aws:s3:::site","arn:aws:s3:::site/*"]}]}`); err != nil {
		t.Fatal(err)
	}
	rules := func(days int32) *types.BucketLifecycleConfiguration {
		return &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{{ID: aws.String("wipe"), Status: types.ExpirationStatusEnabled,
			Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")}, Expiration: &types.LifecycleExpiration{Days: aws.Int32(days)}}}}
	}
	if _, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String("site"), LifecycleConfiguration: rules(30)}); err != nil {
		t.Fatal(err)
	}
	before := lifecycleString(t, c, "site")

	_, err := agent.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String("site"), LifecycleConfiguration: rules(1)})
	if apiCode(err) != "AccessDenied" {
		t.Errorf("the denied key's PutBucketLifecycleConfiguration: %v, want AccessDenied", err)
	}
	if _, err := agent.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String("site")}); apiCode(err) != "AccessDenied" {
		t.Errorf("the denied key's DeleteBucketLifecycle: %v, want AccessDenied", err)
	}
	if got := lifecycleString(t, agent, "site"); got != "error AccessDenied" {
		t.Errorf("the denied key's GetBucketLifecycleConfiguration: %s, want AccessDenied", got)
	}
	if got := lifecycleString(t, c, "site"); got != before {
		t.Errorf("the refusals changed the rules: %s, was %s", got, before)
	}
	if _, err := c.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String("site")}); err != nil {
		t.Errorf("the owner's other key's DeleteBucketLifecycle: %v", err)
	}
}
