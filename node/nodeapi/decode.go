package nodeapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/latticenet/lattice/internal/strictjson"
)

// decodeLimited decodes a JSON body of at most limit bytes into v,
// refusing unknown fields and trailing data. Its errors are for the
// client: they name the JSON field and the JSON type it wants
// (strictjson.Explain), never a Go type.
func decodeLimited(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	err := strictjson.Decode(http.MaxBytesReader(w, r.Body, limit), v)
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return fmt.Errorf("body exceeds %d bytes", limit)
	}
	if errors.Is(err, strictjson.ErrTrailing) {
		return errors.New("trailing data after the JSON object")
	}
	return strictjson.Explain(err)
}
