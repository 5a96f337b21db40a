package s3api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
	"github.com/latticenet/lattice/cloud/storage/s3api"
	"github.com/latticenet/lattice/internal/testkit/tooltest"
)

// websiteDomain is the website endpoint's domain in these tests.
const websiteDomain = "s3-website.test"

// startWebsite serves e's website endpoint on loopback, stopped with the
// test.
func startWebsite(t *testing.T, e *env) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(e.api.Website(s3api.WebsiteOptions{Domain: websiteDomain}))
	t.Cleanup(srv.Close)
	return srv
}

// site is an answer of the website endpoint.
type site struct {
	status   int
	location string
	ctype    string
	body     string
}

// visit asks the website endpoint for path on host, as a browser would
// (without following redirects).
func visit(t *testing.T, srv *httptest.Server, method, host, path string, header map[string]string) site {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return site{resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("Content-Type"), string(body)}
}

func putWebsite(c *s3.Client, bucket string, cfg *types.WebsiteConfiguration) error {
	_, err := c.PutBucketWebsite(context.Background(), &s3.PutBucketWebsiteInput{Bucket: aws.String(bucket), WebsiteConfiguration: cfg})
	return err
}

func putHTML(t *testing.T, c *s3.Client, bucket, key, body string) {
	t.Helper()
	if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		Body: strings.NewReader(body), ContentType: aws.String("text/html")}); err != nil {
		t.Fatalf("PutObject %s: %v", key, err)
	}
}

const publicSite = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::%s/*"}]}`

// TestWebsiteConfiguration: PutBucketWebsite, GetBucketWebsite and
// DeleteBucketWebsite through the AWS SDK, and the configurations S3
// refuses, which change nothing.
func TestWebsiteConfiguration(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "www")
	if _, err := c.GetBucketWebsite(ctx, &s3.GetBucketWebsiteInput{Bucket: aws.String("www")}); apiCode(err) != "NoSuchWebsiteConfiguration" {
		t.Fatalf("GetBucketWebsite before any: %v, want NoSuchWebsiteConfiguration", err)
	}
	cfg := &types.WebsiteConfiguration{
		IndexDocument: &types.IndexDocument{Suffix: aws.String("index.html")},
		ErrorDocument: &types.ErrorDocument{Key: aws.String("404.html")},
		RoutingRules: []types.RoutingRule{{
			Condition: &types.Condition{KeyPrefixEquals: aws.String("docs/")},
			Redirect:  &types.Redirect{ReplaceKeyPrefixWith: aws.String("documents/"), HttpRedirectCode: aws.String("302")},
		}},
	}
	if err := putWebsite(c, "www", cfg); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBucketWebsite(ctx, &s3.GetBucketWebsiteInput{Bucket: aws.String("www")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(got.IndexDocument.Suffix) != "index.html" || aws.ToString(got.ErrorDocument.Key) != "404.html" || len(got.RoutingRules) != 1 ||
		aws.ToString(got.RoutingRules[0].Redirect.ReplaceKeyPrefixWith) != "documents/" || aws.ToString(got.RoutingRules[0].Redirect.HttpRedirectCode) != "302" {
		t.Fatalf("GetBucketWebsite = %+v", got)
	}
	for _, tc := range []struct {
		name string
		cfg  *types.WebsiteConfiguration
	}{
		{"no index document", &types.WebsiteConfiguration{ErrorDocument: &types.ErrorDocument{Key: aws.String("e.html")}}},
		{"a suffix with a slash", &types.WebsiteConfiguration{IndexDocument: &types.IndexDocument{Suffix: aws.String("a/index.html")}}},
		{"redirect all with an index", &types.WebsiteConfiguration{IndexDocument: &types.IndexDocument{Suffix: aws.String("index.html")},
			RedirectAllRequestsTo: &types.RedirectAllRequestsTo{HostName: aws.String("example.com")}}},
		{"a redirect code of 200", &types.WebsiteConfiguration{IndexDocument: &types.IndexDocument{Suffix: aws.String("index.html")},
			RoutingRules: []types.RoutingRule{{Redirect: &types.Redirect{HttpRedirectCode: aws.String("200")}}}}},
		{"both replacements", &types.WebsiteConfiguration{IndexDocument: &types.IndexDocument{Suffix: aws.String("index.html")},
			RoutingRules: []types.RoutingRule{{Redirect: &types.Redirect{ReplaceKeyWith: aws.String("a"), ReplaceKeyPrefixWith: aws.String("b")}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := putWebsite(c, "www", tc.cfg); httpStatus(err) != 400 || apiCode(err) != "InvalidArgument" {
				t.Fatalf("PutBucketWebsite: %v, want 400 InvalidArgument", err)
			}
		})
	}
	code, s3e := do(t, e.signed(t, "PUT", "/www?website", bytes.NewReader([]byte("<WebsiteConfiguration><IndexDocument>")), "", nil))
	if code != 400 || s3e.Code != "MalformedXML" {
		t.Fatalf("a malformed document: %d %+v, want 400 MalformedXML", code, s3e)
	}
	if again, err := c.GetBucketWebsite(ctx, &s3.GetBucketWebsiteInput{Bucket: aws.String("www")}); err != nil || len(again.RoutingRules) != 1 {
		t.Fatalf("after refused writes: %+v, %v; want the configuration unchanged", again, err)
	}
	if code, s3e := do(t, e.signed(t, "GET", "/www/k?website", nil, "", nil)); code != 501 || !strings.Contains(s3e.Message, "bucket's configuration") {
		t.Fatalf("?website on an object: %d %+v, want 501", code, s3e)
	}
	bob, bobSecret := e.key(t, "bob", cloudstore.PermReadWrite, "*")
	if _, err := e.sdk(bob, bobSecret).GetBucketWebsite(ctx, &s3.GetBucketWebsiteInput{Bucket: aws.String("www")}); httpStatus(err) != 403 {
		t.Fatalf("another account's GetBucketWebsite: %v, want 403", err)
	}
	if _, err := c.DeleteBucketWebsite(ctx, &s3.DeleteBucketWebsiteInput{Bucket: aws.String("www")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetBucketWebsite(ctx, &s3.GetBucketWebsiteInput{Bucket: aws.String("www")}); apiCode(err) != "NoSuchWebsiteConfiguration" {
		t.Fatalf("GetBucketWebsite after delete: %v, want NoSuchWebsiteConfiguration", err)
	}
	if _, err := c.DeleteBucketWebsite(ctx, &s3.DeleteBucketWebsiteInput{Bucket: aws.String("nope")}); apiCode(err) != "NoSuchBucket" {
		t.Fatalf("DeleteBucketWebsite of a missing bucket: %v, want NoSuchBucket", err)
	}
}

// TestWebsiteEndpoint serves a site from a public bucket: index
// documents, a folder without its slash, the error document, routing
// rules, an object's redirect, conditional and range requests, and what
// the endpoint refuses.
func TestWebsiteEndpoint(t *testing.T) {
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	srv := startWebsite(t, e)
	mustBuckets(t, c, "site", "private", "bare")
	if err := putPolicy(c, "site", strings.ReplaceAll(publicSite, "%s", "site")); err != nil {
		t.Fatal(err)
	}
	putHTML(t, c, "site", "index.html", "<h1>home</h1>")
	putHTML(t, c, "site", "blog/index.html", "<h1>blog</h1>")
	putHTML(t, c, "site", "about.html", "<h1>about</h1>")
	putHTML(t, c, "site", "404.html", "<h1>lost?</h1>")
	putHTML(t, c, "site", "documents/guide.html", "<h1>guide</h1>")
	putHTML(t, c, "site", "/x/index.html", "<h1>slash</h1>")
	old, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("site"), Key: aws.String("old.html"),
		Body: strings.NewReader(""), WebsiteRedirectLocation: aws.String("/about.html")})
	if err != nil {
		t.Fatal(err)
	}
	if err := putWebsite(c, "site", &types.WebsiteConfiguration{
		IndexDocument: &types.IndexDocument{Suffix: aws.String("index.html")},
		ErrorDocument: &types.ErrorDocument{Key: aws.String("404.html")},
		RoutingRules: []types.RoutingRule{
			{Condition: &types.Condition{KeyPrefixEquals: aws.String("docs/")},
				Redirect: &types.Redirect{ReplaceKeyPrefixWith: aws.String("documents/"), HttpRedirectCode: aws.String("302")}},
			{Condition: &types.Condition{KeyPrefixEquals: aws.String("shop/"), HttpErrorCodeReturnedEquals: aws.String("404")},
				Redirect: &types.Redirect{HostName: aws.String("shop.example.com"), Protocol: types.ProtocolHttps, ReplaceKeyWith: aws.String("")}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	// The private bucket has a site, but its objects are not public.
	putHTML(t, c, "private", "index.html", "<h1>secret</h1>")
	if err := putWebsite(c, "private", &types.WebsiteConfiguration{IndexDocument: &types.IndexDocument{Suffix: aws.String("index.html")}}); err != nil {
		t.Fatal(err)
	}
	host := "site." + websiteDomain
	for _, tc := range []struct {
		name, method, host, path string
		header                   map[string]string
		status                   int
		location                 string
		body                     string // in the answer
	}{
		{"the root's index", "GET", host, "/", nil, 200, "", "<h1>home</h1>"},
		{"with a port in Host", "GET", host + ":9080", "/", nil, 200, "", "<h1>home</h1>"},
		{"a folder's index", "GET", host, "/blog/", nil, 200, "", "<h1>blog</h1>"},
		{"a folder without its slash", "GET", host, "/blog", nil, 302, "http://" + host + "/blog/", ""},
		{"a folder without its slash, asked for a range", "GET", host, "/blog", map[string]string{"Range": "bytes=0-1", "If-Match": `"x"`}, 302, "http://" + host + "/blog/", ""},
		{"a path beginning //", "GET", host, "//x", nil, 302, "http://" + host + "//x/", ""},
		{"a failed condition: no error document", "GET", host, "/about.html", map[string]string{"If-Match": `"nope"`}, 412, "", "Code: PreconditionFailed"},
		{"a range past the end: no error document", "GET", host, "/about.html", map[string]string{"Range": "bytes=500-600"}, 416, "", "Code: InvalidRange"},
		{"a page", "GET", host, "/about.html", nil, 200, "", "<h1>about</h1>"},
		{"a HEAD", "HEAD", host, "/about.html", nil, 200, "", ""},
		{"a missing page: the error document", "GET", host, "/nope.html", nil, 404, "", "<h1>lost?</h1>"},
		{"a routing rule before the read", "GET", host, "/docs/guide.html", nil, 302, "http://" + host + "/documents/guide.html", ""},
		{"a routing rule after a 404", "GET", host, "/shop/cart", nil, 301, "https://shop.example.com/", ""},
		{"an object's redirect", "GET", host, "/old.html", nil, 301, "/about.html", ""},
		{"a range", "GET", host, "/about.html", map[string]string{"Range": "bytes=4-8"}, 206, "", "about"},
		{"a private site", "GET", "private." + websiteDomain, "/", nil, 403, "", "Code: AccessDenied"},
		{"a bucket without a site", "GET", "bare." + websiteDomain, "/", nil, 404, "", "Code: NoSuchWebsiteConfiguration"},
		{"no such bucket", "GET", "nobody." + websiteDomain, "/", nil, 404, "", "Code: NoSuchBucket"},
		{"a CNAME: the host is the bucket", "GET", "site", "/about.html", nil, 200, "", "<h1>about</h1>"},
		{"a write", "PUT", host, "/about.html", nil, 405, "", "Code: MethodNotAllowed"},
		{"a signed request gains nothing", "GET", "private." + websiteDomain, "/", map[string]string{"Authorization": "AWS4-HMAC-SHA256 Credential=" + e.id + "/x"}, 403, "", "AccessDenied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := visit(t, srv, tc.method, tc.host, tc.path, tc.header)
			if got.status != tc.status || got.location != tc.location || !strings.Contains(got.body, tc.body) {
				t.Fatalf("%s %s%s = %d %q %q; want %d %q holding %q", tc.method, tc.host, tc.path, got.status, got.location, got.body, tc.status, tc.location, tc.body)
			}
		})
	}
	// A visitor meeting private pages again and again is not taken for a
	// client failing to authenticate (which the endpoint slows down).
	for i := 0; i < 80; i++ {
		if got := visit(t, srv, "GET", "private."+websiteDomain, "/", nil); got.status != 403 {
			t.Fatalf("visit %d of a private site: %d, want 403", i, got.status)
		}
	}
	// The public toggle (a public-read ACL) opens the private site.
	if _, err := c.PutBucketAcl(context.Background(), &s3.PutBucketAclInput{Bucket: aws.String("private"), ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	if got := visit(t, srv, "GET", "private."+websiteDomain, "/", nil); got.status != 200 || got.body != "<h1>secret</h1>" {
		t.Errorf("the site of a public bucket: %+v", got)
	}
	// A browser revalidating a page that has since become a redirect is
	// redirected, not told its copy is fresh.
	if got := visit(t, srv, "GET", host, "/old.html", map[string]string{"If-None-Match": aws.ToString(old.ETag)}); got.status != 301 || got.location != "/about.html" {
		t.Errorf("If-None-Match of a redirect's ETag: %+v, want the redirect", got)
	}
	etag := mustPut(t, c, "site", "etag.html", []byte("x"))
	if got := visit(t, srv, "GET", host, "/etag.html", map[string]string{"If-None-Match": etag}); got.status != 304 {
		t.Errorf("If-None-Match of the current ETag: %d, want 304", got.status)
	}
	if got := visit(t, srv, "GET", host, "/", nil); got.ctype != "text/html" {
		t.Errorf("the index's Content-Type is %q, want the object's text/html", got.ctype)
	}
	// Without an error document, or when it is missing, S3's own page.
	if _, err := c.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String("site"), Key: aws.String("404.html")}); err != nil {
		t.Fatal(err)
	}
	if got := visit(t, srv, "GET", host, "/nope.html", nil); got.status != 404 || !strings.Contains(got.body, "Code: NoSuchKey") ||
		!strings.Contains(got.ctype, "text/html") {
		t.Errorf("a missing page without its error document: %+v, want 404 HTML naming NoSuchKey", got)
	}
	if got := visit(t, srv, "GET", host, "/<script>x", nil); got.status != 404 || strings.Contains(got.body, "<script>") || !strings.Contains(got.body, "&lt;script&gt;x") {
		t.Errorf("the error page of a key with markup: %+v, want it escaped", got)
	}
	if got := visit(t, srv, "HEAD", host, "/nope.html", nil); got.status != 404 || got.body != "" {
		t.Errorf("HEAD of a missing page: %+v, want 404 without a body", got)
	}
	// Redirect all requests.
	if err := putWebsite(c, "site", &types.WebsiteConfiguration{RedirectAllRequestsTo: &types.RedirectAllRequestsTo{HostName: aws.String("www.example.com"), Protocol: types.ProtocolHttps}}); err != nil {
		t.Fatal(err)
	}
	if got := visit(t, srv, "GET", host, "/a/b.html?x=1", nil); got.status != 301 || got.location != "https://www.example.com/a/b.html?x=1" {
		t.Errorf("RedirectAllRequestsTo: %+v", got)
	}
}

// TestWebsiteErrorDocumentUnreadable: an error document anonymous
// readers may not read is not served; S3's own page is, with the
// error's status.
func TestWebsiteErrorDocumentUnreadable(t *testing.T) {
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	srv := startWebsite(t, e)
	mustBuckets(t, c, "mixed")
	if err := putPolicy(c, "mixed", strings.ReplaceAll(publicSite, "%s/*", "mixed/pages/*")); err != nil {
		t.Fatal(err)
	}
	putHTML(t, c, "mixed", "pages/index.html", "<h1>public</h1>")
	putHTML(t, c, "mixed", "errors/404.html", "<h1>private error page</h1>")
	if err := putWebsite(c, "mixed", &types.WebsiteConfiguration{IndexDocument: &types.IndexDocument{Suffix: aws.String("index.html")},
		ErrorDocument: &types.ErrorDocument{Key: aws.String("errors/404.html")}}); err != nil {
		t.Fatal(err)
	}
	host := "mixed." + websiteDomain
	if got := visit(t, srv, "GET", host, "/pages/", nil); got.status != 200 || got.body != "<h1>public</h1>" {
		t.Fatalf("the public page: %+v", got)
	}
	got := visit(t, srv, "GET", host, "/pages/nope.html", nil)
	if got.status != 404 || strings.Contains(got.body, "private error page") || !strings.Contains(got.body, "Code: NoSuchKey") {
		t.Fatalf("a missing page with an unreadable error document: %+v, want S3's 404 page", got)
	}
}

// TestWebsiteRedirectLocation: an object keeps its
// x-amz-website-redirect-location, shows it on GET and HEAD, and a copy
// keeps the request's redirect, never the source's.
func TestWebsiteRedirectLocation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "redir")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("redir"), Key: aws.String("a"), Body: strings.NewReader("a"),
		WebsiteRedirectLocation: aws.String("https://example.com/a")}); err != nil {
		t.Fatal(err)
	}
	redirectOf := func(key string) string {
		t.Helper()
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("redir"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(h.WebsiteRedirectLocation)
	}
	if got := redirectOf("a"); got != "https://example.com/a" {
		t.Fatalf("HeadObject's redirect = %q", got)
	}
	copyTo := func(key string, in *s3.CopyObjectInput) {
		t.Helper()
		in.Bucket, in.Key, in.CopySource = aws.String("redir"), aws.String(key), aws.String("redir/a")
		if _, err := c.CopyObject(ctx, in); err != nil {
			t.Fatalf("CopyObject to %s: %v", key, err)
		}
	}
	copyTo("plain", &s3.CopyObjectInput{})
	copyTo("own", &s3.CopyObjectInput{WebsiteRedirectLocation: aws.String("/own.html")})
	copyTo("replaced", &s3.CopyObjectInput{MetadataDirective: types.MetadataDirectiveReplace, WebsiteRedirectLocation: aws.String("/r.html")})
	for key, want := range map[string]string{"plain": "", "own": "/own.html", "replaced": "/r.html", "a": "https://example.com/a"} {
		if got := redirectOf(key); got != want {
			t.Errorf("%s's redirect = %q, want %q", key, got, want)
		}
	}
	// A copy onto itself that sets a redirect is a change, as in S3.
	copyTo("a", &s3.CopyObjectInput{WebsiteRedirectLocation: aws.String("/moved.html")})
	if got := redirectOf("a"); got != "/moved.html" {
		t.Errorf("after a copy onto itself: %q", got)
	}
	if got, _ := mustGet(t, c, "redir", "a"); string(got) != "a" {
		t.Errorf("the body after a copy onto itself: %q", got)
	}
}

// TestAWSCLIWebsite: the AWS CLI's own commands make a site (aws s3
// website, aws s3 cp --website-redirect), and the website endpoint
// serves it.
func TestAWSCLIWebsite(t *testing.T) {
	cli := tooltest.Need(t, "aws", "--version")
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	srv := startWebsite(t, e)
	mustBuckets(t, c, "cli-site")
	if err := putPolicy(c, "cli-site", strings.ReplaceAll(publicSite, "%s", "cli-site")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	if err := os.WriteFile(page, []byte("<h1>from the CLI</h1>"), 0o644); err != nil {
		t.Fatal(err)
	}
	awsCLI := func(args ...string) { e.run(t, cli, append([]string{"--endpoint-url", e.srv.URL}, args...)...) }
	awsCLI("s3", "website", "s3://cli-site", "--index-document", "index.html", "--error-document", "error.html")
	awsCLI("s3", "cp", page, "s3://cli-site/index.html")
	awsCLI("s3", "cp", page, "s3://cli-site/moved.html", "--website-redirect", "/index.html")
	host := "cli-site." + websiteDomain
	if got := visit(t, srv, "GET", host, "/", nil); got.status != 200 || got.body != "<h1>from the CLI</h1>" || got.ctype != "text/html" {
		t.Errorf("the site's root: %+v", got)
	}
	if got := visit(t, srv, "GET", host, "/moved.html", nil); got.status != 301 || got.location != "/index.html" {
		t.Errorf("the redirected page: %+v", got)
	}
	awsCLI("s3api", "delete-bucket-website", "--bucket", "cli-site")
	if got := visit(t, srv, "GET", host, "/", nil); got.status != 404 || !strings.Contains(got.body, "NoSuchWebsiteConfiguration") {
		t.Errorf("after delete-bucket-website: %+v", got)
	}
}

// TestPostObjectWebsiteRedirect: a form upload's
// x-amz-website-redirect-location field is kept, as PutObject's header
// is, and one that is no path or http(s) URL is refused and writes
// nothing.
func TestPostObjectWebsiteRedirect(t *testing.T) {
	e := newEnv(t)
	c := e.sdk(e.id, e.secret)
	mustBuckets(t, c, "redirforms")
	now := time.Now()
	for _, tt := range []struct {
		key, location string
		status        int
	}{{"good", "/elsewhere.html", 204}, {"bad", "elsewhere.html", 400}} {
		policy := policyDoc(now.Add(time.Hour), append(v4Conditions(e.id, "us-east-1", now), map[string]string{"key": tt.key},
			map[string]string{"x-amz-website-redirect-location": tt.location})...)
		body, ct := formBody(append([]field{{"key", tt.key}, {"x-amz-website-redirect-location", tt.location}}, signV4Form(e.id, e.secret, "us-east-1", now, policy)...), "f", []byte("x"))
		resp := e.postForm(t, "redirforms", body, ct)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Fatalf("redirect %q: got %d, want %d", tt.location, resp.StatusCode, tt.status)
		}
	}
	h, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("redirforms"), Key: aws.String("good")})
	if err != nil || aws.ToString(h.WebsiteRedirectLocation) != "/elsewhere.html" {
		t.Fatalf("HeadObject = %v, %v; want the form's redirect", h, err)
	}
	if _, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("redirforms"), Key: aws.String("bad")}); httpStatus(err) != 404 {
		t.Fatalf("the refused form wrote an object: %v", err)
	}
}

// TestWebsiteAccessLog: the website's object reads are in the bucket's
// server access log, as S3 writes them: WEBSITE.GET.OBJECT, anonymous,
// from the visitor's address.
func TestWebsiteAccessLog(t *testing.T) {
	e := startEnv(t, false, s3api.Options{AccessLogInterval: 100 * time.Millisecond})
	ctx := context.Background()
	c := e.sdk(e.id, e.secret)
	srv := startWebsite(t, e)
	mustBuckets(t, c, "logsite", "sitelogs")
	if _, err := c.PutBucketLogging(ctx, &s3.PutBucketLoggingInput{Bucket: aws.String("logsite"), BucketLoggingStatus: loggingTo("sitelogs", "site/")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("logsite"), ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	putHTML(t, c, "logsite", "index.html", "<h1>logged</h1>")
	if err := putWebsite(c, "logsite", &types.WebsiteConfiguration{IndexDocument: &types.IndexDocument{Suffix: aws.String("index.html")}}); err != nil {
		t.Fatal(err)
	}
	if got := visit(t, srv, "GET", "logsite."+websiteDomain, "/", nil); got.status != 200 {
		t.Fatalf("the site: %+v", got)
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		recs, _ := delivered(t, c, "sitelogs", "site/", 1)
		for _, r := range recs {
			if r.op() == "WEBSITE.GET.OBJECT" {
				if r.key() != "index.html" || r.status() != "200" || r[5] != "-" {
					t.Fatalf("the website read's record: %q", r[0])
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no WEBSITE.GET.OBJECT record among %d", len(recs))
		}
	}
}
