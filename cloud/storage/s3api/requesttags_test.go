package s3api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// requestTagsPolicy lets anyone upload under in/ only with a Project tag
// of blue or green and tags of the keys Project and Owner only (AWS's
// example of s3:RequestObjectTag and s3:RequestObjectTagKeys), and
// denies everyone, the owner's keys included, tag sets with a key
// starting with secret.
const requestTagsPolicy = `{"Version":"2012-10-17","Statement":[
	{"Effect":"Allow","Principal":"*","Action":["s3:PutObject","s3:PutObjectTagging"],"Resource":"arn:aws:s3:::tags/in/*",
	 "Condition":{"StringEquals":{"s3:RequestObjectTag/Project":["blue","green"]},
	              "ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["Project","Owner"]}}},
	{"Effect":"Deny","Principal":"*","Action":["s3:PutObject","s3:PutObjectTagging"],"Resource":"arn:aws:s3:::tags/*",
	 "Condition":{"ForAnyValue:StringLike":{"s3:RequestObjectTagKeys":"secret*"}}}]}`

// TestPolicyRequestTags: s3:RequestObjectTag/… and s3:RequestObjectTagKeys
// through the endpoint, for every request that sets tags: PutObject's
// x-amz-tagging, CreateMultipartUpload's, CopyObject's with REPLACE, a
// form's tagging field, and PutObjectTagging's tag set; anonymous
// requests granted by them, signed ones denied by them.
func TestPolicyRequestTags(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "tags")
	if err := putPolicy(c, "tags", requestTagsPolicy); err != nil {
		t.Fatalf("PutBucketPolicy with request tag conditions: %v", err)
	}
	anon := e.anonymousSDK()
	put := func(cl *s3.Client, key, tagging string) error {
		in := &s3.PutObjectInput{Bucket: aws.String("tags"), Key: aws.String(key), Body: strings.NewReader("x")}
		if tagging != "" {
			in.Tagging = aws.String(tagging)
		}
		_, err := cl.PutObject(ctx, in)
		return err
	}
	for _, tc := range []struct {
		name, key, tagging, want string
	}{
		{"a Project tag of an allowed value", "in/a", "Project=blue", ""},
		{"with an Owner tag too", "in/b", "Project=green&Owner=ann", ""},
		{"a Project tag of another value", "in/c", "Project=red", "AccessDenied"},
		{"a tag of another key besides", "in/d", "Project=blue&Cost=1", "AccessDenied"},
		{"no tags", "in/e", "", "AccessDenied"},
		{"a secret key, denied whatever allows it", "in/f", "Project=blue&secret=1", "AccessDenied"},
		{"outside in/", "out/a", "Project=blue", "AccessDenied"},
	} {
		if got := apiCode(put(anon, tc.key, tc.tagging)); got != tc.want {
			t.Errorf("anonymous PutObject, %s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// The owner's keys: only the Deny applies to them.
	if err := put(c, "out/plain", "Cost=1"); err != nil {
		t.Errorf("the owner's PutObject with tags no Deny names: %v", err)
	}
	if got := apiCode(put(c, "out/secret", "secret-level=2")); got != "AccessDenied" {
		t.Errorf("the owner's PutObject with a secret tag: %q, want AccessDenied", got)
	}
	// A multipart upload's tags are its creation's.
	if _, err := anon.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("tags"), Key: aws.String("in/mp"),
		Tagging: aws.String("Project=red")}); apiCode(err) != "AccessDenied" {
		t.Errorf("anonymous CreateMultipartUpload with a refused tag: %v, want AccessDenied", err)
	}
	// A copy's tags: REPLACE sets the request's, COPY keeps the source's.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("tags"), Key: aws.String("out/copy"), CopySource: aws.String("tags/out/plain"),
		TaggingDirective: types.TaggingDirectiveReplace, Tagging: aws.String("secret=x")}); apiCode(err) != "AccessDenied" {
		t.Errorf("the owner's copy replacing tags with a secret one: %v, want AccessDenied", err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("tags"), Key: aws.String("out/copy"), CopySource: aws.String("tags/out/plain"),
		Tagging: aws.String("secret=x")}); err != nil {
		t.Errorf("the owner's copy keeping its source's tags (the header ignored): %v", err)
	}
	// PutObjectTagging is judged on the tag set in its body.
	tagSet := func(kv ...string) *types.Tagging {
		var ts []types.Tag
		for i := 0; i+1 < len(kv); i += 2 {
			ts = append(ts, types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
		}
		return &types.Tagging{TagSet: ts}
	}
	if _, err := anon.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("tags"), Key: aws.String("in/a"), Tagging: tagSet("Project", "green")}); err != nil {
		t.Errorf("anonymous PutObjectTagging with an allowed tag set: %v", err)
	}
	if _, err := anon.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("tags"), Key: aws.String("in/a"), Tagging: tagSet("Project", "red")}); apiCode(err) != "AccessDenied" {
		t.Errorf("anonymous PutObjectTagging with a refused tag set: %v, want AccessDenied", err)
	}
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("tags"), Key: aws.String("out/plain"), Tagging: tagSet("secret", "1")}); apiCode(err) != "AccessDenied" {
		t.Errorf("the owner's PutObjectTagging with a secret key: %v, want AccessDenied", err)
	}
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("tags"), Key: aws.String("out/plain"), Tagging: tagSet("Cost", "2")}); err != nil {
		t.Errorf("the owner's PutObjectTagging with a tag set no Deny names: %v", err)
	}
	out, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("tags"), Key: aws.String("in/a")})
	if err != nil || len(out.TagSet) != 1 || aws.ToString(out.TagSet[0].Value) != "green" {
		t.Errorf("in/a's tags after one allowed and one refused PutObjectTagging: %+v, %v; want Project=green", out, err)
	}
	// A malformed tag set is the owner's 400 as before, not a policy's refusal.
	if status, answer := do(t, e.signed(t, "PUT", "/tags/out/plain?tagging", strings.NewReader("<Tagging>"), "", nil)); status != http.StatusBadRequest {
		t.Errorf("the owner's malformed tag set: %d %s, want 400", status, answer.Code)
	}
	// A form's tagging field.
	tagging := func(k, v string) string {
		return "<Tagging><TagSet><Tag><Key>" + k + "</Key><Value>" + v + "</Value></Tag></TagSet></Tagging>"
	}
	body, ct := formBody([]field{{"key", "in/form"}, {"tagging", tagging("Project", "blue")}}, "f.txt", []byte("x"))
	if resp := e.postForm(t, "tags", body, ct); resp.StatusCode != http.StatusNoContent {
		t.Errorf("anonymous form with an allowed tag: %s, want 204", resp.Status)
	} else {
		resp.Body.Close()
	}
	body, ct = formBody([]field{{"key", "in/form2"}, {"tagging", tagging("Project", "red")}}, "f.txt", []byte("x"))
	if resp := e.postForm(t, "tags", body, ct); resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous form with a refused tag: %s, want 403", resp.Status)
	} else {
		resp.Body.Close()
	}
	keys := strings.Join(listKeys(t, c, "tags"), ",")
	if want := "in/a,in/b,in/form,out/copy,out/plain"; keys != want {
		t.Errorf("the bucket holds %s, want %s: a refused request wrote", keys, want)
	}
}

// TestPolicyUploadTagsNeedTagging: an upload that sets tags needs
// s3:PutObjectTagging too, signed or anonymous, whether its tags come in
// the x-amz-tagging header or (as a presigned URL may carry them) the
// query; and an anonymous PutObjectTagging the policy cannot grant is
// refused before its body is read, whatever the body.
func TestPolicyUploadTagsNeedTagging(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "drop")
	policy := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::drop/in/*"},
		{"Effect":"Deny","Principal":"*","Action":"s3:PutObjectTagging","Resource":"arn:aws:s3:::drop/*",
		 "Condition":{"ForAnyValue:StringLike":{"s3:RequestObjectTagKeys":"secret*"}}}]}`
	if err := putPolicy(c, "drop", policy); err != nil {
		t.Fatal(err)
	}
	put := func(key, tagging string) error {
		in := &s3.PutObjectInput{Bucket: aws.String("drop"), Key: aws.String(key), Body: strings.NewReader("x")}
		if tagging != "" {
			in.Tagging = aws.String(tagging)
		}
		_, err := c.PutObject(ctx, in)
		return err
	}
	if got := apiCode(put("a", "secret=1")); got != "AccessDenied" {
		t.Errorf("the owner's upload with a tag the PutObjectTagging Deny names: %q, want AccessDenied", got)
	}
	if err := put("a", "plain=1"); err != nil {
		t.Errorf("the owner's upload with another tag: %v", err)
	}
	if _, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("drop"), Key: aws.String("mp"),
		Tagging: aws.String("secret-x=1")}); apiCode(err) != "AccessDenied" {
		t.Errorf("the owner's multipart upload with a denied tag: %v, want AccessDenied", err)
	}
	// Anonymous uploads are granted s3:PutObject only: with tags, in the
	// header or the query, they are refused.
	if status, _ := e.anonymousBody(t, "PUT", "/drop/in/q", "x", nil); status != http.StatusOK {
		t.Errorf("anonymous upload without tags: %d, want 200", status)
	}
	if status, _ := e.anonymousBody(t, "PUT", "/drop/in/h", "x", map[string]string{"X-Amz-Tagging": "a=b"}); status != http.StatusForbidden {
		t.Errorf("anonymous upload with tags in the header: %d, want 403", status)
	}
	if status, _ := e.anonymousBody(t, "PUT", "/drop/in/q2?x-amz-tagging=a%3Db", "x", nil); status != http.StatusForbidden {
		t.Errorf("anonymous upload with tags in the query: %d, want 403", status)
	}
	// Nothing grants anonymous PutObjectTagging here: refused, a body
	// that fails its checks as well as a good one (no 400 tells the
	// caller what the bucket's policy reads).
	for _, md5 := range []string{"bm90IHRoZSBtZDUgb2YgaXQ=", ""} {
		header := map[string]string{}
		if md5 != "" {
			header["Content-MD5"] = md5
		}
		if status, code := e.anonymousBody(t, "PUT", "/drop/in/q?tagging", "<Tagging><TagSet></TagSet></Tagging>", header); status != http.StatusForbidden {
			t.Errorf("anonymous PutObjectTagging (Content-MD5 %q): %d %s, want 403", md5, status, code)
		}
	}
	keys := strings.Join(listKeys(t, c, "drop"), ",")
	if keys != "a,in/q" {
		t.Errorf("the bucket holds %s, want a,in/q", keys)
	}
}

const boto3RequestTags = boto3Clients + `
policy = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*",
    "Action": ["s3:PutObject", "s3:PutObjectTagging"], "Resource": "arn:aws:s3:::%s/in/*" % bucket,
    "Condition": {"StringEquals": {"s3:RequestObjectTag/Project": "blue"},
                  "ForAllValues:StringEquals": {"s3:RequestObjectTagKeys": ["Project", "Owner"]}}}]})
s3.put_bucket_policy(Bucket=bucket, Policy=policy)
assert code(lambda: anon.put_object(Bucket=bucket, Key="in/a", Body=b"x", Tagging="Project=blue&Owner=ann")) == "ok"
assert code(lambda: anon.put_object(Bucket=bucket, Key="in/b", Body=b"x", Tagging="Project=blue&Cost=1")) == "AccessDenied"
assert code(lambda: anon.put_object(Bucket=bucket, Key="in/c", Body=b"x")) == "AccessDenied"
ts = lambda v: {"TagSet": [{"Key": "Project", "Value": v}]}
assert code(lambda: anon.put_object_tagging(Bucket=bucket, Key="in/a", Tagging=ts("blue"))) == "ok"
assert code(lambda: anon.put_object_tagging(Bucket=bucket, Key="in/a", Tagging=ts("red"))) == "AccessDenied"
assert s3.get_object_tagging(Bucket=bucket, Key="in/a")["TagSet"] == [{"Key": "Project", "Value": "blue"}]
bad = json.loads(policy)
bad["Statement"][0]["Condition"] = {"StringEquals": {"s3:RequestObjectTagKeys": "Project"}}
assert code(lambda: s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps(bad))) == "NotImplemented"
print("ok")
`

// TestBoto3RequestTags: boto3, signed and unsigned, with a policy on the
// tags requests set.
func TestBoto3RequestTags(t *testing.T) {
	python := tooltest.Need(t, "python3", "-c", "import boto3")
	e, _, _ := newBucket(t, "boto-tags")
	e.run(t, python, "-c", boto3RequestTags, e.srv.URL, "boto-tags")
}
