package nodeapi

import (
	"errors"
	"net/http"

	"github.com/latticenet/lattice/market"
	"github.com/latticenet/lattice/node/marketnet"
)

func (s *Server) providers(w http.ResponseWriter, r *http.Request) {
	ps, err := s.opts.Market.Providers()
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ps)
}

// leaseRequest asks the providers for offers on a ResourceRequest and
// answers, within the marketplace's bound, the offers, cheapest first.
func (s *Server) leaseRequest(w http.ResponseWriter, r *http.Request) {
	var req market.Request
	if err := decodeLimited(w, r, &req, 1024); err != nil {
		writeError(w, http.StatusBadRequest, "invalid resource request: "+err.Error())
		return
	}
	if err := req.Check(); err != nil {
		writeError(w, http.StatusBadRequest, "invalid resource request: "+market.Reason(err))
		return
	}
	offers, err := s.opts.Market.RequestOffers(r.Context(), req)
	if errors.Is(err, marketnet.ErrBusy) {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, offers)
}
