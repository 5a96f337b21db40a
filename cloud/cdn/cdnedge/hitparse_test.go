package cdnedge

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

var hitSeeds = []string{
	"GET / HTTP/1.1\r\nHost: site.cdn.localhost\r\n\r\n",
	"HEAD /a/b.css?v=1 HTTP/1.1\r\nHost: Site.CDN.localhost:8088\r\nAccept-Encoding: gzip\r\n\r\n",
	"GET /a%2Fb?x=%41&y HTTP/1.1\r\nHost: a.b\r\nConnection: keep-alive, close\r\n\r\nGET / HTTP/1.1\r\n",
	"GET /q? HTTP/1.1\r\nHost: a.b.\r\n\r\n",
	"GET /a HTTP/1.1\r\nHost: a.b\r\nRange: bytes=0-1\r\n\r\n",
	"GET /a HTTP/1.1\r\nHost: a.b\r\nContent-Length: 5\r\n\r\nhello",
	"GET /a HTTP/1.1\r\nHost: a.b\r\n folded\r\n\r\n",
	"GET /a HTTP/1.1\nHost: a.b\n\n",
	"GET /a HTTP/1.1\r\nHost: a.b\r\nX: a\rb\r\n\r\n",
	"GET /ä HTTP/1.1\r\nHost: a.b\r\n\r\n",
	"GET /a%zz HTTP/1.1\r\nHost: a.b\r\n\r\n",
	"GET http://a.b/ HTTP/1.1\r\nHost: a.b\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a.b\r\n\r\n",
	"GET / HTTP/1.0\r\nHost: a.b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a.b",
	"GET //x/../y HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
	"GET /a?b? HTTP/1.1\r\nHost: a.b\r\n\r\n",
	"GET /a?? HTTP/1.1\r\nHost: a.b\r\n\r\n",
	"GET /a HTTP/1.1\r\nHost: a.b\r\nPragma: no-cache\r\n\r\n",
	"GET /a HTTP/1.1\r\nHost: a.b\r\nX-A: 1\r\nx-a:  2 \r\nAccept:\r\n\r\n",
}

// TestParseHit checks the outcomes of the seeds that matter most.
func TestParseHit(t *testing.T) {
	for _, tc := range []struct {
		raw     string
		outcome int
		host    string
		key     string
		close   bool
	}{
		{hitSeeds[0], parseOK, "site.cdn.localhost", "/", false},
		{hitSeeds[1], parseOK, "site.cdn.localhost", "/a/b.css?v=1", false},
		{hitSeeds[2], parseOK, "a.b", "/a%2Fb?x=%41&y", true},
		{hitSeeds[3], parseOK, "a.b", "/q", false},
		{hitSeeds[4], parseSlow, "", "", false},
		{hitSeeds[5], parseSlow, "", "", false},
		{hitSeeds[6], parseSlow, "", "", false},
		{hitSeeds[7], parseSlow, "", "", false},
		{hitSeeds[8], parseSlow, "", "", false},
		{hitSeeds[9], parseSlow, "", "", false},
		{hitSeeds[10], parseSlow, "", "", false},
		{hitSeeds[11], parseSlow, "", "", false},
		{hitSeeds[12], parseSlow, "", "", false},
		{hitSeeds[13], parseSlow, "", "", false},
		{hitSeeds[14], parseMore, "", "", false},
		{hitSeeds[15], parseSlow, "", "", false},
		{hitSeeds[16], parseOK, "a.b", "/a?b?", false},
		{hitSeeds[17], parseOK, "a.b", "/a??", false},
		{hitSeeds[18], parseSlow, "", "", false},
		{hitSeeds[19], parseOK, "a.b", "/a", false},
	} {
		r, n, outcome := parseHit([]byte(tc.raw))
		if outcome != tc.outcome || outcome == parseOK && (r.host != tc.host || r.key != tc.key || r.close != tc.close) {
			t.Errorf("parseHit(%q) = %d host %q key %q close %v, want %d %q %q %v", tc.raw, outcome, r.host, r.key, r.close,
				tc.outcome, tc.host, tc.key, tc.close)
		}
		if outcome == parseOK && (n > len(tc.raw) || tc.raw[n-4:n] != "\r\n\r\n") {
			t.Errorf("parseHit(%q) consumed %d bytes", tc.raw, n)
		}
	}
}

// FuzzParseHit holds the fast path's parser to net/http's: whatever it
// accepts, http.ReadRequest reads the same way, to the same byte, as a
// GET or HEAD without a body, for the same host and cache key.
func FuzzParseHit(f *testing.F) {
	for _, s := range hitSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, n, outcome := parseHit(b)
		if outcome != parseOK {
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("consumed %d of %d bytes", n, len(b))
		}
		br := bufio.NewReader(bytes.NewReader(b[:n]))
		req, err := http.ReadRequest(br)
		if err != nil {
			t.Fatalf("parseHit accepts %q, net/http refuses it: %v", b[:n], err)
		}
		if br.Buffered() != 0 {
			t.Fatalf("net/http leaves %d bytes of %q", br.Buffered(), b[:n])
		}
		method := http.MethodGet
		if r.head {
			method = http.MethodHead
		}
		if req.Method != method || req.ProtoMajor != 1 || req.ProtoMinor != 1 || req.ContentLength != 0 || len(req.TransferEncoding) != 0 {
			t.Fatalf("%q: net/http reads %s HTTP/%d.%d, length %d, %v", b[:n], req.Method, req.ProtoMajor, req.ProtoMinor, req.ContentLength, req.TransferEncoding)
		}
		key := req.URL.EscapedPath()
		if req.URL.RawQuery != "" {
			key += "?" + req.URL.RawQuery
		}
		if key != r.key {
			t.Fatalf("%q: cache key %q, net/http's %q", b[:n], r.key, key)
		}
		host := strings.ToLower(req.Host)
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host = strings.TrimSuffix(host, "."); host != r.host {
			t.Fatalf("%q: host %q, net/http's %q", b[:n], r.host, host)
		}
		for _, h := range []string{"Range", "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "Expect", "Upgrade"} {
			if _, ok := req.Header[h]; ok {
				t.Fatalf("%q: parseHit accepted a request with %s", b[:n], h)
			}
		}
		if close := req.Close; close != r.close {
			t.Fatalf("%q: close %v, net/http's %v", b[:n], r.close, close)
		}
		// The header that Vary keys are made of: the same as net/http's.
		if h := r.header(); !reflect.DeepEqual(h, req.Header) && (len(h) != 0 || len(req.Header) != 0) {
			t.Fatalf("%q: header %q, net/http's %q", b[:n], h, req.Header)
		}
	})
}
