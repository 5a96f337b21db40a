package s3api_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// TestObjectLockAWSSDK walks Object Lock through the AWS SDK for Go as a
// backup tool uses it: a bucket made with Object Lock and a default
// retention, objects under GOVERNANCE and COMPLIANCE retention and legal
// holds, the deletes each refuses (and DeleteObjects' per-key errors),
// the governance bypass, the retention changes S3 allows and refuses, and
// deletes once a retention has passed.
func TestObjectLockAWSSDK(t *testing.T) {
	e, c := newVault(t)
	ctx := context.Background()
	b := aws.String("vault")
	if v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: b}); err != nil || v.Status != types.BucketVersioningStatusEnabled {
		t.Fatalf("versioning of a bucket made with Object Lock: %+v, %v; want Enabled", v, err)
	}
	cfg, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: b})
	if err != nil || cfg.ObjectLockConfiguration.ObjectLockEnabled != types.ObjectLockEnabledEnabled || cfg.ObjectLockConfiguration.Rule != nil {
		t.Fatalf("GetObjectLockConfiguration: %+v, %v; want Enabled without a rule", cfg, err)
	}
	_, err = c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusSuspended}})
	if httpStatus(err) != 409 || apiCode(err) != "InvalidBucketState" {
		t.Fatalf("suspending versioning: %v; want 409 InvalidBucketState", err)
	}
	_, err = c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: b, ObjectLockConfiguration: &types.ObjectLockConfiguration{
		ObjectLockEnabled: types.ObjectLockEnabledEnabled,
		Rule:              &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err = c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: b})
	if err != nil || cfg.ObjectLockConfiguration.Rule == nil || cfg.ObjectLockConfiguration.Rule.DefaultRetention.Mode != types.ObjectLockRetentionModeGovernance ||
		aws.ToInt32(cfg.ObjectLockConfiguration.Rule.DefaultRetention.Days) != 1 {
		t.Fatalf("GetObjectLockConfiguration after the rule: %+v, %v", cfg, err)
	}

	// gov: the default retention. comp: COMPLIANCE for an hour. hold: a
	// legal hold.
	put := func(key string, edit func(*s3.PutObjectInput)) string {
		t.Helper()
		in := &s3.PutObjectInput{Bucket: b, Key: aws.String(key), Body: strings.NewReader("keep me"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32}
		if edit != nil {
			edit(in)
		}
		out, err := c.PutObject(ctx, in)
		if err != nil {
			t.Fatalf("PutObject %s: %v", key, err)
		}
		return aws.ToString(out.VersionId)
	}
	start := time.Now()
	gov := put("gov", nil)
	hour := time.Now().Add(time.Hour).Truncate(time.Second)
	comp := put("comp", func(in *s3.PutObjectInput) {
		in.ObjectLockMode, in.ObjectLockRetainUntilDate = types.ObjectLockModeCompliance, aws.Time(hour)
	})
	hold := put("hold", func(in *s3.PutObjectInput) { in.ObjectLockLegalHoldStatus = types.ObjectLockLegalHoldStatusOn })

	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("gov")})
	if err != nil || head.ObjectLockMode != types.ObjectLockModeGovernance || head.ObjectLockRetainUntilDate == nil ||
		head.ObjectLockRetainUntilDate.Before(start.Add(24*time.Hour-time.Second)) || head.ObjectLockRetainUntilDate.After(time.Now().Add(24*time.Hour)) {
		t.Fatalf("HeadObject of the default-retained object: %+v, %v; want GOVERNANCE for a day", head, err)
	}
	ret, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: b, Key: aws.String("comp"), VersionId: aws.String(comp)})
	if err != nil || ret.Retention.Mode != types.ObjectLockRetentionModeCompliance || !ret.Retention.RetainUntilDate.Equal(hour) {
		t.Fatalf("GetObjectRetention: %+v, %v; want COMPLIANCE until %v", ret, err, hour)
	}
	lh, err := c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: b, Key: aws.String("hold")})
	if err != nil || lh.LegalHold.Status != types.ObjectLockLegalHoldStatusOn {
		t.Fatalf("GetObjectLegalHold: %+v, %v; want ON", lh, err)
	}

	del := func(key, version string, bypass bool) error {
		_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String(key), VersionId: aws.String(version),
			BypassGovernanceRetention: aws.Bool(bypass)})
		return err
	}
	refused := []struct {
		key, version string
		bypass       bool
	}{{"gov", gov, false}, {"comp", comp, false}, {"comp", comp, true}, {"hold", hold, true}}
	for _, r := range refused {
		if err := del(r.key, r.version, r.bypass); httpStatus(err) != 403 || apiCode(err) != "AccessDenied" {
			t.Errorf("delete of locked %s (bypass %v): %v; want 403 AccessDenied", r.key, r.bypass, err)
		}
	}
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("gov"), VersionId: aws.String(gov)}, {Key: aws.String("comp"), VersionId: aws.String(comp)}}}})
	if err != nil || len(out.Errors) != 2 || len(out.Deleted) != 0 || aws.ToString(out.Errors[0].Code) != "AccessDenied" || aws.ToString(out.Errors[1].Code) != "AccessDenied" {
		t.Fatalf("DeleteObjects of locked versions: %+v, %v; want two AccessDenied errors", out, err)
	}
	// A delete without a version id makes a delete marker, as in S3.
	if dm, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("comp")}); err != nil || !aws.ToBool(dm.DeleteMarker) {
		t.Fatalf("delete without a version id: %+v, %v; want a delete marker", dm, err)
	}

	// Retention changes: COMPLIANCE only lengthens; GOVERNANCE shortens
	// with a bypass.
	setRet := func(key, version string, mode types.ObjectLockRetentionMode, until time.Time, bypass bool) error {
		_, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: aws.String(key), VersionId: aws.String(version),
			Retention: &types.ObjectLockRetention{Mode: mode, RetainUntilDate: aws.Time(until)}, BypassGovernanceRetention: aws.Bool(bypass)})
		return err
	}
	if err := setRet("comp", comp, types.ObjectLockRetentionModeCompliance, hour.Add(-time.Minute), true); httpStatus(err) != 403 {
		t.Errorf("shortening COMPLIANCE: %v; want 403", err)
	}
	if err := setRet("comp", comp, types.ObjectLockRetentionModeGovernance, hour.Add(time.Hour), true); httpStatus(err) != 403 {
		t.Errorf("COMPLIANCE to GOVERNANCE: %v; want 403", err)
	}
	if err := setRet("comp", comp, types.ObjectLockRetentionModeCompliance, hour.Add(time.Hour), false); err != nil {
		t.Errorf("lengthening COMPLIANCE: %v", err)
	}
	soon := time.Now().Add(time.Minute).Truncate(time.Second)
	if err := setRet("gov", gov, types.ObjectLockRetentionModeGovernance, soon, false); httpStatus(err) != 403 {
		t.Errorf("shortening GOVERNANCE without a bypass: %v; want 403", err)
	}
	if err := setRet("gov", gov, types.ObjectLockRetentionModeGovernance, soon, true); err != nil {
		t.Errorf("shortening GOVERNANCE with a bypass: %v", err)
	}
	if err := setRet("gov", gov, types.ObjectLockRetentionModeGovernance, time.Now().Add(-time.Hour), true); httpStatus(err) != 400 || apiCode(err) != "InvalidArgument" {
		t.Errorf("a retention in the past: %v; want 400 InvalidArgument", err)
	}
	// The bypass lets GOVERNANCE go; the legal hold, once lifted, too.
	out, err = c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, BypassGovernanceRetention: aws.Bool(true),
		Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("gov"), VersionId: aws.String(gov)}}}})
	if err != nil || len(out.Errors) != 0 || len(out.Deleted) != 1 {
		t.Errorf("DeleteObjects of a GOVERNANCE version with a bypass: %+v, %v; want it deleted", out, err)
	}
	if _, err := c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: b, Key: aws.String("hold"), VersionId: aws.String(hold),
		LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOff}}); err != nil {
		t.Fatal(err)
	}
	if err := del("hold", hold, true); err != nil {
		t.Errorf("delete once the hold is lifted (its default GOVERNANCE bypassed): %v", err)
	}
	// Past its date, COMPLIANCE lets go: the store's clock moves on.
	e.st.SetClock(func() time.Time { return time.Now().Add(3 * time.Hour) })
	if err := del("comp", comp, false); err != nil {
		t.Errorf("delete past the retention: %v", err)
	}
	vs, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: b})
	if err != nil || len(vs.Versions) != 0 || len(vs.DeleteMarkers) != 1 {
		t.Errorf("versions left: %+v, %v; want the one delete marker", vs, err)
	}
}

// TestObjectLockRefusals: what S3 refuses about Object Lock is refused
// with its codes, and changes nothing.
func TestObjectLockRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "plain")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("locked"), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, c, "plain", "k", []byte("x"))
	mustPut(t, c, "locked", "k", []byte("x"))
	past := aws.Time(time.Now().Add(-time.Hour))
	future := aws.Time(time.Now().Add(time.Hour))
	lockCfg := func(bucket string, d *types.DefaultRetention) error {
		in := &s3.PutObjectLockConfigurationInput{Bucket: aws.String(bucket), ObjectLockConfiguration: &types.ObjectLockConfiguration{
			ObjectLockEnabled: types.ObjectLockEnabledEnabled}}
		if d != nil {
			in.ObjectLockConfiguration.Rule = &types.ObjectLockRule{DefaultRetention: d}
		}
		_, err := c.PutObjectLockConfiguration(ctx, in)
		return err
	}
	tests := []struct {
		name   string
		call   func() error
		status int
		code   string
	}{
		{"configuration of a bucket that keeps no versions", func() error { return lockCfg("plain", nil) }, 409, "InvalidBucketState"},
		{"configuration of a missing bucket", func() error { return lockCfg("nowhere", nil) }, 404, "NoSuchBucket"},
		{"zero days", func() error {
			return lockCfg("locked", &types.DefaultRetention{Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(0)})
		}, 400, "InvalidArgument"},
		{"days and years", func() error {
			return lockCfg("locked", &types.DefaultRetention{Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1), Years: aws.Int32(1)})
		}, 400, "MalformedXML"},
		{"no mode", func() error { return lockCfg("locked", &types.DefaultRetention{Days: aws.Int32(1)}) }, 400, "MalformedXML"},
		{"configuration read of a plain bucket", func() error {
			_, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String("plain")})
			return err
		}, 404, "ObjectLockConfigurationNotFoundError"},
		{"retention in a plain bucket", func() error {
			_, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String("plain"), Key: aws.String("k"),
				Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: future}})
			return err
		}, 400, "InvalidRequest"},
		{"retention read in a plain bucket", func() error {
			_, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: aws.String("plain"), Key: aws.String("k")})
			return err
		}, 400, "InvalidRequest"},
		{"retention read of an object without one", func() error {
			_, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: aws.String("locked"), Key: aws.String("k")})
			return err
		}, 404, "NoSuchObjectLockConfiguration"},
		{"retention of a missing key", func() error {
			_, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String("locked"), Key: aws.String("nokey"),
				Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: future}})
			return err
		}, 404, "NoSuchKey"},
		{"mode without a date", func() error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("locked"), Key: aws.String("k"), Body: strings.NewReader("y"),
				ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ObjectLockMode: types.ObjectLockModeGovernance})
			return err
		}, 400, "InvalidArgument"},
		{"a date in the past", func() error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("locked"), Key: aws.String("k"), Body: strings.NewReader("y"),
				ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: past})
			return err
		}, 400, "InvalidArgument"},
		{"lock headers on a copy into a plain bucket", func() error {
			_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("plain"), Key: aws.String("copy"), CopySource: aws.String("locked/k"),
				ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: future})
			return err
		}, 400, "InvalidRequest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); httpStatus(err) != tt.status || apiCode(err) != tt.code {
				t.Fatalf("got %v; want %d %s", err, tt.status, tt.code)
			}
		})
	}
	// A lock asked with an upload needs s3:PutObjectRetention or
	// s3:PutObjectLegalHold besides s3:PutObject: another account the
	// policy lets upload may not lock what it writes without them, and
	// the owner's keys may be denied them.
	id, secret := e.key(t, "mallory", cloudstore.PermReadWrite, "*")
	mallory := e.sdk(id, secret)
	setPolicy := func(statements string) {
		t.Helper()
		policy := `{"Version":"2012-10-17","Statement":[` + statements + `]}`
		if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("locked"), Policy: aws.String(policy)}); err != nil {
			t.Fatal(err)
		}
	}
	allow := func(actions string) string {
		return `{"Effect":"Allow","Principal":{"AWS":"` + id + `"},"Action":[` + actions + `],"Resource":"arn:aws:s3:::locked/*"}`
	}
	setPolicy(allow(`"s3:PutObject","s3:DeleteObjectVersion"`))
	putAs := func(c *s3.Client, key string, edit func(*s3.PutObjectInput)) (*s3.PutObjectOutput, error) {
		in := &s3.PutObjectInput{Bucket: aws.String("locked"), Key: aws.String(key), Body: strings.NewReader("g"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32}
		if edit != nil {
			edit(in)
		}
		return c.PutObject(ctx, in)
	}
	governed := func(in *s3.PutObjectInput) {
		in.ObjectLockMode, in.ObjectLockRetainUntilDate = types.ObjectLockModeGovernance, future
	}
	held := func(in *s3.PutObjectInput) { in.ObjectLockLegalHoldStatus = types.ObjectLockLegalHoldStatusOn }
	for name, edit := range map[string]func(*s3.PutObjectInput){"retention": governed, "legal hold": held} {
		if _, err := putAs(mallory, "m", edit); httpStatus(err) != 403 {
			t.Errorf("another account's upload with a %s its grant lacks: %v; want 403", name, err)
		}
	}
	if _, err := putAs(mallory, "m", nil); err != nil {
		t.Fatalf("another account's upload without a lock: %v", err)
	}
	setPolicy(`{"Effect":"Deny","Principal":"*","Action":"s3:PutObjectRetention","Resource":"arn:aws:s3:::locked/*"}`)
	if _, err := putAs(c, "denied", governed); httpStatus(err) != 403 {
		t.Errorf("the owner's upload with a retention the policy denies: %v; want 403", err)
	}

	// A governance bypass: another account's only where the policy allows
	// it, refused only when the retention is in the way; the owner's
	// unless the policy denies it.
	setPolicy(allow(`"s3:DeleteObjectVersion"`))
	gov, err := putAs(c, "gov", governed)
	if err != nil {
		t.Fatal(err)
	}
	free, err := putAs(c, "free", nil)
	if err != nil {
		t.Fatal(err)
	}
	delAs := func(c *s3.Client, key string, version *string) error {
		_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("locked"), Key: aws.String(key), VersionId: version,
			BypassGovernanceRetention: aws.Bool(true)})
		return err
	}
	if err := delAs(mallory, "gov", gov.VersionId); httpStatus(err) != 403 || !strings.Contains(err.Error(), "did not apply") {
		t.Errorf("another account's bypass the policy does not allow: %v; want 403 saying why", err)
	}
	if err := delAs(mallory, "free", free.VersionId); err != nil {
		t.Errorf("another account's delete, with a bypass it did not need: %v", err)
	}
	setPolicy(`{"Effect":"Deny","Principal":"*","Action":"s3:BypassGovernanceRetention","Resource":"arn:aws:s3:::locked/*"}`)
	if err := delAs(c, "gov", gov.VersionId); httpStatus(err) != 403 || !strings.Contains(err.Error(), "policy denies") {
		t.Errorf("the owner's bypass the policy denies: %v; want 403 naming the policy", err)
	}
	setPolicy(allow(`"s3:DeleteObjectVersion","s3:BypassGovernanceRetention"`))
	if err := delAs(mallory, "gov", gov.VersionId); err != nil {
		t.Errorf("another account's bypass the policy allows: %v", err)
	}

	// Nor may an anonymous request bypass, whatever the policy allows,
	// nor a write-only key of the owner's (a backup agent's).
	gov2, err := putAs(c, "gov2", governed)
	if err != nil {
		t.Fatal(err)
	}
	setPolicy(`{"Effect":"Allow","Principal":"*","Action":["s3:DeleteObjectVersion","s3:BypassGovernanceRetention"],"Resource":"arn:aws:s3:::locked/*"}`)
	if status, code := e.anonymous(t, "DELETE", "/locked/gov2?versionId="+url.QueryEscape(*gov2.VersionId),
		map[string]string{"X-Amz-Bypass-Governance-Retention": "true"}); status != 403 || code != "AccessDenied" {
		t.Errorf("an anonymous bypass: %d %s; want 403 AccessDenied", status, code)
	}
	wid, wsecret := e.key(t, "alice", cloudstore.PermWrite, "*")
	if err := delAs(e.sdk(wid, wsecret), "gov2", gov2.VersionId); httpStatus(err) != 403 || !strings.Contains(err.Error(), "write-only") {
		t.Errorf("a write-only key's bypass: %v; want 403 saying a write-only key may not", err)
	}
	if err := getVersion(c, "locked", "gov2", *gov2.VersionId); err != nil {
		t.Errorf("gov2 after refused bypasses: %v", err)
	}
	// A bypass that could not help is not offered as the reason.
	comp, err := putAs(c, "comp", func(in *s3.PutObjectInput) {
		in.ObjectLockMode, in.ObjectLockRetainUntilDate = types.ObjectLockModeCompliance, future
	})
	if err != nil {
		t.Fatal(err)
	}
	setPolicy(allow(`"s3:DeleteObjectVersion"`)) // no bypass for mallory
	if err := delAs(mallory, "comp", comp.VersionId); httpStatus(err) != 403 || strings.Contains(err.Error(), "did not apply") {
		t.Errorf("another account's bypass of COMPLIANCE: %v; want 403 without a word on the bypass", err)
	}

	// A COMPLIANCE date read back and written again is the same date.
	ret, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: aws.String("locked"), Key: aws.String("comp"), VersionId: comp.VersionId})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String("locked"), Key: aws.String("comp"), VersionId: comp.VersionId,
		Retention: ret.Retention}); err != nil {
		t.Errorf("COMPLIANCE retention written again as read (%v): %v", ret.Retention.RetainUntilDate, err)
	}

	// Lock headers on a copy or a multipart upload need the lock's
	// permission as an upload's do.
	setPolicy(allow(`"s3:PutObject","s3:GetObject"`))
	if _, err := mallory.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("locked"), Key: aws.String("mcopy"), CopySource: aws.String("locked/k"),
		ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn}); httpStatus(err) != 403 {
		t.Errorf("another account's copy with a legal hold its grant lacks: %v; want 403", err)
	}
	if _, err := mallory.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("locked"), Key: aws.String("mpart"),
		ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: future}); httpStatus(err) != 403 {
		t.Errorf("another account's multipart upload with a retention its grant lacks: %v; want 403", err)
	}
	if _, err := mallory.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("locked"), Key: aws.String("mcopy"), CopySource: aws.String("locked/k")}); err != nil {
		t.Errorf("another account's copy without a lock: %v", err)
	}

	// Lock calls without Content-MD5 or a checksum, which the SDK always
	// sends for them, are refused.
	for _, call := range []struct{ query, body string }{
		{"?object-lock", "<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>"},
		{"/k?retention", "<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>" + future.UTC().Format(time.RFC3339) + "</RetainUntilDate></Retention>"},
		{"/k?legal-hold", "<LegalHold><Status>ON</Status></LegalHold>"},
	} {
		status, serr := do(t, e.signed(t, "PUT", "/locked"+call.query, strings.NewReader(call.body), "", nil))
		if status != 400 || serr.Code != "InvalidRequest" {
			t.Errorf("PUT %s without a checksum: %d %s; want 400 InvalidRequest", call.query, status, serr.Code)
		}
	}
	if out, err := c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: aws.String("locked"), Key: aws.String("k")}); err == nil && out.LegalHold.Status == types.ObjectLockLegalHoldStatusOn {
		t.Errorf("a legal hold without a checksum was set")
	}

	// The checks of the request itself.
	noSum := e.sdk(e.id, e.secret, func(o *s3.Options) { o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired })
	_, err = noSum.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("locked"), Key: aws.String("nosum"), Body: strings.NewReader("n"),
		ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
	if httpStatus(err) != 400 || apiCode(err) != "InvalidRequest" || !strings.Contains(err.Error(), "Content-MD5") {
		t.Errorf("a locked upload without a checksum: %v; want 400 InvalidRequest asking for Content-MD5", err)
	}
	if _, err := putAs(c, "bad", func(in *s3.PutObjectInput) { in.ObjectLockLegalHoldStatus = "MAYBE" }); httpStatus(err) != 400 || apiCode(err) != "InvalidArgument" {
		t.Errorf("a legal hold of MAYBE: %v; want 400 InvalidArgument", err)
	}
	weird := e.sdk(e.id, e.secret, func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, smithyhttp.SetHeaderValue("X-Amz-Bypass-Governance-Retention", "maybe"))
	})
	if _, err := weird.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("locked"), Key: aws.String("k"), VersionId: aws.String("null")}); httpStatus(err) != 400 || apiCode(err) != "InvalidArgument" {
		t.Errorf("a bypass of maybe: %v; want 400 InvalidArgument", err)
	}
	for _, key := range []string{"denied", "nosum", "bad"} {
		if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("locked"), Key: aws.String(key)}); httpStatus(err) != 404 {
			t.Errorf("%s exists after a refused upload: %v", key, err)
		}
	}
	if got, _ := mustGet(t, c, "locked", "k"); string(got) != "x" {
		t.Errorf("locked/k holds %q after refused writes", got)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("plain"), Key: aws.String("copy")}); httpStatus(err) != 404 {
		t.Errorf("a refused copy was made: %v", err)
	}
	if cfg, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String("locked")}); err != nil ||
		cfg.ObjectLockConfiguration.Rule != nil {
		t.Errorf("refused configurations changed the bucket's: %+v, %v", cfg, err)
	}
}

// TestObjectLockMultipartAndCopy: CreateMultipartUpload's and CopyObject's
// lock headers lock what they make.
func TestObjectLockMultipartAndCopy(t *testing.T) {
	_, c := newVault(t)
	ctx := context.Background()
	b := aws.String("vault")
	until := time.Now().Add(time.Hour).Truncate(time.Second)
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp"),
		ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: aws.Time(until)})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: up.UploadId, PartNumber: aws.Int32(1),
		Body: strings.NewReader("one part")})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp"), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("mp"), VersionId: done.VersionId,
		BypassGovernanceRetention: aws.Bool(true)}); httpStatus(err) != 403 {
		t.Fatalf("delete of a COMPLIANCE multipart object: %v; want 403", err)
	}
	cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("cp"), CopySource: aws.String("vault/mp"),
		ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
	if err != nil {
		t.Fatal(err)
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("cp")})
	if err != nil || head.ObjectLockLegalHoldStatus != types.ObjectLockLegalHoldStatusOn || head.ObjectLockMode != "" {
		t.Fatalf("the copy's lock: %+v, %v; want its own legal hold and not the source's retention", head, err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("cp"), VersionId: cp.VersionId}); httpStatus(err) != 403 {
		t.Fatalf("delete of a held copy: %v; want 403", err)
	}
}

// TestLegalHoldStatus: as in S3, a version never given a legal hold has
// no status to show (GetObjectLegalHold is 404
// NoSuchObjectLockConfiguration, HEAD has no x-amz-object-lock-legal-hold),
// while one given a hold, by its upload or later, shows ON or OFF, even
// once lifted; a copy has only the hold its own request gives it.
func TestLegalHoldStatus(t *testing.T) {
	_, c := newVault(t)
	ctx := context.Background()
	b := aws.String("vault")
	put := func(key string, hold types.ObjectLockLegalHoldStatus) {
		t.Helper()
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(key), Body: strings.NewReader("x"),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ObjectLockLegalHoldStatus: hold}); err != nil {
			t.Fatalf("PutObject %s: %v", key, err)
		}
	}
	put("never", "")
	put("off", types.ObjectLockLegalHoldStatusOff)
	put("on", types.ObjectLockLegalHoldStatusOn)
	put("lifted", types.ObjectLockLegalHoldStatusOn)
	put("later", "")
	for key, status := range map[string]types.ObjectLockLegalHoldStatus{"lifted": types.ObjectLockLegalHoldStatusOff, "later": types.ObjectLockLegalHoldStatusOn} {
		if _, err := c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: b, Key: aws.String(key),
			LegalHold: &types.ObjectLockLegalHold{Status: status}}); err != nil {
			t.Fatalf("PutObjectLegalHold %s %s: %v", key, status, err)
		}
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy"), CopySource: aws.String("vault/on")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		want types.ObjectLockLegalHoldStatus // "": none to show
	}{
		{"never", ""}, {"off", types.ObjectLockLegalHoldStatusOff}, {"on", types.ObjectLockLegalHoldStatusOn},
		{"lifted", types.ObjectLockLegalHoldStatusOff}, {"later", types.ObjectLockLegalHoldStatusOn}, {"copy", ""},
	} {
		lh, err := c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: b, Key: aws.String(tc.key)})
		switch {
		case tc.want == "" && (httpStatus(err) != 404 || apiCode(err) != "NoSuchObjectLockConfiguration"):
			t.Errorf("GetObjectLegalHold %s: %+v, %v; want 404 NoSuchObjectLockConfiguration", tc.key, lh, err)
		case tc.want != "" && (err != nil || lh.LegalHold.Status != tc.want):
			t.Errorf("GetObjectLegalHold %s: %+v, %v; want %s", tc.key, lh, err, tc.want)
		}
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String(tc.key)})
		if err != nil {
			t.Errorf("HeadObject %s: %v", tc.key, err)
		} else if head.ObjectLockLegalHoldStatus != tc.want {
			t.Errorf("HeadObject %s: legal hold %q; want %q", tc.key, head.ObjectLockLegalHoldStatus, tc.want)
		}
	}
}

// newVault starts an endpoint where alice owns the bucket "vault", made
// with Object Lock, and returns alice's client.
func newVault(t *testing.T) (*env, *s3.Client) {
	t.Helper()
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("vault"), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	return e, c
}
