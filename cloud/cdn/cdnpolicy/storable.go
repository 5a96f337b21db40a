package cdnpolicy

import (
	"net/http"
	"strconv"
)

// heuristic reports whether status is heuristically cacheable (RFC 9110
// 15.1), less 206, which the edge never stores.
func heuristic(status int) bool {
	switch status {
	case 200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501:
		return true
	}
	return false
}

// Storable reports whether a shared cache may store the response with
// status and header resp to a request (method, request header req), and
// when not, a short reason such as "no-store", "private", "Set-Cookie",
// "Vary: *", "Authorization" or "status 500 is not cacheable".
//
// Only GET responses are stored: the edge answers HEAD from a GET's entry,
// so a HEAD response is not stored itself ("method HEAD"). Nor is a
// response that is marked no-store or private, answers a request marked
// no-store, varies on "*", or sets a cookie (a per-user Set-Cookie replayed
// to every client is a session leak; nginx and Cloudflare skip such
// responses by default too). A response to a request with Authorization is
// stored only if it is public, has s-maxage or must-revalidate (RFC 9111
// 3.5).
//
// Status codes: 1xx, 206 and 304 never (the edge fetches whole bodies);
// heuristically cacheable codes (200, 203, 204, 300, 301, 308, 404, 405,
// 410, 414, 501) always; any other final code only with explicit freshness
// (Expires, max-age, s-maxage) or public.
func Storable(method string, req http.Header, status int, resp http.Header) (bool, string) {
	if method != http.MethodGet {
		return false, "method " + method
	}
	cc := ParseCacheControl(resp)
	switch {
	case status < 200 || status > 599 || status == http.StatusPartialContent || status == http.StatusNotModified:
		return false, "status " + strconv.Itoa(status) + " is not cacheable"
	case !heuristic(status) && !cc.Public && !cc.HasMaxAge && !cc.HasSMaxAge && len(resp.Values("Expires")) == 0:
		return false, "status " + strconv.Itoa(status) + " is not cacheable"
	case ParseCacheControl(req).NoStore:
		return false, "request no-store"
	case cc.NoStore:
		return false, "no-store"
	case cc.Private:
		return false, "private"
	}
	if _, star := VaryFields(resp); star {
		return false, "Vary: *"
	}
	if len(resp.Values("Set-Cookie")) > 0 {
		return false, "Set-Cookie"
	}
	if len(req.Values("Authorization")) > 0 && !cc.Public && !cc.HasSMaxAge && !cc.MustRevalidate {
		return false, "Authorization"
	}
	return true, ""
}
