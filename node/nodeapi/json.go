package nodeapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

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
//
// A client must keep reading: every streamDeadlineEvery elements the
// write deadline moves streamWait (30 s) ahead, so one that stops reading
// fails the stream within it and lets go of what the list holds open (a
// store iterator or snapshot), not after the server's 10-minute limit.
type stream struct {
	log   *slog.Logger
	w     http.ResponseWriter
	rc    *http.ResponseController
	n     int
	close byte
	enc   *json.Encoder
}

// streamDeadlineEvery is how many elements a stream writes between moves
// of its write deadline (a timer reset each).
const streamDeadlineEvery = 64

// streamWait is how long a stream waits for its client to take what it
// writes: writeWait, shortened by tests.
var streamWait = writeWait

func (s *Server) newStream(w http.ResponseWriter, open, close byte) *stream {
	w.Header().Set("Content-Type", "application/json")
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(streamWait))
	w.WriteHeader(http.StatusOK)
	w.Write([]byte{open})
	return &stream{log: s.n.Log, w: w, rc: rc, close: close, enc: json.NewEncoder(w)}
}

// next writes the separator before an element, and moves the deadline.
func (s *stream) next() {
	if s.n > 0 {
		s.w.Write([]byte{','})
	}
	if s.n%streamDeadlineEvery == 0 {
		s.rc.SetWriteDeadline(time.Now().Add(streamWait))
	}
	s.n++
}

// elem writes one array element.
func (s *stream) elem(v any) error {
	s.next()
	return s.enc.Encode(v)
}

// field writes one object member.
func (s *stream) field(k string, v any) error {
	s.next()
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
