package cdnpolicy

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// notFoundTTL caps the default TTL of 404 and 410 responses: a missing
// object that appears at the origin should not stay missing at the edge
// for a whole default TTL.
const notFoundTTL = 60 * time.Second

// Freshness is what the cache keeps about a stored response's lifetime.
type Freshness struct {
	Lifetime             time.Duration // freshness lifetime
	Explicit             bool          // from s-maxage, max-age or Expires (else the default TTL)
	InitialAge           time.Duration // corrected_initial_age of RFC 9111 4.2.3
	ResponseTime         time.Time     // when the response was received
	NoCache              bool          // must be revalidated before every use (no-cache)
	MustRevalidate       bool          // never served stale: must-revalidate, proxy-revalidate, or s-maxage present
	StaleWhileRevalidate time.Duration
	StaleIfError         time.Duration
}

// Compute derives a stored response's Freshness. requestTime and
// responseTime are when the edge sent the request and received the
// response headers.
//
// The lifetime is the first of: s-maxage; max-age; Expires minus Date
// (Date missing or invalid: responseTime; an invalid Expires such as "0",
// or a date in a zone other than GMT, means already expired). Without
// any, defaultTTL applies to heuristically cacheable codes and, as RFC
// 9111 4.2.2 allows, to responses marked public; 404 and 410 get at most
// 60s of it; any other code gets 0. Lifetimes clamp to 2^31 seconds.
//
// InitialAge is RFC 9111 4.2.3's corrected_initial_age: the larger of the
// apparent age (responseTime - Date, at least 0) and the Age header (its
// first member; invalid counts as 0) plus the response delay
// (responseTime - requestTime, at least 0).
func Compute(status int, resp http.Header, requestTime, responseTime time.Time, defaultTTL time.Duration) Freshness {
	cc := ParseCacheControl(resp)
	f := Freshness{
		ResponseTime:   responseTime,
		NoCache:        cc.NoCache,
		MustRevalidate: cc.MustRevalidate || cc.ProxyRevalidate || cc.HasSMaxAge,
	}
	if cc.HasSWR {
		f.StaleWhileRevalidate = cc.StaleWhileRevalidate
	}
	if cc.HasSIE {
		f.StaleIfError = cc.StaleIfError
	}

	date, ok := parseHTTPDate(resp.Get("Date"))
	if !ok {
		date = responseTime
	}
	switch {
	case cc.HasSMaxAge:
		f.Lifetime, f.Explicit = cc.SMaxAge, true
	case cc.HasMaxAge:
		f.Lifetime, f.Explicit = cc.MaxAge, true
	case len(resp.Values("Expires")) > 0:
		f.Explicit = true
		if exp, ok := parseHTTPDate(resp.Values("Expires")[0]); ok {
			f.Lifetime = clampDelta(exp.Sub(date))
		}
	case heuristic(status) || (cc.Public && status >= 200 && status <= 599 && status != http.StatusPartialContent && status != http.StatusNotModified):
		f.Lifetime = clampDelta(defaultTTL)
		if status == http.StatusNotFound || status == http.StatusGone {
			f.Lifetime = min(f.Lifetime, notFoundTTL)
		}
	}

	apparent := clampDelta(responseTime.Sub(date))
	delay := clampDelta(responseTime.Sub(requestTime))
	corrected := addSat(ageValue(resp), delay)
	f.InitialAge = max(apparent, corrected)
	return f
}

// Age is the response's current_age at now: InitialAge plus the time
// since ResponseTime, never negative (a clock stepping back does not make
// a response younger than it arrived).
func (f Freshness) Age(now time.Time) time.Duration {
	return addSat(f.InitialAge, max(0, now.Sub(f.ResponseTime)))
}

// staleness is how long past its lifetime the response is at now; zero or
// negative while fresh.
func (f Freshness) staleness(now time.Time) time.Duration {
	return f.Age(now) - f.Lifetime
}

// State classifies the stored response at now. A response is fresh while
// its age is below its lifetime (max-age=60 is fresh at 59s, stale at
// 60s). A no-cache response is always Revalidate. A stale response is
// StaleWhileRevalidate while its staleness is at most its
// stale-while-revalidate window, unless MustRevalidate.
func (f Freshness) State(now time.Time) State {
	if f.NoCache {
		return Revalidate
	}
	s := f.staleness(now)
	switch {
	case s < 0:
		return Fresh
	case !f.MustRevalidate && f.StaleWhileRevalidate > 0 && s <= f.StaleWhileRevalidate:
		return StaleWhileRevalidate
	}
	return Revalidate
}

// ServeStaleOnError reports whether the stored response may be served at
// now although revalidating it failed: the origin was unreachable (connErr
// true: connection refused, timeout) or answered 500, 502, 503 or 504
// (connErr false).
//
// Never for a no-cache or MustRevalidate response: RFC 9111 4.2.4 forbids
// generating a stale response against those directives, and RFC 5861's
// "regardless of other freshness information" is read as not overriding
// them; a no-cache response has never been usable without validation,
// disconnected or not. A response that is still fresh (and not no-cache)
// may always be served.
//
// Otherwise, with stale-if-error (a positive window) the staleness must be
// within it, whatever the error. Without it, a 5xx answer never allows a
// stale response, while a disconnected cache may serve one (RFC 9111
// 4.2.4) up to maxStale, the edge's own bound; maxStale <= 0 disables
// that. stale-if-error=0 grants nothing and so counts as absent.
func (f Freshness) ServeStaleOnError(now time.Time, connErr bool, maxStale time.Duration) bool {
	if f.NoCache {
		return false
	}
	s := f.staleness(now)
	switch {
	case s < 0:
		return true
	case f.MustRevalidate:
		return false
	case f.StaleIfError > 0:
		return s <= f.StaleIfError
	case connErr:
		return maxStale > 0 && s <= maxStale
	}
	return false
}

// State is what a cache may do with a stored response at a given time.
type State int

const (
	// Fresh: serve it.
	Fresh State = iota
	// Revalidate: stale or no-cache; validate it with the origin before
	// use, serving nothing stale while waiting.
	Revalidate
	// StaleWhileRevalidate: stale but within stale-while-revalidate; serve
	// it now and revalidate in the background.
	StaleWhileRevalidate
)

func (s State) String() string {
	switch s {
	case Fresh:
		return "Fresh"
	case Revalidate:
		return "Revalidate"
	case StaleWhileRevalidate:
		return "StaleWhileRevalidate"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// ageValue is the Age header's first member in seconds, 0 when absent or
// invalid (RFC 9111 5.1).
func ageValue(h http.Header) time.Duration {
	v := h.Values("Age")
	if len(v) == 0 {
		return 0
	}
	first, _, _ := strings.Cut(v[0], ",")
	d, _ := parseDelta(trimOWS(first), true)
	return d
}

// parseHTTPDate parses an HTTP-date in any of its three formats. A zone
// other than GMT makes it invalid (RFC 9111 4.2 says a cache should
// treat such dates as invalid, and time.Parse would read an unknown
// abbreviation as UTC).
func parseHTTPDate(s string) (time.Time, bool) {
	t, err := http.ParseTime(trimOWS(s))
	if err != nil {
		return time.Time{}, false
	}
	if name, off := t.Zone(); off != 0 || (name != "GMT" && name != "UTC") {
		return time.Time{}, false
	}
	return t, true
}

// clampDelta limits d to [0, maxDelta].
func clampDelta(d time.Duration) time.Duration {
	return min(max(d, 0), maxDelta)
}

// addSat adds two non-negative durations, saturating instead of
// overflowing.
func addSat(a, b time.Duration) time.Duration {
	if s := a + b; s >= a {
		return s
	}
	return time.Duration(1<<63 - 1)
}
