package s3api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestConfigurationProbes: the configuration reads that rclone, mc and
// the AWS CLI make before they act are answered as S3 answers them for a
// bucket without that configuration, through the AWS SDK; writing one
// stays NotImplemented.
func TestConfigurationProbes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	b := aws.String("probed")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a/1", "a/2", "b"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(k), Body: strings.NewReader(k)}); err != nil {
			t.Fatal(err)
		}
	}

	v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: b})
	if err != nil || v.Status != "" {
		t.Errorf("GetBucketVersioning = %+v, %v; want no status", v, err)
	}
	own, err := c.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: b})
	if err != nil || len(own.OwnershipControls.Rules) != 1 || own.OwnershipControls.Rules[0].ObjectOwnership != types.ObjectOwnershipBucketOwnerEnforced {
		t.Errorf("GetBucketOwnershipControls = %+v, %v; want BucketOwnerEnforced", own, err)
	}
	acl, err := c.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: b})
	if err != nil || len(acl.Grants) != 1 || acl.Grants[0].Permission != types.PermissionFullControl {
		t.Errorf("GetBucketAcl = %+v, %v; want the owner's FULL_CONTROL", acl, err)
	}
	tags, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: aws.String("b")})
	if err != nil || len(tags.TagSet) != 0 {
		t.Errorf("GetObjectTagging = %+v, %v; want an empty tag set", tags, err)
	}
	if _, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: aws.String("none")}); apiCode(err) != "NoSuchKey" {
		t.Errorf("GetObjectTagging of a missing key: %v, want NoSuchKey", err)
	}

	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"GetObjectLockConfiguration", func() error {
			_, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: b})
			return err
		}, "ObjectLockConfigurationNotFoundError"},
		{"GetBucketTagging", func() error { _, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: b}); return err }, "NoSuchTagSet"},
		{"GetBucketPolicy", func() error { _, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: b}); return err }, "NoSuchBucketPolicy"},
		{"GetBucketCors", func() error { _, err := c.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: b}); return err }, "NoSuchCORSConfiguration"},
		{"GetBucketEncryption", func() error {
			_, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: b})
			return err
		}, "ServerSideEncryptionConfigurationNotFoundError"},
		{"GetBucketLifecycleConfiguration", func() error {
			_, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: b})
			return err
		}, "NoSuchLifecycleConfiguration"},
		{"GetPublicAccessBlock", func() error {
			_, err := c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: b})
			return err
		}, "NoSuchPublicAccessBlockConfiguration"},
		{"GetBucketVersioning of a missing bucket", func() error {
			_, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String("no-such-bucket")})
			return err
		}, "NoSuchBucket"},
	} {
		if err := tc.call(); apiCode(err) != tc.want {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
		}
	}

	// ListObjectVersions: every object is its only version, "null", and
	// the listing pages like the others.
	var keys []string
	in := &s3.ListObjectVersionsInput{Bucket: b, MaxKeys: aws.Int32(2)}
	for page := 0; ; page++ {
		if page > 5 {
			t.Fatalf("ListObjectVersions does not end: %v", keys)
		}
		out, err := c.ListObjectVersions(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range out.Versions {
			if aws.ToString(v.VersionId) != "null" || !aws.ToBool(v.IsLatest) {
				t.Errorf("version %+v, want VersionId null, IsLatest", v)
			}
			keys = append(keys, aws.ToString(v.Key))
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		in.KeyMarker, in.VersionIdMarker = out.NextKeyMarker, out.NextVersionIdMarker
	}
	if strings.Join(keys, ",") != "a/1,a/2,b" {
		t.Errorf("versions = %v, want a/1, a/2, b", keys)
	}
}

// TestPutBucketRequestPayment: the owner pays for every request here, so
// setting Payer BucketOwner (s3cmd's payer command) is accepted and
// changes nothing; Requester Pays is NotImplemented, and a bucket's
// RequestPayment still reads BucketOwner.
func TestPutBucketRequestPayment(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	b := aws.String("payer")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	put := func(p types.Payer) error {
		_, err := c.PutBucketRequestPayment(ctx, &s3.PutBucketRequestPaymentInput{Bucket: b,
			RequestPaymentConfiguration: &types.RequestPaymentConfiguration{Payer: p}})
		return err
	}
	if err := put(types.PayerBucketOwner); err != nil {
		t.Errorf("PutBucketRequestPayment BucketOwner: %v, want success", err)
	}
	if err := put(types.PayerRequester); apiCode(err) != "NotImplemented" {
		t.Errorf("PutBucketRequestPayment Requester: %v, want NotImplemented", err)
	}
	if err := put("Anyone"); apiCode(err) != "MalformedXML" {
		t.Errorf("PutBucketRequestPayment Anyone: %v, want MalformedXML", err)
	}
	_, err := c.PutBucketRequestPayment(ctx, &s3.PutBucketRequestPaymentInput{Bucket: aws.String("no-such-bucket"),
		RequestPaymentConfiguration: &types.RequestPaymentConfiguration{Payer: types.PayerBucketOwner}})
	if apiCode(err) != "NoSuchBucket" {
		t.Errorf("PutBucketRequestPayment of a missing bucket: %v, want NoSuchBucket", err)
	}
	got, err := c.GetBucketRequestPayment(ctx, &s3.GetBucketRequestPaymentInput{Bucket: b})
	if err != nil || got.Payer != types.PayerBucketOwner {
		t.Errorf("GetBucketRequestPayment = %+v, %v; want BucketOwner", got, err)
	}
}

// TestNotImplementedNamesWhat: a subresource this endpoint does not
// implement is refused 501 with a message naming it (mc sql, mc event
// add see what is missing), and a bucket configuration
// asked of an object says so.
func TestNotImplementedNamesWhat(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "unsupported")
	mustPut(t, c, "unsupported", "k", []byte("k"))
	_, err := c.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{Bucket: aws.String("unsupported"),
		NotificationConfiguration: &types.NotificationConfiguration{QueueConfigurations: []types.QueueConfiguration{{
			QueueArn: aws.String("arn:aws:sqs:us-east-1:1:q"), Events: []types.Event{types.EventS3ObjectCreated}}}}})
	if apiCode(err) != "NotImplemented" || !strings.Contains(err.Error(), "event notifications (QueueConfiguration)") {
		t.Errorf("PutBucketNotificationConfiguration: %v, want NotImplemented naming event notifications", err)
	}
	code, s3e := do(t, e.signed(t, "PUT", "/unsupported?replication", nil, "", nil))
	if code != 501 || !strings.Contains(s3e.Message, "replication (?replication)") {
		t.Errorf("PUT ?replication: %d %+v, want 501 naming replication", code, s3e)
	}
	code, s3e = do(t, e.signed(t, "GET", "/unsupported/k?cors", nil, "", nil))
	if code != 501 || !strings.Contains(s3e.Message, "?cors is a bucket's configuration") {
		t.Errorf("GET object ?cors: %d %+v, want 501 saying ?cors is a bucket's configuration", code, s3e)
	}
	code, s3e = do(t, e.signed(t, "GET", "/unsupported?attributes", nil, "", nil))
	if code != 501 || !strings.Contains(s3e.Message, "GetObjectAttributes, a GET of an object") {
		t.Errorf("GET bucket ?attributes: %d %+v, want 501 saying it is a GET of an object", code, s3e)
	}
}

// TestWritesOfWhatHolds: writes of configurations not kept that ask for
// what holds (no notifications, no acceleration, no replication) are
// taken and change nothing; asking for more is 501, nonsense 400, and a
// missing bucket 404.
func TestWritesOfWhatHolds(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "holds")
	b := aws.String("holds")
	if _, err := c.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{Bucket: b,
		NotificationConfiguration: &types.NotificationConfiguration{}}); err != nil {
		t.Errorf("an empty notification configuration: %v, want success", err)
	}
	if n, err := c.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: b}); err != nil ||
		len(n.QueueConfigurations)+len(n.TopicConfigurations)+len(n.LambdaFunctionConfigurations) != 0 {
		t.Errorf("GetBucketNotificationConfiguration after = %+v, %v; want none", n, err)
	}
	accelerate := func(bucket string, st types.BucketAccelerateStatus) error {
		_, err := c.PutBucketAccelerateConfiguration(ctx, &s3.PutBucketAccelerateConfigurationInput{Bucket: aws.String(bucket),
			AccelerateConfiguration: &types.AccelerateConfiguration{Status: st}})
		return err
	}
	if err := accelerate("holds", types.BucketAccelerateStatusSuspended); err != nil {
		t.Errorf("acceleration Suspended: %v, want success", err)
	}
	if err := accelerate("holds", types.BucketAccelerateStatusEnabled); apiCode(err) != "NotImplemented" {
		t.Errorf("acceleration Enabled: %v, want NotImplemented", err)
	}
	if err := accelerate("holds", "Fast"); apiCode(err) != "MalformedXML" {
		t.Errorf("acceleration Fast: %v, want MalformedXML", err)
	}
	if a, err := c.GetBucketAccelerateConfiguration(ctx, &s3.GetBucketAccelerateConfigurationInput{Bucket: b}); err != nil || a.Status != "" {
		t.Errorf("GetBucketAccelerateConfiguration after = %+v, %v; want no status", a, err)
	}
	if _, err := c.DeleteBucketReplication(ctx, &s3.DeleteBucketReplicationInput{Bucket: b}); err != nil {
		t.Errorf("DeleteBucketReplication: %v, want success", err)
	}
	if code, s3e := do(t, e.signed(t, "PUT", "/holds?notification", strings.NewReader("<Notification"), "", nil)); code != 400 || s3e.Code != "MalformedXML" {
		t.Errorf("a malformed notification configuration: %d %+v, want 400 MalformedXML", code, s3e)
	}
	if err := accelerate("no-such-bucket", types.BucketAccelerateStatusSuspended); apiCode(err) != "NoSuchBucket" {
		t.Errorf("acceleration of a missing bucket: %v, want NoSuchBucket", err)
	}
	if _, err := c.DeleteBucketReplication(ctx, &s3.DeleteBucketReplicationInput{Bucket: aws.String("no-such-bucket")}); apiCode(err) != "NoSuchBucket" {
		t.Errorf("DeleteBucketReplication of a missing bucket: %v, want NoSuchBucket", err)
	}
}
