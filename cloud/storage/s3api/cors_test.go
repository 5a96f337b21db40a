package s3api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

var appCORS = &types.CORSConfiguration{CORSRules: []types.CORSRule{
	{ID: aws.String("app"), AllowedOrigins: []string{"https://app.example", "https://*.app.example"}, AllowedMethods: []string{"GET", "PUT", "HEAD"},
		AllowedHeaders: []string{"content-type", "x-amz-*"}, ExposeHeaders: []string{"ETag"}, MaxAgeSeconds: aws.Int32(600)},
	{ID: aws.String("any"), AllowedOrigins: []string{"*"}, AllowedMethods: []string{"GET"}},
}}

func putCORS(c *s3.Client, bucket string, conf *types.CORSConfiguration) error {
	_, err := c.PutBucketCors(context.Background(), &s3.PutBucketCorsInput{Bucket: aws.String(bucket), CORSConfiguration: conf})
	return err
}

func wantNoCORS(t *testing.T, c *s3.Client, bucket, when string) {
	t.Helper()
	if _, err := c.GetBucketCors(context.Background(), &s3.GetBucketCorsInput{Bucket: aws.String(bucket)}); apiCode(err) != "NoSuchCORSConfiguration" {
		t.Errorf("%s: GetBucketCors: got %v, want NoSuchCORSConfiguration", when, err)
	}
}

// TestBucketCORSConfiguration: PutBucketCors keeps what GetBucketCors
// answers; what S3 refuses is refused and changes nothing.
func TestBucketCORSConfiguration(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "web")
	wantNoCORS(t, c, "web", "a new bucket")
	readID, readSecret := e.key(t, "alice", cloudstore.PermRead, "*")
	bobID, bobSecret := e.key(t, "bob", cloudstore.PermReadWrite, "*")
	rule := func(origin, method string) types.CORSRule {
		return types.CORSRule{AllowedOrigins: []string{origin}, AllowedMethods: []string{method}}
	}
	var many []types.CORSRule
	for i := range 101 {
		many = append(many, rule(fmt.Sprintf("https://%d.example", i), "GET"))
	}
	for _, tc := range []struct {
		name   string
		client *s3.Client
		bucket string
		rules  []types.CORSRule
		want   string
	}{
		{"101 rules", c, "web", many, "InvalidRequest"},
		{"PATCH", c, "web", []types.CORSRule{rule("*", "PATCH")}, "InvalidRequest"},
		{"two wildcards in an origin", c, "web", []types.CORSRule{rule("https://*.*.example", "GET")}, "InvalidRequest"},
		{"two wildcards in a header", c, "web", []types.CORSRule{{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"GET"}, AllowedHeaders: []string{"*-*"}}}, "InvalidRequest"},
		{"a read-only key", e.sdk(readID, readSecret), "web", appCORS.CORSRules, "AccessDenied"},
		{"another account's key", e.sdk(bobID, bobSecret), "web", appCORS.CORSRules, "AccessDenied"},
		{"a missing bucket", c, "none-such", appCORS.CORSRules, "NoSuchBucket"},
	} {
		if err := putCORS(tc.client, tc.bucket, &types.CORSConfiguration{CORSRules: tc.rules}); apiCode(err) != tc.want {
			t.Errorf("%s: PutBucketCors: got %v, want %s", tc.name, err, tc.want)
		}
		wantNoCORS(t, c, "web", tc.name)
	}
	body := `<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>`
	noMethod := `<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>`
	for _, tc := range []struct {
		name, body string
		header     map[string]string
		want       string
	}{
		{"no Content-MD5", body, nil, "InvalidRequest"},
		{"a wrong Content-MD5", body, map[string]string{"Content-MD5": md5b64("other")}, "BadDigest"},
		{"not XML", "<CORSConfiguration>", map[string]string{"Content-MD5": md5b64("<CORSConfiguration>")}, "MalformedXML"},
		{"no rule", "<CORSConfiguration/>", map[string]string{"Content-MD5": md5b64("<CORSConfiguration/>")}, "MalformedXML"},
		{"no method", noMethod, map[string]string{"Content-MD5": md5b64(noMethod)}, "MalformedXML"},
	} {
		if status, got := do(t, e.signed(t, "PUT", "/web?cors", strings.NewReader(tc.body), sha(tc.body), tc.header)); status != 400 || got.Code != tc.want {
			t.Errorf("%s: PutBucketCors: got %d %s, want 400 %s", tc.name, status, got.Code, tc.want)
		}
		wantNoCORS(t, c, "web", tc.name)
	}
	if status, _ := do(t, e.signed(t, "PUT", "/web?cors", strings.NewReader(body), sha(body), map[string]string{"Content-MD5": md5b64(body)})); status != 200 {
		t.Errorf("PutBucketCors with Content-MD5: got %d, want 200", status)
	}

	if err := putCORS(c, "web", appCORS); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("web")})
	if err != nil || len(got.CORSRules) != 2 || aws.ToString(got.CORSRules[0].ID) != "app" || aws.ToInt32(got.CORSRules[0].MaxAgeSeconds) != 600 ||
		strings.Join(got.CORSRules[0].AllowedOrigins, " ") != "https://app.example https://*.app.example" ||
		strings.Join(got.CORSRules[0].AllowedHeaders, " ") != "content-type x-amz-*" || strings.Join(got.CORSRules[0].ExposeHeaders, " ") != "ETag" ||
		got.CORSRules[1].MaxAgeSeconds != nil || strings.Join(got.CORSRules[1].AllowedMethods, " ") != "GET" {
		t.Errorf("GetBucketCors: got %+v, %v, want the rules put", got, err)
	}
	if _, err := e.sdk(bobID, bobSecret).GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("web")}); apiCode(err) != "AccessDenied" {
		t.Errorf("another account's GetBucketCors: got %v, want AccessDenied", err)
	}
	if err := putCORS(c, "web", &types.CORSConfiguration{CORSRules: []types.CORSRule{rule("*", "PATCH")}}); apiCode(err) != "InvalidRequest" {
		t.Errorf("a refused replacement: got %v, want InvalidRequest", err)
	}
	if got, _ := c.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("web")}); got == nil || len(got.CORSRules) != 2 {
		t.Errorf("a refused replacement changed the rules: %+v", got)
	}
	if _, err := c.DeleteBucketCors(ctx, &s3.DeleteBucketCorsInput{Bucket: aws.String("web")}); err != nil {
		t.Fatal(err)
	}
	wantNoCORS(t, c, "web", "deleted")

	// Deleted with its bucket.
	if err := putCORS(c, "web", appCORS); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("web")}); err != nil {
		t.Fatal(err)
	}
	mustBuckets(t, c, "web")
	wantNoCORS(t, c, "web", "the bucket made again")
}

// preflight sends a CORS preflight, as a browser does: unsigned.
func preflight(t *testing.T, e *env, path string, header map[string]string) *http.Response {
	t.Helper()
	r, err := http.NewRequest("OPTIONS", e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// corsHeaders are a response's Access-Control-* headers and Vary, as
// "Name: value" in name order.
func corsHeaders(h http.Header) string {
	var out []string
	for _, name := range []string{"Access-Control-Allow-Credentials", "Access-Control-Allow-Headers", "Access-Control-Allow-Methods",
		"Access-Control-Allow-Origin", "Access-Control-Expose-Headers", "Access-Control-Max-Age", "Vary"} {
		if v := h.Values(name); len(v) > 0 {
			out = append(out, name+": "+strings.Join(v, ", "))
		}
	}
	return strings.Join(out, "; ")
}

// TestCORSPreflight: OPTIONS is answered unauthenticated with the first
// matching rule's headers, or refused as S3 refuses it.
func TestCORSPreflight(t *testing.T) {
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "web", "plain")
	if err := putCORS(c, "web", appCORS); err != nil {
		t.Fatal(err)
	}
	const appPut = "Access-Control-Allow-Credentials: true; Access-Control-Allow-Headers: content-type, x-amz-date; Access-Control-Allow-Methods: GET, PUT, HEAD; " +
		"Access-Control-Allow-Origin: https://eu.app.example; Access-Control-Expose-Headers: ETag; Access-Control-Max-Age: 600; " +
		"Vary: Origin, Access-Control-Request-Headers, Access-Control-Request-Method"
	for _, tc := range []struct {
		name, path string
		header     map[string]string
		status     int
		headers    string
	}{
		{"an app's upload", "/web/dir/file.txt", map[string]string{"Origin": "https://eu.app.example", "Access-Control-Request-Method": "PUT",
			"Access-Control-Request-Headers": "Content-Type, X-Amz-Date"}, 200, appPut},
		{"any origin's read of the bucket", "/web", map[string]string{"Origin": "https://else.example", "Access-Control-Request-Method": "GET"}, 200,
			"Access-Control-Allow-Methods: GET; Access-Control-Allow-Origin: *; Vary: Origin, Access-Control-Request-Headers, Access-Control-Request-Method"},
		{"a subresource in the query", "/web/k?uploads", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "HEAD"}, 200, ""},
		{"another origin's upload", "/web/k", map[string]string{"Origin": "https://else.example", "Access-Control-Request-Method": "PUT"}, 403, ""},
		{"a header no rule allows", "/web/k", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "PUT",
			"Access-Control-Request-Headers": "authorization"}, 403, ""},
		{"a method no rule allows", "/web/k", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "DELETE"}, 403, ""},
		{"no Origin", "/web/k", map[string]string{"Access-Control-Request-Method": "GET"}, 400, ""},
		{"no Access-Control-Request-Method", "/web/k", map[string]string{"Origin": "https://app.example"}, 400, ""},
		{"a bucket without CORS", "/plain/k", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "GET"}, 403, ""},
		{"a missing bucket", "/none-such/k", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "GET"}, 403, ""},
	} {
		resp := preflight(t, e, tc.path, tc.header)
		got := corsHeaders(resp.Header)
		if resp.StatusCode != tc.status || tc.headers != "" && got != tc.headers || tc.status != 200 && strings.Contains(got, "Allow") {
			t.Errorf("%s: preflight: got %d %q, want %d %q", tc.name, resp.StatusCode, got, tc.status, tc.headers)
		}
	}
}

// TestCORSActualRequests: signed, presigned and anonymous requests with
// an Origin a rule allows get its headers, refusals included; others get
// only Vary: Origin.
func TestCORSActualRequests(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "web")
	mustPut(t, c, "web", "k", []byte("v"))
	if err := putCORS(c, "web", appCORS); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.UpdateBucket("alice", "web", time.Now(), func(b *cloudstore.Bucket) { b.Public = true }); err != nil {
		t.Fatal(err)
	}
	presigned, err := s3.NewPresignClient(c).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("web"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	const app = "Access-Control-Allow-Credentials: true; Access-Control-Allow-Methods: GET, PUT, HEAD; Access-Control-Allow-Origin: https://app.example; " +
		"Access-Control-Expose-Headers: ETag; Access-Control-Max-Age: 600; Vary: Origin"
	const anyOrigin = "Access-Control-Allow-Methods: GET; Access-Control-Allow-Origin: *; Vary: Origin"
	for _, tc := range []struct {
		name    string
		req     func(origin string) *http.Request
		origin  string
		status  int
		headers string
	}{
		{"signed GET", func(o string) *http.Request {
			return e.signed(t, "GET", "/web/k", nil, "", map[string]string{"Origin": o})
		}, "https://app.example", 200, app},
		{"signed PUT", func(o string) *http.Request {
			return e.signed(t, "PUT", "/web/new", strings.NewReader("x"), sha("x"), map[string]string{"Origin": o})
		}, "https://app.example", 200, app},
		{"signed DELETE, no rule for it", func(o string) *http.Request {
			return e.signed(t, "DELETE", "/web/new", nil, "", map[string]string{"Origin": o})
		},
			"https://app.example", 204, "Vary: Origin"},
		{"signed GET of a missing key", func(o string) *http.Request {
			return e.signed(t, "GET", "/web/none", nil, "", map[string]string{"Origin": o})
		},
			"https://app.example", 404, app},
		{"presigned GET", func(o string) *http.Request {
			r, _ := http.NewRequest("GET", presigned.URL, nil)
			r.Header.Set("Origin", o)
			return r
		}, "https://x.app.example", 200, strings.Replace(app, "https://app.example", "https://x.app.example", 1)},
		{"anonymous GET", func(o string) *http.Request {
			r, _ := http.NewRequest("GET", e.srv.URL+"/web/k", nil)
			r.Header.Set("Origin", o)
			return r
		}, "https://else.example", 200, anyOrigin},
		{"anonymous PUT, refused", func(o string) *http.Request {
			r, _ := http.NewRequest("PUT", e.srv.URL+"/web/k", strings.NewReader("x"))
			r.Header.Set("Origin", o)
			return r
		}, "https://app.example", 403, app},
		{"no Origin", func(string) *http.Request { return e.signed(t, "GET", "/web/k", nil, "", nil) }, "", 200, ""},
	} {
		resp, err := e.loopbackClient().Do(tc.req(tc.origin))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := corsHeaders(resp.Header); resp.StatusCode != tc.status || got != tc.headers {
			t.Errorf("%s: got %d %q, want %d %q", tc.name, resp.StatusCode, got, tc.status, tc.headers)
		}
	}
}
