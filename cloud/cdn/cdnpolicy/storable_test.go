package cdnpolicy

import (
	"net/http"
	"testing"
)

func TestStorable(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		req        http.Header
		status     int
		resp       http.Header
		want       bool
		wantReason string
	}{
		{"plain 200", "GET", nil, 200, nil, true, ""},
		{"HEAD", "HEAD", nil, 200, hdr("Cache-Control", "max-age=60"), false, "method HEAD"},
		{"POST", "POST", nil, 200, hdr("Cache-Control", "public, max-age=60"), false, "method POST"},
		{"no-store", "GET", nil, 200, hdr("Cache-Control", "max-age=60, no-store"), false, "no-store"},
		{"private", "GET", nil, 200, hdr("Cache-Control", "private, max-age=60"), false, "private"},
		{"qualified private", "GET", nil, 200, hdr("Cache-Control", `private="Set-Cookie"`), false, "private"},
		{"request no-store", "GET", hdr("Cache-Control", "no-store"), 200, nil, false, "request no-store"},
		{"request no-cache is the edge's affair", "GET", hdr("Cache-Control", "no-cache"), 200, nil, true, ""},
		{"no-cache is storable", "GET", nil, 200, hdr("Cache-Control", "no-cache"), true, ""},
		{"Vary star", "GET", nil, 200, hdr("Vary", "Accept-Encoding, *"), false, "Vary: *"},
		{"Vary star on a second line", "GET", nil, 200, hdr("Vary", "Accept", "Vary", "*"), false, "Vary: *"},
		{"Vary list", "GET", nil, 200, hdr("Vary", "Accept-Encoding"), true, ""},
		{"Set-Cookie", "GET", nil, 200, hdr("Cache-Control", "public, max-age=60", "Set-Cookie", "id=1"), false, "Set-Cookie"},

		// Authorization (RFC 9111 3.5).
		{"Authorization", "GET", hdr("Authorization", "Bearer x"), 200, hdr("Cache-Control", "max-age=60"), false, "Authorization"},
		{"Authorization public", "GET", hdr("Authorization", "Bearer x"), 200, hdr("Cache-Control", "public"), true, ""},
		{"Authorization s-maxage", "GET", hdr("Authorization", "Bearer x"), 200, hdr("Cache-Control", "s-maxage=60"), true, ""},
		{"Authorization must-revalidate", "GET", hdr("Authorization", "Bearer x"), 200, hdr("Cache-Control", "must-revalidate"), true, ""},
		{"Authorization proxy-revalidate is not enough", "GET", hdr("Authorization", "Bearer x"), 200, hdr("Cache-Control", "proxy-revalidate"), false, "Authorization"},

		// Status codes.
		{"100", "GET", nil, 100, hdr("Cache-Control", "public, max-age=60"), false, "status 100 is not cacheable"},
		{"101", "GET", nil, 101, nil, false, "status 101 is not cacheable"},
		{"206", "GET", nil, 206, hdr("Cache-Control", "public, max-age=60"), false, "status 206 is not cacheable"},
		{"304", "GET", nil, 304, hdr("Cache-Control", "max-age=60"), false, "status 304 is not cacheable"},
		{"203", "GET", nil, 203, nil, true, ""},
		{"204", "GET", nil, 204, nil, true, ""},
		{"300", "GET", nil, 300, nil, true, ""},
		{"301", "GET", nil, 301, nil, true, ""},
		{"308", "GET", nil, 308, nil, true, ""},
		{"404", "GET", nil, 404, nil, true, ""},
		{"405", "GET", nil, 405, nil, true, ""},
		{"410", "GET", nil, 410, nil, true, ""},
		{"414", "GET", nil, 414, nil, true, ""},
		{"501", "GET", nil, 501, nil, true, ""},
		{"302 bare", "GET", nil, 302, nil, false, "status 302 is not cacheable"},
		{"307 bare", "GET", nil, 307, nil, false, "status 307 is not cacheable"},
		{"403 bare", "GET", nil, 403, nil, false, "status 403 is not cacheable"},
		{"500 bare", "GET", nil, 500, nil, false, "status 500 is not cacheable"},
		{"500 no-cache is not explicit freshness", "GET", nil, 500, hdr("Cache-Control", "no-cache"), false, "status 500 is not cacheable"},
		{"302 max-age", "GET", nil, 302, hdr("Cache-Control", "max-age=60"), true, ""},
		{"307 s-maxage", "GET", nil, 307, hdr("Cache-Control", "s-maxage=60"), true, ""},
		{"403 Expires", "GET", nil, 403, hdr("Expires", "Thu, 01 Jan 2037 00:00:00 GMT"), true, ""},
		{"500 invalid Expires still counts", "GET", nil, 500, hdr("Expires", "0"), true, ""},
		{"500 public", "GET", nil, 500, hdr("Cache-Control", "public"), true, ""},
		{"999", "GET", nil, 999, hdr("Cache-Control", "max-age=60"), false, "status 999 is not cacheable"},
	}
	for _, tt := range tests {
		got, reason := Storable(tt.method, tt.req, tt.status, tt.resp)
		if got != tt.want || reason != tt.wantReason {
			t.Errorf("Storable %s: got %v, %q; want %v, %q", tt.name, got, reason, tt.want, tt.wantReason)
		}
	}
}
