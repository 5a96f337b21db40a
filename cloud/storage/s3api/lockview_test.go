package s3api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestLockHeadersNeedReadPermission: GetObject and HeadObject answer an
// object's retention only to a requester allowed s3:GetObjectRetention,
// and its legal hold only to one allowed s3:GetObjectLegalHold, as S3
// does: the owner's keys unless the bucket's policy denies them, another
// account or an anonymous reader only where the policy allows them.
// Reading the object is not enough.
func TestLockHeadersNeedReadPermission(t *testing.T) {
	e, c := newVault(t)
	ctx := context.Background()
	bobID, bobSecret := e.key(t, "bob", "readwrite", "*")
	bob := e.sdk(bobID, bobSecret)
	anon := e.anonymousSDK()
	b := aws.String("vault")
	// Anyone may read everything; anyone may see the retention under
	// ret/ (of any version), bob the legal hold under bob/; nobody, not
	// even the owner's keys, the retention under secret/.
	policy := `{"Version":"2012-10-17","Statement":[
	{"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:GetObjectVersion"],"Resource":"arn:aws:s3:::vault/*"},
	{"Effect":"Allow","Principal":"*","Action":"s3:GetObjectRetention","Resource":"arn:aws:s3:::vault/ret/*"},
	{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::bob:root"},"Action":"s3:GetObjectLegalHold","Resource":"arn:aws:s3:::vault/bob/*"},
	{"Effect":"Deny","Principal":"*","Action":"s3:GetObjectRetention","Resource":"arn:aws:s3:::vault/secret/*"}]}`
	if err := putPolicy(c, "vault", policy); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(24 * time.Hour).Truncate(time.Second)
	versions := map[string]string{}
	for _, key := range []string{"pub/a", "ret/a", "bob/a", "secret/a"} {
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(key), Body: strings.NewReader("record"),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ObjectLockMode: types.ObjectLockModeGovernance,
			ObjectLockRetainUntilDate: aws.Time(until), ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
		if err != nil {
			t.Fatalf("PutObject %s: %v", key, err)
		}
		versions[key] = aws.ToString(out.VersionId)
	}

	type seen struct{ retention, hold bool }
	for _, tc := range []struct {
		name    string
		cl      *s3.Client
		key     string
		version bool
		want    seen
	}{
		{"the owner", c, "pub/a", false, seen{true, true}},
		{"the owner, a version", c, "pub/a", true, seen{true, true}},
		{"the owner, retention denied", c, "secret/a", false, seen{false, true}},
		{"the owner, retention denied, a version", c, "secret/a", true, seen{false, true}},
		{"anonymous, reading only", anon, "pub/a", false, seen{}},
		{"anonymous, retention allowed", anon, "ret/a", false, seen{true, false}},
		{"anonymous, retention allowed, a version", anon, "ret/a", true, seen{true, false}},
		{"anonymous, retention denied", anon, "secret/a", false, seen{}},
		{"bob, reading only", bob, "pub/a", false, seen{}},
		{"bob, retention allowed", bob, "ret/a", false, seen{true, false}},
		{"bob, legal hold allowed", bob, "bob/a", false, seen{false, true}},
	} {
		var version *string
		if tc.version {
			version = aws.String(versions[tc.key])
		}
		head, err := tc.cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String(tc.key), VersionId: version})
		if err != nil {
			t.Errorf("HeadObject, %s: %v", tc.name, err)
			continue
		}
		got := seen{head.ObjectLockMode != "" || head.ObjectLockRetainUntilDate != nil, head.ObjectLockLegalHoldStatus != ""}
		if got != tc.want {
			t.Errorf("HeadObject, %s: retention shown %v, legal hold shown %v; want %v, %v", tc.name, got.retention, got.hold, tc.want.retention, tc.want.hold)
		}
		if got.retention && (head.ObjectLockMode != types.ObjectLockModeGovernance || !aws.ToTime(head.ObjectLockRetainUntilDate).Equal(until)) {
			t.Errorf("HeadObject, %s: retention %s until %v, want GOVERNANCE until %v", tc.name, head.ObjectLockMode, head.ObjectLockRetainUntilDate, until)
		}
		obj, err := tc.cl.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(tc.key), VersionId: version})
		if err != nil {
			t.Errorf("GetObject, %s: %v", tc.name, err)
			continue
		}
		obj.Body.Close()
		if g := (seen{obj.ObjectLockMode != "", obj.ObjectLockLegalHoldStatus != ""}); g != tc.want {
			t.Errorf("GetObject, %s: retention shown %v, legal hold shown %v; want %v, %v", tc.name, g.retention, g.hold, tc.want.retention, tc.want.hold)
		}
	}
}
