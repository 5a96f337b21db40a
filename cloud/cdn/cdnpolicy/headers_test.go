package cdnpolicy

import (
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestRefresh(t *testing.T) {
	oldDate := httpDate(t0.Add(-time.Hour))
	newDate := httpDate(t0)
	stored := hdr(
		"Content-Type", "text/html",
		"Content-Length", "1234",
		"Content-Encoding", "gzip",
		"ETag", `"v1"`,
		"Cache-Control", "max-age=60",
		"Date", oldDate,
		"Age", "100",
		"Vary", "Accept-Encoding",
		"X-Keep", "yes",
	)
	tests := []struct {
		name       string
		stored, nm http.Header
		want       http.Header
	}{
		{
			name:   "fields replaced, framing and hop-by-hop kept out",
			stored: stored,
			nm: hdr(
				"Cache-Control", "max-age=120",
				"Cache-Control", "stale-if-error=60",
				"Date", newDate,
				"ETag", `"v1"`,
				"Content-Length", "0",
				"Content-Encoding", "br",
				"Content-Range", "bytes 0-0/1234",
				"Connection", "X-Hop",
				"X-Hop", "1",
				"Keep-Alive", "timeout=5",
				"Transfer-Encoding", "chunked",
				"Proxy-Authenticate", "Basic",
				"Set-Cookie", "id=42",
				"X-New", "1",
			),
			want: hdr(
				"Content-Type", "text/html",
				"Content-Length", "1234",
				"Content-Encoding", "gzip",
				"ETag", `"v1"`,
				"Cache-Control", "max-age=120",
				"Cache-Control", "stale-if-error=60",
				"Date", newDate,
				"Vary", "Accept-Encoding",
				"X-Keep", "yes",
				"X-New", "1",
			),
		},
		{
			name:   "a 304 without Date or Age drops the stored ones",
			stored: stored,
			nm:     hdr("Expires", httpDate(t0.Add(time.Hour))),
			want: hdr(
				"Content-Type", "text/html",
				"Content-Length", "1234",
				"Content-Encoding", "gzip",
				"ETag", `"v1"`,
				"Cache-Control", "max-age=60",
				"Vary", "Accept-Encoding",
				"X-Keep", "yes",
				"Expires", httpDate(t0.Add(time.Hour)),
			),
		},
		{
			name:   "the 304's Age replaces the stored one",
			stored: hdr("Age", "100", "Date", oldDate),
			nm:     hdr("Age", "3", "Date", newDate),
			want:   hdr("Age", "3", "Date", newDate),
		},
		{
			name:   "Content-Type is updated (RFC 9111 3.2: Content-* is no exemption)",
			stored: hdr("Content-Type", "text/html"),
			nm:     hdr("Content-Type", "text/html; charset=utf-8"),
			want:   hdr("Content-Type", "text/html; charset=utf-8"),
		},
		{
			name:   "non-canonical keys replace their canonical twins",
			stored: http.Header{"Etag": {`"v1"`}, "x-custom": {"old"}},
			nm:     http.Header{"etag": {`"v2"`}, "X-Custom": {"new"}},
			want:   http.Header{"Etag": {`"v2"`}, "X-Custom": {"new"}},
		},
		{
			name:   "nil stored",
			stored: nil,
			nm:     hdr("Cache-Control", "max-age=5"),
			want:   hdr("Cache-Control", "max-age=5"),
		},
		{
			name:   "nil 304",
			stored: hdr("X-Keep", "yes", "Date", oldDate),
			nm:     nil,
			want:   hdr("X-Keep", "yes"),
		},
	}
	for _, tt := range tests {
		before, nmBefore := tt.stored.Clone(), tt.nm.Clone()
		got := Refresh(tt.stored, tt.nm)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Refresh %s:\n got %v\nwant %v", tt.name, got, tt.want)
		}
		if !reflect.DeepEqual(tt.stored, before) || !reflect.DeepEqual(tt.nm, nmBefore) {
			t.Errorf("Refresh %s modified its arguments", tt.name)
		}
	}
}

// TestRefreshRestartsAge follows a stored response through a revalidation:
// it arrived with Age: 100 and max-age=60, so it is stale at once; the 304
// (with a fresh Date and max-age=120, no Age) makes the merged response
// fresh for 120s from the revalidation.
func TestRefreshRestartsAge(t *testing.T) {
	const s = time.Second
	stored := hdr("Cache-Control", "max-age=60", "Age", "100", "Date", httpDate(t0), "ETag", `"v1"`)
	if st := Compute(200, stored, t0, t0, 0).State(t0); st != Revalidate {
		t.Fatalf("stored response at arrival: got %v, want Revalidate", st)
	}
	reval := t0.Add(time.Hour)
	merged := Refresh(stored, hdr("Cache-Control", "max-age=120", "Date", httpDate(reval), "ETag", `"v1"`))
	f := Compute(200, merged, reval, reval.Add(1*s), 0)
	if f.InitialAge != 1*s || f.Lifetime != 120*s {
		t.Errorf("after refresh: got initial age %v, lifetime %v; want 1s, 2m0s", f.InitialAge, f.Lifetime)
	}
	if st := f.State(reval.Add(120 * s)); st != Revalidate {
		t.Errorf("after refresh, at 120s of age: got %v, want Revalidate", st)
	}
	if st := f.State(reval.Add(119 * s)); st != Fresh {
		t.Errorf("after refresh, at 119s of age: got %v, want Fresh", st)
	}
}

func TestConditional(t *testing.T) {
	lm := "Sun, 01 Mar 2026 11:00:00 GMT"
	tests := []struct {
		name   string
		stored http.Header
		want   http.Header
	}{
		{"strong ETag and Last-Modified", hdr("ETag", `"abc"`, "Last-Modified", lm), hdr("If-None-Match", `"abc"`, "If-Modified-Since", lm)},
		{"weak ETag", hdr("ETag", `W/"abc"`), hdr("If-None-Match", `W/"abc"`)},
		{"Last-Modified only", hdr("Last-Modified", lm), hdr("If-Modified-Since", lm)},
		{"empty ETag", hdr("ETag", " "), http.Header{}},
		{"nothing", nil, http.Header{}},
	}
	for _, tt := range tests {
		if got := Conditional(tt.stored); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Conditional %s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestHopByHop(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
		want http.Header
	}{
		{
			"fixed list",
			hdr("Connection", "close", "Keep-Alive", "timeout=5", "Proxy-Connection", "keep-alive",
				"Proxy-Authenticate", "Basic", "Proxy-Authorization", "Basic eA==", "Proxy-Authentication-Info", "x",
				"TE", "trailers", "Trailer", "X-Sum", "Transfer-Encoding", "chunked", "Upgrade", "h2c",
				"Content-Type", "text/plain"),
			hdr("Content-Type", "text/plain"),
		},
		{
			"fields named by Connection, over several lines",
			hdr("Connection", "X-A, x-b", "Connection", " X-C ", "X-A", "1", "X-B", "2", "X-C", "3", "X-D", "4"),
			hdr("X-D", "4"),
		},
		{
			"non-canonical keys",
			http.Header{"connection": {"x-e"}, "x-e": {"1"}, "keep-alive": {"1"}, "Etag": {`"v"`}},
			http.Header{"Etag": {`"v"`}},
		},
		{"nil", nil, nil},
	}
	for _, tt := range tests {
		HopByHop(tt.h)
		if !reflect.DeepEqual(tt.h, tt.want) {
			t.Errorf("HopByHop %s: got %v, want %v", tt.name, tt.h, tt.want)
		}
	}
}

func TestVaryFields(t *testing.T) {
	tests := []struct {
		resp     http.Header
		want     []string
		wantStar bool
	}{
		{nil, nil, false},
		{hdr("Vary", "Accept-Encoding"), []string{"accept-encoding"}, false},
		{hdr("Vary", "User-Agent, accept-encoding", "Vary", " Accept-Encoding ,Accept-Language,,"), []string{"accept-encoding", "accept-language", "user-agent"}, false},
		{hdr("Vary", "*"), nil, true},
		{hdr("Vary", "Origin, *"), []string{"origin"}, true},
	}
	for _, tt := range tests {
		got, star := VaryFields(tt.resp)
		if !slices.Equal(got, tt.want) || star != tt.wantStar {
			t.Errorf("VaryFields(%v): got %q, %v; want %q, %v", tt.resp, got, star, tt.want, tt.wantStar)
		}
	}
}

func TestVaryKey(t *testing.T) {
	ae := []string{"accept-encoding"}
	tests := []struct {
		name      string
		fieldsA   []string
		a         http.Header
		fieldsB   []string
		b         http.Header
		wantEqual bool
	}{
		{"same value", ae, hdr("Accept-Encoding", "gzip"), ae, hdr("Accept-Encoding", "gzip"), true},
		{"different value", ae, hdr("Accept-Encoding", "gzip"), ae, hdr("Accept-Encoding", "br"), false},
		{"whitespace around commas", ae, hdr("Accept-Encoding", "gzip,br"), ae, hdr("Accept-Encoding", " gzip ,  br "), true},
		{"lines combine", ae, hdr("Accept-Encoding", "gzip, br"), ae, hdr("Accept-Encoding", "gzip", "Accept-Encoding", "br"), true},
		{"order matters", ae, hdr("Accept-Encoding", "gzip, br"), ae, hdr("Accept-Encoding", "br, gzip"), false},
		{"case of values matters", ae, hdr("Accept-Encoding", "gzip"), ae, hdr("Accept-Encoding", "GZIP"), false},
		{"absent in both", ae, nil, ae, hdr("Cookie", "x=1"), true},
		{"absent vs empty", ae, nil, ae, hdr("Accept-Encoding", ""), false},
		{"unlisted fields ignored", ae, hdr("Accept-Encoding", "gzip", "Accept", "a"), ae, hdr("Accept-Encoding", "gzip", "Accept", "b"), true},
		{"field list order and case", []string{"Accept", "accept-encoding"}, hdr("Accept", "a", "Accept-Encoding", "gzip"),
			[]string{"accept-encoding", "ACCEPT", "accept"}, hdr("Accept", "a", "Accept-Encoding", "gzip"), true},
		{"different Vary lists never collide", ae, nil, []string{"accept-language"}, nil, false},
		{"no Vary vs Vary with an absent field", nil, nil, ae, nil, false},
		// The encoding stays unambiguous whatever the values hold.
		{"quote injection", []string{"a", "b"}, hdr("A", `x":"y`), []string{"a", "b"}, hdr("A", "x", "B", "y"), false},
	}
	for _, tt := range tests {
		ka, kb := VaryKey(tt.fieldsA, tt.a), VaryKey(tt.fieldsB, tt.b)
		if (ka == kb) != tt.wantEqual {
			t.Errorf("VaryKey %s: got keys %q and %q, want equal %v", tt.name, ka, kb, tt.wantEqual)
		}
	}
	if k := VaryKey(nil, hdr("Accept", "a")); k != "" {
		t.Errorf("VaryKey with no fields: got %q, want \"\"", k)
	}
}
