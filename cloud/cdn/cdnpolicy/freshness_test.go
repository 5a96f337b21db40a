package cdnpolicy

import (
	"net/http"
	"testing"
	"time"
)

// t0 is a whole second, as HTTP-dates are.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func httpDate(t time.Time) string { return t.Format(http.TimeFormat) }

func TestComputeLifetime(t *testing.T) {
	const s = time.Second
	date := httpDate(t0)
	tests := []struct {
		name         string
		status       int
		resp         http.Header
		defaultTTL   time.Duration
		wantLifetime time.Duration
		wantExplicit bool
	}{
		{"max-age", 200, hdr("Cache-Control", "max-age=60", "Date", date), time.Hour, 60 * s, true},
		{"s-maxage beats max-age", 200, hdr("Cache-Control", "max-age=60, s-maxage=30"), time.Hour, 30 * s, true},
		{"s-maxage beats a longer max-age", 200, hdr("Cache-Control", "s-maxage=600, max-age=60"), time.Hour, 600 * s, true},
		{"max-age beats Expires", 200, hdr("Cache-Control", "max-age=60", "Date", date, "Expires", httpDate(t0.Add(time.Hour))), 0, 60 * s, true},
		{"max-age=0", 200, hdr("Cache-Control", "max-age=0"), time.Hour, 0, true},
		{"invalid max-age is stale", 200, hdr("Cache-Control", "max-age=soon", "Expires", httpDate(t0.Add(time.Hour))), time.Hour, 0, true},
		{"huge max-age clamps", 200, hdr("Cache-Control", "max-age=99999999999"), 0, 2147483648 * s, true},
		{"Expires minus Date", 200, hdr("Date", date, "Expires", httpDate(t0.Add(time.Hour))), 0, time.Hour, true},
		{"Expires RFC 850", 200, hdr("Date", date, "Expires", "Sunday, 01-Mar-26 13:00:00 GMT"), 0, time.Hour, true},
		{"Expires asctime", 200, hdr("Date", date, "Expires", "Sun Mar  1 12:10:00 2026"), 0, 10 * time.Minute, true},
		{"Expires without Date uses response time", 200, hdr("Expires", httpDate(t0.Add(5*time.Minute))), 0, 5 * time.Minute, true},
		{"Expires with an invalid Date uses response time", 200, hdr("Date", "yesterday", "Expires", httpDate(t0.Add(5*time.Minute))), 0, 5 * time.Minute, true},
		{"Expires before Date", 200, hdr("Date", date, "Expires", httpDate(t0.Add(-time.Hour))), time.Hour, 0, true},
		{"Expires 0", 200, hdr("Date", date, "Expires", "0"), time.Hour, 0, true},
		{"Expires in another zone", 200, hdr("Date", date, "Expires", "Sunday, 01-Mar-26 13:00:00 PST"), time.Hour, 0, true},
		{"first Expires counts", 200, hdr("Date", date, "Expires", httpDate(t0.Add(time.Minute)), "Expires", httpDate(t0.Add(time.Hour))), 0, time.Minute, true},
		{"Expires far away clamps", 200, hdr("Date", date, "Expires", "Fri, 31 Dec 9999 23:59:59 GMT"), 0, 2147483648 * s, true},
		{"default TTL", 200, hdr("Date", date), 10 * time.Minute, 10 * time.Minute, false},
		{"default TTL 301", 301, nil, 10 * time.Minute, 10 * time.Minute, false},
		{"negative default TTL", 200, nil, -time.Minute, 0, false},
		{"404 capped at 60s", 404, nil, 10 * time.Minute, 60 * s, false},
		{"404 shorter default", 404, nil, 30 * s, 30 * s, false},
		{"410 capped at 60s", 410, nil, 10 * time.Minute, 60 * s, false},
		{"404 explicit is not capped", 404, hdr("Cache-Control", "max-age=600"), 10 * time.Minute, 600 * s, true},
		{"302 gets nothing", 302, nil, 10 * time.Minute, 0, false},
		{"500 gets nothing", 500, nil, 10 * time.Minute, 0, false},
		{"public 302 is heuristically cacheable", 302, hdr("Cache-Control", "public"), 10 * time.Minute, 10 * time.Minute, false},
		{"public 404 still capped", 404, hdr("Cache-Control", "public"), 10 * time.Minute, 60 * s, false},
		{"500 max-age", 500, hdr("Cache-Control", "max-age=5"), 10 * time.Minute, 5 * s, true},
	}
	for _, tt := range tests {
		f := Compute(tt.status, tt.resp, t0, t0, tt.defaultTTL)
		if f.Lifetime != tt.wantLifetime || f.Explicit != tt.wantExplicit {
			t.Errorf("Compute %s: got lifetime %v explicit %v; want %v, %v", tt.name, f.Lifetime, f.Explicit, tt.wantLifetime, tt.wantExplicit)
		}
	}
}

func TestComputeFlags(t *testing.T) {
	const s = time.Second
	tests := []struct {
		cc                 string
		wantNoCache        bool
		wantMustRevalidate bool
		wantSWR, wantSIE   time.Duration
	}{
		{"max-age=60", false, false, 0, 0},
		{"no-cache", true, false, 0, 0},
		{`no-cache="Set-Cookie"`, true, false, 0, 0},
		{"must-revalidate", false, true, 0, 0},
		{"proxy-revalidate", false, true, 0, 0},
		{"s-maxage=60", false, true, 0, 0},
		{"max-age=60, stale-while-revalidate=30, stale-if-error=600", false, false, 30 * s, 600 * s},
		{"stale-while-revalidate=bad", false, false, 0, 0},
	}
	for _, tt := range tests {
		f := Compute(200, hdr("Cache-Control", tt.cc), t0, t0, 0)
		if f.NoCache != tt.wantNoCache || f.MustRevalidate != tt.wantMustRevalidate ||
			f.StaleWhileRevalidate != tt.wantSWR || f.StaleIfError != tt.wantSIE {
			t.Errorf("Compute(%q): got no-cache %v, must-revalidate %v, swr %v, sie %v; want %v, %v, %v, %v",
				tt.cc, f.NoCache, f.MustRevalidate, f.StaleWhileRevalidate, f.StaleIfError,
				tt.wantNoCache, tt.wantMustRevalidate, tt.wantSWR, tt.wantSIE)
		}
	}
}

// TestInitialAge checks RFC 9111 4.2.3's arithmetic.
//
// Worked example (the first case): the edge sends the request at t0 and
// has the response headers at t0+2s. An upstream cache says Age: 10 and
// the origin stamped Date: t0-3s.
//
//	apparent_age          = max(0, response_time - date_value) = 2 - (-3) = 5s
//	response_delay        = response_time - request_time       = 2s
//	corrected_age_value   = age_value + response_delay         = 10 + 2 = 12s
//	corrected_initial_age = max(apparent_age, corrected_age)   = 12s
func TestInitialAge(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name     string
		resp     http.Header
		req, rsp time.Time
		want     time.Duration
	}{
		{"worked example", hdr("Age", "10", "Date", httpDate(t0.Add(-3*s))), t0, t0.Add(2 * s), 12 * s},
		{"apparent age wins", hdr("Date", httpDate(t0.Add(-60*s))), t0, t0.Add(2 * s), 62 * s},
		{"no Age, no Date", nil, t0, t0.Add(2 * s), 2 * s},
		{"simultaneous", hdr("Date", httpDate(t0)), t0, t0, 0},
		{"Date in the future", hdr("Date", httpDate(t0.Add(time.Hour))), t0, t0.Add(1 * s), 1 * s},
		{"invalid Age is 0", hdr("Age", "ten", "Date", httpDate(t0)), t0, t0, 0},
		{"negative Age is 0", hdr("Age", "-5", "Date", httpDate(t0)), t0, t0, 0},
		{"first member of a list Age", hdr("Age", "5, 7", "Date", httpDate(t0)), t0, t0, 5 * s},
		{"first Age line", hdr("Age", "5", "Age", "7", "Date", httpDate(t0)), t0, t0, 5 * s},
		{"huge Age clamps", hdr("Age", "99999999999999", "Date", httpDate(t0)), t0, t0.Add(1 * s), 2147483649 * s},
		{"response before request: no delay", hdr("Age", "4", "Date", httpDate(t0)), t0.Add(3 * s), t0, 4 * s},
	}
	for _, tt := range tests {
		f := Compute(200, tt.resp, tt.req, tt.rsp, 0)
		if f.InitialAge != tt.want {
			t.Errorf("Compute %s: got initial age %v, want %v", tt.name, f.InitialAge, tt.want)
		}
		if !f.ResponseTime.Equal(tt.rsp) {
			t.Errorf("Compute %s: got response time %v, want %v", tt.name, f.ResponseTime, tt.rsp)
		}
	}
}

func TestAge(t *testing.T) {
	const s = time.Second
	f := Freshness{InitialAge: 12 * s, ResponseTime: t0}
	tests := []struct {
		at   time.Duration
		want time.Duration
	}{
		{0, 12 * s},
		{30 * s, 42 * s},
		{-10 * s, 12 * s}, // the clock stepped back: never younger than on arrival
	}
	for _, tt := range tests {
		if got := f.Age(t0.Add(tt.at)); got != tt.want {
			t.Errorf("Age at %v: got %v, want %v", tt.at, got, tt.want)
		}
	}
	huge := Freshness{InitialAge: 1<<63 - 1, ResponseTime: t0}
	if got := huge.Age(t0.Add(time.Hour)); got != 1<<63-1 {
		t.Errorf("Age saturating: got %v, want %v", got, time.Duration(1<<63-1))
	}
}

func TestState(t *testing.T) {
	const s = time.Second
	type step struct {
		at   time.Duration // after t0, when the response was received
		want State
	}
	tests := []struct {
		name  string
		resp  http.Header
		steps []step
	}{
		{"max-age=60", hdr("Cache-Control", "max-age=60"), []step{
			{0, Fresh}, {59 * s, Fresh}, {60 * s, Revalidate}, {61 * s, Revalidate},
		}},
		{"max-age=60 arriving with Age: 50", hdr("Cache-Control", "max-age=60", "Age", "50"), []step{
			{9 * s, Fresh}, {10 * s, Revalidate},
		}},
		{"stale-while-revalidate", hdr("Cache-Control", "max-age=60, stale-while-revalidate=30"), []step{
			{59 * s, Fresh}, {60 * s, StaleWhileRevalidate}, {90 * s, StaleWhileRevalidate}, {91 * s, Revalidate},
		}},
		{"stale-while-revalidate=0", hdr("Cache-Control", "max-age=60, stale-while-revalidate=0"), []step{
			{60 * s, Revalidate},
		}},
		{"must-revalidate forbids stale-while-revalidate", hdr("Cache-Control", "max-age=60, stale-while-revalidate=30, must-revalidate"), []step{
			{59 * s, Fresh}, {60 * s, Revalidate}, {70 * s, Revalidate},
		}},
		{"proxy-revalidate forbids stale-while-revalidate", hdr("Cache-Control", "max-age=60, stale-while-revalidate=30, proxy-revalidate"), []step{
			{70 * s, Revalidate},
		}},
		{"s-maxage forbids stale-while-revalidate", hdr("Cache-Control", "s-maxage=60, stale-while-revalidate=30"), []step{
			{59 * s, Fresh}, {70 * s, Revalidate},
		}},
		{"no-cache is never Fresh", hdr("Cache-Control", "no-cache, max-age=60, stale-while-revalidate=30"), []step{
			{0, Revalidate}, {70 * s, Revalidate},
		}},
		{"Expires 0", hdr("Expires", "0", "Cache-Control", "stale-while-revalidate=30"), []step{
			{0, StaleWhileRevalidate}, {31 * s, Revalidate},
		}},
		{"clock stepped back", hdr("Cache-Control", "max-age=60"), []step{
			{-time.Hour, Fresh},
		}},
	}
	for _, tt := range tests {
		f := Compute(200, tt.resp, t0, t0, time.Hour)
		for _, st := range tt.steps {
			if got := f.State(t0.Add(st.at)); got != st.want {
				t.Errorf("%s: State at %v: got %v, want %v", tt.name, st.at, got, st.want)
			}
		}
	}
}

func TestServeStaleOnError(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name     string
		cc       string
		at       time.Duration
		connErr  bool
		maxStale time.Duration
		want     bool
	}{
		// stale-if-error bounds both kinds of error.
		{"503 within stale-if-error", "max-age=60, stale-if-error=300", 360 * s, false, 0, true},
		{"503 past stale-if-error", "max-age=60, stale-if-error=300", 361 * s, false, time.Hour, false},
		{"conn error within stale-if-error", "max-age=60, stale-if-error=300", 360 * s, true, 0, true},
		{"conn error past stale-if-error", "max-age=60, stale-if-error=300", 361 * s, true, time.Hour, false},
		// Without it: never on a 5xx, up to maxStale when disconnected.
		{"503 without stale-if-error", "max-age=60", 61 * s, false, time.Hour, false},
		{"conn error within maxStale", "max-age=60", 3660 * s, true, time.Hour, true},
		{"conn error past maxStale", "max-age=60", 3661 * s, true, time.Hour, false},
		{"conn error, maxStale 0", "max-age=60", 61 * s, true, 0, false},
		{"stale-if-error=0 grants nothing on 503", "max-age=60, stale-if-error=0", 60 * s, false, time.Hour, false},
		{"stale-if-error=0 leaves disconnected operation", "max-age=60, stale-if-error=0", 61 * s, true, time.Hour, true},
		// Directives that forbid stale responses (RFC 9111 4.2.4).
		{"must-revalidate, 503", "max-age=60, must-revalidate, stale-if-error=300", 61 * s, false, time.Hour, false},
		{"must-revalidate, conn error", "max-age=60, must-revalidate, stale-if-error=300", 61 * s, true, time.Hour, false},
		{"proxy-revalidate, conn error", "max-age=60, proxy-revalidate", 61 * s, true, time.Hour, false},
		{"s-maxage, conn error", "s-maxage=60, stale-if-error=300", 61 * s, true, time.Hour, false},
		{"no-cache, conn error", "no-cache, stale-if-error=300", 1 * s, true, time.Hour, false},
		{"no-cache fresh, 503", "no-cache, max-age=60, stale-if-error=300", 1 * s, false, time.Hour, false},
		// A fresh response is not stale at all.
		{"fresh, 503", "max-age=60", 30 * s, false, 0, true},
		{"fresh must-revalidate, 503", "max-age=60, must-revalidate", 30 * s, false, 0, true},
	}
	for _, tt := range tests {
		f := Compute(200, hdr("Cache-Control", tt.cc), t0, t0, 0)
		if got := f.ServeStaleOnError(t0.Add(tt.at), tt.connErr, tt.maxStale); got != tt.want {
			t.Errorf("ServeStaleOnError %s (%q at %v, connErr %v, maxStale %v): got %v, want %v",
				tt.name, tt.cc, tt.at, tt.connErr, tt.maxStale, got, tt.want)
		}
	}
}

func TestStateString(t *testing.T) {
	tests := []struct {
		s    State
		want string
	}{
		{Fresh, "Fresh"}, {Revalidate, "Revalidate"}, {StaleWhileRevalidate, "StaleWhileRevalidate"}, {State(7), "State(7)"},
	}
	for _, tt := range tests {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("State(%d).String(): got %q, want %q", int(tt.s), got, tt.want)
		}
	}
}
