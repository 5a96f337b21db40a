package s3api_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestPolicyVariables: a bucket shared by home directories, through the
// AWS SDK for Go: each of bob's keys may write, read and list only its own
// home (${aws:username}, the key's id), bob's account may read its team's
// folder (${aws:PrincipalAccount}), anonymous readers the folder a default
// names, and a Deny with a NotResource of a variable holds the owner's
// deletes to her own home, anonymous ones everywhere.
func TestPolicyVariables(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	b1ID, b1Secret := e.key(t, "bob", "readwrite", "*")
	b2ID, b2Secret := e.key(t, "bob", "readwrite", "*")
	bob1, bob2 := e.sdk(b1ID, b1Secret), e.sdk(b2ID, b2Secret)
	anon := e.anonymousSDK()
	b := aws.String("shared")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	policy := `{"Version":"2012-10-17","Statement":[
	{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::bob:root"},"Action":["s3:PutObject","s3:GetObject"],"Resource":"arn:aws:s3:::shared/home/${aws:username}/*"},
	{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::bob:root"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::shared",
	 "Condition":{"StringLike":{"s3:prefix":"home/${aws:username}/*"}}},
	{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::bob:root"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::shared/teams/${aws:PrincipalAccount}/*"},
	{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::shared/drop/${aws:username, 'anonymous'}/*"},
	{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","NotResource":"arn:aws:s3:::shared/home/${aws:username}/*"}]}`
	if err := putPolicy(c, "shared", policy); err != nil {
		t.Fatalf("PutBucketPolicy with policy variables: %v", err)
	}
	got, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: b})
	if err != nil || aws.ToString(got.Policy) != policy {
		t.Fatalf("GetBucketPolicy: %v, %q; want the policy as put", err, aws.ToString(got.Policy))
	}
	put := func(cl *s3.Client, key string) error {
		_, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(key), Body: strings.NewReader("x")})
		return err
	}
	get := func(cl *s3.Client, key string) error {
		out, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(key)})
		if err == nil {
			out.Body.Close()
		}
		return err
	}
	list := func(cl *s3.Client, prefix string) error {
		_, err := cl.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String(prefix)})
		return err
	}
	del := func(cl *s3.Client, key string) error {
		_, err := cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String(key)})
		return err
	}
	for _, key := range []string{"teams/bob/plan", "teams/carol/plan", "drop/anonymous/readme", "home/" + e.id + "/diary"} {
		if err := put(c, key); err != nil {
			t.Fatalf("the owner's PutObject %s: %v", key, err)
		}
	}
	home1, home2 := "home/"+b1ID+"/", "home/"+b2ID+"/"
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"bob's first key writes its home", put(bob1, home1+"a"), ""},
		{"bob's second key writes its home", put(bob2, home2+"a"), ""},
		{"bob's first key writes the second's home", put(bob1, home2+"b"), "AccessDenied"},
		{"bob's second key reads the first's home", get(bob2, home1+"a"), "AccessDenied"},
		{"bob's first key reads its home", get(bob1, home1+"a"), ""},
		{"bob's first key lists its home", list(bob1, home1), ""},
		{"bob's first key lists the second's home", list(bob1, home2), "AccessDenied"},
		{"bob's first key lists the bucket", list(bob1, ""), "AccessDenied"},
		{"bob reads his team's folder", get(bob2, "teams/bob/plan"), ""},
		{"bob reads another team's folder", get(bob1, "teams/carol/plan"), "AccessDenied"},
		{"an anonymous reader, the default's folder", get(anon, "drop/anonymous/readme"), ""},
		{"an anonymous reader, a home", get(anon, home1+"a"), "AccessDenied"},
		{"the owner deletes in another's folder", del(c, "teams/carol/plan"), "AccessDenied"},
		{"the owner deletes in her own home", del(c, "home/"+e.id+"/diary"), ""},
	} {
		if got := apiCode(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	keys := strings.Join(listKeys(t, c, "shared"), ",")
	want := []string{"drop/anonymous/readme", home1 + "a", home2 + "a", "teams/bob/plan", "teams/carol/plan"}
	slices.Sort(want)
	if want := strings.Join(want, ","); keys != want {
		t.Errorf("the bucket holds %s, want %s", keys, want)
	}

	// What the policy language refuses, it refuses at PutBucketPolicy.
	for _, tc := range []struct {
		resource string
		status   int
	}{
		{"arn:aws:s3:::shared/home/${aws:username/*", 400},
		{"arn:aws:s3:::shared/home/${aws:username, guest}/*", 400},
		{"arn:aws:s3:::shared/${aws:CurrentTime}/*", 501},
	} {
		doc := `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"` + tc.resource + `"}}`
		if err := putPolicy(c, "shared", doc); httpStatus(err) != tc.status {
			t.Errorf("PutBucketPolicy with Resource %s: %v, want %d", tc.resource, err, tc.status)
		}
	}
	if got, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: b}); err != nil || aws.ToString(got.Policy) != policy {
		t.Errorf("the policy after refused puts: %v, %q; want the first", err, aws.ToString(got.Policy))
	}
}
