package nodeapi

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/node/ledgerstore"
	"github.com/latticenet/lattice/node/nodewire"
)

// The conversions from the core's and the store's types to the JSON
// resources of package nodewire.

func accountJSON(a *ledger.Account) nodewire.Account {
	return nodewire.Account{Address: a.Address, Balances: nodewire.BalanceMap(a), BlockCount: a.Height, Frontier: a.Frontier}
}

func pendingJSON(p ledger.Pending) nodewire.PendingSend {
	return nodewire.PendingSend{SendHash: p.Send, Source: p.Source, Destination: p.Destination, Amount: p.Amount, Asset: p.Asset}
}

func conflictJSON(c ledgerstore.Conflict) nodewire.Conflict {
	return nodewire.Conflict{AccountAddress: c.Account, PreviousHash: c.Previous, BlockHashes: c.Blocks,
		DetectedAt: msTime(c.DetectedAt)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		slog.Error("encode response", "err", err)
		status, data = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, nodewire.Error{Error: msg})
}

// stream writes a JSON array or object element by element, so lists that
// grow with the ledger are never held whole in memory. If producing an
// element fails after the status is sent, the connection is aborted so the
// client sees a truncated body, never a well-formed but partial list.
type stream struct {
	log   *slog.Logger
	w     http.ResponseWriter
	n     int
	close byte
	enc   *json.Encoder
}

func (s *Server) newStream(w http.ResponseWriter, open, close byte) *stream {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte{open})
	return &stream{log: s.n.Log, w: w, close: close, enc: json.NewEncoder(w)}
}

// elem writes one array element.
func (s *stream) elem(v any) error {
	if s.n > 0 {
		s.w.Write([]byte{','})
	}
	s.n++
	return s.enc.Encode(v)
}

// field writes one object member.
func (s *stream) field(k string, v any) error {
	if s.n > 0 {
		s.w.Write([]byte{','})
	}
	s.n++
	kb, _ := json.Marshal(k)
	s.w.Write(append(kb, ':'))
	return s.enc.Encode(v)
}

func (s *stream) end(err error) {
	if err != nil {
		s.log.Error("response stream failed", "err", err)
		panic(http.ErrAbortHandler)
	}
	s.w.Write([]byte{s.close, '\n'})
}
