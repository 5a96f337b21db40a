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

// MaxOfferRequestsPerSource bounds the POST /lease/request one public
// address has open at once. The market service answers at
// most 8 at a time on the node; without this, one client asking 8 times
// over would have the others refused for as long as it kept asking.
const MaxOfferRequestsPerSource = 2

// leaseRequest asks the providers for offers on a ResourceRequest and
// answers, within the marketplace's bound, the offers, cheapest first.
func (s *Server) leaseRequest(w http.ResponseWriter, r *http.Request) {
	release, ok := s.offerAsks.admit(w, r)
	if !ok {
		return
	}
	defer release()
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
