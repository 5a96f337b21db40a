package nodeapi

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/latticenet/lattice/ledger"
	"github.com/latticenet/lattice/ledgerstore"
)

// The JSON resources of the API, as the API description names them.

// Account is the Account resource.
type Account struct {
	Address    ledger.Address    `json:"address"`
	Balances   map[string]string `json:"balances"`
	BlockCount uint64            `json:"block_count"`
	Frontier   ledger.Hash       `json:"frontier"`
}

// BalanceMap maps asset names to BalanceStrings, leaving out zero balances.
func BalanceMap(a *ledger.Account) map[string]string {
	m := make(map[string]string, 2)
	for _, asset := range ledger.Assets {
		if b := a.Balance(asset); !b.IsZero() {
			m[asset.String()] = b.String()
		}
	}
	return m
}

func accountJSON(a *ledger.Account) Account {
	return Account{Address: a.Address, Balances: BalanceMap(a), BlockCount: a.Height, Frontier: a.Frontier}
}

// PendingSend is the PendingSend resource.
type PendingSend struct {
	SendHash    ledger.Hash    `json:"send_hash"`
	Source      ledger.Address `json:"source"`
	Destination ledger.Address `json:"destination"`
	Amount      ledger.Amount  `json:"amount"`
	Asset       ledger.Asset   `json:"asset"`
}

func pendingJSON(p ledger.Pending) PendingSend {
	return PendingSend{SendHash: p.Send, Source: p.Source, Destination: p.Destination, Amount: p.Amount, Asset: p.Asset}
}

// Conflict is the Conflict resource.
type Conflict struct {
	AccountAddress ledger.Address `json:"account_address"`
	PreviousHash   ledger.Hash    `json:"previous_hash"`
	BlockHashes    []ledger.Hash  `json:"block_hashes"`
	DetectedAt     string         `json:"detected_at"` // RFC 3339, UTC, milliseconds
}

func conflictJSON(c ledgerstore.Conflict) Conflict {
	return Conflict{AccountAddress: c.Account, PreviousHash: c.Previous, BlockHashes: c.Blocks,
		DetectedAt: msTime(c.DetectedAt)}
}

// NodeInfo is the NodeInfo resource, with the network's name, genesis and
// work thresholds added so clients can build blocks for it.
type NodeInfo struct {
	Version       string         `json:"version"`
	PeerID        string         `json:"peer_id"`
	Account       ledger.Address `json:"account"`
	UptimeSeconds int64          `json:"uptime_seconds"`
	Network       string         `json:"network"`
	Genesis       ledger.Hash    `json:"genesis"`
	Work          ledger.Work    `json:"work"`
}

// BlockHashResponse is the answer to a block submission.
type BlockHashResponse struct {
	Hash ledger.Hash `json:"hash"`
}

// PoWRequest asks for a proof-of-work nonce.
type PoWRequest struct {
	Hash ledger.Hash `json:"hash"`
}

// PoWResponse carries a nonce.
type PoWResponse struct {
	Nonce int64 `json:"nonce"`
}

// Error is the error body of every failed request.
type Error struct {
	Error string `json:"error"`
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
	writeJSON(w, status, Error{Error: msg})
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
