package s3api_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func putString(t *testing.T, c *s3.Client, bucket, key, body string) *s3.PutObjectOutput {
	t.Helper()
	out, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)})
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
	return out
}

func getString(t *testing.T, c *s3.Client, bucket, key, version string) (string, *s3.GetObjectOutput) {
	t.Helper()
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if version != "" {
		in.VersionId = aws.String(version)
	}
	out, err := c.GetObject(context.Background(), in)
	if err != nil {
		t.Fatalf("get %s/%s@%s: %v", bucket, key, version, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), out
}

// newBucket starts an endpoint and makes a bucket called name with alice's
// key; it returns the endpoint, an AWS SDK client with that key and the
// bucket's name as the SDK takes it.
func newBucket(t *testing.T, name string) (*env, *s3.Client, *string) {
	t.Helper()
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	b := aws.String(name)
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	return e, c, b
}

// setVersioning sets bucket's versioning state, or fails the test.
func setVersioning(t *testing.T, c *s3.Client, bucket *string, status types.BucketVersioningStatus) {
	t.Helper()
	if _, err := c.PutBucketVersioning(context.Background(), &s3.PutBucketVersioningInput{Bucket: bucket,
		VersioningConfiguration: &types.VersioningConfiguration{Status: status}}); err != nil {
		t.Fatalf("versioning %s: %v", status, err)
	}
}

// versionsOf lists every version and delete marker of bucket, a page of
// two at a time, as "key@id" ("key@id DM" for markers, "*" for the
// latest), in S3's order.
func versionsOf(t *testing.T, c *s3.Client, bucket string) []string {
	t.Helper()
	var out []string
	in := &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), MaxKeys: aws.Int32(2)}
	for page := 0; ; page++ {
		if page > 50 {
			t.Fatal("ListObjectVersions does not end")
		}
		res, err := c.ListObjectVersions(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		// The SDK splits the two elements: merge them back in order.
		type entry struct {
			key, id string
			latest  bool
			marker  bool
		}
		var all []entry
		for _, v := range res.Versions {
			all = append(all, entry{aws.ToString(v.Key), aws.ToString(v.VersionId), aws.ToBool(v.IsLatest), false})
		}
		for _, d := range res.DeleteMarkers {
			all = append(all, entry{aws.ToString(d.Key), aws.ToString(d.VersionId), aws.ToBool(d.IsLatest), true})
		}
		if len(all) > 2 {
			t.Fatalf("a page of %d, max-keys 2", len(all))
		}
		for _, e := range all {
			s := e.key + "@" + e.id
			if e.marker {
				s += " DM"
			}
			if e.latest {
				s += " *"
			}
			out = append(out, s)
		}
		if !aws.ToBool(res.IsTruncated) {
			return out
		}
		in.KeyMarker, in.VersionIdMarker = res.NextKeyMarker, res.NextVersionIdMarker
	}
}

// TestAWSSDKVersioning walks S3's versioning with the AWS SDK: enabling
// it, versions of puts, reads and copies by version, delete markers,
// deleting versions (and markers) for good, DeleteObjects with versions,
// suspending it and the null version.
func TestAWSSDKVersioning(t *testing.T) {
	e, c, b := newBucket(t, "ver")
	ctx := context.Background()
	state := func() types.BucketVersioningStatus {
		out, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: b})
		if err != nil {
			t.Fatal(err)
		}
		return out.Status
	}
	if s := state(); s != "" {
		t.Fatalf("a new bucket's versioning: %q", s)
	}
	// Before versioning: no version ids on the wire.
	if out := putString(t, c, "ver", "old", "from before"); out.VersionId != nil {
		t.Fatalf("unversioned put answered version %q", *out.VersionId)
	}
	if _, out := getString(t, c, "ver", "old", ""); out.VersionId != nil {
		t.Fatalf("unversioned get answered version %q", *out.VersionId)
	}
	setVersioning(t, c, b, types.BucketVersioningStatusEnabled)
	if s := state(); s != types.BucketVersioningStatusEnabled {
		t.Fatalf("versioning %q after enabling", s)
	}
	v1 := aws.ToString(putString(t, c, "ver", "k", "one").VersionId)
	v2 := aws.ToString(putString(t, c, "ver", "k", "two").VersionId)
	if v1 == "" || v2 == "" || v1 == v2 {
		t.Fatalf("version ids %q %q", v1, v2)
	}
	if body, out := getString(t, c, "ver", "k", ""); body != "two" || aws.ToString(out.VersionId) != v2 {
		t.Fatalf("current: %q version %q", body, aws.ToString(out.VersionId))
	}
	if body, out := getString(t, c, "ver", "k", v1); body != "one" || aws.ToString(out.VersionId) != v1 {
		t.Fatalf("v1: %q version %q", body, aws.ToString(out.VersionId))
	}
	// The object from before versioning is now the null version.
	if body, out := getString(t, c, "ver", "old", "null"); body != "from before" || aws.ToString(out.VersionId) != "null" {
		t.Fatalf("null version: %q %q", body, aws.ToString(out.VersionId))
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String(v1)})
	if err != nil || aws.ToString(head.VersionId) != v1 || aws.ToInt64(head.ContentLength) != 3 {
		t.Fatalf("head v1: %+v, %v", head, err)
	}
	// A copy from a version names it, and makes a new version.
	cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy"), CopySource: aws.String("ver/k?versionId=" + v1)})
	if err != nil || aws.ToString(cp.CopySourceVersionId) != v1 || aws.ToString(cp.VersionId) == "" {
		t.Fatalf("copy of v1: %+v, %v", cp, err)
	}
	if body, _ := getString(t, c, "ver", "copy", ""); body != "one" {
		t.Fatalf("the copy holds %q", body)
	}
	// A copy of a version onto its own key restores it.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("k"), CopySource: aws.String("ver/k?versionId=" + v1)}); err != nil {
		t.Fatalf("restore v1 by a copy: %v", err)
	}
	if body, _ := getString(t, c, "ver", "k", ""); body != "one" {
		t.Fatalf("after the restore: %q", body)
	}
	// Deleting makes a delete marker: the key reads as missing, with the
	// marker named; the versions stay.
	del, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("k")})
	if err != nil || !aws.ToBool(del.DeleteMarker) || aws.ToString(del.VersionId) == "" {
		t.Fatalf("delete: %+v, %v", del, err)
	}
	marker := aws.ToString(del.VersionId)
	resp := e.rawGet(t, "/ver/k")
	if resp.StatusCode != 404 || resp.Header.Get("X-Amz-Delete-Marker") != "true" || resp.Header.Get("X-Amz-Version-Id") != marker {
		t.Fatalf("GET behind a delete marker: %d %v", resp.StatusCode, resp.Header)
	}
	resp = e.rawGet(t, "/ver/k?versionId="+marker)
	if resp.StatusCode != 405 || resp.Header.Get("X-Amz-Delete-Marker") != "true" {
		t.Fatalf("GET of the delete marker: %d %v", resp.StatusCode, resp.Header)
	}
	if body, _ := getString(t, c, "ver", "k", v2); body != "two" {
		t.Fatalf("v2 behind the marker: %q", body)
	}
	// Listed, each key's newest first, across pages of two.
	want := []string{"copy@" + aws.ToString(cp.VersionId) + " *", "k@" + marker + " DM *"}
	got := versionsOf(t, c, "ver")
	if len(got) != 6 || got[0] != want[0] || got[1] != want[1] || got[5] != "old@null *" {
		t.Fatalf("versions:\n%s", strings.Join(got, "\n"))
	}
	// ListObjects shows only current objects.
	lo, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b})
	if err != nil || strings.Join(objKeys(lo.Contents), ",") != "copy,old" {
		t.Fatalf("ListObjectsV2 behind a marker: %v %v", objKeys(lo.Contents), err)
	}
	// Deleting the marker for good brings the previous version back.
	del, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String(marker)})
	if err != nil || !aws.ToBool(del.DeleteMarker) || aws.ToString(del.VersionId) != marker {
		t.Fatalf("delete the marker: %+v, %v", del, err)
	}
	if body, _ := getString(t, c, "ver", "k", ""); body != "one" {
		t.Fatalf("after removing the marker: %q", body)
	}
	// DeleteObjects with versions: one version for good, one key to a
	// marker.
	dout, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("k"), VersionId: aws.String(v1)},
		{Key: aws.String("copy")},
	}}})
	if err != nil || len(dout.Deleted) != 2 || len(dout.Errors) != 0 {
		t.Fatalf("DeleteObjects: %+v, %v", dout, err)
	}
	for _, d := range dout.Deleted {
		switch aws.ToString(d.Key) {
		case "k":
			if aws.ToString(d.VersionId) != v1 || aws.ToBool(d.DeleteMarker) {
				t.Errorf("deleted k: %+v", d)
			}
		case "copy":
			if !aws.ToBool(d.DeleteMarker) || aws.ToString(d.DeleteMarkerVersionId) == "" {
				t.Errorf("deleted copy: %+v", d)
			}
		}
	}
	// Suspended: new writes are the null version, replacing the null
	// version there was; other versions stay.
	setVersioning(t, c, b, types.BucketVersioningStatusSuspended)
	if out := putString(t, c, "ver", "old", "replaced"); aws.ToString(out.VersionId) != "null" {
		t.Fatalf("a suspended put's version: %q", aws.ToString(out.VersionId))
	}
	if out := putString(t, c, "ver", "k", "null one"); aws.ToString(out.VersionId) != "null" {
		t.Fatalf("a suspended put's version: %q", aws.ToString(out.VersionId))
	}
	if body, _ := getString(t, c, "ver", "k", v2); body != "two" {
		t.Fatalf("v2 after a suspended put: %q", body)
	}
	got = versionsOf(t, c, "ver")
	if strings.Count(strings.Join(got, ","), "old@") != 1 {
		t.Fatalf("the null version was not replaced:\n%s", strings.Join(got, "\n"))
	}
	// Versions keep the bucket from being deleted.
	for _, v := range got {
		key, id, _ := strings.Cut(strings.Fields(v)[0], "@")
		if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: b}); apiCode(err) != "BucketNotEmpty" {
			t.Fatalf("delete a bucket holding %s: %v", v, err)
		}
		if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String(key), VersionId: aws.String(id)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: b}); err != nil {
		t.Fatalf("delete the emptied bucket: %v", err)
	}
}

// rawGet sends a signed GET of path and returns the response, its body
// read and closed.
func (e *env) rawGet(t *testing.T, path string) *http.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(e.signed(t, "GET", path, nil, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestVersioningRefusals: what S3 refuses about versions is refused here
// the same way, and changes nothing.
func TestVersioningRefusals(t *testing.T) {
	e, c, b := newBucket(t, "ver")
	ctx := context.Background()
	putString(t, c, "ver", "k", "x")
	missing := strings.Repeat("0", 24)
	readID, readSecret := e.key(t, "alice", "read", "*")
	bobID, bobSecret := e.key(t, "bob", "readwrite", "*")
	for _, tc := range []struct {
		name   string
		call   func() error
		status int
		code   string
	}{
		{"a malformed version id", func() error {
			_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("v1")})
			return err
		}, 400, "InvalidArgument"},
		{"a missing version", func() error {
			_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String(missing)})
			return err
		}, 404, "NoSuchVersion"},
		{"a missing version of a missing bucket", func() error {
			_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("nope"), Key: aws.String("k"), VersionId: aws.String(missing)})
			return err
		}, 404, "NoSuchBucket"},
		{"delete with a malformed version id", func() error {
			_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("../x")})
			return err
		}, 400, "InvalidArgument"},
		{"a status S3 does not know", func() error {
			_, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
				VersioningConfiguration: &types.VersioningConfiguration{Status: "Disabled"}})
			return err
		}, 400, "MalformedXML"},
		{"MFA delete", func() error {
			_, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
				VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled, MFADelete: types.MFADeleteEnabled}})
			return err
		}, 501, "NotImplemented"},
		{"a read-only key enabling versioning", func() error {
			_, err := e.sdk(readID, readSecret).PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
				VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}})
			return err
		}, 403, "AccessDenied"},
		{"another account enabling versioning", func() error {
			_, err := e.sdk(bobID, bobSecret).PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
				VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}})
			return err
		}, 403, "AccessDenied"},
		{"another account's versions", func() error {
			_, err := e.sdk(bobID, bobSecret).ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: b})
			return err
		}, 403, "AccessDenied"},
		{"a version marker without a key marker", func() error {
			_, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: b, VersionIdMarker: aws.String("null")})
			return err
		}, 400, "InvalidArgument"},
		{"a copy from a missing version", func() error {
			_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("c"), CopySource: aws.String("ver/k?versionId=" + missing)})
			return err
		}, 404, "NoSuchVersion"},
	} {
		err := tc.call()
		if httpStatus(err) != tc.status || apiCode(err) != tc.code {
			t.Errorf("%s: %v, want %d %s", tc.name, err, tc.status, tc.code)
		}
	}
	// Nothing changed: still unversioned, one object, one version.
	if out, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: b}); err != nil || out.Status != "" {
		t.Fatalf("versioning after refusals: %+v, %v", out, err)
	}
	if got := versionsOf(t, c, "ver"); strings.Join(got, ",") != "k@null *" {
		t.Fatalf("versions after refusals: %v", got)
	}
	// A delete marker can be neither copied by id nor tagged.
	setVersioning(t, c, b, types.BucketVersioningStatusEnabled)
	del, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("c"), CopySource: aws.String("ver/k?versionId=" + aws.ToString(del.VersionId))})
	if httpStatus(err) != 400 || apiCode(err) != "InvalidRequest" {
		t.Errorf("copy of a delete marker: %v", err)
	}
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("c"), CopySource: aws.String("ver/k")})
	if httpStatus(err) != 404 || apiCode(err) != "NoSuchKey" {
		t.Errorf("copy of a key behind a delete marker: %v", err)
	}
	_, err = c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: aws.String("k"), VersionId: del.VersionId,
		Tagging: &types.Tagging{TagSet: tagSet("a", "b")}})
	if httpStatus(err) != 405 {
		t.Errorf("tagging a delete marker: %v", err)
	}
	// Tags of a version other than the current one.
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("null"),
		Tagging: &types.Tagging{TagSet: tagSet("old", "yes")}}); err != nil {
		t.Fatal(err)
	}
	tg, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("null")})
	if err != nil || tagString(tg.TagSet) != "old=yes" || aws.ToString(tg.VersionId) != "null" {
		t.Fatalf("tags of the null version: %+v, %v", tg, err)
	}
	// GetObjectAttributes of a version other than the current one.
	putString(t, c, "ver", "k", "current")
	attrs, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String("null"),
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectSize}})
	if err != nil || aws.ToInt64(attrs.ObjectSize) != 1 || aws.ToString(attrs.VersionId) != "null" {
		t.Fatalf("attributes of the null version: %+v, %v", attrs, err)
	}
}

// TestVersionsAndPolicies: reads of a version are s3:GetObjectVersion to
// a bucket policy, as in S3, and a public bucket shows anonymous readers
// its current objects only, not the versions they replaced.
func TestVersionsAndPolicies(t *testing.T) {
	e, c, b := newBucket(t, "pub")
	ctx := context.Background()
	setVersioning(t, c, b, types.BucketVersioningStatusEnabled)
	old := aws.ToString(putString(t, c, "pub", "k", "secret draft").VersionId)
	putString(t, c, "pub", "k", "published")
	if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	anon := func(path string) int {
		t.Helper()
		resp, err := http.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := anon("/pub/k"); got != 200 {
		t.Fatalf("anonymous read of a public bucket's object: %d", got)
	}
	if got := anon("/pub/k?versionId=" + old); got != 403 {
		t.Fatalf("anonymous read of a replaced version: %d, want 403", got)
	}
	// A policy granting s3:GetObjectVersion opens versions to everyone;
	// one denying it refuses the owner's key too.
	for _, tc := range []struct {
		effect string
		anon   int
		owner  string
	}{{"Allow", 200, ""}, {"Deny", 403, "AccessDenied"}} {
		policy := `{"Version":"2012-10-17","Statement":[{"Effect":"` + tc.effect + `","Principal":"*","Action":"s3:GetObjectVersion","Resource":"arn:aws:s3:::pub/*"}]}`
		if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: aws.String(policy)}); err != nil {
			t.Fatal(err)
		}
		if got := anon("/pub/k?versionId=" + old); got != tc.anon {
			t.Errorf("%s GetObjectVersion: anonymous read of a version: %d, want %d", tc.effect, got, tc.anon)
		}
		_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("k"), VersionId: aws.String(old)})
		if apiCode(err) != tc.owner {
			t.Errorf("%s GetObjectVersion: the owner's read of a version: %v", tc.effect, err)
		}
		if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("k")}); err != nil {
			t.Errorf("%s GetObjectVersion: the owner's read of the current object: %v", tc.effect, err)
		}
	}
}
