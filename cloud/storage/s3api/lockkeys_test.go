package s3api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// lockKeysPolicy is what a compliance team writes on a bucket with Object
// Lock (the cap is AWS's example of s3:object-lock-remaining-retention-days):
// no retention longer than 10 days under cap/, GOVERNANCE only under
// gov/, no legal holds under nohold/, no retention past a fixed date under
// date/; bob's account may write and lock under bob/, in GOVERNANCE only;
// anyone may lengthen a GOVERNANCE retention under open/.
func lockKeysPolicy(date time.Time) string {
	return `{"Version":"2012-10-17","Statement":[
	{"Effect":"Deny","Principal":"*","Action":["s3:PutObject","s3:PutObjectRetention"],"Resource":"arn:aws:s3:::vault/cap/*",
	 "Condition":{"NumericGreaterThan":{"s3:object-lock-remaining-retention-days":"10"}}},
	{"Effect":"Deny","Principal":"*","Action":["s3:PutObject","s3:PutObjectRetention"],"Resource":"arn:aws:s3:::vault/gov/*",
	 "Condition":{"StringEquals":{"s3:object-lock-mode":"COMPLIANCE"}}},
	{"Effect":"Deny","Principal":"*","Action":["s3:PutObject","s3:PutObjectLegalHold"],"Resource":"arn:aws:s3:::vault/nohold/*",
	 "Condition":{"StringEquals":{"s3:object-lock-legal-hold":"ON"}}},
	{"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::vault/date/*",
	 "Condition":{"DateGreaterThan":{"s3:object-lock-retain-until-date":"` + date.UTC().Format(time.RFC3339) + `"}}},
	{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::bob:root"},"Action":["s3:PutObject","s3:PutObjectRetention"],"Resource":"arn:aws:s3:::vault/bob/*",
	 "Condition":{"StringEqualsIfExists":{"s3:object-lock-mode":"GOVERNANCE"}}},
	{"Effect":"Allow","Principal":"*","Action":"s3:PutObjectRetention","Resource":"arn:aws:s3:::vault/open/*",
	 "Condition":{"StringEquals":{"s3:object-lock-mode":"GOVERNANCE"}}}]}`
}

// TestPolicyObjectLockKeys: the s3:object-lock-* condition keys through
// the AWS SDK for Go, on every request that asks for a lock: PutObject's
// headers, CopyObject's and CreateMultipartUpload's, a form's fields, and
// the bodies of PutObjectRetention and PutObjectLegalHold; for the
// owner's keys (a Deny), another account and an anonymous request (an
// Allow); and nothing changed by a refused request.
func TestPolicyObjectLockKeys(t *testing.T) {
	e, c := newVault(t)
	ctx := context.Background()
	bobID, bobSecret := e.key(t, "bob", "readwrite", "*")
	bob := e.sdk(bobID, bobSecret)
	anon := e.anonymousSDK()
	b := aws.String("vault")
	now := time.Now()
	day := 24 * time.Hour
	if err := putPolicy(c, "vault", lockKeysPolicy(now.Add(5*day))); err != nil {
		t.Fatalf("PutBucketPolicy with Object Lock condition keys: %v", err)
	}

	type lock struct {
		mode types.ObjectLockMode
		for_ time.Duration
		hold bool
	}
	upload := func(cl *s3.Client, key string, l lock) error {
		in := &s3.PutObjectInput{Bucket: b, Key: aws.String(key), Body: strings.NewReader("record"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32}
		if l.mode != "" {
			in.ObjectLockMode, in.ObjectLockRetainUntilDate = l.mode, aws.Time(time.Now().Add(l.for_))
		}
		if l.hold {
			in.ObjectLockLegalHoldStatus = types.ObjectLockLegalHoldStatusOn
		}
		_, err := cl.PutObject(ctx, in)
		return err
	}
	gov, comp := types.ObjectLockModeGovernance, types.ObjectLockModeCompliance
	for _, tc := range []struct {
		name string
		cl   *s3.Client
		key  string
		lock lock
		want string
	}{
		{"5 days under cap/", c, "cap/5", lock{mode: gov, for_: 5 * day}, ""},
		{"10 days under cap/, counted as 10", c, "cap/10", lock{mode: gov, for_: 10 * day}, ""},
		{"10 days and an hour under cap/", c, "cap/10h", lock{mode: gov, for_: 10*day + time.Hour}, "AccessDenied"},
		{"a year under cap/", c, "cap/year", lock{mode: comp, for_: 365 * day}, "AccessDenied"},
		{"no lock under cap/", c, "cap/none", lock{}, ""},
		{"GOVERNANCE under gov/", c, "gov/g", lock{mode: gov, for_: day}, ""},
		{"COMPLIANCE under gov/", c, "gov/c", lock{mode: comp, for_: day}, "AccessDenied"},
		{"a legal hold under nohold/", c, "nohold/h", lock{hold: true}, "AccessDenied"},
		{"no legal hold under nohold/", c, "nohold/n", lock{}, ""},
		{"until before the date under date/", c, "date/4", lock{mode: gov, for_: 4 * day}, ""},
		{"until past the date under date/", c, "date/6", lock{mode: gov, for_: 6 * day}, "AccessDenied"},
		{"bob, GOVERNANCE under bob/", bob, "bob/g", lock{mode: gov, for_: day}, ""},
		{"bob, no lock under bob/", bob, "bob/n", lock{}, ""},
		{"bob, COMPLIANCE under bob/", bob, "bob/c", lock{mode: comp, for_: day}, "AccessDenied"},
	} {
		if got := apiCode(upload(tc.cl, tc.key, tc.lock)); got != tc.want {
			t.Errorf("PutObject, %s: %q, want %q", tc.name, got, tc.want)
		}
	}

	// A copy and a multipart upload ask with the same headers.
	_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("cap/copy"), CopySource: aws.String("vault/cap/none"),
		ObjectLockMode: comp, ObjectLockRetainUntilDate: aws.Time(now.Add(30 * day))})
	if apiCode(err) != "AccessDenied" {
		t.Errorf("CopyObject with 30 days under cap/: %v, want AccessDenied", err)
	}
	_, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("gov/mp"),
		ObjectLockMode: comp, ObjectLockRetainUntilDate: aws.Time(now.Add(day))})
	if apiCode(err) != "AccessDenied" {
		t.Errorf("CreateMultipartUpload with COMPLIANCE under gov/: %v, want AccessDenied", err)
	}

	// PutObjectRetention and PutObjectLegalHold are judged on their bodies.
	setRetention := func(cl *s3.Client, key string, mode types.ObjectLockRetentionMode, until time.Time) error {
		_, err := cl.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: aws.String(key),
			Retention: &types.ObjectLockRetention{Mode: mode, RetainUntilDate: aws.Time(until)}})
		return err
	}
	until := func(key string) time.Time {
		t.Helper()
		out, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: b, Key: aws.String(key)})
		if err != nil {
			t.Fatalf("GetObjectRetention %s: %v", key, err)
		}
		return aws.ToTime(out.Retention.RetainUntilDate)
	}
	before := until("cap/5")
	if err := setRetention(c, "cap/5", types.ObjectLockRetentionModeGovernance, now.Add(30*day)); apiCode(err) != "AccessDenied" {
		t.Errorf("PutObjectRetention to 30 days under cap/: %v, want AccessDenied", err)
	}
	if got := until("cap/5"); !got.Equal(before) {
		t.Errorf("cap/5's retention after a refused change: until %v, want %v", got, before)
	}
	if err := setRetention(c, "cap/5", types.ObjectLockRetentionModeGovernance, now.Add(9*day)); err != nil {
		t.Errorf("PutObjectRetention to 9 days under cap/: %v", err)
	}
	if err := setRetention(c, "gov/g", types.ObjectLockRetentionModeCompliance, now.Add(2*day)); apiCode(err) != "AccessDenied" {
		t.Errorf("PutObjectRetention to COMPLIANCE under gov/: %v, want AccessDenied", err)
	}
	setHold := func(key string, status types.ObjectLockLegalHoldStatus) error {
		_, err := c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: b, Key: aws.String(key),
			LegalHold: &types.ObjectLockLegalHold{Status: status}})
		return err
	}
	if err := setHold("nohold/n", types.ObjectLockLegalHoldStatusOn); apiCode(err) != "AccessDenied" {
		t.Errorf("PutObjectLegalHold ON under nohold/: %v, want AccessDenied", err)
	}
	if err := setHold("nohold/n", types.ObjectLockLegalHoldStatusOff); err != nil {
		t.Errorf("PutObjectLegalHold OFF under nohold/: %v", err)
	}
	if err := setRetention(bob, "bob/n", types.ObjectLockRetentionModeGovernance, now.Add(day)); err != nil {
		t.Errorf("bob's PutObjectRetention, GOVERNANCE under bob/: %v", err)
	}
	if err := setRetention(bob, "bob/g", types.ObjectLockRetentionModeCompliance, now.Add(2*day)); apiCode(err) != "AccessDenied" {
		t.Errorf("bob's PutObjectRetention, COMPLIANCE under bob/: %v, want AccessDenied", err)
	}

	// An anonymous request granted by the lock its body asks for: the
	// body is read before the policy, and only when the policy may grant
	// the request.
	if err := upload(c, "open/a", lock{mode: gov, for_: day}); err != nil {
		t.Fatal(err)
	}
	if err := setRetention(anon, "open/a", types.ObjectLockRetentionModeGovernance, now.Add(2*day)); err != nil {
		t.Errorf("anonymous PutObjectRetention, GOVERNANCE under open/: %v", err)
	}
	if err := setRetention(anon, "open/a", types.ObjectLockRetentionModeCompliance, now.Add(3*day)); apiCode(err) != "AccessDenied" {
		t.Errorf("anonymous PutObjectRetention, COMPLIANCE under open/: %v, want AccessDenied", err)
	}
	if err := setRetention(anon, "cap/none", types.ObjectLockRetentionModeGovernance, now.Add(day)); apiCode(err) != "AccessDenied" {
		t.Errorf("anonymous PutObjectRetention outside open/: %v, want AccessDenied", err)
	}
	if got := until("open/a"); got.Before(now.Add(2*day-time.Minute)) || got.After(now.Add(2*day+time.Minute)) {
		t.Errorf("open/a's retention: until %v, want two days from the test's start", got)
	}

	// The bucket holds what was allowed, and nothing refused.
	keys := strings.Join(listKeys(t, c, "vault"), ",")
	if want := "bob/g,bob/n,cap/10,cap/5,cap/none,date/4,gov/g,nohold/n,open/a"; keys != want {
		t.Errorf("the bucket holds %s, want %s", keys, want)
	}
}

// TestPostObjectLock: a form's x-amz-object-lock-* fields lock what it
// uploads, as PutObject's headers do, and the policy's lock keys judge
// them; the request's own headers, which the form's policy does not
// cover, lock nothing.
func TestPostObjectLock(t *testing.T) {
	e, c := newVault(t)
	ctx := context.Background()
	b := aws.String("vault")
	now := time.Now()
	if err := putPolicy(c, "vault", lockKeysPolicy(now.Add(5*24*time.Hour))); err != nil {
		t.Fatal(err)
	}
	form := func(key string, lockFields ...field) *http.Response {
		t.Helper()
		conds := append(v4Conditions(e.id, "us-east-1", now), map[string]string{"bucket": "vault"}, map[string]string{"key": key})
		for _, f := range lockFields {
			conds = append(conds, map[string]string{f.name: f.value})
		}
		fields := append([]field{{"key", key}}, lockFields...)
		body, ct := formBody(append(fields, signV4Form(e.id, e.secret, "us-east-1", now, policyDoc(now.Add(time.Hour), conds...))...), "f", []byte("record"))
		req, err := http.NewRequest("POST", e.srv.URL+"/vault", body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ct)
		// Headers outside the form: never read.
		req.Header.Set("X-Amz-Object-Lock-Legal-Hold", "ON")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	until := now.Add(3 * 24 * time.Hour).UTC().Truncate(time.Second)
	retention := []field{{"x-amz-object-lock-mode", "GOVERNANCE"}, {"x-amz-object-lock-retain-until-date", until.Format(time.RFC3339)}}
	if resp := form("cap/form", retention...); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("a form with a 3-day GOVERNANCE retention: %s, want 204", resp.Status)
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("cap/form")})
	if err != nil || head.ObjectLockMode != types.ObjectLockModeGovernance || !aws.ToTime(head.ObjectLockRetainUntilDate).Equal(until) ||
		head.ObjectLockLegalHoldStatus == types.ObjectLockLegalHoldStatusOn {
		t.Fatalf("the form's object: %+v, %v; want GOVERNANCE until %v and no legal hold (the request header is not the form's)", head, err, until)
	}
	long := []field{{"x-amz-object-lock-mode", "GOVERNANCE"}, {"x-amz-object-lock-retain-until-date", now.Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339)}}
	if resp := form("cap/long", long...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a form with a 30-day retention under cap/: %s, want 403", resp.Status)
	}
	if resp := form("nohold/form", field{"x-amz-object-lock-legal-hold", "ON"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a form with a legal hold under nohold/: %s, want 403", resp.Status)
	}
	if resp := form("gov/form", field{"x-amz-object-lock-mode", "GOVERNANCE"}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a form with a mode and no date: %s, want 400", resp.Status)
	}
	if keys := strings.Join(listKeys(t, c, "vault"), ","); keys != "cap/form" {
		t.Errorf("the bucket holds %s, want cap/form alone", keys)
	}
}

// boto3LockKeys: boto3 against a bucket with Object Lock whose policy caps
// retention at 10 days and forbids legal holds under nohold/: uploads,
// PutObjectRetention, PutObjectLegalHold and a presigned POST with lock
// fields (sent through requests).
const boto3LockKeys = boto3Clients + `
import datetime, requests
s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
res = "arn:aws:s3:::%s/*" % bucket
s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Deny", "Principal": "*", "Action": ["s3:PutObject", "s3:PutObjectRetention"], "Resource": res,
     "Condition": {"NumericGreaterThan": {"s3:object-lock-remaining-retention-days": 10}}},
    {"Effect": "Deny", "Principal": "*", "Action": ["s3:PutObject", "s3:PutObjectLegalHold"], "Resource": "arn:aws:s3:::%s/nohold/*" % bucket,
     "Condition": {"StringEquals": {"s3:object-lock-legal-hold": "ON"}}}]}))
now = datetime.datetime.now(datetime.timezone.utc)
days = lambda n: now + datetime.timedelta(days=n)
put = lambda key, n: s3.put_object(Bucket=bucket, Key=key, Body=b"x", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=days(n))
assert code(lambda: put("a", 5)) == "ok"
assert code(lambda: put("b", 30)) == "AccessDenied"
ret = lambda n: s3.put_object_retention(Bucket=bucket, Key="a", Retention={"Mode": "GOVERNANCE", "RetainUntilDate": days(n)})
assert code(lambda: ret(30)) == "AccessDenied"
assert code(lambda: ret(8)) == "ok"
got = s3.get_object_retention(Bucket=bucket, Key="a")["Retention"]["RetainUntilDate"]
assert abs((got - days(8)).total_seconds()) < 1, got
s3.put_object(Bucket=bucket, Key="nohold/x", Body=b"x")
hold = lambda status: s3.put_object_legal_hold(Bucket=bucket, Key="nohold/x", LegalHold={"Status": status})
assert code(lambda: hold("ON")) == "AccessDenied"
assert code(lambda: hold("OFF")) == "ok"
until = days(3).strftime("%Y-%m-%dT%H:%M:%SZ")
post = lambda key, until: s3.generate_presigned_post(bucket, key, ExpiresIn=600,
    Fields={"x-amz-object-lock-mode": "GOVERNANCE", "x-amz-object-lock-retain-until-date": until},
    Conditions=[{"x-amz-object-lock-mode": "GOVERNANCE"}, {"x-amz-object-lock-retain-until-date": until}])
p = post("form", until)
r = requests.post(p["url"], data=p["fields"], files={"file": ("f.txt", b"posted")})
assert r.status_code == 204, (r.status_code, r.text)
head = s3.head_object(Bucket=bucket, Key="form")
assert head["ObjectLockMode"] == "GOVERNANCE" and head["ObjectLockRetainUntilDate"].strftime("%Y-%m-%dT%H:%M:%SZ") == until, head
p = post("long", days(30).strftime("%Y-%m-%dT%H:%M:%SZ"))
r = requests.post(p["url"], data=p["fields"], files={"file": ("f.txt", b"posted")})
assert r.status_code == 403, (r.status_code, r.text)
keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
assert keys == ["a", "form", "nohold/x"], keys
print("ok")
`

// TestBoto3ObjectLockKeys: boto3, with a policy on the locks requests ask
// for.
func TestBoto3ObjectLockKeys(t *testing.T) {
	python := tooltest.Need(t, "python3", "-c", "import boto3, requests")
	e := newEnv(t)
	e.run(t, python, "-c", boto3LockKeys, e.srv.URL, "boto-lock")
}
