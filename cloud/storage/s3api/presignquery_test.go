package s3api_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/sigv4"
)

// presignQuery presigns a PUT of path with the AWS SDK's own signer, its
// query holding query (as the JS SDK v3 presigns checksums and metadata)
// and its headers header.
func (e *env) presignQuery(t *testing.T, path string, query url.Values, header http.Header) (string, http.Header) {
	t.Helper()
	q := url.Values{"X-Amz-Expires": {"600"}} // the signer leaves it to its caller
	for k, v := range query {
		q[k] = v
	}
	r, err := http.NewRequest("PUT", e.srv.URL+path+"?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header = header.Clone()
	creds := aws.Credentials{AccessKeyID: e.id, SecretAccessKey: e.secret}
	u, signed, err := v4.NewSigner().PresignHTTP(context.Background(), creds, r, sigv4.UnsignedPayload, "s3", "us-east-1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return u, signed
}

func crc32Of(t *testing.T, body string) string {
	t.Helper()
	v, err := sigv4.ChecksumValue("crc32", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPresignedChecksumAndMetadata: a presigned PUT carrying its checksum
// and metadata in the query, as the JS SDK v3 makes it, stores the
// metadata like the header form; the checksum parameters are signed but
// not taken, as S3 ignores them: the JS SDK v3 signs the CRC32 of an
// empty body into every presigned PUT (x-amz-checksum-crc32=AAAAAA==),
// and any upload through such a URL must work. A refused upload stores
// nothing.
func TestPresignedChecksumAndMetadata(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "qsum")
	const body = "uploaded with a checksum"
	sum := crc32Of(t, body)
	tests := []struct {
		name     string
		query    url.Values
		header   http.Header
		edit     func(u string) string
		status   int
		code     string
		meta     string // the stored x-amz-meta-owner
		checksum string // the stored CRC32
	}{
		{"checksum, algorithm and metadata", url.Values{"x-amz-checksum-crc32": {sum}, "x-amz-sdk-checksum-algorithm": {"CRC32"}, "x-amz-meta-owner": {"bob"}}, nil, nil, 200, "", "bob", ""},
		{"the JS SDK's default: the CRC32 of an empty body", url.Values{"x-amz-checksum-crc32": {crc32Of(t, "")}, "x-amz-sdk-checksum-algorithm": {"CRC32"}}, nil, nil, 200, "", "", ""},
		{"algorithm alone", url.Values{"x-amz-sdk-checksum-algorithm": {"CRC32"}}, nil, nil, 200, "", "", ""},
		{"metadata alone", url.Values{"x-amz-meta-owner": {"carol"}}, nil, nil, 200, "", "carol", ""},
		{"checksum not base64", url.Values{"x-amz-checksum-crc32": {"not a checksum"}}, nil, nil, 200, "", "", ""},
		{"two checksums", url.Values{"x-amz-checksum-crc32": {sum}, "x-amz-checksum-sha256": {"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}}, nil, nil, 200, "", "", ""},
		{"checksum in the query, another in a header", url.Values{"x-amz-checksum-crc32": {crc32Of(t, "")}}, http.Header{"X-Amz-Checksum-Crc32": {sum}}, nil, 200, "", "", sum},
		{"checksum header of another body", url.Values{"x-amz-checksum-crc32": {sum}}, http.Header{"X-Amz-Checksum-Crc32": {crc32Of(t, "other")}}, nil, 400, "BadDigest", "", ""},
		{"metadata too large", url.Values{"x-amz-meta-owner": {strings.Repeat("x", 2100)}}, nil, nil, 400, "MetadataTooLarge", "", ""},
		{"metadata in query and header, alike", url.Values{"x-amz-meta-owner": {"bob"}}, http.Header{"X-Amz-Meta-Owner": {"bob"}}, nil, 200, "", "bob", ""},
		{"metadata in query and header, different", url.Values{"x-amz-meta-owner": {"bob"}}, http.Header{"X-Amz-Meta-Owner": {"eve"}}, nil, 400, "InvalidRequest", "", ""},
		{"metadata added after signing", url.Values{"x-amz-meta-owner": {"bob"}}, nil, func(u string) string { return u + "&x-amz-meta-role=admin" }, 403, "SignatureDoesNotMatch", "", ""},
		{"checksum changed after signing", url.Values{"x-amz-checksum-crc32": {sum}}, nil, func(u string) string {
			return strings.Replace(u, url.QueryEscape(sum), url.QueryEscape(crc32Of(t, "x")), 1)
		}, 403, "SignatureDoesNotMatch", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("qsum"), Key: aws.String("k")})
			u, h := e.presignQuery(t, "/qsum/k", tt.query, tt.header)
			if tt.edit != nil {
				u = tt.edit(u)
			}
			r, _ := http.NewRequest("PUT", u, strings.NewReader(body))
			for k, v := range h {
				if k != "Host" {
					r.Header[k] = v
				}
			}
			status, got := do(t, r)
			if status != tt.status || got.Code != tt.code {
				t.Fatalf("got %d %+v, want %d %s", status, got, tt.status, tt.code)
			}
			head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("qsum"), Key: aws.String("k"), ChecksumMode: types.ChecksumModeEnabled})
			if tt.status != 200 {
				if err == nil {
					t.Fatalf("a refused upload stored an object")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if head.Metadata["owner"] != tt.meta || aws.ToString(head.ChecksumCRC32) != tt.checksum {
				t.Errorf("stored metadata %v, CRC32 %q; want owner=%q, %q", head.Metadata, aws.ToString(head.ChecksumCRC32), tt.meta, tt.checksum)
			}
		})
	}
}

// TestQueryMetadataNeedsPresign: outside a presigned URL, metadata in the
// query is still a subresource this endpoint does not know.
func TestQueryMetadataNeedsPresign(t *testing.T) {
	e := newEnv(t)
	mustBuckets(t, e.sdk(e.id, e.secret), "qmeta")
	status, got := do(t, e.signed(t, "PUT", "/qmeta/k?x-amz-meta-owner=bob", strings.NewReader("x"), "", nil))
	if status != 501 || got.Code != "NotImplemented" {
		t.Fatalf("got %d %+v, want 501 NotImplemented", status, got)
	}
}

// TestSDKPresignedChecksum: the AWS SDK for Go v2 presigns a PUT with
// ChecksumAlgorithm and Metadata as signed headers and
// X-Amz-Sdk-Checksum-Algorithm in the query.
func TestSDKPresignedChecksum(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "sdksum")
	const body = "presigned by the SDK"
	put, err := s3.NewPresignClient(c).PresignPutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sdksum"), Key: aws.String("k"),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ChecksumCRC32: aws.String(crc32Of(t, body)), Metadata: map[string]string{"owner": "dave"}},
		s3.WithPresignExpires(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(put.URL, "X-Amz-Sdk-Checksum-Algorithm=CRC32") {
		t.Fatalf("the SDK presigned %s; want X-Amz-Sdk-Checksum-Algorithm in the query", put.URL)
	}
	r, _ := http.NewRequest("PUT", put.URL, strings.NewReader(body))
	for k, v := range put.SignedHeader {
		if k != "Host" {
			r.Header[k] = v
		}
	}
	if status, got := do(t, r); status != 200 {
		t.Fatalf("presigned PUT: got %d %+v, want 200", status, got)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sdksum"), Key: aws.String("k"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if string(data) != body || out.Metadata["owner"] != "dave" || aws.ToString(out.ChecksumCRC32) != crc32Of(t, body) {
		t.Errorf("got %q, metadata %v, CRC32 %q; want %q, owner=dave, %q", data, out.Metadata, aws.ToString(out.ChecksumCRC32), body, crc32Of(t, body))
	}
}
