// Package cdnpolicy is the pure rule set of HTTP caching (RFC 9111, with
// the stale-while-revalidate and stale-if-error extensions of RFC 5861)
// as a shared cache, a CDN edge, applies it. It decides whether a response
// may be stored, how long it stays fresh, when a stale copy may still be
// served, how a 304 refreshes a stored header, which requests a Vary-ing
// entry answers, and how to ask the origin to revalidate.
//
// It does no I/O, starts no goroutines and never reads a clock: every time
// is a parameter, so the edge (package cdnedge) drives it and tests replay
// any timeline exactly.
//
// What it deliberately leaves out:
//
//   - Request Cache-Control: apart from no-store, which Storable honours,
//     request directives are the edge's to decide on. In particular
//     max-age, min-fresh and max-stale from clients are not honoured, as
//     CDNs such as nginx and Cloudflare do not honour them either: a client
//     must not be able to make the edge serve staler content or hammer the
//     origin.
//   - Partial content: 206 responses are never stored and Range requests
//     are the edge's concern; it fetches whole bodies.
//   - The qualified forms no-cache="field" and private="field" are treated
//     as if unqualified (more restrictive than RFC 9111 requires, and what
//     most shared caches do).
//   - Heuristics based on Last-Modified: a response without explicit
//     freshness gets the edge's default TTL instead.
//   - Invalidation after unsafe methods (RFC 9111 4.4) and cache keys
//     beyond Vary: the edge owns its keys.
package cdnpolicy
