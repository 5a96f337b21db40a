package s3api

import (
	"net/http"

	"github.com/latticenet/lattice/internal/run/httpserve"
)

// Probe paths: load balancers and orchestrators ask these, unsigned.
const (
	ProbeLive  = httpserve.ProbeLive
	ProbeReady = httpserve.ProbeReady
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
	if !httpserve.IsProbe(r) {
		return false
	}
	if _, _, vhost := s.locate(r); vhost {
		return false
	}
	httpserve.ServeProbe(w, r, func() string {
		if !s.gate.Enter() {
			return "shutting down"
		}
		defer s.gate.Leave()
		if err := s.st.Err(); err != nil {
			return "read-only: " + err.Error()
		}
		return ""
	})
	return true
}
