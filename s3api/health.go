package s3api

import (
	"fmt"
	"net/http"
)

// Probe paths: load balancers and orchestrators ask these, unsigned.
const (
	ProbeLive  = "/_health/live"
	ProbeReady = "/_health/ready"
)

// probe answers a liveness or readiness probe and reports whether r was
// one. Only path-style requests are probes: no bucket name begins with
// "_", so a probe never shadows a bucket, and a virtual-hosted request
// addresses its bucket's keys, "_health/live" included. A probe needs no
// signature and is answered before the fair-use budget of failed
// authentications is consulted or charged: a load balancer probing every
// second must not lock its own address out. Live is 200 while the
// process serves; ready is 503 with the reason once the store has turned
// read-only after a failed disk write, or while the endpoint shuts down.
func (s *Server) probe(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != ProbeLive && r.URL.Path != ProbeReady {
		return false
	}
	if _, _, vhost := s.locate(r); vhost {
		return false
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		w.WriteHeader(http.StatusMethodNotAllowed)
		fmt.Fprintln(w, "probes take GET or HEAD")
		return true
	}
	if r.URL.Path == ProbeReady {
		if !s.gate.Enter() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "shutting down")
			return true
		}
		defer s.gate.Leave()
		if err := s.st.Err(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "read-only: %v\n", err)
			return true
		}
	}
	fmt.Fprintln(w, "ok")
	return true
}
