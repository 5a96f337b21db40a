package nodeapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/leasenet"
	"github.com/latticenet/lattice/node/ledgerstore"
	"github.com/latticenet/lattice/node/nodewire"
	"github.com/latticenet/lattice/timekeeping"
)

// Lease lists are paged: at most limit leases (default and most
// MaxLeases), in order of lease hash, after the lease hash named by after.
const (
	MaxLeases     = 500
	defaultLeases = 100
)

func (s *Server) leaseRoutes(m routes) {
	m.HandleFunc("GET /leases", s.leases)
	m.HandleFunc("GET /leases/{hash}", s.lease)
}

// leases answers GET /leases[?consumer=A|provider=A][&after=H][&limit=N].
func (s *Server) leases(w http.ResponseWriter, r *http.Request) {
	q, ok := queryParams(w, r, "consumer", "provider", "after", "limit")
	if !ok {
		return
	}
	for k := range q {
		switch k {
		case "consumer", "provider", "after", "limit":
		default:
			writeError(w, http.StatusBadRequest, fmt.Sprintf("unknown query parameter %q: leases filter by consumer or provider and page with after and limit", k))
			return
		}
	}
	table, prefix := ledger.LeaseTable, ""
	for _, f := range []struct{ name, table string }{{"consumer", ledger.LeaseByConsumer}, {"provider", ledger.LeaseByProvider}} {
		if !q.Has(f.name) {
			continue
		}
		if prefix != "" {
			writeError(w, http.StatusBadRequest, "filter by consumer or by provider, not both")
			return
		}
		a, err := ledger.ParseAddress(q.Get(f.name))
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid %s: %v", f.name, err))
			return
		}
		table, prefix = f.table, string(a[:])
	}
	after := ""
	if q.Has("after") {
		h, err := ledger.ParseHash(q.Get("after"))
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid after: "+err.Error())
			return
		}
		after = prefix + string(h[:])
	}
	limit := defaultLeases
	if q.Has("limit") {
		v, err := strconv.Atoi(q.Get("limit"))
		if err != nil || v < 1 || v > MaxLeases {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit must be an integer from 1 to %d, got %q", MaxLeases, q.Get("limit")))
			return
		}
		limit = v
	}
	snap := s.n.Store.Snapshot()
	defer snap.Close()
	st := s.newStream(w, '[', ']')
	n := 0
	st.end(snap.States(table, prefix, after, func(key string, value []byte) error {
		if err := r.Context().Err(); err != nil {
			return err
		}
		if n == limit {
			return ledger.ErrStop
		}
		n++
		var rec *ledger.LeaseRecord
		if table == ledger.LeaseTable {
			rec = new(ledger.LeaseRecord)
			if err := rec.UnmarshalBinary(value); err != nil {
				return err
			}
		} else {
			var h ledger.Hash
			copy(h[:], key[len(prefix):])
			var found bool
			var err error
			if rec, found, err = ledger.GetLease(snap, h); err != nil {
				return err
			} else if !found {
				return fmt.Errorf("lease %s is indexed but has no record", h)
			}
		}
		l, err := leaseJSON(snap, rec)
		if err != nil {
			return err
		}
		return st.elem(l)
	}))
}

// lease answers GET /leases/{hash}.
func (s *Server) lease(w http.ResponseWriter, r *http.Request) {
	h, err := ledger.ParseHash(r.PathValue("hash"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid lease hash in path: "+err.Error())
		return
	}
	snap := s.n.Store.Snapshot()
	defer snap.Close()
	rec, found, err := ledger.GetLease(snap, h)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if !found {
		writeError(w, http.StatusNotFound, "lease not found: "+h.String())
		return
	}
	l, err := leaseJSON(snap, rec)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}

// leaseJSON renders a record; it is confirmed when the latest block of its
// course (the last settle, else the accept, else the lease) is.
func leaseJSON(snap *ledgerstore.Snapshot, rec *ledger.LeaseRecord) (nodewire.Lease, error) {
	latest := rec.Hash
	for _, h := range []ledger.Hash{rec.Accept, rec.First, rec.Second, rec.Third} {
		if !h.IsZero() {
			latest = h
		}
	}
	e, found, err := snap.Entry(latest)
	if err != nil {
		return nodewire.Lease{}, err
	}
	if !found {
		return nodewire.Lease{}, errors.New("nodeapi: a lease's block is missing")
	}
	confirmed, err := snap.IsConfirmed(e)
	if err != nil {
		return nodewire.Lease{}, err
	}
	return nodewire.LeaseOf(rec, confirmed), nil
}

func (s *Server) leaseNetRoutes(m routes) {
	m.HandleFunc("POST /attestation/request", s.attestationRequest)
	m.HandleFunc("POST /leases/{hash}/settle", s.settleLease)
	m.HandleFunc("GET /timekeepers", s.timekeepers)
	m.HandleFunc("GET /timekeepers/evidence", s.timekeeperEvidence)
}

// attestationRequest answers POST /attestation/request {lease_hash,
// purpose?} with this timekeeper's Attestation.
func (s *Server) attestationRequest(w http.ResponseWriter, r *http.Request) {
	var req leasenet.AttestRequest
	if err := decodeLimited(w, r, &req, 1024); err != nil {
		writeError(w, http.StatusBadRequest, "invalid attestation request: "+err.Error())
		return
	}
	if req.LeaseHash.IsZero() {
		writeError(w, http.StatusBadRequest, "invalid attestation request: lease_hash is required")
		return
	}
	p, err := leasenet.ParsePurpose(req.Purpose)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid attestation request: "+err.Error())
		return
	}
	a, _, err := s.opts.Leases.Attest(req.LeaseHash, p)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, a)
	case errors.Is(err, leasenet.ErrNotTimekeeper), errors.Is(err, leasenet.ErrUnknownLease):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, leasenet.ErrNotDue):
		writeError(w, http.StatusConflict, err.Error())
	default:
		s.internal(w, r, err)
	}
}

// settleLease answers POST /leases/{hash}/settle: the node builds the
// lease account's block that is due, gathering attestations, and submits
// it.
func (s *Server) settleLease(w http.ResponseWriter, r *http.Request) {
	h, err := ledger.ParseHash(r.PathValue("hash"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid lease hash in path: "+err.Error())
		return
	}
	b, what, err := s.opts.Leases.Settle(r.Context(), h)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, nodewire.SettleResponse{Hash: b.Hash, Kind: what, Block: b})
	case errors.Is(err, leasenet.ErrUnknownLease):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, leasenet.ErrNothingDue):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, leasenet.ErrBusy):
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, err.Error()+": retry in a few seconds")
	case ledger.IsRule(err), errors.Is(err, timekeeping.ErrInvalid):
		writeError(w, http.StatusConflict, "the lease cannot be settled now: "+err.Error())
	case r.Context().Err() != nil:
		writeError(w, http.StatusServiceUnavailable, "the lease was not settled in time: "+err.Error())
	default:
		s.internal(w, r, err)
	}
}

func (s *Server) timekeepers(w http.ResponseWriter, r *http.Request) {
	var tip uint64
	if s.opts.StateChain != nil {
		tip = s.opts.StateChain.Tip().Index
	}
	t, err := s.opts.Leases.Timekeepers(tip)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (s *Server) timekeeperEvidence(w http.ResponseWriter, r *http.Request) {
	ev, err := s.opts.Leases.Evidence()
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ev)
}
