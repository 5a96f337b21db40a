package httpserve

import (
	"fmt"
	"net/http"
)

// The probe paths of the servers whose every other path belongs to their
// clients (the S3 endpoint's buckets, the CDN edge's sites): load
// balancers and orchestrators ask these, unsigned. Each server says when a
// request to one is a probe (docs/operations.md, "Probes").
const (
	ProbeLive  = "/_health/live"
	ProbeReady = "/_health/ready"
)

// IsProbe reports whether r asks a probe path.
func IsProbe(r *http.Request) bool {
	return r.URL.Path == ProbeLive || r.URL.Path == ProbeReady
}

// ServeProbe answers the probe r asks (see IsProbe): GET or HEAD, 200 "ok"
// while the server serves; readiness 503 with the reason notReady gives,
// when it gives one (notReady may be nil); 405 for other methods. The
// answer is never cached.
func ServeProbe(w http.ResponseWriter, r *http.Request, notReady func() string) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		w.WriteHeader(http.StatusMethodNotAllowed)
		fmt.Fprintln(w, "probes take GET or HEAD")
		return
	}
	if r.URL.Path == ProbeReady && notReady != nil {
		if reason := notReady(); reason != "" {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, reason)
			return
		}
	}
	fmt.Fprintln(w, "ok")
}
