// Package failstop commits Pebble batches for the platform's small
// stores (DNS, CDN): each commit synced, and after the first failed write
// (a full disk, an I/O error) every later one refused, since the database
// may then hold what was never acknowledged. Reads go on; a restart
// recovers what was synced.
package failstop

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2"
)

// Writer commits batches. It does not lock: its store serialises
// commits, as it does its other writes.
type Writer struct {
	unavailable error // wrapped in every refusal, for errors.Is
	log         *slog.Logger
	msg         string // logged once, at the failure
	failure     error
}

// New returns a writer whose refusals wrap unavailable and whose failure
// is logged at ERROR with msg.
func New(unavailable error, log *slog.Logger, msg string) *Writer {
	return &Writer{unavailable: unavailable, log: log, msg: msg}
}

// Commit writes b and syncs it, or returns the failure that stopped the
// writer.
func (w *Writer) Commit(b *pebble.Batch) (err error) {
	if w.failure != nil {
		return w.failure
	}
	defer func() {
		if p := recover(); p != nil { // Pebble panics when it cannot write its log
			err = fmt.Errorf("%v", p)
		}
		if err != nil {
			w.failure = fmt.Errorf("%w: %v", w.unavailable, err)
			w.log.Error(w.msg, "err", err)
			err = w.failure
		}
	}()
	return b.Commit(pebble.Sync)
}

// SetJSON adds key = v's JSON to b; v is a plain struct, whose encoding
// cannot fail.
func SetJSON(b *pebble.Batch, key string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	b.Set([]byte(key), data, nil)
}

// NewID returns a random id of 16 hex digits.
func NewID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
